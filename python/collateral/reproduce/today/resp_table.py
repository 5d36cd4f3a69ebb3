"""The responsiveness study's numbers: one row per trial with the scores the core stored
for the RRUL workload (RPM, grade, QoO, idle and loaded latency), the call's delay and
the goodput each way, and the medians per link and queue. Nothing is re-derived here:
every score is a summary column (collateral_model::scores)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from .links_table import medians_by_link_queue
from .table import flow_index, num, sum_tcp, summary, tcp_ids

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

#: Links in the order shown, with a title each.
LINK_ORDER = ("ADSL1", "cable", "fibre")
LINK_TITLES = {
    "ADSL1": "ADSL1 1.5 Mbit/s / 256 kbit/s, RTT 50 ms",
    "cable": "cable 50 / 10 Mbit/s, RTT 20 ms",
    "fibre": "fibre 1000 / 100 Mbit/s, RTT 10 ms",
}
#: Queue variants in the order shown, with a colour and a short label.
QUEUES: dict[str, tuple[str, str]] = {
    "drop-tail-0.5": ("0.75", "drop-tail\n0.5 BDP"),
    "drop-tail-1": ("0.55", "drop-tail\n1 BDP"),
    "drop-tail-2": ("0.35", "drop-tail\n2 BDP"),
    "drop-tail-4": ("0.1", "drop-tail\n4 BDP"),
    "pie": ("C1", "PIE"),
    "fq_codel": ("C0", "FQ-CoDel\ndrop"),
    "fq_codel-ecn": ("C9", "FQ-CoDel\nECN"),
    "cake": ("C2", "CAKE"),
    "dualpi2": ("C4", "DualPI2\nclassic"),
    "dualpi2-l4s": ("C3", "DualPI2\nL4S"),
}
#: Numeric scores copied from the summary as they are.
SCORES = (
    "rpm",
    "rpm_p90",
    "rpm_p99",
    "qoo_voip",
    "qoo_gaming",
    "qoo_video_conferencing",
    "qoo_web",
    "latency_idle_s",
    "latency_loaded_s",
    "latency_increase_s",
    "probe_loss_rate",
)
#: Columns of the table: (column, header, scale, format).
TABLE_COLS = (
    ("rpm", "RPM", 1, "{:.0f}"),
    ("rpm_p90", "RPM p90", 1, "{:.0f}"),
    ("rpm_p99", "RPM p99", 1, "{:.0f}"),
    ("qoo_voip", "QoO VoIP", 1, "{:.0f}"),
    ("qoo_gaming", "QoO gaming", 1, "{:.0f}"),
    ("qoo_video_conferencing", "QoO video", 1, "{:.0f}"),
    ("qoo_web", "QoO web", 1, "{:.0f}"),
    ("latency_idle_s", "idle RTT (ms)", 1e3, "{:.1f}"),
    ("latency_loaded_s", "loaded RTT (ms)", 1e3, "{:.1f}"),
    ("probe_loss_rate", "probe loss (%)", 100, "{:.1f}"),
    ("call_down_p95_s", "call p95 down (ms)", 1e3, "{:.1f}"),
    ("call_up_p95_s", "call p95 up (ms)", 1e3, "{:.1f}"),
    ("down_goodput_bps", "goodput down (Mbit/s)", 1e-6, "{:.3g}"),
    ("up_goodput_bps", "goodput up (Mbit/s)", 1e-6, "{:.3g}"),
)


def resp_trials(store: Store) -> pd.DataFrame:
    """One row per trial: the link, queue, the stored scores, the grade, the call's
    one-way added delay p95 each way and the TCP goodput each way."""
    import pandas as pd

    rows = []
    for _, r in summary(store).iterrows():
        out: dict[str, Any] = {"link": r["tag_link"], "queue": r["tag_queue"], "rep": int(r["rep"])}
        out |= {c: num(r.get(c)) for c in SCORES}
        g = r.get("bufferbloat_grade")
        out["grade"] = g if isinstance(g, str) else ""  # none without loaded probes
        for d in ("down", "up"):
            j = flow_index(r, "g711", d)
            out[f"call_{d}_p95_s"] = (
                num(r.get(f"cbr{j}_delay_p95_s")) if j is not None else num(None)
            )
            out[f"{d}_goodput_bps"] = sum_tcp(r, "goodput_bps", tcp_ids(r, d))
        rows.append(out)
    return pd.DataFrame(rows)


def _grades(s: pd.Series) -> str:
    """The trials' grades, the most common first (``B`` or ``B/C``)."""
    return "/".join(g or "–" for g, _ in Counter(s).most_common())


def resp_table(store: Store) -> pd.DataFrame:
    """Medians over trials per link and queue, the trials' grades and their count."""
    df = resp_trials(store)
    cols = [c for c in df.columns if c not in ("link", "queue", "rep", "grade")]
    return medians_by_link_queue(df, cols, LINK_ORDER, list(QUEUES), {"grade": _grades})
