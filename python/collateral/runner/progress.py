"""What a run tells its user: a progress bar (or a log line every 10 s) while it runs,
and the :class:`RunReport` it returns with its end-of-run summary rows."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import SEED_FREE

if TYPE_CHECKING:
    from rich.console import Console

    from ..store import Store


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
    # Stored trials of points the experiment no longer has (an earlier version of the
    # file), or run by another version of the core (part of every trial key): they stay,
    # and queries see them beside this run's.
    elsewhere: int = 0
    trials_per_point: int = 0  # the file's
    extra_reps: int = 0  # of those, trials of this file's points beyond its trials count
    meanwhile: int = 0  # run, but stored meanwhile by another writer (kept once)
    failed: list[tuple[str, str]] = field(default_factory=list)
    wall_s: float = 0.0
    busy_s: float = 0.0  # core time summed over batches (without the GIL)
    handoff_s: float = 0.0  # the core's results made Python objects, the GIL waited for
    cpu_s: float = 0.0  # Python CPU time: batch tables on the workers, this process's driver
    batches: int = 0
    interrupted: bool = False
    signal: str | None = None  # what interrupted it: "SIGINT", "SIGTERM"
    # Worker time with no batch (local pools only: a remote worker's clock is its own),
    # summed over the workers: before each one's first batch began, and after its last
    # ended. The rest of the idle time lies between batches (waiting for the next one).
    idle_start_s: float = 0.0
    idle_tail_s: float = 0.0
    # Stored points whose tags (label columns) the file now writes otherwise, with one
    # example: the stored rows keep the labels they were run with.
    stale_tags: int = 0
    stale_example: str = ""

    @property
    def missing(self) -> int:
        return self.in_shard - self.already - self.ran - self.meanwhile

    @property
    def rate(self) -> float:
        return self.ran / self.wall_s if self.wall_s > 0 else 0.0


class Progress:
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

    def __enter__(self) -> Progress:
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
                soft_wrap=True,
            )

    def note(self, text: str) -> None:
        # One line whatever the width: a log's `tail -1` sees all of it.
        self.console.print(f"collateral: {text}", highlight=False, soft_wrap=True)

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
    if report.extra_reps:
        rows.append(
            (
                "beyond trials",
                f"{report.extra_reps:,} stored trials of the file's points beyond its"
                f" {report.trials_per_point} per point (a run with more); queries see them"
                f" too: filter by rep < {report.trials_per_point}, or use another -o",
            )
        )
    if report.elsewhere > report.extra_reps:
        rows.append(
            (
                "not in the file",
                f"{report.elsewhere - report.extra_reps:,} stored trials of points the file no"
                " longer has, of another seed, or run by another version of the core (a"
                " trial's key holds both);"
                " queries see them too: filter by parameter, or use another -o",
            )
        )
    if report.stale_tags:
        rows.append(
            (
                "stale tags",
                f"{report.stale_tags:,} stored point(s) carry other tags than the file"
                f" ({report.stale_example}): queries and plots show the stored ones; run"
                " into another -o to relabel",
            )
        )
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
                    f" {1000 * report.handoff_s / report.ran:.2f} ms handing results back,"
                    f" {1000 * report.cpu_s / report.ran:.2f} ms of Python"
                    + (
                        f" ({report.cpu_s / report.busy_s:.1%} of the core's time)"
                        if report.busy_s > 0
                        else ""
                    )
                    + f"; workers busy {report.busy_s / (report.wall_s * report.workers):.0%}",
                )
            )
            if report.idle_start_s or report.idle_tail_s:
                whole = report.wall_s * report.workers
                rows.append(
                    (
                        "workers idle",
                        f"{report.idle_start_s / whole:.1%} before their first batch,"
                        f" {report.idle_tail_s / whole:.1%} after their last",
                    )
                )
        from ..build_info import core

        # ./test.sh leaves it: trials/s not what users get (Dask's workers have their own)
        if core() == "checked" and report.executor in ("threads", "processes"):
            rows.append(
                (
                    "core build",
                    "checked (the tests'): same results, slower trials;"
                    " tools/build_native.sh installs the release build",
                )
            )
    if st is not None:
        rows.append(("parquet", f"{st.size_bytes() / 1e6:,.1f} MB"))
        if report.ran and report.trials_per_point > 1 and (same := identical_points(st)):
            rows.append(
                (
                    "note",
                    f"the trials of each of the {same:,} points with several came out"
                    f" identical: {SEED_FREE}; intervals say nothing",
                )
            )
    return rows


def identical_points(st: Store) -> int:
    """How many points hold several trials, when every such point's trials are the same
    (the same events, packets and goodputs); 0 when some point's trials differ."""
    import duckdb

    try:
        got = st.query(
            "SELECT count(*) AS n, count(*) FILTER (WHERE d = 1) AS same FROM ("
            " SELECT count(DISTINCT (events, packets_delivered, down_goodput_bps,"
            " up_goodput_bps)) AS d FROM summary GROUP BY point HAVING count(*) > 1)",
            output="arrow",  # pandas would cost a run 0.3-0.6 s of import
        )
    except duckdb.Error:  # a store without these columns: nothing to say
        return 0
    n, same = (int(got.column(c)[0].as_py()) for c in ("n", "same"))
    return n if n and same == n else 0
