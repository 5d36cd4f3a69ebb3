"""SIGKILL `collateral emulate FILE` at random moments, resume, and check what is left.

Issue 16's testbed criterion: after ≥ 5 kills and a final uninterrupted resume, the
results directory holds exactly one row per trial (the same trial keys an uninterrupted
run stores), and no emulator process, network namespace, temporary directory or
registry entry of the tool is left behind. Needs root (the testbed); takes a few
minutes (each trial runs in real time).

    sudo .venv/bin/python benchmarks/kill_testbed.py [--kills 6] [--seed 1]
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXPERIMENT = """\
[experiment]
name = "kill-testbed"
trials = 3
seed = 16
traces = []

[scenario]
link = "adsl1"
rtt = "60ms"
duration = "3s"
warmup = "1s"
queue = { limit = "20kB", rule = "fb-strict" }
tcp = [{ cc = "cubic", profile = "linux-6" }]
cbr = [{ direction = "down", size = "186B", interval = "20ms", jitter = "1ms" }]

[sweep]
"queue.limit" = ["10kB", "30kB"]
"""


def leftovers() -> dict[str, list[str]]:
    """What the testbed could leave behind: its processes, namespaces (`col<pid>…`),
    temporary directories and registry entries."""
    ps = subprocess.run(["pgrep", "-a", "-f", "collateral-emu"], capture_output=True, text=True)
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {
        "processes": [ln for ln in ps.stdout.splitlines() if "pgrep" not in ln],
        "namespaces": [ln.split()[0] for ln in netns.splitlines() if ln.startswith("col")],
        "tmpdirs": glob.glob(os.path.join(tempfile.gettempdir(), "collateral-emu-*")),
        "registry": glob.glob("/run/collateral/*.json"),
    }


def rows(out: Path) -> list[str]:
    import duckdb

    parts = glob.glob(str(out / "parts" / "*" / "summary.parquet"))
    if not parts:
        return []
    q = f"SELECT key FROM read_parquet({parts!r}, union_by_name=true) ORDER BY key"
    return [r[0] for r in duckdb.sql(q).fetchall()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("kill_testbed: needs root (the testbed creates network namespaces)")
        return 2
    rng = random.Random(a.seed)
    before = leftovers()
    with tempfile.TemporaryDirectory() as tmp:
        exp = Path(tmp) / "kill.toml"
        exp.write_text(EXPERIMENT)
        out, ref = Path(tmp) / "killed", Path(tmp) / "reference"
        cmd = [sys.executable, "-m", "collateral", "emulate", str(exp)]
        kills = 0
        while kills < a.kills:
            p = subprocess.Popen([*cmd, "--out", str(out)], stderr=subprocess.DEVNULL)
            delay = rng.uniform(0.5, 9.0)
            try:
                p.wait(timeout=delay)
                print(f"  run finished before the kill at {delay:.1f} s")
                break
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
                kills += 1
                print(f"  kill {kills} at {delay:.1f} s: {len(rows(out))} rows stored")
        time.sleep(0.5)
        after_kills = leftovers()
        subprocess.run([*cmd, "--out", str(out)], check=True, stderr=subprocess.DEVNULL)
        subprocess.run([*cmd, "--out", str(ref)], check=True, stderr=subprocess.DEVNULL)
        got, want = rows(out), rows(ref)
        left = leftovers()
    dup = len(got) - len(set(got))
    print(f"kills: {kills}")
    print(f"rows after resume: {len(got)} ({dup} duplicated); uninterrupted run: {len(want)}")
    print(f"same trial keys as the uninterrupted run: {sorted(set(got)) == sorted(set(want))}")
    print("right after the kills: " + ", ".join(f"{k} {len(v)}" for k, v in after_kills.items()))
    print("after the resume:      " + ", ".join(f"{k} {len(v)}" for k, v in left.items()))
    new = {k: sorted(set(v) - set(before[k])) for k, v in left.items()}
    ok = got == want and dup == 0 and not any(new.values())
    if any(new.values()):
        print(f"left behind: {new}")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
