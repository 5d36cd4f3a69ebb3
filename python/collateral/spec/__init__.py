"""Scenario specification: pydantic models with human units, validated before Rust runs.

Fields hold integers in the simulator's units (bit/s, ns, bytes) but accept and dump
human strings (``"1.5Mbit"``, ``"100ms"``, ``"20kB"``, ``"27p"``), so a dumped scenario
reads well and validates back to the same thing. :meth:`Scenario.to_native` produces the
JSON the Rust core takes; the core validates it again, so its API is safe on its own.

:func:`build_scenario` is the flat form shared by the CLI and :func:`collateral.simulate`
(``down=``, ``queue=``, ``cbr="both"``, ...); its parameters are declared once, in
:mod:`collateral.spec.fields`, and its errors name the parameter at fault.

The rooms (the core's names and limits are :mod:`collateral.vocabulary`, which plots
and the CLI read without this package's pydantic): ``types`` (fields with units),
``link`` (rate, queue, AQM, framing), ``tcp`` (bulk flows), ``traffic`` (CBR,
applications, web users), ``scenario`` (one trial), ``fields`` (the flat parameters),
``flat`` (:func:`build_scenario`), ``errors`` (:class:`SpecError`, key paths).
The models' modules are imported on first use (``from collateral.spec import
Scenario``), so that the vocabulary and the flat parameters (the CLI's options and its
``--help``) come without pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from ..vocabulary import (
    APP_PROFILES,
    AQM_KINDS,
    AQM_SHORTHANDS,
    CBR_CHOICES,
    CBR_ECN_CODEPOINTS,
    CC_ALGORITHMS,
    CORE_LIMITS,
    CUBIC_VARIANTS,
    DIRECTIONS,
    HTCP_FLAVORS,
    LINK_PRESETS,
    LINK_RATES,
    MAX_CBR_FLOWS,
    MAX_INITIAL_CWND,
    MAX_PACKET_BYTES,
    MAX_PHASES,
    MAX_TCP_FLOWS,
    MAX_WEB_SLOTS,
    PROFILE_SETTINGS,
    PROFILES,
    RECOVERY_STYLES,
    RULES,
    TCP_ECN_MODES,
    VOCABULARY,
    WORKLOADS,
)
from .fields import FIELDS, Field

if TYPE_CHECKING:
    from .errors import PathError, SpecError, error_at, flat_param, fmt_key_path, from_core
    from .flat import aqm_queue, bind, build_scenario, demo_scenario, parse_aqm_shorthand
    from .link import AQM_HUMAN_UNITS, AqmSpec, FramingSpec, LinkSpec, QueueSpec
    from .media import MediaSpec
    from .scenario import PhaseSpec, Scenario, TraceSpec
    from .tcp import CubicSpec, HtcpSpec, TcpSpec
    from .traffic import HTTP_MODEL, CbrSpec, WebSpec
    from .workload import WorkloadSpec

__all__ = [
    "APP_PROFILES",
    "AQM_HUMAN_UNITS",
    "AQM_KINDS",
    "AQM_SHORTHANDS",
    "CBR_CHOICES",
    "CBR_ECN_CODEPOINTS",
    "CC_ALGORITHMS",
    "CORE_LIMITS",
    "CUBIC_VARIANTS",
    "DIRECTIONS",
    "FIELDS",
    "HTCP_FLAVORS",
    "HTTP_MODEL",
    "LINK_PRESETS",
    "LINK_RATES",
    "MAX_CBR_FLOWS",
    "MAX_INITIAL_CWND",
    "MAX_PACKET_BYTES",
    "MAX_PHASES",
    "MAX_TCP_FLOWS",
    "MAX_WEB_SLOTS",
    "PROFILES",
    "PROFILE_SETTINGS",
    "RECOVERY_STYLES",
    "RULES",
    "TCP_ECN_MODES",
    "VOCABULARY",
    "WORKLOADS",
    "AqmSpec",
    "CbrSpec",
    "CubicSpec",
    "Field",
    "FramingSpec",
    "HtcpSpec",
    "LinkSpec",
    "MediaSpec",
    "PathError",
    "PhaseSpec",
    "QueueSpec",
    "Scenario",
    "SpecError",
    "TcpSpec",
    "TraceSpec",
    "WebSpec",
    "WorkloadSpec",
    "aqm_queue",
    "bind",
    "build_scenario",
    "demo_scenario",
    "error_at",
    "flat_param",
    "fmt_key_path",
    "from_core",
    "parse_aqm_shorthand",
]

#: Where each name built on pydantic lives: imported on first use, so that what needs
#: only the vocabulary and the flat parameters (the CLI's options, its ``--help``)
#: imports no pydantic.
_HOMES = {
    **dict.fromkeys(
        ["PathError", "SpecError", "error_at", "flat_param", "fmt_key_path", "from_core"],
        "errors",
    ),
    **dict.fromkeys(
        ["aqm_queue", "bind", "build_scenario", "demo_scenario", "parse_aqm_shorthand"], "flat"
    ),
    **dict.fromkeys(["AQM_HUMAN_UNITS", "AqmSpec", "FramingSpec", "LinkSpec", "QueueSpec"], "link"),
    "MediaSpec": "media",
    **dict.fromkeys(["PhaseSpec", "Scenario", "TraceSpec"], "scenario"),
    **dict.fromkeys(["CubicSpec", "HtcpSpec", "TcpSpec"], "tcp"),
    **dict.fromkeys(["HTTP_MODEL", "CbrSpec", "WebSpec"], "traffic"),
    "WorkloadSpec": "workload",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
