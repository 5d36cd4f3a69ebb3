"""The result of one trial: summary numbers, traces as numpy arrays, resampled series.

The core records cwnd and queue occupancy on every change (like SIFTR); analyses and
plots often want a fixed grid (like Web100's 1 ms polling), which
:meth:`Result.cwnd_series` and :meth:`Result.queue_series` produce without loss of
information at the grid points: the value at ``t`` is the last change at or before ``t``.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Literal

from .display import fmt_bps, short
from .units import parse_duration

if TYPE_CHECKING:  # numpy loads with the first trace asked for, not the summary
    import numpy as np
    from rich.table import Table

    from .spec import Scenario

__all__ = ["Result", "step_resample"]

#: ssthresh before the first loss is "infinite": u32::MAX in the trace.
SSTHRESH_INFINITE = 2**32 - 1  # = schema.NOT_SET[("cwnd", "ssthresh")]
_DIRECTIONS = {"down": 0, "up": 1}
#: The most points a resampled series may have (three float64 arrays of 80 MB each).
MAX_SERIES_POINTS = 10_000_000


def _seconds(step: object) -> float:
    """A step given as seconds (a number) or in human units ("1ms"); positive, finite."""
    if isinstance(step, str):
        try:
            dt = parse_duration(step) / 1e9
        except ValueError as e:
            raise ValueError(f"step: {e}") from None
    elif isinstance(step, int | float) and not isinstance(step, bool):
        try:
            dt = float(step)
        except OverflowError:
            raise ValueError("step: a number too large to be seconds") from None
    else:
        raise TypeError(f"step: expected seconds or a duration such as '1ms', got {short(step)}")
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"step must be positive, got {short(step)}")
    return dt


def _time(name: str, t: object, default: float) -> float:
    """A window bound in seconds (None: ``default``); a finite number."""
    if t is None:
        return default
    if isinstance(t, bool) or not isinstance(t, int | float):
        raise TypeError(f"{name}: expected a time in seconds, got {short(t)}")
    try:
        seconds = float(t)
    except OverflowError:
        raise ValueError(f"{name}: a number too large to be seconds") from None
    if not math.isfinite(seconds):
        raise ValueError(f"{name}: expected a finite time in seconds, got {short(t)}")
    return seconds


def step_resample(
    times: np.ndarray, values: np.ndarray, grid: np.ndarray, before: float = math.nan
) -> np.ndarray:
    """Value of a step function given by its change points at each grid time.

    ``times`` must be sorted; several changes at one instant resolve to the last one.
    Grid points before the first change take ``before``.
    """
    import numpy as np

    idx = np.searchsorted(times, grid, side="right") - 1
    out = np.full(grid.shape, before, dtype=np.float64)
    ok = idx >= 0
    out[ok] = values[idx[ok]]
    return out


def _nan_for_null(summary: dict[str, Any]) -> dict[str, Any]:
    from .schema import float_fields

    fields = float_fields()
    for key, names in fields.items():
        if key == "":
            items = [summary]
        else:
            v = summary.get(key)
            items = list(v.values()) if isinstance(v, dict) else (v or [])
        for item in items:
            for name in names:
                if name in item and item[name] is None:
                    item[name] = math.nan
    return summary


class Result:
    """One trial's outcome. ``scenario`` is the spec it ran (for titles and JSON)."""

    def __init__(self, raw: dict[str, Any], scenario: Scenario | None = None) -> None:
        self.scenario = scenario
        # The core hands NaN over as NaN; a summary that went through JSON (a saved
        # result) has null instead: every declared float field gets its NaN back.
        self.summary: dict[str, Any] = _nan_for_null(raw["summary"])
        self.traces: dict[str, dict[str, np.ndarray]] = raw["traces"]
        #: Wall-clock seconds the core took (run metadata, not part of the summary).
        self.wall_s: float = raw.get("wall_s", 0.0)

    @property
    def tcp(self) -> list[dict[str, Any]]:
        """Per TCP flow: goodput_bps, bytes_delivered, retransmits, timeouts, ..."""
        return self.summary["tcp"]

    @property
    def cbr(self) -> list[dict[str, Any]]:
        """Per CBR flow: sent, received, lost, loss_rate, delay_{median,p95,max}_s, ..."""
        return self.summary["cbr"]

    @property
    def queues(self) -> dict[str, dict[str, Any]]:
        return self.summary["queues"]

    @property
    def duration_s(self) -> float:
        return float(self.summary["duration_s"])

    #: Tables :meth:`to_arrow` builds from the summary (the traces are the others).
    SUMMARY_TABLES = ("tcp_summary", "cbr_summary", "queue_summary")

    def to_arrow(self, table: str) -> Any:
        """One table as a ``pyarrow.Table``: a trace (``cwnd``, ``queue``, ``cbr``,
        ``drops``, ``congestion``, ``classes``: the declared columns and types, code
        columns such as ``direction`` as categories with their names, ``ssthresh`` not
        yet set (the core's u32::MAX) missing: NaN in pandas) or a summary table
        (``tcp_summary``, ``cbr_summary``, ``queue_summary``: one row per flow or
        direction)."""
        import pyarrow as pa

        from .schema import NOT_SET, arrow_type, trace_columns, trace_tables

        if table in self.SUMMARY_TABLES:
            if table == "queue_summary":
                rows = [{"direction": d, **q} for d, q in self.queues.items()]
            else:
                rows = self.tcp if table == "tcp_summary" else self.cbr
            return pa.Table.from_pylist(rows)
        if table not in trace_tables():
            known = ", ".join([*trace_tables(), *self.SUMMARY_TABLES])
            raise ValueError(f"table: unknown table {table!r}; known: {known}")
        data = self._trace(table, "table: ")
        cols = {}
        for c in trace_columns(table):
            values = data[c["name"]]
            if c.get("codes"):
                cols[c["name"]] = pa.DictionaryArray.from_arrays(
                    pa.array(values, type=pa.int8()), pa.array(c["codes"])
                )
            else:
                unset = NOT_SET.get((table, c["name"]))  # ssthresh's "infinite": missing
                mask = None if unset is None else values == unset
                cols[c["name"]] = pa.array(values, type=arrow_type(c["dtype"]), mask=mask)
        return pa.table(cols)

    def _trace(self, table: str, head: str = "") -> dict[str, np.ndarray]:
        """A recorded trace's columns; a trial run without it says so."""
        if table not in self.traces:
            raise ValueError(
                f"{head}the {table} trace was not recorded: run the trial with it on"
                " (Scenario.trace; an experiment's trial: trial.scenario(traces=True))"
            )
        return self.traces[table]

    def to_pandas(self, table: str) -> Any:
        """:meth:`to_arrow` as a pandas DataFrame (code columns as categoricals)."""
        return self.to_arrow(table).to_pandas()

    def to_polars(self, table: str) -> Any:
        """:meth:`to_arrow` as a polars DataFrame (code columns as categoricals)."""
        import polars as pl

        return pl.from_arrow(self.to_arrow(table))

    @property
    def warmup_s(self) -> float:
        return float(self.summary["warmup_s"])

    def _grid(self, step: str | float, t0: float | None, t1: float | None) -> np.ndarray:
        import numpy as np

        dt = _seconds(step)
        t0 = _time("t0", t0, 0.0)
        t1 = _time("t1", t1, self.duration_s)
        # A window outside the trial would be filled with the last value (or nothing).
        end = self.duration_s
        for name, t in (("t0", t0), ("t1", t1)):
            if not 0.0 <= t <= end * (1 + 1e-12):
                raise ValueError(f"{name}: {t:g} s is outside the trial (0 to {end:g} s)")
        if t1 < t0:
            raise ValueError(f"t1: {t1:g} s is before t0 ({t0:g} s)")
        # Integer steps from t0 avoid accumulating float error along the grid.
        span = (t1 - t0) / dt
        if span + 1 > MAX_SERIES_POINTS:
            raise ValueError(
                f"step: {step!r} from {t0:g} s to {t1:g} s gives {math.floor(span) + 1:.3g}"
                f" points, above the limit of {MAX_SERIES_POINTS:,}; take a larger step"
                " or a shorter window (t0, t1)"
            )
        n = math.floor(span + 1e-9) + 1
        return t0 + np.arange(max(n, 0)) * dt

    def cwnd_series(
        self,
        flow: int = 0,
        step: str | float = "1ms",
        t0: float | None = None,
        t1: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time_s, cwnd, ssthresh) of a TCP flow on a grid of ``step`` from t0 to t1 s.

        cwnd and ssthresh are in segments, NaN before the flow's first record; ssthresh
        is NaN while it is still infinite (before the first congestion event).
        """
        import numpy as np

        tr = self._trace("cwnd")
        flows = sorted({int(f["flow"]) for f in self.tcp} | {int(x) for x in np.unique(tr["flow"])})
        if isinstance(flow, bool) or not isinstance(flow, int | np.integer):
            raise TypeError(f"flow: expected a TCP flow id (an int), got {short(flow)}")
        if int(flow) not in flows:
            have = ", ".join(map(str, flows[:20])) + (", ..." if len(flows) > 20 else "")
            raise ValueError(
                f"flow: {short(flow)} is not a TCP flow of this trial; flows with a window:"
                f" {have or 'none'}"
            )
        sel = tr["flow"] == flow
        times = tr["time_s"][sel]
        grid = self._grid(step, t0, t1)
        cwnd = step_resample(times, tr["cwnd"][sel], grid)
        ssthresh = step_resample(times, tr["ssthresh"][sel], grid)
        ssthresh[ssthresh >= SSTHRESH_INFINITE] = np.nan
        return grid, cwnd, ssthresh

    def queue_series(
        self,
        direction: Literal["down", "up"] | int = "down",
        step: str | float = "1ms",
        t0: float | None = None,
        t1: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(time_s, bytes, packets) queued in one direction on a grid; empty at start."""
        import numpy as np

        if isinstance(direction, str) and direction in _DIRECTIONS:
            d = _DIRECTIONS[direction]
        elif (
            isinstance(direction, int | np.integer)
            and not isinstance(direction, bool)
            and int(direction) in _DIRECTIONS.values()
        ):
            d = int(direction)
        else:
            raise ValueError(f"direction: {short(direction)} is not one of down, up (or 0, 1)")
        tr = self._trace("queue")
        sel = tr["direction"] == d
        times = tr["time_s"][sel]
        grid = self._grid(step, t0, t1)
        return (
            grid,
            step_resample(times, tr["bytes"][sel], grid, before=0.0),
            step_resample(times, tr["packets"][sel], grid, before=0.0),
        )

    def cbr_packets(self, direction: Literal["down", "up"]) -> dict[str, np.ndarray]:
        """Per-packet CBR trace rows of the flows going ``direction`` (NaN delay = lost)."""
        import numpy as np

        flows = [c["flow"] for c in self.cbr if c["direction"] == direction]
        tr = self._trace("cbr")
        sel = np.isin(tr["flow"], flows)
        return {k: v[sel] for k, v in tr.items()}

    def to_json(self, traces: bool = False, indent: int | None = 2) -> str:
        """Summary (and the scenario, and optionally the traces) as strict JSON (NaN -> null)."""
        doc: dict[str, Any] = {"summary": self.summary}
        if self.scenario is not None:
            doc = {"scenario": self.scenario.model_dump(mode="json"), **doc}
        if traces:
            doc["traces"] = {
                name: {col: arr.tolist() for col, arr in cols.items()}
                for name, cols in self.traces.items()
            }
        from .schema import nan_to_none

        return json.dumps(nan_to_none(doc), indent=indent)

    def table(self) -> Table:
        """A rich table: goodput per TCP flow, loss and additional delay per CBR flow."""
        from .trial_tables import trials_table

        return trials_table([self])

    def __repr__(self) -> str:
        gp = ", ".join(fmt_bps(f["goodput_bps"]) for f in self.tcp) or "-"
        return f"<Result {self.duration_s:g} s, {len(self.tcp)} TCP ({gp}), {len(self.cbr)} CBR>"
