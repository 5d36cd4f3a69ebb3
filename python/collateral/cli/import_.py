"""``import``: measurement files of real clients (irtt, iperf3 -J, Flent, networkQuality
-c, crusader export) as a trial of mode "measured" in a results directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..display import short
from . import HELP
from .errors import fail
from .paths import output_dir


def add_parser(sub: Any) -> None:
    c = sub.add_parser(
        "import",
        help=HELP["import"],
        description="Read measurement files of one run (irtt's JSON, iperf3 -J, Flent's "
        ".flent.gz, networkQuality -c, crusader export; the tool is told by the file) and "
        "store them as one trial of mode 'measured' in the simulator's schema, so query, "
        "plot, compare and report read it as a simulated one. Several files of one run "
        "(irtt beside iperf3) are put on one clock by their start times. With --like, the "
        "trial stands for that experiment's (one-point) link: 'collateral compare SIM_DIR "
        "DIR' pairs it with the simulated trial.",
    )
    c.add_argument("files", metavar="FILE", nargs="+", help="measurement files of one run")
    c.add_argument("-o", "--output", required=True, metavar="DIR", help="results directory")
    c.add_argument(
        "--like",
        metavar="EXPERIMENT",
        help="experiment file of the link measured (one point): its trial key, parameters, "
        "warm-up and base delays",
    )
    c.add_argument("--name", metavar="NAME", help="experiment name without --like (measured)")


def run(args: argparse.Namespace) -> int:
    from ..measured import ImportProblem, combine, read
    from ..measured.importer import import_measurement
    from ..store import StoreError, open_store

    out = output_dir("-o", args.output, "results/home-link")
    like = None
    if args.like is not None:
        from ..experiment import ExperimentError, load_experiment

        try:
            like = load_experiment(args.like)
        except ExperimentError as e:
            fail(f"--like: {e}")
    _refuse_copies(args.files)
    try:
        m = combine([read(f) for f in args.files])
        part, row = import_measurement(m, out, like, args.name)
    except ImportProblem as e:
        fail(str(e))
    except StoreError as e:
        fail(f"-o: {e}")
    if part is None:
        print(f"{short(str(out), 60)}: already holds this measurement (trial {row['key']})")
        return 0
    gp = [
        f"{d} {row[f'{d}_goodput_bps'] / 1e6:.2f} Mbit/s"
        for d in ("down", "up")
        if row.get(f"{d}_goodput_bps")
    ]
    # Probes alone say nothing of the load they ran beside: not "idle".
    unknown = not m.throughput and all(ph.load == "idle" for ph in m.phases)
    idle = "RTT (the files record no load)" if unknown else "idle RTT"
    lat = [
        f"{w} {row[k] * 1e3:.1f} ms"
        for w, k in ((idle, "latency_idle_s"), ("loaded RTT", "latency_loaded_s"))
        if row.get(k) is not None
    ]
    # A speed test loaded one direction after the other: each phase's own latency.
    phases = [
        f"{w} {row[k] * 1e3:.1f} ms"
        for w, k in (("download", "latency_loaded_down_s"), ("upload", "latency_loaded_up_s"))
        if row.get(k) is not None
    ]
    if phases and row.get("latency_loaded_s") is not None:
        lat[-1] += f" ({', '.join(phases)})"
    if row.get("bufferbloat_grade"):  # the phases' increases averaged, as DSLReports does
        lat.append(f"bufferbloat grade {row['bufferbloat_grade']}")
    print(f"imported {m.tool} ({len(args.files)} file(s)) into {out}: trial {row['key']}")
    if gp or lat:
        print("  " + ", ".join(gp + lat))
    runs = len(open_store(out).done_keys())
    if runs > 1:  # beside the runs imported before: query and compare read them all
        print(
            f"  {out} now holds {runs} runs; infer and advise --from read a directory of"
            " one run (give each its own -o)"
        )
    return 0


def _refuse_copies(files: list[str]) -> None:
    """One file given twice (or two copies of it) would count its flows twice: the
    second is refused, by name, before anything is read into the store."""
    import hashlib

    seen: dict[str, str] = {}
    for f in files:
        try:
            digest = hashlib.sha256(Path(f).read_bytes()).hexdigest()
        except OSError:
            continue  # read() names the unreadable file
        if digest in seen:
            fail(f"FILE: {short(f, 60)}: the same measurement as {short(seen[digest], 60)}")
        seen[digest] = f
