//! A call run on the testbed: the records its endpoints logged (the sender's packets,
//! frames and targets; the receiver's arrivals; the router's drops), checked where they
//! enter and measured by [`media_summary`], as the simulator's own call is.

use super::criteria::{media_summaries, Call};
use super::MediaRecords;
use crate::metrics::{goodput_of, TrialResult};
use crate::scenario::Scenario;
use crate::traffic::LOST_ON_WIRE;

/// Checks `rec` against itself: one entry per packet in each per-packet column, every
/// frame's packets among them, each arrival after its frame's capture and the targets
/// in time order. One line naming the column at fault.
pub fn check_records(rec: &MediaRecords) -> Result<(), String> {
    let n = rec.sent.len();
    for (name, len) in [
        ("arrived", rec.arrived.len()),
        ("lens", rec.lens.len()),
        ("frame", rec.frame.len()),
    ] {
        if len != n {
            return Err(format!(
                "media records: {name}: {len} entries for {n} packets sent"
            ));
        }
    }
    for (k, &(cap, first, count)) in rec.frames.iter().enumerate() {
        let end = first.checked_add(count as u64).filter(|&e| e <= n as u64);
        let Some(end) = end else {
            return Err(format!(
                "media records: frames[{k}]: packets {first}+{count} beyond the {n} sent"
            ));
        };
        for i in first as usize..end as usize {
            let a = rec.arrived[i];
            if a < LOST_ON_WIRE && (a < cap || rec.sent[i] < cap) {
                return Err(format!(
                    "media records: packet {i}: sent or arrived before its frame's capture"
                ));
            }
        }
    }
    let ordered = rec.target.windows(2).all(|w| w[0].0 <= w[1].0);
    if !ordered || rec.target.iter().any(|t| !(t.1.is_finite() && t.1 >= 0.0)) {
        return Err("media records: target: times must not go back, rates finite".into());
    }
    Ok(())
}

/// Adds the testbed's call to its trial result: the `media` summary (flow id after the
/// TCP and CBR flows, as in the simulator) and trace, from checked records.
pub fn add_testbed_call(
    r: &mut TrialResult,
    sc: &Scenario,
    rec: &MediaRecords,
) -> Result<(), String> {
    let cfg = match sc.media.as_slice() {
        [] => return Err("media records for a scenario without a call".into()),
        [one] => one,
        _ => return Err("media records: the testbed runs one call".into()),
    };
    check_records(rec)?;
    let flow = (sc.tcp.len() + sc.cbr.len()) as u32;
    let tcp = &r.summary.tcp;
    let calls = [Call { flow, cfg, rec }];
    let s = media_summaries(
        sc,
        &calls,
        |d| goodput_of(tcp, d.name()),
        Some(&mut r.traces.media),
    );
    r.summary.media = s;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::MediaConfig;
    use crate::traffic::{DROPPED, IN_FLIGHT};

    const MS: u64 = 1_000_000;

    /// Two frames (0 and 100 ms) of two packets each.
    fn records() -> MediaRecords {
        MediaRecords {
            sent: vec![0, 0, 100 * MS, 100 * MS],
            arrived: vec![30 * MS, 40 * MS, DROPPED, 150 * MS],
            lens: vec![1000; 4],
            frame: vec![0, 0, 1, 1],
            frames: vec![(0, 0, 2), (100 * MS, 2, 2)],
            target: vec![(0, 150_000.0), (500 * MS, 300_000.0)],
            feedback_sent: 3,
            feedback_lost: 0,
        }
    }

    #[test]
    fn records_that_do_not_fit_together_are_named() {
        assert!(check_records(&records()).is_ok());
        let bad = |f: &dyn Fn(&mut MediaRecords)| {
            let mut r = records();
            f(&mut r);
            check_records(&r).unwrap_err()
        };
        for (e, what) in [
            (bad(&|r| r.lens.truncate(r.lens.len() - 1)), "lens"),
            (bad(&|r| r.frames[1].2 = 3), "frames[1]"),
            (bad(&|r| r.frames[1].1 = u64::MAX), "frames[1]"),
            (bad(&|r| r.arrived[3] = 90 * MS), "packet 3"),
            (bad(&|r| r.target.swap(0, 1)), "target"),
            (bad(&|r| r.target[1].1 = f64::NAN), "target"),
        ] {
            assert!(e.contains(what) && !e.contains('\n'), "{e}");
        }
        // A packet still in flight or lost has no arrival to check.
        let mut r = records();
        r.arrived[0] = IN_FLIGHT;
        assert!(check_records(&r).is_ok());
    }

    /// The summary is the simulator's function of the records: in a 1 s run without
    /// warm-up, frame 0 complete after 40 ms, frame 1 incomplete; 3 of 4 packets of
    /// 1000 bytes received = 24 kbit/s; the flow id after one TCP and no CBR flow.
    #[test]
    fn the_call_joins_the_trial_result() {
        let mut sc = Scenario::builder().build();
        sc.duration_ns = 1_000 * MS;
        sc.warmup_ns = 0;
        let mut r = crate::measure::testbed_result(&sc, &[], &[], None).unwrap();
        assert!(add_testbed_call(&mut r, &sc, &records()).is_err());
        sc.media = vec![MediaConfig::default()];
        add_testbed_call(&mut r, &sc, &records()).unwrap();
        let m = &r.summary.media[0];
        assert_eq!(m.flow, sc.tcp.len() as u32 + sc.cbr.len() as u32);
        assert_eq!((m.frames, m.frames_incomplete), (2, 0.5));
        assert_eq!(m.frame_delay_p50_s, 0.04);
        assert_eq!(m.received_bps, 24_000.0);
        assert!(!r.traces.media.time.is_empty());
    }
}
