"""Reproductions: every figure runs in --quick mode and draws (the report of them is
tested in headless Chromium in test_report.py)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import QuickRuns

from collateral.reproduce import STUDIES, reproduce

#: One worker for the modules that share the session's quick runs (run once).
pytestmark = pytest.mark.xdist_group("quick_runs")

#: Figures of the simulator (the testbed's is run in tests/test_fig4b.py).
SIMULATED = [fid for fid, fig in STUDIES.items() if not fig.testbed]


def test_list_names_every_figure():
    out = subprocess.run(
        [sys.executable, "-m", "collateral", "reproduce", "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == list(STUDIES)
    assert all(len(ln.split(None, 1)) == 2 for ln in lines), "each has a description"
    for want in (
        "mmsys-fig1",
        "mmsys-fig3a",
        "mmsys-fig3b",
        "mmsys-fig4",
        "mmsys-fig5",
        "mmsys-fig6a",
        "mmsys-fig6b",
        "mmsys-fig7",
        "mmsys-adsl2-loss",
        "huebner-epochs",
        "huebner-owd-queue",
        "huebner-cdf",
        "huebner-median-bdp",
    ):
        assert want in STUDIES


@pytest.mark.parametrize("fig_id", SIMULATED)
def test_quick_reproduction_draws_its_figure(
    fig_id: str, quick_runs: QuickRuns, monkeypatch: pytest.MonkeyPatch
):
    rep = quick_runs.reps[fig_id]  # the session's run, from an empty directory
    fig = STUDIES[fig_id]
    # Figures of one experiment share its store: the first ran every trial.
    first = next(f for f in SIMULATED if STUDIES[f].experiment == fig.experiment)
    assert rep.trials_total > 0
    assert rep.trials_run == (rep.trials_total if first == fig_id else 0)
    assert rep.store.name.endswith("-quick")
    pngs = [f for f in rep.files if f.suffix == ".png"]
    svgs = [f for f in rep.files if f.suffix == ".svg"]
    assert pngs and len(pngs) == len(svgs)
    assert all(f.stat().st_size > 20_000 for f in pngs), "a real plot, not an empty canvas"
    # Rerunning resumes: nothing left to run (drawn as the first run drew it: not again).
    monkeypatch.setitem(STUDIES, fig_id, replace(fig, draw=lambda *a: [], claims=lambda s: []))
    assert reproduce(fig_id, out=quick_runs.out, quick=True, progress=False).trials_run == 0


#: DuckDB's name for each declared type.
_DUCKDB = {
    "float64": "DOUBLE",
    "uint64": "UBIGINT",
    "uint32": "UINTEGER",
    "uint8": "UTINYINT",
    "string": "VARCHAR",
    "json": "VARCHAR",
}


def test_every_reproductions_store_has_the_declared_types(quick_results: Path):
    """DESCRIBE summary (and each trace table) of every quick reproduction's store: each
    result column has the type the core declares, whatever its batches held."""
    from collateral import schema
    from collateral.store import IDENTITY_COLUMNS, open_store

    stores = sorted(p for p in quick_results.iterdir() if (p / "store.json").exists())
    assert len(stores) >= 8
    checked = 0
    for d in stores:
        st = open_store(d)
        for table in st.tables():
            rows = st.query(f"DESCRIBE {table}", "arrow").to_pylist()
            for r in rows:
                name, typ = r["column_name"], r["column_type"]
                if table == "summary":
                    want = IDENTITY_COLUMNS.get(name) or (
                        c["dtype"] if (c := schema.column(name)) else None
                    )
                else:
                    cols = {c["name"]: c["dtype"] for c in schema.trace_columns(table)}
                    want = cols.get(name, "string" if name == "key" else None)
                    assert want is not None, f"{d.name}: {table}.{name} is not declared"
                if want is not None:
                    assert typ == _DUCKDB[want], f"{d.name}: {table}.{name} is {typ}, not {want}"
                    checked += 1
    assert checked > 200


def test_ctrl_c_stops_a_reproduction_before_its_figure_and_claims(tmp_path):
    # The finished batches are stored, as `run` stores them, but a figure or a verdict
    # drawn from part of a sweep would misreport the paper: neither is made.
    import signal
    import time

    out = tmp_path / "r"
    store = out / "today-queues-quick"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "collateral", "reproduce", "today-queues", "--quick"),
            *("-o", out, "--workers", "1"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Signalled once the first batch (one trial) is stored. On one worker the runner
    # then has two batches in flight, about three quarters of the trials, and the rest
    # pending for seconds, so the stop leaves trials missing. On two workers it could
    # hand out every trial before a signal delayed on a loaded machine arrived, finish
    # them all, and rightly draw the figure of the whole sweep.
    t0 = time.monotonic()
    while not any((store / "parts").glob("*")) and proc.poll() is None:
        assert time.monotonic() - t0 < 120, "no part stored"
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted; finished trials are kept" in stderr and "Traceback" not in stderr
    assert "claims" not in stdout and not (store / "figures").exists(), stdout
    assert any((store / "parts").glob("*"))


def test_a_testbed_figure_without_the_emulator_is_one_line_and_writes_nothing(
    tmp_path, monkeypatch, cli_main
):
    # A package installed without the Rust testbed: said before any directory is made.
    import os

    from collateral.emulate import endpoints
    from collateral.emulate.errors import EmulationError

    def missing() -> str:
        raise EmulationError("collateral-emu not found; build it")

    monkeypatch.setattr(endpoints, "find_emulator", missing)
    rc, _, err = cli_main("reproduce", "mmsys-fig4b-testbed", "-o", str(tmp_path / "r"))
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("collateral: error: reproduce: mmsys-fig4b-testbed: needs the emulation")
    if os.geteuid() == 0:  # otherwise refused first for want of root
        assert "collateral-emu not found" in err, err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
