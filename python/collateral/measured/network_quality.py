"""Apple's ``networkQuality -c`` JSON: the idle round trips (``il_tcp_handshake_443``,
``il_tls_handshake``, ``il_h2_req_resp``; else ``base_rtt`` alone; ms), the loaded rates
(``dl_throughput``, ``ul_throughput``, bit/s; ``dl_bytes_transferred`` over
``dl_phase_start`` to ``dl_phase_end`` where given), the RPM it computed
(``responsiveness``, or ``dl_``/``ul_responsiveness`` with ``-s``) and, per probe kind,
the round trips taken under load (``lud_foreign_tcp_handshake_443``,
``lud_foreign_tls_handshake``, ``lud_foreign_h2_req_resp``, ``lud_self_h2_req_resp``;
with ``-s`` the same names with ``_dl_`` or ``_ul_`` after ``lud_foreign``/``lud_self``).

The file gives no time per probe and no rate over time: the idle probes sit at the
start, the loaded ones at the start of their load phase, and each direction is one
interval over its phase. Phases come from ``*_phase_start``/``*_phase_end`` (relative to
``start_date``; dates as the tool writes them, read as UTC); without them the load is one
phase of both directions from ``start_date`` to ``end_date`` (1 s when those are missing
too: the rate is what the file says either way).
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from .common import Reader
from .records import ARRIVED, Measurement, Phase, Probes, Throughput

#: The RPM role of each probe kind (draft-ietf-ippm-responsiveness).
ROLES = {
    "foreign_tcp_handshake_443": "foreign_tcp",
    "foreign_tls_handshake": "foreign_tls",
    "foreign_h2_req_resp": "foreign_http",
    "self_h2_req_resp": "self_http",
}
IDLE_KEYS = ("il_tcp_handshake_443", "il_tls_handshake", "il_h2_req_resp")
#: How long the idle phase is taken to last when the file does not say (it holds the
#: idle probes).
IDLE_S = 0.001


def looks_like(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and ("dl_throughput" in doc or "ul_throughput" in doc)
        and ("base_rtt" in doc or "responsiveness" in doc or "dl_responsiveness" in doc)
    )


def _date(v: Any) -> float | None:
    if not isinstance(v, str):
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return dt.datetime.strptime(v, fmt).replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue
    try:
        t = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp()


def _round_trips(r: Reader, doc: Any, key: str) -> list[float]:
    ms = r.items(doc, key, "")
    for k, v in enumerate(ms):
        if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            raise r.fail(f"{key}[{k}]: {v!r:.40} is not a round trip in ms")
    return [float(v) / 1e3 for v in ms]


def _probes(ms: list[float], at: float, key: str, role: str = "") -> Probes:
    return Probes(
        sent_s=[at] * len(ms),
        rtt_s=ms,
        fate=[ARRIVED] * len(ms),
        kind="http" if "h2" in key else "tcp",
        label=key,
        role=role,
    )


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "networkQuality")
    start, end = _date(doc.get("start_date")), _date(doc.get("end_date"))
    # Each direction's load phase, in seconds from the start.
    spans: dict[str, tuple[float, float]] = {}
    for d in ("dl", "ul"):
        a, b = _date(doc.get(f"{d}_phase_start")), _date(doc.get(f"{d}_phase_end"))
        if start is not None and a is not None and b is not None and b > a >= start:
            spans[d] = (a - start, b - start)
    if not spans:
        length = end - start if start is not None and end is not None and end > start else 1.0
        spans = {"dl": (IDLE_S, IDLE_S + length), "ul": (IDLE_S, IDLE_S + length)}
    flows = []
    for d, direction in (("dl", "down"), ("ul", "up")):
        key = f"{d}_throughput"
        if key not in doc:
            continue
        a, b = spans.get(d, spans.get("dl") or spans["ul"])
        bps = r.number(doc, key, "", 0)
        moved = doc.get(f"{d}_bytes_transferred")
        n = int(moved) if isinstance(moved, int) and moved >= 0 else round(bps * (b - a) / 8)
        flows.append(Throughput(direction=direction, end_s=[b], bytes=[n], start_s=a, label=key))  # type: ignore[arg-type]
    first = min(a for a, _ in spans.values())
    probes = []
    idle = [k for k in IDLE_KEYS if k in doc]
    for key in idle:
        probes.append(_probes(_round_trips(r, doc, key), 0.0, key))
    if not idle and "base_rtt" in doc:
        probes.append(_probes([r.number(doc, "base_rtt", "", 0) / 1e3], 0.0, "base_rtt"))
    for kind, role in ROLES.items():
        who, _, what = kind.partition("_")
        for infix, at in (
            ("", first),
            ("_dl", spans.get("dl", (first,))[0]),
            ("_ul", spans.get("ul", (first,))[0]),
        ):
            key = f"lud_{who}{infix}_{what}"
            if key in doc:
                probes.append(_probes(_round_trips(r, doc, key), at, key, role))
    if not flows and not probes:
        raise r.fail("no throughput and no round trips (dl_throughput, base_rtt...)")
    phases = [Phase("idle", 0.0, first, "idle")] if first > 0 else []
    (da, db), (ua, ub) = spans.get("dl", spans.get("ul")), spans.get("ul", spans.get("dl"))  # type: ignore[misc]
    if (da, db) == (ua, ub):
        phases.append(Phase("loaded", da, db, "both"))
    else:  # -s: one direction after the other
        phases += [Phase("download", da, db, "down"), Phase("upload", ua, ub, "up")]
        phases.sort(key=lambda p: p.start_s)
    params: dict[str, Any] = {}
    for key, col in (("dl_flows", "down_flows"), ("ul_flows", "up_flows")):
        if isinstance(doc.get(key), int):
            params[col] = doc[key]
    for key in ("interface_name", "test_endpoint"):
        if isinstance(doc.get(key), str):
            params[key.removesuffix("_name")] = doc[key]
    reported = {
        k: doc[k]
        for k in (
            "responsiveness",
            "dl_responsiveness",
            "ul_responsiveness",
            "base_rtt",
            "dl_throughput",
            "ul_throughput",
        )
        if k in doc
    }
    return Measurement(
        tool="networkQuality",
        source=str(path),
        duration_s=max(b for _, b in spans.values()),
        throughput=flows,
        probes=probes,
        phases=phases,
        parameters=params,
        reported=reported,
        start_unix_s=start,
    )
