"""The advisor: candidates, the recommendation rule, and its verdicts on a link where
the answer is known (ADSL1, 100 ms: a 4-BDP drop-tail queue under CUBIC ruins a call and
a shooter; the AQMs do not)."""

import subprocess
import sys

import pytest

from collateral.advise import advise, candidates


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
    assert adv.metric == "over_100ms"
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
    assert adv.app == "fps" and adv.metric == "over_100ms" and adv.outcomes
    assert advise(link="adsl1", app="g711", ccs=("cubic",), trials=1, duration="8s").app == "voip"
