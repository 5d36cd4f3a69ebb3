"""The emulation testbed: real Linux TCP through a userspace bottleneck that runs the
simulator's own queue code.

A run builds three network namespaces — ``left`` (the Internet side: hosts A and B),
``router`` and ``right`` (the home: hosts C and D) — joined by veth pairs, with
addresses in the benchmarking range 198.18.0.0/15 and no route out. The router namespace
has no IP addresses and forwards nothing by itself: ``collateral-emu router`` reads every
frame with an AF_PACKET socket, queues it with the same Rust drop-tail code as the
simulator, serialises it at the configured rate, holds it for the propagation delay and
writes it out on the other side. Offloads (TSO/GSO/GRO, checksums) are off so the queue
sees real packet sizes.

Every name carries the prefix ``col<pid>``; all of it is removed on exit, on error and on
SIGINT/SIGTERM, and a later run removes what a SIGKILLed run left behind. Results come
back in the simulator's schema (:class:`collateral.Result`), tagged ``"mode":
"emulation"``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .result import Result
from .spec import Scenario
from .store import pid_alive

__all__ = [
    "KERNEL_CC",
    "MAX_TESTBED_TCP_FLOWS",
    "MIN_TESTBED_CBR_INTERVAL_NS",
    "EmulationError",
    "Testbed",
    "TestbedLimitError",
    "available_congestion_controls",
    "check_testbed",
    "cleanup_leftovers",
    "emulate",
    "find_emulator",
]

#: The simulator's names for congestion controls and the kernel modules behind them.
KERNEL_CC = {"newreno": "reno", "reno": "reno", "cubic": "cubic", "bbr": "bbr", "htcp": "htcp"}
PREFIX = "col"
_NS_RE = re.compile(rf"^{PREFIX}(\d+)[lrh]$")
LEFT_A, LEFT_B, RIGHT_C, RIGHT_D = "198.18.0.1", "198.18.0.3", "198.18.0.2", "198.18.0.4"
#: Router log events (the ``ev`` column): accepted by the queue, dropped, left the router
#: after the delay, and marked CE by the queue (the frame's ECN field rewritten to CE;
#: logged just before it leaves).
EV_QUEUED, EV_DROP, EV_LEFT, EV_CE = 0, 1, 2, 3
#: The router log's columns (``collateral-emu router --log``): ``tos`` is the TOS byte as
#: the frame arrived; ``qpkts``/``qbytes`` what the queue held (for a drop at an arrival,
#: before that arrival: at its limit there, the drop was an overflow).
ROUTER_LOG_COLUMNS = (
    "t_ns", "ev", "dir", "ip_len", "proto", "sport", "dport", "useq", "tos", "qpkts", "qbytes"
)  # fmt: skip
#: Congestion controls the testbed refuses: scalable ones that need L4S feedback
#: (AccECN, a shallow-threshold marking AQM) that the testbed's kernel does not have.
SCALABLE_CC = ("dctcp", "prague")


class EmulationError(RuntimeError):
    """A testbed problem the user can act on (not root, missing tool, unknown CC)."""


class TestbedLimitError(EmulationError, ValueError):
    """A scenario the testbed cannot run: ``path`` is the Scenario field at fault
    (``tcp``, ``cbr[0].interval``, ``down.rate``), ``reason`` what is wrong."""

    __test__ = False  # not a pytest test class

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


#: Limits of the testbed: it runs in real time, with a process per flow, a userspace
#: router and userspace senders.
MAX_TESTBED_TCP_FLOWS = 64
MAX_TESTBED_CBR_FLOWS = 64
#: The shortest CBR gap a userspace sender keeps to (sleeping between departures).
MIN_TESTBED_CBR_INTERVAL_NS = 100_000
#: The longest run: a day of wall time.
MAX_TESTBED_DURATION_NS = 86_400 * 10**9
#: The fastest link the userspace router is meant for.
MAX_TESTBED_RATE_BPS = 10 * 10**9
#: The longest delay (base RTT, or a flow's extra delay) the router's delay line holds.
MAX_TESTBED_DELAY_NS = 10 * 10**9


def check_testbed(scenario: Scenario) -> None:
    """Raises :class:`TestbedLimitError` naming the field of ``scenario`` that the
    testbed cannot run (too many flows, too long, too fast, a CBR gap too short for a
    userspace sender, web users, start/stop times, a tag beyond DSCP, L4S: ECN mode
    ``l4s`` or the scalable ``dctcp``/``prague``, and TCP flows sent from one host that
    differ in ECN, which the kernel enables per host). Needs nothing: no root, no tools;
    nothing is created."""
    from .units import fmt_duration, fmt_rate

    sc = scenario
    if not isinstance(sc, Scenario):
        raise TypeError(f"scenario: expected a Scenario, got {type(sc).__name__}")
    if sc.web:
        raise TestbedLimitError(
            "web",
            "web users are not supported in the testbed yet (bulk TCP and CBR only);"
            " simulate them instead",
        )
    if len(sc.tcp) > MAX_TESTBED_TCP_FLOWS:
        raise TestbedLimitError(
            "tcp",
            f"{len(sc.tcp)} flows; the testbed runs at most {MAX_TESTBED_TCP_FLOWS}"
            " (a process each, in real time); simulate more",
        )
    if len(sc.cbr) > MAX_TESTBED_CBR_FLOWS:
        raise TestbedLimitError(
            "cbr", f"{len(sc.cbr)} flows; the testbed runs at most {MAX_TESTBED_CBR_FLOWS}"
        )
    if sc.duration > MAX_TESTBED_DURATION_NS:
        raise TestbedLimitError(
            "duration",
            f"{fmt_duration(sc.duration)}: the testbed runs in real time, at most"
            f" {fmt_duration(MAX_TESTBED_DURATION_NS)} (a day)",
        )
    for name in ("down", "up"):
        rate = getattr(sc, name).rate or 0
        if rate > MAX_TESTBED_RATE_BPS:
            raise TestbedLimitError(
                f"{name}.rate",
                f"{fmt_rate(rate)}: the testbed's userspace router forwards at most"
                f" {fmt_rate(MAX_TESTBED_RATE_BPS)}",
            )
    if sc.rtt > MAX_TESTBED_DELAY_NS:
        raise TestbedLimitError(
            "rtt",
            f"{fmt_duration(sc.rtt)}: the testbed holds at most"
            f" {fmt_duration(MAX_TESTBED_DELAY_NS)}",
        )
    for i, t in enumerate(sc.tcp):
        if t.cc in SCALABLE_CC:
            raise TestbedLimitError(
                f"tcp[{i}].cc",
                f"{t.cc}: this kernel offers {_kernel_offers()} (no DCTCP or Prague);"
                " the testbed runs classic ECN only",
            )
        if t.ecn == "l4s":
            raise TestbedLimitError(
                f"tcp[{i}].ecn",
                "l4s: this kernel has no L4S TCP (no AccECN, DCTCP or Prague);"
                " the testbed runs classic ECN only",
            )
        # The kernel enables ECN per network namespace (net.ipv4.tcp_ecn), and every
        # TCP flow of a direction leaves from the same host to the same address, so a
        # per-route setting cannot tell them apart either.
        first = next(k for k, u in enumerate(sc.tcp) if u.direction == t.direction)
        if t.ecn != sc.tcp[first].ecn:
            raise TestbedLimitError(
                f"tcp[{i}].ecn",
                f"{t.ecn}: tcp[{first}], sent from the same host, has {sc.tcp[first].ecn};"
                " the testbed's kernel sets ECN per host, so the flows of one direction"
                " must agree",
            )
        if t.start or t.stop is not None:
            raise TestbedLimitError(
                f"tcp[{i}]", "start and stop times are not supported in the testbed yet"
            )
        if t.extra_delay > MAX_TESTBED_DELAY_NS:
            raise TestbedLimitError(
                f"tcp[{i}].extra_delay",
                f"{fmt_duration(t.extra_delay)}: the testbed holds at most"
                f" {fmt_duration(MAX_TESTBED_DELAY_NS)}",
            )
    for j, c in enumerate(sc.cbr):
        if c.tag > 63:
            raise TestbedLimitError(f"cbr[{j}].tag", f"{c.tag} is not a DSCP value (0-63)")
        if c.app is not None:
            continue
        if c.interval < MIN_TESTBED_CBR_INTERVAL_NS:
            raise TestbedLimitError(
                f"cbr[{j}].interval",
                f"{fmt_duration(c.interval)}: below what a userspace sender can keep; the"
                f" testbed takes at least {fmt_duration(MIN_TESTBED_CBR_INTERVAL_NS)}",
            )
        for field in ("interval", "jitter"):
            v = getattr(c, field)
            if v > sc.duration:
                raise TestbedLimitError(
                    f"cbr[{j}].{field}",
                    f"{fmt_duration(v)} is longer than the run ({fmt_duration(sc.duration)})",
                )


def _kernel_offers() -> str:
    """The congestion controls the testbed can take from this kernel, as words."""
    avail = set(available_congestion_controls())
    names = [k for k in dict.fromkeys(KERNEL_CC.values()) if k in avail] or ["reno", "cubic", "bbr"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def ecn_namespaces(scenario: Scenario) -> list[str]:
    """The host namespaces (``left``, ``right``) whose kernel must initiate ECN: those
    that send a TCP flow with ``ecn = "classic"``. Receivers need nothing: a fresh
    namespace's ``net.ipv4.tcp_ecn`` is 2, which accepts ECN when a peer asks for it."""
    out = []
    for t in scenario.tcp:
        (ns, _), _ = _hosts("tcp", t.direction)
        if t.ecn == "classic" and ns not in out:
            out.append(ns)
    return out


def find_emulator() -> str:
    """The ``collateral-emu`` binary: $COLLATERAL_EMU, on PATH, or in the source tree."""
    cand = [os.environ.get("COLLATERAL_EMU"), shutil.which("collateral-emu")]
    root = Path(__file__).resolve().parents[2]
    cand += [str(root / "target" / "release" / "collateral-emu")]
    for c in cand:
        if c and os.access(c, os.X_OK):
            return c
    raise EmulationError(
        "collateral-emu not found; build it with 'cargo build --release -p collateral-emu'"
        " (./setup.sh does) or set COLLATERAL_EMU"
    )


def available_congestion_controls() -> list[str]:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return path.read_text().split() if path.exists() else []


def _sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"{' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def _kill_ns_processes(ns: str) -> None:
    pids = _sh("ip", "netns", "pids", ns, check=False).stdout.split()
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


def _delete_ns(ns: str) -> None:
    _kill_ns_processes(ns)
    _sh("ip", "netns", "del", ns, check=False)


def testbed_namespaces() -> list[str]:
    out = _sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


#: Where each run records what it creates (namespaces, its temporary directory) before
#: creating it: the tool's own mark. A later run removes what a dead run recorded, and
#: never anything else, however it is named.
REGISTRY = Path("/run/collateral")


def _read_record(path: Path) -> dict[str, Any]:
    """A registry record; an unreadable or malformed one counts as empty."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def _register(run: dict[str, Any]) -> Path:
    """Records (adds to this process's record) what the run is about to create."""
    REGISTRY.mkdir(parents=True, exist_ok=True)
    path = REGISTRY / f"{os.getpid()}.json"
    old = _read_record(path)
    merged = {
        "namespaces": list(dict.fromkeys([*old.get("namespaces", []), *run.get("namespaces", [])])),
        "tmpdir": run.get("tmpdir") or old.get("tmpdir"),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(merged))
    os.replace(tmp, path)
    return path


def cleanup_leftovers() -> list[str]:
    """Removes what testbed runs that are gone left behind: the namespaces (with their
    processes and veths) and temporary directories they recorded in :data:`REGISTRY`.
    Returns the namespaces removed."""
    removed: list[str] = []
    if not REGISTRY.is_dir():
        return removed
    present = set(testbed_namespaces())
    for rec in sorted(REGISTRY.glob("*.json")):
        # This process's own record is stale when cleaning starts (a run registers after
        # it): a dead run's pid that was reused.
        if not rec.stem.isdigit() or (int(rec.stem) != os.getpid() and pid_alive(int(rec.stem))):
            continue
        run = _read_record(rec)
        for ns in run.get("namespaces", []):
            if ns in present:
                _delete_ns(ns)
                removed.append(ns)
        tmpdir = run.get("tmpdir")
        if isinstance(tmpdir, str) and _is_our_tmpdir(tmpdir):
            shutil.rmtree(tmpdir, ignore_errors=True)
        rec.unlink(missing_ok=True)
    return removed


#: The prefix of a run's temporary directory (in the system's temporary directory).
TMP_PREFIX = "collateral-emu-"


def _is_our_tmpdir(path: str) -> bool:
    """Only a directory named as this module names them is ever removed from a record."""
    p = Path(path)
    return p.is_absolute() and p.name.startswith(TMP_PREFIX) and ".." not in p.parts


def _new_tmpdir() -> tuple[Path, Path]:
    """A private temporary directory for a run, recorded in the registry *before* it is
    created, so a run killed at any moment leaves nothing the next run does not find."""
    wd = Path(tempfile.gettempdir()) / f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    record = _register({"namespaces": [], "tmpdir": str(wd)})
    wd.mkdir(mode=0o700)
    return wd, record


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    stderr: Path


class Testbed:
    """The namespaces and veths of one run; a context manager that always tears down."""

    def __init__(self, workdir: Path) -> None:
        self.id = f"{PREFIX}{os.getpid()}"
        self.ns = {"left": f"{self.id}l", "router": f"{self.id}r", "right": f"{self.id}h"}
        tag = f"c{os.getpid()}"
        self.ifs = {
            "left": f"{tag}l0",
            "router_left": f"{tag}l1",
            "right": f"{tag}h0",
            "router_right": f"{tag}h1",
        }
        self.workdir = workdir
        self.procs: list[_Proc] = []
        #: Keep the registry record at teardown: its owner (:func:`emulate`) still has a
        #: temporary directory to remove, and removes the record after it.
        self.keep_record = False

    def exec(self, ns: str, *args: str) -> subprocess.CompletedProcess[str]:
        return _sh("ip", "netns", "exec", self.ns[ns], *args)

    def build(self, tmpdir: Path | None = None) -> None:
        """Creates the namespaces and links; records them (and ``tmpdir``, a temporary
        directory of the run's to remove if it dies) in the registry first."""
        self.registry = _register(
            {"namespaces": list(self.ns.values()), "tmpdir": str(tmpdir) if tmpdir else None}
        )
        for ns in self.ns.values():
            _sh("ip", "netns", "add", ns)
        for side in ("left", "right"):
            a, b = self.ifs[side], self.ifs[f"router_{side}"]
            _sh(
                "ip",
                "link",
                "add",
                a,
                "netns",
                self.ns[side],
                "type",
                "veth",
                "peer",
                "name",
                b,
                "netns",
                self.ns["router"],
            )
        for ns in self.ns:
            # No IPv6 chatter (router solicitations, DAD) through the emulator.
            self.exec(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            self.exec(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            self.exec(ns, "ip", "link", "set", "lo", "up")
        self.exec("router", "sysctl", "-qw", "net.ipv4.ip_forward=0")
        addrs = {"left": (LEFT_A, LEFT_B), "right": (RIGHT_C, RIGHT_D)}
        for side, ips in addrs.items():
            dev = self.ifs[side]
            for ip in ips:
                self.exec(side, "ip", "addr", "add", f"{ip}/24", "dev", dev)
        for ns, dev in [
            ("left", self.ifs["left"]),
            ("right", self.ifs["right"]),
            ("router", self.ifs["router_left"]),
            ("router", self.ifs["router_right"]),
        ]:
            # Real packet sizes in the queue, full checksums on the wire.
            self.exec(
                ns,
                "ethtool",
                "-K",
                dev,
                "tso",
                "off",
                "gso",
                "off",
                "gro",
                "off",
                "tx",
                "off",
                "rx",
                "off",
            )
            self.exec(ns, "ip", "link", "set", dev, "up")
        # The router answers no ARP: each side learns the other side's MAC statically.
        mac = {s: self._mac(s) for s in ("left", "right")}
        for side, other, ips in [
            ("left", "right", (RIGHT_C, RIGHT_D)),
            ("right", "left", (LEFT_A, LEFT_B)),
        ]:
            for ip in ips:
                self.exec(
                    side,
                    "ip",
                    "neigh",
                    "replace",
                    ip,
                    "lladdr",
                    mac[other],
                    "dev",
                    self.ifs[side],
                    "nud",
                    "permanent",
                )

    def kernel_bottleneck(self, rate_bps: int, qdisc: str, limit: int) -> None:
        """Instead of the emulator, let the kernel forward (a bridge in the router
        namespace) through ``tbf`` with a ``pfifo``/``bfifo`` child on the downstream
        port: an independent implementation of PS / FB-strict to check ours against.
        The bucket holds one full frame, so a burst meets the child queue at once."""
        br = f"{self.ifs['router_left'][:-2]}br"
        self.exec("router", "ip", "link", "add", br, "type", "bridge")
        for dev in (self.ifs["router_left"], self.ifs["router_right"]):
            self.exec("router", "ip", "link", "set", dev, "master", br)
        self.exec("router", "ip", "link", "set", br, "up")
        dev = self.ifs["router_right"]
        self.exec(
            "router",
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "root",
            "handle",
            "1:",
            "tbf",
            "rate",
            f"{rate_bps}bit",
            "burst",
            "1514",
            "limit",
            "1000000",
        )
        self.exec(
            "router",
            "tc",
            "qdisc",
            "add",
            "dev",
            dev,
            "parent",
            "1:1",
            "handle",
            "10:",
            qdisc,
            "limit",
            str(limit),
        )

    def _mac(self, side: str) -> str:
        out = self.exec(side, "cat", f"/sys/class/net/{self.ifs[side]}/address").stdout
        return out.strip()

    def start(self, ns: str, name: str, *args: str) -> _Proc:
        err = self.workdir / f"{name}.stderr"
        with open(err, "wb") as f:
            p = subprocess.Popen(
                ["ip", "netns", "exec", self.ns[ns], *args], stdout=subprocess.DEVNULL, stderr=f
            )
        proc = _Proc(name, p, err)
        self.procs.append(proc)
        return proc

    def start_router(
        self,
        emu: str,
        scenario_json: Path,
        t0: int,
        until_ns: int,
        log: Path | None = None,
        report: Path | None = None,
        l2_overhead: int = 0,
        stats: Path | None = None,
    ) -> _Proc:
        """``collateral-emu router`` in the router namespace, running the scenario's
        bottleneck (the simulator's own code) from the origin ``t0`` (CLOCK_REALTIME ns)."""
        args = [
            emu,
            "router",
            "--scenario",
            str(scenario_json),
            "--t0",
            str(t0),
            "--until-ns",
            str(until_ns),
            "--left",
            self.ifs["router_left"],
            "--right",
            self.ifs["router_right"],
        ]
        if l2_overhead:
            args += ["--l2-overhead", str(l2_overhead)]
        if log is not None:
            args += ["--log", str(log)]
        if report is not None:
            args += ["--report", str(report)]
        if stats is not None:
            args += ["--stats", str(stats)]
        return self.start("router", "router", *args)

    def wait(self, proc: _Proc, timeout: float) -> None:
        """Waits for ``proc`` to end; one that overruns is stopped (SIGTERM, then SIGKILL)
        and reported, as is one that failed, by the last line it wrote to stderr."""
        try:
            rc = proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.popen.terminate()
            try:
                rc = proc.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                rc = proc.popen.wait()
            if rc == -signal.SIGTERM or rc == -signal.SIGKILL:
                raise EmulationError(f"{proc.name} did not finish in {timeout:.0f} s") from None
        self.check(proc, rc)

    @staticmethod
    def check(proc: _Proc, rc: int | None) -> None:
        """Raises :class:`EmulationError` naming ``proc`` if it failed (exit status ``rc``)."""
        if rc not in (None, 0, -signal.SIGTERM):
            msg = proc.stderr.read_text().strip().splitlines()
            raise EmulationError(f"{proc.name} failed: {msg[-1] if msg else f'exit {rc}'}")

    def teardown(self) -> None:
        for p in self.procs:
            if p.popen.poll() is None:
                p.popen.terminate()
        for p in self.procs:
            try:
                p.popen.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.popen.kill()
        for ns in self.ns.values():
            _delete_ns(ns)
        if getattr(self, "registry", None) is not None and not self.keep_record:
            self.registry.unlink(missing_ok=True)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM (and SIGINT) raise KeyboardInterrupt so `finally` tears down."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def check_ready(scenario: Scenario) -> dict[int, str]:
    check_testbed(scenario)
    if os.geteuid() != 0:
        raise EmulationError("emulation needs root (network namespaces); run it with sudo")
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise EmulationError(f"{tool} not found; ./setup.sh installs iproute2 and ethtool")
    avail = available_congestion_controls()
    kernel_cc = {}
    for i, t in enumerate(scenario.tcp):
        k = KERNEL_CC.get(t.cc)
        if k is None or k not in avail:
            raise EmulationError(
                f"congestion control {t.cc!r} is not available in this kernel;"
                f" it offers: {', '.join(avail) or 'none'}"
            )
        kernel_cc[i] = k
    return kernel_cc


def _read_csv(path: Path) -> np.ndarray:
    """A numeric CSV with a header line (and optional '#' comment lines) as int64 rows."""
    rows = [
        line.split(",")
        for line in path.read_text().splitlines()[1:]
        if line and not line.startswith("#") and not line[0].isalpha()
    ]
    return np.array(rows, dtype=np.int64).reshape(len(rows), -1) if rows else np.zeros((0, 1))


def _hosts(kind: str, direction: str) -> tuple[tuple[str, str], tuple[str, str]]:
    """(namespace, address) of a flow's sender and receiver: TCP between A and C, CBR
    between B and D; downstream from the left (Internet) side to the right (home)."""
    left, right = (LEFT_A, RIGHT_C) if kind == "tcp" else (LEFT_B, RIGHT_D)
    if direction == "down":
        return ("left", left), ("right", right)
    return ("right", right), ("left", left)


#: Seconds between starting the router and receivers and the run's origin, for them to
#: be listening when the first packet leaves.
START_MARGIN_S = 1.0


def emulate(scenario: Scenario, workdir: str | Path | None = None, keep: bool = False) -> Result:
    """Runs the scenario on the namespace testbed in real time; returns a Result in the
    simulator's schema. Raises :class:`EmulationError` for problems the user can fix."""
    kernel_cc = check_ready(scenario)  # everything checked before anything is created
    emu = find_emulator()
    cleanup_leftovers()
    own_tmp = workdir is None
    record = None
    if own_tmp and not keep:
        wd, record = _new_tmpdir()
    elif own_tmp:
        wd = Path(tempfile.mkdtemp(prefix=TMP_PREFIX))  # kept: not recorded for removal
    else:
        wd = Path(workdir)  # type: ignore[arg-type]
        wd.mkdir(parents=True, exist_ok=True)
    try:
        return _emulate_in(scenario, wd, emu, kernel_cc, record is not None)
    finally:
        if record is not None:
            shutil.rmtree(wd, ignore_errors=True)
            record.unlink(missing_ok=True)


def _emulate_in(
    scenario: Scenario, wd: Path, emu: str, kernel_cc: dict[int, str], tmp: bool
) -> Result:
    # Router and senders read the scenario the simulator takes, and follow one origin.
    sc_json = wd / "scenario.json"
    sc_json.write_text(scenario.to_native_json())
    tb = Testbed(wd)
    tb.keep_record = tmp
    dur = scenario.duration
    try:
        with _signals_raise():
            tb.build(wd if tmp else None)
            for ns in ecn_namespaces(scenario):  # classic ECN (RFC 3168) in the real TCP
                tb.exec(ns, "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
            t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + int(START_MARGIN_S * 1e9)
            t = lambda ns: str(ns)  # noqa: E731
            router = tb.start_router(
                emu,
                sc_json,
                t0,
                dur + 3_000_000_000,
                wd / "router.csv",
                wd / "router.json",
                stats=wd / "router-stats.json",
            )
            until = t(dur + 2_000_000_000)

            def receiver(ns: str, flow: str, bind: str) -> _Proc:
                """A flow's sink (``tcp-recv`` or ``cbr-recv``), logging to ``{flow}-recv.csv``."""
                kind = flow.rstrip("0123456789")
                return tb.start(
                    ns,
                    f"{flow}-recv",
                    *(emu, f"{kind}-recv", "--bind", bind, "--t0", t(t0), "--until-ns", until),
                    *("--out", str(wd / f"{flow}-recv.csv")),
                )

            receivers, senders = [], []
            for i, f in enumerate(scenario.tcp):
                (ns_s, ip_s), (ns_r, ip_r) = _hosts("tcp", f.direction)
                dst, out = f"{ip_r}:{5001 + i}", wd / f"tcp{i}"
                receivers.append(receiver(ns_r, f"tcp{i}", dst))
                senders.append(
                    tb.start(
                        ns_s,
                        f"tcp{i}-send",
                        *(emu, "tcp-send", "--src", ip_s, "--dst", dst, "--cc", kernel_cc[i]),
                        *("--t0", t(t0), "--duration-ns", t(dur), "--poll-ns", "1000000"),
                        *("--out", f"{out}-send.csv", "--congestion-out", f"{out}-congestion.csv"),
                    )
                )
            for j, c in enumerate(scenario.cbr):
                (ns_s, ip_s), (ns_r, ip_r) = _hosts("cbr", c.direction)
                dst, out = f"{ip_r}:{7001 + j}", wd / f"cbr{j}"
                receivers.append(receiver(ns_r, f"cbr{j}", dst))
                # The simulator's own source: same seed, same departures; a tag becomes the
                # DSCP of the IP TOS byte, which the router classifies.
                senders.append(
                    tb.start(
                        ns_s,
                        f"cbr{j}-send",
                        *(emu, "cbr-send", "--scenario", str(sc_json), "--flow", str(j)),
                        *("--t0", t(t0), "--src", f"{ip_s}:{6001 + j}", "--dst", dst),
                        *("--out", f"{out}-send.csv"),
                    )
                )
            # The router and the receivers must be up before the first packet leaves: one
            # that stopped (a bad argument, a socket it could not open) is reported now.
            time.sleep(max(0.0, (t0 - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9 - 0.2))
            for p in (router, *receivers):
                tb.check(p, p.popen.poll())
            ahead = START_MARGIN_S + dur / 1e9
            for p in senders:
                tb.wait(p, ahead + 10)
            for p in receivers:
                tb.wait(p, 5)
            router.popen.terminate()
            tb.wait(router, 5)
    finally:
        tb.teardown()
    return _collect(scenario, wd)


#: What the core's measurement takes for a packet that never arrived (``u64::MAX - 1``:
#: dropped by the router's queue; ``u64::MAX - 2``: lost anywhere else).
DROPPED_IN_QUEUE = np.uint64(2**64 - 2)
LOST_ELSEWHERE = np.uint64(2**64 - 3)


def _collect(sc: Scenario, wd: Path) -> Result:
    """Reads the endpoints' and the router's logs (all in trial time) and hands the
    records to the core's measurement, which computes every metric as it does for a
    simulated trial."""
    from . import _native

    tcp_records, cwnd = [], {"time_s": [], "flow": [], "cwnd": [], "ssthresh": []}
    for i in range(len(sc.tcp)):
        recv = _read_csv(wd / f"tcp{i}-recv.csv")
        send = _read_csv(wd / f"tcp{i}-send.csv")
        cong = _read_csv(wd / f"tcp{i}-congestion.csv")

        def bytes_at(ts: int, recv: np.ndarray = recv) -> int:
            k = np.searchsorted(recv[:, 0], ts, side="right") - 1
            return int(recv[k, 1]) if k >= 0 else 0

        tcp_records.append(
            {
                "bytes_delivered": bytes_at(sc.duration) - bytes_at(sc.warmup),
                "congestion_times": [int(x) for x in cong[:, 0] if x >= 0],
                "retransmits": int(send[-1, 4]) if len(send) else 0,
            }
        )
        if len(send):
            cwnd["time_s"].append(send[:, 0] / 1e9)
            cwnd["flow"].append(np.full(len(send), i, dtype=np.uint32))
            cwnd["cwnd"].append(send[:, 1].astype(np.uint32))
            cwnd["ssthresh"].append(send[:, 2].astype(np.uint32))
    log = wd / "router.csv"
    router = _read_csv(log) if log.exists() else np.zeros((0, len(ROUTER_LOG_COLUMNS)))
    cbr_records = []
    for j in range(len(sc.cbr)):
        sent = _read_csv(wd / f"cbr{j}-send.csv")
        recv = _read_csv(wd / f"cbr{j}-recv.csv")
        n = len(sent)
        arrived = np.full(n, LOST_ELSEWHERE, dtype=np.uint64)
        if len(router):
            x = router[
                (router[:, 1] == EV_DROP) & (router[:, 4] == 17) & (router[:, 6] == 7001 + j)
            ]
            seqs = x[:, 7][x[:, 7] < n]
            arrived[seqs] = DROPPED_IN_QUEUE
        if len(recv):
            ok = (recv[:, 0] >= 0) & (recv[:, 0] < n)
            arrived[recv[ok, 0]] = np.maximum(recv[ok, 1], 0).astype(np.uint64)
        cbr_records.append(
            (
                np.maximum(sent[:, 1], 0).astype(np.uint64) if n else np.zeros(0, np.uint64),
                arrived,
                sent[:, 2].astype(np.uint32) if n else np.zeros(0, np.uint32),
            )
        )
    report = wd / "router.json"
    raw = _native.measure_testbed(
        sc.to_native_json(),
        json.dumps(tcp_records),
        cbr_records,
        report.read_text() if report.exists() else None,
    )

    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.array([], dtype=dtype)

    raw["traces"]["cwnd"] = {
        k: cat(v, np.float64 if k == "time_s" else np.uint32) for k, v in cwnd.items()
    }
    return Result(raw, sc)


def emulate_experiment(
    experiment: Any,
    store_path: str | Path,
    progress: Any = None,
) -> tuple[int, int]:
    """Runs an experiment's trials on the testbed, one after the other in real time, into
    a results store with the simulator's schema (plus ``mode = "emulation"``). Trials
    already stored are skipped, so an interrupted run resumes. Returns (run, total)."""
    from . import _native
    from .runner import code_version, summary_columns
    from .store import Store, rows_to_table

    for p in experiment.points:  # every point runnable here, before anything is created
        check_ready(p.scenario)
    st = Store.create(store_path, experiment.name, experiment.text)
    st.lock()
    try:
        st.repair()  # damaged parts to quarantine/, their trials run again (as `run` does)
        done = st.done_keys(refresh=True)
        trials = experiment.trials()
        todo = [t for t in trials if t.key not in done]
        cv = code_version()
        for n, t in enumerate(todo, 1):
            r = emulate(t.scenario())
            row = {
                "key": t.key,
                "point": t.point.key,
                "rep": t.rep,
                "seed": t.seed,
                **t.point.columns(),
                **summary_columns(r.summary),
                "scenario": t.point.stored_scenario,
                "model_version": _native.version(),
                "code_version": cv,
            }
            st.write_part(rows_to_table([row]))
            if progress:
                progress(n, len(todo), t)
        st.write_views_sql()
        return len(todo), len(trials)
    finally:
        st.unlock()
