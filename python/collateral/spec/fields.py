"""The flat scenario parameters, each declared once.

A :class:`Field` says a parameter's name, the Python types it takes, its default, its
help text and unit, its CLI group and option, and where it lands in the
:class:`~collateral.spec.Scenario` (key paths), so that everything else is derived from
:data:`FIELDS`: the signatures of :func:`~collateral.spec.build_scenario` and
:func:`collateral.simulate`, their type checks and docstrings, the options of every
command that takes a scenario (``simulate``, ``emulate``, ``advise``), and the name an
error from a nested field or from the core is reported under
(:func:`collateral.spec.errors.flat_param`).
Adding a parameter is one entry here and its use in ``build_scenario``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from ..units import QueueLimit
from ..vocabulary import (
    APP_PROFILES,
    AQM_SHORTHANDS,
    CBR_CHOICES,
    CBR_ECN_CODEPOINTS,
    CC_ALGORITHMS,
    DIRECTIONS,
    DSCP_NAMES,
    LEO_PRESETS,
    LINK_PRESETS,
    MAX_TCP_FLOWS,
    MAX_WEB_SLOTS,
    MEDIA_CONTROLLERS,
    PROFILES,
    RULES,
    TCP_ECN_MODES,
    WORKLOADS,
)

#: A unit value: text such as "100ms", or a number in the base unit.
_NUMBER = (str, int, float)
#: ``cli_default`` when the CLI's default is the declared one.
SAME = object()


@dataclass(frozen=True)
class Field:
    """One flat scenario parameter."""

    name: str
    #: Types of value it takes (``int`` also takes any integral number, never a bool);
    #: a model by its name (:func:`_model`; imported at the first check, so that the
    #: CLI's options and its ``--help`` import no pydantic).
    types: tuple[type | str, ...]
    default: Any
    #: The help text, without the default (see ``default_text``).
    help: str
    #: The CLI's option group: link, queue, traffic or trial.
    group: str
    metavar: str | None = None
    #: None is a value (the scenario, the link preset or the profile decides).
    optional: bool = False
    #: A value with a unit (rate, time, size): a message shows the value as given.
    unit: bool = False
    #: The Scenario key paths it sets (``"*"``: any index); the longest that matches an
    #: error's path names the parameter at fault.
    lands: tuple[tuple[str, ...], ...] = ()
    #: How the help shows the default; None: the default itself; "": not at all.
    default_text: str | None = None
    #: The CLI's option when not ``--name-with-dashes`` (:func:`collateral.cli.scenario.option`).
    cli: str | None = None
    #: Further CLI options for the same parameter (older or shorter names).
    cli_aliases: tuple[str, ...] = ()
    #: The CLI's default when not ``default`` (``--queue`` stays unset beside ``--aqm``).
    cli_default: Any = SAME
    #: A whole number from lo to hi, read by the CLI before the scenario is built.
    count: tuple[int, int] | None = None
    #: The CLI's choices (a closed list argparse checks).
    choices: tuple[str, ...] | None = None

    @property
    def annotation(self) -> str:
        """The type as a signature shows it: ``str | float | None``."""
        names = self.type_names()
        if names[:3] == ["str", "int", "float"]:
            names = ["str", "float", *names[3:]]  # an int is a float to a reader
        return " | ".join(names + (["None"] if self.optional else []))

    def type_names(self) -> list[str]:
        """Its types' names: ``["str", "dict", "AqmSpec"]``."""
        return [t if isinstance(t, str) else t.__name__ for t in self.types]

    def help_text(self) -> str:
        """The help with its default: ``... (default: 100ms)``."""
        shown = self.default if self.default_text is None else self.default_text
        if isinstance(shown, bool) or shown is None or shown == "":
            return self.help
        return f"{self.help} (default: {shown})"

    def accepts(self, value: object) -> bool:
        """Whether ``value`` has one of this parameter's types (a bool is no number,
        NaN and infinity are no value)."""
        import math
        import numbers

        if value is None:
            return self.optional
        kinds = tuple(
            numbers.Integral if t is int else _model(t) if isinstance(t, str) else t
            for t in self.types
        )
        if isinstance(value, bool) and bool not in self.types:
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return isinstance(value, kinds)


def _model(name: str) -> type:
    """A model named in a declaration (``"AqmSpec"``)."""
    from .link import AqmSpec

    return {"AqmSpec": AqmSpec}[name]


_PRESETS = ", ".join(f"{k} = {d} down / {u} up" for k, (d, u) in LINK_PRESETS.items())
_BOTH = (("down",), ("up",))


def _both(*tail: str) -> tuple[tuple[str, ...], ...]:
    return tuple((*d, *tail) for d in _BOTH)


#: Every flat parameter, in the order the CLI's help lists them.
FIELDS: tuple[Field, ...] = (
    # link
    Field(
        "link", (str,), None, f"a link preset instead of --down/--up: {_PRESETS}", "link",
        metavar="NAME", optional=True, default_text="adsl1", lands=(("link",),),
    ),
    Field(
        "down", _NUMBER, None, "downstream bottleneck rate in bit/s, e.g. 1.5Mbit, 24Mbit,"
        " 1500000", "link", metavar="RATE", optional=True, unit=True,
        lands=(("down",), ("down", "rate")),
    ),
    Field(
        "up", _NUMBER, None, "upstream bottleneck rate in bit/s, e.g. 256kbit, 1Mbit", "link",
        metavar="RATE", optional=True, unit=True, lands=(("up",), ("up", "rate")),
    ),
    Field(
        "down_trace", (str,), None, "a Mahimahi packet-delivery trace for the downstream"
        " instead of a rate (one millisecond per line, each an opportunity of 1504 bytes;"
        " it repeats after its last line)", "link", metavar="FILE", optional=True,
        lands=(("down", "trace"),),
    ),
    Field(
        "up_trace", (str,), None, "the same for the upstream", "link", metavar="FILE",
        optional=True, lands=(("up", "trace"),),
    ),
    Field(
        "leo", (str,), None, "a low-Earth-orbit satellite link in both directions instead"
        " of --down/--up: rate and delay redrawn every 15 s, a delay spike and a loss burst"
        f" at each reconfiguration ({', '.join(LEO_PRESETS)}); give --rtt for its base",
        "link", metavar="NAME", optional=True, choices=tuple(LEO_PRESETS),
        lands=(("down", "leo"), ("up", "leo")),
    ),
    Field(
        "up_docsis", (str, dict), None, "a DOCSIS upstream: the modem sends in granted"
        " MAP intervals after a request (the --up rate is the channel's); 'on' for the"
        " defaults, 'off' for none, or KEY=VALUE,... of map_interval (2ms), request_grant (1.5ms),"
        " max_grant (bytes a grant may carry; none: no cap), free_mean (1), free_variation (0)",
        "link", metavar="SPEC",
        optional=True, lands=(("up", "docsis"),),
    ),
    Field(
        "framing", (str,), None, "link-layer framing in both directions, as CAKE's overhead"
        " keywords describe it: BYTES added to every packet (18: Ethernet and its CRC),"
        " atm (ATM cells after PPPoA VC-MUX's 10 bytes) or atm:BYTES (atm:32 for PPPoE over"
        " LLC/SNAP); the rate is the line's (default: none, the rate counts IP bytes)",
        "link", metavar="FRAMING", optional=True, default_text="",
        lands=_both("framing"),
    ),
    Field(
        "rtt", _NUMBER, "100ms", "base round-trip time, half of it propagation each way",
        "link", metavar="TIME", unit=True, lands=(("rtt",),),
    ),
    # queue
    Field(
        "queue", (*_NUMBER, QueueLimit), "20kB", "drop-tail limit: bytes (20kB = 20000 B,"
        " 64KiB, 1500B) or packets (27p) (default: 20kB, the studies' ADSL queue: small"
        " for a fast link); with --aqm, the AQM's limit"
        " (packets; bytes for cake)", "queue", metavar="LIMIT", unit=True, default_text="",
        cli_default=None, lands=(*_both("queue"), *_both("queue", "limit")),
    ),
    Field(
        "rule", (str,), None, f"when the queue is full: {', '.join(RULES)}", "queue",
        metavar="RULE", optional=True,
        default_text="ps for a limit in packets, else fb-strict", lands=_both("queue", "rule"),
    ),
    Field(
        "count_in_service", (bool,), False, "count the packet being transmitted as still"
        " queued (default: it leaves the queue when its transmission starts)", "queue",
        lands=_both("queue", "count_in_service"),
    ),
    Field(
        "aqm", (str, dict, "AqmSpec"), None, "an AQM instead of drop-tail:"
        f" {', '.join(AQM_SHORTHANDS)} with their defaults; lld (DualPI2 as Low Latency"
        " DOCSIS runs it: its settings and delay estimate); KIND:KEY=VALUE,... with"
        " parameters in human units, e.g."
        " fq_codel:target=5ms,ecn=off or cake:bandwidth=1.4Mbit,diffserv=diffserv4,"
        'ack_filter=normal; or a JSON object such as \'{"kind": "red", "min_th": 5, '
        '"max_th": 15, "max_p": 0.1, "w_q": 0.002, "limit": 60}\'', "queue",
        metavar="KIND", optional=True,
    ),
    # traffic
    Field(
        "tcp_flows", (int,), 1, "bulk TCP downloads (from the Internet side to the home)",
        "traffic", metavar="N", count=(0, MAX_TCP_FLOWS), lands=(("tcp",),),
        cli="--downloads", cli_aliases=("--tcp-flows",),
    ),
    Field(
        "uploads", (int,), 0, "bulk TCP uploads (from the home to the Internet side: they"
        " fill the upstream queue, where an asymmetric link's call suffers most)", "traffic",
        metavar="N", count=(0, MAX_TCP_FLOWS),
    ),
    Field(
        "workload", (str,), None, "a built-in workload instead of --downloads, --uploads and"
        " the CBR flows: rrul (Flent's Realtime Response Under Load: 4 TCP downloads and 4"
        " uploads marked CS0, CS1, CS5, EF after 5 s idle, UDP and ping round-trip probes"
        " every 200 ms), rrul_be (all best effort) or responsiveness (the responsiveness"
        " draft's load: one more flow each way per second up to 16, RRUL-BE's probes); the"
        " trial is scored (RPM, bufferbloat grade, AIM, QoO); its flows run --cc (Flent's"
        " RRUL on a Linux host runs CUBIC: --cc cubic)", "traffic", metavar="NAME",
        optional=True, choices=WORKLOADS, lands=(("workload",),),
    ),
    Field(
        "cc", (str,), "newreno", f"TCP congestion control: {', '.join(CC_ALGORITHMS)}",
        "traffic", metavar="ALGO", lands=(("tcp", "*", "cc"),),
    ),
    Field(
        "ecn", (str,), "off", f"ECN of the TCP flows: {', '.join(TCP_ECN_MODES)} (classic:"
        " RFC 3168, ECT(0); l4s: ECT(1), what --cc dctcp and prague need)", "traffic",
        metavar="MODE", lands=(("tcp", "*", "ecn"),),
    ),
    Field(
        "profile", (str,), "linux-6", "TCP stack profile: delayed ACKs, recovery style, RTO,"
        f" initial window ({', '.join(PROFILES)}; default: linux-6, a modern Linux sender)",
        "traffic", metavar="STACK", default_text="",
        # Any other TCP setting of a flow comes from its profile.
        lands=(("tcp", "*"),),
    ),
    Field(
        "delayed_ack", (bool,), None, "delayed ACKs (default: the profile's); off"
        " (False, --no-delayed-ack): ACK every segment instead of every second one",
        "traffic", optional=True, cli="--no-delayed-ack", lands=(("tcp", "*", "delayed_ack"),),
    ),
    Field(
        "rto_min", _NUMBER, None, "minimum TCP retransmission timeout", "traffic",
        metavar="TIME", optional=True, unit=True,
        default_text="the profile's, 200ms for Linux", lands=(("tcp", "*", "rto_min"),),
    ),
    Field(
        "start_spread", _NUMBER, "1s", "each bulk flow starts at a random offset up to this,"
        " drawn from the seed (so flows do not run in lockstep; trials differ); 0 = all at"
        " once", "traffic", metavar="TIME", unit=True, lands=(("tcp", "*", "start_spread"),),
    ),
    Field(
        "cbr", (str,), "both", "directions of VoIP-like CBR flows", "traffic",
        choices=CBR_CHOICES, lands=(("cbr",),),
    ),
    Field(
        "cbr_size", _NUMBER, "186B", "CBR packet IP length in bytes, e.g. 186B or 200",
        "traffic", metavar="SIZE", unit=True, lands=(("cbr", "*", "size"),),
    ),
    Field(
        "cbr_interval", _NUMBER, "20ms", "mean gap between CBR packets", "traffic",
        metavar="TIME", unit=True, lands=(("cbr", "*", "interval"),),
    ),
    Field(
        "jitter", _NUMBER, "1ms", "std. deviation of normal jitter on each CBR gap; 0 = none",
        "traffic", metavar="TIME", unit=True, lands=(("cbr", "*", "jitter"),),
    ),
    Field(
        "cbr_dscp", (str, int), 0, "DSCP of the CBR / application packets: 0 to 63 or a"
        f" name ({', '.join(DSCP_NAMES)}); CAKE's diffserv tins, CBT and CBQ read it",
        "traffic", metavar="DSCP", default_text="0, best effort", lands=(("cbr", "*", "tag"),),
    ),
    Field(
        "cbr_ecn", (str,), "not_ect", "ECN codepoint of the CBR / application packets:"
        f" {', '.join(CBR_ECN_CODEPOINTS)} (ect1: DualPI2's low-latency queue, RFC 9331)",
        "traffic", choices=CBR_ECN_CODEPOINTS, lands=(("cbr", "*", "ecn"),),
    ),
    Field(
        "app", (str,), None, "a thin-stream application instead of the CBR flow(s): "
        f"{', '.join(APP_PROFILES)} (directions as --cbr)", "traffic", metavar="APP",
        optional=True, lands=(("cbr", "*", "app"),),
    ),
    Field(
        "web_users", (int,), 0, "web users browsing downstream (Mah's HTTP model, think"
        " times up to 5 min, the --profile stack; default: 0)", "traffic", metavar="N",
        default_text="", count=(0, MAX_WEB_SLOTS // 4), lands=(("web",),),
    ),
    Field(
        "video", (str,), None, "a video call beside the other traffic, its rate set by this"
        f" congestion controller: {', '.join(MEDIA_CONTROLLERS)} (draft-ietf-rmcat-gcc-02,"
        " RFC 8698, RFC 8298 on RFC 8888 feedback; RFC 8593's synthetic encoder, 30 fps, no"
        " audio)", "traffic",
        metavar="CC", optional=True, default_text="none", lands=(("media",),),
    ),
    Field(
        "video_direction", (str,), "down", "which way the video goes (its feedback the other)",
        "traffic", choices=DIRECTIONS, lands=(("media", "direction"),),
    ),
    Field(
        "video_max_rate", _NUMBER, "1.5Mbit", "the video encoder's highest rate (RFC 8867's"
        " test cases: 150 kbit/s to 1.5 Mbit/s)", "traffic", metavar="RATE", unit=True,
        lands=(("media", "max_rate"),),
    ),
    # trial
    Field(
        "duration", _NUMBER, "60s", "simulated time, e.g. 60s, 3min", "trial", metavar="TIME",
        unit=True, lands=(("duration",), ("bin",)),  # bins: as many as the duration holds
    ),
    Field(
        "warmup", _NUMBER, "5s", "initial time excluded from the measurements", "trial",
        metavar="TIME", unit=True, lands=(("warmup",),),
    ),
    Field(
        "seed", (int,), 1, "random seed; the same seed gives the same result", "trial",
        metavar="N", count=(0, 2**64 - 1), lands=(("seed",),),
    ),
)  # fmt: skip

#: The fields by name.
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}


def unknown_hint(key: str, known: list[str]) -> str:
    """What to say of an unknown keyword ``key``: the parameter the command line calls
    so (``downloads``: ``tcp_flows``), else the closest known name, else every one."""
    import difflib

    for f in FIELDS:
        spelled = [o.removeprefix("--") for o in (f.cli, *f.cli_aliases) if o]
        if key in spelled and f.name in known:
            return f"; the command line's --{key} is {f.name!r} here"
    close = difflib.get_close_matches(key, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"


#: The CLI's option groups, in order, with their titles.
GROUPS: dict[str, str] = {
    "link": "link",
    "queue": "queue (the same in both directions)",
    "traffic": "traffic",
    "trial": "trial",
}


def signature(leading: tuple[inspect.Parameter, ...] = ()) -> inspect.Signature:
    """The keyword-only signature of the flat parameters (after ``leading`` ones), for
    help(), completion and :func:`inspect.signature`."""
    kw = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter(f.name, kw, default=f.default, annotation=f.annotation) for f in FIELDS
    ]
    return inspect.Signature([*leading, *params])


def docs() -> str:
    """The parameters as a docstring section: name, type, default and help."""
    lines = ["Parameters (keyword-only; units as the CLI takes them):", ""]
    for f in FIELDS:
        lines.append(f"``{f.name}``: {f.annotation} = {f.default!r}")
        lines.append(f"    {f.help_text()}")
    return "\n".join(lines)
