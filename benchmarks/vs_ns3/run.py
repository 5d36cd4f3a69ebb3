#!/usr/bin/env python3
"""collateral vs ns-3 on the same dumbbell: speed per trial and the results side by side.

    . .venv/bin/activate && python benchmarks/vs_ns3/run.py            # 10 paired runs each
    python benchmarks/vs_ns3/run.py --runs 20 --jitter 0 --scenarios adsl1-14p,adsl1-20kB

Runs setup.sh first (installs Debian's libns3-dev when missing, compiles dumbbell.cc).
For each scenario, N paired trials (seed i on both sides) alternate ns-3 and collateral
in this one process, pinned to one core (``--core``, default 1; the ns-3 process runs
under ``taskset -c`` on the same core), which goes first alternating from pair to pair,
after one untimed trial of each. Timed: ns-3's ``Simulator::Run()`` (printed by the
program) and collateral's event loop (``wall_s`` of ``_native.simulate``, traces off);
process start-up, topology set-up and result output are excluded on both sides. The
whole call (ns-3: the process from exec to exit; collateral: ``_native.simulate`` from
Python, JSON in and dict out) is printed as well, and, where the CLI can say the trial
(one queue size both ways), ns-3's process against the whole ``collateral simulate``
command, alternating too. See README.md for the model and its
differences from ns-3's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BINARY = HERE / "build" / "dumbbell"


@dataclass(frozen=True)
class Case:
    name: str
    down: int  # bit/s
    up: int
    qdown: str  # "14p" (rule PS) or "20000B" (FB-strict)
    qup: str
    what: str


# ADSL1 with the MMSys study's queues; ADSL2 (24/1 Mbit/s) with 1 BDP at 100 ms each way
# (24 Mbit/s x 100 ms = 300 kB = 200 full packets; 1 Mbit/s x 100 ms = 12.5 kB, 9 packets).
CASES = [
    Case("adsl1-14p", 1_500_000, 256_000, "14p", "14p", "1.5M/256k, 14 packets each way"),
    Case("adsl1-20kB", 1_500_000, 256_000, "20000B", "20000B", "1.5M/256k, 20 kB each way"),
    Case("adsl2-bdp-p", 24_000_000, 1_000_000, "200p", "9p", "24M/1M, 200p down / 9p up"),
    Case("adsl2-bdp-B", 24_000_000, 1_000_000, "300000B", "12500B", "24M/1M, 300 kB / 12.5 kB"),
]


def ours_scenario(case: Case, seed: int, args: argparse.Namespace) -> str:
    from collateral.spec import (
        CbrSpec,
        FramingSpec,
        LinkSpec,
        QueueSpec,
        Scenario,
        TcpSpec,
        TraceSpec,
    )

    def link(rate: int, limit: str) -> LinkSpec:
        # A limit in packets is rule PS; in bytes FB-strict (ns-3's DropTailQueue). The
        # packet on the wire is not counted (ns-3's device has dequeued it). The 2-byte
        # PPP header ns-3 puts on every packet is on our wire too (serialisation only).
        return LinkSpec(
            rate=rate,
            queue=QueueSpec(limit=limit, rule="ps" if limit.endswith("p") else "fb-strict"),
            framing=FramingSpec(overhead="2B"),
        )

    sc = Scenario(
        seed=seed,
        duration=f"{args.duration}s",
        warmup=f"{args.warmup}s",
        rtt="100ms",
        access_rate="1Gbit",
        down=link(case.down, case.qdown),
        up=link(case.up, case.qup),
        # The `rfc` profile: NewReno with window inflation, no SACK, delayed ACK every
        # 2nd segment or 40 ms, IW 3, per-ACK growth (no ABC), RTO SRTT + max(4 RTTVAR,
        # 200 ms), 1448-byte MSS in 1500-byte packets (timestamps), 52-byte ACKs.
        tcp=[TcpSpec(cc="newreno", profile="rfc", start_spread=0)],
        cbr=[
            CbrSpec(direction=d, size="186B", interval="20ms", jitter=f"{args.jitter}ms")
            for d in ("down", "up")
        ],
        trace=TraceSpec.off(),
    )
    return sc.to_native_json()


def picked(s: dict) -> dict:
    """The figures compared with ns-3's, from a trial's summary."""
    return {
        "events": s["events"],
        "goodput_bps": s["tcp"][0]["goodput_bps"],
        "drops_down": s["queues"]["down"]["drops"],
        "drops_up": s["queues"]["up"]["drops"],
        "cbr": [
            {
                "direction": c["direction"],
                "loss_rate": c["loss_rate"],
                "delay_p50_s": c["delay_median_s"],
                "delay_p95_s": c["delay_p95_s"],
            }
            for c in s["cbr"]
        ],
    }


def run_ours(case: Case, seed: int, args: argparse.Namespace) -> dict:
    from collateral import _native

    js = ours_scenario(case, seed, args)
    t0 = time.perf_counter()
    r = _native.simulate(js)
    call = time.perf_counter() - t0
    return {"wall_s": r["wall_s"], "call_s": call, **picked(r["summary"])}


def command(case: Case, seed: int, args: argparse.Namespace) -> list[str]:
    """``collateral simulate`` with the flags that give :func:`ours_scenario`'s trial
    (:func:`same_trial` checks it); the CLI sets one queue for both directions, so only
    the cases with the same queue each way have one."""
    return [
        "taskset", "-c", str(args.core), sys.executable, "-m", "collateral", "simulate",
        "--down", str(case.down), "--up", str(case.up), "--queue", case.qdown,
        "--framing", "2", "--rtt", "100ms", "--downloads", "1", "--cc", "newreno",
        "--profile", "rfc", "--start-spread", "0", "--cbr", "both", "--cbr-size", "186B",
        "--cbr-interval", "20ms", "--jitter", f"{args.jitter}ms",
        "--duration", f"{args.duration}s", "--warmup", f"{args.warmup}s", "--seed", str(seed),
    ]  # fmt: skip


def run_command(case: Case, seed: int, args: argparse.Namespace) -> dict:
    """The whole ``collateral simulate`` process, exec to exit (its table printed)."""
    t0 = time.perf_counter()
    subprocess.run(command(case, seed, args), check=True, stdout=subprocess.DEVNULL)
    return {"call_s": time.perf_counter() - t0}


def same_trial(case: Case, args: argparse.Namespace) -> None:
    """The command runs the in-process trial: the same figures, to the last bit."""
    out = subprocess.run(
        [*command(case, 1, args), "--json"], check=True, capture_output=True, text=True
    ).stdout
    have = picked(json.loads(out)["summary"])
    want = {k: v for k, v in run_ours(case, 1, args).items() if k not in ("wall_s", "call_s")}
    if have != want:
        sys.exit(f"vs_ns3: {case.name}: the command's trial differs: {have} against {want}")


def run_ns3(case: Case, seed: int, args: argparse.Namespace) -> dict:
    cmd = [
        "taskset", "-c", str(args.core), str(BINARY),
        f"--down={case.down}", f"--up={case.up}", f"--qdown={case.qdown}",
        f"--qup={case.qup}", "--rtt_ms=100", f"--duration_s={args.duration}",
        f"--warmup_s={args.warmup}", "--cbr_bytes=186", "--interval_ms=20",
        f"--jitter_ms={args.jitter}", f"--seed={seed}",
    ]  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    call = time.perf_counter() - t0
    r = json.loads(out)
    r["call_s"] = call
    return r


# ---------------------------------------------------------------------------- output


def med_span(xs: list[float], scale: float = 1.0, fmt: str = "{:.3g}") -> str:
    xs = sorted(x * scale for x in xs)
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(xs[0])}–{fmt.format(xs[-1])}]"


def iqr(xs: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def fmt_time(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    virt = ""
    with contextlib.suppress(OSError):
        virt = subprocess.run(
            ["systemd-detect-virt"], capture_output=True, text=True, check=False
        ).stdout.strip()
    kind = f"VM ({virt})" if virt and virt != "none" else "host (no VM detected)"
    return f"{os.cpu_count()} cores, {cpu}, {kind}, {platform.system()} {platform.release()}"


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="paired trials per scenario (10)")
    ap.add_argument(
        "--scenarios",
        default=",".join(c.name for c in CASES),
        help="comma-separated: " + ", ".join(c.name for c in CASES),
    )
    ap.add_argument("--jitter", type=float, default=1.0, help="CBR gap sd in ms, both sides (1)")
    ap.add_argument("--duration", type=float, default=180.0, help="simulated seconds (180)")
    ap.add_argument("--warmup", type=float, default=10.0, help="warm-up seconds (10)")
    ap.add_argument("--core", type=int, default=1, help="the core both run on (1)")
    ap.add_argument("--json", type=Path, help="also write every trial's numbers here")
    args = ap.parse_args()
    cases = {c.name: c for c in CASES}
    chosen = [cases[n] for n in args.scenarios.split(",") if n]  # KeyError names a bad one
    if args.runs < 2:
        ap.error("--runs: at least 2")
    if args.core not in os.sched_getaffinity(0):
        ap.error(f"--core: core {args.core} is not available to this process")

    subprocess.run([str(HERE / "setup.sh")], check=True)
    try:
        import collateral  # noqa: F401
    except ImportError:
        sys.exit("vs_ns3: collateral is not importable; run ./setup.sh and . .venv/bin/activate")
    from collateral.build_info import require_release

    print(require_release("vs_ns3"))
    os.sched_setaffinity(0, {args.core})

    load0 = load()
    print(f"machine: {machine()}; load average {load0} at start")
    print(
        f"pinned to core {args.core}; {args.runs} paired trials per scenario, ns-3 and"
        " collateral alternating (who goes first alternates), after one untimed trial each"
    )
    print(
        f"trial: {args.duration:g} s simulated, {args.warmup:g} s warm-up, RTT 100 ms, one bulk"
        f" NewReno flow down, CBR 186 B / 20 ms each way (jitter sd {args.jitter:g} ms)"
    )
    print()

    raw: dict[str, dict[str, list[dict]]] = {}
    for case in chosen:
        ns3, ours = [], []
        run_ns3(case, 1000, args)  # untimed: page cache, dynamic loading, allocator
        run_ours(case, 1000, args)
        for i in range(args.runs):
            seed = i + 1
            if i % 2 == 0:
                ns3.append(run_ns3(case, seed, args))
                ours.append(run_ours(case, seed, args))
            else:
                ours.append(run_ours(case, seed, args))
                ns3.append(run_ns3(case, seed, args))
            print(
                f"  {case.name} pair {i + 1}/{args.runs}: ns-3 {fmt_time(ns3[-1]['wall_s'])},"
                f" collateral {fmt_time(ours[-1]['wall_s'])}",
                file=sys.stderr,
            )
        raw[case.name] = {"ns3": ns3, "collateral": ours}
        if case.qdown != case.qup:
            continue
        # The whole command beside ns-3's whole process (issue 33), also alternating.
        same_trial(case, args)
        run_command(case, 1000, args)
        procs, cmds = [], []
        for i in range(args.runs):
            first, second = (run_ns3, run_command) if i % 2 == 0 else (run_command, run_ns3)
            a, b = first(case, i + 1, args), second(case, i + 1, args)
            n, c = (a, b) if first is run_ns3 else (b, a)
            procs.append(n)
            cmds.append(c)
        raw[case.name] |= {"ns3_process": procs, "command": cmds}

    # Speed.
    print("Time per trial (event loop only: ns-3 Simulator::Run(), collateral's core run)")
    print("median [min–max] of the paired trials; ratio = ns-3 / collateral per pair;")
    print("min/min = the least disturbed trials' ratio (collateral-bench reports best runs)")
    hdr = f"{'scenario':<12} {'ns-3':>22} {'collateral':>24} {'ratio':>16} {'ratio IQR':>12}"
    hdr += f" {'ratio min–max':>14} {'min/min':>8}"
    print(hdr)
    print("─" * len(hdr))
    for case in chosen:
        n, o = raw[case.name]["ns3"], raw[case.name]["collateral"]
        tn = [r["wall_s"] for r in n]
        to = [r["wall_s"] for r in o]
        ratios = [a / b for a, b in zip(tn, to, strict=True)]
        lo, hi = iqr(ratios)
        print(
            f"{case.name:<12} {med_span(tn, 1e3, '{:.4g}') + ' ms':>22}"
            f" {med_span(to, 1e3, '{:.3g}') + ' ms':>24} {statistics.median(ratios):>15.0f}×"
            f" {f'{lo:.0f}–{hi:.0f}':>12} {f'{min(ratios):.0f}–{max(ratios):.0f}':>14}"
            f" {min(tn) / min(to):>7.0f}×"
        )
    print()
    print("Whole call (ns-3: process exec to exit; collateral: _native.simulate from Python)")
    print(f"{'scenario':<12} {'ns-3':>22} {'collateral':>24} {'ratio':>16}")
    for case in chosen:
        n, o = raw[case.name]["ns3"], raw[case.name]["collateral"]
        tn = [r["call_s"] for r in n]
        to = [r["call_s"] for r in o]
        ratios = [a / b for a, b in zip(tn, to, strict=True)]
        print(
            f"{case.name:<12} {med_span(tn, 1e3, '{:.4g}') + ' ms':>22}"
            f" {med_span(to, 1e3, '{:.3g}') + ' ms':>24} {statistics.median(ratios):>15.0f}×"
        )
    print()
    print("Whole command (ns-3's process against `collateral simulate` with the same trial,")
    print("each exec to exit; the cases with one queue size both ways, as the CLI sets it)")
    print(
        f"{'scenario':<12} {'ns-3':>22} {'collateral simulate':>24} {'ratio':>10} {'min–max':>12}"
    )
    for case in chosen:
        if "command" not in raw[case.name]:
            continue
        tn = [r["call_s"] for r in raw[case.name]["ns3_process"]]
        to = [r["call_s"] for r in raw[case.name]["command"]]
        ratios = [a / b for a, b in zip(tn, to, strict=True)]
        print(
            f"{case.name:<12} {med_span(tn, 1e3, '{:.4g}') + ' ms':>22}"
            f" {med_span(to, 1e3, '{:.3g}') + ' ms':>24} {statistics.median(ratios):>9.2f}×"
            f" {f'{min(ratios):.2f}–{max(ratios):.2f}':>12}"
        )
    print()
    print("Events per trial (median): each simulator's own unit, not comparable one to one")
    for case in chosen:
        n, o = raw[case.name]["ns3"], raw[case.name]["collateral"]
        en = statistics.median(r["events"] for r in n)
        eo = statistics.median(r["events"] for r in o)
        tn = statistics.median(r["wall_s"] for r in n)
        to = statistics.median(r["wall_s"] for r in o)
        print(
            f"  {case.name:<12} ns-3 {en:>10,.0f} ({en / tn / 1e6:.2f} M/s)"
            f"   collateral {eo:>8,.0f} ({eo / to / 1e6:.1f} M/s)"
        )
    print()

    # Results.
    print("Results: median [min–max] over the trials (seed i on both sides: different")
    print("random streams, so compare distributions, not pairs). Delay: CBR one-way delay")
    print("minus the empty path's, in ms.")
    rows = [
        ("TCP goodput (Mbit/s)", lambda r: r["goodput_bps"], 1e-6, "{:.4g}"),
        ("bottleneck drops down", lambda r: r["drops_down"], 1, "{:.0f}"),
        ("bottleneck drops up", lambda r: r["drops_up"], 1, "{:.0f}"),
    ]
    for j, d in enumerate(("down", "up")):
        rows += [
            (f"CBR {d} loss (%)", lambda r, j=j: r["cbr"][j]["loss_rate"], 100, "{:.3g}"),
            (f"CBR {d} delay p50 (ms)", lambda r, j=j: r["cbr"][j]["delay_p50_s"], 1e3, "{:.3g}"),
            (f"CBR {d} delay p95 (ms)", lambda r, j=j: r["cbr"][j]["delay_p95_s"], 1e3, "{:.3g}"),
        ]
    for case in chosen:
        n, o = raw[case.name]["ns3"], raw[case.name]["collateral"]
        print(f"{case.name} ({case.what})")
        print(f"  {'':<24} {'ns-3':>26} {'collateral':>26}")
        for label, get, scale, fmt in rows:
            print(
                f"  {label:<24} {med_span([get(r) for r in n], scale, fmt):>26}"
                f" {med_span([get(r) for r in o], scale, fmt):>26}"
            )
    print()
    print(f"load average {load()} at the end (start: {load0}); a shared VM is noisy:")
    print("quote the ratios, not the absolute times.")
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, **raw}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
