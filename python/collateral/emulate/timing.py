"""Whether the testbed kept real time. The router measures how late it put each frame on
the wire against the release time the model gave it, and counts its context switches;
the core flags a trial ``late`` when that error's p99 is beyond the accuracy target.
A late trial's delays hold the router's own lateness as well as the queue's, so the
run, ``compare`` and the report say so in one line, from these functions.

Needs only the core (no pandas): a store's summary comes in as a data frame already.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .. import _native

__all__ = ["RELEASE_ERROR_TARGET_S", "late_keys", "store_line", "trial_line"]

#: The accuracy target, as the core declares it and flags by
#: (``collateral_model::measure::RELEASE_ERROR_TARGET_NS``): release error p99, s.
RELEASE_ERROR_TARGET_S: float = _native.limits()["release_error_target_ns"] / 1e9


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2g} ms" if seconds < 0.01 else f"{seconds * 1e3:.1f} ms"


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def trial_line(summary: Mapping[str, Any]) -> str | None:
    """The one line about a testbed trial's timing (None for a simulated trial, or a
    router that reported none)."""
    if not _known(summary.get("late")):
        return None
    p99, mx = summary["release_error_p99_s"], summary["release_error_max_s"]
    pre = int(summary["router_preemptions"])
    target = _ms(RELEASE_ERROR_TARGET_S)
    if int(summary["late"]):
        return (
            f"testbed LATE: the router released frames {_ms(p99)} late at p99 (target"
            f" {target}; max {_ms(mx)}, {pre} preemptions): the delays include the testbed's"
            " own lateness; run it again on a quiet machine"
        )
    return (
        f"testbed on time: release error p99 {_ms(p99)} (target {target}; max {_ms(mx)},"
        f" {pre} preemptions)"
    )


def late_keys(df: Any) -> list[str]:
    """Keys of a store summary's trials flagged late, in key order."""
    if "late" not in df.columns or "key" not in df.columns:
        return []
    return sorted(df.loc[df["late"].fillna(0).astype(int) == 1, "key"].astype(str))


def store_line(df: Any, rerun: str | None = None) -> str | None:
    """One line on a store summary's testbed trials: how many were late, and the worst
    release error p99; None when it holds no testbed trial with the router's timing.
    ``rerun``: the command that reruns the late ones, named when there are any."""
    if "late" not in df.columns:
        return None
    timed = df[df["late"].notna()]
    if not len(timed):
        return None
    n, late = len(timed), len(late_keys(timed))
    worst = float(timed["release_error_p99_s"].max())
    target = _ms(RELEASE_ERROR_TARGET_S)
    if not late:
        return (
            f"testbed on time: all {n} trials within the release error target {target} at"
            f" p99 (worst {_ms(worst)})"
        )
    again = f"; rerun them: {rerun}" if rerun else ""
    return (
        f"testbed LATE: {late} of {n} trials beyond the release error target {target} at"
        f" p99 (worst {_ms(worst)}): their delays include the testbed's own lateness{again}"
    )
