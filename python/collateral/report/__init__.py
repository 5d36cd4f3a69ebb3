"""A self-contained HTML report of results directories (``collateral report``).

One file that opens offline: no fetches, figures and long tables embedded. At the top
the run's metadata and a summary of every published claim (paper, ours, tolerance,
verdict); then a section per results directory: its description, each figure with a
caption saying what it shows and the claims it checks, a table of key numbers in human
units (medians over trials, sortable, long ones collapsed) and the experiment file. A
store that no reproduction drew gets a figure of its own. Where emulation results
exist for an experiment that was also simulated, a "simulation vs emulation" section
sets them side by side.

Where each part lives: :mod:`.render` (the page from the Jinja2 templates in
``collateral/templates/``, :func:`write_report`), :mod:`.sections` (a results
directory's section), :mod:`.figures` and :mod:`.embed` (its figures, how they are
embedded), :mod:`.key_numbers`, :mod:`.parameters` and :mod:`.tables` (its table of key
numbers), :mod:`.comparison` (simulation vs emulation), :mod:`.provenance` (versions,
machine); numbers are shown by :mod:`collateral.display`.
"""

from __future__ import annotations

from ..display import Unit, fmt_fixed
from .comparison import sim_vs_emu
from .embed import PX_PER_INCH, Embedded, embed_figure, minify_svg
from .figures import FigureView
from .key_numbers import Measure, key_numbers
from .render import ReportError, render, write_report
from .sections import Section
from .tables import LONG_TABLE, PREVIEW_ROWS, Cell, Table

__all__ = [
    "LONG_TABLE",
    "PREVIEW_ROWS",
    "PX_PER_INCH",
    "Cell",
    "Embedded",
    "FigureView",
    "Measure",
    "ReportError",
    "Section",
    "Table",
    "Unit",
    "embed_figure",
    "fmt_fixed",
    "key_numbers",
    "minify_svg",
    "render",
    "sim_vs_emu",
    "write_report",
]
