"""The Python API's entry points: :func:`simulate` one trial, :func:`simulate_many` on
all cores, :func:`query` a results directory. ``collateral`` re-exports them."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from . import _native
from .result import Result
from .spec import Scenario, build_scenario
from .spec.fields import BY_NAME, docs, signature, unknown_hint
from .spec.flat import SMALL_LIMIT, small_byte_limits, unusual_aqm_times, unusual_rtt

P = ParamSpec("P")
R = TypeVar("R")


def _suggest_typos(func: Callable[P, R]) -> Callable[P, R]:
    """An unknown keyword is named with the closest known one (Python's own error
    names it without a suggestion); the signature stays ``func``'s for help() and
    completion."""

    @functools.wraps(func)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        known = list(inspect.signature(checked).parameters)
        for k in kwargs:
            if k not in known:
                hint = unknown_hint(k, known)
                raise TypeError(f"{func.__name__}(): unknown parameter {k!r}{hint}")
        return func(*args, **kwargs)

    return checked


@_suggest_typos
def simulate(scenario: Scenario | None = None, **params: Any) -> Result:
    """Runs one trial and returns its :class:`Result`.

    Give a :class:`Scenario`, or the keywords of :func:`collateral.spec.build_scenario`
    with human units (``link="adsl1"``, ``queue="27p"``, ``rtt="100ms"``,
    ``cbr="both"``, ...), not both. Raises :class:`SpecError` (a ``ValueError``) naming
    the bad parameter, and TypeError for an unknown keyword (with the closest one).
    """
    changed = [k for k, v in params.items() if k not in BY_NAME or v != BY_NAME[k].default]
    if scenario is not None and changed:
        raise TypeError(
            f"simulate() takes a Scenario or keyword arguments, not both (got {', '.join(changed)})"
        )
    if scenario is None:
        scenario = build_scenario(**params)
    _check_scenario("scenario", scenario)
    odd_texts = [f"aqm: {odd}" for odd in unusual_aqm_times(params.get("aqm"))]
    if (odd := unusual_rtt(scenario.rtt, params.get("rtt"))) is not None:
        # As the CLI's --rtt warns: valid, but rtt="100" is 100 s, not 100 ms.
        name = f"rtt={params['rtt']!r}" if "rtt" in params else "scenario.rtt"
        odd_texts.insert(0, f"{name}: {odd}")
    for d, n in small_byte_limits(scenario):
        name = f"queue={params['queue']!r}" if "queue" in params else f"scenario.{d}.queue"
        odd_texts.append(f"{name}: {n} B, {SMALL_LIMIT}")
    for text in odd_texts:
        if text not in _WARNED:  # once, whatever filters say
            import warnings

            _WARNED.add(text)
            warnings.warn(text, stacklevel=3)
    return Result(_native.simulate(scenario.to_native_json()), scenario)


_WARNED: set[str] = set()

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


def query(
    directory: str | os.PathLike[str], sql: str, output: str = "pandas", *, sandbox: bool = True
) -> Any:
    """Runs SQL over a results directory (views ``summary``, ``cwnd``, ``queue``, ``cbr``,
    ``drops``, ``congestion``) and returns a pandas or polars DataFrame or an Arrow table
    (``output="pandas" | "polars" | "arrow"``). See :mod:`collateral.store`.

    The query only reads: one ``SELECT`` (``WITH``, ``DESCRIBE``, ``SHOW``,
    ``SUMMARIZE``, ``EXPLAIN``) over the store's own files; anything else (``COPY … TO``,
    ``ATTACH``, ``read_csv('/etc/passwd')``…) raises
    :class:`collateral.store.QueryRefused` before it runs. ``sandbox=False`` opts out."""
    from .store import open_store

    return open_store(directory).query(sql, output, sandbox)  # type: ignore[arg-type]


simulate.__doc__ = f"{simulate.__doc__}\n{docs()}\n"
simulate.__signature__ = signature(  # type: ignore[attr-defined]
    (inspect.Parameter("scenario", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),)
)
