"""``reproduce``: the experiments behind the published studies' figures, drawn and
checked against the papers' claims."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..display import short
from . import HELP
from .errors import fail, interrupted_status
from .paths import console, output_dir
from .values import count, max_workers


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce",
        help=HELP["reproduce"],
        description="Run (or resume) the experiment behind a figure of a published study, "
        "draw the figure (PNG and SVG) and check the paper's claims against our numbers. "
        "--quick runs a reduced version (fewer trials, shorter runs, coarser sweeps) into "
        "its own results directory and labels its figures as such.",
    )
    p.add_argument("ids", metavar="ID", nargs="*", help="figure ids (see --list), or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproducible figures")
    p.add_argument("--quick", action="store_true", help="a reduced, fast version")
    p.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        default="results",
        help="where the results directories go (default: results)",
    )
    p.add_argument(
        "-j",
        "--workers",
        metavar="N",
        type=count(0, max_workers),
        default=0,
        help="worker threads, at most 4 per core (default: all cores)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from ..reproduce import STUDIES, TestbedUnavailable, format_claims_summary, reproduce
    from ..reproduce.claims import console_line

    con = console()
    if args.list or not args.ids:
        width = max(len(i) for i in STUDIES)
        for f in STUDIES.values():
            where = " [testbed: real Linux TCP, needs root; not in 'all']" if f.testbed else ""
            print(f"{f.id:<{width}}  {f.paper}: {f.title}{where}")
        return 0 if args.list else 2
    ids = [i for i, f in STUDIES.items() if not f.testbed] if args.ids == ["all"] else args.ids
    unknown = [i for i in ids if i not in STUDIES]
    if unknown:
        fail(
            f"reproduce: unknown figure {short(unknown[0], 60)}; see 'collateral reproduce --list'"
        )
    output_dir("--out", args.out, "results")
    from ..emulate.errors import EmulationError
    from ..experiment import ExperimentError
    from ..store import StoreError

    claims: list[Any] = []
    for fid in ids:
        try:
            rep = reproduce(fid, out=args.out, quick=args.quick, workers=args.workers)
        except (ExperimentError, StoreError, TestbedUnavailable, EmulationError) as e:
            fail(f"reproduce: {fid}: {e}")
        except OSError as e:
            fail(f"reproduce: {fid}: {e.strerror or e}: {e.filename or args.out}")
        except KeyboardInterrupt as e:
            print(
                "collateral: interrupted; finished trials are kept, rerun to resume",
                file=sys.stderr,
            )
            return interrupted_status(e)
        con.print(
            f"[bold]{fid}[/bold]: {rep.trials_run} trials run ({rep.trials_total} in the "
            f"experiment) in {rep.wall_s:.1f} s; results in {rep.store}"
        )
        for f in rep.files:
            con.print(f"  {'caption' if f.suffix == '.txt' else 'figure'} {f}")
        for c in rep.claims:
            mark = {True: "[green]holds [/green]", False: "[red]differs[/red]", None: "       "}
            # One short line each (the expectation, tolerance and why are in the
            # report); the claims' own brackets ("[base, max]") are text, not markup.
            con.print(f"  {mark[c.holds]} " + escape(console_line(c)))
        claims += rep.claims
    if len(ids) > 1 or claims:
        con.print(f"[bold]{format_claims_summary(claims)}[/bold]")
    return 0
