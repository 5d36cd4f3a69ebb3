"""The Rust core, built by maturin from crates/collateral-py (see pyproject.toml).

A scenario crosses once as JSON in integer units (ns, bit/s, bytes); the trial runs
without the GIL. Keep this stub in step with crates/collateral-py/src/lib.rs.
"""

from typing import Any

import numpy as np
import numpy.typing as npt

Traces = dict[str, dict[str, npt.NDArray[np.generic]]]

def simulate(scenario_json: str) -> dict[str, Any]:
    """Runs one trial of the scenario and returns ``{"summary": dict, "traces": Traces}``.

    ``summary``: duration_s, warmup_s, events, wall_s, ``tcp`` (per flow: flow,
    direction, cc, goodput_bps, bytes_delivered, segments_sent, retransmits, timeouts,
    fast_retransmits), ``cbr`` (per flow: flow, direction, sent, received, lost,
    loss_rate, base_owd_s, delay_median_s, delay_p95_s, delay_max_s, owd_mean_s,
    r_factor, mos, over_100ms, over_500ms, over_1000ms), ``queues``
    (``down``/``up``: drops, max_bytes, max_packets), ``web`` (per group: users,
    pages_started/completed, objects_completed, connections, setup_retries, reply_bytes,
    segments_sent, retransmits, timeouts, response_mean/median/p95_s), ``phases`` (per
    phase, direction and class tcp/tagged/other: phase, start_s, end_s, arrivals, drops,
    drop_rate, throughput_bps, latency_mean_s).

    ``traces`` (equal-length arrays per trace; empty when that trace is off):
    ``cwnd`` time_s f64, flow u32, cwnd u32, ssthresh u32 (a row per change);
    ``queue`` time_s f64, direction u8 (0 down, 1 up), bytes u64, packets u32;
    ``cbr`` flow u32, seq u64, sent_s f64, owd_s f64, extra_delay_s f64 (NaN = lost);
    ``drops`` time_s f64, direction u8, flow u32, bytes u32;
    ``congestion`` time_s f64, flow u32, kind u8 (0 fast retransmit, 1 timeout);
    ``classes`` time_s f64 (bin start), direction u8, class u8 (0 tcp, 1 tagged,
    2 other), arrivals u64, drops u64, bytes u64, latency_s f64 (mean, NaN if none).

    The core may add keys (e.g. ``in_flight``); callers must ignore unknown ones.
    Flow ids: bulk TCP flows, then web connection slots, then CBR flows. Raises
    ValueError on a bad scenario.
    """

def simulate_many(scenario_jsons: list[str], threads: int = 0) -> list[dict[str, Any]]:
    """Runs many trials on ``threads`` OS threads (0 = all cores) without the GIL and
    returns, in input order, one ``{"summary": ..., "traces": ...}`` per scenario, as
    :func:`simulate` does. Deterministic on any number of threads. A scenario the core
    refuses raises ValueError naming its index before anything runs; a trial that fails
    while running raises ValueError for the whole batch."""

def version() -> str:
    """Version of the native core."""

def profiles() -> dict[str, dict[str, Any]]:
    """Stack profiles (``rfc``, ``linux-2.6.25``, ``freebsd-7``, ``linux-6``) and the TCP
    settings each gives a flow, under the scenario JSON's field names."""

def congestion_controls() -> list[str]:
    """Names of the congestion-control algorithms the core implements."""

def validate_queue(queue_json: str, rate_bps: int) -> None:
    """Checks an AQM/scheduler queue (``{"kind": "red", ...}``) for a link of ``rate_bps``;
    raises ValueError saying what is wrong."""

def http_model() -> dict[str, Any]:
    """Mah 1997's HTTP model as the scenario JSON spells it: request_bytes, reply_bytes,
    objects_per_page and think_s, each an empirical distribution."""

def validate_dist(dist_json: str) -> None:
    """Checks a distribution (``{"kind": "pareto", "scale": 1000, "shape": 1.2}``);
    raises ValueError saying what is wrong."""

def voip_quality(owd_s: float, loss: float) -> tuple[float, float]:
    """ITU-T G.107 (R, MOS) of a G.711 call with packet-loss concealment, mean one-way
    (mouth-to-ear) delay ``owd_s`` seconds and loss rate ``loss`` (a fraction)."""
