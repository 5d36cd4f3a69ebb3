"""Benchmark (not a test): whole commands, this checkout against an older commit.

Checks the older commit out as a temporary ``git worktree``, gives it this checkout's
native module (so only the Python side differs: a warning says when ``crates/`` changed
in between), byte-compiles both trees (this machine may set PYTHONDONTWRITEBYTECODE,
which would make the tree without ``.pyc`` files compile every module on each run), runs
a small sweep into a temporary store, then times each command as a process (exec to
exit, output discarded) in ``--pairs`` alternated pairs, old first then new, after one
untimed run of each. Prints, per command, each side's median and range and the ratio
old/new per pair (median, range): above 1, this checkout is faster.

    python benchmarks/commands_ab.py --old a2b42e8
    python benchmarks/commands_ab.py --old HEAD~3 --pairs 10 --commands help,query
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SWEEP = """[experiment]
name = "ab"
trials = 2
[scenario]
link = "adsl1"
duration = "5s"
warmup = "1s"
tcp = [{}]
cbr = [{}]
[sweep]
"queue.limit" = ["20kB", "40kB"]
"""


def commands(store: Path, tmp: Path) -> dict[str, list[str]]:
    """Each command by name, as arguments of ``python -m collateral``."""
    return {
        "simulate": ["simulate", "--link", "adsl1", "--duration", "180s"],
        "help": ["--help"],
        "simulate-help": ["simulate", "--help"],
        "emulate-help": ["emulate", "--help"],
        "advise-help": ["advise", "--help"],
        "version": ["--version"],
        "query": [
            "query",
            str(store),
            "SELECT down_queue_limit_bytes, median(cbr0_delay_p95_s) FROM summary GROUP BY ALL",
        ],
        "plot": [
            "plot",
            str(store),
            "--x",
            "queue.limit",
            "--y",
            "cbr0_delay_p95_s",
            "-o",
            str(tmp / "p.png"),
        ],
        "report": ["report", str(store), "-o", str(tmp / "r.html")],
        "reproduce-list": ["reproduce", "--list"],
        "schema": ["schema"],
    }


def timed(args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "collateral", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env=env,
    )
    return time.perf_counter() - t


def ms(v: list[float]) -> str:
    """Median and range of times in seconds, in ms."""
    return f"{1e3 * statistics.median(v):6.0f} ms ({1e3 * min(v):.0f}-{1e3 * max(v):.0f})"


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, help="the commit to compare with (e.g. HEAD~2)")
    ap.add_argument("--pairs", type=int, default=8, help="alternated pairs (default: 8)")
    ap.add_argument("--commands", default=None, help="comma-separated names (default: all)")
    args = ap.parse_args()
    if args.pairs < 1:
        print(f"--pairs: {args.pairs}: must be >= 1", file=sys.stderr)
        return 2
    try:
        old = git("rev-parse", "--verify", f"{args.old}^{{commit}}")
    except subprocess.CalledProcessError:
        print(f"--old: {args.old!r}: not a commit of {ROOT}", file=sys.stderr)
        return 2
    native = ROOT / "python" / "collateral" / "_native.abi3.so"
    if not native.exists():
        print(f"no native module at {native}: run ./setup.sh first", file=sys.stderr)
        return 2
    from collateral.build_info import require_release

    print(require_release("commands_ab.py"))  # both trees run this module
    with tempfile.TemporaryDirectory(prefix="collateral-ab-") as d:
        tmp = Path(d)
        store, tree = tmp / "store", tmp / "old"
        table = commands(store, tmp)
        names = args.commands.split(",") if args.commands else list(table)
        unknown = [n for n in names if n not in table]
        if unknown:
            print(
                f"--commands: {', '.join(unknown)}: not one of {', '.join(table)}",
                file=sys.stderr,
            )
            return 2
        git("worktree", "add", "--detach", str(tree), old)
        try:
            if git("diff", "--stat", old, "HEAD", "--", "crates"):
                print(
                    f"warning: crates/ changed since {args.old}; both sides run this"
                    " checkout's native module, so only the Python side is compared"
                )
            shutil.copy2(native, tree / "python" / "collateral" / native.name)
            for src in (ROOT / "python", tree / "python"):
                subprocess.run(
                    [sys.executable, "-m", "compileall", "-q", str(src)],
                    stdout=subprocess.DEVNULL,
                    check=True,
                )
            env_new = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env_new["PYTHONPATH"] = str(ROOT / "python")
            env_old = {**env_new, "PYTHONPATH": str(tree / "python")}
            (tmp / "ab.toml").write_text(SWEEP)
            timed(["run", str(tmp / "ab.toml"), "-o", str(store), "--no-progress"], env_new)
            print(
                f"old {old[:12]} against this checkout ({git('rev-parse', '--short=12', 'HEAD')}),"
                f" {args.pairs} alternated pairs, whole processes:"
            )
            for name in names:
                cmd = table[name]
                timed(cmd, env_old), timed(cmd, env_new)  # warm-up
                a, b = [], []
                for _ in range(args.pairs):
                    a.append(timed(cmd, env_old))
                    b.append(timed(cmd, env_new))
                r = [x / y for x, y in zip(a, b, strict=True)]
                print(
                    f"  {name:15} old {ms(a)}  new {ms(b)}  old/new"
                    f" {statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})",
                    flush=True,
                )
        finally:
            git("worktree", "remove", "--force", str(tree))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
