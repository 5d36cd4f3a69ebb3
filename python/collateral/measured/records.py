"""What an imported measurement is made of, before the core scores it: the plain
records each tool's parser (:mod:`.irtt`, :mod:`.iperf3`, :mod:`.flent`,
:mod:`.network_quality`, :mod:`.crusader`) turns its file into, and that
``_native.measure_measured`` turns into a trial of mode ``"measured"`` in the
simulator's schema (summary, ``cbr``, ``rtt`` and ``throughput`` traces).

Everything is kept as the tool gave it, on one clock: times are seconds from the
measurement's start (the tool's own zero: irtt's first send, iperf3's stream start,
Flent's ``T0``), delays are seconds, byte counts are integers. A quantity the tool does
not report is ``None`` (a lost probe's RTT is NaN), never a guess. A later reader
(``collateral infer``: base RTT, capacity per direction, buffer size) needs three raw
series, and they are all here: the throughput of each direction over time
(:class:`Throughput`), every probe with its send time (:class:`Probes`), and which
intervals were idle or loaded, in which direction, when the file says so
(:class:`Phase`).

Parsers validate what they read and raise :class:`ImportProblem` with one line naming
the file; nothing is written for a file that fails.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["down", "up"]
#: What loaded the link during a phase: nothing, the download, the upload, or both.
Load = Literal["idle", "down", "up", "both"]
#: Codes of a probe's fate (the ``rtt`` trace's ``fate`` column): arrived both ways,
#: lost on the way up, on the way down, lost (the tool does not say which way).
ARRIVED, LOST_UP, LOST_DOWN, LOST = 0, 1, 2, 3


class ImportProblem(ValueError):
    """A measurement file that cannot be imported: the message is one line naming the
    file and what is wrong with it."""


@dataclass
class Throughput:
    """Bytes one flow (or the tool's total for a direction, ``flow`` None) moved in
    each interval: ``bytes[k]`` between ``end_s[k-1]`` (0 for k = 0, or ``start_s``) and
    ``end_s[k]``. As the receiver counted them where the tool says so (iperf3's
    receiver intervals), else as the sender did."""

    direction: Direction
    end_s: list[float]
    bytes: list[int]
    start_s: float = 0.0
    label: str = ""
    #: Congestion control of the flow's sender when the file names it.
    cc: str | None = None
    #: Segments the sender retransmitted (iperf3's ``retransmits``), when reported.
    retransmits: int | None = None


@dataclass
class Probes:
    """A stream of latency probes: per probe, when it was sent and its round trip and
    one-way delays (seconds; NaN where lost or not measured). ``owd_up_s`` and
    ``owd_down_s`` are None when the tool times only round trips (or its clocks are not
    synchronised); ``fate`` holds the codes :data:`ARRIVED`, :data:`LOST_UP`,
    :data:`LOST_DOWN`, :data:`LOST`."""

    sent_s: list[float]
    rtt_s: list[float]
    fate: list[int]
    owd_up_s: list[float] | None = None
    owd_down_s: list[float] | None = None
    #: IP bytes of a probe (irtt's packet length plus headers) when known, else 0.
    bytes: int = 0
    #: What the probe is: "udp" (irtt, crusader), "icmp" (ping), "tcp" (a handshake),
    #: "http" (networkQuality's self and foreign probes)...
    kind: str = "udp"
    label: str = ""
    #: networkQuality's probe roles for RPM: "foreign_tcp", "foreign_tls", "foreign_http",
    #: "self_http"; "" for plain latency probes.
    role: str = ""


@dataclass
class Phase:
    """An interval of the measurement and what loaded the link in it."""

    name: str
    start_s: float
    end_s: float
    load: Load


@dataclass
class Measurement:
    """One measurement file, as records. ``parameters`` are the test's settings as
    stored columns (``tool``, ``qdisc``, ``cc``, ``test``, ``length_s``, ``interval_s``,
    ``host``...: only those the file states); ``reported`` holds the tool's own
    summary figures where it computed some (networkQuality's RPM, iperf3's end sums),
    kept for reference beside the core's."""

    tool: str
    source: str
    duration_s: float
    throughput: list[Throughput] = field(default_factory=list)
    probes: list[Probes] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    reported: dict[str, Any] = field(default_factory=dict)
    #: Wall-clock time of the measurement's zero (Unix seconds) when the file gives it:
    #: how files of one run (irtt beside iperf3) are put on one clock.
    start_unix_s: float | None = None

    def to_native_json(self) -> str:
        """The records as ``_native.measure_measured`` reads them: integer ns for times
        and delays (-1 for a NaN delay), the rest as is."""

        def ns(x: float) -> int:
            return -1 if x is None or math.isnan(x) else round(x * 1e9)

        def opt(xs: list[float] | None) -> list[int] | None:
            return None if xs is None else [ns(x) for x in xs]

        body = {
            "tool": self.tool,
            "duration_ns": ns(self.duration_s),
            "throughput": [
                {
                    "direction": t.direction,
                    "start_ns": ns(t.start_s),
                    "end_ns": [ns(x) for x in t.end_s],
                    "bytes": [int(b) for b in t.bytes],
                    "cc": t.cc,
                    "retransmits": t.retransmits,
                }
                for t in self.throughput
            ],
            "probes": [
                {
                    "sent_ns": [ns(x) for x in p.sent_s],
                    "rtt_ns": [ns(x) for x in p.rtt_s],
                    "owd_up_ns": opt(p.owd_up_s),
                    "owd_down_ns": opt(p.owd_down_s),
                    "fate": [int(f) for f in p.fate],
                    "bytes": int(p.bytes),
                    "role": p.role,
                }
                for p in self.probes
            ],
            "phases": [
                {
                    "name": ph.name,
                    "start_ns": ns(ph.start_s),
                    "end_ns": ns(ph.end_s),
                    "load": ph.load,
                }
                for ph in self.phases
            ],
        }
        return json.dumps(body, separators=(",", ":"))
