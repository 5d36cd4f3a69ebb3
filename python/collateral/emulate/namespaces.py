"""The testbed's network namespaces and addresses: their names (``col<pid>`` +
``l``/``r``/``h``), each flow's sender and receiver host, and the ``ip netns`` commands
that list and remove namespaces (with the processes inside, found by the namespace's
inode: a namespace removed by name and kept alive by a process is found too)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from .errors import EmulationError

if TYPE_CHECKING:  # the reaper imports this module: no pydantic at run time
    from ..spec import Scenario

PREFIX = "col"
NS_RE = re.compile(rf"^{PREFIX}(\d+)[lrh]$")
LEFT_A, LEFT_B, RIGHT_C, RIGHT_D = "198.18.0.1", "198.18.0.3", "198.18.0.2", "198.18.0.4"


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"{' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


#: Where ``ip netns`` mounts the namespaces it names.
NETNS_DIR = "/run/netns"


@contextlib.contextmanager
def held(names: Iterable[str]) -> Iterator[list[int]]:
    """The inodes of the network namespaces ``names`` that exist (what
    ``/proc/<pid>/ns/net`` of a process in one links to), each held open meanwhile: a
    namespace removed by name lives on while a process (or this) holds it, and its inode,
    which a new namespace may take once it is freed, stays its own."""
    fds: list[int] = []
    try:
        nsfs = os.stat("/proc/self/ns/net").st_dev
        for ns in names:
            with contextlib.suppress(OSError):
                fds.append(os.open(f"{NETNS_DIR}/{ns}", os.O_RDONLY | os.O_CLOEXEC))
        yield [st.st_ino for st in map(os.fstat, fds) if st.st_dev == nsfs]
    finally:
        for fd in fds:
            os.close(fd)


def kill_in_netns(inodes: Collection[int]) -> list[int]:
    """SIGKILLs every process in one of the network namespaces ``inodes`` (held, see
    :func:`held`) and waits (at most 2 s) until each is gone; returns their pids."""
    want = {f"net:[{i}]" for i in inodes}
    pids: list[int] = []
    if not want:
        return pids
    for p in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if p.isdigit() and os.readlink(f"/proc/{p}/ns/net") in want:
                os.kill(int(p), signal.SIGKILL)
                pids.append(int(p))
    # SIGKILL is delivered asynchronously: wait (at most 2 s) until each process is gone
    # (or a zombie, whose command line is empty), so that nothing is seen running after.
    deadline = time.monotonic() + 2.0
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.01)
    return pids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return bool(f.read(1))
    except OSError:
        return False


def delete_ns(ns: str) -> None:
    """Removes the namespace ``ns`` with the processes in it (and so its veths)."""
    with held([ns]) as inodes:
        kill_in_netns(inodes)
        sh("ip", "netns", "del", ns, check=False)
        kill_in_netns(inodes)  # one that entered between the kill and the removal


def testbed_namespaces() -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def hosts(kind: str, direction: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(namespace, address) of a flow's sender and receiver: TCP between A and C, CBR
    and the video call (``media``) between B and D (the simulator's host 1);
    downstream from the left (Internet) side to the right (home)."""
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
