"""The advice in words: the ranked table and the verdict under it."""

from __future__ import annotations

import math
from typing import Any

from .goals import GRADES, parse_goal
from .model import Advice, Outcome


def _trials(n: int) -> str:
    return f"{n} trial" if n == 1 else f"{n} trials"


def _ms(s: float) -> str:
    if not math.isfinite(s):
        return "-"
    return f"{s * 1e3:.0f} ms" if s >= 0.0995 else f"{s * 1e3:.1f} ms"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def want(advice: Advice) -> str:
    """The target in words: "≤ 1 % of packets later than 150ms one way, or lost"."""
    if advice.app == "video":
        return (
            f"≤ {advice.target:.0%} of frames complete later than {advice.budget} after"
            f" capture ({advice.budget_source}) or never"
        )
    return (
        f"≤ {advice.target:.0%} of packets later than {advice.budget} one way"
        f" ({advice.budget_source}, base delay included) or lost"
    )


def _delay_words(advice: Advice) -> str:
    """What the delay figures are: a call's frame delay, or the packets' added delay."""
    return "p95 frame delay" if advice.app == "video" else "p95 added delay"


def table(advice: Advice) -> Any:
    """The outcomes as a rich table, best first: medians with the trials' range below,
    ★ the recommendation and = its ties."""
    from rich import box
    from rich.table import Table

    spread = advice.trials > 1
    call = advice.app == "video"
    dirs = list(advice.outcomes[0].delay_s) if advice.outcomes else []
    late = (
        "the call's frames over the budget or incomplete; p95: frame delay, capture to"
        " complete arrival; call: its received rate"
        if call
        else "the worst flow's packets over the budget or lost;"
        "\np95: one-way delay added to the base, worst flow of the direction"
    )
    t = Table(
        title=f"{advice.app}: {want(advice)}\n{advice.setup}",
        caption=f"medians of {_trials(advice.trials)}"
        + (", \\[min–max] below" if spread else "")
        + f"; late: {late};"
        f" goodput: bulk flows together; ★ recommended: meets the target, goodput within"
        f" {advice.tolerance:.0%} of the best, least delay; = as good on this evidence",
        box=box.SIMPLE_HEAD,
    )
    t.add_column("queue, congestion control", no_wrap=True)
    t.add_column("late", justify="right")
    for d in dirs:
        t.add_column(f"p95 {d}", justify="right")
    for d in advice.rates:
        t.add_column(f"goodput {d}", justify="right")
    if advice.app == "voip":
        t.add_column("MOS", justify="right")
    if call:
        t.add_column("call", justify="right")
    # Each goal's score (the median over trials that the goal is judged on).
    goals = list(advice.outcomes[0].scores) if advice.outcomes else []
    for g in goals:
        t.add_column(g, justify="right")
    t.add_column("meets", justify="center")
    if any(math.isnan(o.scores[g]) for o in advice.outcomes for g in goals):
        t.caption += (
            "; –: a trial has no such score (its load saturated at the trial's end or too"
            " late to be scored: run longer trials)"
        )
    best, ties = advice.best, advice.ties()
    for o in advice.ranked:
        mark = "★ " if o is best else ("= " if o in ties else "")
        lo, hi = o.late_range
        row = [
            mark + o.candidate.label,
            _pct(o.late) + (f"\n[dim]{_pct(lo)}–{_pct(hi)}" if spread else ""),
        ]
        row += [_ms(o.delay_s[d]) for d in dirs]
        row += [_rate(o.goodput_bps[d]) for d in advice.rates]
        if advice.app == "voip":
            row.append(f"{o.mos:.2f}")
        if call:
            row.append(_rate(o.call_bps))
        row += [_score(g, o.scores[g]) for g in goals]
        t.add_row(*row, "✓" if o.meets else "✗")
    return t


def _score(goal: str, v: float) -> str:
    """A goal's median score: a grade by its letter (the lower of two medians), else
    the number."""
    if math.isnan(v):
        return "–"
    return GRADES[int(v)] if goal.startswith("grade") else f"{v:.0f}"


def _rate(bps: float) -> str:
    return f"{bps / 1e6:.3f} Mbit/s" if bps >= 1e6 else f"{bps / 1e3:.1f} kbit/s"


def _goodput(advice: Advice, o: Outcome) -> str:
    return ", ".join(f"{_rate(o.goodput_bps[d])} {d}" for d in advice.rates)


def verdict(advice: Advice) -> list[str]:
    """The recommendation in sentences: why it, its ties, and the next option."""
    b = advice.best
    delays = ", ".join(f"{_ms(v)} {d}" for d, v in b.delay_s.items())
    if b.meets:
        head = (
            f"recommended: {b.candidate.label} — {_pct(b.late)} late (target"
            f" ≤ {advice.target:.0%}), {_delay_words(advice)} {delays}"
            + (f", goodput {_goodput(advice, b)}" if advice.rates else "")
            + (f", call {_rate(b.call_bps)}" if advice.app == "video" else "")
        )
    else:
        # The late share within the target but a goal missed: name the goals and the
        # scores, which the late share alone does not explain.
        missed = [g for g, v in b.scores.items() if not parse_goal(g).met([v])]
        goals = ", ".join(f"{g} (median {_score(g, b.scores[g])})" for g in missed)
        missed = f"the goals {goals}" if b.late <= advice.target and goals else "the target"
        head = (
            f"recommended: {b.candidate.label} — none meets {missed}; this one is the"
            f" closest: {_pct(b.late)} late, {_delay_words(advice)} {delays}"
        )
    lines = [head]
    if b.meets:
        lines.append(
            f"  why: it meets the target, its goodput is within {advice.tolerance:.0%} of"
            " the best that does, and among those it adds the least delay"
        )
        if advice.trials > 1 and b.late_range[1] > advice.target:
            lines.append(
                f"  but its worst trial misses the target ({_pct(b.late_range[1])} late):"
                " run more trials, or take a candidate with a larger margin"
            )
    ties = advice.ties()
    if ties:
        names = ", ".join(o.candidate.label for o in ties[:4]) + (", ..." if len(ties) > 4 else "")
        lines.append(f"  as good on this evidence (delay within the trials' spread): {names}")
    nxt = advice.runner_up()
    if nxt is not None:
        lines.append(
            f"  next option: {nxt.candidate.label} — {_delay_words(advice)} {_ms(nxt.delay)}"
            + _gain(nxt, b)
            + ("" if nxt.meets else f", {_pct(nxt.late)} late (misses)")
        )
    if b.candidate.family != "drop-tail":
        lines += _drop_tail(advice)
    return lines


def _gain(o: Outcome, b: Outcome) -> str:
    """``o``'s goodput against the recommendation's, when there is bulk goodput."""
    if b.utilisation <= 0:
        return ""
    return f", goodput {(o.utilisation / b.utilisation - 1) * 100:+.1f} %"


def _drop_tail(advice: Advice) -> list[str]:
    """What a plain buffer would do: the gateway engineer's first question."""
    b = advice.best
    dt = [o for o in advice.ranked if o.candidate.family == "drop-tail"]
    if not dt:
        return []
    d = dt[0]
    if d.meets:
        return [
            f"  the best drop-tail buffer, {d.candidate.label}: {_delay_words(advice)}"
            f" {_ms(d.delay)}{_gain(d, b)}"
        ]
    return [
        f"  no drop-tail buffer meets the target: the closest, {d.candidate.label}, has"
        f" {_pct(d.late)} late or lost (a small buffer drops the call's packets, a large"
        " one delays them)"
    ]
