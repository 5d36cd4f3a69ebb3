"""Experiment files: a base scenario, sweep axes and repeated seeded trials, in TOML.

An experiment file has four tables (only ``[scenario]`` is required)::

    [experiment]                # how many trials, the root seed, which traces to keep
    name = "fb-rules"           # default: the file's name without .toml
    trials = 5                  # repetitions per point of the sweep
    seed = 1                    # root seed; each trial's seed is derived from it
    traces = []                 # any of cwnd, queue, cbr, drops, congestion, classes

    [scenario]                  # the base scenario: the keys of collateral.spec.Scenario
    link = "adsl1"              # (human units), plus `queue` for both directions at once
    queue = { limit = "20kB", rule = "fb-strict" }
    tcp = [{ cc = "newreno", profile = "linux-2.6.25" }]
    cbr = [{ direction = "down" }, { direction = "up" }]

    [sweep]                     # axes: the cartesian product of these lists ...
    "tcp.cc" = ["newreno", "cubic"]            # no index: every TCP flow
    "queue.limit" = { from = "52500B", to = "67500B", step = "30B" }   # inclusive
    [[sweep.zip]]               # ... times each zip group, whose lists move together
    "down.queue.limit" = ["10kB", "20kB"]
    "up.queue.limit" = ["7p", "14p"]           # slots = ceil(bytes / 1500)

``[[sweep]]`` (an array of tables) makes the experiment the union of several grids, e.g.
one over PS limits in packets and one over FB rules with limits in bytes. ``tags.NAME``
axes attach a label to each point (a ``tag_NAME`` column in the results) without
changing the scenario, e.g. the byte size a slot limit stands for.

**Buffer sizes for disciplines that count packets.** A queue limit axis may be given in
bytes for a discipline whose limit counts packets (FQ-CoDel, CoDel, PIE, RED..., or a
``ps`` drop-tail): ``{ values = [...] | from/to/step, packets_of = "1500B" }`` sets each
point's limit to ``ceil(bytes / 1500)`` packets (at least 1) and keeps the byte size it
stands for as the tag ``KEY_bytes`` (``"down.queue.limit"`` -> ``tag_down_queue_limit_bytes``),
so a drop-tail grid in bytes and an FQ-CoDel grid in packets share one axis::

    [[sweep]]                   # drop-tail: the limit counts bytes
    "down.queue.limit" = ["10kB", "50kB", "200kB"]
    [[sweep]]                   # FQ-CoDel: 7, 34 and 134 packets
    "down.queue" = [{ kind = "fq_codel" }]
    "down.queue.limit" = { values = ["10kB", "50kB", "200kB"], packets_of = "1500B" }

(``collateral plot DIR --x down.queue.limit`` then shows both in kB.) Two sizes that
round to the same number of packets are two points of the same scenario: an error.

Everything is validated before anything runs; a problem is reported as one
:class:`ExperimentError` naming the file, the key path, the value and what is allowed.

**Trial identity.** A point's parameters are its fully resolved scenario in the core's
integer units (:meth:`Scenario.to_native`, without seed and trace switches) as canonical
JSON. A trial's seed is a hash of the root seed, the point's parameters and the
repetition index (or of the root seed and the repetition alone, with
``seeds = "common"``: common random numbers across points). A trial's key is a hash of
the model version, the parameters and the seed, so the same trial has the same key in
any experiment, on any machine, however the sweep is ordered or split.
"""

from __future__ import annotations

from .errors import ExperimentError
from .grammar import is_axis_table
from .identity import model_version
from .load import load_experiment
from .model import Experiment
from .points import Point, Trial, param_columns
from .settings import TRACE_NAMES, ExperimentSettings

__all__ = [
    "TRACE_NAMES",
    "Experiment",
    "ExperimentError",
    "ExperimentSettings",
    "Point",
    "Trial",
    "is_axis_table",
    "load_experiment",
    "model_version",
    "param_columns",
]
