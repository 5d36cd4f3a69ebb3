"""The responsiveness study's claims, each what the model predicts from the link's
parameters (``resp_physics``): drop-tail's loaded latency between its standing queue and
its full buffer, hence an RPM ceiling and a grade band; RPM rising as the buffer shrinks;
flow queuing's sparse-probe bound and the RPM floor it gives; the PI controllers' target;
DualPI2 beside L4S load. A claim that differs is a surprise, not physics."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..claims import Claim
from .links_physics import CUBIC_BETA
from .resp_physics import (
    BDPS,
    LINKS,
    PI_TARGET_S,
    Link,
    grades_between,
    rpm_at_least_foreign,
    rpm_at_most,
)
from .resp_table import LINK_ORDER, resp_table

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

FAIR = ("fq_codel", "fq_codel-ecn", "cake")
#: A step between buffer sizes counts for (c) where the downstream limit grows this much.
STEP_RATIO = 1.9


def dt(k: float) -> str:
    return f"drop-tail-{k:g}"


def _get(t: pd.DataFrame, link: str, q: str, col: str) -> float:
    return float(t.loc[(link, q), col]) if (link, q) in t.index else math.nan


def _ms(s: float) -> str:
    return "not measured" if math.isnan(s) else f"{s * 1e3:.1f} ms"


def _rpm(r: float) -> str:
    return "not measured" if math.isnan(r) else f"{r:.0f}"


def _verdict(ok: bool, *measured: float) -> bool | None:
    """``ok``, or no verdict where a measure is missing: a run too short for the test's
    loaded phase (the load saturated at its end, as ``--quick`` can) measured nothing to
    judge, which is not a claim that differs."""
    return None if any(math.isnan(v) for v in measured) else bool(ok)


def _drop_tail(t: pd.DataFrame, link: str, lk: Link, k: float) -> list[Claim]:
    """(a) loaded latency between base + standing queue and base + full buffers, and
    (b) the grade those bounds allow."""
    q = dt(k)
    if (link, q) not in t.index:
        return []
    lat = _get(t, link, q, "latency_loaded_s")
    lo, hi = lk.base_s() + lk.dt_queue_lo_s(k), lk.base_s() + lk.dt_queue_hi_s(k)
    rpm, rpm_hi = _get(t, link, q, "rpm"), rpm_at_most(lk.rtt_s + lk.dt_queue_lo_s(k))
    lim = f"{lk.limit(k, 'down')}p down, {lk.limit(k, 'up')}p up"
    a = Claim(
        f"(a) {link} drop-tail {k:g} BDP: loaded RTT is base + queue, RPM ≤ its ceiling",
        f"{_ms(lo)} ≤ loaded RTT ≤ {_ms(hi)}; RPM ≤ {rpm_hi:.0f}",
        f"{_ms(lat)}, RPM {_rpm(rpm)}",
        _verdict(lo <= lat <= hi and rpm <= rpm_hi, lat, rpm),
        "the probes' median loaded RTT (median over trials) within the bounds; the median"
        " RPM at most 60 000 / (base RTT + the least standing queue, ms)",
        f"Limits {lim}. At most a probe waits behind a full buffer of full-size packets and"
        f" the packet in service each way ({_ms(lk.dt_queue_hi_s(k))}). At least the four"
        f" CUBIC downloads keep β(B + BDP') - BDP' queued downstream (β = {CUBIC_BETA:.2f},"
        " BDP' over the base RTT plus a full upstream queue, the longest their ACKs can"
        f" wait): {_ms(lk.dt_queue_lo_s(k))}. Every foreign and self probe crosses that queue,"
        " so neither of RPM's terms exceeds 60 000 / (base + it).",
    )
    inc = _get(t, link, q, "latency_increase_s")
    grades = grades_between(lk.dt_queue_lo_s(k), lk.dt_queue_hi_s(k))
    grade = t.loc[(link, q), "grade"]
    got = grade if isinstance(grade, str) else ""  # None or NaN: not measured
    b = Claim(
        f"(b) {link} drop-tail {k:g} BDP: the DSLReports grade of its queue",
        "/".join(grades),
        f"{got or 'not measured'} (increase {_ms(inc)})",
        _verdict(bool(got) and all(g in grades for g in got.split("/")), inc),
        "every trial's grade among those of an increase within the queue's bounds",
        f"The graded increase (mean loaded minus mean idle RTT) is the standing queue:"
        f" between {_ms(lk.dt_queue_lo_s(k))} and {_ms(lk.dt_queue_hi_s(k))}; DSLReports"
        " grades A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, else F.",
    )
    return [a, b]


def _shrinks(t: pd.DataFrame, link: str) -> Claim | None:
    """(c) RPM rises as the drop-tail buffer shrinks."""
    have = [k for k in BDPS if (link, dt(k)) in t.index]
    if len(have) < 2:
        return None
    rpm = [_get(t, link, dt(k), "rpm") for k in have]
    lk = LINKS[link]
    # The steps where the downstream limit (nearly) doubles; rounding and the 4-packet
    # floor make some steps smaller (ADSL1's 0.5 to 1 BDP: 4 to 6 packets).
    steps = [
        (rpm[i], rpm[i + 1])
        for i in range(len(have) - 1)
        if lk.limit(have[i + 1], "down") >= STEP_RATIO * lk.limit(have[i], "down")
    ]
    ok = all(a >= b for a, b in steps) and rpm[0] > rpm[-1]
    return Claim(
        f"(c) {link}: RPM rises as the drop-tail buffer shrinks",
        "RPM lower at 4 BDP than at 0.5, and not higher after a step that doubles the buffer",
        ", ".join(f"{k:g} BDP {_rpm(r)}" for k, r in zip(have, rpm, strict=True)),
        _verdict(ok, *rpm),
        f"median RPM at each size ≥ at the next where the downstream limit grows ≥ {STEP_RATIO}x;"
        " strictly lower at the largest size than at the smallest",
        "A larger buffer holds a larger standing queue (both bounds of (a) grow with k)"
        " and every probe waits in it. On ADSL1 the upstream limit is 4 packets at every"
        " size (1 BDP is 1.07 packets), so only the downstream grows, and 0.5 to 1 BDP is"
        " 4 to 6 packets there (the floor): within the trials' noise, no order claimed.",
    )


def _fair(t: pd.DataFrame, link: str, lk: Link, q: str) -> Claim | None:
    """(d) flow queuing keeps the sparse probes' RTT within one round."""
    if (link, q) not in t.index:
        return None
    lat, rpm = _get(t, link, q, "latency_loaded_s"), _get(t, link, q, "rpm")
    hi = lk.base_s() + lk.sparse_wait_s()
    floor = rpm_at_least_foreign(hi)
    return Claim(
        f"(d) {link} {q}: the sparse probes wait at most one round",
        f"loaded RTT ≤ {_ms(hi)}; RPM ≥ {floor:.0f}",
        f"{_ms(lat)}, RPM {_rpm(rpm)}",
        _verdict(lat <= hi and rpm >= floor, lat, rpm),
        "the median loaded RTT at most the bound; the median RPM at least 30 000 / bound (ms)",
        "A probe (88 B every 200 ms) is a sparse flow: each way it waits for the packet in"
        " service, one packet of each of the four bulk flows and the four ACK flows in the"
        f" round, and the other three probes: {_ms(lk.sparse_wait_s())} both ways on top of"
        f" the empty path's {_ms(lk.base_s())}. CoDel's target is what a bulk flow's own"
        " queue keeps, not a sparse one's. Every foreign probe within the bound makes RPM's"
        " foreign term ≥ 60 000 / bound and RPM ≥ half of it.",
    )


def _fq_beats_dt(t: pd.DataFrame, link: str, lk: Link) -> list[Claim]:
    """(e) FQ-CoDel's RPM above drop-tail's where the bounds separate them."""
    out = []
    floor = rpm_at_least_foreign(lk.base_s() + lk.sparse_wait_s())
    for k in BDPS:
        ceil = rpm_at_most(lk.rtt_s + lk.dt_queue_lo_s(k))
        if floor <= ceil or (link, dt(k)) not in t.index or (link, "fq_codel") not in t.index:
            continue
        fq, d = _get(t, link, "fq_codel", "rpm"), _get(t, link, dt(k), "rpm")
        out.append(
            Claim(
                f"(e) {link}: FQ-CoDel's RPM above drop-tail's at {k:g} BDP",
                f"FQ-CoDel ≥ {floor:.0f} > {ceil:.0f} ≥ drop-tail",
                f"FQ-CoDel {_rpm(fq)}, drop-tail {_rpm(d)}",
                _verdict(fq > d, fq, d),
                "median RPM of FQ-CoDel above drop-tail's",
                "(d)'s floor for FQ-CoDel is above (a)'s ceiling for drop-tail at this size;"
                " at the other sizes and links the bounds overlap and the model does not"
                " predict the order from physics alone.",
            )
        )
    return out


def _pi(t: pd.DataFrame, link: str, lk: Link, q: str) -> Claim | None:
    """(f) PIE and DualPI2's Classic queue hold the probes near the 15 ms target."""
    if (link, q) not in t.index:
        return None
    lat = _get(t, link, q, "latency_loaded_s")
    hi = lk.base_s() + lk.pi_wait_s()
    return Claim(
        f"(f) {link} {q}: the PI controller holds the queue near its target",
        f"loaded RTT ≤ {_ms(hi)}",
        _ms(lat),
        _verdict(lat <= hi, lat),
        f"the median loaded RTT ≤ base + (2 x {PI_TARGET_S * 1e3:g} ms + 3 packets) each way",
        f"PIE and DualPI2's C queue drive the queue's delay to {PI_TARGET_S * 1e3:g} ms;"
        " twice that allows for the controller's swings, and neither drops while under two"
        " MTUs are queued, so on a slow line two packets and the one in service remain.",
    )


def _l4s(t: pd.DataFrame, link: str, lk: Link) -> Claim | None:
    """(g) DualPI2 with L4S load: the Not-ECT probes stay near the base RTT where the C
    queue is not overloaded by Classic ACKs."""
    if (link, "dualpi2-l4s") not in t.index:
        return None
    lat, rpm = _get(t, link, "dualpi2-l4s", "latency_loaded_s"), _get(t, link, "dualpi2-l4s", "rpm")
    hi = lk.base_s() + lk.l4s_wait_s()
    floor = rpm_at_least_foreign(hi)
    held = [d for d in ("down", "up") if lk.c_overloaded(d)]
    return Claim(
        f"(g) {link} DualPI2 with L4S load: probes near base where C holds no backlog",
        f"loaded RTT ≤ {_ms(hi)}; RPM ≥ {floor:.0f}",
        f"{_ms(lat)}, RPM {_rpm(rpm)}",
        _verdict(lat <= hi and rpm >= floor, lat, rpm),
        "the median loaded RTT at most the bound; the median RPM at least 30 000 / bound (ms)",
        "The load is Prague in the L queue (1 ms step); a Not-ECT probe waits in the C"
        " queue for at most nine L packets (WRR, 10 % for C), the packet in service and"
        " the step. The other way's pure ACKs are Not-ECT too: where they alone exceed"
        f" C's 10 % ({', '.join(held) or 'nowhere'}stream here) C backs up and PI2 holds it"
        f" near {PI_TARGET_S * 1e3:g} ms, so that direction gets the PI bound instead.",
    )


def responsiveness_claims(store: Store) -> list[Claim]:
    t = resp_table(store)
    have = set(t.index.get_level_values("link"))
    out: list[Claim | None] = []
    for link in (lk for lk in LINK_ORDER if lk in have):
        lk = LINKS[link]
        for k in BDPS:
            out += _drop_tail(t, link, lk, k)
        out.append(_shrinks(t, link))
        out += [_fair(t, link, lk, q) for q in FAIR]
        out += _fq_beats_dt(t, link, lk)
        out += [_pi(t, link, lk, q) for q in ("pie", "dualpi2")]
        out.append(_l4s(t, link, lk))
    return [c for c in out if c is not None]
