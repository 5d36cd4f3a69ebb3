//! Seeded random streams, one per component of a trial, so that adding a flow does not
//! shift the random numbers another component sees, and so that the testbed's endpoints
//! draw exactly what the simulator's do (a CBR sender in its namespace rebuilds its
//! flow's stream from the scenario's seed and the flow's index).

use collateral_queue::rng::{mix64, GOLDEN_GAMMA};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// The stream of `component` in a trial seeded with `seed`: the SplitMix64 finaliser
/// spreads (seed, component) over the generator's state.
pub fn stream(seed: u64, component: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(mix64(seed ^ component.wrapping_mul(GOLDEN_GAMMA)))
}

/// The bottleneck directions' wire-loss streams (down, up).
pub const LINK_STREAMS: [u64; 2] = [1, 2];
/// The seeds of the directions' queue disciplines (RED's drops, FQ-CoDel's hash).
pub const QUEUE_STREAMS: [u64; 2] = [17, 18];
/// CBR and application flow `j` (its index among the scenario's `cbr`) uses
/// `CBR_STREAMS + j`: its start phase, gaps and sizes.
pub const CBR_STREAMS: u64 = 1 << 24;
/// Bulk TCP flow `i` uses `TCP_STREAMS + i`.
pub const TCP_STREAMS: u64 = 1 << 32;
/// Web user `u` uses `USER_STREAMS + u`; the `n`th web connection `CONN_STREAMS + n`.
pub const USER_STREAMS: u64 = TCP_STREAMS << 8;
pub const CONN_STREAMS: u64 = TCP_STREAMS << 16;

/// The seed a direction's queue discipline is built with.
pub fn queue_seed(seed: u64, direction: usize) -> u64 {
    use rand::Rng;
    stream(seed, QUEUE_STREAMS[direction]).next_u64()
}
