"""Digest of the core's summaries over a fixed, varied set of scenarios (not a test).

An optimisation of the core must not change a single result. Run this before and after
it (with the build of each installed) and compare the printed digests. `--dump F`
writes the summaries themselves; `--compare F` lists the summary fields that differ from
such a dump, scenario by scenario (traces count only in the digest).

    python benchmarks/summary_digest.py --dump before.json      # with the old build
    python benchmarks/summary_digest.py --compare before.json   # with the new one

The set covers both ADSL links and a 100 Mbit/s link, every congestion control, byte
and packet queues with both full rules, the AQMs, ECN, applications, web users, the
video call's controllers, DOCSIS, the satellite link and the traces (on for the first
seed, off for the second). The digest covers the summaries and every trace column; it
leaves out the wall time and the event count (the engine's work, not a result).

Since e2f6579 a trial with every trace off returns no trace tables at all (before, empty
arrays and the congestion trace, which the core keeps for its epoch statistics): the
digest moved from 3c247cbd1510eb3b to 23a9dc97d08be1ba with every summary and every
kept trace the same (the old digest recomputed from the new build, with the quiet
trials' congestion traces taken from a rerun with the cwnd trace on, is 3c247cbd...).

Issue 28 moved it on purpose, from 23a9dc97d08be1ba to fe1f6c8412cf31e7, by three
changes, each checked alone: bulk flows start at seeded offsets up to 1 s by default
(with start_spread = 0 and DualPI2 pinned to ts_fifo the summaries are equal to before);
the cbr trace carries each packet's direction (schema 5: a new column, every other
column equal); and Linux >= 5.19's PRR (the extra segment only when snd_una advanced
and nothing was newly lost), which moved the recoveries that take that branch (adsl1
dctcp/linux-6, 100 Mbit RED, adsl2 quake3 with 50 web users). The rate clock and the
wire-loss models (traces, Gilbert-Elliott) change nothing where they are not asked for.

Issues 29, 30 and 31, landing together, moved it from fe1f6c8412cf31e7 to e7b5a649fe9f3abd with
every other summary field and trace equal (`--compare`): every summary gained the
workload scores (schema 6; empty without a workload) and every traced trial the video
call's `media` trace table (empty without a call), whose column names the digest hashes.
The responsiveness test's columns and the imported measurements' ``rtt`` and
``throughput`` trace tables (schema 7) moved it to 363757070ececae0: `--compare` against
e7b5a649fe9f3abd's dump lists only the five new probe columns (NaN without a workload)
in every scenario; every other field is equal.

Eight scenarios more (the three video controllers beside a CUBIC download under drop-tail
and FQ-CoDel, a DOCSIS upstream with an upload, the LEO satellite link) make 94, digest
72cf7f2312d835a9, with the core that gave 363757070ececae0 on the first 86.

Issue 31's RFC 8868 criteria (several calls, `media::criteria`) moved it to
afe8e00d61dfd42b: `--compare` against 72cf7f2312d835a9's dump lists only the seven new
criteria fields of each of the six video calls' summaries; every other field is equal.

Session 33 moved it to 4ec34bc6bd48cdea on purpose: SCReAM's discards from its RTP queue
became their own `discarded` field (`--compare` against afe8e00d61dfd42b's dump: the new
field in each of the six calls, 0 for GCC and NADA; SCReAM's sent_bps and loss_rate
without the discards); every other field is equal. The same session's trace-link TUN
header and RRUL probe share change scenarios this set does not hold (no trace link, no
workload).

Session 35 moved it to c3e2fc6762dc775f: the media trace's new `flow` column (which call
a row is of). `--compare` against 4ec34bc6bd48cdea's dump: summaries equal.

Session 37 moved it to 3e165d5dceb0a61c: schema 8's two new scores, an imported speed
test's download and upload latencies (`latency_loaded_down_s`, `latency_loaded_up_s`,
NaN in every simulated trial), and the goodput of a direction without TCP flows written
as 0.0 where an empty float sum gave -0.0 (equal as numbers). `--compare` against
c3e2fc6762dc775f's dump lists only the two new fields in each scenario; every other
field is equal (d0c7919a4658855b with the new fields alone).

Session 38 moved it to d14d999c6913106b on purpose: paced senders got Linux's departure
clock (payload at the pacing rate, ten unpaced segments, a late send's credit) and BBR its
burst size from the pacing rate and its ACK-aggregation allowance, which made the model's
queue under BBR the kernel's on the testbed. `--compare` against 3e165d5dceb0a61c's dump
lists fields of the 12 BBR scenarios only; the other 82 are equal. Then Linux 6's SACK
compression (the receiver holds back duplicate ACKs after the first three) moved it to
dc8f58dcbf32163c: every scenario on the linux-6 profile that sees out-of-order data
differs (BBR, DCTCP, the AQM and video sets, web users, DOCSIS, LEO); the others are
equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os

import collateral
from collateral.spec import TraceSpec

TRACES_OFF = TraceSpec.off()


def scenarios() -> list[tuple[str, collateral.Scenario]]:
    out = []
    base = {"duration": "40s", "warmup": "5s"}
    for link in ("adsl1", "adsl2"):
        for cc, profile in (
            ("newreno", "linux-2.6.25"),
            ("cubic", "linux-2.6.25"),
            ("htcp", "freebsd-7"),
            ("newreno", "rfc"),
            ("bbr", "linux-6"),
            ("dctcp", "linux-6"),
        ):
            for queue, rule in (("60kB", "fb-loose"), ("40p", "ps"), ("30kB", "fb-strict")):
                for seed in (1, 2):
                    name = f"{link} {cc}/{profile} {queue} {rule} seed {seed}"
                    sc = collateral.build_scenario(
                        link=link,
                        cc=cc,
                        profile=profile,
                        queue=queue,
                        rule=rule,
                        seed=seed,
                        ecn="l4s" if cc == "dctcp" else "off",
                        **base,
                    )
                    if seed == 2:  # traces off: the hot path without them
                        sc = sc.model_copy(update={"trace": TRACES_OFF})
                    out.append((name, sc))
    for aqm in (
        "codel",
        "fq_codel",
        "pie",
        "dualpi2",
        "cake",
        "red:min_th=5,max_th=15,max_p=0.1,w_q=0.002,limit=1000",
    ):
        for ecn in ("off", "classic"):
            name = f"100Mbit {aqm} ecn {ecn}"
            sc = collateral.build_scenario(
                down="100Mbit",
                up="10Mbit",
                cc="cubic",
                aqm=aqm,  # each at its own default limit (queue= beside it was ignored
                ecn=ecn,  # until session 35, and the digest was taken so)
                tcp_flows=3,
                seed=7,
                **base,
            )
            out.append((name, sc))
    for app in ("quake3", "g711"):
        sc = collateral.build_scenario(link="adsl2", app=app, web_users=50, tcp_flows=2, **base)
        out.append((f"adsl2 {app} web 50", sc))
    # The video call's controllers beside a download, drop-tail and FQ-CoDel (traces on:
    # the media trace too); a DOCSIS upstream and the LEO satellite link.
    for video in ("gcc", "nada", "scream"):
        for aqm in (None, "fq_codel"):
            sc = collateral.build_scenario(
                down="4Mbit", up="2Mbit", rtt="60ms", video=video, video_max_rate="2Mbit",
                cc="cubic", aqm=aqm, **({"queue": "100p"} if aqm is None else {}), **base,
            )  # fmt: skip
            out.append((f"4Mbit video {video} {aqm or 'drop-tail'}", sc))
    sc = collateral.build_scenario(down="50Mbit", up="10Mbit", up_docsis="on", uploads=1, **base)
    out.append(("docsis upstream upload", sc))
    sc = collateral.build_scenario(leo="starlink", cc="cubic", tcp_flows=2, **base)
    out.append(("leo starlink 2 downloads", sc))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dump", help="write the summaries to this JSON file")
    ap.add_argument("--compare", help="list the summary fields that differ from this dump")
    args = ap.parse_args()
    if args.compare and not os.path.isfile(args.compare):
        ap.error(f"--compare: {args.compare!r} is not a file")
    if args.dump and not os.path.isdir(os.path.dirname(os.path.abspath(args.dump))):
        ap.error(f"--dump: the directory of {args.dump!r} does not exist")
    named = scenarios()
    results = collateral.simulate_many([sc for _, sc in named])
    dump = {}
    h = hashlib.sha256()
    for (name, _), r in zip(named, results, strict=True):
        s = dict(r.summary)
        s.pop("events")  # a count of the engine's work, not a result
        text = json.dumps(s, sort_keys=True, default=str)
        dump[name] = s
        h.update(name.encode())
        h.update(text.encode())
        for table, cols in sorted(r.traces.items()):
            for col, arr in sorted(cols.items()):
                h.update(f"{table}.{col}".encode())
                h.update(arr.tobytes())
    print(f"{len(named)} scenarios, summaries and traces digest {h.hexdigest()[:16]}")
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump(dump, f, sort_keys=True, indent=1, default=str)
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        # Both sides through JSON, so that NaN and tuples compare alike.
        now = json.loads(json.dumps(dump, default=str))
        moved = [
            f"{name}: {path}: {a!r} -> {b!r}"
            for name in sorted(set(before) | set(now))
            for path, a, b in _differences(before.get(name), now.get(name), "")
        ]
        print("\n".join(moved) if moved else f"summaries equal to {args.compare}")


def _differences(a: object, b: object, path: str) -> list[tuple[str, object, object]]:
    """The leaves where two JSON values differ, with their paths."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in sorted(set(a) | set(b))
            for d in _differences(a.get(k), b.get(k), f"{path}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{path}[{i}]")
        ]
    same = a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)
    return [] if same else [(path or ".", a, b)]


if __name__ == "__main__":
    main()
