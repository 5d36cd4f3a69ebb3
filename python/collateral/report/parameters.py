"""A store's parameters as the report labels them (``rtt_s`` → "RTT", ``tcp0_cc`` →
"CC"), and the fewest of them that tell a store's points apart (a table's row labels,
a figure's axes)."""

from __future__ import annotations

import re
from typing import Any

from ..display import is_null

_PARAM_LABELS = {
    "link": "link",
    "rtt_s": "RTT",
    "down_queue_kind": "queue",
    "down_queue_rule": "queue rule",
    "tcp0_cc": "CC",
    "tcp0_profile": "TCP stack",
    "down_queue_limit_bytes": "queue limit",
    "down_queue_limit_packets": "queue limit (packets)",
    "tcp_flows": "TCP flows",
    "cbr0_jitter_s": "CBR jitter",
    "down_rate_bps": "rate ↓",
    "up_rate_bps": "rate ↑",
}
#: Parameters tried first as a table's row labels (the sweeps' usual axes).
_PARAM_ORDER = list(_PARAM_LABELS)


def param_label(name: str) -> str:
    if name in _PARAM_LABELS:
        return _PARAM_LABELS[name]
    label = re.sub(r"_(s|bps|bytes)$", "", name.removeprefix("tag_"))
    label = re.sub(r"^down_", "↓ ", re.sub(r"^up_", "↑ ", label))
    label = re.sub(r"^(tcp|cbr|web)(\d+)_", lambda m: f"{m[1].upper()} {m[2]} ", label)
    return label.replace("_", " ")


def parameters(df: Any) -> list[str]:
    """The fewest parameter columns that tell the points apart: tags and the usual sweep
    axes first, then any other varying column, each kept only if it splits points that
    the ones before it do not (``down_rate_bps`` adds nothing once ``link`` is there)."""
    from .. import schema
    from ..store import IDENTITY_COLUMNS

    per_point = df.drop_duplicates("point") if "point" in df.columns else df
    n_points = len(per_point)
    # As text, missing values included (pandas' string columns keep NA through astype).
    text = per_point.astype(object).map(lambda v: "" if is_null(v) else str(v))
    cands = [
        c
        for c in df.columns
        if c not in IDENTITY_COLUMNS
        and schema.column(c) is None
        and c not in ("mode", "duration_s", "warmup_s")
        and text[c].nunique() > 1
        and text[c].str.len().max() <= 40  # no JSON lists as labels
    ]
    # A tag set on every point names the sweep's axis; one set on some points only
    # (a size kept beside a packet limit) is a last resort.
    tags = [c for c in cands if c.startswith("tag_") and per_point[c].notna().all()]
    partial = [c for c in cands if c.startswith("tag_") and c not in tags]
    known = [c for c in _PARAM_ORDER if c in cands]
    rest = sorted(
        (c for c in cands if c not in tags + partial + known),
        key=lambda c: text[c].nunique(),
    )
    chosen: list[str] = []
    groups = 1
    for c in tags + known + rest + partial:
        g = text[[*chosen, c]].drop_duplicates().shape[0]
        if g > groups:
            chosen.append(c)
            groups = g
        if groups >= n_points:
            break
    return chosen
