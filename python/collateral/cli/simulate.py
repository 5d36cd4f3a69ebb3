"""``simulate`` and ``demo``: one trial (or several seeds, or several queues side by
side) printed as a table or JSON, with the cwnd / CBR delay figure."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..display import short
from . import HELP
from .errors import fail, interrupted_status
from .paths import console, output_file
from .scenario import add_scenario_options, fail_param, scenario_from_args, versus_scenarios
from .values import count

if TYPE_CHECKING:
    from ..spec import Scenario

#: The most trials ``simulate --trials`` runs (only the first keeps its traces).
MAX_CLI_TRIALS = 1000


def add_output_options(p: argparse.ArgumentParser, plot_default: str | None) -> None:
    g = p.add_argument_group("output")
    g.add_argument(
        "--plot",
        metavar="PATH",
        default=plot_default,
        help="write the cwnd / CBR delay figure as PNG (also as SVG, PDF, ... if PATH ends"
        " .svg, .pdf, ...)" + (f" (default: {plot_default})" if plot_default else ""),
    )
    g.add_argument(
        "--window",
        metavar="TIME",
        default="10s",
        help="length of the plotted window, starting after the warm-up (default: 10s)",
    )
    g.add_argument(
        "--json", action="store_true", help="print the summary as JSON instead of a table"
    )


def add_parser(sub: Any) -> None:
    s = sub.add_parser(
        "simulate",
        help=HELP["simulate"],
        description="Run one trial and "
        "print goodput, CBR loss and additional delay. Rates are bit/s, sizes "
        "bytes (kB = 1000 B), times take a unit (ms, s, min; a bare number is seconds).",
    )
    add_scenario_options(s)
    s.add_argument(
        "--trials",
        metavar="N",
        type=count(1, MAX_CLI_TRIALS),
        default=1,
        help="run N trials with seeds --seed, --seed+1, ... on all cores and show each "
        "number's median with its range [min–max] (default: 1)",
    )
    s.add_argument(
        "--versus",
        metavar="QUEUE",
        action="append",
        help="also run the same trials with another queue and show the queues side by "
        "side: a drop-tail limit (64kB, 100p) or an --aqm value (fq_codel, "
        "cake:bandwidth=19Mbit); repeatable",
    )
    add_output_options(s, None)
    d = sub.add_parser(
        "demo",
        help=HELP["demo"],
        description="ADSL1 (1.5Mbit/256kbit), 100 ms RTT, 20 kB FB-strict "
        "queue, one NewReno flow down (Linux 2.6.25 stack), CBR both ways (186 B / 20 ms, 1 ms "
        "jitter), 60 s with 10 s warm-up, seed 1.",
    )
    add_output_options(d, "out/demo.png")


def run_simulate(args: argparse.Namespace) -> int:
    check_figure_args(args)
    return run(scenario_from_args(args), args)


def run_demo(args: argparse.Namespace) -> int:
    from ..spec import demo_scenario

    check_figure_args(args)
    return run(demo_scenario(), args)


def window_s(text: str) -> float:
    from ..units import parse_duration

    try:
        ns = parse_duration(text)
    except ValueError as e:
        fail(f"--window: {e}")
    if ns <= 0:
        fail(f"--window: {text!r} must be positive, e.g. 10s")
    return ns / 1e9


def check_figure_args(args: argparse.Namespace) -> float:
    """--plot and --window, before anything runs; returns the window in seconds."""
    window = window_s(args.window)
    if args.plot is not None:
        output_file("--plot", args.plot, "out/run.png", figure=True)
    else:
        from . import typed_options

        if "window" in typed_options(args):  # not dropped in silence
            import warnings

            warnings.warn(
                "--window: the plotted window; without --plot nothing is drawn", stacklevel=2
            )
    return window


def run(scenario: Scenario, args: argparse.Namespace, emulated: bool = False) -> int:
    from .. import _native
    from ..result import Result

    window = window_s(args.window)  # checked with --plot before the scenario was built
    if emulated:
        from ..emulate import EmulationError, emulate

        try:
            result = emulate(scenario, workdir=args.keep, keep=bool(args.keep))
        except EmulationError as e:
            fail(f"emulate: {e}")
        except KeyboardInterrupt as e:
            print("collateral: interrupted; the testbed was torn down", file=sys.stderr)
            return interrupted_status(e)
    else:
        trials = getattr(args, "trials", 1)
        variants = versus_scenarios(args, scenario) if getattr(args, "versus", None) else []
        bases = [sc for _, sc in variants] or [scenario]
        if trials > 1 and scenario.seed + trials - 1 >= 2**64:
            fail_param(args, "seed", f"{scenario.seed} + {trials} trials passes 2^64 - 1")
        from ..spec import TraceSpec

        # The tables and JSON need summaries only: the first trial keeps its traces when
        # --plot draws them (the core records nothing it was not asked for).
        quiet = TraceSpec.off()
        scenarios = [
            base.model_copy(update={"seed": scenario.seed + k, "trace": quiet})
            if (v, k) != (0, 0) or args.plot is None
            else base
            for v, base in enumerate(bases)
            for k in range(trials)
        ]
        try:
            raws = _native.simulate_many([sc.to_native_json() for sc in scenarios], 0)
        except ValueError as e:  # the core stopped a trial (e.g. its memory limit)
            fail(f"simulate: {e}")
        results = [Result(raw, sc) for raw, sc in zip(raws, scenarios, strict=True)]
        result = results[0]
        groups = [results[v * trials : (v + 1) * trials] for v in range(len(bases))]
        if args.json and (trials > 1 or variants):
            if trials > 1 and (same := identical_note(groups[0])) is not None:
                print(same, file=sys.stderr)
            doc: dict[str, Any] = {"trials": [json.loads(r.to_json()) for r in groups[0]]}
            if variants:
                doc = {
                    "queues": [
                        {"queue": label, "trials": [json.loads(r.to_json()) for r in g]}
                        for (label, _), g in zip(variants, groups, strict=True)
                    ]
                }
            print(json.dumps(doc))
            return plot_run(result, args, window, note=f" (seed {scenario.seed})")
        if variants:
            from ..trial_tables import compare_table

            labelled = [(label, g) for (label, _), g in zip(variants, groups, strict=True)]
            console().print(compare_table(labelled))
            from ..scorecard import compare_scores

            if (scores := compare_scores(labelled)) is not None:
                console().print(scores)
            return plot_run(result, args, window, note=f" ({variants[0][0]}, seed {scenario.seed})")
        if trials > 1:
            from ..trial_tables import trials_table

            console().print(trials_table(results))
            print_scores(results)
            if (small := small_queue_note(scenario, args)) is not None:
                print(small)
            if (same := identical_note(results)) is not None:
                print(same)
            return plot_run(result, args, window, note=f" (seed {scenario.seed})")
    if args.json:
        print(result.to_json())
    else:
        console().print(result.table())
        print_scores([result])
        if (small := small_queue_note(scenario, args)) is not None:
            print(small)
    rc = plot_run(result, args, window)
    if emulated:  # whether the testbed kept real time, last (stderr beside JSON)
        from ..emulate import trial_line

        line = trial_line(result.summary)
        if line:
            print(line, file=sys.stderr if args.json else sys.stdout)
    return rc


def small_queue_note(sc: Scenario, args: argparse.Namespace) -> str | None:
    """A line when the queue is the default 20 kB (the studies' ADSL queue) and holds
    under a quarter of what a TCP flow has in flight at the link's rate: one flow then
    cannot keep the link full, which reads as a slow link rather than a small queue."""
    from ..spec.link import QueueSpec
    from ..units import fmt_duration, fmt_rate, fmt_size

    q, rate = sc.down.queue, sc.down.rate
    given = getattr(args, "queue", "set by the command")  # the demo has no --queue
    if given is not None or not isinstance(q, QueueSpec) or q.limit.unit != "bytes":
        return None
    if not rate or not sc.tcp:
        return None
    bdp = rate * sc.rtt / 8e9
    if q.limit.amount >= bdp / 4:
        return None
    drain_ms = q.limit.amount * 8e3 / rate
    return (
        f"note: the default {fmt_size(q.limit.amount)} queue drains in {drain_ms:.2g} ms at"
        f" {fmt_rate(rate)}, under a quarter of the {fmt_size(round(bdp, -3))} a TCP flow has"
        f" in flight over the {fmt_duration(sc.rtt)} round trip: one flow cannot keep the"
        " link full; give the gateway's buffer with --queue (e.g. "
        f"{fmt_size(round(bdp, -3))}) or an --aqm"
    )


def identical_note(results: list[Any]) -> str | None:
    """A line saying that trials of several seeds came out the same (nothing in the
    scenario draws on the seed: a workload's flows start at fixed times and no CBR
    jitter or start spread is asked for), so their ranges are no spread; else None."""
    docs = {json.dumps(r.summary, sort_keys=True, default=str) for r in results}
    if len(results) < 2 or len(docs) > 1:
        return None
    from ..display import SEED_FREE

    return (
        f"note: the {len(results)} trials came out identical: {SEED_FREE}, so the ranges"
        " say nothing of the spread"
    )


def print_scores(results: list[Any]) -> None:
    """The workload's scores below the summary table, when the trials have them."""
    from ..scorecard import scores_table

    table = scores_table(results)
    if table is not None:
        console().print(table)


def plot_run(result: Any, args: argparse.Namespace, window: float, note: str = "") -> int:
    """--plot: the cwnd / CBR delay figure of ``result`` (the first trial of several)."""
    if args.plot is not None:
        from ..plot.trial import fig_cwnd_delay

        t0 = result.warmup_s
        try:
            paths = fig_cwnd_delay(result, t0, min(t0 + window, result.duration_s), args.plot)
        except OSError as e:  # the directory went away while the trial ran
            fail(f"--plot: {short(args.plot, 60)}: {e.strerror or e}")
        out = sys.stderr if args.json else sys.stdout  # keep stdout pure JSON
        for path in paths:
            print(f"wrote {path}{note}", file=out)
    return 0
