"""Every bad input of issues 16 and 27 that reaches the CLI, an experiment file or the Python API
is refused in one line naming the option, key or parameter, before anything is built,
simulated, emulated or written.

CLI cases run ``collateral`` in a subprocess in a fresh working directory (holding a
file ``FILE``, a directory ``DIR`` and a few experiment files) and check: exit status 2,
exactly one line on stderr starting ``collateral: error:`` and naming the option, no
traceback, nothing on stdout, nothing written in the working directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import collateral
from collateral import _native
from collateral import emulate as emu
from collateral.emulate import registry as emu_registry
from collateral.spec import CbrSpec, Scenario, SpecError, TcpSpec, WebSpec, build_scenario

DIGITS = "9" * 5000
NESTED = "[scenario]\nlink = 'adsl1'\nx = " + "[" * 5000 + "]" * 5000 + "\n"
SMALL = '[scenario]\nlink = "adsl1"\nduration = "2s"\nwarmup = "1s"\n'
FILES = {
    "exp.toml": SMALL,
    "deep.toml": NESTED,
    # 1000 points x 10^6 trials: refused by its size, not built (even with --dry-run).
    "huge.toml": '[experiment]\ntrials = 1000000\n[scenario]\nlink = "adsl1"\n'
    '[sweep]\nrtt = { from = "1ms", to = "1000ms", step = "1ms" }\n',
    "dotdot.toml": '[experiment]\nname = ".."\n' + SMALL,
    "twice.toml": SMALL + '[sweep]\n"queue.limit" = ["20kB"]\nqueue.limit = ["40kB"]\n',
    "bigint.toml": SMALL.replace('"2s"', DIGITS),
    "range.toml": SMALL + '[sweep]\nrtt = { from = "1ms", to = "1e999999999ms", step = "1ms" }\n',
    "emptysweep.toml": SMALL + "[sweep]\n",
    "emptysweep2.toml": SMALL + '[[sweep]]\nrtt = ["10ms"]\n[[sweep]]\n',
    "axis.toml": SMALL + 'queue = { kind = "codel" }\n[sweep."queue.limit"]\nvalues = ["10kB"]\n'
    'packet_of = "1500B"\n',
    "nanaqm.toml": SMALL
    + 'queue = { kind = "red", min_th = 5, max_th = 15, max_p = nan, w_q = 0.002,'
    " limit = 60 }\n",
    "codellimit.toml": SMALL + 'queue = { kind = "codel", limit = 99999999999 }\n',
}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A real results directory (one 2 s trial), for the commands that read one."""
    d = tmp_path_factory.mktemp("store")
    (d / "exp.toml").write_text(SMALL)
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "run", "exp.toml", "-o", "st", "--no-progress"],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return d / "st"


def _listing(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def _cli(
    args: list[str], cwd: Path, tmpdir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The command in ``cwd``; with ``tmpdir``, its temporary files go there (a testbed
    run's directory included), away from other runs'."""
    env = {**os.environ, "TMPDIR": str(tmpdir)} if tmpdir is not None else None
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# (arguments, the option or key the line must name). "STORE" stands for a real results
# directory; everything else is relative to the working directory.
CLI_CASES = [
    # The core would abort (allocation) or run for minutes: refused by their limits.
    (["simulate", "--duration", "1e10s"], "--duration"),
    (["simulate", "--cbr-interval", "1ns"], "--cbr-interval"),
    (["simulate", "--tcp-flows", "1000000"], "--tcp-flows"),
    (["simulate", "--tcp-flows", "100000"], "--tcp-flows"),
    (["simulate", "--web-users", "10000000"], "--web-users"),
    # Too large for the core's u64: the option, not the core's JSON message.
    (["simulate", "--rtt", "1e30"], "--rtt"),
    (["simulate", "--rtt", DIGITS], "--rtt"),
    (["simulate", "--queue", DIGITS + "B"], "--queue"),
    (["simulate", "--seed", DIGITS], "--seed"),
    (["simulate", "--jitter", "1e30"], "--jitter"),
    (["simulate", "--rtt", "1e999999999"], "--rtt"),
    # Tracebacks before: output paths (checked before the trial runs) and huge values.
    (["simulate", "--plot", "."], "--plot"),
    (["simulate", "--plot", "/proc/x.png"], "--plot"),
    (["simulate", "--plot", "a" * 300 + ".png"], "--plot"),
    (["simulate", "--plot", "DIR"], "--plot"),
    (["simulate", "--plot", "FILE/x.png"], "--plot"),
    (["simulate", "--plot", "x.bmp"], "--plot"),
    (["simulate", "--plot", ""], "--plot"),
    (["demo", "--plot", "."], "--plot"),
    (["simulate", "--aqm", DIGITS], "--aqm"),
    (["simulate", "--aqm", "[" * 5000], "--aqm"),
    (["simulate", "--window", DIGITS], "--window"),
    (["advise", "--down", "1e30", "--up", "1Mbit"], "--down"),
    (["advise", "--plot", "."], "--plot"),
    # A file where a directory is expected; bad output paths.
    (["query", "FILE", "SELECT 1"], "DIR"),
    (["query", "nothing-here", "SELECT 1"], "DIR"),
    (["report", "FILE"], "DIR"),
    (["report", "STORE", "-o", ""], "--output"),
    (["report", "STORE", "-o", "DIR"], "--output"),
    (["compare", "FILE", "STORE"], "SIM_DIR"),
    (["compare", "STORE", "FILE"], "EMU_DIR"),
    (["merge", "newdest", "STORE", "FILE"], "SRC"),
    (["merge", "FILE", "STORE"], "DEST"),
    (["reproduce", "mmsys-fig1", "-o", "FILE"], "--out"),
    (["emulate", "--keep", "FILE"], "--keep"),
    (["emulate", "--keep", "/dev/null"], "--keep"),
    (["emulate", "exp.toml", "-o", "FILE"], "--out"),
    # Experiment files: a device, nesting, limits, names, keys given twice.
    (["run", "/dev/zero"], "/dev/zero: file"),
    (["run", "DIR"], "DIR: file"),
    (["run", "deep.toml"], "deep.toml: TOML"),
    (["run", "huge.toml", "--dry-run"], "experiment.trials"),
    (["run", "bigint.toml"], "bigint.toml: TOML"),
    (["run", "range.toml"], "sweep.rtt"),
    (["run", "exp.toml", "--set", "scenario.duration=1e30"], "scenario.duration"),
    (["run", "exp.toml", "--set", f"scenario.rtt={DIGITS}"], "--set scenario.rtt"),
    (["run", "dotdot.toml"], "experiment.name"),
    (["run", "exp.toml", "--set", 'experiment.name="a/b"'], "experiment.name"),
    (["run", "exp.toml", "--set", 'experiment.name="/tmp/x"'], "experiment.name"),
    (["run", "exp.toml", "--set", 'experiment.name="."'], "experiment.name"),
    (["run", "twice.toml"], "sweep.queue.limit"),
    (["run", "exp.toml", "-o", ""], "--output"),
    (["run", "exp.toml", "-o", "FILE"], "--output"),
    (["run", "exp.toml", "-j", "100000"], "--workers"),
    (["run", "exp.toml", "--batch-seconds", "nan"], "--batch-seconds"),
    (["run", "exp.toml", "--batch-seconds", "inf"], "--batch-seconds"),
    (["run", "exp.toml", "--scheduler", "x"], "--scheduler"),
    (["run", "exp.toml", "--scheduler", ""], "--scheduler"),
    (["run", "exp.toml", "--scheduler", "local:abc"], "--scheduler"),
    (["run", "exp.toml", "--scheduler", "local:1e30"], "--scheduler"),
    (["run", "exp.toml", "--scheduler", "local:-1"], "--scheduler"),
    # Nonsense that was accepted.
    (["simulate", "--queue", "1e19B"], "--queue"),
    (["simulate", "--cbr-size", "65536B"], "--cbr-size"),
    (["simulate", "--app", ""], "--app"),
    (["advise", "--target", "-1"], "--target"),
    (["advise", "--target", "nan"], "--target"),
    (["advise", "--target", "inf"], "--target"),
    (["advise", "--target", "5"], "--target"),
    (["advise", "--trials", "1000000000"], "--trials"),
    (["advise", "--duration", "1e6"], "--duration"),
    # The testbed: every argument before anything is created (no root needed to see it).
    (["emulate", "--down", "1e30", "--up", "1Mbit"], "--down"),
    (["emulate", "--down", "100Gbit", "--up", "1Mbit"], "--down"),
    (["emulate", "--jitter", "1e30"], "--jitter"),
    (["emulate", "--duration", "1e30"], "--duration"),
    (["emulate", "--duration", "1e6"], "--duration"),
    (["emulate", "--downloads", "100000"], "--downloads"),
    (["emulate", "--uploads", "100000"], "--uploads"),
    (["simulate", "--cbr-dscp", "64"], "--cbr-dscp"),
    (["simulate", "--cbr-dscp", "XY"], "--cbr-dscp"),
    (["simulate", "--downloads", "6000", "--uploads", "6000"], "--uploads"),
    (["simulate", "--versus", "cc=htcpx"], "--versus"),
    (["simulate", "--versus", "cc="], "--versus"),
    (["simulate", "--queue", "256kB", "--versus", "dualpi2"], "--versus"),
    # A bad drop-tail limit is told as a limit, not as a queue that is "not JSON".
    (["simulate", "--versus", "0p"], "--versus: '0p': queue limit must be positive"),
    (["simulate", "--versus", "10x"], "--versus: unknown queue unit"),
    (["advise", "--current", "bogus"], "--current"),
    (["advise", "--tolerance", "1"], "--tolerance"),
    (["emulate", "--cbr-interval", "1ns"], "--cbr-interval"),
    (["emulate", "--cbr-interval", "50us"], "--cbr-interval"),
    (["emulate", "--cbr-interval", "1e30"], "--cbr-interval"),
    (["emulate", "--cbr-interval", "1e5"], "--cbr-interval"),
    (["emulate", "--plot", "."], "--plot"),
    # Numbers JSON cannot carry: refused in Python, naming the key within --aqm.
    (["simulate", "--aqm", "red:min_th=5,max_th=15,max_p=nan,w_q=0.002,limit=60"], "max_p"),
    (["simulate", "--aqm", "codel:target=inf"], "--aqm: target"),
    # Flows a workload replaces: a value given for them was silently ignored.
    (["simulate", "--workload", "rrul", "--downloads", "5"], "the workload rrul sets the flows"),
    (["simulate", "--workload", "rrul", "--cbr", "none"], "--cbr: 'none': the workload rrul"),
    (["simulate", "--workload", "rrul", "--app", "quake3"], "--app: 'quake3': the workload"),
    (["simulate", "--workload", "rrul", "--cbr-size", "400B"], "--cbr-size: '400B': the work"),
    (["simulate", "--workload", "rrul", "--cbr-dscp", "EF"], "--cbr-dscp: 'EF': the workload"),
    # A JSON key given twice (json.loads kept the last), as key=value refuses it.
    (["simulate", "--aqm", '{"kind": "red", "kind": "pie"}'], "'kind' given twice"),
    (["simulate", "--aqm", "fq_codel:flows=" + "9" * 40], "--aqm: flows"),
    # Issue 27: every discipline's limit bounded (32 bits, as Linux's qdiscs), every
    # core check at its key.
    (["simulate", "--aqm", "codel:limit=99999999999"], "--aqm: limit"),
    (["simulate", "--aqm", "pie:limit=4294967296"], "--aqm: limit"),
    (["simulate", "--aqm", "fq_codel:limit=99999999999"], "--aqm: limit"),
    (["simulate", "--aqm", "cake:memory_limit=99999999999"], "--aqm: memory_limit"),
    (["simulate", "--aqm", "codel:target=200ms"], "--aqm: target"),
    (["simulate", "--aqm", "dualpi2:k=0"], "--aqm: k"),
    # The keys the core lists are named as the user writes them (target, not target_ns).
    (
        ["simulate", "--aqm", "fq_codel:tgt=5ms"],
        "--aqm: tgt: unknown field `tgt`, expected one of `flows`, `quantum`, `limit`, `target`,",
    ),
    (["simulate", "--aqm", "codel:target=" + DIGITS], "--aqm: target"),
    (["run", "nanaqm.toml", "--dry-run"], "nanaqm.toml: scenario.queue.max_p"),
    (["run", "codellimit.toml", "--dry-run"], "codellimit.toml: scenario.queue.limit"),
    # Nonsense accepted before.
    (["advise", "--duration", "1ns"], "--duration"),
    (["advise", "--link", ""], "--link"),
    (["query", "STORE", ""], "SQL"),
    (["query", "STORE", "COPY (SELECT 1) TO 'x.csv'"], "SQL"),
    # DuckDB's hint kept on the line; a trace table the run did not keep said so.
    (
        ["query", "STORE", "SELECT * FROM summry"],
        'SQL: Catalog Error: Table with name summry does not exist! Did you mean "summary"?',
    ),
    (
        ["query", "STORE", "SELECT * FROM cwnd"],
        "SQL: no cwnd table: this directory's runs kept no cwnd traces",
    ),
    (["compare", "STORE", "STORE"], "EMU_DIR"),
    (["report", "STORE", "-o", "r.pdf"], "--output"),
    (["run", "emptysweep.toml", "--dry-run"], "emptysweep.toml: sweep"),
    (["run", "emptysweep2.toml", "--dry-run"], "emptysweep2.toml: sweep[1]"),
    (["run", "axis.toml", "--dry-run"], "axis.toml: sweep.queue.limit.packet_of"),
    # (run --scheduler with no scheduler there: tests/test_runner.py, 5 s of waiting.)
]
if "htcp" not in emu.available_congestion_controls():  # the kernel's, named by --cc
    CLI_CASES.append((["emulate", "--cc", "htcp"], "--cc"))


@pytest.mark.parametrize(("args", "names"), CLI_CASES, ids=[" ".join(a)[:60] for a, _ in CLI_CASES])
def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(args, names, tmp_path, store):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "FILE").write_text("not a directory\n")
    (cwd / "DIR").mkdir()
    for name, text in FILES.items():
        (cwd / name).write_text(text)
    args = [str(store) if a == "STORE" else a for a in args]
    before = _listing(cwd)
    store_before = _listing(store)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    t0 = time.monotonic()
    p = _cli(args, cwd, tmp)
    assert time.monotonic() - t0 < 30, "refused at once, not after a run"
    lines = p.stderr.splitlines()
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("collateral: error: "), lines[0]
    head = lines[0].removeprefix("collateral: error: ")
    assert head.startswith(names) or f": {names}" in head.split(" = ")[0], head
    assert "Traceback" not in p.stderr and "set_int_max_str_digits" not in p.stderr
    assert len(lines[0]) < 400, "the value is not echoed back whole"
    assert p.stdout == ""
    assert _listing(cwd) == before, "nothing written in the working directory"
    assert _listing(store) == store_before, "the results directory read is untouched"
    assert not any(tmp.iterdir()), "no temporary directory left (a testbed run's)"


def test_the_core_limits_bound_the_units(tmp_path):
    """The bounds of units.py fit the core's (so a value units accepts never meets the
    core's JSON message), and the CLI's figure suffixes are the ones plots.save writes."""
    from collateral import units
    from collateral.cli import paths as cli
    from collateral.plot import style as plots

    lim = _native.limits()
    assert lim["max_time_ns"] >= units.MAX_DURATION_NS
    assert lim["max_rate_bps"] >= units.MAX_RATE_BPS
    assert lim["max_queue_limit"] >= units.MAX_QUEUE_BYTES
    assert lim["max_queue_limit"] >= units.MAX_QUEUE_PACKETS
    assert (".png", *plots.EXTRA_FORMATS) == cli.FIGURE_SUFFIXES
    # At the limits themselves a scenario is accepted by Python and by the core.
    sc = Scenario(
        down={"rate": "10Tbit", "queue": {"limit": "1GB"}},
        up={"rate": "10Tbit", "queue": {"limit": "1000000p"}},
        duration="1000000s",
        warmup="10s",
        rtt="1000000s",
        bin="1000s",
    )
    _native.validate_scenario(sc.to_native_json())


def test_a_plot_suffix_matplotlib_writes_is_written(tmp_path):
    p = _cli(
        ["simulate", "--duration", "3s", "--warmup", "1s", "--plot", str(tmp_path / "f.pdf")],
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    assert not (tmp_path / "f.png").exists(), "only the file asked for"


def test_merge_checks_every_source_before_merging_any(tmp_path, store):
    dest = tmp_path / "dest"
    p = _cli(["merge", str(dest), str(store), str(tmp_path / "missing")], tmp_path)
    assert p.returncode == 2 and "SRC" in p.stderr, p.stderr
    assert not dest.exists(), "nothing merged from the first source"
    p = _cli(["merge", str(dest), str(store)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "merged 1 trials" in p.stdout


def test_dry_run_counts_a_large_experiment_without_holding_it(tmp_path):
    """10^6 trials (1000 points x 1000) are counted one at a time: the dry run's peak
    memory stays far below what a list of them would take (about 250 MB)."""
    f = tmp_path / "big.toml"
    f.write_text(
        '[experiment]\ntrials = 1000\n[scenario]\nlink = "adsl1"\n'
        '[sweep]\nrtt = { from = "1ms", to = "1000ms", step = "1ms" }\n'
    )
    code = (
        "import resource, sys\n"
        "from collateral.cli import main\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"rc = main(['run', {str(f)!r}, '-o', {str(tmp_path / 'out')!r}, '--dry-run'])\n"
        "print(rc, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "1,000 points x 1000 trials = 1,000,000 trials" in p.stdout
    rc, grown_kb = p.stdout.split()[-2:]
    assert rc == "0" and int(grown_kb) < 150_000, p.stdout
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------
# The Python API: a TypeError or ValueError naming the parameter, before anything runs


@pytest.fixture(scope="module")
def result() -> collateral.Result:
    return collateral.simulate(duration="3s", warmup="1s")


def test_simulate_takes_a_scenario_not_a_preset_name():
    with pytest.raises(TypeError, match=r"scenario: expected a Scenario.*simulate\(link='adsl1'\)"):
        collateral.simulate("adsl1")


def test_simulate_takes_an_aqm_as_a_dict_and_names_aqm_otherwise():
    r = collateral.simulate(
        aqm={"kind": "codel"}, duration="2s", warmup="1s", tcp_flows=0, cbr="down"
    )
    assert r.scenario.down.queue.kind == "codel"
    for bad in (5, ["codel"], {"kind": "codel", "target_ns": 0}, DIGITS, "{" * 5000):
        with pytest.raises(SpecError, match=r"^aqm: ") as err:
            collateral.simulate(aqm=bad)
        assert err.value.param == "aqm"


def test_simulate_many_names_threads():
    with pytest.raises(ValueError, match="threads"):
        collateral.simulate_many([], threads=-1)
    with pytest.raises(TypeError, match="threads"):
        collateral.simulate_many([], threads=1.5)
    with pytest.raises(TypeError, match=r"scenarios\[0\]"):
        collateral.simulate_many(["adsl1"])
    sc = build_scenario(duration="2s", warmup="1s")
    a, b = collateral.simulate_many([sc, sc], threads=2)
    assert a.to_json() == b.to_json() == collateral.simulate(sc).to_json()


def test_the_core_refuses_what_its_python_side_would():
    with pytest.raises(ValueError, match="threads"):
        _native.simulate_many([], -1)
    with pytest.raises(ValueError, match="rate_bps"):
        _native.validate_queue(json.dumps({"kind": "codel"}), 0)


def test_series_name_flow_direction_and_step(result):
    with pytest.raises(ValueError, match=r"flow: 99 .*flows with a window: 0"):
        result.cwnd_series(flow=99)
    with pytest.raises(ValueError, match=r"direction: 'sideways' .*down, up"):
        result.queue_series("sideways")
    with pytest.raises(ValueError, match="direction"):
        result.queue_series(7)
    with pytest.raises(ValueError, match=r"step: '1ns' .*above the limit"):
        result.cwnd_series(step="1ns")
    with pytest.raises(ValueError, match="step"):
        result.queue_series(step=float("nan"))
    with pytest.raises(ValueError, match="t1"):
        result.cwnd_series(t1=float("inf"))
    t, cwnd, _ = result.cwnd_series(step="1ms", t0=1.0, t1=2.0)
    assert len(t) == len(cwnd) == 1001


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: Scenario(link="adsl1", bin="1us", duration="60s"), "bin"),
        (lambda: WebSpec(users=10**6), "users"),
        (lambda: TcpSpec(start="2s", stop="1s"), "stop"),
        (lambda: CbrSpec(start="2s", stop="1s"), "stop"),
        (lambda: Scenario(link="adsl1", cbr=[CbrSpec()] * 10**6), "cbr"),
        (lambda: Scenario(link="adsl1", tcp=[{}] * 20_000), "tcp"),
        (lambda: Scenario(link="adsl1", web=[{"users": 20_000, "parallel": 10}]), "users"),
        (lambda: Scenario(link="adsl1", cbr=[{"interval": "1ns"}]), r"cbr\[0\]\.interval"),
        (lambda: Scenario(link="adsl1", rtt="1e30"), "rtt"),
        (lambda: Scenario(link="adsl1", duration="4s"), "warmup"),
        (lambda: CbrSpec(size="65536B"), "size"),
        (lambda: TcpSpec(mss=10**6), "mss"),
        (lambda: TcpSpec(initial_cwnd=10**9), "initial_cwnd"),
        (lambda: Scenario(link="adsl1", tcp=[{"rwnd_segments": 10**6}]), r"tcp\[0\]\.rwnd"),
        (lambda: build_scenario(cbr_interval="1ns"), "cbr_interval"),
        (lambda: build_scenario(rtt=DIGITS), "rtt"),
        (lambda: build_scenario(tcp_flows=10**6), "tcp_flows"),
        (lambda: build_scenario(web_users=10**7), "web_users"),
        (lambda: build_scenario(app=""), "app"),
        (lambda: build_scenario(queue="1e19B"), "queue"),
        (lambda: build_scenario(seed="x"), "seed"),
        (lambda: build_scenario(delayed_ack="no"), "delayed_ack"),
        (lambda: build_scenario(rtt=float("nan")), "rtt"),
        (lambda: build_scenario(duration=10**5000), "duration"),
    ],
)
def test_python_api_errors_name_the_parameter(build, name):
    t0 = time.monotonic()
    with pytest.raises((ValueError, TypeError), match=name) as err:
        sc = build()
        if isinstance(sc, Scenario):  # the core's own check, as the runner would meet it
            _native.validate_scenario(sc.to_native_json())
    assert time.monotonic() - t0 < 10, "refused by its size, not after building it"
    assert "set_int_max_str_digits" not in str(err.value)


def test_a_scenario_the_core_refuses_is_refused_when_built():
    """Whatever passes Python's validation, the core accepts: a scenario is checked by
    the core (``validate_scenario``) when it is built, not when it runs."""
    with pytest.raises(ValueError, match=r"cbr\[0\]\.interval: the trial would hold"):
        Scenario(link="adsl1", duration="1000000s", cbr=[{"interval": "1ms"}])


def test_advise_names_its_parameters():
    from collateral.advise import advise

    cases = [
        ({"target": 5.0}, "target"),
        ({"target": float("nan")}, "target"),
        ({"app": "fps", "target": 1.5}, "target"),
        ({"trials": 10**9}, "trials"),
        ({"tcp_flows": 0}, "tcp_flows"),
        ({"link": None, "down": "1e30", "up": "1Mbit"}, "down"),
        ({"ccs": "cubic"}, "ccs"),
        ({"ccs": ("vegas",)}, "ccs"),
        ({"duration": "2h"}, "duration"),
        ({"threads": -1}, "threads"),
    ]
    for kwargs, param in cases:
        with pytest.raises(SpecError) as err:
            advise(**kwargs)
        assert err.value.param == param, (kwargs, err.value)


def test_testbed_limits_name_the_field():
    base = dict(down={"rate": "10Mbit"}, up={"rate": "10Mbit"}, duration="5s", warmup="1s")
    cases = [
        (Scenario(**base, tcp=[{}] * 65), "tcp"),
        (Scenario(**base, cbr=[{"interval": "50us"}]), r"cbr\[0\]\.interval"),
        (Scenario(**base, cbr=[{"jitter": "10s"}]), r"cbr\[0\]\.jitter"),
        (Scenario(**{**base, "down": {"rate": "20Gbit"}}), r"down\.rate"),
        (Scenario(**base, rtt="11s"), "rtt"),
    ]
    for sc, path in cases:
        with pytest.raises(emu.TestbedLimitError, match=f"^{path}: ") as err:
            emu.check_testbed(sc)
        assert isinstance(err.value, ValueError) and isinstance(err.value, emu.EmulationError)
    emu.check_testbed(Scenario(**base, tcp=[{}], cbr=[{}]))


def test_other_entry_points_name_their_arguments(tmp_path):
    from collateral.experiment import Experiment, ExperimentError, load_experiment
    from collateral.plot import check_figure_path
    from collateral.report import ReportError, write_report
    from collateral.reproduce import reproduce

    with pytest.raises(ValueError, match="fig_id"):
        reproduce("no-such-figure")
    with pytest.raises(KeyError):  # as before
        reproduce("no-such-figure")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="out"):
        reproduce("mmsys-fig1", out=tmp_path / "f")
    with pytest.raises(ReportError, match="results"):
        write_report([], tmp_path / "r.html")
    with pytest.raises(ReportError, match="output"):
        write_report([tmp_path], tmp_path)
    with pytest.raises(ValueError, match="path"):
        check_figure_path(".")
    with pytest.raises(ValueError, match="path"):
        check_figure_path("x.bmp")
    with pytest.raises(ExperimentError, match=r"experiment\.name"):
        Experiment.from_dict({"experiment": {"name": ".."}, "scenario": {"link": "adsl1"}})
    with pytest.raises(ExperimentError, match="experiment"):
        Experiment.from_dict(5)  # type: ignore[arg-type]
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ExperimentError, match="not a regular file"):
        load_experiment(fifo)  # never opened: a pipe would block forever
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(20_000_000)
    with pytest.raises(ExperimentError, match="at most"):
        load_experiment(big)
    with pytest.raises(ExperimentError, match="nested"):
        Experiment.from_dict({"scenario": {"link": "adsl1", "x": _deep(200)}})
    (tmp_path / "f.toml").write_text(SMALL)
    with pytest.raises(ExperimentError, match="nested"):
        load_experiment(tmp_path / "f.toml", [("scenario.x", _deep(200))])


def test_native_integer_arguments_are_named_not_overflow_errors():
    for bad in (-1, 0, 2**70):
        with pytest.raises(ValueError, match=r"^rate_bps: "):
            _native.validate_queue('{"kind": "codel"}', bad)
    with pytest.raises(TypeError, match=r"^rate_bps: expected a whole number"):
        _native.validate_queue('{"kind": "codel"}', "1Mbit")
    with pytest.raises(ValueError, match=r"^threads: "):
        _native.simulate_many([], 2**70)
    assert _native.simulate_many([]) == []


def test_merge_refuses_another_schema_and_warnings_are_one_line_once(tmp_path, store):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(store, old)
    meta = json.loads((old / "store.json").read_text())
    (old / "store.json").write_text(json.dumps({**meta, "schema": 1}))
    before = _listing(old)
    p = _cli(["merge", "merged", str(store), str(old)], tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("collateral: error: SRC: ") and "schema version 1" in p.stderr
    assert not (tmp_path / "merged").exists() and _listing(old) == before
    # Merging into the old store from the API: refused too, nothing added.
    from collateral.store import Store, StoreError

    with pytest.raises(StoreError, match="schema"):
        Store(old).merge([store])
    # A query of the old store warns in one line, once, and still answers.
    p = _cli(["query", str(old), "SELECT count(*) AS n FROM summary", "--format", "csv"], tmp_path)
    assert p.returncode == 0 and p.stdout.split() == ["n", "1"], p
    from collateral.schema import VERSION

    assert p.stderr.splitlines() == [
        f"collateral: warning: {old}: results of schema version 1, this collateral reads"
        f" version {VERSION}: column names and types may differ (collateral schema prints the"
        " current one)"
    ], p.stderr


def _deep(n: int) -> list:
    v: list = []
    for _ in range(n):
        v = [v]
    return v


# ---------------------------------------------------------------------------------------
# The testbed's temporary directories: registered before they exist, removed by the next
# run when their run is gone, and only those


def test_a_dead_runs_registered_tmpdir_is_removed_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(emu_registry, "REGISTRY", tmp_path / "registry")
    monkeypatch.setattr(emu_registry.tempfile, "gettempdir", lambda: str(tmp_path))
    (tmp_path / "registry").mkdir()
    dead = 4_194_301  # above the default pid_max: not running
    registered = tmp_path / f"{emu.TMP_PREFIX}{dead}-abc"
    registered.mkdir()
    (registered / "router.csv").write_text("x")
    unregistered = tmp_path / f"{emu.TMP_PREFIX}someone-else"
    unregistered.mkdir()
    foreign = tmp_path / "not-ours"  # named in a record, but not as the tool names them
    foreign.mkdir()
    (tmp_path / "registry" / f"{dead}.json").write_text(
        json.dumps({"namespaces": [], "tmpdir": str(registered)})
    )
    (tmp_path / "registry" / f"{dead + 1}.json").write_text(
        json.dumps({"namespaces": [], "tmpdir": str(foreign)})
    )
    alive = tmp_path / f"{emu.TMP_PREFIX}alive"
    alive.mkdir()
    (tmp_path / "registry" / "1.json").write_text(  # pid 1 is running: its run is alive
        json.dumps({"namespaces": [], "tmpdir": str(alive)})
    )
    emu.cleanup_leftovers()
    assert not registered.exists()
    assert unregistered.exists() and foreign.exists() and alive.exists()
    assert not (tmp_path / "registry" / f"{dead}.json").exists()
    assert (tmp_path / "registry" / "1.json").exists()


def test_a_runs_tmpdir_is_registered_before_it_is_created(tmp_path, monkeypatch):
    monkeypatch.setattr(emu_registry, "REGISTRY", tmp_path / "registry")
    monkeypatch.setattr(emu_registry.tempfile, "gettempdir", lambda: str(tmp_path))
    seen = []
    real = emu_registry.register

    def spy(run):
        if run.get("tmpdir"):
            seen.append((run["tmpdir"], Path(run["tmpdir"]).exists()))
        return real(run)

    monkeypatch.setattr(emu_registry, "register", spy)
    wd, record = emu_registry.new_tmpdir()
    assert seen == [(str(wd), False)], "recorded while it does not exist yet"
    assert wd.is_dir() and json.loads(record.read_text())["tmpdir"] == str(wd)
    # A Testbed's own registration adds to the record, and keeps the directory in it.
    emu_registry.register({"namespaces": ["col1l"]})
    rec = json.loads(record.read_text())
    assert rec == {"namespaces": ["col1l"], "tmpdir": str(wd)}


#: A router command line complete but for the argument under test.
ROUTER = [
    "router",
    "--left",
    "a",
    "--right",
    "b",
    "--scenario",
    "s",
    "--t0",
    "1",
    "--until-ns",
    "1",
]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ([*ROUTER, "--cpu", "x"], "--cpu"),
        ([*ROUTER, "--spin-ns", "-5"], "--spin-ns"),
        (
            ["flood", "--src", "a", "--dst", "b", "--size", "200", "--rate-bps", "fast"],
            "--rate-bps",
        ),
        (["router", "--left"], "--left"),
        (["bogus"], "bogus"),
    ],
)
def test_emulator_command_line_errors_exit_2_naming_the_argument(
    args: list[str], named: str
) -> None:
    """The testbed binary's own arguments: a bad one is a usage error (exit 2), one line
    naming it; nothing starts."""
    p = subprocess.run([emu.find_emulator(), *args], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], p.stderr
