"""The ``[experiment]`` table: name, trials per point, root seed, seeds, traces kept."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from ..spec import VOCABULARY, TraceSpec

#: Trace tables an experiment may keep (``congestion`` is always recorded by the core).
TRACE_NAMES: tuple[str, ...] = tuple(VOCABULARY["trace"])
SWITCHED_TRACES = tuple(TraceSpec.model_fields)  # the core's trace switches
#: Trace tables only ``collateral import`` fills (a measured run's probes and intervals,
#: as the schema's rows say): a simulated or emulated trial would keep them empty.
IMPORTED_TRACES = ("rtt", "throughput")


def _not_imported(name: str) -> str:
    if name in IMPORTED_TRACES:
        raise ValueError(
            "a trace of imported measurements only (collateral import fills it);"
            " a simulated or emulated trial keeps none"
        )
    return name


class ExperimentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Names the results directory (results/NAME): letters, digits, _ . -, not starting
    #: with a dot, so it never leaves the results directory.
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str = ""
    #: Repetitions per point.
    trials: int = Field(default=1, ge=1, le=1_000_000)
    #: Root seed.
    seed: int = Field(default=1, ge=0, lt=2**63)
    #: "independent": seeds differ per point; "common": the same seeds at every point.
    seeds: Literal["independent", "common"] = "independent"
    traces: list[Annotated[Literal[TRACE_NAMES], AfterValidator(_not_imported)]] = []

    @field_validator("name")
    @classmethod
    def _confined(cls, v: str | None) -> str | None:
        if v is not None and (not NAME.fullmatch(v) or v.startswith(".")):
            raise ValueError(
                "letters, digits, '_', '.' and '-' only, not starting with '.': it names"
                " the results directory (results/NAME) and must stay inside it"
            )
        return v


NAME = re.compile(r"[A-Za-z0-9_.-]+")
