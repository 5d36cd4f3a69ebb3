//! Property tests: random arrival/departure sequences against every drop-tail rule.

use collateral_queue::{Discipline, DropTail, FullRule, Packet, PacketKind};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Arrive(u32),
    Depart,
    Done,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => prop_oneof![Just(1500u32), Just(186), Just(52), 1u32..=1500].prop_map(Op::Arrive),
        2 => Just(Op::Depart),
        1 => Just(Op::Done),
    ];
    prop::collection::vec(op, 0..400)
}

fn rule() -> impl Strategy<Value = FullRule> {
    prop_oneof![
        Just(FullRule::Ps),
        Just(FullRule::FbStrict),
        Just(FullRule::FbLoose)
    ]
}

proptest! {
    #[test]
    fn conservation_and_limits(rule in rule(), limit in 1u64..20_000, count in any::<bool>(), ops in ops()) {
        let limit = if rule == FullRule::Ps { limit % 100 + 1 } else { limit };
        let mut q = DropTail::new(rule, limit, count);
        let mut drops = Vec::new();
        let (mut offered, mut departed) = (0u64, 0u64);
        let mut in_service: Option<Packet> = None;
        // Our own byte count of what is waiting, to check the queue's.
        let mut waiting_bytes: i64 = 0;
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Arrive(len) => {
                    offered += 1;
                    let before = drops.len();
                    let ok = q.enqueue(0, Packet::new(PacketKind::Data, 0, len, i as u64, 0), &mut drops);
                    prop_assert_eq!(ok, drops.len() == before);
                    if ok { waiting_bytes += len as i64; }
                }
                Op::Depart => {
                    // A link only dequeues when the previous packet is done.
                    if in_service.is_none() {
                        if let Some(p) = q.dequeue(0, &mut drops) {
                            waiting_bytes -= p.len as i64;
                            departed += 1;
                            in_service = Some(p);
                        }
                    }
                }
                Op::Done => {
                    if in_service.take().is_some() { q.transmit_done(0); }
                }
            }
            prop_assert!(waiting_bytes >= 0);
            let svc = in_service.map_or(0, |p| p.len as u64);
            let counted = waiting_bytes as u64 + if count { svc } else { 0 };
            prop_assert_eq!(q.bytes(), counted);
            match rule {
                FullRule::Ps => prop_assert!(q.packets() as u64 <= limit),
                FullRule::FbStrict => prop_assert!(q.bytes() <= limit),
                // Over by at most one packet (the largest is 1500 B).
                FullRule::FbLoose => prop_assert!(q.bytes() <= limit + 1500),
            }
        }
        // Every packet offered was dropped, departed or is still waiting.
        prop_assert_eq!(offered, drops.len() as u64 + departed + q.waiting() as u64);
    }
}
