"""MMSys Fig. 4(b): the peak statistic against hand-counted cases, the simulated
reproduction end to end, and (as root) the testbed variant on one size."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pandas as pd
import pytest
from conftest import QuickRuns

from collateral.reproduce import STUDIES, format_claims_summary, reproduce
from collateral.reproduce.mmsys2011.fig4b import _QUICK_SWEEP, peaks


def _frame(rows):
    df = pd.DataFrame(rows, columns=["cc", "k", "off", "rep", "loss"])
    df["bytes"] = df.k * 1500 + df.off
    return df


def test_peaks_counts_multiples_above_both_neighbours():
    rows = []
    # k=7: 3 % at the multiple, 1 and 2 % beside it (above both; ratio 3 / 1.5 = 2).
    # k=14: 1 % between 0.5 and 2 % (neither). k=20: 0.2 % under 1 and 1 % (below both;
    # ratio 0.2). Two trials each, medians as listed.
    for k, (lo, mid, hi) in {7: (1, 3, 2), 14: (0.5, 1, 2), 20: (1, 0.2, 1)}.items():
        for off, v in ((-750, lo), (0, mid), (750, hi)):
            rows += [("cubic", k, off, r, v) for r in (0, 1)]
    p = peaks(_frame(rows))
    assert p["pairs"] == 3 and p["above_both"] == 1 and p["below_both"] == 1
    assert p["median_ratio"] == pytest.approx(1 / 1.25)  # ratios 2, 0.8, 0.2


@pytest.mark.xdist_group("quick_runs")
def test_simulated_fig4b_draws_and_gives_a_verdict_with_its_tolerance(quick_runs: QuickRuns):
    rep = quick_runs.reps["mmsys-fig4b"]  # the session's quick run (conftest.py)
    names = sorted(p.name for p in rep.files)
    assert names == ["mmsys-fig4b.caption.txt", "mmsys-fig4b.png", "mmsys-fig4b.svg"]
    (claim,) = rep.claims
    assert claim.holds is not None and "75%" in claim.tolerance
    caption = (rep.store / "figures" / "mmsys-fig4b.caption.txt").read_text()
    assert "k × 1500 B" in caption
    # The CLI (resuming: nothing runs) prints each claim in a short line and ends
    # with the summary line of the same claims.
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "collateral",
            "reproduce",
            "mmsys-fig4b",
            "--quick",
            "-o",
            str(quick_runs.out),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    assert "0 trials run" in p.stdout and claim.text in p.stdout
    assert p.stdout.rstrip().splitlines()[-1] == format_claims_summary(rep.claims)


def test_reproduce_all_leaves_the_testbed_out_and_lists_it():
    out = subprocess.run(
        [sys.executable, "-m", "collateral", "reproduce", "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("mmsys-fig4b-testbed"))
    assert "needs root" in line and "not in 'all'" in line
    assert STUDIES["mmsys-fig4b-testbed"].testbed and not STUDIES["mmsys-fig4b"].testbed


@pytest.mark.realtime  # the testbed in real time: run alone, never beside other tests (test.sh)
@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/sys/net/ipv4/tcp_available_congestion_control"),
    reason="the testbed needs root and Linux",
)
def test_testbed_fig4b_runs_real_tcp_beside_the_simulation(tmp_path, monkeypatch):
    # One size (34 x 1500 B), both algorithms, 8 s each: the whole path in ~30 s.
    sweep = [dict(_QUICK_SWEEP[0])]
    sweep[0]["zip"] = [{"queue.limit": ["51000B"], "tags.slots": [34], "tags.offset_bytes": [0]}]
    fig = STUDIES["mmsys-fig4b-testbed"]
    quick = (("scenario.duration", "8s"), ("scenario.warmup", "2s"), ("sweep", sweep))
    monkeypatch.setitem(STUDIES, fig.id, dataclasses.replace(fig, quick=quick))
    reproduce("mmsys-fig4b", out=tmp_path, quick=True, progress=False)
    rep = reproduce("mmsys-fig4b-testbed", out=tmp_path, quick=True, progress=False)
    assert rep.trials_run == 2
    from collateral.store import Store

    df = Store(rep.store).query("SELECT mode, tcp0_cc, cbr0_sent, tcp0_goodput_bps FROM summary")
    assert set(df["mode"]) == {"emulation"} and set(df.tcp0_cc) == {"newreno", "cubic"}
    assert (df.cbr0_sent > 200).all() and (df.tcp0_goodput_bps > 0.9e6).all()
    (agree,) = [c for c in rep.claims if "agree" in c.text]
    assert agree.holds is not None and "factor 2" in agree.tolerance
    caption = (rep.store / "figures" / "mmsys-fig4b-testbed.caption.txt").read_text()
    assert "Hollow: the simulator" in caption
