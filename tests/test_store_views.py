"""The store's views label what the files leave out (issue 28): a drop-tail queue's kind
is 'drop-tail' in SQL and pandas (also where no file has the column), ssthresh's "not
yet set" is NULL, the cbr trace says each packet's direction, and ``flows`` has one row
per trial and flow with its kind, direction and metrics under common names."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from collateral.experiment import load_experiment
from collateral.runner import run_experiment
from collateral.schema import flow_columns
from collateral.store import open_store
from collateral.store.flows import flows_view_sql

EXPERIMENT = textwrap.dedent(
    """
    [experiment]
    name = "views"
    trials = 1
    seed = 3
    traces = ["cbr", "cwnd"]

    [scenario]
    down = { rate = "4Mbit" }
    up = { rate = "1Mbit", queue = { limit = "30p", rule = "ps" } }
    rtt = "40ms"
    duration = "3s"
    warmup = "1s"
    tcp = [{ cc = "cubic" }, { cc = "newreno", direction = "up" }]
    cbr = [{ direction = "up" }, { direction = "down", app = "g711" }]
    web = [{ users = 2 }]

    [[sweep]]
    "tags.q" = ["dt"]
    "down.queue" = [{ limit = "40p", rule = "ps" }]

    [[sweep]]
    "tags.q" = ["codel"]
    "down.queue" = [{ kind = "codel", limit = 100 }]
    "tcp" = [[{ cc = "bbr" }]]
    """
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two points: drop-tail with 2 TCP flows (down, up), CoDel with 1 (down); both with
    a CBR flow up, a G.711 call down and a web group."""
    d = tmp_path_factory.mktemp("views")
    (d / "e.toml").write_text(EXPERIMENT)
    out = d / "store"
    r = run_experiment(load_experiment(d / "e.toml"), out, workers=1, progress=False)
    assert r.ran == 2
    return out


def _files(store: Path, table: str) -> list[Path]:
    return sorted(store.glob(f"parts/*/{table}.parquet"))


def test_drop_tail_has_a_kind_in_sql_and_pandas(store: Path) -> None:
    st = open_store(store)
    # The files: NULL for drop-tail, and no up_queue_kind at all (no point has an AQM up).
    names = {n for f in _files(store, "summary") for n in pq.read_schema(f).names}
    assert "down_queue_kind" in names and "up_queue_kind" not in names
    got = st.query("SELECT tag_q, down_queue_kind, up_queue_kind FROM summary ORDER BY tag_q")
    assert got.values.tolist() == [
        ["codel", "codel", "drop-tail"],
        ["dt", "drop-tail", "drop-tail"],
    ]
    df = st.summary()
    assert df["down_queue_kind"].notna().all() and set(df["up_queue_kind"]) == {"drop-tail"}
    assert st.query("SELECT count(*) AS n FROM summary WHERE down_queue_kind IS NULL")["n"][0] == 0


def test_ssthresh_not_yet_set_is_null(store: Path) -> None:
    raw = max(
        max(pq.read_table(f, columns=["ssthresh"]).column(0).to_pylist())
        for f in _files(store, "cwnd")
    )
    assert raw == 2**32 - 1  # the core's "infinite", as stored
    c = open_store(store).query(
        "SELECT count(*) AS n, count(ssthresh) AS set, max(ssthresh) AS m FROM cwnd"
    )
    n, set_, top = c.iloc[0].tolist()
    assert 0 < set_ < n  # slow start rows are NULL, later ones are not
    assert top < 10_000


def test_cbr_trace_has_each_flows_direction(store: Path) -> None:
    st = open_store(store)
    # cbr0 goes up, plain CBR of 186 B (the default size); cbr1, the G.711 call, down in
    # packets of its own size. Flow ids differ between the points (they count the TCP
    # flows first), so the direction is what tells the packets apart.
    per = st.query(
        "SELECT direction, min(bytes) AS lo, max(bytes) AS hi, count(DISTINCT key) AS n"
        " FROM cbr GROUP BY direction ORDER BY direction"
    )
    assert per["direction"].tolist() == [0, 1] and per["n"].tolist() == [2, 2]
    down, up = per.iloc[0], per.iloc[1]
    assert up["lo"] == up["hi"] == 186 and down["lo"] != 186


def test_flows_one_row_per_trial_and_flow(store: Path) -> None:
    st = open_store(store)
    f = st.query("SELECT * FROM flows")
    # Derived from the schema: trial ids, the flow's labels, then every per-flow metric.
    assert list(f.columns) == [
        "key", "point", "rep", "seed", "kind", "flow_index", "name",
        "direction", "cc", "users", "app", *flow_columns(),
    ]  # fmt: skip
    # drop-tail: 2 TCP + 2 CBR + 1 web; CoDel: 1 TCP + 2 CBR + 1 web.
    assert len(f) == 9
    rows = st.query(
        "SELECT s.tag_q, f.name, f.kind, f.flow_index, f.direction, f.cc, f.app, f.users"
        " FROM flows f JOIN summary s USING (key) ORDER BY 1, 2",
        "arrow",
    )
    assert [list(r.values()) for r in rows.to_pylist()] == [
        ["codel", "cbr0", "cbr", 0, "up", None, "cbr", None],
        ["codel", "cbr1", "cbr", 1, "down", None, "g711", None],
        ["codel", "tcp0", "tcp", 0, "down", "bbr", None, None],
        ["codel", "web0", "web", 0, "down", None, None, 2],
        ["dt", "cbr0", "cbr", 0, "up", None, "cbr", None],
        ["dt", "cbr1", "cbr", 1, "down", None, "g711", None],
        ["dt", "tcp0", "tcp", 0, "down", "cubic", None, None],
        ["dt", "tcp1", "tcp", 1, "up", "newreno", None, None],
        ["dt", "web0", "web", 0, "down", None, None, 2],
    ]
    # The metrics are the wide columns' values, under common names.
    same = st.query(
        "SELECT count(*) AS n FROM flows f JOIN summary s USING (key) WHERE"
        " (f.name = 'tcp1' AND f.goodput_bps = s.tcp1_goodput_bps"
        "  AND f.retransmits = s.tcp1_retransmits)"
        " OR (f.name = 'cbr1' AND f.delay_p95_s = s.cbr1_delay_p95_s AND f.lost = s.cbr1_lost)"
        " OR (f.name = 'web0' AND f.pages_started = s.web0_pages_started)"
    )
    assert same["n"][0] == 1 + 2 + 2
    # A TCP row has no CBR metric and the other way round.
    assert f.loc[f.kind == "tcp", "delay_p95_s"].isna().all()
    assert f.loc[f.kind == "cbr", "goodput_bps"].isna().all()
    # The down TCP goodput of each trial is the trial's down_goodput_bps.
    down = st.query(
        "SELECT s.down_goodput_bps AS total, sum(f.goodput_bps) AS flows"
        " FROM flows f JOIN summary s USING (key)"
        " WHERE f.kind = 'tcp' AND f.direction = 'down' GROUP BY ALL"
    )
    assert (down["total"] - down["flows"]).abs().max() < 1e-6


def test_flows_direction_from_the_stored_scenario_without_its_column() -> None:
    """A store without ``tcp0_direction`` (written before flows had it as a column):
    the direction is the stored scenario's."""
    con = duckdb.connect()
    scen = json.dumps({"tcp": [{"direction": "up"}], "cbr": [{"direction": "down"}]})
    con.execute(
        "CREATE TABLE summary AS SELECT 'k' AS key, 'p' AS point, 0 AS rep, 1 AS seed,"
        f" '{scen}' AS scenario, 1 AS tcp_flows, 1 AS cbr_flows, 5.0 AS tcp0_goodput_bps,"
        " 0.25 AS cbr0_delay_p95_s, 3 AS cbr0_lost"
    )
    names = [r[0] for r in con.execute("DESCRIBE summary").fetchall()]
    con.execute(flows_view_sql(names))
    got = con.execute(
        "SELECT name, direction, goodput_bps, delay_p95_s, lost FROM flows ORDER BY name"
    ).fetchall()
    assert got == [("cbr0", "down", None, 0.25, 3), ("tcp0", "up", 5.0, None, None)]


CALLS = """
[experiment]
name = "calls"
trials = 1
seed = 3

[scenario]
down = { rate = "4Mbit" }
up = { rate = "2Mbit" }
duration = "4s"
warmup = "1s"
tcp = [{ direction = "up" }]
media = { controller = "gcc" }

[sweep]
"media" = [
    { controller = "nada", direction = "up" },
    [{ controller = "scream" }, { controller = "gcc", direction = "up" }],
]
"""


def test_flows_name_each_calls_direction_and_controller(tmp_path: Path) -> None:
    """A call's ``flows`` row has its direction and controller (``cc``) from its
    parameters, one call given as a table (``media_direction``, ``media_controller``) or
    several as a list (``media1_controller``); they were NULL, and the single call's row
    was missing where the store also held points with a list of calls."""
    (tmp_path / "e.toml").write_text(textwrap.dedent(CALLS))
    run_experiment(load_experiment(tmp_path / "e.toml"), tmp_path / "s", workers=1, progress=False)
    got = open_store(tmp_path / "s").query(
        "SELECT coalesce(s.media_flows, 1) AS n, f.kind, f.name, f.direction, f.cc FROM flows f"
        " JOIN summary s USING (key) ORDER BY n, f.kind, f.name"
    )
    rows = [tuple(r) for r in got.itertuples(index=False)]
    assert rows == [
        (1, "media", "media0", "up", "nada"),
        (1, "tcp", "tcp0", "up", "newreno"),
        (2, "media", "media0", "down", "scream"),
        (2, "media", "media1", "up", "gcc"),
        (2, "tcp", "tcp0", "up", "newreno"),
    ]


def test_flows_of_a_store_without_flows_is_empty_with_its_columns() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE summary AS SELECT 'k' AS key LIMIT 0")
    con.execute(flows_view_sql(["key"]))
    cols = [r[0] for r in con.execute("DESCRIBE flows").fetchall()]
    assert (
        cols[:5] == ["key", "point", "rep", "seed", "kind"] and cols[-1] == list(flow_columns())[-1]
    )
    assert con.execute("SELECT count(*) FROM flows").fetchone() == (0,)


def test_views_sql_has_the_labels_and_flows(store: Path) -> None:
    """``duckdb -init views.sql`` gives the same views as :meth:`Store.connect`."""
    st = open_store(store)
    text = st.write_views_sql().read_text()
    assert "CREATE OR REPLACE VIEW flows AS" in text and "'drop-tail' AS up_queue_kind" in text
    con = duckdb.connect()
    here = os.getcwd()
    os.chdir(store)  # its paths are relative to the store
    try:
        for stmt in text.split(";\n"):
            if "CREATE" in stmt:
                con.execute(stmt)
        assert con.execute("SELECT count(*) FROM flows").fetchone() == (9,)
        kinds = con.execute("SELECT DISTINCT up_queue_kind FROM summary").fetchall()
        assert kinds == [("drop-tail",)]
    finally:
        os.chdir(here)


def test_a_store_answers_for_the_parts_written_since_its_last_query(tmp_path: Path) -> None:
    # A store keeps its sandboxed connection while its views' SQL is the same: a query
    # after more trials were stored counts them, as a store opened anew does.
    (tmp_path / "e.toml").write_text(EXPERIMENT)
    out = tmp_path / "store"
    first = load_experiment(tmp_path / "e.toml", [("experiment.traces", [])])
    run_experiment(first, out, workers=1, progress=False)
    st = open_store(out)
    count = "SELECT count(*) AS n FROM summary"
    assert st.query(count).n.tolist() == [2]
    assert "cbr" not in st.tables()  # no trace yet
    more = load_experiment(tmp_path / "e.toml", [("experiment.trials", 3)])
    assert run_experiment(more, out, workers=1, progress=False).ran == 4
    assert st.query(count).n.tolist() == [6]
    assert open_store(out).query(count).equals(st.query(count))
    # The traces of the new trials: a table the views had no file for before.
    n = st.query("SELECT count(*) AS n FROM cbr").n.tolist()
    assert n[0] > 0 and n == open_store(out).query("SELECT count(*) AS n FROM cbr").n.tolist()


def test_pandas_by_way_of_arrow_is_duckdbs_own_frame() -> None:
    """`query(output="pandas")` builds the frame from Arrow (faster); it must be the frame
    DuckDB's own `df()` gives, dtypes included: integers and booleans with NULLs nullable,
    text that is all NULL as objects, an empty result as DuckDB types it."""
    import pandas as pd

    from collateral.store.views import _pandas

    con = duckdb.connect()
    sql = """SELECT * FROM (VALUES
        (1::UTINYINT, 2::UBIGINT, -3::BIGINT, 1.5::DOUBLE, 'a', true, 4::UINTEGER,
         NULL::VARCHAR, NULL::UBIGINT, NULL::BOOLEAN, 1.5::FLOAT, 7::INTEGER),
        (NULL, 3, 4, NULL, NULL, NULL, 5, NULL, NULL, NULL, NULL, 8)) t(a,b,c,d,e,f,g,h,i,j,k,l)"""
    for q in (sql, sql + " WHERE false", "SELECT [1, 2] AS l, 1 AS a, 1 AS a"):
        want, got = con.sql(q).df(), _pandas(con.sql(q))
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert list(got.dtypes.astype(str)) == list(want.dtypes.astype(str)), q
