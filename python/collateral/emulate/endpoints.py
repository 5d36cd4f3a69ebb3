"""The endpoints of a run, ``collateral-emu`` processes in the namespaces: the router
(the bottleneck), and per flow a receiver and a sender (``tcp-send`` with the kernel's
congestion control, ``cbr-send`` with the simulator's own source, ``media-send`` and
``media-recv`` with the simulator's own video call: encoder, GCC, RFC 8888 feedback),
and per web group a server and a browser (``web-server``, ``web-client``: the
simulator's users' draws over kernel TCP)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..spec import Scenario
from .errors import EmulationError
from .namespaces import hosts
from .testbed import Proc, Testbed

#: The video call's ports: its receiver's (where the media goes) and its sender's
#: (where the feedback goes). The logs' readers tell the two apart by them.
MEDIA_PORT, FEEDBACK_PORT = 8001, 8002
#: Web group ``g``'s server listens on ``WEB_PORT + g``.
WEB_PORT = 9001
#: Whether the bulk senders log a workload's self probes (see ``start_endpoints``).
SELF_PROBES = False
#: Seconds between starting the router and receivers and the run's origin, for them to
#: be listening when the first packet leaves.
START_MARGIN_S = 1.0
#: Nanoseconds the receivers listen after the trial's end: for what the router let leave
#: by then (its lateness included) to reach them. Whatever arrives later counts as in
#: flight at the end, as in the simulator, and so does what the router still held then
#: (``logs.arrivals``).
DRAIN_NS = 500_000_000
#: Nanoseconds a web server stays after the end: it logs a connection's counters when the
#: browser's FIN reaches it, which crosses the request direction's queue (seconds behind
#: an upload); a connection it has not logged counts none.
WEB_DRAIN_NS = 2_000_000_000


def find_emulator() -> str:
    """The ``collateral-emu`` binary: $COLLATERAL_EMU, on PATH, or in the source tree."""
    cand = [os.environ.get("COLLATERAL_EMU"), shutil.which("collateral-emu")]
    root = Path(__file__).resolve().parents[3]
    cand += [str(root / "target" / "release" / "collateral-emu")]
    for c in cand:
        if c and os.access(c, os.X_OK):
            return c
    raise EmulationError(
        "collateral-emu not found; build it with 'cargo build --release -p collateral-emu'"
        " (./setup.sh does) or set COLLATERAL_EMU"
    )


def start_endpoints(
    tb: Testbed,
    emu: str,
    scenario: Scenario,
    sc_json: Path,
    wd: Path,
    kernel_cc: dict[Any, str],
    t0: int,
) -> tuple[Proc, list[Proc], list[Proc]]:
    """Starts the router, then each flow's receiver and sender, all following the
    origin ``t0``; returns (router, receivers, senders)."""
    dur = scenario.duration
    t = lambda ns: str(ns)  # noqa: E731
    router = tb.start_router(
        emu,
        sc_json,
        t0,
        dur + DRAIN_NS + 1_000_000_000,  # a bound: it is stopped once the receivers end
        wd / "router.csv",
        wd / "router.json",
        stats=wd / "router-stats.json",
    )
    until = t(dur + DRAIN_NS)

    def receiver(ns: str, flow: str, bind: str, *extra: str) -> Proc:
        """A flow's sink (``tcp-recv`` or ``cbr-recv``), logging to ``{flow}-recv.csv``."""
        kind = flow.rstrip("0123456789")
        return tb.start(
            ns,
            f"{flow}-recv",
            *(emu, f"{kind}-recv", "--bind", bind, "--t0", t(t0), "--until-ns", until),
            *("--out", str(wd / f"{flow}-recv.csv"), *extra),
        )

    receivers, senders = [], []
    for i, f in enumerate(scenario.tcp):
        (ns_s, ip_s), (ns_r, ip_r) = hosts("tcp", f.direction)
        dst, out = f"{ip_r}:{5001 + i}", wd / f"tcp{i}"
        # Its ACKs carry its DSCP too, as the simulator marks them.
        receivers.append(receiver(ns_r, f"tcp{i}", dst, "--tos", str(f.tag << 2)))
        senders.append(
            tb.start(
                ns_s,
                f"tcp{i}-send",
                *(emu, "tcp-send", "--src", ip_s, "--dst", dst, "--cc", kernel_cc[i]),
                # Its seeded start offset, as the simulator draws it (the core's start_at).
                *("--scenario", str(sc_json), "--flow", str(i)),
                *("--t0", t(t0), "--duration-ns", t(dur), "--poll-ns", "1000000"),
                *("--out", f"{out}-send.csv", "--congestion-out", f"{out}-congestion.csv"),
                # A workload's self probes (``--rtt-out``, the kernel's stamps of the
                # flow's own bytes) are off: some of their samples fall below the base
                # RTT, which is not understood yet (README); RPM stays empty meanwhile.
                *(("--rtt-out", f"{out}-rtt.csv") if scenario.workload and SELF_PROBES else ()),
            )
        )
    for j, c in enumerate(scenario.cbr):
        (ns_s, ip_s), (ns_r, ip_r) = hosts("cbr", c.direction)
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
    for g, w in enumerate(scenario.web):
        # Servers on the side the replies leave from; the browser on the other.
        (ns_s, ip_s), (ns_b, ip_b) = hosts("web", w.direction)
        server, out = f"{ip_s}:{WEB_PORT + g}", str(wd / f"web{g}")
        receivers.append(
            tb.start(
                ns_s,
                f"web{g}-server",
                *(emu, "web-server", "--bind", server, "--cc", kernel_cc[("web", g)]),
                *("--t0", t(t0), "--until-ns", t(dur + WEB_DRAIN_NS)),
                *("--out", f"{out}-server.csv"),
            )
        )
        senders.append(
            tb.start(
                ns_b,
                f"web{g}-client",
                *(emu, "web-client", "--scenario", str(sc_json), "--group", str(g)),
                *("--t0", t(t0), "--src", ip_b, "--dst", server, "--out", out),
            )
        )
    if (m := next(iter(scenario.calls), None)) is not None:
        (ns_s, ip_s), (ns_r, ip_r) = hosts("media", m.direction)
        send_at, recv_at = f"{ip_s}:{FEEDBACK_PORT}", f"{ip_r}:{MEDIA_PORT}"
        common = ("--scenario", str(sc_json), "--t0", t(t0), "--out", str(wd / "media"))
        receivers.append(
            tb.start(
                ns_r,
                "media-recv",
                *(emu, "media-recv", *common, "--until-ns", until),
                *("--bind", recv_at, "--peer", send_at),
            )
        )
        senders.append(
            tb.start(
                ns_s,
                "media-send",
                *(emu, "media-send", *common, "--src", send_at, "--dst", recv_at),
            )
        )
    return router, receivers, senders
