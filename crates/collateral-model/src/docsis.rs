//! A DOCSIS upstream as a rate clock: the cable modem (CM) may send only in the grants
//! the CMTS hands out, MAP interval by MAP interval, for bytes the modem has requested.
//!
//! The model follows the description of CableLabs' `docsis-ns3` (`doc/source/
//! model-overview.rst`, after DOCSIS 3.1 MULPI I19–I25) and its ns-2 ancestor; it is our
//! own abstraction of them:
//! - Upstream time is cut into MAP intervals of `map_interval_ns` (1–2 ms typical; 2 ms
//!   here). The CMTS fills each interval's grants from the requests it holds when it
//!   builds the MAP, a fixed time before the interval starts: a request sent at `r` can
//!   be granted in the first interval starting at or after `r + request_grant_ns` (the
//!   request's transit and decoding, the CMTS's MAP building, the MAP's transit and the
//!   CM's MAP processing: docsis-ns3's `MinReqGntDelay`, from its `CmMapProcTime` ≈
//!   757 µs, `CmtsMapProcTime` 200 µs and the pipeline frames; 1.5 ms here).
//! - A CM with nothing requested or granted sends a contention request at a uniformly
//!   random point of the next MAP interval (docsis-ns3: requests never collide); a CM
//!   that holds grants piggybacks its new backlog on its data (here: with the first byte
//!   of the packet during whose dequeue the backlog was seen, or on the grant just used).
//!   The clock learns the backlog when a packet reaches the head of the queue, so a
//!   contention request carries what was queued then; what arrives while it waits is
//!   piggybacked on the first grant (a real modem's request carries the queue at the
//!   moment it is sent: a burst right behind an idle modem's first packet waits one
//!   request–grant cycle more here).
//! - A grant is at most `max_grant_bytes` and at most the interval's free capacity: the
//!   other modems' load is docsis-ns3's congestion model, a free share of the channel
//!   redrawn uniformly each MAP interval, `free_mean · (1 ± free_variation)`. The grant
//!   is one contiguous block at a uniformly random position that ends within the
//!   interval (docsis-ns3's `SchedulerRandomVariable`).
//! - DOCSIS 3.1's continuous concatenation and fragmentation: the queued packets are one
//!   string of bytes cut at grant boundaries; a packet ends when its last byte is sent.
//!   Bytes granted when nothing waits are wasted.
//!
//! The randomness comes from the direction's own stream (`rng::DOCSIS_STREAMS`): the
//! same scenario and seed give the same grants in both clocks.

use std::collections::VecDeque;

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::units::Nanos;

/// A DOCSIS upstream's request–grant parameters; the link's `rate_bps` is the channel
/// rate at which granted bytes are sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DocsisConfig {
    /// The MAP interval (docsis-ns3 and MULPI: 1–2 ms; 2 ms).
    pub map_interval_ns: Nanos,
    /// Least time from a request leaving the modem to the start of an interval that
    /// may grant it (1.5 ms).
    pub request_grant_ns: Nanos,
    /// The largest grant in one MAP interval; 0: a whole interval at the channel rate.
    pub max_grant_bytes: u64,
    /// The channel's mean share left free by the other modems, in (0, 1] (1: alone).
    pub free_mean: f64,
    /// How far each interval's free share varies around the mean, as a fraction of it,
    /// in [0, 1): uniform in `free_mean · [1 − v, 1 + v]`, at most the whole channel.
    pub free_variation: f64,
}

impl Default for DocsisConfig {
    fn default() -> Self {
        DocsisConfig {
            map_interval_ns: 2_000_000,
            request_grant_ns: 1_500_000,
            max_grant_bytes: 0,
            free_mean: 1.0,
            free_variation: 0.0,
        }
    }
}

impl DocsisConfig {
    /// Checks the parameters against the channel rate: every interval must be able to
    /// grant at least one byte, so a request is always served in finite time.
    pub fn validate(&self, rate_bps: u64) -> Result<(), String> {
        if !(100_000..=100_000_000).contains(&self.map_interval_ns) {
            return Err(format!(
                "map_interval_ns: {} ns is outside 0.1 ms to 100 ms",
                self.map_interval_ns
            ));
        }
        if self.request_grant_ns > 1_000_000_000 {
            return Err(format!(
                "request_grant_ns: {} ns is above 1 s",
                self.request_grant_ns
            ));
        }
        if !(self.free_mean > 0.0 && self.free_mean <= 1.0) {
            return Err(format!(
                "free_mean: {} is not a share above 0 and at most 1",
                self.free_mean
            ));
        }
        if !(0.0..1.0).contains(&self.free_variation) {
            return Err(format!(
                "free_variation: {} is not a fraction from 0 to below 1",
                self.free_variation
            ));
        }
        let least = map_bytes(self.map_interval_ns, rate_bps) as f64
            * self.free_mean
            * (1.0 - self.free_variation);
        if least < 1.0 {
            return Err(format!(
                "free_mean: an interval of {} ns at {rate_bps} bit/s leaves less than one \
                 byte free; raise the rate, the interval or the free share",
                self.map_interval_ns
            ));
        }
        Ok(())
    }
}

/// Bytes a whole MAP interval carries at the channel rate.
fn map_bytes(map_ns: Nanos, bps: u64) -> u64 {
    (map_ns as u128 * bps as u128 / 8_000_000_000) as u64
}

/// One grant: `bytes` sent from `start` at the channel rate; `used` of them passed.
#[derive(Debug, Clone, Copy)]
struct Grant {
    start: Nanos,
    bytes: u64,
    used: u64,
}

/// A DOCSIS upstream being used.
#[derive(Debug, Clone)]
pub struct DocsisClock {
    cfg: DocsisConfig,
    bps: u64,
    /// A whole interval's bytes and the cap on one grant.
    map_bytes: u64,
    cap: u64,
    rng: Pcg64Mcg,
    /// Grants made and not yet passed, in time order.
    grants: VecDeque<Grant>,
    /// Index of the next MAP interval to build.
    next_map: u64,
    /// Requests not yet granted: (when the CMTS may first grant them, bytes left).
    requests: VecDeque<(Nanos, u64)>,
    /// Bytes ever requested, and grant bytes passed (used or wasted): their difference
    /// is what the modem holds requested or granted for its backlog.
    requested: u64,
    spent: u64,
    /// When the last packet's last byte was sent: a packet dequeued then was waiting
    /// while that grant was used, and rides a request on it.
    last_end: Nanos,
}

impl DocsisClock {
    pub fn new(cfg: &DocsisConfig, bps: u64, rng: Pcg64Mcg) -> Self {
        let map_bytes = map_bytes(cfg.map_interval_ns, bps).max(1);
        let cap = match cfg.max_grant_bytes {
            0 => map_bytes,
            c => c.min(map_bytes),
        };
        DocsisClock {
            cfg: *cfg,
            bps: bps.max(1),
            map_bytes,
            cap,
            rng,
            grants: VecDeque::new(),
            next_map: 0,
            requests: VecDeque::new(),
            requested: 0,
            spent: 0,
            last_end: crate::units::NEVER,
        }
    }

    /// Time to send `n` bytes at the channel rate, rounded up.
    #[inline]
    fn ser(&self, n: u64) -> Nanos {
        (n as u128 * 8_000_000_000).div_ceil(self.bps as u128) as Nanos
    }

    /// The first byte of a grant starting at `g` whose sending begins at or after `t`
    /// (byte `j` begins at `g + ser(j)`).
    fn first_byte_at(&self, g: Nanos, t: Nanos) -> u64 {
        if t <= g {
            return 0;
        }
        let j = ((t - g) as u128 * self.bps as u128 / 8_000_000_000) as u64;
        j + (self.ser(j) < t - g) as u64
    }

    /// Builds MAP interval `next_map`: one grant for the requests the CMTS holds by its
    /// start, within the cap and the interval's free capacity.
    fn build_map(&mut self) {
        let m = self.cfg.map_interval_ns;
        let t0 = self.next_map.saturating_mul(m);
        self.next_map += 1;
        let eligible: u64 = self
            .requests
            .iter()
            .take_while(|r| r.0 <= t0)
            .map(|r| r.1)
            .sum();
        if eligible == 0 {
            return;
        }
        let mut free = self.map_bytes;
        if self.cfg.free_variation > 0.0 || self.cfg.free_mean < 1.0 {
            let u: f64 = self.rng.random();
            let share = self.cfg.free_mean * (1.0 + self.cfg.free_variation * (2.0 * u - 1.0));
            free = ((self.map_bytes as f64 * share.min(1.0)) as u64).max(1);
        }
        let bytes = eligible.min(self.cap).min(free);
        let room = m.saturating_sub(self.ser(bytes));
        let offset = (self.rng.random::<f64>() * room as f64) as Nanos;
        self.grants.push_back(Grant {
            start: t0 + offset.min(room),
            bytes,
            used: 0,
        });
        let mut left = bytes;
        while left > 0 {
            let Some(front) = self.requests.front_mut() else {
                break;
            };
            let k = front.1.min(left);
            front.1 -= k;
            left -= k;
            if front.1 == 0 {
                self.requests.pop_front();
            }
        }
    }

    /// Passes every grant byte that begins before `t`: nothing was queued to send then.
    fn waste_before(&mut self, t: Nanos) {
        while let Some(g) = self.grants.front().copied() {
            let first = self.first_byte_at(g.start, t).min(g.bytes);
            let used = g.used.max(first);
            self.spent += used - g.used;
            if used < g.bytes {
                self.grants[0].used = used;
                return;
            }
            self.grants.pop_front();
        }
    }

    /// When a packet of `len` wire bytes, dequeued at `start` with `backlog` wire bytes
    /// waiting behind it, has its last byte sent.
    pub fn end(&mut self, start: Nanos, len: u32, backlog: u64) -> Nanos {
        let m = self.cfg.map_interval_ns;
        // The intervals starting by `start` are built (their grants may reach past it);
        // without requests they grant nothing and are skipped.
        while self.next_map.saturating_mul(m) <= start {
            if self.requests.is_empty() {
                self.next_map = start / m + 1;
                break;
            }
            self.build_map();
        }
        self.waste_before(start);
        let want = len as u64 + backlog;
        let held = self.requested - self.spent;
        // A new request: piggybacked on this packet's first byte when the modem holds
        // grants or requests, or on the grant whose last byte just went (`start`); by
        // contention in the next interval when it holds nothing.
        let mut piggyback = 0;
        if want > held {
            let sent = if held > 0 {
                piggyback = want - held;
                None
            } else if start == self.last_end {
                Some(start)
            } else {
                Some((start / m + 1) * m + (self.rng.random::<f64>() * m as f64) as Nanos)
            };
            if let Some(at) = sent {
                let ready = at.saturating_add(self.cfg.request_grant_ns);
                self.requests.push_back((ready, want - held));
            }
            self.requested += want - held;
        }
        let mut need = len as u64;
        loop {
            let Some(g) = self.grants.front().copied() else {
                if self.requests.is_empty() {
                    return crate::units::NEVER; // unreachable: the request covers `len`
                }
                self.build_map();
                continue;
            };
            if piggyback > 0 {
                let first = g.start + self.ser(g.used);
                let ready = first.saturating_add(self.cfg.request_grant_ns);
                self.requests.push_back((ready, piggyback));
                piggyback = 0;
            }
            let k = need.min(g.bytes - g.used);
            need -= k;
            self.spent += k;
            let used = g.used + k;
            if used == g.bytes {
                self.grants.pop_front();
            } else {
                self.grants[0].used = used;
            }
            if need == 0 {
                self.last_end = g.start + self.ser(used);
                return self.last_end;
            }
        }
    }

    /// A lower bound on the end of `len` bytes dequeued at `at`: never faster than the
    /// channel rate.
    #[inline]
    pub fn earliest_end(&self, at: Nanos, len: u32) -> Nanos {
        at + self.ser(len as u64)
    }

    /// A lower bound on the end of `len` bytes queued behind a packet ending at `end`.
    #[inline]
    pub fn after(&self, end: Nanos, len: u32) -> Nanos {
        end + self.ser(len as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const MS: Nanos = 1_000_000;
    const US: Nanos = 1_000;

    fn clock(cfg: DocsisConfig, bps: u64, seed: u64) -> DocsisClock {
        DocsisClock::new(&cfg, bps, Pcg64Mcg::seed_from_u64(seed))
    }

    /// A lone 200-byte packet on an idle 20 Mbit/s upstream, MAP interval M = 2 ms,
    /// request–grant delay D = 1.5 ms; its sending takes s = 200 · 8 / 20 Mbit/s = 80 µs.
    /// It arrives at t in the interval starting at B (B ≤ t < B + M). Its contention
    /// request goes at r = B + M + U·M, U uniform in [0, 1): r + D ∈ [B + 3.5, B + 5.5)
    /// ms. The first interval starting at or after r + D starts at kM = B + 4 ms (when
    /// U·M ≤ 0.5 ms, probability 1/4) or B + 6 ms, and the grant lies within
    /// [kM, kM + M]: the end is in [B + 4 ms + s, B + 8 ms], so the access delay
    /// A = end − t obeys M + s < A ≤ 4M: 2.08 ms < A ≤ 8 ms.
    /// Its mean: E[kM − B] = ¼ · 4 + ¾ · 6 = 5.5 ms, E[t − B] = M/2 = 1 ms, the grant's
    /// offset (M − s)/2 = 0.96 ms, then s: E[A] = 4.5 + 0.96 + 0.08 = 5.54 ms.
    #[test]
    fn a_lone_packet_waits_within_the_request_grant_bounds() {
        let cfg = DocsisConfig::default();
        let (mut lo, mut hi, mut sum) = (Nanos::MAX, 0, 0u64);
        let n = 20_000u64;
        let mut c = clock(cfg, 20_000_000, 7);
        let mut phase = Pcg64Mcg::seed_from_u64(99);
        for i in 0..n {
            // One packet every 20 ms at a uniformly random phase of the MAP interval:
            // the modem is idle again (its grant is used).
            let t = i * 20 * MS + phase.random_range(0..2 * MS);
            let a = c.end(t, 200, 0) - t;
            assert!(a > 2_080 * US && a <= 8 * MS, "{i}: {a}");
            lo = lo.min(a);
            hi = hi.max(a);
            sum += a;
        }
        let mean = sum as f64 / n as f64 / MS as f64;
        assert!((mean - 5.54).abs() < 0.05, "mean {mean} ms");
        // The bounds are nearly reached.
        assert!(lo < 2_300 * US && hi > 7_800 * US, "{lo} {hi}");
    }

    /// 8 Mbit/s: 1 byte per µs, a 2 ms interval carries 2000 B; grants capped at
    /// 1000 B. A lone 2500-byte packet dequeued at 0 requests at r ∈ [2, 4) ms; the
    /// first interval starting at or after r + 1.5 ms ∈ [3.5, 5.5) ms starts at kM = 4
    /// or 6 ms (k = 2 or 3).
    /// It is granted 1000, 1000 and 500 bytes in intervals k, k+1, k+2 (fragmented
    /// across three grants), and ends 500 µs after the third grant starts, which lies
    /// in [(k+2)M, (k+3)M − 500 µs]: the end is in [8.5 ms, 12 ms].
    #[test]
    fn the_grant_cap_fragments_a_packet_across_intervals() {
        for seed in 0..200 {
            let cfg = DocsisConfig {
                max_grant_bytes: 1000,
                ..DocsisConfig::default()
            };
            let mut c = clock(cfg, 8_000_000, seed);
            // Build what the packet needs by asking for it, then inspect the grants.
            let end = c.end(0, 2500, 0);
            assert!((8_500 * US..=12 * MS).contains(&end), "{seed}: {end}");
            // The last grant (500 B) is still at the front, used up to its end: it
            // started 500 µs before the end, in interval k + 2.
            assert!(c.grants.is_empty());
            let k2 = (end - 500 * US) / (2 * MS);
            assert!(k2 == 4 || k2 == 5, "{seed}: third grant in interval {k2}");
            assert_eq!(c.next_map, k2 + 1);
            assert_eq!((c.requested, c.spent), (2500, 2500));
        }
    }

    /// Two 600-byte packets queued together: the modem requests both (the backlog seen
    /// at the first one's dequeue) and one grant carries them (concatenation), the
    /// second ending exactly 600 µs after the first at 8 Mbit/s. A third packet queued
    /// behind the second, seen at its dequeue, is piggybacked on the second's first byte
    /// (sent at the first's end e1) and granted in the first interval starting at or
    /// after e1 + D (D = 1.5 ms), within the next M = 2 ms: it ends in
    /// [e1 + D + 300 µs, e1 + D + 2M].
    #[test]
    fn queued_packets_share_a_grant_and_later_ones_are_piggybacked() {
        let mut c = clock(DocsisConfig::default(), 8_000_000, 3);
        let e1 = c.end(0, 600, 600);
        let e2 = c.end(e1, 600, 300);
        assert_eq!(e2, e1 + 600 * US);
        // Nothing was left over: the grant was exactly 1200 B.
        assert!(c.grants.is_empty());
        assert_eq!(
            c.requests.iter().collect::<Vec<_>>(),
            [&(e1 + 1_500 * US, 300)]
        );
        let e3 = c.end(e2, 300, 0);
        assert!(e3 >= e1 + 1_800 * US && e3 <= e1 + 5_500 * US, "{e1} {e3}");
    }

    /// A modem that always has 10 kB queued on an 8 Mbit/s channel of which other modems
    /// leave half free on average (free_mean 0.5, varying ±50 % per interval): it is
    /// granted 1000 B per 2 ms interval on average, 4 Mbit/s, and never more than the
    /// interval's 2000 B.
    #[test]
    fn other_modems_leave_the_free_share() {
        let cfg = DocsisConfig {
            free_mean: 0.5,
            free_variation: 0.5,
            ..DocsisConfig::default()
        };
        let mut c = clock(cfg, 8_000_000, 11);
        let mut t = 0;
        let n = 40_000u64;
        for _ in 0..n {
            t = c.end(t, 1000, 10_000);
        }
        // After the first request–grant cycle (≤ 9.5 ms) every interval grants.
        let rate = (n * 1000 * 8) as f64 / (t as f64 / 1e9);
        assert!((rate / 4e6 - 1.0).abs() < 0.02, "{rate}");
        // The same seed, the same grants.
        let mut d = clock(cfg, 8_000_000, 11);
        let mut u = 0;
        for _ in 0..n {
            u = d.end(u, 1000, 10_000);
        }
        assert_eq!(t, u);
    }

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let ok = DocsisConfig::default();
        assert!(ok.validate(20_000_000).is_ok());
        for (cfg, key) in [
            (
                DocsisConfig {
                    map_interval_ns: 0,
                    ..ok
                },
                "map_interval_ns: ",
            ),
            (
                DocsisConfig {
                    free_mean: 0.0,
                    ..ok
                },
                "free_mean: ",
            ),
            (
                DocsisConfig {
                    free_variation: 1.0,
                    ..ok
                },
                "free_variation: ",
            ),
            (
                DocsisConfig {
                    free_mean: f64::NAN,
                    ..ok
                },
                "free_mean: ",
            ),
            (
                DocsisConfig {
                    request_grant_ns: u64::MAX,
                    ..ok
                },
                "request_grant_ns: ",
            ),
        ] {
            let e = cfg.validate(20_000_000).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
        // 1 kbit/s carries 0.25 B in 2 ms: no byte could ever be granted.
        assert!(ok
            .validate(1_000)
            .unwrap_err()
            .contains("less than one byte"));
    }

    /// The bottleneck asks for what waits in wire bytes, the unit of the packet's own
    /// length. Ten 52-byte ACKs reach an idle 8 Mbit/s modem (1 B/µs) at once, w bytes
    /// each on the wire (18 B of framing: 70). The first leaves alone (the modem saw
    /// nothing behind it); as it ends, the second is dequeued with eight behind it and
    /// requests w + 8w on the grant just used: one grant carries the nine, which end
    /// exactly w µs apart. (Counting the queue's IP bytes, 70 + 8 · 52 = 486 B, left
    /// the last ones to a second request, at least D = 1.5 ms later.) A drop-tail queue
    /// counting the packet in transmission must not have it requested twice: the grant
    /// is exactly 9w, so an eleventh ACK reaching the modem as the tenth ends finds no
    /// byte left, requests on the grant just used and ends in [e₁₀ + D + w,
    /// e₁₀ + D + 2M] (without framing the double count left it 52 B to end in at once).
    #[test]
    fn requests_count_the_waiting_packets_wire_bytes() {
        use crate::bottleneck::Bottleneck;
        use crate::scenario::{QueueConfig, Scenario};
        use crate::units::{Direction, NEVER};
        use collateral_queue::{Framing, FullRule, Packet, PacketKind};
        for (overhead, count_in_service) in [(18, false), (18, true), (0, true)] {
            let w = (52 + overhead) as Nanos;
            let mut q = QueueConfig::drop_tail(FullRule::Ps, 100);
            q.count_in_service = count_in_service;
            let mut sc = Scenario::builder()
                .duration(1_000_000_000)
                .rtt(20 * MS)
                .link(8_000_000, 8_000_000, q)
                .build();
            sc.up.docsis = Some(DocsisConfig::default());
            sc.up.framing = Framing {
                overhead_bytes: overhead,
                atm: false,
            };
            let mut b = Bottleneck::new(&sc, Direction::Up, None, false).unwrap();
            let ack = |seq: u64, t: Nanos| {
                let mut p = Packet::new(PacketKind::Ack, 0, 52, seq, t);
                p.arrived = t;
                p
            };
            for k in 0..10 {
                assert!(b.arrive(0, ack(k, 0)));
            }
            let mut ends = Vec::new();
            while b.next_completion() < NEVER {
                let t = b.next_completion();
                b.complete(t);
                ends.push(t);
            }
            let what = format!("overhead {overhead}, in service counted {count_in_service}");
            let gaps: Vec<Nanos> = ends[1..].windows(2).map(|p| p[1] - p[0]).collect();
            assert_eq!(gaps, [w * US; 8], "{what}");
            let e10 = ends[9];
            b.arrive(e10, ack(10, e10));
            let e11 = b.next_completion();
            let bounds = e10 + 1_500 * US + w * US..=e10 + 5_500 * US;
            assert!(bounds.contains(&e11), "{what}: {e10} {e11}");
        }
    }

    /// The simulator's look-ahead bounds never exceed the end.
    #[test]
    fn earliest_end_and_after_are_lower_bounds() {
        let mut c = clock(DocsisConfig::default(), 20_000_000, 5);
        let mut t = 0;
        for (k, len) in [40u32, 1500, 3000, 52, 1504, 200, 9000].iter().enumerate() {
            let start = t + (k as u64 % 3) * 700 * US;
            let lower = c.earliest_end(start, *len);
            let end = c.end(start, *len, (k as u64 % 2) * 3000);
            assert!(lower <= end);
            assert!(c.after(t, *len) <= end.max(c.after(t, *len)));
            t = end;
        }
    }
}
