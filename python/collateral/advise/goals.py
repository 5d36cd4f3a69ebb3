"""Goals on a workload's scores for the advisor: ``rpm>=800``, ``grade>=A``,
``qoo_voip>=80``. A candidate meets a goal when the median over its trials of the
score the core computed (``collateral_model::scores``) satisfies it; the advisor only
compares, it never recomputes a score."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from statistics import median
from typing import Any

from ..vocabulary import VOCABULARY

#: DSLReports' grades as the core declares them (``scores::grade``), worst first, so
#: that a better grade compares greater.
GRADES: tuple[str, ...] = tuple(reversed(VOCABULARY["bufferbloat_grades"]))
#: The scores a goal may name and the summary field each is.
SCORES: dict[str, str] = {
    "rpm": "rpm",
    "rpm_p90": "rpm_p90",
    "rpm_p99": "rpm_p99",
    "grade": "bufferbloat_grade",
    "qoo_voip": "qoo_voip",
    "qoo_gaming": "qoo_gaming",
    "qoo_video_conferencing": "qoo_video_conferencing",
    "qoo_web": "qoo_web",
}
_GOAL = re.compile(r"^\s*([a-z_0-9]+)\s*(>=|<=|≥|≤)\s*([A-Za-z0-9.+]+)\s*$")


@dataclass(frozen=True)
class Goal:
    score: str
    at_least: bool
    value: float

    def __str__(self) -> str:
        v = GRADES[int(self.value)] if self.score == "grade" else f"{self.value:g}"
        return f"{self.score}{'>=' if self.at_least else '<='}{v}"

    def measure(self, summary: dict[str, Any]) -> float:
        """This goal's score in one trial's summary (NaN when the trial has none)."""
        x = summary.get(SCORES[self.score])
        if self.score == "grade":
            return float(GRADES.index(x)) if x in GRADES else math.nan
        return math.nan if x is None else float(x)

    def met(self, values: list[float]) -> bool:
        """Whether the median over trials meets the goal (no score: not met)."""
        ok = [v for v in values if not math.isnan(v)]
        if len(ok) < len(values) or not ok:
            return False
        m = median(ok)
        return m >= self.value if self.at_least else m <= self.value


def parse_goal(text: str) -> Goal:
    """``NAME>=VALUE`` or ``NAME<=VALUE`` (``≥``, ``≤`` too); a ValueError naming what
    is wrong otherwise."""
    m = _GOAL.match(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"{text!r}: write a goal as SCORE>=VALUE, e.g. rpm>=800 or grade>=A")
    name, op, raw = m.groups()
    if name not in SCORES:
        raise ValueError(f"{text!r}: unknown score {name!r}; known: {', '.join(SCORES)}")
    at_least = op in (">=", "≥")
    if name == "grade":
        if raw not in GRADES:
            raise ValueError(f"{text!r}: a grade is one of {', '.join(reversed(GRADES))}")
        return Goal(name, at_least, float(GRADES.index(raw)))
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{text!r}: {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r}: {raw!r} is not a finite number")
    # QoO is a percentage: a goal beyond 100 can never be met (or always is), which a
    # typo is likelier to mean than a wish. (A sign is not in the pattern.)
    if name.startswith("qoo_") and value > 100:
        raise ValueError(f"{text!r}: {raw} is outside {name}'s range, 0 to 100 (a percentage)")
    return Goal(name, at_least, value)
