"""Classic ECN in the testbed: what it refuses (L4S, DCTCP/Prague, flows of one host that
differ in ECN; these run everywhere, no root needed) and, as root with namespaces, real
Linux CUBIC with ECN through the router's FQ-CoDel: CE marks, rewritten into the frames
(the kernel reacts to them), and no ECT packet dropped while the queue has room."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from collateral import emulate as emu
from collateral.spec import Scenario

#: The testbed in real time: run alone, never beside other tests (test.sh).
pytestmark = pytest.mark.realtime

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists("/proc/sys/net/ipv4/tcp_available_congestion_control"),
    reason="the testbed needs root and Linux",
)

DURATION = ("--duration", "5s", "--warmup", "1s")
BASE = dict(down={"rate": "10Mbit"}, up={"rate": "10Mbit"}, duration="5s", warmup="1s")


@pytest.mark.parametrize(
    ("tcp", "path", "words"),
    [
        ([{"cc": "dctcp", "ecn": "l4s"}], r"tcp\[0\]\.cc: dctcp: ", "no DCTCP or Prague"),
        ([{}, {"cc": "prague", "ecn": "l4s"}], r"tcp\[1\]\.cc: prague: ", "no DCTCP or Prague"),
        # One host sends both (the kernel's switch is per namespace and both go A -> C).
        ([{"ecn": "classic"}, {"ecn": "off"}], r"tcp\[1\]\.ecn: off: ", "tcp[0]"),
    ],
)
def test_what_classic_ecn_testbed_cannot_run_is_named(tcp, path, words):
    with pytest.raises(emu.TestbedLimitError, match=f"^{path}") as err:
        emu.check_testbed(Scenario(**BASE, tcp=tcp))
    msg = str(err.value)
    assert "\n" not in msg and words in msg
    if "cc" in path:
        assert msg.endswith("the testbed runs classic ECN only")


def test_classic_ecn_is_accepted_and_enabled_on_the_sending_hosts():
    for tcp, hosts in [
        ([{"ecn": "classic"}] * 2, ["left"]),
        ([{"ecn": "classic"}, {"direction": "up"}], ["left"]),  # each direction its own host
        ([{"direction": "up", "ecn": "classic"}, {"ecn": "classic"}], ["right", "left"]),
        ([{}], []),
    ]:
        sc = Scenario(**BASE, tcp=tcp, cbr=[{"ecn": "ect0"}])
        emu.check_testbed(sc)
        assert emu.ecn_namespaces(sc) == hosts


@pytest.mark.parametrize(
    ("args", "option", "words"),
    [
        (["--cc", "dctcp", "--ecn", "l4s"], "--cc: dctcp: ", "no DCTCP or Prague"),
        (["--cc", "prague", "--ecn", "l4s"], "--cc: prague: ", "no DCTCP or Prague"),
    ],
)
def test_the_cli_refuses_l4s_in_one_line_with_exit_2(args, option, words, tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "collateral", "emulate", *args, *DURATION],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err.count("\n") == 0, err
    assert err.startswith(f"collateral: error: {option}"), err
    assert words in err and err.endswith("the testbed runs classic ECN only"), err
    assert list(tmp_path.iterdir()) == []


@needs_root
def test_cubic_with_ecn_is_marked_not_dropped_by_fq_codel(tmp_path):
    limit = 1000
    sc = Scenario(
        down={"rate": "1.5Mbit", "queue": {"kind": "fq_codel", "limit": limit, "ecn": True}},
        up={"rate": "256kbit", "queue": {"limit": "100p", "rule": "ps"}},
        rtt="100ms",
        duration="12s",
        warmup="2s",
        tcp=[{"cc": "cubic", "profile": "linux-6", "ecn": "classic"}],
        cbr=[{"direction": "down"}],
    )
    r = emu.emulate(sc, workdir=tmp_path, keep=True)
    log = emu.read_csv(tmp_path / "router.csv")
    col = {c: k for k, c in enumerate(emu.ROUTER_LOG_COLUMNS)}
    assert log.shape[1] == len(col)
    down = log[:, col["dir"]] == 0
    ev = log[:, col["ev"]]
    ect = (log[:, col["tos"]] & 3) != 0
    data = down & (log[:, col["proto"]] == 6) & (log[:, col["ip_len"]] > 100)
    # The kernel negotiated ECN: its data segments arrive ECT.
    queued = data & (ev == emu.EV_QUEUED)
    assert queued.sum() > 500 and ect[queued].mean() > 0.99
    # The queue marked, and the router rewrote the marked frames.
    assert r.summary["queues"]["down"]["ce_marks"] > 0, r.summary["queues"]["down"]
    assert (down & (ev == emu.EV_CE)).sum() > 0
    # No ECT packet dropped while the queue had room (an overflow would be at the limit).
    drops = down & (ev == emu.EV_DROP) & ect
    assert not (drops & (log[:, col["qpkts"]] < limit)).any(), log[drops]
    # The rewritten frames reached the receiver intact (their checksum was updated) and
    # it echoed the marks: the sender reduced (entered CWR) and retransmitted nothing.
    send = emu.read_csv(tmp_path / "tcp0-send.csv")
    assert (send[:, 5] == 2).any(), "the kernel never entered CWR"
    assert r.tcp[0]["retransmits"] == 0, r.tcp[0]
