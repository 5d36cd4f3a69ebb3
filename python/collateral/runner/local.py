"""Executors: the interface (submit a task, wait for any to finish) and the local
pools of threads or processes (forkserver workers that ignore Ctrl-C and die with the
run)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as futures_wait
from typing import Any

from ..store import pid_alive
from .batch import BatchResult, BatchTask, run_batch


class Executor:
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


class PoolExecutor(Executor):
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


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
