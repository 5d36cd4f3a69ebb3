"""``plot``: a figure of any measure against any swept parameter of a results directory."""

from __future__ import annotations

from ..storeplot import add_parser, run

__all__ = ["add_parser", "run"]
