"""The emulation testbed: real Linux TCP through a userspace bottleneck that runs the
simulator's own queue code.

A run builds three network namespaces — ``left`` (the Internet side: hosts A and B),
``router`` and ``right`` (the home: hosts C and D) — joined by veth pairs, with
addresses in the benchmarking range 198.18.0.0/15 and no route out. The router namespace
has no IP addresses and forwards nothing by itself: ``collateral-emu router`` reads every
frame with an AF_PACKET socket, queues it with the same Rust drop-tail code as the
simulator, serialises it at the configured rate, holds it for the propagation delay and
writes it out on the other side. Offloads (TSO/GSO/GRO, checksums) are off so the queue
sees real packet sizes.

Every name carries the prefix ``col<pid>``; all of it is removed on exit, on error and on
SIGINT/SIGTERM; on SIGKILL by the run's reaper, a process that outlives it, and a later
run removes what a run left behind whose reaper was killed too. Results come back in the
simulator's schema (:class:`collateral.Result`), tagged ``"mode": "emulation"``.

Where each part lives: :mod:`.checks` (what the testbed can run), :mod:`.namespaces`
(names, addresses, ``ip netns``), :mod:`.registry` (what each run created, removed after
a killed run), :mod:`.reaper` (the process that removes it when its run dies),
:mod:`.testbed` (one run's namespaces, veths and processes), :mod:`.endpoints` (the
``collateral-emu`` processes), :mod:`.logs` (their logs read back into a Result),
:mod:`.timing` (whether the router kept real time: the one line a trial or a store
gets), :mod:`.run` (:func:`emulate`, :func:`emulate_experiment`), :mod:`.session` (a user's
own command through the link: :func:`shell`).

Its names are imported on first use, so that :mod:`.reaper` starts without the rest
(numpy, pydantic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .checks import (
        KERNEL_CC,
        MAX_TESTBED_CBR_FLOWS,
        MAX_TESTBED_DELAY_NS,
        MAX_TESTBED_DURATION_NS,
        MAX_TESTBED_RATE_BPS,
        MAX_TESTBED_TCP_FLOWS,
        MIN_TESTBED_CBR_INTERVAL_NS,
        SCALABLE_CC,
        available_congestion_controls,
        check_ready,
        check_testbed,
        check_traffic,
        kernel_congestion_controls,
    )
    from .endpoints import START_MARGIN_S, find_emulator, start_endpoints
    from .errors import EmulationError, TestbedLimitError
    from .logs import (
        DROPPED_IN_QUEUE,
        EV_CE,
        EV_DROP,
        EV_LEFT,
        EV_LOST,
        EV_QUEUED,
        LOST_ELSEWHERE,
        ROUTER_LOG_COLUMNS,
        collect,
        read_csv,
    )
    from .namespaces import (
        LEFT_A,
        LEFT_B,
        NS_RE,
        PREFIX,
        RIGHT_C,
        RIGHT_D,
        ecn_namespaces,
        hosts,
        testbed_namespaces,
    )
    from .registry import REGISTRY, TMP_PREFIX, cleanup_leftovers
    from .run import emulate, emulate_experiment
    from .session import shell
    from .testbed import Proc, Testbed
    from .timing import RELEASE_ERROR_TARGET_S, late_keys, store_line, trial_line

__all__ = [
    "DROPPED_IN_QUEUE",
    "EV_CE",
    "EV_DROP",
    "EV_LEFT",
    "EV_LOST",
    "EV_QUEUED",
    "KERNEL_CC",
    "LEFT_A",
    "LEFT_B",
    "LOST_ELSEWHERE",
    "MAX_TESTBED_CBR_FLOWS",
    "MAX_TESTBED_DELAY_NS",
    "MAX_TESTBED_DURATION_NS",
    "MAX_TESTBED_RATE_BPS",
    "MAX_TESTBED_TCP_FLOWS",
    "MIN_TESTBED_CBR_INTERVAL_NS",
    "NS_RE",
    "PREFIX",
    "REGISTRY",
    "RELEASE_ERROR_TARGET_S",
    "RIGHT_C",
    "RIGHT_D",
    "ROUTER_LOG_COLUMNS",
    "SCALABLE_CC",
    "START_MARGIN_S",
    "TMP_PREFIX",
    "EmulationError",
    "Proc",
    "Testbed",
    "TestbedLimitError",
    "available_congestion_controls",
    "check_ready",
    "check_testbed",
    "check_traffic",
    "cleanup_leftovers",
    "collect",
    "ecn_namespaces",
    "emulate",
    "emulate_experiment",
    "find_emulator",
    "hosts",
    "kernel_congestion_controls",
    "late_keys",
    "read_csv",
    "shell",
    "start_endpoints",
    "store_line",
    "testbed_namespaces",
    "trial_line",
]

#: Where each public name lives.
_HOMES = {
    "KERNEL_CC": "checks",
    "MAX_TESTBED_CBR_FLOWS": "checks",
    "MAX_TESTBED_DELAY_NS": "checks",
    "MAX_TESTBED_DURATION_NS": "checks",
    "MAX_TESTBED_RATE_BPS": "checks",
    "MAX_TESTBED_TCP_FLOWS": "checks",
    "MIN_TESTBED_CBR_INTERVAL_NS": "checks",
    "SCALABLE_CC": "checks",
    "available_congestion_controls": "checks",
    "check_ready": "checks",
    "check_testbed": "checks",
    "check_traffic": "checks",
    "kernel_congestion_controls": "checks",
    "START_MARGIN_S": "endpoints",
    "find_emulator": "endpoints",
    "start_endpoints": "endpoints",
    "EmulationError": "errors",
    "TestbedLimitError": "errors",
    "DROPPED_IN_QUEUE": "logs",
    "EV_CE": "logs",
    "EV_LOST": "logs",
    "EV_DROP": "logs",
    "EV_LEFT": "logs",
    "EV_QUEUED": "logs",
    "LOST_ELSEWHERE": "logs",
    "ROUTER_LOG_COLUMNS": "logs",
    "collect": "logs",
    "read_csv": "logs",
    "LEFT_A": "namespaces",
    "LEFT_B": "namespaces",
    "NS_RE": "namespaces",
    "PREFIX": "namespaces",
    "RIGHT_C": "namespaces",
    "RIGHT_D": "namespaces",
    "ecn_namespaces": "namespaces",
    "hosts": "namespaces",
    "testbed_namespaces": "namespaces",
    "REGISTRY": "registry",
    "TMP_PREFIX": "registry",
    "cleanup_leftovers": "registry",
    "emulate": "run",
    "emulate_experiment": "run",
    "shell": "session",
    "Proc": "testbed",
    "Testbed": "testbed",
    "RELEASE_ERROR_TARGET_S": "timing",
    "late_keys": "timing",
    "store_line": "timing",
    "trial_line": "timing",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
