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

    def error(self, message: str) -> NoReturn:
        message = message.removeprefix("argument ")
        if message.startswith("unrecognized arguments: "):
            extra = message.removeprefix("unrecognized arguments: ")
            message = f"{extra}: unrecognized; see '{self.prog} --help'"
        # argparse names an option by all its spellings ("-q/--queue"); keep the long one.
        head, sep, rest = message.partition(": ")
        if sep and "/" in head and head.startswith("-"):
            message = f"{head.split('/')[-1]}: {rest}"
        fail(message)


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
