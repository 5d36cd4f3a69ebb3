"""Trace-driven links (Mahimahi's packet-delivery format): the core's clock through the
Python front, the synthetic traces, and the CLI."""

import subprocess
import sys
from pathlib import Path

import pytest

from collateral import _native
from collateral.links import synthetic
from collateral.spec import Scenario, SpecError, build_scenario

TRACES = Path(__file__).resolve().parent.parent / "examples" / "traces"


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args], capture_output=True, text=True, cwd=cwd
    )


def test_one_line_one_is_12_032_mbit_of_1504_byte_opportunities():
    # A 1500-byte flood through the trace "1": one packet per opportunity (with
    # Mahimahi's 4-byte TUN header, 1504 B), one opportunity per ms: 1504 · 8 · 1000 =
    # 12 032 000 bit/s of opportunities, 12 000 000 of IP packets.
    sc = Scenario(
        down={"trace": {"ms": [1]}, "queue": {"limit": "100000p"}},
        up={"rate": "10Mbit"},
        rtt="2ms",
        duration="10s",
        warmup="1s",
        tcp=[],
        cbr=[{"direction": "down", "size": 1500, "interval": "0.5ms", "jitter": 0}],
    )
    assert sc.down.rate == 12_032_000
    q = _native.simulate_many([sc.to_native_json()], 0)[0]["summary"]["queues"]["down"]
    # Released by 10 s: the opportunities at 1 ... 9998 ms (1 ms of propagation after).
    bps = q["delivered"] * 1500 * 8 / 10
    assert bps == pytest.approx(12_000_000, rel=1e-3)
    assert q["delivered"] == 9998
    # 1501-byte packets take 1505 B each, the backlog sharing opportunities: 9998 x
    # 1504 / 1505 = 9991 (without the header, 1501 B each, it was 10 018).
    flood = {"direction": "down", "size": 1501, "interval": "0.5ms", "jitter": 0}
    one_more = Scenario(**{**sc.model_dump(), "cbr": [flood]})
    q = _native.simulate_many([one_more.to_native_json()], 0)[0]["summary"]["queues"]["down"]
    assert q["delivered"] == pytest.approx(9998 * 1504 / 1505, abs=2)


def test_a_trace_file_from_the_flat_parameters(tmp_path):
    f = tmp_path / "a.trace"
    f.write_text("0\n0\n3\n5\n")
    sc = build_scenario(down_trace=str(f), up="1Mbit")
    assert sc.down.trace.ms == [0, 0, 3, 5] and sc.down.rate == 9_625_600  # 4 · 1504 B / 5 ms
    assert "down trace a.trace" in sc.describe()
    native = sc.to_native()["down"]
    assert native["trace"] == {"ms": [0, 0, 3, 5], "once": False}
    for bad, why in (("5\n3\n", "line 2 (3) is before line 1 (5)"), ("1\n\n", "line 2: empty")):
        f.write_text(bad)
        with pytest.raises(SpecError) as e:
            build_scenario(down_trace=str(f), up="1Mbit")
        assert e.value.param == "down_trace" and why in e.value.message
    with pytest.raises(SpecError) as e:
        build_scenario(down_trace=str(f), down="1Mbit", up="1Mbit")
    assert e.value.param == "down_trace"


def test_synthetic_traces_carry_their_rate():
    # 12.032 Mbit/s is one opportunity per ms exactly: lines 1, 2, ..., 1000.
    assert synthetic.constant(12_032_000, 10**9) == list(range(1, 1001))
    # 24.064 Mbit/s: two per ms.
    assert synthetic.constant(24_064_000, 3 * 10**6) == [1, 1, 2, 2, 3, 3]
    sq = synthetic.square(24_064_000, 0, 2 * 10**6, 8 * 10**6)
    assert sq == [1, 1, 2, 2, 5, 5, 6, 6, 8]  # 2 ms high, 2 ms off; the period closes it
    _, mean = _native.delivery_trace("".join(f"{m}\n" for m in sq))
    # 8 opportunities plus the closing one over 8 ms: 9 · 1504 · 8 / 8 ms (the closing
    # line is an opportunity too; over a long trace it is negligible).
    assert mean == 13_536_000
    walk = synthetic.random_walk(10e6, 1e6, 20e6, 10**8, 10**10, seed=3)
    assert walk == synthetic.random_walk(10e6, 1e6, 20e6, 10**8, 10**10, seed=3)
    _, mean = _native.delivery_trace("".join(f"{m}\n" for m in walk))
    assert 1e6 <= mean <= 20e6
    series = synthetic.from_series([(0, 12_032_000), (0.5, 24_064_000)], 10**9)
    assert series.count(250) == 1 and series.count(750) == 2 and len(series) == 1500


def test_cli_writes_a_trace_and_simulates_on_it(tmp_path):
    out = _cli("trace", "square", "--rate", "20Mbit", "--low", "2Mbit", "--period", "1s",
               "--duration", "4s", "-o", str(tmp_path / "sq.trace"))  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "mean 11.0" in out.stdout
    run = _cli("simulate", "--down-trace", str(tmp_path / "sq.trace"), "--up", "1Mbit",
               "--duration", "10s", "--aqm", "fq_codel", "--json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    (tmp_path / "bad.trace").write_text("1\nx\n")
    bad = _cli("simulate", "--down-trace", str(tmp_path / "bad.trace"), "--up", "1Mbit")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "error: --down-trace: " in bad.stderr and 'line 2: "x"' in bad.stderr


def test_a_trace_in_one_direction_keeps_the_default_links_other_rate():
    # As with --link adsl1 given: the up direction keeps ADSL1's 256 kbit/s. The CLI
    # refused it ("--up: rate missing"); traces both ways need no preset.
    trace = str(TRACES / "12mbit.trace")
    p = _cli("simulate", "--down-trace", trace, "--duration", "8s", "--json")
    assert p.returncode == 0, p.stderr
    s = Scenario(down={"trace": {"file": trace}})
    assert (s.link, s.down.rate, s.up.rate) == ("adsl1", 12_032_000, 256_000)
    both = Scenario(down={"trace": {"file": trace}}, up={"trace": {"file": trace}})
    assert (both.link, both.up.rate) == (None, 12_032_000)
    assert build_scenario(down_trace=trace).up.rate == 256_000


def test_a_csv_series_keeps_its_last_row(tmp_path):
    # 10, 2 and 5 Mbit/s from 0, 2 and 4 s: the last rate is held for the rows' spacing
    # (to 6 s), or to --duration; it was dropped (4 s at a mean of 6.0 Mbit/s), and an
    # explicit --duration 10s was taken for the default and ignored.
    csv = tmp_path / "rates.csv"
    csv.write_text("time_s,rate_bps\n0,10e6\n2,2e6\n4,5e6\n")
    out = str(tmp_path / "s.trace")
    for extra, span, mean in (([], 6000, 34 / 6), (["--duration", "10s"], 10_000, 5.4)):
        p = _cli("trace", "series", str(csv), "-o", out, *extra)
        assert p.returncode == 0, p.stderr
        assert f"over {span} ms, mean {mean:.3f} Mbit/s" in p.stdout, p.stdout
    for rows, extra, says in (
        ("0,10e6\n", [], "--duration: missing; with one time in the series"),
        ("0,10e6\n4,5e6\n", ["--duration", "3s"], "the series' last row is at 4 s"),
    ):
        csv.write_text(rows)
        p = _cli("trace", "series", str(csv), "-o", out, *extra)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and says in p.stderr


def test_burst_loss_on_the_wire_is_gilbert_elliott():
    # Gilbert's model, p = 0.02, r = 0.5: 0.02 / 0.52 = 3.85 % of a CBR flow's packets lost
    # on the wire in bursts of 2 on average (the core's unit tests check 10^6 packets).
    sc = Scenario(
        link="adsl2", rtt="20ms", duration="200s", warmup="1s", tcp=[],
        down={"burst_loss": {"p": 0.02, "r": 0.5}},
        cbr=[{"direction": "down", "size": 100, "interval": "2ms", "jitter": 0}],
    )  # fmt: skip
    s = _native.simulate_many([sc.to_native_json()], 0)[0]["summary"]
    q = s["queues"]["down"]
    assert q["drops"] == 0 and q["wire_losses"] > 0
    share = q["wire_losses"] / q["arrivals"]
    assert abs(share / (0.02 / 0.52) - 1) < 0.05, share  # 10^5 packets: ~1.5 % std. error
    with pytest.raises(ValueError, match="p"):
        Scenario(down={"burst_loss": {"p": 0, "r": 0.5}}, link="adsl1")


def test_a_trace_too_large_for_a_link_is_refused_before_it_is_built(tmp_path):
    # 10 Tbit/s for a minute is 5e10 opportunities: it filled 24 GB before the OOM
    # killer; now the core's line limit refuses it at the first millisecond. A series
    # row at 1e300 s spun for ever; bad rows, binary files and NaN times are one line.
    out = str(tmp_path / "new" / "dir" / "x.trace")  # a missing directory is made
    p = _cli("trace", "constant", "--rate", "10Tbit", "--duration", "60s", "-o", out)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "the most a link's trace may hold" in p.stderr
    assert _cli("trace", "constant", "--rate", "1Mbit", "-o", out).returncode == 0
    csv = tmp_path / "s.csv"
    for body in ("0,1e6\n1e300,1000\n", "5,1e6\n0,2e6\n", "0,1e6\nnan,1e6\n", "0,1e6,3\n"):
        csv.write_text(body)
        p = _cli("trace", "series", str(csv), "-o", out, "--duration", "10s")
        assert p.returncode == 2 and p.stderr.count("\n") == 1, (body, p.stderr)
        assert p.stderr.startswith("collateral: error: CSV: "), p.stderr
    csv.write_text("0,1e6\n50000,1e6\n")  # held as long again: past a day
    p = _cli("trace", "series", str(csv), "-o", out)
    assert p.returncode == 2 and "ends at 100000 s, past a day; give --duration" in p.stderr
    csv.write_bytes(b"\xff\xfe\x00garbage")
    p = _cli("trace", "series", str(csv), "-o", out)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    with pytest.raises(ValueError, match="increasing order"):
        Scenario(link=None, down={"trace": {"steps": [["5s", "1Mbit"], ["0s", "2Mbit"]],
                                            "until": "10s"}}, up={"rate": "1Mbit"})  # fmt: skip


def test_trace_options_a_kind_ignores_or_a_rate_it_cannot_carry_are_said(tmp_path):
    out = str(tmp_path / "t.trace")
    # An option of another kind is refused, not ignored; a walk starts within its range.
    for args, says in (
        (["constant", "--rate", "12Mbit", "--period", "3s"], "--period: constant does not"),
        (["square", "--rate", "5Mbit", "--low", "1Mbit", "--step", "1s"], "--step: square"),
        (["walk", "--rate", "5Mbit", "--low", "6Mbit", "--high", "8Mbit"], "--rate: '5Mbit':"),
        (["square", "--rate", "2Mbit", "--low", "20Mbit"], "--low: '20Mbit': above --rate"),
    ):
        p = _cli("trace", *args, "-o", out)
        assert p.returncode == 2 and says in p.stderr, (args, p.stderr)
    # Whole 1504-byte opportunities: 12 bit/s over 10 s is one, 1.2 kbit/s; warned.
    p = _cli("trace", "constant", "--rate", "12", "-o", out)
    assert p.returncode == 0 and "carry 0.001 Mbit/s" in p.stderr, p.stderr
    assert "did you mean 12kbit?" in p.stderr
    p = _cli("trace", "constant", "--rate", "12Mbit", "-o", out)
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"trace": {"queue": True}},  # the step-by-step path
        {"down": {"trace": {"ms": [1, 2, 3, 4], "once": True}, "queue": {"kind": "fq_codel"}}},
    ],
)
def test_a_trace_that_ends_before_the_run_strands_what_is_left(extra):
    """``once = true`` and a trace of 4 ms in a 10 s run: the link carries nothing after
    its last opportunity (the core overflowed adding the path delay to NEVER)."""
    import collateral

    params = {
        "down": {"trace": {"ms": [1, 2, 3, 4], "once": True}},
        "up": {"rate": "1Mbit"},
        "cbr": [{"direction": "down"}, {"direction": "up"}],
        "tcp": [{"cc": "cubic"}],
        "duration": "10s",
        "warmup": "1s",
    }
    sc = Scenario(**{**params, **extra})
    r = collateral.simulate(sc)
    down, up = r.summary["cbr"]
    # Nothing sent after the warm-up gets through; the upstream is untouched.
    assert down["received"] == 0 and down["sent"] > 400
    assert up["received"] == up["sent"] - up["in_flight"] > 400
    assert r.summary["down_goodput_bps"] == 0
