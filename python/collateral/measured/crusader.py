"""crusader's JSON export (``crusader export FILE.crr``; Zoxc/crusader
``src/crusader-lib/src/file_format.rs``, ``RawResult`` as serde writes it, durations as
``{"secs", "nanos"}``): the streams of each group (``download``, ``both``) with the
bytes each had received at each sample time, the pings (``sent``, and ``latency``
``{total, up}`` or null when lost; down = total - up) and, from format version 2, the
test's phases (``test_data``: start, end, kind Download/Upload/Bidirectional).
"""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path
from typing import Any

from .common import Reader
from .records import ARRIVED, LOST, Measurement, Phase, Probes, Throughput

_LOADS = {"Download": "down", "Upload": "up", "Bidirectional": "both"}


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and "stream_groups" in doc and "pings" in doc


def _secs(r: Reader, v: Any, where: str) -> float:
    """A serde Duration (``{"secs", "nanos"}``) in seconds."""
    if v is None:
        return math.nan
    return r.number(v, "secs", where, 0) + r.number(v, "nanos", where, 0) / 1e9


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "crusader")
    groups = r.items(doc, "stream_groups", "")
    flows = []
    for g, group in enumerate(groups):
        gw = f"stream_groups[{g}]"
        down = bool(r.get(group, "download", gw, bool))
        for s, stream in enumerate(r.items(group, "streams", gw)):
            sw = f"{gw}.streams[{s}]"
            pts = r.items(stream, "data", sw)
            if not pts:
                continue
            times = [
                _secs(r, r.get(p, "time", f"{sw}.data[{k}]"), f"{sw}.data[{k}].time")
                for k, p in enumerate(pts)
            ]
            total = [int(r.number(p, "bytes", f"{sw}.data[{k}]", 0)) for k, p in enumerate(pts)]
            if any(b < a for a, b in pairwise(times)) or any(b < a for a, b in pairwise(total)):
                raise r.fail(f"{sw}.data: times or byte counts go backwards")
            # Cumulative counts: each interval's bytes are the difference.
            flows.append(
                Throughput(
                    direction="down" if down else "up",
                    end_s=times[1:],
                    bytes=[b - a for a, b in pairwise(total)],
                    start_s=times[0],
                    label=f"{'both ' if group.get('both') else ''}{'down' if down else 'up'} {s}",
                )
            )
    pings = r.items(doc, "pings", "")
    sent, rtt, up, dn, fate = [], [], [], [], []
    for k, p in enumerate(pings):
        where = f"pings[{k}]"
        sent.append(_secs(r, r.get(p, "sent", where), f"{where}.sent"))
        lat = p.get("latency")
        total = _secs(r, lat.get("total"), f"{where}.latency.total") if lat else math.nan
        if lat is None or math.isnan(total):
            rtt.append(math.nan)
            up.append(math.nan)
            dn.append(math.nan)
            fate.append(LOST)
            continue
        u = _secs(r, r.get(lat, "up", f"{where}.latency"), f"{where}.latency.up")
        rtt.append(total)
        up.append(u)
        dn.append(total - u)
        fate.append(ARRIVED)
    phases = []
    for k, t in enumerate(doc.get("test_data") or []):
        where = f"test_data[{k}]"
        kind = r.get(t, "kind", where, str)
        if kind not in _LOADS:
            raise r.fail(f"{where}.kind: {kind!r} (Download, Upload or Bidirectional)")
        phases.append(
            Phase(
                kind.lower(),
                _secs(r, r.get(t, "start", where), where),
                _secs(r, r.get(t, "end", where), where),
                _LOADS[kind],
            )
        )  # type: ignore[arg-type]
    if phases:  # the gaps between the loads are idle
        phases.sort(key=lambda p: p.start_s)
        gaps, t = [], 0.0
        for p in phases:
            if p.start_s > t:
                gaps.append(Phase("idle", t, p.start_s, "idle"))
            t = max(t, p.end_s)
        phases = sorted(phases + gaps, key=lambda p: p.start_s)
    if not flows and not sent:
        raise r.fail("no streams and no pings")
    duration = (
        _secs(r, doc["duration"], "duration")
        if "duration" in doc
        else max([*(f.end_s[-1] for f in flows if f.end_s), *sent, 0.0])
    )
    if phases and phases[-1].end_s < duration:
        phases.append(Phase("idle", phases[-1].end_s, duration, "idle"))
    cfg = doc.get("config") or {}
    params: dict[str, Any] = {}
    if "streams" not in params and groups:
        params["streams"] = len(groups[0].get("streams") or [])
    for key in ("load_duration", "grace_duration", "ping_interval"):
        if isinstance(cfg.get(key), dict):
            params[f"crusader_{key}_s"] = _secs(r, cfg[key], f"config.{key}")
    probes = (
        [
            Probes(
                sent_s=sent,
                rtt_s=rtt,
                fate=fate,
                owd_up_s=up,
                owd_down_s=dn,
                kind="udp",
                label="crusader pings",
            )
        ]
        if sent
        else []
    )
    return Measurement(
        tool="crusader",
        source=str(path),
        duration_s=duration,
        throughput=flows,
        probes=probes,
        phases=phases,
        parameters=params,
        start_unix_s=None,
    )
