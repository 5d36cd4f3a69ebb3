"""today-queues' video call (issue 31): a GCC call downstream beside one CUBIC download,
the G.711 call and the game, under drop-tail 1 BDP, FQ-CoDel, CAKE and DualPI2 (trials
tagged ``video``): its table of medians, its figure, and claims bounded by the link's
physics (:mod:`.physics`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ..claims import Claim
from ..drawing import save_with_caption
from ..rtp import MEDIA_HEADERS, MEDIA_PAYLOAD
from . import physics as P
from .table import LINKS, VARIANTS, is_video, trials_text, variant_order, write_tables

if TYPE_CHECKING:
    import pandas as pd

    from ...store import Store

#: The call's top rate per link (the experiment file's media tables) and frame rate.
TOP_BPS = {"ADSL1": 1e6, "cable": 2.5e6}
FPS = 30
#: A frame later than this after capture misses its playout (MediaSpec's default).
PLAYOUT_S = 0.150
#: FQ-CoDel's and CAKE's target delay (Linux defaults).
CODEL_TARGET_S = 0.005

#: The table's columns: (column, header, scale, format).
VIDEO_COLS = (
    ("media0_received_bps", "call rate (Mbit/s)", 1e-6, "{:.3f}"),
    ("media0_frame_delay_p95_s", "frame p95 (ms)", 1e3, "{:.1f}"),
    ("media0_frames_late", "frames late (%)", 100, "{:.1f}"),
    ("media0_loss_rate", "call loss (%)", 100, "{:.2f}"),
    ("media0_rate_share", "call share", 1, "{:.3f}"),
    ("down_goodput_bps", "download (Mbit/s)", 1e-6, "{:.3f}"),
)


def video_table(store: Store) -> pd.DataFrame:
    """Median over trials per link and queue of the video points (empty without)."""
    import pandas as pd

    from .table import summary

    raw = summary(store)
    raw = raw[is_video(raw)]
    cols = [c for c, *_ in VIDEO_COLS]
    if raw.empty:
        return pd.DataFrame(columns=[*cols, "trials"])
    df = pd.DataFrame({"link": raw.tag_link, "queue": raw.tag_queue})
    for c in cols:
        df[c] = pd.to_numeric(raw[c], errors="coerce")
    g = df.groupby(["link", "queue"])
    t = g[cols].median()
    t["trials"] = g.size()
    order = {q: i for i, q in enumerate(variant_order(df.queue.unique()))}
    keys = sorted(t.index, key=lambda k: (LINKS.index(k[0]) if k[0] in LINKS else 9, order[k[1]]))
    return t.loc[keys]


def frame_wire_s(link: str, share: float = 1.0) -> float:
    """A frame at the call's top rate (its mean size) on the downstream wire, packets
    with their headers and the link's framing, at ``share`` of the line rate."""
    lk = P.LINKS[link]
    payload = TOP_BPS[link] / FPS / 8
    n = math.ceil(payload / MEDIA_PAYLOAD)
    wire = n * lk.wire_bytes(payload / n + MEDIA_HEADERS)
    return wire * 8 / (lk.down_bps * share)


def _v(t: pd.DataFrame, link: str, q: str, col: str) -> float:
    return float(t.loc[(link, q), col]) if (link, q) in t.index else math.nan


def _ms(s: float) -> str:
    return "–" if math.isnan(s) else f"{s * 1e3:.1f} ms"


def video_claims(store: Store) -> list[Claim]:
    t = video_table(store)
    out: list[Claim] = []
    for link in LINKS:
        lk = P.LINKS[link]
        one_way = lk.rtt_s / 2
        dt = _v(t, link, "drop-tail", "media0_frame_delay_p95_s")
        if not math.isnan(dt):
            bound = one_way + P.drain_s(link, "down") + 1e-3
            out.append(
                Claim(
                    f"(v) {link}: drop-tail 1 BDP bounds the video frame delay",
                    f"frame p95 ≤ {_ms(bound)}",
                    _ms(dt),
                    dt <= bound,
                    "≤ one way + the full buffer's drain + 1 ms",
                    f"A frame's packets enter the queue together at capture; the last one"
                    f" leaves at most the full buffer ({lk.limit_down} full-size packets,"
                    f" {_ms(P.drain_s(link, 'down'))} on the wire) later, its own packets"
                    f" included, then crosses the {_ms(one_way)} one-way path; 1 ms for the"
                    " access links' serialisation.",
                )
            )
        for q in ("fq_codel", "cake"):
            v = _v(t, link, q, "media0_frame_delay_p95_s")
            if math.isnan(v):
                continue
            half = frame_wire_s(link, 0.5)
            bound = one_way + CODEL_TARGET_S + 2 * half
            out.append(
                Claim(
                    f"(v) {link}: {q} serves the video frame at its fair share",
                    f"frame p95 ≤ {_ms(bound)}",
                    _ms(v),
                    v <= bound,
                    "≤ one way + CoDel's 5 ms + twice a mean frame at half the rate",
                    "Flow queuing serves the call's queue at least half the line rate beside"
                    f" the one backlogged download: a mean frame ({TOP_BPS[link] / 1e6:g}"
                    f" Mbit/s at {FPS} fps, RTP packets, framing included) takes"
                    f" {_ms(half)} at half the rate; twice that covers RFC 8593's frame-size"
                    " noise (Laplacian, scale 0.15) and the sparse call and game served"
                    " first; the call's own queue stays near CoDel's 5 ms target.",
                )
            )
        fq = [_v(t, link, q, "media0_frame_delay_p95_s") for q in ("fq_codel", "cake")]
        if link == "cable" and not math.isnan(dt) and not any(math.isnan(x) for x in fq):
            floor = 0.3 * lk.limit_down * P.mtu_s(link)  # CUBIC's β 0.7 on 2 BDP in flight
            out.append(
                Claim(
                    f"(v) {link}: flow queuing takes the download's queue off the frames",
                    "FQ-CoDel and CAKE frame p95 below drop-tail's",
                    f"FQ-CoDel {_ms(fq[0])}, CAKE {_ms(fq[1])}; drop-tail {_ms(dt)}",
                    max(fq) < dt,
                    "both below drop-tail's",
                    "After its first loss CUBIC (β 0.7) keeps at least 0.7 × 2 BDP in flight"
                    f" over a 1-BDP buffer: a standing queue of ≥ 0.4 BDP ({_ms(floor)})"
                    " that every frame waits behind under drop-tail; flow queuing leaves a"
                    f" frame its own bytes at half the rate ({_ms(frame_wire_s(link, 0.5))})"
                    " and CoDel's 5 ms.",
                )
            )
            for q in ("fq_codel", "cake"):
                got = _v(t, link, q, "media0_received_bps")
                out.append(
                    Claim(
                        f"(v) {link}: {q} lets the call keep its top rate",
                        f"≥ 95 % of {TOP_BPS[link] / 1e6:g} Mbit/s",
                        f"{got / 1e6:.3f} Mbit/s",
                        got >= 0.95 * TOP_BPS[link],
                        "received ≥ 95 % of the encoder's top rate",
                        f"The call asks {TOP_BPS[link] / 1e6:g} Mbit/s, far below its fair"
                        f" share ({lk.down_bps / 2e6:g} Mbit/s beside one download): flow"
                        " queuing gives it what it asks and GCC sees no queue of its own"
                        " grow. (The received rate counts RTP/UDP/IP headers too.)",
                    )
                )
    return out


def video_figure(store: Store, stem: Path, label: str) -> list[Path]:
    """Rows the links, columns the call's rate, its p95 frame delay and its frames late,
    one marker per queue; and the table of medians."""
    from ...plot.style import STYLE, plt, suptitle

    t = video_table(store)
    if t.empty:
        return []
    n = int(t.trials.min())
    links = [lk for lk in LINKS if lk in t.index.get_level_values("link")]
    panels = (
        ("media0_received_bps", 1e-6, "call rate received (Mbit/s)"),
        ("media0_frame_delay_p95_s", 1e3, "frame delay p95, capture to arrival (ms)"),
        ("media0_frames_late", 100, "frames late or incomplete (%)"),
    )
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            len(links), 3, figsize=(13, 2.6 * len(links) + 1.4), layout="constrained",
            squeeze=False, sharey="row",
        )  # fmt: skip
        for i, link in enumerate(links):
            sub = t.xs(link, level="link")
            queues = list(sub.index)
            ys = range(len(queues))
            for j, (col, scale, xlabel) in enumerate(panels):
                ax = axes[i, j]
                vals = sub[col].to_numpy(float) * scale
                colors = [VARIANTS.get(q, ("k", q))[0] for q in queues]
                ax.scatter(vals, ys, c=colors, s=36, zorder=3)
                ax.set_yticks(ys, [VARIANTS.get(q, ("k", q))[1].replace("\n", " ") for q in queues])
                ax.set_ylim(len(queues) - 0.5, -0.5)
                ax.grid(axis="x", color="0.9", lw=0.6)
                ax.set_xlim(0, max(float(max(vals, default=0)) * 1.15, 1e-9))
                ax.set_xlabel(xlabel)
                ax.set_title(link, fontsize=10, fontweight="bold")
            axes[i, 0].axvline(TOP_BPS[link] / 1e6, color="k", lw=0.9, ls=":")
            axes[i, 0].set_xlim(0, TOP_BPS[link] / 1e6 * 1.25)
            axes[i, 1].axvline(PLAYOUT_S * 1e3, color="C3", lw=0.9, ls="--")
            top = float(sub["media0_frame_delay_p95_s"].max()) * 1e3
            axes[i, 1].set_xlim(0, max(top, PLAYOUT_S * 1e3) * 1.1)
        suptitle(
            fig,
            f"{label}\nGCC video call downstream beside one CUBIC download, the G.711 call"
            f" and a game; medians of {trials_text(n)}",
        )
        caption = (
            "The GCC video call (draft-ietf-rmcat-gcc-02, RFC 8593's synthetic encoder at"
            " 30 fps, started at its top rate: 1 Mbit/s on ADSL1, 2.5 Mbit/s on 100/20"
            " Mbit/s cable, dotted) downstream beside one CUBIC download, the G.711 call and"
            " a Quake 3 game, under each queue (rows): the rate it received (RTP, UDP and IP"
            " headers included), its 95th-percentile frame delay from capture to the"
            " frame's last packet (dashed: the 150 ms playout deadline) and the share of"
            " frames later than that or never complete. Under DualPI2 with L4S downloads the"
            " call stays in the classic queue: GCC does not react to ECN marks."
            f" Medians of {trials_text(n)}."
        )
        files = save_with_caption(fig, stem, caption)
    head = (
        "Today's access queues, the video call: medians over trials of the GCC call beside"
        " one CUBIC download (received rate with headers, p95 frame delay from capture,"
        " frames later than 150 ms or incomplete, its loss and share of the downstream) and"
        " the download's goodput."
    )
    return [*files, *write_tables(t, stem, VIDEO_COLS, head)]
