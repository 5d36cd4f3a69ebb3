"""The flat form of a scenario shared by the CLI and :func:`collateral.simulate`:
:func:`build_scenario` builds a :class:`Scenario` from the parameters that
:mod:`collateral.spec.fields` declares, and ``aqm=`` in its three spellings."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ValidationError

from ..display import short
from ..vocabulary import (
    APP_PROFILES,
    AQM_INFO,
    AQM_KINDS,
    AQM_SHORTHANDS,
    CBR_CHOICES,
    CBR_ECN_CODEPOINTS,
    DIRECTIONS,
    DSCP,
    DSCP_NAMES,
    LEO_PRESETS,
    MAX_TCP_FLOWS,
    MAX_WEB_SLOTS,
    MEDIA_CONTROLLERS,
    WORKLOADS,
)
from .docsis import LLD_DUALPI2, parse_docsis
from .errors import SpecError, error_at, first_error, flat_param
from .fields import BY_NAME, FIELDS, docs, signature, unknown_hint
from .link import AqmSpec
from .scenario import DEFAULT_LINK, Scenario, uses_default_link
from .tcp import TcpSpec
from .traffic import CbrSpec
from .workload import WorkloadSpec

#: A round trip at least this long is valid but rarely meant (a bare ``100`` is seconds).
UNUSUAL_RTT_NS = 5_000_000_000
#: Below this a link rate given as a bare number was surely meant in kbit/s (--down 1500).
UNUSUAL_RATE_BPS = 10_000


def unusual_rtt(rtt_ns: int, given: object = None) -> str | None:
    """Why a round trip of ``rtt_ns`` (given as ``given``) is probably not what was
    meant, or None: what the CLI's ``--rtt`` and the API's ``rtt=`` warn alike."""
    if rtt_ns < UNUSUAL_RTT_NS:
        return None
    text = str(given).strip() if isinstance(given, str | int | float) else ""
    try:
        bare = bool(text) and not isinstance(given, bool) and math.isfinite(float(text))
    except ValueError:
        bare = False
    hint = f"; did you mean {text}ms?" if bare else ""
    return f"read as {rtt_ns / 1e9:g} s, an unusual round trip{hint}"


#: A full-size TCP segment's IP length: a byte-limited queue below it takes none.
FULL_SEGMENT_BYTES = 1500


#: Why a queue below that is probably not what was meant.
SMALL_LIMIT = "smaller than one 1500-byte packet; the queue drops every full-size TCP segment"


def small_byte_limits(scenario: Any) -> list[tuple[str, int]]:
    """(direction, bytes) of each drop-tail queue limited below one full-size segment:
    it drops every 1500-byte packet (``queue=100`` is 100 B). What the CLI's --queue,
    the API's queue= and an experiment file's points warn about alike."""
    out = []
    for d in ("down", "up"):
        limit = getattr(getattr(getattr(scenario, d, None), "queue", None), "limit", None)
        amount, unit = getattr(limit, "amount", None), getattr(limit, "unit", None)
        if unit == "bytes" and amount is not None and amount < FULL_SEGMENT_BYTES:
            out.append((d, amount))
    return out


def unusual_aqm_times(aqm: object) -> list[str]:
    """An AQM's times given as bare numbers of a second or more (``pie:target=15``,
    15 s, where 15 ms was surely meant): ``key=value: read as N s; did you mean Nms?``
    each, for the CLI's --aqm and the API's aqm= to warn alike."""
    from ..units import parse_duration
    from .link import AQM_HUMAN_UNITS

    try:
        q = parse_aqm_shorthand(aqm) if isinstance(aqm, str) and ":" in aqm else aqm
    except SpecError:
        return []  # refused elsewhere, with its own message
    if not isinstance(q, dict):
        return []
    out = []
    for key, value in q.items():
        parse = AQM_HUMAN_UNITS.get(key, (key, None))[1]
        if parse is not parse_duration or isinstance(value, bool):
            continue
        try:
            seconds = float(str(value).strip())
        except ValueError:
            continue  # a unit was given ("15ms")
        if math.isfinite(seconds) and seconds >= 1:
            out.append(f"{key}={value}: read as {seconds:g} s; did you mean {value}ms?")
    return out


#: PPPoA VC-MUX's per-packet bytes before ATM segmentation: what ``atm`` alone means.
ATM_DEFAULT_OVERHEAD = 10


def parse_framing(text: str) -> dict[str, Any]:
    """``18``, ``atm`` or ``atm:32`` as the framing spec (SpecError naming --framing)."""
    word, _, rest = str(text).strip().lower().partition(":")
    atm = word == "atm"
    number = rest if atm else word
    if atm and not rest:
        number = str(ATM_DEFAULT_OVERHEAD)
    try:
        overhead = int(number)
    except ValueError:
        overhead = -1
    if overhead < 0 or overhead > 256 or (rest and not atm):
        raise SpecError(
            "framing",
            f"{short(text)}: expected BYTES (0-256), atm or atm:BYTES, e.g. 18, atm, atm:32",
        )
    return {"overhead": f"{overhead}B", "atm": atm}


#: The flat parameters a built-in workload's own flows replace.
WORKLOAD_REPLACES = (
    "tcp_flows",
    "uploads",
    "cbr",
    "cbr_size",
    "cbr_interval",
    "jitter",
    "cbr_dscp",
    "cbr_ecn",
    "app",
)


def _check_video_max(text: Any) -> None:
    """The call's top rate, named by its option, against the encoder's least rate (the
    call's own check says "min_rate 150000 is above max_rate 2", naming the call)."""
    from ..units import bare_number, fmt_rate, parse_rate
    from .media import MediaSpec

    try:
        bps = parse_rate(text)
    except (TypeError, ValueError):
        return  # the call's own check names it
    least = MediaSpec.model_fields["min_rate"].default
    if bps < least:
        # A bare number is bit/s: 2 meant 2 Mbit/s, 1500 meant 1500 kbit/s (a call's
        # rate is at most 1 Gbit/s).
        unit = "kbit" if bare_number(text) and float(text) >= 1000 else "Mbit"
        hint = f"; did you mean {text}{unit}?" if bare_number(text) else ""
        raise SpecError(
            "video_max_rate",
            f"{short(text)}: {fmt_rate(bps)}, below the encoder's least rate"
            f" {fmt_rate(least)}{hint}",
        )


def build_scenario(**params: Any) -> Scenario:
    """The common experiment in flat form: ``tcp_flows`` bulk downloads, ``uploads``
    bulk uploads and CBR ``cbr`` = down | up | both | none, the same queue in both
    directions; or a built-in ``workload`` (rrul, rrul_be) in their place.

    Without ``link`` or rates, the link is ADSL1. Raises :class:`SpecError` (a
    ValueError) naming the parameter at fault, before anything is built: a value of the
    wrong type, out of range, or a scenario the core could not hold; TypeError for a
    parameter it does not take.
    """
    p = bind("build_scenario", params)
    link, down, up, rtt = p["link"], p["down"], p["up"], p["rtt"]
    traces = {d: p[f"{d}_trace"] for d in DIRECTIONS}
    docsis = p["up_docsis"]
    if isinstance(docsis, str):
        try:
            docsis = parse_docsis(docsis)
        except ValueError as e:
            raise SpecError("up_docsis", str(e)) from None
    queue, rule, count_in_service, aqm = p["queue"], p["rule"], p["count_in_service"], p["aqm"]
    tcp_flows, cc, ecn, profile = p["tcp_flows"], p["cc"], p["ecn"], p["profile"]
    uploads, cbr_ecn, dscp = p["uploads"], p["cbr_ecn"], dscp_value(p["cbr_dscp"])
    delayed_ack, rto_min, cbr, app = p["delayed_ack"], p["rto_min"], p["cbr"], p["app"]
    cbr_size, cbr_interval, jitter = p["cbr_size"], p["cbr_interval"], p["jitter"]
    web_users, duration, warmup, seed = p["web_users"], p["duration"], p["warmup"], p["seed"]
    video, video_dir, video_max = p["video"], p["video_direction"], p["video_max_rate"]
    if isinstance(video, str) and video.strip().lower() == "none":  # as the help says
        video = None
    framing = parse_framing(p["framing"]) if p["framing"] is not None else None
    leo = p["leo"]
    if leo is not None and leo not in LEO_PRESETS:
        raise SpecError(
            "leo", f"unknown satellite link {short(leo)}; known: {', '.join(LEO_PRESETS)}"
        )
    if leo is not None and (link is not None or down is not None or up is not None):
        raise SpecError("leo", "a satellite link sets both rates; leave out link, down and up")
    rated = down is not None or up is not None or leo is not None
    if link is None and uses_default_link(rated, [t is not None for t in traces.values()]):
        link = DEFAULT_LINK
    if link is not None and (down is not None or up is not None):
        raise SpecError("link", "give either a link preset or the down and up rates, not both")
    for d, rate in (("down", down), ("up", up)):
        if link is None and rate is None and traces[d] is None and leo is None:
            raise SpecError(
                d, "rate missing; give both down and up rates (or a trace), or a link preset"
            )
        if rate is not None and traces[d] is not None:
            raise SpecError(f"{d}_trace", f"give either --{d} or --{d}-trace, not both")
    if cbr not in CBR_CHOICES:
        raise SpecError("cbr", f"{short(cbr)} is not one of {', '.join(CBR_CHOICES)}")
    for name, n in (("tcp_flows", tcp_flows), ("uploads", uploads)):
        if not 0 <= n <= MAX_TCP_FLOWS:
            raise SpecError(name, f"{short(n)}: give a whole number >= 0 and <= {MAX_TCP_FLOWS}")
    if tcp_flows + uploads > MAX_TCP_FLOWS:
        raise SpecError(
            "uploads", f"{tcp_flows} downloads + {uploads} uploads: at most {MAX_TCP_FLOWS} flows"
        )
    if cbr_ecn not in CBR_ECN_CODEPOINTS:
        raise SpecError(
            "cbr_ecn", f"{short(cbr_ecn)} is not one of {', '.join(CBR_ECN_CODEPOINTS)}"
        )
    max_users = MAX_WEB_SLOTS // 4  # 4 parallel connections each
    if not 0 <= web_users <= max_users:
        raise SpecError(
            "web_users",
            f"{short(web_users)}: give a whole number >= 0 and <= {max_users}"
            f" ({MAX_WEB_SLOTS} connection slots, 4 per user)",
        )
    if video is not None and video not in MEDIA_CONTROLLERS:
        raise SpecError(
            "video",
            f"{short(video)} is not a controller; supported: {', '.join(MEDIA_CONTROLLERS)}",
        )
    if video_dir not in DIRECTIONS:
        raise SpecError(
            "video_direction", f"{short(video_dir)} is not one of {', '.join(DIRECTIONS)}"
        )
    for name, v in (("video_max_rate", video_max), ("video_direction", video_dir)):
        if video is None and v != BY_NAME[name].default:
            raise SpecError(name, f"{short(v)} describes a video call: give video too")
    workload = p["workload"]
    if workload is not None and workload not in WORKLOADS:
        raise SpecError("workload", f"{short(workload)} is not one of {', '.join(WORKLOADS)}")
    # The workload's own flows replace these: a value given for one would be ignored.
    for name in WORKLOAD_REPLACES:
        if workload is not None and p[name] != BY_NAME[name].default:
            raise SpecError(name, f"{short(p[name])}: the workload {workload} sets the flows")
    if app is not None and cbr == "none":
        raise SpecError("app", f"{short(app)} is what the CBR flows send; cbr none has none")
    if app is not None and app not in APP_PROFILES:
        raise SpecError(
            "app", f"unknown application {short(app)}; supported: {', '.join(APP_PROFILES)}"
        )
    q: dict[str, Any] = {"limit": queue, "rule": rule, "count_in_service": count_in_service}
    if aqm is not None:
        q = aqm_queue(aqm)
        # Drop-tail's settings beside an AQM are its limit or an error, never ignored.
        for name in ("rule", "count_in_service"):
            if name in params and params[name] not in (None, False):
                raise SpecError(name, "a drop-tail setting; it does not apply to an AQM")
        if "queue" in params and params["queue"] is not None:
            q = aqm_limit(q, params["queue"])
    flow = {
        "cc": cc,
        "profile": profile,
        "ecn": ecn,
        "delayed_ack": delayed_ack,
        "rto_min": rto_min,
        "start_spread": p["start_spread"],
    }
    data = {
        "seed": seed,
        "link": link,
        "duration": duration,
        "warmup": warmup,
        "rtt": rtt,
        **{
            d: {"rate": rate, "queue": q}
            | ({"trace": {"file": traces[d]}} if traces[d] is not None else {})
            | ({"docsis": docsis} if d == "up" and docsis is not None else {})
            | ({"leo": LEO_PRESETS[leo][d]} if leo is not None else {})
            | ({"framing": framing} if framing is not None else {})
            for d, rate in (("down", down), ("up", up))
        },
        "tcp": [flow] * tcp_flows + [{**flow, "direction": "up"}] * uploads,
        "cbr": [
            {"direction": d, "size": cbr_size, "interval": cbr_interval, "jitter": jitter}
            | {"tag": dscp, "ecn": cbr_ecn}
            | ({"app": app} if app is not None else {})
            for d in DIRECTIONS
            if cbr in (d, "both")
        ],
        "web": [
            {
                "users": web_users,
                "think_max": "300s",
                "tcp": {"cc": cc, "profile": profile, "ecn": ecn},
            }
        ]
        if web_users
        else [],
    }
    if video is not None:
        data["media"] = {"controller": video, "direction": video_dir, "max_rate": video_max}
        _check_video_max(video_max)
    # Validate the per-flow parameters even when no flow uses them, so a typo never
    # passes silently.
    try:
        TcpSpec.model_validate(flow)
        CbrSpec.model_validate(
            {"size": cbr_size, "interval": cbr_interval, "jitter": jitter}
            | ({"app": app} if app is not None else {})
        )
        if workload is not None:
            # The workload's flows replace the downloads, uploads and CBR flows.
            w = WorkloadSpec(kind=workload)
            data |= {"tcp": w.flows(flow)[0], "cbr": [], "workload": w}
        return Scenario.model_validate(data)
    except ValidationError as err:
        if err.title in ("TcpSpec", "CbrSpec"):
            where, msg = error_at(err.errors()[0])  # a check's own key path (rto_min) kept
            loc = ("tcp" if err.title == "TcpSpec" else "cbr", 0, *where)
            raise SpecError(flat_param(loc), msg) from None
        raise first_error(err, aqm=aqm is not None) from None


def dscp_value(value: str | int) -> int:
    """``cbr_dscp``: a code point 0 to 63, or its name (EF, CS1, AF41, ...; any case)."""
    if isinstance(value, str):
        name = value.strip().upper()
        if name in DSCP:
            return DSCP[name]
        try:
            value = int(name)
        except ValueError:
            raise SpecError(
                "cbr_dscp", f"{short(value)}: give 0 to 63 or a name ({', '.join(DSCP_NAMES)})"
            ) from None
    if not 0 <= value <= 63:
        raise SpecError("cbr_dscp", f"{short(value)}: a DSCP is 0 to 63 (6 bits)")
    return int(value)


def bind(func: str, params: dict[str, Any]) -> dict[str, Any]:
    """Every flat parameter: those given, checked against their declared types, and the
    declared defaults. Raises TypeError for an unknown name (as Python would), and
    :class:`SpecError` naming the first value of a wrong type."""
    for name in params:
        if name not in BY_NAME:
            hint = unknown_hint(name, list(BY_NAME))
            raise TypeError(f"{func}(): unknown parameter {name!r}{hint}")
    out = {}
    for f in FIELDS:
        value = params.get(f.name, f.default)
        if not f.accepts(value):
            if isinstance(value, float) and not math.isfinite(value):  # a float, not a value
                raise SpecError(f.name, f"{value}: expected a finite number")
            allowed = " or ".join(f.type_names()) + (" or None" if f.optional else "")
            raise SpecError(f.name, f"{short(value)} ({type(value).__name__}): expected {allowed}")
        out[f.name] = value
    return out


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def shorthand_value(text: str) -> object:
    """A ``key=value`` value: a bool, an integer, a number, or the text itself."""
    low = text.strip().lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip()


def parse_aqm_shorthand(text: str) -> dict[str, Any]:
    """``"cake:bandwidth=1.4Mbit,diffserv=diffserv4,ack_filter=normal"`` → the AQM's
    dict; ``"fq_codel"`` → ``{"kind": "fq_codel"}``."""
    kind, _, rest = text.partition(":")
    q: dict[str, Any] = {"kind": kind.strip()}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SpecError("aqm", f"{short(item)}: give key=value, e.g. target=5ms")
        if key.strip() in q:
            raise SpecError("aqm", f"{key.strip()}: given twice")
        v = shorthand_value(value)
        if isinstance(v, float) and not math.isfinite(v):  # 1e999, or 5 000 digits
            digits = sum(c.isdigit() for c in value)
            what = (
                f"{digits} digits, too large for any parameter"
                if digits > 30
                else "not a finite number"
            )
            raise SpecError("aqm", f"{key.strip()}: {short(value.strip())}: {what}")
        q[key.strip()] = v
    return q


def aqm_limit(
    q: dict[str, Any], queue: object, where: str = "aqm", versus: bool = False
) -> dict[str, Any]:
    """The AQM ``q`` with ``queue`` (``"1000p"``, ``"4MB"``) as its hard limit, the
    discipline's own limit field in its unit (:data:`~collateral.vocabulary.AQM_INFO`);
    a limit in the other unit, a discipline without one limit (cbq) or a limit given
    twice raises SpecError("queue"). ``where`` names the AQM's option in the messages;
    ``versus``: the AQM is a ``--versus`` value, whose own limit the message points to."""
    from ..units import parse_queue_limit

    try:
        limit = parse_queue_limit(queue)
    except ValueError as e:
        raise SpecError("queue", str(e)) from None
    kind = str(q.get("kind"))
    info = AQM_INFO.get(kind, {})
    field = info.get("limit_field")
    if field is None:
        raise SpecError("queue", f"{kind} has per-class limits; give them in {where}")
    if field in q or "limit_rule" in q:
        raise SpecError("queue", f"{kind}'s {field} is also given in {where}; give it once")
    in_bytes = info.get("limit_unit") == "bytes"
    if limit.in_packets == in_bytes:
        unit, example = ("bytes", "4MB") if in_bytes else ("packets", "1000p")
        if versus:
            own = f"{kind}:{field}={4_000_000 if in_bytes else 1000}"
            raise SpecError(
                "queue",
                f"{kind}'s {field} counts {unit}, --queue {queue} does not; give the limit"
                f" in the --versus value, e.g. {own}",
            )
        raise SpecError("queue", f"{kind}'s {field} counts {unit}; give e.g. {example}")
    return {**q, field: limit.amount}


#: Named AQM settings ``aqm=`` takes as it takes a kind: ``lld`` is DualPI2 as Low
#: Latency DOCSIS runs it (:data:`~collateral.spec.docsis.LLD_DUALPI2`).
AQM_PRESETS: dict[str, dict[str, Any]] = {"lld": LLD_DUALPI2}


def aqm_queue(aqm: str | dict[str, Any] | AqmSpec) -> dict[str, Any]:
    """``aqm=``: a kind with its defaults (``codel``), ``kind:key=value,…`` with
    parameters in human units, a JSON object or a dict."""
    if isinstance(aqm, AqmSpec):
        return aqm.to_native()
    if isinstance(aqm, dict):
        q: object = aqm
    elif aqm in AQM_SHORTHANDS:
        return {"kind": aqm}
    elif (head := aqm.partition(":")[0].strip()) in AQM_PRESETS:
        # A preset's settings, then what follows its name (lld:c_protection=20).
        preset = AQM_PRESETS[head]
        rest = aqm.partition(":")[2]
        return {**preset, **parse_aqm_shorthand(f"{preset['kind']}:{rest}")}
    elif not aqm.lstrip().startswith("{") and aqm.partition(":")[0].strip() in AQM_KINDS:
        q = parse_aqm_shorthand(aqm)
    elif not aqm.lstrip().startswith("{") and (near := near_aqm(aqm)) is not None:
        raise SpecError("aqm", near)
    else:
        try:
            q = json.loads(aqm, parse_int=_json_int, object_pairs_hook=_no_repeated_keys)
        except (ValueError, RecursionError) as e:
            why = str(e) if "digits" in str(e) or "given twice" in str(e) else "not JSON"
            raise SpecError(
                "aqm",
                f"{short(aqm)}: {why}; give {', '.join(AQM_SHORTHANDS)} or a JSON object"
                ' such as {"kind": "codel"}',
            ) from None
    if not isinstance(q, dict) or "kind" not in q:
        raise SpecError("aqm", 'a JSON object with a "kind", e.g. {"kind": "codel"}')
    return q


def near_aqm(text: str) -> str | None:
    """ "unknown AQM 'fq-codel'; did you mean fq_codel?" for a name (not JSON) close to a
    kind or preset, case and dashes aside; None when nothing is close."""
    import difflib

    head = text.partition(":")[0].strip()
    names = [*AQM_KINDS, *AQM_PRESETS]
    close = difflib.get_close_matches(head.lower(), names, n=1, cutoff=0.6)
    if not head or not close:
        return None
    return f"unknown AQM {short(head)}; did you mean {close[0]}? known: {', '.join(names)}"


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose key is given twice is refused (json keeps the last silently),
    as ``kind:key=value`` refuses it."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"{k!r} given twice")
        out[k] = v
    return out


def demo_scenario(duration: str = "60s", warmup: str = "10s") -> Scenario:
    """MMSys 2011 Fig. 1 set-up: ADSL1, 100 ms RTT, 20 kB FB-strict, one NewReno flow
    down on the Linux 2.6.25 stack the study ran, starting at 0, CBR both ways (186 B
    every 20 ms, 1 ms jitter), seed 1."""
    return build_scenario(
        link="adsl1",
        queue="20kB",
        rule="fb-strict",
        profile="linux-2.6.25",
        start_spread=0,  # the study's flow starts with the run
        duration=duration,
        warmup=warmup,
    )


build_scenario.__signature__ = signature()  # type: ignore[attr-defined]
build_scenario.__doc__ = f"{build_scenario.__doc__}\n{docs()}\n"
