"""Video calls beside the bulk flows: each an adaptive real-time media stream whose sender
runs a congestion controller (GCC, draft-ietf-rmcat-gcc-02; NADA, RFC 8698; SCReAM,
RFC 8298) on the receiver's RFC 8888 feedback. The model itself lives in the core
(``collateral-model``'s ``media``); this is its specification. A scenario's ``media`` is
one call (a table) or a list of them (``media = [{controller = "gcc"}, {controller =
"nada", start = "10s"}]``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..vocabulary import MEDIA_CONTROLLERS
from .types import CbrEcn, Direction, Duration, Model, Rate


class MediaSpec(Model):
    """A video call (RFC 8593's synthetic encoder, RFC 8867's rate range by default)."""

    #: The way the video goes; its feedback takes the other.
    direction: Direction = "down"
    controller: Literal[MEDIA_CONTROLLERS] = "gcc"  # type: ignore[valid-type]
    start: Duration = 0
    start_rate: Rate = 150_000
    min_rate: Rate = 150_000
    max_rate: Rate = 1_500_000
    fps: float = Field(default=30.0, ge=1.0, le=240.0)
    #: The encoder's reaction lag to a new target (RFC 8593's tau_v).
    reaction_lag: Duration = 200_000_000
    #: Key frames after the first (0: none).
    key_interval: Duration = 0
    #: How often the receiver sends RFC 8888 feedback.
    feedback_interval: Duration = 50_000_000
    #: A frame later than this after its capture misses its playout.
    playout: Duration = 150_000_000
    tag: int = Field(default=0, ge=0, le=63)
    ecn: CbrEcn = "not_ect"

    @field_validator("min_rate", "max_rate", "start_rate", "playout", "feedback_interval")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be positive")
        return v

    @model_validator(mode="after")
    def _range(self) -> MediaSpec:
        if self.min_rate > self.max_rate:
            raise ValueError(f"min_rate {self.min_rate} is above max_rate {self.max_rate}")
        if not self.min_rate <= self.start_rate <= self.max_rate:  # not clamped in silence
            raise ValueError(
                f"start_rate {self.start_rate} is outside min_rate {self.min_rate} to"
                f" max_rate {self.max_rate}"
            )
        return self

    def to_native(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "controller": self.controller,
            "start_ns": self.start,
            "start_rate_bps": self.start_rate,
            "min_rate_bps": self.min_rate,
            "max_rate_bps": self.max_rate,
            "fps": self.fps,
            "reaction_lag_ns": self.reaction_lag,
            "key_interval_ns": self.key_interval,
            "feedback_interval_ns": self.feedback_interval,
            "playout_ns": self.playout,
            "tag": self.tag,
            "ecn": self.ecn,
        }


#: The most calls a scenario may hold (the core's ``media::calls::MAX_CALLS``).
MAX_CALLS = 64

#: Several calls: at least one, at most :data:`MAX_CALLS`.
Calls = Annotated[list[MediaSpec], Field(min_length=1, max_length=MAX_CALLS)]

#: The union's tags (errors.py leaves them out of a field's path).
CALL_TAGS = ("one_call", "call_list")


def _one_or_many(v: Any) -> str:
    return CALL_TAGS[1] if isinstance(v, list | tuple) else CALL_TAGS[0]


#: A scenario's ``media``: one call (a table) or a list of calls.
OneOrMoreCalls = Annotated[
    Annotated[MediaSpec, Tag(CALL_TAGS[0])] | Annotated[Calls, Tag(CALL_TAGS[1])],
    Discriminator(_one_or_many),
]


def calls_of(media: MediaSpec | list[MediaSpec] | None) -> list[MediaSpec]:
    """A scenario's ``media`` as a list of calls (none, one or several)."""
    if media is None:
        return []
    return media if isinstance(media, list) else [media]


def calls_native(media: MediaSpec | list[MediaSpec] | None) -> dict[str, Any]:
    """The core's ``media`` entry: absent without a call, an object for one call given as
    a table (as before lists existed, so its scenario's JSON is unchanged), else a list."""
    if media is None:
        return {}
    if isinstance(media, list):
        return {"media": [m.to_native() for m in media]}
    return {"media": media.to_native()}
