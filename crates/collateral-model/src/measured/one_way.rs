//! One direction of a probe stream with one-way delays as a CBR flow's summary and
//! trace rows: requests up, replies down, their delays over a base.

use serde::Serialize;

use super::{secs, ProbeRecords, ARRIVED, LOST, LOST_DOWN, LOST_UP};
use crate::measure::{owd_figures, Fate};
use crate::metrics::{quantile_by, CbrTrace};
use crate::units::{Direction, Nanos};

/// A direction of a probe stream with one-way delays: the CBR group's columns.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredOneWay {
    pub flow: u32,
    pub direction: &'static str,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub in_flight: u64,
    pub loss_rate: f64,
    pub base_owd_s: f64,
    pub delay_median_s: f64,
    pub delay_p95_s: f64,
    pub delay_max_s: f64,
    pub owd_mean_s: f64,
    pub r_factor: f64,
    pub mos: f64,
    pub over_100ms: f64,
    pub over_500ms: f64,
    pub over_1000ms: f64,
}

/// One direction of probe stream `p`: the packets each way (requests up, replies down;
/// a reply exists only for a request that arrived; a probe lost without saying which
/// way counts as a lost request), their one-way delays over `base` (the scenario's
/// base delay when given, else the smallest seen) and the CBR summary of those after
/// the warm-up.
pub(super) fn one_way(
    p: &ProbeRecords,
    owd: &[i64],
    d: Direction,
    flow: u32,
    base: Option<Nanos>,
    warmup: Nanos,
    tr: &mut CbrTrace,
) -> MeasuredOneWay {
    let up = d == Direction::Up;
    let min_owd = owd.iter().copied().filter(|&o| o >= 0).min().unwrap_or(0) as Nanos;
    let base = base.unwrap_or(min_owd);
    let (mut sent, mut lost) = (0u64, 0u64);
    let mut delays: Vec<Nanos> = Vec::new();
    for (k, (&s, &f)) in p.sent_ns.iter().zip(&p.fate).enumerate() {
        let exists = up || f == ARRIVED || f == LOST_DOWN;
        if !exists {
            continue;
        }
        let gone = if up {
            f == LOST_UP || f == LOST
        } else {
            f == LOST_DOWN
        };
        let o = owd[k];
        let arrived = !gone && o >= 0;
        // A reply leaves when its request arrives.
        let t = if up { s } else { s + owd_up_of(p, k) };
        tr.flow.push(flow);
        tr.direction.push(d.index() as u8);
        tr.seq.push(k as u64);
        tr.sent.push(t);
        tr.bytes.push(p.bytes);
        tr.owd_s.push(if arrived { secs(o) } else { f64::NAN });
        tr.extra_delay_s.push(if arrived {
            (o - base as i64) as f64 / 1e9
        } else {
            f64::NAN
        });
        tr.fate
            .push(if arrived { Fate::Arrived } else { Fate::Lost } as u8);
        if s < warmup || (!gone && o < 0) {
            continue;
        }
        sent += 1;
        if gone {
            lost += 1;
        } else {
            delays.push(o as Nanos);
        }
    }
    delays.sort_unstable();
    let n = delays.len();
    let extra = |i: usize| (delays[i] as i64 - base as i64) as f64 / 1e9;
    let f = owd_figures(&delays, lost, sent);
    MeasuredOneWay {
        flow,
        direction: d.name(),
        sent,
        received: n as u64,
        lost,
        in_flight: 0,
        loss_rate: f.loss_rate,
        base_owd_s: base as f64 / 1e9,
        delay_median_s: quantile_by(n, 0.5, extra),
        delay_p95_s: quantile_by(n, 0.95, extra),
        delay_max_s: if n > 0 { extra(n - 1) } else { f64::NAN },
        owd_mean_s: f.owd_mean_s,
        r_factor: f.r_factor,
        mos: f.mos,
        over_100ms: f.over[0],
        over_500ms: f.over[1],
        over_1000ms: f.over[2],
    }
}

fn owd_up_of(p: &ProbeRecords, k: usize) -> Nanos {
    p.owd_up_ns.as_ref().map_or(0, |v| v[k].max(0) as Nanos)
}
