//! FQ-CoDel: flow queueing with CoDel per flow (Høiland-Jørgensen et al.; RFC 8290),
//! following Linux `net/sched/sch_fq_codel.c`.
//!
//! * **Flows.** Packets are hashed by flow (`Packet::flow`, mixed with a per-run seed as
//!   Linux perturbs its hash) into `flows` buckets, each a FIFO with its own CoDel
//!   state (see [`crate::codel`]) and a deficit.
//! * **Scheduling** (RFC 8290 §4.2): deficit round robin over two lists. A bucket that
//!   gets a packet while on neither list joins the tail of *new flows* with a deficit of
//!   one `quantum`. Dequeue serves the head of new flows, else of old flows; a bucket
//!   whose deficit is used up gets another quantum and moves to the tail of old flows;
//!   otherwise CoDel dequeues from it and its deficit drops by the packet's length. A
//!   bucket that CoDel finds empty leaves the lists — except that an emptied *new* flow
//!   goes to the tail of old flows while old flows are waiting, so new flows cannot
//!   starve old ones by coming and going.
//! * **CoDel** per bucket, with Linux's choice that the MTU floor compares the *whole*
//!   queue's backlog (`codel_dequeue(…, &sch->qstats.backlog, …)`).
//! * **Overflow** (more than `limit` packets after an arrival): the bucket with the
//!   largest backlog in bytes loses packets from its head until half its backlog is
//!   gone, at most `drop_batch` (64) packets, and its CoDel `count` grows by the number
//!   dropped (Linux `fq_codel_drop`). The arrival itself is dropped only if it was among
//!   them.
//!
//! Lengths are IP lengths, so the default quantum is 1500 (Linux: 1514, the Ethernet
//! frame). The memory limit is not modelled. ECN: CoDel marks ECN-capable packets
//! instead of dropping them (`ecn`, on by default as in Linux), see [`crate::codel`].

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::check;
use crate::codel::{default_interval, default_mtu, default_target, CodelCore, CodelVars};
use crate::config::{Described, HardLimit};
use crate::{Discipline, Nanos, Packet};

fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    1500
}
fn default_limit() -> u32 {
    10240
}
fn default_batch() -> u32 {
    64
}
fn default_ecn() -> bool {
    true
}

/// FQ-CoDel's parameters (Linux defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "default_flows")]
    pub flows: u32,
    #[serde(default = "default_quantum")]
    pub quantum: u32,
    /// Packets held at most, over all flows.
    #[serde(default = "default_limit")]
    pub limit: u32,
    #[serde(default = "default_target")]
    pub target_ns: Nanos,
    #[serde(default = "default_interval")]
    pub interval_ns: Nanos,
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default = "default_batch")]
    pub drop_batch: u32,
    /// Mark ECN-capable packets CE instead of dropping them (Linux's fq_codel default:
    /// on; `noecn` turns it off). Overflow drops are drops whatever the codepoint.
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// Perturbs the flow hash (a runner derives one per trial and direction).
    #[serde(default)]
    pub seed: u64,
}

impl Described for FqCodelConfig {
    const DISPLAY: &'static str = "FQ-CoDel";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: default_flows(),
            quantum: default_quantum(),
            limit: default_limit(),
            target_ns: default_target(),
            interval_ns: default_interval(),
            mtu: default_mtu(),
            drop_batch: default_batch(),
            ecn: default_ecn(),
            seed: 0,
        }
    }
}

impl FqCodelConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.flows == 0 || self.flows > 65536 {
            return Err(format!("flows: must be in 1..=65536, got {}", self.flows));
        }
        check::positive("quantum", self.quantum.into())?;
        check::limit("limit", self.limit.into())?;
        check::positive("drop_batch", self.drop_batch.into())?;
        check::positive("target_ns", self.target_ns)?;
        check::time("interval_ns", self.interval_ns)?;
        check::below("target_ns", self.target_ns, "interval", self.interval_ns)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug, Clone)]
struct Bucket {
    q: VecDeque<Packet>,
    bytes: u64,
    deficit: i64,
    codel: CodelCore,
    list: List,
}

/// Drops per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FqCodelStats {
    /// CoDel drops at dequeue.
    pub codel: u64,
    /// Drops from the fattest flow on overflow.
    pub overflow: u64,
    /// CE marks CoDel set instead of dropping.
    pub marked: u64,
}

/// FQ-CoDel.
#[derive(Debug, Clone)]
pub struct FqCodel {
    cfg: FqCodelConfig,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    packets: u32,
    bytes: u64,
    stats: FqCodelStats,
}

/// The bucket of a flow: a SplitMix64 finaliser over the flow id and the seed.
fn bucket_of(flow: u32, seed: u64, n: u32) -> u32 {
    let z = crate::rng::mix64((flow as u64) ^ seed.wrapping_mul(crate::rng::GOLDEN_GAMMA));
    (z % n as u64) as u32
}

/// One bucket's FIFO as CoDel sees it: pops keep the bucket's and the whole queue's
/// byte counts, and the backlog CoDel compares with the MTU is the whole queue's.
struct View<'a> {
    b: &'a mut Bucket,
    packets: &'a mut u32,
    bytes: &'a mut u64,
}

impl View<'_> {
    fn pop(&mut self) -> Option<Packet> {
        let p = self.b.q.pop_front()?;
        self.b.bytes -= p.len as u64;
        *self.packets -= 1;
        *self.bytes -= p.len as u64;
        Some(p)
    }
}

impl FqCodel {
    pub fn new(cfg: &FqCodelConfig) -> Result<Self, String> {
        cfg.validate()?;
        let b = Bucket {
            q: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            codel: CodelCore {
                ecn: cfg.ecn,
                ..CodelCore::new(cfg.target_ns, cfg.interval_ns, cfg.mtu)
            },
            list: List::None,
        };
        Ok(FqCodel {
            cfg: *cfg,
            buckets: vec![b; cfg.flows as usize],
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            stats: FqCodelStats::default(),
        })
    }

    /// The bucket `pkt` goes to.
    pub fn bucket(&self, pkt: &Packet) -> u32 {
        bucket_of(pkt.flow, self.cfg.seed, self.cfg.flows)
    }

    /// A bucket's packets, deficit and CoDel state.
    pub fn bucket_state(&self, b: u32) -> (usize, i64, CodelVars) {
        let k = &self.buckets[b as usize];
        (k.q.len(), k.deficit, k.codel.vars)
    }

    /// The buckets on the new and old lists, in order.
    pub fn lists(&self) -> (Vec<u32>, Vec<u32>) {
        (
            self.new_flows.iter().copied().collect(),
            self.old_flows.iter().copied().collect(),
        )
    }

    pub fn stats(&self) -> FqCodelStats {
        FqCodelStats {
            marked: self.buckets.iter().map(|b| b.codel.marks).sum(),
            ..self.stats
        }
    }

    /// Linux `fq_codel_drop`: half the fattest bucket's backlog from its head, at most
    /// `drop_batch` packets; its CoDel count grows by as many.
    fn drop_from_fattest(&mut self, drops: &mut Vec<Packet>) {
        let (fat, max) = self
            .buckets
            .iter()
            .enumerate()
            .max_by_key(|(i, b)| (b.bytes, std::cmp::Reverse(*i)))
            .map(|(i, b)| (i, b.bytes))
            .unwrap();
        let threshold = max / 2;
        let mut dropped = 0u32;
        let mut len = 0u64;
        let mut v = View {
            b: &mut self.buckets[fat],
            packets: &mut self.packets,
            bytes: &mut self.bytes,
        };
        while let Some(p) = v.pop() {
            len += p.len as u64;
            drops.push(p);
            dropped += 1;
            if dropped >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        let b = &mut self.buckets[fat];
        b.codel.vars.count = b.codel.vars.count.saturating_add(dropped);
        self.stats.overflow += dropped as u64;
    }
}

impl Discipline for FqCodel {
    fn enqueue(&mut self, _now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let i = self.bucket(&pkt);
        let b = &mut self.buckets[i as usize];
        b.q.push_back(pkt);
        b.bytes += pkt.len as u64;
        self.packets += 1;
        self.bytes += pkt.len as u64;
        if b.list == List::None {
            b.list = List::New;
            b.deficit = self.cfg.quantum as i64;
            self.new_flows.push_back(i);
        }
        if self.packets <= self.cfg.limit {
            return true;
        }
        let before = drops.len();
        self.drop_from_fattest(drops);
        !drops[before..].contains(&pkt)
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        loop {
            let (list, i) = if let Some(&i) = self.new_flows.front() {
                (List::New, i)
            } else if let Some(&i) = self.old_flows.front() {
                (List::Old, i)
            } else {
                return None;
            };
            let quantum = self.cfg.quantum as i64;
            let b = &mut self.buckets[i as usize];
            if b.deficit <= 0 {
                b.deficit += quantum;
                b.list = List::Old;
                match list {
                    List::New => self.new_flows.pop_front(),
                    _ => self.old_flows.pop_front(),
                };
                self.old_flows.push_back(i);
                continue;
            }
            let before = drops.len();
            let mut codel = b.codel;
            let mut v = View {
                b,
                packets: &mut self.packets,
                bytes: &mut self.bytes,
            };
            let pkt = codel.dequeue(now, &mut v, |v| v.pop(), |v| *v.bytes, drops);
            let b = &mut self.buckets[i as usize];
            b.codel = codel;
            self.stats.codel += (drops.len() - before) as u64;
            match pkt {
                Some(p) => {
                    b.deficit -= p.len as i64;
                    return Some(p);
                }
                None => {
                    match list {
                        List::New => self.new_flows.pop_front(),
                        _ => self.old_flows.pop_front(),
                    };
                    if list == List::New && !self.old_flows.is_empty() {
                        b.list = List::Old;
                        self.old_flows.push_back(i);
                    } else {
                        b.list = List::None;
                    }
                }
            }
        }
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }

    fn packets(&self) -> u32 {
        self.packets
    }

    fn waiting(&self) -> usize {
        self.packets as usize
    }

    fn visit(&self, f: &mut dyn FnMut(&Packet)) {
        for b in &self.buckets {
            b.q.iter().for_each(&mut *f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;

    const MS: Nanos = 1_000_000;

    fn pkt(flow: u32, seq: u64, len: u32, t: Nanos) -> Packet {
        let mut p = Packet::new(PacketKind::Data, flow, len, seq, t);
        p.arrived = t;
        p
    }

    /// Flows 1, 2, 3 hash to distinct buckets under seed 0 with 1024 buckets.
    fn q(cfg: FqCodelConfig) -> FqCodel {
        let q = FqCodel::new(&cfg).unwrap();
        let b: Vec<u32> = (1..=3).map(|f| q.bucket(&pkt(f, 0, 1, 0))).collect();
        assert!(b[0] != b[1] && b[1] != b[2] && b[0] != b[2], "{b:?}");
        q
    }

    #[test]
    fn a_sparse_flow_overtakes_a_backlogged_one() {
        // Flow 1 has 10 full packets queued and has been served once (it is an old
        // flow); a VoIP packet of flow 2 arrives: it is a new flow and goes next.
        let mut q = q(FqCodelConfig::default());
        let mut d = Vec::new();
        for s in 0..10 {
            q.enqueue(0, pkt(1, s, 1500, 0), &mut d);
        }
        assert_eq!(q.dequeue(0, &mut d).unwrap().flow, 1);
        // Flow 1's deficit is spent (1500 − 1500 = 0): the next dequeue moves it to
        // old flows with a fresh quantum and serves it again, as nothing else waits.
        assert_eq!(q.dequeue(0, &mut d).unwrap().flow, 1);
        q.enqueue(0, pkt(2, 0, 200, 0), &mut d);
        assert_eq!(q.lists().0, vec![q.bucket(&pkt(2, 0, 1, 0))]);
        assert_eq!(q.dequeue(0, &mut d).unwrap().flow, 2);
        assert_eq!(q.dequeue(0, &mut d).unwrap().flow, 1);
        assert!(d.is_empty());
    }

    #[test]
    fn backlogged_flows_share_bytes_by_deficit_round_robin() {
        // Flow 1 sends 1500 B packets, flow 2 500 B packets, both always backlogged,
        // quantum 1500: per round flow 1 sends one packet and flow 2 three.
        let mut q = q(FqCodelConfig::default());
        let mut d = Vec::new();
        for s in 0..30 {
            q.enqueue(0, pkt(1, s, 1500, 0), &mut d);
            q.enqueue(0, pkt(2, s, 500, 0), &mut d);
        }
        let order: Vec<u32> = (0..24)
            .map(|_| q.dequeue(0, &mut d).unwrap().flow)
            .collect();
        let bytes =
            |f: u32| order.iter().filter(|&&x| x == f).count() * if f == 1 { 1500 } else { 500 };
        assert_eq!(bytes(1), bytes(2), "{order:?}");
        assert_eq!(&order[..8], &[1, 2, 2, 2, 1, 2, 2, 2]);
    }

    #[test]
    fn overflow_halves_the_fattest_flow_from_its_head() {
        let mut q = q(FqCodelConfig {
            limit: 10,
            ..Default::default()
        });
        let mut d = Vec::new();
        // Flow 1: 8 packets of 1000 B; flow 2: 2 packets of 100 B. The 11th packet
        // (flow 2) overflows: flow 1 (8000 B) loses head packets until 4000 B are gone.
        for s in 0..8 {
            assert!(q.enqueue(0, pkt(1, s, 1000, 0), &mut d));
        }
        for s in 0..3 {
            assert!(q.enqueue(0, pkt(2, s, 100, 0), &mut d));
        }
        assert_eq!(
            d.iter().map(|p| (p.flow, p.seq)).collect::<Vec<_>>(),
            [(1, 0), (1, 1), (1, 2), (1, 3)]
        );
        let b1 = q.bucket(&pkt(1, 0, 1, 0));
        let (n, _, vars) = q.bucket_state(b1);
        assert_eq!((n, vars.count), (4, 4));
        assert_eq!(q.packets(), 7);
        assert_eq!(q.stats().overflow, 4);
        // At most drop_batch packets per overflow.
        let mut q = FqCodel::new(&FqCodelConfig {
            limit: 100,
            drop_batch: 3,
            ..Default::default()
        })
        .unwrap();
        for s in 0..101 {
            q.enqueue(0, pkt(1, s, 1000, 0), &mut d);
        }
        assert_eq!(q.packets(), 98);
    }

    #[test]
    fn an_arrival_dropped_by_overflow_is_reported() {
        // Limit 1: flow 2 holds 100 B; a 1500 B arrival of flow 1 makes flow 1 the
        // fattest, and half its backlog is the arrival itself.
        let mut q = q(FqCodelConfig {
            limit: 1,
            ..Default::default()
        });
        let mut d = Vec::new();
        assert!(q.enqueue(0, pkt(2, 0, 100, 0), &mut d));
        assert!(!q.enqueue(0, pkt(1, 0, 1500, 0), &mut d));
        assert_eq!(d.iter().map(|p| p.flow).collect::<Vec<_>>(), [1]);
        assert_eq!(q.packets(), 1);
    }

    #[test]
    fn codel_drops_in_each_flow_on_its_own_sojourn_times() {
        // Flow 1's packets waited since 0; flow 2's are fresh. After an interval above
        // target flow 1 is dropped by its CoDel; flow 2 never.
        let mut q = q(FqCodelConfig::default());
        let mut d = Vec::new();
        for s in 0..100 {
            q.enqueue(0, pkt(1, s, 1500, 0), &mut d);
        }
        let mut t = 10 * MS;
        let mut sent2 = 0;
        for k in 0..60u64 {
            q.enqueue(t, pkt(2, k, 200, t), &mut d);
            while let Some(p) = q.dequeue(t, &mut d) {
                sent2 += (p.flow == 2) as u32;
                if p.flow == 2 {
                    break;
                }
            }
            t += 5 * MS;
        }
        assert_eq!(sent2, 60);
        assert!(!d.is_empty() && d.iter().all(|p| p.flow == 1));
        assert_eq!(q.stats().codel, d.len() as u64);
    }
}
