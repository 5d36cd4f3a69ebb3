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

from collections.abc import Callable
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
    "UnknownFigure",
    "experiment_path",
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
        lambda s: [],
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
        F.parris_multimedia,
        F.parris_multimedia_claims,
        (("experiment.trials", 1),),
    ),
    # Today's access queues and RFC 9332's coupling goal (figures and claims in today.py).
    *__import__(f"{__package__}.today", fromlist=["FIGURES"]).FIGURES,
]
STUDIES: dict[str, Figure] = {f.id: f for f in FIGURES}


def experiment_path(name: str) -> Path:
    """The shipped experiment file ``name`` (without .toml)."""
    return Path(str(resources.files(__package__) / "experiments" / f"{name}.toml"))


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
    report = run_experiment(exp, Path(out) / name, workers=workers, progress=progress)
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
        trials_run=report.ran,
        trials_total=report.total,
        wall_s=time.monotonic() - t0,
    )
