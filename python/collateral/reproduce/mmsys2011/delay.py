"""MMSys 2011 Fig. 1 (cwnd and the CBR's queueing delay, NewReno vs CUBIC) and Fig. 7
(the downstream CBR's additional delay against RTT/2 with a 40 kB FB-loose queue)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...plot.draw import floor_at_zero, steps_compact
from ...plot.style import STYLE, legend_outside, plt, suptitle
from ..claims import Claim
from ..drawing import CC_STYLE, save_with_caption
from ..stored import query, trial_result
from .sweep import LINKS

if TYPE_CHECKING:
    from ...store import Store


def mmsys_fig1(store: Store, stem: Path, label: str) -> list[Path]:
    rows = query(store, "SELECT * FROM summary ORDER BY tcp0_cc DESC")
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            2, len(rows), sharex="col", figsize=(13, 6.5), layout="constrained", squeeze=False
        )
        for i, (_, row) in enumerate(rows.iterrows()):
            r = trial_result(store, row["key"], row)
            t0 = r.warmup_s
            t1 = min(t0 + 10, r.duration_s)
            t, cwnd, ssthresh = r.cwnd_series(0, step=0.001, t0=t0, t1=t1)
            t, cwnd, ssthresh = steps_compact(t, cwnd, ssthresh)
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
            floor_at_zero(ax, bound * 1.2)
            ax.set_ylabel("additional delay (ms)")
            ax.set_xlabel(f"time (s) from {t0:.0f} s")
        h0, l0 = axes[0, 0].get_legend_handles_labels()
        h1, l1 = axes[1, 0].get_legend_handles_labels()
        fig.legend(h0 + h1, l0 + l1, loc="outside lower center", ncols=4)
        suptitle(
            fig,
            f"{label}\nADSL1 1.5 Mbit/s / 256 kbit/s, RTT 100 ms, 20 kB FB-strict queue,"
            " CBR 186 B / 20 ms both ways, 1 trial each",
        )
        caption = (
            "One bulk TCP download (NewReno left, CUBIC right; Linux 2.6.25 stack) shares an"
            " ADSL1 line (1.5 Mbit/s down, 256 kbit/s up, RTT 100 ms) with a 186 B / 20 ms"
            " CBR flow each way, behind a 20 kB FB-strict gateway queue. Top: the sender's"
            " congestion window (and slow-start threshold) over 10 s after the warm-up."
            " Bottom: each downstream CBR packet's delay beyond the empty path, at its send"
            " time; the dotted line is the delay of a full 20 kB queue. Each window"
            " sawtooth fills the queue and delays the CBR packets behind it; how far the"
            " delay falls after each back-off is the algorithm's mark on the CBR flow."
        )
        return save_with_caption(fig, stem, caption)


def mmsys_fig1_claims(store: Store):
    df = query(store, "SELECT tcp0_cc, cbr0_delay_max_s, cbr0_delay_median_s FROM summary")
    bound = (20_000 + 1500) * 8 / 1.5e6
    # "about 107 ms": a full 20 kB queue at 1.5 Mbit/s is 106.7 ms; the packet in service
    # (1500 B) can add 8 ms on top, and "about" allows 10 % below the full queue.
    low = 0.9 * 20_000 * 8 / 1.5e6
    out = [
        Claim(
            f"max additional CBR delay, {r.tcp0_cc}",
            "about 107 ms (20 kB at 1.5 Mbit/s)",
            f"{r.cbr0_delay_max_s * 1e3:.1f} ms",
            bool(low <= r.cbr0_delay_max_s <= bound),
            f"{low * 1e3:.0f} ms ≤ max ≤ {bound * 1e3:.1f} ms (90 % of the full 20 kB queue"
            " up to the full queue plus the 1500 B packet in service)",
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
                "CUBIC's median additional delay > NewReno's (strict, one trial each)",
            )
        )
    return out


def mmsys_fig7(store: Store, stem: Path, label: str) -> list[Path]:
    df = query(
        store,
        "SELECT s.link, s.tcp0_cc AS cc, s.rtt_s, c.extra_delay_s AS d FROM cbr c "
        "JOIN summary s USING (key) WHERE c.flow = 1 AND c.sent_s >= s.warmup_s "
        "AND isfinite(c.extra_delay_s)",  # lost packets (NaN) have no delay
    )
    links = [lk for lk in LINKS if lk in set(df.link)]
    bounds = {lk: 40_000 * 8 / LINKS[lk][0] * 1e3 for lk in links}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1, len(links), figsize=(6.5 * len(links), 4.8), layout="constrained", squeeze=False
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
                    medianprops={"color": "k", "lw": 1.3},
                )
                color = CC_STYLE.get(cc, ("k", "o"))[0]
                for b in bp["boxes"]:
                    b.set_facecolor(color)
                    b.set_alpha(0.45)
                ax.plot([], [], color=color, lw=6, alpha=0.45, label=f"{cc} (Linux 2.6.25)")
            ax.set_xticks(np.arange(len(rtts)), [f"{r * 500:g}" for r in rtts])
            ax.set_xlabel("RTT/2 (ms)")
            ax.set_ylabel("additional downstream CBR delay (ms)")
            bound = bounds[link]
            ax.axhline(bound, color="k", ls=":", lw=1.0, label="delay of a full 40 kB queue")
            ax.annotate(
                f"full 40 kB queue: {bound:.1f} ms",
                (0.0, bound),
                xycoords=("axes fraction", "data"),
                xytext=(4, 3),
                textcoords="offset points",
                fontsize=9,
                va="bottom",
            )
            ax.set_title(f"{link.upper()} ({LINKS[link][0] / 1e6:g} Mbit/s down)")
            # Room above the bound for its label: whiskers reach up to it.
            floor_at_zero(ax, bound * 1.14)
        legend_outside(fig, "below", ncols=4)
        suptitle(
            fig,
            f"{label}\n40 kB FB-loose queue, CBR both ways; boxes: quartiles, whiskers: 5-95 %,"
            " all packets of all trials",
        )
        caption = (
            "Additional one-way delay (beyond the empty path) of every downstream CBR packet"
            " (186 B / 20 ms) beside one bulk TCP download (CUBIC, NewReno; Linux 2.6.25)"
            " through a 40 kB FB-loose gateway queue, against half the round-trip time, on"
            " ADSL1 (left) and ADSL2 (right). Boxes: quartiles with the median (black);"
            " whiskers: 5th and 95th percentiles over all packets of all trials; lost"
            " packets are left out. The dotted line is the delay of a full 40 kB queue at"
            " the downstream rate, the most a packet can wait; the closer the boxes sit to"
            " it, the fuller the algorithm keeps the queue."
        )
        return save_with_caption(fig, stem, caption)


def fig7_claims(store: Store):
    df = query(
        store, "SELECT link, max(cbr0_delay_max_s) AS mx FROM summary GROUP BY link ORDER BY link"
    )
    out = []
    for r in df.itertuples():
        bound = (40_000 + 2 * 1500) * 8 / LINKS[r.link][0]
        out.append(
            Claim(
                f"{r.link}: max additional delay within a full FB-loose 40 kB queue",
                f"≤ {bound * 1e3:.0f} ms",
                f"{r.mx * 1e3:.1f} ms",
                bool(r.mx <= bound),
                f"≤ {bound * 1e3:.1f} ms: 40 kB plus up to one 1500 B packet of FB-loose"
                " overfill plus the 1500 B packet in service, at the downstream rate (max"
                " over all trials and RTTs)",
            )
        )
    return out
