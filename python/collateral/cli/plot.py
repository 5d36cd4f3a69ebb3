"""``collateral plot``: the subcommand's arguments, ``--list`` and its run; the figures
themselves are :mod:`collateral.plot`'s."""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import HELP
from .errors import fail
from .paths import input_store, output_file

if TYPE_CHECKING:  # the plotting stack (pandas, matplotlib, plotly) loads in run()
    from ..plot.sweep import PlotData


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``collateral plot``: adds the subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "plot",
        help=HELP["plot"],
        description="Plot a measure of a results directory against a swept parameter: the "
        "median over each point's trials with a 95 % bootstrap interval (or min-max), a "
        "line per --hue value, a panel per --facet value. Keys are dotted sweep keys "
        "(queue.limit, queue.kind, tcp.cc, tags.NAME), store columns or short aliases; "
        "--list prints them and the measures, with units. Writes PNG, SVG or PDF by the "
        "suffix of -o, or a standalone interactive HTML page (.html, plotly.js embedded).",
    )
    p.add_argument("directory", metavar="DIR", help="a results directory")
    p.add_argument("--x", metavar="KEY", help="the swept parameter on the x axis")
    p.add_argument("--y", metavar="MEASURE", help="the measure, e.g. voip_p95_ms, goodput_mbps")
    p.add_argument("--hue", metavar="KEY", help="a line per value of this parameter")
    p.add_argument("--facet", metavar="KEY", help="a panel per value of this parameter")
    p.add_argument(
        "--where",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="keep only trials with this value (numbers in the key's unit, as --list shows)",
    )
    p.add_argument(
        "--stat",
        choices=("median", "mean"),
        default="median",
        help="the centre of each point (default: median)",
    )
    p.add_argument(
        "--interval",
        choices=("bootstrap", "minmax"),
        default="bootstrap",
        help="95%% bootstrap interval of the --stat (median or mean), or the trials' min and"
        " max (default: bootstrap)",
    )
    p.add_argument(
        "--zoom",
        action="store_true",
        help="fit the y axis to the data, marked as cut, instead of drawing an amount from 0",
    )
    p.add_argument("--title", metavar="TEXT", help="the figure's title")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="FILE.png, .svg, .pdf or .html (default: DIR-NAME-Y-vs-X.png here)",
    )
    p.add_argument("--list", action="store_true", help="list swept keys and measures, then exit")
    return p


def _list_text(data: PlotData) -> str:
    lines = [
        f"{data.name}: {len(data.df)} trials",
        "",
        "swept keys (--x, --hue, --facet, --where):",
    ]
    import pandas as pd

    for k in data.swept:
        p = data.params[k]
        vals = [p.show(v) for v in (sorted(pd.unique(p.values.dropna())) if p.numeric else p.order)]
        if p.values.isna().any():
            vals.append("none")
        shown = ", ".join(vals[:12]) + (f", ... ({len(vals)} values)" if len(vals) > 12 else "")
        alias = f" (also {', '.join(p.aliases)})" if p.aliases else ""
        lines.append(f"  {k}{alias}: {shown}")
        if p.error:
            lines.append(f"      not plottable: {p.error}")
        elif p.note:
            lines.append(f"      {p.note}")
    if not data.swept:
        lines.append("  none: every trial has the same parameters")
    lines += ["", "measures (--y):"]
    width = max((len(k) for k, m in data.measures.items() if m.name != m.columns[0]), default=10)
    for k, m in data.measures.items():
        if m.name == m.columns[0]:
            continue
        lines.append(f"  {k:<{width}}  {m.unit or '-':<7} {m.meaning}")
    raw = [k for k, m in data.measures.items() if m.name == m.columns[0]]
    lines += [
        "",
        f"and any numeric summary column ({len(raw)}; 'collateral schema' explains them),",
    ]
    lines.append("shown in ms, Mbit/s, kB or % where it holds s, bit/s, bytes or a rate")
    return "\n".join(lines)


def _default_out(data: PlotData, x: str, y: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{data.name}-{y}-vs-{x}")
    return Path(safe[:200] + ".png")


def run(args: argparse.Namespace) -> int:
    """Runs ``collateral plot`` from parsed arguments; bad input: one line, exit 2."""
    from ..plot.aggregate import build_table
    from ..plot.errors import StorePlotError
    from ..plot.interactive import draw_plotly
    from ..plot.labels import caption
    from ..plot.output import check_out
    from ..plot.static import draw_mpl
    from ..plot.sweep import load_data, suggest

    input_store("DIR", args.directory)
    try:
        data = load_data(args.directory)
        if args.list:
            print(_list_text(data))
            return 0
        missing = [o for o in ("x", "y") if not getattr(args, o)]
        if missing:
            s = suggest(data)
            eg = f" e.g. --x {s['x']} --y {s['y']}" + "".join(
                f" --{o} {s[o]}" for o in ("hue", "facet") if s[o]
            )
            if not s["x"]:
                eg = " nothing is swept in this store, so any key gives one point;"
            fail(f"--{missing[0]}: required;{eg if s['y'] else ''} (--list shows all)")
        out = args.output
        if out is None:
            out = str(_default_out(data, args.x, args.y))
        if Path(out).suffix.lower() == ".html":
            output_file("--output", out, "out/plot.html")
        else:
            output_file("--output", out, "out/plot.png", figure=True)
        path = check_out(out)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tab, meta = build_table(
                data, args.x, args.y, args.hue, args.facet, args.stat, args.interval, args.where
            )
            meta = {**meta, "zoom": args.zoom}
        for w in caught:
            import sys

            print(f"collateral: warning: {w.message}", file=sys.stderr)
        if path.suffix.lower() == ".html":
            fig = draw_plotly(tab, meta, args.title)
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.write_html(path, include_plotlyjs=True, full_html=True, auto_open=False)
            written = [path]
        else:
            from ..plot.style import save

            written = save(draw_mpl(tab, meta, args.title), path)
    except StorePlotError as e:
        fail(str(e))
    except OSError as e:
        fail(f"--output: {e.strerror or e}: {getattr(e, 'filename', '') or args.output}")
    for w in written:
        print(f"{w}  ({len(tab)} points, {caption(meta, tab)})")
    return 0
