"""``infer``: the bottleneck of a measured run (``collateral import``'s results
directory): base RTT, capacity per direction, FIFO or AQM, the FIFO's buffer — each
with its interval — and what could not be inferred."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..display import fmt_cell
from .errors import fail
from .paths import console, input_store


def add_parser(sub: Any) -> None:
    c = sub.add_parser(
        "infer",
        help="the bottleneck of a measured run: base RTT, capacity, FIFO or AQM, buffer",
        description="Infer the bottleneck of a run imported with 'collateral import' (probes "
        "and load in one measurement, e.g. irtt beside iperf3 downloading, then uploading, "
        "with idle time around them): base RTT from the idle probes, capacity per direction "
        "from the settled load, whether a FIFO or an AQM holds the queue (does the delay "
        "stay near its ceiling or settle at a target), and the FIFO's buffer in bytes and "
        "ms. Each figure comes with its interval and how it was found; what could not be "
        "inferred is said, with why.",
    )
    c.add_argument("directory", metavar="DIR", help="a results directory of one measured run")
    c.add_argument("--json", action="store_true", help="the inference as JSON")


def run(args: argparse.Namespace) -> int:
    from ..inference import InferenceProblem, from_store, infer

    input_store("DIR", args.directory)
    try:
        inf = infer(from_store(args.directory))
    except InferenceProblem as e:
        fail(str(e))
    if args.json:
        print(json.dumps(inf.to_dict(), indent=1))
        return 0
    from rich.table import Table

    t = Table(title=f"The bottleneck of {args.directory}", title_justify="left")
    for col, just in (("", "left"), ("inferred", "right"), ("interval", "right"), ("how", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for e in inf.estimates:
        if e.value is None:
            continue
        if isinstance(e.value, str):
            t.add_row(e.name, e.value, "", e.how)
            continue
        span = f"{fmt_cell(e.low, e.unit)} – {fmt_cell(e.high, e.unit)}" if e.low is not None else ""
        t.add_row(e.name, fmt_cell(e.value, e.unit), span, e.how)
    console().print(t)
    for line in inf.not_inferred:
        print(f"not inferred: {line}")
    return 0
