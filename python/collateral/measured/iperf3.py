"""iperf3's JSON (``iperf3 -J``): per stream, the bytes of each reporting interval as
the client saw them (the receiver's count with ``-R``; without, the sender's, less what
the receiver's count at the end says never arrived), which
way it went (``sender`` true: the client sent, upstream), the retransmits and the
congestion control the run used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .common import Reader
from .records import Measurement, Throughput


def looks_like(doc: Any) -> bool:
    return isinstance(doc, dict) and "start" in doc and "intervals" in doc and "end" in doc


def parse(path: Path, doc: Any) -> Measurement:
    r = Reader(path, "iperf3")
    if isinstance(doc.get("error"), str):
        raise r.fail(f"the run failed: {doc['error']}")
    start = r.get(doc, "start", "", dict)
    test = r.get(start, "test_start", "start", dict)
    protocol = str(test.get("protocol", "TCP"))
    intervals = r.items(doc, "intervals", "")
    if not intervals:
        raise r.fail("intervals: empty (the test ended before its first report)")
    end = r.get(doc, "end", "", dict)
    reverse = bool(test.get("reverse", 0))
    # An upload's client counts what it wrote to its sockets, in bursts (a slow link's
    # second may show nothing); with --get-server-output from a server run with -J the
    # receiver's own intervals come along, and they are what crossed the link.
    server = doc.get("server_output_json")
    by_receiver = not reverse and isinstance(server, dict) and bool(server.get("intervals"))
    if by_receiver:
        intervals = r.items(server, "intervals", "server_output_json")
    by_socket: dict[Any, Throughput] = {}
    for k, iv in enumerate(intervals):
        for j, s in enumerate(r.items(iv, "streams", f"intervals[{k}]")):
            where = f"intervals[{k}].streams[{j}]"
            if s.get("omitted"):
                continue
            sock = s.get("socket", j)
            t0 = r.number(s, "start", where, 0)
            t1 = r.number(s, "end", where, t0)
            b = int(r.number(s, "bytes", where, 0))
            sender = True if by_receiver else s.get("sender", not reverse)
            tr = by_socket.get(sock)
            if tr is None:
                tr = by_socket[sock] = Throughput(
                    direction="up" if sender else "down",
                    end_s=[],
                    bytes=[],
                    start_s=t0,
                    label=f"iperf3 stream {sock}",
                )
            elif tr.end_s and abs(t0 - tr.end_s[-1]) > 1e-3:
                raise r.fail(
                    f"{where}: starts at {t0} s, the stream's last ended at {tr.end_s[-1]} s"
                )
            tr.end_s.append(t1)
            tr.bytes.append(b)
    if not by_socket:
        raise r.fail("intervals: no stream reported (all omitted?)")
    if not reverse and not by_receiver:
        _delivered_only(by_socket, end)
    # Retransmits and congestion control from the end of the test, where reported (the
    # server's streams, when its intervals are used, in the client's order).
    ends = [s.get("sender") or {} for s in end.get("streams", []) or []]
    ordered = list(by_socket.values())
    for k, snd in enumerate(ends):
        if by_receiver:
            tr = ordered[k] if k < len(ordered) else None
        else:
            tr = by_socket.get(snd.get("socket"))
        if tr is not None and isinstance(snd.get("retransmits"), int):
            tr.retransmits = int(snd["retransmits"])
    cc = end.get("sender_tcp_congestion")
    for tr in by_socket.values():
        tr.cc = cc if isinstance(cc, str) else None
    flows = list(by_socket.values())
    stamp = start.get("timestamp", {}) or {}
    params: dict[str, Any] = {
        "protocol": protocol.lower(),
        "streams": int(test.get("num_streams", len(flows))),
        "length_s": float(test.get("duration", 0) or 0),
        "reverse": int(reverse),
    }
    if isinstance(cc, str):
        params["cc"] = cc
    hosts = start.get("connecting_to") or {}
    if "host" in hosts:
        params["host"] = str(hosts["host"])
    reported = {
        k: end[k].get("bits_per_second")
        for k in ("sum_sent", "sum_received")
        if isinstance(end.get(k), dict)
    }
    return Measurement(
        tool="iperf3",
        source=str(path),
        duration_s=max(t.end_s[-1] for t in flows),
        throughput=flows,
        parameters=params,
        reported=reported,
        # iperf3 stamps its start in whole seconds only: taken as the middle of the
        # second it names, so its load sits within half a second of where it was.
        start_unix_s=float(stamp["timesecs"]) + 0.5 if "timesecs" in stamp else None,
    )


def _delivered_only(by_socket: dict[Any, Throughput], end: dict[str, Any]) -> None:
    """An upload counted by the client (what it wrote to its sockets) less what never
    crossed the link: per TCP stream, the sender's bytes beyond the receiver's count at
    the end (``end.streams[].receiver.bytes``) were still in the sender's socket buffer
    when the test stopped. That buffer fills as the test starts (a 2 Mbit/s line's
    first second "sent" 690 kB), so the excess is taken off the first intervals: the
    total is then the receiver's, and the timing off by at most the buffer's drain time,
    in the start-up that a warm-up leaves out."""
    for st in end.get("streams", []) or []:
        snd, rcv = st.get("sender") or {}, st.get("receiver") or {}
        tr = by_socket.get(snd.get("socket", rcv.get("socket")))
        got = rcv.get("bytes")
        if tr is None or not isinstance(got, int | float) or got < 0:
            continue
        excess = sum(tr.bytes) - int(got)
        for i, b in enumerate(tr.bytes):
            if excess <= 0:
                break
            cut = min(b, excess)
            tr.bytes[i] = b - cut
            excess -= cut
