"""The scores of a trial that ran a workload with probes (``--workload rrul``), as a
table: what the core computed (``collateral_model::scores``), shown in the units the
schema declares. Nothing here derives a score; a trial without a workload has none and
gets no table."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from .display import fmt_cell, is_null, stored_unit

if TYPE_CHECKING:
    from rich.table import Table

    from .result import Result

#: The rows: a label and the summary fields it shows, side by side.
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("latency idle / loaded (median RTT)", ("latency_idle_s", "latency_loaded_s")),
    ("loaded latency IQM (Ookla) / increase", ("latency_loaded_iqm_s", "latency_increase_s")),
    ("jitter idle / loaded", ("jitter_idle_s", "jitter_loaded_s")),
    ("probe loss under load", ("probe_loss_rate",)),
    ("RPM trimmed mean / p90 / p99", ("rpm", "rpm_p90", "rpm_p99", "rpm_band")),
    ("RPM foreign / loaded half", ("rpm_foreign", "rpm_loaded")),
    (
        "probes a second foreign / self (draft: <= 100)",
        ("foreign_probes_per_s", "self_probes_per_s"),
    ),
    (
        "probes' share of capacity (draft: <= 5 %) / ok",
        ("probe_capacity_share", "probe_rate_within_limits"),
    ),
    ("bufferbloat grade (DSLReports)", ("bufferbloat_grade",)),
    ("AIM streaming", ("aim_streaming", "aim_streaming_points")),
    ("AIM gaming", ("aim_gaming", "aim_gaming_points")),
    ("AIM real-time communication", ("aim_rtc", "aim_rtc_points")),
    ("QoO VoIP / gaming", ("qoo_voip", "qoo_gaming")),
    ("QoO video conferencing / web", ("qoo_video_conferencing", "qoo_web")),
    ("load saturated at (draft's criterion)", ("load_saturated_s",)),
    (
        "ramp saturated at interval / flows held down, up",
        ("ramp_saturated_interval", "ramp_flows_down", "ramp_flows_up"),
    ),
)


def _value(results: list[Result], field: str) -> str:
    """One trial's value in its unit; of several, the median (numbers) or the values
    seen (words), with the range of numbers after it."""
    values = [r.summary.get(field) for r in results]
    values = [v for v in values if not is_null(v)]
    if not values:
        return "—"
    unit = stored_unit(field)
    if field.endswith("_points"):
        return "(" + "/".join(f"{v:g}" for v in dict.fromkeys(values)) + " points)"
    if isinstance(values[0], str):
        return "/".join(dict.fromkeys(values))

    def fmt(v: float) -> str:
        if unit == "%":
            return f"{100 * v:.2f} %"
        if unit in ("RPM", ""):  # RPM and QoO read as whole numbers; the row names them
            return f"{v:.0f}"
        if unit == "1/s":
            return f"{v:.1f}/s"
        return fmt_cell(v, unit)

    text = fmt(statistics.median(values))
    if len(values) > 1 and min(values) != max(values):
        text += f" [{fmt(min(values))}–{fmt(max(values))}]"
    return text


def scores_table(results: list[Result]) -> Table | None:
    """The scores of one trial or of several of one set-up; None without scores."""
    return compare_scores([("value", results)])


def compare_scores(labelled: list[tuple[str, list[Result]]]) -> Table | None:
    """The scores of each set-up (``--versus``), a column each, named by its label; None
    when no trial has scores."""
    if all(is_null(r.summary.get("rpm")) and is_null(r.summary.get("latency_idle_s"))
           for _, results in labelled for r in results):  # fmt: skip
        return None
    from rich import box
    from rich.table import Table

    t = Table(
        title="responsiveness under load",
        caption="round trips of the workload's probes (idle: before the load; loaded: once"
        " it settled, 5 s in or at saturation if later); RPM: draft-ietf-ippm-responsiveness,"
        " UDP probes as foreign (the responsiveness workload: new TCP and TLS connections),"
        " the load flows' RTT samples as self probes",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    t.add_column("score", no_wrap=True)
    for label, _ in labelled:
        t.add_column(label, justify="right")
    for row, fields in ROWS:
        t.add_row(
            row,
            *(
                " / ".join(_value(results, f) for f in fields).replace(" / (", " (")
                for _, results in labelled
            ),
        )
    return t
