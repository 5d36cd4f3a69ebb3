"""``emulate``: one trial (or an experiment file's trials) on the namespace testbed,
with real Linux TCP and the simulator's queue code in a userspace router."""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..display import short
from . import HELP
from .errors import PROG, fail, interrupted_status
from .paths import output_dir
from .scenario import (
    add_scenario_options,
    option,
    scenario_from_args_unchecked,
    warn_implausible,
)
from .simulate import add_output_options, check_figure_args, run
from .values import count

if TYPE_CHECKING:
    from ..spec import Scenario


#: Options whose simulator text is wrong on the testbed: real time, the kernel's TCP.
_KERNEL_TCP = "the testbed runs this kernel's own TCP, so it changes nothing there"
TESTBED_HELP: dict[str, dict[str, str]] = {
    "duration": {"help": "length of the run in wall-clock time, e.g. 60s, 3min (default: 60s)"},
    "seed": {
        "help": "seed of the CBR senders' departures; kernel TCP does not repeat itself,"
        " so two runs with one seed differ (default: 1)"
    },
    "tcp_flows": {"help": "bulk TCP downloads, a process each (default: 1)"},
    "uploads": {"help": "bulk TCP uploads, a process each (default: 0)"},
    "cc": {
        "help": "TCP congestion control, the kernel's module of that name (reno for"
        " newreno), which this kernel must offer; no dctcp or prague (default: newreno)"
    },
    "ecn": {
        "help": "ECN of the TCP flows: off or classic (RFC 3168; this kernel has no L4S),"
        " set per sending host (default: off)"
    },
    "profile": {"help": f"the simulator's TCP stack profile; {_KERNEL_TCP}"},
    "delayed_ack": {"help": f"the simulator's delayed-ACK switch; {_KERNEL_TCP}"},
    "rto_min": {"help": f"the simulator's minimum TCP retransmission timeout; {_KERNEL_TCP}"},
    "web_users": {
        "help": "web users: a browser process follows the model's draws over kernel TCP"
        " to a server on the Internet side (default: 0)"
    },
}


def add_parser(sub: Any) -> None:
    e = sub.add_parser(
        "emulate",
        help=HELP["emulate"],
        description="Run the same scenario as 'simulate' in real time: network namespaces, "
        "real kernel TCP, and a userspace bottleneck running the simulator's queue code. "
        "Needs root, iproute2 and ethtool; takes the scenario's duration in wall time. "
        "Rates are bit/s, sizes bytes (kB = 1000 B), times take a unit (ms, s, min; a bare "
        "number is seconds).",
    )
    e.add_argument(
        "experiment",
        metavar="EXPERIMENT.toml",
        nargs="?",
        help="an experiment file: run its trials on the testbed into a results directory"
        " (-o), in the same schema as 'collateral run', tagged mode=emulation",
    )
    e.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        help="results directory for an experiment file (default: results/<name>-emu)",
    )
    # The testbed's own limit on flows is checked after, with its own reason.
    flows = {"type": count(0, 2**31), **TESTBED_HELP["tcp_flows"]}
    uploads = {"type": count(0, 2**31), **TESTBED_HELP["uploads"]}
    add_scenario_options(e, **(TESTBED_HELP | {"tcp_flows": flows, "uploads": uploads}))
    add_output_options(e, None)
    e.add_argument(
        "--rerun-late",
        action="store_true",
        help="with an experiment file: also run again the stored trials flagged late (the"
        " router missed the accuracy target), replacing them; the old ones go to quarantine/",
    )
    e.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the raw endpoint and router logs in DIR",
    )
    from .run import add_set_option

    add_set_option(e)  # with an experiment file, as 'run' takes it
    # One trial's options, with their defaults: an experiment file sets its own.
    file_own = {"experiment", "out", "rerun_late", "overrides", "help"}
    e.set_defaults(
        one_trial_options={
            a.dest: (a.option_strings[0], a.default)
            for a in e._actions
            if a.option_strings and a.dest not in file_own
        }
    )


def run_emulate(args: argparse.Namespace) -> int:
    if args.experiment:
        from . import typed_options

        options = getattr(args, "one_trial_options", {})
        typed = typed_options(args)
        given = [
            opt
            for dest, (opt, d) in options.items()
            if dest in typed or getattr(args, dest, d) != d
        ]
        one_trial_output = ("--plot", "--window", "--json", "--keep")
        if given and given[0] in one_trial_output:
            fail(
                f"{given[0]}: the one trial's output; EXPERIMENT.toml's trials go to the"
                " results directory (-o): query, plot or report it"
            )
        if given:
            fail(
                f"{given[0]}: sets the one trial's scenario; with EXPERIMENT.toml the file"
                " sets it: edit the file, or leave the file out"
            )
        return emulate_experiment(args)
    if args.rerun_late:
        fail("--rerun-late: reruns an experiment's stored trials; give EXPERIMENT.toml")
    if args.overrides:
        fail("--set: overrides a key of an experiment file; give EXPERIMENT.toml")
    if args.out is not None:
        fail("--out: stores an experiment's trials; give EXPERIMENT.toml (one trial: --json)")
    check_figure_args(args)
    if args.keep is not None:
        output_dir("--keep", args.keep, "logs/")
    scenario = check_emulation(args)  # a bad value refused first, in one line
    from . import typed_options

    typed = typed_options(args)
    for dest in ("profile", "delayed_ack", "rto_min"):  # the simulator's stack alone
        if dest in typed:  # said, not refused: a scenario shared with simulate has them
            print(f"{PROG}: warning: {option(dest)}: {_KERNEL_TCP}", file=sys.stderr)
    return run(scenario, args, emulated=True)


def check_emulation(a: argparse.Namespace) -> Scenario:
    """``emulate``'s options against the testbed's limits (a real-time run with a
    process per flow), before the scenario is built, then the scenario; nothing is
    created until all of it passed."""
    from ..emulate import (
        MAX_TESTBED_TCP_FLOWS,
        MIN_TESTBED_CBR_INTERVAL_NS,
        EmulationError,
        check_testbed,
        check_traffic,
        kernel_congestion_controls,
    )
    from ..units import parse_duration

    if a.tcp_flows + a.uploads > MAX_TESTBED_TCP_FLOWS:
        opt, n = ("--downloads", a.tcp_flows) if not a.uploads else ("--uploads", a.uploads)
        both = f" (+ {a.tcp_flows} downloads)" if a.uploads else ""
        fail(
            f"{opt}: {n}{both}: the testbed runs at most {MAX_TESTBED_TCP_FLOWS}"
            " flows (a process each, in real time); simulate more"
        )
    try:
        interval = parse_duration(a.cbr_interval)
    except ValueError:
        interval = None  # build_scenario says what is wrong with it
    testbed_cbr = a.cbr != "none" and not a.app
    if interval is not None and testbed_cbr and 0 < interval < MIN_TESTBED_CBR_INTERVAL_NS:
        fail(
            f"--cbr-interval: {short(a.cbr_interval, 60)}: below what a userspace sender"
            f" can keep; the testbed takes at least {MIN_TESTBED_CBR_INTERVAL_NS // 1000}us"
        )
    scenario = scenario_from_args_unchecked(a)
    try:
        check_traffic(scenario)
        check_testbed(scenario)
        kernel_congestion_controls(scenario)  # --cc htcp: named here, not after set-up
    except EmulationError as e:
        fail(testbed_error(a, e, "emulate"))
    warn_implausible(a, scenario)  # of a scenario the testbed takes: a refusal is enough
    return scenario


def testbed_error(a: argparse.Namespace, e: Exception, command: str) -> str:
    """A testbed limit named by the option that set the value (``--rtt: ...``), as the
    testbed took it; any other problem after the command's name."""
    from ..spec import flat_param

    param = flat_param(getattr(e, "path", ()))
    if getattr(e, "path", ()) and hasattr(a, param):
        return f"{option(param)}: {getattr(e, 'reason', e)}"
    return str(e) if str(e).startswith(f"{command}:") else f"{command}: {e}"


def emulate_experiment(args: argparse.Namespace) -> int:
    from ..emulate import (
        EmulationError,
        check_ready,
        check_testbed,
        check_traffic,
        emulate_experiment,
        store_line,
    )
    from ..experiment import ExperimentError, load_experiment
    from ..store import StoreError, open_store

    if args.out is not None:
        output_dir("--out", args.out, "results/NAME-emu")
    from .run import set_overrides

    try:
        exp = load_experiment(args.experiment, set_overrides(args.overrides))
    except ExperimentError as e:
        fail(str(e))
    for p in exp.points:  # every point within the testbed's limits before the first runs
        try:
            check_traffic(p.scenario)
            check_testbed(p.scenario)
        except EmulationError as e:
            where = f"point {p.index}" + (f" {short(p.values, 80)}" if p.values else "")
            fail(f"emulate: {exp.source}: {where}: {e}")
    for t in itertools.islice(exp.iter_trials(), 1):
        try:
            check_ready(t.scenario())
        except EmulationError as e:
            fail(f"emulate: {e}")
    out = args.out if args.out is not None else str(Path("results") / f"{exp.name}-emu")
    if args.out is None:
        output_dir("--out", out, "results/NAME-emu")

    def progress(n: int, total: int, trial: Any) -> None:
        print(f"  trial {n}/{total} done ({trial.key})", file=sys.stderr)

    def notify(line: str) -> None:
        print(f"  {line}", file=sys.stderr)

    try:
        ran, total = emulate_experiment(exp, out, progress, args.rerun_late, notify)
    except (EmulationError, StoreError) as e:
        fail(f"emulate: {e}")
    except KeyboardInterrupt as e:
        print("collateral: interrupted; finished trials are kept, rerun to resume", file=sys.stderr)
        return interrupted_status(e)
    print(f"{ran} trials emulated ({total} in the experiment); results in {out}")
    again = f"collateral emulate {args.experiment} -o {out} --rerun-late"
    line = store_line(open_store(out).summary(), rerun=again)
    if line:
        print(line)
    return 0
