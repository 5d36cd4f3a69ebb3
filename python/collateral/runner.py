"""Runs an experiment's missing trials: local threads or processes, Dask, shards.

:func:`run_experiment` expands the experiment, drops the trials already in the store
(sem's ``run_missing_simulations``), keeps only this shard's trials (``shard=(i, N)``:
those whose key hashes to ``i`` mod ``N``), and runs the rest in *batches*: each batch is
one call of the core's ``simulate_many`` on one worker, without the GIL, sized from the
measured cost per trial so that it lasts about ``batch_seconds`` (1 s). Each finished
batch is written to the store as one atomic part before its trials count as done, so a
crash or SIGKILL loses only the batches in flight, and a rerun runs exactly those.

Executors (all give the same results: every trial is deterministic given its seed):

- ``threads`` (default): a thread per core, each running batches in the core without the
  GIL; the Python side (JSON, Arrow) is a few per cent of the work.
- ``processes``: a process per core; no GIL at all, at the cost of pickling results.
- Dask: ``scheduler="tcp://host:port"`` (a running ``dask scheduler``), ``"local"`` or
  ``"local:N"`` (a LocalCluster of N worker processes), or ``client=`` an existing
  ``distributed.Client`` (e.g. on a dask-jobqueue ``SLURMCluster``). Results come back to
  this process, which alone writes the store.

Ctrl-C (or SIGTERM, as Slurm sends at the time limit) stops submitting, lets the batches
in flight finish (about a second) and writes them; a second Ctrl-C abandons them.

Before counting what is stored, a run repairs the store (:meth:`Store.repair`): damaged
parts go to ``quarantine/`` with one line each, and their trials are run again. A part
is committed only with trials no part holds yet (:meth:`Store.commit_part`), so a trial
stored meanwhile by another writer is counted as stored, never twice.

Arguments are checked before anything is built or written: ``scheduler``
(:func:`parse_scheduler`), ``batch_seconds``, ``max_batch``, ``workers``, ``shard``
(ValueError naming the option).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .experiment import Experiment, Trial
from .store import Store, columns_to_table, pid_alive

if TYPE_CHECKING:
    import pyarrow as pa
    from rich.console import Console

__all__ = [
    "BatchResult",
    "BatchTask",
    "RunReport",
    "code_version",
    "parse_scheduler",
    "parse_shard",
    "run_batch",
    "run_experiment",
    "summary_columns",
]

EXECUTORS = ("threads", "processes")


# ---------------------------------------------------------------------------------------
# One batch, on a worker (thread, process or Dask worker): must stay picklable.


@dataclass(frozen=True)
class BatchTask:
    """Trials to run in one call of the core, and what each summary row carries."""

    jsons: list[str]  # native scenario JSON per trial (seed included)
    heads: list[tuple[str, str, int, int]]  # (key, point key, rep, seed) per trial
    point_columns: dict[str, dict[str, Any]]  # point key -> parameter columns
    point_scenarios: dict[str, str]  # point key -> the scenario (human units, no seed)
    traces: tuple[str, ...]
    code_version: str


@dataclass
class BatchResult:
    summary: pa.Table | None  # None when every trial failed
    traces: dict[str, pa.Table]
    failures: list[tuple[str, str]]  # (trial key, error)
    wall_s: float  # in the core
    native_version: str
    cpu_s: float = 0.0  # CPU time of the Python side of the batch (the core runs on its own)


def summary_columns(summary: dict[str, Any]) -> dict[str, Any]:
    """A trial's summary (as the core returns it) as flat columns: ``events``,
    ``tcp0_goodput_bps``, ``cbr1_delay_p95_s``, ``queue_down_drops``... (NaN is None),
    named and checked by the declared schema (:mod:`collateral.schema`)."""
    from .schema import flatten_summary

    return flatten_summary(summary)


def _trace_table(name: str, keys: list[str], traces: list[dict[str, Any]]) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    from .schema import arrow_type, trace_columns

    per = [t.get(name, {}) for t in traces]
    cols = list(per[0]) if per else []
    lengths = np.array([len(next(iter(p.values()))) if p else 0 for p in per], dtype=np.int64)
    idx = np.repeat(np.arange(len(keys), dtype=np.int32), lengths)
    out = {"key": pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(keys, pa.string()))}
    declared = {c["name"]: c for c in trace_columns(name)}
    for c in cols:
        if c not in declared:
            raise ValueError(f"trace {name}: column {c!r} is not in the declared schema")
        typ = arrow_type(declared[c]["dtype"])
        out[c] = pa.array(np.concatenate([p[c] for p in per]), type=typ)
    return pa.table(out)


def run_batch(task: BatchTask) -> BatchResult:
    """Runs a batch in the core (one OS thread, no GIL) and builds its tables. The core
    returns the summaries as flat columns: Python only adds the trial's identity and
    parameters, column by column."""
    from . import _native
    from .schema import phases_as_text

    c0 = time.thread_time()
    t0 = time.perf_counter()
    out = _native.simulate_batch(task.jsons)
    wall = time.perf_counter() - t0
    ok = [h for h, e in zip(task.heads, out["errors"], strict=True) if e is None]
    failures = [(h[0], e) for h, e in zip(task.heads, out["errors"], strict=True) if e is not None]
    if not ok:
        return BatchResult(None, {}, failures, wall, _native.version(), _py_cpu(c0, wall))
    keys = [h[0] for h in ok]
    cols: dict[str, list[Any]] = {
        "key": keys,
        "point": [h[1] for h in ok],
        "rep": [h[2] for h in ok],
        "seed": [h[3] for h in ok],
    }
    # Parameter columns in first-seen order (points of other sweeps may lack some).
    per_trial = [task.point_columns[h[1]] for h in ok]
    points = dict.fromkeys(h[1] for h in ok)
    names = dict.fromkeys(n for k in points for n in task.point_columns[k])
    cols.update({n: [p.get(n) for p in per_trial] for n in names})
    metrics = out["columns"]
    if "phases" in metrics:
        metrics["phases"] = [phases_as_text(v) for v in metrics["phases"]]
    cols.update(metrics)
    cols["scenario"] = [task.point_scenarios[h[1]] for h in ok]
    cols["model_version"] = [_native.version()] * len(ok)
    cols["code_version"] = [task.code_version] * len(ok)
    summary = columns_to_table(cols)
    traces = {t: _trace_table(t, keys, out["traces"]) for t in task.traces}
    return BatchResult(summary, traces, failures, wall, _native.version(), _py_cpu(c0, wall))


def _py_cpu(c0: float, core_wall: float) -> float:
    """This thread's CPU time since ``c0`` less the core's run on it (which holds no
    lock and waits for nothing, so its wall time is its CPU time): the Python side."""
    return max(0.0, time.thread_time() - c0 - core_wall)


# ---------------------------------------------------------------------------------------
# Executors: submit a task, wait for any to finish.


class _Executor:
    name = "?"
    workers = 1

    def submit(self, task: BatchTask) -> Any:
        raise NotImplementedError

    def wait(self, futures: Iterable[Any], timeout: float) -> set[Any]:
        done, _ = futures_wait(list(futures), timeout=timeout, return_when=FIRST_COMPLETED)
        return set(done)

    def cancel(self, fut: Any) -> bool:
        return bool(fut.cancel())

    def close(self, wait: bool = True) -> None:
        pass


class _PoolExecutor(_Executor):
    def __init__(self, kind: str, workers: int) -> None:
        self.name = kind
        self.workers = workers
        if kind == "threads":
            from concurrent.futures import ThreadPoolExecutor

            self.pool: Any = ThreadPoolExecutor(workers, thread_name_prefix="collateral")
        else:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["collateral.runner"])
            self.pool = ProcessPoolExecutor(
                workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(),)
            )

    def submit(self, task: BatchTask) -> Future[BatchResult]:
        return self.pool.submit(run_batch, task)

    def close(self, wait: bool = True) -> None:
        self.pool.shutdown(wait=wait, cancel_futures=True)


def _worker_init(main_pid: int | None = None) -> None:
    # The parent handles Ctrl-C; a worker must finish its batch, not die mid-way.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if main_pid is not None:  # but it dies with the run (SIGKILL, OOM killer...)
        threading.Thread(
            target=_exit_with, args=(main_pid,), daemon=True, name="collateral-watch"
        ).start()


def _exit_with(pid: int) -> None:
    """Ends this worker process when process ``pid`` (the run) ends: a worker's parent
    is the forkserver, which outlives a killed run as long as its workers do."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (or already gone): poll
        while pid_alive(pid):
            time.sleep(0.5)
    else:
        select.select([fd], [], [])  # readable when the process has ended
    os._exit(1)


class _DaskExecutor(_Executor):
    name = "dask"

    def __init__(self, scheduler: str | None = None, client: Any = None) -> None:
        try:
            import distributed
        except ImportError:
            raise RuntimeError("Dask is not installed: pip install 'collateral[dask]'") from None
        self._distributed = distributed
        self._own: list[Any] = []
        if client is None:
            kind, n = parse_scheduler(scheduler or "local")
            if kind == "local":
                n = int(n) or _cpu_count()
                cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._own.append(cluster)
                client = distributed.Client(cluster)
            else:
                client = distributed.Client(scheduler)  # distributed.comm.timeouts.connect
            self._own.insert(0, client)
        self.client = client
        self.name = f"dask ({client.scheduler.address})"
        self.workers = max(1, sum(client.nthreads().values()))

    def submit(self, task: BatchTask) -> Any:
        return self.client.submit(run_batch, task, pure=False)

    def wait(self, futures: Iterable[Any], timeout: float) -> set[Any]:
        fs = list(futures)
        try:
            done, _ = self._distributed.wait(fs, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        return set(done)

    def cancel(self, fut: Any) -> bool:
        if fut.status == "pending":
            fut.cancel()
            return True
        return False

    def close(self, wait: bool = True) -> None:
        for obj in self._own:
            with contextlib.suppress(Exception):
                obj.close()


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------------------


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/N"`` (0 <= i < N) -> (i, N)."""
    i_text, sep, n_text = text.partition("/")
    try:
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"{text!r}: expected i/N, e.g. 0/4 (shards are numbered from 0)") from None
    if not sep or n < 1 or not 0 <= i < n:
        raise ValueError(f"{text!r}: expected i/N with 0 <= i < N, e.g. 0/4 ... 3/4")
    return i, n


#: Address schemes a Dask scheduler may be reached by.
DASK_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def max_local_workers() -> int:
    """The most workers of a ``local:N`` cluster: 4 per core (at least 8)."""
    return max(8, 4 * _cpu_count())


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``--scheduler``: ``"local"`` or ``"local:0"`` -> ("local", 0) (a worker per core),
    ``"local:N"`` -> ("local", N), ``"tcp://host:port"`` (or ``host:port``, tls://, ucx://, ws://,
    wss://, inproc://) -> ("address", text). ValueError, naming --scheduler, otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"--scheduler: {text!r}: expected a string")
    shown = repr(text) if len(text) <= 80 else repr(text[:77] + "...")
    usage = "expected local, local:N or a scheduler address such as tcp://host:8786"
    if text == "local" or text.startswith("local:"):
        if text == "local":
            return "local", 0
        n_text = text.partition(":")[2]
        limit = max_local_workers()
        if not (n_text.isascii() and n_text.isdigit()) or len(n_text) > 6:
            raise ValueError(
                f"--scheduler: {shown}: N of local:N must be a whole number 0..{limit}"
            )
        n = int(n_text)
        if n > limit:
            raise ValueError(
                f"--scheduler: {shown}: N of local:N must be 0 (a worker per core) to"
                f" {limit} (4 per core), not {n}"
            )
        return "local", n
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in DASK_SCHEMES:
        raise ValueError(
            f"--scheduler: {shown}: unknown scheme {scheme!r} ({', '.join(DASK_SCHEMES)}); {usage}"
        )
    if scheme == "inproc":
        if not rest:
            raise ValueError(f"--scheduler: {shown}: {usage}")
        return "address", text
    host, colon, port_text = rest.rpartition(":")
    if not text.strip() or any(c.isspace() for c in text) or not colon or not host:
        raise ValueError(f"--scheduler: {shown}: {usage}")
    if not (port_text.isascii() and port_text.isdigit()) or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"--scheduler: {shown}: the port must be 1..65535; {usage}")
    return "address", text


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


def in_shard(key: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or int(key[:12], 16) % shard[1] == shard[0]


_CODE_VERSION: str | None = None


def code_version() -> str:
    """``collateral X (core Y)``, plus the git commit of the source tree when it is one
    (``+dirty`` when it has uncommitted changes)."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        from . import __version__, native_version

        text = f"collateral {__version__} (core {native_version})"
        src = Path(__file__).resolve().parent
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


@dataclass
class RunReport:
    """What a run did. ``interrupted``: stopped by Ctrl-C/SIGTERM before the end."""

    store: Path
    executor: str
    workers: int
    total: int  # trials in the experiment
    in_shard: int  # of which in this shard
    already: int  # of those, stored before this run
    ran: int  # stored by this run
    meanwhile: int = 0  # run, but stored meanwhile by another writer (kept once)
    failed: list[tuple[str, str]] = field(default_factory=list)
    wall_s: float = 0.0
    busy_s: float = 0.0  # core time summed over batches
    cpu_s: float = 0.0  # Python CPU time: batch tables on the workers, this process's driver
    batches: int = 0
    interrupted: bool = False

    @property
    def missing(self) -> int:
        return self.in_shard - self.already - self.ran - self.meanwhile

    @property
    def rate(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else 0.0


class _Stop:
    """SIGINT/SIGTERM: the first asks to stop after the batches in flight, the second
    raises KeyboardInterrupt."""

    def __init__(self, on_first: Callable[[str], None]) -> None:
        self.requested: str | None = None
        self._on_first = on_first
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: object) -> None:
        if self.requested is not None:
            raise KeyboardInterrupt
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
    batch_seconds: float = 1.0,
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

    def make_executor() -> _Executor:
        if scheduler is not None or client is not None:
            return _DaskExecutor(scheduler, client)
        return _PoolExecutor(executor, workers or _cpu_count())

    ex: _Executor | None = None
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
            mine = [t for t in trials if in_shard(t.key, shard)]
            done = st.done_keys(refresh=True)
            todo = [t for t in mine if t.key not in done]
            report = RunReport(
                store=st.path,
                executor=executor,
                workers=0,
                total=len(trials),
                in_shard=len(mine),
                already=len(mine) - len(todo),
                ran=0,
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


def _run(
    experiment: Experiment,
    st: Store,
    todo: list[Trial],
    report: RunReport,
    ex: _Executor,
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
    bar = _Progress(err, len(todo), report.already, show)
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
        n = max(1, math.ceil(batch_seconds / max(per_trial, 1e-6)))
        tail = math.ceil(len(pending) / ex.workers)  # so that the workers end together
        return max(1, min(n, tail, max_batch))

    def submit() -> None:
        n = batch_size()
        batch = [pending.popleft() for _ in range(min(n, len(pending)))]
        points = {t.point.key: t.point for t in batch}
        task = BatchTask(
            jsons=[t.native_json() for t in batch],
            heads=[(t.key, t.point.key, t.rep, t.seed) for t in batch],
            point_columns={k: p.columns() for k, p in points.items()},
            point_scenarios={k: p.stored_scenario for k, p in points.items()},
            traces=experiment.traces,
            code_version=cv,
        )
        inflight[ex.submit(task)] = batch

    try:
        with _Stop(on_stop) as stop, bar:
            while pending or inflight:
                limit = ex.workers * (2 if per_trial is not None else 1)
                while stop.requested is None and pending and len(inflight) < limit:
                    submit()
                if stop.requested is not None:
                    for fut in [f for f in inflight if ex.cancel(f)]:
                        pending.extendleft(inflight.pop(fut))
                    if not inflight:
                        break
                for fut in ex.wait(inflight, timeout=0.2):
                    batch = inflight.pop(fut)
                    try:
                        res: BatchResult = fut.result()
                    except Exception as e:  # a worker died: the batch is not stored
                        report.failed += [(t.key, f"{type(e).__name__}: {e}") for t in batch]
                        bar.advance(0, len(batch))
                        continue
                    if res.native_version != experiment.model_version:
                        raise RuntimeError(
                            f"a worker runs core {res.native_version}, this process"
                            f" {experiment.model_version}: install the same collateral"
                            " everywhere"
                        )
                    dropped = 0
                    if res.summary is not None:
                        _, dropped = st.commit_part(res.summary, res.traces)
                    report.ran += len(batch) - len(res.failures) - dropped
                    report.meanwhile += dropped
                    report.failed += res.failures
                    report.busy_s += res.wall_s
                    report.cpu_s += res.cpu_s
                    report.batches += 1
                    m = res.wall_s / len(batch)
                    per_trial = m if per_trial is None else 0.7 * per_trial + 0.3 * m
                    bar.advance(len(batch) - len(res.failures), len(res.failures))
            report.interrupted = stop.requested is not None and bool(pending)
    except KeyboardInterrupt:
        report.interrupted = True
        raise
    finally:
        report.wall_s = time.perf_counter() - t0
        report.cpu_s += time.thread_time() - c0


class _Progress:
    """A rich progress bar (done/total, trials/s, ETA), or a log line every 10 s."""

    def __init__(self, console: Console, todo: int, already: int, show: bool) -> None:
        self.console = console
        self.todo = todo
        self.already = already
        self.show = show
        self.done = 0
        self.failed = 0
        self.t0 = time.perf_counter()
        self._last_log = self.t0
        self._progress: Any = None

    def __enter__(self) -> _Progress:
        if self.show:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]trials"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                refresh_per_second=4,
                speed_estimate_period=60,
            )
            self._progress.start()
            # Trials stored before this run count as done: a resumed run shows 103/320,
            # not 1/218 (the rate and ETA still come from this run's advances only).
            self._task = self._progress.add_task(
                "trials", total=self.already + self.todo, rate="", completed=self.already
            )
        return self

    def rate(self) -> float:
        el = time.perf_counter() - self.t0
        return self.done / el if el > 0 else 0.0

    def advance(self, ok: int, failed: int) -> None:
        self.done += ok
        self.failed += failed
        if self._progress is not None:
            self._progress.update(
                self._task, advance=ok + failed, rate=f"{self.rate():,.1f} trials/s"
            )
        elif time.perf_counter() - self._last_log >= 10:
            self._last_log = time.perf_counter()
            left = self.todo - self.done - self.failed
            eta = left / self.rate() if self.rate() > 0 else math.inf
            self.console.print(
                f"collateral: {self.already + self.done + self.failed:,}"
                f"/{self.already + self.todo:,} trials,"
                f" {self.rate():,.1f} trials/s, ETA {_fmt_s(eta)}",
                highlight=False,
            )

    def note(self, text: str) -> None:
        self.console.print(f"collateral: {text}", highlight=False)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _fmt_s(s: float) -> str:
    if not math.isfinite(s):
        return "?"
    s = round(s)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


def report_lines(report: RunReport, st: Store | None = None) -> Sequence[tuple[str, str]]:
    """The end-of-run summary as (label, value) rows."""
    rows = [
        ("store", str(report.store)),
        (
            "trials",
            f"{report.total:,}"
            + (f" ({report.in_shard:,} in this shard)" if report.in_shard != report.total else ""),
        ),
        ("already stored", f"{report.already:,}"),
        ("ran now", f"{report.ran:,} in {report.batches:,} batches"),
    ]
    if report.meanwhile:
        rows.append(
            ("stored by other", f"{report.meanwhile:,} (another writer stored them meanwhile)")
        )
    if report.failed:
        key, msg = report.failed[0]
        rows.append(("failed", f"{len(report.failed):,} (first: {key}: {msg})"))
    if report.missing:
        rows.append(("still missing", f"{report.missing:,} (run again to finish)"))
    if report.ran:
        rows.append(
            (
                "wall time",
                f"{_fmt_s(report.wall_s)} ({report.wall_s:.1f} s),"
                f" {report.rate:,.1f} trials/s on {report.workers} workers ({report.executor})",
            )
        )
        if report.wall_s > 0:
            rows.append(
                (
                    "per trial",
                    f"{1000 * report.busy_s / report.ran:.2f} ms in the core,"
                    f" {1000 * report.cpu_s / report.ran:.2f} ms of Python;"
                    f" workers busy {report.busy_s / (report.wall_s * report.workers):.0%}",
                )
            )
    if st is not None:
        rows.append(("parquet", f"{st.size_bytes() / 1e6:,.1f} MB"))
    return rows
