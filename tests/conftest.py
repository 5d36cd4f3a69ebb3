"""Fixtures shared by the test modules."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def quick_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory holding every simulated reproduction in --quick mode, run once per
    session (about a minute on 2 cores); modules that need them reproduce into it again,
    which runs no trial and only draws and checks. Testbed figures are left out, as
    ``reproduce all`` leaves them out (tests/test_fig4b.py runs one on a single size)."""
    from collateral.reproduce import STUDIES, reproduce

    out = tmp_path_factory.mktemp("quick-results")
    for fid, fig in STUDIES.items():
        if not fig.testbed:
            reproduce(fid, out=out, quick=True, progress=False)
    return out
