//! The load of the responsiveness test (draft-ietf-ippm-responsiveness -09, "working
//! conditions"): it opens one load connection per direction, then one more per
//! interval, up to MNP = 16 per direction, both directions at once (as Apple's
//! networkQuality does by default), each an endless HTTP/2 transfer: here a bulk TCP
//! flow. The draft stops adding connections once the goodput is saturated (its
//! moving-average criterion, [`crate::scores::responsiveness`]); the scenario fixes its
//! flows in advance, so all sixteen start on schedule and the saturation point is found
//! afterwards ([`crate::scores`]): beyond saturation the extra flows add queueing only
//! where the queue is a FIFO, which is what the test means to expose. Its foreign probes
//! (a new connection's handshake, TLS round trip and 1-byte request: each one round trip
//! of small packets on a fresh flow) are the workload's UDP probe pairs, sparse flows
//! to any flow queueing; its self probes are the load flows' own RTT samples.

use crate::units::{Direction, Nanos};

/// Maximum number of load connections per direction (the draft's MNP).
pub const MNP: u64 = 16;

/// The ramp's flows: (direction, start), sixteen downloads then sixteen uploads, the
/// k-th of each starting at `start + k · interval`.
pub fn flows(start: Nanos, interval: Nanos) -> Vec<(Direction, Nanos)> {
    [Direction::Down, Direction::Up]
        .into_iter()
        .flat_map(|d| (0..MNP).map(move |k| (d, start + k * interval)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_more_flow_each_way_per_interval_up_to_sixteen() {
        let f = flows(5_000, 1_000);
        assert_eq!(f.len(), 32);
        assert_eq!(f[0], (Direction::Down, 5_000));
        assert_eq!(f[15], (Direction::Down, 20_000));
        assert_eq!(f[16], (Direction::Up, 5_000));
        assert_eq!(f[31], (Direction::Up, 20_000));
    }
}
