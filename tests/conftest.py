"""Fixtures shared by the test modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

Drawn = list[tuple[Any, Path, str | None]]  # (figure, path, caption) per save()


def capture_saves(mp: pytest.MonkeyPatch, into: Drawn) -> None:
    """Wraps ``save`` (as plots and figures call it) to keep each figure it writes in
    ``into``, so a test can look at the matplotlib figure itself."""
    from collateral.plot import save, trial
    from collateral.reproduce import drawing

    def rec(fig, path, svg=None, **kw):
        into.append((fig, Path(path), kw.get("caption")))
        return save(fig, path, svg=svg, **kw)

    mp.setattr(trial, "save", rec)
    mp.setattr(drawing, "save", rec)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``quiet`` (a real-time accuracy target) run after every other test,
    when the machine is quietest."""
    items.sort(key=lambda item: item.get_closest_marker("quiet") is not None)


@dataclass
class QuickRuns:
    """Every simulated reproduction in --quick mode, run once per session from an empty
    directory: where they are, each one's Reproduction and the figures it drew."""

    out: Path
    reps: dict[str, Any] = field(default_factory=dict)
    drawn: dict[str, Drawn] = field(default_factory=dict)


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> QuickRuns:
    """Run (about a minute on 2 cores) and drawn once for the modules that check the
    runs, their stores, claims and figures: drawing them again would only repeat it.
    Testbed figures are left out, as ``reproduce all`` leaves them out
    (tests/test_fig4b.py runs one on a single size)."""
    from collateral.reproduce import STUDIES, reproduce

    runs = QuickRuns(tmp_path_factory.mktemp("quick-results"))
    with pytest.MonkeyPatch.context() as mp:
        for fid, fig in STUDIES.items():
            if fig.testbed:
                continue
            drawn: Drawn = []
            capture_saves(mp, drawn)
            runs.reps[fid] = reproduce(fid, out=runs.out, quick=True, progress=False)
            runs.drawn[fid] = drawn
    return runs


@pytest.fixture(scope="session")
def quick_results(quick_runs: QuickRuns) -> Path:
    """The directory of the session's quick reproductions."""
    return quick_runs.out


@pytest.fixture(scope="session")
def measured_cable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped measured cable run (examples/measured/cable-fifo-500k: 50/10 Mbit/s,
    30 ms, a 500 kB FIFO each way, bare IP framing), imported once."""
    from collateral import cli

    example = Path(__file__).resolve().parent.parent / "examples" / "measured" / "cable-fifo-500k"
    files = [str(example / f) for f in ("irtt.json.gz", "down.json", "up.json")]
    out = tmp_path_factory.mktemp("cable") / "m"
    assert cli.main(["import", *files, "-o", str(out)]) == 0
    return out


def rerun_while_late(run: Any, lateness: Any, tries: int = 3) -> Any:
    """``run()`` again while ``lateness(result)`` names how late the testbed's router was
    (None: on time), at most ``tries`` runs: a late run's delays and counts hold its
    lateness, not the model's. Late every time, the test is skipped with the router's
    figures: this machine cannot keep real time now, and
    test_a_run_on_a_quiet_machine_is_not_flagged is the test of the router's timing."""
    import warnings

    seen = []
    for _ in range(tries):
        result = run()
        late = lateness(result)
        if late is None:
            return result
        seen.append(late)
        warnings.warn(f"the testbed's run was late ({late})", stacklevel=2)
    pytest.skip(
        f"the testbed was late {tries} runs in a row ({'; '.join(seen)}): "
        "this machine cannot keep real time now"
    )


@pytest.fixture
def emulate_on_time() -> Any:
    """``emulate(scenario)`` run again, as ``--rerun-late`` does, while the router says
    it missed real time (:func:`rerun_while_late`)."""
    from collateral.emulate import emulate

    def lateness(e: Any) -> str | None:
        if not e.summary.get("late"):
            return None
        return f"release error p99 {(e.summary.get('release_error_p99_s') or 0.0) * 1e3:.2f} ms"

    def run(scenario: Any, tries: int = 3) -> Any:
        return rerun_while_late(lambda: emulate(scenario), lateness, tries)

    return run


@pytest.fixture
def cli_main(capsys: pytest.CaptureFixture[str]) -> Any:
    """``collateral ARGS...`` in this process: (exit status, stdout, stderr stripped)."""
    from collateral import cli

    def main(*argv: str) -> tuple[int, str, str]:
        try:
            rc = cli.main(list(argv))
        except SystemExit as e:
            rc = int(e.code or 0)
        got = capsys.readouterr()
        return rc, got.out, got.err.strip()

    return main
