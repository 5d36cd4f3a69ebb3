"""The responsiveness figure: per link (columns), RPM (top) and the probes' loaded round
trip (bottom) per access queue, each trial a dot and the median a bar, with the physics'
drop-tail bounds and flow queuing's bound beside them; and the table of medians (RPM
trimmed/p90/p99, grade, QoO, latency, the call's delay, goodput). The claims are in
``resp_claims``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...plot.style import STYLE, plt
from ..drawing import save_with_caption, trials_word
from .resp_physics import BDPS, LINKS
from .resp_table import LINK_ORDER, LINK_TITLES, QUEUES, TABLE_COLS, resp_table, resp_trials
from .table import write_tables

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

#: Horizontal spread of a queue's trial dots (fraction of a category's width).
_JITTER = 0.18


def _bounds(link: str) -> dict[str, tuple[float, float]]:
    """Per queue the physics' (low, high) loaded RTT, where a claim bounds it."""
    lk = LINKS[link]
    b = {
        f"drop-tail-{k:g}": (lk.base_s() + lk.dt_queue_lo_s(k), lk.base_s() + lk.dt_queue_hi_s(k))
        for k in BDPS
    }
    fq = lk.base_s() + lk.sparse_wait_s()
    b |= {q: (lk.base_s(), fq) for q in ("fq_codel", "fq_codel-ecn", "cake")}
    b |= {q: (lk.base_s(), lk.base_s() + lk.pi_wait_s()) for q in ("pie", "dualpi2")}
    b["dualpi2-l4s"] = (lk.base_s(), lk.base_s() + lk.l4s_wait_s())
    return b


def _panel(ax: Any, df: pd.DataFrame, qs: list[str], col: str, scale: float) -> None:
    import numpy as np

    for i, q in enumerate(qs):
        v = df[df.queue == q][col].to_numpy(float) * scale
        v = v[np.isfinite(v)]
        color = QUEUES[q][0]
        if len(v):
            ax.bar(i, float(np.median(v)), width=0.7, color=color, alpha=0.35, lw=0)
            off = np.linspace(-_JITTER, _JITTER, len(v)) if len(v) > 1 else np.zeros(1)
            ax.plot(i + off, v, "o", ms=4, color=color, mec="k", mew=0.4)
    ax.set_xticks(range(len(qs)), [QUEUES[q][1] for q in qs], fontsize=8)
    ax.set_xlim(-0.6, len(qs) - 0.4)
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", color="0.9", lw=0.6)


def _figure(store: Store, stem: Path, label: str, n: int) -> list[Path]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ...plot.style import suptitle

    df = resp_trials(store)
    links = [lk for lk in LINK_ORDER if lk in set(df.link)]
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            2, max(len(links), 1), figsize=(6.2 * max(len(links), 1), 8.4),
            layout="constrained", squeeze=False,
        )  # fmt: skip
        for j, link in enumerate(links):
            d = df[df.link == link]
            qs = [q for q in QUEUES if q in set(d.queue)]
            top, bottom = axes[0, j], axes[1, j]
            _panel(top, d, qs, "rpm", 1.0)
            top.set_title(LINK_TITLES.get(link, link), fontsize=10)
            top.set_ylabel("RPM (trimmed mean)" if j == 0 else "")
            _panel(bottom, d, qs, "latency_loaded_s", 1e3)
            b = _bounds(link)
            for i, q in enumerate(qs):
                if q in b:
                    lo, hi = b[q]
                    bottom.plot([i - 0.38] * 2, [lo * 1e3, hi * 1e3], color="k", lw=1.2)
            bottom.axhline(LINKS[link].base_s() * 1e3, color="k", lw=0.8, ls=(0, (1, 3)))
            bottom.set_ylabel("probes' loaded RTT, median (ms)" if j == 0 else "")
            ymax = max(float(d.latency_loaded_s.max()) * 1e3 * 1.25, LINKS[link].base_s() * 2e3)
            bottom.set_ylim(0, ymax)
        handles = [
            Patch(color="0.6", alpha=0.35, label="median over trials"),
            Line2D(
                [], [], ls="", marker="o", ms=4, color="0.6", mec="k", mew=0.4, label="one trial"
            ),
            Line2D(
                [], [], color="k", lw=1.2, label="physics' bounds (claims), clipped to the axis"
            ),
            Line2D([], [], color="k", lw=0.8, ls=(0, (1, 3)), label="empty path's probe RTT"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=9)
        suptitle(
            fig,
            f"{label}\nRRUL (4 CUBIC downloads, 4 uploads, round-trip probes) and a G.711 call;"
            f" {trials_word(n)} per queue",
        )
        caption = (
            "Responsiveness under Flent's RRUL load (four CUBIC downloads and four uploads"
            " on the Linux 6 stack, Prague with L4S ECN under 'DualPI2 L4S') on ADSL1 (left),"
            " a 50/10 Mbit/s cable line (middle) and a 1000/100 Mbit/s fibre line (right),"
            " one category per access queue in both directions: drop-tail at 0.5, 1, 2 and 4"
            " times each direction's BDP (in packets, at least 4), PIE, FQ-CoDel dropping"
            " and marking ECN, CAKE at the line rate, DualPI2 with classic and with L4S load."
            " Top: RPM (draft-ietf-ippm-responsiveness, trimmed means of the UDP probes and"
            " the load flows' RTT samples) as the core computes it. Bottom: the probes' median"
            " round trip once the load settled. Dots are trials, bars their median"
            f" ({trials_word(n)} per category). Thin black segments: the bounds the physics"
            " gives for the loaded RTT (drop-tail: the least standing queue CUBIC leaves to a"
            " full buffer both ways; flow queuing: one round of the other flows; PI"
            " controllers: twice the 15 ms target; DualPI2 L4S: the WRR's L packets, or PI2's"
            " target where Classic ACKs overload the C queue), drawn beside the category;"
            " dotted: the probe's RTT on the empty path."
        )
        return save_with_caption(fig, stem, caption)


def responsiveness(store: Store, stem: Path, label: str) -> list[Path]:
    """The figure and the table of medians (Markdown and CSV)."""
    t = resp_table(store)
    n = int(t.trials.min()) if len(t) else 0
    files = _figure(store, stem, label, n)
    head = (
        "Responsiveness under RRUL: medians over trials. RPM: draft-ietf-ippm-responsiveness"
        " (trimmed mean; p90 and p99: the same formula with percentiles); grade: DSLReports'"
        " bufferbloat grade of each trial (most common first); QoO: draft-ietf-ippm-qoo of"
        " the loaded probes for VoIP, gaming, video conferencing and web (0-100); RTTs: the"
        " probes' median round trip before and under load; probe loss: the loaded probes"
        " lost either way (QoO scores it: above 5 % it is 0 for VoIP, gaming and web);"
        " call: the G.711 call's added one-way delay p95 after 10 s; goodput: the four TCP"
        " flows each way summed."
    )
    cols = [*TABLE_COLS[:3], ("grade", "grade", None, "{}"), *TABLE_COLS[3:]]
    return [*files, *write_tables(t, stem, cols, head)]
