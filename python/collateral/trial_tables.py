"""The command line's tables of trials: one trial or several (``simulate --trials``),
medians with their ranges, and set-ups side by side (``--versus``); rich tables drawn
from :class:`~collateral.result.Result` summaries."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Any

from .display import fmt_bps as _bps

if TYPE_CHECKING:
    from rich.table import Table

#: A trial's :class:`~collateral.result.Result` (not imported: the result module draws
#: its own table with :func:`trials_table`).
Result = Any

__all__ = ["GAME_BUDGETS", "compare_table", "trials_table"]

#: Games' one-way delay budgets (SPEC §6): the summary column of the share of packets
#: over it, and its label. Other applications are rated by the E-model MOS.
GAME_BUDGETS: dict[str, tuple[str, str]] = {
    "quake3": ("over_100ms", "100 ms"),
    "wow": ("over_500ms", "500 ms"),
}


def _share(x: float | None, budget: str) -> str:
    return "-" if x is None or math.isnan(x) else f"{100 * x:.1f} % >{budget}"


def _mos(m: float | None) -> str:
    return "-" if m is None or math.isnan(m) else f"{m:.2f}"


def _ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{1000 * seconds:.1f} ms"


def _cell(values: list[float], fmt: Any) -> str:
    """One trial's value, or the median of several over their range (min–max) on a
    second line; NaN (no packet, no flow) is left out, and all-NaN shows as "-"."""
    v = [x for x in values if x is not None and not math.isnan(x)]
    if not v:
        return "-"
    if len(values) == 1:
        return fmt(v[0])
    mid, lo, hi = (fmt(x) for x in (statistics.median(v), min(v), max(v)))
    unit = mid.partition(" ")[2]
    if unit and lo.partition(" ")[2] == unit == hi.partition(" ")[2]:  # "3.74–6.87 Mbit/s"
        return f"{mid}\n[dim]{lo.partition(' ')[0]}–{hi}[/dim]"
    return f"{mid}\n[dim]{lo}–{hi}[/dim]"


def _counts(parts: list[tuple[list[float], str]]) -> str:
    """Event counts ("52 rtx 0 RTO"): of one trial, or medians with their ranges below."""
    tops = [f"{statistics.median(v):g} {unit}" for v, unit in parts]
    if len(parts[0][0]) == 1:
        return " ".join(tops)
    ranges = ", ".join(f"{min(v):.0f}–{max(v):.0f}" for v, _ in parts)
    return " ".join(tops) + f"\n[dim]{ranges}[/dim]"


def trials_table(results: list[Result]) -> Table:
    """A rich table of one trial, or of several trials of one set-up (seeds differ):
    each cell then holds the median over the trials and, below it, their range.

    Rows: goodput per TCP flow (and each direction's total when it has several flows),
    web response times, loss and additional delay per CBR flow with its quality (MOS for
    voice, the share of packets over the budget for games).
    """
    from rich import box
    from rich.table import Table

    first = results[0]
    n = len(results)
    sc = first.scenario
    games = any(c.app in GAME_BUDGETS for c in (sc.cbr if sc else []))
    voice = any(c.app not in GAME_BUDGETS for c in (sc.cbr if sc else [])) or (
        sc is None and bool(first.cbr)
    )
    title = (
        sc.describe(testbed=first.summary.get("mode") == "emulation") if sc else "collateral trial"
    )
    if n > 1:
        seeds = sorted(r.scenario.seed for r in results if r.scenario is not None)
        title = title.replace(f"seed {sc.seed}", f"{n} trials, seeds {seeds[0]}–{seeds[-1]}")
    if len(title) > 70:  # keep the table as narrow as its columns
        mid = title.index(" · RTT ") + 3
        title = title[:mid].rstrip(" ·") + "\n" + title[mid:]
    t = Table(
        title=title,
        caption=f"after {first.warmup_s:g} s warm-up, of {first.duration_s:g} s;"
        + (f" median of {n} trials, \\[min–max] below;\n" if n > 1 else " ")
        + "p50/p95/max of CBR one-way delay minus base"
        + (" (web: object response times)" if first.summary.get("web") else "")
        + (
            ";\nMOS: ITU-T G.107 E-model, G.711 with concealment, mean one-way delay and loss"
            if voice
            else ""
        )
        + (
            ";\ngames (quality): share of packets whose one-way delay (base included) is over"
            " the genre's budget, lost ones included"
            if games
            else ""
        )
        + (_VIDEO_CAPTION if first.summary.get("media") else ""),
        box=box.SIMPLE_HEAD,  # narrow enough for an 80-column terminal
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    t.add_column("traffic", no_wrap=True)
    for col in ("goodput", "loss", "p50", "p95", "max", "quality" if games else "MOS"):
        t.add_column(col, justify="right", no_wrap=True)

    def each(get: Any) -> list[float]:
        return [float(get(r)) for r in results]

    for i, f in enumerate(first.tcp):
        parts = [(each(lambda r, i=i: r.tcp[i]["retransmits"]), "rtx")]
        if f.get("timeouts") is not None:
            parts.append((each(lambda r, i=i: r.tcp[i]["timeouts"]), "RTO"))
        if any(r.tcp[i].get("ce_received") for r in results):
            parts.append((each(lambda r, i=i: r.tcp[i]["ecn_reductions"]), "ECN"))
        t.add_row(
            f"{f['flow']} TCP {f['cc']} {f['direction']}",
            _cell(each(lambda r, i=i: r.tcp[i]["goodput_bps"]), _bps),
            _counts(parts),
            "",
            "",
            "",
            "",
        )
    for d in ("down", "up"):
        if sum(1 for f in first.tcp if f["direction"] == d) > 1:
            t.add_row(
                f"TCP total {d}",
                _cell(each(lambda r, d=d: r.summary[f"{d}_goodput_bps"]), _bps),
                *[""] * 5,
            )
    measured = first.duration_s - first.warmup_s
    for j, w in enumerate(first.summary.get("web", [])):
        t.add_row(
            f"web {w['users']} users",
            _cell(each(lambda r, j=j: r.summary["web"][j]["reply_bytes"] * 8 / measured), _bps)
            if measured > 0
            else "-",
            _counts([(each(lambda r, j=j: r.summary["web"][j]["objects_completed"]), "objects")]),
            _cell(each(lambda r, j=j: _nan(r.summary["web"][j]["response_median_s"])), _ms),
            _cell(each(lambda r, j=j: _nan(r.summary["web"][j]["response_p95_s"])), _ms),
            "",
            "",
        )
    for k, m in enumerate(first.summary.get("media", [])):
        t.add_row(f"video {m['cc']} {m['direction']}", *_media_cells(results, k))
    apps = [c.app for c in sc.cbr] if sc else []
    for j in range(len(first.cbr)):
        app = apps[j] if j < len(apps) else None
        t.add_row(_cbr_label(first, apps, j), "", *_cbr_cells(results, j, app))
    return t


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def _cbr_label(r: Result, apps: list[str | None], j: int) -> str:
    """A real-time flow's row: its application (or CBR) and direction, numbered among
    the flows of the same kind only when there are several (not by its flow id, which
    counts the web users' slots too)."""

    sc = r.scenario
    workload = sc.workload if sc is not None else None

    def name(k: int) -> str:
        app = apps[k] if k < len(apps) else None
        probe = workload.probe_label(sc.cbr, k) if workload is not None else None
        kind = probe or app or "CBR"
        return f"{kind} {r.cbr[k]['direction']}"

    same = [k for k in range(len(r.cbr)) if name(k) == name(j)]
    return name(j) + (f" #{same.index(j) + 1}" if len(same) > 1 else "")


def _media_cells(results: list[Result], k: int) -> list[str]:
    """The video call ``k``'s cells: received rate, loss, frame delay p50/p95/p99, and the
    share of frames late with its share of the direction below."""

    def each(key: str) -> list[float]:
        return [_nan(r.summary["media"][k][key]) for r in results]

    late = _cell(each("frames_late"), lambda x: f"{100 * x:.1f} % late")
    share = _cell(each("rate_share"), lambda x: f"{100 * x:.0f} % share")
    loss = _cell(each("loss_rate"), lambda x: f"{100 * x:.2f} %")
    # SCReAM's discards from its RTP queue are not network loss: shown below it when any.
    dropped = [x for r in results if (x := _nan(r.summary["media"][k].get("discarded"))) == x]
    if any(dropped):
        loss += "\n" + _cell(dropped, lambda x: f"{100 * x:.2f} % discarded")
    return [
        _cell(each("received_bps"), _bps),
        loss,
        *(_cell(each(f"frame_delay_{p}_s"), _ms) for p in ("p50", "p95", "p99")),
        f"{late}\n{share}",
    ]


def _cbr_cells(results: list[Result], j: int, app: str | None) -> list[str]:
    """CBR flow ``j``'s loss, p50, p95, max and quality cells over ``results``: a game's
    quality is its share of packets over the genre's budget (lost ones included), a
    voice flow's the E-model MOS."""

    def each(get: Any) -> list[float]:
        return [float(get(r)) for r in results]

    budget = GAME_BUDGETS.get(app or "")
    if budget:
        quality = _cell(
            each(lambda r: _nan(r.cbr[j].get(budget[0]))), lambda x: _share(x, budget[1])
        )
    else:
        quality = _cell(each(lambda r: _nan(r.cbr[j].get("mos"))), _mos)
    return [
        _cell(each(lambda r: r.cbr[j]["loss_rate"]), lambda x: f"{100 * x:.2f} %"),
        *(
            _cell(each(lambda r, k=k: _nan(r.cbr[j][k])), _ms)
            for k in ("delay_median_s", "delay_p95_s", "delay_max_s")
        ),
        quality,
    ]


#: What a video call's row holds, in a table's caption.
_VIDEO_CAPTION = (
    ";\nvideo: received rate, frame delay (capture to last packet) p50/p95/p99,"
    " frames later than the playout deadline (lost included), share beside TCP"
)


def compare_table(groups: list[tuple[str, list[Result]]]) -> Table:
    """Set-ups side by side (``--versus``: another queue, or any other option): for each
    (label, its trials), the TCP goodput of each direction and every real-time flow's
    loss, delay and quality, as the median over the trials with the range below (one
    trial: the values). Each group's rows are its own scenario's flows; the title keeps
    what every group shares."""
    from rich import box
    from rich.table import Table

    first = groups[0][1][0]
    sc = first.scenario
    n = len(groups[0][1])
    apps_of = [[c.app for c in r[0].scenario.cbr] if r[0].scenario else [] for _, r in groups]
    every_app = [a for apps in apps_of for a in apps]
    games = any(a in GAME_BUDGETS for a in every_app)
    video = any(r[0].summary.get("media") for _, r in groups)
    titles = [r[0].scenario.describe().split(" · ") if r[0].scenario else [] for _, r in groups]
    # The queue is what differs unless told otherwise: the rows name it, and what else
    # differs between the groups (a link, a call) is left out of the title as well.
    shared = [p for p in titles[0] if not p.startswith("queue ") and all(p in t for t in titles)]
    title = " · ".join(shared) if sc else "collateral trials"
    if n > 1 and sc:
        title = title.replace(
            f"seed {sc.seed}", f"{n} trials each, seeds {sc.seed}–{sc.seed + n - 1}"
        )
    t = Table(
        title=title,
        caption=f"after {first.warmup_s:g} s warm-up, of {first.duration_s:g} s;"
        + (f" median of {n} trials, \\[min–max] below;" if n > 1 else "")
        + "\ngoodput: all TCP flows of the direction; p50/p95/max: CBR one-way delay minus base"
        + (
            ";\ngames (quality): share of packets over the budget, base delay included"
            if games
            else ""
        )
        + (
            ";\nMOS: ITU-T G.107 E-model, G.711"
            if any(a not in GAME_BUDGETS for a in every_app)
            else ""
        )
        + (_VIDEO_CAPTION if video else ""),
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    t.add_column("queue", no_wrap=True)
    t.add_column("traffic", no_wrap=True)
    quality = "quality" if games else "MOS"
    for col in ("goodput", "loss", "p50", "p95", "max / p99" if video else "max"):
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column(f"{quality} / late" if video else quality, justify="right", no_wrap=True)
    for g, (label, results) in enumerate(groups):
        own = results[0]  # this group's scenario: its flows, applications and calls
        apps = apps_of[g]

        def each(get: Any, results: list[Result] = results) -> list[float]:
            return [float(get(r)) for r in results]

        rows = []
        for d in ("down", "up"):
            if any(f["direction"] == d for f in own.tcp):
                rows.append(
                    (f"TCP {d}", _cell(each(lambda r, d=d: r.summary[f"{d}_goodput_bps"]), _bps))
                    + ("",) * 5
                )
        for j in range(len(own.cbr)):
            app = apps[j] if j < len(apps) else None
            rows.append((_cbr_label(own, apps, j), "", *_cbr_cells(results, j, app)))
        for k, m in enumerate(own.summary.get("media", [])):
            rows.append((f"video {m['cc']} {m['direction']}", *_media_cells(results, k)))
        for k, row in enumerate(rows):
            t.add_row(
                label if k == 0 else "",
                *row,
                end_section=k == len(rows) - 1 and g < len(groups) - 1,
            )
        if not rows:
            t.add_row(label, "(no flows)", *[""] * 6, end_section=g < len(groups) - 1)
    return t
