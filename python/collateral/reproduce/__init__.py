"""One-command reproductions of the published experiments (SPEC §7).

Each *figure* of a study is an entry here: the experiment file it needs (shipped in
``reproduce/experiments``), the figure it draws from the stored results, and the
claims the paper makes that we can check. Several figures share one experiment (Fig. 3a
and 3b come from one sweep), and so one results store: running the second reuses every
trial the first ran. ``quick`` runs a reduced version — fewer trials, shorter runs,
coarser sweeps — into its own store, and labels its figures as such.

    collateral reproduce --list
    collateral reproduce mmsys-fig3a [--quick] [-o results]

Each study is its own module: ``mmsys2011`` (MMSys 2011), ``huebner2008`` (Hübner et al.),
``parris_cbt`` (Parris et al.'s CBT) and ``today`` (today's access queues and RFC 9332).
``claims`` holds the Claim and Figure types, ``drawing`` the helpers the studies share,
``registry`` the list of figures and ``reproduce()``.
"""

from __future__ import annotations

from .claims import Claim, Figure, claims_summary, format_claims_summary
from .registry import (
    STUDIES,
    Reproduction,
    TestbedUnavailable,
    UnknownFigure,
    claims_line,
    experiment_path,
    reproduce,
)

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
