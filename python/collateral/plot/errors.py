"""The error of a bad input to a store figure (StorePlotError), named by its CLI option,
and by its parameter when the Python API was called (:func:`api_names`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class StorePlotError(ValueError):
    """A bad input: ``option`` is what the CLI calls it (``--x``, ``--y``, ``DIR``...)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option
        self.message = message


#: The public functions' parameter for each option an error names.
API_NAMES = {
    "DIR": "store_dir",
    "--x": "x",
    "--y": "y",
    "--hue": "hue",
    "--facet": "facet",
    "--stat": "stat",
    "--interval": "interval",
    "--where": "where",
    "--output": "out",
}


def api_names(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn``'s StorePlotError names the parameter its caller passed (``where: ...``), not
    the command's option (``--where: ...``), which the CLI, calling the parts below,
    keeps."""

    @functools.wraps(fn)
    def named(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except StorePlotError as e:
            raise StorePlotError(API_NAMES.get(e.option, e.option), e.message) from None

    return named
