"""``collateral infer --sync-rate``: the line's framing (ATM cells or not, the per-packet
overhead) from the goodput over the modem's sync rate, against values worked out by
hand: a full 1500-byte packet with TCP timestamps carries 1448 payload bytes; over ATM
with PPPoA VC-MUX's 10 bytes it fills ceil(1510 / 48) = 32 cells of 53 bytes (1696)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from collateral.inference.estimate import Framing
from collateral.inference.framing import fit, infer_with_sync, predicted_goodput
from collateral.inference.observations import Flow, Observations

S_DOWN, S_UP = 1.5e6, 256e3  # an ADSL1 line's sync rates


def test_the_goodput_a_sync_rate_leaves_by_hand():
    # ATM: 1448 / 1696 = 0.854 of the sync rate; an Ethernet-like 18 bytes: 1448 / 1518.
    assert predicted_goodput(Framing(10, True), S_DOWN, 0, 0) == pytest.approx(
        1.5e6 * 1448 / 1696, rel=1e-12
    )
    assert pytest.approx(0.8538, abs=1e-4) == 1448 / 1696
    assert predicted_goodput(Framing(18, False), S_DOWN, 0, 0) == pytest.approx(
        1.5e6 * 1448 / 1518, rel=1e-12
    )
    # 88-byte probes every 20 ms: 98 bytes in 3 cells (159 B), 63.6 kbit/s of the line.
    assert predicted_goodput(Framing(10, True), S_DOWN, 88, 0.02) == pytest.approx(
        (1.5e6 - 63_600) * 1448 / 1696, rel=1e-12
    )


def _line(framing: Framing, sync: dict[str, float]) -> Observations:
    """40 s of probes (88 B every 20 ms, 40 ms RTT plus their cells' time) and two loads,
    a download from 5 to 15 s and an upload from 20 to 30 s, each delivering exactly
    what ``framing`` leaves of its sync rate once the probes took theirs."""
    t = np.arange(0, 40, 0.02)
    probe = framing.wire(88)
    rtt = np.full(t.shape, 0.040 + sum(probe * 8 / s for s in sync.values()))
    flows = []
    for d, start in (("down", 5), ("up", 20)):
        per_s = (sync[d] - probe * 8 / 0.02) * 1448 / framing.wire(1500) / 8
        ends = np.arange(start + 1, start + 10.5, 1.0)
        flows.append(Flow(d, ends, np.ones(len(ends)), np.full(len(ends), per_s)))
    return Observations("crafted", t, rtt, 88, flows)


def test_an_adsl_line_shows_its_cells_and_the_overheads_that_fill_them():
    inf = infer_with_sync(
        _line(Framing(10, True), {"down": S_DOWN, "up": S_UP}),
        {
            "down": S_DOWN,
            "up": S_UP,
        },
    )
    assert inf.get("framing_atm").value == "atm"
    over = inf.get("framing_overhead")
    # 1500 + o fills 32 cells for o <= 36, and the 88-byte probe 3 cells for o >= 9; at
    # o = 8 (2-cell probes) the upstream would leave 21.2 kbit/s more for the flows,
    # 11 % above what they got: more than a line left idle now and then explains.
    assert (over.value, over.low, over.high) == (10.0, 9.0, 36.0)
    # With the framing, the capacities are the sync rates themselves.
    assert inf.get("capacity_down").value == pytest.approx(S_DOWN, rel=1e-9)
    assert inf.get("capacity_up").value == pytest.approx(S_UP, rel=1e-9)
    assert inf.link_framing() == {"framing": {"overhead": "10B", "atm": True}}
    assert not any(line.startswith("link framing") for line in inf.not_inferred)


def test_the_inferred_framing_goes_to_the_replay_and_to_cakes_overhead():
    from collateral.inference import replay, whatif

    sync = {"down": S_DOWN, "up": S_UP}
    obs = _line(Framing(10, True), sync)
    obs.rtt_s[(obs.probe_sent_s >= 5) & (obs.probe_sent_s < 15)] += 0.3  # a full FIFO
    obs.rtt_s[(obs.probe_sent_s >= 20) & (obs.probe_sent_s < 30)] += 1.5
    inf = infer_with_sync(obs, sync)
    sc = replay.scenario(inf, obs)
    assert (sc.down.framing.overhead, sc.down.framing.atm) == (10, True)
    cake = next(v for v in whatif.variants(inf) if v.name == "cake")
    assert cake.queues["down"]["overhead"] == 10 and cake.queues["down"]["atm"] is True


def test_a_bare_line_with_18_bytes_of_overhead():
    sync = {"down": 20e6, "up": 5e6}
    inf = infer_with_sync(_line(Framing(18, False), sync), sync)
    assert inf.get("framing_atm").value == "none"
    over = inf.get("framing_overhead")
    # 18 bytes is the exact fit; 0 bytes would leave (20e6 - 35.2k)/1500 over
    # (20e6 - 42.4k)/1518 = 1.0124 of the goodput, within the 1/0.95 a line may be
    # underused by, so the range reaches down to 0. Upwards, a count may read 20
    # packets over the line: the download's 8 settled seconds carried 13 147 packets
    # (19.04 Mbit/s of goodput x 8 s / 11 584 bit), 0.152 %, which 20 bytes stay
    # within ((20e6 - 43.2k) x 1448/1520 is 0.9986 of the goodput, 21 bytes 0.9979);
    # the upload's 3 266 packets allow 0.612 %, 26 bytes. Both directions: 0 to 20.
    assert (over.value, over.low, over.high) == (18.0, 0.0, 20.0)


def test_the_goodput_interval_sets_the_overhead_range():
    # No probes, 10 Mbit/s: g(o) = 10e6 x 1448 / (1500 + o). A goodput interval from
    # g(30) to 0.95 g(20) is explained by o = 20..30 and by no ATM framing (8.54 Mbit/s
    # at most, below g(30) = 9.47 Mbit/s).
    g = lambda o: 10e6 * 1448 / (1500 + o)  # noqa: E731
    f = fit("down", (g(25), g(30), 0.95 * g(20)), 10e6, 0, 0)
    assert sorted((x.atm, x.overhead) for x in f.fits) == [(False, o) for o in range(20, 31)]


def test_a_goodput_no_framing_explains_is_said_and_left_as_ip_rates():
    sync = {"down": 1.0e6}  # below the 1.2 Mbit/s the line delivered
    inf = infer_with_sync(_line(Framing(10, True), {"down": S_DOWN, "up": S_UP}), sync)
    line = next(x for x in inf.not_inferred if x.startswith("link framing"))
    assert "no framing (ATM or not, overhead 0-64 B) explains it" in line
    assert inf.framing is None and inf.link_framing() == {}


def test_a_sync_rate_the_probes_alone_exceed_is_said_not_a_negative_share():
    # 1 kbit/s: the probes take more than the line has; it read "-145236.1 % of what".
    sync = {"down": 1e3, "up": 1e3}
    inf = infer_with_sync(_line(Framing(10, True), {"down": S_DOWN, "up": S_UP}), sync)
    line = next(x for x in inf.not_inferred if x.startswith("link framing"))
    assert "leaves nothing for the load once the probes took theirs" in line, line
    assert inf.framing is None


def test_the_shipped_cable_run_is_bare_ip(measured_cable, cli_main):
    # The testbed's cable line had no framing: 1500 B on the line per full packet.
    rc, out, err = cli_main("infer", str(measured_cable), "--sync-rate", "50Mbit/10Mbit", "--json")
    assert rc == 0, err
    got = {e["name"]: e for e in json.loads(out)["estimates"]}
    assert got["framing_atm"]["value"] == "none"
    assert got["framing_overhead"]["low"] == 0.0


def test_sync_rate_option_errors_are_one_line(measured_cable, cli_main):
    d = str(measured_cable)
    rc, _, err = cli_main("infer", d, "--sync-rate", "1.5Mbit/256kbit/1")
    assert rc == 2 and err.endswith(
        "--sync-rate: '1.5Mbit/256kbit/1': expected DOWN or DOWN/UP, e.g. 1.5Mbit/256kbit"
    )
    rc, _, err = cli_main("infer", d, "--sync-rate", "1.5Mbit/fast")
    assert rc == 2 and "--sync-rate: up: " in err and len(err.splitlines()) == 1
    rc, _, err = cli_main("infer", d, "--sync-rate", "1.5Mbit", "--framing", "atm")
    assert rc == 2 and err.endswith("--sync-rate: infers the framing; leave out --framing")
    # Without it, what could not be inferred says the sync rate is needed.
    rc, out, _ = cli_main("infer", d, "--json")
    line = next(x for x in json.loads(out)["not_inferred"] if x.startswith("link framing"))
    assert "it needs the modem's sync rate (--sync-rate DOWN/UP" in line
