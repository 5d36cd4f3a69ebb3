"""Results store: one directory per experiment, Parquet parts, DuckDB views.

Layout::

    results/mmsys-fig6/
      store.json              format, experiment name, creation time
      experiment.toml         the experiment file as last run (its --set named above it)
      points.parquet          its points as that run expanded them (--set applied)
      parts/<id>/summary.parquet     one row per trial (key, parameters, metrics)
      parts/<id>/cwnd.parquet ...    trace tables, when the experiment keeps them
      parts/<id>/manifest.json       each table file's bytes, rows and SHA-256
      quarantine/<id>/        damaged parts moved aside (never deleted), with reason.txt
      views.sql               `duckdb -init views.sql` (from this directory) for the CLI
      tmp/                    parts being written (ignored by readers)
      locks/                  who is writing

Each completed batch of trials becomes one *part*: its tables and, last, its
``manifest.json`` are written to a directory under ``tmp/`` and renamed into ``parts/``
in one atomic step, so a reader (or a rerun after a crash) sees a batch's summary and
traces together or not at all. A trial is done when its key is in the summary of a
*verified* part; a killed run loses only the batches it had not renamed yet, and a rerun
does exactly those again.

**Verification.** Every reader and writer checks each part against its manifest before
using it: the set of table files, each file's size, and the summary's SHA-256, row count
and keys (unique, one row per trial). The trace files' SHA-256 is checked too when the
whole store holds at most :data:`CHEAP_CHECK_BYTES` of Parquet (or always, with
:meth:`Store.verify` ``(full=True)``). A part that fails — truncated, emptied or
overwritten files, a summary deleted (its trace rows would be orphaned), a missing or
broken manifest — is reported in one line and left out: its trials count as missing, so
``collateral run`` runs them again, and queries never read it (a truncated trace part
cannot break a query on ``summary``). Readers (queries, ``--dry-run``, merge sources)
change nothing; writers (``collateral run``, merge into, the testbed's experiments) call
:meth:`Store.repair`, which moves damaged parts to ``quarantine/`` (never deleting them).

A damaged ``store.json`` is a one-line error for readers; the next run of the
experiment that the directory's ``experiment.toml`` names moves it to ``quarantine/`` and
writes it anew (a directory that may belong to another experiment is never rewritten).

**No trial twice.** A part is committed under ``locks/commit.lock`` after checking the
committed parts for its keys: rows of trials some other writer stored meanwhile are
dropped from the part first, so two writers (overlapping shards, a merge beside a run)
cannot store a trial twice. Stores written before that rule may hold a trial in two
parts; readers count it once (the part that sorts first wins; views filter the others'
rows), and :meth:`Store.repair` moves a part holding only such trials to quarantine and
rewrites a part holding some without them.

**Store formats.** Format 2 (this one) has a manifest in every part; a part without one
was not committed by a writer of this format and is damaged. Format 1 stores (written
before manifests) still read: a part without a manifest is valid when its Parquet files
are readable and it has a summary. The first writer that repairs a format 1 store
migrates it: it writes each valid part's manifest from its files as they are, quarantines
unreadable ones and then records format 2 in ``store.json``.

Shards of one experiment may write into the same directory at once (each takes its own
lock, and the directory records the N of the shards running: a shard of another N is
refused while they run); shards run into separate directories are combined with
:meth:`Store.merge` (``collateral merge``), which never copies a trial the destination
already has.

Query with SQL through DuckDB (:meth:`Store.query`, ``collateral query DIR "SQL"``):
the views ``summary`` and, where present, ``cwnd``, ``queue``, ``cbr``, ``drops`` and
``congestion`` read every verified part (``union_by_name``, so parts with extra columns
mix); ``flows`` has the summary's per-flow columns as one row per trial and flow
(:mod:`.flows`). Values that are NaN in a trial's summary (e.g. no CBR packet arrived,
so no delay) are NULL in the tables, which SQL aggregates skip; a drop-tail queue's
kind is ``'drop-tail'`` and an ssthresh not yet set is NULL (:mod:`.views`).
"""

from __future__ import annotations

from .check import CHEAP_CHECK_BYTES
from .core import Store, open_store, schema_version
from .files import FORMAT, MANIFEST
from .locks import pid_alive
from .problems import PartProblem, StoreError
from .sandbox import QueryRefused
from .tables import IDENTITY_COLUMNS, TABLES, columns_to_table, rows_to_table
from .views import Output

__all__ = [
    "CHEAP_CHECK_BYTES",
    "FORMAT",
    "IDENTITY_COLUMNS",
    "MANIFEST",
    "TABLES",
    "Output",
    "PartProblem",
    "QueryRefused",
    "Store",
    "StoreError",
    "columns_to_table",
    "open_store",
    "pid_alive",
    "rows_to_table",
    "schema_version",
]
