//! Flow and host isolation (Piece of CAKE §3.4; sch_cake `cake_hash`, the flowchain
//! part of `cake_enqueue` and the "triple isolation" part of `cake_dequeue`).
//!
//! * **Which queue.** The isolation mode picks the hash key: the flow (our `flow` id,
//!   the 5-tuple's stand-in) in `flows` and the dual/triple modes; the source and/or
//!   destination host in `srchost`, `dsthost`, `hosts`; nothing in `flowblind` (one
//!   queue per tin). The key is hashed with the seed (Linux perturbs its flow hash) and
//!   placed in 1024 queues with 8-way set association: a flow keeps the queue tagged
//!   with its hash; a new flow takes a free queue of its set of 8; only if all 8 are
//!   busy does it share (a *collision*).
//! * **Host fairness.** In the dual modes and triple-isolate each host counts its
//!   *bulk* flows (flows in the old rotation with packets) per tin, as source and as
//!   destination. A flow's DRR quantum is divided by its host load — the larger of the
//!   counts that the mode uses (`dual_srchost`: its source's, `dual_dsthost`: its
//!   destination's, `triple_isolate`: both) — so a host's flows together get about one
//!   flow's share, whatever their number, while flows still share fairly within a host.
//!   Linux scales by `quantum_div[load] = 65535 / load` in 16-bit fixed point with a
//!   random dither; we do the same with the discipline's seeded generator.
//!
//! Simplification: hosts are our `src`/`dst` indices, used directly as slots of 256
//! per-host counters; Linux hashes addresses into 1024 host slots with the same 8-way
//! association, so here hosts never collide.

use serde::{Deserialize, Serialize};

use super::queues::FlowSet;
use super::Tin;
use crate::Packet;

/// Flow isolation mode (`tc … cake triple-isolate`, …). Linux default: triple-isolate.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Isolation {
    /// No flow isolation: one queue per tin.
    Flowblind = 0,
    /// One queue per source host.
    Srchost = 1,
    /// One queue per destination host.
    Dsthost = 2,
    /// One queue per source–destination pair.
    Hosts = 3,
    /// One queue per flow, no host fairness.
    Flows = 4,
    /// Per-flow queues, fairness first between source hosts.
    DualSrchost = 5,
    /// Per-flow queues, fairness first between destination hosts.
    DualDsthost = 6,
    /// Per-flow queues, fairness between source hosts and between destination hosts.
    #[default]
    TripleIsolate = 7,
}

/// Queues per tin (sch_cake `CAKE_QUEUES`) and ways per set (`CAKE_SET_WAYS`).
pub(super) const QUEUES: usize = 1024;
const WAYS: usize = 8;

impl Isolation {
    /// sch_cake's flow-mode bits: 1 source host, 2 destination host, 4 flows.
    fn bits(self) -> u8 {
        self as u8
    }

    /// Whether source hosts share bulk load (sch_cake `cake_dsrc`).
    #[inline]
    pub(super) fn dual_src(self) -> bool {
        self.bits() & 5 == 5
    }

    /// Whether destination hosts share bulk load (sch_cake `cake_ddst`).
    #[inline]
    pub(super) fn dual_dst(self) -> bool {
        self.bits() & 6 == 6
    }

    /// The 32-bit hash that identifies the packet's queue, or `None` in flowblind mode.
    fn flow_hash(self, pkt: &Packet, seed: u64) -> Option<u32> {
        let b = self.bits();
        if b == 0 {
            return None;
        }
        let h =
            |key: u64| crate::rng::mix64(key ^ seed.wrapping_mul(crate::rng::GOLDEN_GAMMA)) as u32;
        if b & 4 != 0 {
            return Some(h(pkt.flow as u64
                | (pkt.src as u64) << 32
                | (pkt.dst as u64) << 40));
        }
        let mut x = 0;
        if b & 1 != 0 {
            x ^= h(1 << 48 | pkt.src as u64);
        }
        if b & 2 != 0 {
            x ^= h(2 << 48 | pkt.dst as u64);
        }
        Some(x)
    }
}

/// The host load that divides a flow's quantum: at least 1.
#[inline]
pub(super) fn host_load(tin: &Tin, mode: Isolation, srchost: u8, dsthost: u8) -> u32 {
    let mut load = 1u32;
    if mode.dual_src() {
        load = load.max(tin.src_bulk[srchost as usize] as u32);
    }
    if mode.dual_dst() {
        load = load.max(tin.dst_bulk[dsthost as usize] as u32);
    }
    load
}

/// `quantum / load` as Linux computes it: `(quantum · ⌊65535/load⌋ + dither) >> 16`
/// with a 16-bit dither (0 for a new flow's first deficit).
#[inline]
pub(super) fn scaled_quantum(quantum: u32, load: u32, dither: u32) -> i64 {
    ((quantum as u64 * (65535 / load.max(1)) as u64 + (dither & 0xffff) as u64) >> 16) as i64
}

/// Counts a flow in (`up`) or out of its hosts' bulk-flow counts, those the mode uses.
#[inline]
pub(super) fn count_bulk(tin: &mut Tin, mode: Isolation, srchost: u8, dsthost: u8, up: bool) {
    let step = |c: &mut u16| {
        *c = if up {
            c.saturating_add(1)
        } else {
            c.saturating_sub(1)
        }
    };
    if mode.dual_src() {
        step(&mut tin.src_bulk[srchost as usize]);
    }
    if mode.dual_dst() {
        step(&mut tin.dst_bulk[dsthost as usize]);
    }
}

/// The queue (index into `tin.flows`) of `pkt` (sch_cake `cake_hash`'s set-associative
/// lookup). A queue newly given to this flow takes over the packet's hosts; if it was
/// taken from a bulk flow by a collision, the bulk count moves to the new hosts.
pub(super) fn classify(tin: &mut Tin, mode: Isolation, pkt: &Packet, seed: u64) -> usize {
    let Some(hash) = mode.flow_hash(pkt, seed) else {
        return 0;
    };
    let reduced = hash as usize % QUEUES;
    let set_of = |tin: &Tin, i: usize| tin.flows.get(i).map_or(FlowSet::None, |f| f.set);
    if tin.tags[reduced] == hash && set_of(tin, reduced) != FlowSet::None {
        return reduced;
    }
    let inner = reduced % WAYS;
    let outer = reduced - inner;
    let ways = (0..WAYS).map(|i| outer + (inner + i) % WAYS);
    let mut allocate = true;
    let slot = if let Some(s) = ways.clone().find(|&s| tin.tags[s] == hash) {
        // A queue of the set is reserved for this flow; new hosts only if it is idle.
        allocate = set_of(tin, s) == FlowSet::None;
        s
    } else if let Some(s) = ways.clone().find(|&s| set_of(tin, s) == FlowSet::None) {
        s
    } else {
        // Collision: share the original queue; its bulk load leaves its old hosts.
        let f = tin.flows[reduced];
        if f.set == FlowSet::Bulk {
            count_bulk(tin, mode, f.srchost, f.dsthost, false);
        }
        reduced
    };
    tin.tags[slot] = hash;
    if allocate {
        let f = &mut tin.flows[slot];
        if mode.dual_src() {
            f.srchost = pkt.src;
        }
        if mode.dual_dst() {
            f.dsthost = pkt.dst;
        }
        let (set, s, d) = (f.set, f.srchost, f.dsthost);
        if set == FlowSet::Bulk {
            count_bulk(tin, mode, s, d, true);
        }
    }
    slot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_bits_as_in_sch_cake() {
        use Isolation::*;
        let dual: Vec<(bool, bool)> = [Flows, DualSrchost, DualDsthost, TripleIsolate, Hosts]
            .iter()
            .map(|m| (m.dual_src(), m.dual_dst()))
            .collect();
        assert_eq!(
            dual,
            [
                (false, false),
                (true, false),
                (false, true),
                (true, true),
                (false, false)
            ]
        );
    }

    #[test]
    fn scaled_quantum_by_hand() {
        // 1514 · 65535 >> 16 = 1513 (Linux's rounding for a lone flow);
        // 1514 · 16383 >> 16 = 378 for a host with four bulk flows.
        assert_eq!(scaled_quantum(1514, 1, 0), 1513);
        assert_eq!(scaled_quantum(1514, 4, 0), 378);
        // The dither can add at most one byte.
        assert_eq!(scaled_quantum(1514, 4, 0xffff), 379);
        assert_eq!(scaled_quantum(1514, 0, 0), 1513);
    }
}
