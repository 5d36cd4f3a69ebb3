"""The ``collateral`` command.

Options are passed through as strings to :func:`collateral.spec.build_scenario`, so the
CLI and the Python API accept the same units and report the same errors. A bad value
ends the program with one line on stderr naming the option, and exit status 2 (as
argparse does for usage errors), never a traceback.

Everything is checked before anything is built, simulated, emulated or written: the
values (against the limits of :mod:`collateral.units` and the core's, which the core
reports by its JSON key path and this module by the option), the output paths (the
directory exists or can be created and is writable, the name is not empty, not a
directory, not too long, its suffix one the figure can be written as) and the input
directories (a results directory, not a file).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .spec import (
    APP_PROFILES,
    AQM_SHORTHANDS,
    CBR_CHOICES,
    CC_ALGORITHMS,
    LINK_PRESETS,
    MAX_TCP_FLOWS,
    MAX_WEB_SLOTS,
    PROFILES,
    RULES,
    TCP_ECN_MODES,
    SpecError,
    build_scenario,
    demo_scenario,
    flat_param,
)

if TYPE_CHECKING:
    from .spec import Scenario

PROG = "collateral"
#: The most trials ``simulate --trials`` runs (only the first keeps its traces).
MAX_CLI_TRIALS = 1000


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, ``collateral: error: --opt: message`` (no usage dump)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Take "-1Mbit" or "-5ms" as a (bad) value, not an unknown option, so the user
        # hears that it is negative rather than "expected one argument".
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        message = message.removeprefix("argument ")
        if message.startswith("unrecognized arguments: "):
            extra = message.removeprefix("unrecognized arguments: ")
            message = f"{extra}: unrecognized; see '{self.prog} --help'"
        # argparse names an option by all its spellings ("-q/--queue"); keep the long one.
        head, sep, rest = message.partition(": ")
        if sep and "/" in head and head.startswith("-"):
            message = f"{head.split('/')[-1]}: {rest}"
        _fail(message)


_LONG_QUOTED = re.compile(r"""(['"])([^'"]{60})[^'"]{20,}\1""")
_LONG_WORD = re.compile(r"\S{200,}")


def _fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2. A value quoted in it is cut short: a
    5000-character argument is not echoed back whole."""
    line = " ".join(message.split())
    line = _LONG_QUOTED.sub(lambda m: f"{m[1]}{m[2]}...{m[1]}", line)
    line = _LONG_WORD.sub(lambda m: f"{m[0][:120]}...{m[0][-3:]}", line)
    if len(line) > 1000:
        line = f"{line[:600]} ... {line[-300:]}"
    print(f"{PROG}: error: {line}", file=sys.stderr)
    raise SystemExit(2)


def _whole(text: str, lo: int, hi: int) -> int:
    """A whole number from ``lo`` to ``hi`` (its digits checked before int() reads them)."""
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,30}", t):
        if re.fullmatch(r"[+-]?\d+", t):
            raise argparse.ArgumentTypeError(f"a number of {len(t)} digits; at most {hi}")
        raise argparse.ArgumentTypeError(f"{_short(text)} is not a whole number")
    value = int(t)
    if value < lo:
        raise argparse.ArgumentTypeError(f"{_short(text)}: must be >= {lo}")
    if value > hi:
        raise argparse.ArgumentTypeError(f"{_short(text)}: at most {hi}")
    return value


def _count(lo: int, hi: int | Callable[[], int]) -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi`` (or ``hi()``)."""

    def parse(text: str) -> int:
        return _whole(text, lo, hi() if callable(hi) else hi)

    return parse


def _nonneg_int(text: str) -> int:
    return _whole(text, 0, 2**63 - 1)


def _max_workers() -> int:
    """The most local workers: 4 per core (at least 8), as for a local Dask cluster."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(8, 4 * cores)


def _positive_seconds(text: str) -> float:
    """``--batch-seconds``: a finite number of seconds above 0, at most a day."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_short(text)} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= 86_400):
        raise argparse.ArgumentTypeError(f"{_short(text)}: must be above 0 and at most 86400")
    return value


def _short(value: object, limit: int = 60) -> str:
    """``repr`` cut short: a 5000-character value is not echoed back whole."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


# ---------------------------------------------------------------------------------------
# Paths: outputs are checked before anything runs, inputs before anything is read

_NAME_MAX = 255  # bytes in one path component (Linux NAME_MAX)
_PATH_MAX = 4096
#: Formats a figure can be written in: its suffix says (none: PNG).
FIGURE_SUFFIXES = (".png", ".svg", ".pdf", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff")


def _path(option: str, text: object, what: str) -> Path:
    if not isinstance(text, str) or not text.strip():
        _fail(f"{option}: {_short(text)}: an empty path; give {what}")
    if "\0" in text:
        _fail(f"{option}: {_short(text)}: a path cannot hold a NUL character")
    p = Path(text)
    for part in p.parts:
        if len(os.fsencode(part)) > _NAME_MAX:
            _fail(
                f"{option}: {_short(text)}: a name of {len(os.fsencode(part))} bytes; at most"
                f" {_NAME_MAX}"
            )
    if len(os.fsencode(os.path.abspath(text))) >= _PATH_MAX:
        _fail(f"{option}: {_short(text)}: the path is longer than {_PATH_MAX - 1} bytes")
    return p


def _existing_ancestor(p: Path) -> Path:
    for a in (p, *p.parents):
        if a.exists() or a.is_symlink():
            return a
    return Path("/")  # pragma: no cover - the root exists


def _check_writable_dir(option: str, shown: str, d: Path) -> None:
    """Creates (and removes) a file in ``d``: the only test a root user, a read-only
    mount or /proc answer truthfully."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".collateral-probe-", dir=d)
    except OSError as e:
        _fail(f"{option}: {shown}: cannot write in {d}: {e.strerror or e}")
    os.close(fd)
    os.unlink(probe)


def _check_new_parent(option: str, shown: str, target: Path, probe: bool) -> None:
    """``target`` does not exist yet: its nearest existing ancestor must be a directory
    (the rest is created) we can write in."""
    a = _existing_ancestor(target.absolute().parent)
    if not a.is_dir():
        _fail(f"{option}: {shown}: {a} is not a directory")
    if probe:
        _check_writable_dir(option, shown, a)


def _console() -> Any:
    """A console for stdout: the terminal's width, or, piped to a file or another
    program, no wrapping at all (rows are whole lines, as ``query`` writes them)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=100_000)


def _output_file(
    option: str,
    text: object,
    example: str,
    figure: bool = False,
) -> Path:
    """An output file: not empty, not a directory, a name the file system takes, in a
    directory that exists (or can be created) and is writable. A figure's suffix must be
    one it can be written as; only that file is written (no suffix: a PNG)."""
    p = _path(option, text, f"a file name such as {example}")
    shown = _short(text)
    if str(text).endswith(("/", os.sep)) or p.name in ("", ".", "..") or p.is_dir():
        _fail(f"{option}: {shown}: a directory; give a file name such as {example}")
    targets = [p]
    if figure:
        suffix = p.suffix.lower()
        if suffix and suffix not in FIGURE_SUFFIXES:
            _fail(
                f"{option}: {shown}: cannot write a figure as {p.suffix!r}; give a name ending"
                f" {', '.join(FIGURE_SUFFIXES)}"
            )
        targets = [p if suffix else p.with_suffix(".png")]
    for t in targets:
        if len(os.fsencode(t.name)) > _NAME_MAX:
            _fail(f"{option}: {shown}: the name {t.name[:20]}... is longer than {_NAME_MAX} bytes")
        if t.exists():
            if t.is_dir():
                _fail(f"{option}: {shown}: {t} is a directory; give a file name such as {example}")
            if not t.is_file() and str(t) != os.devnull:
                _fail(f"{option}: {shown}: {t} exists and is not a regular file")
            if not os.access(t, os.W_OK):
                _fail(f"{option}: {shown}: {t} is not writable")
        else:
            _check_new_parent(option, shown, t, probe=True)
    return p


def _output_dir(option: str, text: object, example: str, probe: bool = True) -> Path:
    """An output directory: not empty, not a file; it exists and is writable, or can be
    created (its nearest existing ancestor is a writable directory)."""
    p = _path(option, text, f"a directory such as {example}")
    shown = _short(text)
    if p.exists():
        if not p.is_dir():
            _fail(f"{option}: {shown}: exists and is not a directory")
        if probe:
            _check_writable_dir(option, shown, p)
    else:
        _check_new_parent(option, shown, p, probe)
    return p


def _input_store(option: str, text: object) -> Path:
    """A results directory to read: a directory holding ``store.json``."""
    p = _path(option, text, "a results directory, e.g. results/NAME")
    shown = _short(text)
    if not p.exists():
        _fail(f"{option}: {shown}: no such directory")
    if not p.is_dir():
        _fail(f"{option}: {shown}: is a file, not a results directory")
    if not (p / "store.json").is_file():
        _fail(f"{option}: {shown}: not a collateral results directory (no store.json)")
    return p


def _add_scenario_options(p: argparse.ArgumentParser, max_tcp_flows: int = MAX_TCP_FLOWS) -> None:
    presets = ", ".join(f"{k} = {d} down / {u} up" for k, (d, u) in LINK_PRESETS.items())
    g = p.add_argument_group("link")
    g.add_argument(
        "--link",
        metavar="NAME",
        help=f"a link preset instead of --down/--up: {presets} (default: adsl1)",
    )
    g.add_argument(
        "--down",
        metavar="RATE",
        help="downstream bottleneck rate in bit/s, e.g. 1.5Mbit, 24Mbit, 1500000",
    )
    g.add_argument(
        "--up", metavar="RATE", help="upstream bottleneck rate in bit/s, e.g. 256kbit, 1Mbit"
    )
    g.add_argument(
        "--rtt",
        metavar="TIME",
        default="100ms",
        help="base round-trip time, half of it propagation each way (default: 100ms)",
    )
    g = p.add_argument_group("queue (the same in both directions)")
    g.add_argument(
        "--queue",
        metavar="LIMIT",
        help="drop-tail limit: bytes (20kB = 20000 B, 64KiB, 1500B) or packets "
        "(27p) (default: 20kB); with --aqm, the AQM's limit (packets; bytes for cake)",
    )
    g.add_argument(
        "--rule",
        metavar="RULE",
        help=f"when the queue is full: {', '.join(RULES)} "
        "(default: ps for a limit in packets, else fb-strict)",
    )
    g.add_argument(
        "--count-in-service",
        action="store_true",
        help="count the packet being transmitted as still queued "
        "(default: it leaves the queue when its transmission starts)",
    )
    g.add_argument(
        "--aqm",
        metavar="KIND",
        help=f"an AQM instead of drop-tail: {', '.join(AQM_SHORTHANDS)} with their defaults; "
        "KIND:KEY=VALUE,... with parameters in human units, e.g. "
        "fq_codel:target=5ms,ecn=off or cake:bandwidth=1.4Mbit,diffserv=diffserv4,"
        'ack_filter=normal; or a JSON object such as \'{"kind": "red", "min_th": 5, '
        '"max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60}\'',
    )
    g = p.add_argument_group("traffic")
    g.add_argument(
        "--tcp-flows",
        metavar="N",
        type=_count(0, max_tcp_flows),
        default=1,
        help="bulk TCP flows downstream (default: 1)",
    )
    g.add_argument(
        "--cc",
        metavar="ALGO",
        default="newreno",
        help=f"TCP congestion control: {', '.join(CC_ALGORITHMS)} (default: newreno)",
    )
    g.add_argument(
        "--ecn",
        metavar="MODE",
        default="off",
        help=f"ECN of the TCP flows: {', '.join(TCP_ECN_MODES)} (classic: RFC 3168, ECT(0); "
        "l4s: ECT(1), what --cc dctcp and prague need) (default: off)",
    )
    g.add_argument(
        "--profile",
        metavar="STACK",
        default="linux-6",
        help="TCP stack profile: delayed ACKs, recovery style, RTO, initial window "
        f"({', '.join(PROFILES)}; default: linux-6, a modern Linux sender)",
    )
    g.add_argument(
        "--no-delayed-ack",
        dest="delayed_ack",
        action="store_false",
        default=None,
        help="ACK every segment instead of every second one",
    )
    g.add_argument(
        "--rto-min",
        metavar="TIME",
        default=None,
        help="minimum TCP retransmission timeout (default: the profile's, 200ms for Linux)",
    )
    g.add_argument(
        "--cbr",
        choices=CBR_CHOICES,
        default="both",
        help="directions of VoIP-like CBR flows (default: both)",
    )
    g.add_argument(
        "--cbr-size",
        metavar="SIZE",
        default="186B",
        help="CBR packet IP length in bytes, e.g. 186B or 200 (default: 186B)",
    )
    g.add_argument(
        "--cbr-interval",
        metavar="TIME",
        default="20ms",
        help="mean gap between CBR packets (default: 20ms)",
    )
    g.add_argument(
        "--jitter",
        metavar="TIME",
        default="1ms",
        help="std. deviation of normal jitter on each CBR gap; 0 = none (default: 1ms)",
    )
    g.add_argument(
        "--app",
        metavar="APP",
        help="a thin-stream application instead of the CBR flow(s): "
        f"{', '.join(APP_PROFILES)} (directions as --cbr)",
    )
    g.add_argument(
        "--web-users",
        metavar="N",
        type=_count(0, MAX_WEB_SLOTS // 4),
        default=0,
        help="web users browsing downstream (Mah's HTTP model, think times up to 5 min, "
        "the --profile stack; default: 0)",
    )
    g = p.add_argument_group("trial")
    g.add_argument(
        "--duration",
        metavar="TIME",
        default="60s",
        help="simulated time, e.g. 60s, 3min (default: 60s)",
    )
    g.add_argument(
        "--warmup",
        metavar="TIME",
        default="5s",
        help="initial time excluded from the measurements (default: 5s)",
    )
    g.add_argument(
        "--seed",
        metavar="N",
        type=_count(0, 2**64 - 1),
        default=1,
        help="random seed; the same seed gives the same result (default: 1)",
    )


def _add_output_options(p: argparse.ArgumentParser, plot_default: str | None) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Simulate how bulk TCP transfers and gateway queues "
        "hurt real-time traffic on broadband links.",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    s = sub.add_parser(
        "simulate",
        help="run one trial",
        description="Run one trial and "
        "print goodput, CBR loss and additional delay. Rates are bit/s, sizes "
        "bytes (kB = 1000 B), times take a unit (ms, s, min; a bare number is seconds).",
    )
    _add_scenario_options(s)
    s.add_argument(
        "--trials",
        metavar="N",
        type=_count(1, MAX_CLI_TRIALS),
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
    _add_output_options(s, None)
    d = sub.add_parser(
        "demo",
        help="the MMSys 2011 Fig. 1 set-up on ADSL1, with a plot",
        description="ADSL1 (1.5Mbit/256kbit), 100 ms RTT, 20 kB FB-strict "
        "queue, one NewReno flow down (Linux 2.6.25 stack), CBR both ways (186 B / 20 ms, 1 ms "
        "jitter), 60 s with 10 s warm-up, seed 1.",
    )
    _add_output_options(d, "out/demo.png")
    e = sub.add_parser(
        "emulate",
        help="run one trial on the namespace testbed (real Linux TCP; needs root)",
        description="Run the same scenario as 'simulate' in real time: network namespaces, "
        "real kernel TCP, and a userspace bottleneck running the simulator's queue code. "
        "Needs root, iproute2 and ethtool; takes the scenario's duration in wall time.",
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
    _add_scenario_options(e, max_tcp_flows=2**31)  # the testbed's own limit is checked after
    _add_output_options(e, None)
    e.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the raw endpoint and router logs in DIR",
    )
    _add_experiment_commands(sub)
    _add_reproduce_commands(sub)
    from .cli_plot import add_parser as _add_plot_command

    _add_plot_command(sub)
    _add_advise_command(sub)
    return p


def _option(param: str) -> str:
    """The option of a :func:`build_scenario` parameter."""
    return "--no-delayed-ack" if param == "delayed_ack" else "--" + param.replace("_", "-")


#: AQMs whose hard limit `--queue` sets: the field, and whether it counts bytes.
_AQM_LIMIT_FIELD = {
    "red": ("limit", False),
    "fred": ("limit", False),
    "cbt": ("limit", False),
    "codel": ("limit", False),
    "fq_codel": ("limit", False),
    "pie": ("limit", False),
    "dualpi2": ("limit", False),
    "cake": ("memory_limit", True),
}


def _aqm_with_limit(a: argparse.Namespace) -> object:
    """``--aqm`` with ``--queue`` as its hard limit, so that neither is ignored; a limit
    in the wrong unit, a discipline without one limit (cbq), or a limit given twice is
    an error naming the option."""
    if a.aqm is None or a.queue is None:
        if a.aqm is not None and getattr(a, "rule", None) is not None:
            _fail_param(a, "rule", "a drop-tail rule; it does not apply to --aqm")
        return a.aqm
    from .spec import aqm_queue
    from .units import parse_queue_limit

    try:
        q = dict(aqm_queue(a.aqm))
        limit = parse_queue_limit(a.queue)
    except SpecError as e:
        _fail_param(a, "aqm", e.message)
    except ValueError as e:
        _fail_param(a, "queue", str(e))
    kind = str(q.get("kind"))
    if kind not in _AQM_LIMIT_FIELD:
        _fail_param(a, "queue", f"{kind} has per-class limits; give them in --aqm")
    field, in_bytes = _AQM_LIMIT_FIELD[kind]
    if field in q or "limit_rule" in q:
        _fail_param(a, "queue", f"{kind}'s {field} is also given in --aqm; give it once")
    if limit.in_packets == in_bytes:
        unit, example = ("bytes", "4MB") if in_bytes else ("packets", "1000p")
        _fail_param(a, "queue", f"{kind}'s {field} counts {unit}; give e.g. {example}")
    q[field] = limit.amount
    return q


def _bare_number(text: object) -> bool:
    try:
        float(str(text).strip())
    except ValueError:
        return False
    return True


def _warn_implausible(a: argparse.Namespace, sc: Scenario) -> None:
    """Values that are valid but rarely meant: a warning on stderr each, naming the
    option and what was probably meant; the run goes on."""
    warnings = []
    if sc.rtt >= 5_000_000_000:
        hint = f"; did you mean {a.rtt}ms?" if _bare_number(a.rtt) else ""
        warnings.append(f"--rtt {a.rtt}: read as {sc.rtt / 1e9:g} s, an unusual round trip{hint}")
    for opt, text, link in (("--down", a.down, sc.down), ("--up", a.up, sc.up)):
        if text is not None and link.rate is not None and link.rate < 10_000:
            hint = f"; did you mean {text}kbit?" if _bare_number(text) else ""
            warnings.append(f"{opt} {text}: read as {link.rate} bit/s{hint}")
    if sc.duration - sc.warmup < 1_000_000_000:
        warnings.append(
            f"--duration {a.duration}: less than 1 s is measured after the warm-up;"
            " figures will be noisy"
        )
    for w in warnings:
        print(f"{PROG}: warning: {w}", file=sys.stderr)


def _versus_scenarios(a: argparse.Namespace, base: Scenario) -> list[tuple[str, Scenario]]:
    """The base scenario and one per ``--versus`` queue, each labelled by its queue; a
    drop-tail limit keeps --rule's rule (or its unit's default), an AQM its own limit."""
    from .units import parse_queue_limit

    out = [(_queue_label(base, a.aqm), base)]
    for value in a.versus or []:
        b = argparse.Namespace(**vars(a))
        b.versus_value = value
        try:
            parse_queue_limit(value)
            b.queue, b.aqm = value, None
        except ValueError:
            b.queue, b.aqm, b.rule = None, value, None
        sc = _scenario_from_args_unchecked(b)
        out.append((_queue_label(sc, b.aqm), sc))
    labels = [label for label, _ in out]
    for label in labels:
        if labels.count(label) > 1:
            _fail(f"--versus: the queue {label!r} is given twice")
    return out


def _queue_label(sc: Scenario, aqm: object) -> str:
    """The queue as the user named it: the --aqm text, or drop-tail's limit and rule."""
    if isinstance(aqm, str):
        return aqm
    part = next(p for p in sc.describe().split(" · ") if p.startswith("queue "))
    return part.removeprefix("queue ")


def _scenario_from_args(a: argparse.Namespace) -> Scenario:
    sc = _scenario_from_args_unchecked(a)
    _warn_implausible(a, sc)
    return sc


def _scenario_from_args_unchecked(a: argparse.Namespace) -> Scenario:
    try:
        return build_scenario(
            link=a.link,
            down=a.down,
            up=a.up,
            rtt=a.rtt,
            queue=a.queue if a.queue is not None else "20kB",
            rule=a.rule,
            count_in_service=a.count_in_service,
            cc=a.cc,
            profile=a.profile,
            ecn=a.ecn,
            duration=a.duration,
            warmup=a.warmup,
            seed=a.seed,
            cbr=a.cbr,
            cbr_size=a.cbr_size,
            cbr_interval=a.cbr_interval,
            jitter=a.jitter,
            tcp_flows=a.tcp_flows,
            delayed_ack=a.delayed_ack,
            rto_min=a.rto_min,
            aqm=_aqm_with_limit(a),
            app=a.app,
            web_users=a.web_users,
        )
    except SpecError as e:
        _fail_param(a, e.param, e.message)


#: Options whose value (a rate, time or size) a message shows when it does not itself.
_UNIT_PARAMS = (
    "down",
    "up",
    "rtt",
    "queue",
    "duration",
    "warmup",
    "cbr_size",
    "cbr_interval",
    "jitter",
    "rto_min",
)


def _fail_param(a: argparse.Namespace, param: str, message: str) -> NoReturn:
    """One line naming the option of ``param``, with the value given when the message
    does not show it (the core's messages do not)."""
    value = getattr(a, param, None)
    missing = re.search(r"missing field `(\w+)`", message)
    if param == "aqm" and missing and isinstance(value, str):
        kind = value.partition(":")[0].strip()
        field = missing[1]
        hint = (
            f"; give --queue (e.g. --queue 60p) or {kind}:{field}=60"
            if _AQM_LIMIT_FIELD.get(kind, ("",))[0] == field
            else f"; give {kind}:{field}=..."
        )
        message = f"{kind} needs its {field}{hint}"
    versus = getattr(a, "versus_value", None)
    if versus is not None and param in ("queue", "aqm", "rule"):
        shown = message.startswith(("'", '"'))
        _fail(f"--versus: {message}" if shown else f"--versus: {_short(versus)}: {message}")
    if not hasattr(a, param) or param == "scenario":
        _fail(f"scenario: {message}")
    shown = message.startswith(("'", '"')) or (isinstance(value, str) and repr(value) in message)
    if param in _UNIT_PARAMS and isinstance(value, str) and not shown:
        message = f"{_short(value)}: {message}"
    _fail(f"{_option(param)}: {message}")


def _window_s(text: str) -> float:
    from .units import parse_duration

    try:
        ns = parse_duration(text)
    except ValueError as e:
        _fail(f"--window: {e}")
    if ns <= 0:
        _fail(f"--window: {text!r} must be positive, e.g. 10s")
    return ns / 1e9


def _check_emulation(a: argparse.Namespace) -> Scenario:
    """``emulate``'s options against the testbed's limits (a real-time run with a
    process per flow), before the scenario is built, then the scenario; nothing is
    created until all of it passed."""
    from .emulate import (
        MAX_TESTBED_TCP_FLOWS,
        MIN_TESTBED_CBR_INTERVAL_NS,
        EmulationError,
        check_testbed,
    )
    from .units import parse_duration

    if a.tcp_flows > MAX_TESTBED_TCP_FLOWS:
        _fail(
            f"--tcp-flows: {a.tcp_flows}: the testbed runs at most {MAX_TESTBED_TCP_FLOWS}"
            " flows (a process each, in real time); simulate more"
        )
    try:
        interval = parse_duration(a.cbr_interval)
    except ValueError:
        interval = None  # build_scenario says what is wrong with it
    testbed_cbr = a.cbr != "none" and not a.app
    if interval is not None and testbed_cbr and 0 < interval < MIN_TESTBED_CBR_INTERVAL_NS:
        _fail(
            f"--cbr-interval: {_short(a.cbr_interval)}: below what a userspace sender"
            f" can keep; the testbed takes at least {MIN_TESTBED_CBR_INTERVAL_NS // 1000}us"
        )
    scenario = _scenario_from_args(a)
    try:
        check_testbed(scenario)
    except EmulationError as e:
        param = flat_param(getattr(e, "path", "") or "")
        if hasattr(a, param):  # the reason shows the value, as the testbed took it
            _fail(f"{_option(param)}: {getattr(e, 'reason', e)}")
        _fail(f"emulate: {e}")
    return scenario


def _check_figure_args(args: argparse.Namespace) -> float:
    """--plot and --window, before anything runs; returns the window in seconds."""
    window = _window_s(args.window)
    if args.plot is not None:
        _output_file("--plot", args.plot, "out/run.png", figure=True)
    return window


def _run(scenario: Scenario, args: argparse.Namespace, emulated: bool = False) -> int:
    from . import _native
    from .result import Result

    window = _window_s(args.window)  # checked with --plot before the scenario was built
    if emulated:
        from .emulate import EmulationError, emulate

        try:
            result = emulate(scenario, workdir=args.keep, keep=bool(args.keep))
        except EmulationError as e:
            _fail(f"emulate: {e}")
        except KeyboardInterrupt:
            print("collateral: interrupted; the testbed was torn down", file=sys.stderr)
            return 130
    else:
        trials = getattr(args, "trials", 1)
        variants = _versus_scenarios(args, scenario) if getattr(args, "versus", None) else []
        bases = [sc for _, sc in variants] or [scenario]
        if trials > 1 and scenario.seed + trials - 1 >= 2**64:
            _fail_param(args, "seed", f"{scenario.seed} + {trials} trials passes 2^64 - 1")
        from .spec import TraceSpec

        # The tables need summaries only: the first trial keeps its traces for --plot.
        quiet = TraceSpec(cwnd=False, queue=False, cbr=False, drops=False, classes=False)
        scenarios = [
            base.model_copy(update={"seed": scenario.seed + k, "trace": quiet})
            if (v, k) != (0, 0)
            else base
            for v, base in enumerate(bases)
            for k in range(trials)
        ]
        try:
            raws = _native.simulate_many([sc.to_native_json() for sc in scenarios], 0)
        except ValueError as e:  # the core stopped a trial (e.g. its memory limit)
            _fail(f"simulate: {e}")
        results = [Result(raw, sc) for raw, sc in zip(raws, scenarios, strict=True)]
        result = results[0]
        groups = [results[v * trials : (v + 1) * trials] for v in range(len(bases))]
        if args.json and (trials > 1 or variants):
            doc: dict[str, Any] = {"trials": [json.loads(r.to_json()) for r in groups[0]]}
            if variants:
                doc = {
                    "queues": [
                        {"queue": label, "trials": [json.loads(r.to_json()) for r in g]}
                        for (label, _), g in zip(variants, groups, strict=True)
                    ]
                }
            print(json.dumps(doc))
            return _plot_run(result, args, window, note=f" (seed {scenario.seed})")
        if variants:
            from .result import compare_table

            labelled = [(label, g) for (label, _), g in zip(variants, groups, strict=True)]
            _console().print(compare_table(labelled))
            return _plot_run(
                result, args, window, note=f" ({variants[0][0]}, seed {scenario.seed})"
            )
        if trials > 1:
            from .result import trials_table

            _console().print(trials_table(results))
            return _plot_run(result, args, window, note=f" (seed {scenario.seed})")
    if args.json:
        print(result.to_json())
    else:
        _console().print(result.table())
    return _plot_run(result, args, window)


def _plot_run(result: Any, args: argparse.Namespace, window: float, note: str = "") -> int:
    """--plot: the cwnd / CBR delay figure of ``result`` (the first trial of several)."""
    if args.plot is not None:
        from .plot.trial import fig_cwnd_delay

        t0 = result.warmup_s
        try:
            paths = fig_cwnd_delay(result, t0, min(t0 + window, result.duration_s), args.plot)
        except OSError as e:  # the directory went away while the trial ran
            _fail(f"--plot: {_short(args.plot)}: {e.strerror or e}")
        out = sys.stderr if args.json else sys.stdout  # keep stdout pure JSON
        for path in paths:
            print(f"wrote {path}{note}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `collateral simulate --json | head`: not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the exit-time flush
        return 0


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:
        from . import __version__, native_version

        print(f"collateral {__version__} (core {native_version})")
        return 0
    if args.command == "simulate":
        _check_figure_args(args)
        return _run(_scenario_from_args(args), args)
    if args.command == "demo":
        _check_figure_args(args)
        return _run(demo_scenario(), args)
    if args.command == "emulate":
        if args.experiment:
            return _cmd_emulate_experiment(args)
        _check_figure_args(args)
        if args.keep is not None:
            _output_dir("--keep", args.keep, "logs/")
        return _run(_check_emulation(args), args, emulated=True)
    if args.command == "compare":
        return _cmd_compare(args)
    if args.command == "advise":
        return _cmd_advise(args)
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "query":
        return _cmd_query(args)
    if args.command == "plot":
        from .cli_plot import run as _cmd_plot

        return _cmd_plot(args)
    if args.command == "reproduce":
        return _cmd_reproduce(args)
    if args.command == "report":
        return _cmd_report(args)
    if args.command == "merge":
        return _cmd_merge(args)
    if args.command == "schema":
        from .schema import render

        print(render())
        return 0
    build_parser().print_help()
    return 2


# ---------------------------------------------------------------------------------------
# Experiments: run, query, merge


def _add_experiment_commands(sub: Any) -> None:
    r = sub.add_parser(
        "run",
        help="run an experiment file's missing trials into a results directory",
        description="Run the trials of an experiment file (TOML: a base scenario, sweep "
        "axes, trials per point, root seed) that its results directory does not hold yet, "
        "on all cores, and store them as Parquet. Rerunning resumes; Ctrl-C stops after "
        "the batches in flight, keeping every finished trial.",
    )
    r.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment file")
    r.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="results directory (default: results/NAME, NAME from [experiment] name)",
    )
    r.add_argument(
        "-j",
        "--workers",
        metavar="N",
        type=_count(0, _max_workers),
        default=0,
        help="local worker threads or processes, at most 4 per core (default: 0 = all cores)",
    )
    r.add_argument(
        "--executor",
        choices=("threads", "processes"),
        default="threads",
        help="run batches on threads (the core releases the GIL) or processes (default: threads)",
    )
    r.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run on a Dask cluster: tcp://host:port of its scheduler, or 'local[:N]' for "
        "a local cluster of N workers (needs collateral[dask])",
    )
    r.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N (0 <= I < N), e.g. from a Slurm array; shards can "
        "share the output directory or be merged with 'collateral merge'",
    )
    r.add_argument(
        "--set",
        dest="overrides",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a key of the file, e.g. experiment.trials=2, scenario.duration=30s, "
        '\'sweep.queue.limit=["20kB", "40kB"]\' (VALUE in TOML syntax, else a string)',
    )
    r.add_argument(
        "--batch-seconds",
        metavar="S",
        type=_positive_seconds,
        default=1.0,
        help="target core time of one batch (default: 1)",
    )
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and count the trials (total, stored, to run); run nothing",
    )
    g = r.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: when stderr is a terminal)",
    )
    g.add_argument("--no-progress", dest="progress", action="store_false")
    q = sub.add_parser(
        "query",
        help="SQL over a results directory (DuckDB)",
        description="Run SQL over a results directory. Views: summary (one row per trial: "
        "key, point, rep, seed, parameters such as down_queue_limit_bytes, tcp0_cc, rtt_s, and "
        "metrics such as tcp0_goodput_bps, cbr0_loss_rate, cbr0_delay_p95_s) and the trace "
        "tables the experiment kept (cwnd, queue, cbr, drops, congestion). "
        "'collateral schema' lists every result column with its type, unit and meaning.",
    )
    q.add_argument("directory", metavar="DIR", help="a results directory")
    q.add_argument("sql", metavar="SQL", help='e.g. "SELECT count(*) FROM summary"')
    q.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="output format (default: table)",
    )
    q.add_argument(
        "--max-rows",
        metavar="N",
        type=_count(0, 10**9),
        default=100,
        help="rows shown in table format (default: 100; 0 = all)",
    )
    q.add_argument(
        "--raw",
        action="store_true",
        help="table format: numbers as stored (bit/s, s, B) instead of human units",
    )
    sub.add_parser(
        "schema",
        help="every result column: name, type, unit, meaning",
        description="Print the result schema the core declares: the summary's columns "
        "(one row per trial) and each trace table's.",
    )
    m = sub.add_parser(
        "merge",
        help="merge results directories of the same experiment (e.g. shards)",
        description="Copy into DEST the trials of each SRC that DEST lacks; a trial "
        "already in DEST is never copied twice.",
    )
    m.add_argument("dest", metavar="DEST", help="results directory to merge into")
    m.add_argument("sources", metavar="SRC", nargs="+", help="results directories to merge")


def _toml_value(key: str, text: str) -> Any:
    """``--set KEY=VALUE``: VALUE in TOML syntax, else the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        _fail(f"--set {key}: the value is nested too deeply")
    except ValueError:  # an integer of thousands of digits
        _fail(f"--set {key}: {_short(text)}: a number too long to read")


def _cmd_run(args: argparse.Namespace) -> int:
    from .experiment import ExperimentError, load_experiment
    from .runner import in_shard, parse_shard, report_lines, run_experiment
    from .store import Store, StoreError

    overrides = []
    for item in args.overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            _fail(f"--set: {_short(item)}: expected KEY=VALUE, e.g. experiment.trials=2")
        overrides.append((key.strip(), _toml_value(key.strip(), value.strip())))
    shard = None
    if args.shard is not None:
        try:
            shard = parse_shard(args.shard)
        except ValueError as e:
            _fail(f"--shard: {e}")
    if args.scheduler is not None:
        _check_scheduler(args.scheduler)
    if args.output is not None:  # before reading the file: a bad -o is said first
        _output_dir("--output", args.output, "results/NAME", probe=not args.dry_run)
    try:
        exp = load_experiment(args.experiment, overrides)
    except ExperimentError as e:
        _fail(str(e))
    out = Path(args.output) if args.output is not None else Path("results") / exp.name
    if args.output is None:
        _output_dir("--output", str(out), "results/NAME", probe=not args.dry_run)
    if args.dry_run:
        stored: set[str] = set()
        if (out / "store.json").exists():
            try:
                stored = Store(out).done_keys()
            except StoreError as e:
                _fail(f"--output: {e}")
        total = mine = todo = 0
        for t in exp.iter_trials():  # one at a time: a large experiment is counted, not held
            total += 1
            if in_shard(t.key, shard):
                mine += 1
                todo += t.key not in stored
        print(
            f"{exp.name}: {len(exp.points):,} points x {exp.trials_per_point} trials ="
            f" {total:,} trials"
            + (f"; shard {shard[0]}/{shard[1]}: {mine:,}" if shard else "")
            + f"; stored in {out}: {mine - todo:,}; to run: {todo:,}"
        )
        return 0
    try:
        report = run_experiment(
            exp,
            out,
            workers=args.workers,
            executor=args.executor,
            scheduler=args.scheduler,
            shard=shard,
            batch_seconds=args.batch_seconds,
            progress=args.progress,
        )
    except StoreError as e:
        _fail(f"--output: {e}")
    except ValueError as e:  # an argument the runner refused (it names the option)
        _fail(f"run: {e}")
    except KeyboardInterrupt:
        print(
            "collateral: interrupted; the batches in flight were abandoned, finished"
            f" trials are in {out}",
            file=sys.stderr,
        )
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(130)  # worker threads are still inside the core; do not wait for them
    except (RuntimeError, OSError) as e:
        _fail(f"run: {e}")
    for label, value in report_lines(report, Store(out)):  # plain lines: greppable logs
        print(f"{label:<15} {value}")
    if report.interrupted:
        return 130
    return 1 if report.failed else 0


def _check_scheduler(text: str) -> None:
    """``--scheduler`` as the runner reads it (:func:`collateral.runner.parse_scheduler`)."""
    from . import runner

    parse = getattr(runner, "parse_scheduler", None)
    if parse is None:  # pragma: no cover - a runner without the check
        return
    try:
        parse(text)
    except ValueError as e:
        msg = str(e)
        _fail(msg if msg.startswith("--scheduler") else f"--scheduler: {msg}")


def _cmd_query(args: argparse.Namespace) -> int:
    from .store import StoreError, open_store

    _input_store("DIR", args.directory)
    try:
        store = open_store(args.directory)
    except StoreError as e:
        _fail(f"DIR: {e}")
    import duckdb

    try:
        df = store.query(args.sql, "pandas")
    except duckdb.Error as e:
        _fail(f"SQL: {str(e).splitlines()[0]}")
    if df is None:
        return 0
    if args.format == "csv":
        # List cells (arrays of a trace or a sweep's values) as JSON, not numpy's repr.
        for c in df.columns:
            if df[c].dtype == object and df[c].map(_is_list).any():
                df[c] = df[c].map(lambda v: json.dumps(_listify(v)) if _is_list(v) else v)
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        print(df.to_json(orient="records", double_precision=15))
    else:
        from rich import box
        from rich.table import Table

        shown = df if not args.max_rows else df.head(args.max_rows)
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        units = [None if args.raw else _column_unit(str(c)) for c in df.columns]
        for c in df.columns:
            t.add_column(str(c), justify="right" if df[c].dtype.kind in "iuf" else "left")
        for row in shown.itertuples(index=False):
            t.add_row(*(_fmt_cell(v, u) for v, u in zip(row, units, strict=True)))
        # In a pipe or a log, do not squeeze the columns into 80 characters.
        console = _console()
        console.print(t)
        if len(shown) < len(df):
            console.print(f"({len(df) - len(shown)} more rows; --max-rows 0 shows all)")
    return 0


def _column_unit(name: str) -> str | None:
    """The unit a result column is stored in: the declared schema's, else the suffix of
    a scenario parameter (``rtt_s``, ``down_rate_bps``); None for other columns."""
    from .schema import column

    declared = column(name)
    if declared is not None:
        return declared["unit"] or None
    for suffix, unit in (("_bps", "bit/s"), ("_s", "s"), ("_bytes", "B")):
        if name.endswith(suffix):
            return unit
    return None


def _fmt_cell(v: Any, unit: str | None) -> str:
    """A table cell in human units (18.68 Mbit/s, 0.94 ms, 30 kB) where the column's
    unit is known; other numbers as :func:`_fmt_number`. ``--raw`` and the csv and json
    formats keep the stored numbers."""
    if _is_null(v):
        return "NULL"
    if unit and isinstance(v, (int, float)) and not isinstance(v, bool):
        x = float(v)
        scales = {
            "bit/s": ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1, "bit/s")),
            "s": ((1, "s"), (0, "ms")),
            "B": ((1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1, "B")),
        }.get(unit)
        if scales is not None:
            scale, name = next(((k, n) for k, n in scales if abs(x) >= k), scales[-1])
            return f"{x / (1e-3 if name == 'ms' else scale):.4g} {name}"
    return _fmt_number(v) if isinstance(v, float) else str(v)


def _fmt_number(v: float) -> str:
    """Six significant digits without an exponent where one is not needed: 1376540
    bit/s reads 1,376,540, not 1.37654e+06."""
    if v != 0 and (abs(v) >= 1e15 or abs(v) < 1e-4):
        return f"{v:.6g}"
    if abs(v) >= 1e5:
        return f"{v:,.0f}"
    return f"{v:.6g}"


def _is_list(v: Any) -> bool:
    return isinstance(v, (list, tuple)) or type(v).__name__ == "ndarray"


def _listify(v: Any) -> Any:
    return [_listify(x) for x in v] if _is_list(v) else (v.item() if hasattr(v, "item") else v)


def _is_null(v: Any) -> bool:
    try:
        return v is None or bool(v != v)
    except (TypeError, ValueError):
        return False


def _cmd_merge(args: argparse.Namespace) -> int:
    from .store import Store, StoreError, open_store

    # Every source (and DEST) checked before anything is merged: a bad second source
    # must not leave the first one merged.
    dest_path = _output_dir("DEST", args.dest, "results/NAME")
    names: dict[str, str] = {}
    for src in args.sources:
        p = _input_store("SRC", src)
        if p.resolve() == dest_path.resolve():
            _fail(f"SRC: {_short(src)}: is DEST itself")
        try:
            names[src] = open_store(p).meta().get("experiment")
        except StoreError as e:
            _fail(f"SRC: {e}")
    if (dest_path / "store.json").exists():
        try:
            names[args.dest] = Store(dest_path).meta().get("experiment")
        except StoreError as e:
            _fail(f"DEST: {e}")
    if len(set(names.values())) > 1:
        shown = ", ".join(f"{k} holds {v!r}" for k, v in names.items())
        _fail(f"merge: not one experiment: {shown}")
    try:
        name = names[args.sources[0]]
        dest = Store.create(args.dest, name)
        dest.lock()
        try:
            added, skipped = dest.merge(args.sources)
            dest.write_views_sql()
        finally:
            dest.unlock()
    except StoreError as e:
        _fail(f"merge: {e}")
    print(f"merged {added:,} trials into {args.dest} ({skipped:,} already there)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---------------------------------------------------------------------------------------
# Reproductions of the published studies, and the HTML report


def _add_reproduce_commands(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce",
        help="run a published experiment and draw its figure (--list shows them)",
        description="Run (or resume) the experiment behind a figure of a published study, "
        "draw the figure (PNG and SVG) and check the paper's claims against our numbers. "
        "--quick runs a reduced version (fewer trials, shorter runs, coarser sweeps) into "
        "its own results directory and labels its figures as such.",
    )
    p.add_argument("ids", metavar="ID", nargs="*", help="figure ids (see --list), or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproducible figures")
    p.add_argument("--quick", action="store_true", help="a reduced, fast version")
    p.add_argument(
        "-o",
        "--out",
        metavar="DIR",
        default="results",
        help="where the results directories go (default: results)",
    )
    p.add_argument(
        "-j",
        "--workers",
        metavar="N",
        type=_count(0, _max_workers),
        default=0,
        help="worker threads, at most 4 per core (default: all cores)",
    )
    c = sub.add_parser(
        "compare",
        help="simulation vs emulation of the same experiment, side by side",
        description="Match the trials of a simulated and an emulated results directory of "
        "the same experiment (same trial keys) and print goodput, CBR loss and delay side "
        "by side with the differences; draw delay CDFs and windows when traces were kept.",
    )
    c.add_argument("sim", metavar="SIM_DIR", help="results of 'collateral run'")
    c.add_argument("emu", metavar="EMU_DIR", help="results of 'collateral emulate FILE'")
    c.add_argument("--plot", metavar="PATH", help="write the comparison figure here")
    r = sub.add_parser(
        "report",
        help="write a self-contained HTML report of results directories",
        description="Write one HTML file with a section per experiment: parameters, trial "
        "counts, figures (embedded), key numbers, and each published claim beside our "
        "value; a simulation-vs-emulation section where emulation results exist.",
    )
    r.add_argument("results", metavar="DIR", nargs="+", help="results directories")
    r.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="report.html",
        help="the HTML file to write (default: report.html)",
    )


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from .reproduce import STUDIES, TestbedUnavailable, format_claims_summary, reproduce

    console = _console()
    if args.list or not args.ids:
        width = max(len(i) for i in STUDIES)
        for f in STUDIES.values():
            where = " [testbed: real Linux TCP, needs root; not in 'all']" if f.testbed else ""
            print(f"{f.id:<{width}}  {f.paper}: {f.title}{where}")
        return 0 if args.list else 2
    ids = [i for i, f in STUDIES.items() if not f.testbed] if args.ids == ["all"] else args.ids
    unknown = [i for i in ids if i not in STUDIES]
    if unknown:
        _fail(f"reproduce: unknown figure {_short(unknown[0])}; see 'collateral reproduce --list'")
    _output_dir("--out", args.out, "results")
    from .experiment import ExperimentError
    from .store import StoreError

    claims: list[Any] = []
    for fid in ids:
        try:
            rep = reproduce(fid, out=args.out, quick=args.quick, workers=args.workers)
        except (ExperimentError, StoreError, TestbedUnavailable) as e:
            _fail(f"reproduce: {fid}: {e}")
        except OSError as e:
            _fail(f"reproduce: {fid}: {e.strerror or e}: {e.filename or args.out}")
        except KeyboardInterrupt:
            print(
                "collateral: interrupted; finished trials are kept, rerun to resume",
                file=sys.stderr,
            )
            return 130
        console.print(
            f"[bold]{fid}[/bold]: {rep.trials_run} trials run ({rep.trials_total} in the "
            f"experiment) in {rep.wall_s:.1f} s; results in {rep.store}"
        )
        for f in rep.files:
            console.print(f"  {'caption' if f.suffix == '.txt' else 'figure'} {f}")
        for c in rep.claims:
            mark = {True: "[green]holds[/green]", False: "[red]differs[/red]", None: ""}[c.holds]
            pub = f" (paper: {c.published})" if c.published else ""
            tol = f" [tolerance: {c.tolerance}]" if c.tolerance else ""
            # The claims' own brackets ("[base, max]") are text, not console markup.
            console.print(escape(f"  {c.text}: {c.ours}{pub}{tol}") + f" {mark}")
        claims += rep.claims
    if len(ids) > 1 or claims:
        console.print(f"[bold]{format_claims_summary(claims)}[/bold]")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import ReportError, write_report

    output = _output_file("--output", args.output, "report.html")
    dirs = [_input_store("DIR", r) for r in args.results]
    try:
        path = write_report(dirs, output)
    except ReportError as e:
        _fail(f"report: {e}")
    except OSError as e:
        _fail(f"--output: {_short(args.output)}: {e.strerror or e}")
    print(f"wrote {path}")
    return 0


def _cmd_emulate_experiment(args: argparse.Namespace) -> int:
    from .emulate import EmulationError, check_ready, check_testbed, emulate_experiment
    from .experiment import ExperimentError, load_experiment
    from .store import StoreError

    if args.out is not None:
        _output_dir("--out", args.out, "results/NAME-emu")
    try:
        exp = load_experiment(args.experiment)
    except ExperimentError as e:
        _fail(str(e))
    for p in exp.points:  # every point within the testbed's limits before the first runs
        try:
            check_testbed(p.scenario)
        except EmulationError as e:
            where = f"point {p.index}" + (f" {_short(p.values, 80)}" if p.values else "")
            _fail(f"emulate: {exp.source}: {where}: {e}")
    for t in itertools.islice(exp.iter_trials(), 1):
        try:
            check_ready(t.scenario())
        except EmulationError as e:
            _fail(f"emulate: {e}")
    out = args.out if args.out is not None else str(Path("results") / f"{exp.name}-emu")
    if args.out is None:
        _output_dir("--out", out, "results/NAME-emu")

    def progress(n: int, total: int, trial: Any) -> None:
        print(f"  trial {n}/{total} done ({trial.key})", file=sys.stderr)

    try:
        ran, total = emulate_experiment(exp, out, progress)
    except (EmulationError, StoreError) as e:
        _fail(f"emulate: {e}")
    except KeyboardInterrupt:
        print("collateral: interrupted; finished trials are kept, rerun to resume", file=sys.stderr)
        return 130
    print(f"{ran} trials emulated ({total} in the experiment); results in {out}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from rich.table import Table

    from .plot.compare import compare_stores, fig_compare_stores
    from .store import StoreError, open_store

    _input_store("SIM_DIR", args.sim)
    _input_store("EMU_DIR", args.emu)
    if args.plot is not None:
        _output_file("--plot", args.plot, "out/compare.png", figure=True)
    try:
        sim, emu = open_store(args.sim), open_store(args.emu)
        rows = compare_stores(sim, emu)
    except (StoreError, ValueError) as e:
        _fail(f"compare: {e}")
    t = Table(title=f"simulation ({args.sim}) vs emulation ({args.emu})", title_justify="left")
    for col in ("metric", "simulation", "emulation", "difference"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for r in rows:
        diff = f"{r['diff']:+.2f} {r['diff_unit']}" if r["diff"] == r["diff"] else "n/a"
        t.add_row(f"{r['metric']} ({r['unit']})", f"{r['sim']:.4g}", f"{r['emu']:.4g}", diff)
    _console().print(t)
    if args.plot is not None:
        for p in fig_compare_stores(sim, emu, args.plot):
            print(f"wrote {p}")
    return 0


# ---------------------------------------------------------------------------------------
# The advisor


def _add_advise_command(sub: Any) -> None:
    from .advise import APP_ALIASES, APPS, MAX_TCP_FLOWS, MAX_TRIALS

    a = sub.add_parser(
        "advise",
        help="which queue and congestion control keep an application within its budget",
        description="Simulate the link with bulk downloads beside a real-time application "
        "for drop-tail queues of 1/4 to 4 BDP, CoDel, FQ-CoDel and PIE under each congestion "
        "control, and recommend the one that meets the application's target (VoIP: MOS; "
        "games: share of packets over the genre's delay budget) with the most goodput.",
    )
    a.add_argument(
        "--link",
        metavar="PRESET",
        default=None,
        help=f"a link preset: {', '.join(LINK_PRESETS)} (default: adsl1)",
    )
    a.add_argument("--down", metavar="RATE", help="downlink rate (with --up, instead of --link)")
    a.add_argument("--up", metavar="RATE", help="uplink rate")
    a.add_argument("--rtt", metavar="TIME", default="100ms", help="base RTT (default: 100ms)")
    a.add_argument(
        "--app",
        choices=[*APPS, *APP_ALIASES],
        default="voip",
        help="the real-time application (g711, quake3 and wow, as simulate names them, are"
        " voip, fps and mmo)",
    )
    a.add_argument(
        "--tcp-flows",
        metavar="N",
        type=_count(1, MAX_TCP_FLOWS),
        default=1,
        help="bulk downloads (default: 1)",
    )
    a.add_argument(
        "--cc",
        metavar="CC",
        action="append",
        help="congestion controls to try (repeatable; default: newreno and cubic)",
    )
    a.add_argument("--profile", default="linux-6", help="stack profile (default: linux-6)")
    a.add_argument(
        "--trials",
        metavar="N",
        type=_count(1, MAX_TRIALS),
        default=3,
        help=f"trials per candidate, at most {MAX_TRIALS} (default: 3)",
    )
    a.add_argument(
        "--duration", metavar="TIME", default="60s", help="per trial, at most 1h (default: 60s)"
    )
    a.add_argument(
        "--target",
        metavar="X",
        type=_finite_float,
        help="MOS at least X, 1 to 4.5 (voip, default 4.0), or at most this share of packets"
        " late, 0 to 1 (games, default 0.01)",
    )
    a.add_argument(
        "--budget",
        metavar="TIME",
        help="a game's one-way delay budget, base delay included (default: the genre's: "
        "fps 100ms, mmo 500ms, rts 1000ms); voip is rated by its MOS instead",
    )
    a.add_argument("--seed", metavar="N", type=_count(0, 2**62), default=1)
    a.add_argument("--plot", metavar="PATH", help="write the goodput-vs-quality figure here")


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_short(text)} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{_short(text)}: must be a finite number")
    return value


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


def _cmd_advise(args: argparse.Namespace) -> int:
    from .advise import advise, plot, table, verdict

    if args.plot is not None:
        _output_file("--plot", args.plot, "out/advice.png", figure=True)
    link = args.link if args.link or args.down or args.up else "adsl1"
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
        _fail(f"{option}: {e.message}" if option else f"advise: {e}")
    except ValueError as e:  # the core stopped a trial
        _fail(f"advise: {e}")
    _console().print(table(adv))
    for line in verdict(adv):
        print(line)
    if args.plot is not None:
        for p in plot(adv, args.plot):
            print(f"wrote {p}")
    return 0
