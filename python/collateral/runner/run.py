"""Running an experiment: its arguments checked, the store repaired and locked, the
missing trials of this shard run in batches sized to about ``batch_seconds`` and each
committed as one part; Ctrl-C or SIGTERM finishes the batches in flight."""

from __future__ import annotations

import math
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..experiment import Experiment, Trial
from ..store import Store
from .batch import TRAILING_COLUMNS, BatchResult, BatchTask, code_version
from .distributed import DaskExecutor, parse_scheduler
from .local import Executor, PoolExecutor, cpu_count
from .progress import Progress, RunReport
from .shard import in_shard

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import Console

EXECUTORS = ("threads", "processes")


#: A batch's target core time. Each batch becomes one Parquet part, whose writing costs
#: the coordinator a fixed ~10-20 ms whatever its rows: at 1 s the Python side was 2.5-3.2 %
#: of the core's time on the Fig. 6 sweep here, at 2 s 1.6-1.7 %; a kill loses at most
#: one batch in flight per worker.
DEFAULT_BATCH_SECONDS = 2.0
#: The shortest batch (core seconds) that the end of a run is cut into.
TAIL_SECONDS = 0.1


def check_batch_seconds(value: float) -> float:
    """``--batch-seconds``: a finite number of seconds > 0 (at most a day)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"batch_seconds (--batch-seconds): {value!r} is not a number") from None
    if not math.isfinite(v) or not 0 < v <= 86_400:
        raise ValueError(
            f"batch_seconds (--batch-seconds): {value!r}: must be a number of seconds"
            " above 0 and at most 86400"
        )
    return v


class _Stop:
    """SIGINT/SIGTERM: the first asks to stop after the batches in flight, the second
    raises KeyboardInterrupt. The same signal again within :data:`REPEAT_S` is the first
    delivered twice, not a second: ``timeout -s INT`` sends it to the command and to its
    process group, which the command is in."""

    REPEAT_S = 0.5

    def __init__(self, on_first: Callable[[str], None]) -> None:
        self.requested: str | None = None
        self._on_first = on_first
        self._old: dict[int, Any] = {}
        self._first: tuple[int, float] | None = None

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: object) -> None:
        if self.requested is not None:  # the first signal's name: the status says it
            first_sig, at = self._first or (0, 0.0)
            if signum == first_sig and time.monotonic() - at < self.REPEAT_S:
                return
            raise KeyboardInterrupt(self.requested)
        self._first = (signum, time.monotonic())
        self.requested = signal.Signals(signum).name
        self._on_first(self.requested)

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def run_experiment(
    experiment: Experiment,
    store: str | Path | Store,
    *,
    workers: int = 0,
    executor: str = "threads",
    scheduler: str | None = None,
    client: Any = None,
    shard: tuple[int, int] | None = None,
    batch_seconds: float = DEFAULT_BATCH_SECONDS,
    max_batch: int = 10_000,
    progress: bool | None = None,
    console: Console | None = None,
) -> RunReport:
    """Runs the trials of ``experiment`` that ``store`` lacks and stores them.

    ``workers``: threads or processes (0 = all cores; ignored with Dask).
    ``progress``: a rich progress bar (None = when stderr is a terminal; otherwise a
    line every 10 s). Returns a :class:`RunReport`; a second Ctrl-C raises
    KeyboardInterrupt after the finished batches are stored.
    """
    from rich.console import Console

    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    if scheduler is not None:
        parse_scheduler(scheduler)
    batch_seconds = check_batch_seconds(batch_seconds)
    if type(max_batch) is not int or max_batch < 1:
        raise ValueError(f"max_batch: {max_batch!r}: must be a whole number >= 1")
    if type(workers) is not int or workers < 0:
        raise ValueError(f"workers (-j): {workers!r}: must be a whole number >= 0")
    if shard is not None:
        ok = (
            isinstance(shard, tuple)
            and len(shard) == 2
            and all(type(x) is int for x in shard)
            and 0 <= shard[0] < shard[1]
        )
        if not ok:
            raise ValueError(f"shard (--shard): {shard!r}: expected (i, N) with 0 <= i < N")
    err = console or Console(stderr=True)

    def make_executor() -> Executor:
        if scheduler is not None or client is not None:
            return DaskExecutor(scheduler, client)
        return PoolExecutor(executor, workers or cpu_count())

    ex: Executor | None = None
    if not isinstance(store, Store) and not (Path(store) / "store.json").exists():
        ex = make_executor()  # a cluster that cannot be reached fails before any write
    abandon = False
    try:
        st = (
            store
            if isinstance(store, Store)
            else Store.create(store, experiment.name, experiment.text)
        )
        st.lock(shard)
        try:
            st.clean_tmp()
            st.repair()
            trials = experiment.trials()
            st.write_points(experiment.point_rows(), experiment.sweep_axes())
            mine = [t for t in trials if in_shard(t.key, shard)]
            done = st.done_keys(refresh=True)
            todo = [t for t in mine if t.key not in done]
            ours = {t.key for t in trials}
            report = RunReport(
                store=st.path,
                executor=executor,
                workers=0,
                total=len(trials),
                in_shard=len(mine),
                already=len(mine) - len(todo),
                ran=0,
                elsewhere=sum(k not in ours for k in done),
                trials_per_point=experiment.trials_per_point,
            )
            if report.elsewhere:  # a trial of a point still in the file: a rep beyond trials
                report.extra_reps = st.beyond_trials(
                    {k for k in done if k not in ours},
                    {p.key for p in experiment.points},
                    experiment.trials_per_point,
                )
            report.stale_tags, report.stale_example = _stale_tags(
                st, experiment, {t.point.key for t in trials if t.key in done}
            )
            if todo:
                ex = ex or make_executor()
                _run(experiment, st, todo, report, ex, batch_seconds, max_batch, progress, err)
            st.write_views_sql()
            return report
        finally:
            st.unlock()
    except KeyboardInterrupt:
        abandon = True
        raise
    finally:
        if ex is not None:
            ex.close(wait=not abandon)


def _store(
    st: Store,
    finished: list[tuple[list[Trial], BatchResult]],
    max_batch: int,
    report: RunReport,
    spans: dict[str, list[float]],
    bar: Progress,
) -> None:
    """Stores finished batches and counts them in the report and the progress bar."""
    for dropped in _commit(st, [r for _, r in finished], max_batch):
        report.meanwhile += dropped
        report.ran -= dropped
    for batch, res in finished:
        report.ran += len(batch) - len(res.failures)
        report.failed += res.failures
        report.busy_s += res.wall_s
        report.handoff_s += res.handoff_s
        report.cpu_s += res.cpu_s
        report.batches += 1
        span = spans.setdefault(res.worker, [res.began, res.ended])
        span[0], span[1] = min(span[0], res.began), max(span[1], res.ended)
        bar.advance(len(batch) - len(res.failures), len(res.failures))


def _commit(st: Store, results: list[BatchResult], max_rows: int) -> list[int]:
    """Stores the batches that finished together in as few Parquet parts as hold them
    (``max_rows`` trials at most a part): a part costs this thread a fixed ~10-20 ms
    whatever its rows, and many cores finish many batches at once. Batches whose tables
    do not concatenate (a column typed differently) go in parts of their own. Returns
    the rows each part left out (stored meanwhile by another writer)."""
    groups: list[list[BatchResult]] = []
    rows = 0  # in the last group
    for r in results:
        if r.summary is None:
            continue
        n = r.summary.num_rows
        if groups and rows + n <= max_rows:
            groups[-1].append(r)
            rows += n
        else:
            groups.append([r])
            rows = n
    out = []
    for g in groups:
        merged = _merged(g) if len(g) > 1 else (g[0].summary, g[0].traces)
        if merged is None:
            out += [st.commit_part(r.summary, r.traces)[1] for r in g]
        else:
            out.append(st.commit_part(*merged)[1])
    return out


def _merged(results: list[BatchResult]) -> tuple[pa.Table, dict[str, pa.Table]] | None:
    """The batches' summary and trace tables as one of each (None when a column is typed
    differently in two of them)."""
    import pyarrow as pa

    try:
        summary = pa.concat_tables([r.summary for r in results], promote_options="default")
        names = dict.fromkeys(n for r in results for n in r.traces)
        traces = {
            n: pa.concat_tables(
                [r.traces[n] for r in results if n in r.traces], promote_options="default"
            )
            for n in names
        }
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    # A column only later batches have comes after the trailing ones: put those last again.
    order = [n for n in summary.column_names if n not in TRAILING_COLUMNS]
    return summary.select(
        order + [n for n in TRAILING_COLUMNS if n in summary.column_names]
    ), traces


def _run(
    experiment: Experiment,
    st: Store,
    todo: list[Trial],
    report: RunReport,
    ex: Executor,
    batch_seconds: float,
    max_batch: int,
    progress: bool | None,
    err: Console,
) -> None:
    report.executor, report.workers = ex.name, ex.workers
    cv = code_version()
    # A pseudo-random order (by key) mixes cheap and costly points: a steady rate, a
    # truthful ETA, balanced batches.
    pending = deque(sorted(todo, key=lambda t: t.key))
    inflight: dict[Any, list[Trial]] = {}
    per_trial: float | None = None  # measured core seconds per trial
    show = err.is_terminal if progress is None else progress
    if progress and not err.is_terminal:  # asked for explicitly: draw it anyway
        from rich.console import Console

        err = Console(stderr=True, force_terminal=True)
    bar = Progress(err, len(todo), report.already, show)
    spans: dict[str, list[float]] = {}  # worker -> [first batch began, last ended]
    t0 = time.perf_counter()
    c0 = time.thread_time()

    def on_stop(name: str) -> None:
        bar.note(
            f"{name}: finishing the {len(inflight)} batches in flight"
            " (again to abandon them); finished trials are kept"
        )

    def batch_size() -> int:
        if per_trial is None:
            return 1
        each = max(per_trial, 1e-6)
        n = math.ceil(batch_seconds / each)
        # Near the end, smaller batches so that the workers end together: at most half a
        # worker's share of what is left (each worker has two batches queued), but no
        # shorter than TAIL_SECONDS (a batch is one Parquet part to write).
        tail = max(math.ceil(len(pending) / (2 * ex.workers)), math.ceil(TAIL_SECONDS / each))
        return max(1, min(n, tail, max_batch))

    def submit() -> None:
        n = batch_size()
        batch = [pending.popleft() for _ in range(min(n, len(pending)))]
        inflight[ex.submit(BatchTask.of(batch, experiment.traces, cv))] = batch

    def collect(done: Iterable[Any]) -> tuple[list[tuple[list[Trial], BatchResult]], Any]:
        """The results of ``done`` futures, in order, up to the first from a worker that
        runs another core (returned second; None when none)."""
        nonlocal per_trial
        finished = []
        for fut in done:
            batch = inflight.pop(fut)
            try:
                res: BatchResult = fut.result()
            except Exception as e:  # a worker died: the batch is not stored
                report.failed += [(t.key, f"{type(e).__name__}: {e}") for t in batch]
                bar.advance(0, len(batch))
                continue
            if res.native_version != experiment.model_version:
                return finished, res
            m = (res.wall_s + res.handoff_s) / len(batch)
            per_trial = m if per_trial is None else 0.7 * per_trial + 0.3 * m
            finished.append((batch, res))
        return finished, None

    try:
        with _Stop(on_stop) as stop, bar:

            def fill() -> None:
                # Two batches a worker once their length is known, so that none waits
                # while this thread stores a finished batch.
                limit = ex.workers * (2 if per_trial is not None else 1)
                try:
                    while stop.requested is None and pending and len(inflight) < limit:
                        submit()
                except BaseException:
                    # A broken pool, a lost scheduler: store what has finished first.
                    _store(
                        st,
                        collect([f for f in inflight if f.done()])[0],
                        max_batch,
                        report,
                        spans,
                        bar,
                    )
                    raise

            while pending or inflight:
                fill()
                if stop.requested is not None:
                    for fut in [f for f in inflight if ex.cancel(f)]:
                        pending.extendleft(inflight.pop(fut))
                    if not inflight:
                        break
                finished, foreign = collect(ex.wait(inflight, timeout=0.2))
                try:
                    if finished and foreign is None:
                        fill()  # before the write below: the workers go on meanwhile
                finally:  # finished batches are stored whatever a submit raised
                    _store(st, finished, max_batch, report, spans, bar)
                if foreign is not None:
                    raise RuntimeError(
                        f"a worker runs core {foreign.native_version}, this process"
                        f" {experiment.model_version}: install the same collateral everywhere"
                    )
            report.interrupted = stop.requested is not None and bool(pending)
            report.signal = stop.requested if report.interrupted else None
    except KeyboardInterrupt as e:
        report.interrupted = True
        report.signal = str(e.args[0]) if e.args else "SIGINT"
        raise
    finally:
        t1 = time.perf_counter()
        report.wall_s = t1 - t0
        report.cpu_s += time.thread_time() - c0
        if isinstance(ex, PoolExecutor):
            # A worker that never ran a batch was idle from the start.
            idle = max(0, ex.workers - len(spans)) * report.wall_s
            report.idle_start_s = idle + sum(max(0.0, b - t0) for b, _ in spans.values())
            report.idle_tail_s = sum(max(0.0, t1 - e) for _, e in spans.values())


def _stale_tags(st: Store, experiment: Experiment, stored: set[str]) -> tuple[int, str]:
    """How many of the ``stored`` points (keys) carry tags other than the file's, with
    one example: tags label a point without being part of it, so editing them in the
    file changes no key, and the stored rows keep the old labels."""
    rows = {r["point"]: r for r in experiment.point_rows() if r["point"] in stored}
    tags = sorted({k for r in rows.values() for k in r if k.startswith("tag_")})
    if not rows or not tags:
        return 0, ""
    import duckdb

    cols = ", ".join(f'"{t}"' for t in tags)
    try:
        got = st.query(f"SELECT DISTINCT point, {cols} FROM summary", output="arrow")
    except duckdb.Error:  # a tag the stored rows do not have: every one is new
        return 0, ""
    stale: dict[str, str] = {}
    for rec in got.to_pylist():
        want = rows.get(rec["point"])
        for t in tags if want is not None else ():
            if str(rec.get(t)) != str(want.get(t)) and rec["point"] not in stale:
                stale[rec["point"]] = f"{t} {rec.get(t)!r} stored, {want.get(t)!r} in the file"
    first = next((k for k in rows if k in stale), None)  # in the file's order
    return len(stale), stale[first] if first is not None else ""
