"""The line's framing from its goodput over the modem's sync rate (``infer --sync-rate``).

A saturated line carries full-size packets back to back, so its TCP goodput is the sync
rate times the payload of a packet over the bytes that packet takes on the line (less
the probes' own share): 1448 / 1500 over bare IP, 1448 / (1500 + overhead) with a
per-packet overhead, and over ATM (ADSL) 1448 / 1696 — 1500 bytes, the encapsulation
and the 8-byte AAL5 trailer padded to 32 cells of 48 payload bytes, each cell 53 bytes
on the line. The goodput alone cannot tell a slower line from ATM; beside the sync rate
(which the router shows) it can: about 0.85 of it over ATM, 0.93 to 0.97 otherwise.

Each candidate framing (ATM or not, overhead 0 to :data:`MAX_OVERHEAD` bytes) predicts
a goodput from the sync rate, computed with the core's own wire arithmetic
(:meth:`.Framing.wire`, the link's and the router's). A measured goodput is at most
that, and falls a little short where the flows leave the line idle now and then: a
framing fits when its prediction lies between the goodput's interval's low end (less
:data:`OVERREAD_PACKETS`, what a count may read above the line) and its high end over
:data:`UTILISATION`. ATM or not is then plain (over ATM the goodput is
below 0.86 of the sync rate, otherwise above 0.88); the overhead is a range — over ATM
every overhead that fills the same cells fits, and a few percent of shortfall is a
cell's worth; over bare framing a byte of overhead is 0.07 % of goodput.
"""

from __future__ import annotations

from dataclasses import dataclass

from .estimate import (
    FULL_PACKET,
    FULL_PAYLOAD,
    Estimate,
    Framing,
    Inference,
    goodput,
    infer,
    load_gap,
    settled_s,
)
from .observations import DIRECTIONS, Observations

#: The largest per-packet overhead considered: above the common encapsulations (PPPoE
#: over LLC/SNAP on ATM, 40 bytes with the AAL5 trailer; Ethernet with a VLAN tag,
#: preamble and gap, 42) with room to spare, and below the 196 bytes that would make a
#: bare line's goodput look like ATM's.
MAX_OVERHEAD = 64
#: Over ATM the overhead holds at least the 8-byte AAL5 trailer (RFC 2684 encapsulations).
ATM_TRAILER = 8
#: The least share of its line a settled download of several CUBIC flows is taken to
#: fill: the shipped cable run filled 0.9999 down and 1.0000 up; an ADSL1 run through
#: the testbed (60 kB FIFO, 4 flows) 0.97 down and 0.96 up at its interval's high end.
UTILISATION = 0.95
#: How many full packets a settled load's count may read above what the line carried:
#: its ends are off by what a receiver holds behind a loss. In the blind runs
#: (`benchmarks/infer_blind.py`, 14 settings) the goodput read up to 9-11 packets above
#: the line on ADSL1's upstream (2.2-2.5 % of ~450 packets) and 13 on 10 and 20 Mbit/s
#: uploads (0.1-0.2 % of 7 000-13 000).
OVERREAD_PACKETS = 20


@dataclass(frozen=True)
class Fit:
    """One direction's candidates that fit its goodput, and the nearest one."""

    direction: str
    fits: tuple[Framing, ...]
    best: Framing
    #: The measured goodput (its interval's high end) over the best's prediction.
    share: float
    #: The best's predicted goodput (bit/s): not positive when the probes alone take
    #: the whole sync rate.
    predicted: float = float("inf")


def candidates() -> list[Framing]:
    bare = [Framing(o, False) for o in range(MAX_OVERHEAD + 1)]
    return bare + [Framing(o, True) for o in range(ATM_TRAILER, MAX_OVERHEAD + 1)]


def predicted_goodput(f: Framing, sync_bps: float, probe_bytes: int, gap_s: float) -> float:
    """The TCP goodput (bit/s) a line of ``sync_bps`` with framing ``f`` leaves for
    full-size packets once the probes (``probe_bytes`` every ``gap_s``) took theirs."""
    probes = f.wire(probe_bytes) * 8 / gap_s if probe_bytes and gap_s > 0 else 0.0
    return (sync_bps - probes) * FULL_PAYLOAD / f.wire(FULL_PACKET)


def fit(
    direction: str,
    goodput: tuple[float, float, float],
    sync_bps: float,
    probe_bytes: int,
    gap_s: float,
    packets: float = float("inf"),
) -> Fit:
    """The framings whose predicted goodput explains ``goodput`` = (value, low, high):
    at least its low end less :data:`OVERREAD_PACKETS` of the ``packets`` the settled
    load delivered, at most its high end over :data:`UTILISATION`; the best is the
    fitting one nearest the high end (the line most nearly full)."""
    _, low, high = goodput
    pred = {f: predicted_goodput(f, sync_bps, probe_bytes, gap_s) for f in candidates()}
    # (a relative 1e-9 either side: float rounding of the probes' gap, not of the goodput)
    least = low * (1 - OVERREAD_PACKETS / packets - 1e-9)
    fits = tuple(f for f, g in pred.items() if least <= g <= high / UTILISATION * (1 + 1e-9))
    best = min(fits or pred, key=lambda f: abs(pred[f] - high))
    return Fit(direction, fits, best, high / pred[best], pred[best])


def infer_framing(fits: list[Fit]) -> tuple[list[Estimate], Framing | None, str | None]:
    """(the estimates of ATM and overhead, the framing to use, why not) from each
    direction's fit: the framings that fit every direction (one line, one framing)."""
    for f in fits:
        if f.predicted <= 0:  # the probes alone need more than the sync rate gives
            return (
                [],
                None,
                f"link framing: the {f.direction} sync rate leaves nothing for the load once"
                " the probes took theirs: is it the line's sync rate (e.g. 1.5Mbit/256kbit)?",
            )
        if not f.fits:
            return (
                [],
                None,
                (
                    f"link framing: the {f.direction} goodput is {f.share:.1%} of what the"
                    f" nearest framing ({_kind(f.best)}) leaves of the sync rate, and no framing"
                    f" (ATM or not, overhead 0-{MAX_OVERHEAD} B) explains it: is the sync rate"
                    " the line's, and the line the bottleneck?"
                ),
            )
    common = set(fits[0].fits).intersection(*(f.fits for f in fits[1:]))
    kinds = {x.atm for x in common}
    if len(kinds) != 1:
        said = "; ".join(f"{f.direction}: {_kind(f.best)}" for f in fits)
        why = "no framing fits both" if not kinds else "ATM and not both fit"
        return [], None, f"link framing: {why} ({said})"
    atm = kinds.pop()
    same = sorted(x.overhead for x in common)
    low, high = same[0], same[-1]
    # A shaper that overestimates the overhead loses a little rate; one that
    # underestimates lets the modem's own queue build. Over ATM: the usual overhead
    # (PPPoA VC-MUX) where it fits.
    from ..spec.flat import ATM_DEFAULT_OVERHEAD

    value = min(max(max(f.best.overhead for f in fits), low), high)
    if atm and low <= ATM_DEFAULT_OVERHEAD <= high:
        value = ATM_DEFAULT_OVERHEAD
    full = sorted({Framing(o, atm).wire(FULL_PACKET) for o in same})
    on_line = " or ".join(f"{w // 53} cells" if atm else f"{w} B" for w in (full[0], full[-1]))
    shares = ", ".join(f"{f.direction} {f.share:.3f}" for f in fits)
    how = (
        f"a full packet takes {on_line if len(full) > 1 else on_line.split(' or ')[0]} on"
        f" the line; goodput over the nearest framing's prediction: {shares}"
    )
    est = [
        Estimate("framing_atm", "atm" if atm else "none", how=how),
        Estimate(
            "framing_overhead",
            float(value),
            "B",
            float(low),
            float(high),
            "the overheads whose predicted goodput explains every direction's"
            + (" (the usual PPPoA VC-MUX where it fits)" if atm else " (the nearest, or more)"),
        ),
    ]
    return est, Framing(value, atm), None


def _kind(f: Framing) -> str:
    return f"ATM, {f.overhead} B" if f.atm else f"{f.overhead} B, no ATM"


def infer_with_sync(obs: Observations, sync_bps: dict[str, float]) -> Inference:
    """:func:`.infer` with the framing inferred from the goodput over the sync rate of
    each direction in ``sync_bps`` (bit/s; one or both)."""
    fits, why = [], None
    for d in DIRECTIONS:
        if d not in sync_bps:
            continue
        g = goodput(obs, d)
        if not isinstance(g.value, float):
            why = f"link framing: no {d} goodput to set beside the sync rate ({g.why})"
            break
        packets = g.value * settled_s(obs, d) / (FULL_PAYLOAD * 8)
        gap = load_gap(obs, d)
        fits.append(fit(d, (g.value, g.low, g.high), sync_bps[d], obs.probe_bytes, gap, packets))
    est, framing = [], None
    if why is None:
        est, framing, why = infer_framing(fits)
    inf = infer(obs, framing, why)
    inf.estimates += est
    return inf
