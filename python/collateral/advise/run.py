"""``advise()``: every candidate simulated a few seeded trials each, on the user's link
with their bulk flows beside the application, and the evidence gathered per candidate."""

from __future__ import annotations

import math
from statistics import median
from typing import Any

from pydantic import ValidationError

from .. import _native
from ..spec import CC_ALGORITHMS, PROFILES, Scenario, SpecError, TraceSpec
from ..spec.types import CC_ALIASES
from ..units import bare_number, fmt_duration, parse_duration
from .apps import APP_ALIASES, APPS, BUDGET_SOURCES
from .candidates import Candidate, candidates
from .current import current_queue
from .goals import Goal, parse_goal
from .limits import (
    MAX_DURATION_NS,
    MAX_TCP_FLOWS,
    MAX_THREADS,
    MAX_TRIALS,
    MAX_WEB_USERS,
    MIN_DURATION_NS,
)
from .model import Advice, Outcome


def advise(
    *,
    link: str | None = None,
    down: str | None = None,
    up: str | None = None,
    rtt: str = "100ms",
    app: str | None = None,
    video: str | None = None,
    video_max_rate: str | int | None = None,
    video_direction: str = "down",
    tcp_flows: int = 1,
    uploads: int = 0,
    web_users: int = 0,
    ccs: tuple[str, ...] = ("newreno", "cubic"),
    profile: str = "linux-6",
    trials: int = 3,
    duration: str = "60s",
    warmup: str | None = None,
    target: float | None = None,
    budget: str | None = None,
    current: str | None = None,
    tolerance: float = 0.02,
    seed: int = 1,
    threads: int = 0,
    workload: str | None = None,
    goals: tuple[str, ...] | list[str] = (),
    framing: dict[str, Any] | None = None,
    up_docsis: str | dict[str, Any] | None = None,
    leo: str | None = None,
    down_trace: str | None = None,
    up_trace: str | None = None,
) -> Advice:
    """Simulates every candidate and returns the evidence, ranked by
    :attr:`Advice.ranked` (see :mod:`collateral.advise.model`).

    ``tcp_flows`` bulk downloads, ``uploads`` bulk uploads and ``web_users`` people
    browsing (Mah's model, as ``simulate`` runs them) share the link with the
    application; ``budget`` is its one-way delay budget, base delay included (default:
    the application's, :data:`~collateral.advise.apps.APPS`); ``target`` the share of
    its packets that may be late or lost (default 1 %); ``current`` the user's own
    queue (a drop-tail limit such as ``256kB`` or an ``--aqm`` value) as one more
    candidate; ``tolerance`` the goodput shortfall from the best that counts as the same
    (default 2 %). ``app`` may also be ``simulate``'s name for the traffic (g711,
    quake3, wow). ``video`` (a controller: gcc, nada, scream) makes the application a
    video call of at most ``video_max_rate`` going ``video_direction``, whose frames
    are late when complete later than the budget after capture (``app`` ``video`` is
    the same with GCC); ``app`` defaults to ``voip``, or ``video`` when ``video`` is
    given. ``warmup`` defaults to 10 s, or a quarter of a shorter ``duration``.
    ``workload`` (``rrul``, ``rrul_be``, ``responsiveness``) runs that built-in workload
    as the load instead of ``tcp_flows`` and ``uploads`` (its TCP flows under each
    candidate's congestion control, its probes beside the application); ``goals`` then
    add conditions on its scores (``rpm>=800``, ``grade>=A``: :mod:`.goals`) that a
    candidate must meet as well, on the median over its trials. ``framing`` (a
    direction's ``framing`` table, e.g. ``{"overhead": "10B", "atm": True}``) is the
    line's, with ``down`` and ``up`` rates as line rates: both directions carry it and
    CAKE's shaper counts it (as ``collateral infer`` finds it for ``advise --from``).
    ``up_docsis`` makes the upstream a DOCSIS request-grant cycle (``"on"``,
    ``"map_interval=1ms,..."`` or a ``docsis`` table; ``up`` is the channel's rate) and
    ``leo`` (``"starlink"``) the link a satellite's in both directions, in place of
    ``link``, ``down`` and ``up``; ``down_trace`` and ``up_trace`` (Mahimahi's format: a
    cellular link's) a direction's delivery opportunities in place of its rate, as
    ``simulate`` takes them. Without ``link``, rates, ``leo`` or a trace each way, the
    link is ADSL1; a preset beside rates is refused.

    Every argument is checked before anything runs; a bad one raises
    :class:`~collateral.spec.SpecError` (a ValueError) whose ``param`` names it."""
    app = _app(app, video)
    tcp_flows = _whole("tcp_flows", tcp_flows, 0, MAX_TCP_FLOWS)
    uploads = _whole("uploads", uploads, 0, MAX_TCP_FLOWS - tcp_flows)
    web_users = _whole("web_users", web_users, 0, MAX_WEB_USERS)
    kind, wanted = _workload_goals(workload, goals)
    if kind is not None:
        tcp_flows = uploads = 0
    if tcp_flows + uploads + web_users == 0 and kind is None:
        raise SpecError("tcp_flows", "no load: give at least one download, upload or web user")
    trials = _whole("trials", trials, 1, MAX_TRIALS)
    threads = _whole("threads", threads, 0, MAX_THREADS)
    seed = _whole("seed", seed, 0, 2**63 - 1 - trials)
    ccs = _ccs(ccs)
    if profile not in PROFILES:
        raise SpecError(
            "profile", f"unknown stack profile {profile!r}; supported: {', '.join(PROFILES)}"
        )
    duration_ns = _duration(duration)
    if warmup is None:
        warmup = fmt_duration(min(10 * 10**9, duration_ns // 4))
    spec = APPS[app]
    if budget is not None and bare_number(budget) and float(str(budget)) >= 1:
        import warnings  # as simulate(rtt=100) warns: valid, but surely not seconds

        warnings.warn(
            f"budget={budget!r}: read as {float(str(budget)):g} s; did you mean {budget}ms?",
            stacklevel=2,
        )
    try:
        budget_ns = parse_duration(budget if budget is not None else spec["budget"])
    except ValueError as e:
        raise SpecError("budget", str(e)) from None
    if not 0 < budget_ns <= MAX_DURATION_NS:
        raise SpecError("budget", f"{budget!r}: from 1ns to {fmt_duration(MAX_DURATION_NS)}")
    target = 0.01 if target is None else target
    if isinstance(target, bool) or not isinstance(target, int | float):
        raise SpecError("target", f"{target!r}: expected a number")
    if not (math.isfinite(target) and 0 <= target <= 1):
        raise SpecError("target", f"{target!r}: a share of packets late or lost, from 0 to 1")
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float):
        raise SpecError("tolerance", f"{tolerance!r}: expected a number")
    if not (math.isfinite(tolerance) and 0 <= tolerance < 1):
        raise SpecError("tolerance", f"{tolerance!r}: a share of goodput, from 0 to below 1")
    mine = current_queue(current) if current is not None else None
    from ..spec.scenario import DEFAULT_LINK, uses_default_link

    rated = any(v is not None for v in (down, up, leo))
    if leo is not None and any(v is not None for v in (link, down, up)):
        raise SpecError("leo", "a satellite link sets both rates; leave out link, down and up")
    if link is not None and rated:
        raise SpecError("link", "give either a link preset or down and up rates (or leo)")
    if link is None and uses_default_link(rated, [down_trace is not None, up_trace is not None]):
        link = DEFAULT_LINK  # ADSL1, as simulate's
    if framing is not None and link is not None:
        raise SpecError("framing", "goes with down and up rates (a line's), not a link preset")
    line = {"framing": framing} if framing is not None else {}
    rates = {"down": {"rate": down, **line}, "up": {"rate": up, **line}} if link is None else {}
    if leo is not None:
        rates = {d: {"leo": leo, **line} for d in ("down", "up")}
    if up_docsis is not None:
        rates["up"] = {**rates.get("up", {}), "docsis": _docsis(up_docsis)}
    for d, file in (("down", down_trace), ("up", up_trace)):
        if file is None:
            continue
        if (down, up)[d == "up"] is not None or leo is not None:
            raise SpecError(f"{d}_trace", f"give either --{d} or --{d}-trace, not both")
        rates[d] = {k: v for k, v in rates.get(d, {}).items() if k != "rate"}
        rates[d]["trace"] = {"file": file}
    cbr = [{**c, "budget": f"{budget_ns}ns"} for c in spec["cbr"]]
    base = dict(link=link, rtt=rtt, duration=duration, warmup=warmup, cbr=cbr, **rates)
    if "media" in spec:
        base["media"] = _call(spec["media"], video, video_max_rate, video_direction, budget_ns)
    probe = _scenario(base)
    link_rates = {"down": probe.down.rate or 0, "up": probe.up.rate or 0}
    cands = candidates(
        link_rates["down"] if tcp_flows or not uploads else None,
        probe.rtt,
        ccs,
        link_rates["up"] if uploads or kind is not None else None,
        mine,
        (link_rates["down"], link_rates["up"]),
        probe.down.framing,
        docsis_up=probe.up.docsis is not None,
    )
    flows = ["down"] * tcp_flows + ["up"] * uploads
    if kind is not None:
        flows = ["down", "up"]  # the workload loads both ways
        base = {**base, "workload": {"kind": kind}}
    jobs, owners = [], []
    for ci, c in enumerate(cands):
        for t in range(trials):
            sc = _scenario(_trial(base, c, flows, web_users, profile, seed + t))
            sc = sc.model_copy(update={"trace": TraceSpec.off()})
            jobs.append(sc.to_native_json())
            owners.append(ci)
    results = _native.simulate_many(jobs, threads)
    bulk = {d: link_rates[d] for d in ("down", "up") if d in flows}
    per: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(cands))}
    for ci, r in zip(owners, results, strict=True):
        per[ci].append(_evidence(r["summary"], bulk, len(cbr), "media" in base))
        per[ci][-1]["goals"] = [g.measure(r["summary"]) for g in wanted]
    # The link, what shapes it (trace, docsis, leo...) and the RTT; not the probe's queue.
    parts = probe.describe(sep="\n").split("\n")
    where = parts[: next(i for i, x in enumerate(parts) if x.startswith("RTT ")) + 1]
    load = ", ".join(
        f"{n} {what}"
        for n, what in (
            (tcp_flows, "download(s)"),
            (uploads, "upload(s)"),
            (web_users, "web users"),
        )
        if n
    )
    if kind is not None:
        load = ", ".join(x for x in (f"workload {kind}", load) if x)
    goal_text = [f"goals {', '.join(map(str, wanted))}"] if wanted else []
    setup = " · ".join([*where, f"{load} on {profile}", f"{duration} trials", *goal_text])
    advice = Advice(app, target, fmt_duration(budget_ns), setup, trials, tolerance)
    advice.rates = bulk
    # The standard's name only for the standard's number: a budget given is the user's.
    advice.budget_source = BUDGET_SOURCES[app] if budget is None else "the budget given"
    for ci, c in enumerate(cands):
        advice.outcomes.append(_outcome(c, per[ci], target, app == "voip", wanted))
    return advice


def _docsis(text: str | dict[str, Any]) -> dict[str, Any] | None:
    """``up_docsis`` as the upstream's ``docsis`` table (``"off"``: none)."""
    from ..spec.docsis import parse_docsis

    if isinstance(text, dict):
        return text
    try:
        return parse_docsis(text)
    except ValueError as e:
        raise SpecError("up_docsis", str(e)) from None


def _app(app: object, video: object) -> str:
    """The application (aliases resolved): ``video`` when a video controller is given."""
    if app is None:
        app = "voip" if video is None else "video"
    if isinstance(app, str) and app in APP_ALIASES:
        app = APP_ALIASES[app]
    if not isinstance(app, str) or app not in APPS:
        names = [*APPS, *APP_ALIASES]
        raise SpecError("app", f"{app!r} is not one of {', '.join(names)}")
    if video is not None and app != "video":
        raise SpecError("video", f"the call is the application: leave out app {app!r}")
    return app


def _call(
    call: dict[str, Any], controller: object, max_rate: object, direction: object, budget_ns: int
) -> dict[str, Any]:
    """The video call's media table: the budget is its playout deadline, and the call
    starts at its top rate (a call in progress, not RFC 8867's ramp from 150 kbit/s,
    which takes GCC half a minute to 2 Mbit/s): what the queue lets it keep shows. The
    scenario checks each value (:func:`_scenario` names the parameter)."""
    media = {**call, "controller": "gcc" if controller is None else controller}
    media.update(direction=direction, playout=f"{budget_ns}ns")
    if max_rate is not None:
        media["max_rate"] = max_rate
    media["start_rate"] = media.get("max_rate", "1.5Mbit")
    return media


def _workload_goals(
    workload: str | None, goals: tuple[str, ...] | list[str]
) -> tuple[str | None, list[Goal]]:
    """The workload's kind (checked) and the goals parsed; goals need a workload."""
    from ..vocabulary import WORKLOADS

    if workload is not None and workload not in WORKLOADS:
        raise SpecError("workload", f"{workload!r} is not one of {', '.join(WORKLOADS)}")
    if isinstance(goals, str) or not isinstance(goals, tuple | list):
        raise SpecError("goals", f"{goals!r}: give a list of goals, e.g. ['rpm>=800']")
    try:
        wanted = [parse_goal(g) for g in goals]
    except ValueError as e:
        raise SpecError("goals", str(e)) from None
    if wanted and workload is None:
        raise SpecError("goals", "a goal on scores needs a workload (rrul, responsiveness)")
    return workload, wanted


def _trial(
    base: dict[str, Any], c: Candidate, flows: list[str], web: int, profile: str, seed: int
) -> dict[str, Any]:
    # Seeded start offsets (TcpSpec's default spread), as simulate and sweeps draw them.
    tcp: list[Any] = [{"direction": d, "cc": c.cc, "ecn": c.ecn, "profile": profile} for d in flows]
    if "workload" in base:
        from ..spec.workload import WorkloadSpec

        template = {"cc": c.cc, "ecn": c.ecn, "profile": profile}
        tcp = WorkloadSpec.model_validate(base["workload"]).flows(template)[0]
    q = c.queues()
    links = {d: {**base.get(d, {}), "queue": q[d]} for d in ("down", "up")}
    cbr = [{**x, "tag": c.dscp} for x in base["cbr"]]
    media = {"media": {**base["media"], "tag": c.dscp}} if "media" in base else {}
    browse = {"cc": c.cc, "ecn": c.ecn, "profile": profile}
    users = [{"users": web, "think_max": "300s", "tcp": browse}]
    web_users = users if web else []
    return {**base, **links, **media, "cbr": cbr, "tcp": tcp, "web": web_users, "seed": seed}


def _evidence(s: dict[str, Any], bulk: dict[str, int], apps: int, call: bool) -> dict[str, Any]:
    """One trial's numbers: the worst flow's share late, each direction's worst p95
    delay, its goodput and the mean utilisation of the bulk directions. The
    application's flows are the last ``apps`` CBR flows (a workload's probes come
    first), or the video call: its frames late and its frame delay (capture to complete
    arrival), as the core's media summary gives them."""
    goodput = {d: s[f"{d}_goodput_bps"] for d in bulk}
    # Web users alone: no bulk goodput to trade, every candidate is equal on it.
    util = sum(goodput[d] / bulk[d] for d in bulk) / len(bulk) if bulk else 0.0
    if call:
        m = s["media"][-1]
        return {
            "late": _nan(m["frames_late"], 1.0),  # no frame through: all late
            "delay": {m["direction"]: _nan(m["frame_delay_p95_s"], math.inf)},
            "goodput": goodput,
            "util": util,
            "mos": math.nan,
            "call_bps": m["received_bps"],
        }
    cbr = s["cbr"][-apps:]
    delays = {
        d: max(_nan(c["delay_p95_s"], math.inf) for c in cbr if c["direction"] == d)
        for d in ("down", "up")
        if any(c["direction"] == d for c in cbr)
    }
    return {
        "late": max(_nan(c["over_budget"], 1.0) for c in cbr),  # nothing through: all late
        "delay": delays,
        "goodput": goodput,
        "util": util,
        "mos": min(_nan(c["mos"], 1.0) for c in cbr),
    }


def _outcome(
    c: Candidate, ev: list[dict[str, Any]], target: float, call: bool, goals: list[Goal]
) -> Outcome:
    late = [e["late"] for e in ev]
    util = [e["util"] for e in ev]
    worst = [max(e["delay"].values()) for e in ev]
    dirs = ev[0]["delay"].keys()
    med = median(late)
    # A trial without the score leaves the candidate without one (as Goal.met judges it):
    # a median over a NaN is not a number to show.
    scores = {
        str(g): math.nan
        if any(math.isnan(e["goals"][k]) for e in ev)
        else median(e["goals"][k] for e in ev)
        for k, g in enumerate(goals)
    }
    goals_met = all(g.met([e["goals"][k] for e in ev]) for k, g in enumerate(goals))
    return Outcome(
        c,
        med,
        {d: median(e["delay"][d] for e in ev) for d in dirs},
        {d: median(e["goodput"][d] for e in ev) for d in ev[0]["goodput"]},
        median(util),
        med <= target and goals_met,
        (min(late), max(late)),
        (min(worst), max(worst)),
        (min(util), max(util)),
        median(e["mos"] for e in ev) if call else math.nan,
        100 * (target - med),
        scores,
        median(e["call_bps"] for e in ev) if "call_bps" in ev[0] else math.nan,
    )


# Where a scenario's field comes from among advise()'s parameters.
_PARAMS = {
    "link": "link",
    "down": "down",
    "up": "up",
    "rtt": "rtt",
    "duration": "duration",
    "workload": "workload",
}
#: The video call's fields and the parameters that give them.
_MEDIA_PARAMS = {"controller": "video", "direction": "video_direction"}


def _scenario(data: dict[str, Any]) -> Scenario:
    try:
        return Scenario(**data)
    except ValidationError as err:
        e = err.errors()[0]
        msg = str(e["msg"]).removeprefix("Value error, ")
        path = ".".join(map(str, e["loc"])) if e["loc"] else msg.partition(":")[0]
        head = path.partition(".")[0].partition("[")[0]
        param = _PARAMS.get(head, "warmup" if head == "warmup" else "link")
        if head == "up" and "docsis" in path:
            param = "up_docsis"
        if head in ("down", "up") and ".leo" in path:
            param = "leo"
        if head in ("down", "up") and ".trace" in path:
            param = f"{head}_trace"
        if head == "tcp":  # the flows advise() builds: their cc or stack was given
            param = "profile" if path.endswith("profile") else "ccs"
        if head == "media":  # ("media", <the union's tag>, field)
            param = _MEDIA_PARAMS.get(str(e["loc"][-1]), "video_max_rate")
        raise SpecError(param, msg) from None


def _ccs(ccs: object) -> tuple[str, ...]:
    if isinstance(ccs, str) or not isinstance(ccs, tuple | list) or not ccs:
        raise SpecError("ccs", f"{ccs!r}: give a list of congestion controls, e.g. ('cubic',)")
    ccs = [CC_ALIASES.get(cc, cc) if isinstance(cc, str) else cc for cc in ccs]
    for cc in ccs:
        if cc not in CC_ALGORITHMS:
            raise SpecError(
                "ccs", f"unknown congestion control {cc!r}; supported: {', '.join(CC_ALGORITHMS)}"
            )
        if cc in ("dctcp", "prague"):  # scalable: L4S ECN, which only the L4S candidate has
            raise SpecError(
                "ccs",
                f"{cc} is a scalable control (L4S ECN): every run tries 'DualPI2, L4S flows'"
                " with Prague already; give classic controls here (newreno, cubic, bbr...)",
            )
    return tuple(dict.fromkeys(ccs))


def _duration(duration: str) -> int:
    try:
        ns = parse_duration(duration)
    except ValueError as e:
        raise SpecError("duration", str(e)) from None
    if not MIN_DURATION_NS <= ns <= MAX_DURATION_NS:
        raise SpecError(
            "duration",
            f"{fmt_duration(ns)}: from {fmt_duration(MIN_DURATION_NS)} to"
            f" {fmt_duration(MAX_DURATION_NS)} per trial (shorter trials measure too few"
            " packets to rank by; the advisor runs every candidate, trials times)",
        )
    return ns


def _whole(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(name, f"{value!r}: expected a whole number")
    if not lo <= value <= hi:
        raise SpecError(name, f"{value}: must be from {lo} to {hi}")
    return value


def _nan(x: float | None, default: float) -> float:
    return default if x is None or (isinstance(x, float) and math.isnan(x)) else x
