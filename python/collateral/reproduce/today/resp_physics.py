"""What the responsiveness study's links allow, from their parameters alone: the probes'
round trip on the empty path, the standing queue a drop-tail buffer of k BDP keeps under
CUBIC (at least) and can hold (at most), the wait of a sparse probe in a flow-queuing
scheduler, and what a PI controller or DualPI2's L queue leaves. Each bound turns into
an RPM bound and a DSLReports grade band. The claims state these as what the model
predicts, so that a claim that differs is a surprise, not physics."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .links_physics import CUBIC_BETA
from .physics import ACK_BYTES, ACK_EVERY, DATA_BYTES

#: RRUL's flows each way (collateral_model::rrul: four downloads and four uploads), so
#: each direction carries 4 bulk data flows and the 4 ACK flows of the other way's.
BULK = 4
#: RRUL's UDP probe (irtt's 60 B header + 28 B of IP and UDP; rrul.rs) and its probes
#: per direction (EF, CS1, BE and the ping: four, staggered by a quarter interval).
PROBE_BYTES, PROBES = 88, 4
#: Drop-tail's smallest limit (packets): below 4 a single flow's burst overflows it
#: and the buffer is no longer "k BDP" but a drop on nearly every round trip.
MIN_LIMIT = 4
#: The buffer sizes studied, in BDPs of each direction.
BDPS = (0.5, 1.0, 2.0, 4.0)
#: PIE's and DualPI2's Classic target (Linux defaults, RFC 8033 §5.1 and RFC 9332 §A.1).
PI_TARGET_S = 0.015
#: DualPI2's L-queue step threshold (Linux default) and its WRR scheduler's C share
#: (c_protection 10 %, collateral_queue::dualpi2): an L-backlog lets a C packet out after
#: at most (1 - 0.1) / 0.1 = 9 full-size L packets (the credit starts at -0.8 MTU and
#: gains 0.1 per L byte sent while C waits).
STEP_S, WRR_L_PACKETS, C_PROTECTION = 1e-3, 9, 0.10
#: DSLReports' bufferbloat grades (FAQ 17930; collateral_model::scores::grade): upper
#: bounds of the latency increase (ms, exclusive), best first; beyond: F.
GRADE_BOUNDS_MS = ((5.0, "A+"), (30.0, "A"), (60.0, "B"), (200.0, "C"), (400.0, "D"))


def grade(increase_s: float) -> str:
    ms = increase_s * 1e3
    return next((g for b, g in GRADE_BOUNDS_MS if ms < b), "F")


def grades_between(lo_s: float, hi_s: float) -> list[str]:
    """The grades a latency increase in [lo_s, hi_s] can have, best first."""
    order = [g for _, g in GRADE_BOUNDS_MS] + ["F"]
    return order[order.index(grade(lo_s)) : order.index(grade(hi_s)) + 1]


@dataclass(frozen=True)
class Link:
    """One access link of the experiment (its file states the same numbers)."""

    down_bps: float
    up_bps: float
    overhead: int  # framing bytes per packet
    atm: bool  # 48-byte payloads in 53-byte cells
    rtt_s: float

    def rate(self, d: str) -> float:
        return self.down_bps if d == "down" else self.up_bps

    def wire_s(self, ip_bytes: float, d: str) -> float:
        """A packet of ``ip_bytes``' time on the wire, framing (and cells) included."""
        b = ip_bytes + self.overhead
        return (math.ceil(b / 48) * 53 if self.atm else b) * 8 / self.rate(d)

    def bdp_packets(self, d: str) -> float:
        """One BDP (the direction's rate x the base RTT) in full-size packets."""
        return self.rate(d) * self.rtt_s / 8 / DATA_BYTES

    def limit(self, k: float, d: str) -> int:
        """Drop-tail's limit for k BDP: the nearest packet count, at least MIN_LIMIT."""
        return max(MIN_LIMIT, math.floor(k * self.bdp_packets(d) + 0.5))

    def base_s(self) -> float:
        """A probe's round trip on the empty path: the base RTT and the probe's own
        serialisation each way."""
        return self.rtt_s + sum(self.wire_s(PROBE_BYTES, d) for d in ("down", "up"))

    # --- drop-tail -------------------------------------------------------------------
    def dt_queue_hi_s(self, k: float) -> float:
        """The most a probe can wait behind drop-tail, both ways: a full buffer of
        full-size packets and the packet in service (the limit excludes it)."""
        return sum((self.limit(k, d) + 1) * self.wire_s(DATA_BYTES, d) for d in ("down", "up"))

    def dt_queue_lo_s(self, k: float) -> float:
        """The least standing queue the four CUBIC downloads leave downstream. Their
        round trip is the base RTT plus the upstream queue their ACKs wait in (at most
        full: ``dt_up_hi_s``), so their pipe holds BDP' = rate x that; at a loss their
        windows total at most BDP' + buffer, and even if all of them cut at once they
        keep β of it: β(B + BDP') - BDP' stays queued (none if negative). The larger the
        upstream queue, the smaller this bound, so taking it full keeps it a bound. The
        upstream, where the uploads share a small buffer with the downloads' ACKs and
        time out on slow lines, is counted as 0."""
        bdp = self.down_bps * (self.rtt_s + self.dt_up_hi_s(k)) / 8 / DATA_BYTES
        q = max(0.0, CUBIC_BETA * (self.limit(k, "down") + bdp) - bdp)
        return q * DATA_BYTES * 8 / self.down_bps

    def dt_up_hi_s(self, k: float) -> float:
        return (self.limit(k, "up") + 1) * self.wire_s(DATA_BYTES, "up")

    # --- flow queuing ----------------------------------------------------------------
    def sparse_wait_s(self) -> float:
        """The most a sparse probe waits in FQ-CoDel or CAKE, both ways: the packet in
        service and one packet of each flow ahead in the round (four bulk data flows
        and the other way's four ACK flows), and the other three probes. A sparse flow
        is served before it builds a queue, so CoDel's target does not add to it."""
        return sum(
            (BULK + 1) * self.wire_s(DATA_BYTES, d)
            + BULK * self.wire_s(ACK_BYTES, d)
            + (PROBES - 1) * self.wire_s(PROBE_BYTES, d)
            for d in ("down", "up")
        )

    # --- PI controllers --------------------------------------------------------------
    def pi_wait_s(self) -> float:
        """What PIE or DualPI2's Classic queue leaves a probe, both ways: the controller
        holds the queue's delay near its 15 ms target, with twice that allowed for its
        swings, and neither drops while under two MTUs are queued (so two full-size
        packets and the one in service where a packet takes longer than the target)."""
        return sum(self._pi_dir(d) for d in ("down", "up"))

    def _pi_dir(self, d: str) -> float:
        return 2 * PI_TARGET_S + 3 * self.wire_s(DATA_BYTES, d)

    def acks_bps(self, d: str) -> float:
        """The pure ACKs going ``d`` for the other way's four flows at its line rate:
        one per ACK_EVERY full segments, each on the wire."""
        other = "up" if d == "down" else "down"
        segs = self.rate(other) / (self.wire_s(DATA_BYTES, other) * self.rate(other))
        return segs / ACK_EVERY * self.wire_s(ACK_BYTES, d) * self.rate(d)

    def c_overloaded(self, d: str) -> bool:
        """Whether DualPI2's C queue gets more than its WRR share under L4S load: pure
        ACKs are Not-ECT (Classic) even for Prague flows, so the other way's ACKs share
        the C queue with the probes."""
        return self.acks_bps(d) > C_PROTECTION * self.rate(d)

    def l4s_wait_s(self) -> float:
        """What DualPI2 leaves a Not-ECT probe beside L4S load, both ways. Where the C
        queue holds only probes and a trickle of ACKs, the probe waits for the L packets
        the WRR sends first (at most nine full-size ones), the packet in service and the
        L queue's 1 ms step. Where the ACKs alone exceed C's 10 % share, the C queue
        backs up and PI2 holds it near its target: the PI bound (``pi_wait_s``)."""
        return sum(
            self._pi_dir(d)
            if self.c_overloaded(d)
            else STEP_S + (WRR_L_PACKETS + 1) * self.wire_s(DATA_BYTES, d)
            for d in ("down", "up")
        )


def rpm_at_most(latency_s: float) -> float:
    """The RPM of round trips none shorter than ``latency_s``: 60 000 / latency in ms
    (the draft's foreign and self terms both bounded so)."""
    return 60.0 / latency_s


def rpm_at_least_foreign(latency_s: float) -> float:
    """The RPM when every foreign probe is at most ``latency_s``: its foreign term is at
    least 60 000 / latency (ms), and RPM = (foreign + self) / 2 with self ≥ 0."""
    return 30.0 / latency_s


LINKS: dict[str, Link] = {
    # PPPoA VC-MUX (10 B) in ATM cells both ways; an interleaved line adds 10-20 ms
    # each way to a nearby server: 50 ms.
    "ADSL1": Link(1.5e6, 256e3, 10, True, 0.050),
    # DOCSIS-like framing (Ethernet header and CRC, CAKE's `docsis`), a nearby server.
    "cable": Link(50e6, 10e6, 18, False, 0.020),
    # Ethernet header and CRC on a GPON-like line, a server in the same city.
    "fibre": Link(1000e6, 100e6, 18, False, 0.010),
}
