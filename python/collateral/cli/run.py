"""``run``: an experiment file's missing trials into a results directory, on all
cores, a Dask cluster or one shard; ``--dry-run`` counts them."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..display import short
from . import HELP
from .errors import fail, interrupted_status
from .paths import output_dir
from .values import count, max_workers, positive_seconds


def add_parser(sub: Any) -> None:
    r = sub.add_parser(
        "run",
        help=HELP["run"],
        description="Run the trials of an experiment file (TOML: a base scenario, sweep "
        "axes, trials per point, root seed) that its results directory does not hold yet, "
        "on all cores, and store them as Parquet. Rerunning resumes; Ctrl-C stops after "
        "the batches in flight, keeping every finished trial.",
    )
    r.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment file")
    r.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="results directory (default: results/NAME, NAME from [experiment] name)",
    )
    r.add_argument(
        "-j",
        "--workers",
        metavar="N",
        type=count(0, max_workers),
        default=0,
        help="local worker threads or processes, at most 4 per core (default: 0 = all cores)",
    )
    r.add_argument(
        "--executor",
        choices=("threads", "processes"),
        default="threads",
        help="run batches on threads (the core releases the GIL) or processes (default: threads)",
    )
    r.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run on a Dask cluster: tcp://host:port of its scheduler, or 'local[:N]' for "
        "a local cluster of N workers (needs collateral[dask])",
    )
    r.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (0 <= I < N), e.g. from a Slurm array; shards can "
        "share the output directory or be merged with 'collateral merge'",
    )
    add_set_option(r)
    r.add_argument(
        "--batch-seconds",
        metavar="S",
        type=positive_seconds,
        # The runner's DEFAULT_BATCH_SECONDS, written out so that --help imports no runner
        # (a test holds the two equal).
        help="target core time of one batch (default: 2)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and count the trials (total, stored, to run); run nothing",
    )
    g = r.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: when stderr is a terminal)",
    )
    g.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar: a line on stderr every 10 s instead (as in a log file)",
    )


def toml_value(key: str, text: str) -> Any:
    """``--set KEY=VALUE``: VALUE in TOML syntax, else the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        fail(f"--set {key}: the value is nested too deeply")
    except ValueError:  # an integer of thousands of digits
        fail(f"--set {key}: {short(text, 60)}: a number too long to read")


def add_set_option(p: Any) -> None:
    """``--set KEY=VALUE`` (repeatable): a key of the experiment file, overridden."""
    p.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a key of the file, e.g. experiment.trials=2, scenario.duration=30s, "
        '\'sweep.queue.limit=["20kB", "40kB"]\' (VALUE in TOML syntax, else a string)',
    )


def set_overrides(items: list[str]) -> list[tuple[str, Any]]:
    """``--set``'s items as (key, value) pairs, VALUE read as TOML; a malformed one fails
    in one line."""
    overrides = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--set: {short(item, 60)}: expected KEY=VALUE, e.g. experiment.trials=2")
        overrides.append((key.strip(), toml_value(key.strip(), value.strip())))
    return overrides


def run(args: argparse.Namespace) -> int:
    from ..experiment import ExperimentError, load_experiment
    from ..runner import (
        DEFAULT_BATCH_SECONDS,
        in_shard,
        parse_shard,
        report_lines,
        run_experiment,
    )
    from ..store import Store, StoreError

    overrides = set_overrides(args.overrides)
    shard = None
    if args.shard is not None:
        try:
            shard = parse_shard(args.shard)
        except ValueError as e:
            fail(f"--shard: {e}")
    if args.scheduler is not None:
        check_scheduler(args.scheduler)
    if args.output is not None:  # before reading the file: a bad -o is said first
        output_dir("--output", args.output, "results/NAME", probe=not args.dry_run)
    try:
        exp = load_experiment(args.experiment, overrides)
    except ExperimentError as e:
        fail(str(e))
    out = Path(args.output) if args.output is not None else Path("results") / exp.name
    if args.output is None:
        output_dir("--output", str(out), "results/NAME", probe=not args.dry_run)
    if args.dry_run:
        stored: set[str] = set()
        try:  # what the run would refuse, the dry run refuses (nothing written)
            Store(out).check_for_writing(exp.name)
            if (out / "store.json").exists():
                stored = Store(out).done_keys()
        except StoreError as e:
            fail(f"--output: {e}")
        total = mine = todo = ours = 0
        for t in exp.iter_trials():  # one at a time: a large experiment is counted, not held
            total += 1
            ours += t.key in stored
            if in_shard(t.key, shard):
                mine += 1
                todo += t.key not in stored
        others = len(stored) - ours
        extra = 0
        if others:  # trials of points still in the file: reps beyond its trials count
            keys = stored - {t.key for t in exp.iter_trials()}
            points = {p.key for p in exp.points}
            extra = Store(out).beyond_trials(keys, points, exp.trials_per_point)
        print(
            f"{exp.name}: {len(exp.points):,} points x {exp.trials_per_point} trials ="
            f" {total:,} trials"
            + (f"; shard {shard[0]}/{shard[1]}: {mine:,}" if shard else "")
            + f"; stored in {out}: {mine - todo:,}; to run: {todo:,}"
            + (
                f"; {extra:,} stored beyond its {exp.trials_per_point} trials per point"
                if extra
                else ""
            )
            + (
                f"; {others - extra:,} stored of points not in the file or of another core"
                if others > extra
                else ""
            )
        )
        return 0
    try:
        report = run_experiment(
            exp,
            out,
            workers=args.workers,
            executor=args.executor,
            scheduler=args.scheduler,
            shard=shard,
            batch_seconds=DEFAULT_BATCH_SECONDS
            if args.batch_seconds is None
            else args.batch_seconds,
            progress=args.progress,
        )
    except StoreError as e:
        fail(f"--output: {e}")
    except ValueError as e:  # an argument the runner refused (it names the option)
        fail(str(e) if str(e).startswith("--") else f"run: {e}")
    except KeyboardInterrupt as e:
        print(
            "collateral: interrupted; the batches in flight were abandoned, finished"
            f" trials are in {out}",
            file=sys.stderr,
        )
        sys.stderr.flush()
        sys.stdout.flush()
        # Worker threads are still inside the core: do not wait for them.
        os._exit(interrupted_status(e))
    except (RuntimeError, OSError) as e:
        fail(f"run: {e}")
    for label, value in report_lines(report, Store(out)):  # plain lines: greppable logs
        print(f"{label:<15} {value}")
    if report.interrupted:
        return interrupted_status(report.signal)
    return 1 if report.failed else 0


def check_scheduler(text: str) -> None:
    """``--scheduler`` as the runner reads it (:func:`collateral.runner.parse_scheduler`)."""
    from .. import runner

    parse = getattr(runner, "parse_scheduler", None)
    if parse is None:  # pragma: no cover - a runner without the check
        return
    try:
        parse(text)
    except ValueError as e:
        msg = str(e)
        fail(msg if msg.startswith("--scheduler") else f"--scheduler: {msg}")
