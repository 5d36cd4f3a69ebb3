"""The MMSys 2011 study's figures and claims: Fig. 1, 3a/3b, 4, 4(b), 5, 6a/6b, 7 and
ADSL2's loss, each drawn from its experiment's stored results with the paper's claims
checked beside it (one module per kind of figure; Fig. 4(b) in ``fig4b``)."""

from __future__ import annotations

from ..claims import Figure
from .delay import fig7_claims, mmsys_fig1, mmsys_fig1_claims, mmsys_fig7
from .goodput import fig3_claims, goodput_vs_slots
from .loss import (
    adsl2_claims,
    adsl2_loss,
    fig4_claims,
    fig5_claims,
    fig6_claims,
    fine_sweep,
    mmsys_fig4,
    mmsys_fig5,
)

__all__ = ["FIGURES"]


_QUICK_SHORT = (("experiment.trials", 2), ("scenario.duration", "40s"), ("scenario.warmup", "10s"))


FIGURES: list[Figure] = [
    Figure(
        "mmsys-fig1",
        "MMSys 2011",
        "cwnd and CBR queueing delay, NewReno vs CUBIC",
        "mmsys-fig1",
        mmsys_fig1,
        mmsys_fig1_claims,
        (("scenario.duration", "40s"), ("scenario.warmup", "15s")),
    ),
    Figure(
        "mmsys-fig3a",
        "MMSys 2011",
        "goodput vs slot queue length, ADSL1",
        "mmsys-fig3",
        goodput_vs_slots("adsl1"),
        fig3_claims("adsl1"),
        (*_QUICK_SHORT, ("sweep.queue.limit", ["7p", "14p", "20p", "40p", "67p"])),
    ),
    Figure(
        "mmsys-fig3b",
        "MMSys 2011",
        "goodput vs slot queue length, ADSL2",
        "mmsys-fig3",
        goodput_vs_slots("adsl2"),
        fig3_claims("adsl2"),
        (*_QUICK_SHORT, ("sweep.queue.limit", ["7p", "14p", "20p", "40p", "67p"])),
    ),
    Figure(
        "mmsys-fig4",
        "MMSys 2011",
        "downstream CBR loss vs queue size for PS, FB-strict, FB-loose",
        "mmsys-fig4",
        mmsys_fig4,
        fig4_claims,
        _QUICK_SHORT,
    ),
    Figure(
        "mmsys-fig5",
        "MMSys 2011",
        "CUBIC fast-convergence lock-in without and with jitter",
        "mmsys-fig5",
        mmsys_fig5,
        fig5_claims,
        (("experiment.trials", 8), ("scenario.duration", "60s"), ("scenario.warmup", "10s")),
    ),
    Figure(
        "mmsys-fig6a",
        "MMSys 2011",
        "CBR loss vs byte queue size (fine sweep), CUBIC",
        "mmsys-fig6",
        fine_sweep("cubic"),
        fig6_claims("cubic"),
        (
            ("experiment.trials", 3),
            ("scenario.duration", "40s"),
            ("scenario.warmup", "10s"),
            ("sweep.queue.limit", {"from": "52500B", "to": "67500B", "step": "1500B"}),
        ),
    ),
    Figure(
        "mmsys-fig6b",
        "MMSys 2011",
        "CBR loss vs byte queue size (fine sweep), NewReno",
        "mmsys-fig6",
        fine_sweep("newreno"),
        fig6_claims("newreno"),
        (
            ("experiment.trials", 3),
            ("scenario.duration", "40s"),
            ("scenario.warmup", "10s"),
            ("sweep.queue.limit", {"from": "52500B", "to": "67500B", "step": "1500B"}),
        ),
    ),
    Figure(
        "mmsys-fig7",
        "MMSys 2011",
        "additional downstream CBR delay vs RTT/2, 40 kB FB-loose",
        "mmsys-fig7",
        mmsys_fig7,
        fig7_claims,
        _QUICK_SHORT,
    ),
    Figure(
        "mmsys-adsl2-loss",
        "MMSys 2011",
        "ADSL2 downstream CBR loss with FB-loose queues",
        "mmsys-adsl2-loss",
        adsl2_loss,
        adsl2_claims,
        _QUICK_SHORT,
    ),
]
