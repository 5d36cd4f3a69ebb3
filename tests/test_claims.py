"""Claims: every claim of every (quick) reproduction has a verdict and a stated
tolerance; the statistics the shape claims rest on are right on samples whose values
are known by hand; the summary line counts correctly."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import QuickRuns

from collateral.reproduce import (
    Claim,
    claims_line,
    claims_summary,
    format_claims_summary,
)
from collateral.reproduce.huebner2008 import _shape_stats
from collateral.reproduce.mmsys2011.loss import _monotone_misfit

#: One worker for the modules that share the session's quick runs (run once).
pytestmark = pytest.mark.xdist_group("quick_runs")


@pytest.fixture(scope="module")
def quick(quick_runs: QuickRuns) -> tuple[Path, dict]:
    """Every simulated figure reproduced in --quick mode (the session's runs); testbed
    figures are left out, as ``reproduce all`` does."""
    return quick_runs.out, quick_runs.reps


def test_every_claim_has_a_verdict_and_a_tolerance(quick: tuple[Path, dict]):
    _, reps = quick
    claims = [(fid, c) for fid, rep in reps.items() for c in rep.claims]
    assert len(claims) > 40, "the quick reproductions check dozens of claims"
    missing = [f"{fid}: {c.text}" for fid, c in claims if c.holds is None]
    assert not missing, f"claims without a verdict: {missing}"
    bare = [f"{fid}: {c.text}" for fid, c in claims if not c.tolerance.strip()]
    assert not bare, f"claims without a stated tolerance: {bare}"
    assert all(isinstance(c.holds, bool) for _, c in claims), "verdicts are plain bools"


def test_summary_line_from_the_stores_matches_the_claims(quick: tuple[Path, dict]):
    out, reps = quick
    claims = [c for rep in reps.values() for c in rep.claims]
    line = claims_line(list(reps), out, quick=True)
    hold, differ, total = claims_summary(claims)
    assert line == f"claims: {hold} hold, {differ} differ, {total} total"


def test_huebner_shapes_are_checked_for_each_algorithm(quick: tuple[Path, dict]):
    _, reps = quick
    texts = [c.text for c in reps["huebner-owd-queue"].claims]
    for want in (
        "newreno (linux-2.6.25): VoIP delay distribution close to uniform",
        "htcp (linux-2.6.25): VoIP delay skewed towards the minimum",
        "cubic (linux-2.6.25): VoIP delay skewed towards the maximum",
    ):
        assert any(t.startswith(want) for t in texts), (want, texts)


def test_parris_table_has_every_discipline_and_its_parameters(quick: tuple[Path, dict]):
    _, reps = quick
    rep = reps["parris-multimedia"]
    md = next(f for f in rep.files if f.name == "parris-multimedia-table.md")
    csv = next(f for f in rep.files if f.name == "parris-multimedia-table.csv")
    text = md.read_text()
    for d in ("drop-tail", "RED", "FRED", "CBT", "CBT-queue-avg", "CBQ"):
        assert f"| {d} |" in text
    assert "fred: min_th 10, max_th 60" in text, "FRED runs a larger threshold than RED"
    assert "max_th 15, max_p 0.1, w_q 0.002; tagged threshold 3.84, other 2.40" in text, (
        "CBT holds a lower maximum average queue than RED's 30 packets"
    )
    assert csv.read_text().splitlines()[0] == (
        "discipline,parameters,multimedia_drop_rate,multimedia_latency_s,tcp_throughput_bps,trials"
    )


# --- the statistics, on samples with hand-computed values ------------------------------

N = 10_000
U = (np.arange(N) + 0.5) / N  # an exact uniform sample on [0, 1] (its quantiles)


def test_shape_stats_of_a_uniform_sample():
    # Over its own [min, max] the grid maps to i/(N−1): the empirical CDF's first step
    # (1/N at x = 0) is the largest gap, KS = 1/N.
    st = _shape_stats(U)
    assert st["ks"] == pytest.approx(1 / N, abs=1e-9)
    assert _shape_stats(U, lo=0.0, hi=1.0)["ks"] == pytest.approx(0.5 / N, abs=1e-9)
    assert st["skew"] == pytest.approx(0.0, abs=1e-9)
    assert st["median"] == pytest.approx(0.5, abs=1e-4)
    assert st["top"] == pytest.approx(0.25, abs=1e-4)


def test_shape_stats_of_a_sample_skewed_to_the_minimum():
    # x = u²: F(x) = √x, so KS = max(√x − x) = 1/4 at x = 1/4; median (1/2)² = 1/4;
    # share above 3/4 = 1 − √(3/4); skewness from the moments E x = 1/3, E x² = 1/5,
    # E x³ = 1/7: (16/945) / (4/45)^1.5 = 2·√45 / 21 = 0.63888.
    x = U**2
    st = _shape_stats(x, lo=0.0, hi=1.0)
    m1, m2, m3 = 1 / 3, 1 / 5, 1 / 7
    var = m2 - m1**2
    skew = (m3 - 3 * m1 * m2 + 2 * m1**3) / var**1.5
    assert st["ks"] == pytest.approx(0.25, abs=1e-3)
    assert st["median"] == pytest.approx(0.25, abs=1e-3)
    assert st["top"] == pytest.approx(1 - math.sqrt(0.75), abs=1e-3)
    assert st["skew"] == pytest.approx(skew, abs=2e-3)
    assert skew == pytest.approx(2 * math.sqrt(45) / 21, abs=1e-12)


def test_shape_stats_of_a_sample_skewed_to_the_maximum():
    # x = √u: F(x) = x², KS = max(x − x²) = 1/4 at x = 1/2; median √(1/2); share above
    # 3/4 = 1 − 9/16 = 7/16; moments E x = 2/3, E x² = 1/2, E x³ = 2/5, so the skewness
    # is (−1/135) / (1/18)^1.5 = −18·√18 / 135 = −0.56569.
    x = np.sqrt(U)
    st = _shape_stats(x, lo=0.0, hi=1.0)
    m1, m2, m3 = 2 / 3, 1 / 2, 2 / 5
    var = m2 - m1**2
    skew = (m3 - 3 * m1 * m2 + 2 * m1**3) / var**1.5
    assert st["ks"] == pytest.approx(0.25, abs=1e-3)
    assert st["median"] == pytest.approx(math.sqrt(0.5), abs=1e-3)
    assert st["top"] == pytest.approx(7 / 16, abs=1e-3)
    assert st["skew"] == pytest.approx(skew, abs=2e-3)
    assert skew == pytest.approx(-18 * math.sqrt(18) / 135, abs=1e-12)


def test_shape_stats_range_defaults_to_the_sample_and_scales_out():
    # A uniform sample on [40 ms, 120 ms]: the same shape as on [0, 1].
    st = _shape_stats(0.040 + 0.080 * U)
    assert st["ks"] == pytest.approx(1 / N, abs=1e-6)
    assert st["median"] == pytest.approx(0.5, abs=1e-4)
    # The same delays against a range twice as wide (empty queue at 0): mass at the top.
    st = _shape_stats(0.040 + 0.080 * U, lo=-0.040, hi=0.120)
    assert st["median"] == pytest.approx(0.75, abs=1e-4)
    assert st["top"] == pytest.approx(0.5, abs=1e-4)
    assert st["ks"] == pytest.approx(0.5, abs=1e-3)


def test_newreno_sawtooth_density_is_within_the_uniform_bound():
    # The model behind NewReno's 0.15 bound: queue delay density rising linearly 1 → 2
    # over the range (RTT grows with the queue), F(x) = (x + x²/2)/1.5, KS = 1/12.
    x = -1 + np.sqrt(1 + 3 * U)  # inverse of F
    st = _shape_stats(x, lo=0.0, hi=1.0)
    assert st["ks"] == pytest.approx(1 / 12, abs=1e-3)
    assert st["ks"] <= 0.15


def test_monotone_misfit_zero_for_monotone_curves_large_for_a_sawtooth():
    x = np.arange(50)
    assert _monotone_misfit(x * 0.1, se=0.05) == 0.0
    assert _monotone_misfit(-(x**2.0), se=1.0) == 0.0
    # A sawtooth 0, 1, 0, 1, …, 1 (50 points): the best non-decreasing fit keeps the
    # first 0 and the last 1 and pools the 48 between to ½ (the best non-increasing fit
    # pools all 50 to ½), so the RMS is ½·√(48/50), in units of se = 0.1: 4.899.
    saw = (x % 2).astype(float)
    assert _monotone_misfit(saw, se=0.1) == pytest.approx(5 * math.sqrt(48 / 50), rel=1e-9)
    # Monotone truth plus noise of one SE scores about 1 or less.
    rng = np.random.default_rng(7)
    noisy = x * 0.01 + rng.normal(0, 1.0, len(x))
    assert _monotone_misfit(noisy, se=1.0) < 1.2
    assert _monotone_misfit(saw, se=0.0) == math.inf
    assert _monotone_misfit(np.ones(5), se=0.0) == 0.0


# --- the summary ----------------------------------------------------------------------


def test_claims_summary_counts_a_hand_made_list():
    claims = [
        Claim("a", "1", "1", True, "exact"),
        Claim("b", "1", "2", False, "exact"),
        Claim("c", "1", "1", True, "exact"),
        Claim("d", "1", "3", False, "exact"),
        Claim("e", "1", "1", True, "exact"),
    ]
    assert claims_summary(claims) == (3, 2, 5)
    assert format_claims_summary(claims) == "claims: 3 hold, 2 differ, 5 total"
    assert claims_summary([]) == (0, 0, 0)
    assert format_claims_summary([]) == "claims: 0 hold, 0 differ, 0 total"
    # A claim without a verdict counts in the total only, and the line says so.
    assert claims_summary([*claims, Claim("f", "", "x")]) == (3, 2, 6)
    assert format_claims_summary([*claims, Claim("f", "", "x")]) == (
        "claims: 3 hold, 2 differ, 6 total (1 without a verdict)"
    )
    # Any iterable, consumed once.
    assert claims_summary(c for c in claims) == (3, 2, 5)


# --- today-queues' expectations from the links, computed by hand ----------------------


def test_wire_times_of_the_links():
    from collateral.reproduce.today import physics as P

    # ADSL1: 1500 + 10 B in 48-byte cells = 32 cells of 53 B at 1.5 Mbit/s; upstream
    # at 256 kbit/s; cable: 1518 B at 100 and 20 Mbit/s.
    assert P.mtu_s("ADSL1") == pytest.approx(32 * 53 * 8 / 1.5e6)
    assert P.mtu_s("ADSL1", "up") == pytest.approx(0.053)
    assert P.mtu_s("cable") == pytest.approx(1518 * 8 / 100e6)
    assert P.drain_s("ADSL1", "down") == pytest.approx(7 * 32 * 53 * 8 / 1.5e6)
    assert P.drain_s("cable", "up") == pytest.approx(34 * 1518 * 8 / 20e6)
    # The call: 208 B + 10 = 218 B -> 5 cells = 265 B every 20 ms = 106 kbit/s.
    assert P.LINKS["ADSL1"].wire_bps(P.CALL_IP_BYTES, P.CALL_GAP_S) == pytest.approx(106e3)


def test_max_min_share_by_water_filling():
    from collateral.reproduce.today.physics import max_min_share

    # 10 over demands 1, 2, 8, inf: 1 and 2 are met, the 7 left split 3.5 / 3.5.
    d = [8.0, 1.0, math.inf, 2.0]
    assert [max_min_share(10, d, i) for i in range(4)] == [3.5, 1.0, 3.5, 2.0]
    assert max_min_share(10, [1.0, 2.0], 0) == 1.0  # all demands met


def test_the_call_is_over_its_share_only_on_the_adsl1_upstream_with_an_upload():
    from collateral.reproduce.today.physics import call_share

    # ADSL1 upstream, 1 download + 1 upload: game 118 B -> 3 cells every 50 ms = 25.44
    # kbit/s; the download's ACKs at the line rate: 1.5e6 / (32·53·8) segments/s, one
    # ACK (62 B -> 2 cells) per 2 = 46.875 kbit/s; the call and the upload split the
    # rest: (256 − 25.44 − 46.875) / 2 = 91.84 kbit/s < 106.
    rate, share = call_share("ADSL1", "up", 1, 1)
    assert rate == pytest.approx(106e3)
    assert share == pytest.approx((256e3 - 159 * 8 / 0.05 - 46_875) / 2)
    assert share < rate
    for link, d, mix in (("ADSL1", "down", (4, 1)), ("cable", "up", (4, 1))):
        rate, share = call_share(link, d, *mix)
        assert share == rate, (link, d, mix)


def test_fit_compares_just_above_with_just_below():
    import pandas as pd

    from collateral.reproduce.mmsys2011.fig4b import fit

    rows = []
    for k, (below, above) in {7: (1.0, 3.0), 14: (2.0, 1.0), 20: (0.5, 0.6)}.items():
        for off, v in ((-750, 9.0), (-90, below), (0, above), (90, above)):
            rows += [("cubic", k, off, r, v) for r in (0, 1)]
    df = pd.DataFrame(rows, columns=["cc", "k", "off", "rep", "loss"])
    df["bytes"] = df.k * 1500 + df.off
    f = fit(df)
    assert (f["pairs"], f["higher"], f["equal"], f["above"], f["below"]) == (3, 2, 0, 0, -90)
    assert f["ratio"] == pytest.approx(1.2)  # ratios 3, 0.5, 1.2


def test_console_lines_are_short():
    from collateral.reproduce.claims import CONSOLE_WIDTH, console_line

    c = Claim("x" * 300, "paper", "ours", True, "tol", "why")
    assert len(console_line(c)) == CONSOLE_WIDTH and console_line(c).endswith("…")
    c = Claim("text", "paper", "ours", False, "tol", "a long why " * 50)
    assert console_line(c) == "text: ours (expected: paper)"
    # One that differs is printed whole: what was expected is at its end.
    c = Claim("x" * 300, "paper", "ours", False, "tol", "why")
    assert console_line(c) == "x" * 300 + ": ours (expected: paper)"


def test_fig5_epochs_claim_ranks_loss_against_events():
    from collateral.reproduce.mmsys2011.loss import _events_loss_rho

    # Hand-computed Spearman: ranks equal -> 1, reversed -> -1; ties share ranks:
    # events (1, 1, 2, 3) rank (1.5, 1.5, 3, 4), loss (1, 2, 3, 4): Pearson of the ranks
    # = 4.5 / sqrt(4.5 * 5) = 0.9487.
    assert _events_loss_rho(np.array([1, 2, 3, 4]), np.array([0.1, 0.2, 0.3, 0.4])) == 1.0
    assert _events_loss_rho(np.array([1, 2, 3, 4]), np.array([0.4, 0.3, 0.2, 0.1])) == -1.0
    rho = _events_loss_rho(np.array([1, 1, 2, 3]), np.array([1.0, 2.0, 3.0, 4.0]))
    assert rho == pytest.approx(4.5 / np.sqrt(4.5 * 5))
    # Every trial with the same count: no ranking to speak of.
    assert np.isnan(_events_loss_rho(np.array([42, 42, 42]), np.array([1.0, 2.0, 3.0])))
