"""The today-queues study's numbers: its queue variants, links and TCP mixes, one row per
trial with the study's metrics derived from the stored summary, the medians per link,
mix and variant, and writing such a table as Markdown and CSV."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store


#: Queue variants in the order the figure and table show them (tags.queue), with a
#: colour and a short label for the x axis.
VARIANTS: dict[str, tuple[str, str]] = {
    "drop-tail": ("0.3", "drop-tail\n1 BDP"),
    "pie": ("C1", "PIE"),
    "fq_codel": ("C0", "FQ-CoDel\ndrop"),
    "fq_codel-ecn": ("C9", "FQ-CoDel\nECN"),
    "cake": ("C2", "CAKE\nbesteffort"),
    "cake-diffserv4": ("C8", "CAKE\ndiffserv4"),
    "cake-ackfilter": ("C5", "CAKE\nACK filter"),
    "dualpi2": ("C4", "DualPI2\nclassic"),
    "dualpi2-l4s": ("C3", "DualPI2\nL4S"),
}
LINKS = ("ADSL1", "cable")


def trials_text(n: int) -> str:
    return f"{n} trial" + ("" if n == 1 else "s")


def variant_order(names: Any) -> list[str]:
    have = set(names)
    return [v for v in VARIANTS if v in have] + sorted(have - set(VARIANTS))


def flow_index(row: pd.Series, app: str, direction: str) -> int | None:
    """The index j of the cbr{j} flow with this app and direction in a summary row."""
    for j in range(int(row.get("cbr_flows", 0) or 0)):
        if row.get(f"cbr{j}_app") == app and row.get(f"cbr{j}_direction") == direction:
            return j
    return None


def _up_tcp(phases: str) -> tuple[float, float]:
    """(arrivals, drops) of class tcp at the upstream queue after the warm-up: the
    downloads' ACKs and, with an upload, its data segments."""
    arr = drops = 0.0
    for p in json.loads(phases or "[]"):
        if p["direction"] == "up" and p["class"] == "tcp":
            arr += float(p["arrivals"])
            drops += float(p["drops"])
    return arr, drops


def tcp_ids(row: pd.Series, direction: str) -> list[int]:
    n = int(row.get("tcp_flows", 0) or 0)
    return [i for i in range(n) if (row.get(f"tcp{i}_direction") or "down") == direction]


def _mss(row: pd.Series, i: int) -> int:
    from ...spec import PROFILE_SETTINGS

    prof = row.get(f"tcp{i}_profile")
    return int(PROFILE_SETTINGS.get(prof if isinstance(prof, str) else "linux-6")["mss"])


def _up_drops_by_flow(store: Store) -> dict[tuple[str, int], int]:
    """Upstream drops per (trial key, flow) after the warm-up, from the drops trace."""
    if "drops" not in store.tables():
        return {}
    q = store.query(
        "SELECT d.key, d.flow, count(*) AS n FROM drops d JOIN summary s USING (key)"
        " WHERE d.direction = 1 AND d.time_s >= s.warmup_s GROUP BY ALL"
    )
    return {(k, int(f)): int(n) for k, f, n in zip(q.key, q.flow, q.n, strict=True)}


def sum_tcp(row: pd.Series, col: str, ids: list[int] | None = None) -> float:
    n = int(row.get("tcp_flows", 0) or 0)
    vals = [row.get(f"tcp{i}_{col}") for i in (range(n) if ids is None else ids)]
    return float(sum(float(v) for v in vals if v is not None and not isnan(v)))


def isnan(v: Any) -> bool:
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return True


def num(v: Any) -> float:
    return math.nan if v is None or isnan(v) else float(v)


def summary(store: Store) -> pd.DataFrame:
    """The summary rows of the running core's model version: a store keeps the rows an
    older core wrote (their keys differ), and mixing them would blend two models. A
    store with no row of this version (read with a newer core) is taken whole."""
    from ...experiment import model_version

    df = store.query("SELECT * FROM summary")
    cur = df[df.model_version == model_version()]
    return cur if len(cur) else df


def is_video(df: pd.DataFrame) -> pd.Series:
    """Which summary rows are the video call's points."""
    import pandas as pd

    col = df["tag_video"] if "tag_video" in df else pd.Series(None, index=df.index)
    return col.notna()


def _trials(store: Store) -> pd.DataFrame:
    """One row per trial of today-queues, with the study's metrics derived."""
    import pandas as pd

    raw = summary(store)
    raw = raw[~is_video(raw)]  # the video call's points have their own table
    drops_by_flow = _up_drops_by_flow(store)
    rows = []
    for _, r in raw.iterrows():
        span = float(r["duration_s"]) - float(r["warmup_s"])
        ups = tcp_ids(r, "up")
        downs = tcp_ids(r, "down")
        uploads = r.get("tag_uploads")
        out: dict[str, Any] = {
            "link": r["tag_link"],
            "downloads": int(r["tag_downloads"]),
            "uploads": len(ups) if isnan(uploads) else int(uploads),
            "queue": r["tag_queue"],
            "rep": int(r["rep"]),
            "down_goodput_bps": sum_tcp(r, "goodput_bps", downs),
            "up_goodput_bps": sum_tcp(r, "goodput_bps", ups) if ups else math.nan,
            "retransmits": sum_tcp(r, "retransmits"),
            "down_retransmits": sum_tcp(r, "retransmits", downs),
            "timeouts": sum_tcp(r, "timeouts"),
            "ecn_reductions": sum_tcp(r, "ecn_reductions"),
            "down_drops": num(r.get("queue_down_drops")),
            "down_ce_marks": num(r.get("queue_down_ce_marks")),
            "up_ce_marks": num(r.get("queue_up_ce_marks")),
        }
        for name, app in (("call", "g711"), ("game", "quake3")):
            for d in ("down", "up"):
                j = flow_index(r, app, d)
                for metric in ("delay_p95_s", "loss_rate", "mos", "over_100ms"):
                    v = r.get(f"cbr{j}_{metric}") if j is not None else None
                    out[f"{name}_{d}_{metric}"] = num(v)
        arr, drops = _up_tcp(r.get("phases"))
        if ups:
            # The upload's data segments offered upstream after the warm-up: delivered
            # ones plus dropped ones (see the experiment file for the error of this).
            if not drops_by_flow and drops > 0:
                arr = drops = math.nan  # no drops trace: cannot split
            up_drops = sum(drops_by_flow.get((r["key"], i), 0) for i in ups)
            segs = sum(num(r.get(f"tcp{i}_bytes_delivered")) / _mss(r, i) for i in ups)
            arr -= segs + up_drops
            drops -= up_drops
        out["acks_offered_per_s"] = arr / span
        out["acks_sent_per_s"] = (arr - drops) / span
        rows.append(out)
    return pd.DataFrame(rows)


#: Columns of the table: (column, header, scale, format).
TABLE_COLS = (
    ("call_down_delay_p95_s", "call p95 down (ms)", 1e3, "{:.1f}"),
    ("call_up_delay_p95_s", "call p95 up (ms)", 1e3, "{:.1f}"),
    ("call_down_loss_rate", "call loss down (%)", 100, "{:.2f}"),
    ("call_up_loss_rate", "call loss up (%)", 100, "{:.2f}"),
    ("call_down_mos", "MOS down", 1, "{:.2f}"),
    ("call_up_mos", "MOS up", 1, "{:.2f}"),
    ("game_down_over_100ms", "game >100 ms down (%)", 100, "{:.2f}"),
    ("game_up_over_100ms", "game >100 ms up (%)", 100, "{:.2f}"),
    ("game_down_delay_p95_s", "game p95 down (ms)", 1e3, "{:.1f}"),
    ("down_goodput_bps", "download goodput (Mbit/s)", 1e-6, "{:.3f}"),
    ("up_goodput_bps", "upload goodput (Mbit/s)", 1e-6, "{:.3f}"),
    ("retransmits", "TCP rtx", 1, "{:.0f}"),
    ("down_ce_marks", "CE marks down", 1, "{:.0f}"),
    ("acks_offered_per_s", "up ACKs offered (/s)", 1, "{:.1f}"),
    ("acks_sent_per_s", "up ACKs sent (/s)", 1, "{:.1f}"),
)

#: The TCP mixes (downloads, uploads) in the order shown, with the figure's bar style.
MIXES: dict[tuple[int, int], tuple[str | None, float, str]] = {
    (1, 0): (None, 1.0, "1 download"),
    (4, 0): ("///", 1.0, "4 downloads"),
    (1, 1): (None, 0.45, "1 download + 1 upload"),
    (4, 1): ("///", 0.45, "4 downloads + 1 upload"),
}


def today_table(store: Store) -> pd.DataFrame:
    """Median over trials per link, TCP mix and queue variant."""
    df = _trials(store)
    cols = [c for c, *_ in TABLE_COLS] + ["down_retransmits"]
    g = df.groupby(["link", "downloads", "uploads", "queue"])
    t = g[cols].median()
    t["trials"] = g.size()
    order = {q: i for i, q in enumerate(variant_order(df.queue.unique()))}
    t = t.reset_index()
    t["_o"] = t.queue.map(order)
    t["_l"] = t.link.map({k: i for i, k in enumerate(LINKS)}).fillna(9)
    t = t.sort_values(["_l", "uploads", "downloads", "_o"]).drop(columns=["_o", "_l"])
    return t.set_index(["link", "downloads", "uploads", "queue"])


def write_tables(t: pd.DataFrame, stem: Path, cols: Any, head: str) -> list[Path]:
    names = [*t.index.names, *(h for _, h, _, _ in cols), "trials"]
    lines = [head, "", "| " + " | ".join(names) + " |"]
    lines.append("|" + "---|" * len(t.index.names) + "---:|" * (len(cols) + 1))
    for idx, r in t.iterrows():
        idx = idx if isinstance(idx, tuple) else (idx,)
        cells = [str(x) for x in idx]
        for c, _, scale, fmt in cols:
            v = r[c]
            if scale is None:  # a word (a grade): as it is
                cells.append(str(v) or "–")
            else:
                cells.append("–" if isnan(v) else fmt.format(float(v) * scale))
        cells.append(str(int(r["trials"])))
        lines.append("| " + " | ".join(cells) + " |")
    md = stem.with_suffix(".md")
    md.write_text("\n".join(lines) + "\n")
    csv = stem.with_suffix(".csv")
    t.to_csv(csv)
    return [md, csv]


def mixes_in(t: pd.DataFrame) -> list[tuple[int, int]]:
    have = {(int(d), int(u)) for _, d, u, _ in t.index}
    return [m for m in MIXES if m in have] + sorted(have - set(MIXES))
