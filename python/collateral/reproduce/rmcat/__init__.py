"""RFC 8867's wired test cases for congestion control of interactive real-time media, each
run with GCC, NADA and SCReAM and judged by RFC 8868's criteria (computed by the core's
media summary): ``rmcat-capacity`` (§5.1, one call on stepping capacity),
``rmcat-flows`` (§5.2 two calls on stepping capacity, §5.4 three calls with the same and
staggered starts), ``rmcat-feedback`` (§5.3, a call each way, each one's feedback on the
other's congested link), ``rmcat-tcp`` (§5.6, a call beside one long TCP flow under
drop-tail 300 and 1000 ms, FQ-CoDel and CAKE) and ``rmcat-short-tcp`` (§5.7, two calls
beside ten short-TCP sources). The set-ups follow cisco/ns3-rmcat's test suite; the
experiment files (``experiments/rmcat-*.toml``) state them.

ns3-rmcat publishes no results to compare with: its README shows one example log line,
its wired test cases run the scenarios and assert nothing of the rates or delays, and
its tools only plot a run of one's own. Where its set-up differs from ours (its
``test/rmcat-wired-test-suite.cc``, ``model/topo/wired-topo.cc``): its "Mbps" are 2^20
bit/s; it makes the capacity steps with UDP CBR cross traffic of 4 Mbps − x on a 4 Mbps
link whose drop-tail queue holds 300 ms at 4 Mbps (157 kB) and is shared with that CBR, so
a call there never waits more than 300 ms, where here the link itself steps and the
94 kB queue holds 1.25 s at 0.6 Mbit/s; its TCP receiver ACKs every segment.
"""

from __future__ import annotations

from functools import partial

from ..claims import Figure
from .claims import (
    TCP_QUEUES,
    capacity_claims,
    feedback_claims,
    flows_claims,
    short_tcp_claims,
    tcp_claims,
)
from .figure import draw

__all__ = ["FIGURES"]

#: Quick mode: one trial (the runs are seconds of the core's time each).
QUICK = (("experiment.trials", 1),)

_CAPTION = (
    "Each panel: one trial's calls, their received media rate (solid, per 0.5 s bin) and"
    " their controller's target (dotted) against the capacity of their direction (black;"
    " dashed for the uplink), columns GCC, NADA and SCReAM (RFC 8593's synthetic encoder,"
    " 150 kbit/s to 1.5 Mbit/s, RFC 8888 feedback every 50 ms). "
)

FIGURES: list[Figure] = [
    Figure(
        "rmcat-capacity",
        "RFC 8867 §5.1",
        "one call on a capacity stepping 1 → 2.5 → 0.6 → 1 Mbit/s: GCC, NADA, SCReAM",
        "rmcat-capacity",
        partial(
            draw,
            what="one call downstream, capacity 1 / 2.5 / 0.6 / 1 Mbit/s from 0 / 40 / 60 / 80 s,"
            " RTT 100 ms, drop-tail 94 kB",
            caption=_CAPTION + "One call downstream; drop-tail 94 kB (300 ms at 2.5 Mbit/s).",
        ),
        capacity_claims,
        QUICK,
    ),
    Figure(
        "rmcat-flows",
        "RFC 8867 §5.2, §5.4",
        "two calls on stepping capacity; three calls on 3.5 Mbit/s, same and staggered starts",
        "rmcat-flows",
        partial(
            draw,
            what="calls of one controller sharing the downlink: two on 4 / 2 / 3.5 / 1 / 2 Mbit/s,"
            " three on 3.5 Mbit/s from 0 s and from 0 / 20 / 40 s",
            caption=_CAPTION + "Rows: two calls on stepping capacity (§5.2), three calls from"
            " 0 s (§5.4), three calls from 0, 20 and 40 s (grey: the warm-up before the"
            " measured part).",
            order=("two-steps", "three-same", "three-staggered"),
        ),
        flows_claims,
        QUICK,
    ),
    Figure(
        "rmcat-feedback",
        "RFC 8867 §5.3",
        "a call each way, each one's feedback on the other's congested link",
        "rmcat-feedback",
        partial(
            draw,
            what="call 0 down (2 / 1 / 0.5 / 2 Mbit/s at 0 / 20 / 40 / 60 s), call 1 up"
            " (2 / 0.8 / 2 Mbit/s at 0 / 35 / 70 s)",
            caption=_CAPTION + "Call 0 goes down, call 1 up; each one's feedback crosses the"
            " other's bottleneck; drop-tail 75 kB each way.",
        ),
        feedback_claims,
        QUICK,
    ),
    Figure(
        "rmcat-tcp",
        "RFC 8867 §5.6",
        "a call beside one long NewReno flow from 60 s: drop-tail 300 / 1000 ms, FQ-CoDel, CAKE",
        "rmcat-tcp",
        partial(
            draw,
            what="one call and one NewReno download from 60 s on 2 Mbit/s, RTT 100 ms, per queue",
            caption=_CAPTION + "Rows: drop-tail 75 kB (300 ms) and 250 kB (1000 ms), FQ-CoDel,"
            " CAKE at 2 Mbit/s; the dashed grey line is the TCP flow's start, grey the"
            " warm-up before the measured part (from 80 s).",
            order=tuple(q for q, _ in TCP_QUEUES),
        ),
        tcp_claims,
        QUICK,
    ),
    Figure(
        "rmcat-short-tcp",
        "RFC 8867 §5.7",
        "two calls beside ten short-TCP sources (30-50 kB downloads, 10 s mean idle) on 2 Mbit/s",
        "rmcat-short-tcp",
        partial(
            draw,
            what="two calls beside ten short-TCP sources, 2 Mbit/s, drop-tail 75 kB",
            caption=_CAPTION + "Two calls downstream beside ten web users fetching one"
            " 30-50 kB object each with exponential idle times of mean 10 s.",
        ),
        short_tcp_claims,
        QUICK,
    ),
]
