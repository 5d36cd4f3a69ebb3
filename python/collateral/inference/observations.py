"""What the inference reads from a measured run: the probes' round trips with their send
times, and each direction's bytes per interval, as arrays on one clock — taken from the
``rtt`` and ``throughput`` traces and the summary that ``collateral import`` stored
(or straight from the parsed records, :func:`from_measurement`).

Where each direction was loaded is read from the throughput itself (the intervals in
which its flows moved bytes), not from the tools' start times alone: iperf3 stamps its
start to the whole second, so a phase can look up to a second earlier than it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Directions, in the ``throughput`` trace's codes (0 down, 1 up).
DIRECTIONS = ("down", "up")


class InferenceProblem(ValueError):
    """A run the inference cannot read: one line naming it and what is missing."""


@dataclass
class Flow:
    """One flow's intervals: ``bytes[k]`` moved in ``(end_s[k] - length_s[k], end_s[k]]``."""

    direction: str
    end_s: np.ndarray
    length_s: np.ndarray
    bytes: np.ndarray

    @property
    def start_s(self) -> float:
        """When its first interval began, whether or not that one moved bytes."""
        return float(self.end_s[0] - self.length_s[0])

    def span(self) -> tuple[float, float] | None:
        """From the start of its first interval that moved bytes to the end of its last
        (a sender's count may show empty intervals mid-flow); None if it moved none."""
        moved = np.flatnonzero(self.bytes > 0)
        if not len(moved):
            return None
        i, j = moved[0], moved[-1]
        return float(self.end_s[i] - self.length_s[i]), float(self.end_s[j])


@dataclass
class Observations:
    """A measured run as the estimators take it. ``rtt_s`` is NaN for a lost probe;
    ``probe_bytes`` the probes' IP size (0: unknown); ``retransmits`` per direction
    where the tool reported them."""

    source: str
    probe_sent_s: np.ndarray
    rtt_s: np.ndarray
    probe_bytes: int
    flows: list[Flow] = field(default_factory=list)
    retransmits: dict[str, int] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    def windows(self, direction: str) -> list[tuple[float, float]]:
        """When ``direction`` was loaded: its flows' spans, overlapping ones merged."""
        spans = [s for f in self.flows if f.direction == direction and (s := f.span())]
        out: list[list[float]] = []
        for a, b in sorted(spans):
            if out and a <= out[-1][1] + 0.5:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
        return [(a, b) for a, b in out]


def from_measurement(m: Any) -> Observations:
    """The records of :mod:`collateral.measured` (before they are stored)."""
    if not m.probes:
        raise InferenceProblem(f"{m.source}: no latency probes (irtt, ping, Flent's ...)")
    p = m.probes[0]
    flows = [
        Flow(
            t.direction,
            np.asarray(t.end_s, float),
            np.diff(np.asarray([t.start_s, *t.end_s], float)),
            np.asarray(t.bytes, float),
        )
        for t in m.throughput
    ]
    retrans: dict[str, int] = {}
    for t in m.throughput:
        if t.retransmits is not None:
            retrans[t.direction] = retrans.get(t.direction, 0) + t.retransmits
    return Observations(
        source=m.source,
        probe_sent_s=np.asarray(p.sent_s, float),
        rtt_s=np.asarray(p.rtt_s, float),
        probe_bytes=int(p.bytes or m.parameters.get("probe_bytes", 0) or 0),
        flows=flows,
        retransmits=retrans,
        parameters=dict(m.parameters),
    )


def from_store(path: str | Path) -> Observations:
    """The run stored by ``collateral import`` in ``path`` (one measured trial)."""
    from ..store import StoreError, open_store

    try:
        st = open_store(path)
        summary = st.summary()
    except (StoreError, OSError) as e:
        raise InferenceProblem(f"{path}: {e}") from None
    if len(summary) != 1 or summary["mode"].iloc[0] != "measured":
        modes = sorted(set(summary["mode"])) if len(summary) else []
        raise InferenceProblem(
            f"{path}: holds {len(summary)} trial(s) of mode {', '.join(modes) or 'none'};"
            " infer reads one measured run: import each run into a directory of its own"
            " (collateral import FILES -o DIR)"
        )
    row = summary.iloc[0].to_dict()
    # An import of the probes alone, or of the load alone, stores one of the two tables.
    have = set(st.tables())
    missing = [
        what
        for t, what in (
            ("rtt", "latency probes (e.g. irtt)"),
            ("throughput", "load (e.g. iperf3)"),
        )
        if t not in have
    ]
    if missing:
        raise InferenceProblem(
            f"{path}: the run has no {' and no '.join(missing)}; infer needs both in one"
            " measurement (collateral import PROBES LOAD -o DIR)"
        )
    rtt = st.query("SELECT time_s, probe, rtt_s FROM rtt WHERE probe = 0 ORDER BY time_s")
    if rtt.empty:
        raise InferenceProblem(f"{path}: no latency probes in the run")
    tp = st.query(
        "SELECT flow, direction, time_s, interval_s, bytes FROM throughput ORDER BY flow, time_s"
    )
    flows = [
        Flow(
            DIRECTIONS[int(g["direction"].iloc[0])],
            g["time_s"].to_numpy(float),
            g["interval_s"].to_numpy(float),
            g["bytes"].to_numpy(float),
        )
        for _, g in tp.groupby("flow", sort=True)
    ]
    retrans: dict[str, int] = {}
    for i, f in enumerate(flows):
        v = row.get(f"tcp{i}_retransmits")
        if v is not None and v == v:
            retrans[f.direction] = retrans.get(f.direction, 0) + int(v)
    params = {k: v for k, v in row.items() if isinstance(v, str | int | float) and v == v}
    return Observations(
        source=str(row.get("source") or path),
        probe_sent_s=rtt["time_s"].to_numpy(float),
        rtt_s=rtt["rtt_s"].to_numpy(float),
        probe_bytes=int(row.get("probe_bytes") or 0),
        flows=flows,
        retransmits=retrans,
        parameters=params,
    )
