"""Reading a study's stored results: a query over the store as a DataFrame, and a stored
trial as a Result (for the figures that draw one trial's traces)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..result import Result

if TYPE_CHECKING:
    import pandas as pd

    from ..store import Store


def query(store: Store, sql: str) -> pd.DataFrame:
    return store.query(sql)


def trial_result(store: Store, key: str, row: pd.Series) -> Result:
    """A stored trial as a Result (summary columns and trace tables)."""
    traces: dict[str, dict[str, np.ndarray]] = {}
    for name in ("cwnd", "queue", "cbr", "congestion"):
        if name in store.tables():
            t = store.query(f"SELECT * EXCLUDE (key) FROM {name} WHERE key = '{key}'")
            traces[name] = {c: t[c].to_numpy() for c in t.columns}
    empty = {"time_s": np.array([]), "flow": np.array([], dtype=np.uint32)}
    for name, cols in {
        "cwnd": ("cwnd", "ssthresh"),
        "queue": ("direction", "bytes", "packets"),
        "congestion": ("kind",),
        "cbr": ("seq", "sent_s", "owd_s", "extra_delay_s"),
    }.items():
        traces.setdefault(name, {**empty, **{c: np.array([]) for c in cols}})
    n_cbr = int(row.get("cbr_flows", 0) or 0)
    summary = {
        "duration_s": float(row["duration_s"]),
        "warmup_s": float(row["warmup_s"]),
        "tcp": [{"flow": 0, "cc": row.get("tcp0_cc"), "direction": "down"}],
        "cbr": [
            {"flow": 1 + j, "direction": row.get(f"cbr{j}_direction", "down")} for j in range(n_cbr)
        ],
    }
    return Result({"summary": summary, "traces": traces})
