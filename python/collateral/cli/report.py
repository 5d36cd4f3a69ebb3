"""``report``: one self-contained HTML file over results directories."""

from __future__ import annotations

import argparse
from typing import Any

from ..display import short
from . import HELP
from .errors import fail
from .paths import input_store, output_file


def add_parser(sub: Any) -> None:
    r = sub.add_parser(
        "report",
        help=HELP["report"],
        description="Write one HTML file with a section per experiment: parameters, trial "
        "counts, figures (embedded), key numbers, and each published claim beside our "
        "value; a simulation-vs-emulation section where emulation results exist.",
    )
    r.add_argument("results", metavar="DIR", nargs="+", help="results directories")
    r.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="report.html",
        help="the HTML file to write (default: report.html)",
    )


def run(args: argparse.Namespace) -> int:
    from ..report import ReportError, write_report

    output = output_file("--output", args.output, "report.html", suffixes=(".html", ".htm"))
    dirs = [input_store("DIR", r) for r in args.results]
    try:
        path = write_report(dirs, output)
    except ReportError as e:
        fail(f"report: {e}")
    except OSError as e:
        fail(f"--output: {short(args.output, 60)}: {e.strerror or e}")
    print(f"wrote {path}")
    return 0
