"""What today-links' links allow, from their parameters alone: each link's nominal and
lowest rate, the delay it adds by itself (a satellite's per-interval path delay and
handover spike, a DOCSIS upstream's request–grant wait), a drop-tail buffer's drain time
and the wait a sparse flow can meet in a flow-queuing scheduler. The claims state these
as what the model predicts, so that a claim that differs is a surprise, not physics."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...spec.docsis import DocsisSpec
from ...spec.leo import LEO_PRESETS, LeoSpec
from .physics import CALL_GAP_S, DATA_BYTES, GAME_MAX_IP_BYTES

#: Mahimahi's delivery opportunity (collateral_model::clock), the unit a trace's link
#: sends in.
OPPORTUNITY_BYTES = 1504
#: Drop-tail's limit on every link (the experiment file says why).
DROP_TAIL_BYTES = 256_000
#: The video call's largest packet (collateral_model::media: 1200 B of payload, the RTP
#: header's 12 and IP and UDP's 28).
VIDEO_MAX_IP_BYTES = 1200 + 12 + 28
#: CUBIC's multiplicative decrease (Linux: 717/1024): after a loss its window, and the
#: drop-tail queue it had filled, shrink by at most 30 %.
CUBIC_BETA = 717 / 1024

_STARLINK = {d: LeoSpec(**v) for d, v in LEO_PRESETS["starlink"].items()}
_DOCSIS = DocsisSpec()


@dataclass(frozen=True)
class LinkModel:
    """One link of the experiment, as its file sets it up."""

    rtt_s: float
    nominal_bps: tuple[float, float]  # (down, up): what CAKE is told, the trace's mean
    floor_bps: tuple[float, float]  # the lowest rate the link runs at
    overhead: int  # framing bytes per packet on the wire
    bulk: tuple[int, int]  # bulk TCP senders (down, up)
    video: tuple[int, int] = (1, 0)  # the video call's direction
    trace: bool = False  # a delivery trace: a full-size packet takes one opportunity
    own_delay_s: tuple[float, float] = (0.0, 0.0)  # the most the link adds when idle
    mean_grant_wait_s: float = 0.0  # a DOCSIS upstream's mean wait from an idle modem
    spike_s: float = 0.0  # a satellite handover's extra delay
    spike_for_s: float = 0.0
    loss_for_s: float = 0.0
    interval_s: float = math.inf  # reconfigurations: every interval_s from first_s
    first_s: float = math.inf

    def index(self, direction: str) -> int:
        return 0 if direction == "down" else 1

    def wire_s(self, ip_bytes: float, bps: float) -> float:
        return (ip_bytes + self.overhead) * 8 / bps

    def full_bytes(self) -> float:
        """A full-size packet's bytes on the wire (a trace's: the opportunity it takes)."""
        return OPPORTUNITY_BYTES if self.trace else DATA_BYTES + self.overhead

    def packet_s(self, direction: str) -> float:
        """A full-size packet's time on the wire at the link's lowest rate."""
        return self.full_bytes() * 8 / self.floor_bps[self.index(direction)]

    def drain_s(self, direction: str, floor: bool = False) -> float:
        """Drop-tail's 256 kB of full-size packets over the nominal (or lowest) rate."""
        i = self.index(direction)
        rate = self.floor_bps[i] if floor else self.nominal_bps[i]
        return DROP_TAIL_BYTES / DATA_BYTES * self.full_bytes() * 8 / rate

    def sparse_wait_s(self, direction: str) -> float:
        """The longest a sparse flow's packet should wait in FQ-CoDel or CAKE at the
        link's lowest rate: the packet in service and one full-size quantum of each
        backlogged flow ahead of it in the round, the video's largest packet (GCC may
        keep its queue backlogged where the rate is low), the game's largest packet, and
        what the link adds by itself."""
        i = self.index(direction)
        n = self.bulk[i] + 1
        game = self.wire_s(GAME_MAX_IP_BYTES, self.floor_bps[i])
        video = self.video[i] * self.wire_s(VIDEO_MAX_IP_BYTES, self.floor_bps[i])
        return n * self.packet_s(direction) + video + game + self.own_delay_s[i]

    def reconfigurations(self, start_s: float, end_s: float) -> int:
        """Reconfigurations (satellite handovers) in [start_s, end_s)."""
        if not math.isfinite(self.first_s):
            return 0
        k0 = max(0, math.ceil((start_s - self.first_s) / self.interval_s))
        k1 = math.ceil((end_s - self.first_s) / self.interval_s)
        return max(0, k1 - k0)

    def burst_losses(self, start_s: float, end_s: float) -> float:
        """The call's packets a loss burst takes per direction: what leaves the queue
        within loss_for of each reconfiguration, one packet per call gap."""
        return self.reconfigurations(start_s, end_s) * self.loss_for_s / CALL_GAP_S


def docsis_grant_wait_s(d: DocsisSpec = _DOCSIS) -> float:
    """The longest a packet reaching an idle DOCSIS modem waits for its grant: up to one
    MAP interval to the next one, a contention request at a random point of it (up to
    one more), ``request_grant`` to the first interval that may grant it (rounded up to
    an interval start), and the grant's random position in that interval (up to one):
    2 + 2 + 2 + 2 = 8 ms with the defaults."""
    m, rg = d.map_interval / 1e9, d.request_grant / 1e9
    return m + math.ceil((m + rg) / m - 1e-9) * m + m


def docsis_mean_grant_wait_s(d: DocsisSpec = _DOCSIS) -> float:
    """The mean wait of a packet reaching an idle DOCSIS modem, its own send time aside:
    2 M + D (M the MAP interval, D the request-grant delay; the mean worked out by hand in
    collateral_model::docsis, whose lone-packet test measures 5.54 ms with the send
    time): 5.5 ms with the defaults."""
    return 2 * d.map_interval / 1e9 + d.request_grant / 1e9


#: CAKE's COBALT target (Linux sch_cake's default ``target 5ms``).
COBALT_TARGET_S = 0.005


def _leo(direction: str) -> LeoSpec:
    return _STARLINK[direction]


LINKS: dict[str, LinkModel] = {
    # The walks' bounds (the experiment file's generator command lines): 1-40 Mbit/s
    # down, 0.5-8 up; the nominal rates are the traces' means.
    "cellular": LinkModel(
        rtt_s=0.040,
        nominal_bps=(10_659_149, 2_951_450),
        floor_bps=(1e6, 0.5e6),
        overhead=0,
        bulk=(2, 0),
        trace=True,
    ),
    "starlink": LinkModel(
        rtt_s=0.030,
        nominal_bps=(_leo("down").mean_bps, _leo("up").mean_bps),
        floor_bps=(_leo("down").rate_min, _leo("up").rate_min),
        overhead=0,
        bulk=(2, 0),
        own_delay_s=(_leo("down").delay_max / 1e9, _leo("up").delay_max / 1e9),
        spike_s=_leo("down").spike / 1e9,
        spike_for_s=_leo("down").spike_for / 1e9,
        loss_for_s=_leo("down").loss_for / 1e9,
        interval_s=_leo("down").interval / 1e9,
        first_s=_leo("down").first / 1e9,
    ),
    "docsis": LinkModel(
        rtt_s=0.020,
        nominal_bps=(100e6, 20e6),
        floor_bps=(100e6, 20e6),
        overhead=18,
        bulk=(2, 1),
        own_delay_s=(0.0, docsis_grant_wait_s()),
        mean_grant_wait_s=docsis_mean_grant_wait_s(),
    ),
}
