"""What can be wrong with a store, and how it is said: :class:`StoreError` (a directory
that cannot be used as asked), :class:`PartProblem` (one part found wrong) and the
helpers that word their one-line messages."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal


class StoreError(ValueError):
    """A store directory that cannot be used as asked (wrong experiment, locked...)."""


@dataclass(frozen=True)
class PartProblem:
    """What is wrong with one part. ``kind``: ``damaged`` (its trials count as missing),
    ``duplicate`` (every trial it holds is also in a part that sorts first) or ``overlap``
    (some are: ``duplicates``)."""

    part: str
    kind: Literal["damaged", "duplicate", "overlap"]
    reason: str
    trials: int | None  # rows of its summary (None: unknown)
    duplicates: frozenset[str] = frozenset()


def error_text(e: BaseException) -> str:
    """An exception's text on one line, at most 120 characters (a file's damage)."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def its_trials(n: int | None) -> str:
    if n is None:
        return "its trials"
    return f"its {n:,} trial" + ("" if n == 1 else "s")


#: What :func:`note_to_stderr` has said in this process: each line once, however many
#: times a store is opened (a report opens one several times).
_SAID: set[str] = set()


def note_to_stderr(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        print(f"collateral: {message}", file=sys.stderr, flush=True)
