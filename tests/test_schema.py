"""The result schema is declared once, in the core: the store, the stub, the traces the
bindings hand over, and the column names figures, reports and comparisons use must all
be in it."""

from __future__ import annotations

import json
import math
import random
import re
import struct
import time
from pathlib import Path

import numpy as np

import collateral
from collateral import _native, schema
from collateral.runner import summary_columns
from collateral.spec import Scenario, TraceSpec
from collateral.store.tables import columns_to_table, rows_to_table

ROOT = Path(__file__).parents[1]
PKG = ROOT / "python" / "collateral"
#: A flat summary column name as code spells it: tcp0_goodput_bps, cbr1_loss_rate,
#: queue_down_drops, web0_pages_completed.
FLAT = re.compile(r"\b(?:(?:tcp|cbr|web|media)\d+|queue_(?:down|up))_[a-z0-9_]+\b")
NUMPY = {"float64": np.float64, "uint64": np.uint64, "uint32": np.uint32, "uint8": np.uint8}


def _full_trial() -> collateral.Result:
    return collateral.simulate(
        Scenario(
            down={"rate": "10Mbit"},
            up={"rate": "10Mbit"},
            duration="4s",
            warmup="1s",
            tcp=[{}],
            cbr=[{"direction": "down"}, {"direction": "up", "app": "wow"}],
            web=[{"users": 5}],
            media={},
        )
    )


def test_every_stored_summary_column_is_declared_with_its_type():
    r = _full_trial()
    flat = summary_columns(r.summary)
    assert "tcp0_goodput_bps" in flat and "web0_pages_completed" in flat
    assert "media0_frame_delay_p95_s" in flat
    for name, value in flat.items():
        c = schema.column(name)
        assert c is not None, name
        if value is None:
            assert c["null"], f"{name} is None but not declared nullable"
        elif c["dtype"] == "float64":
            assert isinstance(value, float) and not math.isnan(value), name
        elif c["dtype"].startswith("uint"):
            assert isinstance(value, int) and value >= 0, name
        else:
            assert isinstance(value, str), name


def test_the_traces_the_bindings_hand_over_are_the_declared_tables():
    r = _full_trial()
    assert sorted(r.traces) == sorted(schema.trace_tables())
    for name, cols in r.traces.items():
        declared = schema.trace_columns(name)
        assert list(cols) == [c["name"] for c in declared], name
        for c in declared:
            if c["dtype"] in NUMPY:
                assert cols[c["name"]].dtype == NUMPY[c["dtype"]], (name, c["name"])


def test_nan_stays_nan_in_a_result():
    # No packet of the flow arrives before the end: its delays are NaN, not None.
    r = collateral.simulate(
        Scenario(
            down={"rate": "1Mbit"},
            up={"rate": "1Mbit"},
            duration="2s",
            warmup="1s",
            cbr=[{"start": "1990ms", "jitter": "0s"}],
            rtt="200ms",
        )
    )
    assert math.isnan(r.cbr[0]["delay_median_s"]) and math.isnan(r.cbr[0]["loss_rate"])
    assert summary_columns(r.summary)["cbr0_delay_median_s"] is None  # NULL in the store


def test_an_undeclared_field_is_refused():
    import pytest

    s = _full_trial().summary
    s["cbr"][0]["jitter_ms"] = 1.0
    with pytest.raises(ValueError, match=r"summary\.cbr\[0\]: undeclared field \"jitter_ms\""):
        summary_columns(s)
    s = _full_trial().summary
    s["jitter_ms"] = 1.0
    with pytest.raises(ValueError, match=r"summary: undeclared field \"jitter_ms\""):
        summary_columns(s)


def test_a_batch_gives_each_trials_flat_summary_column_by_column():
    """The sweep's call: the columns of a batch are, row by row, what flattening each
    trial's summary gives (None where a trial lacks a column); a bad scenario is an
    error in its slot and the others still run."""
    full = Scenario(
        down={"rate": "10Mbit"},
        up={"rate": "10Mbit"},
        duration="3s",
        warmup="1s",
        tcp=[{}],
        cbr=[{"direction": "up", "app": "wow"}],
        web=[{"users": 3}],
        phases=[{"name": "a", "start": "0s"}, {"name": "b", "start": "2s"}],
    )
    small = Scenario(
        link="adsl1", duration="2s", warmup="1s", tcp=[{}], cbr=[{}], seed=7, trace=TraceSpec.off()
    )
    jsons = [full.to_native_json(), "{not json", small.to_native_json()]
    t0 = time.perf_counter()
    out = _native.simulate_batch(jsons)
    call_s = time.perf_counter() - t0
    # The time without the GIL is part of the call: the rest is the hand-back.
    assert 0 < out["core_s"] < call_s
    assert out["errors"][0] is None and out["errors"][2] is None
    assert "line 1" in out["errors"][1]  # the JSON parser's message
    rows = [summary_columns(collateral.simulate(sc).summary) for sc in (full, small)]
    cols = out["columns"]
    assert set(cols) == set(rows[0]) | set(rows[1])
    assert "web0_pages_completed" in cols and "web0_pages_completed" not in rows[1]
    assert "web0_pages_completed" in out["nulls"] and "events" not in out["nulls"]
    for name, values in cols.items():
        want = [r.get(name) for r in rows]
        dtype = schema.column(name)["dtype"]
        if isinstance(values, np.ndarray):  # a numeric column: its declared type, masked
            assert values.dtype == np.dtype(dtype), name
            missing = out["nulls"].get(name, np.zeros(len(values), bool))
            values = [None if m else v for v, m in zip(values.tolist(), missing, strict=True)]
        else:
            assert dtype in ("string", "json") and name not in out["nulls"], name
        assert values == want, name
    # Stored, the batch is the table of its trials' rows flattened one by one: the same
    # values, nulls and declared types.
    assert columns_to_table(cols, out["nulls"]).equals(rows_to_table(rows))
    assert len(out["traces"]) == 2 and sorted(out["traces"][0]) == sorted(schema.trace_tables())
    # The tables the batch names, and only those, for every trial: the congestion trace is
    # recorded whatever the scenario's switches (the untraced trial has it too); none when
    # the batch names none.
    good = [jsons[0], jsons[2]]
    named = _native.simulate_batch(good, ["congestion", "cwnd"])["traces"]
    assert [sorted(t) for t in named] == [["congestion", "cwnd"]] * 2
    assert len(named[1]["congestion"]["time_s"]) > 0 and len(named[1]["cwnd"]["time_s"]) == 0
    assert _native.simulate_batch(good, [])["traces"] == [{}, {}]


def _literals(path: Path) -> set[str]:
    return set(FLAT.findall(path.read_text(encoding="utf-8")))


def _index(name: str) -> str:
    return re.sub(r"^(tcp|cbr|web)\d+_", r"\1{i}_", name)


def _parameter_columns() -> set[str]:
    """The parameter columns (the scenario's own values) of a scenario with every kind
    of flow: the store's other columns, named by the experiment, not the schema."""
    from collateral.experiment import param_columns

    sc = Scenario(
        down={"rate": "10Mbit", "framing": {"overhead": "10B", "atm": True}},
        up={"rate": "1Mbit"},
        duration="4s",
        warmup="1s",  # below the duration: the core refuses the default 5s
        tcp=[{"cc": "cubic", "profile": "linux-6", "start": "1s", "stop": "3s"}],
        cbr=[{"direction": "down", "tag": 46, "start": "1s", "stop": "2s"}, {"app": "wow"}],
        web=[{"users": 5}],
        media=[{"controller": "gcc"}],
    )
    return {_index(n) for n in param_columns(sc)}


def test_the_phases_text_is_what_json_dumps_writes_of_its_records():
    """The core writes the ``phases`` column's text itself; it must be the text stores
    have always held: Python's ``json.dumps`` of the records (``repr`` floats such as
    ``4.16e-05``, ``\\uxxxx`` escapes), a phase name with quotes and non-ASCII included."""
    name = 'naïve "a" \\ 😀\t'
    sc = Scenario(
        link="adsl2",
        duration="3s",
        warmup="1s",
        tcp=[{}],
        cbr=[{}],
        phases=[{"name": "idle", "start": "0s"}, {"name": name, "start": "2s"}],
        trace=TraceSpec.off(),
    )
    text = summary_columns(collateral.simulate(sc).summary)["phases"]
    records = json.loads(text)
    assert {r["phase"] for r in records} == {"idle", name}
    assert text == json.dumps(records) and "\\u00ef" in text
    batch = _native.simulate_batch([sc.to_native_json()])["columns"]["phases"]
    assert batch == [text]
    # Any double: random bit patterns and the ties between two shortest forms that Python
    # breaks to the even digit (1e15 + 0.25 is ...0.2), in a record of the core's fields.
    rng = random.Random(7)
    bits = (struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(4000))
    xs = [x for x in bits if math.isfinite(x)]
    xs += [1e15 + 0.25, 2.0**46 + 0.125, 5e-324, 1e-4, 1e16, -0.0]
    xs += [rng.getrandbits(53) * 2.0 ** rng.randrange(-60, 10) for _ in range(2000)]
    summary = dict(collateral.simulate(sc).summary)
    summary["phases"] = [{**records[0], "throughput_bps": x, "start_s": -x} for x in xs]
    want = json.dumps(summary["phases"])
    assert _native.flatten_summary(summary)["phases"] == want


def test_code_refers_only_to_declared_columns():
    params = _parameter_columns()
    files = [
        *PKG.rglob("*.py"),
        *PKG.glob("*.pyi"),
        *(PKG / "reproduce").rglob("*.toml"),
        *(ROOT / "examples").glob("*.toml"),
    ]
    seen = 0
    for f in files:
        for name in _literals(f):
            seen += 1
            ok = schema.column(name) is not None or _index(name) in params
            assert ok, f"{f.relative_to(ROOT)}: {name} is neither a result nor a parameter"
    assert seen > 20  # the figures and claims do refer to columns


def test_the_stub_lists_what_the_module_exports():
    stub = (PKG / "_native.pyi").read_text(encoding="utf-8")
    stubbed = set(re.findall(r"^(?:def|class) (\w+)\b", stub, re.M))
    exported = {n for n in dir(_native) if not n.startswith("_") and callable(getattr(_native, n))}
    assert stubbed == exported


def test_the_schema_prints():
    text = schema.render()
    assert "cbr{i}_delay_p95_s" in text and "trace cwnd" in text


def test_the_schema_command_lists_the_cores_names_of_each_kind(capsys):
    """A discipline or congestion control the core adds appears in `collateral schema`
    with its display name, without a Python table."""
    from collateral.cli import main

    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    for kind, info in _native.vocabulary()["aqm_info"].items():
        assert f"{kind} ({info['display']})" in out
    assert ", ".join(_native.vocabulary()["cc"]) in out
