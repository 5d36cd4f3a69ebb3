"""Figures from any results store: a measure against a swept parameter, ``collateral plot``.

    collateral plot results/buffer-sweep --x queue.limit --y voip_p95_ms --hue queue.kind
    collateral plot results/buffer-sweep --list          # swept keys, measures, units

Each point of the figure is one combination of ``x``, ``hue`` and ``facet``: the median
(or mean, ``stat``) over its trials with a 95 % bootstrap interval (percentile method, as
``scipy.stats.bootstrap`` computes it — BCa's acceleration is unstable for the median of a
few trials —, 9 999 resamples, fewer (at least 999) when a figure has more than 200
points, from a fixed seed: the same figure every time) or the trials' minimum and maximum
(``interval="minmax"``). A point whose trials all agree has no interval to draw. Markers
sit at the sampled x only; a line joins neighbouring sampled values and breaks where a
series lacks a value the others have (categorical x: markers only). Numeric x is sorted;
categorical x keeps the sweep's order. Above :data:`.static.DENSE` x values the intervals are
bands. :func:`table` gives the plotted numbers.

Every point is drawn: one whose trials have no value of a numeric x (an AQM without a
drop-tail limit, on a ``queue.limit`` axis) is a dashed level across the axis, its
interval shaded, and the subtitle names it. An amount (no value below 0: goodput, delay,
loss, counts) is drawn on an axis from 0, so a 0.3 % difference does not look like a
collapse; ``zoom=True`` (``--zoom``) fits the axis to the data instead and marks it as
cut (slanted strokes on the spine, "y axis cut" in the subtitle). Axes, legends and
panels name keys in words (``down.queue.limit`` -> "down queue limit") and summary
columns by the schema's field and owner (``tcp0_goodput_bps`` -> "goodput, TCP flow 0"),
in :mod:`collateral.display`'s units.

**Parameters** (``x``, ``hue``, ``facet``, ``where``) are named by their dotted sweep key
as an experiment file writes it (``down.queue.limit``, ``queue.limit`` — the downstream
queue unless only the upstream one varies —, ``tcp.cc`` — every flow's, when they
agree —, ``tags.aqm``), by a store column (``down_queue_limit_bytes``, ``tag_aqm``) or by a
short alias (``limit``, ``cc``, ``aqm``) when it names one swept parameter. Besides the
columns, ``down.queue.kind`` (and ``queue.kind``, ``kind``) is the discipline:
``drop-tail`` or the AQM's kind.

**Queue limits in bytes and packets.** ``down.queue.limit`` is shown in kB when every
point's limit is known in bytes: drop-tail FB limits are bytes, and a packet limit swept
with ``packets_of`` (see :mod:`collateral.experiment`) keeps the byte size it stands for
(``tag_down_queue_limit_bytes``). When all limits count packets it is shown in packets.
A mix without the byte sizes is refused, saying how to sweep it.

**Measures** (``y``): friendly names (:func:`measures`, ``--list``) such as
``voip_p95_ms`` (the 95th percentile of the additional one-way delay of CBR flow 0),
``goodput_mbps`` (all TCP flows together), ``loss_pct``, or any numeric summary column
(``tcp0_goodput_bps`` is shown in Mbit/s: seconds in ms, bit/s in Mbit/s, bytes in kB,
loss rates and shares in %).

A swept parameter that none of ``x``, ``hue``, ``facet`` or ``where`` fixes would pool
different conditions into one point: the figure says so in its title and a warning is
issued.

:func:`plot` writes PNG, SVG or PDF (the file named, by its suffix, through
:func:`collateral.plot.style.save`) or, for ``.html``, an interactive plotly figure with
plotly.js embedded (4.8 MB, works offline; :func:`plotly_figure` gives the figure for a
page that loads plotly.js once), whose hover shows each point's value, interval and
number of trials.

The package, one concept per module: :mod:`.style` (STYLE, save(), titles, legends) and
:mod:`.draw` (axis and line helpers), shared by every figure; :mod:`.trial` (one trial's
figures: cwnd with CBR delay or queue occupancy); :mod:`.compare` (simulation against
emulation); for store figures :mod:`.measure` (the ``y`` catalogue), :mod:`.param`
(parameters and sweep keys), :mod:`.sweep` (a store loaded, names resolved),
:mod:`.aggregate` (table(): points and intervals), :mod:`.labels` (titles and captions),
:mod:`.static` (matplotlib), :mod:`.interactive` (plotly), :mod:`.output` (plot()), with
:mod:`.errors` (StorePlotError); display units are :mod:`collateral.display`'s. The
``collateral plot`` command is :mod:`collateral.cli.plot`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .aggregate import n_resamples, table
from .draw import break_gaps, floor_at_zero, steps_compact
from .errors import StorePlotError
from .interactive import plotly_figure
from .measure import Measure, measures
from .output import plot
from .param import Param, params
from .static import figure
from .sweep import suggest

if TYPE_CHECKING:
    from .compare import compare_stores, fig_compare_stores
    from .style import (
        EXTRA_FORMATS,
        STYLE,
        caption_path,
        check_figure_path,
        legend_outside,
        save,
        suptitle,
    )
    from .trial import fig_cwnd_delay, fig_cwnd_queue, three_epochs

__all__ = [
    "EXTRA_FORMATS",
    "STYLE",
    "Measure",
    "Param",
    "StorePlotError",
    "break_gaps",
    "caption_path",
    "check_figure_path",
    "compare_stores",
    "fig_compare_stores",
    "fig_cwnd_delay",
    "fig_cwnd_queue",
    "figure",
    "floor_at_zero",
    "legend_outside",
    "measures",
    "n_resamples",
    "params",
    "plot",
    "plotly_figure",
    "save",
    "steps_compact",
    "suggest",
    "suptitle",
    "table",
    "three_epochs",
]

#: Names of the modules that import matplotlib when loaded: imported on first use, so
#: that ``import collateral.plot`` (the CLI's start-up) stays quick.
_LAZY = {
    "EXTRA_FORMATS": "style",
    "STYLE": "style",
    "caption_path": "style",
    "check_figure_path": "style",
    "legend_outside": "style",
    "save": "style",
    "suptitle": "style",
    "fig_cwnd_delay": "trial",
    "fig_cwnd_queue": "trial",
    "three_epochs": "trial",
    "compare_stores": "compare",
    "fig_compare_stores": "compare",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY)
