"""The responsiveness test's ramp and probes as the core runs them (issue 29): the ramp
holds its flows once the goodput saturates, the summary records the flows per
interval, and the probe rates are checked against the draft's limits (MPS, PTC)."""

from itertools import pairwise

from collateral import simulate
from collateral.spec import Scenario
from collateral.spec.workload import WorkloadSpec


def _responsiveness(down, up, rtt, queue):
    tcp = WorkloadSpec(kind="responsiveness").flows({"cc": "cubic", "profile": "linux-6"})[0]
    sc = Scenario.model_validate(
        {
            "seed": 2029,
            "duration": "30s",
            "warmup": "10s",
            "rtt": rtt,
            "workload": {"kind": "responsiveness"},
            "tcp": tcp,
            "down": {"rate": down, "queue": queue},
            "up": {"rate": up, "queue": queue},
        }
    )
    return simulate(sc).summary


def test_the_ramp_holds_once_saturated_and_the_probes_keep_to_the_limits():
    s = _responsiveness("50Mbit", "10Mbit", "20ms", {"kind": "fq_codel"})
    per = [tuple(map(int, x.split("+"))) for x in s["ramp_flows_per_interval"].split()]
    # One interval of 1 s per entry: the 5 s of idle then 25 s of load, 1 + 24 ticks.
    assert len(per) == 25 and per[0] == (1, 1)
    k = s["ramp_saturated_interval"]
    # Before saturation one more flow each way per interval; after it, none. The
    # moving averages need MAD + MAD - 1 = 7 intervals: never before interval 6.
    assert k >= 6
    for a, b in pairwise(per):
        assert all(y - x in (0, 1) for x, y in zip(a, b, strict=True))
    assert per[k + 1] == per[-1] == (s["ramp_flows_down"], s["ramp_flows_up"])
    assert max(per[-1]) <= k + 1 < 16
    started = {d: sum(t["goodput_bps"] > 0 for t in s["tcp"] if t["direction"] == d)
               for d in ("down", "up")}  # fmt: skip
    assert (started["down"], started["up"]) == per[-1]
    # One foreign probe every 200 ms; self probes one per load flow every 200 ms.
    assert s["foreign_probes_per_s"] == 5.0 and s["foreign_probes_skipped"] == 0
    assert s["self_probes_per_s"] <= 5 * sum(per[-1]) <= 100
    assert s["probe_rate_within_limits"] == 1
    assert s["rpm"] == (s["rpm_foreign"] + s["rpm_loaded"]) / 2


def test_on_adsl1_the_probes_alone_exceed_five_percent_of_the_capacity():
    # 5 foreign probes a second at the draft's 5000 B are 200 kbit/s: 11.4 % of the
    # 1.5 + 0.256 Mbit/s line, beyond PTC (5 %) whatever the self probes add.
    s = _responsiveness("1.5Mbit", "256kbit", "50ms", {"kind": "fq_codel"})
    assert s["probe_capacity_share"] > 5 * 5000 * 8 / 1.756e6 > 0.05
    assert s["probe_rate_within_limits"] == 0


def test_a_self_probe_waits_behind_the_send_buffer():
    # The same trial with the draft's 5 ms low-water mark and with Linux's autotuned
    # buffer (about a window unsent: one more round trip): only the loaded half moves,
    # each self probe taking its RTT plus 5 ms, or twice its RTT.
    base = {"kind": "responsiveness"}
    sc = Scenario.model_validate({"duration": "20s", "workload": base, "link": "adsl2"})
    auto = sc.model_copy(
        update={"workload": sc.workload.model_copy(update={"send_buffer": "autotuned"})}
    )
    assert "send_buffer" not in sc.to_native()["workload"]
    assert sc.to_native() != auto.to_native()
    a, b = simulate(sc).summary, simulate(auto).summary
    assert (
        a["rpm_foreign"] == b["rpm_foreign"]
        and a["ramp_flows_per_interval"] == b["ramp_flows_per_interval"]
    )
    # 60000 / TM(rtt + 5) versus 60000 / TM(2 rtt): with loaded RTTs above 5 ms the
    # autotuned buffer scores lower.
    assert b["rpm_loaded"] < a["rpm_loaded"]
