"""The advisor's evidence and its ranking rule.

A candidate *meets* the target when at most ``target`` of the application's packets
(median over trials, worst flow) arrive later than the budget one way or not at all.
Among those that meet it, the ones whose bulk goodput is within ``tolerance`` of the
best (or within the trials' spread of it) are the *leaders*: goodput that close is not
worth a queue, so they are ranked by the real-time flows' p95 added delay, lowest first.
The rest that meet follow by goodput; those that miss, by how much they miss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .candidates import Candidate


@dataclass
class Outcome:
    candidate: Candidate
    #: Median over trials of the worst flow's share of packets late or lost.
    late: float
    #: Median p95 one-way added delay (s) of each direction's real-time flows.
    delay_s: dict[str, float]
    #: Median goodput (bit/s) of each direction's bulk flows together.
    goodput_bps: dict[str, float]
    #: Median of the bulk directions' mean utilisation (goodput over the link's rate).
    utilisation: float
    meets: bool
    #: The trials' (min, max) of each: what "within the spread" means.
    late_range: tuple[float, float] = (math.nan, math.nan)
    delay_range: tuple[float, float] = (math.nan, math.nan)
    utilisation_range: tuple[float, float] = (math.nan, math.nan)
    #: Median worst-direction MOS (ITU-T G.107) for a call; NaN for a game.
    mos: float = math.nan
    #: Percentage points of packets the median is below the target (negative: above).
    margin: float = math.nan
    #: Each goal on a workload's scores (its text) and the median over trials of that
    #: score (a grade as its rank, F = 0 to A+ = 5); empty without goals.
    scores: dict[str, float] = field(default_factory=dict)
    #: Median received rate (bit/s) of the video call; NaN for other applications.
    call_bps: float = math.nan

    @property
    def delay(self) -> float:
        """The worse direction's median p95 added delay (s)."""
        return max(self.delay_s.values(), default=math.nan)


@dataclass
class Advice:
    app: str
    #: The largest share of packets late or lost that meets the target.
    target: float
    #: The one-way budget, base delay included, as text ("150ms").
    budget: str
    setup: str
    trials: int
    #: Goodput within this fraction of the best counts as the same.
    tolerance: float = 0.02
    outcomes: list[Outcome] = field(default_factory=list)
    #: Directions carrying bulk flows, and the link's rate of each (bit/s).
    rates: dict[str, int] = field(default_factory=dict)
    #: Where the budget comes from, in words.
    budget_source: str = ""

    def leaders(self) -> list[Outcome]:
        """The outcomes that meet the target with goodput as good as the best's."""
        ok = [o for o in self.outcomes if o.meets]
        if not ok:
            return []
        top = max(ok, key=lambda o: o.utilisation)
        floor = (1 - self.tolerance) * top.utilisation
        return [
            o
            for o in ok
            if o.utilisation >= floor or _overlap(o.utilisation_range, top.utilisation_range)
        ]

    @property
    def ranked(self) -> list[Outcome]:
        """Best first: the leaders by delay, the rest that meet by goodput, then those
        that miss by how much (module doc)."""
        lead = sorted(self.leaders(), key=lambda o: (o.delay, -o.utilisation))
        ok = [o for o in self.outcomes if o.meets and o not in lead]
        miss = [o for o in self.outcomes if not o.meets]
        return (
            lead
            + sorted(ok, key=lambda o: -o.utilisation)
            + sorted(miss, key=lambda o: (o.late, o.delay, -o.utilisation))
        )

    @property
    def best(self) -> Outcome:
        return self.ranked[0]

    def ties(self) -> list[Outcome]:
        """Other leaders whose delay overlaps the recommendation's over the trials: as
        good a choice on this evidence."""
        b = self.best
        if not b.meets:
            return []
        return [o for o in self.leaders() if o is not b and _overlap(o.delay_range, b.delay_range)]

    def runner_up(self) -> Outcome | None:
        """The next option after the recommendation and its ties (None if none)."""
        ties = self.ties()
        rest = [o for o in self.ranked[1:] if o not in ties]
        return rest[0] if rest else None


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
