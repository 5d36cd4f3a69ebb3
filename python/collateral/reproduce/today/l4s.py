"""today-l4s: RFC 9332's coupling goal for DualPI2, Prague beside CUBIC at two RTTs
(their rates, the L and C queues' probe delays) as a figure, a table and claims."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.style import STYLE, plt
from ..claims import Claim
from ..drawing import save_with_caption
from .table import (
    isnan,
    num,
    summary,
    trials_text,
    write_tables,
)

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store


def _l4s_trials(store: Store) -> pd.DataFrame:
    import pandas as pd

    raw = summary(store)
    rows = []
    has_cbr = "cbr" in store.tables()
    for _, r in raw.iterrows():
        n = int(r.tcp_flows)
        g = {r.get(f"tcp{i}_cc"): num(r.get(f"tcp{i}_goodput_bps")) for i in range(n)}
        out: dict[str, Any] = {
            "rtt_ms": round(float(r["rtt_s"]) * 1e3, 3),
            "rep": int(r["rep"]),
            "key": r["key"],
            "rate_bps": float(r["down_rate_bps"]),
            "prague_bps": g.get("prague", math.nan),
            "cubic_bps": g.get("cubic", math.nan),
        }
        out["ratio"] = out["prague_bps"] / out["cubic_bps"]
        for j in range(int(r.cbr_flows)):
            name = "l" if r.get(f"cbr{j}_ecn") == "ect1" else "c"
            out[f"{name}_flow"] = j
            out[f"{name}_p95_s"] = num(r.get(f"cbr{j}_delay_p95_s"))
            out[f"{name}_max_s"] = num(r.get(f"cbr{j}_delay_max_s"))
            out[f"{name}_loss"] = num(r.get(f"cbr{j}_loss_rate"))
            out[f"{name}_p99_s"] = math.nan
        rows.append(out)
    df = pd.DataFrame(rows)
    if has_cbr and len(df):
        # p99 of each probe's per-packet additional delay after the warm-up.
        q = store.query(
            "SELECT c.key, c.flow, quantile_cont(c.extra_delay_s, 0.99) AS p99"
            " FROM cbr c JOIN summary s USING (key)"
            " WHERE c.sent_s >= s.warmup_s AND isfinite(c.extra_delay_s) GROUP BY ALL"
        )
        p99 = {(k, int(f)): float(v) for k, f, v in zip(q.key, q.flow, q.p99, strict=True)}
        keep = set(raw.key)
        p99 = {kf: v for kf, v in p99.items() if kf[0] in keep}
        for name in ("l", "c"):
            if f"{name}_flow" in df:
                # Flow ids: the TCP flows first, then the CBR flows in order.
                ntcp = dict(zip(raw.key, raw.tcp_flows.astype(int), strict=True))
                df[f"{name}_p99_s"] = [
                    p99.get((k, ntcp[k] + int(j)), math.nan)
                    for k, j in zip(df.key, df[f"{name}_flow"], strict=True)
                ]
    return df


def l4s_table(store: Store) -> pd.DataFrame:
    df = _l4s_trials(store)
    cols = [
        c
        for c in (
            "rate_bps",
            "prague_bps",
            "cubic_bps",
            "ratio",
            "l_p99_s",
            "l_p95_s",
            "l_max_s",
            "c_p99_s",
            "c_p95_s",
            "l_loss",
        )
        if c in df
    ]
    g = df.groupby("rtt_ms")
    t = g[cols].median()
    t["ratio_min"] = g["ratio"].min()
    t["ratio_max"] = g["ratio"].max()
    t["trials"] = g.size()
    return t


_L4S_COLS = (
    ("prague_bps", "Prague goodput (Mbit/s)", 1e-6, "{:.2f}"),
    ("cubic_bps", "CUBIC goodput (Mbit/s)", 1e-6, "{:.2f}"),
    ("ratio", "Prague / CUBIC", 1, "{:.2f}"),
    ("ratio_min", "ratio min", 1, "{:.2f}"),
    ("ratio_max", "ratio max", 1, "{:.2f}"),
    ("l_p99_s", "L probe p99 (ms)", 1e3, "{:.2f}"),
    ("l_p95_s", "L probe p95 (ms)", 1e3, "{:.2f}"),
    ("l_max_s", "L probe max (ms)", 1e3, "{:.2f}"),
    ("c_p99_s", "C probe p99 (ms)", 1e3, "{:.1f}"),
    ("l_loss", "L probe loss (%)", 100, "{:.2f}"),
)


def l4s_coupling(store: Store, stem: Path, label: str) -> list[Path]:
    """Left: Prague and CUBIC goodput per RTT (median, min-max), the ratio written on top;
    right: the CDF of the L-queue (ECT(1)) and C-queue (Not-ECT) probes' added delay."""
    from ...plot.style import legend_outside, suptitle

    df = _l4s_trials(store)
    t = l4s_table(store)
    rtts = list(t.index)
    n = int(t.trials.min()) if len(t) else 0
    with plt.rc_context(STYLE):
        fig, (a0, a1) = plt.subplots(1, 2, figsize=(13, 4.8), layout="constrained")
        x = np.arange(len(rtts))
        w = 0.38
        for k, (col, name, color) in enumerate(
            (("prague_bps", "Prague (L4S, ECT(1))", "C3"), ("cubic_bps", "CUBIC (classic)", "C0"))
        ):
            g = df.groupby("rtt_ms")[col]
            med, lo, hi = g.median() / 1e6, g.min() / 1e6, g.max() / 1e6
            a0.bar(
                x + (k - 0.5) * w,
                med.to_numpy(),
                w,
                color=color,
                label=name,
                yerr=[(med - lo).to_numpy(), (hi - med).to_numpy()] if n > 1 else None,
                capsize=3,
            )
        for xi, rtt in zip(x, rtts, strict=True):
            top = float(df[df.rtt_ms == rtt][["prague_bps", "cubic_bps"]].max().max()) / 1e6
            a0.annotate(
                f"ratio {t.loc[rtt, 'ratio']:.2f}",
                (xi, top),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                fontsize=10,
            )
        a0.set_xticks(x, [f"RTT {r:g} ms" for r in rtts])
        a0.set_ylabel("goodput (Mbit/s)")
        a0.axhline(5.0, color="k", lw=0.7, ls=":", label="half the link (10 Mbit/s / 2)")
        a0.set_ylim(0, 12.5)
        a0.grid(axis="x", visible=False)
        a0.legend(loc="upper left", fontsize=9, ncols=2)
        a0.set_title("throughput: one Prague and one CUBIC download")
        if "cbr" in store.tables():
            d = store.query(
                "SELECT c.key, s.rtt_s, c.extra_delay_s AS d,"
                " (CASE WHEN c.flow = s.tcp_flows THEN s.cbr0_ecn ELSE s.cbr1_ecn END) AS ecn"
                " FROM cbr c JOIN summary s USING (key)"
                " WHERE c.sent_s >= s.warmup_s AND isfinite(c.extra_delay_s)"
            )
            d = d[d.key.isin(set(df.key))]
            styles = ("-", "--", "-.", (0, (5, 1, 1, 1, 1, 1)))  # dotted: the p99 line
            for i, rtt in enumerate(rtts):
                for ecn, color, name in (
                    ("ect1", "C3", "L probe (ECT(1))"),
                    ("not_ect", "C0", "C probe (Not-ECT)"),
                ):
                    sel = np.isclose(d.rtt_s * 1e3, rtt) & (d.ecn == ecn)
                    v = np.sort(d[sel].d.to_numpy() * 1e3)
                    if len(v):
                        a1.plot(
                            np.maximum(v, 1e-2),
                            np.arange(1, len(v) + 1) / len(v),
                            color=color,
                            ls=styles[i % len(styles)],
                            label=f"{name}, RTT {rtt:g} ms",
                        )
            a1.set_xscale("log")
            a1.set_xlim(1e-2, None)
        a1.axhline(0.99, color="k", lw=0.6, ls=":")
        a1.set_xlabel("probe added delay (ms, log; one-way minus empty path)")
        a1.set_ylabel("CDF over packets")
        a1.set_title("queuing delay: L queue vs C queue")
        legend_outside(a1, "right", fontsize=9)
        suptitle(
            fig,
            f"{label}\n10 Mbit/s DualPI2 (Linux defaults) shared by one Prague and one CUBIC"
            f" download (Linux 6); {trials_text(n)} per RTT; dotted: 99th percentile",
        )
        caption = (
            "RFC 9332's coupling goal for DualPI2 at 10 Mbit/s (Linux default parameters):"
            " one Prague (L4S, ECT(1)) and one CUBIC (classic) download share the link at"
            " RTTs of " + ", ".join(f"{r:g}" for r in rtts) + " ms. Left: each download's"
            f" goodput (bars: median over {trials_text(n)}"
            + (", error bars: min-max over them" if n > 1 else "; one trial, no spread")
            + "), with the"
            " Prague/CUBIC ratio written above; the dotted line is half the link. Right:"
            " the CDF of the added one-way delay of a 100 B / 10 ms probe in the L queue"
            " (ECT(1), red) and one in the C queue (Not-ECT, blue), log scale; the dotted"
            " line is the 99th percentile. Delays below 0.01 ms are drawn at the left edge."
        )
        files = save_with_caption(fig, stem, caption)
    head = (
        "RFC 9332 coupling: one Prague (L4S) and one CUBIC download through DualPI2 at"
        " 10 Mbit/s; medians over trials (ratio min/max over trials). Probe delays are the"
        " per-packet one-way delay minus the empty-path delay of a 100 B / 10 ms ECT(1)"
        " probe (L queue) and a Not-ECT probe (C queue); p99 from the cbr trace."
    )
    t2 = t.copy()
    t2.index = t2.index.rename("RTT (ms)")
    return [*files, *write_tables(t2, stem, [c for c in _L4S_COLS if c[0] in t2], head)]


#: Prague's reference RTT (the core's PRAGUE_RTT_NS): at or above it Prague is DCTCP.
PRAGUE_RTT_MS = 25.0


def _rate_claim(rtt: float, r: pd.Series, short: pd.DataFrame, mtu_s: float) -> Claim:
    """RFC 9332 §2.1's roughly equal rates below Prague's reference RTT; above it, what
    the link predicts: a marking floor that the coupling does not set, so Prague's share
    falls with the RTT."""
    ours = (
        f"Prague {r.prague_bps / 1e6:.2f}, CUBIC {r.cubic_bps / 1e6:.2f} Mbit/s, ratio"
        f" {r.ratio:.2f} (trials {r.ratio_min:.2f}..{r.ratio_max:.2f})"
    )
    if rtt < PRAGUE_RTT_MS or not len(short):
        return Claim(
            f"RTT {rtt:g} ms: Prague and CUBIC rates within a small factor",
            "rates roughly equal (RFC 9332 §2.1)",
            ours,
            bool(0.5 <= r.ratio <= 2 and r.ratio_min >= 1 / 3 and r.ratio_max <= 3),
            "median Prague/CUBIC rate ratio in [0.5, 2], every trial's in [1/3, 3]",
        )
    lo = float(short.ratio.min())
    return Claim(
        f"RTT {rtt:g} ms: Prague's share below its share at RTTs under {PRAGUE_RTT_MS:g} ms",
        f"ratio < {lo:.2f} (the smallest at RTT < {PRAGUE_RTT_MS:g} ms)",
        ours,
        bool(r.ratio < lo),
        f"median Prague/CUBIC ratio below {lo:.2f}",
        f"A 1500 B packet takes {mtu_s * 1e3:.2f} ms on the wire at"
        f" {r.rate_bps / 1e6:g} Mbit/s, over the 1 ms step: an L packet queued behind one"
        " in service is marked whatever the coupling, a marking floor that does not"
        f" shrink with the RTT. At or above {PRAGUE_RTT_MS:g} ms Prague is DCTCP, whose"
        " window at a given marking does not grow with the RTT, so its rate falls as"
        " 1/RTT: RFC 9332's equal rates are not expected here.",
    )


def l4s_claims(store: Store) -> list[Claim]:
    t = l4s_table(store)
    out = []
    short = t[t.index < PRAGUE_RTT_MS]
    for rtt, r in t.iterrows():
        out.append(_rate_claim(float(rtt), r, short, 1500 * 8 / r.rate_bps))
        p99 = r.get("l_p99_s", math.nan)
        src = "p99 from the cbr trace"
        if isnan(p99):
            p99, src = r.get("l_max_s", math.nan), "max (no cbr trace kept)"
        out.append(
            Claim(
                f"RTT {rtt:g} ms: L-queue delay of a few ms (tolerance: probe {src} <= 5 ms)",
                "p99 ~1 ms, a few ms at most (RFC 9332 §1)",
                f"L probe p99 {r.get('l_p99_s', math.nan) * 1e3:.2f} ms, p95"
                f" {r.l_p95_s * 1e3:.2f} ms, max {r.l_max_s * 1e3:.2f} ms; C probe p99"
                f" {r.get('c_p99_s', math.nan) * 1e3:.1f} ms",
                bool(p99 <= 5e-3),
                f"L probe {src} <= 5 ms",
            )
        )
    return out
