"""One batch of trials, on a worker (thread, process or Dask worker): the task and its
result (both must stay picklable), the core's run and the tables built from it, and the
code version each summary row carries."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store import columns_to_table
from ..store.arrays import array

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pyarrow as pa

    from ..experiment.points import Trial


#: The last columns of every summary table, in this order: the scenario, then the versions.
TRAILING_COLUMNS = ("scenario", "model_version", "code_version")


@dataclass(frozen=True)
class BatchTask:
    """Trials to run in one call of the core, and what each summary row carries."""

    jsons: list[str]  # native scenario JSON per trial (seed included)
    heads: list[tuple[str, str, int, int]]  # (key, point key, rep, seed) per trial
    point_columns: dict[str, dict[str, Any]]  # point key -> parameter columns
    point_scenarios: dict[str, str]  # point key -> the scenario (human units, no seed)
    traces: tuple[str, ...]
    code_version: str

    @classmethod
    def of(cls, trials: Sequence[Trial], traces: tuple[str, ...], code_version: str) -> BatchTask:
        """The task of running ``trials``, storing the trace tables ``traces``."""
        points = {t.point.key: t.point for t in trials}
        return cls(
            jsons=[t.native_json() for t in trials],
            heads=[(t.key, t.point.key, t.rep, t.seed) for t in trials],
            point_columns={k: p.columns() for k, p in points.items()},
            point_scenarios={k: p.stored_scenario for k, p in points.items()},
            traces=traces,
            code_version=code_version,
        )


@dataclass
class BatchResult:
    summary: pa.Table | None  # None when every trial failed
    traces: dict[str, pa.Table]
    failures: list[tuple[str, str]]  # (trial key, error)
    wall_s: float  # in the core, without the GIL
    native_version: str
    cpu_s: float = 0.0  # CPU time of the Python side of the batch, after the core's call
    handoff_s: float = 0.0  # the core's results made Python objects, the GIL waited for
    # When the worker began and ended the batch (time.perf_counter: CLOCK_MONOTONIC, the
    # same clock in every process of one machine) and which worker it was: the run's
    # idle time split into its start, the gaps between batches and its tail.
    began: float = 0.0
    ended: float = 0.0
    worker: str = ""


def summary_columns(summary: dict[str, Any]) -> dict[str, Any]:
    """A trial's summary (as the core returns it) as flat columns: ``events``,
    ``tcp0_goodput_bps``, ``cbr1_delay_p95_s``, ``queue_down_drops``... (NaN is None),
    named and checked by the declared schema (:mod:`collateral.schema`)."""
    from ..schema import flatten_summary

    return flatten_summary(summary)


def _trace_table(name: str, keys: list[str], traces: list[dict[str, Any]]) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    from ..schema import arrow_type, trace_columns

    # A trial that asked for no trace has none ({}): it adds no rows.
    per = [p for t in traces if (p := t.get(name))]
    declared = {c["name"]: c for c in trace_columns(name)}
    cols = list(per[0]) if per else list(declared)
    lengths = np.array([len(next(iter(t[name].values()))) if t.get(name) else 0 for t in traces])
    idx = np.repeat(np.arange(len(keys), dtype=np.int32), lengths.astype(np.int64))
    out = {"key": pa.DictionaryArray.from_arrays(array(idx), array(keys, pa.string()))}
    for c in cols:
        if c not in declared:
            raise ValueError(f"trace {name}: column {c!r} is not in the declared schema")
        typ = arrow_type(declared[c]["dtype"])
        out[c] = array(np.concatenate([p[c] for p in per]), typ) if per else array([], typ)
    return pa.table(out)


def run_batch(task: BatchTask) -> BatchResult:
    """Runs a batch in the core (one OS thread, no GIL) and builds its tables. The core
    returns the summaries as flat typed columns (numpy arrays and their null masks):
    Python only adds the trial's identity and parameters, column by column."""
    from .. import _native

    t0 = time.perf_counter()
    worker = f"{os.getpid()}/{threading.get_ident()}"
    out = _native.simulate_batch(task.jsons, list(task.traces))
    wall = out["core_s"]
    handoff = max(0.0, time.perf_counter() - t0 - wall)
    c0 = time.thread_time()  # the Python side: this thread's CPU time from here
    ok = [h for h, e in zip(task.heads, out["errors"], strict=True) if e is None]
    failures = [(h[0], e) for h, e in zip(task.heads, out["errors"], strict=True) if e is not None]

    def result(summary: pa.Table | None, traces: dict[str, pa.Table]) -> BatchResult:
        cpu = time.thread_time() - c0
        ended = time.perf_counter()
        return BatchResult(
            summary, traces, failures, wall, _native.version(), cpu, handoff, t0, ended, worker
        )

    if not ok:
        return result(None, {})
    import pyarrow as pa

    keys = [h[0] for h in ok]
    head = {"key": keys, "point": [h[1] for h in ok], "rep": [h[2] for h in ok]}
    head["seed"] = [h[3] for h in ok]
    # Parameter columns in first-seen order (points of other sweeps may lack some) and
    # the scenario: typed once per point, then taken for each of its trials.
    points = list(dict.fromkeys(h[1] for h in ok))
    names = dict.fromkeys(n for k in points for n in task.point_columns[k])
    per_point = {n: [task.point_columns[k].get(n) for k in points] for n in names}
    per_point["scenario"] = [task.point_scenarios[k] for k in points]
    at = {k: i for i, k in enumerate(points)}
    typed = columns_to_table(per_point)
    # Each trial takes its point's row, as Table.take would, without importing
    # pyarrow.compute for it (~60 ms of a run's first batch).
    rows = [at[h[1]] for h in ok]
    params = pa.table(
        {
            n: array([vals[i] for i in rows], typed.schema.field(n).type)
            for n, vals in zip(typed.column_names, typed.to_pydict().values(), strict=True)
        }
    )
    metrics = out["columns"]
    metrics["model_version"] = [_native.version()] * len(ok)
    metrics["code_version"] = [task.code_version] * len(ok)
    tables = (columns_to_table(head), params, columns_to_table(metrics, out["nulls"]))
    columns = {n: t[n] for t in tables for n in t.column_names}
    for name in TRAILING_COLUMNS:  # after the metrics
        columns[name] = columns.pop(name)
    summary = pa.table(columns)
    traces = {t: _trace_table(t, keys, out["traces"]) for t in task.traces}
    return result(summary, traces)


_CODE_VERSION: str | None = None


def code_version() -> str:
    """``collateral X (core Y)``, plus the git commit of the source tree when it is one
    (``+dirty`` when it has uncommitted changes)."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        from .. import __version__, native_version

        text = f"collateral {__version__} (core {native_version})"
        src = Path(__file__).resolve().parent.parent  # the package: collateral/
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            sha = subprocess.run(
                ["git", "-C", str(src), "rev-parse", "--short=12", "HEAD"],
                capture_output=True,
                text=True,
                timeout=5,
                check=True,
            ).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no", "."],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.strip()
            if sha:
                text += f" git {sha}{'+dirty' if dirty else ''}"
        _CODE_VERSION = text
    return _CODE_VERSION
