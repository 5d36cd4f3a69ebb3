"""The today-queues figures: a call and a game beside downloads under each access queue
variant on ADSL1 and cable, as dot plots (one row per variant, one marker per TCP mix)
in three figures: the call's delay, its loss and quality, and the TCP side; a fourth,
the video call's (:mod:`.video`). The claims are in ``queue_claims``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.style import STYLE, plt
from ..drawing import save_with_caption
from . import physics as P
from .table import (
    LINKS,
    MIXES,
    TABLE_COLS,
    VARIANTS,
    mixes_in,
    today_table,
    trials_text,
    variant_order,
    write_tables,
)
from .video import video_figure

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

#: Marker and colour per TCP mix (downloads, uploads).
MIX_STYLE = {(1, 0): ("o", "C0"), (4, 0): ("s", "C1"), (1, 1): ("^", "C2"), (4, 1): ("D", "C3")}
#: Delays below this are drawn at it (the delay axis is logarithmic).
FLOOR_MS = 0.05


def _dots(
    ax: Any, t: pd.DataFrame, link: str, col: str, scale: float, floor: float | None = None
) -> None:
    """One row per queue variant, one marker per TCP mix (offset a little within the
    row); values below ``floor`` drawn at it, hollow."""
    queues = variant_order(t.index.get_level_values("queue").unique())
    mixes = mixes_in(t)
    for k, mix in enumerate(mixes):
        marker, color = MIX_STYLE.get(mix, ("x", "k"))
        ys, xs, low = [], [], []
        for i, q in enumerate(queues):
            key = (link, *mix, q)
            v = float(t.loc[key, col]) * scale if key in t.index else math.nan
            if not math.isfinite(v):
                continue
            y = i + (k - (len(mixes) - 1) / 2) * 0.16
            if floor is not None and v < floor:
                low.append((floor, y))
            else:
                xs.append(v)
                ys.append(y)
        ax.plot(xs, ys, marker, color=color, ms=5.5, ls="none")
        if low:
            ax.plot(*zip(*low, strict=True), marker, mfc="none", color=color, ms=5.5, ls="none")
    ax.set_yticks(
        range(len(queues)), [VARIANTS.get(q, ("k", q))[1].replace("\n", " ") for q in queues]
    )
    ax.set_ylim(len(queues) - 0.5, -0.5)
    for i in range(1, len(queues)):
        ax.axhline(i - 0.5, color="0.9", lw=0.6, zorder=0)
    ax.grid(axis="x", color="0.9", lw=0.6)


def _legend(fig: Any, t: pd.DataFrame, extra: list[Any]) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            marker=MIX_STYLE.get(m, ("x", "k"))[0],
            color=MIX_STYLE.get(m, ("x", "k"))[1],
            ls="none",
            label=MIXES.get(m, (None, 1, f"{m[0]} down + {m[1]} up"))[2],
        )
        for m in mixes_in(t)
    ]
    fig.legend(
        handles=handles + extra,
        loc="outside lower center",
        ncols=len(handles) + len(extra),
        fontsize=9,
    )


def _links(t: pd.DataFrame) -> list[str]:
    return [lk for lk in LINKS if lk in t.index.get_level_values("link")]


def _delay_figure(t: pd.DataFrame, stem: Path, label: str, n: int) -> list[Path]:
    from matplotlib.lines import Line2D

    from ...plot.style import suptitle

    links = _links(t)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            len(links),
            2,
            figsize=(12, 3.6 * len(links) + 1.2),
            layout="constrained",
            squeeze=False,
            sharey=True,
        )
        for i, link in enumerate(links):
            for j, d in enumerate(("down", "up")):
                ax = axes[i, j]
                _dots(ax, t, link, f"call_{d}_delay_p95_s", 1e3, FLOOR_MS)
                ax.set_xscale("log")
                ax.axvline(P.mtu_s(link, d) * 1e3, color="k", lw=0.9, ls="-.")
                ax.axvline(P.drain_s(link, d) * 1e3, color="k", lw=0.9, ls=":")
                vals = t.xs(link, level="link")[f"call_{d}_delay_p95_s"].to_numpy(float) * 1e3
                top = float(np.nanmax(vals)) if np.isfinite(vals).any() else 1.0
                ax.set_xlim(FLOOR_MS * 0.7, max(top, P.drain_s(link, d) * 1e3) * 1.6)
                ax.set_title(f"{link} {d}stream", fontsize=10, fontweight="bold")
                ax.set_xlabel("call p95 added one-way delay (ms, log)")
        _legend(
            fig,
            t,
            [
                Line2D([], [], color="k", lw=0.9, ls="-.", label="one 1500 B packet on the wire"),
                Line2D([], [], color="k", lw=0.9, ls=":", label="drop-tail's 1 BDP drained"),
            ],
        )
        suptitle(
            fig,
            f"{label}\nG.711 call (EF) beside CUBIC downloads and an upload; medians"
            f" of {trials_text(n)}",
        )
        caption = (
            "The G.711 call's 95th-percentile added one-way delay (one-way delay minus the"
            " empty path's) under each access queue variant (rows), downstream (left) and"
            " upstream (right), on ADSL1 (1.5 Mbit/s / 256 kbit/s, ATM; top) and 100/20"
            " Mbit/s cable (bottom); one marker per TCP mix (1 or 4 CUBIC downloads, with or"
            f" without an upload), the median of {trials_text(n)}. Logarithmic delay axis;"
            f" values below {FLOOR_MS} ms are drawn hollow at its left edge. Dash-dot: one"
            " 1500 B packet's time on the wire, the wait behind the packet in service that"
            " no queue removes; dotted: drop-tail's limit (1 BDP) over the rate. The"
            " upstream call only competes with an upload in the upload mixes."
        )
        return save_with_caption(fig, stem, caption)


def _grid_figure(
    t: pd.DataFrame, stem: Path, title: str, caption: str, cols: list[tuple[str, float, str, Any]]
) -> list[Path]:
    """Dot plots, rows the links, columns ``cols`` = (column, scale, x label, x limits)."""
    from ...plot.style import suptitle

    links = _links(t)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            len(links),
            len(cols),
            figsize=(4.2 * len(cols) + 1.5, 3.6 * len(links) + 1.2),
            layout="constrained",
            squeeze=False,
            sharey=True,
        )
        for i, link in enumerate(links):
            for j, (col, scale, xlabel, lim) in enumerate(cols):
                ax = axes[i, j]
                _dots(ax, t, link, col, scale)
                vals = t.xs(link, level="link")[col].to_numpy(float) * scale
                top = float(np.nanmax(vals)) if np.isfinite(vals).any() else 1.0
                lo, hi = lim if lim else (0.0, top * 1.1 if top > 0 else 1.0)
                ax.set_xlim(lo - 0.03 * (hi - lo), hi)
                ax.set_title(f"{link}", fontsize=10, fontweight="bold")
                ax.set_xlabel(xlabel)
        _legend(fig, t, [])
        suptitle(fig, title)
        return save_with_caption(fig, stem, caption)


def today_queues(store: Store, stem: Path, label: str) -> list[Path]:
    """Three dot-plot figures (the call's delay; its loss and MOS with the game's late
    packets; TCP goodput and upstream ACKs) and the table of medians."""
    t = today_table(store)
    n = int(t.trials.min()) if len(t) else 0
    files = _delay_figure(t, stem.with_name(stem.name + "-delay"), label, n)
    mix_note = (
        " one marker per TCP mix (1 or 4 CUBIC downloads, with or without an upload),"
        f" the median of {trials_text(n)}; rows: the access queue variants; top ADSL1,"
        " bottom cable."
    )
    files += _grid_figure(
        t,
        stem.with_name(stem.name + "-quality"),
        f"{label}\ncall loss and quality, game packets later than 100 ms",
        "The G.711 call's loss downstream and upstream, its MOS (ITU-T G.107) downstream"
        " and upstream, and the share of Quake 3 packets later than 100 ms one way (lost"
        " ones included) downstream;" + mix_note,
        [
            ("call_down_loss_rate", 100, "call loss down (%)", None),
            ("call_up_loss_rate", 100, "call loss up (%)", None),
            ("call_down_mos", 1, "call MOS down", (1.0, 4.5)),
            ("call_up_mos", 1, "call MOS up", (1.0, 4.5)),
            ("game_down_over_100ms", 100, "game > 100 ms down (%)", None),
        ],
    )
    files += _grid_figure(
        t,
        stem.with_name(stem.name + "-tcp"),
        f"{label}\nTCP goodput and the downloads' ACKs upstream",
        "The downloads' goodput (all downloads summed) and the upload's, after the"
        " warm-up, and the downloads' pure ACKs per second offered to the upstream queue"
        " and sent (offered less dropped; CAKE's ACK filter's removals count as drops);" + mix_note,
        [
            ("down_goodput_bps", 1e-6, "download goodput (Mbit/s)", None),
            ("up_goodput_bps", 1e-6, "upload goodput (Mbit/s)", None),
            ("acks_offered_per_s", 1, "upstream ACKs offered (/s)", None),
            ("acks_sent_per_s", 1, "upstream ACKs sent (/s)", None),
        ],
    )
    head = (
        "Today's access queues: medians over trials. call = G.711 (EF), game = Quake 3;"
        " delays are p95 of the one-way delay minus the empty-path delay; '>100 ms' is the"
        " share of game packets (lost included) later than 100 ms one way; goodput after"
        " the warm-up, all downloads summed, and the upload's (– without one); TCP rtx ="
        " retransmissions of every TCP flow; up ACKs offered = the downloads' pure ACKs"
        " arriving at the upstream queue, sent = offered - dropped (the ACK filter's"
        " removals count as drops), per second after the warm-up (with an upload, its"
        " segments are taken out of the upstream TCP count: see the experiment file)."
    )
    files += video_figure(store, stem.with_name(stem.name + "-video"), label)
    return [*files, *write_tables(t, stem, TABLE_COLS, head)]
