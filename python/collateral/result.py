"""The result of one trial: summary numbers, traces as numpy arrays, resampled series.

The core records cwnd and queue occupancy on every change (like SIFTR); analyses and
plots often want a fixed grid (like Web100's 1 ms polling), which
:meth:`Result.cwnd_series` and :meth:`Result.queue_series` produce without loss of
information at the grid points: the value at ``t`` is the last change at or before ``t``.
"""

from __future__ import annotations

import json
import math
import statistics
from typing import TYPE_CHECKING, Any, Literal

from .display import short
from .units import parse_duration

if TYPE_CHECKING:  # numpy loads with the first trace asked for, not the summary
    import numpy as np
    from rich.table import Table

    from .spec import Scenario

__all__ = ["Result", "compare_table", "step_resample", "trials_table"]

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
        return trials_table([self])

    def __repr__(self) -> str:
        gp = ", ".join(_bps(f["goodput_bps"]) for f in self.tcp) or "-"
        return f"<Result {self.duration_s:g} s, {len(self.tcp)} TCP ({gp}), {len(self.cbr)} CBR>"


def _bps(x: float) -> str:
    for scale, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if x >= scale:
            return f"{x / scale:.4g} {unit}"
    return f"{x:.0f} bit/s"


#: Games' one-way delay budgets (SPEC §6): the summary column of the share of packets
#: over it, and its label. Other applications are rated by the E-model MOS.
GAME_BUDGETS: dict[str, tuple[str, str]] = {
    "quake3": ("over_100ms", "100 ms"),
    "wow": ("over_500ms", "500 ms"),
}


def _share(x: float | None, budget: str) -> str:
    return "-" if x is None or math.isnan(x) else f"{100 * x:.1f} % >{budget}"


def _mos(m: float | None) -> str:
    return "-" if m is None or math.isnan(m) else f"{m:.2f}"


def _ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{1000 * seconds:.1f} ms"


def _cell(values: list[float], fmt: Any) -> str:
    """One trial's value, or the median of several over their range (min–max) on a
    second line; NaN (no packet, no flow) is left out, and all-NaN shows as "-"."""
    v = [x for x in values if x is not None and not math.isnan(x)]
    if not v:
        return "-"
    if len(values) == 1:
        return fmt(v[0])
    mid, lo, hi = (fmt(x) for x in (statistics.median(v), min(v), max(v)))
    unit = mid.partition(" ")[2]
    if unit and lo.partition(" ")[2] == unit == hi.partition(" ")[2]:  # "3.74–6.87 Mbit/s"
        return f"{mid}\n[dim]{lo.partition(' ')[0]}–{hi}[/dim]"
    return f"{mid}\n[dim]{lo}–{hi}[/dim]"


def _counts(parts: list[tuple[list[float], str]]) -> str:
    """Event counts ("52 rtx 0 RTO"): of one trial, or medians with their ranges below."""
    tops = [f"{statistics.median(v):g} {unit}" for v, unit in parts]
    if len(parts[0][0]) == 1:
        return " ".join(tops)
    ranges = ", ".join(f"{min(v):.0f}–{max(v):.0f}" for v, _ in parts)
    return " ".join(tops) + f"\n[dim]{ranges}[/dim]"


def trials_table(results: list[Result]) -> Table:
    """A rich table of one trial, or of several trials of one set-up (seeds differ):
    each cell then holds the median over the trials and, below it, their range.

    Rows: goodput per TCP flow (and each direction's total when it has several flows),
    web response times, loss and additional delay per CBR flow with its quality (MOS for
    voice, the share of packets over the budget for games).
    """
    from rich import box
    from rich.table import Table

    first = results[0]
    n = len(results)
    sc = first.scenario
    games = any(c.app in GAME_BUDGETS for c in (sc.cbr if sc else []))
    voice = any(c.app not in GAME_BUDGETS for c in (sc.cbr if sc else [])) or (
        sc is None and bool(first.cbr)
    )
    title = sc.describe() if sc else "collateral trial"
    if n > 1:
        seeds = sorted(r.scenario.seed for r in results if r.scenario is not None)
        title = title.replace(f"seed {sc.seed}", f"{n} trials, seeds {seeds[0]}–{seeds[-1]}")
    if len(title) > 70:  # keep the table as narrow as its columns
        mid = title.index(" · RTT ") + 3
        title = title[:mid].rstrip(" ·") + "\n" + title[mid:]
    t = Table(
        title=title,
        caption=f"after {first.warmup_s:g} s warm-up, of {first.duration_s:g} s;"
        + (f" median of {n} trials, \\[min–max] below;\n" if n > 1 else " ")
        + "p50/p95/max of CBR one-way delay minus base"
        + (" (web: object response times)" if first.summary.get("web") else "")
        + (
            ";\nMOS: ITU-T G.107 E-model, G.711 with concealment, mean one-way delay and loss"
            if voice
            else ""
        )
        + (
            ";\ngames (quality): share of packets whose one-way delay (base included) is over"
            " the genre's budget, lost ones included"
            if games
            else ""
        )
        + (_VIDEO_CAPTION if first.summary.get("media") else ""),
        box=box.SIMPLE_HEAD,  # narrow enough for an 80-column terminal
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    t.add_column("traffic", no_wrap=True)
    for col in ("goodput", "loss", "p50", "p95", "max", "quality" if games else "MOS"):
        t.add_column(col, justify="right", no_wrap=True)

    def each(get: Any) -> list[float]:
        return [float(get(r)) for r in results]

    for i, f in enumerate(first.tcp):
        parts = [(each(lambda r, i=i: r.tcp[i]["retransmits"]), "rtx")]
        if f.get("timeouts") is not None:
            parts.append((each(lambda r, i=i: r.tcp[i]["timeouts"]), "RTO"))
        if any(r.tcp[i].get("ce_received") for r in results):
            parts.append((each(lambda r, i=i: r.tcp[i]["ecn_reductions"]), "ECN"))
        t.add_row(
            f"{f['flow']} TCP {f['cc']} {f['direction']}",
            _cell(each(lambda r, i=i: r.tcp[i]["goodput_bps"]), _bps),
            _counts(parts),
            "",
            "",
            "",
            "",
        )
    for d in ("down", "up"):
        if sum(1 for f in first.tcp if f["direction"] == d) > 1:
            t.add_row(
                f"TCP total {d}",
                _cell(each(lambda r, d=d: r.summary[f"{d}_goodput_bps"]), _bps),
                *[""] * 5,
            )
    measured = first.duration_s - first.warmup_s
    for j, w in enumerate(first.summary.get("web", [])):
        t.add_row(
            f"web {w['users']} users",
            _cell(each(lambda r, j=j: r.summary["web"][j]["reply_bytes"] * 8 / measured), _bps)
            if measured > 0
            else "-",
            _counts([(each(lambda r, j=j: r.summary["web"][j]["objects_completed"]), "objects")]),
            _cell(each(lambda r, j=j: _nan(r.summary["web"][j]["response_median_s"])), _ms),
            _cell(each(lambda r, j=j: _nan(r.summary["web"][j]["response_p95_s"])), _ms),
            "",
            "",
        )
    for k, m in enumerate(first.summary.get("media", [])):
        t.add_row(f"video {m['cc']} {m['direction']}", *_media_cells(results, k))
    apps = [c.app for c in sc.cbr] if sc else []
    for j in range(len(first.cbr)):
        app = apps[j] if j < len(apps) else None
        t.add_row(_cbr_label(first, apps, j), "", *_cbr_cells(results, j, app))
    return t


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def _cbr_label(r: Result, apps: list[str | None], j: int) -> str:
    """A real-time flow's row: its application (or CBR) and direction, numbered among
    the flows of the same kind only when there are several (not by its flow id, which
    counts the web users' slots too)."""

    sc = r.scenario
    workload = sc.workload if sc is not None else None

    def name(k: int) -> str:
        app = apps[k] if k < len(apps) else None
        probe = workload.probe_label(sc.cbr, k) if workload is not None else None
        kind = probe or app or "CBR"
        return f"{kind} {r.cbr[k]['direction']}"

    same = [k for k in range(len(r.cbr)) if name(k) == name(j)]
    return name(j) + (f" #{same.index(j) + 1}" if len(same) > 1 else "")


def _media_cells(results: list[Result], k: int) -> list[str]:
    """The video call ``k``'s cells: received rate, loss, frame delay p50/p95/p99, and the
    share of frames late with its share of the direction below."""

    def each(key: str) -> list[float]:
        return [_nan(r.summary["media"][k][key]) for r in results]

    late = _cell(each("frames_late"), lambda x: f"{100 * x:.1f} % late")
    share = _cell(each("rate_share"), lambda x: f"{100 * x:.0f} % share")
    return [
        _cell(each("received_bps"), _bps),
        _cell(each("loss_rate"), lambda x: f"{100 * x:.2f} %"),
        *(_cell(each(f"frame_delay_{p}_s"), _ms) for p in ("p50", "p95", "p99")),
        f"{late}\n{share}",
    ]


def _cbr_cells(results: list[Result], j: int, app: str | None) -> list[str]:
    """CBR flow ``j``'s loss, p50, p95, max and quality cells over ``results``: a game's
    quality is its share of packets over the genre's budget (lost ones included), a
    voice flow's the E-model MOS."""

    def each(get: Any) -> list[float]:
        return [float(get(r)) for r in results]

    budget = GAME_BUDGETS.get(app or "")
    if budget:
        quality = _cell(
            each(lambda r: _nan(r.cbr[j].get(budget[0]))), lambda x: _share(x, budget[1])
        )
    else:
        quality = _cell(each(lambda r: _nan(r.cbr[j].get("mos"))), _mos)
    return [
        _cell(each(lambda r: r.cbr[j]["loss_rate"]), lambda x: f"{100 * x:.2f} %"),
        *(
            _cell(each(lambda r, k=k: _nan(r.cbr[j][k])), _ms)
            for k in ("delay_median_s", "delay_p95_s", "delay_max_s")
        ),
        quality,
    ]


#: What a video call's row holds, in a table's caption.
_VIDEO_CAPTION = (
    ";\nvideo: received rate, frame delay (capture to last packet) p50/p95/p99,"
    " frames later than the playout deadline (lost included), share beside TCP"
)


def compare_table(groups: list[tuple[str, list[Result]]]) -> Table:
    """Set-ups side by side (``--versus``: another queue, or any other option): for each
    (label, its trials), the TCP goodput of each direction and every real-time flow's
    loss, delay and quality, as the median over the trials with the range below (one
    trial: the values). Each group's rows are its own scenario's flows; the title keeps
    what every group shares."""
    from rich import box
    from rich.table import Table

    first = groups[0][1][0]
    sc = first.scenario
    n = len(groups[0][1])
    apps_of = [[c.app for c in r[0].scenario.cbr] if r[0].scenario else [] for _, r in groups]
    every_app = [a for apps in apps_of for a in apps]
    games = any(a in GAME_BUDGETS for a in every_app)
    video = any(r[0].summary.get("media") for _, r in groups)
    titles = [r[0].scenario.describe().split(" · ") if r[0].scenario else [] for _, r in groups]
    # The queue is what differs unless told otherwise: the rows name it, and what else
    # differs between the groups (a link, a call) is left out of the title as well.
    shared = [p for p in titles[0] if not p.startswith("queue ") and all(p in t for t in titles)]
    title = " · ".join(shared) if sc else "collateral trials"
    if n > 1 and sc:
        title = title.replace(
            f"seed {sc.seed}", f"{n} trials each, seeds {sc.seed}–{sc.seed + n - 1}"
        )
    t = Table(
        title=title,
        caption=f"after {first.warmup_s:g} s warm-up, of {first.duration_s:g} s;"
        + (f" median of {n} trials, \\[min–max] below;" if n > 1 else "")
        + "\ngoodput: all TCP flows of the direction; p50/p95/max: CBR one-way delay minus base"
        + (
            ";\ngames (quality): share of packets over the budget, base delay included"
            if games
            else ""
        )
        + (
            ";\nMOS: ITU-T G.107 E-model, G.711"
            if any(a not in GAME_BUDGETS for a in every_app)
            else ""
        )
        + (_VIDEO_CAPTION if video else ""),
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    t.add_column("queue", no_wrap=True)
    t.add_column("traffic", no_wrap=True)
    quality = "quality" if games else "MOS"
    for col in ("goodput", "loss", "p50", "p95", "max / p99" if video else "max"):
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column(f"{quality} / late" if video else quality, justify="right", no_wrap=True)
    for g, (label, results) in enumerate(groups):
        own = results[0]  # this group's scenario: its flows, applications and calls
        apps = apps_of[g]

        def each(get: Any, results: list[Result] = results) -> list[float]:
            return [float(get(r)) for r in results]

        rows = []
        for d in ("down", "up"):
            if any(f["direction"] == d for f in own.tcp):
                rows.append(
                    (f"TCP {d}", _cell(each(lambda r, d=d: r.summary[f"{d}_goodput_bps"]), _bps))
                    + ("",) * 5
                )
        for j in range(len(own.cbr)):
            app = apps[j] if j < len(apps) else None
            rows.append((_cbr_label(own, apps, j), "", *_cbr_cells(results, j, app)))
        for k, m in enumerate(own.summary.get("media", [])):
            rows.append((f"video {m['cc']} {m['direction']}", *_media_cells(results, k)))
        for k, row in enumerate(rows):
            t.add_row(
                label if k == 0 else "",
                *row,
                end_section=k == len(rows) - 1 and g < len(groups) - 1,
            )
        if not rows:
            t.add_row(label, "(no flows)", *[""] * 6, end_section=g < len(groups) - 1)
    return t
