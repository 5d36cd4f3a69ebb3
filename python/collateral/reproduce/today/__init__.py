"""Today's access queues: a call and a game beside downloads under drop-tail, FQ-CoDel,
PIE, CAKE and DualPI2 on ADSL1 and a 100/20 Mbit/s cable link, and a GCC video call
beside a download under five of them (``today-queues``),
RFC 9332's coupling goal for DualPI2 (``today-l4s``), and the same call and game on
today's links, a cellular trace, a Starlink-like satellite and a DOCSIS upstream
(``today-links``), and responsiveness (RPM, grade, QoO) under RRUL on three lines
(``responsiveness``).

The experiments are ``experiments/today-queues.toml``, ``l4s-coupling.toml`` and
``today-links.toml``; their comments state the set-up. Every number here is read from
the stored summary (and, for ``today-l4s`` and ``today-links``, the per-packet ``cbr``
trace); the tables are written beside the figures as Markdown and CSV.
"""

from __future__ import annotations

from ..claims import Figure
from .l4s import l4s_claims, l4s_coupling, l4s_table
from .links import today_links
from .links_claims import today_links_claims
from .queue_claims import today_claims
from .queues import today_queues
from .resp_claims import responsiveness_claims
from .responsiveness import responsiveness
from .table import MIXES, VARIANTS, today_table
from .video import video_table

__all__ = [
    "FIGURES",
    "MIXES",
    "VARIANTS",
    "l4s_claims",
    "l4s_coupling",
    "l4s_table",
    "responsiveness",
    "responsiveness_claims",
    "today_claims",
    "today_links",
    "today_links_claims",
    "today_queues",
    "today_table",
    "video_table",
]


FIGURES: list[Figure] = [
    Figure(
        "today-queues",
        "collateral study",
        "today's access queues: a call and a game beside downloads, ADSL1 and cable",
        "today-queues",
        today_queues,
        today_claims,
        (("experiment.trials", 1), ("scenario.duration", "25s"), ("scenario.warmup", "5s")),
    ),
    Figure(
        "today-l4s",
        "RFC 9332",
        "DualPI2 coupling: Prague vs CUBIC throughput and L-queue delay",
        "l4s-coupling",
        l4s_coupling,
        l4s_claims,
        (("experiment.trials", 1), ("scenario.duration", "30s"), ("scenario.warmup", "10s")),
    ),
    Figure(
        "today-links",
        "collateral study",
        "today's links: a call and a game on a cellular trace, a LEO satellite and DOCSIS",
        "today-links",
        today_links,
        today_links_claims,
        # 15 s still holds the satellite's first handover (at 12 s).
        (("experiment.trials", 1), ("scenario.duration", "15s"), ("scenario.warmup", "3s")),
    ),
    Figure(
        "responsiveness",
        "collateral study",
        "responsiveness under RRUL: RPM, grade and QoO per queue on ADSL1, cable and fibre",
        "responsiveness",
        responsiveness,
        responsiveness_claims,
        # The full run's 40 s, one trial: 5 s idle, then the load; ADSL1's saturates at
        # 20-30 s (under PIE at 30 s: a 30 s run measured no loaded phase there).
        (("experiment.trials", 1), ("scenario.duration", "40s")),
    ),
]
