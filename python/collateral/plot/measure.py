"""The key-measure catalogue: what ``--y`` names (Measure), friendly names such as
``voip_p95_ms`` and every numeric summary column (measures())."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..display import Unit, column_unit

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Measure:
    """A y value: ``columns`` of the summary combined (``sum``) or one column, scaled
    into ``unit``."""

    name: str
    label: str
    unit: str
    columns: tuple[str, ...]
    scale: float
    meaning: str
    combine: Literal["one", "sum"] = "one"
    subject: str = ""  # whose value: "CBR flow 0, down"

    def values(self, df: pd.DataFrame) -> pd.Series:
        """Per trial, in the human unit (NaN where the trial has no value)."""
        import pandas as pd

        cols = [pd.to_numeric(df[c], errors="coerce").astype(float) for c in self.columns]
        one = self.combine == "one"
        v = cols[0] if one else pd.concat(cols, axis=1).sum(axis=1, skipna=False)
        return Unit(self.unit, self.scale).of(v)

    @property
    def axis_label(self) -> str:
        return Unit(self.unit).label(self.label)


def _flow_cols(
    df: pd.DataFrame, group: str, field_: str, direction: str | None = None
) -> list[str]:
    out = []
    i = 0
    while f"{group}{i}_{field_}" in df.columns:
        d = df.get(f"{group}{i}_direction")
        if direction is None or (
            d is not None and (d.dropna() == direction).all() and d.notna().any()
        ):
            out.append(f"{group}{i}_{field_}")
        i += 1
    return out


def _cbr_name(df: pd.DataFrame, i: int = 0) -> str:
    d = df.get(f"cbr{i}_direction")
    shown = ", ".join(sorted({str(x) for x in d.dropna()})) if d is not None else ""
    return f"CBR flow {i}{', ' + shown if shown else ''}"


def _call_name(df: pd.DataFrame) -> str:
    parts = [df.get(c) for c in ("media0_controller", "media0_direction")]
    shown = [", ".join(sorted({str(x) for x in v.dropna()})) for v in parts if v is not None]
    return " ".join(["video call 0", *(x for x in shown if x)])


def measures(df: pd.DataFrame) -> dict[str, Measure]:
    """The friendly measures a summary table supports, by name, then every numeric
    summary column by its own name."""
    from ..schema import column

    out: dict[str, Measure] = {}
    have = set(df.columns)

    def add(
        name: str,
        label: str,
        cols: Sequence[str],
        meaning: str,
        combine: Literal["one", "sum"] = "one",
        subject: str = "",
    ) -> None:
        # The unit is the schema's, shown as display shows it (s in ms, bit/s in Mbit/s,
        # bytes in kB, shares in %): the same column reads alike in every figure.
        if cols and all(c in have for c in cols):
            u = column_unit(cols[0])
            out[name] = Measure(
                name, label, u.name, tuple(cols), u.scale, meaning, combine, subject
            )

    voip = _cbr_name(df)
    add(
        "voip_p95_ms",
        "VoIP delay p95",
        ["cbr0_delay_p95_s"],
        "95th percentile of CBR flow 0's additional one-way delay (one-way delay - base)",
        subject=voip,
    )
    add(
        "voip_median_ms",
        "VoIP delay median",
        ["cbr0_delay_median_s"],
        "median additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_max_ms",
        "VoIP delay max",
        ["cbr0_delay_max_s"],
        "largest additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_owd_ms",
        "VoIP one-way delay, mean",
        ["cbr0_owd_mean_s"],
        "mean one-way delay of CBR flow 0 (base delay included)",
        subject=voip,
    )
    add(
        "loss_pct",
        "VoIP loss",
        ["cbr0_loss_rate"],
        "share of CBR flow 0's packets lost",
        subject=voip,
    )
    add(
        "voip_mos",
        "VoIP MOS",
        ["cbr0_mos"],
        "ITU-T G.107 mean opinion score of a G.711 call on CBR flow 0, 1-4.5",
        subject=voip,
    )
    if "loss_pct" in out:
        out["voip_loss_pct"] = Measure(**{**out["loss_pct"].__dict__, "name": "voip_loss_pct"})
    add(
        "voip1_p95_ms",
        "VoIP delay p95",
        ["cbr1_delay_p95_s"],
        "95th percentile of CBR flow 1's additional one-way delay",
        subject=_cbr_name(df, 1),
    )
    gp = _flow_cols(df, "tcp", "goodput_bps")
    add(
        "goodput_mbps",
        "TCP goodput, all flows",
        gp,
        "goodput of every TCP flow together",
        "sum",
    )
    for direction in ("down", "up"):
        if f"{direction}_goodput_bps" in have:  # the core's aggregate, where it records one
            cols, combine = [f"{direction}_goodput_bps"], "one"
        else:
            cols, combine = _flow_cols(df, "tcp", "goodput_bps", direction), "sum"
        add(
            f"{direction}_goodput_mbps",
            f"TCP goodput, {direction}stream flows",
            cols,
            f"goodput of the {direction}stream TCP flows together",
            combine,
        )  # type: ignore[arg-type]
    add(
        "retransmits",
        "TCP retransmissions, all flows",
        _flow_cols(df, "tcp", "retransmits"),
        "segments retransmitted by every TCP flow together",
        "sum",
    )
    add(
        "timeouts",
        "TCP timeouts, all flows",
        _flow_cols(df, "tcp", "timeouts"),
        "retransmission timeouts of every TCP flow together",
        "sum",
    )
    add(
        "queue_drops",
        "drops at the downstream queue",
        ["queue_down_drops"],
        "packets the downstream queue dropped",
    )
    add(
        "queue_max_kb",
        "downstream queue, largest",
        ["queue_down_max_bytes"],
        "largest occupancy of the downstream queue",
    )
    add(
        "web_p95_ms",
        "web object response time, 95th pct.",
        ["web0_response_p95_s"],
        "95th percentile of web group 0's object response time",
    )
    call = _call_name(df)
    for name, label, field_, meaning in (
        ("video_p95_ms", "video frame delay p95", "frame_delay_p95_s",
         "95th percentile of video call 0's frame delay (capture to its last packet)"),
        ("video_rate_mbps", "video received rate", "received_bps",
         "media bytes (IP) of video call 0 received per second"),
        ("video_late_pct", "video frames late", "frames_late",
         "share of video call 0's frames later than its playout deadline, lost ones included"),
    ):  # fmt: skip
        add(name, label, [f"media0_{field_}"], meaning, subject=call)
    for c in df.columns:
        decl = column(c)
        if decl is None or decl["dtype"] in ("string", "json") or c in out:
            continue
        u = column_unit(c)
        out[c] = Measure(c, column_name(c), u.name, (c,), u.scale, decl["meaning"])
    return out


_UNIT_SUFFIX = re.compile(r"_(s|bps|bytes)$")
#: Whose value a grouped column holds, by the schema's group key and the column's index.
_SUBJECTS = {
    "tcp": "TCP flow {i}",
    "cbr": "CBR flow {i}",
    "web": "web group {i}",
    "queues": "{i} queue",
}


def column_name(col: str) -> str:
    """A summary column as a figure names it: the schema's name of the field, its unit
    suffix dropped (the axis says the unit), and whose it is: ``tcp0_goodput_bps`` ->
    "goodput, TCP flow 0", ``queue_down_drops`` -> "drops, down queue",
    ``down_goodput_bps`` -> "down goodput". Undeclared columns keep their name."""
    from ..schema import column, metric_columns

    decl = column(col)
    if decl is None:
        return col
    words = _UNIT_SUFFIX.sub("", decl["name"]).replace("_", " ")
    for pattern, c in metric_columns():
        if c is not decl or "{i}" not in pattern:
            continue
        head, _, tail = pattern.partition("{i}")
        index = col[len(head) : len(col) - len(tail)]
        group = head.rstrip("_")
        who = _SUBJECTS.get("queues" if group == "queue" else group, group + " {i}")
        return f"{words}, {who.format(i=index)}"
    return words
