"""Dask: the executor that submits batches to a ``distributed`` scheduler (a running
one, or a LocalCluster it starts), and ``--scheduler`` as the runner reads it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from .batch import BatchTask, run_batch
from .local import Executor, cpu_count

#: How long to wait for a scheduler at an address (Dask's default is 30 s): one that
#: answers does so within milliseconds on a LAN.
CONNECT_TIMEOUT_S = 5.0


class DaskExecutor(Executor):
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
                n = int(n) or cpu_count()
                cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._own.append(cluster)
                client = distributed.Client(cluster)
            else:
                try:
                    client = distributed.Client(scheduler, timeout=CONNECT_TIMEOUT_S)
                except (OSError, TimeoutError) as e:  # refused, unreachable, or silent
                    raise ValueError(
                        f"--scheduler: {scheduler}: no Dask scheduler answered within"
                        f" {CONNECT_TIMEOUT_S:g} s ({type(e).__name__}); start one with"
                        " 'dask scheduler', or give local[:N]"
                    ) from None
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


#: Address schemes a Dask scheduler may be reached by.
DASK_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def max_local_workers() -> int:
    """The most workers of a ``local:N`` cluster: 4 per core (at least 8)."""
    return max(8, 4 * cpu_count())


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
