"""The advisor: candidates, the ranking rule, and its verdicts on links where the answer
is known (ADSL1 with an upload: no plain buffer keeps a call; 50/10 Mbit/s with four
CUBIC downloads: a bloated drop-tail is never the answer)."""

import math
import subprocess
import sys

import pytest

from collateral.advise import (
    AQMS,
    Advice,
    Candidate,
    Outcome,
    advise,
    candidates,
    figure,
    plot,
    verdict,
)


def test_candidates_span_quarter_to_four_bdp_each_direction_and_the_aqms():
    # ADSL1 at 100 ms: BDP = 1.5e6 · 0.1 / 8 / 1500 = 12.5 packets down,
    # 256e3 · 0.1 / 8 / 1500 = 2.13 up (at least 2 packets each).
    c = candidates(1_500_000, 100_000_000, ("cubic",))
    assert [x.queue["limit"] for x in c[:5]] == ["3p", "6p", "12p", "25p", "50p"]
    aqms = [x.queue_label for x in c[5:]]
    assert aqms == [name for name, *_ in AQMS] + ["DualPI2, L4S flows"]
    both = candidates(1_500_000, 100_000_000, ("cubic",), up_bps=256_000)
    dt = [x for x in both if x.family == "drop-tail"]
    assert [(x.queue["limit"], x.up_queue["limit"]) for x in dt] == [
        ("3p", "2p"), ("6p", "2p"), ("12p", "2p"), ("25p", "4p"), ("50p", "9p"),
    ]  # fmt: skip
    # Uploads only: the upstream's limits alone decide, each tried once.
    up = [x for x in candidates(None, 100_000_000, ("cubic",), 256_000) if x.family == "drop-tail"]
    assert [x.queue_label for x in up] == [
        "drop-tail 2p up (0.25 BDP)", "drop-tail 4p up (2 BDP)", "drop-tail 9p up (4 BDP)",
    ]  # fmt: skip
    # The L4S candidate runs Prague with ECT(1); CAKE diffserv4 marks the call EF.
    l4s = both[-1]
    assert (l4s.cc, l4s.ecn, l4s.queue["kind"]) == ("prague", "l4s", "dualpi2")
    assert next(x for x in both if "diffserv4" in x.queue_label).dscp == 46


def _o(label, late, delay, util, lo_hi=None, target=0.01, family="aqm"):
    lo, hi = lo_hi or (util, util)
    return Outcome(
        Candidate(label, {}, "cubic", family=family),
        late,
        {"down": delay},
        {"down": util * 1e6},
        util,
        late <= target,
        (late, late),
        (delay, delay),
        (lo, hi),
        margin=100 * (target - late),
    )


def test_ranking_meets_then_goodput_within_tolerance_then_least_delay():
    adv = Advice("voip", 0.01, "150ms", "setup", 3, tolerance=0.02)
    bloat = _o("bloat", 0.0, 0.040, 0.990, family="drop-tail")  # the most goodput, 40 ms
    fq = _o("fq", 0.0, 0.0003, 0.987)  # 0.3 % less goodput, 0.3 ms: within 2 %
    slow = _o("slow", 0.0, 0.0001, 0.90)  # the least delay but 9 % less goodput
    miss_a = _o("missA", 0.05, 0.200, 0.995)  # misses by more
    miss_b = _o("missB", 0.02, 0.300, 0.995)
    adv.outcomes = [bloat, fq, slow, miss_a, miss_b]
    assert adv.leaders() == [bloat, fq]
    assert [o.candidate.queue_label for o in adv.ranked] == [
        "fq",
        "bloat",
        "slow",
        "missB",
        "missA",
    ]
    assert adv.best is fq and adv.ties() == [] and adv.runner_up() is bloat
    lines = verdict(adv)
    assert lines[0].startswith("recommended: fq, cubic") and "0.3 ms" in lines[0]
    assert any(
        "best drop-tail buffer, bloat, cubic: p95 added delay 40.0 ms, goodput +0.3 %" in x
        for x in lines
    )
    # With no tolerance the goodput decides, and the bloated queue wins.
    adv.tolerance = 0.0
    assert adv.best is bloat
    # Ranges that overlap the best's goodput are leaders whatever the tolerance.
    fq.utilisation_range = (0.980, 0.991)
    assert adv.best is fq


def test_no_candidate_meeting_ranks_by_how_much_they_miss():
    adv = Advice("fps", 0.01, "100ms", "setup", 1)
    adv.outcomes = [_o("a", 0.30, 0.1, 0.9), _o("b", 0.05, 0.5, 0.5, family="drop-tail")]
    assert adv.best.candidate.queue_label == "b" and not adv.best.meets
    assert "none meets the target" in verdict(adv)[0]


def test_upstream_question_on_adsl1_has_no_plain_buffer_answer():
    # One upload and one download on ADSL1: every drop-tail buffer either drops the
    # call's packets (2 packets at 256 kbit/s) or delays them past G.114's 150 ms.
    adv = advise(link="adsl1", app="voip", uploads=1, ccs=("cubic",), trials=1, duration="30s")
    assert adv.rates == {"down": 1_500_000, "up": 256_000}
    by = {o.candidate.queue_label: o for o in adv.outcomes}
    assert not by["drop-tail 50p/9p (4 BDP)"].meets and by["drop-tail 50p/9p (4 BDP)"].late > 0.5
    assert not any(o.meets for o in adv.outcomes if o.candidate.family == "drop-tail")
    assert adv.best.meets and adv.best.candidate.family == "aqm"
    assert set(adv.best.delay_s) == {"down", "up"} and set(adv.best.goodput_bps) == {"down", "up"}
    assert any(x.startswith("  no drop-tail buffer meets the target") for x in verdict(adv))


def test_fifty_ten_with_four_cubic_downloads_is_not_a_bloated_drop_tail():
    adv = advise(
        link=None, down="50Mbit", up="10Mbit", rtt="30ms", tcp_flows=4, ccs=("cubic",),
        trials=1, duration="20s", current="256kB",
    )  # fmt: skip
    best = adv.best
    assert best.meets and best.candidate.family == "aqm"
    by = {o.candidate.queue_label: o for o in adv.outcomes}
    mine = by["current 256kB drop-tail"]
    assert mine.candidate.family == "current" and mine.delay > 0.020  # 256 kB ≈ 41 ms at 50 Mbit/s
    assert best.delay < 0.002 and best.utilisation >= (1 - adv.tolerance) * mine.utilisation


def test_a_current_queue_of_each_direction_is_the_one_each_direction_runs():
    from collateral.advise.current import current_queue

    label, down, up = current_queue("496kB/100kB")
    assert label == "496kB/100kB drop-tail"
    assert (down["limit"], up["limit"]) == ("496kB", "100kB")
    label, down, up = current_queue("500kB/fq_codel")
    assert label == "500kB drop-tail down / fq_codel up" and up["kind"] == "fq_codel"
    assert current_queue("256kB")[2] is None  # the same both ways
    adv = advise(link="adsl1", ccs=("cubic",), trials=1, duration="10s", uploads=1,
                 current="100kB/3kB")  # fmt: skip
    mine = next(o for o in adv.outcomes if o.candidate.family == "current")
    assert mine.candidate.queues()["up"]["limit"] == "3kB"
    # A 3 kB upstream holds two full packets: the upload's queue stays short.
    assert mine.delay_s["up"] < 0.2, mine.delay_s


def test_budgets_targets_and_bad_requests():
    adv = advise(link="adsl1", app="quake3", ccs=("cubic",), trials=1, duration="10s")
    assert adv.app == "fps" and adv.budget == "100ms" and adv.outcomes
    voip = advise(link="adsl1", ccs=("cubic",), trials=1, duration="8s", budget="100ms")
    assert voip.app == "voip" and voip.budget == "100ms"
    for kw, name in (
        ({"app": "chess"}, "app"),
        ({"target": 4.0}, "target"),
        ({"tolerance": 1.0}, "tolerance"),
        ({"current": "bogus"}, "current"),
        ({"current": "100kB/"}, "current"),
        ({"current": "100kB/fq-codle"}, "current"),
        ({"tcp_flows": 0}, "tcp_flows"),
        ({"ccs": ("dctcp",), "trials": 1, "duration": "5s"}, "ccs"),  # not "link"
    ):
        with pytest.raises(ValueError) as e:
            advise(**kw)
        assert e.value.param == name, (kw, e.value)
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "advise", "--current", "cake:diffserv=nine"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--current: " in p.stderr


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
    kw = dict(link="adsl1", app="fps", ccs=("cubic",), trials=1, duration="20s")
    long, short = advise(**kw, budget="2s"), advise(**kw)
    by = {o.candidate.label: o.late for o in short.outcomes}
    # Only losses are late with a 2 s budget; a 4-BDP queue (400 ms) is late at 100 ms.
    assert all(o.late <= by[o.candidate.label] for o in long.outcomes)
    full = "drop-tail 50p (4 BDP), cubic"
    assert next(o.late for o in long.outcomes if o.candidate.label == full) < 0.05 < by[full]


def test_advice_figure_has_a_row_per_candidate_with_zero_based_goodput(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    adv = advise(link="adsl1", app="fps", ccs=("cubic",), trials=2, duration="10s")
    assert [p.name for p in plot(adv, tmp_path / "a.png")] == ["a.png"]
    fig = figure(adv)
    late_ax, delay_ax, util_ax = fig.axes
    labels = [t.get_text() for t in late_ax.get_yticklabels()]
    assert len(labels) == len(adv.outcomes)
    # The top row is the recommendation, named in full (no initials to decode).
    top = max(range(len(labels)), key=lambda i: late_ax.get_yticks()[i])
    assert labels[top] == "★ " + adv.best.candidate.label
    assert util_ax.get_xlim() == (0, 100) and late_ax.get_xlim()[0] == 0
    assert delay_ax.get_xscale() == "log"
    assert not math.isnan(adv.best.utilisation)


def test_web_users_alone_are_a_load_ranked_by_delay():
    adv = advise(link="adsl1", tcp_flows=0, web_users=30, ccs=("cubic",), trials=1, duration="10s")
    assert adv.rates == {} and "30 web users" in adv.setup
    assert all(o.utilisation == 0 for o in adv.outcomes)
    lead = [o for o in adv.ranked if o.meets]
    assert [o.delay for o in lead] == sorted(o.delay for o in lead)
    assert not any("nan" in line for line in verdict(adv))


def test_cake_shapes_each_direction_at_its_rate():
    # A gateway runs CAKE as a shaper at the line's rate: unshaped, its 5 ms target is
    # below one packet's 47 ms at 256 kbit/s and COBALT drops the call's packets too.
    c = candidates(1_500_000, 100_000_000, ("cubic",), 256_000, shaper_bps=(1_500_000, 256_000))
    cake = [x for x in c if x.queue.get("kind") == "cake"]
    assert len(cake) == 2
    for x in cake:
        assert (x.queue["bandwidth"], x.up_queue["bandwidth"]) == ("1500000bit", "256000bit")


def test_goals_parse_and_compare_medians_of_the_cores_scores():
    from collateral.advise.goals import parse_goal

    g = parse_goal("rpm>=800")
    assert (g.score, g.at_least, g.value, str(g)) == ("rpm", True, 800.0, "rpm>=800")
    assert g.met([700.0, 900.0, 850.0]) and not g.met([700.0, 900.0, 750.0])
    assert not g.met([900.0, math.nan])  # a trial without the score does not count
    grade = parse_goal("grade ≥ A")
    assert grade.measure({"bufferbloat_grade": "A+"}) == 5.0
    assert grade.met([grade.measure({"bufferbloat_grade": x}) for x in ("A", "A+", "B")])
    assert not grade.met([grade.measure({"bufferbloat_grade": x}) for x in ("A", "B", "B")])
    assert parse_goal("qoo_voip<=50").met([50.0])
    for bad in ("rpm>800", "speed>=3", "grade>=E", "rpm>=fast", "rpm>=inf"):
        with pytest.raises(ValueError):
            parse_goal(bad)
    # A QoO beyond 100 % was accepted, a goal never (or always) met.
    with pytest.raises(ValueError, match=r"120 is outside qoo_voip's range, 0 to 100"):
        parse_goal("qoo_voip>=120")


def test_a_workload_with_a_grade_goal_rules_out_the_bloated_buffers():
    # RRUL on ADSL1 (the call's own target waived): a 4-BDP drop-tail holds ~400 ms
    # upstream (9 packets of 1500 B at 256 kbit/s) and ~400 ms downstream (50 at
    # 1.5 Mbit/s), far past grade B's 60 ms of increase; 30 s leaves loaded probes
    # after the load saturates.
    adv = advise(link="adsl1", workload="rrul", goals=["grade>=B"], ccs=("cubic",),
                 trials=1, duration="30s", target=1.0)  # fmt: skip
    assert "workload rrul" in adv.setup and "goals grade>=B" in adv.setup
    by = {o.candidate.queue_label: o for o in adv.outcomes}
    big = by["drop-tail 50p/9p (4 BDP)"]
    assert not big.meets and big.scores["grade>=B"] < 3  # worse than B
    assert adv.best.meets and adv.best.scores["grade>=B"] >= 3
    assert set(adv.rates) == {"down", "up"}
    # The table shows the score each goal judges, per candidate, as its letter.
    from rich.console import Console

    from collateral.advise.goals import GRADES
    from collateral.advise.text import table

    con = Console(width=250, record=True)
    con.print(table(adv))
    text = con.export_text()
    assert "grade>=B" in text.splitlines()[3]  # the header row
    big_row = next(line for line in text.splitlines() if "drop-tail 50p/9p" in line)
    assert f" {GRADES[int(big.scores['grade>=B'])]} " in big_row
    for kw, name in (
        ({"goals": ["rpm>=800"]}, "goals"),
        ({"workload": "rrul", "goals": ["rpm>>1"]}, "goals"),
        ({"workload": "speedtest"}, "workload"),
    ):
        with pytest.raises(ValueError) as e:
            advise(**kw)
        assert e.value.param == name, (kw, e.value)
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "advise", "--goal", "rpm>=800"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--goal: " in p.stderr


def test_a_video_call_is_judged_by_its_frames_against_the_playout_budget():
    """Issue 31: "keep a 2 Mbit/s call's frame delay under 150 ms". ADSL2 (24 Mbit/s),
    100 ms RTT, one CUBIC download: the 4-BDP drop-tail buffer holds 800 packets =
    1.2 MB = 400 ms at 24 Mbit/s, which CUBIC keeps well over a third full, so with the
    50 ms one way every frame (capture to complete arrival) passes 150 ms; under
    FQ-CoDel the call has its own queue: 50 ms + a 2 Mbit/s frame (8.3 kB, 2.8 ms at
    24 Mbit/s) + CoDel's 5 ms target is far inside it."""
    adv = advise(
        link="adsl2", video="gcc", video_max_rate="2Mbit", ccs=("cubic",), trials=1,
        duration="20s", web_users=0,
    )  # fmt: skip
    assert adv.app == "video" and adv.budget == "150ms"
    by = {o.candidate.queue_label: o for o in adv.outcomes}
    big = by["drop-tail 800p (4 BDP)"]
    assert big.late > 0.9 and not big.meets and big.delay > 0.15
    fq = by["FQ-CoDel"]
    assert fq.meets and 0.05 < fq.delay < 0.1
    # The call starts at its top rate and keeps it beside FQ-CoDel's fair share
    # (RTP/IP headers on top of the encoder's 2 Mbit/s).
    assert 1.8e6 < fq.call_bps < 2.3e6 and math.isnan(fq.mos)
    assert any("p95 frame delay" in line for line in verdict(adv))


def test_video_options_are_checked_where_they_enter():
    with pytest.raises(ValueError, match="voip") as e:
        advise(app="voip", video="gcc")
    assert e.value.param == "video"
    with pytest.raises(ValueError) as e:
        advise(video="bbr")
    assert e.value.param == "video" and "gcc" in str(e.value)
    with pytest.raises(ValueError) as e:
        advise(video="nada", video_max_rate="fast")
    assert e.value.param == "video_max_rate"
    r = subprocess.run(
        [sys.executable, "-m", "collateral", "advise", "--video", "gcc", "--app", "fps"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert r.stderr.startswith("collateral: error: --video:")


def test_a_lines_framing_reaches_the_links_and_cakes_shaper():
    """ATM cells after 10 bytes: a 1500-byte packet takes ceil(1510 / 48) = 32 cells =
    1696 bytes on the line, so a 1.5 Mbit/s line carries 1500/1696 = 88 % of it in IP
    bytes (TCP's own headers aside) where plain framing carries all of it."""
    kw = dict(link=None, down="1.5Mbit", up="256kbit", ccs=("cubic",), trials=1, duration="20s")
    atm = advise(framing={"overhead": "10B", "atm": True}, **kw)
    plain = advise(**kw)
    cake = next(o for o in atm.outcomes if o.candidate.queue_label == "CAKE besteffort")
    assert cake.candidate.queue["overhead"] == 10 and cake.candidate.queue["atm"] is True
    assert (
        "overhead"
        not in next(
            o for o in plain.outcomes if o.candidate.queue_label == "CAKE besteffort"
        ).candidate.queue
    )
    fq = {a.candidate.label: a for a in atm.outcomes}["FQ-CoDel, cubic"]
    fq0 = {a.candidate.label: a for a in plain.outcomes}["FQ-CoDel, cubic"]
    ratio = fq.goodput_bps["down"] / fq0.goodput_bps["down"]
    assert abs(ratio - 1500 / 1696) < 0.03
    with pytest.raises(ValueError) as e:
        advise(link="adsl1", framing={"overhead": "10B", "atm": True})
    assert e.value.param == "framing"


def test_a_delivery_trace_is_a_link_to_advise_on(tmp_path):
    """A cellular user's trace (Mahimahi's format: a line per 1500-byte opportunity, in
    ms) is the downstream under every candidate: its mean is the rate the candidates are
    sized by, and the link line names it."""
    trace = tmp_path / "lte.trace"
    trace.write_text("".join(f"{ms}\n" for ms in range(1, 1001)))  # one opportunity a ms
    adv = advise(
        link=None, down_trace=str(trace), up="2Mbit", rtt="40ms", ccs=("cubic",),
        trials=1, duration="10s",
    )  # fmt: skip
    assert "down trace lte.trace · RTT 40ms" in adv.setup
    assert adv.rates == {"down": 1504 * 8 * 1000}  # Mahimahi's 1504-byte opportunities


def test_a_docsis_upstream_and_a_satellite_link_are_links_to_advise_on():
    """``up_docsis`` puts the upstream's request-grant cycle under every candidate (the
    call's upstream packets wait for grants: FQ-CoDel's p95 there differs from the plain
    upstream's); ``leo`` sets both directions from the preset, its rates the middle of
    the ranges. Each is named when wrong (the CLI refused both options)."""
    kw = dict(
        link=None, down="50Mbit", up="10Mbit", rtt="20ms", uploads=1, tcp_flows=0,
        ccs=("cubic",), trials=1, duration="10s",
    )  # fmt: skip
    cable = advise(up_docsis="on", **kw)
    plain = advise(**kw)
    assert "up docsis · RTT 20ms" in cable.setup and "docsis" not in plain.setup
    fq = {o.candidate.label: o for o in cable.outcomes}["FQ-CoDel, cubic"]
    fq0 = {o.candidate.label: o for o in plain.outcomes}["FQ-CoDel, cubic"]
    assert fq.delay_s["up"] != fq0.delay_s["up"]
    # The modem's DualPI2 is LLD's (bytes at the rate, not sojourn, which counts the
    # grant wait and marks every L packet): Prague keeps most of the 10 Mbit/s.
    lld = {o.candidate.label: o for o in cable.outcomes}["DualPI2 (LLD up), L4S flows, prague"]
    assert lld.candidate.queues()["up"]["estimate"] == "virtual"
    assert lld.goodput_bps["up"] > 0.8 * 10e6
    sat = advise(leo="starlink", rtt="30ms", ccs=("cubic",), trials=1, duration="10s")
    assert "down leo · up leo · RTT 30ms" in sat.setup and sat.rates == {"down": 125_000_000}
    for bad, param in (
        (dict(leo="starlink", link="adsl1"), "leo"),
        (dict(link=None, down="50Mbit", up="10Mbit", up_docsis="mapint=2ms"), "up_docsis"),
        (dict(link=None, down="50Mbit", up="10Mbit", up_docsis={"map_interval": "500ms"}),
         "up_docsis"),
        (dict(link=None, down="50Mbit", up="10Mbit", down_trace="x.trace"), "down_trace"),
        (dict(link=None, up="10Mbit", down_trace="no-such.trace"), "down_trace"),
    ):  # fmt: skip
        with pytest.raises(ValueError) as e:
            advise(**bad)
        assert e.value.param == param, e.value


def test_the_python_advisor_runs_the_rates_it_is_given():
    """``advise(down=..., up=...)`` runs those rates (the default ``link="adsl1"`` took
    precedence and the rates were silently dropped); a preset beside rates is refused."""
    adv = advise(down="50Mbit", up="10Mbit", ccs=("cubic",), trials=1, duration="5s")
    assert adv.setup.startswith("link 50Mbit/10Mbit · RTT") and adv.rates == {"down": 50_000_000}
    assert advise(ccs=("cubic",), trials=1, duration="5s").setup.startswith("link 1.5Mbit/256kbit")
    with pytest.raises(ValueError) as e:
        advise(link="adsl2", down="50Mbit", up="10Mbit")
    assert e.value.param == "link"


def test_a_budget_given_is_not_credited_to_the_standard_and_a_bare_one_is_warned():
    """``budget="100ms"`` is the user's, not ITU-T G.114's (150 ms): the caption says so;
    ``budget=150`` (150 s) warns, as simulate(rtt=100) does."""
    kw = dict(ccs=("cubic",), trials=1, duration="5s")
    assert advise(**kw).budget_source == "ITU-T G.114"
    assert advise(budget="100ms", **kw).budget_source == "the budget given"
    with pytest.warns(UserWarning, match="budget=150: read as 150 s; did you mean 150ms"):
        advise(budget=150, **kw)


def test_a_games_upstream_is_judged_too_and_a_scalable_cc_is_named():
    """A game client sends as well as receives: with an upload on ADSL1 its upstream
    packets wait behind 1500-byte ones (47 ms each at 256 kbit/s), which the downstream
    alone never showed; --cc prague is refused with what to do (the L4S candidate)."""
    adv = advise(app="fps", uploads=1, ccs=("cubic",), trials=1, duration="10s")
    assert all("up" in o.delay_s for o in adv.outcomes)
    big = {o.candidate.label: o for o in adv.outcomes}["drop-tail 12p/2p (1 BDP), cubic"]
    assert big.late > 0.01
    with pytest.raises(ValueError) as e:
        advise(ccs=("prague",))
    assert e.value.param == "ccs" and "DualPI2, L4S flows" in str(e.value)
