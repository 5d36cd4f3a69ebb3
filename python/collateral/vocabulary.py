"""The names and limits a scenario may use, as the core declares them.

Nothing here copies a list by hand: every tuple comes from ``_native.vocabulary()`` or
``_native.limits()``, so the CLI, TOML files, the Python API and stored results share
the core's one vocabulary (tests/test_vocabulary.py checks that).
"""

from __future__ import annotations

import json
from typing import Any

from . import _native
from .units import fmt_rate

#: Every name a scenario accepts, as the core spells it (``_native.vocabulary()``): the
#: one vocabulary of the CLI, TOML files, this API and stored results. Nothing below
#: copies a list by hand; tests/test_vocabulary.py checks that.
VOCABULARY: dict[str, Any] = _native.vocabulary()

#: Congestion controls the core implements.
CC_ALGORITHMS: tuple[str, ...] = tuple(VOCABULARY["cc"])
#: Stack profiles and the TCP settings each implies, as the core defines them.
PROFILE_SETTINGS: dict[str, dict[str, Any]] = _native.profiles()
PROFILES: tuple[str, ...] = tuple(VOCABULARY["profile"])
#: Drop-tail "full" rules (SPEC §3.1): packet slots, bytes must fit, bytes checked before.
RULES: tuple[str, ...] = tuple(VOCABULARY["rule"])
#: AQMs and schedulers (a queue's ``kind``).
AQM_KINDS: tuple[str, ...] = tuple(VOCABULARY["aqm"])
#: Fast-recovery algorithms (a TCP flow's ``recovery``).
RECOVERY_STYLES: tuple[str, ...] = tuple(VOCABULARY["recovery"])
#: CUBIC's variants and H-TCP's flavours.
CUBIC_VARIANTS: tuple[str, ...] = tuple(VOCABULARY["cubic_variant"])
HTCP_FLAVORS: tuple[str, ...] = tuple(VOCABULARY["htcp_flavor"])
#: A TCP flow's use of ECN: off, classic (RFC 3168, ECT(0)) or l4s (ECT(1), RFC 9331).
TCP_ECN_MODES: tuple[str, ...] = tuple(VOCABULARY["tcp_ecn"])
#: ECN codepoints a UDP source may send.
CBR_ECN_CODEPOINTS: tuple[str, ...] = tuple(VOCABULARY["cbr_ecn"])
#: Thin-stream applications a CBR flow can stand for (its ``app``).
APP_PROFILES: tuple[str, ...] = tuple(VOCABULARY["app"])
#: Built-in workloads (Flent's RRUL tests; see ``collateral.spec.workload``).
WORKLOADS: tuple[str, ...] = tuple(VOCABULARY.get("workload", ()))
#: What a responsiveness test's self probe waits behind (``collateral.spec.workload``).
SEND_BUFFERS: tuple[str, ...] = tuple(VOCABULARY.get("send_buffer", ()))
#: Which way a flow's data goes.
DIRECTIONS: tuple[str, ...] = tuple(VOCABULARY["direction"])
#: Congestion controllers a video call can run (a ``media`` table's ``controller``).
MEDIA_CONTROLLERS: tuple[str, ...] = tuple(VOCABULARY["media_controller"])
#: Named access links: (downstream, upstream) rates in bit/s, as the core defines them.
LINK_RATES: dict[str, tuple[int, int]] = {
    name: (p["down_bps"], p["up_bps"]) for name, p in VOCABULARY["link_presets"].items()
}
#: The same in human units, e.g. ``{"adsl1": ("1.5Mbit", "256kbit"), ...}``.
LINK_PRESETS: dict[str, tuple[str, str]] = {
    name: (fmt_rate(down), fmt_rate(up)) for name, (down, up) in LINK_RATES.items()
}

#: ``leo = "starlink"``: our reading of the Starlink measurements, per direction. The
#: 15 s reconfigurations at :12/:27/:42/:57 are Tanveer et al. (2023) and Mohan et al.
#: (WWW 2024); the rates are ranges around the medians those and Ookla's reports give
#: (about 100 Mbit/s down, 10-15 Mbit/s up), the per-interval extra delay a 0-10 ms
#: spread over the base RTT (give ``rtt``, e.g. 30 ms), and the handover a 20 ms
#: one-way spike for 100 ms with 20 ms of loss (users' summaries of APNIC's measurements
#: report ~40 ms of jitter and ~1 % loss at the boundaries). Our choices, not fitted.
LEO_PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "starlink": {
        d: {
            "rate_min": lo,
            "rate_max": hi,
            "delay_min": "0ms",
            "delay_max": "10ms",
            "spike": "20ms",
            "spike_for": "100ms",
            "loss_for": "20ms",
        }
        for d, lo, hi in (("down", "50Mbit", "200Mbit"), ("up", "5Mbit", "20Mbit"))
    }
}

#: What one trial may ask of the core (``_native.limits()``): flows of each kind, web
#: connection slots, window and initial window; a scenario beyond them is refused when
#: it is built, naming the field and the limit.
CORE_LIMITS: dict[str, int] = _native.limits() if hasattr(_native, "limits") else {}
MAX_TCP_FLOWS: int = CORE_LIMITS.get("max_tcp_flows", 10_000)
MAX_CBR_FLOWS: int = CORE_LIMITS.get("max_cbr_flows", 10_000)
MAX_WEB_SLOTS: int = CORE_LIMITS.get("max_web_slots", 100_000)
MAX_INITIAL_CWND: int = CORE_LIMITS.get("max_initial_cwnd", 1 << 16)
#: The largest IP packet: the 16-bit total length of RFC 791.
MAX_PACKET_BYTES: int = CORE_LIMITS.get("max_packet_bytes", 65_535)
#: Named phases of one scenario.
MAX_PHASES = 1_000


#: ``cbr=`` of :func:`build_scenario`: one direction, both or none.
CBR_CHOICES: tuple[str, ...] = (*DIRECTIONS, "both", "none")


def _defaults_suffice(kind: str) -> bool:
    try:
        _native.validate_queue(json.dumps({"kind": kind}), 1_000_000)
    except ValueError:
        return False
    return True


#: AQM kinds whose parameters all have defaults: ``aqm=`` may name them alone.
AQM_SHORTHANDS: tuple[str, ...] = tuple(k for k in AQM_KINDS if _defaults_suffice(k))


#: Each AQM/scheduler's display name and hard limit, as the core declares them beside
#: each discipline: ``{kind: {"display": "FQ-CoDel", "limit_field": "limit",
#: "limit_unit": "packets"}}`` (None for a discipline with per-class limits).
AQM_INFO: dict[str, dict[str, Any]] = VOCABULARY["aqm_info"]
#: Each congestion control's Linux kernel module (None where the kernel has none).
CC_INFO: dict[str, dict[str, Any]] = VOCABULARY["cc_info"]


def _dscp_names() -> dict[str, int]:
    names = {"DF": 0, "BE": 0, "LE": 1, "EF": 46, "VA": 44}  # RFC 2474, 8622, 3246, 5865
    names |= {f"CS{n}": 8 * n for n in range(8)}  # class selectors, RFC 2474 §4.2.2
    for cls in range(1, 5):  # assured forwarding AFxy = 8x + 2y, RFC 2597
        names |= {f"AF{cls}{drop}": 8 * cls + 2 * drop for drop in range(1, 4)}
    return names


#: DSCP names (RFC 4594's service classes) and their code points.
DSCP: dict[str, int] = _dscp_names()
DSCP_NAMES: tuple[str, ...] = ("EF", "CS1", "LE", "AF41", "CS0 ... CS7", "AF11 ... AF43")
