"""The HTML report (``collateral report``): built from quick reproductions and a user's own
experiment, opened in headless Chromium at 1400 px — every figure loads, nothing
overflows sideways, no console errors, the claims summary agrees with the claims —,
plus its tables (human units, no exponents, long ones collapsed) and the runner's
resumed progress bar."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from collateral.reproduce import STUDIES

#: One worker for the modules that share the session's quick runs (run once).
pytestmark = pytest.mark.xdist_group("quick_runs")

#: A user's own small sweep: two CCs x three queue sizes, two trials each.
_MY_SWEEP = """
[experiment]
name = "my-sweep"
description = "CBR delay vs queue size, NewReno vs CUBIC (ADSL1)"
trials = 2
seed = 7

[scenario]
link = "adsl1"
rtt = "50ms"
duration = "8s"
warmup = "2s"
queue = { limit = "20kB", rule = "fb-loose" }
tcp = [{ cc = "cubic" }]
cbr = [{ direction = "down" }]

[sweep]
"tcp.cc" = ["newreno", "cubic"]
"queue.limit" = ["10kB", "20kB", "40kB"]
"""
FIGS = ("mmsys-fig1", "mmsys-fig4", "huebner-epochs")
WIDTH = 1400


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def stores(quick_results: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The session's quick reproductions of FIGS and a user's own sweep (no reproduction
    of it)."""
    from collateral.experiment import load_experiment
    from collateral.runner import run_experiment

    out = tmp_path_factory.mktemp("results")
    toml = out.parent / "my-sweep.toml"
    toml.write_text(_MY_SWEEP, encoding="utf-8")
    exp = load_experiment(toml)
    run_experiment(exp, out / "my-sweep", progress=False)
    figs = {quick_results / f"{STUDIES[f].experiment}-quick" for f in FIGS}
    return sorted([*figs, out / "my-sweep"])


@pytest.fixture(scope="module")
def report(stores: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    subprocess.run(
        [sys.executable, "-m", "collateral", "report", *map(str, stores), "-o", str(path)],
        check=True,
        capture_output=True,
    )
    return path


_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def _body_attrs(dom: str) -> dict[str, str]:
    m = re.search(r"<body\b([^>]*\bdata-figures=[^>]*)>", dom)
    assert m, "the page's script did not finish (no data-figures on <body>)"
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


@pytest.mark.skipif(_chromium() is None, reason="chromium not installed (./setup.sh installs it)")
def test_report_opens_in_chromium_with_every_figure(report: Path, stores: list[Path], tmp_path):
    flags = [*_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH},1000"]
    url = report.as_uri()
    run = subprocess.run(
        [
            _chromium(),
            *flags,
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=20000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    attrs = _body_attrs(run.stdout)
    loaded, total = map(int, attrs["data-figures"].split("/"))
    # Every image of the file as written (counted here, not by the page's script).
    html = report.read_text(encoding="utf-8")
    main = html[html.index("<main") : html.index("</main>")]
    assert total == main.count("<img "), "the script saw another number of figures"
    # huebner-epochs draws five, the others one each, and the user's store gets one.
    assert total >= len(FIGS) + 4 + 1
    assert loaded == total, f"{loaded} of {total} figures loaded"
    assert int(attrs["data-scroll-width"]) <= WIDTH, "the page overflows sideways at 1400 px"
    # Readable: at least 80 CSS px per inch the figure was drawn at (9-pt text >= 10 px).
    assert float(attrs["data-min-px-per-inch"]) >= 80, attrs["data-min-px-per-inch"]
    # The page logs nothing but errors (Chromium reports every console level as INFO).
    console = [ln for ln in run.stderr.splitlines() if ":CONSOLE" in ln]
    assert not console, console

    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            _chromium(),
            *flags[:-1],
            f"--window-size={WIDTH},3000",
            "--virtual-time-budget=20000",
            f"--screenshot={shot}",
            url,
        ],
        capture_output=True,
        timeout=180,
    )
    from PIL import Image  # matplotlib depends on Pillow

    img = Image.open(shot).convert("L")
    assert img.width == WIDTH
    lo, hi = img.getextrema()
    assert hi - lo > 100, "the screenshot is blank"
    assert sum(1 for c in img.histogram() if c) > 20


#: Appended to a copy of the report: opens every collapsed table, sorts the first one by
#: its last column (a click on its header), clicks a figure's second tab, and writes
#: what it saw into <body>.
_OPEN_AND_SORT = """<script>
addEventListener("load", () => setTimeout(() => {
  const full = Array.from(document.querySelectorAll("details.full"));
  full.forEach((d) => { d.open = true; });
  setTimeout(() => {
    document.body.dataset.fullRows = full.map((d) => d.querySelectorAll("tbody tr").length);
    const table = full[0].querySelector("table");
    const th = table.tHead.rows[0].cells[table.tHead.rows[0].cells.length - 1];
    th.click();
    document.body.dataset.sorted = JSON.stringify(
      Array.from(table.tBodies[0].rows).map((r) => r.cells[r.cells.length - 1].textContent));
    const tabbed = document.querySelector("figure .tabs").closest("figure");
    tabbed.querySelectorAll(".tabs button")[1].click();
    document.body.dataset.shown = Array.from(tabbed.querySelectorAll("[data-panel]"))
      .filter((p) => !p.hidden).map((p) => p.dataset.panel).join(",");
  }, 1000);
}, 200));
</script></body>"""


@pytest.mark.skipif(_chromium() is None, reason="chromium not installed (./setup.sh installs it)")
def test_collapsed_tables_open_whole_and_sort(report: Path, tmp_path: Path):
    html = report.read_text(encoding="utf-8")
    packed = re.findall(r'<details class="full" data-gz="([^"]+)"', html)
    assert packed, "no long table in these results (mmsys-fig4 quick has 40 points)"
    want = [len(json.loads(gzip.decompress(base64.b64decode(g)))["rows"]) for g in packed]
    page = tmp_path / "open.html"
    page.write_text(html.replace("</body>", _OPEN_AND_SORT), encoding="utf-8")
    run = subprocess.run(
        [
            _chromium(),
            *_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={WIDTH},1000",
            "--virtual-time-budget=20000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    attrs = _body_attrs(run.stdout)
    assert [int(n) for n in attrs["data-full-rows"].split(",")] == want
    import html as htmllib

    col = json.loads(htmllib.unescape(attrs["data-sorted"]))
    nums = [float(v.replace(",", "")) for v in col if v != "—"]
    assert len(col) == want[0] and nums == sorted(nums), col
    assert col[len(nums) :] == ["—"] * (len(col) - len(nums)), "— sorts last"
    # The second tab of a figure of several set-ups shows its image and caption only.
    assert set(attrs["data-shown"].split(",")) == {"1"}, attrs["data-shown"]


def test_claims_summary_agrees_with_the_claims(report: Path, stores: list[Path]):
    """N hold + M differ <= K total, each counted from the figures' own claims."""
    from collateral.store import Store

    want = {"hold": 0, "differ": 0, "total": 0}
    for d in stores:
        name = Store(d).meta()["experiment"].removesuffix("-quick")
        for fig in STUDIES.values():
            if (
                fig.experiment == name
                and (d / "figures").is_dir()
                and any(
                    p.stem == fig.id or p.stem.startswith(fig.id + "-")
                    for p in (d / "figures").glob("*.svg")
                )
            ):
                for c in fig.claims(Store(d)):
                    want["total"] += 1
                    want["hold"] += c.holds is True
                    want["differ"] += c.holds is False
    html = report.read_text(encoding="utf-8")
    m = re.search(
        r'id="claims-summary" data-hold="(\d+)" data-differ="(\d+)" data-total="(\d+)"', html
    )
    assert m
    got = dict(zip(("hold", "differ", "total"), map(int, m.groups()), strict=True))
    assert got == want
    assert got["hold"] + got["differ"] <= got["total"] and got["total"] > 0
    text = re.sub(r"<[^>]+>", "", html[m.start() : html.index("</p>", m.start())])
    assert f"{want['hold']} hold, {want['differ']} differ, {want['total']} total" in text
    start = html.index('id="claims-table"')
    table = html[start : html.index("</table>", start)]
    assert table.count("<tr>") - 1 == want["total"]  # one row per claim besides the head
    assert table.count('class="holds"') == want["hold"]
    assert table.count('class="differs"') == want["differ"]


class _Cells(HTMLParser):
    """Text of every th and td, per table."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"th": [], "td": [], "class": [dict(attrs).get("class", "")]})
        elif tag in ("th", "td") and self.tables:
            self._cell = [tag]

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            self.tables[-1][self._cell[0]].append("".join(self._cell[1:]).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_tables_use_human_labels_and_numbers(report: Path):
    from collateral import schema

    p = _Cells()
    p.feed(report.read_text(encoding="utf-8"))
    numbers = [t for t in p.tables if "numbers" in t["class"][0]]
    assert numbers, "no key-numbers table"
    raw_names = {pattern.replace("{i}", "0") for pattern, _ in schema.metric_columns()}
    for t in numbers:
        heads = t["th"]
        assert not raw_names & set(heads), f"raw column names as headers: {heads}"
        assert any("(Mbit/s)" in h for h in heads) and any("(ms)" in h for h in heads), heads
        for cell in t["td"]:
            assert not re.search(r"\d[eE][+-]?\d", cell), f"exponent in {cell!r}"
            assert cell not in ("<NA>", "nan", "NaN", "None", "inf"), cell
    # Nothing fetched from the network: no http(s) src, href or url().
    html = report.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:|url\(\s*["']?https?:""", html)


def test_long_tables_collapse_with_every_row_inside():
    from collateral.report import LONG_TABLE, PREVIEW_ROWS, Cell, Table
    from collateral.report.render import environment

    n = LONG_TABLE + 40
    t = Table(
        [("queue limit (kB)", ""), ("loss (%)", "")],
        [True, True],
        [[Cell(f"{i:,}"), Cell(f"{i / 7:.2f}")] for i in range(n)],
    )
    tpl = environment().from_string('{% from "macros.html.j2" import table %}{{ table(t) }}')
    html = tpl.render(t=t)
    body = html[html.index("<tbody>") : html.index("</tbody>")]
    assert body.count("<tr>") == PREVIEW_ROWS < n
    m = re.search(r'<details class="full" data-gz="([^"]+)"', html)
    assert m, "a long table is not collapsed"
    rows = json.loads(gzip.decompress(base64.b64decode(m.group(1))))["rows"]
    assert len(rows) == n and rows[-1] == [f"{n - 1:,}", f"{(n - 1) / 7:.2f}"]
    assert "more" not in re.sub(r"<[^>]+>", "", html.split("<details")[0])


def test_numbers_are_human():
    from collateral.display import fmt_fixed as fmt_number

    assert fmt_number(9.167e06, 0) == "9,167,000"
    assert fmt_number(float("nan"), 2) == "—"
    assert fmt_number(None, 2) == "—"
    import pandas as pd

    assert fmt_number(pd.NA, 1) == "—"
    assert fmt_number(0.000123, 4) == "0.0001"


def test_user_store_gets_a_figure(stores: list[Path]):
    from collateral.report.sections import section
    from collateral.store import Store

    mine = next(d for d in stores if d.name == "my-sweep")
    assert not (mine / "figures").exists()
    sec = section(Store(mine), set())
    assert len(sec.figures) == 1 and sec.figures[0].images
    fig = sec.figures[0]
    assert "against" in fig.title and fig.caption
    points = Store(mine).summary()["point"].nunique()
    assert points > 1 and sec.numbers is not None and len(sec.numbers.rows) == points


def test_a_user_stores_figure_reads_the_store_once(stores: list[Path], monkeypatch):
    """The figure drawn for a user's store suggests its axes and draws from one reading
    of the store (its summary and the points its run expanded), not one each."""
    from collateral.report.figures import own_figure
    from collateral.store import Store

    mine = next(d for d in stores if d.name == "my-sweep")
    reads = []
    real = Store.read_points
    monkeypatch.setattr(Store, "read_points", lambda s: reads.append(s.path) or real(s))
    st = Store(mine)
    df = st.summary()
    again = []
    real_summary = Store.summary
    monkeypatch.setattr(
        Store, "summary", lambda s, *a, **k: again.append(1) or real_summary(s, *a, **k)
    )
    view = own_figure(st, df, "")
    assert view is not None and view.images
    assert reads == [mine] and again == []  # the summary the report read is the figure's


def test_figures_stay_small(report: Path):
    """Each embedded figure is at most ~120 kB (the budget: all reproductions < ~1 MB)."""
    html = report.read_text(encoding="utf-8")
    sizes = [len(m) for m in re.findall(r'(?:data-svg-gz="|base64,)([A-Za-z0-9+/=]+)', html)]
    assert sizes and max(sizes) < 120_000, sorted(sizes)[-3:]


class _FakeStore:
    def __init__(self, name: str, df):
        self.path = Path("/nonexistent") / name
        self._name, self._df = name, df

    def meta(self):
        return {"experiment": self._name}

    def summary(self):
        return self._df


def test_sim_vs_emu_side_by_side():
    import pandas as pd

    from collateral.report import sim_vs_emu

    sim = pd.DataFrame(
        {
            "mode": ["simulation"] * 2,
            "tcp0_goodput_bps": [1.0e6, 1.2e6],
            "cbr0_loss_rate": [0.01, 0.03],
        }
    )
    emu = pd.DataFrame(
        {
            "mode": ["emulation"] * 2,
            "tcp0_goodput_bps": [1.2e6, 1.2e6],
            "cbr0_loss_rate": [0.02, 0.02],
        }
    )
    t = sim_vs_emu([_FakeStore("x", sim), _FakeStore("x-emu", emu)])
    assert t is not None
    rows = {r[1].text: [c.text for c in r] for r in t.rows}
    assert rows["TCP goodput (Mbit/s)"][2:] == ["1.10", "1.20", "+9.1 %"]
    assert rows["CBR loss ↓ (%)"][2:] == ["2", "2", "+0.0 %"]  # whole: no decimals
    assert sim_vs_emu([_FakeStore("x", sim)]) is None


def test_a_measured_run_is_labelled_measured_not_emulation():
    import pandas as pd

    from collateral.report import sim_vs_emu
    from collateral.report.render import environment

    sim = pd.DataFrame({"mode": ["simulation"] * 2, "tcp0_goodput_bps": [1.0e6, 1.2e6]})
    got = pd.DataFrame({"mode": ["measured"], "tcp0_goodput_bps": [0.99e6]})
    t = sim_vs_emu([_FakeStore("x", sim), _FakeStore("x-measured", got)])
    assert [c for c, _ in t.columns] == [
        "experiment",
        "measure",
        "simulation",
        "measured",
        "difference",
    ]
    assert [c.text for c in t.rows[0]] == ["x", "TCP goodput (Mbit/s)", "1.10", "0.99", "-10.0 %"]
    html = (
        environment()
        .get_template("report.html.j2")
        .render(
            meta=[],
            sections=[],
            claims=[],
            summary=dict.fromkeys(("hold", "differ", "total"), 0),
            sim_emu=t,
            px_per_inch=96,
        )
    )
    assert "<h2>Simulation vs measured</h2>" in html and "emulation" not in html.lower()
    # Both beside one simulation: each row says which.
    emu = pd.DataFrame({"mode": ["emulation"], "tcp0_goodput_bps": [1.21e6]})
    t = sim_vs_emu([_FakeStore("x", sim), _FakeStore("x-emu", emu), _FakeStore("x-measured", got)])
    assert t.columns[3][0] == "emulation or measured"
    assert [(r[0].text, r[3].text) for r in t.rows] == [
        ("x (emulation)", "1.21"),
        ("x (measured)", "0.99"),
    ]


def test_resumed_progress_counts_the_stored_trials():
    """A run resuming with 103 of 320 trials stored shows 103/320, not 0/217."""
    import io

    from rich.console import Console

    from collateral.runner.progress import Progress

    con = Console(file=io.StringIO(), force_terminal=True, width=100)
    with Progress(con, todo=217, already=103, show=True) as bar:
        task = bar._progress.tasks[0]
        assert (task.completed, task.total) == (103, 320)
        bar.advance(5, 0)
        assert (task.completed, task.total) == (108, 320)
    log = Console(file=io.StringIO(), width=100)
    p = Progress(log, todo=217, already=103, show=False)
    p._last_log -= 60
    p.advance(1, 0)
    assert "104/320 trials" in log.file.getvalue()


def test_an_empty_store_has_an_empty_summary_for_the_comparison(tmp_path):
    """A store without parts has no summary view: the comparison reads an empty table
    (this once recursed until Python gave up)."""
    from collateral.report.comparison import _summary
    from collateral.store import Store

    st = Store.create(tmp_path / "empty", "empty")
    assert len(_summary(st)) == 0


def test_an_imported_runs_streams_count_in_the_direction_they_went():
    # An import's streams have no direction column: its per-direction sums say which way
    # they went (47.84 down, 9.59 up), not "every flow down" (57.4 down, nothing up).
    import pandas as pd

    from collateral.report.key_numbers import _measures

    df = pd.DataFrame(
        {
            "mode": ["measured"],
            **{f"tcp{i}_goodput_bps": [v] for i, v in enumerate([24e6, 23.84e6, 4.8e6, 4.79e6])},
            "down_goodput_bps": [47.84e6],
            "up_goodput_bps": [9.59e6],
        }
    )
    got = {m.label: float(m.values.iloc[0]) for m in _measures(df) if "goodput" in m.label}
    assert got == {"TCP goodput ↓, all flows": 47.84e6, "TCP goodput ↑, all flows": 9.59e6}
    # A simulated store's flows keep their own directions.
    sim = pd.DataFrame(
        {
            "tcp0_goodput_bps": [1e6],
            "tcp0_direction": ["down"],
            "tcp1_goodput_bps": [2e5],
            "tcp1_direction": ["up"],
            "down_goodput_bps": [None],
        }
    )
    got = {m.label: float(m.values.iloc[0]) for m in _measures(sim) if "goodput" in m.label}
    assert got == {"TCP goodput ↓": 1e6, "TCP goodput ↑": 2e5}


def test_a_directory_named_twice_is_one_section(stores: list[Path], tmp_path):
    from collateral.report.render import write_report

    one = stores[-1]  # the user's own sweep
    a = write_report([one], tmp_path / "a.html").read_text()
    b = write_report([one, Path(f"{one}/"), one / "."], tmp_path / "b.html").read_text()
    ids = re.compile(r'\bid="([^"]+)"')
    assert ids.findall(a) == ids.findall(b) and ids.findall(a), ids.findall(b)


def test_a_video_call_is_in_the_key_numbers_and_the_figure(tmp_path):
    """A store of a call beside a download: the report's table had TCP goodput alone and
    its figure TCP goodput; the call's rate, frame delay and late frames (a share, in %)
    are the numbers its reader came for."""
    from collateral.display import column_unit
    from collateral.experiment import Experiment
    from collateral.plot import suggest
    from collateral.report.key_numbers import key_numbers
    from collateral.runner import run_experiment
    from collateral.store import open_store

    exp = Experiment.from_dict(
        {
            "experiment": {"name": "call", "trials": 1},
            "scenario": {
                "link": "adsl2",
                "duration": "12s",
                "warmup": "2s",
                "tcp": [{"cc": "cubic"}],
                "media": [{"controller": "gcc"}],
            },
            "sweep": {"queue.limit": ["50kB", "200kB"]},
        }
    )
    run_experiment(exp, tmp_path / "r", workers=1)
    df = open_store(tmp_path / "r").summary()
    labels = [c[0] for c in key_numbers(df).columns]
    assert "video 0 GCC ↓ received (kbit/s)" in labels, labels
    assert "video 0 GCC ↓ frame delay p95 (ms)" in labels
    assert "video 0 GCC ↓ frames late (%)" in labels
    assert column_unit("media0_frames_late").name == "%"
    assert suggest(tmp_path / "r")["y"] == "video_p95_ms"


def test_a_workloads_scores_are_in_the_key_numbers():
    """An RRUL run or an imported measurement is about its scores: the table shows the
    point's median loaded latency, RPM and QoO and its most common grade (a word, not a
    median); a store without a workload shows none of them."""
    import pandas as pd

    from collateral.report.key_numbers import key_numbers

    df = pd.DataFrame(
        {
            "point": ["a", "a", "a", "b"],
            "queue_limit": [1, 1, 1, 2],
            "latency_loaded_s": [0.050, 0.070, 0.060, 0.300],
            "rpm": [1000.0, 800.0, 900.0, 200.0],
            "bufferbloat_grade": ["B", "A", "B", None],
            "qoo_voip": [90.0, 80.0, 85.0, 10.0],
        }
    )
    t = key_numbers(df)
    labels = [c[0] for c in t.columns]
    assert "latency loaded (ms)" in labels and "responsiveness (RPM)" in labels, labels
    col = {label: [row[i].text for row in t.rows] for i, (label, _) in enumerate(t.columns)}
    assert col["latency loaded (ms)"] == ["60", "300"]
    assert col["bufferbloat grade"] == ["B", "—"]
    assert col["QoO VoIP"] == ["85", "10"]
    plain = df.drop(columns=["latency_loaded_s", "rpm", "bufferbloat_grade", "qoo_voip"])
    plain["tcp0_goodput_bps"] = 1e6
    assert not {"responsiveness (RPM)", "bufferbloat grade"} & {
        c[0] for c in key_numbers(plain).columns
    }
