"""The user's own queue as a candidate: ``--current 256kB`` (drop-tail, as a gateway's
buffer is usually given) or any ``--aqm`` value, in both directions; ``DOWN/UP`` when the
directions differ (``496kB/100kB``: a measured line's, ``advise --from``)."""

from __future__ import annotations

from typing import Any

from ..spec import SpecError, aqm_queue
from ..spec.flat import AQM_PRESETS, near_aqm
from ..units import parse_queue_limit
from ..vocabulary import AQM_KINDS


def current_queue(text: str) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """(label, queue, upstream queue or None: the same) of ``text``: a limit in bytes or
    packets (drop-tail, rule fb-strict for bytes and ps for packets), or an AQM as
    ``--aqm`` takes it; ``DOWN/UP``, each of those, for directions that differ."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError("current", f"{text!r}: give your queue, e.g. 256kB, 100p or fq_codel")
    down, slash, up = text.partition("/")
    if slash and not text.lstrip().startswith("{"):
        if not down.strip() or not up.strip() or "/" in up:
            raise SpecError("current", f"{text!r}: give DOWN/UP, e.g. 500kB/100kB")
        (d_label, d_queue), (u_label, u_queue) = _one(down), _one(up)
        tail = " drop-tail"
        if d_label.endswith(tail) and u_label.endswith(tail):  # 496kB/100kB drop-tail
            return f"{d_label.removesuffix(tail)}/{u_label}", d_queue, u_queue
        return f"{d_label} down / {u_label} up", d_queue, u_queue
    return (*_one(text), None)


def _one(text: str) -> tuple[str, dict[str, Any]]:
    """One direction's queue, as :func:`current_queue` reads it."""
    try:
        limit = parse_queue_limit(text)
    except ValueError as e:
        named = text.partition(":")[0].strip() in (*AQM_KINDS, *AQM_PRESETS)
        if not named and not text.lstrip().startswith("{"):
            if (near := near_aqm(text)) is not None:  # fq-codel, CAKE
                raise SpecError("current", near) from None
            raise SpecError("current", f"{text!r}: {e}; or give an AQM such as fq_codel") from None
        try:
            return text.strip(), _checked(aqm_queue(text))
        except SpecError as err:
            raise SpecError("current", err.message) from None
    rule = "ps" if limit.in_packets else "fb-strict"
    return f"{text.strip()} drop-tail", _checked({"limit": text.strip(), "rule": rule})


def _checked(queue: dict[str, Any]) -> dict[str, Any]:
    """The queue as the core takes it, or the reason it would not, under ``current``."""
    from pydantic import ValidationError

    from ..spec import Scenario

    try:  # the whole scenario: the core checks a discipline's parameters
        Scenario.model_validate({"down": {"rate": 10**6, "queue": queue}, "up": {"rate": 10**6}})
    except ValidationError as err:
        e = err.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ").removeprefix("down.queue.")
        raise SpecError("current", msg) from None
    return queue
