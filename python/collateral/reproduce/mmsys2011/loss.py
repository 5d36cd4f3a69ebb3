"""MMSys 2011's CBR loss figures: loss against queue size under PS, FB-strict and
FB-loose (Fig. 4), CUBIC's fast-convergence lock-in (Fig. 5), the fine byte-size sweep
(Fig. 6) and ADSL2's loss with FB-loose queues."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.draw import break_gaps, floor_at_zero
from ...plot.style import STYLE, legend_outside, plt, suptitle
from ..claims import Claim
from ..drawing import CC_STYLE, save_with_caption, spread_text, trials_word
from ..stored import query
from .sweep import RULE_STYLE, agg, grid_step, marks_and_lines

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store


def _loss_by_rule(store: Store) -> pd.DataFrame:
    return query(
        store,
        "SELECT tcp0_cc, down_queue_rule AS rule, tag_queue_bytes AS qb, "
        "cbr0_loss_rate AS loss FROM summary",
    )


def mmsys_fig4(store: Store, stem: Path, label: str) -> list[Path]:
    a = agg(_loss_by_rule(store), ["tcp0_cc", "rule", "qb"], "loss")
    ccs = sorted(a.tcp0_cc.unique())
    n = int(a.n.min()) if len(a) else 0
    spread = spread_text(n, (0.0, 1.0))
    step = grid_step(a.qb / 1e3)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            1,
            len(ccs),
            sharey=True,
            figsize=(6.2 * len(ccs), 4.8),
            layout="constrained",
            squeeze=False,
        )
        for ax, cc in zip(axes[0], ccs, strict=False):
            for rule, (color, marker, name) in RULE_STYLE.items():
                d = a[(a.tcp0_cc == cc) & (a.rule == rule)].sort_values("qb")
                if len(d):
                    marks_and_lines(
                        ax,
                        d.qb / 1e3,
                        d.med * 100,
                        d.lo * 100,
                        d.hi * 100,
                        step,
                        color=color,
                        marker=marker,
                        label=name,
                    )
            ax.set_title(f"{cc} (Linux 2.6.25)")
            ax.set_xlabel("queue size (kB; PS: the size its slots stand for, ⌈kB / 1.5⌉ slots)")
        axes[0, 0].set_ylabel("downstream CBR loss (%)")
        top = float(a.hi.max()) * 100 if len(a) else 1.0
        floor_at_zero(axes[0, 0], max(top * 1.06, 0.5))
        handles, labels = axes[0, 0].get_legend_handles_labels()
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=len(labels) + 1,
            title=f"queue rule (median, bars {spread}; lines only between sizes {step:g} kB apart)",
        )
        suptitle(
            fig,
            f"{label}\nADSL1, RTT 100 ms, CBR 186 B / 20 ms both ways; median, {spread}",
        )
        sizes = {
            RULE_STYLE.get(r, ("", "", r))[2]: ", ".join(f"{q / 1e3:g}" for q in sorted(g.unique()))
            for r, g in a.groupby("rule").qb
        }
        caption = (
            "Loss of the downstream 186 B / 20 ms CBR flow beside one bulk TCP download"
            " (CUBIC, NewReno; Linux 2.6.25) on ADSL1 (1.5 Mbit/s down, RTT 100 ms) against"
            " the gateway queue's size, for three ways of counting it: PS (slots of one"
            " packet whatever its size: a size of B bytes is ⌈B / 1500⌉ slots, as the paper"
            " converted them, and is drawn at B), FB-strict (bytes; a packet"
            " is dropped if it does not fit) and FB-loose (bytes; a packet is accepted while"
            f" the queue is below its limit). Markers: median over {trials_word(n)};"
            f" bars: {spread}. Sizes run (kB): "
            + "; ".join(f"{k} {v}" for k, v in sizes.items())
            + f". Lines join only sizes one sampling step ({step:g} kB) apart, never across"
            " sizes that were not run. FB-strict should lose (almost) nothing: the axis"
            " starts just below 0 so that markers on the 0 line show in full."
        )
        return save_with_caption(fig, stem, caption)


def fig4_claims(store: Store):
    a = agg(_loss_by_rule(store), ["tcp0_cc", "rule", "qb"], "loss")
    m = a.groupby("rule").med.mean() * 100
    get = lambda r: float(m.get(r, math.nan))  # noqa: E731
    return [
        Claim(
            "FB-strict CBR loss (mean of medians over sizes)",
            "near 0 %",
            f"{get('fb-strict'):.2f} %",
            get("fb-strict") < 0.5,
            "< 0.5 % (mean over sizes and CCs of the median over trials)",
        ),
        Claim(
            "FB-loose loss far higher than FB-strict",
            "far higher",
            f"{get('fb-loose'):.2f} %",
            get("fb-loose") > 3 * max(get("fb-strict"), 0.01),
            "FB-loose > 3 × FB-strict (FB-strict floored at 0.01 %), same means",
        ),
        Claim(
            "PS between the two",
            "between",
            f"{get('ps'):.2f} %",
            get("fb-strict") <= get("ps") <= get("fb-loose"),
            "FB-strict ≤ PS ≤ FB-loose (same means, no margin)",
        ),
    ]


def mmsys_fig5(store: Store, stem: Path, label: str) -> list[Path]:
    df = query(
        store,
        "SELECT cbr0_jitter_s AS jitter, cbr0_loss_rate AS loss, "
        "tcp0_congestion_events AS events FROM summary",
    )
    from matplotlib.ticker import MaxNLocator

    groups = list(df.groupby("jitter"))
    with plt.rc_context(STYLE):
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.6), layout="constrained")
        for k, (jit, d) in enumerate(groups):
            name = "no jitter" if jit == 0 else f"jitter σ = {jit * 1e3:.0f} ms"
            y = np.sort(d.loss.to_numpy()) * 100
            ax.plot(np.arange(1, len(y) + 1), y, marker="o", ls="none", color=f"C{k}", label=name)
            # Whole counts: the settings side by side around each count, not on top.
            dodge = (k - (len(groups) - 1) / 2) * 0.12
            bx.scatter(d.events + dodge, d.loss * 100, color=f"C{k}", label=name, alpha=0.8)
        ax.set_xlabel("trial (sorted by loss)")
        ax.set_ylabel("downstream CBR loss (%)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        bx.set_xlabel("congestion events per trial (settings drawn side by side)")
        bx.set_ylabel("downstream CBR loss (%)")
        bx.xaxis.set_major_locator(MaxNLocator(integer=True))
        if len(df) and df.events.nunique() <= 3:
            lo, hi = float(df.events.min()), float(df.events.max())
            bx.set_xlim(lo - 1, hi + 1)
        for a in (ax, bx):
            top = float(df.loss.max()) * 100 if len(df) else 1.0
            floor_at_zero(a, max(top * 1.08, 0.5))
        legend_outside(fig, "below", ncols=max(1, len(groups)))
        n = len(df) // max(1, df.jitter.nunique())
        suptitle(
            fig,
            f"{label}\nADSL1, RTT 50 ms, 60 kB FB-loose queue, CUBIC (Linux 2.6.25), "
            f"{trials_word(n)} per setting",
        )
        caption = (
            "CUBIC's fast convergence can lock into a cycle with a fixed-interval CBR flow:"
            " one bulk CUBIC download (Linux 2.6.25) and 186 B / 20 ms CBR flows on ADSL1,"
            " RTT 50 ms, 60 kB FB-loose queue, without and with a little jitter on the CBR"
            f" sending times ({trials_word(n)} each). Left: every trial's downstream CBR"
            " loss, sorted; a wide spread between trials without jitter and a narrow one"
            " with it is the lock-in the paper describes. Right: the same loss against the"
            " number of congestion events in the trial (whole numbers; the two settings"
            " are drawn slightly apart around each count). The y axes start at 0."
        )
        return save_with_caption(fig, stem, caption)


#: "Lock-in changes the number of congestion epochs and so the loss": across the trials
#: without jitter, the loss rises with the congestion events at this Spearman rank
#: correlation at least (0.5: a clear monotone tendency; set before the check).
EPOCHS_RHO = 0.5


def _events_loss_rho(events: Any, loss: Any) -> float:
    """Spearman's rank correlation of loss with congestion events (NaN when either is
    constant or there are fewer than three trials)."""
    from scipy.stats import spearmanr

    if len(events) < 3 or np.ptp(events) == 0 or np.ptp(loss) == 0:
        return math.nan
    return float(spearmanr(events, loss).statistic)


def fig5_claims(store: Store):
    df = query(
        store,
        "SELECT cbr0_jitter_s AS jitter, cbr0_loss_rate AS loss,"
        " tcp0_congestion_events AS events FROM summary",
    )
    cv = df.groupby("jitter").loss.agg(lambda x: float(np.std(x) / max(np.mean(x), 1e-12)))
    off, on = (
        float(cv.get(0.0, math.nan)),
        float(cv[cv.index > 0].iloc[0]) if (cv.index > 0).any() else math.nan,
    )
    still = df[df.jitter == 0]
    rho = _events_loss_rho(still.events.to_numpy(), still.loss.to_numpy())
    ev = still.events
    return [
        Claim(
            "spread of per-trial CBR loss (coefficient of variation), no jitter vs jitter",
            "lock-in without jitter: wider",
            f"{off:.2f} vs {on:.2f}",
            off > on,
            "CV without jitter > CV with jitter (strict, over the trials of each setting)",
        ),
        Claim(
            "without jitter, the lock-in's loss goes with the number of congestion epochs",
            "more epochs, more loss (fast convergence always or never triggered)",
            (
                f"Spearman rho {rho:+.2f} over {len(still)} trials of {ev.min()}-{ev.max()} events"
                if not math.isnan(rho)
                else f"{len(still)} trials, {ev.min()}-{ev.max()} events, loss"
                f" {still.loss.min() * 100:.2f}-{still.loss.max() * 100:.2f} %: no ranking"
            ),
            bool(rho >= EPOCHS_RHO),
            f"rank correlation of a trial's CBR loss with its congestion events ≥ {EPOCHS_RHO}",
            "SPEC §1 after the paper: a trial locks into always (or never) triggering CUBIC's"
            " fast convergence, changing the number of congestion epochs and so the CBR"
            " loss. Where this differs, the trials' losses still split (the spread above)"
            " but not by their number of epochs, which barely differ between trials; what"
            " sets them apart is not established here (a candidate: the phase of the CBR"
            " packets against each drop episode, which fixes how many of them it takes).",
        ),
    ]


def fine_sweep(cc: str):
    def draw(store: Store, stem: Path, label: str) -> list[Path]:
        df = query(
            store,
            f"SELECT down_queue_rule AS rule, down_queue_limit_bytes AS qb, cbr0_loss_rate AS loss "
            f"FROM summary WHERE tcp0_cc = '{cc}'",
        )
        n = int(df.groupby(["rule", "qb"]).size().min()) if len(df) else 0
        # The paper's 5-95 % envelope needs 20 or more trials per point to be one; with
        # fewer (--quick runs 3) the band is the min-max range, and says so.
        q = (0.05, 0.95) if n >= 20 else (0.0, 1.0)
        band = spread_text(n, q)
        a = agg(df, ["rule", "qb"], "loss", q=q)
        step = grid_step(a.qb / 1e3)
        with plt.rc_context(STYLE):
            fig, ax = plt.subplots(figsize=(10, 4.8), layout="constrained")
            for rule in ("fb-loose", "fb-strict"):
                d = a[a.rule == rule].sort_values("qb")
                color, marker, name = RULE_STYLE[rule]
                x = d.qb.to_numpy(dtype=float) / 1e3
                bx, lo = break_gaps(x, d.lo * 100, step)
                _, hi = break_gaps(x, d.hi * 100, step)
                _, med = break_gaps(x, d.med * 100, step)
                ax.fill_between(bx, lo, hi, color=color, alpha=0.2, lw=0, label=f"{name}, {band}")
                few = len(d) <= 60  # markers at the sampled sizes while they stay apart
                ax.plot(
                    bx,
                    med,
                    color=color,
                    lw=1.3,
                    marker=marker if few else None,
                    ms=4,
                    clip_on=False,
                    label=f"{name}, median",
                )
            ax.set_xlabel("queue size (kB)")
            ax.set_ylabel("downstream CBR loss (%)")
            top = float(a.hi.max()) * 100 if len(a) else 1.0
            floor_at_zero(ax, max(top * 1.05, 0.5))
            legend_outside(ax, "right")
            suptitle(
                fig,
                f"{label}\nADSL1, RTT 100 ms, {cc} (Linux 2.6.25), {a.qb.nunique()} sizes"
                f" {step * 1e3:g} B apart; median and {band} per size",
            )
            caption = (
                f"Downstream CBR loss beside one bulk {cc} download (Linux 2.6.25) on ADSL1"
                " (1.5 Mbit/s down, RTT 100 ms), over a fine sweep of the gateway queue's"
                f" size in bytes ({a.qb.nunique()} sizes, {step * 1e3:g} B apart), for"
                " FB-loose (a packet is accepted while the queue is below its limit) and"
                f" FB-strict (dropped if it does not fit). Lines: median over {trials_word(n)}"
                f" per size; shaded: {band}"
                + (
                    ""
                    if n >= 20
                    else " (too few trials for the paper's 5-95 % envelope, so the band is"
                    " the range of all trials)"
                )
                + ". The paper's point: FB-loose loss is not monotonic in the queue size but"
                " peaks at particular sizes, while FB-strict stays near 0 (the axis starts"
                " just below 0 so that line shows)."
            )
            return save_with_caption(fig, stem, caption)

    return draw


def _monotone_misfit(y: Any, se: float) -> float:
    """How far the curve ``y`` (ordered along its x axis) is from monotonic: the RMS
    distance to the closest monotone curve (isotonic regression, non-decreasing or
    non-increasing, whichever fits better), in units of ``se``, the standard error of
    one point. A monotone curve seen through independent noise of that size scores at
    most about 1 (the true curve is itself a candidate, about 1 SE away on average, and
    the best fit is closer still); a curve with real peaks scores far more."""
    from scipy.optimize import isotonic_regression

    y = np.asarray(y, dtype=float)
    if len(y) < 3:
        return 0.0
    rms = min(
        float(np.sqrt(np.mean((y - isotonic_regression(y, increasing=inc).x) ** 2)))
        for inc in (True, False)
    )
    if se > 0:
        return rms / se
    return math.inf if rms > 0 else 0.0


def fig6_claims(cc: str):
    def claims(store: Store):
        df = query(
            store,
            f"SELECT down_queue_rule AS rule, down_queue_limit_bytes AS qb, cbr0_loss_rate AS loss "
            f"FROM summary WHERE tcp0_cc = '{cc}'",
        )
        a = agg(df, ["rule", "qb"], "loss").pivot(index="qb", columns="rule", values="med")
        share = (
            float((a["fb-loose"] > a["fb-strict"]).mean())
            if {"fb-loose", "fb-strict"} <= set(a)
            else math.nan
        )
        loose = a.get("fb-loose", a.iloc[:, 0])
        # Noise of one size's median: 1.2533·sd/√n (the median's standard error for a
        # normal sample), the median of that over the sizes.
        d = df[df.rule == "fb-loose"].groupby("qb").loss
        se = float(np.nanmedian(1.2533 * d.std(ddof=1) / np.sqrt(d.size()))) if len(d) else 0
        misfit = _monotone_misfit(loose.sort_index().to_numpy(), se)
        return [
            Claim(
                f"{cc}: FB-loose loses more CBR than FB-strict",
                "at every size",
                f"at {share * 100:.0f} % of sizes",
                share > 0.9,
                "FB-loose median > FB-strict median at > 90 % of the sizes (set before this"
                " check; sizes where both medians sit within trial noise may go either way)",
            ),
            Claim(
                f"{cc}: FB-loose loss is not monotonic in the queue size",
                "peaks at particular sizes",
                f"median loss from {loose.min() * 100:.2f} % to {loose.max() * 100:.2f} %;"
                f" distance from the closest monotone curve {misfit:.1f} × the noise of a"
                f" median ({se * 100:.3f} %)",
                bool(misfit >= 2),
                # SPEC §1 / MMSys §5: "The loss rate is not monotonic in queue size: it
                # depends on how 1500-byte and 186-byte packets tile the limit, with peaks
                # at particular sizes." Non-monotonic beyond noise: a monotone curve plus
                # noise scores ≤ about 1 (see _monotone_misfit); 2 leaves a factor of two.
                "RMS distance of the median curve from the closest monotone (isotonic)"
                " curve ≥ 2 × the standard error of one size's median",
            ),
        ]

    return claims


def adsl2_loss(store: Store, stem: Path, label: str) -> list[Path]:
    df = query(
        store, "SELECT tcp0_cc, down_queue_limit_bytes AS qb, cbr0_loss_rate AS loss FROM summary"
    )
    a = agg(df, ["tcp0_cc", "qb"], "loss")
    n = int(a.n.min()) if len(a) else 0
    spread = spread_text(n, (0.0, 1.0))
    step = grid_step(a.qb / 1e3)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(9, 4.8), layout="constrained")
        for cc, d in a.groupby("tcp0_cc"):
            color, marker = CC_STYLE.get(cc, ("k", "o"))
            d = d.sort_values("qb")
            marks_and_lines(
                ax,
                d.qb / 1e3,
                d.med * 100,
                d.lo * 100,
                d.hi * 100,
                step,
                color=color,
                marker=marker,
                label=f"{cc} (Linux 2.6.25)",
            )
        ax.set_xlabel("FB-loose queue size (kB)")
        ax.set_ylabel("downstream CBR loss (%)")
        top = float(a.hi.max()) * 100 if len(a) else 1.0
        floor_at_zero(ax, max(top * 1.08, 0.5))
        legend_outside(ax, "right", title=f"median, bars {spread}")
        suptitle(
            fig,
            f"{label}\nADSL2 24 / 1 Mbit/s, RTT 100 ms, {trials_word(n)} per point",
        )
        sizes = ", ".join(f"{q / 1e3:g}" for q in sorted(a.qb.unique()))
        caption = (
            "Loss of the downstream 186 B / 20 ms CBR flow beside one bulk TCP download"
            " (CUBIC, NewReno; Linux 2.6.25) on ADSL2 (24 Mbit/s down, 1 Mbit/s up, RTT"
            f" 100 ms) with FB-loose gateway queues of {sizes} kB. Markers: median over"
            f" {trials_word(n)}; bars: {spread}; lines join only sizes one sampling step"
            f" ({step:g} kB) apart, never across sizes that were not run. The axis starts"
            " just below 0 so that markers at 0 show."
        )
        return save_with_caption(fig, stem, caption)


def adsl2_claims(store: Store):
    # The paper plots medians over trials; compare those, and show the worst trial too.
    df = query(
        store,
        "SELECT tcp0_cc, down_queue_limit_bytes, median(cbr0_loss_rate) AS med, "
        "max(cbr0_loss_rate) AS mx FROM summary GROUP BY ALL",
    )
    lo, hi, worst = float(df.med.min()), float(df.med.max()), float(df.mx.max())
    return [
        Claim(
            "ADSL2 downstream CBR loss with FB-loose (medians per point)",
            "order of 1 % or less",
            f"medians {lo * 100:.2f}-{hi * 100:.2f} %, worst trial {worst * 100:.2f} %",
            hi <= 0.02,
            "every point's median over trials ≤ 2 % ('order of 1 %': up to twice 1 %)",
        )
    ]
