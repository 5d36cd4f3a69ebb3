"""The advisor: candidates, the recommendation rule, and its verdicts on a link where
the answer is known (ADSL1, 100 ms: a 4-BDP drop-tail queue under CUBIC ruins a call and
a shooter; the AQMs do not)."""

import subprocess
import sys

import pytest

from collateral.advise import (
    Advice,
    Candidate,
    Outcome,
    advise,
    candidates,
    figure,
    plot,
    verdict,
)


def test_candidates_span_quarter_to_four_bdp_and_the_aqms():
    # ADSL1 at 100 ms: BDP = 1.5e6 · 0.1 / 8 / 1500 = 12.5 packets.
    c = candidates(1_500_000, 100_000_000, ("cubic",))
    assert [x.queue.get("limit") for x in c[:5]] == ["3p", "6p", "12p", "25p", "50p"]
    assert [x.queue_label for x in c[5:]] == ["CoDel", "FQ-CoDel", "PIE"]
    # Tiny BDPs collapse to distinct limits of at least 2 packets.
    small = candidates(256_000, 10_000_000, ("newreno",))
    limits = [x.queue["limit"] for x in small if "limit" in x.queue and "kind" not in x.queue]
    assert limits == sorted(set(limits), key=limits.index) and limits[0] == "2p"


def test_voip_advice_on_adsl1():
    adv = advise(link="adsl1", app="voip", trials=1, duration="40s")
    by = {o.candidate.label: o for o in adv.outcomes}
    bloat = by["drop-tail 50p (4 BDP), cubic"]
    assert not bloat.meets and bloat.quality < 4.0
    for aqm in ("CoDel", "FQ-CoDel", "PIE"):
        assert by[f"{aqm}, cubic"].meets, by[f"{aqm}, cubic"]
    best = adv.best
    assert best.meets
    assert best.goodput_bps == max(o.goodput_bps for o in adv.outcomes if o.meets)


def test_shooter_advice_counts_packets_over_100ms():
    adv = advise(link="adsl1", app="fps", ccs=("cubic",), trials=1, duration="40s")
    by = {o.candidate.queue_label: o for o in adv.outcomes}
    assert adv.metric == "over_budget" and adv.budget == "100ms"
    # 50 packets of queue at 1.5 Mbit/s is 400 ms: most game packets arrive late.
    assert by["drop-tail 50p (4 BDP)"].quality > 0.5
    assert by["FQ-CoDel"].quality < 0.01 and by["FQ-CoDel"].meets
    assert adv.best.meets


def test_bad_requests_are_refused():
    with pytest.raises(ValueError, match="app"):
        advise(app="chess")
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "advise", "--down", "fast", "--up", "1Mbit"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "error: --down: " in p.stderr, p.stderr


def test_simulates_app_names_and_a_short_duration_are_accepted():
    # g711/quake3/wow are simulate's names for voip/fps/mmo; a 10 s trial gets a 2.5 s
    # warm-up instead of failing on the fixed 10 s one.
    adv = advise(link="adsl1", app="quake3", ccs=("cubic",), trials=1, duration="10s")
    assert adv.app == "fps" and adv.budget == "100ms" and adv.outcomes
    assert advise(link="adsl1", app="g711", ccs=("cubic",), trials=1, duration="8s").app == "voip"


def _outcome(label, quality, q_range, goodput, g_range, target=4.0):
    return Outcome(
        Candidate(label, {}, "cubic"),
        quality,
        goodput,
        quality >= target,
        q_range,
        g_range,
        quality - target,
    )


def test_goodput_within_the_spread_is_a_tie_won_by_the_margin():
    adv = Advice("voip", 4.0, "MOS", "setup", 3)
    # A's goodput leads by noise (ranges overlap B's) with a thin margin; C is clearly
    # slower; D misses the target with the most goodput.
    a = _outcome("A", 4.05, (3.98, 4.1), 1.3770e6, (1.3760e6, 1.3790e6))
    b = _outcome("B", 4.30, (4.28, 4.32), 1.3765e6, (1.3750e6, 1.3775e6))
    c = _outcome("C", 4.38, (4.37, 4.39), 1.20e6, (1.19e6, 1.21e6))
    d = _outcome("D", 3.10, (3.0, 3.2), 1.43e6, (1.42e6, 1.44e6))
    adv.outcomes = [a, b, c, d]
    assert adv.best is b  # the tie goes to the larger margin
    assert adv.ties() == [a]
    assert [o.candidate.queue_label for o in adv.ranked] == ["B", "A", "C", "D"]
    lines = verdict(adv)
    assert "B, cubic" in lines[0] and "+0.30 MOS" in lines[0]
    assert any("as good on this evidence" in x and "A, cubic" in x for x in lines)
    assert any(x.strip().startswith("next option: C, cubic") for x in lines)


def test_a_recommendation_whose_worst_trial_misses_says_so():
    adv = Advice("voip", 4.0, "MOS", "setup", 3)
    adv.outcomes = [_outcome("A", 4.05, (3.98, 4.1), 1.0e6, (1.0e6, 1.0e6))]
    assert any("worst trial misses the target (3.98)" in x for x in verdict(adv))


def test_a_game_budget_is_the_share_over_it_one_way_with_base_delay():
    import numpy as np

    import collateral
    from collateral.spec import build_scenario

    sc = build_scenario(link="adsl1", duration="20s", app="quake3", cbr="down")
    sc = sc.model_copy(update={"cbr": [sc.cbr[0].model_copy(update={"budget": 130_000_000})]})
    r = collateral.simulate(sc)
    df = r.to_pandas("cbr")
    owd = df.owd_s[(df.sent_s >= r.warmup_s) & (df.fate != "in_flight")].to_numpy()
    late = np.sum(np.isnan(owd) | (owd > 0.130))  # lost ones count as late
    assert r.cbr[0]["over_budget"] == pytest.approx(late / len(owd))
    assert 0 < r.cbr[0]["over_budget"] < r.cbr[0]["over_100ms"]
    kw = dict(link="adsl1", app="fps", ccs=("cubic",), trials=1, duration="20s")
    long, short = advise(**kw, budget="2s"), advise(**kw)
    assert long.budget == "2s" and short.budget == "100ms"
    by = {o.candidate.label: o.quality for o in short.outcomes}
    # Only losses are late with a 2 s budget; a 4-BDP queue (400 ms) is late at 100 ms.
    assert all(o.quality <= by[o.candidate.label] for o in long.outcomes)
    full = "drop-tail 50p (4 BDP), cubic"
    assert next(o.quality for o in long.outcomes if o.candidate.label == full) < 0.05 < by[full]
    with pytest.raises(ValueError, match="MOS"):
        advise(app="voip", budget="100ms")


def test_advice_plot_labels_do_not_overlap(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    adv = advise(link="adsl1", app="fps", trials=1, duration="20s")
    paths = plot(adv, tmp_path / "a.png")
    assert [p.name for p in paths] == ["a.png"]
    fig = figure(adv)
    fig.canvas.draw()
    ax = fig.axes[0]
    boxes = [t.get_window_extent() for t in ax.texts]
    assert len(boxes) >= 5
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            assert not boxes[i].overlaps(boxes[j]), (ax.texts[i].get_text(), ax.texts[j].get_text())
    # A share late is never negative: the shaded target starts at 0, the axis just below.
    lo, hi = ax.get_xlim()
    assert -0.03 * (hi - lo) < lo <= 0
    (span,) = ax.patches
    assert span.get_x() == 0 and span.get_width() == pytest.approx(100 * adv.target)
