"""The testbed's logs read back: each numbered packet's fate from the receiver's and the
router's logs, as the core's measurement takes it (no namespaces, no real time)."""

from __future__ import annotations

import numpy as np

from collateral.emulate.logs import (
    DROPPED_IN_QUEUE,
    EV_DROP,
    EV_LEFT,
    EV_LOST,
    EV_QUEUED,
    IN_FLIGHT,
    LOST_ELSEWHERE,
    arrivals,
)

PORT, END = 7001, 10_000


def _row(t: int, ev: int, seq: int, dport: int = PORT, proto: int = 17) -> list[int]:
    # t_ns, ev, dir, ip_len, proto, sport, dport, useq, tos, qpkts, qbytes
    return [t, ev, 0, 214, proto, 6001, dport, seq, 0, 1, 214]


def test_each_packet_has_the_fate_the_logs_give_it():
    router = np.array(
        [
            _row(100, EV_QUEUED, 0), _row(200, EV_LEFT, 0),  # arrived
            _row(300, EV_QUEUED, 1), _row(400, EV_DROP, 1),  # dropped at a dequeue
            _row(500, EV_DROP, 2),  # dropped as it arrived
            _row(600, EV_QUEUED, 3), _row(700, EV_LEFT, 3),  # left in time, never arrived
            _row(9_000, EV_QUEUED, 4), _row(END + 1, EV_LEFT, 4),  # left after the end
            _row(9_500, EV_QUEUED, 5),  # still queued when the router stopped
            # 6: never reached the router
            _row(9_600, EV_QUEUED, 7, dport=PORT + 1),  # another flow's packet 7
            _row(9_700, EV_QUEUED, 8, proto=6),  # a TCP segment, not this flow's
            _row(9_800, EV_QUEUED, 9), _row(9_900, EV_LEFT, 9),  # arrived after the end
            _row(9_900, EV_QUEUED, 10), _row(END + 5, EV_DROP, 10),  # dropped after the end
            _row(END + 7, EV_DROP, 11),  # reached the router after the end, dropped there
            _row(9_950, EV_QUEUED, 12), _row(END, EV_LEFT, 12),  # left at the end, not seen
            _row(9_960, EV_QUEUED, 13), _row(9_990, EV_LOST, 13),  # the wire lost it
            _row(9_970, EV_QUEUED, 14), _row(END + 9, EV_LOST, 14),  # ... after the end
        ],
        dtype=np.int64,
    )  # fmt: skip
    recv = np.array([[0, 250, 0], [9, END + 50, 0]], dtype=np.int64)
    got = arrivals(15, recv, router, PORT, END)
    lost, dropped, flying = LOST_ELSEWHERE, DROPPED_IN_QUEUE, IN_FLIGHT
    want = [250, dropped, dropped, lost, flying, flying, lost, lost, lost, END + 50]
    want += [flying, flying, lost, lost, flying]
    assert got.dtype == np.uint64 and got.tolist() == [int(w) for w in want]


def test_without_a_router_log_an_unreceived_packet_is_lost():
    empty = np.zeros((0, 11), dtype=np.int64)
    got = arrivals(3, np.array([[1, 42, 0]], dtype=np.int64), empty, PORT, END)
    assert got.tolist() == [int(LOST_ELSEWHERE), 42, int(LOST_ELSEWHERE)]
