"""irtt's JSON (``irtt client -o FILE``; heistp/irtt ``doc/irtt-client.md``): every
round trip with its send time, RTT and, when both ends stamped and the clocks agree,
the one-way delays (``delay.send`` up, ``delay.receive`` down). All times in ns."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .common import Reader
from .records import ARRIVED, LOST, LOST_DOWN, LOST_UP, Measurement, Probes

#: irtt's ``lost`` values and the fate each is.
_FATES = {"false": ARRIVED, "true": LOST, "true_up": LOST_UP, "true_down": LOST_DOWN}
#: Headers below irtt's ``length`` (its UDP payload): UDP 8 + IPv4 20 or IPv6 40.
_HEADERS = {"IPv4": 28, "IPv6": 48}


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and "round_trips" in doc and "config" in doc


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "irtt")
    trips = r.items(doc, "round_trips", "")
    if not trips:
        raise r.fail("round_trips: empty (no probe was sent)")
    config = r.get(doc, "config", "", dict)
    params = r.get(config, "params", "config", dict)
    sent_wall, rtt, up, down, fate = [], [], [], [], []
    for k, t in enumerate(trips):
        where = f"round_trips[{k}]"
        lost = r.get(t, "lost", where, str)
        if lost not in _FATES:
            raise r.fail(f"{where}.lost: {lost!r} (false, true, true_up or true_down)")
        ts = r.get(r.get(t, "timestamps", where, dict), "client", f"{where}.timestamps", dict)
        send = r.get(ts, "send", f"{where}.timestamps.client", dict)
        sent_wall.append(r.number(send, "wall", f"{where}.timestamps.client.send", 0))
        delay = t.get("delay", {}) or {}
        f = _FATES[lost]
        if f == ARRIVED:
            rtt.append(r.number(delay, "rtt", f"{where}.delay", 0) / 1e9)
        else:
            rtt.append(math.nan)
        up.append(
            delay["send"] / 1e9 if "send" in delay and f in (ARRIVED, LOST_DOWN) else math.nan
        )
        down.append(delay["receive"] / 1e9 if "receive" in delay and f == ARRIVED else math.nan)
        fate.append(f)
    t0 = min(sent_wall)
    # One-way delays only when irtt measured them (server stamps, wall clocks).
    has_owd = any(not math.isnan(x) for x in up + down)
    length = int(params.get("length", 0) or 0)
    ip = config.get("ip_version", "IPv4")
    interval_s = float(params.get("interval", 0)) / 1e9
    duration_s = max(float(params.get("duration", 0)) / 1e9, (max(sent_wall) - t0) / 1e9)
    probes = Probes(
        sent_s=[(w - t0) / 1e9 for w in sent_wall],
        rtt_s=rtt,
        fate=fate,
        owd_up_s=up if has_owd else None,
        owd_down_s=down if has_owd else None,
        bytes=length + _HEADERS.get(ip, 28) if length else 0,
        kind="udp",
        label="irtt",
    )
    parameters: dict[str, Any] = {"probe_interval_s": interval_s, "probe_bytes": probes.bytes}
    if "remote_address" in config:
        parameters["host"] = str(config["remote_address"])
    return Measurement(
        tool="irtt",
        source=str(path),
        duration_s=duration_s,
        probes=[probes],
        parameters=parameters,
        start_unix_s=t0 / 1e9,
    )
