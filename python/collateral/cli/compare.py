"""``compare``: a simulated and an emulated results directory of the same experiment,
side by side."""

from __future__ import annotations

import argparse
from typing import Any

from . import HELP
from .errors import fail
from .paths import console, input_store, output_file


def add_parser(sub: Any) -> None:
    c = sub.add_parser(
        "compare",
        help=HELP["compare"],
        description="Match the trials of a simulated and an emulated results directory of "
        "the same experiment (same trial keys) and print goodput, CBR loss and delay side "
        "by side with the differences; draw delay CDFs and windows when traces were kept. "
        "A last line says whether the testbed kept real time (trials flagged late).",
    )
    c.add_argument("sim", metavar="SIM_DIR", help="results of 'collateral run'")
    c.add_argument(
        "emu",
        metavar="EMU_DIR",
        help="results of 'collateral emulate FILE' (or of 'collateral import ... --like FILE')",
    )
    c.add_argument("--plot", metavar="PATH", help="write the comparison figure here")


def run(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ..emulate import store_line
    from ..plot.compare import WrongSide, compare_stores, fig_compare_stores
    from ..store import StoreError, open_store

    input_store("SIM_DIR", args.sim)
    input_store("EMU_DIR", args.emu)
    if args.plot is not None:
        output_file("--plot", args.plot, "out/compare.png", figure=True)
    try:
        sim, emu = open_store(args.sim), open_store(args.emu)
        rows = compare_stores(sim, emu)
    except WrongSide as e:
        fail(f"{'SIM_DIR' if e.side == 'sim' else 'EMU_DIR'}: {e}")
    except (StoreError, ValueError) as e:
        fail(f"compare: {e}")
    sim_df, emu_df = sim.summary(), emu.summary()  # read once for everything below
    other = "measured" if set(emu_df["mode"].dropna()) == {"measured"} else "emulation"
    t = Table(title=f"simulation ({args.sim}) vs {other} ({args.emu})", title_justify="left")
    for col in ("metric", "simulation", other, "difference"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for r in rows:
        diff = f"{r['diff']:+.2f} {r['diff_unit']}" if r["diff"] == r["diff"] else "n/a"
        t.add_row(f"{r['metric']} ({r['unit']})", f"{r['sim']:.4g}", f"{r['emu']:.4g}", diff)
    console().print(t)
    points = _by_point(sim_df, emu_df)
    if points is not None:
        console().print(points)
    if args.plot is not None:
        for p in fig_compare_stores(sim, emu, args.plot):
            print(f"wrote {p}")
    # Last: whether the testbed kept real time (a late trial's delays are partly its own).
    # Of the trials compared: others in EMU_DIR (of another build, say) are not in the table.
    compared = emu_df[emu_df["key"].isin(set(sim_df["key"]))]
    line = store_line(compared, rerun=f"collateral emulate FILE -o {args.emu} --rerun-late")
    if line:
        print(line)
    return 0


#: What the per-point table shows: (column, heading, scale).
_POINT_MEASURES = (
    ("tcp0_goodput_bps", "goodput (Mbit/s)", 1e-6),
    ("cbr0_delay_median_s", "CBR p50 ↓ (ms)", 1e3),
)
#: More points than this make a table nobody reads: the overall one stands alone.
MAX_POINT_ROWS = 40


def _by_point(s: Any, e: Any) -> Any:
    """Per point of a sweep (2 to MAX_POINT_ROWS of them), simulated beside emulated:
    the overall means above can hide one point far off (BBR's queue among NewReno's and
    CUBIC's). Means over the trials both directories hold; rows named by the fewest
    parameters that tell the points apart. ``s``, ``e``: the two summaries. None for
    one point."""
    import numpy as np
    from rich.table import Table

    from ..display import is_null
    from ..report.parameters import param_label, parameters

    common = set(s["key"]) & set(e["key"])
    s, e = s[s["key"].isin(common)], e[e["key"].isin(common)].set_index("key")
    if "point" not in s.columns or not 1 < s["point"].nunique() <= MAX_POINT_ROWS:
        return None
    params = parameters(s)
    shown = [m for m in _POINT_MEASURES if m[0] in s.columns and m[0] in e.columns]
    if not params or not shown:
        return None
    t = Table(title="per point (simulation / emulation)", title_justify="left")
    for p in params:
        t.add_column(param_label(p))
    for _, heading, _ in shown:
        t.add_column(heading, justify="right")
    for _, g in s.groupby("point", sort=False):
        row = ["—" if is_null(v := g[p].iloc[0]) else str(v) for p in params]
        for col, _, scale in shown:
            sm = float(np.nanmean(g[col].astype(float))) * scale
            em = float(np.nanmean(e.loc[g["key"], col].astype(float))) * scale
            row.append(f"{sm:.4g} / {em:.4g}")
        t.add_row(*row)
    return t


# ---------------------------------------------------------------------------------------
# The advisor
