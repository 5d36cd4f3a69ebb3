"""One-command reproductions of the published experiments (SPEC §7).

Each *figure* of a study is an entry here: the experiment file it needs (shipped in
``reproduce/experiments``), the figure it draws from the stored results, and the
claims the paper makes that we can check. Several figures share one experiment (Fig. 3a
and 3b come from one sweep), and so one results store: running the second reuses every
trial the first ran. ``quick`` runs a reduced version — fewer trials, shorter runs,
coarser sweeps — into its own store, and labels its figures as such.

    collateral reproduce --list
    collateral reproduce mmsys-fig3a [--quick] [-o results]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from . import figures as F

__all__ = [
    "STUDIES",
    "Claim",
    "Figure",
    "Reproduction",
    "TestbedUnavailable",
    "UnknownFigure",
    "claims_line",
    "claims_summary",
    "experiment_path",
    "format_claims_summary",
    "reproduce",
]


@dataclass(frozen=True)
class Claim:
    """A number or statement from the paper beside ours."""

    text: str
    published: str
    ours: str
    holds: bool | None = None  # None: no pass/fail, just the two values
    #: How far ours may be from the published value and still hold, in words and
    #: numbers ("within 1 % of capacity", "≥ 95 % of sizes"); empty only with holds=None.
    tolerance: str = ""


def claims_summary(claims: Iterable[Claim]) -> tuple[int, int, int]:
    """(hold, differ, total) over ``claims``; a claim without a verdict counts only in
    the total."""
    cs = list(claims)
    return (
        sum(c.holds is True for c in cs),
        sum(c.holds is False for c in cs),
        len(cs),
    )


def format_claims_summary(claims: Iterable[Claim]) -> str:
    """``claims: N hold, M differ, K total`` (and how many have no verdict, if any)."""
    hold, differ, total = claims_summary(claims)
    line = f"claims: {hold} hold, {differ} differ, {total} total"
    if total - hold - differ:
        line += f" ({total - hold - differ} without a verdict)"
    return line


def claims_line(fig_ids: Iterable[str], out: str | Path = "results", quick: bool = False) -> str:
    """The claims summary line for figures already reproduced into ``out``: each
    figure's claims are checked again against its store (nothing is run)."""
    from ..store import Store

    claims: list[Claim] = []
    for fid in fig_ids:
        fig = STUDIES[fid]
        path = Path(out) / (fig.experiment + ("-quick" if quick else ""))
        claims += fig.claims(Store(path))
    return format_claims_summary(claims)


@dataclass(frozen=True)
class Figure:
    id: str
    paper: str
    title: str
    experiment: str  # file name in reproduce/experiments, without .toml
    draw: Callable[[Any, Path, str], list[Path]]  # (store, out path stem, label) -> files
    claims: Callable[[Any], list[Claim]] = lambda store: []
    #: (dotted key, value) overrides for --quick, applied to the experiment file.
    quick: tuple[tuple[str, Any], ...] = ()
    #: Run on the emulation testbed (real Linux TCP, needs root) instead of the simulator;
    #: such figures are left out of ``reproduce all``.
    testbed: bool = False


def _parris_multimedia_and_table(store: Any, stem: Path, label: str) -> list[Path]:
    """The multimedia figure, and beside it the study's table with the parameters run
    (``<stem>-table.md`` / ``.csv``)."""
    return [*F.parris_multimedia(store, stem, label), *F.parris_table(store, stem)]


_QUICK_SHORT = (("experiment.trials", 2), ("scenario.duration", "40s"), ("scenario.warmup", "10s"))

FIGURES: list[Figure] = [
    Figure(
        "mmsys-fig1",
        "MMSys 2011",
        "cwnd and CBR queueing delay, NewReno vs CUBIC",
        "mmsys-fig1",
        F.mmsys_fig1,
        F.mmsys_fig1_claims,
        (("scenario.duration", "40s"), ("scenario.warmup", "15s")),
    ),
    Figure(
        "mmsys-fig3a",
        "MMSys 2011",
        "goodput vs slot queue length, ADSL1",
        "mmsys-fig3",
        F.goodput_vs_slots("adsl1"),
        F.fig3_claims("adsl1"),
        (*_QUICK_SHORT, ("sweep.queue.limit", ["7p", "14p", "20p", "40p", "67p"])),
    ),
    Figure(
        "mmsys-fig3b",
        "MMSys 2011",
        "goodput vs slot queue length, ADSL2",
        "mmsys-fig3",
        F.goodput_vs_slots("adsl2"),
        F.fig3_claims("adsl2"),
        (*_QUICK_SHORT, ("sweep.queue.limit", ["7p", "14p", "20p", "40p", "67p"])),
    ),
    Figure(
        "mmsys-fig4",
        "MMSys 2011",
        "downstream CBR loss vs queue size for PS, FB-strict, FB-loose",
        "mmsys-fig4",
        F.mmsys_fig4,
        F.fig4_claims,
        _QUICK_SHORT,
    ),
    Figure(
        "mmsys-fig5",
        "MMSys 2011",
        "CUBIC fast-convergence lock-in without and with jitter",
        "mmsys-fig5",
        F.mmsys_fig5,
        F.fig5_claims,
        (("experiment.trials", 8), ("scenario.duration", "60s"), ("scenario.warmup", "10s")),
    ),
    Figure(
        "mmsys-fig6a",
        "MMSys 2011",
        "CBR loss vs byte queue size (fine sweep), CUBIC",
        "mmsys-fig6",
        F.fine_sweep("cubic"),
        F.fig6_claims("cubic"),
        (
            ("experiment.trials", 3),
            ("scenario.duration", "40s"),
            ("scenario.warmup", "10s"),
            ("sweep.queue.limit", {"from": "52500B", "to": "67500B", "step": "1500B"}),
        ),
    ),
    Figure(
        "mmsys-fig6b",
        "MMSys 2011",
        "CBR loss vs byte queue size (fine sweep), NewReno",
        "mmsys-fig6",
        F.fine_sweep("newreno"),
        F.fig6_claims("newreno"),
        (
            ("experiment.trials", 3),
            ("scenario.duration", "40s"),
            ("scenario.warmup", "10s"),
            ("sweep.queue.limit", {"from": "52500B", "to": "67500B", "step": "1500B"}),
        ),
    ),
    Figure(
        "mmsys-fig7",
        "MMSys 2011",
        "additional downstream CBR delay vs RTT/2, 40 kB FB-loose",
        "mmsys-fig7",
        F.mmsys_fig7,
        F.fig7_claims,
        _QUICK_SHORT,
    ),
    Figure(
        "mmsys-adsl2-loss",
        "MMSys 2011",
        "ADSL2 downstream CBR loss with FB-loose queues",
        "mmsys-adsl2-loss",
        F.adsl2_loss,
        F.adsl2_claims,
        _QUICK_SHORT,
    ),
    Figure(
        "huebner-epochs",
        "Huebner 2008",
        "cwnd and queue occupancy over three epochs",
        "huebner-2008",
        F.huebner_epochs,
        F.huebner_epoch_claims,
        (("scenario.duration", "90s"),),
    ),
    Figure(
        "huebner-owd-queue",
        "Huebner 2008",
        "VoIP one-way delay vs queue occupancy",
        "huebner-2008",
        F.huebner_owd_queue,
        # SPEC §1's delay-distribution shapes, on this set-up's per-packet delays and
        # queue trace (10 Mbit/s, RTT 80 ms, 1 BDP).
        F.huebner_shape_claims,
        (("scenario.duration", "90s"),),
    ),
    Figure(
        "huebner-cdf",
        "Huebner 2008",
        "CDFs of VoIP delay per algorithm, 1 BDP",
        "huebner-delay",
        F.huebner_cdf,
        lambda s: [],
        (("scenario.duration", "30s"), ("scenario.warmup", "10s")),
    ),
    Figure(
        "huebner-median-bdp",
        "Huebner 2008",
        "median VoIP delay vs BDP",
        "huebner-delay",
        F.huebner_median_bdp,
        F.huebner_bdp_claims,
        (("scenario.duration", "30s"), ("scenario.warmup", "10s")),
    ),
    Figure(
        "parris-throughput",
        "Parris, Jeffay & Smith (MMCN '99)",
        "aggregate TCP throughput over time under drop-tail, RED, FRED, CBT, CBQ",
        "parris-cbt",
        F.parris_throughput,
        F.parris_tcp_claims,
        (("experiment.trials", 1),),
    ),
    Figure(
        "parris-multimedia",
        "Parris, Jeffay & Smith (MMCN '99)",
        "multimedia drop rate and latency during the UDP blast",
        "parris-cbt",
        _parris_multimedia_and_table,
        F.parris_multimedia_claims,
        (("experiment.trials", 1),),
    ),
    # Today's access queues and RFC 9332's coupling goal (figures and claims in today.py).
    *__import__(f"{__package__}.today", fromlist=["FIGURES"]).FIGURES,
    # MMSys Fig. 4(b): FB-loose loss at k x 1500 B, simulated and on the testbed.
    *__import__(f"{__package__}.fig4b", fromlist=["FIGURES"]).FIGURES,
]
STUDIES: dict[str, Figure] = {f.id: f for f in FIGURES}


def experiment_path(name: str) -> Path:
    """The shipped experiment file ``name`` (without .toml)."""
    return Path(str(resources.files(__package__) / "experiments" / f"{name}.toml"))


class TestbedUnavailable(RuntimeError):
    """A testbed figure asked for where the testbed cannot run (not root, no
    ``ip``, ...): the message says why and names the simulated figure."""


def _on_testbed(exp: Any, path: Path, progress: bool | None) -> tuple[int, int]:
    """The experiment's trials on the emulation testbed, one after the other in real
    time (resuming), after checking every point can run here."""
    import sys

    from ..emulate import EmulationError, check_ready, check_testbed, emulate_experiment

    try:
        for p in exp.points:
            check_testbed(p.scenario)
            check_ready(p.scenario)
    except EmulationError as e:
        raise TestbedUnavailable(
            f"needs the emulation testbed, which cannot run here: {e}"
        ) from None

    def tell(n: int, total: int, trial: Any) -> None:
        print(f"  testbed trial {n}/{total} done", file=sys.stderr, flush=True)

    return emulate_experiment(exp, path, tell if progress is not False else None)


class UnknownFigure(KeyError, ValueError):
    """``fig_id`` names no figure (a KeyError, as before, and a ValueError)."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class Reproduction:
    figure: Figure
    store: Path
    files: list[Path] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    trials_run: int = 0
    trials_total: int = 0
    wall_s: float = 0.0


def reproduce(
    fig_id: str,
    out: str | Path = "results",
    quick: bool = False,
    workers: int = 0,
    progress: bool | None = None,
) -> Reproduction:
    """Runs (or resumes) the experiment behind ``fig_id``, draws its figure into
    ``<out>/<experiment>[-quick]/figures/`` and checks the paper's claims."""
    import time

    from ..experiment import load_experiment
    from ..runner import run_experiment
    from ..store import Store

    if not isinstance(fig_id, str) or fig_id not in STUDIES:
        raise UnknownFigure(f"fig_id: unknown figure {fig_id!r}; known: {', '.join(STUDIES)}")
    out = Path(out)
    if not str(out).strip() or (out.exists() and not out.is_dir()):
        raise ValueError(f"out: {str(out)!r} is not a directory; give one such as results")
    fig = STUDIES[fig_id]
    name = fig.experiment + ("-quick" if quick else "")
    overrides = list(fig.quick) if quick else []
    exp = load_experiment(experiment_path(fig.experiment), [("experiment.name", name), *overrides])
    t0 = time.monotonic()
    if fig.testbed:
        ran, total = _on_testbed(exp, Path(out) / name, progress)
    else:
        report = run_experiment(exp, Path(out) / name, workers=workers, progress=progress)
        ran, total = report.ran, report.total
    store = Store(Path(out) / name)
    label = f"{fig.paper}: {fig.title}" + (" [QUICK: reduced trials/duration]" if quick else "")
    figdir = store.path / "figures"
    figdir.mkdir(exist_ok=True)
    files = fig.draw(store, figdir / fig.id, label)
    return Reproduction(
        figure=fig,
        store=store.path,
        files=files,
        claims=fig.claims(store),
        trials_run=ran,
        trials_total=total,
        wall_s=time.monotonic() - t0,
    )
