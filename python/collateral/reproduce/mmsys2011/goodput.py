"""MMSys 2011 Fig. 3: a bulk download's goodput against the slot queue's length on
ADSL1 (3a) and ADSL2 (3b), with the capacity it should fill."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ...plot.draw import mark_cut
from ...plot.style import STYLE, legend_outside, plt, suptitle
from ..claims import Claim
from ..drawing import CC_STYLE, save_with_caption, spread_text, trials_word
from ..stored import query
from .sweep import LINKS, agg, capacity, grid_step, marks_and_lines

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store


def goodput_vs_slots(link: str):
    def draw(store: Store, stem: Path, label: str) -> list[Path]:
        df = query(
            store,
            f"SELECT tcp0_cc, down_queue_limit_packets AS slots, tcp0_goodput_bps AS g "
            f"FROM summary WHERE link = '{link}'",
        )
        a = agg(df, ["tcp0_cc", "slots"], "g")
        cap = capacity(link)
        n = int(a.n.min()) if len(a) else 0
        spread = spread_text(n, (0.0, 1.0))
        step = grid_step(a.slots)
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(8.5, 4.8), layout="constrained")
            for cc, d in a.groupby("tcp0_cc"):
                color, marker = CC_STYLE.get(cc, ("k", "o"))
                d = d.sort_values("slots")
                marks_and_lines(
                    ax,
                    d.slots,
                    d.med / 1e6,
                    d.lo / 1e6,
                    d.hi / 1e6,
                    step,
                    color=color,
                    marker=marker,
                    label=f"{cc}: median, {spread}",
                )
            ax.axhline(
                cap / 1e6,
                color="k",
                ls="--",
                lw=1.0,
                label=f"link capacity for TCP payload\n(less the CBR): {cap / 1e6:.3f} Mbit/s",
            )
            # The data's range, not 0: the differences that matter are a few per cent
            # of the capacity (the axis does not start at 0; its ticks say so).
            lo = min(float(a.lo.min()) if len(a) else cap, cap) / 1e6
            hi = max(float(a.hi.max()) if len(a) else cap, cap) / 1e6
            pad = 0.08 * max(hi - lo, 0.02 * hi)
            ax.set_ylim(lo - pad, hi + pad)
            mark_cut(ax)  # a visible break: the axis does not start at 0
            ax.set_xlabel("queue length (packets, PS)")
            ax.set_ylabel("TCP goodput (Mbit/s; axis not from 0)")
            legend_outside(ax, "below", ncols=3, fontsize=9)
            suptitle(
                fig,
                f"{label}\n{link.upper()}, RTT 100 ms, CBR both ways, {trials_word(n)} per point",
            )
            rate = LINKS[link][0] / 1e6
            caption = (
                f"Goodput of one bulk TCP download (NewReno, CUBIC; Linux 2.6.25) on"
                f" {link.upper()} ({rate:g} Mbit/s down, RTT 100 ms) against the gateway's"
                f" queue length in 1500-byte packet slots (PS), beside 186 B / 20 ms CBR"
                f" flows both ways. Markers: median over {trials_word(n)} per size; bars:"
                f" {spread}; lines join only neighbouring sampled sizes. The dashed line is"
                f" the most TCP can carry: the link rate less the CBR flow, times payload"
                f" per packet ({cap / 1e6:.3f} Mbit/s). The y axis spans the data, not 0,"
                " so that the few per cent a short queue costs are visible."
            )
            return save_with_caption(fig, stem, caption)

    return draw


def _fills(a: pd.DataFrame, cc: str, cap: float, frac: float = 0.99) -> float:
    """Smallest queue at which the median goodput is within 1 % of the capacity."""
    d = a[a.tcp0_cc == cc].sort_values("slots")
    ok = d[d.med >= frac * cap]
    return float(ok.slots.iloc[0]) if len(ok) else math.inf


def fig3_claims(link: str):
    def claims(store: Store):
        df = query(
            store,
            f"SELECT tcp0_cc, down_queue_limit_packets AS slots, tcp0_goodput_bps AS g "
            f"FROM summary WHERE link = '{link}'",
        )
        a = agg(df, ["tcp0_cc", "slots"], "g")
        cap = capacity(link)
        c, n = _fills(a, "cubic", cap), _fills(a, "newreno", cap)
        fmt = lambda s: "never (up to 67)" if math.isinf(s) else f"{s:.0f} slots"  # noqa: E731
        if link == "adsl1":
            return [
                Claim(
                    "smallest PS queue at which CUBIC fills ADSL1 (median ≥ 99 % of capacity)",
                    "7 packets",
                    fmt(c),
                    c <= 7,
                    "≤ 7 slots: the first swept size (7, 14, 20, … slots) whose median goodput"
                    " is ≥ 99 % of the payload capacity less the CBR",
                ),
                Claim(
                    "… and NewReno",
                    "about 20 packets",
                    fmt(n),
                    14 <= n <= 27,
                    "14–27 slots: 20 or one swept size either side (same 99 % criterion)",
                ),
            ]
        return [
            Claim(
                "ADSL2: both fall short below ~40 packets (CUBIC fills from)",
                "≈ 40 packets",
                fmt(c),
                27 <= c <= 54,
                # "both fall short below ~40 packets": CUBIC short (median < 99 % of
                # capacity) at every size up to 20 slots, and full by 54 — two swept sizes
                # either side of 40.
                "first size with median ≥ 99 % of capacity in 27–54 slots (two swept"
                " sizes either side of 40)",
            ),
            Claim(
                "ADSL2: NewReno never quite fills it up to 67 packets",
                "not full at 67",
                fmt(n),
                math.isinf(n),
                "median < 99 % of capacity at every swept size up to 67 slots",
            ),
        ]

    return claims
