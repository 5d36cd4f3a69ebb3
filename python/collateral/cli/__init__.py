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
import importlib
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

# pydantic looks for plugins through every installed distribution's entry points at its
# first model (~30 ms of a command's start); the CLI uses none. A user's setting wins.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from .errors import PROG, Parser, interrupted_status

__all__ = ["build_parser", "main"]

#: The commands in the order ``--help`` lists them: each module of this package that
#: adds commands (its ``add_parser``), and the handler in it of each command it adds
#: (``simulate`` adds ``demo`` too). A module is imported only when its command runs or
#: all are listed, so ``collateral simulate`` starts without ``report``'s imports.
_COMMANDS: dict[str, dict[str, str]] = {
    "simulate": {"simulate": "run_simulate", "demo": "run_demo"},
    "emulate": {"emulate": "run_emulate"},
    "shell": {"shell": "run"},
    "run": {"run": "run"},
    "query": {"query": "run"},
    "schema": {"schema": "run"},
    "merge": {"merge": "run"},
    "import_": {"import": "run"},
    "infer": {"infer": "run"},
    "reproduce": {"reproduce": "run"},
    "compare": {"compare": "run"},
    "report": {"report": "run"},
    "plot": {"plot": "run"},
    "advise": {"advise": "run"},
    "trace": {"trace": "run"},
}
#: Each command's line in ``collateral --help``, in its order. The overview (``--help``,
#: no command, a misspelt one) is built from these alone, without the commands' modules
#: (0.3 s of imports); each module's parser takes its line from here.
HELP: dict[str, str] = {
    "simulate": "run one trial",
    "demo": "the MMSys 2011 Fig. 1 set-up on ADSL1, with a plot",
    "emulate": "run one trial on the namespace testbed (real Linux TCP; needs root)",
    "shell": "run your own command through the emulated link (needs root)",
    "run": "run an experiment file's missing trials into a results directory",
    "query": "SQL over a results directory (DuckDB)",
    "schema": "every result column: name, type, unit, meaning",
    "merge": "merge results directories of the same experiment (e.g. shards)",
    "import": "measurement files of real clients as a results directory (mode measured)",
    "infer": "the bottleneck of a measured run: base RTT, capacity, FIFO or AQM, buffer",
    "reproduce": "run a published experiment and draw its figure (--list shows them)",
    "compare": "simulation vs emulation of the same experiment, side by side",
    "report": "write a self-contained HTML report of results directories",
    "plot": "plot a measure against a swept parameter of a results directory",
    "advise": "which queue and congestion control keep an application within its budget",
    "trace": "write a synthetic delivery trace (Mahimahi's format)",
}
#: The module of each command, by the name the user types.
_MODULE_OF = {cmd: mod for mod, handlers in _COMMANDS.items() for cmd in handlers}


def _module(name: str) -> Any:
    return importlib.import_module(f".{name}", __name__)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``command``) only what that command needs."""
    p, sub = _top()
    for mod in [_MODULE_OF[command]] if command in _MODULE_OF else _COMMANDS:
        _module(mod).add_parser(sub)
    return p


def overview_parser() -> argparse.ArgumentParser:
    """:func:`build_parser`'s ``--help`` and its choice of commands, from :data:`HELP`
    alone: each command an empty stub."""
    p, sub = _top()
    for command, line in HELP.items():
        sub.add_parser(command, help=line, add_help=False)
    return p


def _top() -> tuple[argparse.ArgumentParser, Any]:
    p = Parser(
        prog=PROG,
        description="Simulate how bulk TCP transfers and gateway queues "
        "hurt real-time traffic on broadband links.",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    return p, sub


def _handler(command: str) -> Callable[[argparse.Namespace], int]:
    mod = _MODULE_OF[command]
    return getattr(_module(mod), _COMMANDS[mod][command])


def main(argv: list[str] | None = None) -> int:
    _plain_streams()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # _one_line says each text once
            warnings.showwarning = _one_line
            return _main(argv)
    except BrokenPipeError:  # `collateral simulate --json | head`: not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit-time flush
        return 0
    except KeyboardInterrupt as e:  # Ctrl-C: what a run had finished is stored (run's own)
        print("collateral: interrupted", file=sys.stderr)
        return interrupted_status(e)
    except OSError as e:  # e.g. stdout on a full disk (> /dev/full): one line, no trace
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit-time flush
        where = f": {e.filename}" if e.filename else ""
        print(f"collateral: error: {e.strerror or e}{where}", file=sys.stderr)
        return 1


def _plain_streams() -> None:
    """Output a terminal or file cannot encode (an ASCII locale without Python's UTF-8
    mode) is written with '?' for the characters it lacks, rather than failing on the
    first '·'; a closed stdout (``>&-``) is a discarded one."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - for the process's life
    for stream in (sys.stdout, sys.stderr):
        enc = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if stream is not None and enc != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


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
    argv = sys.argv[1:] if argv is None else argv
    # Only the command's own parser when the first word names one; the overview for
    # --help and a misspelt command (whose error lists them all), and --version.
    if argv and argv[0] in _MODULE_OF:
        args = build_parser(argv[0]).parse_args(argv)
    else:
        overview = overview_parser()
        args, extra = overview.parse_known_args(argv)
        if args.command in _MODULE_OF:  # a command after --version: its parser's say
            args = build_parser(args.command).parse_args(argv)
        elif extra:
            overview.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        from .. import __version__, native_version
        from ..build_info import core

        print(f"collateral {__version__} (core {native_version}, {core()})")
        return 0
    if args.command not in _MODULE_OF:
        overview_parser().print_help()
        return 2
    args.argv = argv  # for typed_options
    return _handler(args.command)(args)


def typed_options(args: argparse.Namespace) -> set[str]:
    """The destinations of the options typed on the command line, whatever their value
    (a default typed out included): the command line parsed again with every default
    suppressed. Empty for a namespace :func:`main` did not parse."""
    argv = getattr(args, "argv", None)
    if not argv or argv[0] not in _MODULE_OF:
        return set()
    p = build_parser(argv[0])
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    for parser in [p, *(c for a in subs for c in a.choices.values())]:
        parser._defaults.clear()
        for a in parser._actions:
            a.default = argparse.SUPPRESS
    typed, _ = p.parse_known_args(argv)
    return set(vars(typed)) - {"command"}
