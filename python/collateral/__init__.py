"""collateral: how bulk TCP and gateway queues hurt real-time traffic on broadband links.

>>> import collateral
>>> r = collateral.simulate(link="adsl1", queue="20kB", duration="20s", warmup="5s")
>>> r.tcp[0]["goodput_bps"] > 0
True

The Rust core (``collateral._native``) runs one trial per call without the GIL; this
package owns the user-facing API: specs with human units, results, plots, the CLI.
Its names are imported on first use, so ``import collateral`` (and the CLI's start)
costs nothing that a command does not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .lazy import lazy_names

if TYPE_CHECKING:
    from .api import query, simulate, simulate_many
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

#: Where each public name lives.
_HOMES = {
    "Result": "result",
    "Scenario": "spec",
    "SpecError": "spec",
    "build_scenario": "spec",
    "query": "api",
    "simulate": "api",
    "simulate_many": "api",
    "MAX_THREADS": "api",
}
_lazy, __dir__ = lazy_names(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return _lazy(name)
    if name == "native_version":
        #: Version of the native core: the model version that results depend on.
        from ._native import version

        value = version()
    elif name == "__version__":
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            value = dist_version("collateral")
        except PackageNotFoundError:  # running from a source tree without installing
            from ._native import version

            value = version()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value
