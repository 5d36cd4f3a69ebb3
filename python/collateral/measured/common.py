"""What the parsers share: reading a file as JSON (gzip too) with one-line errors,
and typed look-ups that name the key at fault."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .records import ImportProblem

#: Larger files are refused before parsing (a 60 s Flent rrul is a few MB).
MAX_BYTES = 512 * 1024 * 1024


def load_json(path: Path) -> Any:
    """The file's JSON (gunzipped when it starts with gzip's magic); ImportProblem in one
    line when it is missing, empty, truncated or not JSON."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImportProblem(f"{path}: {size} bytes, more than an import reads")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ImportProblem(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ImportProblem(f"{path}: a directory, not a measurement file") from None
    except OSError as e:
        raise ImportProblem(f"{path}: cannot be read ({e.strerror or e})") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ImportProblem(f"{path}: gzip data damaged or truncated ({e})") from None
    if not raw.strip():
        raise ImportProblem(f"{path}: empty")
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ImportProblem(
            f"{path}: not text (binary data; crusader's .crr needs 'crusader export' first)"
        ) from None
    except json.JSONDecodeError as e:
        # JSON cut short, or another format altogether (a CSV, a Mahimahi trace).
        begun = raw.lstrip()[:1] in (b"{", b"[")
        why = "truncated?" if begun else "not JSON at all: import reads the tools' JSON files"
        raise ImportProblem(
            f"{path}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno}; {why})"
        ) from None


class Reader:
    """Typed access to a parsed file's keys: each failure an ImportProblem naming the
    file and the key path (``round_trips[3].delay.rtt``)."""

    def __init__(self, path: Path, tool: str) -> None:
        self.path, self.tool = path, tool

    def fail(self, what: str) -> ImportProblem:
        return ImportProblem(f"{self.path}: {self.tool}: {what}")

    def get(self, obj: Any, key: str, where: str, kind: type | tuple[type, ...] = object) -> Any:
        if not isinstance(obj, Mapping):
            raise self.fail(f"{where}: expected an object, found {type(obj).__name__}")
        if key not in obj:
            raise self.fail(f"{where}.{key}: missing" if where else f"{key}: missing")
        v = obj[key]
        if kind is not object and not _is(v, kind):
            raise self.fail(f"{where}.{key}: expected {_names(kind)}, found {v!r:.40}")
        return v

    def number(self, obj: Any, key: str, where: str, minimum: float = -math.inf) -> float:
        v = self.get(obj, key, where, (int, float))
        if not math.isfinite(v) or v < minimum:
            raise self.fail(f"{where}.{key}: {v!r} is out of range")
        return float(v)

    def items(self, obj: Any, key: str, where: str) -> list[Any]:
        v = self.get(obj, key, where, list)
        return v


def _is(v: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(v, bool) and bool not in kinds:
        return False
    return isinstance(v, kinds)


def _names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
        bool: "true or false",
    }
    return " or ".join(dict.fromkeys(words.get(k, k.__name__) for k in kinds))
