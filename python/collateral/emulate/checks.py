"""What the testbed can run, checked before anything is created: the scenario against
its limits (:func:`check_testbed`), and root, tools and the kernel's congestion
controls (:func:`check_ready`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..spec import Scenario
from ..vocabulary import CC_INFO
from .errors import EmulationError, TestbedLimitError

#: The simulator's names for congestion controls and the kernel modules behind them, as
#: the core declares them beside each controller.
KERNEL_CC = {name: info["kernel"] for name, info in CC_INFO.items() if info.get("kernel")}
#: Congestion controls the testbed refuses: scalable ones that need L4S feedback
#: (AccECN, a shallow-threshold marking AQM) that the testbed's kernel does not have.
SCALABLE_CC = ("dctcp", "prague")


#: Limits of the testbed: it runs in real time, with a process per flow, a userspace
#: router and userspace senders.
MAX_TESTBED_TCP_FLOWS = 64
MAX_TESTBED_CBR_FLOWS = 64
#: The shortest CBR gap a userspace sender keeps to (sleeping between departures).
MIN_TESTBED_CBR_INTERVAL_NS = 100_000
#: The MTU of the testbed's links (veth pairs at their default): a bigger CBR packet
#: leaves its host in fragments.
TESTBED_MTU = 1500
#: The longest run: a day of wall time.
MAX_TESTBED_DURATION_NS = 86_400 * 10**9
#: The fastest link the userspace router is meant for.
MAX_TESTBED_RATE_BPS = 10 * 10**9
#: Web connections open at once (users x parallel): the browser's threads.
MAX_TESTBED_WEB_CONNECTIONS = 2000
#: The longest delay (base RTT, or a flow's extra delay) the router's delay line holds.
MAX_TESTBED_DELAY_NS = 10 * 10**9


def check_traffic(scenario: Scenario) -> None:
    """A trial (not ``shell``'s link, which carries the command's traffic) has some:
    a real-time run of idle namespaces measures nothing, and its "on time" would be of
    no frame at all."""
    sc = scenario
    if not (sc.tcp or sc.cbr or sc.web or sc.media or sc.workload):
        raise TestbedLimitError(
            ("tcp",), "no traffic: give a flow (TCP, CBR, an application, web users or a call)"
        )


def check_testbed(scenario: Scenario) -> None:
    """Raises :class:`TestbedLimitError` naming the field of ``scenario`` that the
    testbed cannot run (too many flows, too long, too fast, a CBR gap too short for a
    userspace sender, a tag beyond DSCP, L4S: ECN mode
    ``l4s`` or the scalable ``dctcp``/``prague``, and TCP flows sent from one host that
    differ in ECN, which the kernel enables per host; the responsiveness test; web
    users with extra delays or ECN). Needs nothing: no root, no tools; nothing is
    created."""
    from ..units import fmt_duration, fmt_rate

    sc = scenario
    if not isinstance(sc, Scenario):
        raise TypeError(f"scenario: expected a Scenario, got {type(sc).__name__}")
    if sc.workload is not None and sc.workload.kind == "responsiveness":
        raise TestbedLimitError(
            ("workload",),
            "responsiveness: its ramp holds its flows once the goodput saturates and its"
            " foreign probes are new TCP + TLS connections, which the testbed's endpoints"
            " do not run yet (rrul and rrul_be do run); simulate it",
        )
    for g, w in enumerate(sc.web):
        if w.extra_delay_min or w.extra_delay_max:
            raise TestbedLimitError(
                ("web", g, "extra_delay_max" if w.extra_delay_max else "extra_delay_min"),
                "the testbed's router gives no web connection a delay of its own;"
                " leave it 0 or simulate it",
            )
        if w.tcp.ecn != "off":
            raise TestbedLimitError(
                ("web", g, "tcp", "ecn"),
                f"{w.tcp.ecn}: the testbed's web connections run without ECN",
            )
        if w.users * w.parallel > MAX_TESTBED_WEB_CONNECTIONS:
            raise TestbedLimitError(
                ("web", g, "users"),
                f"{w.users} users x {w.parallel} connections: the testbed's browser holds"
                f" at most {MAX_TESTBED_WEB_CONNECTIONS} at once (a thread each)",
            )
    if len(sc.calls) > 1:
        raise TestbedLimitError(
            ("media",), f"{len(sc.calls)} calls; the testbed runs one call, simulate several"
        )
    if sc.calls and sc.calls[0].controller == "scream":
        raise TestbedLimitError(
            ("media", "controller"),
            "scream: the testbed's sender does not yet send what SCReAM's window releases"
            " when a report arrives; use gcc or nada, or simulate it",
        )
    if len(sc.tcp) > MAX_TESTBED_TCP_FLOWS:
        raise TestbedLimitError(
            ("tcp",),
            f"{len(sc.tcp)} flows; the testbed runs at most {MAX_TESTBED_TCP_FLOWS}"
            " (a process each, in real time); simulate more",
        )
    if len(sc.cbr) > MAX_TESTBED_CBR_FLOWS:
        raise TestbedLimitError(
            ("cbr",), f"{len(sc.cbr)} flows; the testbed runs at most {MAX_TESTBED_CBR_FLOWS}"
        )
    if sc.duration > MAX_TESTBED_DURATION_NS:
        raise TestbedLimitError(
            ("duration",),
            f"{fmt_duration(sc.duration)}: the testbed runs in real time, at most"
            f" {fmt_duration(MAX_TESTBED_DURATION_NS)} (a day)",
        )
    for name in ("down", "up"):
        rate = getattr(sc, name).rate or 0
        if rate > MAX_TESTBED_RATE_BPS:
            raise TestbedLimitError(
                (name, "rate"),
                f"{fmt_rate(rate)}: the testbed's userspace router forwards at most"
                f" {fmt_rate(MAX_TESTBED_RATE_BPS)}",
            )
    if sc.rtt > MAX_TESTBED_DELAY_NS:
        raise TestbedLimitError(
            ("rtt",),
            f"{fmt_duration(sc.rtt)}: the testbed holds at most"
            f" {fmt_duration(MAX_TESTBED_DELAY_NS)}",
        )
    for i, t in enumerate(sc.tcp):
        if t.cc in SCALABLE_CC:
            raise TestbedLimitError(
                ("tcp", i, "cc"),
                f"{t.cc}: this kernel offers {_kernel_offers()} (no DCTCP or Prague);"
                " the testbed runs classic ECN only",
            )
        # (ecn = l4s comes only with a scalable cc, which the scenario checks.)
        # The kernel enables ECN per network namespace (net.ipv4.tcp_ecn), and every
        # TCP flow of a direction leaves from the same host to the same address, so a
        # per-route setting cannot tell them apart either.
        first = next(k for k, u in enumerate(sc.tcp) if u.direction == t.direction)
        if t.ecn != sc.tcp[first].ecn:
            raise TestbedLimitError(
                ("tcp", i, "ecn"),
                f"{t.ecn}: tcp[{first}], sent from the same host, has {sc.tcp[first].ecn};"
                " the testbed's kernel sets ECN per host, so the flows of one direction"
                " must agree",
            )
        if t.extra_delay > MAX_TESTBED_DELAY_NS:
            raise TestbedLimitError(
                ("tcp", i, "extra_delay"),
                f"{fmt_duration(t.extra_delay)}: the testbed holds at most"
                f" {fmt_duration(MAX_TESTBED_DELAY_NS)}",
            )
    for j, c in enumerate(sc.cbr):
        if c.tag > 63:
            raise TestbedLimitError(("cbr", j, "tag"), f"{c.tag} is not a DSCP value (0-63)")
        if c.app is not None:
            continue
        if c.size > TESTBED_MTU:
            raise TestbedLimitError(
                ("cbr", j, "size"),
                f"{c.size} B: above the testbed's {TESTBED_MTU}-byte MTU, where the kernel"
                " would send it in IP fragments (the simulator sends one packet); at most"
                f" {TESTBED_MTU} B",
            )
        if c.interval < MIN_TESTBED_CBR_INTERVAL_NS:
            raise TestbedLimitError(
                ("cbr", j, "interval"),
                f"{fmt_duration(c.interval)}: below what a userspace sender can keep; the"
                f" testbed takes at least {fmt_duration(MIN_TESTBED_CBR_INTERVAL_NS)}",
            )
        for field in ("interval", "jitter"):
            v = getattr(c, field)
            if v > sc.duration:
                raise TestbedLimitError(
                    ("cbr", j, field),
                    f"{fmt_duration(v)} is longer than the run ({fmt_duration(sc.duration)})",
                )


def _kernel_offers() -> str:
    """The congestion controls the testbed can take from this kernel, as words."""
    avail = set(available_congestion_controls())
    names = [k for k in dict.fromkeys(KERNEL_CC.values()) if k in avail] or ["reno", "cubic", "bbr"]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def available_congestion_controls() -> list[str]:
    path = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    return path.read_text().split() if path.exists() else []


def check_ready(scenario: Scenario) -> dict[Any, str]:
    check_testbed(scenario)
    if os.geteuid() != 0:
        raise EmulationError("emulation needs root (network namespaces); run it with sudo")
    for tool in ("ip", "ethtool"):
        if shutil.which(tool) is None:
            raise EmulationError(f"{tool} not found; ./setup.sh installs iproute2 and ethtool")
    from .endpoints import find_emulator

    find_emulator()  # before anything is created, not when the first trial starts
    return kernel_congestion_controls(scenario)


def kernel_congestion_controls(scenario: Scenario) -> dict[Any, str]:
    """The kernel's name of each TCP flow's congestion control (keys ``i``) and each web
    group's (keys ``("web", g)``); a :class:`TestbedLimitError` at ``tcp[i].cc`` or
    ``web[g].tcp.cc`` for one this kernel does not offer."""
    avail = available_congestion_controls()
    kernel_cc: dict[Any, str] = {}
    flows = [((i,), ("tcp", i, "cc"), t.cc) for i, t in enumerate(scenario.tcp)]
    flows += [(("web", g), ("web", g, "tcp", "cc"), w.tcp.cc) for g, w in enumerate(scenario.web)]
    for key, where, cc in flows:
        k = KERNEL_CC.get(cc)
        if k is None or k not in avail or cc in SCALABLE_CC:
            raise TestbedLimitError(
                where,
                f"{cc!r} is not available in this kernel; it offers: {', '.join(avail) or 'none'}",
            )
        kernel_cc[key if len(key) > 1 else key[0]] = k
    return kernel_cc
