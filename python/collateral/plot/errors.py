"""The error of a bad input to a store figure (StorePlotError), named by its CLI option."""

from __future__ import annotations


class StorePlotError(ValueError):
    """A bad input: ``option`` is what the CLI calls it (``--x``, ``--y``, ``DIR``...)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option
        self.message = message
