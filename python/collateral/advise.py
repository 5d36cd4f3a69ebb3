"""The advisor (SPEC §9): which queue and congestion control keep a real-time
application within its budget on a given link, at the least cost in download goodput?

It simulates the link with bulk downloads beside the application for every candidate —
drop-tail queues of ¼ to 4 bandwidth-delay products, CoDel, FQ-CoDel and PIE — under
each congestion control, a few seeded trials each, and ranks them:

* ``voip``: a G.711-like call both ways (186 B every 20 ms); the target is the E-model
  MOS of the worse direction (default 4.0, "satisfied");
* ``fps``, ``mmo``, ``rts``: a game's downstream traffic (Quake 3's profile for shooters,
  World of Warcraft's for the others); the target is the share of packets later than
  the genre's one-way budget (100, 500, 1000 ms; ``budget`` sets another), base delay
  and lost ones included (default ≤ 1 %).

The recommendation is the candidate that meets the target with the most goodput (the
median over trials of every download together); if none does, the one closest to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from pydantic import ValidationError

from . import _native
from .result import GAME_BUDGETS
from .spec import CC_ALGORITHMS, PROFILES, Scenario, SpecError
from .units import MAX_QUEUE_PACKETS, fmt_duration, parse_duration

APPS: dict[str, dict[str, Any]] = {
    "voip": {"cbr": [{"direction": "down"}, {"direction": "up"}], "budget": None},
    "fps": {"cbr": [{"direction": "down", "app": "quake3"}], "budget": GAME_BUDGETS["quake3"][1]},
    "mmo": {"cbr": [{"direction": "down", "app": "wow"}], "budget": GAME_BUDGETS["wow"][1]},
    "rts": {"cbr": [{"direction": "down", "app": "wow"}], "budget": "1000 ms"},
}
#: ``simulate``'s application names for the same traffic: the advisor takes either.
APP_ALIASES = {"g711": "voip", "quake3": "fps", "wow": "mmo"}
BDP_MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Limits of one run of the advisor (it simulates every candidate ``trials`` times).
MAX_TRIALS = 100
MAX_TCP_FLOWS = 100
MAX_DURATION_NS = 3_600 * 10**9
#: The shortest trial worth ranking: 50 calls packets of 20 ms after a 250 ms warm-up.
MIN_DURATION_NS = 10**9
MAX_THREADS = 1024
#: The range of each metric's target: MOS (ITU-T G.107: 1 to 4.5) or a share late.
TARGET_RANGE = {"MOS": (1.0, 4.5), "share": (0.0, 1.0)}
AQMS: dict[str, dict[str, Any]] = {
    "CoDel": {"kind": "codel", "limit": 1000},
    "FQ-CoDel": {"kind": "fq_codel", "limit": 1000},
    "PIE": {"kind": "pie", "limit": 1000},
}


@dataclass(frozen=True)
class Candidate:
    queue_label: str
    queue: dict[str, Any]
    cc: str

    @property
    def label(self) -> str:
        return f"{self.queue_label}, {self.cc}"


@dataclass
class Outcome:
    candidate: Candidate
    quality: float  # median over trials: worst-direction MOS, or share over budget
    goodput_bps: float  # median over trials of all downloads together
    meets: bool
    #: The trials' range (min, max) of each: what "within the spread" means.
    quality_range: tuple[float, float] = (math.nan, math.nan)
    goodput_range: tuple[float, float] = (math.nan, math.nan)
    #: How far the median is on the right side of the target (negative: the wrong side):
    #: MOS points above it, or percentage points of packets below the allowed share.
    margin: float = math.nan


@dataclass
class Advice:
    app: str
    target: float
    metric: str  # "MOS" or "over_budget"
    setup: str
    trials: int
    outcomes: list[Outcome] = field(default_factory=list)
    #: A game's one-way delay budget, base delay included ("100ms"); None for voice.
    budget: str | None = None

    @property
    def ranked(self) -> list[Outcome]:
        """The outcomes best first. Among those that meet the target (all of them when
        none does, then by margin), candidates whose goodput ranges over the trials
        overlap the leader's are tied on goodput: a tie goes to the larger margin, so
        noise in goodput never buys a worse quality."""
        ok = [o for o in self.outcomes if o.meets]
        rest = [o for o in self.outcomes if not o.meets]
        if not ok:
            return sorted(rest, key=lambda o: (-o.margin, -o.goodput_bps))
        ranked: list[Outcome] = []
        pool = sorted(ok, key=lambda o: -o.goodput_bps)
        while pool:
            lead = pool[0]
            tied = [o for o in pool if _overlap(o.goodput_range, lead.goodput_range)]
            tied.sort(key=lambda o: (-o.margin, -o.goodput_bps))
            ranked += tied
            pool = [o for o in pool if o not in tied]
        return ranked + sorted(rest, key=lambda o: (-o.margin, -o.goodput_bps))

    @property
    def best(self) -> Outcome:
        return self.ranked[0]

    def ties(self) -> list[Outcome]:
        """Other candidates that meet the target with goodput within the
        recommendation's spread: as good a choice on this evidence."""
        b = self.best
        return [
            o
            for o in self.outcomes
            if o is not b and o.meets == b.meets and _overlap(o.goodput_range, b.goodput_range)
        ]

    def runner_up(self) -> Outcome | None:
        """The next option in the ranking after the recommendation and its ties (None
        when there is none)."""
        ties = self.ties()
        rest = [o for o in self.ranked[1:] if o not in ties]
        return rest[0] if rest else None


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def candidates(down_bps: int, rtt_ns: int, ccs: tuple[str, ...]) -> list[Candidate]:
    """Drop-tail at multiples of the downlink's bandwidth-delay product (in 1500-byte
    packets, at least 2), and the AQMs, under each congestion control."""
    bdp = down_bps * rtt_ns / 1e9 / 8 / 1500
    out = []
    for cc in ccs:
        seen = set()
        for k in BDP_MULTIPLES:
            n = min(MAX_QUEUE_PACKETS, max(2, round(k * bdp)))
            if n in seen:
                continue
            seen.add(n)
            out.append(
                Candidate(f"drop-tail {n}p ({k:g} BDP)", {"limit": f"{n}p", "rule": "ps"}, cc)
            )
        for name, q in AQMS.items():
            out.append(Candidate(name, q, cc))
    return out


def advise(
    *,
    link: str | None = "adsl1",
    down: str | None = None,
    up: str | None = None,
    rtt: str = "100ms",
    app: str = "voip",
    tcp_flows: int = 1,
    ccs: tuple[str, ...] = ("newreno", "cubic"),
    profile: str = "linux-6",
    trials: int = 3,
    duration: str = "60s",
    warmup: str | None = None,
    target: float | None = None,
    budget: str | None = None,
    seed: int = 1,
    threads: int = 0,
) -> Advice:
    """Simulates every candidate and returns the ranked outcomes (see the module doc).

    Every argument is checked before anything runs; a bad one raises
    :class:`~collateral.spec.SpecError` (a ValueError) whose ``param`` names it.
    ``app`` may also be ``simulate``'s name for the traffic (g711, quake3, wow);
    ``warmup`` defaults to 10 s, or a quarter of a shorter ``duration``; ``budget`` is a
    game's one-way delay budget, base delay included (default: the genre's)."""
    if isinstance(app, str) and app in APP_ALIASES:
        app = APP_ALIASES[app]
    if not isinstance(app, str) or app not in APPS:
        names = [*APPS, *APP_ALIASES]
        raise SpecError("app", f"{app!r} is not one of {', '.join(names)}")
    tcp_flows = _whole("tcp_flows", tcp_flows, 1, MAX_TCP_FLOWS)
    trials = _whole("trials", trials, 1, MAX_TRIALS)
    threads = _whole("threads", threads, 0, MAX_THREADS)
    seed = _whole("seed", seed, 0, 2**63 - 1 - trials)
    if isinstance(ccs, str) or not isinstance(ccs, tuple | list) or not ccs:
        raise SpecError("ccs", f"{ccs!r}: give a list of congestion controls, e.g. ('cubic',)")
    for cc in ccs:
        if cc not in CC_ALGORITHMS:
            raise SpecError(
                "ccs", f"unknown congestion control {cc!r}; supported: {', '.join(CC_ALGORITHMS)}"
            )
    ccs = tuple(dict.fromkeys(ccs))
    if profile not in PROFILES:
        raise SpecError(
            "profile", f"unknown stack profile {profile!r}; supported: {', '.join(PROFILES)}"
        )
    try:
        duration_ns = parse_duration(duration)
    except ValueError as e:
        raise SpecError("duration", str(e)) from None
    if not MIN_DURATION_NS <= duration_ns <= MAX_DURATION_NS:
        raise SpecError(
            "duration",
            f"{fmt_duration(duration_ns)}: from {fmt_duration(MIN_DURATION_NS)} to"
            f" {fmt_duration(MAX_DURATION_NS)} per trial (shorter trials measure too few"
            " packets to rank by; the advisor runs every candidate, trials times)",
        )
    if warmup is None:
        warmup = fmt_duration(min(10 * 10**9, duration_ns // 4))
    spec = APPS[app]
    if spec["budget"] is None and budget is not None:
        raise SpecError("budget", f"{budget!r}: {app} is rated by its MOS, not a delay budget")
    budget_ns = None
    if spec["budget"] is not None:
        try:
            budget_ns = parse_duration(budget if budget is not None else spec["budget"])
        except ValueError as e:
            raise SpecError("budget", str(e)) from None
        if not 0 < budget_ns <= MAX_DURATION_NS:
            raise SpecError("budget", f"{budget!r}: from 1ns to {fmt_duration(MAX_DURATION_NS)}")
    metric = "MOS" if budget_ns is None else "over_budget"
    if target is None:
        target = 4.0 if metric == "MOS" else 0.01
    lo, hi = TARGET_RANGE["MOS" if metric == "MOS" else "share"]
    if isinstance(target, bool) or not isinstance(target, int | float):
        raise SpecError("target", f"{target!r}: expected a number")
    if not (math.isfinite(target) and lo <= target <= hi):
        what = "a MOS" if metric == "MOS" else "a share of packets late"
        raise SpecError("target", f"{target!r}: {what} from {lo:g} to {hi:g}")
    rates = {"down": {"rate": down}, "up": {"rate": up}} if link is None else {}
    cbr = [{**c, "budget": f"{budget_ns}ns"} for c in spec["cbr"]] if budget_ns else spec["cbr"]
    base = dict(link=link, rtt=rtt, duration=duration, warmup=warmup, cbr=cbr, **rates)
    probe = _scenario(base)
    down_bps = probe.down.rate or 0  # the preset's or the given rate
    cands = candidates(down_bps, probe.rtt, ccs)
    jobs, owners = [], []
    for ci, c in enumerate(cands):
        for t in range(trials):
            tcp = [
                {"cc": c.cc, "profile": profile, "start": f"{k * 100}ms"} for k in range(tcp_flows)
            ]
            q = {"down": {**base.get("down", {}), "queue": c.queue}}
            sc = _scenario({**base, **q, "tcp": tcp, "seed": seed + t})
            sc = sc.model_copy(update={"trace": sc.trace.model_copy(update=_NO_TRACES)})
            jobs.append(sc.to_native_json())
            owners.append(ci)
    results = _native.simulate_many(jobs, threads)
    per: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(cands))}
    for ci, r in zip(owners, results, strict=True):
        s = r["summary"]
        if metric == "MOS":
            q = min(_nan(c["mos"], 1.0) for c in s["cbr"])  # no packet through: the worst
        else:
            q = max(_nan(c[metric], 1.0) for c in s["cbr"])
        per[ci].append((q, sum(t["goodput_bps"] for t in s["tcp"])))
    where = probe.describe(sep="\n").split("\n")[:2]
    setup = " · ".join([*where, f"{tcp_flows} bulk download(s) on {profile}", f"{duration} trials"])
    shown = fmt_duration(budget_ns) if budget_ns is not None else None
    advice = Advice(app, target, metric, setup, trials, budget=shown)
    for ci, c in enumerate(cands):
        quals = [q for q, _ in per[ci]]
        goods = [g for _, g in per[ci]]
        qs, g = median(quals), median(goods)
        meets = qs >= target if metric == "MOS" else qs <= target
        margin = qs - target if metric == "MOS" else 100 * (target - qs)
        advice.outcomes.append(
            Outcome(c, qs, g, meets, (min(quals), max(quals)), (min(goods), max(goods)), margin)
        )
    advice.outcomes.sort(key=lambda o: -o.goodput_bps)
    return advice


_NO_TRACES = {"cwnd": False, "queue": False, "cbr": False, "drops": False, "classes": False}

# Where a scenario's field comes from among advise()'s parameters.
_PARAMS = {"link": "link", "down": "down", "up": "up", "rtt": "rtt", "duration": "duration"}


def _scenario(data: dict[str, Any]) -> Scenario:
    try:
        return Scenario(**data)
    except ValidationError as err:
        e = err.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ")
        head = str(e["loc"][0]) if e["loc"] else msg.partition(":")[0].partition(".")[0]
        param = _PARAMS.get(head, "warmup" if head == "warmup" else "link")
        raise SpecError(param, msg) from None


def _whole(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(name, f"{value!r}: expected a whole number")
    if not lo <= value <= hi:
        raise SpecError(name, f"{value}: must be from {lo} to {hi}")
    return value


def _trials(n: int) -> str:
    return f"{n} trial" if n == 1 else f"{n} trials"


def _nan(x: float | None, default: float = float("nan")) -> float:
    return default if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _quality_text(advice: Advice, q: float) -> str:
    return f"{q:.2f}" if advice.metric == "MOS" else f"{q:.1%}"


def _margin_text(advice: Advice, m: float) -> str:
    return f"{m:+.2f} MOS" if advice.metric == "MOS" else f"{m:+.1f} pp"


def table(advice: Advice) -> Any:
    """The outcomes as a rich table, best first: each median with the trials' range
    below it, the margin to the target, ★ the recommendation and = its ties."""
    from rich import box
    from rich.table import Table

    t = Table(
        title=f"{advice.app}: {want(advice)}\n{advice.setup}",
        caption=f"medians of {_trials(advice.trials)}"
        + (", \\[min–max] below" if advice.trials > 1 else "")
        + "; ★ the recommendation, = tied with it (goodput within the trials' spread);"
        "\nmargin: how far the median is on the right side of the target"
        + (
            ""
            if advice.metric == "MOS"
            else " (percentage points);\nlate: one-way delay, base delay included, over the"
            " budget, or lost"
        ),
        box=box.SIMPLE_HEAD,
    )
    t.add_column("queue, congestion control", no_wrap=True)
    t.add_column(advice.metric if advice.metric == "MOS" else "late", justify="right")
    t.add_column("margin", justify="right")
    t.add_column("goodput (Mbit/s)", justify="right")
    t.add_column("meets", justify="center")
    best, ties = advice.best, advice.ties()
    spread = advice.trials > 1
    for o in advice.ranked:
        mark = "★ " if o is best else ("= " if o in ties else "")
        q, (qlo, qhi) = o.quality, o.quality_range
        g, (glo, ghi) = o.goodput_bps / 1e6, o.goodput_range
        t.add_row(
            mark + o.candidate.label,
            _quality_text(advice, q)
            + (
                f"\n[dim]{_quality_text(advice, qlo)}–{_quality_text(advice, qhi)}[/dim]"
                if spread
                else ""
            ),
            _margin_text(advice, o.margin),
            f"{g:.3f}" + (f"\n[dim]{glo / 1e6:.3f}–{ghi / 1e6:.3f}[/dim]" if spread else ""),
            "✓" if o.meets else "✗",
        )
    return t


def want(advice: Advice) -> str:
    """The target in words: "MOS ≥ 4", or "≤ 1 % of packets over 100 ms one way"."""
    if advice.metric == "MOS":
        return f"MOS ≥ {advice.target:g} (worse direction)"
    return f"≤ {advice.target:.0%} of packets over {advice.budget} one way (base delay included)"


def verdict(advice: Advice) -> list[str]:
    """The recommendation in sentences: its margin, its ties, and the next option."""
    b = advice.best
    head = f"recommended: {b.candidate.label} — "
    if b.meets:
        head += f"meets the target with a margin of {_margin_text(advice, b.margin)}"
    else:
        head += f"none meets the target; this one misses it by {_margin_text(advice, b.margin)}"
    lines = [head + f", {b.goodput_bps / 1e6:.3f} Mbit/s goodput"]
    worst = b.quality_range[0] if advice.metric == "MOS" else b.quality_range[1]
    if (
        b.meets
        and advice.trials > 1
        and (worst < advice.target if advice.metric == "MOS" else worst > advice.target)
    ):
        lines.append(
            f"  but its worst trial misses the target ({_quality_text(advice, worst)}):"
            " run more trials, or take a candidate with a larger margin"
        )
    ties = advice.ties()
    if ties:
        names = ", ".join(o.candidate.label for o in ties[:4]) + (", ..." if len(ties) > 4 else "")
        lines.append(f"  as good on this evidence (goodput within the trials' spread): {names}")
    nxt = advice.runner_up()
    if nxt is not None:
        dg = (nxt.goodput_bps / b.goodput_bps - 1) * 100 if b.goodput_bps > 0 else math.nan
        lines.append(
            f"  next option: {nxt.candidate.label} — goodput {dg:+.1f} %, margin"
            f" {_margin_text(advice, nxt.margin)}" + ("" if nxt.meets else " (misses the target)")
        )
    return lines


def plot(advice: Advice, path: str | Path) -> list[Path]:
    """Writes :func:`figure` to ``path`` (PNG, SVG, ... by its suffix)."""
    from .plot.style import save

    return save(figure(advice), Path(path))


def figure(advice: Advice) -> Any:
    """Goodput against the quality metric, the target shaded and the choice marked.

    Candidates that land on the same spot (a full 2- and 4-BDP queue, say) share one
    label, so labels do not print over each other; the legend sits outside the axes."""
    from .plot.style import STYLE, plt

    games = advice.metric != "MOS"
    scale = 100.0 if games else 1.0
    pts = [(o.quality * scale, o.goodput_bps / 1e6, o) for o in advice.outcomes]
    xs, ys = [x for x, _, _ in pts], [y for _, y, _ in pts]
    xspan = (max(xs) - min(xs)) or 1.0
    yspan = (max(ys) - min(ys)) or 1.0
    groups: list[list[tuple[float, float, Outcome]]] = []
    for p in sorted(pts, key=lambda p: (p[0], p[1])):
        for g in groups:
            gx, gy, _ = g[0]
            if abs(p[0] - gx) < 0.03 * xspan and abs(p[1] - gy) < 0.04 * yspan:
                g.append(p)
                break
        else:
            groups.append([p])
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 5.6), layout="constrained")
        colors = {"newreno": "C0", "cubic": "C3"}
        for x, y, o in pts:
            c = o.candidate
            marker = "o" if c.queue_label.startswith("drop-tail") else "D"
            ax.scatter(x, y, marker=marker, color=colors.get(c.cc, "C2"), s=40, zorder=3)
        # Each label takes the first of a few spots around its point (inwards first)
        # where it overlaps no label placed before it.
        renderer = fig.canvas.get_renderer()
        placed: list[Any] = []
        for g in sorted(groups, key=lambda g: -g[0][1]):
            names = list(dict.fromkeys(_short_label(o) for _, _, o in g))
            text = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
            x, y, _ = g[0]
            side = -1 if x > min(xs) + 0.65 * xspan else 1
            spots = [(side * 7, 5), (side * 7, -12), (-side * 7, 5), (-side * 7, -12)]
            spots += [(side * 7, dy) for dy in (16, -23, 27, -34, 38, -45)]
            for dx, dy in spots:
                t = ax.annotate(
                    text,
                    (x, y),
                    fontsize=8,
                    xytext=(dx, dy),
                    textcoords="offset points",
                    ha="left" if dx > 0 else "right",
                )
                box = t.get_window_extent(renderer)
                if not any(box.overlaps(p) for p in placed) or (dx, dy) == spots[-1]:
                    placed.append(box)
                    break
                t.remove()
        b = advice.best
        ax.scatter(
            b.quality * scale,
            b.goodput_bps / 1e6,
            s=260,
            facecolors="none",
            edgecolors="k",
            linewidths=1.5,
            label=f"recommended: {b.candidate.label}",
            zorder=4,
        )
        lo, hi = ax.get_xlim()
        if not games:
            ax.axvspan(advice.target, max(hi, advice.target + 0.1), color="C2", alpha=0.08)
            ax.set_xlim(lo, max(hi, advice.target + 0.1) + 0.03 * (hi - lo))
            ax.set_xlabel("MOS of the worse direction (ITU-T G.107, G.711)")
        else:
            right = max(hi, advice.target * 100 * 1.5)
            ax.axvspan(0, advice.target * 100, color="C2", alpha=0.12, label="within the target")
            ax.set_xlim(-0.02 * right, right)  # a share is never negative: shade from 0
            ax.set_xlabel(
                f"packets over {advice.budget} one way (%, base delay and lost ones included)"
            )
        ax.set_ylabel("download goodput (Mbit/s)")
        for cc in dict.fromkeys(o.candidate.cc for o in advice.outcomes):
            ax.scatter([], [], color=colors.get(cc, "C2"), label=cc)
        ax.scatter([], [], marker="o", color="0.5", label="drop-tail (label: packets)")
        ax.scatter([], [], marker="D", color="0.5", label="AQM")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=8)
        ax.set_title(
            f"{advice.app}: {want(advice)}\n{advice.setup}\nmedians of"
            f" {_trials(advice.trials)}; shaded: within the target",
            fontsize=9,
        )
        return fig


def _short_label(o: Outcome) -> str:
    """ "12p" for a drop-tail queue, the AQM's name otherwise, with the CC's initial."""
    q = o.candidate.queue_label
    name = q.split(" ")[1] if q.startswith("drop-tail") else q
    return f"{name} {o.candidate.cc[0].upper()}"
