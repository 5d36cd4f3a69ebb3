"""The report's tables: :class:`Table` of :class:`Cell` (text and sort key), with a
preview of a long table's first rows and the whole packed for the page's script; and
the pipe tables that the figure code leaves beside a figure (``<stem>.md``), read back."""

from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass

#: Rows of a table shown before the rest collapses.
PREVIEW_ROWS = 12
#: A table longer than this shows PREVIEW_ROWS and keeps the full table collapsed.
LONG_TABLE = 25


@dataclass
class Cell:
    text: str
    key: float | str | None = None  # sort key when the text alone would sort wrong


@dataclass
class Table:
    columns: list[tuple[str, str]]  # (label, tooltip)
    numeric: list[bool]
    rows: list[list[Cell]]
    note: str = ""

    @property
    def header(self) -> list[tuple[str, str, bool]]:
        return [(lb, tip, n) for (lb, tip), n in zip(self.columns, self.numeric, strict=True)]

    @property
    def long(self) -> bool:
        return len(self.rows) > LONG_TABLE

    @property
    def preview(self) -> list[list[Cell]]:
        return self.rows[:PREVIEW_ROWS] if self.long else self.rows

    def packed(self) -> str:
        """The whole table as gzip+base64 JSON, which the page's script renders when
        the reader opens it (a 2,000-row table as HTML would be half the budget)."""
        rows = [[c.text if c.key is None else [c.text, c.key] for c in r] for r in self.rows]
        data = json.dumps({"rows": rows}, separators=(",", ":"), ensure_ascii=False)
        return base64.b64encode(gzip.compress(data.encode(), 9, mtime=0)).decode()


def markdown_table(text: str) -> Table | None:
    """A pipe table (the figures' ``<stem>.md``) as a Table."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 3:
        return None
    split = lambda ln: [c.strip() for c in ln.strip("|").split("|")]  # noqa: E731
    head, body = split(lines[0]), [split(ln) for ln in lines[2:]]
    body = [r for r in body if len(r) == len(head)]
    rows = [[Cell(c, sort_key(c)) for c in r] for r in body]
    numeric = [all(sort_key(r[i].text) is not None for r in rows) for i in range(len(head))]
    return Table([(h, "") for h in head], numeric, rows)


def sort_key(text: str) -> float | None:
    m = re.match(r"^\s*(-?[\d,]*\.?\d+)", text)
    return float(m[1].replace(",", "")) if m else None
