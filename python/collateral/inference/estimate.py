"""The bottleneck of a measured run, inferred from its probes and its load (issue 32):
base RTT, capacity per direction, which discipline is in charge (FIFO or AQM), and the
FIFO's buffer in bytes and in ms — each with an interval, and a line for what could not
be inferred and why.

The physics each estimate rests on:

- **Base RTT.** Idle probes cross empty queues: their minimum is the propagation delay
  plus the probe's own serialisation at each direction's rate, which is taken off once
  the capacities are known (an 88-byte irtt probe costs 2.75 ms at 256 kbit/s).
- **Capacity.** A saturated bottleneck sends full-size packets back to back. A
  receiver's count lags what crossed the link by the data it holds behind a lost packet
  until the retransmission arrives (at 256 kbit/s, a burst of several seconds' worth),
  and a tool stops counting at the test's end, whatever is held then (iperf3's server
  did so behind ADSL1's 60 kB FIFO, whose queue drained for 3 s after its last count).
  So a count is short, at any moment and at the end, by up to about a window (the rate
  times the loaded RTT). Where that is at most 3 % of the settled stretch's bytes, the
  estimate is the rate over the whole settled stretch to the load's end; else the slope
  of the count over the settled stretch, the median of the slopes between every two
  interval ends (Theil and Sen's estimator), which the few moments a count lags do not
  move (the least rate from a settled moment to the end, used before, read ADSL1's
  upstream 23 % low when the end was short; a least-squares line, tried next, leant on a
  lag near either end: a 50/10 upload's one late second put it 1.2 % low). The
  estimate's interval holds that slope's 95 % interval and reaches to the median of the
  rates from each settled moment to the end. It is scaled by the wire size of a full
  packet over its payload (1500 / 1448: IPv4, TCP with timestamps, MTU 1500) and the
  rate of the probes the line carried (those answered) is added. A dropped packet never
  used the link and its retransmission is counted once, so drops do not bias it. A load
  that leaves the line idle now and then (four CUBIC flows under CAKE on a 1.5 Mbit/s
  line filled about 96 % of it) shows as a lower capacity: nothing in the counts tells
  the two apart.
- **FIFO or AQM.** Under a long-lived load a drop-tail queue stays near full: CUBIC
  backs off to 0.7 of its window, so the probes' queueing delay sits between about
  0.7 and 1 of its ceiling (median over 99th percentile ≥ 0.65), and it never passes
  that ceiling, not even at the load's start. An AQM lets the queue overshoot as a load
  starts (CoDel drops only after an interval above its target, PIE allows a burst) and
  then holds the delay near its target (CoDel's 5 ms, PIE's 15 ms): a start that peaks
  over 1.2 times the settled p99 is an AQM's, whatever the settled shape (at 50 Mbit/s
  and more four CUBIC flows hold CoDel's 5 ms so steadily that the shape alone looks like
  a full FIFO's). A flow-queueing one (FQ-CoDel, CAKE) gives the sparse probes their
  own queue, so they see almost none (median under 2 ms, or one and a half full
  packets' time on a slow line, where a probe still waits for the packet being sent)
  while the link is full.
- **Buffer (FIFO only).** The ceiling of the queueing delay (its 99th percentile) times
  the capacity: the bytes ahead of a probe in a full queue, in IP bytes — full packets,
  and the probes sent in that time, each costing the line its own framed size.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .observations import DIRECTIONS, InferenceProblem, Observations

#: Wire bytes of a full-size packet over its TCP payload (IPv4 + TCP timestamps).
FULL_PACKET, FULL_PAYLOAD = 1500, 1448
#: Parts of a load left out of its steady state: its start (slow start, and iperf3's
#: whole-second start stamp), its end; after a load, a second of stamping error, then
#: the queue's drain (:func:`drain_s`), before "idle".
SETTLE_S, TAIL_S, DRAIN_S = 2.0, 0.5, 1.0
#: A probe within this of the path's least round trip met empty queues.
BACK_S = 0.003
#: Before a load's stamped start: a tool may stamp it up to a second off either way.
LEAD_S = 1.0
#: The shortest stretch of a load a delivery rate is taken over, to its end.
MIN_TAIL_S = 2.0
#: Above this share of the settled bytes possibly held back, the count's fitted slope is used.
HELD_SHARE = 0.03
#: Median queueing delay below which the probes had a queue of their own (flow queueing),
#: or 1.5 full packets' time on the line if more.
FQ_MEDIAN_S = 0.002
#: Median over 99th percentile of the queueing delay at or above which a FIFO is full.
FIFO_SHAPE = 0.65
#: A load's start that peaks above this times the settled ceiling (its p99) overshot it:
#: a drop-tail queue's delay never passes its ceiling, an AQM's does (CoDel lets the
#: queue grow for an interval before its first drop, PIE has a burst allowance).
OVERSHOOT = 1.2
#: Fewer samples than this in a window: no estimate from it.
MIN_SAMPLES = 20


@dataclass(frozen=True)
class Framing:
    """The link's framing when the user knows it (an ADSL line is ATM): ``overhead``
    bytes added to each packet, then ATM's 48-byte cells of 53 bytes. Fixed-size probes
    beside full-size load packets cannot reveal it, but it sets how a line rate relates
    to the IP rate the load shows and what a small probe costs to send."""

    overhead: int = 0
    atm: bool = False

    def wire(self, ip_bytes: int) -> int:
        """Bytes on the line: the core's framing arithmetic (the link's and the router's)."""
        from .. import _native

        return _native.wire_bytes(ip_bytes, self.overhead, self.atm)

    def ip_share(self) -> float:
        """IP bytes of a full packet per byte on the line."""
        return FULL_PACKET / self.wire(FULL_PACKET)


@dataclass
class Estimate:
    """One inferred quantity: ``value`` (None: not inferred, ``why`` says why), its
    interval ``low``..``high`` and how it was found."""

    name: str
    value: float | str | None
    unit: str = ""
    low: float | None = None
    high: float | None = None
    how: str = ""
    why: str = ""


@dataclass
class Inference:
    """Everything inferred about one run, and the lines of what was not."""

    source: str
    estimates: list[Estimate]
    not_inferred: list[str]
    #: The framing the user gave (None: none given; capacities are IP rates).
    framing: Framing | None = None

    def link_framing(self) -> dict[str, Any]:
        """The framing as a scenario's direction takes it (empty without one)."""
        f = self.framing
        return {} if f is None else {"framing": {"overhead": f"{f.overhead}B", "atm": f.atm}}

    def get(self, name: str) -> Estimate:
        return next(e for e in self.estimates if e.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "framing": None if self.framing is None else asdict(self.framing),
            "estimates": [asdict(e) for e in self.estimates],
            "not_inferred": self.not_inferred,
        }


def _mask(t: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
    m = np.zeros(t.shape, bool)
    for a, b in spans:
        m |= (t >= a) & (t < b)
    return m


def _steady(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(a + SETTLE_S, b - TAIL_S) for a, b in spans if b - TAIL_S > a + SETTLE_S]


def drain_s(obs: Observations, direction: str) -> float:
    """How long after ``direction``'s load its queue may still hold probes back: a load's
    stamped end may be a second early (iperf3 stamps its start in whole seconds), a
    sender may still push what its socket held after the receiver's last interval, and
    then the queue drains — so until the first probe whose round trip is back within
    :data:`BACK_S` of the path's least (or a second plus the worst delay seen, when
    none is)."""
    ok = ~np.isnan(obs.rtt_s)
    inside = _mask(obs.probe_sent_s, obs.windows(direction)) & ok
    if not inside.any():
        return DRAIN_S
    least = float(np.nanmin(obs.rtt_s))
    worst = float(np.max(obs.rtt_s[inside])) - least
    out = 0.0
    for _, b in obs.windows(direction):
        after = ok & (obs.probe_sent_s >= b + DRAIN_S)
        back = obs.probe_sent_s[after & (obs.rtt_s <= least + BACK_S)]
        out = max(out, float(back[0]) - b if len(back) else DRAIN_S + worst)
    return out


def idle_mask(obs: Observations) -> np.ndarray:
    """Probes sent while nothing loaded the link, a drain time away from every load."""
    busy = [(a - LEAD_S, b + drain_s(obs, d)) for d in DIRECTIONS for a, b in obs.windows(d)]
    return ~_mask(obs.probe_sent_s, busy) & ~np.isnan(obs.rtt_s)


def _alone(obs: Observations, direction: str, spans: list[tuple[float, float]]) -> np.ndarray:
    """Probes answered, sent within ``spans`` while the other direction was idle (a
    second before its loads' stamps to its queue's drain after them)."""
    other = "up" if direction == "down" else "down"
    after = drain_s(obs, other)
    clash = _mask(obs.probe_sent_s, [(a - LEAD_S, b + after) for a, b in obs.windows(other)])
    return _mask(obs.probe_sent_s, spans) & ~clash & ~np.isnan(obs.rtt_s)


def start_mask(obs: Observations, direction: str) -> np.ndarray:
    """Probes sent in the first seconds of ``direction``'s loads (their stamps a second
    either way), the other direction idle: where an AQM lets the queue overshoot."""
    return _alone(obs, direction, [(a - LEAD_S, a + SETTLE_S) for a, _ in obs.windows(direction)])


def loaded_mask(obs: Observations, direction: str) -> np.ndarray:
    """Probes sent in the settled part of ``direction``'s load, the other one idle."""
    return _alone(obs, direction, _steady(obs.windows(direction)))


def settled_s(obs: Observations, direction: str) -> float:
    """How long the settled part of ``direction``'s longest load lasted (0: none)."""
    return max([0.0, *(b - a - SETTLE_S for a, b in obs.windows(direction))])


def goodput(obs: Observations, direction: str) -> Estimate:
    """The settled load's delivery rate (TCP payload, bit/s) with its interval; the
    capacity is this scaled to the line."""
    name = f"goodput_{direction}"
    spans = [(a, b) for a, b in obs.windows(direction) if b - a > SETTLE_S + MIN_TAIL_S]
    if not spans:
        return Estimate(name, None, "bit/s", why=f"no {direction}load long enough to settle")
    a, b = max(spans, key=lambda w: w[1] - w[0])
    flows = [f for f in obs.flows if f.direction == direction]
    # The flows report together: their interval ends, a few ms apart, are one moment.
    ends: list[float] = []
    for e in sorted(float(e) for f in flows for e in f.end_s if a < e <= b + 0.05):
        if not ends or e > ends[-1] + 0.05:
            ends.append(e)
        else:
            ends[-1] = e
    cum = np.array([sum(float(f.bytes[f.end_s <= e + 1e-9].sum()) for f in flows) for e in ends])
    ends = np.array(ends)
    # A last interval much shorter than the others runs to the test's end signal, past
    # the last byte (iperf3's receiver): it would count idle time as the link's.
    lengths = np.diff(ends, prepend=a)
    if len(ends) > 2 and lengths[-1] < 0.9 * np.median(lengths):
        ends, cum = ends[:-1], cum[:-1]
    last, got = ends[-1], cum[-1]
    pick = (ends >= a + SETTLE_S) & (ends <= last - MIN_TAIL_S)
    rates = (got - cum[pick]) * 8 / (last - ends[pick])
    if len(rates) < 2:
        return Estimate(name, None, "bit/s", why=f"fewer than two settled {direction} intervals")
    mean = float(rates[0])  # the longest settled stretch
    # What a receiver may hold back: about a window, the rate times the loaded RTT.
    held = mean / 8 * float(np.nanmax(obs.rtt_s[_mask(obs.probe_sent_s, spans)], initial=0))
    share = held / (mean / 8 * (last - ends[pick][0]))
    mid = float(np.median(rates))
    rate, span = mean, [mean, mid]
    if share > HELD_SHARE:
        from scipy.stats import theilslopes

        settled = ends >= a + SETTLE_S
        fit = theilslopes(cum[settled], ends[settled])
        # Its 95 % interval joins the median rate to the end in the estimate's interval.
        rate, span = fit.slope * 8, [fit.slope * 8, fit.low_slope * 8, fit.high_slope * 8, mid]
        how = (
            f"median slope of the count between {int(settled.sum())} settled interval ends"
            f" (what the receiver may hold back is {share:.0%} of the settled stretch's bytes)"
        )
    else:
        how = f"delivery rate over the settled {last - ends[pick][0]:.1f} s to the load's end"
    return Estimate(name, float(rate), "bit/s", float(min(span)), float(max(span)), how)


def capacity(obs: Observations, direction: str, framing: Framing = Framing()) -> Estimate:
    """The goodput scaled from payload to the line's bytes, plus the probes' own rate."""
    g = goodput(obs, direction)
    name = f"capacity_{direction}"
    if not isinstance(g.value, float):
        return Estimate(name, None, "bit/s", why=g.why)
    scale = framing.wire(FULL_PACKET) / FULL_PAYLOAD
    probes = probe_rate(obs, direction, framing)
    value, low, high = (x * scale + probes for x in (g.value, g.low, g.high))  # type: ignore[operator]
    how = f"{g.how}, x {framing.wire(FULL_PACKET)}/{FULL_PAYLOAD}"
    if probes:
        how += f", plus the probes' {probes / 1e3:.1f} kbit/s"
    return Estimate(name, value, "bit/s", low, high, how)


def probe_gap(obs: Observations) -> float:
    """The probes' spacing (s): the median gap between sends (0 with fewer than two)."""
    if len(obs.probe_sent_s) < 2:
        return 0.0
    return float(np.median(np.diff(np.sort(obs.probe_sent_s))))


def load_gap(obs: Observations, direction: str) -> float:
    """The probes' spacing as ``direction``'s line carried them while its load settled:
    :func:`probe_gap` over the share of the probes sent then that were answered. A probe
    the queue dropped never took the line's time (an AQM on a slow line drops many: on
    ADSL1's upstream CoDel answered 61 % of them, and counting every probe sent put the
    capacity 11 % high). With the other direction idle, a loss is this direction's."""
    gap = probe_gap(obs)
    sent = _mask(obs.probe_sent_s, _steady(obs.windows(direction)))
    answered = int((sent & ~np.isnan(obs.rtt_s)).sum())
    if gap <= 0 or not answered:
        return gap
    return gap * int(sent.sum()) / answered


def probe_rate(obs: Observations, direction: str, framing: Framing = Framing()) -> float:
    """The probes' own load on ``direction``'s line (bit/s) while its load settled: they
    share the bottleneck with the flows (irtt's 88-byte probe every 20 ms is 25 % of a
    256 kbit/s ATM upstream)."""
    gap = load_gap(obs, direction)
    if not obs.probe_bytes or gap <= 0:
        return 0.0
    return framing.wire(obs.probe_bytes) * 8 / gap


def base_rtt(
    obs: Observations, caps: dict[str, float | None], framing: Framing = Framing()
) -> Estimate:
    idle = obs.rtt_s[idle_mask(obs)]
    if len(idle) < MIN_SAMPLES:
        return Estimate("base_rtt", None, "s", why=f"{len(idle)} idle probes (need {MIN_SAMPLES})")
    ser = 0.0
    if obs.probe_bytes and all(caps.values()):
        ser = sum(framing.wire(obs.probe_bytes) * 8 / c for c in caps.values())
    low = float(np.min(idle)) - ser
    how = f"minimum of {len(idle)} idle probes"
    if ser:
        how += f", less their serialisation ({ser * 1e3:.2f} ms)"
    return Estimate("base_rtt", low, "s", low, float(np.percentile(idle, 10)) - ser, how)


def queued_ip_bytes(obs: Observations, direction: str, delay: float, line: float, framing: Framing):
    """The IP bytes a probe finds ahead of it in a FIFO that delays it ``delay`` s on a
    line of ``line`` bit/s: the line's bytes in that time, of which the probes sent in it
    (the answered ones, :func:`load_gap`) are small packets taking more of the line per
    IP byte than full ones under a per-packet overhead or ATM cells (an 88-byte probe is
    159 bytes of cells; a 60 kB FIFO on ADSL1's upstream holds about a hundred of them,
    and counting their line time as full packets' put the buffer 12 % high)."""
    line_bytes = delay * line / 8
    gap = load_gap(obs, direction)
    if not obs.probe_bytes or gap <= 0:
        return line_bytes * framing.ip_share()
    probe = framing.wire(obs.probe_bytes)
    probes = min(delay / gap, line_bytes / probe)
    return (line_bytes - probes * probe) * framing.ip_share() + probes * obs.probe_bytes


def discipline(
    obs: Observations, direction: str, base_raw: float, line: float | None, framing: Framing
):
    """(the discipline's estimate, the buffer's estimates) for one direction, whose line
    carries ``line`` bit/s (None: not inferred)."""
    cap = line * framing.ip_share() if line else None
    q = obs.rtt_s[loaded_mask(obs, direction)] - base_raw
    kind, buf_b, buf_t = f"queue_{direction}", f"buffer_{direction}", f"buffer_{direction}_delay"
    if len(q) < MIN_SAMPLES:
        why = f"{len(q)} probes in the settled {direction}load (need {MIN_SAMPLES})"
        return [Estimate(kind, None, why=why), Estimate(buf_b, None, "B", why=why)]
    p50, p95, p99, top = np.percentile(q, [50, 95, 99, 100])
    shape = p50 / p99 if p99 > 0 else 1.0
    stats = f"queueing delay p50 {p50 * 1e3:.1f} / p99 {p99 * 1e3:.1f} ms ({len(q)} probes)"
    # With a queue of its own a probe still waits for the full packet being sent (53 ms
    # of ATM cells at 256 kbit/s): flow queueing keeps its median within 1.5 of those.
    own = max(FQ_MEDIAN_S, 1.5 * FULL_PACKET * 8 / cap) if cap else FQ_MEDIAN_S
    start = obs.rtt_s[start_mask(obs, direction)] - base_raw
    peak = float(np.max(start)) if len(start) >= MIN_SAMPLES else None
    if p50 < own:
        d = Estimate(kind, "aqm (flow queueing)", how=f"{stats}: the probes had their own queue")
    elif peak is not None and p99 > 0 and peak > OVERSHOOT * p99:
        d = Estimate(
            kind,
            "aqm",
            how=f"{stats}: the load's start peaked at {peak * 1e3:.1f} ms, {peak / p99:.1f} x the"
            " settled ceiling, which a drop-tail queue never passes",
        )
    elif shape < FIFO_SHAPE:
        d = Estimate(
            kind, "aqm", how=f"{stats}: the delay settles at {p50 * 1e3:.1f} ms, not at its top"
        )
    else:
        d = Estimate(kind, "fifo", how=f"{stats}: the queue stays near its ceiling")
    if d.value == "fifo":
        ceiling = Estimate(buf_t, float(p99), "s", float(p95), float(top), f"p99 of {stats}")
        size = (
            Estimate(
                buf_b,
                queued_ip_bytes(obs, direction, p99, line, framing),
                "B",
                queued_ip_bytes(obs, direction, p95, line, framing),
                queued_ip_bytes(obs, direction, top, line, framing),
                f"ceiling delay x capacity_{direction}, in IP bytes"
                + (" (the probes in it as probes)" if obs.probe_bytes else ""),
            )
            if line
            else Estimate(buf_b, None, "B", why=f"no {direction} capacity to convert the delay")
        )
        return [d, ceiling, size]
    q25, q75 = np.percentile(q, [25, 75])
    standing = Estimate(
        buf_t,
        float(p50),
        "s",
        float(q25),
        float(q75),
        f"the AQM's standing delay (median); {stats}",
    )
    none = Estimate(buf_b, None, "B", why=f"{direction}: an AQM drops before its buffer fills")
    return [d, standing, none]


def infer(
    obs: Observations, framing: Framing | None = None, framing_why: str | None = None
) -> Inference:
    """Everything this run tells about its bottleneck; ``framing``: the link's, when the
    user knows it (capacities are then line rates); ``framing_why``: why it is not known,
    in place of the usual line."""
    given = framing is not None
    framing = framing or Framing()
    if len(obs.rtt_s) == 0 or np.all(np.isnan(obs.rtt_s)):
        raise InferenceProblem(f"{obs.source}: no probe came back")
    caps = {d: capacity(obs, d, framing) for d in DIRECTIONS}
    cap_v = {d: (e.value if isinstance(e.value, float) else None) for d, e in caps.items()}
    base = base_rtt(obs, cap_v, framing)
    idle = obs.rtt_s[idle_mask(obs)]
    est = [base, *caps.values()]
    if len(idle):
        for d in DIRECTIONS:
            est += discipline(obs, d, float(np.min(idle)), cap_v[d], framing)
    missing = [f"{e.name}: {e.why}" for e in est if e.value is None]
    if not given:
        missing.append(
            framing_why
            or "link framing (ATM cells, per-packet overhead): the goodput alone cannot tell"
            " a slower line from ATM cells or a larger overhead; it needs the modem's sync"
            " rate (--sync-rate DOWN/UP, as the router shows it), or --framing when you know"
            " it (atm for an ADSL line); capacities are the rate of 1500-byte IP packets"
        )
    return Inference(obs.source, est, missing, framing if given else None)
