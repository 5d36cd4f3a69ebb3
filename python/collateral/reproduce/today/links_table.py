"""The today-links study's numbers: one row per trial with the call's and the game's delay
and loss and the TCP goodput, the medians per link and queue, and the call's per-packet
added one-way delays (for the CDFs). The summary gives p95 and loss; the per-packet
``cbr`` trace gives the tails the summary does not hold (p99, p99.9) and the wire's own
losses (a satellite's loss bursts) apart from the queue's drops."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .table import flow_index, num, sum_tcp, summary, tcp_ids

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ...store import Store

#: Links and queue variants in the order shown, with a colour and a label per variant.
LINK_ORDER = ("cellular", "starlink", "docsis")
LINK_TITLES = {
    "cellular": "cellular trace (1-40 / 0.5-8 Mbit/s walk, RTT 40 ms)",
    "starlink": "Starlink-like LEO (50-200 / 5-20 Mbit/s, RTT 30 ms)",
    "docsis": "DOCSIS 100/20 Mbit/s (request-grant upstream, RTT 20 ms)",
}
QUEUES: dict[str, tuple[str, str]] = {
    "drop-tail": ("0.3", "drop-tail 256 kB"),
    "fq_codel": ("C0", "FQ-CoDel"),
    "cake": ("C2", "CAKE at the nominal rate"),
    "dualpi2": ("C3", "DualPI2, call in L (LLD upstream on DOCSIS)"),
}

#: Columns of the table: (column, header, scale, format).
TABLE_COLS = (
    ("call_down_p95_s", "call p95 down (ms)", 1e3, "{:.1f}"),
    ("call_down_p99_s", "call p99 down (ms)", 1e3, "{:.1f}"),
    ("call_up_p95_s", "call p95 up (ms)", 1e3, "{:.1f}"),
    ("call_up_p99_s", "call p99 up (ms)", 1e3, "{:.1f}"),
    ("call_down_loss", "call loss down (%)", 100, "{:.2f}"),
    ("call_up_loss", "call loss up (%)", 100, "{:.2f}"),
    ("game_down_p99_s", "game p99 down (ms)", 1e3, "{:.1f}"),
    ("down_goodput_bps", "download goodput (Mbit/s)", 1e-6, "{:.2f}"),
    ("up_goodput_bps", "upload goodput (Mbit/s)", 1e-6, "{:.2f}"),
    ("video_bps", "video rate (Mbit/s)", 1e-6, "{:.2f}"),
    ("video_frame_p95_s", "video frame p95 (ms)", 1e3, "{:.0f}"),
    ("video_late", "video frames late (%)", 100, "{:.1f}"),
)


def _tails(store: Store) -> dict[tuple[str, int], dict[str, float]]:
    """Per (trial key, flow) after the warm-up: p99 and p99.9 of the arrived packets'
    added delay, and the packets the wire lost (fate 'lost', not the queue's drops)."""
    if "cbr" not in store.tables():
        return {}
    q = store.query(
        "SELECT c.key, c.flow,"
        " quantile_cont(c.extra_delay_s, 0.99) FILTER (WHERE c.fate = 0) AS p99,"
        " quantile_cont(c.extra_delay_s, 0.999) FILTER (WHERE c.fate = 0) AS p999,"
        " count(*) FILTER (WHERE c.fate = 2) AS wire_lost"
        " FROM cbr c JOIN summary s USING (key) WHERE c.sent_s >= s.warmup_s GROUP BY ALL"
    )
    return {
        (k, int(f)): {"p99": num(a), "p999": num(b), "wire_lost": float(w)}
        for k, f, a, b, w in zip(q.key, q.flow, q.p99, q.p999, q.wire_lost, strict=True)
    }


def link_trials(store: Store) -> pd.DataFrame:
    """One row per trial of today-links."""
    import pandas as pd

    raw = summary(store)
    tails = _tails(store)
    rows = []
    for _, r in raw.iterrows():
        ntcp = int(r.get("tcp_flows", 0) or 0)
        ups, downs = tcp_ids(r, "up"), tcp_ids(r, "down")
        out: dict[str, Any] = {
            "link": r["tag_link"],
            "queue": r["tag_queue"],
            "rep": int(r["rep"]),
            "key": r["key"],
            "warmup_s": float(r["warmup_s"]),
            "duration_s": float(r["duration_s"]),
            "down_goodput_bps": sum_tcp(r, "goodput_bps", downs),
            "up_goodput_bps": sum_tcp(r, "goodput_bps", ups) if ups else math.nan,
            "video_bps": num(r.get("media0_received_bps")),
            "video_frame_p95_s": num(r.get("media0_frame_delay_p95_s")),
            "video_late": num(r.get("media0_frames_late")),
        }
        for name, app in (("call", "g711"), ("game", "quake3")):
            for d in ("down", "up"):
                j = flow_index(r, app, d)
                t = tails.get((r["key"], ntcp + j), {}) if j is not None else {}
                p = f"{name}_{d}"
                out[f"{p}_p95_s"] = num(r.get(f"cbr{j}_delay_p95_s")) if j is not None else math.nan
                out[f"{p}_loss"] = num(r.get(f"cbr{j}_loss_rate")) if j is not None else math.nan
                out[f"{p}_p99_s"] = t.get("p99", math.nan)
                out[f"{p}_p999_s"] = t.get("p999", math.nan)
                out[f"{p}_wire_lost"] = t.get("wire_lost", math.nan)
        rows.append(out)
    return pd.DataFrame(rows)


def links_table(store: Store) -> pd.DataFrame:
    """Median over trials per link and queue (and the trial count)."""
    df = link_trials(store)
    cols = [c for c in df.columns if c not in ("link", "queue", "rep", "key")]
    return medians_by_link_queue(df, cols, LINK_ORDER, list(QUEUES))


def medians_by_link_queue(
    df: pd.DataFrame, cols: list[str], links: Any, queues: Any, extra: Any = None
) -> pd.DataFrame:
    """Medians of ``cols`` over trials per (link, queue), ``extra`` {column: reducer}
    beside them, and the trial count; rows in the order of ``links`` and ``queues``
    (unknown ones last)."""
    g = df.groupby(["link", "queue"])
    t = g[cols].median()
    for c, f in (extra or {}).items():
        t[c] = g[c].agg(f)
    t["trials"] = g.size()
    t = t.reset_index()
    t["_l"] = t.link.map({k: i for i, k in enumerate(links)}).fillna(len(links))
    t["_q"] = t.queue.map({k: i for i, k in enumerate(queues)}).fillna(len(queues))
    t = t.sort_values(["_l", "_q"]).drop(columns=["_l", "_q"])
    return t.set_index(["link", "queue"])


def call_delays(store: Store) -> dict[tuple[str, str, str], tuple[np.ndarray, int]]:
    """(link, queue, direction) -> (the call's arrived packets' added one-way delays
    after the warm-up, sorted, pooled over trials; the packets whose fate is known:
    arrived, dropped or lost, not those still in flight at the end)."""
    import numpy as np

    if "cbr" not in store.tables():
        return {}
    raw = summary(store)
    calls = {}
    for _, r in raw.iterrows():
        ntcp = int(r.get("tcp_flows", 0) or 0)
        for d in ("down", "up"):
            j = flow_index(r, "g711", d)
            if j is not None:
                calls[(r["key"], ntcp + j)] = (r["tag_link"], r["tag_queue"], d)
    q = store.query(
        "SELECT c.key, c.flow, c.extra_delay_s AS d, c.fate FROM cbr c JOIN summary s"
        " USING (key) WHERE c.sent_s >= s.warmup_s AND c.fate != 3"
    )
    out: dict[tuple[str, str, str], tuple[np.ndarray, int]] = {}
    q["who"] = [calls.get((k, int(f))) for k, f in zip(q.key, q.flow, strict=True)]
    q = q[q.who.notna()]
    for who, g in q.groupby("who"):
        arrived = np.sort(g.d[g.fate == 0].to_numpy(float))
        out[who] = (arrived, len(g))
    return out
