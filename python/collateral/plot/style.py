"""The look and the files every figure shares: STYLE, save() and its path checks, titles
wrapped to the figure's width, legends outside the axes. Matplotlib with the Agg backend,
so plots work on headless machines."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any


@cache
def pyplot() -> Any:
    """``matplotlib.pyplot``, imported on first use, with the Agg backend (never a
    window) unless a backend was chosen (``matplotlib.use``, ``MPLBACKEND``, a notebook's
    ``%matplotlib``): that one is kept."""
    import matplotlib

    chosen = getattr(matplotlib.rcParams, "_get_backend_or_none", lambda: None)()
    if chosen is None:
        matplotlib.use("Agg")  # before pyplot: never try to open a window
    import matplotlib.pyplot

    return matplotlib.pyplot


class _Pyplot:
    """:func:`pyplot` as a module-level name: the modules that draw import ``plt`` at their
    top, and a command that draws nothing (``collateral reproduce --list``, whose registry
    imports every figure's module) does not import matplotlib (0.7-0.9 s)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(pyplot(), name)


plt: Any = _Pyplot()

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
