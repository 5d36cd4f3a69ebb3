"""What if the measured link had another queue: the link :mod:`.estimate` inferred, under
Flent's RRUL load with a G.711 call both ways (as ``collateral reproduce
responsiveness`` runs it), with the queue as inferred and with FQ-CoDel, CAKE, DualPI2
and half the FIFO's buffer — the scores the core computes (RPM, bufferbloat grade, QoO)
and the call's delay, before and after, in one table and one figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .estimate import Inference
from .replay import inferred_queue

#: The load the scores are taken under: RRUL's eight CUBIC flows after 5 s idle, as
#: Flent marks them, and a G.711 call both ways (EF); 40 s, scored from 10 s.
TCP = [
    {"direction": d, "tag": tag, "start": "5s", "cc": "cubic", "profile": "linux-6"}
    for d in ("down", "up")
    for tag in (0, 8, 40, 46)
]
CALL = [{"direction": d, "app": "g711", "tag": 46} for d in ("down", "up")]
#: The call's flows in the summary: after RRUL's eight probe flows.
CALL_FLOWS = {"down": 8, "up": 9}
#: Summary columns shown per variant: the core's scores, then the call's delay.
SCORES = ("rpm", "rpm_band", "bufferbloat_grade", "qoo_voip", "latency_loaded_s")


@dataclass
class Variant:
    """A queue for both directions, by name, and the summary of its trial."""

    name: str
    queues: dict[str, Any]
    summary: dict[str, Any] | None = None


def variants(inf: Inference) -> list[Variant]:
    """The inferred queue, then the cures (both directions alike)."""
    rate = {d: round(inf.get(f"capacity_{d}").value) for d in ("down", "up")}
    out = [Variant("as inferred", {d: inferred_queue(inf, d) for d in ("down", "up")})]
    out.append(Variant("fq_codel", {d: {"kind": "fq_codel"} for d in rate}))
    # CAKE shaped at the inferred rate, with the framing given (CAKE's overhead keywords).
    f = inf.framing
    extra = {} if f is None else {"overhead": f.overhead, "atm": f.atm}
    cake = {"kind": "cake", "diffserv": "besteffort", **extra}
    out.append(Variant("cake", {d: {**cake, "bandwidth": rate[d]} for d in rate}))
    out.append(Variant("dualpi2", {d: {"kind": "dualpi2"} for d in rate}))
    fifo = {d: inf.get(f"buffer_{d}").value for d in rate}
    if all(isinstance(b, float) for b in fifo.values()):
        out.append(
            Variant(
                "fifo, half the buffer",
                {
                    d: {"limit": f"{max(3000, round(b / 2))}B", "rule": "fb-strict"}
                    for d, b in fifo.items()
                },
            )
        )
    return out


def scenario(inf: Inference, queues: dict[str, Any], seed: int = 1) -> Any:
    from ..spec import Scenario

    return Scenario(
        down={
            "rate": round(inf.get("capacity_down").value),
            "queue": queues["down"],
            **inf.link_framing(),
        },
        up={
            "rate": round(inf.get("capacity_up").value),
            "queue": queues["up"],
            **inf.link_framing(),
        },
        rtt=f"{inf.get('base_rtt').value:.9f}s",
        duration="40s",
        warmup="10s",
        seed=seed,
        workload={"kind": "rrul"},
        tcp=TCP,
        cbr=CALL,
    )


def what_if(inf: Inference, seed: int = 1) -> list[Variant]:
    """Every variant's trial, run in parallel (the core's threads)."""
    from ..api import simulate_many

    vs = variants(inf)
    for v, r in zip(vs, simulate_many([scenario(inf, v.queues, seed) for v in vs]), strict=True):
        v.summary = r.summary
    return vs


def row(v: Variant) -> dict[str, Any]:
    """The variant's scores and its call's delay (p95) and loss each way, flat: a QoO of
    0 beside a short delay is the call's loss, which the row shows."""
    s = v.summary or {}
    out: dict[str, Any] = {"queue": v.name, **{k: s.get(k) for k in SCORES}}
    for d, i in CALL_FLOWS.items():
        out[f"call_{d}_delay_p95_s"] = s["cbr"][i]["delay_p95_s"] if s.get("cbr") else None
    for d, i in CALL_FLOWS.items():
        out[f"call_{d}_loss_rate"] = s["cbr"][i]["loss_rate"] if s.get("cbr") else None
    return out
