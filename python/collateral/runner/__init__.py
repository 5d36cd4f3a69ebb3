"""Runs an experiment's missing trials: local threads or processes, Dask, shards.

:func:`run_experiment` expands the experiment, drops the trials already in the store
(sem's ``run_missing_simulations``), keeps only this shard's trials (``shard=(i, N)``:
those whose key hashes to ``i`` mod ``N``), and runs the rest in *batches*: each batch is
one call of the core's ``simulate_batch`` on one worker, without the GIL, sized from the
measured cost per trial so that it lasts about ``batch_seconds`` (2 s). Each finished
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

from .batch import BatchResult, BatchTask, code_version, run_batch, summary_columns
from .distributed import DASK_SCHEMES, max_local_workers, parse_scheduler
from .progress import RunReport, report_lines
from .run import DEFAULT_BATCH_SECONDS, EXECUTORS, check_batch_seconds, run_experiment
from .shard import in_shard, parse_shard

__all__ = [
    "DASK_SCHEMES",
    "DEFAULT_BATCH_SECONDS",
    "EXECUTORS",
    "BatchResult",
    "BatchTask",
    "RunReport",
    "check_batch_seconds",
    "code_version",
    "in_shard",
    "max_local_workers",
    "parse_scheduler",
    "parse_shard",
    "report_lines",
    "run_batch",
    "run_experiment",
    "summary_columns",
]
