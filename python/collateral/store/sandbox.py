"""The query sandbox: SQL from a user reads the store and nothing else.

Two fences. DuckDB's own: the connection may open files only under the store's
``parts/`` directory (``allowed_directories`` with ``enable_external_access`` off), loads
and installs no extension, never spills to a temporary directory, and its configuration
is locked so a statement cannot lift any of this. Ours: a query is one statement that
only reads — ``SELECT`` (with ``WITH``, ``FROM``-first, ``VALUES``, ``DESCRIBE``,
``SHOW``, ``SUMMARIZE``) or ``EXPLAIN`` of one — checked with DuckDB's own parser before
it runs, because inside ``parts/`` DuckDB would still let ``COPY … TO`` overwrite a
part's file."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

#: What a query may be: the statement types that only read.
READS = "SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE or EXPLAIN"

_EXPLAIN = re.compile(r"(?is)^\s*EXPLAIN\s+(?:\([^)]*\)\s*)?(?:ANALY[SZ]E\s+)?(.*)$")
_LEADING_COMMENTS = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)


#: DuckDB's statement types where its name is not the word the user wrote.
_SAID = {"MULTI": "PIVOT without IN (...)", "LOAD": "INSTALL/LOAD", "SET": "SET (or PRAGMA)"}


class QueryRefused(ValueError):
    """SQL the sandbox does not run: empty, several statements, or one that is not a
    read (``COPY``, ``ATTACH``, ``CREATE``, ``EXPORT``, ``INSTALL``, ``LOAD``, ``SET``...),
    or one that reached for a file outside the store."""


def lock_down(con: duckdb.DuckDBPyConnection, parts: str) -> None:
    """Fences ``con`` (whose views are already created) to reading ``parts`` (an
    absolute directory ending in ``/``); irreversible for this connection."""
    con.execute("SET temp_directory = ''")  # no spill files, anywhere
    con.execute(f"SET allowed_directories = [{sql_str(parts)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def check_reads_only(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raises :class:`QueryRefused` unless ``sql`` is one statement that only reads."""
    import duckdb

    try:
        stmts = con.extract_statements(sql)
    except duckdb.Error as e:
        raise QueryRefused(str(e).splitlines()[0]) from None
    if not stmts:
        raise QueryRefused(f"no statement; give one {READS} statement")
    if len(stmts) > 1:
        raise QueryRefused(f"{len(stmts)} statements; a query is one {READS} statement")
    kind = _type_name(stmts[0])
    if kind == "EXPLAIN":
        inner = _EXPLAIN.match(_LEADING_COMMENTS.sub("", stmts[0].query, count=1))
        try:
            inner_stmts = con.extract_statements(inner.group(1)) if inner else []
        except duckdb.Error:
            inner_stmts = []
        if len(inner_stmts) == 1 and _type_name(inner_stmts[0]) == "SELECT":
            return
        raise QueryRefused("EXPLAIN is allowed of a SELECT only: a query only reads the store")
    if kind != "SELECT":
        what = _SAID.get(kind, kind)
        raise QueryRefused(f"{what} is not allowed: a query only reads the store ({READS})")


def permission_text(e: Exception, parts: str) -> str:
    """DuckDB's refusal of a file outside the store, in one line that says why."""
    m = re.search(r'Cannot access (?:file|directory) "([^"]*)"', str(e))
    what = f"{m.group(1)!r} is outside" if m else "only files in"
    if "extension" in str(e).lower():
        return "extensions are not loaded: a query only reads the store"
    return f"{what} the store's parts ({parts}): a query reads only its store"


def _type_name(stmt: object) -> str:
    return str(getattr(stmt, "type", "")).rsplit(".", 1)[-1]


def sql_str(s: str) -> str:
    """``s`` as an SQL string literal."""
    return "'" + s.replace("'", "''") + "'"
