"""``collateral import``: real clients' files (irtt, iperf3 -J, Flent, networkQuality
-c, crusader export) into a results directory of mode "measured", scored by the core,
read by query, plot, compare and the report as a simulated one. Expectations are
computed by hand from the sample files in tests/data/measured (each file's docstring
in :func:`_samples` says what it holds); bad files end in one line naming the file."""

from __future__ import annotations

import gzip
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from collateral.measured import ImportProblem, combine, read
from collateral.measured.importer import import_measurement
from collateral.store import open_store

DATA = Path(__file__).parent / "data" / "measured"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args], capture_output=True, text=True, cwd=cwd
    )


def imported(tmp_path: Path, *files: str, like: str | None = None) -> dict:
    m = combine([read(DATA / f) for f in files])
    exp = None
    if like:
        from collateral.experiment import load_experiment

        exp = load_experiment(DATA / like)
    part, row = import_measurement(m, tmp_path / "out", exp)
    assert part is not None
    return row


def test_irtt_five_round_trips_by_hand(tmp_path: Path) -> None:
    """irtt-five.json: RTTs 20, 30, 10, lost on the way down, 50 ms; every request 5 ms
    up, the replies 15, 25, 5, -, 45 ms down. No load: all idle, median RTT of the four
    that came back (10, 20, 30, 50) = 25 ms; jitter |30-20|, |10-30|, |50-10| = 70/3 ms.
    Downstream (cbr0): 5 replies, 1 lost; base = the smallest, 5 ms; additional 10, 20,
    0, 40 ms: median 15, p95 20 + 0.85 * 20 = 37 ms (linear between ranks), loss 20 %.
    Upstream (cbr1): 5 requests, none lost, all 5 ms: additional 0."""
    row = imported(tmp_path, "irtt-five.json")
    assert row["mode"] == "measured"
    assert row["tool"] == "irtt"
    assert row["latency_idle_s"] == pytest.approx(0.025)
    assert row["jitter_idle_s"] == pytest.approx(70 / 3 / 1e3)
    assert row["latency_loaded_s"] is None  # nothing loaded the link
    assert row["cbr0_sent"] == 5 and row["cbr0_lost"] == 1
    assert row["cbr0_loss_rate"] == pytest.approx(0.2)
    assert row["cbr0_base_owd_s"] == pytest.approx(0.005)
    assert row["cbr0_delay_median_s"] == pytest.approx(0.015)
    assert row["cbr0_delay_p95_s"] == pytest.approx(0.037)
    assert row["cbr1_lost"] == 0 and row["cbr1_delay_max_s"] == pytest.approx(0.0)
    assert row["probe_bytes"] == 88  # 60 B of payload + UDP + IPv4
    # No queue counters, no packets through a bottleneck: unknown, not zero.
    assert "queue_down_drops" not in row and "packets_delivered" not in row
    st = open_store(tmp_path / "out")
    rtt = st.query("SELECT time_s, rtt_s, fate, load FROM rtt ORDER BY time_s")
    assert list(rtt["time_s"].round(3)) == [0.0, 0.02, 0.04, 0.06, 0.08]
    assert math.isnan(rtt["rtt_s"].iloc[3]) or rtt["rtt_s"].isna().iloc[3]
    # Codes as declared (collateral schema): 0 arrived, 2 lost on the way down.
    assert list(rtt["fate"]) == [0, 0, 0, 2, 0]


def test_a_file_given_twice_or_a_copy_is_refused(tmp_path: Path) -> None:
    # It was combined as a second flow: twice the goodput, stored as measured.
    f = DATA / "iperf3-loopback.json"
    copy = tmp_path / "copy.json"
    copy.write_bytes(f.read_bytes())
    for second in (f, copy):
        p = cli("import", "-o", str(tmp_path / "m"), str(f), str(second))
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "the same measurement as" in p.stderr
    assert not (tmp_path / "m" / "store.json").exists()


def test_iperf3_real_output(tmp_path: Path) -> None:
    """iperf3-loopback.json is real output (iperf3 -c 127.0.0.1 -J -t 2 -i 0.5 -b 10M):
    one stream sent by the client (upstream), 4 intervals of 655360 B over 2.000081 s:
    goodput 2621440 * 8 / 2.000081 bit/s; its congestion control from the end."""
    row = imported(tmp_path, "iperf3-loopback.json")
    assert row["tool"] == "iperf3"
    assert row["tcp0_bytes_delivered"] == 2621440
    assert row["up_goodput_bps"] == pytest.approx(2621440 * 8 / 2.000081)
    assert row["down_goodput_bps"] == 0.0
    assert row["tcp0_retransmits"] == 0
    assert row["cc"] == "bbr"
    st = open_store(tmp_path / "out")
    thr = st.query("SELECT sum(bytes) AS b, count(*) AS n FROM throughput WHERE direction = 1")
    assert int(thr["b"][0]) == 2621440 and int(thr["n"][0]) == 4


def test_an_upload_counts_what_the_receiver_got_not_what_the_client_wrote(
    tmp_path: Path,
) -> None:
    """A client's intervals count what it wrote to its socket; what was still buffered
    at the end (its bytes beyond the receiver's count) never crossed the link. Taken off
    the first intervals, where the buffer filled: 655360 - 300000 B in the first."""
    doc = json.loads((DATA / "iperf3-loopback.json").read_text())
    doc["end"]["streams"][0]["receiver"]["bytes"] = 2621440 - 300_000
    (tmp_path / "up.json").write_text(json.dumps(doc))
    m = read(tmp_path / "up.json")
    assert m.throughput[0].bytes == [355_360, 655_360, 655_360, 655_360]
    assert m.reported["sum_sent"] == doc["end"]["sum_sent"]["bits_per_second"]  # as stated


def test_a_testbed_run_of_irtt_and_iperf3_agrees_with_the_tools_own_figures(
    tmp_path: Path,
) -> None:
    """testbed-irtt.json.gz and testbed-iperf3.json are real output of one run through
    the testbed (link-20-5.toml says how): the round trips stored are irtt's, so their
    median is irtt's own ``stats.rtt.median``; the download's bytes are iperf3's, so the
    goodput is iperf3's received rate (its intervals span its whole run)."""
    irtt_doc = json.loads(gzip.decompress((DATA / "testbed-irtt.json.gz").read_bytes()))
    iperf_doc = json.loads((DATA / "testbed-iperf3.json").read_text())
    row = imported(tmp_path, "testbed-irtt.json.gz", "testbed-iperf3.json")
    assert row["tool"] == "irtt+iperf3" and row["cc"] == "cubic"
    st = open_store(tmp_path / "out")
    q = st.query("SELECT median(rtt_s) AS m, count(rtt_s) AS n FROM rtt")
    assert int(q["n"][0]) == irtt_doc["stats"]["rtt"]["n"]
    assert q["m"][0] == pytest.approx(irtt_doc["stats"]["rtt"]["median"] / 1e9, rel=1e-9)
    received = iperf_doc["end"]["sum_received"]
    assert row["down_goodput_bps"] == pytest.approx(received["bits_per_second"], rel=0.01)
    # iperf3 started 2 s after irtt (its start is stamped in whole seconds): the probes
    # before it are idle, those after loaded, and the load raised the round trip.
    assert row["latency_loaded_s"] > row["latency_idle_s"]
    # Each stream and probe direction is named the way it went (the flows view, the
    # report's labels): the download down, irtt's requests up and replies down.
    flows = st.query("SELECT name, direction FROM flows ORDER BY name")
    assert dict(zip(flows["name"], flows["direction"], strict=True)) == {
        "tcp0": "down",
        "cbr0": "down",
        "cbr1": "up",
    }, flows


def test_flent_v4_raw_values_and_metadata(tmp_path: Path) -> None:
    """rrul-v4.flent.gz: 8 Mbit/s down in the five steps to 1.0 s (200 kB each), 2 Mbit/s
    up in the five to 2.0 s; UDP pings (raw values, Unix times 50 ms after each step of
    0 to 2 s): 20, 20, 60 x4, 100, 100, lost, 100, 20 ms. Implied phases: down 0-1 s,
    up 1-2 s; the last ping (2.05 s) is after the load, idle."""
    row = imported(tmp_path, "rrul-v4.flent.gz")
    assert row["tool"] == "flent" and row["test"] == "rrul"
    assert row["cc"] == "cubic" and row["qdisc"] == "fq_codel"
    assert row["down_goodput_bps"] == pytest.approx(8e6)
    assert row["up_goodput_bps"] == pytest.approx(2e6)
    # Loaded round trips: 20, 20, 60, 60, 60, 60, 100, 100, 100: median 60 ms.
    assert row["latency_loaded_s"] == pytest.approx(0.060)
    assert row["probe_loss_rate"] == pytest.approx(1 / 10)
    # One-way delays from irtt's owd_down (3/4 of the RTT): base 15 ms.
    assert row["cbr0_base_owd_s"] == pytest.approx(0.015)


def test_flent_real_ping_test_through_the_testbed(tmp_path: Path) -> None:
    """flent-ping-testbed.flent.gz is real output (``flent ping -l 6`` through
    ``collateral shell --down 20Mbit --up 5Mbit --rtt 40ms``, irtt as its UDP pinger):
    the stored round trips of each series are the file's raw values, so their median is
    the median Flent prints of them; irtt's one-way delays become cbr0 (down) and cbr1
    (up); the egress qdisc and congestion control come from its metadata."""
    doc = json.loads(gzip.decompress((DATA / "flent-ping-testbed.flent.gz").read_bytes()))
    row = imported(tmp_path, "flent-ping-testbed.flent.gz")
    assert (row["test"], row["qdisc"], row["cc"]) == ("ping", "noqueue", "bbr")
    st = open_store(tmp_path / "out")
    for k, name in enumerate(doc["results"]):
        vals = sorted(v["val"] for v in doc["raw_values"][name] if "val" in v)
        n = len(vals)
        median = (vals[(n - 1) // 2] + vals[n // 2]) / 2
        q = st.query(f"SELECT median(rtt_s) AS m, count(rtt_s) AS n FROM rtt WHERE probe = {k}")
        assert int(q["n"][0]) == n
        assert q["m"][0] == pytest.approx(median / 1e3, rel=1e-9)
    udp = [v for v in doc["raw_values"]["Ping (ms) UDP"] if "val" in v]
    assert row["cbr0_received"] == len(udp)
    assert row["cbr0_base_owd_s"] == pytest.approx(min(v["owd_down"] for v in udp) / 1e3)
    assert row["cbr1_base_owd_s"] == pytest.approx(min(v["owd_up"] for v in udp) / 1e3)


@pytest.mark.parametrize("name", ["rrul-v1.flent.gz", "rrul-v3.flent.gz"])
def test_flent_older_formats_use_the_aligned_series(tmp_path: Path, name: str) -> None:
    """Formats 1-3: the results series (ms per step; 3's raw values are transactions/s
    and are not read); the same throughput, one ping per step at the step's time:
    loaded (0 to 2 s) 20, 60 x4, 100, 100, 100 (one step without a value): median 60."""
    row = imported(tmp_path, name)
    assert row["down_goodput_bps"] == pytest.approx(8e6)
    assert row["latency_loaded_s"] == pytest.approx(0.060)
    assert "cbr0_sent" not in row  # no one-way delays in the aligned series


def test_network_quality_rpm_from_its_probes(tmp_path: Path) -> None:
    """networkquality.json: foreign TCP, TLS and HTTP probes 40 ms, self probes 60 ms:
    foreign 60000/40 = 1500 RPM, loaded 60000/60 = 1000, RPM 1250 (Good); idle 20 ms,
    loaded median 40 ms; rates 100 and 20 Mbit/s."""
    row = imported(tmp_path, "networkquality.json")
    assert row["rpm"] == pytest.approx(1250.0)
    assert row["rpm_band"] == "good"
    assert row["latency_idle_s"] == pytest.approx(0.020)
    assert row["latency_loaded_s"] == pytest.approx(0.040)
    assert row["down_goodput_bps"] == pytest.approx(100e6)
    assert row["up_goodput_bps"] == pytest.approx(20e6)


def test_network_quality_sequential_run(tmp_path: Path) -> None:
    """networkquality-sequential.json, in the layout of a real ``networkQuality -c -s``
    (download phase 1-11 s, upload 11-21 s, the probes' arrays with _dl_/_ul_ infixes):
    125 MB in 10 s down = 100 Mbit/s, 25 MB up = 20 Mbit/s; idle probes 10, 10, 12, 12,
    14, 14 ms: median 12; loaded: 30 x6, 40 x2 (upload), 50 x6, 70 x2 (download): median
    (40 + 50) / 2 = 45 ms. RPM: foreign probes 50, 50, 30, 30 ms each kind, mean 40
    (4 samples: nothing trimmed), 1500; self 70, 70, 40, 40, mean 55: 60000/55; RPM the
    mean of the two."""
    row = imported(tmp_path, "networkquality-sequential.json")
    assert row["down_goodput_bps"] == pytest.approx(100e6)
    assert row["up_goodput_bps"] == pytest.approx(20e6)
    assert row["latency_idle_s"] == pytest.approx(0.012)
    assert row["latency_loaded_s"] == pytest.approx(0.045)
    assert row["rpm"] == pytest.approx((1500 + 60000 / 55) / 2)
    st = open_store(tmp_path / "out")
    loads = st.query("SELECT load, count(*) AS n FROM rtt GROUP BY load ORDER BY load")
    # Codes: 0 idle (6 probes), 1 download (8), 2 upload (8).
    assert dict(zip(loads["load"], loads["n"], strict=True)) == {0: 6, 1: 8, 2: 8}


def test_crusader_phases_and_one_way_delays(tmp_path: Path) -> None:
    """crusader.json: 2.5 MB down from 1 to 3 s (10 Mbit/s), 0.5 MB up from 4 to 6 s
    (2 Mbit/s); pings every 0.5 s, 30 ms (10 up) idle, 80 ms (20 up) loaded, ping 9
    (4.5 s) lost. Loaded pings: 1.0-2.5 s and 4.0-5.5 s: 8, one lost."""
    row = imported(tmp_path, "crusader.json")
    assert row["down_goodput_bps"] == pytest.approx(10e6)
    assert row["up_goodput_bps"] == pytest.approx(2e6)
    assert row["latency_idle_s"] == pytest.approx(0.030)
    assert row["latency_loaded_s"] == pytest.approx(0.080)
    assert row["probe_loss_rate"] == pytest.approx(1 / 8)
    # Increase 50 ms: bufferbloat grade B (30 to 60 ms).
    assert row["bufferbloat_grade"] == "B"
    st = open_store(tmp_path / "out")
    loads = st.query("SELECT load, count(*) AS n FROM rtt GROUP BY load ORDER BY load")
    # Codes: 0 idle, 1 download, 2 upload.
    assert dict(zip(loads["load"], loads["n"], strict=True)) == {0: 6, 1: 4, 2: 4}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "empty"),
        (b'{"round_trips": [', "not valid JSON (Expecting value at line 1 column 18; truncated?)"),
        (b"time_s,rate_bps\n0,1e6\n", "not JSON at all: import reads the tools' JSON files"),
        (b'{"hello": 1}', "not a file of irtt"),
        (b'{"round_trips": [], "config": {"params": {}}}', "round_trips: empty"),
        (
            b'{"round_trips": [{"seqno": 0, "lost": "maybe"}], "config": {"params": {}}}',
            "round_trips[0].lost: 'maybe'",
        ),
        (b'{"start": {"test_start": {}}, "intervals": [], "end": {}}', "intervals: empty"),
        (
            b'{"start": {}, "intervals": [], "end": {}, "error": "unable to connect"}',
            "the run failed: unable to connect",
        ),
        (
            gzip.compress(
                b'{"version": 9, "metadata": {}, "x_values": [0], "results": {}}', mtime=0
            ),
            "version: 9",
        ),
        (gzip.compress(b'{"version": 4, "metadata"', mtime=0)[:20], "gzip data damaged"),
        (b"\x93\x00\xff\xfe", "not text"),
    ],
)
def test_bad_files_end_in_one_line_naming_the_file(
    tmp_path: Path, content: bytes, says: str
) -> None:
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    with pytest.raises(ImportProblem, match=r"bad\.json") as e:
        read(f)
    assert says in str(e.value) and "\n" not in str(e.value)
    out = tmp_path / "out"
    p = cli("import", str(f), "-o", str(out))
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "bad.json" in p.stderr and says in p.stderr
    assert not out.exists()  # nothing half-written


def test_a_good_file_beside_a_bad_one_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "cut.json"
    bad.write_text((DATA / "irtt-five.json").read_text()[:500])
    out = tmp_path / "out"
    p = cli("import", str(DATA / "iperf3-loopback.json"), str(bad), "-o", str(out))
    assert p.returncode == 2 and "cut.json" in p.stderr and not out.exists()


def test_files_without_start_time_are_not_combined(tmp_path: Path) -> None:
    with pytest.raises(ImportProblem, match=r"crusader\.json: gives no wall-clock start"):
        combine([read(DATA / "crusader.json"), read(DATA / "irtt-five.json")])


def test_probes_alone_are_not_called_idle(tmp_path: Path) -> None:
    # irtt alone cannot tell where a load was: its RTT is not labelled "idle".
    p = cli("import", str(DATA / "testbed-irtt.json.gz"), "-o", str(tmp_path / "a"))
    assert p.returncode == 0 and "RTT (the files record no load)" in p.stdout, p.stdout
    assert "idle" not in p.stdout
    files = [str(DATA / "testbed-irtt.json.gz"), str(DATA / "testbed-iperf3.json")]
    p = cli("import", *files, "-o", str(tmp_path / "b"))
    assert p.returncode == 0 and "idle RTT" in p.stdout and "loaded RTT" in p.stdout, p.stdout
    assert "now holds" not in p.stdout
    # A second run into the same directory: said, since infer reads one run.
    p = cli("import", str(DATA / "testbed-iperf3.json"), "-o", str(tmp_path / "b"))
    assert p.returncode == 0 and "now holds 2 runs; infer and advise --from" in p.stdout


def test_files_of_different_runs_are_not_combined(tmp_path: Path) -> None:
    # irtt of one run beside iperf3 started 15 minutes later: not one run with a gap.
    doc = json.loads((DATA / "testbed-iperf3.json").read_text())
    doc["start"]["timestamp"]["timesecs"] += 900
    (tmp_path / "later.json").write_text(json.dumps(doc))
    irtt = read(DATA / "testbed-irtt.json.gz")
    with pytest.raises(ImportProblem, match=r"s after the files before it end: files of one"):
        combine([irtt, read(tmp_path / "later.json")])
    assert combine([read(DATA / "testbed-irtt.json.gz"), read(DATA / "testbed-iperf3.json")])
    # Tests of one session, one after the other (the shipped download, then its upload
    # 5 s later), are one run.
    shipped = Path(__file__).resolve().parents[1] / "examples" / "measured" / "cable-fifo-500k"
    assert combine([read(shipped / "down.json"), read(shipped / "up.json")])


def test_imported_run_queries_plots_and_compares(tmp_path: Path) -> None:
    """irtt + iperf3 of one run, imported --like the experiment of its link: the trial
    takes the experiment's key and parameters; query, plot, compare and the report read
    it; `compare` puts the simulation beside it."""
    out, sim = tmp_path / "measured", tmp_path / "sim"
    link = str(DATA / "link-20-5.toml")
    p = cli(
        "import",
        str(DATA / "testbed-irtt.json.gz"),
        str(DATA / "testbed-iperf3.json"),
        "--like",
        link,
        "-o",
        str(out),
    )
    assert p.returncode == 0, p.stderr
    q = cli("query", str(out), "SELECT mode, tool, rtt_s, down_rate_bps FROM summary")
    assert q.returncode == 0, q.stderr
    assert "measured" in q.stdout and "irtt+iperf3" in q.stdout
    r = cli("run", link, "-o", str(sim))
    assert r.returncode == 0, r.stderr
    c = cli("compare", str(sim), str(out))
    assert c.returncode == 0, c.stderr
    assert "measured" in c.stdout and "CBR delay p50 down" in c.stdout
    fig = tmp_path / "rtt.png"
    pl = cli("plot", str(out), "--x", "rtt", "--y", "goodput_mbps", "-o", str(fig))
    assert pl.returncode == 0, pl.stderr
    rep = tmp_path / "report.html"
    rp = cli("report", str(sim), str(out), "-o", str(rep))
    assert rp.returncode == 0, rp.stderr
    assert "measured" in rep.read_text() or "emulation" in rep.read_text()
    # Simulated with the call one way only, the figure draws what both sides measured.
    down_only = tmp_path / "link-down-only.toml"
    text = (DATA / "link-20-5.toml").read_text()
    down_only.write_text(re.sub(r'\n\s*\{ direction = "up".*\n', "\n", text))
    out2 = tmp_path / "measured2"
    files = [str(DATA / "testbed-irtt.json.gz"), str(DATA / "testbed-iperf3.json")]
    p = cli("import", *files, "--like", str(down_only), "-o", str(out2))
    assert p.returncode == 0, p.stderr
    r = cli("run", str(down_only), "-o", str(tmp_path / "sim2"))
    assert r.returncode == 0, r.stderr
    c = cli("compare", str(tmp_path / "sim2"), str(out2), "--plot", str(tmp_path / "c.png"))
    assert c.returncode == 0 and "CBR delay p50 up" not in c.stdout, c.stderr
    assert (tmp_path / "c.png").stat().st_size > 0


def test_sample_files_stay_small() -> None:
    for f in DATA.iterdir():
        assert f.stat().st_size < 50_000, f


def test_a_load_no_probe_was_sent_during_is_warned_of(tmp_path: Path) -> None:
    """irtt beside an iperf3 download stamped 20 s earlier: the download ends before the
    first probe, so its latency is unmeasured and the scores are the upload's alone; the
    import says so (it did not), and stores the run as before."""
    ex = Path(__file__).resolve().parent.parent / "examples" / "measured" / "cable-fifo-500k"
    doc = json.loads((ex / "down.json").read_text())
    doc["start"]["timestamp"]["timesecs"] -= 20
    shifted = tmp_path / "down-early.json"
    shifted.write_text(json.dumps(doc))
    files = [str(ex / "irtt.json.gz"), str(shifted), str(ex / "up.json")]
    p = cli("import", *files, "-o", str(tmp_path / "m"))
    assert p.returncode == 0, p.stderr
    warned = [x for x in p.stderr.splitlines() if "no probe was sent during this load" in x]
    assert len(warned) == 1 and "down-early.json" in warned[0], p.stderr
    good = cli("import", str(ex / "irtt.json.gz"), str(ex / "down.json"), str(ex / "up.json"),
               "-o", str(tmp_path / "g"))  # fmt: skip
    assert good.returncode == 0 and "no probe" not in good.stderr, good.stderr


def test_a_speed_test_shows_each_phase_latency(tmp_path: Path) -> None:
    """The shipped cable run loads the download, then the upload: its pooled loaded RTT
    (~110 ms) hides the upload's (~330 ms). Each phase's median is stored and printed,
    and equals the median of that phase's arrived probes in the stored rtt trace."""
    ex = Path(__file__).resolve().parent.parent / "examples" / "measured" / "cable-fifo-500k"
    out = tmp_path / "m"
    files = [str(ex / n) for n in ("irtt.json.gz", "down.json", "up.json")]
    p = cli("import", *files, "-o", str(out))
    assert p.returncode == 0, p.stderr
    store = open_store(out)
    row = store.query("SELECT latency_loaded_down_s d, latency_loaded_up_s u FROM summary")
    by_trace = store.query(
        "SELECT load, median(rtt_s) m FROM rtt WHERE fate = 0 AND load IN (1, 2)"
        " GROUP BY load ORDER BY load",
    )
    down, up = float(row.d.iloc[0]), float(row.u.iloc[0])
    assert [down, up] == pytest.approx(list(by_trace.m), rel=1e-12)
    assert up > 2 * down, (down, up)
    assert f"(download {down * 1e3:.1f} ms, upload {up * 1e3:.1f} ms)" in p.stdout, p.stdout
