"""Benchmark (not a test): blind inference of the bottleneck from real clients' runs.

Each setting below is measured through the testbed (``collateral shell``: the
simulator's link and queue in the userspace router, kernel TCP) with real clients, as a
user measures a line: ``irtt`` probes every 20 ms for the whole run, ``iperf3 -R``
downloads (4 CUBIC streams, as speed tests use several) for 10 s after 5 s idle, then,
after 5 s idle, ``iperf3`` uploads (4 streams) for 10 s, then 8 s idle — on the ADSL
line 30 s each (:func:`load_s`). The clients'
JSON files are written per setting with the truth beside them (``truth.json``);
``infer`` then imports each run (``collateral import``), infers its bottleneck (never
seeing the truth; told only an ADSL line's ATM framing, which its user knows), replays
it in the simulator, and prints true beside inferred, then measured beside replayed.

    sudo .venv/bin/python benchmarks/infer_blind.py measure -o /tmp/blind   # ~15 min
    .venv/bin/python benchmarks/infer_blind.py infer /tmp/blind
    .venv/bin/python benchmarks/infer_blind.py infer /tmp/blind --sync-rate  # framing too
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

#: name → (link options as `collateral shell` takes them, queue options). The ADSL1 line
#: is framed in ATM cells (PPPoA VC-MUX), which its user knows and says (--framing atm);
#: nothing else is told to the inference.
ADSL1 = {"link": "adsl1", "framing": "atm"}
CABLE = {"down": "50Mbit", "up": "10Mbit", "rtt": "30ms"}
FIBRE = {"down": "200Mbit", "up": "20Mbit", "rtt": "20ms"}
SETTINGS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "adsl1-fifo-19k": (ADSL1, {"queue": "19kB"}),
    "adsl1-fifo-60k": (ADSL1, {"queue": "60kB"}),
    "adsl1-codel": (ADSL1, {"aqm": "codel"}),
    "adsl1-fq_codel": (ADSL1, {"aqm": "fq_codel"}),
    "adsl1-cake": (ADSL1, {"aqm": "cake"}),
    "cable-fifo-188k": (CABLE, {"queue": "188kB"}),
    "cable-fifo-500k": (CABLE, {"queue": "500kB"}),
    "cable-codel": (CABLE, {"aqm": "codel"}),
    "cable-fq_codel": (CABLE, {"aqm": "fq_codel"}),
    "cable-cake": (CABLE, {"aqm": "cake"}),
    "fibre-fifo-400k": (FIBRE, {"queue": "400kB"}),
    "fibre-fifo-1m": (FIBRE, {"queue": "1000kB"}),
    "fibre-codel": (FIBRE, {"aqm": "codel"}),
    "fibre-fq_codel": (FIBRE, {"aqm": "fq_codel"}),
}
IDLE_S, LOAD_S, SLOW_LOAD_S = 5, 10, 30


def load_s(name: str) -> int:
    """How long each load runs. A load must last many of its round trips to settle, and
    its count at either end is off by what the receiver holds behind a loss (about a
    window): on ADSL1's upstream, behind a 60 kB FIFO, a round trip takes 2.3 s and four
    CUBIC flows deliver about 20 packets a second, so a 10 s upload held 4 round trips
    and its ends' error was up to a quarter of its bytes (the capacity came out 14 %
    low). The slow line's loads run 30 s, still half a Flent test's default 60 s."""
    return SLOW_LOAD_S if SETTINGS[name][0] is ADSL1 else LOAD_S


SCRIPT = (
    "irtt client -Q -i 20ms -l 60 -d {total}s -o {out}/irtt.json $COLLATERAL_SERVER &"
    " sleep {idle}; iperf3 -c $COLLATERAL_SERVER -R -P 4 -C cubic -t {load} -J > {out}/down.json;"
    " sleep {idle}; iperf3 -c $COLLATERAL_SERVER -P 4 -C cubic -t {load} -J --get-server-output"
    " > {out}/up.json;"
    " wait"
)


def cli_options(opts: dict[str, str]) -> list[str]:
    return [x for k, v in opts.items() for x in (f"--{k}", v)]


def measure(name: str, out: Path) -> None:
    """One setting through the testbed: the clients' files and the truth in ``out``."""
    link, queue = SETTINGS[name]
    out.mkdir(parents=True, exist_ok=True)
    load = load_s(name)
    total = 3 * IDLE_S + 2 * load + 8
    script = SCRIPT.format(total=total, out=out, idle=IDLE_S, load=load)
    servers = ["--server", "iperf3 -s -J -B 198.18.0.1", "--server", "irtt server -b 198.18.0.1"]
    cmd = [sys.executable, "-m", "collateral", "shell", *cli_options(link | queue), *servers]
    p = subprocess.run([*cmd, "--", "sh", "-c", script], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{name}: the shell failed: {p.stderr.strip()}")
    # The shell's last line: what the link carried and whether the router kept real time
    # (a late router's delays are partly its own), kept beside the clients' files.
    router = p.stderr.strip().splitlines()[-1]
    print(f"{name}: {router}", flush=True)
    (out / "router.txt").write_text(router + "\n")
    (out / "truth.json").write_text(json.dumps({"link": link, "queue": queue}, indent=1))


def truth(name: str) -> dict[str, Any]:
    """What the testbed was set to: the line rates (the inference is told the ADSL
    line's framing, so it infers line rates too), the propagation RTT, the limit."""
    from collateral.spec import build_scenario

    link, queue = SETTINGS[name]
    sc = build_scenario(**link, **({"queue": queue["queue"]} if "queue" in queue else {}))
    fifo = "aqm" not in queue
    return {
        "base_rtt": sc.rtt / 1e9,
        "capacity_down": sc.down.rate,
        "capacity_up": sc.up.rate,
        "fifo": fifo,
        "buffer": sc.down.queue.limit.amount if fifo else None,
    }


def infer_all(root: Path, sync: bool = False) -> None:
    """Imports and infers every measured setting under ``root``; prints true against
    inferred, then measured against replayed. ``sync``: told each line's sync rate (its
    true rates, which a router shows) in place of the ADSL line's framing, so the
    framing is inferred too."""
    import collateral
    from collateral.inference import from_store, infer, replay
    from collateral.inference.estimate import Framing
    from collateral.inference.framing import infer_with_sync
    from collateral.spec.flat import ATM_DEFAULT_OVERHEAD

    rows, sides = [], []
    for name in SETTINGS:
        d = root / name
        if not (d / "truth.json").exists():
            continue
        store = d / "imported"
        # Imported afresh each time: a store of an earlier build would gain a second trial.
        shutil.rmtree(store, ignore_errors=True)
        files = [str(d / f) for f in ("irtt.json", "down.json", "up.json")]
        p = subprocess.run(
            [sys.executable, "-m", "collateral", "import", *files, "-o", str(store)],
            capture_output=True,
            text=True,
        )
        if p.returncode != 0:
            raise SystemExit(f"{name}: import failed: {p.stderr.strip()}")
        obs = from_store(store)
        told = SETTINGS[name][0].get("framing")
        t = truth(name)
        if sync:
            inf = infer_with_sync(obs, {d: t[f"capacity_{d}"] for d in ("down", "up")})
            f = inf.framing
            print(
                f"{name:18s} framing true {told or 'none'}"
                f" ({ATM_DEFAULT_OVERHEAD if told else 0} B)"
                f" / inferred {'none' if f is None else ('atm' if f.atm else 'none')}"
                + ("" if f is None else f" ({_span(inf.get('framing_overhead'))})")
                + "".join(f"; {x}" for x in inf.not_inferred if x.startswith("link framing"))
            )
        else:
            inf = infer(obs, Framing(ATM_DEFAULT_OVERHEAD, True) if told == "atm" else None)
        got = {e.name: e.value for e in inf.estimates}
        rows.append((name, t, got))
        try:
            sides.append(
                (name, replay.compare(inf, obs, collateral.simulate(replay.scenario(inf, obs))))
            )
        except ValueError as e:
            sides.append((name, str(e)))
    print_truth(rows)
    print_replay(sides)


def _span(e: Any) -> str:
    return f"{e.value:.0f} B, {e.low:.0f}-{e.high:.0f} B"


def _err(got: Any, want: float) -> str:
    return "-" if not isinstance(got, float) else f"{(got / want - 1) * 100:+.1f} %"


def print_truth(rows: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> None:
    print(
        "setting            base RTT true/inferred   capacity down (err)   capacity up (err)"
        "   queue down/up (true)   buffer down, up (true; err)"
    )
    hits = [0, 0]
    for name, t, g in rows:
        kinds = []
        for d in ("down", "up"):
            q = g.get(f"queue_{d}")
            ok = q is not None and (q == "fifo") == t["fifo"]
            hits[0] += ok
            hits[1] += 1
            kinds.append(f"{q or '-'}{'' if ok else ' (WRONG)'}")
        base = g.get("base_rtt")
        bufs = ""
        if t["fifo"]:
            got = [g.get(f"buffer_{d}") for d in ("down", "up")]
            bufs = ", ".join(f"{(b or 0) / 1e3:.1f} kB ({_err(b, t['buffer'])})" for b in got)
            bufs += f" (true {t['buffer'] / 1e3:.0f} kB)"
        caps = [
            f"{(g.get(k) or 0) / 1e6:8.3f} ({_err(g.get(k), t[k])})"
            for k in ("capacity_down", "capacity_up")
        ]
        base_ms = (base or float("nan")) * 1e3
        print(
            f"{name:18s} {t['base_rtt'] * 1e3:6.1f} / {base_ms:6.2f} ms"
            f" ({base_ms - t['base_rtt'] * 1e3:+.2f})   {caps[0]}   {caps[1]}"
            f"   {' / '.join(kinds)} ({'fifo' if t['fifo'] else 'aqm'})   {bufs}"
        )
    print(f"FIFO or AQM right in {hits[0]} of {hits[1]} directions")


def print_replay(sides: list[tuple[str, Any]]) -> None:
    print("\nsetting            phase      RTT p50 measured/replayed (err)   p95 (err)   KS")
    for name, ss in sides:
        if isinstance(ss, str):
            print(f"{name:18s} not replayed: {ss}")
            continue
        for s in ss:
            m, r = s.measured, s.replayed
            if "bytes" in m:
                print(
                    f"{name:18s} {s.phase:10s} {m['bytes'] / 1e6:.3f} / {r['bytes'] / 1e6:.3f} MB"
                    f" ({_err(r['bytes'], m['bytes'])})"
                )
            elif m and r:
                print(
                    f"{name:18s} {s.phase:10s} {m['p50_s'] * 1e3:7.1f} / {r['p50_s'] * 1e3:7.1f} ms"
                    f" ({_err(r['p50_s'], m['p50_s'])})   {m['p95_s'] * 1e3:7.1f} / "
                    f"{r['p95_s'] * 1e3:7.1f} ms ({_err(r['p95_s'], m['p95_s'])})   {s.ks:.2f}"
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("-o", "--out", type=Path, required=True)
    m.add_argument("--only", nargs="*", choices=sorted(SETTINGS), default=list(SETTINGS))
    i = sub.add_parser("infer")
    i.add_argument("root", type=Path)
    i.add_argument(
        "--sync-rate",
        action="store_true",
        help="tell each line's sync rate (its true rates), not its framing: infer that too",
    )
    a = ap.parse_args()
    if a.cmd == "infer":
        infer_all(a.root, a.sync_rate)
        return
    if a.cmd == "measure":
        for name in a.only:
            measure(name, a.out / name)
            print(f"{name}: measured", flush=True)


if __name__ == "__main__":
    main()
