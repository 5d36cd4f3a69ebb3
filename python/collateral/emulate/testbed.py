"""One run's testbed: the namespaces joined by veth pairs (:meth:`Testbed.build`), the
processes started in them, and the teardown that always removes all of it."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EmulationError
from .namespaces import LEFT_A, LEFT_B, PREFIX, RIGHT_C, RIGHT_D, delete_ns, sh
from .registry import register


@contextmanager
def signals_raise() -> Iterator[None]:
    """SIGTERM (and SIGINT) raise KeyboardInterrupt so `finally` tears down."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@dataclass
class Proc:
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
        self.procs: list[Proc] = []
        #: Keep the registry record at teardown: its owner (:func:`emulate`) still has a
        #: temporary directory to remove, and removes the record after it.
        self.keep_record = False

    def exec(self, ns: str, *args: str) -> subprocess.CompletedProcess[str]:
        return sh("ip", "netns", "exec", self.ns[ns], *args)

    def build(self, tmpdir: Path | None = None) -> None:
        """Creates the namespaces and links; records them (and ``tmpdir``, a temporary
        directory of the run's to remove if it dies) in the registry first."""
        self.registry = register(
            {"namespaces": list(self.ns.values()), "tmpdir": str(tmpdir) if tmpdir else None}
        )
        for ns in self.ns.values():
            sh("ip", "netns", "add", ns)
        for side in ("left", "right"):
            a, b = self.ifs[side], self.ifs[f"router_{side}"]
            sh(
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

    def start(self, ns: str, name: str, *args: str) -> Proc:
        err = self.workdir / f"{name}.stderr"
        with open(err, "wb") as f:
            p = subprocess.Popen(
                ["ip", "netns", "exec", self.ns[ns], *args], stdout=subprocess.DEVNULL, stderr=f
            )
        proc = Proc(name, p, err)
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
    ) -> Proc:
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

    def wait(self, proc: Proc, timeout: float) -> None:
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
            # Stopped by us, whatever its status (an endpoint stopped inside connect says
            # "stopped (SIGINT/SIGTERM)" and exits 1): it overran.
            raise EmulationError(f"{proc.name} did not finish in {timeout:.0f} s") from None
        self.check(proc, rc)

    @staticmethod
    def check(proc: Proc, rc: int | None) -> None:
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
                p.popen.wait()  # reaped: no "still running" warning when it is collected
        for ns in self.ns.values():
            delete_ns(ns)
        if getattr(self, "registry", None) is not None and not self.keep_record:
            self.registry.unlink(missing_ok=True)
