"""``schema``: every result column the core declares, with its type, unit and meaning."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    sub.add_parser(
        "schema",
        help="every result column: name, type, unit, meaning",
        description="Print the result schema the core declares: the summary's columns "
        "(one row per trial) and each trace table's.",
    )


def run(args: argparse.Namespace) -> int:
    from ..schema import render

    print(render())
    return 0
