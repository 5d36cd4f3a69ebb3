"""A package's names imported on first use (PEP 562's module ``__getattr__``), so that
importing the package (the CLI's start) costs only what a command uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name of ``homes`` from its
    module there (``{"Scenario": "scenario"}``), kept in the package, so it is looked up
    once; ``dir()`` lists them (``__all__``) before they are. A name must not be a
    submodule's (importing the submodule would set it to the module)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{home}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        module = sys.modules[package]
        return sorted({*vars(module), *getattr(module, "__all__", ())})

    return __getattr__, __dir__
