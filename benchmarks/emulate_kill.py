"""SIGKILL `collateral emulate` at random moments and time how long what it made lasts.

Issue 27's criterion: a SIGKILLed run leaves nothing — no process (the emulator's
router and endpoints, an `ip` command, the run's reaper), network namespace, veth in the
root namespace, registry entry or temporary directory of that run — within 3 s, without
a later run to clean up. Each kill comes 0.05–4 s after the start, half of them in the
first 0.8 s (before, during and just after the namespaces are made), half while the run
runs; one line a kill says what the run had made by then and how long until all of it
was gone, then a summary. Needs root.

    sudo .venv/bin/python benchmarks/emulate_kill.py [--kills 16] [--seed 1]
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CMD = ["emulate", "--link", "adsl1", "--duration", "5s", "--warmup", "1s"]
#: How long what a killed run made may last.
LIMIT_S = 3.0
#: Within about this many seconds of its start, a run has built its testbed (its phases
#: at each kill are printed: "starting", "recorded", "building", "running").
EARLY_S = 0.8


def leftovers_of(pid: int) -> dict[str, list[str]]:
    """What is left of the run of process ``pid``, each kind as the system shows it:
    processes whose command line names the run (its namespaces ``col<pid>l/r/h``, veths
    ``c<pid>l0`` …, temporary directory, registry record: the emulator, `ip`, the
    reaper) or that run in its namespaces, the namespaces, veths in the root namespace,
    registry entries, temporary directories."""
    names = rf"col{pid}[lrh]|c{pid}[lh][01]|collateral-emu-{pid}-|/run/collateral/{pid}\."
    ps = subprocess.run(["pgrep", "-a", "-f", names], capture_output=True, text=True)
    procs = ps.stdout.splitlines()
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    ns = [ln.split()[0] for ln in out.splitlines() if ln.split()[0] in _ns_names(pid)]
    for n in ns:
        pids = subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True)
        procs += [f"{p} (in {n})" for p in pids.stdout.split()]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True)
    ifs = {f"c{pid}{s}" for s in ("l0", "l1", "h0", "h1")}
    veths = [f for ln in links.stdout.splitlines() if (f := _ifname(ln)) in ifs]
    return {
        "processes": procs,
        "namespaces": ns,
        "veths": veths,
        "registry": glob.glob(f"/run/collateral/{pid}.*"),
        "tmpdirs": glob.glob(os.path.join(tempfile.gettempdir(), f"collateral-emu-{pid}-*")),
    }


def _ns_names(pid: int) -> set[str]:
    return {f"col{pid}{s}" for s in "lrh"}


def _ifname(line: str) -> str:
    """``3: c123l0@if2: <...`` -> ``c123l0``."""
    parts = line.split(":")
    return parts[1].strip().split("@")[0] if len(parts) > 2 else ""


def made_by(pid: int) -> str:
    """What the run has made at this instant, read without starting a process (so the
    kill follows it within a millisecond): its phase, namespaces and emulator processes."""
    ns = [n for n in _ns_names(pid) if os.path.exists(f"/run/netns/{n}")]
    emu, tag = 0, f"collateral-emu-{pid}-".encode()  # in each one's file arguments
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if cmd.split(b"\0")[0].endswith(b"/collateral-emu") and tag in cmd:
            emu += 1
    recorded = os.path.exists(f"/run/collateral/{pid}.json")
    phase = "running" if emu else "building" if ns else "recorded" if recorded else "starting"
    return f"{phase:8} {len(ns)} ns, {emu} emu procs"


def kill_once(delay: float) -> tuple[str, float | None, dict[str, list[str]], str]:
    """Starts a run, SIGKILLs it ``delay`` s later; returns (what it had made, seconds
    until nothing was left or None, what was left at the limit, the run's stderr)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(
            [sys.executable, "-m", "collateral", *CMD], stdout=subprocess.DEVNULL, stderr=err
        )
        time.sleep(delay)
        state = made_by(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        t0 = time.monotonic()
        p.wait()
        gone, left = None, {}
        while time.monotonic() - t0 < LIMIT_S:
            left = {k: v for k, v in leftovers_of(p.pid).items() if v}
            if not left:
                gone = time.monotonic() - t0
                break
            time.sleep(0.02)
        if gone is None:
            left = {k: v for k, v in leftovers_of(p.pid).items() if v}
        time.sleep(0.2)  # the reaper's last words, if any
        err.seek(0)
        return state, gone, left, err.read().decode(errors="replace").strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("emulate_kill: needs root (the testbed creates network namespaces)")
        return 2
    rng = random.Random(a.seed)
    # Half the kills in the first EARLY_S (the CLI starting, the record written, the
    # namespaces and veths being made, the processes started), half while the run runs.
    half = a.kills // 2
    delays = [rng.uniform(0.05, EARLY_S) for _ in range(half)]
    delays += [rng.uniform(EARLY_S, 4.0) for _ in range(a.kills - half)]
    rng.shuffle(delays)
    times: list[float] = []
    failed = 0
    for n, delay in enumerate(delays, 1):
        state, gone, left, err = kill_once(delay)
        if gone is not None:
            times.append(gone)
            verdict = f"all gone in {gone:.2f} s"
        else:
            failed += 1
            verdict = f"LEFT after {LIMIT_S:.0f} s: {left}"
        print(f"kill {n:2} at {delay:4.2f} s ({state}): {verdict}", flush=True)
        for line in err.splitlines():
            print(f"         stderr: {line}")
    print(f"kills: {a.kills}; everything gone within {LIMIT_S:.0f} s: {len(times)}/{a.kills}")
    if times:
        med = statistics.median(times)
        print(
            f"time until gone: min {min(times):.2f} s, median {med:.2f} s, max {max(times):.2f} s"
        )
    print("OK" if not failed else "FAILED")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
