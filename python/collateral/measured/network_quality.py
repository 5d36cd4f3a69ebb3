"""Apple's ``networkQuality -c`` JSON: the idle round trip (``base_rtt``, ms), the
loaded rates (``dl_throughput``, ``ul_throughput``, bit/s), the RPM it computed
(``responsiveness``) and, per probe kind, the round trips of the probes taken under
load (``lud_foreign_tcp_handshake_443``, ``lud_foreign_tls_handshake``,
``lud_foreign_h2_req_resp``, ``lud_self_h2_req_resp``; ms). The file gives no time per
probe and no rate over time: the idle probe sits at 0, the loaded ones at the start of
the loaded phase, and each direction is one interval over that phase (its length from
``start_date``/``end_date``, else 1 s: the rate is what the file says either way).
Both directions load at once unless ``-s`` ran them in turn; the file does not say
which, so the loaded phase is recorded as both.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from .common import Reader
from .records import ARRIVED, Measurement, Phase, Probes, Throughput

#: The per-probe arrays and the RPM role each plays (draft-ietf-ippm-responsiveness).
ROLES = {
    "lud_foreign_tcp_handshake_443": "foreign_tcp",
    "lud_foreign_tls_handshake": "foreign_tls",
    "lud_foreign_h2_req_resp": "foreign_http",
    "lud_self_h2_req_resp": "self_http",
}
#: How long the idle phase is taken to last (it holds the one base_rtt probe).
IDLE_S = 0.001


def looks_like(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and ("dl_throughput" in doc or "ul_throughput" in doc)
        and ("base_rtt" in doc or "responsiveness" in doc)
    )


def _date(v: Any) -> float | None:
    if not isinstance(v, str):
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%m/%d/%y, %H:%M:%S"):
        try:
            return dt.datetime.strptime(v, fmt).replace(tzinfo=dt.UTC).timestamp()
        except ValueError:
            continue
    try:
        t = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=dt.UTC)).timestamp()


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "networkQuality")
    start, end = _date(doc.get("start_date")), _date(doc.get("end_date"))
    length = end - start if start is not None and end is not None and end > start else 1.0
    t_load = IDLE_S
    t_end = t_load + length
    flows = []
    for key, d in (("dl_throughput", "down"), ("ul_throughput", "up")):
        if key in doc:
            bps = r.number(doc, key, "", 0)
            flows.append(
                Throughput(
                    direction=d,
                    end_s=[t_end],
                    bytes=[round(bps * length / 8)],  # type: ignore[arg-type]
                    start_s=t_load,
                    label=key,
                )
            )
    probes = []
    if "base_rtt" in doc:
        base = r.number(doc, "base_rtt", "", 0)
        probes.append(
            Probes(sent_s=[0.0], rtt_s=[base / 1e3], fate=[ARRIVED], kind="tcp", label="base_rtt")
        )
    for key, role in ROLES.items():
        if key not in doc:
            continue
        ms = r.items(doc, key, "")
        for k, v in enumerate(ms):
            if (
                not isinstance(v, int | float)
                or isinstance(v, bool)
                or not math.isfinite(v)
                or v < 0
            ):
                raise r.fail(f"{key}[{k}]: {v!r:.40} is not a round trip in ms")
        probes.append(
            Probes(
                sent_s=[t_load] * len(ms),
                rtt_s=[v / 1e3 for v in ms],
                fate=[ARRIVED] * len(ms),
                kind="http" if "h2" in key else "tcp",
                label=key,
                role=role,
            )
        )
    if not flows and not probes:
        raise r.fail("no throughput and no round trips (dl_throughput, base_rtt...)")
    params: dict[str, Any] = {}
    for key, col in (("dl_flows", "down_flows"), ("ul_flows", "up_flows")):
        if isinstance(doc.get(key), int):
            params[col] = doc[key]
    if isinstance(doc.get("interface_name"), str):
        params["interface"] = doc["interface_name"]
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
        duration_s=t_end,
        throughput=flows,
        probes=probes,
        phases=[Phase("idle", 0.0, t_load, "idle"), Phase("loaded", t_load, t_end, "both")],
        parameters=params,
        reported=reported,
        start_unix_s=start,
    )
