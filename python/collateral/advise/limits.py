"""Limits of one run of the advisor (it simulates every candidate ``trials`` times),
checked where they enter: by the CLI's options (without the scenario's models) and by
:func:`~collateral.advise.advise`."""

from __future__ import annotations

from ..vocabulary import MAX_WEB_SLOTS

MAX_TRIALS = 100
MAX_TCP_FLOWS = 100
MAX_DURATION_NS = 3_600 * 10**9
#: The shortest trial worth ranking: 50 calls packets of 20 ms after a 250 ms warm-up.
MIN_DURATION_NS = 10**9
MAX_THREADS = 1024
#: As ``simulate``'s --web-users: 4 connection slots each.
MAX_WEB_USERS = MAX_WEB_SLOTS // 4
