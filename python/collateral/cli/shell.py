"""``shell``: the user's own command through the emulated link (as Mahimahi's shells):
the home side of the testbed, the scenario's link and queue in the router, servers of
the user's choosing on the Internet side."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..spec.fields import FIELDS
from . import HELP
from .errors import fail, interrupted_status
from .scenario import add_scenario_options, scenario_from_args

#: The options of the link and its queue: the shell's traffic is the command's own.
_LINK_QUEUE = [f.name for f in FIELDS if f.group in ("link", "queue")]


def add_parser(sub: Any) -> None:
    s = sub.add_parser(
        "shell",
        help=HELP["shell"],
        description="Run a command (default: your $SHELL) in the home namespace of the"
        " testbed, behind the link and queue given here (the simulator's code in a"
        " userspace router, in real time), with servers of your choosing on the Internet"
        " side, reached at $COLLATERAL_SERVER (198.18.0.1). Everything is removed when the"
        " command ends. Needs root, iproute2 and ethtool. Example: collateral shell --link"
        " adsl1 --aqm fq_codel --server 'irtt server' -- irtt client -d 10s"
        " 198.18.0.1",
    )
    add_scenario_options(s, only=_LINK_QUEUE)
    s.add_argument(
        "--server",
        metavar="CMD",
        action="append",
        default=[],
        help="a shell command line to run on the Internet side meanwhile, e.g. 'irtt"
        " server' or 'python3 -m http.server 8000'; may be given more than once. It must"
        " stay in the foreground (iperf3 -s, not iperf3 -s -D): a server that ends, as"
        " one that daemonises does, ends the session",
    )
    s.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        metavar="-- CMD ...",
        help="the command and its arguments (default: $SHELL)",
    )


def run(args: argparse.Namespace) -> int:
    import os

    from ..emulate import EmulationError, shell

    command = list(args.cmd)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        command = [os.environ.get("SHELL") or "/bin/sh"]
    # Only the command's traffic crosses the link.
    args.tcp_flows, args.uploads, args.cbr, args.web_users = 0, 0, "none", 0
    scenario = scenario_from_args(args)
    try:
        return shell(scenario, command, args.server)
    except EmulationError as e:
        from .emulate import testbed_error

        fail(testbed_error(args, e, "shell"))
    except KeyboardInterrupt as e:
        print("collateral: shell ended; the testbed is removed", file=sys.stderr)
        return interrupted_status(e)
