"""``advise``: which queue and congestion control keep an application within its
budget on a link, with the evidence."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..spec.fields import BY_NAME
from . import HELP
from .errors import fail
from .paths import console, output_file
from .scenario import add_scenario_options
from .values import count, share


def add_parser(sub: Any) -> None:
    from ..advise import APP_ALIASES, APPS, MAX_TCP_FLOWS, MAX_TRIALS

    a = sub.add_parser(
        "advise",
        help=HELP["advise"],
        description="Simulate the link with bulk downloads and uploads beside a real-time"
        " application for drop-tail queues of 1/4 to 4 BDP (each direction its own), your"
        " current queue, CoDel, FQ-CoDel (with and without ECN), PIE, CAKE (besteffort;"
        " diffserv4 with the call marked EF) and DualPI2 (classic; L4S flows) under each"
        " congestion control. Recommended: of the candidates that keep the application's"
        " packets within its one-way delay budget (at most --target late or lost), and"
        " whose goodput is within --tolerance of the best, the one that adds the least"
        " delay.",
    )
    # The link as every command that takes a scenario names it.
    add_scenario_options(
        a, only=("link", "down", "up", "down_trace", "up_trace", "leo", "up_docsis", "rtt")
    )
    a.add_argument(
        "--app",
        choices=[*APPS, *APP_ALIASES],
        help="the real-time application (g711, quake3 and wow, as simulate names them, are"
        " voip, fps and mmo; video: a GCC call, as --video gcc); default: voip, or video"
        " with --video",
    )
    # One call: each call makes its own groups, and two would both be "traffic".
    add_scenario_options(
        a,
        only=(
            *("video", "video_direction", "video_max_rate"),
            *("tcp_flows", "uploads", "web_users", "profile"),
        ),
        video={"help": "the application is a video call whose rate this controller sets"},
        # None: not given (--from then loads both directions, as the measurement did).
        tcp_flows={
            "type": count(0, MAX_TCP_FLOWS),
            "default": None,
            "help": "bulk downloads (default: 1)",
        },
        uploads={
            "type": count(0, MAX_TCP_FLOWS),
            "default": None,
            "help": "bulk TCP uploads (from the home to the Internet side: they fill the"
            " upstream queue, where an asymmetric link's call suffers most) (default: 0;"
            " with --from, 1: the measurement loaded the upstream too)",
        },
    )
    from ..vocabulary import WORKLOADS

    a.add_argument(
        "--workload",
        choices=WORKLOADS,
        help="a built-in workload as the load instead of --downloads/--uploads (rrul: four"
        " TCP flows each way and round-trip probes; responsiveness: the RPM test's ramp),"
        " whose scores --goal can ask for",
    )
    a.add_argument(
        "--goal",
        metavar="GOAL",
        action="append",
        help="a condition on the workload's scores a candidate must also meet, median over"
        " trials (repeatable): rpm>=800, rpm_p90>=300, grade>=A, qoo_voip>=80",
    )
    a.add_argument(
        "--cc",
        metavar="CC",
        action="append",
        help="congestion controls to try (repeatable; default: newreno and cubic)",
    )
    a.add_argument(
        "--trials",
        metavar="N",
        type=count(1, MAX_TRIALS),
        default=3,
        help=f"trials per candidate, at most {MAX_TRIALS} (default: 3)",
    )
    a.add_argument(
        "--duration", metavar="TIME", default="60s", help="per trial, 1s to 1h (default: 60s)"
    )
    a.add_argument(
        "--target",
        metavar="X",
        type=share,
        help="the largest share of the application's packets that may be late or lost,"
        " 0 to 1 or a percentage (default: 0.01, 1%%)",
    )
    a.add_argument(
        "--budget",
        metavar="TIME",
        help="the application's one-way delay budget, base delay included (default: voip"
        " 150ms, ITU-T G.114; fps 100ms, mmo 500ms, rts 1000ms)",
    )
    a.add_argument(
        "--current",
        metavar="QUEUE",
        help="your gateway's queue as one more candidate: a drop-tail limit (256kB, 100p)"
        " or an --aqm value (fq_codel, cake:diffserv=diffserv4); DOWN/UP when the"
        " directions differ (500kB/100kB)",
    )
    a.add_argument(
        "--tolerance",
        metavar="X",
        type=share,
        default=0.02,
        help="goodput within this share of the best counts as the same, 0 to below 1 or a"
        " percentage (default: 0.02, 2%%); among those the least delay wins",
    )
    a.add_argument(
        "--from",
        dest="from_",
        metavar="DIR",
        help="start from your measured line: a results directory of 'collateral import'"
        " whose inferred rates, base RTT and downstream queue ('collateral infer') are the"
        " link and --current (instead of --link/--down/--up/--rtt)",
    )
    from .infer import add_line_options

    add_line_options(a, when="with --from: ")
    a.add_argument(
        "--seed",
        metavar="N",
        type=count(0, 2**62),
        default=1,
        help="the first trial's seed; trial k runs seed N+k, the same for every candidate"
        " (default: 1)",
    )
    a.add_argument(
        "--plot",
        metavar="PATH",
        help="write the evidence here: late or lost, delay and goodput per candidate",
    )


#: advise()'s parameters and the options that give them.
_ADVISE_OPTIONS = {
    "link": "--link",
    "down": "--down",
    "up": "--up",
    "rtt": "--rtt",
    "app": "--app",
    "video": "--video",
    "video_max_rate": "--video-max-rate",
    "video_direction": "--video-direction",
    "tcp_flows": "--downloads",
    "uploads": "--uploads",
    "web_users": "--web-users",
    "current": "--current",
    "tolerance": "--tolerance",
    "ccs": "--cc",
    "profile": "--profile",
    "trials": "--trials",
    "duration": "--duration",
    "warmup": "--duration",  # 10 s, or a quarter of a shorter duration
    "target": "--target",
    "budget": "--budget",
    "seed": "--seed",
    "workload": "--workload",
    "goals": "--goal",
    "framing": "--framing",
    "up_docsis": "--up-docsis",
    "leo": "--leo",
    "down_trace": "--down-trace",
    "up_trace": "--up-trace",
}


def run(args: argparse.Namespace) -> int:
    from ..advise import advise, plot, table, verdict
    from ..spec import SpecError

    if args.plot is not None:
        output_file("--plot", args.plot, "out/advice.png", figure=True)
    if args.from_ is not None:
        _from_measurement(args)
    elif args.framing is not None:
        fail("--framing: goes with --from (the measured line's framing)")
    elif args.sync_rate is not None:
        fail("--sync-rate: goes with --from (the measured line's modem)")
    args.tcp_flows = 1 if args.tcp_flows is None else args.tcp_flows
    args.uploads = 0 if args.uploads is None else args.uploads
    for name in ("video_max_rate", "video_direction"):
        if (
            args.video is None
            and args.app != "video"
            and getattr(args, name) != BY_NAME[name].default
        ):
            fail(f"{_ADVISE_OPTIONS[name]}: describes a video call: give --video too")
    from .errors import PROG
    from .scenario import seconds_for_ms

    if (odd := seconds_for_ms("--budget", args.budget)) is not None:  # said before it runs
        print(f"{PROG}: warning: {odd}", file=sys.stderr)
    import warnings

    try:
        with warnings.catch_warnings():  # said above as --budget's, not again as the API's
            warnings.filterwarnings("ignore", message="budget=")
            adv = _advise(advise, args)
    except SpecError as e:
        option = _ADVISE_OPTIONS.get(e.param)
        fail(f"{option}: {e.message}" if option else f"advise: {e}")
    except ValueError as e:  # the core stopped a trial
        fail(f"advise: {e}")
    console().print(table(adv))
    for line in verdict(adv):
        print(line)
    if args.plot is not None:
        for p in plot(adv, args.plot):
            print(f"wrote {p}")
    return 0


def _advise(advise: Any, args: argparse.Namespace) -> Any:
    """advise() with the options' values (it takes ADSL1 when no link is given)."""
    return advise(
        link=args.link,
        down=args.down,
        up=args.up,
        rtt=args.rtt,
        app=args.app,
        video=args.video,
        video_max_rate=args.video_max_rate,
        video_direction=args.video_direction,
        tcp_flows=args.tcp_flows,
        uploads=args.uploads,
        web_users=args.web_users,
        current=args.current,
        tolerance=args.tolerance,
        ccs=tuple(args.cc) if args.cc else ("newreno", "cubic"),
        profile=args.profile,
        trials=args.trials,
        duration=args.duration,
        target=args.target,
        budget=args.budget,
        seed=args.seed,
        workload=args.workload,
        goals=tuple(args.goal or ()),
        framing=getattr(args, "line_framing", None),
        up_docsis=args.up_docsis,
        leo=args.leo,
        down_trace=args.down_trace,
        up_trace=args.up_trace,
    )


def _inferred_queue(got: dict[str, Any], d: str) -> str | None:
    """Direction ``d``'s queue as ``collateral infer`` found it, as ``--current`` takes
    it: a FIFO's buffer in bytes, or the AQM it looks like; None when not inferred."""
    queue = got.get(f"queue_{d}")
    if queue is None:
        return None
    if queue == "fifo":
        buffer = got.get(f"buffer_{d}")
        return f"{round(buffer)}B" if buffer else None
    return "fq_codel" if "flow queueing" in queue else "codel"


def _from_measurement(args: argparse.Namespace) -> None:
    """Sets the link and the current queue from the line measured in ``--from``."""
    from ..spec.fields import BY_NAME
    from .paths import input_store

    # --rtt has a default: only another value is a clash.
    rtt = None if args.rtt == BY_NAME["rtt"].default else args.rtt
    given = (
        ("--link", args.link),
        ("--down", args.down),
        ("--up", args.up),
        ("--rtt", rtt),
        ("--leo", args.leo),
    )
    clash = [o for o, v in given if v is not None]
    if clash:
        fail(f"--from: gives the link; leave out {', '.join(clash)}")
    input_store("--from", args.from_)
    from .infer import inferred_line

    _, inf = inferred_line(args.from_, args, where="--from: ")
    got = {e.name: e.value for e in inf.estimates}
    missing = [k for k in ("capacity_down", "capacity_up", "base_rtt") if got.get(k) is None]
    if missing:
        fail(
            f"--from: {args.from_}: not inferred: {', '.join(missing)} (collateral infer says why)"
        )
    args.down, args.up = round(got["capacity_down"]), round(got["capacity_up"])
    # With a framing (given or inferred) the capacities are line rates: the link carries it.
    args.line_framing = inf.link_framing().get("framing")
    args.rtt = f"{got['base_rtt'] * 1e3:.3f}ms"
    yours = args.current is not None  # --current given: it stands, not the inferred queue
    if args.current is None:
        # Each direction's own queue (a line's upstream buffer is rarely its downstream's).
        each = [_inferred_queue(got, d) for d in ("down", "up")]
        if each[0] is not None:
            up = each[1] or each[0]  # nothing inferred upstream: the downstream's
            args.current = each[0] if up == each[0] else f"{each[0]}/{up}"
    # Its load unless one is given: a download and an upload (a measured line has both
    # capacities, so both directions were loaded), here at once, the harder case.
    load = ""
    if args.tcp_flows is None and args.uploads is None and args.workload is None:
        args.tcp_flows, args.uploads = 1, 1
        load = "; load 1 download and 1 upload at once (--downloads, --uploads to change)"
    print(
        f"from {args.from_}: down {args.down / 1e6:.3g} Mbit/s, up {args.up / 1e6:.3g} Mbit/s,"
        f" base RTT {args.rtt} (collateral infer), current queue"
        + (f" {args.current} (--current)" if yours else f" {args.current or 'not inferred'}")
        + load
    )
