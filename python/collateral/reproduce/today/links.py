"""The today-links figure: the call's added one-way delay as a CDF per link (rows) and
direction (columns), one line per access queue, pooled over trials; and the table of
medians (p95/p99 delay, loss, goodput) beside it. The claims are in ``links_claims``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.style import STYLE, plt
from ..drawing import save_with_caption, trials_word
from .links_physics import LINKS
from .links_table import (
    LINK_ORDER,
    LINK_TITLES,
    QUEUES,
    TABLE_COLS,
    call_delays,
    links_table,
)
from .table import write_tables

if TYPE_CHECKING:
    from ...store import Store

#: Added delays below this are drawn at it (the delay axis is logarithmic).
FLOOR_MS = 0.05
#: Points per CDF line: evenly spaced ranks and as many more crowding the tail.
_POINTS = 400
#: Line style and width per queue, widest first, so that lines that coincide (where the
#: link, not the queue, sets the delay) still show each colour.
LINE = {"drop-tail": ("-", 3.0), "fq_codel": ("-", 2.0), "cake": ("--", 1.6), "dualpi2": (":", 1.6)}


def cdf_points(arrived: np.ndarray, known: int) -> tuple[np.ndarray, np.ndarray]:
    """(delay, share of the ``known`` packets arrived no later) at a few hundred ranks
    of the sorted ``arrived`` delays, dense towards the tail; the last point is the
    largest delay at 1 - loss."""
    n = len(arrived)
    if n == 0 or known == 0:
        return np.empty(0), np.empty(0)
    even = np.linspace(0, n - 1, _POINTS)
    tail = n - np.geomspace(n, 1, _POINTS)
    idx = np.unique(np.clip(np.round(np.concatenate([even, tail])).astype(int), 0, n - 1))
    return arrived[idx], (idx + 1) / known


def _panel(ax: Any, delays: dict, link: str, d: str) -> float:
    """One link and direction's CDFs; returns the largest delay drawn (ms)."""
    top = 1.0
    for q, (color, _) in QUEUES.items():
        got = delays.get((link, q, d))
        if got is None:
            continue
        x, y = cdf_points(*got)
        if not len(x):
            continue
        x = np.maximum(x * 1e3, FLOOR_MS)
        top = max(top, float(x[-1]))
        ls, lw = LINE.get(q, ("-", 1.4))
        ax.step(x, y, where="post", color=color, ls=ls, lw=lw)
    lk = LINKS.get(link)
    if lk is not None and lk.bulk[lk.index(d)] > 0:
        ax.axvline(lk.drain_s(d) * 1e3, color="k", lw=0.8, ls=(0, (1, 3)))
    if lk is not None and lk.spike_s > 0:
        ax.axvline(lk.spike_s * 1e3, color="k", lw=0.8, ls=(0, (6, 3)))
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(FLOOR_MS * 0.8, top * 1.5)
    ax.grid(color="0.9", lw=0.6)
    return top


def _cdf_figure(store: Store, stem: Path, label: str, n: int) -> list[Path]:
    from matplotlib.lines import Line2D

    from ...plot.style import suptitle

    delays = call_delays(store)
    links = [lk for lk in LINK_ORDER if any(k[0] == lk for k in delays)]
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            max(len(links), 1),
            2,
            figsize=(12, 3.3 * max(len(links), 1) + 1.4),
            layout="constrained",
            squeeze=False,
            sharey=True,
        )
        for i, link in enumerate(links):
            for j, d in enumerate(("down", "up")):
                ax = axes[i, j]
                _panel(ax, delays, link, d)
                ax.set_title(f"{LINK_TITLES.get(link, link)}: {d}stream", fontsize=10)
                ax.set_xlabel("call's added one-way delay (ms, log)")
                if j == 0:
                    ax.set_ylabel("share of packets")
        handles = [
            Line2D([], [], color=c, ls=LINE[q][0], lw=LINE[q][1], label=name)
            for q, (c, name) in QUEUES.items()
        ]
        handles += [
            Line2D([], [], color="k", lw=0.8, ls=(0, (1, 3)), label="drop-tail's 256 kB drained"),
            Line2D(
                [], [], color="k", lw=0.8, ls=(0, (6, 3)), label="the satellite's handover spike"
            ),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=9)
        suptitle(
            fig,
            f"{label}\nG.711 call beside 2 CUBIC downloads (and an upload on DOCSIS), a game"
            f" and a GCC video call; {trials_word(n)} pooled per line",
        )
        caption = (
            "The G.711 call's added one-way delay (one-way delay minus the empty path's)"
            " beside two CUBIC downloads, a Quake 3 game and a GCC video call (downstream),"
            " as a cumulative distribution over its packets after the warm-up, pooled over"
            f" {trials_word(n)}, on a cellular-like delivery trace (top), a Starlink-like"
            " LEO link (middle) and a 100/20 Mbit/s cable link with a DOCSIS request-grant"
            " upstream (bottom), downstream (left) and upstream (right), one line per access"
            " queue: drop-tail of 256 kB, FQ-CoDel, CAKE shaped at the link's nominal rate"
            " and DualPI2 with the call sending ECT(1) (Low Latency DOCSIS settings on the"
            " cable upstream). Each curve is the share of packets (lost ones included in"
            " the total) that arrived no later than x, so it levels off at 1 - loss."
            f" Logarithmic delay axis; delays below {FLOOR_MS} ms are drawn at its left"
            " edge. Where the link, not the queue, sets the delay the lines coincide (widest"
            " drawn first). Thin black, sparsely dotted: drop-tail's 256 kB over the nominal"
            " rate where a bulk flow sends; thin black, dashed: the satellite's 20 ms"
            " handover spike. Only the DOCSIS"
            " upstream carries an upload; the other upstreams carry ACKs, the call and the"
            " game."
        )
        return save_with_caption(fig, stem, caption)


def today_links(store: Store, stem: Path, label: str) -> list[Path]:
    """The CDF figure and the table of medians (Markdown and CSV)."""
    t = links_table(store)
    n = int(t.trials.min()) if len(t) else 0
    files = _cdf_figure(store, stem.with_name(stem.name + "-cdf"), label, n)
    head = (
        "Today's links: medians over trials. call = G.711 (EF; ECT(1) under DualPI2),"
        " game = Quake 3; delays are the added one-way delay (one-way delay minus the"
        " empty path's) after the warm-up, p95 from the summary, p99 from the per-packet"
        " trace (arrived packets); loss = lost / sent (queue drops and the wire's own"
        " losses); goodput after the warm-up, both downloads summed, and the upload's"
        " (DOCSIS only; – elsewhere); video = the GCC call downstream: its received rate,"
        " frame delay p95 (capture to its last packet) and the share of frames later"
        " than 150 ms (incomplete ones included)."
    )
    cols = [(c, h, s, f) for c, h, s, f in TABLE_COLS]
    return [*files, *write_tables(t, stem, cols, head)]
