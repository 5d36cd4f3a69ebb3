"""Scenario validation: defaults, presets, the rule/limit pairing, errors naming the field."""

import json

import pytest
from pydantic import ValidationError

from collateral.spec import (
    CC_ALGORITHMS,
    CbrSpec,
    LinkSpec,
    QueueSpec,
    Scenario,
    SpecError,
    TcpSpec,
    build_scenario,
    demo_scenario,
)


def test_build_scenario_defaults_to_adsl1_with_native_contract_fields():
    native = build_scenario().to_native()
    assert native["seed"] == 1
    assert native["duration_ns"] == 60_000_000_000
    assert native["warmup_ns"] == 5_000_000_000
    assert native["rtt_ns"] == 100_000_000
    assert native["down"] == {
        "rate_bps": 1_500_000,
        "queue": {"rule": "fb-strict", "limit": 20_000, "count_in_service": False},
        "loss_rate": 0.0,
    }
    assert native["up"]["rate_bps"] == 256_000
    # Only what the user set goes across; the core's profile fills in the rest.
    assert native["tcp"] == [
        {
            "profile": "linux-6",
            "direction": "down",
            "cc": "newreno",
            "ecn": "off",
            "start_ns": 0,
            "start_spread_ns": 1_000_000_000,
            "extra_delay_ns": 0,
        }
    ]
    assert [c["direction"] for c in native["cbr"]] == ["down", "up"]
    assert native["cbr"][0] == {
        "direction": "down",
        "packet_bytes": 186,
        "interval_ns": 20_000_000,
        "jitter_ns": 1_000_000,
        "start_ns": None,
        "stop_ns": None,
        "tag": 0,
        "ecn": "not_ect",
    }
    json.dumps(native)  # plain JSON types only


def test_demo_scenario_matches_the_paper_setup():
    s = demo_scenario()
    assert (s.down.rate, s.up.rate) == (1_500_000, 256_000)
    assert s.down.queue.rule == s.up.queue.rule == "fb-strict"
    assert s.down.queue.limit.amount == 20_000
    assert s.warmup == 10_000_000_000 and s.duration == 60_000_000_000
    assert len(s.tcp) == 1 and [c.direction for c in s.cbr] == ["down", "up"]


def test_adsl2_preset_and_packet_limit_implies_ps():
    s = build_scenario(link="adsl2", queue="27p")
    assert (s.down.rate, s.up.rate) == (24_000_000, 1_000_000)
    assert s.to_native()["down"]["queue"] == {"rule": "ps", "limit": 27, "count_in_service": False}


@pytest.mark.parametrize("spelling", ["FB-loose", "fb-loose", " Fb-Loose "])
def test_rule_accepts_case_and_is_sent_as_spelled(spelling):
    assert QueueSpec(limit="40kB", rule=spelling).to_native()["rule"] == "fb-loose"


def test_rule_has_one_spelling():
    with pytest.raises(ValidationError, match="allowed: ps, fb-strict, fb-loose"):
        QueueSpec(limit="40kB", rule="fb_loose")


def test_dump_round_trips_in_human_units():
    s = build_scenario(down="2Mbit", up="512kbit", queue="27p", rtt="40ms", cbr="up")
    dumped = s.model_dump(mode="json")
    assert dumped["down"]["rate"] == "2Mbit" and dumped["down"]["queue"]["limit"] == "27p"
    assert dumped["rtt"] == "40ms"
    assert Scenario.model_validate(dumped) == s
    assert Scenario.model_validate_json(s.model_dump_json()) == s


def test_full_model_with_preset_and_custom_queue():
    s = Scenario(link="adsl1", down=LinkSpec(queue=QueueSpec(limit="10p")), tcp=[TcpSpec()])
    assert s.down.rate == 1_500_000 and s.down.queue.rule == "ps"
    assert s.up.queue.rule == "fb-strict"


@pytest.mark.parametrize(
    ("kwargs", "param", "fragment"),
    [
        ({"queue": "27p", "rule": "fb-strict"}, "rule", "in packets"),
        ({"queue": "20kB", "rule": "ps"}, "rule", "in bytes"),
        ({"rule": "red"}, "rule", "ps, fb-strict, fb-loose"),
        ({"queue": "0p"}, "queue", "must be positive"),
        ({"queue": "20kb"}, "queue", "bits or bytes"),
        ({"down": "-1Mbit", "up": "1Mbit"}, "down", "must be positive"),
        ({"down": "1Mbit"}, "up", "rate missing"),
        ({"link": "adsl1", "up": "1Mbit"}, "link", "not both"),
        ({"link": "adsl3"}, "link", "adsl1"),
        ({"warmup": "60s"}, "warmup", "shorter than the duration"),
        ({"duration": "0s", "warmup": "0s"}, "duration", "must be positive"),
        ({"rtt": "0ms"}, "rtt", "must be positive"),
        ({"cc": "vegas"}, "cc", "newreno"),
        ({"cc": "vegas", "tcp_flows": 0}, "cc", "newreno"),  # checked even when unused
        ({"jitter": "-1ms"}, "jitter", "negative"),
        ({"cbr_interval": "0ms"}, "cbr_interval", "must be positive"),
        ({"cbr_size": "20B"}, "cbr_size", "28 B"),
        ({"cbr_size": "x", "cbr": "none"}, "cbr_size", "cannot parse"),
        ({"rto_min": "0s"}, "rto_min", "must be positive"),
        ({"seed": -1}, "seed", "must be >= 0"),
        ({"cbr": "sideways"}, "cbr", "down, up, both, none"),
        ({"tcp_flows": -1}, "tcp_flows", ">= 0"),
        ({"rtt": float("nan")}, "rtt", "nan: expected a finite number"),
        ({"jitter": float("inf")}, "jitter", "inf: expected a finite number"),
    ],
)
def test_build_scenario_errors_name_the_parameter(kwargs, param, fragment):
    with pytest.raises(SpecError, match=fragment) as err:
        build_scenario(**kwargs)
    assert err.value.param == param
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (Scenario, {"link": "adsl1", "colour": "blue"}),  # extra fields are forbidden
        (Scenario, {"down": {"rate": "1Mbit"}}),  # up rate missing
        (Scenario, {"link": "adsl1", "down": {"rate": "2Mbit"}}),  # conflicts with preset
        (LinkSpec, {"rate": "1Mbit", "loss_rate": 1.0}),
        (TcpSpec, {"mss": 1500}),  # 1500 + 40 B headers > 1500 B
        (TcpSpec, {"initial_cwnd": 0}),
        (TcpSpec, {"direction": "sideways"}),
        (CbrSpec, {"interval": "0s"}),
        (QueueSpec, {"limit": "27p", "rule": "fb-loose"}),
    ],
)
def test_model_rejects(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


def test_models_are_frozen_so_shared_specs_cannot_alias():
    q = QueueSpec()
    with pytest.raises(ValidationError):
        q.count_in_service = True


def test_cc_set_lives_in_one_place():
    assert "newreno" in CC_ALGORITHMS
    with pytest.raises(ValidationError, match="supported: " + ", ".join(CC_ALGORITHMS)):
        TcpSpec(cc="vegas")


def test_profile_settings_apply_and_overrides_win():
    t = TcpSpec(profile="freebsd-7", rto_min="300ms")
    assert t.setting("delack_ns") == 100_000_000  # FreeBSD's delayed-ACK timer
    assert t.setting("rto_min_ns") == 300_000_000
    native = t.to_native()
    assert native["profile"] == "freebsd-7" and native["rto_min_ns"] == 300_000_000
    assert "delack_ns" not in native
    with pytest.raises(ValidationError, match=r"supported: rfc, linux-2\.6\.25"):
        TcpSpec(profile="windows-95")


def test_profiles_change_what_the_core_does():
    import collateral

    res = {
        p: collateral.simulate(profile=p, duration="30s", warmup="5s").tcp[0]
        for p in ("rfc", "linux-2.6.25", "freebsd-7")
    }
    # Different stacks, same seed: different retransmission behaviour.
    assert len({(r["retransmits"], r["segments_sent"]) for r in res.values()}) == 3


def test_framing_goes_to_the_core_only_when_set():
    sc = Scenario(
        link="adsl1",
        down={"framing": {"overhead": "10B", "atm": True}},
        up={"framing": {"overhead": 32, "atm": True}},
    )
    native = sc.to_native()
    assert native["down"]["framing"] == {"overhead_bytes": 10, "atm": True}
    assert native["up"]["framing"] == {"overhead_bytes": 32, "atm": True}
    assert "framing" not in build_scenario().to_native()["down"]
    with pytest.raises(ValidationError, match="framing"):
        Scenario(link="adsl1", down={"framing": {"overhead": "10B", "cells": True}})


def test_thin_stream_apps_cross_to_the_core_and_report_quality():
    from collateral import _native

    assert CbrSpec(app="wow").to_native()["app"] == "wow"
    assert "app" not in CbrSpec().to_native()
    with pytest.raises(ValidationError, match="app"):
        CbrSpec(app="doom")
    sc = Scenario(link="adsl1", duration="60s", warmup="5s", cbr=[{"app": "quake3"}])
    c = _native.simulate(sc.to_native_json())["summary"]["cbr"][0]
    # Quake 3 sends every 50 ms on average: about 1100 packets in 55 s, none late on an
    # idle link, base one-way delay 50 ms plus serialisation of ~108-byte packets.
    assert 1000 < c["sent"] < 1200
    assert c["over_100ms"] == 0.0 and c["loss_rate"] == 0.0
    assert 0.050 < c["owd_mean_s"] < 0.0515
    assert c["mos"] > 4.3


def test_the_python_api_takes_queue_beside_aqm_as_its_limit_or_refuses_it():
    """``build_scenario(aqm=..., queue=...)`` as ``--aqm ... --queue ...``: the limit in
    the discipline's unit is its hard limit; another unit, a limit given twice, and
    drop-tail's rule or count_in_service beside an AQM are refused naming the
    parameter (all four were silently ignored)."""
    assert build_scenario(aqm="dualpi2", queue="5p").down.queue.model_extra["limit"] == 5
    assert build_scenario(aqm="cake", queue="4MB").up.queue.model_extra["memory_limit"] == 4e6
    # Not given: the discipline's own default stays.
    assert "limit" not in build_scenario(aqm="dualpi2").down.queue.model_extra
    for kw, param, text in (
        ({"queue": "100kB"}, "queue", "dualpi2's limit counts packets"),
        ({"aqm": "dualpi2:limit=7", "queue": "5p"}, "queue", "also given"),
        ({"rule": "fb-loose"}, "rule", "does not apply to an AQM"),
        ({"count_in_service": True}, "count_in_service", "does not apply to an AQM"),
    ):
        with pytest.raises(SpecError) as e:
            build_scenario(**{"aqm": "dualpi2", **kw})
        assert e.value.param == param and text in e.value.message, e.value


def test_l4s_ecn_needs_a_scalable_congestion_control():
    """ECT(1) with CUBIC is refused naming ecn (it starved under DualPI2's L queue),
    as DCTCP without it is refused naming cc."""
    with pytest.raises(SpecError) as e:
        build_scenario(cc="cubic", ecn="l4s")
    assert e.value.param == "ecn" and "scalable congestion controls" in e.value.message
    with pytest.raises(SpecError) as e:
        build_scenario(cc="dctcp", ecn="classic")
    assert e.value.param == "cc"
    assert build_scenario(cc="prague", ecn="l4s").tcp[0].ecn == "l4s"


def test_an_application_needs_its_cbr_flows():
    """``app`` names what the CBR flows send: with ``cbr="none"`` there is none, and the
    game was silently left out."""
    with pytest.raises(SpecError) as e:
        build_scenario(app="quake3", cbr="none")
    assert e.value.param == "app"
    assert [c.app for c in build_scenario(app="quake3", cbr="down").cbr] == ["quake3"]


@pytest.mark.parametrize(
    ("text", "kind"), [("fq-codel", "fq_codel"), ("CAKE", "cake"), ("dualpi", "dualpi2")]
)
def test_a_misspelt_aqm_name_gets_the_near_one(text, kind):
    """Dashes, capitals and a dropped letter: "did you mean" (it said "not JSON")."""
    with pytest.raises(SpecError) as e:
        build_scenario(aqm=text)
    assert e.value.param == "aqm" and f"did you mean {kind}?" in e.value.message


def test_linux_calls_newreno_reno():
    """``reno`` (the kernel's name, which the testbed's kernel lists) is NewReno in the
    scenario, the advisor and the command line, not an unknown control."""
    from collateral.advise.run import _ccs
    from collateral.spec import TcpSpec

    assert TcpSpec(cc="Reno").cc == "newreno"
    assert _ccs(("reno", "cubic")) == ("newreno", "cubic")
    with pytest.raises(ValueError, match="unknown congestion control 'renoo'"):
        TcpSpec(cc="renoo")


def test_a_testbed_runs_set_up_names_the_kernels_tcp():
    from collateral.spec import Scenario

    sc = Scenario(link="adsl1", tcp=[{"cc": "cubic", "profile": "linux-2.6.25"}])
    assert "cubic (linux-2.6.25)" in sc.describe() and "testbed" not in sc.describe()
    line = sc.describe(testbed=True)
    assert line.startswith("testbed · link") and "cubic (kernel)" in line, line


def test_a_satellite_links_title_gives_its_rate_range():
    """--leo starlink draws each interval's rate from 50-200 Mbit/s down: the set-up line
    said "link 125Mbit/12.5Mbit", a rate it never keeps (goodput came out above it)."""
    from collateral.spec.flat import build_scenario

    line = build_scenario(leo="starlink").describe()
    assert line.startswith("link 50Mbit–200Mbit/5Mbit–20Mbit"), line


def test_a_set_ups_line_names_the_aqms_settings_and_the_framing():
    """``--aqm cake:diffserv=diffserv4`` and ``--framing atm`` were left out of the
    set-up line (a figure's title, the trial table's header)."""
    from collateral.spec.flat import build_scenario

    line = build_scenario(
        down="1.5Mbit", up="256kbit", framing="atm", aqm="cake:diffserv=diffserv4"
    ).describe()
    assert "framing ATM cells, 10 B overhead" in line and "queue CAKE (diffserv=diffserv4)" in line
    assert "framing" not in build_scenario(link="adsl1").describe()
