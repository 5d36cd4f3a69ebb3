"""``collateral query`` shows an aggregate of a known column in that column's unit
(issue 28): ``avg(cbr0_delay_p95_s)`` in ms like the column itself, ``max(goodput_bps)``
of the ``flows`` view in Mbit/s; an expression that changes the unit shows none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from collateral import cli
from collateral.cli.query import result_unit
from collateral.store import Store, columns_to_table


@pytest.mark.parametrize(
    ("header", "unit"),
    [
        ("cbr0_delay_p95_s", "s"),
        ("avg(cbr0_delay_p95_s)", "s"),
        ("max(tcp0_goodput_bps)", "bit/s"),
        ("sum(tcp0_bytes_delivered)", "B"),  # declared in B, no suffix to tell
        ("sum(bytes_delivered)", "B"),  # the flows view's common name
        ("max(goodput_bps)", "bit/s"),
        ("quantile_cont(cbr0_delay_p95_s, 0.9)", "s"),
        ("round(avg(cbr0_delay_p95_s), 3)", "s"),
        ("avg(DISTINCT cbr0_delay_p95_s)", "s"),
        ("avg(s.rtt_s)", "s"),
        ('max("rtt_s")', "s"),
        ("avg(delay_p95_s) FILTER (WHERE (kind = 'cbr')) OVER ()", "s"),
        ("count(*)", ""),
        ("count(cbr0_delay_p95_s)", ""),
        ("(median(cbr0_delay_p95_s) * 1e3)", ""),
        ("avg(x) + avg(cbr0_delay_p95_s)", ""),
        ("min(tcp0_goodput_bps) - max(rtt_s)", ""),
        ("var_pop(rtt_s)", ""),  # s², not s
    ],
)
def test_result_unit(header: str, unit: str) -> None:
    assert result_unit(header) == unit


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Two trials with hand-picked numbers, one TCP flow each."""
    st = Store.create(tmp_path / "s", "units")
    st.write_part(
        columns_to_table(
            {
                "key": ["a", "b"],
                "point": ["p", "p"],
                "rep": [0, 1],
                "seed": [1, 2],
                "tcp_flows": [1, 1],
                "tcp0_direction": ["down", "down"],
                "tcp0_goodput_bps": [2e6, 3e6],
                "tcp0_bytes_delivered": [1000, 2000],
                "cbr0_delay_p95_s": [0.010, 0.020],
            }
        )
    )
    return st.path


def test_aggregates_keep_their_columns_units(store: Path, capsys: pytest.CaptureFixture) -> None:
    sql = (
        "SELECT avg(cbr0_delay_p95_s), max(tcp0_goodput_bps), sum(tcp0_bytes_delivered),"
        " median(cbr0_delay_p95_s) * 1e3 AS p95_ms, count(*) FROM summary"
    )
    assert cli.main(["query", str(store), sql]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split()
    # 15 ms, 3 Mbit/s, 3 kB; the scaled median as it is (15); 2 trials.
    assert row == ["15", "ms", "3", "Mbit/s", "3", "kB", "15", "2"]
    sql = "SELECT max(goodput_bps), sum(bytes_delivered) FROM flows"
    assert cli.main(["query", str(store), sql]) == 0
    assert capsys.readouterr().out.splitlines()[-1].split() == ["3", "Mbit/s", "3", "kB"]
    # --raw: as stored.
    assert (
        cli.main(["query", str(store), "SELECT avg(cbr0_delay_p95_s) FROM summary", "--raw"]) == 0
    )
    assert capsys.readouterr().out.splitlines()[-1].split() == ["0.015"]


def test_the_table_reads_arrow_types(store: Path, capsys: pytest.CaptureFixture) -> None:
    """The table is built from Arrow's columns, not pandas': an integer column with a
    NULL keeps whole numbers (pandas would make it 1.0 and NaN), a DECIMAL (``sum`` of
    an integer column) is a number on the right, a list shows as a list, and text in
    brackets as it is (not as rich's markup)."""
    sql = (
        "SELECT CASE WHEN rep = 0 THEN NULL ELSE 7 END AS n, sum(rep) OVER () AS s,"
        " 2.5::DECIMAL(4, 2) AS d, [1, 2] AS l, '[bold]x' AS \"[t]\" FROM summary ORDER BY rep"
    )
    assert cli.main(["query", str(store), sql]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["n", "s", "d", "l", "[t]"]
    assert lines[-2].split() == ["NULL", "1", "2.5", "[1,", "2]", "[bold]x"]
    assert lines[-1].split() == ["7", "1", "2.5", "[1,", "2]", "[bold]x"]


def test_dates_intervals_and_maps_are_shown_as_pandas_shows_them(
    store: Path, capsys: pytest.CaptureFixture
) -> None:
    """Types other than numbers, text, booleans and lists of those go through pandas:
    a date beyond Python's year 9999 (which Arrow's Python values cannot hold), an
    interval and a map read as they always did, not as a traceback or a repr."""
    sql = (
        "SELECT DATE '20000-01-01' AS d, INTERVAL '1 month 2 days 3 hours' AS i,"
        " map([1, 2], ['a', 'b']) AS m"
    )
    assert cli.main(["query", str(store), sql]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.split() == [
        "20000-01-01",
        "00:00:00",
        "32",
        "days",
        "03:00:00",
        "{1:",
        "'a',",
        "2:",
        "'b'}",
    ]


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_uhugeint_is_a_positive_number_in_every_format(
    store: Path, fmt: str, capsys: pytest.CaptureFixture
) -> None:
    """128-bit unsigned integers (``sum()`` of UHUGEINT): DuckDB's Arrow export wraps 2^127
    and more to negative numbers and its pandas export refuses the type; shown as
    numbers, 2^128 - 1 as about 3.4e38, in each format (and through Store.query)."""
    sql = 'SELECT 340282366920938463463374607431768211455::UHUGEINT AS "u""x", 5::UHUGEINT AS v'
    assert cli.main(["query", str(store), sql, "--format", fmt]) == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    if fmt == "json":
        assert json.loads(out) == [{'u"x': pytest.approx(2.0**128), "v": 5}]
    else:
        assert last.replace(",", " ").split() in (
            ["3.40282e+38", "5"],
            ["3.402823669209385e+38", "5.0"],
        )
    for output in ("pandas", "arrow"):
        got = Store(store).query(sql, output)
        rows = got.to_dict("records") if output == "pandas" else got.to_pylist()
        assert rows == [{'u"x': pytest.approx(2.0**128), "v": 5}]
    # The other columns as they were, names a query repeats included.
    got = Store(store).query("SELECT 1 AS a, 2::UHUGEINT AS b, 'x' AS a", "arrow")
    assert got.column_names == ["a", "b", "a"]
    assert [str(t) for t in got.schema.types] == ["int32", "double", "string"]


def test_a_query_table_imports_no_pandas(store: Path) -> None:
    """``collateral query``'s table needs no pandas (its import is a third of the
    command's time); CSV and JSON still go through it."""
    code = (
        "import sys; from collateral.cli import main;"
        " rc = main(['query', sys.argv[1], 'SELECT count(*) FROM summary']);"
        " print('pandas' in sys.modules); sys.exit(rc)"
    )
    p = subprocess.run([sys.executable, "-c", code, str(store)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "False", "pandas was imported"


def test_a_query_matching_nothing_says_so(store: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["query", str(store), "SELECT key FROM summary WHERE false"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("(no rows)"), out
    assert (
        cli.main(["query", str(store), "SELECT key FROM summary WHERE false", "--format", "csv"])
        == 0
    )
    assert capsys.readouterr().out == "key\n", "CSV stays data alone"


def test_a_bad_query_is_one_line_with_duckdbs_hint_and_not_the_query_again(
    store: Path, capsys: pytest.CaptureFixture
) -> None:
    for sql, want in (
        ("SELEC 1", 'SQL: Parser Error: syntax error at or near "SELEC"'),
        ("SELECT * FROM summry", 'Did you mean "summary"?'),
        ("SELECT * FROM CWND", "SQL: no CWND table: this directory's runs kept no cwnd traces"),
    ):
        with pytest.raises(SystemExit):
            cli.main(["query", str(store), sql])
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and want in err and "LINE 1" not in err, err


def test_typical_and_decimals_read_a_numeric_column_as_its_values_one_by_one() -> None:
    """The numeric fast path (numpy, no Python loop) gives what the value-by-value path
    gives for the same values as a plain list: NaN and NA left out, zeros ignored."""
    import numpy as np
    import pandas as pd

    from collateral.display import decimals, typical

    rng = np.random.default_rng(3)
    cols = [
        pd.Series(rng.exponential(size=101)),
        pd.Series([0.0, -2.5, np.nan, 3.0, np.inf, 1.25]),
        pd.Series([3, 0, 7, 12], dtype="uint64"),
        pd.Series([1, None, 5], dtype="UInt64"),
        pd.Series([True, False, True]),
        pd.Series([0.0, 0.0]),
        pd.Series([], dtype=float),
    ]
    for s in cols:
        as_list = [None if pd.isna(v) else v for v in s.tolist()]
        assert typical(s) == typical(as_list), s.tolist()
        assert decimals(s) == decimals(as_list), s.tolist()
    assert typical(pd.Series([4.0, -1.0, 0.0, 2.0])) == 2.0  # |values| 1, 2, 4: the middle
