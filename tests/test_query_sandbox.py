"""The query sandbox: ``collateral query`` and ``collateral.query()`` read the store and
nothing else. Each statement kind that writes, attaches, exports, loads or reconfigures
is refused in one line with exit 2; no file appears anywhere (the store's own files and
a watched outside directory are hashed before and after); no file outside the store's
parts is read. A property test throws statement forms and paths at it."""

from __future__ import annotations

import contextlib
import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collateral
from collateral import cli
from collateral.store import QueryRefused, open_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small store with a trace table, written by the experiment runner."""
    d = tmp_path_factory.mktemp("sandbox")
    exp = d / "e.toml"
    exp.write_text(
        '[experiment]\ntrials = 2\ntraces = ["queue"]\n'
        '[scenario]\nlink = "adsl1"\nduration = "2s"\nwarmup = "0.5s"\ntcp = [{ cc = "newreno" }]\n'
        '[sweep]\n"queue.limit" = ["10kB", "30kB"]\n'
    )
    out = d / "store"
    r = subprocess.run(
        [sys.executable, "-m", "collateral", "run", str(exp), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return out


def tree_hash(root: Path) -> str:
    """Every file under ``root``: its path, size and content."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def refused_statements(store: Path, outside: Path) -> list[tuple[str, str]]:
    """(SQL, what the refusal names) for each kind of statement a query must not run."""
    part = next((store / "parts").iterdir())
    return [
        (f"COPY (SELECT * FROM summary) TO '{outside}/x.csv'", "COPY is not allowed"),
        ("COPY (SELECT 1) TO 'x.parquet'", "COPY is not allowed"),
        (f"COPY (SELECT 'x') TO '{store}/store.json'", "COPY is not allowed"),
        (f"COPY (SELECT 1 AS a) TO '{part}/summary.parquet'", "COPY is not allowed"),
        (f"ATTACH '{outside}/x.db' AS x", "ATTACH is not allowed"),
        ("ATTACH ':memory:' AS m", "ATTACH is not allowed"),
        ("CREATE TABLE t AS SELECT 1", "CREATE is not allowed"),
        ("CREATE VIEW v AS SELECT 1", "CREATE is not allowed"),
        ("DROP VIEW summary", "DROP is not allowed"),
        ("INSERT INTO summary SELECT * FROM summary", "INSERT is not allowed"),
        (f"EXPORT DATABASE '{outside}/d'", "EXPORT is not allowed"),
        ("INSTALL httpfs", "INSTALL/LOAD is not allowed"),
        ("LOAD httpfs", "INSTALL/LOAD is not allowed"),
        ("SET enable_external_access = true", "SET (or PRAGMA) is not allowed"),
        (f"PRAGMA profiling_output = '{outside}/prof'", "SET (or PRAGMA) is not allowed"),
        ("CALL pragma_version()", "CALL is not allowed"),
        (f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{outside}/e.csv'", "EXPLAIN is allowed of a SELECT"),
        ("SELECT 1; SELECT 2", "2 statements"),
        ("", "no statement"),
        ("-- nothing", "no statement"),
        ("SELECT * FROM read_csv('/etc/passwd')", "'/etc/passwd' is outside the store's parts"),
        ("SELECT * FROM glob('/etc/*')", "'/etc/*' is outside the store's parts"),
        (f"SELECT * FROM read_blob('{store}/store.json')", "is outside the store's parts"),
        (f"SELECT * FROM read_text('{store}/parts/../store.json')", "is outside"),
        ("SELECT * FROM 'https://example.org/x.csv'", "is outside the store's parts"),
    ]


def query_cli(store: Path, sql: str, cwd: Path) -> tuple[int | None, str, str]:
    """(exit code, stdout, stderr) of ``collateral query STORE SQL`` run in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code: int | None = cli.main(["query", str(store), sql])
        except SystemExit as e:
            code = e.code  # type: ignore[assignment]
    return code, out.getvalue(), err.getvalue()


def test_cli_refuses_each_kind_in_one_line_and_writes_nothing(store: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    before = tree_hash(store)
    for sql, said in refused_statements(store, outside):
        code, out, err = query_cli(store, sql, tmp_path)
        lines = err.strip().splitlines()
        assert code == 2, (sql, out, err)
        assert len(lines) == 1 and lines[0].startswith("collateral: error: SQL: "), (sql, lines)
        assert said in lines[0], (sql, lines[0])
        assert out == ""
    # The process as a whole: exit status 2, one line.
    r = subprocess.run(
        [sys.executable, "-m", "collateral", "query", str(store), "COPY summary TO 'y.csv'"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert (r.returncode, r.stdout, len(r.stderr.splitlines())) == (2, "", 1), r
    assert tree_hash(store) == before
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside"]  # no x.parquet, .tmp


def test_api_refuses_unless_the_caller_opts_out(store: Path, tmp_path: Path):
    before = tree_hash(store)
    target = tmp_path / "x.csv"
    with pytest.raises(QueryRefused, match="COPY is not allowed"):
        collateral.query(store, f"COPY (SELECT key FROM summary) TO '{target}'")
    with pytest.raises(QueryRefused, match="outside the store's parts"):
        collateral.query(store, "SELECT * FROM read_csv('/etc/hostname')", "arrow")
    assert not target.exists() and tree_hash(store) == before
    # The explicit opt-out is DuckDB as it is.
    copied = collateral.query(store, f"COPY (SELECT key FROM summary) TO '{target}'", sandbox=False)
    assert copied["Count"][0] == 4
    assert len(target.read_text().splitlines()) == 1 + 4
    # A connection from connect() is fenced too: no file outside parts/, no reconfiguring.
    con = open_store(store).connect()
    import duckdb

    with pytest.raises(duckdb.PermissionException):
        con.sql(f"COPY (SELECT 1) TO '{tmp_path}/y.csv'")
    with pytest.raises(duckdb.Error, match="locked"):
        con.sql("SET enable_external_access = true")
    con.close()
    assert not (tmp_path / "y.csv").exists()


def test_reads_still_work(store: Path):
    assert collateral.query(store, "SELECT count(*) AS n FROM summary")["n"][0] == 4
    assert collateral.query(store, "SELECT count(*) AS n FROM queue")["n"][0] > 0
    assert "key" in collateral.query(store, "DESCRIBE summary")["column_name"].tolist()
    assert len(collateral.query(store, "SUMMARIZE SELECT rep FROM summary")) == 1
    assert len(collateral.query(store, "EXPLAIN SELECT * FROM summary")) >= 1
    with_cte = "WITH a AS (SELECT rep FROM summary) SELECT max(rep) AS m FROM a"
    assert collateral.query(store, with_cte)["m"][0] == 1
    # The store's own parts may be read by path, as the views do.
    n = collateral.query(store, f"SELECT count(*) AS n FROM '{store}/parts/*/summary.parquet'")
    assert n["n"][0] == 4


PREFIXES = ["", "EXPLAIN ", "EXPLAIN ANALYZE ", "WITH a AS (SELECT 1) ", "/* c */ ", "-- c\n"]
VERBS = [
    "SELECT * FROM {f}",
    "SELECT count(*) FROM read_csv({f})",
    "SELECT * FROM read_blob({f})",
    "SELECT * FROM glob({f})",
    "COPY (SELECT 1) TO {f}",
    "COPY summary TO {f}",
    "ATTACH {f} AS z",
    "EXPORT DATABASE {f}",
    "CREATE TABLE z AS SELECT * FROM {f}",
    "INSTALL {f}",
    "LOAD {f}",
    "SET temp_directory = {f}",
    "PRAGMA profiling_output = {f}",
    "SELECT * FROM summary; COPY (SELECT 1) TO {f}",
]


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(
    st.sampled_from(PREFIXES),
    st.sampled_from(VERBS),
    st.sampled_from(["outside", "store", "part", "etc", "relative", "url"]),
    st.sampled_from(["x.csv", "x.parquet", "x.db", "summary.parquet", "store.json", "*"]),
)
def test_no_statement_form_writes_or_reads_outside(
    store, tmp_path_factory, prefix, verb, where, name
):
    outside = tmp_path_factory.mktemp("outside")
    part = next((store / "parts").iterdir())
    base = {
        "outside": str(outside),
        "store": str(store),
        "part": str(part),
        "etc": "/etc",
        "relative": ".",
        "url": "https://example.org",
    }[where]
    sql = prefix + verb.format(f=f"'{base}/{name}'")
    before = tree_hash(store)
    try:
        collateral.query(store, sql)
    except QueryRefused as e:
        assert "\n" not in str(e) and str(e)
    except Exception as e:  # DuckDB's own error: a read that is wrong, or a path it
        import duckdb  # would not resolve as a file at all ("Table ... does not exist")

        assert isinstance(e, duckdb.Error) and not isinstance(e, duckdb.PermissionException), sql
    else:
        # Accepted: a read of the store's own parts (by path or glob), nothing else.
        assert where in ("part", "store", "relative"), sql
    assert tree_hash(store) == before, sql
    assert list(outside.iterdir()) == [], sql
