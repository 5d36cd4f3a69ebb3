"""The ``collateral`` command: one module per command (``simulate``, ``emulate``,
``run``, ``query``, ...), each with its ``add_parser`` and its handler, and the shared
pieces: :mod:`.errors` (one-line errors), :mod:`.values` and :mod:`.paths` (arguments
checked before anything runs) and :mod:`.scenario` (the scenario options, derived from
the declared flat parameters).

A bad value ends the program with one line on stderr naming the option, and exit
status 2 (as argparse does for usage errors), never a traceback. Everything is checked
before anything is built, simulated, emulated or written. Library modules never import
this package.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

# pydantic looks for plugins through every installed distribution's entry points at its
# first model (~30 ms of a command's start); the CLI uses none. A user's setting wins.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from . import (
    advise,
    compare,
    emulate,
    import_,
    infer,
    merge,
    query,
    report,
    reproduce,
    run,
    schema,
    shell,
    simulate,
    trace,
)
from .errors import PROG, Parser

__all__ = ["build_parser", "main"]


def _plot_parser(sub: argparse._SubParsersAction) -> None:
    from .plot import add_parser

    add_parser(sub)


def _plot(args: argparse.Namespace) -> int:
    from .plot import run as run_plot

    return run_plot(args)


#: The commands in the order ``--help`` lists them: how each adds its parser, and its
#: handler by name (``simulate`` adds ``demo`` too).
_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    simulate.add_parser,
    emulate.add_parser,
    shell.add_parser,
    run.add_parser,
    query.add_parser,
    schema.add_parser,
    merge.add_parser,
    import_.add_parser,
    infer.add_parser,
    reproduce.add_parser,
    compare.add_parser,
    report.add_parser,
    _plot_parser,
    advise.add_parser,
    trace.add_parser,
]
_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "simulate": simulate.run_simulate,
    "demo": simulate.run_demo,
    "emulate": emulate.run_emulate,
    "shell": shell.run,
    "run": run.run,
    "query": query.run,
    "schema": schema.run,
    "merge": merge.run,
    "import": import_.run,
    "infer": infer.run,
    "reproduce": reproduce.run,
    "compare": compare.run,
    "report": report.run,
    "plot": _plot,
    "advise": advise.run,
    "trace": trace.run,
}


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Simulate how bulk TCP transfers and gateway queues "
        "hurt real-time traffic on broadband links.",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for add in _COMMANDS:
        add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # _one_line says each text once
            warnings.showwarning = _one_line
            return _main(argv)
    except BrokenPipeError:  # `collateral simulate --json | head`: not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit-time flush
        return 0


def _one_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning as the command's other lines: ``collateral: warning: TEXT``, one line,
    each text once (not Python's two lines with a source path)."""
    text = " ".join(str(message).split())
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"collateral: warning: {text}", file=sys.stderr, flush=True)


_WARNED: set[str] = set()


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from .. import __version__, native_version

        print(f"collateral {__version__} (core {native_version})")
        return 0
    handler = _HANDLERS.get(args.command)
    if handler is None:
        build_parser().print_help()
        return 2
    return handler(args)
