"""Experiment files: validation messages, sweep expansion, trial keys and seeds."""

import datetime as dt
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from collateral.experiment import Experiment, ExperimentError, load_experiment

BASE = """
[experiment]
trials = 2
seed = 7

[scenario]
link = "adsl1"
duration = "5s"
warmup = "1s"
queue = { limit = "20kB", rule = "fb-strict" }
tcp = [{ cc = "newreno", profile = "linux-2.6.25" }]
cbr = [{ direction = "down" }]

[sweep]
"queue.limit" = ["10kB", "20kB"]
"""


def write(tmp_path, text, name="exp.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


# (what is wrong, file text, key path named, value shown or None, fragment of what is allowed)
MALFORMED = [
    ("unknown table", BASE + '\n[sweeps]\n"x" = [1]\n', "sweeps", None, "allowed: experiment"),
    (
        "unknown experiment key",
        BASE.replace("trials = 2", "trails = 2"),
        "experiment.trails",
        "2",
        "allowed: name",
    ),
    (
        "unknown nested scenario key",
        BASE.replace('rule = "fb-strict"', 'rul = "fb-strict"'),
        "scenario.queue.rul",
        "'fb-strict'",
        "allowed: limit, rule, count_in_service",
    ),
    (
        "unknown key in a flow",
        BASE.replace('profile = "linux-2.6.25"', 'profil = "linux-2.6.25"'),
        "scenario.tcp[0].profil",
        "'linux-2.6.25'",
        "allowed: direction, cc, profile",
    ),
    (
        "ambiguous size unit",
        BASE.replace('"10kB", "20kB"', '"10kb", "20kB"'),
        "sweep.queue.limit[0]",
        "'10kb'",
        "write kB for kilobytes",
    ),
    (
        "bad duration unit",
        BASE.replace('duration = "5s"', 'duration = "5parsec"'),
        "scenario.duration",
        "'5parsec'",
        "100ms",
    ),
    (
        "negative rate",
        BASE.replace('link = "adsl1"', 'down = { rate = "-1Mbit" }\nup = { rate = "1Mbit" }'),
        "scenario.down.rate",
        "'-1Mbit'",
        "must be positive",
    ),
    (
        "zero limit",
        BASE.replace('"10kB", "20kB"', '"0B", "20kB"'),
        "sweep.queue.limit[0]",
        "'0B'",
        "must be positive",
    ),
    (
        "unknown congestion control",
        BASE.replace('cc = "newreno"', 'cc = "vegas2"'),
        "scenario.tcp[0].cc",
        "'vegas2'",
        "supported: newreno",
    ),
    (
        "unknown rule",
        BASE.replace('rule = "fb-strict"', 'rule = "fb-sloppy"'),
        "scenario.queue.rule",
        "'fb-sloppy'",
        "allowed: ps, fb-strict, fb-loose",
    ),
    (
        "unknown profile",
        BASE.replace('profile = "linux-2.6.25"', 'profile = "windows-95"'),
        "scenario.tcp[0].profile",
        "'windows-95'",
        "supported: rfc, linux-2.6.25",
    ),
    (
        "unknown link preset",
        BASE.replace('link = "adsl1"', 'link = "adsl9"'),
        "scenario.link",
        "'adsl9'",
        "known: adsl1",
    ),
    (
        "zero trials",
        BASE.replace("trials = 2", "trials = 0"),
        "experiment.trials",
        "0",
        "must be >= 1",
    ),
    (
        "negative root seed",
        BASE.replace("seed = 7", "seed = -1"),
        "experiment.seed",
        "-1",
        "must be >= 0",
    ),
    (
        "unknown seeds mode",
        BASE.replace("seed = 7", 'seed = 7\nseeds = "random"'),
        "experiment.seeds",
        "'random'",
        "'independent' or 'common'",
    ),
    (
        "unknown trace",
        BASE.replace("seed = 7", 'seed = 7\ntraces = ["cwnd", "owd"]'),
        "experiment.traces[1]",
        "'owd'",
        "'cwnd'",
    ),
    (
        "a trace only an import fills",
        BASE.replace("seed = 7", 'seed = 7\ntraces = ["cwnd", "throughput"]'),
        "experiment.traces[1]",
        "'throughput'",
        "imported measurements only (collateral import fills it)",
    ),
    (
        "unknown sweep key",
        BASE.replace('"queue.limit"', '"queue.limt"'),
        "sweep.queue.limt",
        None,
        "allowed: limit, rule, count_in_service",
    ),
    (
        "empty axis",
        BASE.replace('["10kB", "20kB"]', "[]"),
        "sweep.queue.limit",
        "[]",
        "at least one",
    ),
    (
        "axis not a list",
        BASE.replace('["10kB", "20kB"]', '"10kB"'),
        "sweep.queue.limit",
        "'10kB'",
        "list of values or a range",
    ),
    (
        "range with zero step",
        BASE.replace('["10kB", "20kB"]', '{ from = "10kB", to = "20kB", step = "0kB" }'),
        "sweep.queue.limit",
        '{"from": "10kB"',
        "step must be positive",
    ),
    (
        "zipped axes of unequal length",
        BASE + '\n[[sweep.zip]]\n"tcp.cc" = ["newreno"]\n"tags.x" = [1, 2]\n',
        "sweep.zip[0]",
        None,
        "equal lengths",
    ),
    (
        "flow index out of range",
        BASE + '"tcp.3.cc" = ["newreno"]\n',
        "sweep.tcp.3.cc",
        "'newreno'",
        "out of range",
    ),
    (
        "two points that are the same scenario",
        BASE.replace('"10kB", "20kB"', '"20kB", "20000B"'),
        "sweep",
        None,
        "same scenario",
    ),
    (
        "warm-up not shorter than the duration",
        BASE.replace('warmup = "1s"', 'warmup = "5s"'),
        "scenario.warmup",
        "'5s'",
        "shorter than the duration",
    ),
    (
        "slot rule with a byte limit",
        BASE.replace('rule = "fb-strict"', 'rule = "ps"'),
        "scenario.queue.rule",
        "'ps'",
        "give it in packets",
    ),
    (
        "seed set per scenario",
        BASE.replace('link = "adsl1"', 'link = "adsl1"\nseed = 3'),
        "scenario.seed",
        "3",
        "[experiment] seed",
    ),
    ("invalid TOML", BASE.replace("trials = 2", "trials = "), "TOML", None, "invalid TOML"),
    (
        "an empty list of sweeps (as an empty [sweep])",
        "sweep = []\n" + BASE.split("[sweep]")[0],
        "sweep",
        None,
        "an empty sweep",
    ),
]


@pytest.mark.parametrize(
    ("text", "key", "value", "allowed"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_file_is_one_line_naming_file_key_value_and_exit_2(
    tmp_path, text, key, value, allowed
):
    path = write(tmp_path, text)
    out = tmp_path / "out"
    p = run_cli("run", str(path), "-o", str(out))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"collateral: error: {path}: {key}"), lines[0]
    if value is not None:
        assert f"{key} = {value}" in lines[0], lines[0]
    assert allowed in lines[0], lines[0]
    assert "Traceback" not in p.stderr
    assert not out.exists(), "nothing may be written for a malformed file"


def test_missing_file_and_bad_options_exit_2(tmp_path):
    p = run_cli("run", str(tmp_path / "nope.toml"))
    assert p.returncode == 2 and "no such file" in p.stderr
    path = write(tmp_path, BASE)
    p = run_cli("run", str(path), "--shard", "2/2")
    assert p.returncode == 2 and p.stderr.startswith("collateral: error: --shard:")
    p = run_cli("run", str(path), "--set", "experiment.trials")
    assert p.returncode == 2 and "--set" in p.stderr
    # A bad value --set gave is --set's, not the file's (which is fine).
    p = run_cli("run", str(path), "--set", "experiment.bogus=1", "--dry-run")
    assert p.returncode == 2 and f"{path}: --set: experiment.bogus = 1: unknown key" in p.stderr


def test_sweep_expands_cartesian_zip_grids_and_ranges(tmp_path):
    exp = load_experiment(
        write(
            tmp_path,
            """
            [experiment]
            trials = 3
            [scenario]
            link = "adsl1"
            tcp = [{ cc = "newreno" }, { cc = "newreno", extra_delay = "10ms" }]
            cbr = [{ direction = "down" }]

            [[sweep]]
            "queue.rule" = ["ps"]
            [[sweep.zip]]
            "queue.limit" = ["7p", "14p"]
            "tags.queue_bytes" = [10000, 20000]

            [[sweep]]
            "queue.rule" = ["fb-strict", "fb-loose"]
            "tcp.profile" = ["rfc", "linux-2.6.25"]
            queue.limit = { from = "52500B", to = "52560B", step = "30B" }
            """,
        )
    )
    assert len(exp.points) == 2 + 2 * 2 * 3
    assert len(exp) == 3 * len(exp.points)
    ps = exp.points[:2]
    assert [p.scenario.down.queue.limit.amount for p in ps] == [7, 14]
    assert [p.tags for p in ps] == [{"queue_bytes": 10000}, {"queue_bytes": 20000}]
    assert all(p.scenario.up.queue.rule == "ps" for p in ps)  # `queue` = both directions
    limits = sorted({p.scenario.down.queue.limit.amount for p in exp.points[2:]})
    assert limits == [52500, 52530, 52560]  # inclusive range
    # "tcp.profile" without an index sets every flow; the second flow keeps its delay.
    last = exp.points[-1].scenario
    assert [t.profile for t in last.tcp] == ["linux-2.6.25", "linux-2.6.25"]
    assert last.tcp[1].extra_delay == 10_000_000
    cols = exp.points[0].columns()
    assert cols["tag_queue_bytes"] == 10000 and cols["down_queue_rule"] == "ps"
    assert cols["rtt_s"] == 0.1 and cols["tcp1_extra_delay_s"] == 0.01


def test_dotted_nested_and_quoted_sweep_keys_are_the_same():
    base = {"scenario": {"link": "adsl1", "tcp": [{}]}, "experiment": {"name": "x"}}
    a = Experiment.from_dict({**base, "sweep": {"tcp.cc": ["newreno"], "rtt": ["50ms"]}})
    b = Experiment.from_dict({**base, "sweep": {"tcp": {"cc": ["newreno"]}, "rtt": ["50ms"]}})
    assert [t.key for t in a.trials()] == [t.key for t in b.trials()]


def test_trial_keys_and_seeds_are_stable_and_order_free():
    def exp(sweep, **settings):
        return Experiment.from_dict(
            {
                "experiment": {"trials": 3, "seed": 5, **settings},
                "scenario": {"link": "adsl1", "tcp": [{}]},
                "sweep": sweep,
            }
        )

    a = exp({"rtt": ["50ms", "100ms"], "queue.limit": ["10kB", "20kB"]})
    b = exp({"queue.limit": ["20000B", "10kB"], "rtt": ["0.1s", "50ms"]})
    ka = {t.key: t.seed for t in a.trials()}
    assert len(ka) == 12 and len(set(ka.values())) == 12  # distinct keys and seeds
    assert ka == {t.key: t.seed for t in b.trials()}  # units and order do not matter
    assert all(0 <= s < 2**63 for s in ka.values())
    # Another root seed: other seeds, other keys.
    c = exp({"rtt": ["50ms", "100ms"], "queue.limit": ["10kB", "20kB"]}, seed=6)
    assert not set(ka) & {t.key for t in c.trials()}
    # Common random numbers: the same seeds at every point.
    d = exp({"rtt": ["50ms", "100ms"]}, seeds="common")
    by_rep = {}
    for t in d.trials():
        by_rep.setdefault(t.rep, set()).add(t.seed)
    assert all(len(s) == 1 for s in by_rep.values()) and len(by_rep) == 3
    # A preset and the same rates written out are the same trial.
    e = Experiment.from_dict(
        {
            "experiment": {"trials": 3, "seed": 5},
            "scenario": {"down": {"rate": "1.5Mbit"}, "up": {"rate": "256kbit"}, "tcp": [{}]},
            "sweep": {"rtt": ["50ms", "100ms"], "queue.limit": ["10kB", "20kB"]},
        }
    )
    assert {t.key for t in e.trials()} == set(ka)


def test_trial_json_is_the_scenario_with_its_seed():
    import json

    exp = Experiment.from_dict({"scenario": {"link": "adsl1", "tcp": [{}]}})
    (t,) = exp.trials()
    assert json.loads(t.native_json()) == t.scenario().to_native()


def test_a_points_columns_are_its_scenarios_and_its_tags():
    """The expansion writes each point's columns from the JSON it already made: what
    param_columns makes of the validated scenario, and the sweep's tags."""
    from collateral.experiment import param_columns

    exp = Experiment.from_dict(
        {
            "scenario": {"link": "adsl1", "tcp": [{}], "cbr": [{"direction": "up"}]},
            "sweep": {"queue": [{"limit": "20p"}, {"kind": "codel"}], "tags.site": ["a"]},
        }
    )
    assert len(exp.points) == 2
    for p in exp.points:
        want = {**param_columns(p.scenario), "tag_site": "a"}
        assert p.columns() == want


def test_overrides_replace_keys_and_axes(tmp_path):
    path = write(tmp_path, BASE)
    exp = load_experiment(
        path,
        [
            ("experiment.trials", 1),
            ("sweep.queue.limit", ["30kB"]),
            ("sweep.rtt", {"from": "50ms", "to": "70ms", "step": "10ms"}),
        ],
    )
    assert exp.name == "exp" and len(exp) == 3
    assert [p.scenario.rtt for p in exp.points] == [50_000_000, 60_000_000, 70_000_000]
    with pytest.raises(ExperimentError, match=r"scenario\.rtt = 'soon'"):
        load_experiment(path, [("scenario.rtt", "soon")])
    # A base key that the sweep sets again: the override changes nothing, and says so.
    with pytest.warns(UserWarning, match=r"--set scenario\.queue\.limit: every sweep sets"):
        shadowed = load_experiment(path, [("scenario.queue.limit", "30kB")])
    assert [p.key for p in shadowed.points] == [p.key for p in load_experiment(path).points]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_experiment(path, [("scenario.rtt", "70ms")])
    # The same, the axis spelt otherwise than the key: one direction under both
    # directions' axis, a zipped axis, a whole list over one flow's field.
    split = BASE.replace(
        'queue = { limit = "20kB", rule = "fb-strict" }',
        'down.queue = { limit = "20kB" }\nup.queue = { limit = "20kB" }',
    )
    for key, value in [
        ("scenario.down.queue.limit", "30kB"),
        ("scenario.up.queue.limit", "30kB"),
        ("scenario.cbr", [{"direction": "up", "size": "200B"}]),
        ("scenario.tcp", [{"cc": "cubic", "profile": "linux-2.6.25"}]),
    ]:
        other = split.replace('"queue.limit" = ["10kB", "20kB"]', SWEEPS)
        with pytest.warns(UserWarning, match=rf"--set {re.escape(key)}: every sweep sets"):
            load_experiment(write(tmp_path, other, "other.toml"), [(key, value)])
    # Set for one grid of two, or in one direction where the axis sets the other: it
    # changes points, and nothing is said; nor of the file's own value (reproduce
    # --quick's duration where the file has it).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_experiment(path, [("scenario.duration", "5s")])
        two = BASE.replace("[sweep]", "[[sweep]]") + '[[sweep]]\nrtt = ["50ms"]\n'
        load_experiment(write(tmp_path, two, "two.toml"), [("scenario.queue.limit", "30kB")])
        down = split.replace('"queue.limit"', '"down.queue.limit"')
        load_experiment(write(tmp_path, down, "down.toml"), [("scenario.up.queue.limit", "9kB")])


SWEEPS = """\
"cbr" = [[{ direction = "down" }], [{ direction = "up" }]]
[[sweep.zip]]
"queue.limit" = ["10kB", "20kB"]
"tcp.cc" = ["newreno", "cubic"]
"""


def test_a_store_keeps_the_file_under_the_overrides_its_run_applied(tmp_path):
    """The store's experiment.toml says how the run differed from the file (a report
    of a 1-trial run must not show a file of 2): comment lines naming each --set, as
    TOML, above the file's own text, which reads as the same TOML."""
    import tomllib

    from collateral.store import Store

    path = write(tmp_path, BASE)
    sets = [("experiment.trials", 1), ("sweep.queue.limit", ["30kB"]), ("a\nb", {"k v": "x"})]
    with pytest.raises(ExperimentError):  # the odd key is the run's error, not the text's
        load_experiment(path, sets)
    sets.pop()
    exp = load_experiment(path, sets)
    out = tmp_path / "store"
    run = ["run", str(path), "-o", str(out), "--no-progress"]
    given = ["--set", "experiment.trials=1", "--set", 'sweep.queue.limit=["30kB"]']
    p = subprocess.run(
        [sys.executable, "-m", "collateral", *run, *given],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    kept = (out / "experiment.toml").read_text()
    assert kept == exp.text
    head, body = kept.split("\n\n", 1)
    assert head.splitlines() == [
        "# Run with these overrides of the file below (--set):",
        "#   experiment.trials = 1",
        '#   sweep.queue.limit = ["30kB"]',
    ]
    assert body == path.read_text() and tomllib.loads(kept) == tomllib.loads(body)
    assert load_experiment(path).text == path.read_text()  # no --set: the file itself
    assert Store(out).meta()["experiment"] == "exp"


def test_an_override_shows_as_toml_on_one_comment_line():
    import tomllib

    from collateral.experiment.load import _with_overrides

    values = [1, 2.5, True, "5s", 'a"b\\c\n', [1, "x", [2]], {"limit": "60kB", "a b": 1}, []]
    text = _with_overrides("", [("k", v) for v in values] + [("x\ny", "\x7f")])
    lines = text.splitlines()[1:-1]
    assert len(lines) == len(values) + 1 and tomllib.loads(text) == {}
    for line, v in zip(lines, values, strict=False):
        assert tomllib.loads(line.removeprefix("#   "))["k"] == v
    assert lines[-1] == '#   x\\u000ay = "\\u007f"'
    # Dates as TOML writes them; a lone surrogate (argv that was not UTF-8) escaped, so
    # that the store can write the text; NaN and infinities.
    odd = [dt.date(1979, 5, 27), dt.datetime(1979, 5, 27, 7, 32), float("nan"), float("-inf")]
    text = _with_overrides("", [("k", v) for v in odd] + [("d", "x\udcff")])
    for line, v in zip(text.splitlines()[1:], odd, strict=False):
        got = tomllib.loads(line.removeprefix("#   "))["k"]
        assert got == v or (v != v and got != got)
    assert text.splitlines()[-2] == '#   d = "x\\udcff"'
    text.encode("utf-8")
    # A store's own copy run again: its old header goes, the new run's comes.
    again = _with_overrides(_with_overrides("[a]\n", [("k", 1)]), [("j", 2)])
    assert again == _with_overrides("[a]\n", [("j", 2)])
    assert _with_overrides(_with_overrides("[a]\n", [("k", 1)]), []) == "[a]\n"


def test_a_damaged_store_json_is_repaired_whatever_the_overrides(tmp_path):
    """A store whose store.json is damaged is its experiment's, and so repaired, when its
    kept file reads as the one being run (a run with other overrides, or none, has
    another header of comments) or names the same experiment."""
    from collateral.store import Store

    path = write(tmp_path, BASE)  # no name: the file's stands for it
    out = tmp_path / "store"
    first = load_experiment(path, [("experiment.trials", 1)])
    Store.create(out, first.name, first.text)
    (out / "store.json").write_text("{not json")
    again = load_experiment(path)  # no --set: another text, the same TOML
    assert again.text != first.text
    Store.create(out, "exp", again.text, notify=lambda line: None)
    assert Store(out).meta()["experiment"] == "exp"
    assert len(list((out / "quarantine").iterdir())) == 1


RED = {"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60}


def test_aqm_parameters_are_sweep_axes_and_their_errors_name_the_axis():
    base = {"experiment": {"name": "aqm"}, "scenario": {"link": "adsl1", "tcp": [{}]}}
    exp = Experiment.from_dict(
        {**base, "sweep": {"down.queue": [RED], "down.queue.max_p": [0.05, 0.1]}}
    )
    assert [p.columns()["down_queue_max_p"] for p in exp.points] == [0.05, 0.1]
    assert exp.points[0].columns()["down_queue_kind"] == "red"
    with pytest.raises(
        ExperimentError, match=r"sweep\.down\.queue\.max_p\[1\] = 2\.0: must be in \(0, 1\]"
    ):
        Experiment.from_dict(
            {**base, "sweep": {"down.queue": [RED], "down.queue.max_p": [0.1, 2.0]}}
        )
    with pytest.raises(ExperimentError, match=r"sweep\.down\.queue\.limt\[0\] = 1: unknown key"):
        Experiment.from_dict({**base, "sweep": {"down.queue.limt": [1]}})


def test_a_tables_own_check_names_the_axis_that_set_a_key_inside_it():
    """A call's min_rate above its max_rate fails on the call's table (``media``), shorter
    than the axis's path: the axis that swept max_rate is named, not [scenario]."""
    base = {
        "experiment": {"name": "m"},
        "scenario": {"link": "adsl2", "media": {"controller": "gcc", "min_rate": "150kbit"}},
    }
    with pytest.raises(ExperimentError) as e:
        Experiment.from_dict({**base, "sweep": {"media.max_rate": ["1Mbit", "100kbit"]}})
    assert "sweep.media.max_rate[1] = '100kbit': min_rate 150000 is above" in str(e.value)
    with pytest.raises(ExperimentError) as e:  # two axes inside the table: both named
        Experiment.from_dict({**base, "sweep": {"media.max_rate": ["100kbit"], "media.fps": [30]}})
    assert "sweep.media.max_rate[0] and sweep.media.fps[0]" in str(e.value), e.value


def test_the_refused_traces_are_those_the_schema_says_an_import_fills():
    from collateral import _native
    from collateral.experiment.settings import IMPORTED_TRACES

    imported = [t["name"] for t in _native.schema()["traces"] if "collateral import" in t["row"]]
    assert tuple(imported) == IMPORTED_TRACES == ("rtt", "throughput")


@pytest.mark.parametrize(
    ("down", "message"),
    [
        # A misspelt key is told before the right one it leaves missing.
        ({"burst_loss": {"pp": 0.1, "r": 0.5}}, "scenario.down.burst_loss.pp = 0.1: unknown key"),
        # A missing key at the table that lacks it, not as that table's value of the key.
        ({"burst_loss": {"p": 0.1}}, "scenario.down.burst_loss = {\"p\": 0.1}: missing key 'r'"),
        # Bounds and tables in the tool's words, not pydantic's ("Input should be ...").
        ({"burst_loss": {"p": 2, "r": 0.5}}, "scenario.down.burst_loss.p = 2: must be <= 1"),
        ({"loss_rate": 1}, "scenario.down.loss_rate = 1: must be < 1"),
        ({"delay": "-5ms"}, "scenario.down.delay = '-5ms': expected a table with keys steps,"),
    ],
)
def test_scenario_table_errors_say_what_is_wrong_where(down, message):
    data = {
        "experiment": {"name": "x"},
        "scenario": {"duration": "5s", "down": {"rate": "1Mbit", **down}, "up": {"rate": "1Mbit"}},
    }
    with pytest.raises(ExperimentError) as e:
        Experiment.from_dict(data)
    assert message in str(e.value), str(e.value)
    assert "Input should" not in str(e.value) and "Spec" not in str(e.value)


@pytest.mark.parametrize(
    ("flows", "key"),
    [
        ({"tcp": [{}, {"start": "5s"}]}, "scenario.tcp[1].start"),
        ({"cbr": [{"direction": "up", "start": "6s"}]}, "scenario.cbr[0].start"),
        ({"media": {"start": "5s"}}, "scenario.media.start"),
    ],
)
def test_a_flow_that_starts_after_the_run_is_refused_by_the_core(flows, key):
    data = {"experiment": {"name": "x"}, "scenario": {"duration": "5s", "warmup": "1s", **flows}}
    with pytest.raises(ExperimentError, match=rf"{re.escape(key)}: must be before the end"):
        Experiment.from_dict(data)
    # Just before the end is a flow (a short one).
    first = next(iter(flows.values()))
    item = (first[-1] if isinstance(first, list) else first) | {"start": "4.9s"}
    ok = {**flows, next(iter(flows)): [*first[:-1], item] if isinstance(first, list) else item}
    Experiment.from_dict({**data, "scenario": {**data["scenario"], **ok}})


def test_one_flow_given_alone_is_one_error_asking_for_a_list():
    from pydantic import ValidationError

    from collateral.spec import Scenario, TcpSpec

    for one in (TcpSpec(cc="cubic"), {"cc": "cubic"}, "cubic"):
        with pytest.raises(ValidationError) as e:
            Scenario(tcp=one)
        assert e.value.error_count() == 1 and "expected a list, also of one" in str(e.value)
    data = {"experiment": {"name": "x"}, "scenario": {"duration": "5s", "warmup": "1s"}}
    data["scenario"]["tcp"] = {"cc": "cubic"}
    with pytest.raises(
        ExperimentError, match=r"scenario.tcp = \{\"cc\": \"cubic\"\}: expected a list"
    ):
        Experiment.from_dict(data)


def test_a_float_field_refuses_nan_and_infinity_by_name():
    from pydantic import ValidationError

    from collateral.spec import LinkSpec

    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValidationError, match="loss_rate\n  Input should be a finite number"):
            LinkSpec(rate="1Mbit", loss_rate=bad)


def test_bare_numbers_that_are_seconds_or_bits_are_warned_by_key(tmp_path):
    # A bare number is a second or a bit/s, as on the command line: rtt = 100 is a
    # 100 s round trip. Each is said where the file gives it, and the run goes on.
    text = BASE.replace('warmup = "1s"', 'warmup = "1s"\nrtt = 100') + textwrap.dedent("""
        "down.queue" = [{ kind = "pie", target = 15 }, { kind = "pie", target = "15ms" }]
        "up.rate" = { values = [200, "256kbit"] }
        """)
    text = text.replace('"queue.limit" = ["10kB", "20kB"]', "")
    text = text.replace('link = "adsl1"', 'down = { rate = "1500kbit" }\nup = { rate = "256kbit" }')
    path = write(tmp_path, text.replace('queue = { limit = "20kB", rule = "fb-strict" }', ""))
    with pytest.warns(UserWarning) as caught:
        exp = load_experiment(path)
    assert len(exp) == 8
    said = [str(w.message).removeprefix(f"{path}: ") for w in caught]
    assert said == [
        "scenario.rtt: 100: read as 100 s, an unusual round trip; did you mean 100ms?",
        "sweep.down.queue[0]: target=15: read as 15 s; did you mean 15ms?",
        "sweep.up.rate.values[0]: 200: read as 200 bit/s; did you mean 200kbit?",
    ], said
    # An AQM's parameter swept as its own axis is checked as that queue's.
    axis = path.read_text() + '"down.queue.tupdate" = [30, "30ms"]\n'
    (tmp_path / "axis.toml").write_text(axis)
    with pytest.warns(UserWarning) as caught:
        load_experiment(tmp_path / "axis.toml")
    assert any("sweep.down.queue.tupdate[0]: tupdate=30: read as 30 s" in str(w.message)
               for w in caught), [str(w.message) for w in caught]  # fmt: skip
    p = run_cli("run", str(path), "-o", str(tmp_path / "out"), "--dry-run")
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("collateral: warning: ") == 3, p.stderr
    assert "scenario.rtt: 100: read as 100 s" in p.stderr
    # Given with their units, nothing is said.
    fixed = path.read_text().replace("rtt = 100", 'rtt = "100ms"')
    fixed = fixed.replace("target = 15 }", 'target = "20ms" }').replace("[200,", '["200kbit",')
    path.write_text(fixed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_experiment(path)


def test_a_byte_limit_below_one_segment_is_warned_once_per_value(tmp_path):
    # limit = 100 is 100 bytes: every 1500-byte segment is dropped (as --queue 100 warns).
    text = BASE.replace('["10kB", "20kB"]', '[100, "1000", "20kB"]')
    path = write(tmp_path, text)
    with pytest.warns(UserWarning) as caught:
        load_experiment(path)
    said = [str(w.message).removeprefix(f"{path}: ") for w in caught]
    why = "smaller than one 1500-byte packet; the queue drops every full-size TCP segment"
    assert said == [f"queue.limit = {n} B in 1 point: {why}" for n in (100, 1000)], said


def test_a_bare_playout_deadline_is_warned(tmp_path):
    # playout = 150 is 150 s: every frame then counts as on time; the file runs, warned.
    text = BASE.replace(
        'cbr = [{ direction = "down" }]', 'media = [{ controller = "gcc", playout = 150 }]'
    )
    with pytest.warns(UserWarning, match=r"scenario\.media\[0\]\.playout: 150: read as 150 s"):
        load_experiment(write(tmp_path, text))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_experiment(
            write(tmp_path, text.replace("playout = 150", 'playout = "150ms"'), "ok.toml")
        )


def test_a_direction_left_out_is_named_without_its_default_object(tmp_path):
    """``down`` without ``up``: "scenario.up: rate missing", not the default LinkSpec's
    repr (which the file never wrote) in the message."""
    f = tmp_path / "d.toml"
    f.write_text('[experiment]\nname = "d"\n[scenario]\ndown = { rate = "1Mbit" }\n')
    with pytest.raises(ExperimentError) as e:
        load_experiment(f)
    assert (
        str(e.value)
        == f"{f}: scenario.up: rate missing; give both down and up rates, or a link preset"
    )


def test_set_into_one_of_several_grids_says_to_set_the_list_whole():
    """``--set sweep.1=...`` where the file has [[sweep]] grids: the message says how
    (it said "set one whole", which is what the refused command did)."""
    root = Path(__file__).resolve().parents[1]
    with pytest.raises(ExperimentError) as e:
        load_experiment(root / "examples" / "queue-rules.toml", [("sweep.1", {"rtt": ["50ms"]})])
    assert "set the list whole, e.g. --set 'sweep=[" in str(e.value)


def test_set_takes_an_axis_key_quoted_as_the_files_write_it():
    """``--set 'sweep."queue.limit"=[...]'`` (the axis as the files quote it) is the
    same override as the bare ``sweep.queue.limit``; it was "unknown key '"queue'"."""
    root = Path(__file__).resolve().parents[1]
    f = root / "examples" / "mmsys-fig6.toml"
    quoted = load_experiment(f, [('sweep."queue.limit"', ["60kB", "61kB"])])
    bare = load_experiment(f, [("sweep.queue.limit", ["60kB", "61kB"])])
    assert [p.key for p in quoted.points] == [p.key for p in bare.points]
    assert len(quoted.points) == 2 * 2 * 2, len(quoted.points)  # 2 limits x 2 cc x 2 rules


def test_set_reaches_into_a_list_by_index_as_sweep_keys_do():
    """``--set scenario.tcp.0.cc=cubic`` sets the first flow's key (sweeps take
    ``tcp.0.cc``; --set said "set the whole list"); a bad index names the list's size."""
    root = Path(__file__).resolve().parents[1]
    f = root / "examples" / "mmsys-fig6.toml"  # one flow on the scenario, swept tcp.cc
    exp = load_experiment(f, [("scenario.tcp.0.start_spread", "1s"), ("sweep.tcp.cc", ["cubic"])])
    assert {p.scenario.tcp[0].start_spread for p in exp.points} == {1_000_000_000}  # ns
    for key, said in (
        ("scenario.tcp.1.cc", "'1': the list there has 1 entries: an index from 0 to 0"),
        ("scenario.tcp.x.cc", "'x': the list there has 1 entries"),
        ("scenario.tcp.0.cc.y", "'cc' holds a str, not a table"),
    ):
        with pytest.raises(ExperimentError) as e:
            load_experiment(f, [(key, "cubic")])
        assert f"--set {key}" in str(e.value) and said in str(e.value), str(e.value)


def test_a_round_trip_of_seconds_with_its_unit_is_warned_too(tmp_path):
    """``rtt = "1000s"`` is no broadband link's and longer than the trial: warned as the
    CLI's --rtt 1000s is (only a bare number was), without the "did you mean"."""
    path = write(tmp_path, BASE.replace('warmup = "1s"', 'warmup = "1s"\nrtt = "1000s"'))
    with pytest.warns(UserWarning) as caught:
        load_experiment(path)
    said = [str(w.message).removeprefix(f"{path}: ") for w in caught]
    assert said == ["scenario.rtt: 1000s: read as 1000 s, an unusual round trip"], said


def test_an_axis_over_every_flow_of_a_scenario_without_any_is_named(tmp_path):
    """``"tcp.start_spread"`` swept with no TCP flow set nothing: the points came out as
    one scenario ("two points are the same"); now the axis says why."""
    path = tmp_path / "s.toml"
    path.write_text(
        '[experiment]\nname = "s"\n[scenario]\nlink = "adsl1"\n'
        '[sweep]\n"tcp.start_spread" = [0, 1]\n'
    )
    with pytest.raises(ExperimentError) as e:
        load_experiment(path)
    assert "sweep.tcp.start_spread" in str(e.value)
    assert "the scenario has none of these flows; give them first" in str(e.value)


@pytest.mark.parametrize(
    "data, said",
    [
        (
            {"scenario": {"rt": "50ms"}},
            "scenario.rt = '50ms': unknown key 'rt'; did you mean 'rtt'?",
        ),
        (
            {"experiment": {"name": "x", "trails": 2}},
            "unknown key 'trails'; did you mean 'trials'?",
        ),
        ({"sweep": {"queue.limt": ["1kB"]}}, "unknown key 'limt'; did you mean 'limit'?"),
        ({"scenario": {"zzz": 1}}, "unknown key 'zzz'; allowed: link, duration"),
    ],
)
def test_a_misspelt_key_gets_the_closest_one(data, said):
    with pytest.raises(ExperimentError) as e:
        Experiment.from_dict({"experiment": {"name": "x"}, "scenario": {}, **data})
    assert said in str(e.value) and "\n" not in str(e.value)
