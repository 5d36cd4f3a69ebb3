"""The Rust core, built by maturin from crates/collateral-py (see pyproject.toml).

A scenario crosses once as JSON in integer units (ns, bit/s, bytes); the trial runs
without the GIL. Keep this stub in step with crates/collateral-py/src/lib.rs.
"""

from typing import Any

import numpy as np
import numpy.typing as npt

Traces = dict[str, dict[str, npt.NDArray[np.generic]]]

class ConfigError(ValueError):
    """A configuration the core refuses (scenario, queue, distribution): ``path`` is the
    JSON key path at fault (``("cbr", 0, "interval_ns")``; ``()`` when no key is),
    ``detail`` what is wrong; ``str()`` is ``"cbr[0].interval_ns: detail"``."""

    path: tuple[str | int, ...]
    detail: str

def simulate(scenario_json: str) -> dict[str, Any]:
    """Runs one trial of the scenario and returns ``{"summary": dict, "traces": Traces,
    "wall_s": float}``.

    The summary's fields and the trace tables' columns, with their types, units and
    meanings, are declared once in the core: see :func:`schema` (``collateral schema``
    prints it). NaN (nothing to measure) stays NaN. Flow ids: bulk TCP flows, then web
    connection slots, then CBR flows. ``wall_s`` is the core's wall-clock time (run
    metadata, not part of the summary). Raises ValueError on a bad scenario.
    """

def simulate_many(scenario_jsons: list[str], threads: int = 0) -> list[dict[str, Any]]:
    """Runs many trials on ``threads`` OS threads (0 = all cores) without the GIL and
    returns, in input order, one ``{"summary": ..., "traces": ...}`` per scenario, as
    :func:`simulate` does. Deterministic on any number of threads. A scenario the core
    refuses raises ValueError naming its index before anything runs; a trial that fails
    while running raises ValueError for the whole batch."""

def simulate_batch(scenario_jsons: list[str], traces: list[str] | None = None) -> dict[str, Any]:
    """The sweep runner's call: runs the trials in order on one OS thread without the GIL
    and returns ``{"errors": [str | None per trial], "columns": {name: values per trial
    that ran}, "nulls": {name: mask}, "traces": [Traces per trial that ran], "core_s":
    float}``. The summaries come back as the store's flat columns (see
    :func:`flatten_summary`), in first-seen order and of their declared types: a numeric
    column is a numpy array, with a bool mask in ``nulls`` (True: missing) where a trial
    lacks the value; text and records are lists (None where missing). A scenario that
    does not parse or run is an error in its slot; the others run. ``core_s``: the
    seconds spent without the GIL (parsing, running, building the columns); the rest of
    the call is the hand-back (making the Python objects, waiting for the GIL).
    ``traces``: the trace tables to hand back for each trial (``[]``: none, ``{}`` per
    trial); every table when not given."""

def flatten_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary as the store's flat columns, named by the declared schema
    (``tcp0_goodput_bps``, ``queue_down_drops``...): NaN as None, the trial's parameters
    (``duration_s``, ``warmup_s``) and flow labels left out, ``phases`` as the JSON text
    the store keeps (as Python's ``json.dumps`` writes its records).
    Raises ValueError naming an undeclared field."""

def measure_testbed(
    scenario_json: str,
    tcp_json: str,
    cbr: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint32]]],
    router_json: str | None = None,
    media: dict[str, Any] | None = None,
    web_json: str | None = None,
) -> dict[str, Any]:
    """The testbed's trial result in the simulator's schema, computed by the same code from
    the endpoints' and router's records: ``tcp_json`` a JSON list per bulk flow
    (bytes_delivered, congestion_times, retransmits), ``cbr`` per CBR flow (sent, arrived,
    lens) in trial-time ns (arrived ``2**64-1`` in flight, ``2**64-2`` dropped by the
    router's queue, ``2**64-3`` lost elsewhere), ``router_json`` the router's report,
    ``media`` the video calls' records (``emulate.logs.media_records``), ``web_json`` the
    web users' objects and pages (``{"objects": [...], "pages": [...]}``)."""

def measure_measured(records_json: str, scenario_json: str | None = None) -> dict[str, Any]:
    """An imported measurement (``collateral.measured.records.Measurement.to_native_json``)
    as a trial of mode "measured": ``{"summary", "traces": {"cbr", "rtt", "throughput"}}``.
    ``scenario_json``: the link it stands beside (its warm-up, its base one-way delays).
    Raises ValueError naming the part of the records at fault."""

def schema() -> dict[str, Any]:
    """The declared result schema: ``{"version", "summary": [group], "traces": [table],
    "parameter_fields", "flow_labels"}``, each group and table with its columns (name,
    dtype, unit, null, meaning); the last two name the summary fields the store keeps as
    parameters, not metrics."""

def version() -> str:
    """Version of the native core."""

def build() -> dict[str, Any]:
    """How the module was built: ``checked`` (bool: the tests' build, overflow checks
    and debug assertions on) and ``pgo`` ("use", "generate" or "")."""

def profiles() -> dict[str, dict[str, Any]]:
    """Stack profiles (``rfc``, ``linux-2.6.25``, ``freebsd-7``, ``linux-6``) and the TCP
    settings each gives a flow, under the scenario JSON's field names."""

def congestion_controls() -> list[str]:
    """Names of the congestion-control algorithms the core implements."""

def vocabulary() -> dict[str, Any]:
    """Every name a scenario accepts, as the core spells it (one vocabulary for CLI, TOML,
    Python and stored data): ``{"rule", "aqm", "recovery", "cubic_variant", "htcp_flavor",
    "cc", "profile", "app", "direction", "trace": list[str], "link_presets": {name:
    {"down_bps": int, "up_bps": int}}, "aqm_info": {kind: {"display": str, "limit_field":
    str | None, "limit_unit": "packets" | "bytes" | None}}, "cc_info": {cc: {"kernel":
    str | None}}, "bufferbloat_grades": list[str]}``, lists in the core's order (the grades
    best first); each discipline and controller declares its own display name, limit and
    kernel module beside its code."""

def validate_queue(queue_json: str, rate_bps: int) -> None:
    """Checks an AQM/scheduler queue (``{"kind": "red", ...}``) for a link of ``rate_bps``;
    raises :class:`ConfigError` with the key path relative to the queue."""

def validate_scenario(scenario_json: str) -> None:
    """Checks a scenario without running it: types, ranges and what the trial would hold
    in memory. Raises :class:`ConfigError` naming the JSON key path of the first problem
    (``cbr[0].interval_ns: ...``)."""

def limits() -> dict[str, int]:
    """The core's limits: ``max_time_ns``, ``max_rate_bps``, ``max_packet_bytes``,
    ``max_queue_limit``, ``max_window_bytes``, ``max_initial_cwnd``, ``max_tcp_flows``,
    ``max_cbr_flows``, ``max_web_slots``, ``memory_budget_bytes``; and the testbed's
    accuracy target, ``release_error_target_ns``."""

def http_model() -> dict[str, Any]:
    """Mah 1997's HTTP model as the scenario JSON spells it: request_bytes, reply_bytes,
    objects_per_page and think_s, each an empirical distribution."""

def workload_flows(workload_json: str) -> dict[str, Any]:
    """A built-in workload's parts (``{"kind": "rrul"}``, ``rrul_be``, ``responsiveness``;
    timing fields ``idle_ns``, ``settle_ns``, ``probe_interval_ns``, ``saturation_interval_ns``):
    ``workload`` with its defaults, ``tcp`` (its TCP flows: direction, tag, start_ns) and
    ``cbr`` (the probes as CBR flows, request up then reply down, to come first among the
    scenario's)."""

def validate_dist(dist_json: str) -> None:
    """Checks a distribution (``{"kind": "pareto", "scale": 1000, "shape": 1.2}``);
    raises ValueError saying what is wrong."""

def delivery_trace(text: str) -> tuple[list[int], int]:
    """A packet-delivery trace in Mahimahi's format (one millisecond per line): its
    delivery times and mean rate in bit/s; ValueError names the line at fault."""

def wire_bytes(ip_bytes: int, overhead_bytes: int, atm: bool) -> int:
    """Bytes on a bottleneck's wire for an IP packet of ``ip_bytes`` with the link's
    framing (``overhead_bytes``, then ATM cells); ValueError above 65535 bytes."""

def voip_quality(owd_s: float, loss: float) -> tuple[float, float]:
    """ITU-T G.107 (R, MOS) of a G.711 call with packet-loss concealment, mean one-way
    (mouth-to-ear) delay ``owd_s`` seconds and loss rate ``loss`` (a fraction)."""
