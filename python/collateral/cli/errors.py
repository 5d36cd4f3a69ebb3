"""How the command fails: one line on stderr naming the option, exit status 2."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, NoReturn

PROG = "collateral"


class Parser(argparse.ArgumentParser):
    """Usage errors as one line, ``collateral: error: --opt: message`` (no usage dump)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Take "-1Mbit" or "-5ms" as a (bad) value, not an unknown option, so the user
        # hears that it is negative rather than "expected one argument".
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        self._argv: list[str] = []

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        # Kept so that an error names an option as it was typed (see `error`).
        self._argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        message = message.removeprefix("argument ")
        if message.startswith("unrecognized arguments: "):
            extra = message.removeprefix("unrecognized arguments: ")
            message = f"{extra}: unrecognized; see '{self.prog} --help'"
        # argparse names an option by all its spellings ("-q/--queue",
        # "--downloads/--tcp-flows"): keep the long one typed, else the first long one.
        head, sep, rest = message.partition(": ")
        if sep and "/" in head and head.startswith("-"):
            names = head.split("/")
            long = [n for n in names if n.startswith("--")]
            # As typed, or abbreviated as argparse allows (--tcp-f for --tcp-flows).
            args = [a.partition("=")[0] for a in self._argv if a.startswith("--") and len(a) > 2]
            own = self._option_string_actions  # --down is an option, not --downloads cut short
            typed = [
                n for n in long if any(a == n or (a not in own and n.startswith(a)) for a in args)
            ]
            name = next(iter(typed + long), names[-1])
            message = f"{name}: {rest}"
        fail(message)


def interrupted_status(stopped_by: BaseException | str | None = None) -> int:
    """The exit status of a command a signal stopped: 128 + the signal's number, as a
    shell reports a process the signal killed (130 for Ctrl-C, 143 for SIGTERM, which
    Slurm and systemd send), so a job script can tell a time limit from a user's Ctrl-C.
    ``stopped_by``: the signal's name, or the KeyboardInterrupt a handler raised with
    it (Python's own Ctrl-C carries none: SIGINT)."""
    import signal

    if isinstance(stopped_by, BaseException):
        stopped_by = str(stopped_by.args[0]) if stopped_by.args else None
    try:
        return 128 + signal.Signals[stopped_by or "SIGINT"].value
    except KeyError:
        return 128 + signal.SIGINT.value


_LONG_QUOTED = re.compile(r"""(['"])([^'"]{60})[^'"]{20,}\1""")
_LONG_WORD = re.compile(r"\S{200,}")


def fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2. A value quoted in it is cut short: a
    5000-character argument is not echoed back whole."""
    line = " ".join(message.split())
    line = _LONG_QUOTED.sub(lambda m: f"{m[1]}{m[2]}...{m[1]}", line)
    line = _LONG_WORD.sub(lambda m: f"{m[0][:120]}...{m[0][-3:]}", line)
    if len(line) > 1000:
        line = f"{line[:600]} ... {line[-300:]}"
    print(f"{PROG}: error: {line}", file=sys.stderr)
    raise SystemExit(2)
