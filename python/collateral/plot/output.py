"""Writing a store figure to a file (plot()): PNG, SVG or PDF through matplotlib, or a
standalone interactive HTML page through plotly; the output name's checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .aggregate import Interval, Stat, build_table
from .errors import StorePlotError, api_names
from .interactive import draw_plotly
from .static import draw_mpl
from .sweep import load_data

_SUFFIXES = (".png", ".svg", ".pdf", ".html")


def check_out(out: str | Path) -> Path:
    from .style import check_figure_path

    p = Path(out)
    if p.suffix.lower() == ".html":
        if p.name in ("", ".", "..") or str(out).endswith("/"):
            raise StorePlotError("--output", f"{str(out)!r} is not a file name")
        return p
    try:
        check_figure_path(p)
    except ValueError as e:
        raise StorePlotError("--output", str(e).removeprefix("path: ")) from None
    if not p.suffix:
        raise StorePlotError(
            "--output", f"{str(out)!r}: no suffix; give a name ending {', '.join(_SUFFIXES)}"
        )
    return p


@api_names
def plot(
    store_dir: str | Path,
    x: str,
    y: str,
    hue: str | None = None,
    facet: str | None = None,
    out: str | Path = "plot.png",
    stat: Stat = "median",
    interval: Interval = "bootstrap",
    where: Sequence[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
    zoom: bool = False,
) -> list[Path]:
    """Writes the figure to ``out`` — PNG, SVG or PDF by its suffix (that file only), or
    for ``.html`` a standalone interactive page (plotly.js embedded) — and returns the
    files written. ``zoom``: as :func:`.static.figure`."""
    path = check_out(out)
    data = load_data(store_dir)
    tab, meta = build_table(data, x, y, hue, facet, stat, interval, where)
    meta = {**meta, "zoom": zoom}
    if path.suffix.lower() == ".html":
        fig = draw_plotly(tab, meta, title)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.write_html(path, include_plotlyjs=True, full_html=True, auto_open=False)
        return [path]
    from .style import save

    return save(draw_mpl(tab, meta, title), path)
