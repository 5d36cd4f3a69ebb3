"""Built-in workloads: Flent's RRUL (``rrul``) and its best-effort variant
(``rrul_be``), whose flows and probes the core defines (``collateral_model::rrul``;
``_native.workload_flows``). A workload becomes ordinary flows of the scenario: four TCP
downloads and four uploads with their DSCP marks, and its round-trip probes as the
first CBR flows; the scenario carries the workload too, so the core computes the
trial's scores (RPM, grade, AIM, QoO) from those probes."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ValidationError, field_validator

from .. import _native
from ..vocabulary import SEND_BUFFERS, WORKLOADS
from .tcp import TcpSpec
from .traffic import CbrSpec
from .types import Duration, Model


class WorkloadSpec(Model):
    """A built-in workload and its timing: the probes run from the start; the TCP flows
    start after ``idle`` (the probes sent before give the idle latency); probes count
    as loaded from ``idle + settle`` on. Probes and self-probe samples every
    ``probe_interval`` (Flent's step)."""

    kind: Literal[WORKLOADS]  # type: ignore[valid-type]
    idle: Duration = 5_000_000_000
    settle: Duration = 5_000_000_000
    probe_interval: Duration = 200_000_000
    #: The responsiveness test's self probes wait behind the sender's unsent bytes:
    #: ``draft`` (TCP_NOTSENT_LOWAT at 5 ms of throughput, as the draft asks), ``autotuned``
    #: (Linux's send buffer without it: about a window, one more RTT) or ``empty``
    #: (the bare RTT); ``collateral_model::resp_probe::SendBuffer``.
    send_buffer: Literal[SEND_BUFFERS] = "draft"  # type: ignore[valid-type]

    @field_validator("probe_interval")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be positive, e.g. 200ms")
        return v

    def to_native(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "idle_ns": self.idle,
            "settle_ns": self.settle,
            "probe_interval_ns": self.probe_interval,
        }
        # The core's default (draft) is left out, so a scenario's JSON stays as it was.
        if self.send_buffer != "draft":
            out["send_buffer"] = self.send_buffer
        return out

    def flows(self, template: dict[str, Any]) -> tuple[list[TcpSpec], list[CbrSpec]]:
        """The workload's TCP flows (``template``'s settings; RRUL: 4 down then 4 up, each
        with its mark, starting after ``idle``; the responsiveness ramp: 16 each way, one
        more per saturation interval) and its probes as CBR flows, as the core defines
        them."""
        parts = _native.workload_flows(json.dumps(self.to_native()))
        ns = "{}ns".format  # the core's integers; a bare number would read as seconds
        # RRUL's flows start together (the template's spread applies); the ramp's on its
        # schedule.
        ramp = {"start_spread": 0} if self.kind == "responsiveness" else {}
        tcp = [
            TcpSpec.model_validate(
                {**template, **ramp, "direction": t["direction"], "tag": t["tag"]}
                | {"start": ns(t["start_ns"])}
            )
            for t in parts["tcp"]
        ]
        cbr = [
            CbrSpec(
                direction=c["direction"],
                size=c["packet_bytes"],
                interval=ns(c["interval_ns"]),
                jitter=ns(c["jitter_ns"]),
                start=ns(c["start_ns"]),
                tag=c["tag"],
            )
            for c in parts["cbr"]
        ]
        return tcp, cbr

    def probe_label(self, cbr: list[CbrSpec], j: int) -> str | None:
        """The row name of CBR flow ``j`` (``probe EF``, ``probe BE``) when it is one of
        the workload's probes (its first CBR flows); None otherwise."""
        if j >= len(self.flows({})[1]):
            return None
        from ..vocabulary import DSCP

        tag = cbr[j].tag
        names = [n for n, code in DSCP.items() if code == tag and n != "DF"]
        return f"probe {names[0] if names else tag}"


def complete_flows(data: dict[str, Any]) -> dict[str, Any]:
    """A scenario's data with its workload's flows where they are missing: the probes
    first among the CBR flows unless they are there already (a scenario that comes
    back from a dump), and the TCP flows (default settings) when none are given. So a
    TOML ``workload = {kind = "rrul"}`` alone is a whole RRUL trial. Data this cannot
    read is returned as it is, for the model's own validation to report."""
    try:
        w = WorkloadSpec.model_validate(data["workload"])
        tcp, probes = w.flows({})
        cbr = list(data.get("cbr") or [])
        head = [CbrSpec.model_validate(c) for c in cbr[: len(probes)]]
    except (ValidationError, TypeError, ValueError):
        return data
    out = dict(data)
    if head != probes:
        out["cbr"] = [*probes, *cbr]
    if not data.get("tcp"):
        out["tcp"] = tcp
    return out
