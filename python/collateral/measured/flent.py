"""Flent's data files (``.flent.gz``: gzip'd JSON; tohojo/flent ``flent/resultset.py``,
file format versions 1 to 4). Read: the metadata (test NAME, T0, LENGTH, STEP_SIZE,
TEST_PARAMETERS, SYSCTLS' congestion control, EGRESS_INFO's qdisc), the throughput
series (Mbit/s per STEP_SIZE, aligned with ``x_values``) and the latency series (ms).

Latency comes from ``raw_values`` (each sample's Unix time ``t``, ``val`` in ms, and
irtt's ``owd_up``/``owd_down`` when present) in version 4. Before version 4 the raw
values of some runners were stored in other units (netperf UDP_RR as transactions/s;
Flent converts them on load), so for versions 1-3 the aligned ``results`` series
(already in ms) are used instead: one sample per step, none where the step had none.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

from .common import Reader
from .records import ARRIVED, LOST, Measurement, Probes, Throughput

#: The newest format this reader knows (Flent's FILEFORMAT_VERSION).
NEWEST = 4


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and "x_values" in doc and "results" in doc and "metadata" in doc


def _kind(name: str) -> str | None:
    """ "down"/"up" for a throughput series, "rtt" for a latency one, None otherwise.
    Flent names them "TCP download::1", "TCP upload sum", "Ping (ms) ICMP",
    "Ping (ms) UDP BE", "UDP RTT"..."""
    n = name.lower()
    if "download" in n:
        return "down"
    if "upload" in n:
        return "up"
    if n.startswith("ping") or "rtt" in n or "latency" in n:
        return "rtt"
    return None


def _aggregate(name: str) -> bool:
    n = name.lower()
    return any(w in n for w in (" sum", " avg", "totals", "total"))


def _time(r: Reader, v: Any, key: str) -> float:
    """Flent's ISO dates (UTC when no offset is given) as Unix seconds."""
    if not isinstance(v, str):
        raise r.fail(f"metadata.{key}: expected a date, found {v!r:.40}")
    try:
        t = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise r.fail(f"metadata.{key}: {v!r:.40} is not a date") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.timestamp()


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "flent")
    version = doc.get("version", 1)
    if not isinstance(version, int) or not 1 <= version <= NEWEST:
        raise r.fail(f"version: {version!r} (this reader knows 1 to {NEWEST})")
    meta = r.get(doc, "metadata", "", dict)
    x = r.items(doc, "x_values", "")
    if not x:
        raise r.fail("x_values: empty (the test recorded nothing)")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in x):
        raise r.fail("x_values: not all numbers")
    results = r.get(doc, "results", "", dict)
    for name, series in results.items():
        if not isinstance(series, list) or len(series) != len(x):
            raise r.fail(f"results[{name!r}]: not a list as long as x_values ({len(x)})")
    step = float(meta.get("STEP_SIZE") or (x[1] - x[0] if len(x) > 1 else 0.2))
    t0_key = "T0" if meta.get("T0") else "TIME"
    t0 = _time(r, meta.get(t0_key), t0_key)

    throughput = []
    names = [n for n in results if _kind(n) in ("down", "up")]
    flows = [n for n in names if not _aggregate(n)]
    for name in flows or names:
        rates = results[name]
        have = [k for k, v in enumerate(rates) if isinstance(v, int | float)]
        if not have:
            continue
        a, b = have[0], have[-1]
        throughput.append(
            Throughput(
                direction=_kind(name),  # type: ignore[arg-type]
                end_s=[float(x[k]) for k in range(a, b + 1)],
                # Mbit/s over a step; a step with no value carried nothing measured.
                bytes=[round((rates[k] or 0) * 1e6 / 8 * step) for k in range(a, b + 1)],
                start_s=float(x[a]) - step,
                label=name,
            )
        )
    probes = []
    raw = doc.get("raw_values") or {}
    for name in results:
        if _kind(name) != "rtt":
            continue
        samples = raw.get(name) if version >= NEWEST else None
        if samples:
            probes.append(_raw_probes(r, name, samples, t0))
        else:
            ms = results[name]
            keep = [k for k, v in enumerate(ms) if isinstance(v, int | float)]
            probes.append(
                Probes(
                    sent_s=[float(x[k]) for k in keep],
                    rtt_s=[ms[k] / 1e3 for k in keep],
                    fate=[ARRIVED] * len(keep),
                    kind=_probe_kind(name),
                    label=name,
                )
            )
    if not throughput and not probes:
        raise r.fail("results: no throughput or latency series")
    params: dict[str, Any] = {"test": str(meta.get("NAME", "?"))}
    for key, col in (("LENGTH", "length_s"), ("STEP_SIZE", "step_s")):
        if isinstance(meta.get(key), int | float):
            params[col] = float(meta[key])
    for k, v in (meta.get("TEST_PARAMETERS") or {}).items():
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            params[f"flent_{k}"] = v
    cc = (meta.get("SYSCTLS") or {}).get("net.ipv4.tcp_congestion_control")
    if isinstance(cc, str):
        params["cc"] = cc
        for t in throughput:
            t.cc = cc
    qdiscs = (meta.get("EGRESS_INFO") or {}).get("qdiscs") or []
    roots = [q.get("name") for q in qdiscs if isinstance(q, dict) and q.get("parent") == "root"]
    if roots and isinstance(roots[0], str):
        params["qdisc"] = roots[0]
    if isinstance(meta.get("HOST"), str):
        params["host"] = meta["HOST"]
    return Measurement(
        tool="flent",
        source=str(path),
        duration_s=float(max(x)),
        throughput=throughput,
        probes=probes,
        parameters=params,
        start_unix_s=t0,
    )


def _probe_kind(name: str) -> str:
    n = name.lower()
    return "icmp" if "icmp" in n else "udp" if "udp" in n else "tcp" if "tcp" in n else "other"


def _raw_probes(r: Reader, name: str, samples: list[Any], t0: float) -> Probes:
    """A version 4 series' raw samples: Unix time ``t``, ``val`` (ms; absent when lost),
    and irtt's one-way delays ``owd_up``/``owd_down`` (ms) when it ran."""
    sent, rtt, fate, up, down = [], [], [], [], []
    for k, s in enumerate(samples):
        where = f"raw_values[{name!r}][{k}]"
        t = r.number(s, "t", where)
        val = s.get("val")
        lost = val is None or bool(s.get("lost"))
        sent.append(t - t0)
        rtt.append(math.nan if lost else float(val) / 1e3)
        fate.append(LOST if lost else ARRIVED)
        up.append(float(s["owd_up"]) / 1e3 if not lost and "owd_up" in s else math.nan)
        down.append(float(s["owd_down"]) / 1e3 if not lost and "owd_down" in s else math.nan)
    has_owd = any(not math.isnan(v) for v in up + down)
    return Probes(
        sent_s=sent,
        rtt_s=rtt,
        fate=fate,
        owd_up_s=up if has_owd else None,
        owd_down_s=down if has_owd else None,
        kind=_probe_kind(name),
        label=name,
    )
