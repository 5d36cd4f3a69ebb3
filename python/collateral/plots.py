"""Figures. Matplotlib with the Agg backend, so plots work on headless machines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # before pyplot: never try to open a window

import matplotlib.pyplot as plt
import numpy as np

if TYPE_CHECKING:
    from .result import Result

__all__ = [
    "break_gaps",
    "caption_path",
    "check_figure_path",
    "fig_cwnd_delay",
    "fig_cwnd_queue",
    "floor_at_zero",
    "legend_outside",
    "save",
    "steps_compact",
    "suptitle",
    "three_epochs",
]

#: One style for every figure: text at 9 pt or more at the figure's own size, the grid
#: behind the data (bars and boxes included), legends on an opaque frame.
STYLE = {
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "legend.title_fontsize": 10,
    "legend.framealpha": 0.95,
    "figure.titlesize": 12,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "collateral",  # the same figure gives the same SVG bytes
}


#: Formats a figure is written in besides PNG, by its path's suffix.
EXTRA_FORMATS = (".svg", ".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff")


def check_figure_path(path: str | Path) -> Path:
    """``path`` as :func:`save` takes it: a file name (not a directory) whose suffix, if
    any, is .png or one of :data:`EXTRA_FORMATS`; ValueError naming ``path`` otherwise."""
    p = Path(path)
    if not str(path).strip() or str(path).endswith("/") or p.name in ("", ".", ".."):
        raise ValueError(f"path: {str(path)!r} is not a file name; give one such as out/fig.png")
    suffix = p.suffix.lower()
    if suffix and suffix != ".png" and suffix not in EXTRA_FORMATS:
        raise ValueError(
            f"path: {str(path)!r}: cannot write a figure as {p.suffix!r}; give a name ending"
            f" .png, {', '.join(EXTRA_FORMATS)}"
        )
    return p


def caption_path(path: str | Path) -> Path:
    """Where :func:`save` writes a figure's caption: ``<stem>.caption.txt`` beside it."""
    p = Path(path)
    return p.with_name(p.stem + ".caption.txt")


def save(
    fig: plt.Figure, path: str | Path, svg: bool | None = None, caption: str | None = None
) -> list[Path]:
    """Writes ``fig`` to ``path`` in the format its suffix names (.png, the default
    without a suffix, or one of :data:`EXTRA_FORMATS`; PNG at 150 dpi) and nothing else;
    with ``svg`` true (the reproductions), as a PNG and an SVG beside each other. With a
    ``caption`` (one paragraph saying what the figure shows), also writes it, whitespace
    folded to single spaces, to ``<stem>.caption.txt`` (:func:`caption_path`). Closes the
    figure; returns the files written."""
    try:
        path = check_figure_path(path)
    except ValueError:
        plt.close(fig)
        raise
    suffix = path.suffix.lower()
    if svg:
        targets = [path.with_suffix(".png"), path.with_suffix(".svg")]
    elif suffix in EXTRA_FORMATS:
        targets = [path]
    else:
        targets = [path.with_suffix(".png")]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for t in targets:
            fig.savefig(t, dpi=150)
    finally:
        plt.close(fig)
    if caption is not None:
        cap = caption_path(path)
        cap.write_text(" ".join(caption.split()) + "\n")
        targets.append(cap)
    return targets


def suptitle(fig: plt.Figure, text: str, **kw) -> Any:
    """``fig.suptitle(text)`` with each line wrapped to the figure's width, so a long
    title never runs off the canvas (matplotlib does not wrap titles itself)."""
    from matplotlib.font_manager import FontProperties

    size = kw.get("fontsize", plt.rcParams["figure.titlesize"])
    weight = kw.get("fontweight", plt.rcParams["figure.titleweight"])
    font = FontProperties(size=size, weight=weight)
    renderer = fig.canvas.get_renderer()
    room = fig.get_figwidth() * fig.dpi * 0.96

    def width(s: str) -> float:
        return renderer.get_text_width_height_descent(s, font, ismath=False)[0]

    lines = []
    for line in text.split("\n"):
        words, cur = line.split(" "), ""
        for w in words:
            trial = f"{cur} {w}" if cur else w
            if cur and width(trial) > room:
                lines.append(cur)
                cur = w
            else:
                cur = trial
        lines.append(cur)
    return fig.suptitle("\n".join(lines), **kw)


def legend_outside(ax: Any, where: str = "right", **kw) -> Any:
    """A legend beside the axes (``where`` "right") or below them ("below"), never over
    the data; with constrained layout the axes shrink to make room. ``ax`` may also be
    a figure (then the legend goes outside all its axes)."""
    if isinstance(ax, plt.Figure):
        loc = "outside right upper" if where == "right" else "outside lower center"
        if "handles" not in kw:  # each label once, from whichever axes has it first
            seen: dict[str, Any] = {}
            for a in ax.axes:
                for h, lab in zip(*a.get_legend_handles_labels(), strict=True):
                    seen.setdefault(lab, h)
            kw["handles"], kw["labels"] = list(seen.values()), list(seen)
        return ax.legend(loc=loc, **kw)
    if where == "right":
        kw.setdefault("loc", "upper left")
        kw.setdefault("bbox_to_anchor", (1.01, 1.0))
    else:
        kw.setdefault("loc", "upper center")
        kw.setdefault("bbox_to_anchor", (0.5, -0.15))
    kw.setdefault("borderaxespad", 0)
    return ax.legend(**kw)


def floor_at_zero(ax: Any, top: float | None = None, margin: float = 0.04) -> None:
    """Starts the y axis a little below 0 (``margin`` of the range) so markers, bars'
    ends and bands at exactly 0 show whole instead of being cut by the axis, and draws
    the 0 line. ``top``: the upper limit (default: matplotlib's)."""
    hi = ax.get_ylim()[1] if top is None else float(top)
    if not np.isfinite(hi) or hi <= 0:
        hi = 1.0
    ax.set_ylim(-margin * hi, hi)
    ax.axhline(0.0, color="0.4", lw=0.6, zorder=1.5)


def break_gaps(x: Any, y: Any, step: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``x``, ``y`` (sorted by x) with a NaN inserted wherever two neighbouring x are
    more than 1.5 ``step`` apart, so a line drawn through them stops where nothing was
    sampled instead of bridging the gap. ``step`` defaults to the smallest spacing of
    ``x``."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2:
        return x, y
    gaps = np.diff(x)
    if step is None:
        pos = gaps[gaps > 0]
        step = float(pos.min()) if len(pos) else 0.0
    cut = np.flatnonzero(gaps > 1.5 * step + 1e-12) + 1 if step > 0 else np.array([], int)
    return np.insert(x, cut, np.nan), np.insert(y, cut, np.nan)


def steps_compact(t: Any, *ys: Any) -> tuple[np.ndarray, ...]:
    """A step series (drawn with ``drawstyle="steps-post"``) without the samples that
    repeat the one before in every ``ys``: the same picture from far fewer points, so
    vector files stay small. Keeps the first and last sample."""
    t = np.asarray(t)
    ys = tuple(np.asarray(y) for y in ys)
    if len(t) < 3:
        return (t, *ys)
    keep = np.zeros(len(t), dtype=bool)
    keep[0] = keep[-1] = True
    for y in ys:
        a, b = y[1:], y[:-1]
        same = (a == b) | (np.isnan(a) & np.isnan(b)) if y.dtype.kind == "f" else a == b
        keep[1:] |= ~same
    return (t[keep], *(y[keep] for y in ys))


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
    packets behind it. Lost CBR packets are marked along the top of the lower panel.
    Writes a PNG at ``path`` (plus an SVG when ``path`` ends in ``.svg``) and returns the
    paths written; ``caption``: as :func:`save`.
    """
    t0 = result.warmup_s if t0 is None else t0
    t1 = min(t0 + 10.0, result.duration_s) if t1 is None else t1
    if not t1 > t0:
        raise ValueError(f"empty plot window: t0={t0} s, t1={t1} s")
    path = check_figure_path(path)

    with plt.rc_context(STYLE):
        fig, (top, bottom) = plt.subplots(
            2, 1, sharex=True, figsize=(10, 6.5), height_ratios=(1, 1), layout="constrained"
        )
        _cwnd_panel(top, result, t0, t1)
        _delay_panel(bottom, result, t0, t1)
        bottom.set_xlim(t0, t1)
        bottom.set_xlabel("time (s)")
        title = "TCP congestion window and downstream CBR queueing delay"
        if result.scenario is not None:
            title += "\n" + result.scenario.describe()
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
                title += "\n" + result.scenario.describe()
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
    if (~got).any():  # lost packets: marked at the top, they have no delay
        ax.scatter(
            sent[~got],
            np.full((~got).sum(), top * 0.97),
            marker="x",
            s=25,
            color="black",
            label=f"lost ({(~got).sum()})",
            zorder=4,
        )
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
