"""Property tests over the entry points a person types into: build_scenario and
Scenario keyword arguments, CLI arguments (``cli.main`` in-process) and experiment
files (TOML text).

The property, for every input: it is accepted — and then the core accepts the scenario
too, so nothing refused later at run time — or refused with one ValueError/TypeError
(one line naming the parameter for the flat API) or ``SystemExit(2)`` with one line on
stderr. Never another exception, never a traceback. Bounded: each test runs a fixed
number of examples without deadlines; the file takes well under a minute.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import collateral
from collateral import _native, cli
from collateral.experiment import ExperimentError, load_experiment
from collateral.spec import Scenario, SpecError, build_scenario

# The same examples in CI every run (a failure is reproducible); a longer, random search
# with COLLATERAL_FUZZ_EXAMPLES=N (e.g. 5000).
_LONG = int(os.environ.get("COLLATERAL_FUZZ_EXAMPLES", "0"))
FAST = settings(
    max_examples=_LONG or 120,
    deadline=None,
    derandomize=not _LONG,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# ---------------------------------------------------------------------------------------
# Values as people (and typos) write them

UNITS = ["", "s", "ms", "us", "ns", "min", "h", "B", "kB", "KiB", "MB", "GB", "p", "pkts"]
UNITS += ["bit", "kbit", "Mbit", "Gbit", "Tbit", "bps", "Mbps", "kb", "parsec", "µs", "%"]
NUMBERS = st.one_of(
    st.integers(-(10**6), 10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "-0", "1e30", "1e-30", "1e999999999", "9" * 5000, "0.1", "1.5"]),
    st.integers(0, 40).map(lambda n: f"1e{n}"),
)
UNIT_TEXT = st.builds(lambda n, u: f"{n}{u}", NUMBERS, st.sampled_from(UNITS))
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.just(10**5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
VALUE = st.one_of(UNIT_TEXT, UNIT_TEXT, ODD)
NAMES = st.sampled_from(
    [
        "adsl1",
        "adsl2",
        "codel",
        "fq_codel",
        "pie",
        "red",
        "cubic",
        "newreno",
        "bbr",
        "linux-6",
        "rfc",
        "ps",
        "fb-strict",
        "fb-loose",
        "down",
        "up",
        "both",
        "none",
        "wow",
        "quake3",
        "",
        '{"kind": "codel"}',
        '{"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60}',
        '{"kind": "codel", "target_ns": 1e300}',
        '{"kind": "pie", "limit": ' + "9" * 5000 + "}",
        "[" * 3000,
    ]
)

FLAT_PARAMS = {
    "link": st.one_of(NAMES, ODD),
    "down": VALUE,
    "up": VALUE,
    "rtt": VALUE,
    "queue": VALUE,
    "rule": st.one_of(NAMES, ODD),
    "count_in_service": st.one_of(st.booleans(), ODD),
    "cc": st.one_of(NAMES, ODD),
    "profile": st.one_of(NAMES, ODD),
    "duration": st.one_of(st.sampled_from(["2s", "3s", "1e6s", "30min"]), VALUE),
    "warmup": st.one_of(st.sampled_from(["1s", "0s"]), VALUE),
    "seed": st.one_of(st.integers(-5, 2**65), ODD),
    "cbr": st.one_of(NAMES, ODD),
    "cbr_size": VALUE,
    "cbr_interval": VALUE,
    "jitter": VALUE,
    "tcp_flows": st.one_of(st.integers(-2, 12), st.integers(10**3, 10**7), ODD),
    "delayed_ack": st.one_of(st.booleans(), ODD),
    "rto_min": VALUE,
    "aqm": st.one_of(NAMES, ODD),
    "app": st.one_of(NAMES, ODD),
    "web_users": st.one_of(st.integers(-2, 20), st.integers(10**3, 10**8), ODD),
}
FLAT_KWARGS = st.fixed_dictionaries({}, optional=FLAT_PARAMS)


def _one_line(text: str) -> bool:
    return "\n" not in text.strip() and len(text) < 1000


@FAST
@given(FLAT_KWARGS)
def test_build_scenario_accepts_or_names_the_parameter(kwargs):
    try:
        sc = build_scenario(**kwargs)
    except SpecError as e:
        assert _one_line(str(e)), str(e)
        assert e.param in FLAT_PARAMS, e.param
        assert str(e).startswith(f"{e.param}: ")
        assert "set_int_max_str_digits" not in str(e)
        return
    # Accepted: the core accepts it too (nothing refused later, at run time).
    _native.validate_scenario(sc.to_native_json())


# AQM parameters as people write them: kind:key=value,... with the disciplines' keys
# (and typos), in human units, numbers JSON cannot carry, and nonsense.
AQM_KEYS = ["limit", "target", "interval", "flows", "quantum", "ecn", "min_th", "max_th"]
AQM_KEYS += ["max_p", "w_q", "gentle", "bandwidth", "memory_limit", "k", "alpha", "beta"]
AQM_KEYS += ["tupdate", "mtu", "diffserv", "isolation", "scheduler", "c_protection"]
AQM_KEYS += ["drop_batch", "target_ns", "limit_rule", "overhead", "mpu", "tagret", "x"]
AQM_VALUE = st.one_of(
    UNIT_TEXT,
    NUMBERS,
    st.sampled_from(["on", "off", "true", "maybe", "wrr", "diffserv4", "flows", "ps", ""]),
    st.sampled_from(["1e999", "-1", "4294967296", "0", "nan", "inf", "9" * 5000]),
)
AQM_TEXT = st.builds(
    lambda kind, pairs: kind + (":" if pairs else "") + ",".join(f"{k}={v}" for k, v in pairs),
    st.sampled_from(["red", "fred", "cbt", "cbq", "codel", "fq_codel", "pie", "dualpi2", "cake"]),
    st.lists(
        st.tuples(st.sampled_from(AQM_KEYS), AQM_VALUE), max_size=4, unique_by=lambda kv: kv[0]
    ),
)


@FAST
@given(AQM_TEXT)
def test_aqm_parameters_are_accepted_or_refused_at_their_key(text):
    """``--aqm kind:key=value,...``: accepted (and the core accepts the scenario), or one
    line naming ``aqm`` and, for a parameter's fault, the key the user wrote (or the one
    the discipline needs), from the key path the core returns — never serde's text."""
    given = [item.partition("=")[0] for item in text.partition(":")[2].split(",") if item]
    try:
        sc = build_scenario(aqm=text, duration="2s", warmup="1s")
    except SpecError as e:
        assert _one_line(str(e)), str(e)
        assert e.param == "aqm" and "set_int_max_str_digits" not in str(e), str(e)
        assert " at line " not in str(e), str(e)  # JSON's position: the key is missing
        head = e.message.split(":")[0]
        native = {f"{k}_ns" for k in given} | {f"{k}_bps" for k in given}
        assert head in given or e.below or head in native or head == "kind", str(e)
        return
    _native.validate_scenario(sc.to_native_json())


# Nested specs: the Scenario model's own keyword arguments.
TCP = st.fixed_dictionaries(
    {},
    optional={
        "cc": NAMES,
        "profile": NAMES,
        "start": VALUE,
        "stop": VALUE,
        "extra_delay": VALUE,
        "mss": st.one_of(st.integers(-1, 10**7), ODD),
        "initial_cwnd": st.one_of(st.integers(-1, 10**10), ODD),
        "rwnd_segments": st.one_of(st.integers(-1, 10**10), ODD),
        "rto_min": VALUE,
        "data_bytes": VALUE,
    },
)
CBR = st.fixed_dictionaries(
    {},
    optional={
        "direction": NAMES,
        "size": VALUE,
        "interval": st.one_of(st.sampled_from(["20ms", "1ms", "1ns", "1us"]), VALUE),
        "jitter": VALUE,
        "start": VALUE,
        "stop": VALUE,
        "tag": st.one_of(st.integers(-1, 300), ODD),
        "app": NAMES,
    },
)
WEB = st.fixed_dictionaries(
    {"users": st.one_of(st.integers(-1, 50), st.integers(10**4, 10**7), ODD)},
    optional={"parallel": st.one_of(st.integers(-1, 10**6), ODD), "stop": VALUE},
)
SCENARIO_KWARGS = st.fixed_dictionaries(
    {"link": st.sampled_from(["adsl1", "adsl2"])},
    optional={
        "duration": st.one_of(st.sampled_from(["2s", "60s", "1000000s"]), VALUE),
        "warmup": st.one_of(st.sampled_from(["1s", "0s"]), VALUE),
        "rtt": VALUE,
        "bin": st.one_of(st.sampled_from(["1s", "1ms", "1us", "1ns"]), VALUE),
        "access_rate": VALUE,
        "seed": st.one_of(st.integers(-1, 2**65), ODD),
        "tcp": st.one_of(st.lists(TCP, max_size=3), st.integers(0, 20_000).map(lambda n: [{}] * n)),
        "cbr": st.one_of(st.lists(CBR, max_size=3), st.integers(0, 20_000).map(lambda n: [{}] * n)),
        "web": st.lists(WEB, max_size=2),
        "phases": st.lists(
            st.fixed_dictionaries({"name": st.text(max_size=5), "start": VALUE}), max_size=3
        ),
    },
)


@FAST
@given(SCENARIO_KWARGS)
def test_scenario_accepts_or_raises_a_validation_error(kwargs):
    try:
        sc = Scenario(**kwargs)
    except (ValidationError, ValueError, TypeError) as e:
        assert "set_int_max_str_digits" not in str(e)
        return
    _native.validate_scenario(sc.to_native_json())


# ---------------------------------------------------------------------------------------
# The command line, in-process: main(argv) either gets to running (stubbed out) or ends
# with SystemExit(2) and one line on stderr


class _Ran(Exception):
    """Raised by the stubs in place of running a trial: the input was accepted."""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fuzz-cwd")
    (d / "FILE").write_text("x")
    (d / "DIR").mkdir()
    return d


@pytest.fixture(scope="module", autouse=True)
def no_runs():
    """Nothing runs: the core's entry points and the testbed raise _Ran instead."""
    from collateral import emulate
    from collateral.emulate import run as emulate_run

    def ran(*args, **kwargs):
        raise _Ran

    saved = (_native.simulate, _native.simulate_many, emulate.emulate, emulate_run.emulate)
    mp = pytest.MonkeyPatch()
    mp.setattr(_native, "simulate", ran)
    mp.setattr(_native, "simulate_many", ran)
    mp.setattr(emulate, "emulate", ran)  # as the CLI imports it
    mp.setattr(emulate_run, "emulate", ran)  # as emulate_experiment calls it
    yield
    mp.undo()
    assert (
        _native.simulate,
        _native.simulate_many,
        emulate.emulate,
        emulate_run.emulate,
    ) == saved


def _main(argv: list[str], cwd: Path) -> tuple[str, int | None, str]:
    """('ran' | 'exit', exit code, stderr) of cli.main(argv) run in ``cwd``."""
    err = io.StringIO()
    with (
        contextlib.chdir(cwd),
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        try:
            rc = cli.main(argv)
        except _Ran:
            return "ran", None, err.getvalue()
        except SystemExit as e:
            return "exit", e.code, err.getvalue()
    return "exit", rc, err.getvalue()


SIM_OPTIONS = [
    "--link",
    "--down",
    "--up",
    "--rtt",
    "--queue",
    "--rule",
    "--aqm",
    "--tcp-flows",
    "--cc",
    "--profile",
    "--rto-min",
    "--cbr",
    "--cbr-size",
    "--cbr-interval",
    "--jitter",
    "--app",
    "--web-users",
    "--duration",
    "--warmup",
    "--seed",
    "--plot",
    "--window",
]
PATHS = st.sampled_from(
    [
        *("", ".", "..", "DIR", "FILE", "FILE/x.png", "/proc/x.png", "a" * 300 + ".png"),
        *("x.bmp", "out/x.png", "x.svg", "x.pdf", "/dev/null", "DIR/", "x\x00.png"),
    ]
)
ARG_TEXT = st.one_of(UNIT_TEXT, NAMES, PATHS, st.text(max_size=20))
PAIRS = st.lists(st.tuples(st.sampled_from(SIM_OPTIONS), ARG_TEXT), max_size=4)


def _check_cli(kind: str, code: int | None, err: str) -> None:
    if kind == "ran" or (code == 0 and "error" not in err):  # accepted (a dry run)
        return
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("collateral: error: "), err
    assert "Traceback" not in err and "set_int_max_str_digits" not in err
    assert len(lines[0]) < 1000


@FAST
@given(st.sampled_from(["simulate", "emulate", "demo"]), PAIRS)
def test_cli_scenario_options_run_or_end_in_one_line(workdir, command, pairs):
    before = sorted(p.name for p in workdir.iterdir())
    argv = [command, "--duration", "2s", "--warmup", "1s"]
    for opt, value in pairs:
        if command == "demo" and opt not in ("--plot", "--window"):
            continue
        argv += [opt, value]
    _check_cli(*_main(argv, workdir))
    assert sorted(p.name for p in workdir.iterdir()) == before, "nothing written"


ADVISE_OPTIONS = ["--down", "--up", "--rtt", "--tcp-flows", "--cc", "--profile"]
ADVISE_OPTIONS += ["--trials", "--duration", "--target", "--seed", "--plot", "--link", "--app"]


@FAST
@given(st.lists(st.tuples(st.sampled_from(ADVISE_OPTIONS), ARG_TEXT), max_size=4))
def test_cli_advise_runs_or_ends_in_one_line(workdir, pairs):
    argv = ["advise"]
    for opt, value in pairs:
        argv += [opt, value]
    _check_cli(*_main(argv, workdir))


@FAST
@given(
    st.sampled_from(["query", "report", "compare", "merge", "reproduce"]),
    st.lists(st.one_of(PATHS, st.text(max_size=10)), min_size=1, max_size=3),
    st.lists(st.tuples(st.sampled_from(["-o", "-j", "--plot", "--format"]), ARG_TEXT), max_size=2),
)
def test_cli_directory_commands_end_in_one_line(workdir, command, positional, pairs):
    """Nothing here names a real results directory or figure: each ends in one line."""
    argv = [command, *positional]
    if command == "reproduce":
        argv = [command, "no-such-figure", *positional[1:]]
    for opt, value in pairs:
        if command in ("query", "compare") and opt == "-o":
            continue
        argv += [opt, value]
    kind, code, err = _main(argv, workdir)
    assert kind == "exit"
    _check_cli(kind, code, err)


# ---------------------------------------------------------------------------------------
# Experiment files


def _toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


TOML_SCALAR = st.one_of(
    UNIT_TEXT,
    NAMES,
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
TOML_VALUE = st.one_of(
    TOML_SCALAR,
    st.lists(TOML_SCALAR, max_size=3),
    st.dictionaries(
        st.sampled_from(["limit", "rule", "kind", "rate", "cc"]), TOML_SCALAR, max_size=2
    ),
)
SCENARIO_KEYS = ["link", "rtt", "duration", "warmup", "queue", "tcp", "cbr", "web", "bin"]
SCENARIO_KEYS += ["down", "up", "down.rate", "phases", "seed", "trace", "nonsense"]
AXES = ["rtt", "queue.limit", "queue.rule", "tcp.cc", "tcp.0.cc", "cbr.interval", "duration"]
AXES += ["tags.x", "down.queue.limit", "seed", "nonsense.key", "cbr.9.size"]
# A range is small (a few values) or far too large: never thousands of points to build.
RANGE = st.builds(
    lambda a, b, s, u: {"from": f"{a}{u}", "to": f"{b}{u}", "step": f"{s}{u}"},
    st.integers(0, 100),
    st.one_of(st.integers(0, 100), st.just(10**12)),
    st.one_of(st.integers(-1, 30), st.just(0)),
    st.sampled_from(["ms", "kB", "", "p"]),
)
EXPERIMENT = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.sampled_from(["ok", "..", ".", "a/b", "/tmp/x", "-x", ""]), ODD),
        # Few trials, or far too many (refused): a dry run counts every accepted trial.
        "trials": st.one_of(st.integers(-1, 5), st.integers(10**7 + 1, 10**9), ODD),
        "seed": st.one_of(st.integers(-1, 2**64), ODD),
        "seeds": st.one_of(st.sampled_from(["common", "independent"]), ODD),
        "traces": st.one_of(st.lists(st.sampled_from(["cwnd", "queue", "x"]), max_size=2), ODD),
    },
)


@st.composite
def experiment_text(draw) -> str:
    if draw(st.integers(0, 9)) == 0:  # sometimes not even TOML
        return draw(st.text(max_size=200))
    lines = []
    exp = draw(EXPERIMENT)
    exp = {
        k: v
        for k, v in exp.items()
        if v is not None and not (isinstance(v, int) and abs(v) > 10**18)
    }
    if exp:
        lines.append("[experiment]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in exp.items()]
    lines.append("[scenario]")
    lines.append('link = "adsl1"')
    lines.append('duration = "2s"')
    lines.append('warmup = "1s"')
    for k in draw(st.lists(st.sampled_from(SCENARIO_KEYS), max_size=3, unique=True)):
        if k not in ("link", "duration", "warmup"):
            lines.append(f"{json.dumps(k)} = {_toml_value(draw(TOML_VALUE))}")
    axes = draw(st.lists(st.sampled_from(AXES), max_size=3, unique=True))
    if axes:
        lines.append("[sweep]")
        for a in axes:
            v = draw(st.one_of(st.lists(TOML_SCALAR, max_size=3), RANGE, TOML_SCALAR))
            lines.append(f"{json.dumps(a)} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


@settings(FAST, max_examples=_LONG or 100)
@given(experiment_text())
def test_experiment_files_load_or_raise_one_line(tmp_path_factory, text):
    d = tmp_path_factory.mktemp("exp")
    path = d / "fuzz.toml"
    path.write_text(text)
    try:
        exp = load_experiment(path)
    except ExperimentError as e:
        assert _one_line(str(e)), str(e)
        assert str(e).startswith(f"{path}: ")
        assert "set_int_max_str_digits" not in str(e)
    else:
        assert (Path("results") / exp.name).resolve().parent == Path("results").resolve()
        for p in exp.points:
            _native.validate_scenario(p.scenario.to_native_json())
    kind, code, err = _main(["run", str(path), "-o", str(d / "out"), "--dry-run"], d)
    _check_cli(kind, code, err)
    assert not (d / "out").exists(), "a dry run writes nothing"


# ---------------------------------------------------------------------------------------
# Resampled series of a result


@pytest.fixture(scope="module")
def result() -> collateral.Result:
    from collateral.result import Result

    raw = {
        "summary": {
            "duration_s": 2.0,
            "warmup_s": 1.0,
            "tcp": [{"flow": 0, "direction": "down", "goodput_bps": 1.0}],
            "cbr": [],
            "queues": {},
        },
        "traces": {
            "cwnd": {
                "time_s": [0.0, 1.0],
                "flow": [0, 0],
                "cwnd": [3, 4],
                "ssthresh": [2**32 - 1, 2],
            },
            "queue": {"time_s": [0.5], "direction": [0], "bytes": [1500], "packets": [1]},
        },
    }
    import numpy as np

    for t in raw["traces"].values():
        for k in t:
            t[k] = np.asarray(t[k])
    return Result(raw)


SERIES_ARG = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    UNIT_TEXT,
    NAMES,
    ODD,
)


@FAST
@given(SERIES_ARG, SERIES_ARG, SERIES_ARG, SERIES_ARG, st.booleans())
def test_series_accept_or_name_the_argument(result, which, step, t0, t1, cwnd):
    kwargs = {"step": "1ms" if step is None else step, "t0": t0, "t1": t1}
    try:
        if cwnd:
            out = result.cwnd_series(0 if which is None else which, **kwargs)
        else:
            out = result.queue_series("down" if which is None else which, **kwargs)
    except (ValueError, TypeError) as e:
        assert _one_line(str(e))
        assert str(e).split(":")[0].split()[0] in ("flow", "direction", "step", "t0", "t1")
        return
    assert len(out[0]) <= 10_000_000 and len(out) == 3
