"""The studies' figures, drawn from stored results (DuckDB queries over Parquet).

Every figure states its axes with units, a legend, and a title block with the study,
parameters and trial counts; each is written as PNG (150 dpi) and SVG. Ranges are the
studies' own: median with min-max bars over trials (MMSys Fig. 3, 4), median with a
5-95 % envelope over 30 trials (Fig. 6), box plots (Fig. 7), CDFs and scatter plots
(Huebner 2008).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..plots import _STYLE, fig_cwnd_queue, plt, save
from ..result import Result
from ..spec import LINK_RATES

if TYPE_CHECKING:
    import pandas as pd

    from ..store import Store

MSS, DATA = 1448, 1500
CBR_BPS = 186 * 8 / 0.020  # one 186-byte packet every 20 ms
LINKS = {k: (float(d), float(u)) for k, (d, u) in LINK_RATES.items()}  # bit/s, the core's
CC_STYLE = {"newreno": ("C0", "o"), "cubic": ("C3", "s"), "htcp": ("C2", "^"), "bbr": ("C4", "D")}
RULE_STYLE = {
    "ps": ("C2", "^", "PS (slots)"),
    "fb-strict": ("C0", "o", "FB-strict"),
    "fb-loose": ("C3", "s", "FB-loose"),
}


def _save(fig: Any, stem: Path) -> list[Path]:
    return save(fig, stem, svg=True)


def _df(store: Store, sql: str) -> pd.DataFrame:
    return store.query(sql)


def _capacity(link: str) -> float:
    """Goodput a bulk flow can reach next to the downstream CBR (payload bit/s)."""
    return (LINKS[link][0] - CBR_BPS) * MSS / DATA


def _agg(df: pd.DataFrame, by: list[str], col: str, q: tuple[float, float] = (0.0, 1.0)):
    g = df.groupby(by)[col]
    out = g.median().rename("med").to_frame()
    out["lo"] = g.quantile(q[0])
    out["hi"] = g.quantile(q[1])
    out["n"] = g.size()
    return out.reset_index()


# ---------------------------------------------------------------------------------------
# MMSys 2011


def _result(store: Store, key: str, row: pd.Series) -> Result:
    """A stored trial as a Result (summary columns and trace tables)."""
    traces: dict[str, dict[str, np.ndarray]] = {}
    for name in ("cwnd", "queue", "cbr", "congestion"):
        if name in store.tables():
            t = store.query(f"SELECT * EXCLUDE (key) FROM {name} WHERE key = '{key}'")
            traces[name] = {c: t[c].to_numpy() for c in t.columns}
    empty = {"time_s": np.array([]), "flow": np.array([], dtype=np.uint32)}
    for name, cols in {
        "cwnd": ("cwnd", "ssthresh"),
        "queue": ("direction", "bytes", "packets"),
        "congestion": ("kind",),
        "cbr": ("seq", "sent_s", "owd_s", "extra_delay_s"),
    }.items():
        traces.setdefault(name, {**empty, **{c: np.array([]) for c in cols}})
    n_cbr = int(row.get("cbr_flows", 0) or 0)
    summary = {
        "duration_s": float(row["duration_s"]),
        "warmup_s": float(row["warmup_s"]),
        "tcp": [{"flow": 0, "cc": row.get("tcp0_cc"), "direction": "down"}],
        "cbr": [
            {"flow": 1 + j, "direction": row.get(f"cbr{j}_direction", "down")} for j in range(n_cbr)
        ],
    }
    return Result({"summary": summary, "traces": traces})


def mmsys_fig1(store: Store, stem: Path, label: str) -> list[Path]:
    rows = _df(store, "SELECT * FROM summary ORDER BY tcp0_cc DESC")
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            2, len(rows), sharex="col", figsize=(13, 6.5), layout="constrained", squeeze=False
        )
        for i, (_, row) in enumerate(rows.iterrows()):
            r = _result(store, row["key"], row)
            t0 = r.warmup_s
            t1 = min(t0 + 10, r.duration_s)
            t, cwnd, ssthresh = r.cwnd_series(0, step=0.001, t0=t0, t1=t1)
            ax = axes[0, i]
            ax.plot(t - t0, cwnd, drawstyle="steps-post", color="C0", label="cwnd")
            if np.isfinite(ssthresh).any():
                ax.plot(
                    t - t0,
                    ssthresh,
                    drawstyle="steps-post",
                    color="C0",
                    ls="--",
                    lw=1,
                    label="ssthresh",
                )
            ax.set_title(f"{row['tcp0_cc']} (Linux 2.6.25)")
            ax.set_ylabel("window (packets)")
            ax.set_ylim(0, max(float(np.nanmax(cwnd)) * 1.15, 1))
            pk = r.cbr_packets("down")
            sel = (pk["sent_s"] >= t0) & (pk["sent_s"] <= t1)
            d = pk["extra_delay_s"][sel] * 1e3
            ax = axes[1, i]
            ax.scatter(pk["sent_s"][sel] - t0, d, s=4, color="C3", label="CBR packet (down)")
            bound = 20_000 * 8 / 1.5e6 * 1e3
            ax.axhline(bound, color="k", lw=0.8, ls=":", label=f"full 20 kB queue ({bound:.0f} ms)")
            ax.set_ylim(0, bound * 1.2)
            ax.set_ylabel("additional delay (ms)")
            ax.set_xlabel(f"time (s) from {t0:.0f} s")
        h0, l0 = axes[0, 0].get_legend_handles_labels()
        h1, l1 = axes[1, 0].get_legend_handles_labels()
        fig.legend(h0 + h1, l0 + l1, loc="outside lower center", ncols=4)
        fig.suptitle(
            f"{label}\nADSL1 1.5 Mbit/s / 256 kbit/s, RTT 100 ms, 20 kB FB-strict queue,"
            " CBR 186 B / 20 ms both ways, 1 trial each"
        )
        return _save(fig, stem)


def mmsys_fig1_claims(store: Store):
    from . import Claim

    df = _df(store, "SELECT tcp0_cc, cbr0_delay_max_s, cbr0_delay_median_s FROM summary")
    bound = (20_000 + 1500) * 8 / 1.5e6
    out = [
        Claim(
            f"max additional CBR delay, {r.tcp0_cc}",
            "about 107 ms (20 kB at 1.5 Mbit/s)",
            f"{r.cbr0_delay_max_s * 1e3:.1f} ms",
            bool(r.cbr0_delay_max_s <= bound),
        )
        for r in df.itertuples()
    ]
    med = dict(zip(df.tcp0_cc, df.cbr0_delay_median_s, strict=False))
    if "cubic" in med and "newreno" in med:
        out.append(
            Claim(
                "CUBIC keeps the queue fuller than NewReno (median delay)",
                "CUBIC higher",
                f"CUBIC {med['cubic'] * 1e3:.1f} ms, NewReno {med['newreno'] * 1e3:.1f} ms",
                bool(med["cubic"] > med["newreno"]),
            )
        )
    return out


def goodput_vs_slots(link: str):
    def draw(store: Store, stem: Path, label: str) -> list[Path]:
        df = _df(
            store,
            f"SELECT tcp0_cc, down_queue_limit AS slots, tcp0_goodput_bps AS g "
            f"FROM summary WHERE link = '{link}'",
        )
        a = _agg(df, ["tcp0_cc", "slots"], "g")
        cap = _capacity(link)
        with plt.rc_context(_STYLE):
            fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
            for cc, d in a.groupby("tcp0_cc"):
                color, marker = CC_STYLE.get(cc, ("k", "o"))
                ax.errorbar(
                    d.slots,
                    d.med / 1e6,
                    yerr=[(d.med - d.lo) / 1e6, (d.hi - d.med) / 1e6],
                    color=color,
                    marker=marker,
                    capsize=3,
                    label=f"{cc} (median, min-max)",
                )
            ax.axhline(cap / 1e6, color="k", ls=":", lw=0.8, label="link payload capacity less CBR")
            ax.set_xlabel("queue length (packets, PS)")
            ax.set_ylabel("TCP goodput (Mbit/s)")
            ax.set_ylim(0, cap / 1e6 * 1.08)
            ax.legend(loc="lower right")
            n = int(a.n.min()) if len(a) else 0
            fig.suptitle(
                f"{label}\n{link.upper()}, RTT 100 ms, CBR both ways, {n} trials per point"
            )
            return _save(fig, stem)

    return draw


def _fills(a: pd.DataFrame, cc: str, cap: float, frac: float = 0.99) -> float:
    """Smallest queue at which the median goodput is within 1 % of the capacity."""
    d = a[a.tcp0_cc == cc].sort_values("slots")
    ok = d[d.med >= frac * cap]
    return float(ok.slots.iloc[0]) if len(ok) else math.inf


def fig3_claims(link: str):
    def claims(store: Store):
        from . import Claim

        df = _df(
            store,
            f"SELECT tcp0_cc, down_queue_limit AS slots, tcp0_goodput_bps AS g "
            f"FROM summary WHERE link = '{link}'",
        )
        a = _agg(df, ["tcp0_cc", "slots"], "g")
        cap = _capacity(link)
        c, n = _fills(a, "cubic", cap), _fills(a, "newreno", cap)
        fmt = lambda s: "never (up to 67)" if math.isinf(s) else f"{s:.0f} slots"  # noqa: E731
        if link == "adsl1":
            return [
                Claim(
                    "smallest PS queue at which CUBIC fills ADSL1 (median ≥ 99 % of capacity)",
                    "7 packets",
                    fmt(c),
                    c <= 7,
                ),
                Claim("… and NewReno", "about 20 packets", fmt(n), 14 <= n <= 27),
            ]
        return [
            Claim(
                "ADSL2: both fall short below ~40 packets (CUBIC fills from)",
                "≈ 40 packets",
                fmt(c),
                c >= 27,
            ),
            Claim(
                "ADSL2: NewReno never quite fills it up to 67 packets",
                "not full at 67",
                fmt(n),
                math.isinf(n),
            ),
        ]

    return claims


def _loss_by_rule(store: Store) -> pd.DataFrame:
    return _df(
        store,
        "SELECT tcp0_cc, down_queue_rule AS rule, tag_queue_bytes AS qb, "
        "cbr0_loss_rate AS loss FROM summary",
    )


def mmsys_fig4(store: Store, stem: Path, label: str) -> list[Path]:
    a = _agg(_loss_by_rule(store), ["tcp0_cc", "rule", "qb"], "loss")
    ccs = sorted(a.tcp0_cc.unique())
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            1,
            len(ccs),
            sharey=True,
            figsize=(6.5 * len(ccs), 5),
            layout="constrained",
            squeeze=False,
        )
        for ax, cc in zip(axes[0], ccs, strict=False):
            for rule, (color, marker, name) in RULE_STYLE.items():
                d = a[(a.tcp0_cc == cc) & (a.rule == rule)].sort_values("qb")
                if len(d):
                    ax.errorbar(
                        d.qb / 1e3,
                        d.med * 100,
                        yerr=[(d.med - d.lo) * 100, (d.hi - d.med) * 100],
                        color=color,
                        marker=marker,
                        capsize=3,
                        label=name,
                    )
            ax.set_title(f"{cc} (Linux 2.6.25)")
            ax.set_xlabel("queue size (kB; PS: slots × 1.5 kB)")
            ax.legend(loc="upper right")
        axes[0, 0].set_ylabel("downstream CBR loss (%)")
        axes[0, 0].set_ylim(bottom=0)
        n = int(a.n.min()) if len(a) else 0
        fig.suptitle(
            f"{label}\nADSL1, RTT 100 ms, CBR 186 B / 20 ms both ways;"
            f" median, min-max over {n} trials"
        )
        return _save(fig, stem)


def fig4_claims(store: Store):
    from . import Claim

    a = _agg(_loss_by_rule(store), ["tcp0_cc", "rule", "qb"], "loss")
    m = a.groupby("rule").med.mean() * 100
    get = lambda r: float(m.get(r, math.nan))  # noqa: E731
    return [
        Claim(
            "FB-strict CBR loss (mean of medians over sizes)",
            "near 0 %",
            f"{get('fb-strict'):.2f} %",
            get("fb-strict") < 0.5,
        ),
        Claim(
            "FB-loose loss far higher than FB-strict",
            "far higher",
            f"{get('fb-loose'):.2f} %",
            get("fb-loose") > 3 * max(get("fb-strict"), 0.01),
        ),
        Claim(
            "PS between the two",
            "between",
            f"{get('ps'):.2f} %",
            get("fb-strict") <= get("ps") <= get("fb-loose"),
        ),
    ]


def mmsys_fig5(store: Store, stem: Path, label: str) -> list[Path]:
    df = _df(
        store,
        "SELECT cbr0_jitter_s AS jitter, cbr0_loss_rate AS loss, "
        "tcp0_congestion_events AS events FROM summary",
    )
    with plt.rc_context(_STYLE):
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
        for k, (jit, d) in enumerate(df.groupby("jitter")):
            name = "no jitter" if jit == 0 else f"jitter σ = {jit * 1e3:.0f} ms"
            y = np.sort(d.loss.to_numpy()) * 100
            ax.plot(np.arange(1, len(y) + 1), y, marker="o", ls="none", color=f"C{k}", label=name)
            bx.scatter(d.events, d.loss * 100, color=f"C{k}", label=name)
        ax.set_xlabel("trial (sorted by loss)")
        ax.set_ylabel("downstream CBR loss (%)")
        ax.legend()
        bx.set_xlabel("congestion events per trial")
        bx.set_ylabel("downstream CBR loss (%)")
        bx.legend()
        fig.suptitle(
            f"{label}\nADSL1, RTT 50 ms, 60 kB FB-loose queue, CUBIC (Linux 2.6.25), "
            f"{len(df) // max(1, df.jitter.nunique())} trials per setting"
        )
        return _save(fig, stem)


def fig5_claims(store: Store):
    from . import Claim

    df = _df(store, "SELECT cbr0_jitter_s AS jitter, cbr0_loss_rate AS loss FROM summary")
    cv = df.groupby("jitter").loss.agg(lambda x: float(np.std(x) / max(np.mean(x), 1e-12)))
    off, on = (
        float(cv.get(0.0, math.nan)),
        float(cv[cv.index > 0].iloc[0]) if (cv.index > 0).any() else math.nan,
    )
    return [
        Claim(
            "spread of per-trial CBR loss (coefficient of variation), no jitter vs jitter",
            "lock-in without jitter: wider",
            f"{off:.2f} vs {on:.2f}",
            off > on,
        )
    ]


def fine_sweep(cc: str):
    def draw(store: Store, stem: Path, label: str) -> list[Path]:
        df = _df(
            store,
            f"SELECT down_queue_rule AS rule, down_queue_limit AS qb, cbr0_loss_rate AS loss "
            f"FROM summary WHERE tcp0_cc = '{cc}'",
        )
        a = _agg(df, ["rule", "qb"], "loss", q=(0.05, 0.95))
        with plt.rc_context(_STYLE):
            fig, ax = plt.subplots(figsize=(10, 5), layout="constrained")
            for rule in ("fb-loose", "fb-strict"):
                d = a[a.rule == rule].sort_values("qb")
                color, _, name = RULE_STYLE[rule]
                ax.fill_between(
                    d.qb / 1e3,
                    d.lo * 100,
                    d.hi * 100,
                    color=color,
                    alpha=0.2,
                    label=f"{name} 5-95 %",
                )
                ax.plot(d.qb / 1e3, d.med * 100, color=color, lw=1.2, label=f"{name} median")
            ax.set_xlabel("queue size (kB)")
            ax.set_ylabel("downstream CBR loss (%)")
            ax.set_ylim(bottom=0)
            ax.legend(loc="upper right", ncols=2)
            n = int(a.n.min()) if len(a) else 0
            fig.suptitle(
                f"{label}\nADSL1, RTT 100 ms, {cc} (Linux 2.6.25), {a.qb.nunique()} sizes, "
                f"{n} trials per point"
            )
            return _save(fig, stem)

    return draw


def fig6_claims(cc: str):
    def claims(store: Store):
        from . import Claim

        df = _df(
            store,
            f"SELECT down_queue_rule AS rule, down_queue_limit AS qb, cbr0_loss_rate AS loss "
            f"FROM summary WHERE tcp0_cc = '{cc}'",
        )
        a = _agg(df, ["rule", "qb"], "loss").pivot(index="qb", columns="rule", values="med")
        share = (
            float((a["fb-loose"] > a["fb-strict"]).mean())
            if {"fb-loose", "fb-strict"} <= set(a)
            else math.nan
        )
        loose = a.get("fb-loose", a.iloc[:, 0])
        return [
            Claim(
                f"{cc}: FB-loose loses more CBR than FB-strict",
                "at every size",
                f"at {share * 100:.0f} % of sizes",
                share > 0.9,
            ),
            Claim(
                f"{cc}: FB-loose loss is not monotonic in the queue size",
                "peaks at particular sizes",
                f"median loss from {loose.min() * 100:.2f} % to {loose.max() * 100:.2f} %",
                None,
            ),
        ]

    return claims


def mmsys_fig7(store: Store, stem: Path, label: str) -> list[Path]:
    df = _df(
        store,
        "SELECT s.link, s.tcp0_cc AS cc, s.rtt_s, c.extra_delay_s AS d FROM cbr c "
        "JOIN summary s USING (key) WHERE c.flow = 1 AND c.sent_s >= s.warmup_s "
        "AND c.extra_delay_s IS NOT NULL AND NOT isnan(c.extra_delay_s)",
    )
    links = [lk for lk in LINKS if lk in set(df.link)]
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            1, len(links), figsize=(7 * len(links), 5), layout="constrained", squeeze=False
        )
        for ax, link in zip(axes[0], links, strict=False):
            d = df[df.link == link]
            rtts = sorted(d.rtt_s.unique())
            ccs = sorted(d.cc.unique())
            w = 0.8 / max(1, len(ccs))
            for k, cc in enumerate(ccs):
                data = [d[(d.cc == cc) & (d.rtt_s == r)].d.to_numpy() * 1e3 for r in rtts]
                data = [x[np.isfinite(x)] for x in data]  # lost packets have no delay
                pos = np.arange(len(rtts)) + (k - (len(ccs) - 1) / 2) * w
                bp = ax.boxplot(
                    data,
                    positions=pos,
                    widths=w * 0.9,
                    whis=(5, 95),
                    showfliers=False,
                    patch_artist=True,
                )
                color = CC_STYLE.get(cc, ("k", "o"))[0]
                for b in bp["boxes"]:
                    b.set_facecolor(color)
                    b.set_alpha(0.4)
                ax.plot([], [], color=color, lw=6, alpha=0.4, label=cc)
            ax.set_xticks(np.arange(len(rtts)), [f"{r * 500:.0f}" for r in rtts])
            ax.set_xlabel("RTT/2 (ms)")
            ax.set_ylabel("additional downstream CBR delay (ms)")
            bound = 40_000 * 8 / LINKS[link][0] * 1e3
            ax.axhline(bound, color="k", ls=":", lw=0.8, label=f"full 40 kB queue ({bound:.1f} ms)")
            ax.set_title(link.upper())
            ax.set_ylim(bottom=0)
            handles, labels = ax.get_legend_handles_labels()
            ax.legend(handles[-1:], labels[-1:], loc="upper right")  # this panel's bound
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(handles[:-1], labels[:-1], loc="outside lower center", ncols=4)
        fig.suptitle(
            f"{label}\n40 kB FB-loose queue, CBR both ways; boxes: quartiles, whiskers: 5-95 %,"
            " all packets of all trials"
        )
        return _save(fig, stem)


def fig7_claims(store: Store):
    from . import Claim

    df = _df(store, "SELECT link, max(cbr0_delay_max_s) AS mx FROM summary GROUP BY link")
    out = []
    for r in df.itertuples():
        bound = (40_000 + 2 * 1500) * 8 / LINKS[r.link][0]
        out.append(
            Claim(
                f"{r.link}: max additional delay within a full FB-loose 40 kB queue",
                f"≤ {bound * 1e3:.0f} ms",
                f"{r.mx * 1e3:.1f} ms",
                bool(r.mx <= bound),
            )
        )
    return out


def adsl2_loss(store: Store, stem: Path, label: str) -> list[Path]:
    df = _df(store, "SELECT tcp0_cc, down_queue_limit AS qb, cbr0_loss_rate AS loss FROM summary")
    a = _agg(df, ["tcp0_cc", "qb"], "loss")
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
        for cc, d in a.groupby("tcp0_cc"):
            color, marker = CC_STYLE.get(cc, ("k", "o"))
            d = d.sort_values("qb")
            ax.errorbar(
                d.qb / 1e3,
                d.med * 100,
                yerr=[(d.med - d.lo) * 100, (d.hi - d.med) * 100],
                color=color,
                marker=marker,
                capsize=3,
                label=f"{cc} (median, min-max)",
            )
        ax.set_xlabel("FB-loose queue size (kB)")
        ax.set_ylabel("downstream CBR loss (%)")
        ax.set_ylim(bottom=0)
        ax.legend()
        fig.suptitle(
            f"{label}\nADSL2 24 / 1 Mbit/s, RTT 100 ms,"
            f" {int(a.n.min()) if len(a) else 0} trials per point"
        )
        return _save(fig, stem)


def adsl2_claims(store: Store):
    from . import Claim

    # The paper plots medians over trials; compare those, and show the worst trial too.
    df = _df(
        store,
        "SELECT tcp0_cc, down_queue_limit, median(cbr0_loss_rate) AS med, "
        "max(cbr0_loss_rate) AS mx FROM summary GROUP BY ALL",
    )
    lo, hi, worst = float(df.med.min()), float(df.med.max()), float(df.mx.max())
    return [
        Claim(
            "ADSL2 downstream CBR loss with FB-loose (medians per point)",
            "order of 1 % or less",
            f"medians {lo * 100:.2f}-{hi * 100:.2f} %, worst trial {worst * 100:.2f} %",
            hi <= 0.02,
        )
    ]


# ---------------------------------------------------------------------------------------
# Huebner 2008


def _setup(row: Any) -> str:
    return f"{row['tcp0_cc']} ({row['tcp0_profile']})"


def huebner_epochs(store: Store, stem: Path, label: str) -> list[Path]:
    rows = _df(store, "SELECT * FROM summary ORDER BY tcp0_profile, tcp0_cc")
    files = []
    for _, row in rows.iterrows():
        r = _result(store, row["key"], row)
        name = f"{row['tcp0_cc']}-{row['tcp0_profile']}"
        title = (
            f"{label}: {_setup(row)}\n10 Mbit/s, RTT 80 ms, 1-BDP queue (67 slots),"
            f" mean epoch {row['tcp0_epoch_mean_s']:.2f} s over the trial"
        )
        files += fig_cwnd_queue(
            r, path=stem.parent / f"{stem.name}-{name}.svg", title=title, svg=True
        )
    return files


def huebner_epoch_claims(store: Store):
    from . import Claim

    df = _df(store, "SELECT tcp0_cc AS cc, tcp0_profile AS p, tcp0_epoch_mean_s AS e FROM summary")
    e = {(r.cc, r.p): r.e for r in df.itertuples()}
    out = [
        Claim(f"mean congestion epoch, {cc} ({p})", "", f"{v:.2f} s")
        for (cc, p), v in sorted(e.items())
    ]
    for cc in ("newreno", "htcp"):
        if (cc, "linux-2.6.25") in e and (cc, "freebsd-7") in e:
            ratio = e[(cc, "linux-2.6.25")] / e[(cc, "freebsd-7")]
            out.append(
                Claim(
                    f"{cc}: Linux epochs longer than FreeBSD's (delayed ACKs)",
                    "Linux much longer",
                    f"ratio {ratio:.2f}",
                    ratio > 1.3,
                )
            )
    return out


def huebner_owd_queue(store: Store, stem: Path, label: str) -> list[Path]:
    rows = _df(
        store,
        "SELECT * FROM summary WHERE tcp0_profile = 'linux-2.6.25' "
        "AND tcp0_cc IN ('htcp', 'cubic') ORDER BY tcp0_cc",
    )
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            1, max(1, len(rows)), sharey=True, figsize=(12, 5), layout="constrained", squeeze=False
        )
        for ax, (_, row) in zip(axes[0], rows.iterrows(), strict=False):
            r = _result(store, row["key"], row)
            pk = r.cbr_packets("down")
            sel = (pk["sent_s"] >= r.warmup_s) & np.isfinite(pk["owd_s"])
            tq, _, qp = r.queue_series("down", step=0.001, t0=r.warmup_s, t1=r.duration_s)
            occ = np.interp(pk["sent_s"][sel], tq, qp)
            ax.scatter(
                occ, pk["owd_s"][sel] * 1e3, s=3, alpha=0.5, color=CC_STYLE[row["tcp0_cc"]][0]
            )
            ax.set_title(_setup(row))
            ax.set_xlabel("queue occupancy at the VoIP packet's arrival (packets)")
        axes[0, 0].set_ylabel("VoIP one-way delay (ms)")
        fig.suptitle(
            f"{label}\n10 Mbit/s, RTT 80 ms, 1-BDP queue (67 slots), G.711-like 200 B / 20 ms"
        )
        return _save(fig, stem)


def _delay_df(store: Store) -> pd.DataFrame:
    return _df(
        store,
        "SELECT s.tcp0_cc AS cc, s.tcp0_profile AS p, s.down_rate_bps AS rate, s.rtt_s, "
        "s.tag_bdp_bytes AS bdp, s.tag_bdp_fraction AS frac, c.owd_s FROM cbr c "
        "JOIN summary s USING (key) WHERE c.sent_s >= s.warmup_s AND c.owd_s IS NOT NULL "
        "AND NOT isnan(c.owd_s)",
    )


def huebner_cdf(store: Store, stem: Path, label: str) -> list[Path]:
    df = _delay_df(store)
    df = df[(df.frac == 1) & (np.isclose(df.rtt_s, 0.08))]
    rates = sorted(df.rate.unique())
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(
            1, max(1, len(rates)), figsize=(15, 4.8), layout="constrained", squeeze=False
        )
        for ax, rate in zip(axes[0], rates, strict=False):
            d = df[df.rate == rate]
            for (cc, p), g in sorted(d.groupby(["cc", "p"]), key=lambda x: x[0]):
                x = np.sort(g.owd_s.to_numpy()) * 1e3
                ls = "-" if p.startswith("linux") else "--"
                ax.plot(
                    x,
                    np.arange(1, len(x) + 1) / len(x),
                    ls=ls,
                    color=CC_STYLE.get(cc, ("k",))[0],
                    label=f"{cc} ({p})",
                )
            ax.set_title(f"{rate / 1e6:g} Mbit/s, RTT 80 ms, 1 BDP")
            ax.set_xlabel("VoIP one-way delay (ms)")
            ax.set_ylim(0, 1)
        axes[0, 0].set_ylabel("fraction of packets")
        axes[0, -1].legend(loc="lower right", fontsize=9)
        fig.suptitle(label)
        return _save(fig, stem)


def huebner_median_bdp(store: Store, stem: Path, label: str) -> list[Path]:
    """Median VoIP queueing delay against the BDP, as a fraction of what a full queue of
    that size adds (f·RTT for a queue of f BDP): different (rate, RTT) pairs with the same
    BDP then compare, and the curves show how full each algorithm keeps the queue."""
    df = _df(
        store,
        "SELECT tcp0_cc AS cc, tcp0_profile AS p, tag_bdp_bytes AS bdp, "
        "tag_bdp_fraction AS frac, rtt_s, down_queue_limit AS slots, "
        "down_rate_bps AS rate, cbr0_delay_median_s AS d FROM summary",
    )
    # The queue's real size in seconds (slots are whole packets: ceil(f·BDP / 1500)).
    df["full"] = df.slots * 1500 * 8 / df.rate
    df["fill"] = df.d / df.full
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 2, sharey=True, figsize=(12, 5), layout="constrained")
        for ax, frac in zip(axes, (1.0, 0.25), strict=False):
            d = df[np.isclose(df.frac, frac)]
            for (cc, p), g in d.groupby(["cc", "p"]):
                g = g.groupby("bdp").fill.median().reset_index()
                ax.plot(
                    g.bdp / 1e3,
                    g.fill,
                    marker=CC_STYLE.get(cc, ("k", "o"))[1],
                    ls="-" if p.startswith("linux") else "--",
                    color=CC_STYLE.get(cc, ("k",))[0],
                    label=f"{cc} ({p})",
                )
            ax.set_xscale("log")
            ax.set_xlabel("bandwidth-delay product (kB)")
            ax.set_title(f"queue = {frac:g} BDP")
            ax.set_ylim(0, 1.05)
        axes[0].set_ylabel("median VoIP queueing delay / full-queue delay")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=5, fontsize=9)
        fig.suptitle(
            f"{label}\n1, 10, 100 Mbit/s x RTT 16, 80, 160 ms (same BDP: medians"
            " pooled); 200 B / 20 ms one way; 1 = the queue always full"
        )
        return _save(fig, stem)


def huebner_bdp_claims(store: Store):
    from . import Claim

    df = _df(
        store,
        "SELECT tcp0_cc AS cc, tcp0_profile AS p, median(cbr0_delay_median_s) AS d "
        "FROM summary WHERE tag_bdp_fraction = 1 GROUP BY ALL ORDER BY ALL",
    )
    return [
        Claim(f"median additional VoIP delay at 1 BDP, {r.cc} ({r.p})", "", f"{r.d * 1e3:.1f} ms")
        for r in df.itertuples()
    ]


# ---------------------------------------------------------------------------------------
# Parris, Jeffay & Smith (CBT, MMCN '99)

DISCIPLINES = ("drop-tail", "RED", "FRED", "CBT", "CBT-queue-avg", "CBQ")
DISC_STYLE = {
    "drop-tail": ("0.35", "-"),
    "RED": ("C0", "-"),
    "FRED": ("C2", "-"),
    "CBT": ("C3", "-"),
    "CBT-queue-avg": ("C1", "-."),
    "CBQ": ("C4", "--"),
}
BLAST = "+udpblast"


def _phases(store: Store) -> pd.DataFrame:
    """Every trial's per-phase, per-class rows (downstream), with its discipline."""
    import json

    import pandas as pd

    rows = []
    for _, r in _df(store, "SELECT tag_discipline AS d, rep, phases FROM summary").iterrows():
        for p in json.loads(r["phases"]):
            if p["direction"] == "down":
                rows.append({"discipline": r["d"], "rep": r["rep"], **p})
    df = pd.DataFrame(rows)
    for c in ("drop_rate", "latency_mean_s", "throughput_bps"):
        df[c] = pd.to_numeric(df[c])
    return df


def _order(names: Any) -> list[str]:
    have = set(names)
    return [d for d in DISCIPLINES if d in have] + sorted(have - set(DISCIPLINES))


def parris_throughput(store: Store, stem: Path, label: str) -> list[Path]:
    """Aggregate TCP throughput (1 s bins, downstream) over time per discipline, the
    phases shaded and named."""
    bins = _df(
        store,
        "SELECT s.tag_discipline AS d, c.time_s AS t, median(c.bytes * 8 / 1e6) AS mbps,"
        " count(*) AS n FROM classes c JOIN summary s USING (key)"
        " WHERE c.direction = 0 AND c.class = 0 GROUP BY ALL ORDER BY 1, 2",
    )
    ph = _phases(store)
    spans = ph.groupby("phase", sort=False)[["start_s", "end_s"]].first().sort_values("start_s")
    rate = 10.0
    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(12, 5.2), layout="constrained")
        for k, (name, sp) in enumerate(spans.iterrows()):
            if k % 2:
                ax.axvspan(sp.start_s, sp.end_s, color="0.93", zorder=0)
            ax.text(
                (sp.start_s + sp.end_s) / 2, rate * 1.02, name, ha="center", va="bottom", fontsize=9
            )
            ax.axvline(sp.start_s, color="0.6", lw=0.8, zorder=1)
        for d in _order(bins.d.unique()):
            b = bins[bins.d == d]
            color, ls = DISC_STYLE.get(d, ("k", ":"))
            ax.plot(b.t + 0.5, b.mbps, color=color, ls=ls, lw=1.6, label=d)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("aggregate TCP throughput (Mbit/s, 1 s bins)")
        ax.set_ylim(0, rate * 1.1)
        ax.set_xlim(0, float(bins.t.max()) + 1 if len(bins) else 1)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="router queue")
        n = int(bins.n.min()) if len(bins) else 0
        fig.suptitle(
            f"{label}\n10 Mbit/s, web users + 6 tagged multimedia streams + UDP blast;"
            f" median of {n} trials per 1 s bin"
        )
        return _save(fig, stem)


def _blast_table(store: Store) -> pd.DataFrame:
    """Per discipline, during the udpblast phase: median over trials of the multimedia
    (tagged) drop rate and latency, TCP throughput, and the blast's own share."""
    ph = _phases(store)
    b = ph[ph.phase == BLAST]
    piv = b.pivot_table(
        index=["discipline", "rep"],
        columns="class",
        values=["drop_rate", "latency_mean_s", "throughput_bps"],
        aggfunc="first",
    )
    t = (
        piv.groupby(level="discipline")
        .median()
        .rename(columns={"drop_rate": "drop", "latency_mean_s": "lat", "throughput_bps": "thr"})
    )
    t.columns = [f"{a}_{c}" for a, c in t.columns]
    t["trials"] = piv.groupby(level="discipline").size()
    return t.reindex(_order(t.index))


def parris_multimedia(store: Store, stem: Path, label: str) -> list[Path]:
    """The study's table: multimedia drop rate and average latency during the UDP
    blast, per discipline (as bars, and as CSV and Markdown beside the figure)."""
    t = _blast_table(store)
    names = list(t.index)
    x = np.arange(len(names))
    with plt.rc_context(_STYLE):
        fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), layout="constrained")
        colors = [DISC_STYLE.get(d, ("k", "-"))[0] for d in names]
        for ax, col, scale, ylabel in (
            (axes[0], "drop_tagged", 100, "multimedia drop rate (%)"),
            (axes[1], "lat_tagged", 1e3, "multimedia latency at the router (ms)"),
            (axes[2], "thr_tcp", 1e-6, "TCP throughput (Mbit/s)"),
        ):
            v = t[col].to_numpy(dtype=float) * scale
            ax.bar(x, v, color=colors)
            for xi, vi in zip(x, v, strict=True):
                ax.annotate(f"{vi:.1f}", (xi, vi), ha="center", va="bottom", fontsize=9)
            ax.set_xticks(x, names, rotation=20, ha="right")
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, max(float(np.nanmax(v)) * 1.18, 1e-9) if len(v) else 1)
        n = int(t.trials.min()) if len(t) else 0
        fig.suptitle(
            f"{label}\n10 Mbit/s of untagged UDP beside web traffic and 6 tagged streams;"
            f" medians of {n} trials"
        )
        files = _save(fig, stem)
    lines = [
        "| queue | multimedia drop rate | multimedia latency | TCP throughput | UDP blast"
        " throughput |",
        "|---|---:|---:|---:|---:|",
    ]
    for d, r in t.iterrows():
        lines.append(
            f"| {d} | {r.drop_tagged * 100:.1f} % | {r.lat_tagged * 1e3:.1f} ms"
            f" | {r.thr_tcp / 1e6:.2f} Mbit/s | {r.thr_other / 1e6:.2f} Mbit/s |"
        )
    md = stem.with_suffix(".md")
    md.write_text("\n".join(lines) + "\n")
    csv = stem.with_suffix(".csv")
    t.to_csv(csv)
    return [*files, md, csv]


def _blast_get(store: Store) -> tuple[pd.DataFrame, Any]:
    t = _blast_table(store)

    def get(d: str, col: str) -> float:
        return float(t[col].get(d, math.nan)) if col in t else math.nan

    return t, get


def parris_tcp_claims(store: Store):
    from . import Claim

    _, get = _blast_get(store)
    ph = _phases(store)
    web = ph[(ph.phase == "web") & (ph["class"] == "tcp")].groupby("discipline").throughput_bps
    web_thr = web.median()

    def kept(d: str) -> float:  # TCP throughput in the blast / before it
        return get(d, "thr_tcp") / float(web_thr.get(d, math.nan))

    return [
        Claim(
            "drop-tail and RED: the UDP blast starves TCP (throughput kept vs web phase)",
            "starved",
            f"drop-tail {kept('drop-tail'):.0%}, RED {kept('RED'):.0%}",
            kept("drop-tail") < 0.5 and kept("RED") < 0.5,
        ),
        Claim(
            "FRED, CBT, CBQ protect TCP from the blast",
            "protected",
            f"FRED {kept('FRED'):.0%}, CBT {kept('CBT'):.0%}, CBQ {kept('CBQ'):.0%}",
            min(kept("FRED"), kept("CBT"), kept("CBQ")) > 0.6,
        ),
    ]


def parris_multimedia_claims(store: Store):
    from . import Claim

    t, get = _blast_get(store)
    out = [
        Claim(
            "FRED still drops much of the (unresponsive) multimedia",
            "high multimedia loss",
            f"{get('FRED', 'drop_tagged'):.1%}",
            get("FRED", "drop_tagged") > 5 * max(get("CBT", "drop_tagged"), 0.001),
        ),
        Claim(
            "CBT gives multimedia lower latency than RED and FRED (MMCN '99 abstract)",
            "lower than RED, FRED",
            f"CBT {get('CBT', 'lat_tagged') * 1e3:.1f} ms, CBT-queue-avg"
            f" {get('CBT-queue-avg', 'lat_tagged') * 1e3:.1f} ms; RED"
            f" {get('RED', 'lat_tagged') * 1e3:.1f}, FRED {get('FRED', 'lat_tagged') * 1e3:.1f} ms",
            min(get("CBT", "lat_tagged"), get("CBT-queue-avg", "lat_tagged"))
            < min(get("RED", "lat_tagged"), get("FRED", "lat_tagged")),
        ),
        Claim(
            "CBT: tagged multimedia gets (almost) its rate, close to CBQ",
            "CBT comparable to CBQ",
            f"drops CBT {get('CBT', 'drop_tagged'):.1%} vs CBQ {get('CBQ', 'drop_tagged'):.1%};"
            f" TCP CBT {get('CBT', 'thr_tcp') / 1e6:.2f} vs CBQ"
            f" {get('CBQ', 'thr_tcp') / 1e6:.2f} Mbit/s",
            get("CBT", "drop_tagged") < 0.02
            and abs(get("CBT", "thr_tcp") / get("CBQ", "thr_tcp") - 1) < 0.2,
        ),
    ]
    for d in t.index:
        out.append(
            Claim(
                f"{d}: multimedia during the blast",
                "(table)",
                f"drop {get(d, 'drop_tagged'):.1%}, latency {get(d, 'lat_tagged') * 1e3:.1f} ms,"
                f" TCP {get(d, 'thr_tcp') / 1e6:.2f} Mbit/s",
            )
        )
    return out
