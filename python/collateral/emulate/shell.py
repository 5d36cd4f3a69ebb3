"""A shell through the emulated link, as Mahimahi's shells give one: the user's own
command runs in the home namespace (``right``), its packets cross the router, which runs
the scenario's link and queue (the simulator's code, in real time), to the Internet side
(``left``), where ``servers`` run. Everything is torn down when the command ends, on an
error, and on SIGTERM/SIGHUP; after a SIGKILL, by the run's reaper."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .checks import check_ready
from .endpoints import START_MARGIN_S, find_emulator
from .errors import EmulationError
from .namespaces import LEFT_A, RIGHT_C
from .registry import cleanup_leftovers, new_tmpdir
from .testbed import Testbed, signals_raise

if TYPE_CHECKING:
    from ..spec import Scenario

#: How long the router keeps forwarding: a shell has no duration of its own.
SHELL_UNTIL_NS = 7 * 24 * 3600 * 10**9

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
    sc_json = wd / "scenario.json"
    sc_json.write_text(scenario.to_native_json())
    tb.build(wd)
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + int(START_MARGIN_S * 1e9)
    router = tb.start_router(emu, sc_json, t0, SHELL_UNTIL_NS)
    procs = [tb.start("left", f"server{i}", "sh", "-c", s) for i, s in enumerate(servers)]
    wait = (t0 - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9
    time.sleep(max(SERVER_START_S, wait))
    for p in (router, *procs):  # one that stopped (a bad argument, a port in use) says why
        rc = p.popen.poll()
        if rc is not None:
            err = p.stderr.read_text(errors="replace").strip().splitlines()
            why = err[-1] if err else f"exit {rc}"
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
            return child.wait()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    finally:
        signal.signal(signal.SIGINT, old_int)


def _describe(name: str, servers: Sequence[str]) -> str:
    if name.startswith("server"):
        return repr(servers[int(name[len("server") :])])
    return "the emulated link"
