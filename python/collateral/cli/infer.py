"""``infer``: the bottleneck of a measured run (``collateral import``'s results
directory): base RTT, capacity per direction, FIFO or AQM, the FIFO's buffer — each
with its interval — and what could not be inferred."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..display import fmt_cell, short
from . import HELP
from .errors import PROG, fail
from .paths import console, input_store, output_file


def add_parser(sub: Any) -> None:
    c = sub.add_parser(
        "infer",
        help=HELP["infer"],
        description="Infer the bottleneck of a run imported with 'collateral import' (probes "
        "and load in one measurement, e.g. irtt beside iperf3 downloading, then uploading, "
        "with idle time around them): base RTT from the idle probes, capacity per direction "
        "from the settled load, whether a FIFO or an AQM holds the queue (does the delay "
        "stay near its ceiling or settle at a target), and the FIFO's buffer in bytes and "
        "ms. Each figure comes with its interval and how it was found; what could not be "
        "inferred is said, with why.",
    )
    c.add_argument("directory", metavar="DIR", help="a results directory of one measured run")
    add_line_options(c)
    c.add_argument(
        "--json",
        action="store_true",
        help="the inference alone as JSON (not with --replay or --what-if, whose tables it"
        " does not hold)",
    )
    c.add_argument(
        "--replay",
        action="store_true",
        help="run the inferred link in the simulator under the measurement's own load and "
        "print measured beside replayed (probe RTT p50/p95 per phase, KS distance, bytes)",
    )
    c.add_argument(
        "--testbed",
        action="store_true",
        help="with --replay: also run the replay on the namespace testbed (real Linux TCP,"
        " real time: the measurement's length; needs root) and print it beside the simulator",
    )
    c.add_argument(
        "--what-if",
        action="store_true",
        help="the inferred link under RRUL with a call, with its queue as inferred and with "
        "FQ-CoDel, CAKE, DualPI2 and half the buffer: RPM, grade, QoO, the call's delay",
    )
    c.add_argument(
        "--figure",
        metavar="FILE",
        help="with --what-if: draw the before/after figure to FILE (.png, .svg or .pdf)",
    )


def add_line_options(p: Any, when: str = "") -> None:
    """``--framing`` and ``--sync-rate``, what the user knows of the measured line, as
    ``infer`` and ``advise --from`` take them; ``when`` prefixes their help."""
    p.add_argument(
        "--framing",
        metavar="FRAMING",
        help=when + "the line's framing when you know it (it does not show in the"
        " measurement): BYTES per packet, atm (an ADSL line: ATM cells after PPPoA VC-MUX's"
        " 10 bytes) or atm:BYTES; capacities are then line rates",
    )
    p.add_argument(
        "--sync-rate",
        metavar="DOWN[/UP]",
        help=when + "the modem's sync rate as its router shows it, e.g. 1.5Mbit/256kbit:"
        " infers the framing (ATM cells or not, the per-packet overhead) from the goodput"
        " over it, for the capacities, the replay and CAKE's overhead",
    )


def inferred_line(directory: str, args: argparse.Namespace, where: str = "") -> tuple[Any, Any]:
    """(the observations, the inference) of a measured run, with ``--framing`` or
    ``--sync-rate`` as given; a problem ends the command in one line (``where`` first)."""
    from ..inference import InferenceProblem, from_store, infer

    framing = framing_option(args.framing)
    sync = sync_option(args.sync_rate)
    if sync and framing is not None:
        fail("--sync-rate: infers the framing; leave out --framing")
    try:
        obs = from_store(directory)
        if sync:
            from ..inference.framing import infer_with_sync

            return obs, infer_with_sync(obs, sync)
        return obs, infer(obs, framing)
    except InferenceProblem as e:
        fail(f"{where}{e}")


def run(args: argparse.Namespace) -> int:
    input_store("DIR", args.directory)
    figure = None
    if args.figure is not None:
        if not args.what_if:
            fail("--figure: draws the what-if; give --what-if too")
        figure = output_file("--figure", args.figure, "whatif.png", figure=True)
    if args.testbed and not args.replay:
        fail("--testbed: runs the replay on the testbed; give --replay too")
    if args.json and (args.replay or args.what_if):
        both = "--replay" if args.replay else "--what-if"
        fail(f"--json: prints the inference alone, not {both}'s tables; give one or the other")
    obs, inf = inferred_line(args.directory, args)
    if args.json:
        print(json.dumps(inf.to_dict(), indent=1))
        return 0
    if all(e.value is None for e in inf.estimates):  # not an empty table: why, and a status
        for line in inf.not_inferred:
            print(f"not inferred: {line}")
        print(
            f"{PROG}: error: {args.directory}: nothing inferred (a run needs idle probes and"
            " a load of each direction long enough to settle: README, 'Your measured link')",
            file=sys.stderr,
        )
        return 1
    _print_inference(args, inf)
    if args.replay:
        _replay(inf, obs, args.testbed)
    if args.what_if:
        _what_if(inf, figure)
    return 0


def _replay(inf: Any, obs: Any, testbed: bool = False) -> None:
    from rich.table import Table

    from .. import simulate
    from ..inference import replay

    try:
        sc = replay.scenario(inf, obs)
    except ValueError as e:
        fail(f"--replay: {e}")
    if testbed:
        _testbed_ready(sc)  # root, tools, the kernel's CC: refused before anything runs
    runs = {"simulator" if testbed else "replayed": simulate(sc)}
    if testbed:
        runs["testbed"] = _on_testbed(sc)
    sides = {k: replay.compare(inf, obs, r) for k, r in runs.items()}
    where = "the simulator" + (" and the testbed" if testbed else "")
    t = Table(
        title=f"Measured beside replayed ({where}, the inferred link, the same load)",
        title_justify="left",
        caption="KS: Kolmogorov-Smirnov distance of the probes' RTTs (0 the same"
        " distribution, 1 none in common); an idle simulated link has no jitter, so its"
        " probes share one RTT and KS is near 1 even when the medians agree",
        caption_justify="left",
    )
    for col in (
        "",
        *(f"{k} {q}" for q in ("p50", "p95") for k in ("measured", *runs)),
        *(f"KS {k}" if testbed else "KS" for k in runs),
    ):
        t.add_column(col, justify="left" if not col else "right")
    for row in zip(*sides.values(), strict=True):
        m = row[0].measured
        if "bytes" in m:
            blank = [""] * (len(runs) + 1 + len(runs))
            got = [fmt_cell(s.replayed["bytes"], "B") for s in row]
            t.add_row(row[0].phase, fmt_cell(m["bytes"], "B"), *got, *blank)
            continue
        t.add_row(
            row[0].phase,
            *(
                fmt_cell(x.get(k), "s")
                for k in ("p50_s", "p95_s")
                for x in (m, *(s.replayed for s in row))
            ),
            *("" if s.ks is None else f"{s.ks:.2f}" for s in row),
        )
    console().print(t)
    if testbed:
        from ..emulate import trial_line

        line = trial_line(runs["testbed"].summary)
        if line:
            print(line)


def _testbed_ready(sc: Any) -> None:
    """One line where the testbed cannot run the replay (not root, a refused feature)."""
    from ..emulate import EmulationError, check_ready

    try:
        check_ready(sc)
    except EmulationError as e:
        fail(f"--testbed: {e}")


def _on_testbed(sc: Any) -> Any:
    """The replay on the testbed, in real time (the measurement's length)."""
    from ..emulate import EmulationError, emulate

    print(f"replaying on the testbed: {sc.duration / 1e9:.0f} s in real time", flush=True)
    try:
        return emulate(sc)
    except EmulationError as e:
        fail(f"--testbed: {e}")


def _what_if(inf: Any, figure: Any) -> None:
    from rich.table import Table

    from ..inference import whatif

    try:
        rows = [whatif.row(v) for v in whatif.what_if(inf)]
    except ValueError as e:
        fail(f"--what-if: {e}")
    t = Table(
        title="What if (RRUL and a G.711 call on the inferred link, 40 s)", title_justify="left"
    )
    cols = [
        ("queue", None),
        ("rpm", None),
        ("rpm_band", None),
        ("bufferbloat_grade", None),
        ("qoo_voip", None),
        ("latency_loaded_s", "s"),
        ("call_down_delay_p95_s", "s"),
        ("call_up_delay_p95_s", "s"),
        ("call_down_loss_rate", "%"),
        ("call_up_loss_rate", "%"),
    ]
    for name, unit in cols:
        # A value shown with its unit (31 ms, 2.1 %): the header drops "_s", "_rate".
        head = name.removesuffix("_s").removesuffix("_rate") if unit else name
        t.add_column(head.replace("_", " "), justify="left" if name == "queue" else "right")
    for r in rows:
        t.add_row(*(_cell(r[k], u) for k, u in cols))
    console().print(t)
    if figure is not None:
        from ..inference.figure import draw

        for f in draw(rows, figure):
            print(f"figure: {f}")


def _cell(v: Any, unit: str | None) -> str:
    if unit == "%":  # a share stored as a fraction
        return "NULL" if v is None else f"{100 * v:.1f} %"
    return fmt_cell(v, unit) if unit else _plain(v)


def _plain(v: Any) -> str:
    return "NULL" if v is None else f"{v:.0f}" if isinstance(v, float) else str(v)


def _print_inference(args: argparse.Namespace, inf: Any) -> None:
    from rich.table import Table

    t = Table(title=f"The bottleneck of {args.directory}", title_justify="left")
    for col, just in (("", "left"), ("inferred", "right"), ("interval", "right"), ("how", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for e in inf.estimates:
        if e.value is None:
            continue
        if isinstance(e.value, str):
            t.add_row(e.name, e.value, "", e.how)
            continue
        span = (
            f"{fmt_cell(e.low, e.unit)} – {fmt_cell(e.high, e.unit)}" if e.low is not None else ""
        )
        t.add_row(e.name, fmt_cell(e.value, e.unit), span, e.how)
    console().print(t)
    for line in inf.not_inferred:
        print(f"not inferred: {line}")


def framing_option(text: str | None) -> Any:
    """``--framing`` as the inference takes it (None when not given); one line on error."""
    if text is None:
        return None
    from ..inference.estimate import Framing
    from ..spec.errors import SpecError
    from ..spec.flat import parse_framing

    try:
        f = parse_framing(text)
    except SpecError as e:
        fail(f"--framing: {e.message}")
    return Framing(int(f["overhead"].rstrip("B")), f["atm"])


def sync_option(text: str | None) -> dict[str, float]:
    """``--sync-rate DOWN[/UP]`` as bit/s per direction (empty when not given)."""
    if text is None:
        return {}
    from ..units import parse_rate

    parts = str(text).split("/")
    if len(parts) > 2:
        fail(f"--sync-rate: {short(text)}: expected DOWN or DOWN/UP, e.g. 1.5Mbit/256kbit")
    out = {}
    for d, part in zip(("down", "up"), parts, strict=False):
        try:
            out[d] = float(parse_rate(part.strip()))
        except ValueError as e:
            fail(f"--sync-rate: {d}: {e}")
    return out
