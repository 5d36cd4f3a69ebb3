"""`collateral infer`: each estimate against values worked out by hand from crafted runs
(probes every 20 ms for 40 s; a download from 5 to 15 s and an upload from 20 to 30 s,
each of 1 s intervals at a known rate; queueing delays of a known shape)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from collateral.inference import Observations, infer
from collateral.inference.estimate import FULL_PACKET, FULL_PAYLOAD
from collateral.inference.observations import Flow

BASE = 0.040
C_DOWN, C_UP = 15e6, 2e6  # bit/s of 1500-byte packets


def flow(direction: str, start: float, stop: float, cap: float) -> Flow:
    ends = np.arange(start + 1, stop + 0.5, 1.0)
    per_s = cap * FULL_PAYLOAD / FULL_PACKET / 8  # goodput bytes per second
    return Flow(direction, ends, np.ones(len(ends)), np.full(len(ends), per_s))


def run(queue_down, queue_up, probe_bytes: int = 0) -> Observations:
    """Probes whose queueing delay is ``queue_*(phase_time)`` in each load, 0 when idle."""
    t = np.arange(0, 40, 0.02)
    rtt = np.full(t.shape, BASE)
    down, up = (t >= 5) & (t < 15), (t >= 20) & (t < 30)
    rtt[down] += queue_down(t[down] - 5)
    rtt[up] += queue_up(t[up] - 20)
    if probe_bytes:
        rtt += probe_bytes * 8 / C_DOWN + probe_bytes * 8 / C_UP
    flows = [flow("down", 5, 15, C_DOWN), flow("up", 20, 30, C_UP)]
    return Observations("crafted", t, rtt, probe_bytes, flows)


def sawtooth(lo: float, hi: float, period: float = 1.0):
    return lambda x: lo + (hi - lo) * ((x % period) / period)


def test_a_fifo_gives_capacity_base_rtt_and_its_buffer():
    inf = infer(run(sawtooth(0.035, 0.050), sawtooth(0.140, 0.200)))
    # The settled download (7 s to 14.5 s): 1 810 000 B/s delivered, x 1500/1448.
    assert inf.get("capacity_down").value == pytest.approx(15e6, rel=1e-9)
    assert inf.get("capacity_up").value == pytest.approx(2e6, rel=1e-9)
    assert inf.get("base_rtt").value == pytest.approx(BASE, abs=1e-12)
    assert inf.get("queue_down").value == "fifo" and inf.get("queue_up").value == "fifo"
    # The sawtooth climbs [35, 50) ms in 50 probe steps of 0.3 ms: its 99th percentile
    # is within a step of 35 + 0.99 x 15 ms (and the upload's of 140 + 0.99 x 60 ms).
    ceiling = inf.get("buffer_down_delay").value
    assert ceiling == pytest.approx(0.035 + 0.99 * 0.015, abs=0.0003)
    assert inf.get("buffer_down").value == pytest.approx(ceiling * 15e6 / 8, rel=1e-9)
    up = (0.140 + 0.99 * 0.060) * 2e6 / 8
    assert inf.get("buffer_up").value == pytest.approx(up, abs=0.0012 * 2e6 / 8)
    # In bytes, its interval the ceiling's (p95 to the top) at the same rate.
    delay, size = inf.get("buffer_down_delay"), inf.get("buffer_down")
    assert size.unit == "B" and size.how.startswith("ceiling delay x capacity_down")
    assert size.low == pytest.approx(delay.low * 15e6 / 8, rel=1e-9)
    assert size.high == pytest.approx(delay.high * 15e6 / 8, rel=1e-9)
    assert size.low <= size.value <= size.high


def test_an_aqm_settles_at_its_target_and_has_no_buffer_to_infer():
    # 5 ms standing delay, a 30 ms transient one probe in ten: p50 / p99 = 1/6.
    codel = lambda x: np.where(np.arange(len(x)) % 10 == 0, 0.030, 0.005)  # noqa: E731
    inf = infer(run(codel, codel))
    assert inf.get("queue_down").value == "aqm"
    assert inf.get("buffer_down_delay").value == pytest.approx(0.005)
    assert inf.get("buffer_down").value is None
    assert any(line.startswith("buffer_down: ") for line in inf.not_inferred)


def test_a_start_above_the_settled_ceiling_is_an_aqms_overshoot():
    """CoDel held steady at 5-6 ms (p50/p99 = 5.5/6 > 0.65, the shape of a full FIFO)
    after a 1 s start at 40 ms: a drop-tail queue never passes its ceiling, so the
    40 ms > 1.2 x 6 ms start says AQM; the same steady queue without the start is a
    FIFO of 6 ms (and a FIFO's own start at its ceiling stays a FIFO)."""
    steady = sawtooth(0.005, 0.006, period=0.2)
    codel = lambda x: np.where(x < 1.0, 0.040, steady(x))  # noqa: E731
    fifo_up = sawtooth(0.140, 0.200)
    inf = infer(run(codel, fifo_up))
    assert inf.get("queue_down").value == "aqm" and inf.get("queue_up").value == "fifo"
    assert "6.7 x the settled ceiling" in inf.get("queue_down").how
    assert infer(run(steady, fifo_up)).get("queue_down").value == "fifo"
    filling = lambda x: np.where(x < 1.0, 0.006, steady(x))  # noqa: E731
    assert infer(run(filling, fifo_up)).get("queue_down").value == "fifo"


def test_flow_queueing_leaves_the_probes_their_own_queue():
    fq = lambda x: np.full(len(x), 0.0005)  # noqa: E731
    inf = infer(run(fq, fq))
    assert inf.get("queue_down").value == "aqm (flow queueing)"
    assert inf.get("queue_up").value == "aqm (flow queueing)"


def test_probes_serialisation_and_rate_are_taken_off_and_added():
    # 100-byte probes every 20 ms: 40 kbit/s each way, 0.0533 + 0.4 ms of serialisation.
    inf = infer(run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2), probe_bytes=100))
    assert inf.get("capacity_down").value == pytest.approx(15e6 + 40_000, rel=1e-9)
    assert inf.get("capacity_up").value == pytest.approx(2e6 + 40_000, rel=1e-9)
    # The probes' true serialisation was computed at 15 and 2 Mbit/s; the inference uses
    # the capacities it found (40 kbit/s more), so it is off by a few microseconds.
    assert inf.get("base_rtt").value == pytest.approx(BASE, abs=1e-5)


def test_probes_the_queue_dropped_took_none_of_the_line():
    # 100-byte probes every 20 ms (40 kbit/s); during the settled upload (22 to 29.5 s)
    # two in five are lost: the line carried 0.6 of them, 24 kbit/s.
    obs = run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2), probe_bytes=100)
    settled = np.flatnonzero((obs.probe_sent_s >= 22) & (obs.probe_sent_s < 29.5))
    lost = settled[np.arange(len(settled)) % 5 < 2]
    obs.rtt_s[lost] = np.nan
    carried = 1 - len(lost) / len(settled)
    assert carried == pytest.approx(0.6, abs=0.01)
    inf = infer(obs)
    assert inf.get("capacity_up").value == pytest.approx(2e6 + 40_000 * carried, rel=1e-9)
    assert inf.get("capacity_down").value == pytest.approx(15e6 + 40_000, rel=1e-9)


def test_a_count_short_by_a_window_at_its_ends_is_fitted_through():
    # A slow upload (256 kbit/s of 1500-byte packets, 20 to 50 s) behind a 2 s queue:
    # the receiver's count is short by 24 kB (most of a second's bytes) at the first
    # settled moment (22 s) and at the end (50 s: the test ended behind a hole). The two
    # shortfalls touch 55 of the 406 pairs of the 29 settled ends; the other 351 pairs'
    # slopes are the line's rate, and so is the median. The rate from a late moment to
    # the short end is lower.
    cap, window = 256e3, 24e3
    per_s = cap * FULL_PAYLOAD / FULL_PACKET / 8
    t = np.arange(0, 60, 0.02)
    rtt = np.full(t.shape, BASE)
    rtt[(t >= 20) & (t < 50)] += sawtooth(1.4, 2.0)(t[(t >= 20) & (t < 50)])
    ends = np.arange(21.0, 50.5, 1.0)
    cum = per_s * (ends - 20)
    cum[ends == 22] -= window
    cum[ends == 50] -= window
    up = Flow("up", ends, np.ones(len(ends)), np.diff(cum, prepend=0.0))
    down = flow("down", 5, 15, C_DOWN)
    obs = Observations("crafted", t, rtt, 0, [down, up])
    g = infer(obs).get("capacity_up")
    assert g.value == pytest.approx(cap, rel=1e-9)
    assert "slope" in g.how
    late = (cum[-1] - cum[-3]) * 8 / 2 * FULL_PACKET / FULL_PAYLOAD
    assert late < 0.7 * cap


def test_without_idle_probes_or_load_it_says_what_it_cannot_infer():
    always = run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2))
    always.flows = [flow("down", 0, 40, C_DOWN)]
    inf = infer(always)
    assert inf.get("base_rtt").value is None
    assert any(line.startswith("base_rtt: 0 idle probes") for line in inf.not_inferred)
    assert any(line.startswith("capacity_up: no upload") for line in inf.not_inferred)


def test_a_known_atm_framing_gives_line_rates_and_cell_serialisation():
    from collateral.inference.estimate import Framing

    # An ADSL line at 1.5 Mbit/s / 256 kbit/s: a 1500-byte packet + 10 B in 32 cells of
    # 53 B (1696 B on the line), so 1448 payload bytes per 1696 line bytes.
    atm = Framing(10, True)
    assert atm.wire(1500) == 1696 and atm.wire(88) == 159  # 98 B in 3 cells
    # 88-byte probes every 20 ms take 159 x 8 / 0.02 = 63.6 kbit/s of each direction's
    # line; the flows get the rest.
    probes = 159 * 8 / 0.02
    obs = run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2))
    for f in obs.flows:
        line = 1.5e6 if f.direction == "down" else 256e3
        f.bytes[:] = (line - probes) * 1448 / 1696 / 8
    obs.probe_bytes = 88
    obs.rtt_s += 159 * 8 / 1.5e6 + 159 * 8 / 256e3
    inf = infer(obs, atm)
    assert inf.get("capacity_down").value == pytest.approx(1.5e6, rel=1e-9)
    assert inf.get("capacity_up").value == pytest.approx(256e3, rel=1e-9)
    assert inf.get("base_rtt").value == pytest.approx(BASE, abs=1e-12)
    # The buffer in IP bytes: the line's bytes in the ceiling delay, of which the probes
    # sent in that time (one per 20 ms) are 159 B of cells for 88 IP bytes each, the
    # rest full packets (1500 IP bytes per 1696).
    ceiling = inf.get("buffer_down_delay").value
    probes_in = ceiling / 0.02
    line_bytes = ceiling * 1.5e6 / 8
    want = (line_bytes - probes_in * 159) * 1500 / 1696 + probes_in * 88
    assert inf.get("buffer_down").value == pytest.approx(want, rel=1e-9)
    assert want < ceiling * 1.5e6 * 1500 / 1696 / 8  # less than if all were full packets
    assert inf.link_framing() == {"framing": {"overhead": "10B", "atm": True}}
    assert not any("framing" in line for line in inf.not_inferred)


def test_framing_option_parses_cakes_keywords_and_names_itself_on_error():
    import collateral
    from collateral.spec.errors import SpecError

    sc = collateral.build_scenario(link="adsl1", framing="atm:32")
    assert (sc.down.framing.overhead, sc.down.framing.atm) == (32, True)
    assert collateral.build_scenario(framing="18").up.framing.atm is False
    with pytest.raises(SpecError, match=r"^framing: 'atm:x': expected BYTES"):
        collateral.build_scenario(framing="atm:x")


def test_the_replay_is_the_inferred_link_under_the_measured_load():
    from collateral.inference import replay

    obs = run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2), probe_bytes=100)
    obs.parameters["length_s"] = 9.5
    inf = infer(obs)
    sc = replay.scenario(inf, obs)
    assert sc.down.rate == round(15e6 + 40_000) and sc.up.rate == round(2e6 + 40_000)
    assert sc.rtt == round(inf.get("base_rtt").value * 1e9)
    assert sc.down.queue.limit.amount == round(inf.get("buffer_down").value)
    # One flow each way, from its first interval's start, writing for the test's length.
    assert [(f.direction, f.start, f.stop) for f in sc.tcp] == [
        ("down", 5_000_000_000, 14_500_000_000),
        ("up", 20_000_000_000, 29_500_000_000),
    ]
    assert [(c.direction, c.size, c.interval) for c in sc.cbr] == [
        ("up", 100, 20_000_000),
        ("down", 100, 20_000_000),
    ]


def test_a_flow_starting_after_the_probes_is_left_out_of_the_replay():
    from collateral.inference import replay

    obs = run(sawtooth(0.035, 0.050), sawtooth(0.14, 0.2))
    # A third flow whose first second ends at 42 s: after the last probe (39.98 s) and
    # the replay's end a second later, so it loads nothing replayed (the core refuses a
    # flow that starts after the run).
    obs.flows.append(flow("down", 41, 45, C_DOWN))
    sc = replay.scenario(infer(obs), obs)
    assert [f.start for f in sc.tcp] == [5_000_000_000, 20_000_000_000]


def test_what_if_cures_a_bloated_fifo():
    from collateral.inference import whatif

    # A 1 s FIFO both ways on 15 / 2 Mbit/s: under RRUL its probes wait most of a second
    # (RPM well under 60), while FQ-CoDel keeps them near the 40 ms path (RPM > 600).
    obs = run(sawtooth(0.7, 1.0), sawtooth(0.7, 1.0))
    inf = infer(obs)
    assert inf.get("queue_down").value == "fifo"
    rows = {r["queue"]: r for r in map(whatif.row, whatif.what_if(inf))}
    assert list(rows) == ["as inferred", "fq_codel", "cake", "dualpi2", "fifo, half the buffer"]
    assert rows["as inferred"]["rpm"] < 60 < 600 < rows["fq_codel"]["rpm"]
    assert rows["as inferred"]["bufferbloat_grade"] == "F"
    assert rows["fq_codel"]["call_down_delay_p95_s"] < 0.02
    # The call's loss beside its delay: what a QoO of 0 with a short delay comes from.
    for r in rows.values():
        assert 0 <= r["call_down_loss_rate"] <= 1 and 0 <= r["call_up_loss_rate"] <= 1, r
    assert rows["fq_codel"]["call_down_loss_rate"] < 0.01


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "measured" / "cable-fifo-500k"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "collateral", *args], capture_output=True, text=True
    )


def test_the_shipped_measurement_is_inferred_and_advised_from(tmp_path):
    # A real run through the testbed: 50/10 Mbit/s, 30 ms, a 500 kB FIFO each way.
    files = [str(EXAMPLE / f) for f in ("irtt.json.gz", "down.json", "up.json")]
    assert _cli("import", *files, "-o", str(tmp_path / "m")).returncode == 0
    p = _cli("infer", str(tmp_path / "m"), "--json")
    assert p.returncode == 0, p.stderr
    got = {e["name"]: e["value"] for e in json.loads(p.stdout)["estimates"]}
    assert got["capacity_down"] == pytest.approx(50e6, rel=0.03)
    assert got["capacity_up"] == pytest.approx(10e6, rel=0.03)
    assert got["base_rtt"] == pytest.approx(0.030, abs=0.001)
    assert got["queue_down"] == got["queue_up"] == "fifo"
    assert got["buffer_down"] == pytest.approx(500e3, rel=0.1)
    p = _cli("infer", str(tmp_path / "m"), "--json", "--what-if")  # not dropped in silence
    assert p.returncode == 2 and "--json: prints the inference alone" in p.stderr, p.stderr
    # The advisor starts from it: its current queue is the inferred FIFO.
    p = _cli("advise", "--from", str(tmp_path / "m"), "--trials", "1", "--duration", "5s")
    assert p.returncode == 0, p.stderr
    # Each direction's own buffer (the upstream's is not the downstream's in general).
    mine = f"{round(got['buffer_down'])}B/{round(got['buffer_up'])}B"
    assert f"current queue {mine}" in p.stdout.splitlines()[0], p.stdout
    assert f"current {mine} drop-tail" in p.stdout, p.stdout
    # Its load: both directions, as measured (the upload is what fills the upstream
    # buffer that delays the call's packets up).
    assert "load 1 download and 1 upload at once" in p.stdout.splitlines()[0], p.stdout
    assert "1 download(s), 1 upload(s)" in p.stdout, p.stdout
    # A --current of the user's stands, and is said to be theirs; so does a load given.
    p = _cli("advise", "--from", str(tmp_path / "m"), "--current", "100p", "--trials", "1",
             "--duration", "5s", "--uploads", "0")  # fmt: skip
    assert p.returncode == 0 and "current queue 100p (--current)" in p.stdout.splitlines()[0]
    assert "load 1 download" not in p.stdout and "upload(s)" not in p.stdout, p.stdout
    p = _cli("advise", "--from", str(tmp_path / "m"), "--down", "5Mbit")
    assert p.returncode == 2 and p.stderr.strip().endswith(
        "--from: gives the link; leave out --down"
    )


@pytest.mark.parametrize(
    "file, lacks", [("down.json", "latency probes"), ("irtt.json.gz", "load (e.g. iperf3)")]
)
def test_a_run_of_probes_or_load_alone_is_refused_in_one_line(tmp_path, file, lacks):
    # Importing one of the measurement's files stores only the rtt or the throughput
    # table: infer and advise --from say which is missing (they ended in DuckDB's
    # "Table with name rtt does not exist" traceback).
    assert _cli("import", str(EXAMPLE / file), "-o", str(tmp_path / "m")).returncode == 0
    for args in (["infer", str(tmp_path / "m")], ["advise", "--from", str(tmp_path / "m")]):
        p = _cli(*args)
        assert p.returncode == 2, p.stderr
        (line,) = p.stderr.strip().splitlines()
        assert f"the run has no {lacks}" in line, line


def test_the_what_if_figure_goes_into_a_new_directory_as_a_png(tmp_path):
    """infer's --figure check allows a directory still to be made, as every figure
    option does: the drawing made none, and failed after the whole what-if had run."""
    from collateral.inference.figure import draw

    row = {"queue": "as inferred", "rpm": 50.0, "bufferbloat_grade": "F",
           "call_down_delay_p95_s": 0.5, "call_up_delay_p95_s": 0.2}  # fmt: skip
    written = draw([row, {**row, "queue": "fq_codel", "rpm": 800.0}], tmp_path / "new" / "w")
    assert written == [tmp_path / "new" / "w.png"] and written[0].stat().st_size > 1000


def test_a_run_nothing_can_be_inferred_from_says_so_with_a_status(tmp_path):
    """A crusader export (its loads too short to settle, no idle probes): not an empty
    table and status 0, but each reason and an error, status 1."""
    data = Path(__file__).resolve().parent / "data" / "measured"
    assert _cli("import", str(data / "crusader.json"), "-o", str(tmp_path / "c")).returncode == 0
    p = _cli("infer", str(tmp_path / "c"))
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "not inferred: base_rtt" in p.stdout and "┏" not in p.stdout, p.stdout
    assert p.stderr.strip().endswith("'Your measured link')") and p.stderr.count("\n") == 1
