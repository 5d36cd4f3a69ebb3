"""A package's names imported on first use (PEP 562's module ``__getattr__``), so that
importing the package (the CLI's start) costs only what a command uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], first: str | None = None
) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: each name of ``homes`` from its module there
    (``{"Scenario": "scenario"}``), after importing the module ``first`` when given; the
    value is kept in the package, so it is looked up once."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if first is not None:
            importlib.import_module(f".{first}", package)
        value = getattr(importlib.import_module(f".{home}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
