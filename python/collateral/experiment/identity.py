"""Trial identity: the model version and the hashes that make a point's key, a trial's
seed and its key from the point's parameters as canonical JSON (see the package doc)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .. import _native


def model_version() -> str:
    """The version of the native core: part of every trial key (results depend on it)."""
    return _native.version()


def canonical_json(native: Mapping[str, Any]) -> str:
    body = {k: v for k, v in native.items() if k not in ("seed", "trace")}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


#: AQM parameters pinned, in stored experiments, to what was their default when those
#: results were made (issue 28 made DualPI2's scheduler Linux's WRR; the reproductions
#: state the RFC's ``ts_fifo`` they ran). Left out of a point's seed basis, so that the
#: pin keeps every trial's seed and so its numbers; the point's key keeps them, so the
#: pinned and the default scenario stay apart.
SEED_NEUTRAL: dict[str, dict[str, Any]] = {"dualpi2": {"scheduler": "ts_fifo"}}


def seed_basis(native: Mapping[str, Any]) -> str:
    """What a point's trial seeds are derived from: its canonical JSON without the
    :data:`SEED_NEUTRAL` pins; "" when no pin applies (the canonical JSON itself, which
    the point has: not written a second time)."""
    body = {k: v for k, v in native.items() if k not in ("seed", "trace")}
    pinned = False
    for d in ("down", "up"):
        queue = body.get(d, {}).get("queue", {})
        neutral = SEED_NEUTRAL.get(queue.get("kind"), {})
        if any(queue.get(k) == v for k, v in neutral.items()):
            kept = {k: v for k, v in queue.items() if neutral.get(k, object()) != v}
            body[d] = {**body[d], "queue": kept}
            pinned = True
    return json.dumps(body, sort_keys=True, separators=(",", ":")) if pinned else ""


def hasher(*parts: object) -> Any:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\x00")
    return h


def digest(*parts: object) -> bytes:
    return hasher(*parts).digest()
