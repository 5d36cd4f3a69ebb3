"""The scenario options of every command that takes one (``simulate``, ``emulate``,
``advise``), derived from the declared flat parameters
(:data:`collateral.spec.fields.FIELDS`), and the scenario built from them.

Options are passed through as strings to :func:`collateral.spec.build_scenario`, so the
CLI and the Python API accept the same units and report the same errors; an error names
the option of the parameter at fault, with the value given when the message does not
show it.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from ..display import short
from ..spec.fields import BY_NAME, FIELDS, GROUPS, SAME, Field
from ..units import bare_number
from ..vocabulary import AQM_INFO
from .errors import PROG, fail
from .values import count

if TYPE_CHECKING:
    from ..spec import Scenario


def add_field(g: Any, f: Field, **overrides: Any) -> None:
    """The option of one flat parameter (``overrides``: argparse keywords that differ
    for this command, e.g. a tighter ``type``)."""
    kw: dict[str, Any] = {"help": f.help_text(), "dest": f.name}
    if f.types == (bool,):
        kw["action"] = "store_false" if option(f.name).startswith("--no-") else "store_true"
        kw["dest"] = f.name
        if f.default is None:
            kw["default"] = None
    else:
        kw["default"] = f.default if f.cli_default is SAME else f.cli_default
        if f.metavar:
            kw["metavar"] = f.metavar
        if f.choices:
            kw["choices"] = f.choices
        if f.count:
            kw["type"] = count(*f.count)
    g.add_argument(option(f.name), *f.cli_aliases, **(kw | overrides))


def add_scenario_options(
    p: argparse.ArgumentParser,
    only: Iterable[str] | None = None,
    **overrides: dict[str, Any],
) -> None:
    """Every flat parameter as an option (or those named in ``only``), in its group;
    ``overrides`` maps a parameter's name to argparse keywords for this command."""
    names = set(only) if only is not None else None
    unknown = set(overrides) - set(BY_NAME)
    if unknown:
        raise TypeError(f"add_scenario_options: no parameter {', '.join(sorted(unknown))}")
    groups: dict[str, Any] = {}
    for f in FIELDS:
        if names is not None and f.name not in names:
            continue
        if f.group not in groups:
            groups[f.group] = p.add_argument_group(GROUPS[f.group])
        add_field(groups[f.group], f, **overrides.get(f.name, {}))


def option(param: str) -> str:
    """The option of a :func:`build_scenario` parameter: ``--cbr-size``, or the one its
    declaration names (``--no-delayed-ack``)."""
    declared = BY_NAME[param].cli if param in BY_NAME else None
    return declared or "--" + param.replace("_", "-")


def aqm_with_limit(a: argparse.Namespace) -> object:
    """``--aqm`` with ``--queue`` as its hard limit, so that neither is ignored
    (:func:`~collateral.spec.flat.aqm_limit`: a limit in the wrong unit, a discipline
    without one limit, or a limit given twice is an error naming the option); a
    ``--versus`` value's own limit wins over ``--queue``."""
    if a.aqm is None or a.queue is None:
        if a.aqm is not None and getattr(a, "rule", None) is not None:
            fail_param(a, "rule", "a drop-tail rule; it does not apply to --aqm")
        return a.aqm
    from ..spec import SpecError, aqm_queue
    from ..spec.flat import aqm_limit

    try:
        q = dict(aqm_queue(a.aqm))
    except SpecError as e:
        fail_param(a, "aqm", e.message)
    versus = getattr(a, "versus_value", None) is not None
    field = AQM_INFO.get(str(q.get("kind")), {}).get("limit_field")
    if versus and field is not None and (field in q or "limit_rule" in q):
        return q  # --versus fq_codel:limit=1000 says its own
    try:
        return aqm_limit(q, a.queue, "--aqm", versus)
    except SpecError as e:
        fail_param(a, e.param, e.message)


def seconds_for_ms(option: str, text: object) -> str | None:
    """``OPTION N: read as N s; did you mean Nms?`` for a time option that is a matter
    of milliseconds (a packet gap, jitter, a delay budget) given as a bare number of a
    second or more; None otherwise."""
    if text is None or not bare_number(text):
        return None
    if not 1 <= float(str(text)) < math.inf:  # inf and nan are refused, not warned of
        return None
    return f"{option} {text}: read as {float(str(text)):g} s; did you mean {text}ms?"


def warn_implausible(a: argparse.Namespace, sc: Scenario) -> None:
    """Values that are valid but rarely meant: a warning on stderr each, naming the
    option and what was probably meant; the run goes on."""
    from ..spec.flat import (
        SMALL_LIMIT,
        UNUSUAL_RATE_BPS,
        small_byte_limits,
        unusual_aqm_times,
        unusual_rtt,
    )

    warnings = []
    if (odd := unusual_rtt(sc.rtt, a.rtt)) is not None:
        warnings.append(f"--rtt {a.rtt}: {odd}")
    warnings += [f"--aqm {odd}" for odd in unusual_aqm_times(getattr(a, "aqm", None))]
    for opt, dest in (("--cbr-interval", "cbr_interval"), ("--jitter", "jitter")):
        sends = getattr(a, "cbr", "none") != "none" and not getattr(a, "app", None)
        odd = seconds_for_ms(opt, getattr(a, dest, None))
        if sends and odd is not None:
            warnings.append(odd)
    for opt, text, link in (("--down", a.down, sc.down), ("--up", a.up, sc.up)):
        if text is not None and link.rate is not None and link.rate < UNUSUAL_RATE_BPS:
            # A link of 24 is as likely 24 Mbit/s as 24 kbit/s; of 1500, kbit/s.
            both = bare_number(text) and float(str(text)) < 1000
            hint = f"; did you mean {text}Mbit or {text}kbit?" if both else ""
            hint = hint or (f"; did you mean {text}kbit?" if bare_number(text) else "")
            warnings.append(f"{opt} {text}: read as {link.rate} bit/s{hint}")
    if sc.duration - sc.warmup < 1_000_000_000:
        warnings.append(
            f"--duration {a.duration}: less than 1 s is measured after the warm-up;"
            " figures will be noisy"
        )
    # A byte limit below one full-size packet: every TCP segment is dropped.
    if small_byte_limits(sc):
        warnings.append(f"--queue {a.queue}: {SMALL_LIMIT}")
    # Flows whose start may fall after the run's end: some trials have no such flow.
    late = [
        t for t in sc.tcp if t.start_spread > 0 and t.start < sc.duration < t.start + t.start_spread
    ]
    if late and getattr(a, "start_spread", None) is not None:
        default = " (the default)" * (a.start_spread == BY_NAME["start_spread"].default)
        warnings.append(
            f"--start-spread {a.start_spread}{default}: longer than the run ({a.duration});"
            " a flow may start after its end and carry nothing"
        )
    for w in warnings:
        print(f"{PROG}: warning: {w}", file=sys.stderr)


def versus_scenarios(a: argparse.Namespace, base: Scenario) -> list[tuple[str, Scenario]]:
    """The base scenario and one per ``--versus`` value, each labelled. A value is a
    queue (a drop-tail limit, or an --aqm value that keeps --queue as its limit) or
    ``KEY=VALUE,...`` of any scenario option (``cc=prague,ecn=l4s,aqm=dualpi2``)."""
    from ..units import parse_queue_limit

    variants = []
    for value in a.versus or []:
        b = argparse.Namespace(**vars(a))
        b.versus_value = value
        keys = versus_keys(value)
        if keys:
            for key, v in keys.items():
                setattr(b, key, v)
            if "aqm" in keys and keys["aqm"] is not None and "rule" not in keys:
                b.rule = None
            if "queue" in keys and "aqm" not in keys:
                b.aqm = None
            if keys.get("workload") is not None:  # its flows replace the base's
                from ..spec.flat import WORKLOAD_REPLACES

                for name in WORKLOAD_REPLACES:
                    if name not in keys:
                        setattr(b, name, BY_NAME[name].default)
        else:
            try:
                parse_queue_limit(value)
                b.queue, b.aqm = value, None
            except ValueError as e:
                if value.strip()[:1] in tuple("0123456789.-+"):  # a limit, not a queue's name
                    fail(f"--versus: {e}")
                b.aqm, b.rule = value, None  # --queue, when given, stays its limit
        b.versus_keys = set(keys) | ({"queue", "aqm", "rule"} if not keys else set())
        variants.append((b, keys))
    varied = [k for _, keys in variants for k in keys if k not in ("queue", "aqm", "rule")]
    varied = list(dict.fromkeys(varied))
    out = [(_label(a, base, varied), base)]
    for b, _keys in variants:
        sc = scenario_from_args_unchecked(b)
        out.append((_label(b, sc, varied), sc))
    labels = [label for label, _ in out]
    for label in labels:
        if labels.count(label) > 1:
            fail(f"--versus: {label!r} is given twice (or is the base scenario)")
    return out


def versus_keys(value: str) -> dict[str, str | None]:
    """``cc=prague,ecn=l4s,aqm=fq_codel:target=5ms,ecn=on`` → {cc, ecn, aqm}: an item
    whose key is no scenario option continues the one before (an --aqm value's own
    ``key=value`` parameters); {} when ``value`` is a queue, not KEY=VALUE."""
    head = value.partition("=")[0].strip()
    if ":" in head or _versus_name(head) is None:
        return {}
    out: dict[str, str | None] = {}
    last = None
    for item in value.split(","):
        key, eq, v = item.partition("=")
        name = _versus_name(key)
        if eq and name is not None and not (last == "aqm" and ":" in str(out[last])):
            if name in out:
                fail(f"--versus: {short(value, 60)}: {key.strip()} is given twice")
            out[name], last = v.strip(), name
        elif last is not None:
            out[last] = f"{out[last]},{item}"
        else:
            fail(f"--versus: {short(value, 60)}: give KEY=VALUE,... (e.g. cc=prague,ecn=l4s)")
    if any(v == "" for v in out.values()):
        fail(f"--versus: {short(value, 60)}: a key without a value")
    return {name: _versus_value(name, v) for name, v in out.items()}


def _versus_value(name: str, text: str | None) -> Any:
    """A --versus value read as its option reads it on the command line: a whole number
    (``downloads=4``), a switch (``delayed_ack=off``), one of its choices, or ``none``
    where no value is one (``video=none``: no call); else the text, checked with the
    scenario."""
    f, key = BY_NAME[name], _versus_key(name)
    if name == "seed":  # every variant runs the trials' seeds (--seed, --trials)
        fail("--versus: seed: the variants run the same seeds; give --seed (and --trials)")
    if text is None:
        return None
    if f.optional and text.strip().lower() == "none":
        return None
    if f.types == (bool,):
        from ..spec.flat import shorthand_value  # as an --aqm value's switches read

        v = shorthand_value(text)
        if v not in (0, 1):  # on/off, true/false, yes/no, 1/0
            fail(f"--versus: {key}={text.strip()[:40]}: on or off")
        return bool(v)
    if f.count:
        try:
            return count(*f.count)(text)
        except argparse.ArgumentTypeError as e:
            fail(f"--versus: {key}={text.strip()[:40]}: {e}")
    if f.choices and text not in f.choices:
        fail(f"--versus: {key}={text.strip()[:40]}: one of {', '.join(f.choices)}")
    return text


def _versus_name(key: str) -> str | None:
    """The parameter of a --versus key: a parameter's name or its option without
    dashes (``downloads``, ``tcp-flows``)."""
    key = key.strip()
    for f in FIELDS:
        options = (option(f.name), *f.cli_aliases)
        if key.replace("-", "_") == f.name or "--" + key in options:
            return f.name
    return None


def _versus_key(name: str) -> str:
    """A parameter as --versus shows it: its option without dashes (``downloads``), a
    switch by its name (``delayed_ack``, not ``no-delayed-ack``)."""
    return name if BY_NAME[name].types == (bool,) else option(name).removeprefix("--")


def _label(a: argparse.Namespace, sc: Scenario, varied: list[str]) -> str:
    """A variant as the user named it: its queue, then the value of each varied key."""
    parts = [queue_label(sc, a.aqm)]
    for key in varied:
        v = getattr(a, key)
        shown = "none" if v is None else "on" if v is True else "off" if v is False else v
        parts.append(f"{_versus_key(key)}={shown}")
    return ", ".join(parts)


def queue_label(sc: Scenario, aqm: object) -> str:
    """The queue as the user named it: the --aqm text, or drop-tail's limit and rule."""
    if isinstance(aqm, str):
        return aqm
    part = next(p for p in sc.describe().split(" · ") if p.startswith("queue "))
    return part.removeprefix("queue ")


def scenario_from_args(a: argparse.Namespace) -> Scenario:
    sc = scenario_from_args_unchecked(a)
    warn_implausible(a, sc)
    return sc


def scenario_from_args_unchecked(a: argparse.Namespace) -> Scenario:
    """The scenario of the options: every declared parameter the command has, as given;
    ``--queue`` is the AQM's limit beside ``--aqm``, else drop-tail's (20kB unset)."""
    from ..spec import SpecError, build_scenario

    params = {f.name: getattr(a, f.name) for f in FIELDS if hasattr(a, f.name)}
    if params.get("queue") is None:
        params["queue"] = BY_NAME["queue"].default
    params["aqm"] = aqm_with_limit(a)
    if params["aqm"] is not None:  # --queue is in it (or unset), --rule refused there
        for name in ("queue", "rule"):
            params.pop(name, None)
    try:
        return build_scenario(**params)
    except SpecError as e:
        fail_param(a, e.param, e.message, e.below)


def fail_param(
    a: argparse.Namespace, param: str, message: str, below: tuple[str | int, ...] = ()
) -> NoReturn:
    """One line naming the option of ``param`` (and ``below``, the key inside it at
    fault), with the value given when the message does not show it (the core's do
    not)."""
    value = getattr(a, param, None)
    if (
        param == "aqm"
        and message.endswith(": missing: this parameter has no default")
        and (len(below) == 1 and isinstance(value, str))
    ):
        kind = value.partition(":")[0].strip()
        field = below[0]
        hint = (
            f"; give --queue (e.g. --queue 60p) or {kind}:{field}=60"
            if AQM_INFO.get(kind, {}).get("limit_field") == field
            else f"; give {kind}:{field}=..."
        )
        message = f"{kind} needs its {field}{hint}"
    versus = getattr(a, "versus_value", None)
    if versus is not None and param in getattr(a, "versus_keys", ()):
        shown = message.startswith(("'", '"'))
        fail(f"--versus: {message}" if shown else f"--versus: {short(versus, 60)}: {message}")
    if not hasattr(a, param) or param == "scenario":
        fail(f"scenario: {message}")
    shown = message.startswith(("'", '"')) or (isinstance(value, str) and repr(value) in message)
    if param in BY_NAME and BY_NAME[param].unit and isinstance(value, str) and not shown:
        message = f"{short(value, 60)}: {message}"
    fail(f"{option(param)}: {message}")
