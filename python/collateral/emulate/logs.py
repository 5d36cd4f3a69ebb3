"""The logs a run leaves (the router's, each endpoint's), read back into a Result: the
core's measurement computes every metric from them as it does for a simulated trial."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..result import Result
from ..spec import Scenario

#: Router log events (the ``ev`` column): accepted by the queue, dropped, left the router
#: after the delay, and marked CE by the queue (the frame's ECN field rewritten to CE;
#: logged just before it leaves).
EV_QUEUED, EV_DROP, EV_LEFT, EV_CE = 0, 1, 2, 3
#: The router log's columns (``collateral-emu router --log``): ``tos`` is the TOS byte as
#: the frame arrived; ``qpkts``/``qbytes`` what the queue held (for a drop at an arrival,
#: before that arrival: at its limit there, the drop was an overflow).
ROUTER_LOG_COLUMNS = (
    "t_ns", "ev", "dir", "ip_len", "proto", "sport", "dport", "useq", "tos", "qpkts", "qbytes"
)  # fmt: skip


def read_csv(path: Path) -> np.ndarray:
    """A numeric CSV with a header line (and optional '#' comment lines) as int64 rows."""
    rows = [
        line.split(",")
        for line in path.read_text().splitlines()[1:]
        if line and not line.startswith("#") and not line[0].isalpha()
    ]
    return np.array(rows, dtype=np.int64).reshape(len(rows), -1) if rows else np.zeros((0, 1))


#: What the core's measurement takes for a packet that never arrived (``u64::MAX - 1``:
#: dropped by the router's queue; ``u64::MAX - 2``: lost anywhere else).
DROPPED_IN_QUEUE = np.uint64(2**64 - 2)
LOST_ELSEWHERE = np.uint64(2**64 - 3)


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

        def bytes_at(ts: int, recv: np.ndarray = recv) -> int:
            k = np.searchsorted(recv[:, 0], ts, side="right") - 1
            return int(recv[k, 1]) if k >= 0 else 0

        tcp_records.append(
            {
                "bytes_delivered": bytes_at(sc.duration) - bytes_at(sc.warmup),
                "congestion_times": [int(x) for x in cong[:, 0] if x >= 0],
                "retransmits": int(send[-1, 4]) if len(send) else 0,
            }
        )
        if len(send):
            cwnd["time_s"].append(send[:, 0] / 1e9)
            cwnd["flow"].append(np.full(len(send), i, dtype=np.uint32))
            cwnd["cwnd"].append(send[:, 1].astype(np.uint32))
            cwnd["ssthresh"].append(send[:, 2].astype(np.uint32))
    log = wd / "router.csv"
    router = read_csv(log) if log.exists() else np.zeros((0, len(ROUTER_LOG_COLUMNS)))
    cbr_records = []
    for j in range(len(sc.cbr)):
        sent = read_csv(wd / f"cbr{j}-send.csv")
        recv = read_csv(wd / f"cbr{j}-recv.csv")
        n = len(sent)
        arrived = np.full(n, LOST_ELSEWHERE, dtype=np.uint64)
        if len(router):
            x = router[
                (router[:, 1] == EV_DROP) & (router[:, 4] == 17) & (router[:, 6] == 7001 + j)
            ]
            seqs = x[:, 7][x[:, 7] < n]
            arrived[seqs] = DROPPED_IN_QUEUE
        if len(recv):
            ok = (recv[:, 0] >= 0) & (recv[:, 0] < n)
            arrived[recv[ok, 0]] = np.maximum(recv[ok, 1], 0).astype(np.uint64)
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
    )

    def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.array([], dtype=dtype)

    raw["traces"]["cwnd"] = {
        k: cat(v, np.float64 if k == "time_s" else np.uint32) for k, v in cwnd.items()
    }
    return Result(raw, sc)
