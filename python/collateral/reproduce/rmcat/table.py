"""The RMCAT studies' numbers: one row per call of each trial with the core's media summary
(RFC 8868's criteria among it: utilisation, call share, Jain's index, convergence, the
reaction to a capacity fall, the rate's instability) and the medians over trials per
case, queue, controller and call. Nothing is recomputed here: every number is a stored
summary field; the capacity steps for the figure are read back from the stored spec."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..today.table import num, summary

if TYPE_CHECKING:
    import pandas as pd

    from ...spec import Scenario
    from ...store import Store

#: The controllers in the order the figures and tables show them.
CONTROLLERS = ("gcc", "nada", "scream")

#: The summary fields each call's row carries (``media{k}_`` prefixed in the store).
FIELDS = (
    "received_bps",
    "rate_share",
    "capacity_bps",
    "utilisation",
    "call_share",
    "jain_index",
    "convergence_s",
    "adapt_down_s",
    "rate_cov",
    "loss_rate",
    "discarded",
    "frame_delay_p50_s",
    "frame_delay_p95_s",
    "frames_late",
    "feedback_sent",
    "feedback_lost",
)

#: Table columns: (column, heading, scale, format).
TABLE_COLS = (
    ("received_bps", "rate (Mbit/s)", 1e-6, "{:.3f}"),
    ("capacity_bps", "capacity (Mbit/s)", 1e-6, "{:.3f}"),
    ("utilisation", "utilisation", 1, "{:.2f}"),
    ("rate_share", "share beside TCP", 1, "{:.2f}"),
    ("call_share", "share of calls", 1, "{:.2f}"),
    ("jain_index", "Jain", 1, "{:.3f}"),
    ("convergence_s", "convergence (s)", 1, "{:.1f}"),
    ("adapt_down_s", "adapt to fall (s)", 1, "{:.1f}"),
    ("rate_cov", "rate CoV", 1, "{:.2f}"),
    ("loss_rate", "loss (%)", 100, "{:.2f}"),
    ("discarded", "discarded (%)", 100, "{:.1f}"),
    ("frame_delay_p95_s", "frame p95 (ms)", 1e3, "{:.0f}"),
    ("frames_late", "late (%)", 100, "{:.1f}"),
    ("feedback_loss", "feedback loss (%)", 100, "{:.2f}"),
)


def scenario_of(row: Any) -> Scenario:
    """The trial's scenario, as stored."""
    from ...spec import Scenario

    return Scenario.model_validate_json(row["scenario"])


def call_rows(store: Store) -> pd.DataFrame:
    """One row per call of each trial: its case, queue, controller, index, direction
    and the summary's fields."""
    import pandas as pd

    rows = []
    for _, r in summary(store).iterrows():
        sc = scenario_of(r)
        for k, call in enumerate(sc.calls):
            out: dict[str, Any] = {
                "key": r["key"],
                "rep": int(r["rep"]),
                "case": str(r.get("tag_case") or "-"),
                "queue": str(r.get("tag_queue") or "-"),
                "cc": call.controller,
                "call": k,
                "direction": call.direction,
                "start_s": call.start / 1e9,
                "max_rate_bps": call.max_rate,
            }
            for f in FIELDS:
                out[f] = num(r.get(f"media{k}_{f}"))
            sent = out["feedback_sent"]
            out["feedback_loss"] = out["feedback_lost"] / sent if sent else float("nan")
            rows.append(out)
    return pd.DataFrame(rows)


def medians(calls: pd.DataFrame) -> pd.DataFrame:
    """Medians over trials per (case, queue, controller, call), with the trial count."""
    keys = ["case", "queue", "cc", "call"]
    if calls.empty:
        return calls
    g = calls.groupby(keys, sort=False)
    t = g.median(numeric_only=True)
    t["trials"] = g.size()
    t["direction"] = g["direction"].first()
    return t


def value(
    t: pd.DataFrame, field: str, cc: str, case: str = "-", queue: str = "-", call: int = 0
) -> float:
    """A median from :func:`medians` (NaN where the point was not run)."""
    try:
        return float(t.loc[(case, queue, cc, call), field])
    except KeyError:
        return float("nan")
