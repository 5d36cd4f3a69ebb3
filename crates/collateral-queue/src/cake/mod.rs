//! CAKE, "Common Applications Kept Enhanced" (Høiland-Jørgensen, Täht & Morton, "Piece
//! of CAKE: A Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN
//! 2018), following Linux `net/sched/sch_cake.c`.
//!
//! One discipline that puts the bottleneck's queue in the gateway and manages it:
//!
//! * a **deficit-mode shaper** slightly below the line rate, with per-packet overhead,
//!   MPU and ATM cell framing ([`shaper`]), so the queue forms here and not in the
//!   modem;
//! * **tins** by DiffServ code point, each a priority class up to a bandwidth
//!   threshold and a weighted share above it ([`tins`]);
//! * in each tin, **flow queues** (1024, set-associative hash) served by DRR++ — new
//!   (sparse) flows before old (bulk) ones — with optional **host fairness** that
//!   divides each flow's quantum by its host's bulk-flow count ([`hosts`]);
//! * **COBALT** on every flow queue: CoDel's control law with ECN marking, plus BLUE
//!   for unresponsive flows ([`cobalt`]);
//! * on overload of the memory limit, drops from the head of the **fattest flow** of any
//!   tin (sch_cake `cake_drop`, which uses a heap; we scan the flows in the rotations);
//! * an optional **ACK filter** ([`ack_filter`]).
//!
//! Not modelled: ingress mode and autorate, GSO splitting, the `wash`/`nat`/fwmark
//! options, PTM framing, and Linux's memory accounting by `skb->truesize`: the memory
//! limit counts IP bytes, so it holds more packets than the same number in Linux.
//! The shaper's failsafe clock (`failsafe_next_packet`) only matters in ingress mode,
//! where drops are charged to the shaper, and is left out.

pub mod ack_filter;
pub mod cobalt;
pub mod hosts;
mod queues;
pub mod shaper;
pub mod tins;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use ack_filter::AckFilter;
pub use cobalt::CobaltVars;
pub use hosts::Isolation;
pub use tins::{Diffserv, MAX_TINS};

use cobalt::CobaltParams;
use hosts::QUEUES;
use queues::{Chain, Chains, Flow, FlowSet, Slab};

use crate::check;
use crate::codel::{default_interval, default_target};
use crate::config::{Described, HardLimit};
use crate::rng::SplitMix64;
use crate::{Discipline, Nanos, Packet};

fn default_ecn() -> bool {
    true
}

/// CAKE's parameters. Defaults are those of `tc qdisc add … cake` (unlimited rate,
/// diffserv3, triple-isolate, no ACK filter, 5 ms / 100 ms, raw overhead), except that
/// lengths are IP lengths: Linux's default (no overhead keyword) counts the 14-byte
/// Ethernet header too, which is `overhead: 14` here.
///
/// ```json
/// {"bandwidth_bps": 1400000, "overhead": 10, "atm": true, "diffserv": "diffserv4",
///  "isolation": "dual_dsthost", "ack_filter": "normal"}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CakeConfig {
    /// Shaped rate in bit/s; 0 = unlimited (no shaper: work-conserving, tins by DRR).
    #[serde(default)]
    pub bandwidth_bps: u64,
    /// Bytes added to every packet's IP length for the shaper (may be negative,
    /// -64..=256 as `tc` accepts).
    #[serde(default)]
    pub overhead: i32,
    /// ATM cell framing for the shaper: after overhead, 48-byte payloads in 53-byte cells.
    #[serde(default)]
    pub atm: bool,
    /// Minimum packet size for the shaper, after overhead and before cells (0..=256).
    #[serde(default)]
    pub mpu: u32,
    #[serde(default)]
    pub diffserv: Diffserv,
    #[serde(default)]
    pub isolation: Isolation,
    #[serde(default)]
    pub ack_filter: AckFilter,
    /// COBALT's target sojourn time (raised per tin to 1.5 MTU times at low rates).
    #[serde(default = "default_target")]
    pub target_ns: Nanos,
    /// COBALT's interval (Linux: the `rtt` parameter).
    #[serde(default = "default_interval")]
    pub interval_ns: Nanos,
    /// Bytes (IP lengths) held at most; 0 = as Linux derives it: four intervals at the
    /// shaped rate, at least 4 MiB, capped at 10240 × 1514 B (Linux's packet limit
    /// times the Ethernet MTU), and that cap when unlimited. Otherwise at least 1500.
    #[serde(default)]
    pub memory_limit: u64,
    /// COBALT marks ECN-capable packets CE instead of dropping them (CAKE always does).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// Perturbs the flow hash and the DRR dither (a runner derives one per trial).
    #[serde(default)]
    pub seed: u64,
}

impl Described for CakeConfig {
    const DISPLAY: &'static str = "CAKE";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::bytes("memory_limit"));
}

impl Default for CakeConfig {
    fn default() -> Self {
        CakeConfig {
            bandwidth_bps: 0,
            overhead: 0,
            atm: false,
            mpu: 0,
            diffserv: Diffserv::default(),
            isolation: Isolation::default(),
            ack_filter: AckFilter::default(),
            target_ns: default_target(),
            interval_ns: default_interval(),
            memory_limit: 0,
            ecn: true,
            seed: 0,
        }
    }
}

/// Linux's packet limit (`sch->limit`) times the Ethernet MTU (`psched_mtu`).
const MEMORY_CAP: u64 = 10240 * shaper::PSCHED_MTU as u64;

impl CakeConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.bandwidth_bps != 0 && self.bandwidth_bps < shaper::MIN_RATE_BPS {
            return Err(format!(
                "bandwidth_bps: must be 0 (unlimited) or at least {} bit/s",
                shaper::MIN_RATE_BPS
            ));
        }
        check::rate("bandwidth_bps", self.bandwidth_bps)?;
        if !(-64..=256).contains(&self.overhead) {
            return Err(format!(
                "overhead: must be in -64..=256 bytes, got {}",
                self.overhead
            ));
        }
        if self.mpu > 256 {
            return Err(format!("mpu: must be at most 256 bytes, got {}", self.mpu));
        }
        check::positive("target_ns", self.target_ns)?;
        check::positive("interval_ns", self.interval_ns)?;
        check::below("target_ns", self.target_ns, "interval", self.interval_ns)?;
        if self.interval_ns > 3_600_000_000_000 {
            return Err("interval_ns: must be at most an hour".into());
        }
        if self.memory_limit != 0 && self.memory_limit < 1500 {
            return Err("memory_limit: must be 0 (derived) or at least 1500 bytes".into());
        }
        if self.memory_limit != 0 {
            check::limit("memory_limit", self.memory_limit)?;
        }
        Ok(())
    }

    /// The memory limit in force (see [`memory_limit`](Self::memory_limit)).
    pub fn effective_memory_limit(&self) -> u64 {
        if self.memory_limit > 0 {
            self.memory_limit
        } else if self.bandwidth_bps > 0 {
            let four_intervals =
                self.bandwidth_bps as u128 / 8 * self.interval_ns as u128 * 4 / 1_000_000_000;
            (four_intervals.max(4 << 20) as u64).min(MEMORY_CAP)
        } else {
            MEMORY_CAP
        }
    }
}

/// Counters of one tin (sch_cake's per-tin statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CakeTinStats {
    /// The tin's threshold rate (0 unshaped).
    pub threshold_bps: u64,
    pub sent_packets: u64,
    /// IP bytes sent.
    pub sent_bytes: u64,
    pub backlog_bytes: u64,
    /// COBALT drops (CoDel and BLUE) and overflow drops from this tin.
    pub dropped: u64,
    pub ecn_marked: u64,
    pub ack_drops: u64,
}

/// Drops by cause, marks, and per-tin counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CakeStats {
    /// Drops by COBALT's CoDel control law at dequeue.
    pub codel_drops: u64,
    /// Drops by COBALT's BLUE probability at dequeue.
    pub blue_drops: u64,
    /// Drops from the fattest flow when the memory limit is exceeded.
    pub overflow_drops: u64,
    /// ACKs removed by the ACK filter.
    pub ack_drops: u64,
    /// Packets delivered CE-marked by COBALT.
    pub ecn_marks: u64,
    /// The first `tin_count` entries are the tins, in sch_cake's index order
    /// ([`Diffserv::tin_name`]).
    pub tins: [CakeTinStats; MAX_TINS],
    pub tin_count: usize,
}

/// One tin: its flow queues, rotations, host counts, clocks and COBALT parameters.
#[derive(Debug, Clone)]
struct Tin {
    flows: Vec<Flow>,
    tags: Vec<u32>,
    src_bulk: Vec<u16>,
    dst_bulk: Vec<u16>,
    chains: Chains,
    cparams: CobaltParams,
    flow_quantum: u32,
    /// Threshold rate (0 unshaped) and its next-packet clock.
    rate_bps: u64,
    time_next_packet: Nanos,
    tin_quantum: u32,
    tin_deficit: i64,
    backlog: u64,
    sparse_flows: u32,
    bulk_flows: u32,
    decaying_flows: u32,
    stats: CakeTinStats,
}

impl Tin {
    fn new(rate_bps: u64, tin_quantum: u32, mtu_bytes: u32, cfg: &CakeConfig) -> Self {
        let mtu_time = shaper::tx_time(mtu_bytes, rate_bps);
        Tin {
            flows: vec![Flow::default(); QUEUES],
            tags: vec![0; QUEUES],
            src_bulk: vec![0; 256],
            dst_bulk: vec![0; 256],
            chains: Chains::default(),
            cparams: CobaltParams::for_tin(mtu_time, cfg.target_ns, cfg.interval_ns),
            flow_quantum: shaper::flow_quantum(rate_bps),
            rate_bps,
            time_next_packet: 0,
            tin_quantum,
            tin_deficit: 0,
            backlog: 0,
            sparse_flows: 0,
            bulk_flows: 0,
            decaying_flows: 0,
            stats: CakeTinStats {
                threshold_bps: rate_bps,
                ..Default::default()
            },
        }
    }

    #[inline]
    fn active_flows(&self) -> u32 {
        self.sparse_flows + self.bulk_flows
    }
}

/// CAKE. See the module documentation.
#[derive(Debug, Clone)]
pub struct Cake {
    cfg: CakeConfig,
    tins: Vec<Tin>,
    slab: Slab,
    /// Global shaper: 0 = unlimited; its next-packet clock.
    rate_bps: u64,
    time_next_packet: Nanos,
    memory_limit: u64,
    packets: u32,
    bytes: u64,
    cur_tin: usize,
    rng: SplitMix64,
    stats: CakeStats,
}

/// Bound on the scheduling steps of one dequeue: far above what any state needs (each
/// step serves, refreshes or retires a flow), it only turns a bug into a `None`.
const MAX_STEPS: u32 = 1 << 22;

impl Cake {
    pub fn new(cfg: &CakeConfig) -> Result<Self, String> {
        cfg.validate()?;
        let rate = cfg.bandwidth_bps;
        // sch_cake `cake_config_*` pass `psched_mtu(dev)` to `cake_set_rate` as is: the
        // device MTU plus its link header, with neither the configured overhead nor ATM
        // cells (those apply to packets' shaper costs only).
        let mtu = shaper::PSCHED_MTU;
        let tins = (0..cfg.diffserv.tin_count())
            .map(|i| {
                let (tin_rate, quantum) = cfg.diffserv.tin_share(i, rate);
                let tin_rate = if rate == 0 {
                    0
                } else {
                    tin_rate.max(shaper::MIN_RATE_BPS)
                };
                Tin::new(tin_rate, quantum, mtu, cfg)
            })
            .collect::<Vec<_>>();
        Ok(Cake {
            cfg: cfg.clone(),
            stats: CakeStats {
                tin_count: tins.len(),
                ..Default::default()
            },
            tins,
            slab: Slab::with_capacity(1024),
            rate_bps: rate,
            time_next_packet: 0,
            memory_limit: cfg.effective_memory_limit(),
            packets: 0,
            bytes: 0,
            cur_tin: 0,
            rng: SplitMix64::new(crate::rng::mix64(cfg.seed ^ 0x6361_6b65)),
        })
    }

    pub fn config(&self) -> &CakeConfig {
        &self.cfg
    }

    /// The memory limit in force, in IP bytes.
    pub fn memory_limit(&self) -> u64 {
        self.memory_limit
    }

    /// The tin `pkt` goes to.
    pub fn tin_of(&self, pkt: &Packet) -> usize {
        self.cfg
            .diffserv
            .tin_of(pkt.dscp())
            .min(self.tins.len().saturating_sub(1))
    }

    pub fn stats(&self) -> CakeStats {
        let mut s = self.stats;
        for (i, t) in self.tins.iter().enumerate().take(MAX_TINS) {
            s.tins[i] = t.stats;
            s.tins[i].backlog_bytes = t.backlog;
        }
        s
    }

    /// Removes the head packet of the flow with the largest backlog over all tins
    /// (sch_cake `cake_drop`) and feeds the overflow to its BLUE. Returns the tin and
    /// flow it came from and whether that flow is now empty.
    fn drop_from_fattest(
        &mut self,
        now: Nanos,
        drops: &mut Vec<Packet>,
    ) -> Option<(usize, usize, bool)> {
        let mut best: Option<(usize, usize, u64)> = None;
        for (t, tin) in self.tins.iter().enumerate() {
            for c in [Chain::New, Chain::Old] {
                for i in tin.chains.iter(&tin.flows, c) {
                    let b = tin.flows[i].q.bytes;
                    if b > 0 && best.is_none_or(|(_, _, m)| b > m) {
                        best = Some((t, i, b));
                    }
                }
            }
        }
        let (t, i, _) = best?;
        let tin = &mut self.tins[t];
        let flow = &mut tin.flows[i];
        let pkt = flow.q.pop(&mut self.slab)?;
        flow.cvars.queue_full(&tin.cparams, now);
        let emptied = flow.q.is_empty();
        tin.backlog -= pkt.len as u64;
        tin.stats.dropped += 1;
        self.bytes -= pkt.len as u64;
        self.packets -= 1;
        self.stats.overflow_drops += 1;
        drops.push(pkt);
        Some((t, i, emptied))
    }

    /// Shaped tin choice: the highest-index tin with flows whose threshold clock is due,
    /// else the one whose clock is earliest (ties to the higher index).
    fn pick_shaped_tin(&self, now: Nanos) -> Option<usize> {
        let mut best: Option<(usize, i128)> = None;
        for (i, b) in self.tins.iter().enumerate() {
            if b.active_flows() == 0 {
                continue;
            }
            let to_go = b.time_next_packet as i128 - now as i128;
            if to_go <= 0 || best.is_none_or(|(_, t)| to_go <= t) {
                best = Some((i, to_go));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Unshaped tin choice: weighted DRR over the tins (sch_cake's unlimited mode).
    fn pick_drr_tin(&mut self) -> Option<usize> {
        let n = self.tins.len();
        let mut wrapped = false;
        let mut empty = true;
        let mut steps = 0u32;
        loop {
            let b = self.tins.get_mut(self.cur_tin)?;
            if b.tin_deficit >= 0 && b.active_flows() > 0 {
                return Some(self.cur_tin);
            }
            if b.tin_deficit <= 0 {
                b.tin_deficit += b.tin_quantum as i64;
            }
            if b.active_flows() > 0 {
                empty = false;
            }
            self.cur_tin += 1;
            if self.cur_tin >= n {
                self.cur_tin = 0;
                if wrapped {
                    if empty {
                        return None;
                    }
                } else {
                    wrapped = true;
                }
            }
            steps += 1;
            if steps > MAX_STEPS {
                return None;
            }
        }
    }

    /// A flow found empty by the scheduler leaves the rotations, or waits in the
    /// decaying one while its COBALT state is not at rest (sch_cake `cake_dequeue`).
    fn retire_empty(&mut self, t: usize, i: usize, now: Nanos) {
        let mode = self.cfg.isolation;
        let tin = &mut self.tins[t];
        let f = &mut tin.flows[i];
        f.cvars.queue_empty(&tin.cparams, now);
        let (set, s, d) = (f.set, f.srchost, f.dsthost);
        let decaying = f.cvars.active(now);
        match set {
            FlowSet::Bulk => {
                tin.bulk_flows = tin.bulk_flows.saturating_sub(1);
                hosts::count_bulk(tin, mode, s, d, false);
            }
            FlowSet::Sparse | FlowSet::SparseWait => {
                tin.sparse_flows = tin.sparse_flows.saturating_sub(1)
            }
            FlowSet::Decaying if !decaying => {
                tin.decaying_flows = tin.decaying_flows.saturating_sub(1)
            }
            FlowSet::Decaying | FlowSet::None => {}
        }
        if decaying {
            if set != FlowSet::Decaying {
                tin.decaying_flows += 1;
            }
            tin.flows[i].set = FlowSet::Decaying;
            tin.chains.move_tail(&mut tin.flows, i, Chain::Decaying);
        } else {
            tin.flows[i].set = FlowSet::None;
            tin.chains.remove(&mut tin.flows, i);
        }
    }
}

impl Discipline for Cake {
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        let mode = self.cfg.isolation;
        let t = self.tin_of(&pkt);
        let empty_queue = self.packets == 0;
        let tin = &mut self.tins[t];
        let i = hosts::classify(tin, mode, &pkt, self.cfg.seed);

        // Stale clocks restart at now (sch_cake `cake_enqueue`).
        if tin.backlog == 0 {
            tin.time_next_packet = tin.time_next_packet.max(now);
            if empty_queue {
                self.time_next_packet = self.time_next_packet.max(now);
            }
        }

        let len = pkt.len as u64;
        tin.flows[i].q.push(&mut self.slab, pkt);
        tin.backlog += len;
        self.bytes += len;
        self.packets += 1;

        if self.cfg.ack_filter != AckFilter::Off {
            let aggressive = self.cfg.ack_filter == AckFilter::Aggressive;
            if let Some(old) = ack_filter::filter(&mut tin.flows[i].q, &mut self.slab, aggressive) {
                tin.backlog -= old.len as u64;
                tin.stats.ack_drops += 1;
                self.bytes -= old.len as u64;
                self.packets -= 1;
                self.stats.ack_drops += 1;
                drops.push(old);
            }
        }

        // The flow joins the rotations (sch_cake's "flowchain" step).
        match tin.flows[i].set {
            set @ (FlowSet::None | FlowSet::Decaying) => {
                if set == FlowSet::Decaying {
                    tin.decaying_flows = tin.decaying_flows.saturating_sub(1);
                }
                tin.chains.move_tail(&mut tin.flows, i, Chain::New);
                tin.sparse_flows += 1;
                let f = tin.flows[i];
                let load = hosts::host_load(tin, mode, f.srchost, f.dsthost);
                let f = &mut tin.flows[i];
                f.set = FlowSet::Sparse;
                f.deficit = hosts::scaled_quantum(tin.flow_quantum, load, 0);
            }
            FlowSet::SparseWait => {
                let f = &mut tin.flows[i];
                f.set = FlowSet::Bulk;
                let (s, d) = (f.srchost, f.dsthost);
                tin.sparse_flows = tin.sparse_flows.saturating_sub(1);
                tin.bulk_flows += 1;
                hosts::count_bulk(tin, mode, s, d, true);
            }
            FlowSet::Sparse | FlowSet::Bulk => {}
        }

        let mut arrival_dropped = false;
        while self.bytes > self.memory_limit {
            match self.drop_from_fattest(now, drops) {
                Some((dt, di, emptied)) => arrival_dropped |= dt == t && di == i && emptied,
                None => break,
            }
        }
        !arrival_dropped
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        let mode = self.cfg.isolation;
        let mut first_flow = true;
        let mut steps = 0u32;
        'begin: loop {
            if self.packets == 0 {
                return None;
            }
            // The global shaper holds everything until its clock is due.
            if self.rate_bps > 0 && self.time_next_packet > now {
                return None;
            }
            let t = if self.rate_bps > 0 {
                self.pick_shaped_tin(now)?
            } else {
                self.pick_drr_tin()?
            };
            self.cur_tin = t;

            // Serve the tin: one decaying flow first (to age its state), then new
            // flows, then old ones.
            loop {
                steps += 1;
                if steps > MAX_STEPS {
                    return None;
                }
                let tin = &mut self.tins[t];
                let c = &tin.chains;
                let chain = if first_flow && !c.is_empty(Chain::Decaying) {
                    Chain::Decaying
                } else if !c.is_empty(Chain::New) {
                    Chain::New
                } else if !c.is_empty(Chain::Old) {
                    Chain::Old
                } else if !c.is_empty(Chain::Decaying) {
                    Chain::Decaying
                } else {
                    continue 'begin;
                };
                first_flow = false;
                let Some(i) = tin.chains.front(chain) else {
                    continue 'begin;
                };

                // DRR++: a flow whose deficit is spent gets a quantum scaled down by
                // its host load and goes to the tail of the old (bulk) rotation; a
                // sparse flow becomes bulk there if it still has packets.
                if tin.flows[i].deficit <= 0 {
                    let f = tin.flows[i];
                    if f.set == FlowSet::Sparse {
                        if f.q.is_empty() {
                            tin.flows[i].set = FlowSet::SparseWait;
                        } else {
                            tin.flows[i].set = FlowSet::Bulk;
                            tin.sparse_flows = tin.sparse_flows.saturating_sub(1);
                            tin.bulk_flows += 1;
                            hosts::count_bulk(tin, mode, f.srchost, f.dsthost, true);
                        }
                    }
                    let load = hosts::host_load(tin, mode, f.srchost, f.dsthost);
                    let dither = (self.rng.next_u64() >> 48) as u32;
                    tin.flows[i].deficit += hosts::scaled_quantum(tin.flow_quantum, load, dither);
                    tin.chains.move_tail(&mut tin.flows, i, Chain::Old);
                    continue;
                }

                // Take packets through COBALT; never drop a flow's last packet.
                let mut out = None;
                while let Some(mut pkt) = tin.flows[i].q.pop(&mut self.slab) {
                    let len = pkt.len as u64;
                    tin.backlog -= len;
                    self.bytes -= len;
                    self.packets -= 1;
                    let f = &mut tin.flows[i];
                    let v = f.cvars.should_drop(
                        &tin.cparams,
                        now,
                        &mut pkt,
                        self.cfg.ecn,
                        &mut self.rng,
                    );
                    if !v.drop() || f.q.is_empty() {
                        if v.marked {
                            tin.stats.ecn_marked += 1;
                            self.stats.ecn_marks += 1;
                        }
                        out = Some(pkt);
                        break;
                    }
                    tin.stats.dropped += 1;
                    if v.codel_drop {
                        self.stats.codel_drops += 1;
                    } else {
                        self.stats.blue_drops += 1;
                    }
                    drops.push(pkt);
                }
                let Some(pkt) = out else {
                    self.retire_empty(t, i, now);
                    continue 'begin;
                };

                // Charge the packet to the flow, the tin and the shapers.
                let cost = shaper::adjusted_len(
                    pkt.bytes(),
                    self.cfg.overhead,
                    self.cfg.mpu,
                    self.cfg.atm,
                );
                let tin = &mut self.tins[t];
                tin.flows[i].deficit -= cost as i64;
                tin.tin_deficit -= cost as i64;
                tin.stats.sent_packets += 1;
                tin.stats.sent_bytes += pkt.len as u64;
                if self.rate_bps > 0 {
                    let tin_dur = shaper::tx_time(cost, tin.rate_bps);
                    shaper::charge_tin(&mut tin.time_next_packet, now, tin_dur);
                    self.time_next_packet = self
                        .time_next_packet
                        .saturating_add(shaper::tx_time(cost, self.rate_bps));
                }
                return Some(pkt);
            }
        }
    }

    fn ready_at(&self) -> Nanos {
        if self.rate_bps > 0 && self.packets > 0 {
            self.time_next_packet
        } else {
            Nanos::MAX
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
        for tin in &self.tins {
            for flow in &tin.flows {
                flow.q.iter(&self.slab).for_each(&mut *f);
            }
        }
    }
}
