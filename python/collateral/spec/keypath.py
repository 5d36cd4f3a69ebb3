"""Key paths as data: :class:`PathError` (an error at a key path, so whoever reports
it names the key without reading the text) and how a path is written."""

from __future__ import annotations

Path = tuple[str | int, ...]


def fmt_key_path(path: Path) -> str:
    """``("cbr", 0, "interval")`` -> ``cbr[0].interval``, as messages show a key."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class PathError(ValueError):
    """A check's error at a key path (``path``) below where it was raised, kept as data
    so that whoever reports it names the key without reading the text."""

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"{fmt_key_path(path)}: {detail}" if path else detail)
        self.path = tuple(path)
        self.detail = detail
