"""collateral: how bulk TCP and gateway queues hurt real-time traffic on broadband links.

>>> import collateral
>>> r = collateral.simulate(link="adsl1", queue="20kB", duration="20s", warmup="5s")
>>> r.tcp[0]["goodput_bps"] > 0
True

The Rust core (``collateral._native``) runs one trial per call without the GIL; this
package owns the user-facing API: specs with human units, results, plots, the CLI.
"""

from __future__ import annotations

import inspect
import os
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version
from typing import Any

from . import _native
from .result import Result
from .spec import Scenario, SpecError, build_scenario

__all__ = [
    "Result",
    "Scenario",
    "SpecError",
    "__version__",
    "build_scenario",
    "native_version",
    "query",
    "simulate",
    "simulate_many",
]

try:
    __version__ = _dist_version("collateral")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = _native.version()

#: Version of the native core: the model version that results depend on.
native_version: str = _native.version()


def simulate(scenario: Scenario | None = None, **kwargs: Any) -> Result:
    """Runs one trial and returns its :class:`Result`.

    Give a :class:`Scenario`, or keyword arguments with human units as taken by
    :func:`collateral.spec.build_scenario` (``link="adsl1"``, ``queue="27p"``,
    ``rtt="100ms"``, ``cbr="both"``, ...), not both. Raises :class:`SpecError` (a
    ``ValueError``) naming the bad parameter.
    """
    if scenario is not None and kwargs:
        raise TypeError("simulate() takes a Scenario or keyword arguments, not both")
    if scenario is None:
        _check_keywords("simulate", kwargs)
        scenario = build_scenario(**kwargs)
    _check_scenario("scenario", scenario)
    return Result(_native.simulate(scenario.to_native_json()), scenario)


#: The most threads :func:`simulate_many` starts.
MAX_THREADS = 1024


def simulate_many(scenarios: Any, threads: int = 0) -> list[Result]:
    """Runs many trials on ``threads`` OS threads (0 = all cores) without the GIL and
    returns their :class:`Result` in input order (deterministic on any number of
    threads). Raises TypeError or ValueError naming the bad argument before anything
    runs."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads: expected a whole number, got {threads!r}")
    if not 0 <= threads <= MAX_THREADS:
        raise ValueError(f"threads: {threads} is not in 0 ... {MAX_THREADS} (0 = all cores)")
    if isinstance(scenarios, Scenario | str | bytes) or not hasattr(scenarios, "__iter__"):
        raise TypeError(f"scenarios: expected a list of Scenario, got {type(scenarios).__name__}")
    scenarios = list(scenarios)
    for i, sc in enumerate(scenarios):
        _check_scenario(f"scenarios[{i}]", sc)
    raws = _native.simulate_many([sc.to_native_json() for sc in scenarios], threads)
    return [Result(raw, sc) for raw, sc in zip(raws, scenarios, strict=True)]


def _check_keywords(func: str, kwargs: dict[str, Any]) -> None:
    """An unknown keyword is named, with the closest known one."""
    import difflib

    known = list(inspect.signature(build_scenario).parameters)
    for k in kwargs:
        if k not in known:
            close = difflib.get_close_matches(k, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            raise TypeError(f"{func}(): unknown parameter {k!r}{hint}")


def _signature_with_build_params(func: Any) -> None:
    """Shows ``build_scenario``'s keywords (names, types, defaults) in ``func``'s
    signature, for help() and completion: one list of parameters, not two."""
    own = inspect.signature(func)
    params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    params += [
        p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(build_scenario).parameters.values()
    ]
    func.__signature__ = own.replace(parameters=params)


_signature_with_build_params(simulate)


def _check_scenario(name: str, scenario: object) -> None:
    if not isinstance(scenario, Scenario):
        hint = (
            f"; for a link preset write simulate(link={scenario!r})"
            if isinstance(scenario, str)
            else ""
        )
        raise TypeError(
            f"{name}: expected a Scenario (or keyword arguments as build_scenario takes),"
            f" got {type(scenario).__name__}{hint}"
        )


def query(directory: str | os.PathLike[str], sql: str, output: str = "pandas") -> Any:
    """Runs SQL over a results directory (views ``summary``, ``cwnd``, ``queue``, ``cbr``,
    ``drops``, ``congestion``) and returns a pandas or polars DataFrame or an Arrow table
    (``output="pandas" | "polars" | "arrow"``). See :mod:`collateral.store`."""
    from .store import open_store

    return open_store(directory).query(sql, output)  # type: ignore[arg-type]
