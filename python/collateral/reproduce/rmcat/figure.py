"""The RMCAT studies' figure: each call's received rate and its controller's target over
time beside the capacity of its direction, one panel per case (or queue) and controller,
from the first trial's stored ``media`` trace; and the table of medians over trials (the
core's media summary, RFC 8868's criteria among it) beside it as Markdown and CSV."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...plot.style import STYLE, plt
from ..drawing import save_with_caption, trials_word
from ..today.table import write_tables
from .table import CONTROLLERS, TABLE_COLS, call_rows, medians, scenario_of

if TYPE_CHECKING:
    from ...spec import Scenario
    from ...store import Store

#: Colour per call (the first three; more calls cycle).
CALL_COLOURS = ("C0", "C3", "C2", "C4", "C1")


def capacity_steps(sc: Scenario, direction: str) -> tuple[list[float], list[float]]:
    """(times s, Mbit/s) of the direction's capacity as the spec gave it: rate steps,
    or the line rate throughout (the input, drawn; the core measures against it)."""
    link = sc.down if direction == "down" else sc.up
    end = sc.duration / 1e9
    tr = link.trace
    if tr is not None and tr.steps:
        t = [s / 1e9 for s, _ in tr.steps] + [end]
        r = [v / 1e6 for _, v in tr.steps]
        return t, [*r, r[-1]]
    rate = (link.rate or 0) / 1e6
    return [0.0, end], [rate, rate]


def _series(trace: Any, calls: list[Any]) -> list[dict[str, np.ndarray]]:
    """A trial's media trace split per call by its ``flow`` column (the calls' media flow
    ids rise in the calls' order). Bins before a call's start are blank (the call does not
    exist yet; its zeros would read as a starved call)."""
    flows = np.unique(trace["flow"].to_numpy())
    out = []
    for call, flow in zip(calls, flows, strict=False):
        rows = trace[trace["flow"] == flow]
        s = {c: rows[c].to_numpy().astype(float) for c in _COLS}
        before = s["time_s"] + 1e-9 < call.start / 1e9
        for c in ("target_bps", "received_bps"):
            s[c][before] = np.nan
        out.append(s)
    return out


_COLS = ("time_s", "target_bps", "received_bps")


def _panel(ax: Any, traces: dict[str, Any], row: Any) -> None:
    sc = scenario_of(row)
    dirs = sorted({c.direction for c in sc.calls})
    for d in dirs:
        t, r = capacity_steps(sc, d)
        ls = "-" if d == "down" else (0, (4, 2))
        ax.step(t, r, where="post", color="k", lw=1.2, ls=ls, alpha=0.7)
    trace = traces.get(row["key"])
    for k, s in enumerate(_series(trace, sc.calls) if trace is not None else []):
        colour = CALL_COLOURS[k % len(CALL_COLOURS)]
        ax.plot(s["time_s"], s["received_bps"] / 1e6, color=colour, lw=1.1)
        ax.plot(s["time_s"], s["target_bps"] / 1e6, color=colour, lw=0.7, ls=":")
    for t in sc.tcp:
        ax.axvline(t.start / 1e9, color="0.4", lw=0.8, ls="--")
    if sc.warmup:
        ax.axvspan(0, sc.warmup / 1e9, color="0.93", lw=0)
    ax.set_xlim(0, sc.duration / 1e9)
    ax.set_ylim(bottom=0)
    ax.grid(color="0.9", lw=0.6)


def _rank(order: tuple[str, ...], name: str) -> int:
    return order.index(name) if name in order else len(order)


def _legend(scenarios: list[Scenario], n_calls: int) -> list[Any]:
    """Legend entries for what the panels draw: each call (with its direction where
    calls go both ways), the target, the capacity of each direction drawn, the TCP
    flows' start and the warm-up where there are any."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    up = {k for sc in scenarios for k, c in enumerate(sc.calls) if c.direction == "up"}
    both = bool(up) and any(c.direction == "down" for sc in scenarios for c in sc.calls)

    def name(k: int) -> str:
        return f"call {k}" + ((" (up)" if k in up else " (down)") if both else "")

    out: list[Any] = [
        Line2D(
            [],
            [],
            color=CALL_COLOURS[k % len(CALL_COLOURS)],
            lw=1.1,
            label=f"{name(k)}: received rate",
        )
        for k in range(n_calls)
    ]
    out.append(Line2D([], [], color="0.3", lw=0.7, ls=":", label="its controller's target"))
    dirs = {c.direction for sc in scenarios for c in sc.calls}
    if "down" in dirs:
        out.append(Line2D([], [], color="k", lw=1.2, label="capacity (down)"))
    if "up" in dirs:
        out.append(Line2D([], [], color="k", lw=1.2, ls=(0, (4, 2)), label="capacity (up)"))
    if any(sc.tcp for sc in scenarios):
        out.append(Line2D([], [], color="0.4", lw=0.8, ls="--", label="TCP flow starts"))
    if any(sc.warmup for sc in scenarios):
        out.append(Patch(color="0.93", label="warm-up (not measured)"))
    return out


def draw(
    store: Store, stem: Path, label: str, *, what: str, caption: str, order: tuple[str, ...] = ()
) -> list[Path]:
    """The figure (rows: the cases or queues, in ``order``; columns: the controllers) and
    the table (rows in the same order)."""
    from ...plot.style import suptitle
    from ..today.table import summary

    raw = summary(store)
    first = raw[raw.rep == raw.rep.min()] if len(raw) else raw
    groups = [
        (str(c or "-"), str(q or "-"))
        for c, q in dict.fromkeys(
            zip(
                first.get("tag_case", [None] * len(first)),
                first.get("tag_queue", [None] * len(first)),
                strict=True,
            )
        )
    ]
    groups.sort(key=lambda g: (_rank(order, g[0]), _rank(order, g[1])))
    t = medians(call_rows(store))
    n = int(t.trials.min()) if len(t) else 0
    wanted = set(first["key"]) if len(first) else set()
    media = store.query("SELECT key, flow, time_s, target_bps, received_bps FROM media")
    traces = {k: g for k, g in media.groupby("key", sort=False) if k in wanted}
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            max(len(groups), 1),
            len(CONTROLLERS),
            figsize=(13, 2.6 * max(len(groups), 1) + 1.6),
            layout="constrained",
            squeeze=False,
            sharex=True,
        )
        for i, (case, queue) in enumerate(groups):
            for j, cc in enumerate(CONTROLLERS):
                ax = axes[i, j]
                match = [
                    r
                    for _, r in first.iterrows()
                    if str(r.get("tag_case") or "-") == case
                    and str(r.get("tag_queue") or "-") == queue
                    and scenario_of(r).calls[0].controller == cc
                ]
                if match:
                    _panel(ax, traces, match[0])
                name = " ".join(x for x in (case, queue) if x != "-")
                ax.set_title(f"{cc.upper()}" + (f": {name}" if name else ""), fontsize=10)
                if j == 0:
                    ax.set_ylabel("rate (Mbit/s)")
                if i == len(groups) - 1:
                    ax.set_xlabel("time (s)")
        n_calls = int(t.index.get_level_values("call").max()) + 1 if len(t) else 1
        handles = _legend([scenario_of(r) for _, r in first.iterrows()], n_calls)
        fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=9)
        suptitle(
            fig,
            f"{label}\n{what}; the first of {trials_word(n)} drawn, the table's medians over all",
        )
        files = save_with_caption(fig, stem, caption)
    head = (
        f"{label}: medians over trials per case, queue, controller and call. rate = the"
        " call's received media rate (IP bytes) after the warm-up; capacity = its"
        " direction's mean capacity; utilisation = rate / capacity; share beside TCP ="
        " rate / (rate + the bulk TCP goodput of its direction); share of calls and Jain's"
        " index over the calls of its direction; convergence = from its start to the first"
        " 0.5 s bin at 80 % of its fair share; adapt to fall = from a capacity fall to the"
        " first bin sent at most 1.1 x the new fair share (the longest over the falls);"
        " rate CoV = the received rate's coefficient of variation over the bins; frame p95"
        " = capture to the arrival of the frame's last packet; late = frames later than"
        " 150 ms or incomplete (RFC 8868's criteria, computed by the core)."
    )
    rows = sorted(
        t.index,
        key=lambda i: (_rank(order, i[0]), _rank(order, i[1]), CONTROLLERS.index(i[2]), i[3]),
    )
    table = t.loc[rows].drop(columns=["direction"])
    return [*files, *write_tables(table, stem, TABLE_COLS, head)]
