"""The testbed's errors: what the user can act on (:class:`EmulationError`) and a
scenario beyond the testbed's limits (:class:`TestbedLimitError`, naming the field)."""

from __future__ import annotations


class EmulationError(RuntimeError):
    """A testbed problem the user can act on (not root, missing tool, unknown CC)."""


class TestbedLimitError(EmulationError, ValueError):
    """A scenario the testbed cannot run: ``path`` is the Scenario key path at fault
    (``("tcp",)``, ``("cbr", 0, "interval")``, ``("down", "rate")``), ``reason`` what
    is wrong."""

    __test__ = False  # not a pytest test class

    def __init__(self, path: tuple[str | int, ...], reason: str) -> None:
        # Imported here: the reaper (:mod:`.reaper`) needs EmulationError, not pydantic.
        from ..spec.errors import fmt_key_path

        super().__init__(f"{fmt_key_path(path)}: {reason}")
        self.path = path
        self.reason = reason
