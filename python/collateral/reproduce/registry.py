"""The registry of figures: every study's figures by id (STUDIES), the shipped experiment
files, and reproduce(), which runs a figure's experiment (simulator or testbed), draws
it and checks its claims."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from . import huebner2008, mmsys2011, parris_cbt, rmcat, today
from .claims import Claim, Figure, format_claims_summary
from .mmsys2011 import fig4b

FIGURES: list[Figure] = [
    *mmsys2011.FIGURES,
    *huebner2008.FIGURES,
    *parris_cbt.FIGURES,
    # Today's access queues and RFC 9332's coupling goal.
    *today.FIGURES,
    # RFC 8867's wired cases for real-time media congestion control (RFC 8868's criteria).
    *rmcat.FIGURES,
    # MMSys Fig. 4(b): FB-loose loss at k x 1500 B, simulated and on the testbed.
    *fig4b.FIGURES,
]
STUDIES: dict[str, Figure] = {f.id: f for f in FIGURES}


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
    ``<out>/<experiment>[-quick]/figures/`` and checks the paper's claims. Stopped by
    Ctrl-C or SIGTERM, it stores the finished trials, then raises KeyboardInterrupt
    (its argument the signal's name) without drawing or judging part of a sweep."""
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
        if report.interrupted:  # stopped with trials missing: no figure, no verdict
            raise KeyboardInterrupt(report.signal or "SIGINT")
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
