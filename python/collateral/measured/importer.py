"""Storing an imported measurement: one trial of mode ``"measured"`` in a results
directory, its summary and traces written as one part (atomically: nothing is left
half-written when a file fails, since every file is read and scored first).

Its identity: with an experiment file (``--like FILE``, the link the measurement is to
be compared with), the trial takes the key, point and parameter columns of that
experiment's first trial, so ``collateral compare SIM_DIR DIR`` pairs it with the
simulated trial, and the core measures additional delay from that scenario's base and
leaves out its warm-up; without one, the key is a hash of the records and the
parameters are what the files state (``tool``, ``cc``, ``qdisc``, ``test``...)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .records import ImportProblem, Measurement

#: The experiment name of an import without ``--like``.
DEFAULT_NAME = "measured"


def _trace_tables(key: str, traces: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The core's trace columns as Arrow tables with the declared types and the key."""
    import pyarrow as pa

    from ..schema import arrow_type, trace_columns

    out = {}
    for name, cols in traces.items():
        n = len(next(iter(cols.values()))) if cols else 0
        if n == 0:
            continue
        declared = {c["name"]: c for c in trace_columns(name)}
        table = {
            "key": pa.DictionaryArray.from_arrays(
                pa.array([0] * n, pa.int32()), pa.array([key], pa.string())
            )
        }
        for c, v in cols.items():
            table[c] = pa.array(v, type=arrow_type(declared[c]["dtype"]))
        out[name] = pa.table(table)
    return out


def import_measurement(
    m: Measurement, out: str | Path, like: Any = None, name: str | None = None
) -> tuple[Path | None, dict[str, Any]]:
    """Scores ``m`` in the core and stores it in ``out``. ``like``: a loaded experiment
    whose first trial the measurement stands beside. Returns (the part written, or
    None when the directory already held this trial; the row)."""
    from .. import _native
    from ..runner import code_version, summary_columns
    from ..store import Store, rows_to_table

    records = m.to_native_json()
    if like is not None:
        if len(like.points) != 1:
            raise ImportProblem(
                f"{like.source}: {len(like.points)} points; --like takes an experiment of one"
                " point (the link that was measured)"
            )
        trial = like.trials()[0]
        scenario_json = trial.native_json()
        ident = {"key": trial.key, "point": trial.point.key, "rep": 0, "seed": trial.seed}
        params = trial.point.columns()
        stored = trial.point.stored_scenario
        exp_name, exp_text = f"{like.name}-measured", like.text
    else:
        h = hashlib.sha256(b"collateral-measured/1\x00" + records.encode()).hexdigest()
        scenario_json = None
        ident = {"key": h[:24], "point": h[:16], "rep": 0, "seed": 0}
        params, stored = {}, None
        exp_name, exp_text = name or DEFAULT_NAME, None
    try:
        raw = _native.measure_measured(records, scenario_json)
    except ValueError as e:
        raise ImportProblem(f"{m.source}: {e}") from None
    # Each flow's direction, a label the store keeps as a parameter column (a simulated
    # trial's come from its scenario): the flows view and the report name the way each
    # stream and each probe direction went.
    directions = {
        f"{group}{i}_direction": f["direction"]
        for group in ("tcp", "cbr")
        for i, f in enumerate(raw["summary"].get(group) or [])
        if f.get("direction") and f"{group}{i}_direction" not in params
    }
    row: dict[str, Any] = {
        **ident,
        **params,
        **{f"measured_{k}" if k in params else k: v for k, v in m.parameters.items()},
        **directions,
        **summary_columns(raw["summary"]),
        "scenario": stored,
        "model_version": _native.version(),
        "code_version": code_version(),
        "source": m.source,
    }
    if m.start_unix_s is not None:
        import datetime as dt

        row["started"] = dt.datetime.fromtimestamp(m.start_unix_s, dt.UTC).isoformat(
            timespec="seconds"
        )
    traces = _trace_tables(ident["key"], raw["traces"])
    st = Store.create(out, exp_name, exp_text)
    st.lock()
    try:
        part = st.write_part(rows_to_table([row]), traces)
        st.write_views_sql()
    finally:
        st.unlock()
    return part, row
