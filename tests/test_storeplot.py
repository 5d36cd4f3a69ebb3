"""collateral plot (collateral.storeplot): the numbers a figure shows, checked against the
store with DuckDB and scipy directly; byte sizes for packet limits (packets_of); outputs;
one-line errors."""

import re
import shutil
import textwrap
import warnings

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
from matplotlib.container import ErrorbarContainer
from scipy.stats import bootstrap

from collateral import plot as storeplot
from collateral.cli import plot as cli_plot
from collateral.cli.errors import Parser as _Parser
from collateral.experiment import ExperimentError, load_experiment
from collateral.plot.aggregate import SEED
from collateral.runner import run_experiment

SIZES = ["10kB", "30kB", "60kB"]

BUFFER = f"""
[experiment]
name = "tiny-buffer"
trials = 4
seed = 5

[scenario]
down = {{ rate = "10Mbit" }}
up = {{ rate = "2Mbit", queue = {{ limit = "50p", rule = "ps" }} }}
rtt = "40ms"
duration = "2s"
warmup = "500ms"
tcp = [{{ cc = "cubic", profile = "linux-6" }}, {{ cc = "cubic", profile = "linux-6" }}]
cbr = [{{ direction = "down" }}]

[[sweep]]
"down.queue.limit" = {SIZES}

[[sweep]]
"down.queue" = [{{ kind = "fq_codel" }}]
"down.queue.limit" = {{ values = {SIZES}, packets_of = "1500B" }}
"""

# FQ-CoDel's limit hand-written in packets: nothing records the bytes it stands for.
MIXED = """
[experiment]
name = "tiny-mixed"
trials = 1
seed = 5

[scenario]
down = { rate = "10Mbit" }
up = { rate = "2Mbit" }
rtt = "40ms"
duration = "1s"
warmup = "200ms"
tcp = [{ cc = "cubic", profile = "linux-6" }]
cbr = [{ direction = "down" }]

[[sweep]]
"down.queue.limit" = ["10kB", "30kB"]
"tcp.cc" = ["cubic", "newreno"]

[[sweep]]
"down.queue" = [{ kind = "fq_codel", limit = 7 }, { kind = "fq_codel", limit = 20 }]
"tcp.cc" = ["cubic", "newreno"]
"""


def _store(tmp_path_factory, name, text):
    d = tmp_path_factory.mktemp(name)
    (d / f"{name}.toml").write_text(textwrap.dedent(text))
    run_experiment(load_experiment(d / f"{name}.toml"), d / "store", workers=1, progress=False)
    return d / "store"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return _store(tmp_path_factory, "buffer", BUFFER)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return _store(tmp_path_factory, "mixed", MIXED)


def _trials(store, y_sql):
    """Per (kind, bytes): the trials' values, straight from the Parquet files."""
    rows = duckdb.sql(
        f"""
        SELECT coalesce(down_queue_kind, 'drop-tail') AS kind,
               coalesce(tag_down_queue_limit_bytes, down_queue_limit_bytes) AS bytes,
               list({y_sql} ORDER BY key) AS ys
        FROM read_parquet('{store}/parts/*/summary.parquet', union_by_name = true)
        GROUP BY ALL
        """
    ).fetchall()
    return {("FQ-CoDel" if k == "fq_codel" else k, b / 1e3): np.array(v, float) for k, b, v in rows}


def _plotted(fig):
    """(legend label, x, median, lo, hi) of every series the axes draw."""
    out = []
    ax = fig.axes[0]
    for c in ax.containers:
        assert isinstance(c, ErrorbarContainer)
        line, _, (bars,) = c.lines
        x, y = line.get_data()
        segs = bars.get_segments()
        lo = np.array([s[:, 1].min() for s in segs])
        hi = np.array([s[:, 1].max() for s in segs])
        out.append((c.get_label(), np.asarray(x, float), np.asarray(y, float), lo, hi))
    return out


def _ci(ys):
    if len(ys) == 1 or np.all(ys == ys[0]):
        return ys.min(), ys.max()
    r = bootstrap(
        (ys,),
        np.median,
        n_resamples=9_999,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(SEED),
    ).confidence_interval
    return r.low, r.high


def test_medians_and_bootstrap_intervals_are_the_stores(store):
    fig = storeplot.figure(store, "queue.limit", "voip_p95_ms", hue="queue.kind")
    truth = _trials(store, "cbr0_delay_p95_s * 1e3")
    series = _plotted(fig)
    assert [s[0] for s in series] == ["drop-tail", "FQ-CoDel"]  # the sweep's order
    for label, x, med, lo, hi in series:
        assert list(x) == [10.0, 30.0, 60.0]  # kB, sorted, only the sampled sizes
        for i, xv in enumerate(x):
            ys = truth[(label, xv)]
            assert len(ys) == 4
            assert med[i] == pytest.approx(np.median(ys), rel=1e-12)
            want_lo, want_hi = _ci(ys)
            assert lo[i] == pytest.approx(want_lo, rel=1e-12)
            assert hi[i] == pytest.approx(want_hi, rel=1e-12)
    assert fig.axes[0].get_xlabel() == "queue limit (kB)"
    assert fig.axes[0].get_ylabel() == "VoIP delay p95 (ms)"
    # Drop-tail's VoIP delay grows with the buffer; FQ-CoDel isolates the VoIP flow.
    dt, fq = series[0][2], series[1][2]
    assert dt[-1] > dt[0] and fq[-1] < dt[-1]


def test_the_bootstrap_is_deterministic(store):
    a = storeplot.table(store, "queue.limit", "voip_p95_ms", hue="queue.kind")
    b = storeplot.table(store, "queue.limit", "voip_p95_ms", hue="queue.kind")
    assert a.equals(b)
    assert ((a["lo"] <= a["value"]) & (a["value"] <= a["hi"])).all()


def test_minmax_intervals_and_aggregate_goodput_are_exact(store):
    fig = storeplot.figure(
        store, "queue.limit", "goodput_mbps", hue="queue.kind", interval="minmax"
    )
    truth = _trials(store, "(tcp0_goodput_bps + tcp1_goodput_bps) / 1e6")
    for label, x, med, lo, hi in _plotted(fig):
        for i, xv in enumerate(x):
            ys = truth[(label, xv)]
            assert med[i] == np.median(ys)
            assert lo[i] == ys.min() and hi[i] == ys.max()
    assert fig.axes[0].get_ylabel() == "TCP goodput, all flows (Mbit/s)"
    assert "min-max" in fig._suptitle.get_text()


def test_categorical_x_keeps_the_sweep_order_and_facets_are_panels(store):
    fig = storeplot.figure(store, "queue.kind", "loss_pct", facet="limit")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["drop-tail", "FQ-CoDel"]
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == [
        "down queue limit = 10 kB",
        "down queue limit = 30 kB",
        "down queue limit = 60 kB",
    ]
    assert visible[0].get_ylabel() == "VoIP loss (%)"
    # Categories: markers only, no line joining them (the 0 line is level).
    assert all(
        not line.get_linestyle() or line.get_linestyle() == "None"
        for line in visible[0].lines
        if len(line.get_xdata()) > 1 and len(set(line.get_ydata())) > 1
    )


def test_packets_of_sets_packet_limits_and_keeps_the_bytes(store):
    got = duckdb.sql(
        f"""SELECT DISTINCT down_queue_kind, down_queue_limit_packets, down_queue_limit_bytes,
                   down_queue_rule, tag_down_queue_limit_bytes
            FROM read_parquet('{store}/parts/*/summary.parquet', union_by_name = true)
            ORDER BY ALL"""
    ).fetchall()
    assert got == [
        ("fq_codel", 7, None, None, 10_000),  # ceil(10000 / 1500) packets
        ("fq_codel", 20, None, None, 30_000),
        ("fq_codel", 40, None, None, 60_000),
        (None, None, 10_000, "fb-strict", None),  # drop-tail's in bytes, its own column
        (None, None, 30_000, "fb-strict", None),
        (None, None, 60_000, "fb-strict", None),
    ]


def test_packets_of_on_a_drop_tail_queue_and_its_errors(tmp_path):
    def load(sweep):
        p = tmp_path / "e.toml"
        p.write_text(
            textwrap.dedent(
                """
                [scenario]
                link = "adsl1"
                tcp = [{}]
                """
            )
            + textwrap.dedent(sweep)
        )
        return load_experiment(p)

    rng = 'from = "10kB", to = "30kB", step = "10kB"'
    e = load(f'[sweep]\n"queue.limit" = {{ {rng}, packets_of = "1500B" }}\n')
    assert [str(pt.scenario.down.queue.limit) for pt in e.points] == ["7p", "14p", "20p"]
    assert [pt.scenario.up.queue.rule for pt in e.points] == ["ps"] * 3
    assert [pt.tags for pt in e.points] == [
        {"queue_limit_bytes": b} for b in (10_000, 20_000, 30_000)
    ]
    assert e.points[0].values == {"queue.limit": "10kB"}
    bad = [
        ('"rtt" = { values = ["10ms"], packets_of = "1500B" }', "rtt.packets_of", "queue limit"),
        ('"queue.limit" = { values = ["10kB"], packets_of = "lots" }', "packets_of", "1500B"),
        ('"queue.limit" = { values = ["7p"], packets_of = "1500B" }', "queue.limit[0]", "sizes"),
        (
            '"queue.limit" = { values = ["10kB"], from = "1kB", packets_of = "1500B" }',
            "sweep.queue.limit",
            "not both",
        ),
        (
            '"queue.limit" = { values = ["10kB", "10.5kB"], packets_of = "1500B" }',
            "sweep",
            "same scenario",
        ),
        (
            '"tags.queue_limit_bytes" = [1]\n'
            '"queue.limit" = { values = ["10kB"], packets_of = "1500B" }',
            "tags.queue_limit_bytes",
            "remove one",
        ),
    ]
    bad.append(
        (
            '"down.queue" = [{ kind = "codel", limit_rule = "fb-strict" }]\n'
            '"down.queue.limit" = { values = ["10kB"], packets_of = "1500B" }',
            "down.queue.limit",
            "counts bytes (rule fb-strict)",
        )
    )
    for body, where, what in bad:
        with pytest.raises(ExperimentError) as ei:
            load("[sweep]\n" + body + "\n")
        msg = str(ei.value)
        assert "\n" not in msg and where in msg and what in msg, msg


def test_suggest_and_list(store, capsys):
    assert storeplot.suggest(store) == {
        "x": "down.queue.limit",
        "y": "voip_p95_ms",
        "hue": "down.queue.kind",
        "facet": None,
    }
    assert _cli(["plot", str(store), "--list"]) == 0
    out = capsys.readouterr().out
    assert (
        "down.queue.limit (also down_queue_limit_bytes, down_queue_limit_packets):"
        " 10 kB, 30 kB, 60 kB" in out
    ), out
    assert "down.queue.kind (also down_queue_kind): drop-tail, FQ-CoDel" in out
    assert re.search(r"voip_p95_ms\s+ms\s", out) and re.search(r"goodput_mbps\s+Mbit/s\s", out)


def test_png_and_svg_write_only_the_named_file(store, tmp_path):
    for name in ("f.png", "f.svg"):
        d = tmp_path / name.replace(".", "_")
        paths = storeplot.plot(store, "queue.limit", "voip_p95_ms", "queue.kind", out=d / name)
        assert paths == [d / name]
        assert [p.name for p in d.iterdir()] == [name]
    assert (tmp_path / "f_png" / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "f_svg" / "f.svg").read_bytes()[:500]


def test_html_is_self_contained_and_holds_the_data(store, tmp_path):
    out = tmp_path / "f.html"
    assert storeplot.plot(store, "limit", "voip_p95_ms", "kind", out=out, interval="minmax") == [
        out
    ]
    text = out.read_text()
    assert not re.search(r"<script[^>]+src=[\"']?https?:", text)
    assert "Plotly.newPlot" in text and len(text) > 1_000_000  # plotly.js itself is inside
    tab = storeplot.table(store, "limit", "voip_p95_ms", "kind", interval="minmax")
    for v in tab["value"]:
        assert repr(float(v)) in text or f"{v}" in text
    assert "trials: %{customdata[0]}" in text and "min-max" in text


def _cli(argv):
    p = _Parser(prog="collateral")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    cli_plot.add_parser(sub)
    return cli_plot.run(p.parse_args(argv))


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--x", "qeue.limit", "--y", "voip_p95_ms"],
            "--x: unknown key 'qeue.limit'; did you mean queue.limit?",
        ),
        (
            ["--x", "limit", "--y", "voip_p59_ms"],
            "--y: unknown measure 'voip_p59_ms'; did you mean voip_p95_ms?",
        ),
        (["--x", "limit", "--y", "link"], "--y: 'link' is not a numeric result column"),
        (
            ["--x", "limit", "--y", "loss_pct", "--hue", "down_queue_limit_bytes"],
            "--hue: down.queue.limit is the same as --x",
        ),
        (["--x", "limit", "--y", "loss_pct", "--interval", "ci"], "--interval: invalid choice"),
        (["--x", "limit", "--y", "loss_pct", "-o", "OUT/f.txt"], "--output:"),
        (["--x", "limit", "--y", "loss_pct", "-o", "OUT/"], "--output:"),
        (
            ["--x", "limit", "--y", "loss_pct", "--where", "kind"],
            "--where: 'kind': expected KEY=VALUE",
        ),
        (
            ["--x", "limit", "--y", "loss_pct", "--where", "kind=RED"],
            "--where: kind=RED: no trial has it; values: drop-tail, FQ-CoDel",
        ),
        (
            ["--x", "limit"],
            "--y: required; e.g. --x down.queue.limit --y voip_p95_ms --hue down.queue.kind",
        ),
    ],
)
def test_bad_inputs_are_one_line_errors(store, tmp_path, capsys, args, fragment):
    args = [a.replace("OUT", str(tmp_path)) for a in args]
    with pytest.raises(SystemExit) as e:
        _cli(["plot", str(store), *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("collateral: error: "), err
    assert fragment in err, err
    assert not list(tmp_path.iterdir())  # nothing written


def test_bad_stores_and_mixed_limit_units(mixed, tmp_path, capsys):
    cases = [
        ([str(tmp_path / "nope"), "--list"], "DIR:"),
        ([str(tmp_path), "--list"], "not a collateral results directory"),
        (
            [str(mixed), "--x", "queue.limit", "--y", "voip_p95_ms"],
            "--x: down.queue.limit counts bytes for some points and packets for others"
            " (drop-tail fb-strict in bytes; FQ-CoDel in packets)",
        ),
    ]
    for args, fragment in cases:
        with pytest.raises(SystemExit) as e:
            _cli(["plot", *args])
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1 and fragment in err, err
    # A parameter left out of x, hue and facet pools different conditions: said, not hidden.
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fig = storeplot.figure(mixed, "queue.kind", "voip_p95_ms")
    assert any("pools trials of different" in str(x.message) for x in w)
    assert "pooled over" in fig._suptitle.get_text()
    # Fixed by --where, the warning goes.
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fig = storeplot.figure(mixed, "queue.kind", "voip_p95_ms", hue="cc", where=["limit=10000"])
    assert not [x for x in w if "pools" in str(x.message)]


def _same_data(a, b) -> None:
    assert a.df.equals(b.df) and a.swept == b.swept and list(a.measures) == list(b.measures)
    assert {k: (q.order, q.numeric) for k, q in a.params.items()} == {
        k: (q.order, q.numeric) for k, q in b.params.items()
    }


def test_a_plot_reads_the_points_its_run_expanded(store, tmp_path, monkeypatch):
    """The run keeps its points (``points.parquet``): a plot orders the trials by them
    without expanding the experiment file again, into the same data as the expansion;
    a store without them (an older one) is expanded as before."""
    from collateral.plot import sweep

    expanded = []
    real = sweep._experiment
    monkeypatch.setattr(sweep, "_experiment", lambda p: expanded.append(p) or real(p))
    kept = sweep.load_data(store)
    assert expanded == [] and (store / "points.parquet").is_file()
    older = tmp_path / "older"
    shutil.copytree(store, older)
    (older / "points.parquet").unlink()
    _same_data(sweep.load_data(older), kept)
    assert expanded == [older]
    # Points that do not cover every stored trial (results merged in): expanded too.
    table = pq.read_table(store / "points.parquet")
    pq.write_table(table.slice(1), older / "points.parquet")
    _same_data(sweep.load_data(older), kept)
    assert expanded == [older, older]


def test_points_that_cannot_be_written_stop_nothing(tmp_path):
    """The points are a shortcut: a row Parquet cannot hold is said in one line, the
    run's earlier points (now stale) go, and nothing half-written is left."""
    from collateral.store import Store

    said = []
    st = Store.create(tmp_path / "s", "x", None, notify=said.append)
    st.write_points([{"point": "a", "point_index": 0, "x": 1}])
    assert st.read_points().to_pylist() == [{"point": "a", "point_index": 0, "x": 1}]
    st.write_points([{"point": "a", "point_index": 0, "x": 2**70}])
    assert st.read_points() is None and not list((tmp_path / "s").glob(".*"))
    assert len(said) == 1 and "points.parquet not written" in said[0]


def test_a_plot_orders_the_trials_as_the_run_with_set_made_them(tmp_path):
    """``--set`` changes what the run expands, not the experiment file the store keeps:
    the trials are in the order of the points the run made."""
    from collateral.plot import sweep

    (tmp_path / "cc.toml").write_text(textwrap.dedent(MIXED).split("[[sweep]]")[0] + SWEEP_CC)
    exp = load_experiment(tmp_path / "cc.toml", [("sweep.tcp.cc", ["newreno", "cubic"])])
    run_experiment(exp, tmp_path / "store", workers=1, progress=False)
    got = sweep.load_data(tmp_path / "store")
    assert list(got.df["tcp0_cc"]) == ["newreno", "cubic"]
    # ... and so are the categories (legend, x axis), under every name of the key
    assert got.swept == ["tcp.cc"]
    assert got.params["tcp.cc"].order == got.params["tcp[0].cc"].order == ["newreno", "cubic"]
    # Points of an earlier collateral, without the sweep's keys: their order still.
    pts = tmp_path / "store" / "points.parquet"
    pq.write_table(pq.read_table(pts).replace_schema_metadata(None), pts)
    assert sweep.load_data(tmp_path / "store").params["tcp.cc"].order == ["newreno", "cubic"]
    pts.unlink()  # the file's order, cubic first
    old = sweep.load_data(tmp_path / "store")
    assert list(old.df["tcp0_cc"]) == old.params["tcp.cc"].order == ["cubic", "newreno"]


def test_a_plot_names_an_axis_that_set_added_as_set_wrote_it(tmp_path):
    """A key swept only by ``--set`` is named as written there (``queue.limit``, not
    the ``down.queue.limit`` the stored file cannot tell), after the file's keys."""
    from collateral.plot import sweep

    (tmp_path / "cc.toml").write_text(textwrap.dedent(MIXED).split("[[sweep]]")[0] + SWEEP_CC)
    exp = load_experiment(tmp_path / "cc.toml", [("sweep.queue.limit", ["40kB", "20kB"])])
    assert exp.sweep_axes() == [("tcp.cc", ["cubic", "newreno"]), ("queue.limit", ["40kB", "20kB"])]
    run_experiment(exp, tmp_path / "store", workers=1, progress=False)
    got = sweep.load_data(tmp_path / "store")
    assert got.swept == ["tcp.cc", "queue.limit"]
    assert list(got.df["down_queue_limit_bytes"]) == [40_000, 20_000, 40_000, 20_000]


SWEEP_CC = """
[sweep]
"tcp.cc" = ["cubic", "newreno"]
"""


def test_the_collateral_command(store, tmp_path):
    """Through ``collateral plot`` itself, once cli.py has the subcommand."""
    import subprocess
    import sys

    from collateral.cli import build_parser

    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    if "plot" not in sub.choices:
        pytest.skip("cli.py does not have the plot subcommand yet")
    out = tmp_path / "f.svg"
    argv = [sys.executable, "-m", "collateral", "plot", str(store), "--x", "limit"]
    r = subprocess.run(
        [*argv, "--y", "voip_p95_ms", "--hue", "kind", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and out.exists() and str(out) in r.stdout, r.stderr
    r = subprocess.run([*argv, "--y", "voip_p59_ms"], capture_output=True, text=True, timeout=120)
    assert (
        r.returncode == 2 and r.stderr.count("\n") == 1 and "did you mean voip_p95_ms" in r.stderr
    )


@pytest.mark.parametrize("stat", ["median", "mean"])
@pytest.mark.parametrize(
    "ys",
    [
        [0.010, 0.020],
        [3.0, 1.0, 2.0, 2.0, 7.5],
        list(np.random.default_rng(1).lognormal(size=30)),
        list(np.random.default_rng(2).integers(0, 5, 41).astype(float)),  # many ties
    ],
)
def test_the_interval_is_scipys_percentile_bootstrap(ys, stat, monkeypatch):
    """The figures' interval is scipy.stats.bootstrap's percentile interval from the same
    seeded generator, computed without scipy; drawn in chunks (a point of many trials)
    it is the same again."""
    y = np.array(ys)
    fn = np.median if stat == "median" else np.mean
    want = bootstrap(
        (y,),
        fn,
        n_resamples=999,
        confidence_level=0.95,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(storeplot.aggregate.SEED),
    ).confidence_interval
    got = storeplot.aggregate._interval(y, stat, "bootstrap", 999)
    assert got == pytest.approx((want.low, want.high), rel=1e-12)
    monkeypatch.setattr(storeplot.aggregate, "_CHUNK_VALUES", 7 * len(y))  # 143 chunks
    assert storeplot.aggregate._interval(y, stat, "bootstrap", 999) == got


@pytest.mark.parametrize(("chosen", "after"), [(None, "agg"), ("pdf", "pdf")])
def test_a_backend_the_user_chose_is_kept(store, chosen, after):
    """A figure is drawn with Agg (never a window) unless the user chose a backend, even
    after importing collateral: that one is kept."""
    import subprocess
    import sys

    code = (
        "import sys, matplotlib\n"
        "import collateral.plot as cp\n"
        f"if {chosen!r}: matplotlib.use({chosen!r})\n"
        "cp.figure(sys.argv[1], 'queue.limit', 'voip_p95_ms')\n"
        "print(matplotlib.get_backend().lower())\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(store)], capture_output=True, text=True, check=True
    )
    assert p.stdout.split()[-1] == after


@pytest.mark.parametrize(
    "meta",
    [b"{not json", b'{"ab": 1}', b'["ab"]', b'[["k", "xyz"]]', b"[" * 5000 + b"]" * 5000],
)
def test_sweep_keys_in_points_of_another_shape_are_not_read(meta):
    """The plot falls back to the file when the points' sweep metadata is not a list of
    [key, [values]] (damaged, or written by something else), never a crash."""
    import pyarrow as pa

    from collateral.store import Store
    from collateral.store.core import SWEEP_META

    table = pa.table({"point": ["p"]}).replace_schema_metadata({SWEEP_META: meta})
    assert Store.read_sweep(table) is None
    good = table.replace_schema_metadata({SWEEP_META: b'[["tcp.cc", ["cubic", 2]]]'})
    assert Store.read_sweep(good) == [("tcp.cc", ["cubic", 2])]
    assert Store.read_sweep(None) is None


def test_where_takes_a_value_as_the_rest_of_the_tool_writes_it(store):
    """A kind as stored (fq_codel), shown (FQ-CoDel) or in any case; a limit with its
    unit (10kB where the axis is in kB); one condition as a string, not its letters."""
    from collateral.plot import aggregate

    data = aggregate.load_data(store)

    def n(where):
        return int(aggregate._parse_where(data, where).sum())

    fq = n(["queue.kind=FQ-CoDel"])
    assert fq > 0 and fq == n(["queue.kind=fq_codel"]) == n("queue.kind=fq-codel")
    assert n(["queue.kind=drop_tail"]) == n(["queue.kind=drop-tail"]) == len(data.df) - fq
    limit = f"down.queue.limit={SIZES[0].removesuffix('kB')}"
    assert n([limit + "kB"]) == n([limit]) == n(limit + " kB") > 0
    with pytest.raises(
        aggregate.StorePlotError, match=r"expected a number in kB \(e.g. 20 or 20kB\)"
    ):
        n([limit + "x"])


def test_the_packet_limit_note_speaks_of_the_rows_a_where_keeps(store):
    """FQ-CoDel's packet limits are drawn at the byte sizes swept, and the x axis says
    so; with --where keeping drop-tail alone there is nothing to say (it still named
    FQ-CoDel)."""
    from collateral.plot import aggregate

    data = aggregate.load_data(store)

    def note(where):
        return aggregate.build_table(
            data, "down.queue.limit", "goodput_mbps", None, None, "median", "minmax", where
        )[1]["x"].note

    assert note(None).startswith("FQ-CoDel: packet limits shown at the byte sizes swept")
    assert note(["queue.kind=FQ-CoDel"]) == note(None)
    assert note(["queue.kind=drop-tail"]) == ""


def test_the_python_api_names_its_parameters_not_the_commands_options(store, tmp_path):
    """figure(), table() and plot() name what their caller passed (where=, x=, out=);
    the command names its options (test_bad_inputs_are_one_line_errors)."""
    cases = [
        (storeplot.figure, {"x": "limit", "y": "loss_pct", "where": ["kind"]}, "where: 'kind'"),
        (storeplot.table, {"x": "qeue.limit", "y": "loss_pct"}, "x: unknown key 'qeue.limit'"),
        (storeplot.table, {"x": "limit", "y": "voip_p59_ms"}, "y: unknown measure"),
        (storeplot.plot, {"x": "limit", "y": "loss_pct", "out": tmp_path / "f"}, "out: "),
    ]
    for fn, kwargs, start in cases:
        with pytest.raises(storeplot.StorePlotError) as e:
            fn(store, **kwargs)
        assert str(e.value).startswith(start), (fn.__name__, str(e.value))
    with pytest.raises(storeplot.StorePlotError, match=r"^store_dir: "):
        storeplot.table(tmp_path / "nothing", x="limit", y="loss_pct")


CALLS = """
[experiment]
name = "calls"
trials = 2
seed = 5

[scenario]
down = { rate = "4Mbit" }
up = { rate = "1Mbit" }
duration = "3s"
warmup = "1s"
media = { controller = "gcc" }

[sweep]
"media.controller" = ["nada", "gcc"]
"""


def test_a_single_calls_sweep_key_is_its_dotted_key(tmp_path_factory):
    """``media.controller``, as the file sweeps it (a call given as one table), names the
    x axis (it was refused, "did you mean media_controller?"); so does its last segment,
    and the file's order of values is kept."""
    st = _store(tmp_path_factory, "calls", CALLS)
    for key in ("media.controller", "controller", "media_controller"):
        fig = storeplot.figure(st, key, "media0_received_bps")
        labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
        assert labels == ["nada", "gcc"], key


def test_one_trial_per_point_claims_no_interval():
    import pandas as pd

    from collateral.plot.labels import caption

    meta = {"stat": "median", "interval": "bootstrap", "pooled": [], "x": None, "hue": None}
    assert caption(meta, pd.DataFrame({"n": [1, 1]})) == "1 trial per point, no interval"
    assert caption(meta, pd.DataFrame({"n": [3, 5]})).startswith(
        "median of 3-5 trials per point, 95 % bootstrap interval"
    )


def test_one_units_limit_column_is_an_axis_of_its_own(mixed):
    """``--x down_queue_limit_bytes`` on a store of byte and packet limits: the byte
    limits (kB) on the axis, the packet-limited points as levels (it was refused with
    the mixed-unit error of queue.limit, which now points to it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = storeplot.figure(mixed, "down_queue_limit_bytes", "voip_p95_ms", hue="queue.kind")
    xs = sorted({float(x) for _, x, *_ in _plotted(fig) for x in x})
    assert xs == [10.0, 30.0]  # the drop-tail limits of MIXED, 10 kB and 30 kB
    assert "kB" in fig.axes[0].get_xlabel()
