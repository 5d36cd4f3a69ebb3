"""``advise``: which queue and congestion control keep an application within its
budget on a link, with the evidence."""

from __future__ import annotations

import argparse
from typing import Any

from ..spec import SpecError
from .errors import fail
from .paths import console, output_file
from .scenario import add_scenario_options
from .values import count, finite_float


def add_parser(sub: Any) -> None:
    from ..advise import APP_ALIASES, APPS, MAX_TCP_FLOWS, MAX_TRIALS

    a = sub.add_parser(
        "advise",
        help="which queue and congestion control keep an application within its budget",
        description="Simulate the link with bulk downloads beside a real-time application "
        "for drop-tail queues of 1/4 to 4 BDP, CoDel, FQ-CoDel and PIE under each congestion "
        "control, and recommend the one that meets the application's target (VoIP: MOS; "
        "games: share of packets over the genre's delay budget) with the most goodput.",
    )
    # The link as every command that takes a scenario names it.
    add_scenario_options(a, only=("link", "down", "up", "rtt"))
    a.add_argument(
        "--app",
        choices=[*APPS, *APP_ALIASES],
        default="voip",
        help="the real-time application (g711, quake3 and wow, as simulate names them, are"
        " voip, fps and mmo)",
    )
    add_scenario_options(
        a,
        only=("tcp_flows", "profile"),
        tcp_flows={"type": count(1, MAX_TCP_FLOWS), "help": "bulk downloads (default: 1)"},
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
        type=finite_float,
        help="MOS at least X, 1 to 4.5 (voip, default 4.0), or at most this share of packets"
        " late, 0 to 1 (games, default 0.01)",
    )
    a.add_argument(
        "--budget",
        metavar="TIME",
        help="a game's one-way delay budget, base delay included (default: the genre's: "
        "fps 100ms, mmo 500ms, rts 1000ms); voip is rated by its MOS instead",
    )
    a.add_argument("--seed", metavar="N", type=count(0, 2**62), default=1)
    a.add_argument("--plot", metavar="PATH", help="write the goodput-vs-quality figure here")


#: advise()'s parameters and the options that give them.
_ADVISE_OPTIONS = {
    "link": "--link",
    "down": "--down",
    "up": "--up",
    "rtt": "--rtt",
    "app": "--app",
    "tcp_flows": "--tcp-flows",
    "ccs": "--cc",
    "profile": "--profile",
    "trials": "--trials",
    "duration": "--duration",
    "warmup": "--duration",  # 10 s, or a quarter of a shorter duration
    "target": "--target",
    "budget": "--budget",
    "seed": "--seed",
}


def run(args: argparse.Namespace) -> int:
    from ..advise import advise, plot, table, verdict

    if args.plot is not None:
        output_file("--plot", args.plot, "out/advice.png", figure=True)
    given = (args.link, args.down, args.up)
    link = args.link if any(v is not None for v in given) else "adsl1"
    try:
        adv = advise(
            link=link,
            down=args.down,
            up=args.up,
            rtt=args.rtt,
            app=args.app,
            tcp_flows=args.tcp_flows,
            ccs=tuple(args.cc) if args.cc else ("newreno", "cubic"),
            profile=args.profile,
            trials=args.trials,
            duration=args.duration,
            target=args.target,
            budget=args.budget,
            seed=args.seed,
        )
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
