"""today-queues' claims, each stated as what the model predicts from the link (see
``physics``): a packet's time on the wire, the call's fair share, the wait a sparse flow
can meet, so that a claim that differs is a surprise and not physics."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..claims import Claim
from . import physics as P
from .table import LINKS, mixes_in, today_table
from .video import video_claims

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

#: The flow-queuing variants (claim b).
FAIR = ("fq_codel", "fq_codel-ecn", "cake", "cake-diffserv4", "cake-ackfilter")

#: Where the ACK filter comes from and what it is for (claim a).
ACK_FILTER_SOURCE = (
    "sch_cake 'Add optional ACK filter' (Linux commit 8b7138814f29, 2018): on very"
    " asymmetrical links 'the downstream throughput can be limited by the number of ACKs"
    " capable of being transmitted in the upstream direction'; Høiland-Jørgensen, Täht &"
    " Morton 2018 (Piece of CAKE, arXiv:1804.07617)."
)


def _get(t: pd.DataFrame, link: str, mix: tuple[int, int], q: str, col: str) -> float:
    key = (link, *mix, q)
    return float(t.loc[key, col]) if key in t.index else math.nan


def mix_text(mix: tuple[int, int]) -> str:
    d, u = mix
    return f"{d} dl" + (f" + {u} ul" if u else "")


def _ms(s: float) -> str:
    return f"{s * 1e3:.2f} ms" if s < 0.01 else f"{s * 1e3:.1f} ms"


def _ack_filter(t: pd.DataFrame, link: str, mix: tuple[int, int]) -> Claim | None:
    """(a) The filter can only drop an ACK queued behind a newer ACK of its flow, so it
    acts where the ACK flows are backlogged: where the ACKs the downloads need exceed
    their max-min share of the upstream."""
    a0 = _get(t, link, mix, "cake", "acks_sent_per_s")
    a1 = _get(t, link, mix, "cake-ackfilter", "acks_sent_per_s")
    if math.isnan(a0) or math.isnan(a1):
        return None
    g0 = _get(t, link, mix, "cake", "down_goodput_bps")
    g1 = _get(t, link, mix, "cake-ackfilter", "down_goodput_bps")
    cut, dg = 1 - a1 / a0, g1 / g0 - 1
    d, u = mix
    lk = P.LINKS[link]
    need = P.acks_bps(link) / d
    call = lk.wire_bps(P.CALL_IP_BYTES, P.CALL_GAP_S)
    game = lk.wire_bps(P.GAME_IP_BYTES, P.GAME_GAP_S)
    # The most one ACK flow could get (as if backlogged) beside the others' demands.
    others = [need] * (d - 1) + [call, game] + [math.inf] * u
    share = P.max_min_share(lk.up_bps, [math.inf, *others], 0)
    backlogged = need > share
    if backlogged:
        expect, ok = "≥ 30 % fewer ACKs, goodput not 3 % lower", cut >= 0.30 and dg >= -0.03
        tol = ">= 30 % fewer ACKs sent; download goodput at most 3 % lower"
    else:
        expect, ok = "< 30 % fewer ACKs, goodput within 3 %", cut < 0.30 and abs(dg) <= 0.03
        tol = "< 30 % fewer ACKs sent; download goodput within ±3 %"
    return Claim(
        f"(a) {link} {mix_text(mix)}: ACK filter, ACK flows "
        + ("backlogged" if backlogged else "not backlogged"),
        expect,
        f"ACKs sent {a0:.0f} -> {a1:.0f} /s ({-cut:+.0%}), goodput {dg:+.1%}",
        bool(ok),
        tol,
        f"Each download's ACKs need {need / 1e3:.1f} kbit/s on the wire; an ACK flow's"
        f" share is {share / 1e3:.1f} kbit/s. The filter drops an ACK only when a newer"
        " ACK of its flow arrives while it is queued, so it has work only where an ACK"
        " flow is backlogged: where the ACKs a"
        f" download needs at the line rate (one per {P.ACK_EVERY} segments, {P.ACK_BYTES} B"
        f" each, framing included) exceed the flow's max-min share of the"
        f" {lk.up_bps / 1e3:g} kbit/s upstream beside the call, the game and {u} upload(s)."
        " Below it, only the ACKs that pile up behind an upload packet in service"
        f" ({P.mtu_s(link, 'up') * 1e3:.2f} ms on the wire) can be thinned."
        f" Download goodput {g0 / 1e6:.3f} -> {g1 / 1e6:.3f} Mbit/s. Source: " + ACK_FILTER_SOURCE,
    )


def _call_delay(t: pd.DataFrame, link: str, mix: tuple[int, int], d: str) -> Claim | None:
    """(b) The call under the flow-queuing variants: sparse where its rate fits its fair
    share (waits at most one round of the bulk flows), queued and dropped where not."""
    col = f"call_{d}_delay_p95_s"
    dt = _get(t, link, mix, "drop-tail", col)
    vals = {q: _get(t, link, mix, q, col) for q in FAIR}
    vals = {q: v for q, v in vals.items() if not math.isnan(v)}
    if math.isnan(dt) or not vals:
        return None
    bulk = mix[0] if d == "down" else mix[1]
    rate, share = P.call_share(link, d, *mix)
    bound = P.sparse_wait_s(link, d, bulk)
    worst = max(vals, key=lambda q: vals[q])
    drain = P.drain_s(link, d)
    where = f"(b) {link} {mix_text(mix)} {d}stream"
    if rate <= share:
        return Claim(
            f"{where}: FQ-CoDel/CAKE keep the call sparse",
            f"call p95 ≤ {_ms(bound)}",
            f"worst {worst} {_ms(vals[worst])}; drop-tail {_ms(dt)}",
            bool(vals[worst] <= bound),
            f"the worst of {', '.join(vals)}'s call p95 ≤ {_ms(bound)}",
            f"The call needs {rate / 1e3:.0f} kbit/s on the wire, less than its max-min fair"
            f" share of the {P.LINKS[link].rate(d) / 1e6:g} Mbit/s {d}stream, so its flow"
            " stays sparse: a packet waits for the"
            f" one in service and at most one full-size packet of each of the {bulk} bulk"
            f" flow(s) ahead of it in the round ({P.mtu_s(link, d) * 1e3:.2f} ms each on"
            " the wire) and the game's largest packet. Drop-tail's 1 BDP drains in"
            f" {_ms(drain)}. Per variant: " + ", ".join(f"{q} {_ms(v)}" for q, v in vals.items()),
        )
    loss = {q: _get(t, link, mix, q, f"call_{d}_loss_rate") for q in vals}
    tin = 0.25 * P.LINKS[link].rate(d)
    return Claim(
        f"{where}: call over its fair share, FQ-CoDel/CAKE drop it",
        f"call loss > 0 under every FQ variant (needs {rate / 1e3:.0f} of a"
        f" {share / 1e3:.0f} kbit/s share)",
        f"loss {min(loss.values()):.1%}..{max(loss.values()):.1%}; p95 up to {worst}"
        f" {_ms(vals[worst])}",
        bool(all(v > 0 for v in loss.values())),
        f"call loss > 0 under each of {', '.join(vals)}",
        f"The call needs {rate / 1e3:.0f} kbit/s on the wire (ATM cells included), more"
        f" than its max-min share ({share / 1e3:.0f} kbit/s) beside the game, the"
        " downloads' ACKs and the upload: flow queuing treats it as a bulk flow, its queue"
        " builds and the AQM drops the excess. CAKE diffserv4's Voice tin (the EF call)"
        f" is held to a quarter of the shaper, {tin / 1e3:.0f} kbit/s, even less. Per"
        " variant (p95, loss): "
        + ", ".join(f"{q} {_ms(v)}, {loss[q]:.1%}" for q, v in vals.items())
        + f"; drop-tail {_ms(dt)}",
    )


def _ecn(t: pd.DataFrame, link: str, mix: tuple[int, int]) -> Claim | None:
    """(c) With ECN, CoDel marks instead of dropping: no retransmissions."""
    r0 = _get(t, link, mix, "fq_codel", "retransmits")
    r1 = _get(t, link, mix, "fq_codel-ecn", "retransmits")
    if math.isnan(r0) or math.isnan(r1):
        return None
    ce = _get(t, link, mix, "fq_codel-ecn", "down_ce_marks")
    return Claim(
        f"(c) {link} {mix_text(mix)}: FQ-CoDel with ECN, no TCP retransmissions",
        "≈ 0 with ECN (CoDel marks instead of dropping)",
        f"rtx per trial: drop {r0:.0f}, ECN {r1:.0f}",
        bool(r1 <= max(2.0, 0.05 * r0)),
        "ECN variant <= 2 retransmissions per trial or <= 5 % of the drop variant's",
        f"Every TCP flow counted; {ce:.0f} CE marks downstream with ECN.",
    )


def _l4s(t: pd.DataFrame, link: str, mix: tuple[int, int]) -> Claim | None:
    """(d) The call and game (ECT(1)) in DualPI2's L queue beside Prague downloads."""
    c = _get(t, link, mix, "dualpi2-l4s", "call_down_delay_p95_s")
    g = _get(t, link, mix, "dualpi2-l4s", "game_down_delay_p95_s")
    if math.isnan(c):
        return None
    cc = _get(t, link, mix, "dualpi2", "call_down_delay_p95_s")
    bound = P.l4s_wait_s(link, mix[0])
    m = P.mtu_s(link)
    return Claim(
        f"(d) {link} {mix_text(mix)}: DualPI2 L queue, call and game",
        f"p95 ≤ {_ms(bound)}",
        f"p95 call {_ms(c)}, game {_ms(g)}",
        bool(max(c, g) <= bound),
        f"p95 of call and game ≤ {_ms(bound)}",
        f"A full-size packet takes {m * 1e3:.2f} ms on the wire. The L packet waits for"
        " the packet in service, the 1 ms step's queue or the standing queue left by"
        f" {mix[0]} Prague flow(s) at their minimum window of {P.PRAGUE_MIN_CWND} beyond"
        " one BDP (whichever is larger), and one RTT of additive increase (a packet per"
        f" flow). RFC 9332 §1's ~1 ms is for rates where a packet is well under 1 ms."
        f" Classic DualPI2: call p95 {_ms(cc)}.",
    )


def today_claims(store: Store) -> list[Claim]:
    t = today_table(store)
    have = set(t.index.get_level_values("queue"))
    mixes = mixes_in(t)
    out: list[Claim | None] = []
    if {"cake", "cake-ackfilter"} <= have:
        out += [_ack_filter(t, lk, m) for lk in LINKS for m in mixes if m[1] > 0]
    if "drop-tail" in have:
        out += [
            _call_delay(t, lk, m, d)
            for lk in LINKS
            for m in mixes
            for d in (("down", "up") if m[1] else ("down",))
        ]
    if {"fq_codel", "fq_codel-ecn"} <= have:
        out += [_ecn(t, lk, m) for lk in LINKS for m in mixes]
    if "dualpi2-l4s" in have:
        out += [_l4s(t, lk, m) for lk in LINKS for m in mixes]
    out += video_claims(store)
    return [c for c in out if c is not None]
