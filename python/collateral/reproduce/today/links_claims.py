"""today-links' claims, each what the model predicts from the link's parameters (see
``links_physics``): the wait a sparse flow can meet at the link's lowest rate, a
drop-tail buffer's drain time, a satellite's loss bursts and handover spike, a DOCSIS
grant's wait. A claim that differs is a surprise, not physics."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..claims import Claim
from .links_physics import COBALT_TARGET_S, CUBIC_BETA, DROP_TAIL_BYTES, LINKS, LinkModel
from .links_table import LINK_ORDER, links_table

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

FAIR = ("fq_codel", "cake")
_NAMES = {"fq_codel": "FQ-CoDel", "cake": "CAKE"}


def _get(t: pd.DataFrame, link: str, q: str, col: str) -> float:
    return float(t.loc[(link, q), col]) if (link, q) in t.index else math.nan


def _ms(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 0.01 else f"{s * 1e3:.1f} ms"


def _directions(lk: LinkModel) -> list[str]:
    """Downstream, and upstream where a bulk flow or the link itself (a DOCSIS grant)
    stands in the call's way."""
    return ["down"] + (["up"] if lk.bulk[1] or lk.own_delay_s[1] or lk.spike_s else [])


def _fair(t: pd.DataFrame, link: str, d: str) -> Claim | None:
    """(a) FQ-CoDel and CAKE keep the call sparse: its p99 is bounded by one round of the
    bulk flows at the link's lowest rate plus what the link adds by itself."""
    lk = LINKS[link]
    col = f"call_{d}_p99_s"
    # CAKE as a DOCSIS modem's own queue is claim (e)'s: not bounded by this argument.
    fair = ("fq_codel",) if d == "up" and lk.mean_grant_wait_s else FAIR
    vals = {q: _get(t, link, q, col) for q in fair}
    vals = {q: v for q, v in vals.items() if not math.isnan(v)}
    if not vals:
        return None
    bound = lk.sparse_wait_s(d)
    worst = max(vals, key=lambda q: vals[q])
    dt = _get(t, link, "drop-tail", col)
    i = lk.index(d)
    own = lk.own_delay_s[i]
    spike = (
        f" The handover spike ({_ms(lk.spike_s)} for {lk.spike_for_s * 1e3:g} ms every"
        f" {lk.interval_s:g} s) reaches {lk.spike_for_s / lk.interval_s:.2%} of the packets,"
        " under 1 %, so the p99 need not include it."
        if lk.spike_s
        else ""
    )
    return Claim(
        f"(a) {link} {d}stream: {'/'.join(_NAMES[q] for q in vals)} keep the call's p99 bounded",
        f"call p99 ≤ {_ms(bound)}",
        f"worst {worst} {_ms(vals[worst])}; drop-tail {_ms(dt)}",
        bool(vals[worst] <= bound),
        f"the worst of {', '.join(vals)}'s call p99 (median over trials) ≤ {_ms(bound)}",
        f"The call (about 90 kbit/s) stays far under its fair share even at the link's"
        f" lowest rate ({lk.floor_bps[i] / 1e6:g} Mbit/s), so its flow is sparse: a packet"
        f" waits at most for the packet in service and one full-size quantum of each of"
        f" the {lk.bulk[i]} bulk flow(s) ({_ms(lk.packet_s(d))} each at that rate),"
        + (" the video's largest packet," if lk.video[i] else "")
        + f" the game's largest packet, and what the link adds by itself ({_ms(own)}: a"
        " satellite interval's extra path delay, a DOCSIS grant's request-grant wait)."
        + spike
        + " Per variant: "
        + ", ".join(f"{q} {_ms(v)}" for q, v in vals.items()),
    )


def _drop_tail(t: pd.DataFrame, link: str, d: str) -> Claim | None:
    """(b) Drop-tail's delay is its buffer over the rate: a CUBIC flow keeps it at least
    β full, and no more than full at the lowest rate."""
    lk = LINKS[link]
    i = lk.index(d)
    p95 = _get(t, link, "drop-tail", f"call_{d}_p95_s")
    p99 = _get(t, link, "drop-tail", f"call_{d}_p99_s")
    if math.isnan(p95) or lk.bulk[i] == 0:
        return None
    lo = 0.5 * lk.drain_s(d)
    hi = lk.drain_s(d, floor=True) + lk.own_delay_s[i] + lk.spike_s + lk.packet_s(d)
    fq = min(_get(t, link, q, f"call_{d}_p99_s") for q in FAIR)
    return Claim(
        f"(b) {link} {d}stream: drop-tail's call delay is its buffer over the rate",
        f"{_ms(lo)} ≤ call p95, p99 ≤ {_ms(hi)}",
        f"p95 {_ms(p95)}, p99 {_ms(p99)} (FQ best p99 {_ms(fq)})",
        bool(p95 >= lo and p99 <= hi),
        "call p95 ≥ half the buffer's drain time at the nominal rate; p99 ≤ its drain"
        " time at the lowest rate plus the link's own delay, spike and one packet",
        f"{lk.bulk[i]} CUBIC flow(s) fill the {DROP_TAIL_BYTES // 1000} kB buffer; a loss"
        f" cuts a window by {1 - CUBIC_BETA:.0%} at most (β = {CUBIC_BETA:.2f}), so the"
        f" queue stays near full and the call waits it out: {_ms(lk.drain_s(d))} at the"
        f" nominal {lk.nominal_bps[i] / 1e6:g} Mbit/s, {_ms(lk.drain_s(d, floor=True))} at"
        f" the lowest {lk.floor_bps[i] / 1e6:g} Mbit/s. The lower bound allows half of the"
        " nominal drain time for the rate changes and the flows' start.",
    )


def _satellite(t: pd.DataFrame, link: str) -> list[Claim]:
    """(c) A satellite's handovers: every queue loses the call's packets in the loss
    bursts and meets the delay spike."""
    lk = LINKS[link]
    have = [q for q in ("drop-tail", *FAIR, "dualpi2") if (link, q) in t.index]
    if not have or not lk.spike_s:
        return []
    r = t.loc[(link, have[0])]
    want = lk.burst_losses(float(r.warmup_s), float(r.duration_s))
    n = lk.reconfigurations(float(r.warmup_s), float(r.duration_s))
    out = []
    for d in ("down", "up"):
        lost = {q: _get(t, link, q, f"call_{d}_wire_lost") for q in have}
        out.append(
            Claim(
                f"(c) {link} {d}stream: the handovers' loss bursts take the call's packets",
                f"{want:g} per trial under every queue",
                ", ".join(f"{q} {v:g}" for q, v in lost.items()),
                bool(all(abs(v - want) <= 1 for v in lost.values())),
                f"each queue's median wire losses per trial within ±1 of {want:g}",
                f"{n} reconfiguration(s) after the warm-up, each losing what leaves the"
                f" queue in its first {lk.loss_for_s * 1e3:g} ms: one call packet per"
                f" {lk.loss_for_s * 1e3:g} ms (a packet every 20 ms), whatever the queue.",
            )
        )
        p999 = {q: _get(t, link, q, f"call_{d}_p999_s") for q in have}
        out.append(
            Claim(
                f"(c) {link} {d}stream: the handover spike bounds the call's p99.9 from below",
                f"p99.9 ≥ {_ms(lk.spike_s)} under every queue",
                ", ".join(f"{q} {_ms(v)}" for q, v in p999.items()),
                bool(all(v >= lk.spike_s for v in p999.values())),
                f"each queue's call p99.9 (median over trials) ≥ {_ms(lk.spike_s)}",
                f"For {lk.spike_for_s * 1e3:g} ms after each reconfiguration every packet"
                f" takes {_ms(lk.spike_s)} more on top of the interval's path delay: that"
                f" is {lk.spike_for_s / lk.interval_s:.2%} of the call's packets, more than"
                " the 0.1 % above p99.9, and no queue removes it.",
            )
        )
    return out


def _lld(t: pd.DataFrame, link: str) -> Claim | None:
    """(d) DualPI2 with LLD's settings on a DOCSIS upstream: the ECT(1) call in the L
    queue waits little more than for its grant, beside an upload in the C queue."""
    lk = LINKS[link]
    v = _get(t, link, "dualpi2", "call_up_p99_s")
    if math.isnan(v) or not lk.own_delay_s[1] or not lk.bulk[1]:
        return None
    grant = lk.own_delay_s[1]
    bound = lk.sparse_wait_s("up")
    dt = _get(t, link, "drop-tail", "call_up_p99_s")
    return Claim(
        f"(d) {link} upstream: DualPI2 (LLD) keeps the ECT(1) call near the grant wait",
        f"call p99 ≤ {_ms(bound)}",
        f"{_ms(v)}; drop-tail {_ms(dt)}",
        bool(v <= bound),
        f"the call's p99 (median over trials) ≤ {_ms(bound)}",
        f"The L queue holds only the call and the game (ECT(1)); the upload is Classic."
        f" A call packet waits for the packet in service and the game's ({_ms(bound - grant)}"
        f" at 20 Mbit/s with one full-size packet per flow ahead) and for its grant:"
        f" at most {_ms(grant)} from an idle modem (the next MAP interval, a contention"
        " request at a random point of it, 1.5 ms request-grant rounded up to an interval"
        " start, the grant's place in that interval); a busy modem, granted interval after"
        " interval, is quicker.",
    )


def _cake_on_grants(t: pd.DataFrame, link: str) -> Claim | None:
    """(e) CAKE as a DOCSIS modem's own queue: the grant wait alone keeps the upload's
    packets about COBALT's target, and COBALT drops the upload down."""
    lk = LINKS[link]
    cake = _get(t, link, "cake", "up_goodput_bps")
    fq = _get(t, link, "fq_codel", "up_goodput_bps")
    if not lk.mean_grant_wait_s or not lk.bulk[1] or math.isnan(cake) or math.isnan(fq):
        return None
    return Claim(
        f"(e) {link} upstream: CAKE as the modem's own queue holds the upload down",
        "CAKE's upload goodput < ½ FQ-CoDel's",
        f"CAKE {cake / 1e6:.2f} Mbit/s; FQ-CoDel {fq / 1e6:.2f} Mbit/s",
        bool(cake < fq / 2),
        "the upload's goodput under CAKE (median over trials) below half of FQ-CoDel's",
        f"Every packet waits for its grant — {_ms(lk.mean_grant_wait_s)} on average from an"
        f" idle modem — beside COBALT's target of {_ms(COBALT_TARGET_S)}: the upload's"
        " sojourn sits about the target even with one packet queued. COBALT, as Linux's"
        " sch_cake, keeps its drop count between episodes and drops again after"
        " interval/sqrt(count), where CoDel (FQ-CoDel) first needs 100 ms continuously"
        " above target. The downloads' ACKs, served first as sparse flows, take grant bytes"
        " the upload requested. A deployed CAKE runs on the home router in front of the"
        " modem, shaped below its rate, and never sees the grant wait; this is CAKE placed"
        " in the modem's own queue.",
    )


def today_links_claims(store: Store) -> list[Claim]:
    t = links_table(store)
    have = set(t.index.get_level_values("link"))
    out: list[Claim | None] = []
    for link in (lk for lk in LINK_ORDER if lk in have):
        lk = LINKS[link]
        out += [_fair(t, link, d) for d in _directions(lk)]
        out += [_drop_tail(t, link, d) for d in _directions(lk)]
        out += _satellite(t, link)
        out.append(_lld(t, link))
        out.append(_cake_on_grants(t, link))
    return [c for c in out if c is not None]
