"""The RMCAT studies' claims: what RFC 8867's cases expect of a call (adapt to a capacity
fall, use the capacity, share it fairly with calls of its kind, hold a share beside
TCP under flow queuing) with bounds worked from the set-up's physics, beside the core's
RFC 8868 criteria (medians over trials, :mod:`.table`). Every claim has a verdict;
numbers without a bound the physics gives (the staggered calls' convergence, feedback
loss, loss rates) are the table's only."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..claims import Claim
from ..rtp import MEDIA_HEADERS, MEDIA_PAYLOAD
from .table import CONTROLLERS, call_rows, medians, scenario_of, value

if TYPE_CHECKING:
    import pandas as pd

    from ...spec import Scenario
    from ...store import Store

#: GCC's delay-based increase far from convergence: 8 % a second
#: (draft-ietf-rmcat-gcc-02 §5.5; η = 1.08).
GCC_ETA = 1.08
#: The convergence criterion of the core (media::criteria::CONVERGED).
CONVERGED = 0.8
#: A NewReno segment's payload per IP byte (the rfc profile: MSS 1448 in 1500 bytes).
TCP_GOODPUT_PER_BYTE = 1448 / 1500
#: Bytes one delivery opportunity carries (clock::OPPORTUNITY_BYTES): the most a packet
#: in transmission adds to a full queue's wait.
OPPORTUNITY_BYTES = 1504
#: SCReAM's smallest congestion window, bytes (RFC 8298 §4.1.1's MIN_CWND; scream.rs).
SCREAM_MIN_CWND = 3000


def achievable_bps(sc: Scenario, direction: str, ceiling_bps: float) -> float:
    """Mean over the measured part of min(the direction's capacity as the spec steps it,
    ``ceiling_bps``): what calls whose encoders top out at ``ceiling_bps`` together can
    carry (the input's arithmetic: the expectation, not a measurement)."""
    from .figure import capacity_steps

    t, r = capacity_steps(sc, direction)
    a, b = sc.warmup / 1e9, sc.duration / 1e9
    total = 0.0
    for k in range(len(t) - 1):
        lo, hi = max(t[k], a), min(t[k + 1], b)
        if hi > lo:
            total += min(r[k] * 1e6, ceiling_bps) * (hi - lo)
    return total / (b - a)


def wire_bps(rate_bps: float, fps: float, upper: bool) -> float:
    """A call's IP rate for the encoder's media rate ``rate_bps``: each frame cut into
    packets of at most 1200 bytes of payload, each with 40 bytes of headers; at least
    ⌈B/1200⌉ ≥ B/1200 packets a frame, at most B/1200 + 1 (``upper``)."""
    per_frame = MEDIA_HEADERS * 8 * fps if upper else 0.0
    return rate_bps * (1 + MEDIA_HEADERS / MEDIA_PAYLOAD) + per_frame


def full_queue_s(sc: Scenario, rate_bps: float) -> float:
    """The wait behind the scenario's full downlink drop-tail queue at ``rate_bps``, the
    packet in transmission's opportunity included (the input's arithmetic)."""
    q = sc.down.queue.limit
    assert q.unit == "bytes", "the RMCAT experiments give drop-tail limits in bytes"
    return (q.amount + OPPORTUNITY_BYTES) * 8 / rate_bps


def _first(
    store: Store, case: str = "-", cc: str = "gcc", queue: str | None = None
) -> Scenario | None:
    """The stored scenario of the first trial of ``case`` with controller ``cc`` (and
    the queue tagged ``queue``, where given)."""
    from ..today.table import summary

    for _, r in summary(store).iterrows():
        sc = scenario_of(r)
        if (
            str(r.get("tag_case") or "-") == case
            and sc.calls[0].controller == cc
            and (queue is None or str(r.get("tag_queue") or "-") == queue)
        ):
            return sc
    return None


def _fmt(v: float, unit: str = "", scale: float = 1.0, digits: int = 2) -> str:
    return "–" if math.isnan(v) else f"{v * scale:.{digits}f}{unit}"


def _verdict(v: float, ok: bool) -> bool | None:
    return None if math.isnan(v) else ok


def _utilisation_claims(t: pd.DataFrame, store: Store, case: str, at_least: float) -> list[Claim]:
    """Per controller and direction: the calls' summed rate against what the capacity
    and their encoders' ceilings allow."""
    out = []
    for cc in CONTROLLERS:
        sc = _first(store, case, cc)
        if sc is None:
            continue
        for d in sorted({c.direction for c in sc.calls}):
            calls = [k for k, c in enumerate(sc.calls) if c.direction == d]
            got = sum(value(t, "received_bps", cc, case, "-", k) for k in calls)
            can = achievable_bps(sc, d, sum(sc.calls[k].max_rate for k in calls))
            ratio = got / can
            where = f"{case}, " if case != "-" else ""
            out.append(
                Claim(
                    f"{where}{cc.upper()} {d}: the calls use the capacity their encoders can",
                    f"≥ {at_least:.0%} of {can / 1e6:.3f} Mbit/s",
                    f"{got / 1e6:.3f} Mbit/s ({ratio:.0%})",
                    _verdict(ratio, ratio >= at_least),
                    f"received ≥ {at_least:.0%} of the mean of min(capacity, ceilings)",
                    "RFC 8867 expects a call to use the capacity it is given; the mean of"
                    " min(capacity, the calls' summed 1.5 Mbit/s ceilings) over the"
                    " measured part is what they can carry at most. The margin allows the"
                    " ramp-up after each rise (GCC gains 8 %/s) and the RTP/IP overhead.",
                )
            )
    return out


def capacity_claims(store: Store) -> list[Claim]:
    """RFC 8867 §5.1: adapt to the fall to 0.6 Mbit/s, converge from 150 kbit/s, use the
    capacity; the frame delay reported."""
    t = medians(call_rows(store))
    out: list[Claim] = []
    for cc in CONTROLLERS:
        v = value(t, "adapt_down_s", cc)
        out.append(
            Claim(
                f"{cc.upper()}: after the fall 2.5 → 0.6 Mbit/s at 60 s, the rate is under"
                " the capacity within",
                "≤ 5 s",
                _fmt(v, " s", digits=1),
                _verdict(v, v <= 5.0),
                "≤ 5 s (10 bins of 0.5 s)",
                "At 1.5 Mbit/s into 0.6 Mbit/s the 94 kB queue fills in 94 kB / 0.9 Mbit/s"
                " = 0.84 s, after which drop-tail loss forces any controller down; the"
                " delay signal comes sooner (an RTT, 100 ms, plus the queue's growth). The"
                " encoder follows its target after 200 ms (RFC 8593's τ_v). 5 s allows"
                " a loss-driven reaction several times over.",
            )
        )
    g = value(t, "convergence_s", "gcc")
    sc = _first(store, "-", "gcc")
    if sc is not None:
        c0 = capacity_claim_start(sc)
        expect = math.log(CONVERGED * c0 / sc.calls[0].start_rate) / math.log(GCC_ETA)
        out.append(
            Claim(
                "GCC: from 150 kbit/s to 80 % of the 1 Mbit/s capacity in",
                f"{expect:.1f} s ± 30 %",
                _fmt(g, " s", digits=1),
                _verdict(g, abs(g - expect) <= 0.3 * expect),
                "± 30 % of ln(0.8 C / R_init) / ln 1.08",
                "GCC's multiplicative increase of 8 % a second (η = 1.08) from R_init ="
                f" 150 kbit/s reaches 0.8 × {c0 / 1e6:g} Mbit/s after ln(0.8 C / R_init) /"
                " ln 1.08 seconds; the 0.5 s bins and the received rate's lag behind the"
                " target (the encoder's 200 ms, the path's 50 ms) add under a second.",
            )
        )
    for cc in ("nada", "scream"):
        v = value(t, "convergence_s", cc)
        out.append(
            Claim(
                f"{cc.upper()}: reaches 80 % of the 1 Mbit/s capacity before the first step",
                "< 40 s",
                _fmt(v, " s", digits=1),
                _verdict(v, v < 40),
                "before the step at 40 s",
                "RFC 8867 §5.1 gives the first capacity 40 s; a controller that has not"
                " found it by then is not measured against the later steps.",
            )
        )
    out += _utilisation_claims(t, store, "-", 0.6)
    out += _frame_delay_claims(t, store)
    return out


def _frame_delay_claims(t: pd.DataFrame, store: Store) -> list[Claim]:
    """Per controller: the frame delay p95 under the bound the drop-tail queue sets at
    the lowest capacity of the measured part."""
    from .figure import capacity_steps

    out = []
    for cc in CONTROLLERS:
        sc = _first(store, "-", cc)
        if sc is None:
            continue
        times, rates = capacity_steps(sc, "down")
        c_min = min(r for k, r in enumerate(rates[:-1]) if times[k + 1] > sc.warmup / 1e9) * 1e6
        one_way, queue = sc.rtt / 2e9, full_queue_s(sc, c_min)
        # SCReAM holds packets in its RTP queue until they are older than the playout
        # deadline (sender.rs discards them then): that much more before the network.
        rtp = sc.calls[0].playout / 1e9 if cc == "scream" else 0.0
        bound = one_way + queue + rtp
        p95 = value(t, "frame_delay_p95_s", cc)
        out.append(
            Claim(
                f"{cc.upper()}: frame delay p95 within the full queue's bound",
                f"≤ {bound * 1e3:.0f} ms",
                _fmt(p95, " ms", 1e3, 0),
                _verdict(p95, p95 <= bound),
                "≤ one way + the full queue at the lowest capacity"
                + (" + the RTP queue's playout limit" if rtp else ""),
                f"{one_way * 1e3:.0f} ms one way + ({sc.down.queue.limit.amount / 1e3:g} kB +"
                f" a {OPPORTUNITY_BYTES} B opportunity) / {c_min / 1e6:g} Mbit/s ="
                f" {queue * 1e3:.0f} ms"
                + (
                    f" + the {rtp * 1e3:.0f} ms a packet may wait in SCReAM's RTP queue"
                    " before it is discarded"
                    if rtp
                    else "; GCC and NADA send each frame at once (no pacer)"
                )
                + ". A frame's last packet can wait no longer in a drop-tail queue; RFC"
                " 8867 §5.1 states no bound. The loss rate is in the table.",
            )
        )
    return out


def capacity_claim_start(sc: Scenario) -> float:
    """The first capacity step's rate (bit/s)."""
    from .figure import capacity_steps

    return capacity_steps(sc, "down")[1][0] * 1e6


def _jain_claims(t: pd.DataFrame, cases: tuple[str, ...]) -> list[Claim]:
    out = []
    for case in cases:
        for cc in CONTROLLERS:
            j = value(t, "jain_index", cc, case)
            out.append(
                Claim(
                    (f"{case}, " if case != "-" else "") + f"{cc.upper()}: Jain's index over"
                    " the calls' rates",
                    "≥ 0.9",
                    _fmt(j, digits=3),
                    _verdict(j, j >= 0.9),
                    "≥ 0.9 (1 = equal)",
                    "RFC 8867 §5.2/§5.4 expect calls of one controller to share the"
                    " bottleneck fairly once converged; 0.9 is one call at 0.43 × its"
                    " peers' rate among three (or 0.50 among two): a loose bound.",
                )
            )
    return out


def flows_claims(store: Store) -> list[Claim]:
    """RFC 8867 §5.2 and §5.4: fair shares among calls of one controller, the capacity
    used. Each staggered call's convergence is the table's: RFC 8867 §5.4 asks that
    late calls converge without a number, and a shared queue's delay changes how fast a
    newcomer may grow, so no bound follows from the set-up alone."""
    t = medians(call_rows(store))
    out = _jain_claims(t, ("two-steps", "three-same", "three-staggered"))
    for case in ("two-steps", "three-same"):
        out += _utilisation_claims(t, store, case, 0.6)
    return out


def feedback_claims(store: Store) -> list[Claim]:
    """RFC 8867 §5.3: each direction's call adapts to its falls with its feedback on
    the other's congested link, and uses its capacity. Feedback loss is the table's (a
    report's fate in a queue the other call fills has no bound of its own)."""
    t = medians(call_rows(store))
    out: list[Claim] = []
    for cc in CONTROLLERS:
        for k, d in ((0, "down"), (1, "up")):
            v = value(t, "adapt_down_s", cc, "-", "-", k)
            out.append(
                Claim(
                    f"{cc.upper()} {d}: after each capacity fall the rate is under the"
                    " capacity within",
                    "≤ 5 s",
                    _fmt(v, " s", digits=1),
                    _verdict(v, v <= 5.0),
                    "≤ 5 s, the longest over the falls",
                    "As in §5.1 (a 75 kB queue fills in under 1.5 s at the excess), the"
                    " feedback crossing the other direction's congested queue adds at"
                    " most its 300 ms to the signal's delay.",
                )
            )
    out += _utilisation_claims(t, store, "-", 0.6)
    return out


#: §5.6's queues: (tag, its delay when full at 2 Mbit/s in s; None for the AQMs).
TCP_QUEUES = (("dt-300ms", 0.3), ("dt-1000ms", 1.0), ("fq_codel", None), ("cake", None))


def share_bounds(sc: Scenario, cc: str, loss: float) -> tuple[float, float]:
    """(floor, ceiling) of a call's share r / (r + TCP goodput) beside a NewReno flow
    that keeps the scenario's drop-tail queue, at least BDP-deep, busy. The ceiling: the
    call at its encoder's top rate on the wire R, TCP's goodput the rest of the link at
    1448 payload bytes per 1500, R / (R + g(C − R)). The floor: TCP's goodput is at most
    C − r, so the share is at least r / C; GCC and NADA never send under the encoder's
    R_min (no pacer, no RTP queue), SCReAM at least its smallest window per round
    (RTT + the full queue + the wait for the next report), each less the call's loss."""
    call, c = sc.calls[0], float(sc.down.rate or 0)
    top = wire_bps(call.max_rate, call.fps, upper=True)
    ceiling = top / (top + TCP_GOODPUT_PER_BYTE * (c - top))
    if cc == "scream":
        loop = sc.rtt / 1e9 + full_queue_s(sc, c) + call.feedback_interval / 1e9
        least = SCREAM_MIN_CWND * 8 / loop
    else:
        least = wire_bps(call.min_rate, call.fps, upper=False)
    return least * (1 - loss) / c, ceiling


def _dt_share_claim(store: Store, cc: str, q: str, full: float, share: float, loss: float) -> Claim:
    """The call's share beside TCP under a drop-tail queue: between its floor and its
    ceiling (:func:`share_bounds`)."""
    sc = _first(store, "-", cc, q)
    lo, hi, wait = math.nan, math.nan, math.nan  # the point was not run: no verdict
    if sc is not None:
        lo, hi = share_bounds(sc, cc, 0.0 if math.isnan(loss) else loss)
        wait = full_queue_s(sc, float(sc.down.rate or 0))
    floor_why = (
        f"SCReAM's window never closes below {SCREAM_MIN_CWND} B (RFC 8298), which it"
        f" sends once per round of ≤ 100 ms + the full queue's {wait * 1e3:.0f} ms + the"
        " 50 ms report"
        " interval (the 4 Mbit/s uplink carries only ACKs and reports: no queue); what"
        " its RTP queue discards was never sent and is not in its loss"
        if cc == "scream"
        else f"{cc.upper()} sends every frame at once and its encoder never goes under"
        " R_min = 150 kbit/s (155 kbit/s with the packets' headers)"
    )
    return Claim(
        f"{cc.upper()} under drop-tail {full * 1e3:.0f} ms: the call's share beside TCP",
        f"{lo:.3f} – {hi:.3f}",
        _fmt(share, digits=3),
        _verdict(share, lo <= share <= hi),
        "between the controller's floor and the encoder's ceiling",
        "RFC 8867 §5.6 asks that the call not starve and not starve TCP, without a"
        " number; a delay-based controller reads TCP's standing queue as congestion and"
        f" yields towards its floor. Floor: {floor_why}, less the call's loss, over the"
        " 2 Mbit/s (TCP takes at most the rest). Ceiling: the call at 1.5 Mbit/s (1.56"
        " on the wire) and NewReno's goodput (1448 B per 1500) in what is left; the"
        f" {full * 1e3:.0f} ms queue is deeper than the 25 kB BDP, so NewReno keeps the"
        " link busy through its halvings.",
    )


def tcp_claims(store: Store) -> list[Claim]:
    """RFC 8867 §5.6 and issue 31's flow-queuing question: the call's share and frame
    delay beside one NewReno flow under drop-tail 300/1000 ms, FQ-CoDel and CAKE."""
    t = medians(call_rows(store))
    out: list[Claim] = []
    for cc in CONTROLLERS:
        for q, full in TCP_QUEUES:
            share = value(t, "rate_share", cc, "-", q)
            p95 = value(t, "frame_delay_p95_s", cc, "-", q)
            if full is None:
                out.append(
                    Claim(
                        f"{cc.upper()} under {q}: the call's share of the 2 Mbit/s beside TCP",
                        "0.5 ± 0.15",
                        _fmt(share),
                        _verdict(share, abs(share - 0.5) <= 0.15),
                        "within 0.15 of 0.5",
                        "Flow queuing serves the call and the TCP flow in turn: each"
                        " backlogged flow gets 1 Mbit/s, below the call's 1.5 Mbit/s"
                        " ceiling, so the call can hold half whatever TCP does.",
                    )
                )
                out.append(
                    Claim(
                        f"{cc.upper()} under {q}: frame delay p95 beside TCP",
                        "≤ 250 ms",
                        _fmt(p95, " ms", 1e3, 0),
                        _verdict(p95, p95 <= 0.25),
                        "≤ 250 ms",
                        "The call's own queue only: 50 ms one way, a 1 Mbit/s share's frame"
                        " of 4.2 kB takes 33 ms, CoDel's 5 ms target; SCReAM adds its own"
                        " RTP queue at the sender. TCP's queue is not the call's.",
                    )
                )
            else:
                out.append(
                    Claim(
                        f"{cc.upper()} under drop-tail {full * 1e3:.0f} ms: frame delay p95"
                        " sits on TCP's standing queue",
                        f"≥ {0.7 * full * 1e3:.0f} ms",
                        _fmt(p95, " ms", 1e3, 0),
                        _verdict(p95, p95 >= 0.7 * full),
                        f"≥ 70 % of the full queue's {full * 1e3:.0f} ms",
                        "A loss-based NewReno flow fills the drop-tail queue before each"
                        " loss and halves from there, so the queue stays between half full"
                        " and full; every frame waits behind it.",
                    )
                )
                out.append(
                    _dt_share_claim(store, cc, q, full, share, value(t, "loss_rate", cc, "-", q))
                )
    return out


def short_tcp_claims(store: Store) -> list[Claim]:
    """RFC 8867 §5.7: two calls beside ten short-TCP sources keep a fair split and most
    of the capacity; their frame delay within the queue's bound."""
    t = medians(call_rows(store))
    out = _jain_claims(t, ("-",))
    for cc in CONTROLLERS:
        got = sum(value(t, "utilisation", cc, "-", "-", k) for k in (0, 1))
        out.append(
            Claim(
                f"{cc.upper()}: the two calls' share of the 2 Mbit/s beside the short flows",
                "≥ 60 %",
                _fmt(got * 100, " %", digits=0),
                _verdict(got, got >= 0.6),
                "≥ 60 % of the capacity",
                "Ten sources of 40 kB on average every 10 s + the transfer offer about"
                " 10 × 320 kbit / 11 s = 0.29 Mbit/s (15 %), so the calls can carry 85 %;"
                " 60 % leaves room for the slow-start bursts each new connection brings.",
            )
        )
        p95 = max(value(t, "frame_delay_p95_s", cc, "-", "-", k) for k in (0, 1))
        out.append(
            Claim(
                f"{cc.upper()}: frame delay p95 (the worse call) beside the short flows",
                "≤ 400 ms",
                _fmt(p95, " ms", 1e3, 0),
                _verdict(p95, p95 <= 0.4),
                "≤ 400 ms",
                "50 ms one way, at most the full 300 ms queue, and a frame's 33 ms at"
                " 1 Mbit/s: the drop-tail queue bounds it.",
            )
        )
    return out
