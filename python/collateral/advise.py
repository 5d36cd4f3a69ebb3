"""The advisor (SPEC §9): which queue and congestion control keep a real-time
application within its budget on a given link, at the least cost in download goodput?

It simulates the link with bulk downloads beside the application for every candidate —
drop-tail queues of ¼ to 4 bandwidth-delay products, CoDel, FQ-CoDel and PIE — under
each congestion control, a few seeded trials each, and ranks them:

* ``voip``: a G.711-like call both ways (186 B every 20 ms); the target is the E-model
  MOS of the worse direction (default 4.0, "satisfied");
* ``fps``, ``mmo``, ``rts``: a game's downstream traffic (Quake 3's profile for shooters,
  World of Warcraft's for the others); the target is the share of packets later than
  the genre's one-way budget (100, 500, 1000 ms), lost ones included (default ≤ 1 %).

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
    "fps": {"cbr": [{"direction": "down", "app": "quake3"}], "budget": GAME_BUDGETS["quake3"][0]},
    "mmo": {"cbr": [{"direction": "down", "app": "wow"}], "budget": GAME_BUDGETS["wow"][0]},
    "rts": {"cbr": [{"direction": "down", "app": "wow"}], "budget": "over_1000ms"},
}
#: ``simulate``'s application names for the same traffic: the advisor takes either.
APP_ALIASES = {"g711": "voip", "quake3": "fps", "wow": "mmo"}
BDP_MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Limits of one run of the advisor (it simulates every candidate ``trials`` times).
MAX_TRIALS = 100
MAX_TCP_FLOWS = 100
MAX_DURATION_NS = 3_600 * 10**9
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


@dataclass
class Advice:
    app: str
    target: float
    metric: str  # "MOS" or the budget column
    setup: str
    trials: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def best(self) -> Outcome:
        ok = [o for o in self.outcomes if o.meets]
        if ok:
            return max(ok, key=lambda o: o.goodput_bps)
        if self.metric == "MOS":
            return max(self.outcomes, key=lambda o: o.quality)
        return min(self.outcomes, key=lambda o: o.quality)


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
    seed: int = 1,
    threads: int = 0,
) -> Advice:
    """Simulates every candidate and returns the ranked outcomes (see the module doc).

    Every argument is checked before anything runs; a bad one raises
    :class:`~collateral.spec.SpecError` (a ValueError) whose ``param`` names it.
    ``app`` may also be ``simulate``'s name for the traffic (g711, quake3, wow);
    ``warmup`` defaults to 10 s, or a quarter of a shorter ``duration``."""
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
    if duration_ns > MAX_DURATION_NS:
        raise SpecError(
            "duration",
            f"{fmt_duration(duration_ns)}: at most {fmt_duration(MAX_DURATION_NS)} per trial"
            " (the advisor runs every candidate, trials times)",
        )
    if warmup is None:
        warmup = fmt_duration(min(10 * 10**9, duration_ns // 4))
    spec = APPS[app]
    metric = "MOS" if spec["budget"] is None else spec["budget"]
    if target is None:
        target = 4.0 if metric == "MOS" else 0.01
    lo, hi = TARGET_RANGE["MOS" if metric == "MOS" else "share"]
    if isinstance(target, bool) or not isinstance(target, int | float):
        raise SpecError("target", f"{target!r}: expected a number")
    if not (math.isfinite(target) and lo <= target <= hi):
        what = "a MOS" if metric == "MOS" else "a share of packets late"
        raise SpecError("target", f"{target!r}: {what} from {lo:g} to {hi:g}")
    rates = {"down": {"rate": down}, "up": {"rate": up}} if link is None else {}
    base = dict(link=link, rtt=rtt, duration=duration, warmup=warmup, cbr=spec["cbr"], **rates)
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
            q = min(_nan(c["mos"]) for c in s["cbr"])
        else:
            q = max(_nan(c[metric], 1.0) for c in s["cbr"])
        per[ci].append((q, sum(t["goodput_bps"] for t in s["tcp"])))
    where = probe.describe(sep="\n").split("\n")[:2]
    setup = " · ".join([*where, f"{tcp_flows} bulk download(s) on {profile}", f"{duration} trials"])
    advice = Advice(app, target, metric, setup, trials)
    for ci, c in enumerate(cands):
        qs = median(q for q, _ in per[ci])
        g = median(g for _, g in per[ci])
        meets = qs >= target if metric == "MOS" else qs <= target
        advice.outcomes.append(Outcome(c, qs, g, meets))
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


def table(advice: Advice) -> Any:
    """The outcomes as a rich table, the recommendation marked."""
    from rich import box
    from rich.table import Table

    want = (
        f"MOS ≥ {advice.target:g}"
        if advice.metric == "MOS"
        else (f"≤ {advice.target:.0%} of packets {advice.metric.replace('over_', 'over ')}")
    )
    t = Table(
        title=f"{advice.app}: {want}\n{advice.setup}",
        caption=f"medians of {_trials(advice.trials)}; ★ the recommendation"
        + (
            ""
            if advice.metric == "MOS"
            else "; late: one-way delay (base delay included) over the budget, or lost"
        ),
        box=box.SIMPLE_HEAD,
    )
    t.add_column("queue, congestion control")
    t.add_column(advice.metric if advice.metric == "MOS" else "late", justify="right")
    t.add_column("goodput", justify="right")
    t.add_column("meets", justify="center")
    best = advice.best
    for o in advice.outcomes:
        q = f"{o.quality:.2f}" if advice.metric == "MOS" else f"{o.quality:.1%}"
        mark = "★ " if o is best else ""
        t.add_row(
            mark + o.candidate.label,
            q,
            f"{o.goodput_bps / 1e6:.3f} Mbit/s",
            "✓" if o.meets else "✗",
        )
    return t


def plot(advice: Advice, path: str | Path) -> list[Path]:
    """Goodput against the quality metric, the target shaded and the choice marked."""
    from .plots import _STYLE, plt, save

    with plt.rc_context(_STYLE):
        fig, ax = plt.subplots(figsize=(8.5, 5.2), layout="constrained")
        scale = 1.0 if advice.metric == "MOS" else 100.0
        for o in advice.outcomes:
            c = o.candidate
            marker = "o" if c.queue_label.startswith("drop-tail") else "D"
            color = "C0" if c.cc == "newreno" else ("C3" if c.cc == "cubic" else "C2")
            ax.scatter(o.quality * scale, o.goodput_bps / 1e6, marker=marker, color=color, s=40)
            ax.annotate(
                c.queue_label.split(" (")[0],
                (o.quality * scale, o.goodput_bps / 1e6),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
        b = advice.best
        ax.scatter(
            b.quality * scale,
            b.goodput_bps / 1e6,
            s=260,
            facecolors="none",
            edgecolors="k",
            linewidths=1.5,
            label=f"recommended: {b.candidate.label}",
        )
        lo, hi = ax.get_xlim()
        if advice.metric == "MOS":
            ax.axvspan(advice.target, max(hi, advice.target + 0.1), color="C2", alpha=0.08)
            ax.set_xlabel("MOS of the worse direction (ITU-T G.107, G.711)")
        else:
            ax.axvspan(min(lo, 0), advice.target * 100, color="C2", alpha=0.08)
            ax.set_xlabel(f"packets {advice.metric.replace('over_', 'over ')} (%, lost included)")
        ax.set_ylabel("download goodput (Mbit/s)")
        for cc, color in (("newreno", "C0"), ("cubic", "C3")):
            ax.scatter([], [], color=color, label=cc)
        ax.legend(loc="lower left", fontsize=8)
        ax.set_title(
            f"{advice.app}: {advice.setup}\nmedians of {_trials(advice.trials)}; shaded:"
            " within the target",
            fontsize=9,
        )
        return save(fig, Path(path))
