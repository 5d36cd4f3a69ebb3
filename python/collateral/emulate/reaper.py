"""The reaper: a process that removes what a run recorded in its registry record
(:mod:`.registry`) when the run dies, however it dies — SIGKILL included — within a
second, rather than leaving it for the next run.

    python -m collateral.emulate.reaper /run/collateral/<pid>.json

:func:`.registry.start_reaper` starts it, in a session of its own, at the process's
first :func:`.registry.register`: before anything is recorded, so before anything is
created. It blocks reading its standard input, a pipe whose write end only its run
holds; end of file means the run is gone (or ending: at a normal exit the run closes the
pipe and waits for its reaper). It then reads the record *as it is then*: none, or an
empty one (the run ended and removed what it had made), and it leaves quietly; otherwise
it tears down what it lists — nothing else — with the registry's own functions: the
processes in those namespaces, the namespaces (and so their veths), the temporary
directory if named as the tool names them, and the record.

One reaper per process (per record), not per :func:`.emulate`: a record belongs to a
process (its pid names it), each run adds to it and removes it at its end, and the
reaper reads it only once the process is gone. So :func:`.emulate_experiment`'s many
runs share one reaper, which costs a blocked read while they run. A process forked
without exec holds the pipe too: its parent's leftovers are removed when both are gone.

It imports the registry and ``ip netns`` helpers only (no numpy, pydantic), to start in
tens of milliseconds; errors are one line on stderr, and its exit status.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from .namespaces import held, kill_in_netns
from .registry import read_record, reap_record

#: How long the reaper waits, after a first teardown, for the dead run's last ``ip``
#: commands (a namespace being added, a process entering one) to end before a second.
SETTLE_S = 0.3


def reap(record: Path) -> list[str]:
    """Removes what ``record`` lists (its run is gone); returns the namespaces removed."""
    run = read_record(record)
    names = [ns for ns in run.get("namespaces", []) if isinstance(ns, str)]
    if not names:  # nothing the run's own commands may still be making
        return reap_record(record)
    with held(names) as inodes:
        removed = reap_record(record, unlink=False)
        # An `ip netns add` or `ip netns exec` the run had started may end after the
        # first pass: a namespace made again, a process inside one removed by name.
        time.sleep(SETTLE_S)
        kill_in_netns(inodes)
    return list(dict.fromkeys(removed + reap_record(record)))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].endswith(".json"):
        print("usage: python -m collateral.emulate.reaper RECORD.json", file=sys.stderr)
        return 2
    record = Path(argv[0])
    try:
        while os.read(0, 4096):  # the run never writes: this returns at its death
            pass
        reap(record)
    except Exception as e:  # one line, never a traceback
        with contextlib.suppress(OSError):  # a terminal that is gone
            print(f"collateral reaper: {record}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
