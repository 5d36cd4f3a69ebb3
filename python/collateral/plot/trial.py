"""The figures of one trial (a Result): cwnd above the CBR packets' queueing delay
(MMSys 2011 Fig. 1) or above the bottleneck queue's occupancy (Huebner 2008)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..schema import code
from .draw import floor_at_zero, steps_compact
from .style import STYLE, check_figure_path, legend_outside, plt, save, suptitle

if TYPE_CHECKING:
    from ..result import Result


def fig_cwnd_delay(
    result: Result,
    t0: float | None = None,
    t1: float | None = None,
    path: str | Path = "out.png",
    caption: str | None = None,
) -> list[Path]:
    """cwnd over time above the downstream CBR packets' queueing delay (MMSys 2011 Fig. 1).

    Shows, on a shared time axis from ``t0`` to ``t1`` seconds (default: the 10 s after
    the warm-up), how each of TCP's sawtooth cycles fills the queue and delays the VoIP
    packets behind it. Lost CBR packets, and those still in flight at the end, are marked
    along the top of the delay panel. A trial with video calls gets a third panel: each
    call's received rate and its controller's target, from the ``media`` trace.
    Writes a PNG at ``path`` (plus an SVG when ``path`` ends in ``.svg``) and returns the
    paths written; ``caption``: as :func:`save`.
    """
    t0 = result.warmup_s if t0 is None else t0
    t1 = min(t0 + 10.0, result.duration_s) if t1 is None else t1
    if not t1 > t0:
        raise ValueError(f"empty plot window: t0={t0} s, t1={t1} s")
    path = check_figure_path(path)

    calls = result.summary.get("media") or []
    with plt.rc_context(STYLE):
        rows = 3 if calls else 2
        fig, axes = plt.subplots(
            rows, 1, sharex=True, figsize=(10, 3.25 * rows), layout="constrained"
        )
        _cwnd_panel(axes[0], result, t0, t1)
        _delay_panel(axes[1], result, t0, t1)
        if calls:
            _media_panel(axes[2], result, calls, t0, t1)
        bottom = axes[-1]
        bottom.set_xlim(t0, t1)
        bottom.set_xlabel("time (s)")
        title = "TCP congestion window and downstream CBR queueing delay"
        if calls:
            title = "TCP congestion window, downstream CBR queueing delay and video rate"
        if result.scenario is not None:
            title += "\n" + result.scenario.describe(
                testbed=result.summary.get("mode") == "emulation"
            )
        suptitle(fig, title)

        return save(fig, path, caption=caption)


def three_epochs(result: Result, flow: int = 0) -> tuple[float, float]:
    """A window spanning three congestion epochs of ``flow`` after the warm-up: from just
    before one congestion event to just after the fourth (or the whole run if fewer)."""
    c = result.traces["congestion"]
    t = np.sort(c["time_s"][(c["flow"] == flow) & (c["time_s"] >= result.warmup_s)])
    if len(t) < 4:
        return result.warmup_s, result.duration_s
    pad = 0.1 * (t[3] - t[0]) / 3
    return max(0.0, t[0] - pad), min(result.duration_s, t[3] + pad)


def fig_cwnd_queue(
    result: Result,
    t0: float | None = None,
    t1: float | None = None,
    path: str | Path = "out.png",
    direction: str = "down",
    title: str | None = None,
    svg: bool | None = None,
    caption: str | None = None,
) -> list[Path]:
    """cwnd above the bottleneck queue's occupancy (packets) on a shared time axis, as
    Huebner 2008 plotted them: each epoch the queue fills with the window and drains after
    the back-off; how far it drains is the algorithm's signature. The default window is
    three congestion epochs (:func:`three_epochs`). ``svg``, ``caption``: as
    :func:`save`."""
    if t0 is None or t1 is None:
        e0, e1 = three_epochs(result)
        t0 = e0 if t0 is None else t0
        t1 = e1 if t1 is None else t1
    if not t1 > t0:
        raise ValueError(f"empty plot window: t0={t0} s, t1={t1} s")
    path = check_figure_path(path)
    with plt.rc_context(STYLE):
        fig, (top, bottom) = plt.subplots(
            2, 1, sharex=True, figsize=(10, 6.5), height_ratios=(1, 1), layout="constrained"
        )
        _cwnd_panel(top, result, t0, t1)
        step = max((t1 - t0) / 4000, 0.001)
        t, _, packets = result.queue_series(direction, step=step, t0=t0, t1=t1)
        t, packets = steps_compact(t, packets)
        # Thousands of steps (the queue moves by a packet at a time): drawn as an image
        # inside a vector file, which stays small; axes and text stay vector.
        bottom.plot(
            t,
            packets,
            drawstyle="steps-post",
            color="C2",
            lw=1.2,
            label=f"queue ({direction})",
            rasterized=len(t) > 1500,
        )
        bottom.set_ylabel("queue occupancy (packets)")
        floor_at_zero(bottom, max(float(np.nanmax(packets)) * 1.05, 1.0) if len(packets) else 1)
        legend_outside(bottom)
        bottom.set_xlim(t0, t1)
        bottom.set_xlabel("time (s)")
        if title is None:
            title = "TCP congestion window and bottleneck queue occupancy"
            if result.scenario is not None:
                title += "\n" + result.scenario.describe(
                    testbed=result.summary.get("mode") == "emulation"
                )
        suptitle(fig, title)
        return save(fig, path, svg=svg, caption=caption)


def _cwnd_panel(ax: plt.Axes, result: Result, t0: float, t1: float) -> None:
    flows = [f["flow"] for f in result.tcp]
    for i, flow in enumerate(flows):
        t, cwnd, ssthresh = result.cwnd_series(flow, step=0.001, t0=t0, t1=t1)
        t, cwnd, ssthresh = steps_compact(t, cwnd, ssthresh)
        label = f" (flow {flow})" if len(flows) > 1 else ""
        color = f"C{i}"
        ax.plot(t, cwnd, drawstyle="steps-post", color=color, lw=1.4, label=f"cwnd{label}")
        if np.isfinite(ssthresh).any():
            ax.plot(
                t,
                ssthresh,
                drawstyle="steps-post",
                color=color,
                lw=1.0,
                ls="--",
                alpha=0.8,
                label=f"ssthresh{label}",
            )
    if not flows:
        ax.text(0.5, 0.5, "no TCP flows", transform=ax.transAxes, ha="center", va="center")
    ax.set_ylabel("window (packets)")
    ax.set_ylim(bottom=0)
    if flows:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _delay_panel(ax: plt.Axes, result: Result, t0: float, t1: float) -> None:
    pk = result.cbr_packets("down")
    sel = (pk["sent_s"] >= t0) & (pk["sent_s"] <= t1)
    sent, delay = pk["sent_s"][sel], pk["extra_delay_s"][sel] * 1000.0
    got = np.isfinite(delay)
    ax.plot(sent[got], delay[got], color="C3", lw=0.6, alpha=0.5)
    ax.scatter(sent[got], delay[got], s=5, color="C3", label="CBR packet (down)", zorder=3)
    top = max(1.0, float(np.nanmax(delay)) * 1.1) if got.any() else 1.0
    # Packets without a delay, marked at the top: lost (dropped or lost on the wire), or
    # still on their way when the run ended (fate 3), which are not losses.
    pending = ~got & (pk["fate"][sel] == code("cbr", "fate", "in_flight"))
    for which, label, look in (
        (~got & ~pending, "lost", {"marker": "x", "color": "black"}),
        (
            pending,
            "in flight at the end",
            {"marker": "o", "facecolors": "none", "edgecolors": "black"},
        ),
    ):
        if which.any():
            y = np.full(which.sum(), top * 0.97)
            ax.scatter(sent[which], y, s=25, label=f"{label} ({which.sum()})", zorder=4, **look)
    if not len(sent):
        ax.text(
            0.5,
            0.5,
            "no downstream CBR packets in this window",
            transform=ax.transAxes,
            ha="center",
            va="center",
        )
    floor_at_zero(ax, top)
    ax.set_ylabel("additional delay (ms)")
    if len(sent):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _media_panel(ax: plt.Axes, result: Result, calls: list[dict], t0: float, t1: float) -> None:
    """Each video call's received rate (solid) and its controller's target (dotted), per
    bin of the ``media`` trace: the bins that overlap ``[t0, t1]``."""
    tr = result.traces["media"]
    for k, call in enumerate(calls):
        rows = tr["flow"] == call["flow"]
        t = tr["time_s"][rows]
        width = float(t[1] - t[0]) if len(t) > 1 else 0.0
        sel = (t + width > t0) & (t < t1)
        color = f"C{(k + 4) % 10}"
        name = f"video {call['cc']} {call['direction']}"
        for col, label, style in (
            ("received_bps", "received", {"lw": 1.4}),
            ("target_bps", "target", {"lw": 1.0, "ls": ":"}),
        ):
            y = tr[col][rows][sel] / 1e6
            label = f"{name} {label}"
            ax.plot(t[sel], y, drawstyle="steps-post", color=color, label=label, **style)
    ax.set_ylabel("video rate (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
