//! CBT: class-based thresholds on one FIFO (Parris, Jeffay & Smith, "Lightweight
//! active router-queue management for multimedia networking", MMCN '99, SPIE 3654).
//!
//! **Confirmed from the sources we could read** (the MMCN '99 abstract, via the UNC
//! abstract page and the copy filed as IPR2021-00909 Ex. 1041; Jeffay's 1999 talk
//! abstract; Parris's dissertation abstract, UNC TR01-034; Chung & Claypool's
//! Dynamic-CBT abstract, NOSSDAV 2000): CBT is an extension of RED that keeps per-class,
//! not per-flow, state; the classes are TCP, tagged (multimedia) UDP and other UDP; the
//! goal is to protect TCP from all UDP while giving tagged UDP bounded throughput and
//! latency; it is evaluated against RED, FRED and a packet scheduler (CBQ). The body of
//! the paper (the exact algorithm, its weights and thresholds, and whether RED also
//! tests UDP packets) was not retrievable.
//!
//! **What we implement (our choices, following SPEC §3.2):**
//! * one drop-tail FIFO, so packets of all classes share the same delay;
//! * per class, an EWMA of the number of that class's packets in the FIFO, sampled at
//!   each arrival *of that class*, with RED's idle decay while the class has no packet
//!   queued (the "queue" a class average measures is the class's own share of the FIFO);
//! * **TCP**: RED between its thresholds on the **TCP class's own average** (not the
//!   whole queue's): TCP is then judged only on the backlog it builds itself, so UDP
//!   arrivals cannot push TCP into early drops — the isolation CBT is after. The other
//!   reading of the design — RED on the whole queue's average, as plain RED does, with
//!   the UDP classes' thresholds on top — is `tcp_average = "queue"`: it keeps the
//!   FIFO (and so every class's latency) shorter, at the price of TCP drops caused by
//!   UDP backlog;
//! * **tagged** and **other** UDP: one threshold each on the class average; an arrival
//!   whose class average (after the update) is over the threshold is dropped. UDP
//!   packets that pass are not subjected to RED;
//! * then the FIFO's hard limit (any [`FullRule`]).
//!
//! Idle capacity is borrowed automatically: the thresholds only cap what each UDP
//! class may hold, the FIFO serves whatever is there, so a class that sends less than
//! its share leaves the rest to the others.
//!
//! **Thresholds from bandwidth shares** ([`CbtShares`], [`Cbt::from_shares`]). In a FIFO
//! every byte waits the same time `D = B/R` (`B` bytes queued, link rate `R`), so by
//! Little's law a class holding `B_c` bytes on average gets throughput `B_c/D = R·B_c/B`.
//! To hold class `c` to rate `r_c` when the average backlog is `B`, its average byte
//! occupancy must be `(r_c/R)·B`, i.e. `th_c = (r_c/R)·B/s_c` packets of size `s_c`.
//! `B` is the backlog at which the shares should hold; a natural choice is TCP's RED
//! operating point, e.g. TCP's `max_th` packets of 1500 B divided by TCP's share
//! `1 − (r_tagged + r_other)/R`.

use serde::{Deserialize, Serialize};

use crate::check;
use crate::class::{Classifier, TrafficClass};
use crate::config::{Described, HardLimit};
use crate::link_defaults;
use crate::red::{pkt_time_ns, Ewma, RedCore, RedCurve, Verdict};
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

fn default_rule() -> FullRule {
    FullRule::Ps
}
fn default_mean_pkt_size() -> u32 {
    1500
}

/// Which average TCP's RED compares with its thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpAverage {
    /// The TCP class's own average occupancy.
    #[default]
    Class,
    /// The whole FIFO's average occupancy (all classes), as plain RED.
    Queue,
}

/// RED for the TCP class, on the TCP class's average (packets).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbtTcp {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    #[serde(default)]
    pub gentle: bool,
}

/// Bandwidth shares from which the tagged and other thresholds are derived.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbtShares {
    pub link_rate_bps: u64,
    pub tagged_bps: u64,
    pub other_bps: u64,
    /// Average total backlog (bytes) at which the shares should hold.
    pub backlog_bytes: u64,
    /// Typical packet sizes of the two UDP classes (IP lengths).
    pub tagged_pkt_len: u32,
    pub other_pkt_len: u32,
}

impl CbtShares {
    /// `(th_tagged, th_other)` in packets: `th_c = (r_c/R)·B/s_c` (see the module doc).
    pub fn thresholds(&self) -> Result<(f64, f64), String> {
        if self.link_rate_bps == 0 || self.tagged_pkt_len == 0 || self.other_pkt_len == 0 {
            return Err("shares: link rate and packet sizes must be positive".into());
        }
        if self.tagged_bps.saturating_add(self.other_bps) >= self.link_rate_bps {
            return Err("shares: tagged + other must leave a share for TCP".into());
        }
        let r = self.link_rate_bps as f64;
        let b = self.backlog_bytes as f64;
        Ok((
            self.tagged_bps as f64 / r * b / self.tagged_pkt_len as f64,
            self.other_bps as f64 / r * b / self.other_pkt_len as f64,
        ))
    }
}

/// CBT parameters:
/// `{"kind": "cbt", "tcp": {"min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.002},
///   "tagged_th": 4, "other_th": 2, "limit": 60}` — or `"shares": {…}` ([`CbtShares`])
/// instead of the two thresholds. `tcp`, `limit` and the thresholds left out are
/// derived from the link ([`crate::link_defaults`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbtConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<CbtTcp>,
    /// Thresholds on the tagged and other class averages, in packets.
    #[serde(default)]
    pub tagged_th: Option<f64>,
    #[serde(default)]
    pub other_th: Option<f64>,
    /// Alternatively, derive both thresholds from bandwidth shares.
    #[serde(default)]
    pub shares: Option<CbtShares>,
    /// EWMA weight of the tagged and other averages (default: `tcp.w_q`).
    #[serde(default)]
    pub w_class: Option<f64>,
    /// Hard limit of the FIFO, in the unit of `limit_rule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    #[serde(default = "default_rule")]
    pub limit_rule: FullRule,
    /// Tag bytes that mark UDP as tagged (default: any non-zero tag).
    #[serde(default)]
    pub tagged_tags: Option<Vec<u8>>,
    /// Flows whose UDP is tagged whatever its tag.
    #[serde(default)]
    pub tagged_flows: Vec<u32>,
    /// With the link rate, the idle-decay unit.
    #[serde(default = "default_mean_pkt_size")]
    pub mean_pkt_size: u32,
    #[serde(default)]
    pub mean_pkt_time_ns: Option<u64>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub count_in_service: bool,
    /// Which average TCP's RED uses (default: the TCP class's own).
    #[serde(default)]
    pub tcp_average: TcpAverage,
}

impl Described for CbtConfig {
    const DISPLAY: &'static str = "CBT";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl CbtConfig {
    /// TCP's RED, as given or derived from the link.
    pub fn tcp_red(&self, link_rate_bps: u64) -> Result<CbtTcp, String> {
        self.tcp.map_or_else(
            || link_defaults::cbt_tcp(link_rate_bps, self.mean_pkt_size),
            Ok,
        )
    }

    /// The FIFO's limit, as given or RED's for TCP's `max_th` (in bytes under a byte rule).
    pub fn limit(&self, link_rate_bps: u64) -> Result<u64, String> {
        let (_, size) = link_defaults::units(self.mean_pkt_size, false, self.limit_rule);
        let max_th = self.tcp_red(link_rate_bps)?.max_th;
        Ok(self
            .limit
            .unwrap_or_else(|| link_defaults::whole(4.0 * max_th * size)))
    }

    /// The tagged and other thresholds: explicit, from the shares, or (neither given)
    /// from the study's shares of this link.
    pub fn thresholds(&self, link_rate_bps: u64) -> Result<(f64, f64), String> {
        match (self.tagged_th, self.other_th, &self.shares) {
            (Some(t), Some(o), None) => Ok((t, o)),
            (None, None, Some(s)) => s.thresholds(),
            (None, None, None) if link_rate_bps > 0 => {
                let max_th = self.tcp_red(link_rate_bps)?.max_th;
                link_defaults::cbt_shares(link_rate_bps, self.mean_pkt_size, max_th).thresholds()
            }
            (None, None, None) => {
                Err("tagged_th: not given, and there is no link rate to derive it from".into())
            }
            _ => Err("tagged_th: give either tagged_th and other_th, or shares".into()),
        }
    }

    pub fn validate(&self, link_rate_bps: u64) -> Result<(), String> {
        crate::class::check_dscps("tagged_tags", self.tagged_tags.as_deref())?;
        check::positive("mean_pkt_size", self.mean_pkt_size.into())?;
        let t = &self.tcp_red(link_rate_bps)?;
        RedCurve {
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: t.max_p,
            gentle: t.gentle,
        }
        .validate()
        .map_err(|e| format!("tcp.{e}"))?;
        check::fraction("tcp.w_q", t.w_q)?;
        check::fraction("w_class", self.w_class.unwrap_or(t.w_q))?;
        let (tt, to) = self.thresholds(link_rate_bps)?;
        check::non_negative("tagged_th", tt)?;
        check::non_negative("other_th", to)?;
        check::limit("limit", self.limit(link_rate_bps)?)?;
        pkt_time_ns(self.mean_pkt_time_ns, self.mean_pkt_size, link_rate_bps).map(|_| ())
    }
}

/// Drop counters by cause and class (indexed by [`TrafficClass::index`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CbtStats {
    /// Tagged/other arrivals over their class threshold.
    pub threshold: [u64; 3],
    /// TCP RED random drops.
    pub early: u64,
    /// TCP RED forced drops (TCP average at or over the forced level).
    pub forced: u64,
    /// Hard-limit drops.
    pub overflow: [u64; 3],
}

/// CBT on one drop-tail FIFO.
#[derive(Debug, Clone)]
pub struct Cbt {
    fifo: DropTail,
    classifier: Classifier,
    est: [Ewma; 3],
    /// The whole FIFO's average, for `TcpAverage::Queue`.
    est_all: Ewma,
    tcp_average: TcpAverage,
    tcp: RedCore,
    /// Thresholds of the tagged and other classes (index 0 unused).
    th: [f64; 3],
    /// Waiting packets per class.
    n: [u32; 3],
    count_in_service: bool,
    in_service: Option<TrafficClass>,
    stats: CbtStats,
}

impl Cbt {
    pub fn new(cfg: &CbtConfig, link_rate_bps: u64) -> Result<Self, String> {
        cfg.validate(link_rate_bps)?;
        let s = pkt_time_ns(cfg.mean_pkt_time_ns, cfg.mean_pkt_size, link_rate_bps)?;
        let (tt, to) = cfg.thresholds(link_rate_bps)?;
        let t = &cfg.tcp_red(link_rate_bps)?;
        let w_class = cfg.w_class.unwrap_or(t.w_q);
        let curve = RedCurve {
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: t.max_p,
            gentle: t.gentle,
        };
        Ok(Cbt {
            fifo: DropTail::new(
                cfg.limit_rule,
                cfg.limit(link_rate_bps)?,
                cfg.count_in_service,
            ),
            classifier: Classifier::new(cfg.tagged_tags.as_deref(), &cfg.tagged_flows),
            est: [
                Ewma::new(t.w_q, s),
                Ewma::new(w_class, s),
                Ewma::new(w_class, s),
            ],
            est_all: Ewma::new(t.w_q, s),
            tcp_average: cfg.tcp_average,
            tcp: RedCore::new(curve, false, cfg.mean_pkt_size, cfg.seed),
            th: [f64::INFINITY, tt, to],
            n: [0; 3],
            count_in_service: cfg.count_in_service,
            in_service: None,
            stats: CbtStats::default(),
        })
    }

    /// CBT with the tagged and other thresholds derived from bandwidth shares
    /// (`th_c = (r_c/R)·B/s_c`, see the module doc); the rest of the configuration
    /// (TCP's RED, limit, classification, …) comes from `base`.
    pub fn from_shares(
        link_rate_bps: u64,
        tagged_bps: u64,
        other_bps: u64,
        backlog_bytes: u64,
        (tagged_pkt_len, other_pkt_len): (u32, u32),
        base: &CbtConfig,
    ) -> Result<Self, String> {
        let cfg = CbtConfig {
            tagged_th: None,
            other_th: None,
            shares: Some(CbtShares {
                link_rate_bps,
                tagged_bps,
                other_bps,
                backlog_bytes,
                tagged_pkt_len,
                other_pkt_len,
            }),
            ..base.clone()
        };
        Cbt::new(&cfg, link_rate_bps)
    }

    /// The class average of `c` as of its last arrival.
    pub fn avg(&self, c: TrafficClass) -> f64 {
        self.est[c.index()].avg()
    }

    /// The threshold of `c` (infinite for TCP, which uses RED).
    pub fn threshold(&self, c: TrafficClass) -> f64 {
        self.th[c.index()]
    }

    /// Packets of class `c` in the FIFO, as the class average counts them.
    pub fn class_packets(&self, c: TrafficClass) -> u32 {
        let on_wire = self.count_in_service && self.in_service == Some(c);
        self.n[c.index()] + on_wire as u32
    }

    pub fn classify(&self, pkt: &Packet) -> TrafficClass {
        self.classifier.classify(pkt)
    }

    pub fn stats(&self) -> CbtStats {
        self.stats
    }

    /// The TCP RED `count`.
    pub fn tcp_count(&self) -> i64 {
        self.tcp.count
    }

    #[inline]
    fn maybe_idle(&mut self, c: TrafficClass, now: Nanos) {
        if self.class_packets(c) == 0 {
            self.est[c.index()].set_idle(now);
        }
    }
}

impl Discipline for Cbt {
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let c = self.classifier.classify(&pkt);
        let i = c.index();
        let avg = self.est[i].arrival(now, self.class_packets(c) as f64);
        let all = self.est_all.arrival(now, self.fifo.packets() as f64);
        let tcp_avg = match self.tcp_average {
            TcpAverage::Class => avg,
            TcpAverage::Queue => all,
        };
        match c {
            TrafficClass::Tcp => match self.tcp.decide(tcp_avg, pkt.bytes()) {
                Verdict::Pass => {}
                Verdict::Early => {
                    self.stats.early += 1;
                    drops.push(pkt);
                    return false;
                }
                Verdict::Forced => {
                    self.stats.forced += 1;
                    drops.push(pkt);
                    return false;
                }
            },
            _ => {
                if avg > self.th[i] {
                    self.stats.threshold[i] += 1;
                    drops.push(pkt);
                    return false;
                }
            }
        }
        if self.fifo.is_full(pkt.bytes()) {
            if c == TrafficClass::Tcp {
                self.tcp.count = 0;
            }
            self.stats.overflow[i] += 1;
            drops.push(pkt);
            return false;
        }
        self.n[i] += 1;
        self.fifo.enqueue(now, pkt, drops)
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        let Some(pkt) = self.fifo.dequeue(now, drops) else {
            for c in TrafficClass::ALL {
                self.maybe_idle(c, now);
            }
            if self.fifo.packets() == 0 {
                self.est_all.set_idle(now);
            }
            return None;
        };
        let c = self.classifier.classify(&pkt);
        self.n[c.index()] -= 1;
        if self.count_in_service {
            if let Some(prev) = self.in_service.replace(c) {
                self.maybe_idle(prev, now);
            }
        }
        self.maybe_idle(c, now);
        Some(pkt)
    }

    fn transmit_done(&mut self, now: Nanos) {
        self.fifo.transmit_done(now);
        if let Some(c) = self.in_service.take() {
            self.maybe_idle(c, now);
        }
    }

    occupancy_of_inner_fifo!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;
    use TrafficClass::*;

    const MS: Nanos = 1_000_000;

    /// w = 1 for every class: each class average is the class's occupancy at its own
    /// arrival. TCP RED: min 10, max 20 (out of reach unless a test lowers it).
    fn cfg() -> CbtConfig {
        CbtConfig {
            tcp: Some(CbtTcp {
                min_th: 10.0,
                max_th: 20.0,
                max_p: 1e-12,
                w_q: 1.0,
                gentle: false,
            }),
            tagged_th: Some(2.0),
            other_th: Some(1.0),
            shares: None,
            w_class: None,
            limit: Some(100),
            limit_rule: FullRule::Ps,
            tagged_tags: None,
            tagged_flows: vec![],
            mean_pkt_size: 1500,
            mean_pkt_time_ns: Some(MS),
            seed: 1,
            count_in_service: false,
            tcp_average: TcpAverage::Class,
        }
    }

    fn tcp(seq: u64) -> Packet {
        Packet::new(PacketKind::Data, 1, 1500, seq, 0)
    }
    fn tagged(seq: u64) -> Packet {
        let mut p = Packet::new(PacketKind::Cbr, 2, 186, seq, 0);
        p.set_dscp(46);
        p
    }
    fn other(seq: u64) -> Packet {
        Packet::new(PacketKind::Cbr, 3, 1000, seq, 0)
    }

    #[test]
    fn tcp_red_on_the_queue_average_counts_udp_backlog() {
        // TCP RED min 3, max 4 with max_p ~0: no early drops, a forced drop once the
        // average reaches max_th 4. UDP thresholds out of the way.
        let mut c = cfg();
        let red = c.tcp.as_mut().unwrap();
        (red.min_th, red.max_th) = (3.0, 4.0);
        c.tagged_th = Some(50.0);
        c.other_th = Some(50.0);
        for (mode, expect) in [(TcpAverage::Class, true), (TcpAverage::Queue, false)] {
            c.tcp_average = mode;
            let mut q = Cbt::new(&c, 0).unwrap();
            let mut d = Vec::new();
            // Five tagged packets queued (w = 1: the average is the occupancy).
            for i in 0..5 {
                assert!(q.enqueue(0, tagged(i), &mut d));
            }
            // A TCP arrival: its class holds 0 packets, the FIFO 5 >= max_th 4.
            assert_eq!(q.enqueue(0, tcp(9), &mut d), expect, "{mode:?}");
        }
    }

    #[test]
    fn a_class_over_its_threshold_is_dropped_while_the_others_pass() {
        let mut q = Cbt::new(&cfg(), 0).unwrap();
        let mut d = Vec::new();
        // Tagged, threshold 2: arrivals see 0, 1, 2 tagged packets queued → avg 0, 1, 2,
        // not over 2 → accepted; the fourth sees 3 > 2 → dropped.
        let t: Vec<bool> = (0..4).map(|i| q.enqueue(0, tagged(i), &mut d)).collect();
        assert_eq!(t, [true, true, true, false]);
        // Other, threshold 1: avg 0, 1 → accepted; 2 > 1 → dropped. The three tagged
        // packets in the FIFO do not count against "other".
        let o: Vec<bool> = (10..13).map(|i| q.enqueue(0, other(i), &mut d)).collect();
        assert_eq!(o, [true, true, false]);
        // TCP is judged on its own average: five arrivals see 0…4 TCP packets, all below
        // min_th 10, so they pass although the FIFO already holds 5 UDP packets.
        let c: Vec<bool> = (20..25).map(|i| q.enqueue(0, tcp(i), &mut d)).collect();
        assert_eq!(c, [true; 5]);
        // While tagged is over its threshold, other and TCP still pass…
        assert!(!q.enqueue(0, tagged(4), &mut d));
        assert!(q.enqueue(0, tcp(25), &mut d));
        assert_eq!(q.stats().threshold, [0, 2, 1]);
        assert_eq!(
            (
                q.class_packets(Tcp),
                q.class_packets(Tagged),
                q.class_packets(Other)
            ),
            (6, 3, 2)
        );
        // …and one tagged departure (FIFO order: the first tagged packet leaves) lets
        // the next tagged arrival in: it sees 2, not over 2.
        let p = q.dequeue(MS, &mut Vec::new()).unwrap();
        assert_eq!(q.classify(&p), Tagged);
        assert!(q.enqueue(MS, tagged(5), &mut d));
        assert_eq!(d.len(), 3);
    }

    #[test]
    fn tcp_red_runs_on_the_tcp_average_only() {
        // TCP RED min 2, max 4 (w = 1): TCP arrivals see 0, 1 (pass), 2, 3 (band,
        // p ≈ 1e-12), 4 = max_th → forced, whatever the UDP classes hold.
        let mut c = cfg();
        let red = c.tcp.as_mut().unwrap();
        (red.min_th, red.max_th) = (2.0, 4.0);
        c.tagged_th = Some(100.0);
        let mut q = Cbt::new(&c, 0).unwrap();
        let mut d = Vec::new();
        for i in 0..50 {
            assert!(q.enqueue(0, tagged(100 + i), &mut d));
        }
        let got: Vec<bool> = (0..6).map(|i| q.enqueue(0, tcp(i), &mut d)).collect();
        assert_eq!(got, [true, true, true, true, false, false]);
        assert_eq!(q.stats().forced, 2);
        assert_eq!(q.tcp_count(), 0);
        // Tagged is unaffected by TCP's state.
        assert!(q.enqueue(0, tagged(200), &mut d));
    }

    #[test]
    fn class_average_with_a_weight_below_one() {
        // w_class = 1/2 for the UDP classes, threshold 2. Tagged arrivals at t = 0 see
        // 0, 1, 2, 3 queued:
        //   avg = 0, then 0.5·0 + 0.5·1 = 0.5, 0.25 + 1 = 1.25, 0.625 + 1.5 = 2.125.
        // The first three are not over 2; the fourth (2.125) is dropped.
        let mut c = cfg();
        c.w_class = Some(0.5);
        let mut q = Cbt::new(&c, 0).unwrap();
        let mut d = Vec::new();
        let got: Vec<bool> = (0..4).map(|i| q.enqueue(0, tagged(i), &mut d)).collect();
        assert_eq!(got, [true, true, true, false]);
        assert_eq!(q.avg(Tagged), 2.125);
        // The tagged packets leave at 1, 2, 3 ms; the class is empty (idle) from 3 ms.
        for t in 1..=3 {
            let p = q.dequeue(t * MS, &mut Vec::new()).unwrap();
            assert_eq!(q.classify(&p), Tagged);
            q.transmit_done(t * MS);
        }
        // Arrival at 7 ms: m = ⌊4 ms / 1 ms⌋ = 4 → 2.125·(1/2)⁴ = 0.1328125, then the
        // update with 0 queued: 0.06640625.
        assert!(q.enqueue(7 * MS, tagged(9), &mut d));
        assert_eq!(q.avg(Tagged), 0.06640625);
        // The other classes' averages never moved.
        assert_eq!(q.avg(Other), 0.0);
        assert_eq!(q.avg(Tcp), 0.0);
    }

    #[test]
    fn thresholds_from_bandwidth_shares() {
        // 1.5 Mbit/s link; tagged 210 kbit/s (14 %), other 180 kbit/s (12 %); target
        // backlog 22 500 B (15 × 1500 B); tagged packets 186 B, other 1000 B:
        //   th_tagged = 0.14·22500/186 = 3150/186 = 16.935…
        //   th_other  = 0.12·22500/1000 = 2.7
        let q = Cbt::from_shares(1_500_000, 210_000, 180_000, 22_500, (186, 1000), &cfg()).unwrap();
        assert!((q.threshold(Tagged) - 3150.0 / 186.0).abs() < 1e-9);
        assert!((q.threshold(Other) - 2.7).abs() < 1e-9);
        assert_eq!(q.threshold(Tcp), f64::INFINITY);
        // UDP shares that leave nothing for TCP are refused.
        assert!(
            Cbt::from_shares(1_000_000, 600_000, 400_000, 22_500, (186, 1000), &cfg()).is_err()
        );
        // Thresholds must come from exactly one source.
        let mut c = cfg();
        c.shares = Some(CbtShares {
            link_rate_bps: 1,
            tagged_bps: 0,
            other_bps: 0,
            backlog_bytes: 1,
            tagged_pkt_len: 1,
            other_pkt_len: 1,
        });
        assert!(Cbt::new(&c, 0).is_err());
        c.tagged_th = None;
        c.other_th = None;
        assert!(Cbt::new(&c, 0).is_ok());
    }

    #[test]
    fn hard_limit_applies_to_all_classes() {
        let mut c = cfg();
        c.limit = Some(3);
        c.tagged_th = Some(100.0);
        c.other_th = Some(100.0);
        let mut q = Cbt::new(&c, 0).unwrap();
        let mut d = Vec::new();
        assert!(q.enqueue(0, tcp(0), &mut d));
        assert!(q.enqueue(0, tagged(1), &mut d));
        assert!(q.enqueue(0, other(2), &mut d));
        assert!(!q.enqueue(0, tagged(3), &mut d));
        assert!(!q.enqueue(0, tcp(4), &mut d));
        assert_eq!(q.stats().overflow, [1, 1, 0]);
        assert_eq!(q.packets(), 3);
    }

    #[test]
    fn configured_tags_and_flows() {
        // Only tag 46 is "tagged"; flow 3 (untagged) is listed as tagged.
        let mut c = cfg();
        c.tagged_tags = Some(vec![46]);
        c.tagged_flows = vec![3];
        let q = Cbt::new(&c, 0).unwrap();
        let mut p = tagged(0);
        assert_eq!(q.classify(&p), Tagged);
        p.set_dscp(10);
        assert_eq!(q.classify(&p), Other);
        assert_eq!(q.classify(&other(1)), Tagged);
    }
}
