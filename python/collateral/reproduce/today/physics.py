"""What today-queues' links allow, computed from the links alone: a packet's time on the
wire (framing and ATM cells included), how long drop-tail's limit takes to drain, the
call's rate on the wire beside its max-min fair share of a direction, and the wait a
sparse flow can meet in a flow-queuing scheduler. The claims state these as what the
model predicts, so that a claim that differs is a surprise, not physics."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...spec import PROFILE_SETTINGS

#: G.711 (the model's ``g711`` profile): 180 B of payload + 28 B of IP and UDP every 20 ms.
CALL_IP_BYTES, CALL_GAP_S = 180 + 28, 0.020
#: Quake 3 (``quake3``): 40 + Exp(40) B of payload (mean 80) + 28 B every 50 ms on average;
#: its largest packet 300 + 28 B.
GAME_IP_BYTES, GAME_MAX_IP_BYTES, GAME_GAP_S = 80 + 28, 300 + 28, 0.050
#: The Linux 6 stack's (the experiment's TCP) full data packet and pure ACK (IP bytes)
#: and its ACK ratio, as the core states them.
_LINUX6 = PROFILE_SETTINGS["linux-6"]
DATA_BYTES, ACK_BYTES, ACK_EVERY = _LINUX6["data_bytes"], _LINUX6["ack_bytes"], _LINUX6["ack_every"]
#: DualPI2's step threshold (Linux default) and Prague's minimum window (segments).
STEP_S, PRAGUE_MIN_CWND = 1e-3, 2


@dataclass(frozen=True)
class Link:
    """One access link of the experiment (its file states the same numbers)."""

    down_bps: float
    up_bps: float
    overhead: int  # framing bytes per packet
    atm: bool  # 48-byte cells of 53 bytes
    rtt_s: float
    limit_down: int  # drop-tail's 1 BDP, packets
    limit_up: int

    def rate(self, direction: str) -> float:
        return self.down_bps if direction == "down" else self.up_bps

    def wire_bytes(self, ip_bytes: float) -> float:
        """A packet of ``ip_bytes`` (a mean's fraction rounded up) on this link's wire:
        the core's framing arithmetic, as the link and the router count it."""
        from ... import _native

        return _native.wire_bytes(math.ceil(ip_bytes), self.overhead, self.atm)

    def wire_s(self, ip_bytes: float, direction: str) -> float:
        """One packet of ``ip_bytes``' time on the wire."""
        return self.wire_bytes(ip_bytes) * 8 / self.rate(direction)

    def wire_bps(self, ip_bytes: float, gap_s: float) -> float:
        """A flow of ``ip_bytes`` every ``gap_s``' rate on the wire."""
        return self.wire_bytes(ip_bytes) * 8 / gap_s


LINKS: dict[str, Link] = {
    "ADSL1": Link(1.5e6, 256e3, 10, True, 0.050, 7, 4),
    "cable": Link(100e6, 20e6, 18, False, 0.020, 167, 34),
}


def mtu_s(link: str, direction: str = "down") -> float:
    """A full-size packet's time on the wire: the wait behind the packet in service that
    no queue removes."""
    return LINKS[link].wire_s(DATA_BYTES, direction)


def drain_s(link: str, direction: str) -> float:
    """Drop-tail's limit (1 BDP, in full-size packets) over the rate: the longest wait
    behind a full queue."""
    lk = LINKS[link]
    n = lk.limit_down if direction == "down" else lk.limit_up
    return n * mtu_s(link, direction)


def acks_bps(link: str) -> float:
    """All the downloads' ACKs at the line rate: one ACK per ACK_EVERY full segments
    arriving downstream, each ACK on the upstream wire."""
    lk = LINKS[link]
    segs = lk.down_bps / (lk.wire_bytes(DATA_BYTES) * 8)
    return segs / ACK_EVERY * lk.wire_bytes(ACK_BYTES) * 8


def max_min_share(capacity: float, demands: list[float], i: int) -> float:
    """Flow ``i``'s max-min fair share of ``capacity`` (water-filling; a demand of inf
    is a backlogged flow)."""
    left, n = capacity, len(demands)
    for d in sorted(demands):
        level = left / n
        if d > level:
            return min(demands[i], level)
        left, n = left - d, n - 1
    return demands[i]


def call_share(link: str, direction: str, downloads: int, uploads: int) -> tuple[float, float]:
    """(the call's rate on the wire, its max-min fair share of the direction) beside the
    game, the bulk flows sending that way (backlogged) and the ACK flows going that way
    (the downloads' ACKs at the line rate, split evenly; the upload's ACKs downstream are
    too small to matter and count as a downstream flow of nearly no demand)."""
    lk = LINKS[link]
    call = lk.wire_bps(CALL_IP_BYTES, CALL_GAP_S)
    game = lk.wire_bps(GAME_IP_BYTES, GAME_GAP_S)
    if direction == "down":
        bulk, acks = downloads, [0.0] * uploads
    else:
        bulk, acks = uploads, [acks_bps(link) / downloads] * downloads
    demands = [call, game, *acks, *[math.inf] * bulk]
    return call, max_min_share(lk.rate(direction), demands, 0)


def sparse_wait_s(link: str, direction: str, bulk: int) -> float:
    """The longest a sparse flow's packet should wait in a flow-queuing scheduler: the
    packet in service and one quantum (a full-size packet) of each other backlogged
    flow in the round ahead of it (FQ-CoDel's old-flows list; CAKE serves sparse flows
    first, so it should stay near the first term), plus the game's largest packet."""
    lk = LINKS[link]
    return max(bulk, 1) * mtu_s(link, direction) + lk.wire_s(GAME_MAX_IP_BYTES, direction)


def l4s_wait_s(link: str, flows: int) -> float:
    """The L queue's expected p95 wait downstream with ``flows`` Prague downloads: the
    1 ms step or the standing queue that the flows' minimum windows leave beyond one
    BDP (whichever is larger), plus one RTT of additive increase (a packet per flow)
    and the packet in service."""
    lk = LINKS[link]
    m = mtu_s(link)
    bdp = lk.down_bps * lk.rtt_s / (lk.wire_bytes(DATA_BYTES) * 8)
    standing = max(0.0, flows * PRAGUE_MIN_CWND - bdp) * m
    return max(STEP_S, standing) + (flows + 1) * m
