"""The testbed's network namespaces and addresses: their names (``col<pid>`` +
``l``/``r``/``h``), each flow's sender and receiver host, and the ``ip netns`` commands
that list and remove namespaces (with the processes inside)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time

from ..spec import Scenario
from .errors import EmulationError

PREFIX = "col"
NS_RE = re.compile(rf"^{PREFIX}(\d+)[lrh]$")
LEFT_A, LEFT_B, RIGHT_C, RIGHT_D = "198.18.0.1", "198.18.0.3", "198.18.0.2", "198.18.0.4"


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"{' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def _kill_ns_processes(ns: str) -> None:
    pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
    for p in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(p), signal.SIGKILL)
    # SIGKILL is delivered asynchronously: wait (at most 2 s) until each process is gone
    # (or a zombie, whose command line is empty), so that nothing is seen running after.
    deadline = time.monotonic() + 2.0
    for p in pids:
        while time.monotonic() < deadline and _alive(p):
            time.sleep(0.01)


def _alive(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return bool(f.read(1))
    except OSError:
        return False


def delete_ns(ns: str) -> None:
    _kill_ns_processes(ns)
    sh("ip", "netns", "del", ns, check=False)


def testbed_namespaces() -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def hosts(kind: str, direction: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(namespace, address) of a flow's sender and receiver: TCP between A and C, CBR
    between B and D; downstream from the left (Internet) side to the right (home)."""
    left, right = (LEFT_A, RIGHT_C) if kind == "tcp" else (LEFT_B, RIGHT_D)
    if direction == "down":
        return ("left", left), ("right", right)
    return ("right", right), ("left", left)


def ecn_namespaces(scenario: Scenario) -> list[str]:
    """The host namespaces (``left``, ``right``) whose kernel must initiate ECN: those
    that send a TCP flow with ``ecn = "classic"``. Receivers need nothing: a fresh
    namespace's ``net.ipv4.tcp_ecn`` is 2, which accepts ECN when a peer asks for it."""
    out = []
    for t in scenario.tcp:
        (ns, _), _ = hosts("tcp", t.direction)
        if t.ecn == "classic" and ns not in out:
            out.append(ns)
    return out
