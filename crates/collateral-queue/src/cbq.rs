//! CBQ as the scheduling baseline: one FIFO per class (TCP, tagged, other — see
//! [`crate::class`]), each with its own limit, served by deficit round robin with
//! quanta proportional to configured link shares.
//!
//! **What this approximates.** Class-based queueing (Floyd & Jacobson, "Link-sharing and
//! resource management models for packet networks", IEEE/ACM ToN 3(4), 1995) as ALTQ
//! ships it (`altq_rmclass.c`, also in FreeBSD 7): a class tree whose leaves here would
//! be our three classes under one root, a *general scheduler* that is weighted round
//! robin by bytes within a priority (`_rmc_wrr_dequeue_next`: each class may send while
//! its `bytes_alloc_` is positive and is topped up by `w_allotment_` each round, with
//! `Σ w_allotment_ ≈ classes × max packet`), and a *link-sharing scheduler*: a per-class
//! estimator (`rmc_update_class_util`: `avgidle += idle − avgidle/2⁵`, capped at
//! `maxidle`, floored at `minidle`) that marks a class overlimit when it has sent faster
//! than its rate; an overlimit class may still send if it can borrow from an underlimit
//! ancestor (`rmc_under_limit`), otherwise it is suspended (`rmc_delay_action`).
//!
//! **Our approximation.** With three leaves that may all borrow from the root, CBQ's
//! link-sharing rules reduce to: each backlogged class gets at least its share, and the
//! capacity an idle class leaves is shared by the backlogged ones. Deficit round robin
//! (Shreedhar & Varghese, SIGCOMM '95) gives exactly that, work-conservingly: quantum of
//! class `c` = `share_c/Σ share · quantum` bytes per round, with the deficit kept while
//! a class stays backlogged and reset when it empties. No `avgidle` estimator and no
//! overlimit delay are modelled: a class is never held back while the link would
//! otherwise idle, and a class cannot be capped below what borrowing gives it (ALTQ
//! classes without a borrow pointer can be; ours always borrow). The default `quantum`
//! (3 × 1500 B) matches ALTQ's `Σ w_allotment_`, so a round is about as long as in ALTQ
//! and a VoIP packet waits at most about one round behind the other classes.
//!
//! **Overflow.** A class queue is full by its own limit and the [`FullRule`]. ALTQ
//! queues arrivals and then drops from the *head* when a class is over its limit
//! (`rmc_queue_packet` → `rmc_drop_action` → `_rmc_dropq`; class queues are
//! `Q_DROPHEAD`); that is `drop_head: true`. The default is drop-tail, like every other
//! queue here. Limits count waiting packets only: the packet on the wire has left its
//! class queue, as in ALTQ.

use serde::{Deserialize, Serialize};

use crate::check;
use crate::class::{Classifier, PerClass, TrafficClass};
use crate::config::{Described, HardLimit};
use crate::link_defaults;
use crate::{Discipline, DropTail, FullRule, Nanos, Packet};

fn default_rule() -> FullRule {
    FullRule::Ps
}

/// Default DRR round: three classes × one 1500-byte packet.
pub const DEFAULT_QUANTUM: u64 = 3 * 1500;

fn default_shares() -> PerClass<f64> {
    link_defaults::CBQ_SHARES
}

/// CBQ parameters:
/// `{"kind": "cbq", "shares": {"tcp": 0.74, "tagged": 0.14, "other": 0.12},
///   "limits": {"tcp": 40, "tagged": 20, "other": 20}}`. Left out, the shares are
/// Parris et al.'s (those above) and the limits derived from the link
/// ([`crate::link_defaults`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbqConfig {
    /// Link shares (any positive scale; normalised).
    #[serde(default = "default_shares")]
    pub shares: PerClass<f64>,
    /// Per-class queue limits, in the unit of `limit_rule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<PerClass<u64>>,
    #[serde(default = "default_rule")]
    pub limit_rule: FullRule,
    /// Bytes handed out per DRR round over all classes (default 4500).
    #[serde(default)]
    pub quantum: Option<u64>,
    /// On overflow drop the class's oldest packet(s) instead of the arrival (ALTQ).
    #[serde(default)]
    pub drop_head: bool,
    #[serde(default)]
    pub tagged_tags: Option<Vec<u8>>,
    #[serde(default)]
    pub tagged_flows: Vec<u32>,
}

impl Described for CbqConfig {
    const DISPLAY: &'static str = "CBQ";
    const HARD_LIMIT: Option<HardLimit> = None;
}

impl CbqConfig {
    /// The per-class limits, as given or derived for a link of `link_rate_bps` (in
    /// 1500-byte packets' bytes under a byte rule).
    pub fn limits(&self, link_rate_bps: u64) -> Result<PerClass<u64>, String> {
        if let Some(l) = self.limits {
            return Ok(l);
        }
        let l = link_defaults::cbq_limits(link_rate_bps, 1500)?;
        let (_, size) = link_defaults::units(1500, false, self.limit_rule);
        let size = size as u64;
        Ok(PerClass {
            tcp: l.tcp * size,
            tagged: l.tagged * size,
            other: l.other * size,
        })
    }

    pub fn validate(&self, link_rate_bps: u64) -> Result<(), String> {
        crate::class::check_dscps("tagged_tags", self.tagged_tags.as_deref())?;
        let limits = self.limits(link_rate_bps)?;
        for c in TrafficClass::ALL {
            let s = self.shares.get(c);
            if !(s.is_finite() && s > 0.0) {
                return Err(format!("shares.{}: must be positive, got {s}", c.name()));
            }
            check::limit(&format!("limits.{}", c.name()), limits.get(c))?;
        }
        if let Some(q) = self.quantum {
            check::positive("quantum", q)?;
        }
        Ok(())
    }

    /// Per-class DRR quanta in bytes: `share_c/Σ share · quantum`, at least 1.
    pub fn quanta(&self) -> [u64; 3] {
        let q = self.quantum.unwrap_or(DEFAULT_QUANTUM) as f64;
        let s = self.shares.to_array();
        let total: f64 = s.iter().sum();
        s.map(|x| ((x / total * q).round() as u64).max(1))
    }
}

/// Per-class counters (indexed by [`TrafficClass::index`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CbqStats {
    pub drops: [u64; 3],
    pub sent_packets: [u64; 3],
    pub sent_bytes: [u64; 3],
}

/// Per-class FIFOs under deficit round robin.
#[derive(Debug, Clone)]
pub struct Cbq {
    queues: [DropTail; 3],
    quanta: [u64; 3],
    deficit: [u64; 3],
    /// The class whose turn it is, and whether it already got this round's quantum.
    cur: usize,
    granted: bool,
    drop_head: bool,
    classifier: Classifier,
    waiting: usize,
    stats: CbqStats,
}

impl Cbq {
    /// CBQ on a link of `link_rate_bps` (used only for limits left out).
    pub fn new(cfg: &CbqConfig, link_rate_bps: u64) -> Result<Self, String> {
        cfg.validate(link_rate_bps)?;
        let limits = cfg.limits(link_rate_bps)?;
        let q = |c: TrafficClass| DropTail::new(cfg.limit_rule, limits.get(c), false);
        Ok(Cbq {
            queues: TrafficClass::ALL.map(q),
            quanta: cfg.quanta(),
            deficit: [0; 3],
            cur: 0,
            granted: false,
            drop_head: cfg.drop_head,
            classifier: Classifier::new(cfg.tagged_tags.as_deref(), &cfg.tagged_flows),
            waiting: 0,
            stats: CbqStats::default(),
        })
    }

    pub fn quanta(&self) -> [u64; 3] {
        self.quanta
    }

    pub fn class_packets(&self, c: TrafficClass) -> u32 {
        self.queues[c.index()].packets()
    }

    pub fn class_bytes(&self, c: TrafficClass) -> u64 {
        self.queues[c.index()].bytes()
    }

    pub fn classify(&self, pkt: &Packet) -> TrafficClass {
        self.classifier.classify(pkt)
    }

    pub fn stats(&self) -> CbqStats {
        self.stats
    }

    #[inline]
    fn advance(&mut self) {
        self.cur = (self.cur + 1) % 3;
        self.granted = false;
    }
}

impl Discipline for Cbq {
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let i = self.classifier.classify(&pkt).index();
        let q = &mut self.queues[i];
        if q.is_full(pkt.bytes()) {
            if !self.drop_head {
                self.stats.drops[i] += 1;
                drops.push(pkt);
                return false;
            }
            // An arrival that would not fit even into the empty class queue (FB-strict,
            // larger than the limit) is refused without flushing anything.
            if q.rule() == FullRule::FbStrict && pkt.len as u64 > q.limit() {
                self.stats.drops[i] += 1;
                drops.push(pkt);
                return false;
            }
            // Otherwise make room from the front.
            while q.is_full(pkt.bytes()) {
                let old = q.pop_head().expect("a full queue is not empty");
                self.waiting -= 1;
                self.stats.drops[i] += 1;
                drops.push(old);
            }
        }
        self.waiting += 1;
        q.enqueue(now, pkt, drops)
    }

    fn dequeue(&mut self, _now: Nanos, _drops: &mut Vec<Packet>) -> Option<Packet> {
        if self.waiting == 0 {
            return None;
        }
        // Terminates: some class is backlogged, and its deficit grows by its quantum
        // (≥ 1 byte) every round until it covers its head packet.
        loop {
            let c = self.cur;
            let Some(head) = self.queues[c].head() else {
                self.deficit[c] = 0;
                self.advance();
                continue;
            };
            let len = head.len as u64;
            if !self.granted {
                self.deficit[c] += self.quanta[c];
                self.granted = true;
            }
            if len <= self.deficit[c] {
                self.deficit[c] -= len;
                let pkt = self.queues[c].pop_head().expect("head exists");
                self.waiting -= 1;
                self.stats.sent_packets[c] += 1;
                self.stats.sent_bytes[c] += len;
                if self.queues[c].waiting() == 0 {
                    self.deficit[c] = 0;
                    self.advance();
                }
                return Some(pkt);
            }
            self.advance();
        }
    }

    fn bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.bytes()).sum()
    }

    fn packets(&self) -> u32 {
        self.queues.iter().map(|q| q.packets()).sum()
    }

    fn waiting(&self) -> usize {
        self.waiting
    }

    /// Class by class (TCP, tagged, other), each in FIFO order.
    fn visit(&self, f: &mut dyn FnMut(&Packet)) {
        for q in &self.queues {
            q.visit(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;
    use TrafficClass::*;

    fn cfg(shares: [f64; 3]) -> CbqConfig {
        CbqConfig {
            shares: PerClass {
                tcp: shares[0],
                tagged: shares[1],
                other: shares[2],
            },
            limits: Some(PerClass {
                tcp: 1000,
                tagged: 1000,
                other: 1000,
            }),
            limit_rule: FullRule::Ps,
            quantum: None,
            drop_head: false,
            tagged_tags: None,
            tagged_flows: vec![],
        }
    }

    fn pkt(c: TrafficClass, len: u32, seq: u64) -> Packet {
        let kind = if c == Tcp {
            PacketKind::Data
        } else {
            PacketKind::Cbr
        };
        let mut p = Packet::new(kind, c.index() as u32, len, seq, 0);
        p.set_dscp(if c == Tagged { 46 } else { 0 });
        p
    }

    #[test]
    fn quanta_from_shares() {
        // 74/14/12 of 4500 B: 3330, 630, 540.
        assert_eq!(cfg([0.74, 0.14, 0.12]).quanta(), [3330, 630, 540]);
        // Shares need not sum to 1: 2:1:1 of 3000 → 1500, 750, 750.
        let mut c = cfg([2.0, 1.0, 1.0]);
        c.quantum = Some(3000);
        assert_eq!(c.quanta(), [1500, 750, 750]);
    }

    #[test]
    fn drr_order_on_a_crafted_backlog() {
        // Quanta 1500/750/750, all packets 1500 B, every class backlogged.
        //  round 1: TCP +1500 → sends (0 left); tagged +750 < 1500, other +750: skip.
        //  round 2: TCP +1500 → sends; tagged 1500 → sends; other 1500 → sends.
        //  round 3 = round 1, round 4 = round 2, …
        // So the departures go T, T, G, O, T, T, G, O: bytes 2:1:1 as the shares.
        let mut c = cfg([2.0, 1.0, 1.0]);
        c.quantum = Some(3000);
        let mut q = Cbq::new(&c, 0).unwrap();
        let mut d = Vec::new();
        for i in 0..10 {
            for cl in TrafficClass::ALL {
                q.enqueue(0, pkt(cl, 1500, i), &mut d);
            }
        }
        let got: Vec<TrafficClass> = (0..8)
            .map(|_| {
                let p = q.dequeue(0, &mut d).unwrap();
                q.classify(&p)
            })
            .collect();
        assert_eq!(got, [Tcp, Tcp, Tagged, Other, Tcp, Tcp, Tagged, Other]);
    }

    /// Drives `q` as a link of `rate_bps` would for `secs` seconds, keeping every class
    /// in `backlogged` non-empty; returns the bytes sent per class.
    fn saturate(
        q: &mut Cbq,
        rate_bps: u64,
        secs: u64,
        backlogged: &[(TrafficClass, u32)],
    ) -> [u64; 3] {
        let mut d = Vec::new();
        let mut seq = 0;
        let mut now: Nanos = 0;
        let end = secs * 1_000_000_000;
        let mut sent = [0u64; 3];
        while now < end {
            for &(c, len) in backlogged {
                while q.class_packets(c) < 5 {
                    seq += 1;
                    assert!(q.enqueue(now, pkt(c, len, seq), &mut d));
                }
            }
            let p = q.dequeue(now, &mut d).unwrap();
            sent[q.classify(&p).index()] += p.len as u64;
            // The link is busy for len·8/R.
            now += p.len as u64 * 8 * 1_000_000_000 / rate_bps;
            q.transmit_done(now);
        }
        assert!(d.is_empty());
        sent
    }

    #[test]
    fn each_class_gets_its_share_under_saturation() {
        // 1.5 Mbit/s for 10 s (1.875 MB): TCP 1500-byte segments, tagged 186-byte VoIP,
        // other 1000-byte datagrams, all always backlogged. Shares 74/14/12 %: expect
        // 1.3875 MB, 262.5 kB and 225 kB, each within 2 % of its share.
        let mut q = Cbq::new(&cfg([0.74, 0.14, 0.12]), 0).unwrap();
        let sent = saturate(
            &mut q,
            1_500_000,
            10,
            &[(Tcp, 1500), (Tagged, 186), (Other, 1000)],
        );
        let total: u64 = sent.iter().sum();
        // The link was never idle: total ≈ 1.875 MB (within one packet).
        assert!((total as i64 - 1_875_000).abs() <= 1500, "{total}");
        for (c, want) in TrafficClass::ALL.iter().zip([0.74, 0.14, 0.12]) {
            let got = sent[c.index()] as f64 / total as f64;
            assert!(
                (got / want - 1.0).abs() < 0.02,
                "{}: {got} vs {want}",
                c.name()
            );
        }
    }

    #[test]
    fn an_idle_class_share_is_borrowed_by_the_others() {
        // "Other" sends nothing: TCP and tagged split the link 74 : 14, i.e. 84.09 % and
        // 15.91 % (74/88 and 14/88), and the link stays fully used.
        let mut q = Cbq::new(&cfg([0.74, 0.14, 0.12]), 0).unwrap();
        let sent = saturate(&mut q, 1_500_000, 10, &[(Tcp, 1500), (Tagged, 186)]);
        let total: u64 = sent.iter().sum();
        assert!((total as i64 - 1_875_000).abs() <= 1500, "{total}");
        assert_eq!(sent[Other.index()], 0);
        let tcp = sent[Tcp.index()] as f64 / total as f64;
        let tagged = sent[Tagged.index()] as f64 / total as f64;
        assert!((tcp / (74.0 / 88.0) - 1.0).abs() < 0.02, "{tcp}");
        assert!((tagged / (14.0 / 88.0) - 1.0).abs() < 0.02, "{tagged}");
        // Only TCP: it gets everything.
        let mut q = Cbq::new(&cfg([0.74, 0.14, 0.12]), 0).unwrap();
        let sent = saturate(&mut q, 1_500_000, 1, &[(Tcp, 1500)]);
        assert_eq!(sent[Tcp.index()], sent.iter().sum::<u64>());
    }

    #[test]
    fn per_class_limits_and_drop_head() {
        let mut c = cfg([0.74, 0.14, 0.12]);
        c.limits = Some(PerClass {
            tcp: 2,
            tagged: 3,
            other: 1,
        });
        let mut q = Cbq::new(&c, 0).unwrap();
        let mut d = Vec::new();
        let offer = |q: &mut Cbq, cl, n: u64, d: &mut Vec<Packet>| -> Vec<bool> {
            (0..n).map(|i| q.enqueue(0, pkt(cl, 100, i), d)).collect()
        };
        assert_eq!(offer(&mut q, Tcp, 3, &mut d), [true, true, false]);
        assert_eq!(offer(&mut q, Tagged, 4, &mut d), [true, true, true, false]);
        assert_eq!(offer(&mut q, Other, 2, &mut d), [true, false]);
        assert_eq!(q.stats().drops, [1, 1, 1]);
        assert_eq!(q.waiting(), 6);

        // Drop-head: the arrival is queued and the oldest packet of its class goes.
        c.drop_head = true;
        let mut q = Cbq::new(&c, 0).unwrap();
        let mut d = Vec::new();
        for seq in 0..4 {
            assert!(q.enqueue(0, pkt(Tcp, 100, seq), &mut d));
        }
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(q.class_packets(Tcp), 2);
        let first = q.dequeue(0, &mut d).unwrap();
        assert_eq!(first.seq, 2);

        // Byte limits with drop-head: 3000 B of TCP; a 1500-byte arrival to a queue of
        // 1500 + 1000 pushes out the 1500 (oldest), then fits (1000 + 1500 ≤ 3000).
        let mut c = cfg([1.0, 1.0, 1.0]);
        c.limit_rule = FullRule::FbStrict;
        c.limits = Some(PerClass {
            tcp: 3000,
            tagged: 3000,
            other: 3000,
        });
        c.drop_head = true;
        let mut q = Cbq::new(&c, 0).unwrap();
        let mut d = Vec::new();
        q.enqueue(0, pkt(Tcp, 1500, 0), &mut d);
        q.enqueue(0, pkt(Tcp, 1000, 1), &mut d);
        assert!(q.enqueue(0, pkt(Tcp, 1500, 2), &mut d));
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [0]);
        assert_eq!(q.class_bytes(Tcp), 2500);
        // An arrival larger than the whole limit can never fit: it is refused and the
        // queue is left alone.
        assert!(!q.enqueue(0, pkt(Tcp, 4000, 3), &mut d));
        assert_eq!(q.class_bytes(Tcp), 2500);
        assert_eq!(q.stats().drops[Tcp.index()], 2);
    }

    #[test]
    fn left_out_shares_and_limits_are_the_studys_for_the_link() {
        let c: CbqConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c.shares.to_array(), [0.74, 0.14, 0.12]);
        // 10 Mbit/s: RED's limit 60 for TCP, 30 for each UDP class.
        assert_eq!(c.limits(10_000_000).unwrap().to_array(), [60, 30, 30]);
        // 100 Mbit/s: 250, 125, 125; in bytes under a byte rule.
        let bytes = CbqConfig {
            limit_rule: FullRule::FbStrict,
            ..c.clone()
        };
        assert_eq!(
            bytes.limits(100_000_000).unwrap().to_array(),
            [375_000, 187_500, 187_500]
        );
        assert!(Cbq::new(&c, 0)
            .unwrap_err()
            .starts_with("limits: not given"));
    }

    #[test]
    fn invalid_configurations_are_refused() {
        assert!(Cbq::new(&cfg([0.0, 1.0, 1.0]), 0).is_err());
        assert!(Cbq::new(&cfg([f64::NAN, 1.0, 1.0]), 0).is_err());
        let mut c = cfg([1.0, 1.0, 1.0]);
        c.limits.as_mut().unwrap().tagged = 0;
        assert!(Cbq::new(&c, 0).is_err());
        let mut c = cfg([1.0, 1.0, 1.0]);
        c.quantum = Some(0);
        assert!(Cbq::new(&c, 0).is_err());
    }
}
