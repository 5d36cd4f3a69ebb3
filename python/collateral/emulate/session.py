"""A shell through the emulated link, as Mahimahi's shells give one: the user's own
command runs in the home namespace (``right``), its packets cross the router, which runs
the scenario's link and queue (the simulator's code, in real time), to the Internet side
(``left``), where ``servers`` run. Everything is torn down when the command ends, on an
error, and on SIGTERM/SIGHUP; after a SIGKILL, by the run's reaper.

When the command ends, one line on stderr says what the link carried and whether the
router kept real time (its release error, as an emulated trial reports it): a
measurement taken through a router that ran late holds the router's lateness too."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .checks import check_ready
from .endpoints import START_MARGIN_S, find_emulator
from .errors import EmulationError
from .namespaces import LEFT_A, RIGHT_C
from .registry import cleanup_leftovers, new_tmpdir
from .testbed import Proc, Testbed, signals_raise
from .timing import trial_line

if TYPE_CHECKING:
    from ..spec import Scenario

#: How long the router keeps forwarding: a shell has no duration of its own, so the
#: router's scenario lasts this long (one bin, no warm-up) and the link's clocks (a
#: satellite's handovers, outages) run for the whole session.
SHELL_UNTIL_NS = 7 * 24 * 3600 * 10**9

#: Seconds the router gets to write its report once the command has ended.
REPORT_WAIT_S = 5.0

#: Seconds the servers get to start listening before the command runs (beside the
#: router's own start margin, which they share).
SERVER_START_S = 0.3


def shell(
    scenario: Scenario,
    command: Sequence[str],
    servers: Sequence[str] = (),
) -> int:
    """Runs ``command`` (argv) in the home namespace behind the scenario's link and
    queue, with each of ``servers`` (a shell command line) running on the Internet side
    meanwhile; returns the command's exit status. The command finds the Internet side's
    address in ``$COLLATERAL_SERVER`` (and its own in ``$COLLATERAL_CLIENT``). Raises
    :class:`EmulationError` for what the user can fix, before anything is created."""
    if not command:
        raise EmulationError("shell: no command to run")
    if shutil.which(command[0]) is None:
        raise EmulationError(f"shell: {command[0]}: command not found")
    if scenario.tcp or scenario.cbr or scenario.web:
        raise EmulationError("shell: the link carries only the command's traffic; no flows")
    check_ready(scenario)
    emu = find_emulator()
    cleanup_leftovers()
    wd, record = new_tmpdir()
    tb = Testbed(wd)
    tb.keep_record = True
    try:
        with signals_raise():
            old_hup = signal.signal(signal.SIGHUP, signal.getsignal(signal.SIGTERM))
            try:
                return _run(tb, wd, emu, scenario, command, servers)
            finally:
                signal.signal(signal.SIGHUP, old_hup)
    finally:
        tb.teardown()
        shutil.rmtree(wd, ignore_errors=True)
        record.unlink(missing_ok=True)


def _run(
    tb: Testbed,
    wd: Path,
    emu: str,
    scenario: Scenario,
    command: Sequence[str],
    servers: Sequence[str],
) -> int:
    session = scenario.model_copy(
        update={"duration": SHELL_UNTIL_NS, "bin": SHELL_UNTIL_NS, "warmup": 0}
    )
    sc_json = wd / "scenario.json"
    sc_json.write_text(session.to_native_json())
    tb.build(wd)
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + int(START_MARGIN_S * 1e9)
    report = wd / "router.json"
    router = tb.start_router(emu, sc_json, t0, SHELL_UNTIL_NS + 10**9, report=report)
    procs = [tb.start("left", f"server{i}", "sh", "-c", s) for i, s in enumerate(servers)]
    wait = (t0 - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9
    time.sleep(max(SERVER_START_S, wait))
    for p in (router, *procs):  # one that stopped (a bad argument, a port in use) says why
        rc = p.popen.poll()
        if rc is not None:
            err = p.stderr.read_text(errors="replace").strip().splitlines()
            # The cause is often the line before the last ("unable to start listener",
            # then "iperf3: exiting"): both.
            why = "; ".join(ln.strip() for ln in err[-2:] if ln.strip()) or f"exit {rc}"
            raise EmulationError(f"shell: {p.name} ({_describe(p.name, servers)}) ended: {why}")
    env = {**os.environ, "COLLATERAL_SERVER": LEFT_A, "COLLATERAL_CLIENT": RIGHT_C}
    argv = ["ip", "netns", "exec", tb.ns["right"], *command]
    # Ctrl-C is the command's (an interactive shell's): the terminal sends it to the
    # command too; SIGTERM and SIGHUP still end the run and tear it down.
    # (A handler, not SIG_IGN, which the command would inherit.)
    old_int = signal.signal(signal.SIGINT, lambda *_: None)
    try:
        child = subprocess.Popen(argv, env=env)
        try:
            rc = child.wait()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    finally:
        signal.signal(signal.SIGINT, old_int)
    line = session_line(session, router, report)
    print(f"collateral: {line}", file=sys.stderr, flush=True)
    # A command a signal ended (Ctrl-C: -2) as a shell reports it: 128 + the signal.
    return 128 - rc if rc < 0 else rc


def session_line(session: Scenario, router: Proc, report: Path) -> str:
    """Stops the router, which then writes its report, and says in one line what the
    link carried each way and whether the router kept real time (the core measures the
    report as it does an emulated trial's: the same ``late`` flag and release error)."""
    from .. import _native

    router.popen.terminate()
    try:
        router.popen.wait(timeout=REPORT_WAIT_S)
    except subprocess.TimeoutExpired:
        return f"the router wrote no report in {REPORT_WAIT_S:.0f} s: its timing is unknown"
    if not report.exists():
        err = router.stderr.read_text(errors="replace").strip().splitlines()
        return f"the router wrote no report ({err[-1] if err else 'no error given'})"
    try:
        raw = _native.measure_testbed(session.to_native_json(), "[]", [], report.read_text())
    except (OSError, ValueError) as e:  # a report cut short (a full disk): say so, go on
        return f"the router's report could not be read ({e}): its timing is unknown"
    summary = raw["summary"]
    q = summary["queues"]
    carried = "; ".join(
        f"{d} {q[d]['delivered']} packets, {q[d]['drops']} dropped by the queue"
        + (f", {q[d]['ce_marks']} CE-marked" if q[d]["ce_marks"] else "")
        for d in ("down", "up")
    )
    return f"the link carried {carried}. " + (trial_line(summary) or "no timing reported")


def _describe(name: str, servers: Sequence[str]) -> str:
    if name.startswith("server"):
        return repr(servers[int(name[len("server") :])])
    return "the emulated link"
