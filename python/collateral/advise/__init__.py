"""The advisor (SPEC §9): which queue and congestion control keep a real-time
application within its delay budget on a given link, at the least cost in goodput?

It simulates the link with the user's bulk downloads and uploads beside the application
for every candidate (:mod:`.candidates`: drop-tail at ¼ to 4 bandwidth-delay products,
the user's current queue, CoDel, FQ-CoDel with and without ECN, PIE, CAKE, DualPI2
classic and L4S) under each congestion control, a few seeded trials each
(:mod:`.run`), and ranks them by the rule of :mod:`.model`: meet the application's
budget (:mod:`.apps`), keep goodput within a tolerance of the best, then add the least
delay. :mod:`.text` and :mod:`.figure` present the evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .apps import APP_ALIASES, APPS
from .candidates import AQMS, BDP_MULTIPLES, Candidate, candidates
from .figure import figure, plot
from .limits import MAX_DURATION_NS, MAX_TCP_FLOWS, MAX_TRIALS, MIN_DURATION_NS
from .model import Advice, Outcome
from .text import table, verdict, want

if TYPE_CHECKING:
    from .run import advise

__all__ = [
    "APPS",
    "APP_ALIASES",
    "AQMS",
    "BDP_MULTIPLES",
    "MAX_DURATION_NS",
    "MAX_TCP_FLOWS",
    "MAX_TRIALS",
    "MIN_DURATION_NS",
    "Advice",
    "Candidate",
    "Outcome",
    "advise",
    "candidates",
    "figure",
    "plot",
    "table",
    "verdict",
    "want",
]

#: What runs the trials (the scenario's models): imported on first use, so that the CLI's
#: options (``collateral advise --help``) need only the limits and the apps.
__getattr__, __dir__ = lazy_names(__name__, {"advise": "run"})
