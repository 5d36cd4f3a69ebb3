"""Issue 28's scenario options: uploads beside downloads, the call's DSCP and ECN
marks, and --versus that varies any option while keeping the given queue limit."""

import json
import subprocess
import sys

import pytest

from collateral.spec import SpecError, build_scenario
from collateral.vocabulary import DSCP


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args], capture_output=True, text=True
    )


def test_uploads_go_up_and_downloads_down():
    sc = build_scenario(tcp_flows=2, uploads=3)
    assert [t.direction for t in sc.tcp] == ["down", "down", "up", "up", "up"]
    assert "TCP 2 down + 3 up" in sc.describe()
    assert build_scenario(tcp_flows=0, uploads=1).tcp[0].direction == "up"
    with pytest.raises(SpecError) as e:
        build_scenario(uploads=-1)
    assert e.value.param == "uploads"


def test_an_upload_fills_the_adsl1_upstream_queue():
    # 20 kB at 256 kbit/s is 625 ms of queue: with an upload the upstream call waits
    # behind it; without one it does not.
    out = _cli("simulate", "--downloads", "0", "--uploads", "1", "--duration", "20s", "--json")
    s = json.loads(out.stdout)["summary"]
    assert [t["direction"] for t in s["tcp"]] == ["up"]
    up = next(c for c in s["cbr"] if c["direction"] == "up")
    down = next(c for c in s["cbr"] if c["direction"] == "down")
    assert up["delay_p95_s"] > 0.3 and down["delay_p95_s"] < 0.01
    assert s["up_goodput_bps"] > 100_000 and s["down_goodput_bps"] == 0


@pytest.mark.parametrize(
    ("given", "tag"),
    [("EF", 46), ("ef", 46), ("CS1", 8), ("AF41", 34), ("LE", 1), (0, 0), ("63", 63)],
)
def test_the_call_is_marked_by_dscp_number_or_name(given, tag):
    sc = build_scenario(cbr_dscp=given, cbr_ecn="ect1")
    assert [(c.tag, c.ecn) for c in sc.cbr] == [(tag, "ect1")] * 2


def test_dscp_names_are_rfc_code_points():
    # RFC 2474 class selectors 8n, RFC 2597 AFxy = 8x + 2y, RFC 3246 EF = 46.
    assert [DSCP[f"CS{n}"] for n in range(8)] == [0, 8, 16, 24, 32, 40, 48, 56]
    assert (DSCP["AF11"], DSCP["AF23"], DSCP["AF43"], DSCP["EF"]) == (10, 22, 38, 46)


def test_versus_varies_congestion_control_and_ecn_with_the_queue():
    out = _cli(
        "simulate", "--duration", "8s", "--aqm", "dualpi2", "--json",
        "--versus", "cc=prague,ecn=l4s", "--versus", "cc=cubic,aqm=fq_codel:target=5ms,ecn=on",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    queues = json.loads(out.stdout)["queues"]
    assert [q["queue"] for q in queues] == [
        "dualpi2, cc=newreno, ecn=off",
        "dualpi2, cc=prague, ecn=l4s",
        "fq_codel:target=5ms,ecn=on, cc=cubic, ecn=off",
    ]
    ccs = [q["trials"][0]["summary"]["tcp"][0]["cc"] for q in queues]
    assert ccs == ["newreno", "prague", "cubic"]


def test_versus_keeps_the_given_limit_or_refuses_it():
    out = _cli("simulate", "--duration", "8s", "--queue", "60p", "--versus", "codel", "--json")
    assert out.returncode == 0, out.stderr
    codel = json.loads(out.stdout)["queues"][1]["trials"][0]["scenario"]["down"]["queue"]
    assert codel["kind"] == "codel" and codel["limit"] == 60
    bad = _cli("simulate", "--queue", "256kB", "--versus", "dualpi2")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert (
        "--versus: 'dualpi2': dualpi2's limit counts packets, --queue 256kB does not" in bad.stderr
    )


def test_start_spread_reaches_every_bulk_flow():
    assert [t.start_spread for t in build_scenario(tcp_flows=2, uploads=1).tcp] == [10**9] * 3
    sc = build_scenario(tcp_flows=2, uploads=1, start_spread="250ms")
    assert [t.start_spread for t in sc.tcp] == [250_000_000] * 3
    assert [t.start_spread for t in build_scenario(start_spread=0).tcp] == [0]
    assert "spread" not in build_scenario(start_spread=0).describe()
    out = _cli("simulate", "--start-spread", "0", "--duration", "8s", "--json")
    assert json.loads(out.stdout)["scenario"]["tcp"][0]["start_spread"] in (0, "0s", "0ns")
