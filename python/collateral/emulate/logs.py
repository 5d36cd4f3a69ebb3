"""The logs a run leaves (the router's, each endpoint's), read back into a Result: the
core's measurement computes every metric from them as it does for a simulated trial."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..result import Result
from ..schema import NOT_SET
from ..spec import Scenario

#: Router log events (the ``ev`` column): accepted by the queue, dropped, left the router
#: after the delay, and marked CE by the queue (the frame's ECN field rewritten to CE;
#: logged just before it leaves).
EV_QUEUED, EV_DROP, EV_LEFT, EV_CE, EV_LOST = 0, 1, 2, 3, 4
#: The router log's columns (``collateral-emu router --log``): ``tos`` is the TOS byte as
#: the frame arrived; ``qpkts``/``qbytes`` what the queue held (for a drop at an arrival,
#: before that arrival: at its limit there, the drop was an overflow).
ROUTER_LOG_COLUMNS = (
    "t_ns", "ev", "dir", "ip_len", "proto", "sport", "dport", "useq", "tos", "qpkts", "qbytes"
)  # fmt: skip
#: The kernel's "no ssthresh yet" (``TCP_INFINITE_SSTHRESH``, include/net/tcp.h), which
#: BBR keeps for good: stored as the schema's not-set value, as the simulator stores its own.
KERNEL_INFINITE_SSTHRESH = 0x7FFFFFFF


def read_csv(path: Path) -> np.ndarray:
    """A numeric CSV with a header line (and optional '#' comment lines) as int64 rows."""
    rows = [
        line.split(",")
        for line in path.read_text().splitlines()[1:]
        if line and not line.startswith("#") and not line[0].isalpha()
    ]
    if not rows:
        return np.zeros((0, 1))
    try:
        return np.array(rows, dtype=np.int64).reshape(len(rows), -1)
    except OverflowError:
        # A column beyond int64: the router log's `useq` of a UDP packet that carries no
        # sequence number there (the video call's RFC 8888 feedback begins with its
        # version bits set). Such a column is read as uint64 bits; the others as before.
        text = np.array(rows)
        cols = []
        for j in range(text.shape[1]):
            try:
                cols.append(text[:, j].astype(np.int64))
            except OverflowError:
                cols.append(text[:, j].astype(np.uint64).view(np.int64))
        return np.stack(cols, axis=1)


#: What the core's measurement takes for a packet that never arrived (``u64::MAX``: in
#: flight when the trial ended; ``u64::MAX - 1``: dropped by the router's queue;
#: ``u64::MAX - 2``: lost anywhere else).
IN_FLIGHT = np.uint64(2**64 - 1)
DROPPED_IN_QUEUE = np.uint64(2**64 - 2)
LOST_ELSEWHERE = np.uint64(2**64 - 3)


def router_drops(router: np.ndarray, dport: int) -> np.ndarray:
    """The router log's rows of UDP packets to port ``dport`` that it dropped (its queue)
    or lost (the emulated wire)."""
    if not len(router):
        return np.zeros((0, len(ROUTER_LOG_COLUMNS)), dtype=np.int64)
    dropped = (router[:, 1] == EV_DROP) | (router[:, 1] == EV_LOST)
    return router[dropped & (router[:, 4] == 17) & (router[:, 6] == dport)]


def arrivals(n: int, recv: np.ndarray, router: np.ndarray, dport: int, end_ns: int) -> np.ndarray:
    """Each of ``n`` numbered UDP packets to ``dport``: its arrival (trial-time ns) from
    the receiver's log (``seq,recv_ns,...``), else dropped by the router's queue by the
    trial's end ``end_ns``, else lost elsewhere if the router's emulated wire lost it by
    then, the router never saw it, or it left the router by the end (the receivers listen
    a little past it), else in flight at the end, as the simulator counts what its
    bottleneck holds then (the router still held it, or dropped, lost or let it leave
    only after the end)."""
    arrived = np.full(n, LOST_ELSEWHERE, dtype=np.uint64)
    if len(router):
        udp = router[(router[:, 4] == 17) & (router[:, 6] == dport)]
        udp = udp[(udp[:, 7] >= 0) & (udp[:, 7] < n)]
        seq, ev, by_end = udp[:, 7], udp[:, 1], udp[:, 0] <= end_ns
        arrived[seq] = IN_FLIGHT
        arrived[seq[((ev == EV_LEFT) | (ev == EV_LOST)) & by_end]] = LOST_ELSEWHERE
        arrived[seq[(ev == EV_DROP) & by_end]] = DROPPED_IN_QUEUE
    if len(recv):
        ok = (recv[:, 0] >= 0) & (recv[:, 0] < n)
        arrived[recv[ok, 0]] = np.maximum(recv[ok, 1], 0).astype(np.uint64)
    return arrived


def media_records(sc: Scenario, wd: Path, router: np.ndarray) -> dict[str, Any] | None:
    """The video call's records from ``media-send`` and ``media-recv``'s logs, as the
    core's measurement takes them (``_native.measure_testbed``'s ``media``); ``None``
    without a call. A report is lost when the router dropped it."""
    from .endpoints import FEEDBACK_PORT, MEDIA_PORT

    if not sc.calls:
        return None
    sent = read_csv(wd / "media-send.csv").reshape(-1, 4)
    frames = read_csv(wd / "media-frames.csv").reshape(-1, 3)
    target = np.loadtxt(wd / "media-target.csv", delimiter=",", skiprows=1, ndmin=2)
    made = read_csv(wd / "media-feedback.csv").reshape(-1, 4)
    n = len(sent)
    return {
        "sent": sent[:, 1].astype(np.uint64),
        "arrived": arrivals(n, read_csv(wd / "media-recv.csv"), router, MEDIA_PORT, sc.duration),
        "lens": sent[:, 2].astype(np.uint32),
        "frame": sent[:, 3].astype(np.uint32),
        "captured": frames[:, 0].astype(np.uint64),
        "first": frames[:, 1].astype(np.uint64),
        "count": frames[:, 2].astype(np.uint32),
        "target_t": target[:, 0].astype(np.uint64),
        "target_bps": target[:, 1].astype(np.float64),
        "feedback_sent": int(np.count_nonzero(made[:, 0] < sc.duration)),
        # Reports the router dropped by the end (later ones were in flight then).
        "feedback_lost": int(
            np.count_nonzero(router_drops(router, FEEDBACK_PORT)[:, 0] <= sc.duration)
        ),
    }


def web_records(sc: Scenario, wd: Path) -> str | None:
    """The web users' records from ``web-client`` and ``web-server``'s logs, as JSON for
    the core's measurement (``_native.measure_testbed``'s ``web_json``): each object
    with its server's counters (joined by the object's id; none where the server
    logged nothing), each page; ``None`` without web users."""
    if not sc.web:
        return None
    objects, pages = [], []
    for g in range(len(sc.web)):
        server = read_csv(wd / f"web{g}-server.csv").reshape(-1, 4)
        counters = {int(r[0]): r[1:] for r in server}
        for u, oid, opened, done, _req, reply, retries in read_csv(
            wd / f"web{g}-objects.csv"
        ).reshape(-1, 7):
            c = counters.get(int(oid))
            seg, re, rto = (int(x) for x in c) if c is not None else (None, None, None)
            objects.append(
                {
                    "user": int(u),
                    "opened_ns": max(int(opened), 0),
                    "done_ns": int(done) if done >= 0 else None,
                    "reply_bytes": int(reply),
                    "setup_retries": int(retries),
                    "segments_sent": seg,
                    "retransmits": re,
                    "timeouts": rto,
                }
            )
        for u, started, done in read_csv(wd / f"web{g}-pages.csv").reshape(-1, 3):
            pages.append(
                {
                    "user": int(u),
                    "started_ns": max(int(started), 0),
                    "done_ns": int(done) if done >= 0 else None,
                }
            )
    return json.dumps({"objects": objects, "pages": pages})


def delivered_after(recv: np.ndarray, warmup: int, end: int) -> int:
    """A bulk flow's bytes delivered in order by ``end`` that arrived after ``warmup``, as
    the simulator counts them (by arrival: data held out of order across the warm-up
    boundary is not counted when a retransmission releases it, so the goodput cannot
    exceed what crossed the bottleneck in the window). ``recv``: the receiver's log,
    rows ``t_ns, bytes read, bytes in order, data segments in, receive MSS``
    (``tcp_recv``): the bytes in order by the end less the data segments that had
    arrived by the warm-up, at the MSS. A log without the kernel's counts (all 0):
    the bytes read in the window."""

    def row(ts: int) -> np.ndarray | None:
        k = int(np.searchsorted(recv[:, 0], ts, side="right")) - 1
        return recv[k] if k >= 0 else None

    last, first = row(end), row(warmup)
    if last is None:
        return 0
    if recv.shape[1] >= 5 and last[3] > 0 and last[4] > 0:
        arrived = int(first[3]) * int(last[4]) if first is not None else 0
        return max(0, int(last[2]) - arrived)
    return int(last[1]) - (int(first[1]) if first is not None else 0)


def collect(sc: Scenario, wd: Path) -> Result:
    """Reads the endpoints' and the router's logs (all in trial time) and hands the
    records to the core's measurement, which computes every metric as it does for a
    simulated trial."""
    from .. import _native

    tcp_records, cwnd = [], {"time_s": [], "flow": [], "cwnd": [], "ssthresh": []}
    for i in range(len(sc.tcp)):
        recv = read_csv(wd / f"tcp{i}-recv.csv")
        send = read_csv(wd / f"tcp{i}-send.csv")
        cong = read_csv(wd / f"tcp{i}-congestion.csv")

        rtt = wd / f"tcp{i}-rtt.csv"  # a workload's self probes
        samples = read_csv(rtt).reshape(-1, 3) if rtt.exists() else np.zeros((0, 3))
        tcp_records.append(
            {
                "bytes_delivered": delivered_after(recv, sc.warmup, sc.duration),
                "congestion_times": [int(x) for x in cong[:, 0] if x >= 0],
                "retransmits": int(send[-1, 4]) if len(send) else 0,
                "rtt_samples": [
                    {"sent_ns": int(t), "rtt_ns": int(r), "acked_bytes": int(b)}
                    for t, r, b in samples
                    if t >= 0
                ],
            }
        )
        if len(send):
            cwnd["time_s"].append(send[:, 0] / 1e9)
            cwnd["flow"].append(np.full(len(send), i, dtype=np.uint32))
            cwnd["cwnd"].append(send[:, 1].astype(np.uint32))
            ssthresh = send[:, 2].astype(np.uint32)
            ssthresh[ssthresh >= KERNEL_INFINITE_SSTHRESH] = NOT_SET[("cwnd", "ssthresh")]
            cwnd["ssthresh"].append(ssthresh)
    log = wd / "router.csv"
    router = read_csv(log) if log.exists() else np.zeros((0, len(ROUTER_LOG_COLUMNS)))
    cbr_records = []
    for j in range(len(sc.cbr)):
        sent = read_csv(wd / f"cbr{j}-send.csv")
        n = len(sent)
        arrived = arrivals(n, read_csv(wd / f"cbr{j}-recv.csv"), router, 7001 + j, sc.duration)
        cbr_records.append(
            (
                np.maximum(sent[:, 1], 0).astype(np.uint64) if n else np.zeros(0, np.uint64),
                arrived,
                sent[:, 2].astype(np.uint32) if n else np.zeros(0, np.uint32),
            )
        )
    report = wd / "router.json"
    raw = _native.measure_testbed(
        sc.to_native_json(),
        json.dumps(tcp_records),
        cbr_records,
        report.read_text() if report.exists() else None,
        media_records(sc, wd, router),
        web_records(sc, wd),
    )

    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.array([], dtype=dtype)

    raw["traces"]["cwnd"] = {
        k: cat(v, np.float64 if k == "time_s" else np.uint32) for k, v in cwnd.items()
    }
    return Result(raw, sc)
