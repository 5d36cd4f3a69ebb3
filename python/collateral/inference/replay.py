"""Replay of a measured run in the simulator: the link :mod:`.estimate` inferred, loaded
as the measurement was (the same flows in the same directions over the same windows,
the same probes at the same spacing), and the measured and replayed probes' round trips
and delivered bytes side by side.

The probes are a pair of CBR flows of the measurement's probe size, one up and one down;
each up probe is paired with the down probe sent next after it arrived, as an echo
server answers it, so the pair's one-way delays add up to the round trip the client
would have timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .estimate import Inference, idle_mask, loaded_mask, probe_gap
from .observations import DIRECTIONS, Observations

#: The probe size when the measurement does not state it: irtt's default packet.
DEFAULT_PROBE_BYTES = 88
#: The AQM a replay runs when the inference says only "an AQM": CoDel, the one whose
#: standing delay an inferred target matches; flow queueing: FQ-CoDel.
REPLAY_AQM = {"aqm": "codel", "aqm (flow queueing)": "fq_codel"}


@dataclass
class Side:
    """One phase's figures, measured beside replayed."""

    phase: str
    measured: dict[str, float]
    replayed: dict[str, float]
    ks: float | None


def inferred_queue(inf: Inference, d: str) -> dict[str, Any]:
    """The queue the inference found in direction ``d``, as a scenario takes it."""
    kind = inf.get(f"queue_{d}").value
    if kind in REPLAY_AQM:
        return {"kind": REPLAY_AQM[kind]}
    buf = inf.get(f"buffer_{d}").value
    if kind == "fifo" and isinstance(buf, float):
        return {"limit": f"{max(1500, round(buf))}B", "rule": "fb-strict"}
    raise ValueError(f"{d}: no queue inferred ({kind or 'nothing'}): nothing to replay")


def scenario(inf: Inference, obs: Observations, queues: dict[str, Any] | None = None) -> Any:
    """The inferred link under the measurement's load (``queues``: per direction, a queue
    spec to use instead of the inferred one — the "what if")."""
    from ..spec import Scenario

    rates = {d: inf.get(f"capacity_{d}").value for d in DIRECTIONS}
    base = inf.get("base_rtt").value
    missing = [k for k, v in {**rates, "base_rtt": base}.items() if not isinstance(v, float)]
    if missing:
        raise ValueError(f"not inferred, so not replayable: {', '.join(missing)}")
    probe_bytes = obs.probe_bytes or DEFAULT_PROBE_BYTES
    gap = probe_gap(obs)
    # The probes' own rate was added to each capacity: the replayed probes take it again.
    cc = str(obs.parameters.get("cc") or "cubic")
    # The sender wrote for the test's length from its start (iperf3 -t); a receiver's
    # last byte comes a queue's drain later. Such a test's streams all start with its
    # first interval, though one may deliver nothing for seconds (starved, or behind a
    # loss on a slow line): started at its first byte, it would run on past the test.
    length = obs.parameters.get("length_s")
    end = float(np.max(obs.probe_sent_s)) + 1.0
    # A flow that starts once the probes are over loads nothing replayed: left out.
    starts = [(f, f.start_s if length else s[0], s) for f in obs.flows if (s := f.span())]
    tcp = [
        {
            "direction": f.direction,
            "cc": cc,
            "start": f"{start:.6f}s",
            "stop": f"{(f.start_s + length if length else s[1]):.6f}s",
            "start_spread": 0,
        }
        for f, start, s in starts
        if round(start, 6) < round(end, 3)
    ]
    cbr = [
        {"direction": d, "size": probe_bytes, "interval": f"{gap:.6f}s", "jitter": 0}
        for d in ("up", "down")
    ]
    queues = queues or {}
    return Scenario(
        down={
            "rate": round(rates["down"]),
            "queue": queues.get("down") or inferred_queue(inf, "down"),
            **inf.link_framing(),
        },
        up={
            "rate": round(rates["up"]),
            "queue": queues.get("up") or inferred_queue(inf, "up"),
            **inf.link_framing(),
        },
        rtt=f"{base:.9f}s",
        duration=f"{end:.3f}s",
        warmup="0s",
        tcp=tcp,
        cbr=cbr,
    )


def probe_rtts(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """(send times, round trips) of the replayed probes: each up probe with the down
    probe sent next after its arrival; NaN where either was lost."""
    c = result.to_pandas("cbr")
    up, down = c[c.direction == "up"], c[c.direction == "down"]
    d_sent = down.sent_s.to_numpy()
    d_owd = np.where(down.fate == "arrived", down.owd_s.to_numpy(), np.nan)
    t, rtt = [], []
    for s, o, f in zip(up.sent_s, up.owd_s, up.fate, strict=True):
        t.append(s)
        k = np.searchsorted(d_sent, s + o) if f == "arrived" else len(d_sent)
        rtt.append(o + d_owd[k] if k < len(d_sent) else np.nan)
    return np.asarray(t), np.asarray(rtt)


def _figures(x: np.ndarray) -> dict[str, float]:
    x = x[~np.isnan(x)]
    if not len(x):
        return {}
    p50, p95 = np.percentile(x, [50, 95])
    return {"p50_s": float(p50), "p95_s": float(p95), "n": float(len(x))}


def compare(inf: Inference, obs: Observations, result: Any) -> list[Side]:
    """Measured beside replayed: the probes' RTT p50/p95 and their KS distance per phase
    (idle, each direction's settled load), then each direction's delivered bytes."""
    from scipy.stats import ks_2samp

    t, rtt = probe_rtts(result)
    replay = Observations("replay", t, rtt, obs.probe_bytes, obs.flows)
    out = []
    for phase, m_mask, r_mask in [
        ("idle", idle_mask(obs), idle_mask(replay)),
        *((f"{d}load", loaded_mask(obs, d), loaded_mask(replay, d)) for d in DIRECTIONS),
    ]:
        a, b = obs.rtt_s[m_mask], rtt[r_mask]
        b = b[~np.isnan(b)]
        ks = float(ks_2samp(a, b).statistic) if len(a) and len(b) else None
        out.append(Side(phase, _figures(a), _figures(b), ks))
    for d in DIRECTIONS:
        got = sum(float(f.bytes.sum()) for f in obs.flows if f.direction == d)
        sim = sum(float(f["bytes_delivered"]) for f in result.tcp if f["direction"] == d)
        out.append(Side(f"{d} bytes", {"bytes": got}, {"bytes": sim}, None))
    return out


__all__ = ["DEFAULT_PROBE_BYTES", "Side", "compare", "probe_rtts", "scenario"]
