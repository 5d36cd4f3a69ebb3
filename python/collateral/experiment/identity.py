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


def hasher(*parts: object) -> Any:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\x00")
    return h


def digest(*parts: object) -> bytes:
    return hasher(*parts).digest()
