"""The modern AQMs from Python: the shipped example runs, and each discipline shows
its designed effect on a VoIP call beside four bulk downloads (1000-packet buffer)."""

from pathlib import Path

import pytest

from collateral.experiment import load_experiment
from collateral.runner import run_experiment
from collateral.store import open_store

ROOT = Path(__file__).resolve().parents[1]


def test_modern_aqm_example_orders_voip_delay_by_design(tmp_path):
    exp = load_experiment(
        ROOT / "examples/modern-aqm.toml",
        [("experiment.trials", 1), ("scenario.duration", "30s")],
    )
    run_experiment(exp, tmp_path / "aqm", progress=False)
    df = open_store(tmp_path / "aqm").query(
        "SELECT tag_aqm AS aqm, cbr0_delay_median_s AS d,"
        " tcp0_goodput_bps + tcp1_goodput_bps + tcp2_goodput_bps + tcp3_goodput_bps AS g"
        " FROM summary"
    )
    d = dict(zip(df.aqm, df.d, strict=True))
    # Drop-tail: the 1000-packet buffer stays nearly full (1.2 s when full).
    assert d["drop-tail"] > 0.5
    # CoDel (5 ms target) and PIE (15 ms target) hold the standing queue near their
    # targets; FQ-CoDel's own queue for the sparse flow takes it below both.
    assert 0.002 < d["CoDel"] < 0.015
    assert 0.008 < d["PIE"] < 0.030
    assert d["FQ-CoDel"] < 0.002
    assert d["FQ-CoDel"] < d["CoDel"] < d["PIE"] < d["drop-tail"]
    # None of them gives the link away: the downloads keep over 90 % of it.
    assert (df.g > 0.9 * 10e6 * 1448 / 1500).all(), df


def test_linux6_upload_through_unshaped_cake_on_a_slow_upstream_makes_progress():
    """One Linux 6 CUBIC upload through CAKE (unshaped: COBALT's target stays 5 ms) on a
    256 kbit/s upstream. A packet there waits up to 47 ms (one 1500 B packet on the wire),
    so COBALT stays in its dropping state and drops the head whenever the flow holds two
    packets (never the last one). With RFC 6937's unconditional slow-start segment, PRR
    answered each SACK of new data with a retransmission and a new segment back to back,
    and the retransmission, ahead, was dropped every time: goodput 0 for the whole run.
    Linux ≥ 5.19 adds that segment only when snd_una moves without a new loss, so one
    segment goes per delivery.
    The ceiling is the link less headers, 256 kbit/s · 1448/1500 = 247 kbit/s (the ACKs
    travel on the other direction); 200 kbit/s leaves room for COBALT's drops."""
    import collateral
    from collateral.spec import Scenario

    cake = {"kind": "cake"}
    sc = Scenario(
        down={"rate": "1.5Mbit", "queue": cake},
        up={"rate": "256kbit", "queue": cake},
        rtt="100ms",
        duration="30s",
        warmup="5s",
        tcp=[{"cc": "cubic", "profile": "linux-6", "direction": "up"}],
        cbr=[],
    )
    t = collateral.simulate(sc).tcp[0]
    assert 200e3 < t["goodput_bps"] <= 256e3 * 1448 / 1500, t


def test_an_aqm_limit_takes_the_command_lines_units():
    """``limit = "20p"`` in a file, as ``--queue 20p`` beside ``--aqm``: 20 packets (the
    core refused the text); bytes under an FB ``limit_rule``; the other unit named."""
    from collateral.spec import Scenario

    def native(q):
        return Scenario(
            down={"rate": "10Mbit", "queue": q}, up={"rate": "1Mbit"}
        ).down.queue.to_native()

    assert native({"kind": "fq_codel", "limit": "20p"})["limit"] == 20
    assert native({"kind": "red", "limit": "60kB", "limit_rule": "fb-strict"})["limit"] == 60_000
    assert native({"kind": "dualpi2", "rate": "20Mbit"})["rate_bps"] == 20_000_000
    with pytest.raises(ValueError, match=r"this limit counts packets; give e\.g\. 1000p"):
        native({"kind": "fq_codel", "limit": "20kB"})
