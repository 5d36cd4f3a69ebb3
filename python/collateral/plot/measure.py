"""The key-measure catalogue: what ``--y`` names (Measure), friendly names such as
``voip_p95_ms`` and every numeric summary column (measures())."""

from __future__ import annotations

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


def measures(df: pd.DataFrame) -> dict[str, Measure]:
    """The friendly measures a summary table supports, by name, then every numeric
    summary column by its own name."""
    from ..schema import column

    out: dict[str, Measure] = {}
    have = set(df.columns)

    def add(
        name: str,
        label: str,
        unit: str,
        cols: Sequence[str],
        scale: float,
        meaning: str,
        combine: Literal["one", "sum"] = "one",
        subject: str = "",
    ) -> None:
        if cols and all(c in have for c in cols):
            out[name] = Measure(name, label, unit, tuple(cols), scale, meaning, combine, subject)

    voip = _cbr_name(df)
    add(
        "voip_p95_ms",
        "VoIP delay p95",
        "ms",
        ["cbr0_delay_p95_s"],
        1e3,
        "95th percentile of CBR flow 0's additional one-way delay (one-way delay - base)",
        subject=voip,
    )
    add(
        "voip_median_ms",
        "VoIP delay median",
        "ms",
        ["cbr0_delay_median_s"],
        1e3,
        "median additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_max_ms",
        "VoIP delay max",
        "ms",
        ["cbr0_delay_max_s"],
        1e3,
        "largest additional one-way delay of CBR flow 0",
        subject=voip,
    )
    add(
        "voip_owd_ms",
        "VoIP one-way delay, mean",
        "ms",
        ["cbr0_owd_mean_s"],
        1e3,
        "mean one-way delay of CBR flow 0 (base delay included)",
        subject=voip,
    )
    add(
        "loss_pct",
        "VoIP loss",
        "%",
        ["cbr0_loss_rate"],
        100.0,
        "share of CBR flow 0's packets lost",
        subject=voip,
    )
    add(
        "voip_mos",
        "VoIP MOS",
        "",
        ["cbr0_mos"],
        1.0,
        "ITU-T G.107 mean opinion score of a G.711 call on CBR flow 0, 1-4.5",
        subject=voip,
    )
    if "loss_pct" in out:
        out["voip_loss_pct"] = Measure(**{**out["loss_pct"].__dict__, "name": "voip_loss_pct"})
    add(
        "voip1_p95_ms",
        "VoIP delay p95",
        "ms",
        ["cbr1_delay_p95_s"],
        1e3,
        "95th percentile of CBR flow 1's additional one-way delay",
        subject=_cbr_name(df, 1),
    )
    gp = _flow_cols(df, "tcp", "goodput_bps")
    add(
        "goodput_mbps",
        "TCP goodput, all flows",
        "Mbit/s",
        gp,
        1e-6,
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
            "Mbit/s",
            cols,
            1e-6,
            f"goodput of the {direction}stream TCP flows together",
            combine,
        )  # type: ignore[arg-type]
    add(
        "retransmits",
        "TCP retransmissions, all flows",
        "",
        _flow_cols(df, "tcp", "retransmits"),
        1.0,
        "segments retransmitted by every TCP flow together",
        "sum",
    )
    add(
        "timeouts",
        "TCP timeouts, all flows",
        "",
        _flow_cols(df, "tcp", "timeouts"),
        1.0,
        "retransmission timeouts of every TCP flow together",
        "sum",
    )
    add(
        "queue_drops",
        "drops at the downstream queue",
        "",
        ["queue_down_drops"],
        1.0,
        "packets the downstream queue dropped",
    )
    add(
        "queue_max_kb",
        "downstream queue, largest",
        "kB",
        ["queue_down_max_bytes"],
        1e-3,
        "largest occupancy of the downstream queue",
    )
    add(
        "web_p95_ms",
        "web object response time, 95th pct.",
        "ms",
        ["web0_response_p95_s"],
        1e3,
        "95th percentile of web group 0's object response time",
    )
    for c in df.columns:
        decl = column(c)
        if decl is None or decl["dtype"] in ("string", "json") or c in out:
            continue
        u = column_unit(c)
        out[c] = Measure(c, c, u.name, (c,), u.scale, decl["meaning"])
    return out
