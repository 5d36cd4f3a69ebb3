"""Running on the testbed: one scenario in real time (:func:`emulate`), or an
experiment's trials into a results store (:func:`emulate_experiment`)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from ..result import Result
from ..spec import Scenario
from .checks import check_ready, check_traffic
from .endpoints import START_MARGIN_S, find_emulator, start_endpoints
from .logs import collect
from .namespaces import ecn_namespaces
from .registry import TMP_PREFIX, cleanup_leftovers, new_tmpdir
from .testbed import Testbed, signals_raise


def emulate(scenario: Scenario, workdir: str | Path | None = None, keep: bool = False) -> Result:
    """Runs the scenario on the namespace testbed in real time; returns a Result in the
    simulator's schema. Raises :class:`EmulationError` for problems the user can fix."""
    check_traffic(scenario)
    kernel_cc = check_ready(scenario)  # everything checked before anything is created
    emu = find_emulator()
    cleanup_leftovers()
    own_tmp = workdir is None
    record = None
    if own_tmp and not keep:
        wd, record = new_tmpdir()
    elif own_tmp:
        wd = Path(tempfile.mkdtemp(prefix=TMP_PREFIX))  # kept: not recorded for removal
    else:
        wd = Path(workdir)  # type: ignore[arg-type]
        wd.mkdir(parents=True, exist_ok=True)
    try:
        return _emulate_in(scenario, wd, emu, kernel_cc, record is not None)
    finally:
        if record is not None:
            shutil.rmtree(wd, ignore_errors=True)
            record.unlink(missing_ok=True)


def _emulate_in(
    scenario: Scenario, wd: Path, emu: str, kernel_cc: dict[Any, str], tmp: bool
) -> Result:
    # Router and senders read the scenario the simulator takes, and follow one origin.
    sc_json = wd / "scenario.json"
    sc_json.write_text(scenario.to_native_json())
    tb = Testbed(wd)
    tb.keep_record = tmp
    dur = scenario.duration
    try:
        with signals_raise():
            tb.build(wd if tmp else None)
            for ns in ecn_namespaces(scenario):  # classic ECN (RFC 3168) in the real TCP
                tb.exec(ns, "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
            t0 = time.clock_gettime_ns(time.CLOCK_REALTIME) + int(START_MARGIN_S * 1e9)
            router, receivers, senders = start_endpoints(
                tb, emu, scenario, sc_json, wd, kernel_cc, t0
            )
            # The router and the receivers must be up before the first packet leaves: one
            # that stopped (a bad argument, a socket it could not open) is reported now.
            time.sleep(max(0.0, (t0 - time.clock_gettime_ns(time.CLOCK_REALTIME)) / 1e9 - 0.2))
            for p in (router, *receivers):
                tb.check(p, p.popen.poll())
            ahead = START_MARGIN_S + dur / 1e9
            for p in senders:
                tb.wait(p, ahead + 10)
            for p in receivers:
                tb.wait(p, 5)
            router.popen.terminate()
            tb.wait(router, 5)
    finally:
        tb.teardown()
    return collect(scenario, wd)


def emulate_experiment(
    experiment: Any,
    store_path: str | Path,
    progress: Any = None,
    rerun_late: bool = False,
    notify: Any = None,
) -> tuple[int, int]:
    """Runs an experiment's trials on the testbed, one after the other in real time, into
    a results store with the simulator's schema (plus ``mode = "emulation"``). Trials
    already stored are skipped, so an interrupted run resumes; with ``rerun_late``, the
    stored trials flagged late (the router missed real time) are run again, each one's
    old part moved to ``quarantine/`` as its new result is written. ``progress(n, total,
    trial)`` after each trial; ``notify(line)`` with a line for each trial that is late.
    Returns (run, total)."""
    from .. import _native
    from ..runner import code_version, summary_columns
    from ..store import Store, rows_to_table
    from .timing import late_keys, trial_line

    for p in experiment.points:  # every point runnable here, before anything is created
        check_traffic(p.scenario)
        check_ready(p.scenario)
    st = Store.create(store_path, experiment.name, experiment.text)
    st.lock()
    try:
        st.clean_tmp()  # what a killed run (ours or `run`'s) left half-written
        st.repair()  # damaged parts to quarantine/, their trials run again (as `run` does)
        done = st.done_keys(refresh=True)
        late = set(late_keys(st.summary())) if rerun_late and done else set()
        trials = experiment.trials()
        st.write_points(experiment.point_rows(), experiment.sweep_axes())
        todo = [t for t in trials if t.key not in done or t.key in late]
        cv = code_version()
        for n, t in enumerate(todo, 1):
            r = emulate(t.scenario())
            row = {
                "key": t.key,
                "point": t.point.key,
                "rep": t.rep,
                "seed": t.seed,
                **t.point.columns(),
                **summary_columns(r.summary),
                "scenario": t.point.stored_scenario,
                "model_version": _native.version(),
                "code_version": cv,
            }
            if t.key in late:  # the late result goes, the new one takes its place
                st.set_aside({t.key}, "late: release error beyond the target; run again")
            st.write_part(rows_to_table([row]))
            if notify and r.summary.get("late"):
                notify(f"trial {t.key}: {trial_line(r.summary)}")
            if progress:
                progress(n, len(todo), t)
        st.write_views_sql()
        return len(todo), len(trials)
    finally:
        st.unlock()
