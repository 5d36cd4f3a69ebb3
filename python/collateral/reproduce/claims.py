"""What a reproduction is made of: a Claim (the paper's number beside ours, and whether
it holds) and a Figure (a study's figure: its experiment, drawing and claims), with the
summary line over claims. The study modules import these; the registry lists Figures."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Claim:
    """A number or statement from the paper beside ours. For a study of our own,
    ``published`` is what the model predicts (computed from the link: a packet's time on
    the wire, the queue limit over the rate), so that "differs" means a surprise."""

    #: The claim in a short line (the console shows it with ``ours``).
    text: str
    published: str
    ours: str
    holds: bool | None = None  # None: no pass/fail, just the two values
    #: How far ours may be from the published value and still hold, in words and
    #: numbers ("within 1 % of capacity", "≥ 95 % of sizes"); empty only with holds=None.
    tolerance: str = ""
    #: Why the expectation is what it is, and what the numbers behind ``ours`` are: the
    #: report shows it; the console does not.
    why: str = ""


#: The longest claim line the console prints (text and ours; the report has the rest).
CONSOLE_WIDTH = 160


def console_line(c: Claim) -> str:
    """``text: ours (expected: published)``, cut to CONSOLE_WIDTH characters (with an
    ellipsis) where the claim holds; whole where it differs, whose reader needs what
    was expected."""
    line = f"{c.text}: {c.ours}" + (f" (expected: {c.published})" if c.published else "")
    if c.holds is False or len(line) <= CONSOLE_WIDTH:
        return line
    return line[: CONSOLE_WIDTH - 1] + "…"


def claims_summary(claims: Iterable[Claim]) -> tuple[int, int, int]:
    """(hold, differ, total) over ``claims``; a claim without a verdict counts only in
    the total."""
    cs = list(claims)
    return (
        sum(c.holds is True for c in cs),
        sum(c.holds is False for c in cs),
        len(cs),
    )


def format_claims_summary(claims: Iterable[Claim]) -> str:
    """``claims: N hold, M differ, K total`` (and how many have no verdict, if any)."""
    hold, differ, total = claims_summary(claims)
    line = f"claims: {hold} hold, {differ} differ, {total} total"
    if total - hold - differ:
        line += f" ({total - hold - differ} without a verdict)"
    return line


@dataclass(frozen=True)
class Figure:
    id: str
    paper: str
    title: str
    experiment: str  # file name in reproduce/experiments, without .toml
    draw: Callable[[Any, Path, str], list[Path]]  # (store, out path stem, label) -> files
    claims: Callable[[Any], list[Claim]] = lambda store: []
    #: (dotted key, value) overrides for --quick, applied to the experiment file.
    quick: tuple[tuple[str, Any], ...] = ()
    #: Run on the emulation testbed (real Linux TCP, needs root) instead of the simulator;
    #: such figures are left out of ``reproduce all``.
    testbed: bool = False
