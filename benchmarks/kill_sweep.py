"""Benchmark (not a test): kill safety of `collateral run` under repeated SIGKILL.

Writes a small experiment (2 queue rules x 25 queue limits x 4 trials = 200 trials of a
few simulated seconds, with the ``cwnd`` trace) to a temporary directory, runs it once
uninterrupted into ``ref/``, then runs it into ``killed-R/`` under ``collateral run``
and SIGKILLs the run at random moments (seeded delays, from during start-up to the end
of the remaining work), rerunning until the experiment is complete; when a round
completes with fewer kills than asked, another round starts in a fresh directory.

Checked after every round:

- exactly one summary row per trial (no trial missing, none twice, raw parts included);
- the rows equal the uninterrupted run's, every column, NaN-aware (and the ``cwnd``
  trace rows too) but ``code_version``, the git commit of the source tree, which a commit
  made during the sweep changes (counted and printed apart, not a failure);
- no part was quarantined (a kill never leaves a damaged part), no ``tmp/`` leftovers or
  hidden temporary files, no lock still held;
- no process of a killed run is left (its process tree, taken just before the kill, is
  gone within a few seconds: matters for ``--executor processes``).

    python benchmarks/kill_sweep.py                       # 20 kills, threads, 2 workers
    python benchmarks/kill_sweep.py --kills 40 --executor processes --seed 7
    python benchmarks/kill_sweep.py --keep /tmp/ks        # keep the directories

Prints the figures (kills, runs, rows, mismatches...) and exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXPERIMENT = """\
[experiment]
name = "kill-sweep"
trials = {trials}
seed = 11
traces = ["cwnd"]

[scenario]
link = "adsl1"
rtt = "100ms"
duration = "{duration}"
warmup = "1s"
tcp = [{{ cc = "newreno", profile = "linux-2.6.25" }}]
cbr = [{{ direction = "down" }}, {{ direction = "up" }}]

[sweep]
"queue.rule" = ["fb-loose", "fb-strict"]
"queue.limit" = {{ from = "20000B", to = "{last}B", step = "1000B" }}
"""


def write_experiment(directory: Path, trials: int, duration: str, limits: int) -> Path:
    path = directory / "kill-sweep.toml"
    text = EXPERIMENT.format(trials=trials, duration=duration, last=20000 + 1000 * (limits - 1))
    path.write_text(text)
    return path


def run_cmd(exp: Path, out: Path, workers: int, executor: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "collateral",
        "run",
        str(exp),
        "-o",
        str(out),
        "--no-progress",
        "-j",
        str(workers),
        "--executor",
        executor,
        "--batch-seconds",
        "0.02",
    ]


def descendants(pid: int) -> dict[int, str]:
    """pid -> start time (field 22 of /proc/PID/stat) of every process below ``pid``."""
    children: dict[int, list[int]] = {}
    start: dict[int, str] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(d))
        start[int(d)] = fields[19]
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out[c] = start.get(c, "")
                todo.append(c)
    return out


def alive(procs: dict[int, str]) -> list[int]:
    """Those of ``procs`` still running (same pid and start time; zombies count as gone)."""
    left = []
    for pid, t0 in procs.items():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[19] == t0 and fields[0] != "Z":
            left.append(pid)
    return left


def held_locks(store: Path) -> list[str]:
    """Lock files someone still holds (an exclusive non-blocking flock fails)."""
    held = []
    for f in sorted((store / "locks").glob("*.lock")):
        fd = os.open(f, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.append(f.name)
        finally:
            os.close(fd)
    return held


def leftovers(store: Path) -> list[str]:
    """Half-written parts in tmp/ and hidden temporary files of atomic writes."""
    out = [f"tmp/{p.name}" for p in (store / "tmp").iterdir()] if (store / "tmp").is_dir() else []
    out += [str(p.relative_to(store)) for p in store.rglob(".*.tmp")]
    return out


def tables(store: Path) -> tuple[Any, Any]:
    """The summary (by key) and the cwnd trace (by key, time) of a store, as pandas."""
    from collateral.store import open_store

    st = open_store(store)
    summary = st.query("SELECT * FROM summary ORDER BY key")
    summary = summary[sorted(summary.columns)].reset_index(drop=True)
    cwnd = st.query("SELECT * FROM cwnd ORDER BY key, time_s, flow, cwnd, ssthresh")
    return summary, cwnd.reset_index(drop=True)


def mismatches(a: Any, b: Any, by: list[str]) -> int:
    """Rows of ``a`` and ``b`` (same columns) that differ, NaN equal to NaN; rows only in
    one of them count as mismatches too."""
    import pandas as pd

    if list(a.columns) != list(b.columns):
        return max(len(a), len(b))
    if len(a) != len(b) or not a[by].equals(b[by]):
        return abs(len(a) - len(b)) + sum(
            1 for x, y in zip(a[by].itertuples(), b[by].itertuples(), strict=False) if x != y
        )
    bad = pd.Series(False, index=a.index)
    for c in a.columns:
        x, y = a[c], b[c]
        same = (x == y) | (x.isna() & y.isna())
        bad |= ~same.fillna(False).astype(bool)
    return int(bad.sum())


def sweep(
    kills: int = 20,
    seed: int = 1,
    workers: int = 2,
    executor: str = "threads",
    trials: int = 4,
    limits: int = 25,
    duration: str = "5s",
    workdir: Path | None = None,
    log: Any = print,
) -> dict[str, Any]:
    """Runs the kill sweep; returns its figures (``ok``: every check passed)."""
    from collateral.store import Store

    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="kill-sweep-")) if own else Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    exp = write_experiment(work, trials, duration, limits)
    total = 2 * limits * trials
    figures: dict[str, Any] = {
        "trials": total,
        "kills": 0,
        "runs": 0,
        "rounds": 0,
        "kills_before_first_part": 0,
        "kills_mid_run": 0,
        "duplicate_rows_seen": 0,
        "rows": [],
        "summary_mismatches": [],
        "cwnd_mismatches": [],
        "code_version_differs": 0,  # rows run by another commit of the source (not a failure)
        "quarantined": [],
        "leftovers": [],
        "held_locks": [],
        "processes_left": 0,
        "failed_runs": 0,
    }
    t_all = time.perf_counter()
    try:
        ref = work / "ref"
        t0 = time.perf_counter()
        p = subprocess.run(run_cmd(exp, ref, workers, executor), capture_output=True, text=True)
        t_ref = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"the uninterrupted run failed: {p.stderr.strip()}")
        t0 = time.perf_counter()  # start-up and exit alone: a run with nothing to do
        subprocess.run(run_cmd(exp, ref, workers, executor), capture_output=True, check=True)
        t_start = time.perf_counter() - t0
        ref_summary, ref_cwnd = tables(ref)
        # Trial keys include the core's version: a core rebuilt during the sweep would
        # make every trial new; stop then rather than compare different models.
        from collateral.experiment import load_experiment

        expected = {t.key for t in load_experiment(exp).trials()}
        if set(ref_summary["key"]) != expected:
            raise RuntimeError("the core changed before the reference run ended; run again")
        figures["reference_rows"] = len(ref_summary)
        figures["reference_wall_s"] = round(t_ref, 2)
        log(
            f"reference: {len(ref_summary)} rows in {t_ref:.1f} s"
            f" (start-up and exit {t_start:.1f} s); killing at random moments"
        )
        while figures["kills"] < kills:
            figures["rounds"] += 1
            out = work / f"killed-{figures['rounds']}"
            stalled = 0  # kills in a row that stored nothing
            while True:
                stored = set(Store(out, notify=lambda m: None).keys()) if out.exists() else set()
                if stored - expected:
                    raise RuntimeError(
                        f"{out}: trials of another core version: the core was rebuilt"
                        " during the sweep; run it again"
                    )
                left = len(expected - stored)
                if figures["runs"] > 50 + 20 * kills:
                    raise RuntimeError(f"{figures['runs']} runs and still {left} trials missing")
                if left == 0:
                    break
                work_s = max(t_ref - t_start, 0.05) * left / total
                # From late in start-up (the store opened, repaired, locked) to the end;
                # wider after kills that left nothing (start-up took longer than thought).
                late = (t_start + 1.2 * work_s) * 1.5**stalled
                delay = rng.uniform(0.6 * t_start, late)
                parts0 = len(list((out / "parts").iterdir())) if (out / "parts").is_dir() else 0
                proc = subprocess.Popen(
                    run_cmd(exp, out, workers, executor),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                figures["runs"] += 1
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    tree = descendants(proc.pid)
                    proc.send_signal(signal.SIGKILL)
                    proc.communicate()
                    figures["kills"] += 1
                    parts1 = len(list((out / "parts").iterdir())) if (out / "parts").is_dir() else 0
                    if parts1 == parts0:
                        figures["kills_before_first_part"] += 1
                        stalled += 1
                    else:
                        figures["kills_mid_run"] += 1
                        stalled = 0
                    t_gone = time.monotonic() + 10
                    while alive(tree) and time.monotonic() < t_gone:
                        time.sleep(0.05)
                    figures["processes_left"] += len(alive(tree))
                    if out.exists() and (out / "store.json").exists():
                        keys = Store(out, notify=lambda m: None).keys()
                        figures["duplicate_rows_seen"] += len(keys) - len(set(keys))
                    continue
                _, err = proc.communicate()
                if proc.returncode != 0:
                    figures["failed_runs"] += 1
                    log(f"  a run failed (exit {proc.returncode}): {err.strip()[-300:]}")
                    if figures["failed_runs"] > 3:
                        raise RuntimeError("runs keep failing")
            # The round is complete: a last run finds nothing to do; check the store.
            p = subprocess.run(run_cmd(exp, out, workers, executor), capture_output=True, text=True)
            figures["runs"] += 1
            if p.returncode != 0 or "ran now         0 " not in p.stdout or p.stderr.strip():
                figures["failed_runs"] += 1
                log(f"  the last run did not find the store complete: {p.stdout}{p.stderr}")
            notes: list[str] = []
            st = Store(out, notify=notes.append)
            keys = st.keys()
            summary, cwnd = tables(out)
            figures["rows"].append(len(summary))
            if len(keys) != total or len(set(keys)) != total or len(summary) != total:
                figures["summary_mismatches"].append(abs(total - len(summary)) or 1)
            else:
                # code_version is provenance (the git commit of the source tree), not a
                # result: a commit made while the sweep runs changes it. Counted apart.
                prov = ["code_version"]
                figures["summary_mismatches"].append(
                    mismatches(summary.drop(columns=prov), ref_summary.drop(columns=prov), ["key"])
                )
                figures["code_version_differs"] += mismatches(
                    summary[["key", *prov]], ref_summary[["key", *prov]], ["key"]
                )
            figures["cwnd_mismatches"].append(mismatches(cwnd, ref_cwnd, ["key", "time_s", "flow"]))
            q = out / "quarantine"
            figures["quarantined"] += [p.name for p in q.iterdir()] if q.is_dir() else []
            figures["quarantined"] += notes
            figures["leftovers"] += leftovers(out)
            figures["held_locks"] += held_locks(out)
            log(
                f"round {figures['rounds']}: complete after {figures['kills']} kills so far"
                f" ({figures['runs']} runs); {len(summary)} rows,"
                f" {figures['summary_mismatches'][-1]} mismatched"
            )
    finally:
        figures["wall_s"] = round(time.perf_counter() - t_all, 1)
        if own:
            shutil.rmtree(work, ignore_errors=True)
    figures["ok"] = (
        figures["kills"] >= kills
        and all(r == total for r in figures["rows"])
        and not any(figures["summary_mismatches"])
        and not any(figures["cwnd_mismatches"])
        and figures["duplicate_rows_seen"] == 0
        and not figures["quarantined"]
        and not figures["leftovers"]
        and not figures["held_locks"]
        and figures["processes_left"] == 0
        and figures["failed_runs"] == 0
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20, help="SIGKILLs at least (default 20)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the kill delays")
    ap.add_argument("-j", "--workers", type=int, default=2)
    ap.add_argument("--executor", choices=("threads", "processes"), default="threads")
    ap.add_argument("--trials", type=int, default=4, help="trials per point (50 points)")
    ap.add_argument("--duration", default="5s", help="simulated duration of a trial")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.kills < 1 or args.trials < 1 or args.workers < 1:
        ap.error("--kills, --trials and --workers must be at least 1")
    try:
        figures = sweep(
            kills=args.kills,
            seed=args.seed,
            workers=args.workers,
            executor=args.executor,
            trials=args.trials,
            duration=args.duration,
            workdir=Path(args.keep) if args.keep else None,
        )
    except RuntimeError as e:  # could not be measured (e.g. the core was rebuilt meanwhile)
        print(f"kill_sweep: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        rows = ", ".join(map(str, figures["rows"]))
        print(
            f"kills {figures['kills']} ({figures['kills_before_first_part']} before a part"
            f" was written, {figures['kills_mid_run']} mid-run) in {figures['runs']} runs,"
            f" {figures['rounds']} rounds, {figures['wall_s']} s\n"
            f"trials {figures['trials']}; rows per round: {rows}\n"
            f"mismatched summary rows: {sum(figures['summary_mismatches'])},"
            f" cwnd rows: {sum(figures['cwnd_mismatches'])},"
            f" duplicates seen after kills: {figures['duplicate_rows_seen']}"
            f" (rows whose code_version differs: {figures['code_version_differs']})\n"
            f"quarantined: {len(figures['quarantined'])}, leftovers: {len(figures['leftovers'])},"
            f" locks held: {len(figures['held_locks'])},"
            f" processes left: {figures['processes_left']},"
            f" failed runs: {figures['failed_runs']}\n"
            f"{'OK' if figures['ok'] else 'FAILED'}"
        )
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
