"""Values of an experiment file that are valid but rarely meant: what the CLI's options
and the API's arguments warn about (``spec.flat``), found where the file gives them.

A bare number is a second for a time and a bit/s for a rate, as on the command line, so
``rtt = 100`` is a 100 s round trip and ``{kind = "pie", target = 15}`` a 15 s target:
the run goes on, but ``collateral run`` says each one, naming its key."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..spec.flat import (
    SMALL_LIMIT,
    UNUSUAL_RATE_BPS,
    UNUSUAL_RTT_NS,
    small_byte_limits,
    unusual_aqm_times,
    unusual_rtt,
)
from ..units import bare_number, parse_duration, parse_rate


def unusual_values(data: Mapping[str, Any]) -> list[str]:
    """``KEY: VALUE: why`` for each value of the file's [scenario] and [sweep] tables
    (the data as read, ``--set`` applied) that is valid but probably not meant."""
    out = []
    for key, where, value in _values(data):
        if key == "queue" and isinstance(value, dict | str):
            out += [f"{where}: {odd}" for odd in unusual_aqm_times(value)]
        elif key == "rtt" and (ns := _parsed(parse_duration, value)) is not None:
            # With a unit too, as --rtt and rtt= warn: a round trip of seconds ("1000s")
            # is no broadband link's, and longer than a trial none completes.
            if ns >= UNUSUAL_RTT_NS and (odd := unusual_rtt(ns, value)):
                out.append(f"{where}: {value}: {odd}")
        elif key == "playout" and (ns := _bare(parse_duration, value)) is not None:
            if ns >= UNUSUAL_PLAYOUT_NS:
                out.append(
                    f"{where}: {value}: read as {ns / 1e9:g} s, an unusual playout"
                    f" deadline; did you mean {value}ms?"
                )
        elif (
            key == "rate"
            and (bps := _bare(parse_rate, value)) is not None
            and bps < UNUSUAL_RATE_BPS
        ):
            out.append(f"{where}: {value}: read as {bps} bit/s; did you mean {value}kbit?")
    return out


#: A playout deadline this long (a bare number of seconds) is no call's.
UNUSUAL_PLAYOUT_NS = 5_000_000_000


def _parsed(parse: Callable[[Any], int], value: Any) -> int | None:
    """``value`` read by ``parse``, or None when the scenario refuses it itself."""
    try:
        return parse(value)
    except (ValueError, TypeError):
        return None


def _bare(parse: Callable[[Any], int], value: Any) -> int | None:
    """``value`` read by ``parse`` when it is a bare number that parses; None when it
    carries a unit, or is refused by the scenario with its own message."""
    if not bare_number(value):
        return None
    try:
        return parse(value)
    except ValueError:
        return None


def small_limits(points: list[Any]) -> list[str]:
    """Each drop-tail byte limit below one full-size segment that a point's scenario
    has (``limit = 100`` is 100 B), said once with the number of points that have it."""
    count: dict[tuple[str, int], int] = {}
    for p in points:
        small = small_byte_limits(p.scenario)
        both = len(small) == 2 and small[0][1] == small[1][1]
        for d, n in [("queue", small[0][1])] if both else [(f"{d}.queue", n) for d, n in small]:
            count[d, n] = count.get((d, n), 0) + 1
    return [
        f"{d}.limit = {n} B in {k} point{'s' * (k > 1)}: {SMALL_LIMIT}"
        for (d, n), k in count.items()
    ]


def _values(data: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(key, where, value) for every value under [scenario] and [sweep]: ``key`` the
    name of what it sets (``rtt``, ``queue``), ``where`` its place in the file
    (``sweep.rtt[0]``). A sweep's dotted key stands for what it sets, and its values (a
    list, ``values``, or a range's ``from`` and ``to``) are each that key's."""
    scenario = data.get("scenario")
    if isinstance(scenario, dict):
        yield from _walk("scenario", scenario)
    sweeps = data.get("sweep")
    tables = sweeps if isinstance(sweeps, list) else [sweeps]
    for i, table in enumerate(tables):
        if not isinstance(table, dict):
            continue
        head = "sweep" if len(tables) == 1 else f"sweep[{i}]"
        for dotted, axis in table.items():
            key, where = str(dotted).rsplit(".", 1)[-1], f"{head}.{dotted}"
            parts = str(dotted).split(".")
            if len(parts) > 1 and parts[-2] == "queue" and not isinstance(axis, dict):
                # An AQM's parameter as its own axis ("down.queue.target" = [15]): each
                # value is checked as that queue's, {target = 15}.
                for j, v in enumerate(axis if isinstance(axis, list) else [axis]):
                    yield "queue", f"{where}[{j}]", {key: v}
                continue
            if isinstance(axis, dict) and ("values" in axis or "from" in axis):
                for part in ("values", "from", "to"):
                    v = axis.get(part)
                    items = v if isinstance(v, list) else [] if v is None else [v]
                    for j, item in enumerate(items):
                        at = f"{where}.{part}" + (f"[{j}]" if isinstance(v, list) else "")
                        yield from _walk(at, item, key)
            else:
                yield from _walk(where, axis, key)


def _walk(where: str, value: Any, key: str | None = None) -> Iterator[tuple[str, str, Any]]:
    """``value`` (set by ``key``: by default the last part of ``where``) and, in a table
    or list, what it holds; a list's items are its key's."""
    key = where.rsplit(".", 1)[-1] if key is None else key
    if isinstance(value, list):
        for j, item in enumerate(value):
            yield from _walk(f"{where}[{j}]", item, key)
        return
    yield key, where, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(f"{where}.{k}", v)
