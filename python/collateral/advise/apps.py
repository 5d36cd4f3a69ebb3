"""The applications the advisor protects and their budgets: how late a packet may
arrive one way (base delay included) before it is as good as lost."""

from __future__ import annotations

from typing import Any

from ..trial_tables import GAME_BUDGETS


def _both_ways(app: str) -> list[dict[str, Any]]:
    return [{"direction": d, "app": app} for d in ("down", "up")]


#: Each application's traffic (CBR flows as the scenario takes them) and one-way budget.
#: VoIP: ITU-T G.114 finds one-way delays up to 150 ms acceptable to most users (the
#: G.107 E-model's delay impairment starts at 100 ms: ``--budget 100ms`` plans stricter).
#: Games: the genres' budgets of SPEC §6 (Quake 3's profile for shooters, World of
#: Warcraft's for the others), both ways as a game client sends and receives: an
#: upload fills the upstream, where the client's own packets wait.
APPS: dict[str, dict[str, Any]] = {
    "voip": {"cbr": [{"direction": "down"}, {"direction": "up"}], "budget": "150ms"},
    "fps": {"cbr": _both_ways("quake3"), "budget": GAME_BUDGETS["quake3"][1]},
    "mmo": {"cbr": _both_ways("wow"), "budget": GAME_BUDGETS["wow"][1]},
    "rts": {"cbr": _both_ways("wow"), "budget": "1000 ms"},
    # A video call (``video``: GCC, NADA or SCReAM adapting its rate): a frame is late
    # when it is complete later than the budget after its capture (its playout
    # deadline); conversational video shares G.114's 150 ms with voice.
    "video": {"cbr": [], "media": {"direction": "down"}, "budget": "150ms"},
}
#: ``simulate``'s application names for the same traffic: the advisor takes either.
APP_ALIASES = {"g711": "voip", "quake3": "fps", "wow": "mmo"}
#: Where each budget comes from, for the table's caption.
BUDGET_SOURCES = {
    "voip": "ITU-T G.114",
    "fps": "first-person shooters",
    "mmo": "role-playing games",
    "rts": "real-time strategy",
    "video": "ITU-T G.114, capture to complete frame",
}
