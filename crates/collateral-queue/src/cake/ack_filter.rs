//! CAKE's ACK filter (Piece of CAKE §3.5; sch_cake `cake_ack_filter`,
//! `cake_tcph_may_drop`, `cake_tcph_sack_compare`).
//!
//! On an asymmetric link the upstream fills with pure ACKs, each of which a later
//! cumulative ACK makes redundant. When a pure ACK is enqueued (the *trigger*, now at
//! the tail of its flow queue) the filter walks that queue from the head looking for
//! older pure ACKs of the same connection that the trigger supersedes, and removes at
//! most one per arrival — the one nearest the head:
//!
//! * **Eligible**: a pure ACK (no payload, no SYN/FIN/RST: our `PacketKind::Ack`) of
//!   the same connection, whose cumulative ACK is not after the trigger's, whose
//!   timestamps are not after the trigger's, and whose SACK information the trigger
//!   covers — with the *same* cumulative ACK the trigger must carry strictly more SACK
//!   information, so duplicate ACKs (the fast-retransmit signal) are never merged.
//! * **ECN**: an eligible ACK is forgotten when a later packet of the connection has
//!   different ECN-echo flags, so no change of ECE/CWR is ever lost.
//! * **Normal** mode removes the first eligible ACK only once a *second* eligible one is
//!   found behind it (the queue then still holds an ACK carrying the same information
//!   besides the trigger). **Aggressive** mode also removes a lone eligible ACK when it
//!   is immediately ahead of the trigger and has the trigger's ECN flags.
//!
//! Simplifications (our packets carry no TCP header): the connection is the `flow`
//! id with its `src`/`dst`; TCP packets are the `Data`, `Ack` and `Setup` kinds; only
//! a pure `Ack` triggers (Linux: any segment with ACK and without SYN; ours carry no
//! ACK number otherwise); TSval is the ACK's send time `sent` and TSecr its `echo`; the
//! ECN flags compared are ECE, CWR and AE (the whole AccECN ACE field; Linux compares
//! ECE and CWR). SACK blocks travel beside our packets, so SACK information compares
//! only as present/absent: a trigger with SACK covers an ACK without; an ACK with SACK
//! is covered by nothing (Linux compares the blocks and would merge an ACK whose
//! blocks the trigger's contain) — conservative: during SACK recovery nothing is
//! filtered.

use super::queues::{Fifo, Slab, NIL};
use crate::{tcp_flags, Packet, PacketKind};

/// ACK filter mode (`tc … cake ack-filter`). Linux default: off.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum AckFilter {
    #[default]
    Off,
    Normal,
    Aggressive,
}

#[inline]
fn ecn_flags(p: &Packet) -> u8 {
    p.flags & (tcp_flags::ECE | tcp_flags::CWR | tcp_flags::AE)
}

#[inline]
fn same_connection(a: &Packet, b: &Packet) -> bool {
    a.flow == b.flow && a.src == b.src && a.dst == b.dst && a.kind != PacketKind::Cbr
}

/// `a` is after `b` in sequence space (wrap-aware).
#[inline]
fn after(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// Whether `trig` makes the queued packet `old` redundant (the per-candidate tests of
/// sch_cake `cake_ack_filter`).
fn supersedes(trig: &Packet, old: &Packet) -> bool {
    if old.kind != PacketKind::Ack
        || after(old.sent, trig.sent)
        || after(old.echo, trig.echo)
        || after(old.seq, trig.seq)
    {
        return false;
    }
    // SACK comparison: −1 old has more, 0 equal, 1 the trigger has more.
    let sack_cmp = match (old.sack != 0, trig.sack != 0) {
        (false, false) => 0,
        (false, true) => 1,
        (true, _) => -1,
    };
    !(sack_cmp < 0 || (old.seq == trig.seq && sack_cmp == 0))
}

/// Runs the filter on flow queue `q`, whose tail is the packet just enqueued; removes
/// and returns the ACK it makes redundant, if any.
pub(super) fn filter(q: &mut Fifo, slab: &mut Slab, aggressive: bool) -> Option<Packet> {
    if q.len < 2 {
        return None;
    }
    let trig = *slab.pkt(q.tail)?;
    if trig.kind != PacketKind::Ack {
        return None;
    }
    // The eligible ACK nearest the head: (slot, predecessor, ECN flags).
    let mut elig: Option<(u32, u32, u8)> = None;
    let mut found = 0u32;
    let (mut prev, mut cur) = (NIL, q.head);
    let mut second = false;
    while cur != q.tail && cur != NIL {
        let p = *slab.pkt(cur)?;
        if same_connection(&p, &trig) {
            if elig.is_some_and(|(_, _, f)| f != ecn_flags(&p)) {
                elig = None;
                found = found.saturating_sub(1);
            }
            if supersedes(&trig, &p) {
                if elig.is_none() {
                    elig = Some((cur, prev, ecn_flags(&p)));
                }
                found += 1;
                if found > 1 {
                    second = true;
                    break;
                }
            }
        }
        prev = cur;
        cur = slab.next(cur);
    }
    let (slot, before, flags) = elig?;
    let lone_ok = aggressive && slab.next(slot) == q.tail && flags == ecn_flags(&trig);
    if second || lone_ok {
        q.unlink(slab, before, slot)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pure ACK of flow 1 with cumulative ACK `ack`, sent at `t`.
    fn ack(ack: u64, t: u64) -> Packet {
        let mut p = Packet::new(PacketKind::Ack, 1, 40, ack, t);
        p.echo = t;
        p
    }

    /// Enqueues `pkts` one by one, filtering after each; returns the cumulative ACKs
    /// removed and those left, in order.
    fn run(pkts: &[Packet], aggressive: bool) -> (Vec<u64>, Vec<u64>) {
        let mut slab = Slab::with_capacity(8);
        let mut q = Fifo::default();
        let mut removed = Vec::new();
        for p in pkts {
            q.push(&mut slab, *p);
            if let Some(r) = filter(&mut q, &mut slab, aggressive) {
                removed.push(r.seq);
            }
        }
        (removed, q.iter(&slab).map(|p| p.seq).collect())
    }

    #[test]
    fn normal_needs_two_eligible_aggressive_takes_the_one_ahead() {
        // Two ACKs: normal keeps both; aggressive drops the older (it is just ahead of
        // the trigger and has the same flags).
        let two = [ack(1000, 1), ack(2000, 2)];
        assert_eq!(run(&two, false), (vec![], vec![1000, 2000]));
        assert_eq!(run(&two, true), (vec![1000], vec![2000]));
        // Three: the third finds 1000 and 2000 eligible and drops 1000 in both modes.
        // In aggressive mode the second arrival already removed 1000, so the third
        // removes 2000.
        let three = [ack(1000, 1), ack(2000, 2), ack(3000, 3)];
        assert_eq!(run(&three, false), (vec![1000], vec![2000, 3000]));
        assert_eq!(run(&three, true), (vec![1000, 2000], vec![3000]));
    }

    #[test]
    fn duplicate_acks_and_newer_acks_are_kept() {
        let dup = [ack(1000, 1), ack(1000, 2), ack(1000, 3)];
        assert_eq!(run(&dup, false), (vec![], vec![1000; 3]));
        assert_eq!(run(&dup, true), (vec![], vec![1000; 3]));
        // An older arrival never removes a newer ACK (reordered: 3000 then 2000).
        let back = [ack(3000, 1), ack(2000, 2)];
        assert_eq!(run(&back, true), (vec![], vec![3000, 2000]));
        // A later timestamp echo on the queued ACK makes it not eligible.
        let mut a = ack(1000, 1);
        a.echo = 99;
        assert_eq!(run(&[a, ack(2000, 2)], true).0, Vec::<u64>::new());
    }

    #[test]
    fn ecn_flag_changes_are_never_lost() {
        // 1000 carries ECE, 2000 not: when 3000 arrives, 2000's flags differ from the
        // eligible 1000's, so 1000 is forgotten and only 2000 is eligible. Normal: no
        // second eligible → nothing. Aggressive: 2000 is just ahead with the trigger's
        // flags → removed; 1000 (with ECE) stays.
        let mut e = ack(1000, 1);
        e.flags = tcp_flags::ECE;
        let q = [e, ack(2000, 2), ack(3000, 3)];
        // (In aggressive mode the second arrival already tried 1000: flags differ.)
        assert_eq!(run(&q, false), (vec![], vec![1000, 2000, 3000]));
        assert_eq!(run(&q, true), (vec![2000], vec![1000, 3000]));
    }

    #[test]
    fn sack_information_must_be_covered() {
        // Dup ACKs without SACK, then one with SACK: the SACK-carrying trigger covers
        // both (same cumulative ACK, more SACK information) → the first goes (normal).
        let mut s = ack(1000, 3);
        s.sack = 7;
        let (removed, left) = run(&[ack(1000, 1), ack(1000, 2), s], false);
        assert_eq!((removed.len(), left.len()), (1, 2));
        // ACKs with SACK are never removed by a trigger: blocks are not comparable here.
        let mut a = ack(1000, 1);
        a.sack = 1;
        let mut b = ack(1000, 2);
        b.sack = 2;
        let mut c = ack(2000, 3);
        c.sack = 3;
        assert_eq!(run(&[a, b, c], true).0, Vec::<u64>::new());
        // A queued ACK with SACK and a trigger without: kept.
        assert_eq!(run(&[a, ack(2000, 2)], true).0, Vec::<u64>::new());
    }

    #[test]
    fn other_packets_are_skipped_not_removed() {
        // A data segment of the same connection and an ACK of another flow sit between.
        let mut data = Packet::new(PacketKind::Data, 1, 1500, 77, 1);
        data.echo = 1;
        let mut other = ack(5000, 1);
        other.flow = 2;
        let q = [ack(1000, 1), data, other, ack(2000, 2), ack(3000, 3)];
        assert_eq!(run(&q, false).0, vec![1000]);
        // Aggressive with the lone eligible ACK not adjacent to the trigger: kept.
        assert_eq!(
            run(&[ack(1000, 1), other, ack(2000, 2)], true).0,
            Vec::<u64>::new()
        );
        // A data trigger does nothing.
        assert_eq!(
            run(&[ack(1000, 1), ack(2000, 1), data], false).0,
            Vec::<u64>::new()
        );
    }
}
