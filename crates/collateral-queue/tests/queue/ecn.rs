//! Each AQM's ECN switch: where it would drop, an ECN-capable packet is marked CE and
//! sent, a Not-ECT one is dropped; the rules that go with the switch (RED's harddrop,
//! PIE's 10 % limit, CoDel's marked packet ending the dequeue). Expected values are
//! worked from the algorithms' formulas in the comments.

use collateral_queue::{
    Codel, CodelConfig, Discipline, Ecn, FqCodel, FqCodelConfig, Nanos, Packet, PacketKind, Pie,
    PieConfig, Red, RedConfig,
};

const MS: Nanos = 1_000_000;

fn pkt(seq: u64, ecn: Ecn, at: Nanos) -> Packet {
    let mut p = Packet::new(PacketKind::Data, 0, 1500, seq, at);
    p.set_ecn(ecn);
    p.arrived = at;
    p
}

fn red(ecn: bool, harddrop: bool, max_p: f64) -> Red {
    // w_q = 1: the average is the occupancy each arrival sees, so the test controls it.
    let cfg = RedConfig {
        mean_pkt_time_ns: Some(MS),
        seed: 7,
        count_in_service: false,
        ecn,
        harddrop,
        ..RedConfig::with(2.0, 6.0, max_p, 1.0, 100)
    };
    Red::new(&cfg, 12_000_000).unwrap()
}

#[test]
fn red_marks_at_the_forced_level_unless_harddrop() {
    for (ecn, harddrop, codepoint, marked) in [
        (true, false, Ecn::Ect0, true),
        (true, false, Ecn::Ect1, true),
        (true, false, Ecn::NotEct, false),
        (true, true, Ecn::Ect0, false),
        (false, false, Ecn::Ect0, false),
    ] {
        let mut q = red(ecn, harddrop, 0.1);
        let mut d = Vec::new();
        // Six arrivals fill the queue to 6 = max_th while the average is below it
        // (arrival k sees avg = k); two of them fall in the band, where max_p = 0.1
        // may drop or mark, so count what is in the queue instead.
        for i in 0..6 {
            q.enqueue(0, pkt(i, codepoint, 0), &mut d);
        }
        d.clear();
        let before = q.packets();
        let before_stats = q.stats();
        // The next arrival sees avg = occupancy ≥ 6 = max_th: the forced level.
        assert!(before >= 4, "{before}");
        let queued = q.enqueue(0, pkt(99, codepoint, 0), &mut d);
        let s = q.stats();
        if marked {
            assert!(queued && d.is_empty());
            assert_eq!(s.forced_marked, before_stats.forced_marked + 1);
            let mut last = None;
            q.visit(&mut |p| last = Some(*p));
            assert_eq!(last.unwrap().ecn(), Ecn::Ce);
        } else if before >= 6 {
            assert!(!queued && d.len() == 1, "{ecn} {harddrop} {codepoint:?}");
            assert_eq!(d[0].ecn(), codepoint, "a dropped packet is not marked");
            assert_eq!(s.forced, before_stats.forced + 1);
        }
    }
}

#[test]
fn red_marks_exactly_where_it_would_drop_in_the_band() {
    // Occupancy held at 4 (avg 4: p_b = 0.1·(4−2)/(6−2) = 0.05): every arrival that is
    // accepted is followed by one departure. RED's random draws do not depend on the
    // codepoint, so with the same seed the ECT run marks exactly the arrivals the
    // Not-ECT run drops.
    let run = |codepoint: Ecn| {
        let mut q = red(true, false, 0.1);
        let mut d = Vec::new();
        // The fill is ECT in both runs (two arrivals see the band): always queued.
        for i in 0..4 {
            assert!(q.enqueue(0, pkt(i, Ecn::Ect0, 0), &mut d));
        }
        let fill_marks = q.stats().early_marked;
        let (mut marked, mut dropped) = (vec![], vec![]);
        for i in 10..2010u64 {
            d.clear();
            if q.enqueue(0, pkt(i, codepoint, 0), &mut d) {
                let mut last = None;
                q.visit(&mut |p| last = Some(*p));
                if last.unwrap().ecn() == Ecn::Ce {
                    marked.push(i);
                }
                q.dequeue(0, &mut d).unwrap();
            } else {
                dropped.push(i);
            }
        }
        let mut s = q.stats();
        s.early_marked -= fill_marks;
        (marked, dropped, s)
    };
    let (m, md, ms) = run(Ecn::Ect0);
    let (dm, dd, ds) = run(Ecn::NotEct);
    assert!(md.is_empty() && dm.is_empty());
    assert_eq!(m, dd);
    assert_eq!(ms.early_marked, ds.early);
    // Uniformly spaced decisions at p_b = 0.05 give one per ~1/(2·0.05) ≈ 10.5
    // arrivals on average (Floyd & Jacobson §7): 2000 arrivals, ~190.
    assert!((150..240).contains(&m.len()), "{}", m.len());
}

#[test]
fn codel_marks_instead_of_dropping_and_the_mark_ends_the_dequeue() {
    let run = |codepoint: Ecn, ecn: bool| {
        let mut q = Codel::new(&CodelConfig {
            ecn,
            ..CodelConfig::default()
        })
        .unwrap();
        let mut d = Vec::new();
        for i in 0..20 {
            q.enqueue(0, pkt(i, codepoint, 0), &mut d);
        }
        // t = 10 ms: sojourn 10 ms ≥ target 5 ms: first_above_time = 110 ms; sent.
        let p = q.dequeue(10 * MS, &mut d).unwrap();
        assert_eq!((p.seq, p.ecn()), (0, codepoint));
        // t = 120 ms > first_above_time: CoDel enters the dropping state with count 1
        // and drop_next = 120 + 100/√1 = 220 ms.
        let p1 = q.dequeue(120 * MS, &mut d).unwrap();
        let v = q.vars();
        assert!(v.dropping);
        assert_eq!((v.count, v.drop_next), (1, 220 * MS));
        // t = 230 ms ≥ drop_next: count 2, drop_next = 220 + 100/√2 = 290.710678 ms.
        let p2 = q.dequeue(230 * MS, &mut d).unwrap();
        let v = q.vars();
        assert_eq!(v.count, 2);
        assert_eq!(v.drop_next, 220 * MS + 70_710_678);
        (p1, p2, d, q.stats())
    };
    // Marking: the packet the law picks is sent with CE; nothing is dropped.
    let (p1, p2, d, s) = run(Ecn::Ect0, true);
    assert_eq!((p1.seq, p1.ecn()), (1, Ecn::Ce));
    assert_eq!((p2.seq, p2.ecn()), (2, Ecn::Ce));
    assert!(d.is_empty());
    assert_eq!((s.marked, s.dropped), (2, 0));
    // Dropping (Not-ECT, or ECN off): the picked packet is dropped and the next sent.
    for (codepoint, ecn) in [(Ecn::NotEct, true), (Ecn::Ect0, false)] {
        let (p1, p2, d, s) = run(codepoint, ecn);
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [1, 3]);
        assert_eq!((p1.seq, p2.seq), (2, 4));
        assert_eq!(p1.ecn(), codepoint);
        assert_eq!((s.marked, s.dropped), (0, 2));
    }
}

#[test]
fn fq_codel_marks_by_default_and_counts_marks() {
    assert!(FqCodelConfig::default().ecn, "Linux fq_codel: ecn on");
    let run = |codepoint: Ecn, ecn: bool| {
        let mut q = FqCodel::new(&FqCodelConfig {
            ecn,
            ..FqCodelConfig::default()
        })
        .unwrap();
        let mut d = Vec::new();
        for i in 0..20 {
            q.enqueue(0, pkt(i, codepoint, 0), &mut d);
        }
        // As for CoDel above: sent at 10 ms, the control law acts at 120 ms.
        q.dequeue(10 * MS, &mut d).unwrap();
        let p = q.dequeue(120 * MS, &mut d).unwrap();
        (p, d, q.stats())
    };
    let (p, d, s) = run(Ecn::Ect1, true);
    assert_eq!(
        (p.seq, p.ecn(), d.len(), s.marked, s.codel),
        (1, Ecn::Ce, 0, 1, 0)
    );
    let (p, d, s) = run(Ecn::NotEct, true);
    assert_eq!((p.seq, d.len(), s.marked, s.codel), (2, 1, 0, 1));
    let (p, d, s) = run(Ecn::Ect0, false);
    assert_eq!((p.seq, d.len(), s.marked, s.codel), (2, 1, 0, 1));
}

#[test]
fn pie_marks_below_ten_percent_and_drops_above() {
    for (prob, codepoint, ecn, want_mark) in [
        (0.05, Ecn::Ect0, true, true),
        (0.10, Ecn::Ect1, true, true),
        (0.11, Ecn::Ect0, true, false),
        (0.05, Ecn::NotEct, true, false),
        (0.05, Ecn::Ect0, false, false),
    ] {
        let mut q = Pie::new(&PieConfig {
            ecn,
            ..PieConfig::default()
        })
        .unwrap();
        let mut d = Vec::new();
        // Three packets queued (≥ 2 MTU, so early drops are allowed) before the state
        // is set: no burst allowance, a delay above target/2, and the derandomising
        // accumulator at 8.5, where a drop decision is certain (RFC 8033 §5.1).
        for i in 0..3 {
            q.enqueue(0, pkt(i, Ecn::NotEct, 0), &mut d);
        }
        let mut v = q.vars();
        v.prob = prob;
        v.burst_time = 0;
        v.qdelay = 20 * MS;
        v.accu_prob = 8.5;
        v.next_update = Nanos::MAX;
        q.set_vars(v);
        d.clear();
        let queued = q.enqueue(0, pkt(9, codepoint, 0), &mut d);
        let s = q.stats();
        if want_mark {
            assert!(queued && d.is_empty(), "{prob} {codepoint:?}");
            assert_eq!((s.marked, s.early), (1, 0));
            // After a mark the accumulator is left as it was (Linux pie_qdisc_enqueue).
            assert!(q.vars().accu_prob >= 8.5);
        } else {
            assert!(!queued && d.len() == 1, "{prob} {codepoint:?} {ecn}");
            assert_eq!(d[0].ecn(), codepoint);
            assert_eq!((s.marked, s.early), (0, 1));
            assert_eq!(q.vars().accu_prob, 0.0);
        }
    }
}
