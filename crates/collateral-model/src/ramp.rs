//! The load of the responsiveness test (draft-ietf-ippm-responsiveness -09, "working
//! conditions"): it opens INP = 1 load connection per direction, then INC = 1 more per
//! interval ID, up to MNP = 16 per direction, both directions at once (as Apple's
//! networkQuality does by default), each an endless HTTP/2 transfer: here a bulk TCP
//! flow. Connections are added only while the direction's goodput is not saturated
//! (the moving-average criterion, [`crate::scores::responsiveness::saturation`]); once
//! it holds, the count is held and the probing goes on. That is the draft's idea of
//! working conditions ("if new connections leave the throughput the same, saturation
//! has been reached", drafts -00 to -09); the pseudo-code of -09 lists "create INC
//! additional connections" before its saturation test, at every interval, which read
//! literally keeps adding up to MNP: the hold is the reading taken here.
//!
//! The scenario carries all sixteen flows of each direction with their planned starts
//! ([`flows`]); the simulator starts the first of each at once and asks a [`Ramp`] at
//! the end of every interval whether to start the next. The foreign probes are new
//! connections ([`crate::resp_probe`]); the self probes are the load flows' own RTT
//! samples plus what waits in the sender's socket buffer ([`crate::socket_buffer`]).

use crate::scores::responsiveness::saturation;
use crate::units::{Direction, Nanos};

/// Maximum number of load connections per direction (the draft's MNP).
pub const MNP: u64 = 16;

/// The ramp's flows: (direction, start), sixteen downloads then sixteen uploads, the
/// k-th of each planned at `start + k · interval` (started only while the ramp adds).
pub fn flows(start: Nanos, interval: Nanos) -> Vec<(Direction, Nanos)> {
    [Direction::Down, Direction::Up]
        .into_iter()
        .flat_map(|d| (0..MNP).map(move |k| (d, start + k * interval)))
        .collect()
}

/// The ramp's decisions, one direction per index (0 = down, 1 = up): fed the bytes
/// each direction's load flows have had acknowledged at the end of every interval, it
/// says how many flows run in the next. Clock-free: the caller brings the counts at
/// its interval boundaries (the simulator's events, or the testbed's clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    interval_s: f64,
    /// Bytes acknowledged in each interval so far, per direction.
    bytes: [Vec<f64>; 2],
    last_acked: [u64; 2],
    /// Flows in use now, per direction (0 for a direction without load).
    pub flows: [u64; 2],
    /// The interval (0-based) at whose end each direction's goodput saturated.
    pub saturated: [Option<usize>; 2],
    /// Flows in use during each interval, per direction: entry `k` is interval `k`.
    pub history: Vec<[u64; 2]>,
}

impl Ramp {
    /// A ramp with INP = 1 flow in each direction that has load (`active`).
    pub fn new(interval_ns: Nanos, active: [bool; 2]) -> Self {
        let flows = active.map(u64::from);
        Ramp {
            interval_s: interval_ns as f64 / 1e9,
            bytes: [Vec::new(), Vec::new()],
            last_acked: [0; 2],
            flows,
            saturated: [None; 2],
            history: vec![flows],
        }
    }

    /// The end of an interval: `acked` is each direction's total acknowledged bytes
    /// (all its load flows, from the start). A direction not yet saturated is tested
    /// (its last MAD moving averages within SDT) and, if still not, gets one more flow
    /// up to MNP. Returns the flow counts for the next interval.
    pub fn end_interval(&mut self, acked: [u64; 2]) -> [u64; 2] {
        let k = self.history.len() - 1;
        for (d, &acked) in acked.iter().enumerate() {
            if self.flows[d] == 0 {
                continue;
            }
            self.bytes[d].push(acked.saturating_sub(self.last_acked[d]) as f64);
            self.last_acked[d] = acked;
            if self.saturated[d].is_some() {
                continue;
            }
            if saturation(&self.bytes[d], self.interval_s).0.is_some() {
                self.saturated[d] = Some(k);
            } else {
                self.flows[d] = (self.flows[d] + 1).min(MNP);
            }
        }
        self.history.push(self.flows);
        self.flows
    }

    /// When the load as a whole saturated: the later direction's interval, none while
    /// a loaded direction has not.
    pub fn saturated_interval(&self) -> Option<usize> {
        let mut at = None;
        for d in 0..2 {
            if self.history[0][d] > 0 {
                at = Some(at.unwrap_or(0).max(self.saturated[d]?));
            }
        }
        at
    }

    /// The flows in use per interval as text, `down+up` per interval: "1+1 2+2 3+2".
    pub fn history_text(&self) -> String {
        let v: Vec<String> = self
            .history
            .iter()
            .map(|f| format!("{}+{}", f[0], f[1]))
            .collect();
        v.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_planned_flows_each_way_one_interval_apart() {
        let f = flows(5_000, 1_000);
        assert_eq!(f.len(), 32);
        assert_eq!(f[0], (Direction::Down, 5_000));
        assert_eq!(f[15], (Direction::Down, 20_000));
        assert_eq!(f[16], (Direction::Up, 5_000));
        assert_eq!(f[31], (Direction::Up, 20_000));
    }

    /// Downstream goodput per 1 s interval 1, 2, 4, 8, then 10 MB: the criterion first
    /// holds at the end of interval 9 (worked in `scores::responsiveness`). The ramp adds
    /// a flow at the end of intervals 0..=8 (1 → 10 flows) and holds 10 from there. The
    /// upload moves 1 MB every interval: four equal moving averages first at the end of
    /// interval 6 (the moving averages start at interval 3): flows 1 → 7, held at 7.
    #[test]
    fn the_ramp_adds_a_flow_per_interval_until_saturation_then_holds() {
        let mut r = Ramp::new(1_000_000_000, [true, true]);
        let down = [1.0, 2.0, 4.0, 8.0];
        let (mut td, mut tu) = (0.0, 0.0);
        for k in 0..14 {
            td += 1e6 * down.get(k).copied().unwrap_or(10.0);
            tu += 1e6;
            r.end_interval([td as u64, tu as u64]);
        }
        assert_eq!(r.saturated, [Some(9), Some(6)]);
        assert_eq!(r.saturated_interval(), Some(9));
        assert_eq!(r.flows, [10, 7]);
        // Interval k ran with k + 1 flows until the hold.
        assert_eq!(r.history[0], [1, 1]);
        assert_eq!(r.history[6], [7, 7]);
        assert_eq!(r.history[7], [8, 7]);
        assert_eq!(r.history[9], [10, 7]);
        assert_eq!(r.history[14], [10, 7]);
        assert!(r.history_text().starts_with("1+1 2+2 3+3"));
    }

    /// A goodput that never settles (doubling every interval) ramps to MNP and stays.
    #[test]
    fn an_unsaturated_ramp_stops_at_sixteen_and_a_quiet_direction_stays_at_zero() {
        let mut r = Ramp::new(1_000_000_000, [true, false]);
        let mut t = 0u64;
        for k in 0..30 {
            t += 1000 << k.min(40);
            r.end_interval([t, 0]);
        }
        assert_eq!(r.flows, [MNP, 0]);
        assert_eq!(r.saturated, [None, None]);
        assert_eq!(r.saturated_interval(), None);
    }
}
