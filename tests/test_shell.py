"""``collateral shell``: real clients (ping, irtt, curl) through the emulated link, their
delays against the link's as worked out by hand, and nothing left afterwards (needs
root, iproute2, ethtool, collateral-emu and the clients; skipped otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import rerun_while_late

from collateral import emulate as emu

#: The testbed in real time: run alone, never beside other tests (test.sh).
pytestmark = [
    pytest.mark.realtime,
    pytest.mark.skipif(
        os.geteuid() != 0 or not all(map(shutil.which, ("ping", "irtt", "curl", "ethtool"))),
        reason="needs root and ping, irtt, curl (./setup.sh installs them)",
    ),
]

#: 2 Mbit/s down, 500 kbit/s up, 40 ms base RTT (20 ms each way).
LINK = ["--down", "2Mbit", "--up", "500kbit", "--rtt", "40ms"]


def _ms(ip_bytes: int, rate: float) -> float:
    return ip_bytes * 8 / rate * 1e3


def _shell(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "collateral", "shell", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _leftovers(marker: str) -> list[str]:
    """Our namespaces, registry records and processes whose command line matches
    ``marker`` (pgrep's extended regular expression)."""
    left = [ns for ns in emu.testbed_namespaces() if emu.NS_RE.match(ns)]
    if emu.REGISTRY.exists():
        left += [str(p) for p in emu.REGISTRY.glob("*.json")]
    ps = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return left + ps.split()


def test_ping_irtt_and_curl_cross_the_link_and_nothing_is_left(tmp_path: Path):
    (tmp_path / "page").write_bytes(b"x" * 20_000)
    irtt_json = tmp_path / "irtt.json"
    script = (
        "ping -n -c 4 -i 0.2 $COLLATERAL_SERVER"
        f" && irtt client -Q -d 2s -i 20ms -o {irtt_json} $COLLATERAL_SERVER"
        " && curl -sS -o /dev/null -w 'curl %{http_code} %{size_download}\\n'"
        " http://$COLLATERAL_SERVER:8321/page"
    )
    p = _shell(
        *LINK,
        "--server",
        "irtt server -b 198.18.0.1",
        "--server",
        f"cd {tmp_path} && exec python3 -m http.server 8321 --bind 198.18.0.1",
        "--",
        "sh",
        "-c",
        script,
    )
    assert p.returncode == 0, p.stderr
    # ping: 84 B of IP each way (64 B ICMP + 20 B header) behind 20 ms of propagation.
    want = 40 + _ms(84, 500e3) + _ms(84, 2e6)  # 41.68 ms
    rtt_min = float(p.stdout.split("rtt min/avg/max/mdev = ")[1].split("/")[0])
    assert want <= rtt_min <= want + 1.0, p.stdout
    # irtt: 60 B of payload, 88 B of IP; one clock on both sides, so one-way delays.
    stats = json.loads(irtt_json.read_text())["stats"]
    up, down = stats["send_delay"]["min"] / 1e6, stats["receive_delay"]["min"] / 1e6
    assert 20 + _ms(88, 500e3) <= up <= 20 + _ms(88, 500e3) + 1.0  # 21.41 ms
    assert 20 + _ms(88, 2e6) <= down <= 20 + _ms(88, 2e6) + 1.0  # 20.35 ms
    assert stats["packets_received"] == stats["packets_sent"] > 50
    assert "curl 200 20000" in p.stdout
    assert _leftovers("198.18.0.1") == []


def test_the_line_after_the_command_counts_what_ping_counts_and_the_routers_timing():
    """Ten pings at once into a 3-packet queue on the 500 kbit/s upstream (84 B take
    1.34 ms each; ping sends the burst within microseconds): one is on the wire, three
    wait, six are dropped; the four replies come back one by one. The router's report,
    measured by the core, must say what ping saw. A router that missed real time says
    so on that line (its queue then drains late and holds other packets than the
    model's): run again, as the emulator's tests do."""
    p = rerun_while_late(
        _ping_burst, lambda p: _last_line(p) if "testbed LATE" in _last_line(p) else None
    )
    line = _last_line(p)
    assert p.returncode == 0, p.stderr  # ping fails only when no reply comes back
    assert "10 packets transmitted, 4 received" in p.stdout
    assert line.startswith(
        "collateral: the link carried down 4 packets, 0 dropped by the queue;"
        " up 4 packets, 6 dropped by the queue. testbed on time: "
    ), line
    assert "release error p99" in line, line


def _last_line(p: subprocess.CompletedProcess[str]) -> str:
    return p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""


def _ping_burst() -> subprocess.CompletedProcess[str]:
    return _shell(
        *LINK,
        "--queue",
        "3p",
        "--",
        "ping",
        "-n",
        "-q",
        "-c",
        "10",
        "-l",
        "10",
        "-W",
        "1",
        "198.18.0.1",
    )


def test_the_commands_exit_status_is_the_shells():
    p = _shell(*LINK, "--", "sh", "-c", "exit 3")
    assert p.returncode == 3, p.stderr
    # Ended by a signal (Ctrl-C reaches the command): 128 + it, not Python's -2 & 0xff.
    p = _shell(*LINK, "--", "sh", "-c", "kill -INT $$")
    assert p.returncode == 130, p.stderr


def test_a_server_that_stops_is_named_in_one_line_and_nothing_is_left():
    p = _shell(*LINK, "--server", "echo no-such-port >&2; exit 1", "--", "true")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "collateral: error: shell: server0 ('echo no-such-port >&2; exit 1') ended: no-such-port"
    ]
    assert _leftovers("no-such-port") == []


def test_a_missing_command_is_refused_before_anything_is_made():
    p = _shell(*LINK, "--", "no-such-command-here")
    assert p.returncode == 2
    assert p.stderr.strip() == "collateral: error: shell: no-such-command-here: command not found"


def test_sigterm_mid_command_removes_everything():
    p = subprocess.Popen(
        [sys.executable, "-m", "collateral", "shell", *LINK, "--", "sleep", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not _sleeping():
        time.sleep(0.1)
    assert _sleeping(), "the command never started"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 143, err  # 128 + SIGTERM, as a shell reports it
    assert _leftovers("^sleep 30$") == []  # not any "sleep 300" of the machine


def _sleeping() -> bool:
    """The shell's command runs (in its namespace)."""
    out = subprocess.run(["pgrep", "-f", "^sleep 30$"], capture_output=True, text=True)
    return bool(out.stdout.strip())
