"""Measurements of real links imported as trials (``collateral import``): each tool's
parser turns a file into the plain records of :mod:`.records`; the core
(``_native.measure_measured``) computes every figure from them in the simulator's
schema; :mod:`.importer` stores the trial (mode ``"measured"``) so that ``query``,
``plot``, ``compare`` and the report read it as they read a simulated one.

Tools: irtt (JSON), iperf3 (``-J``), Flent (``.flent.gz``, formats 1-4),
networkQuality (``-c``), crusader (``export``). The tool is told by the file's keys.

What a measured directory keeps beside the summary, for readers that fit a link to it
(``collateral infer``): ``rtt`` (every probe: send time, round trip, fate, and what
loaded the link then: 0 idle, 1 download, 2 upload, 3 both), ``throughput`` (every
reporting interval of every flow: end time, length, direction, bytes) and ``cbr`` (each
direction's one-way delays where the tool measured them); the summary's ``phases``
hold the idle and loaded intervals with each direction's throughput in them.
"""

from __future__ import annotations

from pathlib import Path

from . import crusader, flent, iperf3, irtt, network_quality
from .common import load_json
from .records import ImportProblem, Measurement, Phase, Probes, Throughput

#: The parsers, in the order a file's keys are tried against them.
PARSERS = (irtt, iperf3, flent, network_quality, crusader)

__all__ = [
    "ImportProblem",
    "Measurement",
    "Phase",
    "Probes",
    "Throughput",
    "combine",
    "read",
]


def read(path: str | Path) -> Measurement:
    """The measurement in ``path``; ImportProblem (one line naming it) when it is not a
    file of a known tool or is damaged."""
    p = Path(path)
    doc = load_json(p)
    for parser in PARSERS:
        if parser.looks_like(doc):
            m = parser.parse(p, doc)
            _check_times(m)
            return m
    keys = ", ".join(list(doc)[:6]) if isinstance(doc, dict) else type(doc).__name__
    raise ImportProblem(
        f"{p}: not a file of irtt, iperf3 -J, Flent, networkQuality -c or crusader export"
        f" (found {keys})"
    )


def _check_times(m: Measurement) -> None:
    for t in m.throughput:
        if not t.end_s:
            raise ImportProblem(f"{m.source}: {m.tool}: flow {t.label!r} has no interval")
    for p in m.probes:
        if not p.sent_s:
            raise ImportProblem(f"{m.source}: {m.tool}: probes {p.label!r}: none")


#: Seconds two files' spans may lie apart and still be of one run: iperf3 stamps its
#: start in whole seconds, and a session's tests run one after the other (a download,
#: then an upload a few seconds later).
OVERLAP_SLACK_S = 60.0


def _check_overlap(ms: list[Measurement]) -> None:
    """Files of one run form one stretch of time, each within OVERLAP_SLACK_S of the
    others' (irtt of one run beside iperf3 of another, 15 minutes later, would be put on
    one clock as a run with a long gap, its probes taken for idle ones)."""
    import datetime as dt

    spans = sorted(
        ((m.start_unix_s or 0.0, (m.start_unix_s or 0.0) + m.duration_s, m) for m in ms),
        key=lambda s: s[0],
    )
    reach = spans[0][1]
    for t0, t1, m in spans[1:]:
        if t0 > reach + OVERLAP_SLACK_S:  # a gap no file bridges: two runs
            when = dt.datetime.fromtimestamp(t0, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            raise ImportProblem(
                f"{m.source}: starts at {when}, {t0 - reach:.0f} s after the files before it"
                " end: files of one run lie together in time; import each run alone"
            )
        reach = max(reach, t1)


def combine(ms: list[Measurement]) -> Measurement:
    """Files of one run (irtt beside iperf3) as one measurement on one clock: each
    shifted by its wall-clock start against the earliest. A file without a start time
    can only be imported alone. Times before the zero (Flent's raw samples may precede
    its T0) move the zero back."""
    if len(ms) > 1:
        missing = [m.source for m in ms if m.start_unix_s is None]
        if missing:
            raise ImportProblem(
                f"{missing[0]}: gives no wall-clock start, so it cannot be put on one clock"
                " with the other files; import it alone"
            )
        _check_overlap(ms)
    zero = min((m.start_unix_s or 0.0) for m in ms)
    out = Measurement(
        tool="+".join(dict.fromkeys(m.tool for m in ms)),
        source=" ".join(m.source for m in ms),
        duration_s=0.0,
        start_unix_s=zero if ms[0].start_unix_s is not None else None,
    )
    for m in ms:
        dt = (m.start_unix_s or 0.0) - zero
        for t in m.throughput:
            t.start_s += dt
            t.end_s = [x + dt for x in t.end_s]
            out.throughput.append(t)
        for p in m.probes:
            p.sent_s = [x + dt for x in p.sent_s]
            out.probes.append(p)
        for ph in m.phases:
            out.phases.append(Phase(ph.name, ph.start_s + dt, ph.end_s + dt, ph.load))
        out.duration_s = max(out.duration_s, m.duration_s + dt)
        for k, v in m.parameters.items():
            out.parameters.setdefault(k, v)
        out.reported.update({f"{m.tool}_{k}": v for k, v in m.reported.items()})
    early = min(
        [0.0, *(t.start_s for t in out.throughput), *(x for p in out.probes for x in p.sent_s)]
    )
    if early < 0:
        for t in out.throughput:
            t.start_s -= early
            t.end_s = [x - early for x in t.end_s]
        for p in out.probes:
            p.sent_s = [x - early for x in p.sent_s]
        out.phases = [
            Phase(ph.name, ph.start_s - early, ph.end_s - early, ph.load) for ph in out.phases
        ]
        out.duration_s -= early
        if out.start_unix_s is not None:
            out.start_unix_s += early
    out.parameters["tool"] = out.tool
    if len(ms) > 1:
        _warn_unprobed(ms)
    return out


def _warn_unprobed(ms: list[Measurement]) -> None:
    """A warning for a load no probe of another file was sent during (on the one clock
    :func:`combine` put them on): files of one run whose times do not meet (a download
    before irtt started) leave that load's latency unmeasured, and the scores are of
    the other loads alone."""
    import warnings

    sent = sorted(x for m in ms for p in m.probes for x in p.sent_s)
    if not sent:
        return
    import bisect

    for m in ms:
        for t in m.throughput:
            start, end = t.start_s, max(t.end_s)
            i = bisect.bisect_left(sent, start)
            if i == len(sent) or sent[i] > end:
                warnings.warn(
                    f"{m.source}: {t.label}: no probe was sent during this load"
                    f" ({start:.1f}-{end:.1f} s on the run's clock, probes"
                    f" {sent[0]:.1f}-{sent[-1]:.1f} s): its latency is not measured;"
                    " are the files of one run?",
                    stacklevel=2,
                )
                break
