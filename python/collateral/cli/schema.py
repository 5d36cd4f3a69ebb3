"""``schema``: every result column the core declares, with its type, unit and meaning."""

from __future__ import annotations

import argparse
from typing import Any

from . import HELP


def add_parser(sub: Any) -> None:
    sub.add_parser(
        "schema",
        help=HELP["schema"],
        description="Print the result schema the core declares: the summary's columns "
        "(one row per trial) and each trace table's.",
    )


def run(args: argparse.Namespace) -> int:
    from ..schema import render

    print("\n".join([render(), "", *parameter_lines()]))
    return 0


def parameter_lines() -> list[str]:
    """The scenario's parameter columns that hold a name of the core's vocabulary."""
    from ..vocabulary import AQM_INFO, CC_ALGORITHMS, PROFILES

    kinds = ", ".join(f"{k} ({i['display']})" for k, i in AQM_INFO.items())
    return [
        "parameters (one column per scenario key, flattened with _, e.g. rtt_s,"
        " down_rate_bps, down_queue_limit_bytes):",
        f"  {'{d}_queue_kind':28} {'string':8} the queue discipline: drop-tail, or {kinds}",
        f"  {'tcp{i}_cc':28} {'string':8} congestion control: {', '.join(CC_ALGORITHMS)}",
        f"  {'tcp{i}_profile':28} {'string':8} stack profile: {', '.join(PROFILES)}",
        "  ({d}: down or up)",
    ]
