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
/// The directions' DOCSIS grant streams (contention points, free capacity, grant
/// positions), their own so that a DOCSIS link moves no other draw.
pub const DOCSIS_STREAMS: [u64; 2] = [33, 34];
/// The directions' satellite-link draws (each interval's rate and delay).
pub const LEO_STREAMS: [u64; 2] = [35, 36];
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
/// The responsiveness test's `n`th foreign probe connection uses `PROBE_STREAMS + n`.
pub const PROBE_STREAMS: u64 = TCP_STREAMS << 20;
/// Bulk TCP flow `i`'s random start offset uses `START_STREAMS + i`: a stream of its
/// own, so that a scenario without offsets draws exactly what it drew before they
/// existed, and adding a spread to one flow moves nothing else.
pub const START_STREAMS: u64 = TCP_STREAMS << 24;
/// The video call's encoder (frame-size noise).
pub const MEDIA_STREAM: u64 = 37;
/// Call `k` > 0 of a scenario with several uses `MEDIA_CALL_STREAMS + k`.
pub const MEDIA_CALL_STREAMS: u64 = 1 << 20;

/// The encoder stream of call `index` (the first keeps a lone call's).
pub fn media_stream(index: usize) -> u64 {
    if index == 0 {
        MEDIA_STREAM
    } else {
        MEDIA_CALL_STREAMS + index as u64
    }
}

/// Bulk flow `index`'s start offset in a trial seeded with `seed`: uniform in
/// `[0, spread_ns)` (0 without a spread).
pub fn start_offset(seed: u64, index: usize, spread_ns: u64) -> u64 {
    use rand::RngExt;
    if spread_ns == 0 {
        return 0;
    }
    stream(seed, START_STREAMS + index as u64).random_range(0..spread_ns)
}

/// The seed a direction's queue discipline is built with.
pub fn queue_seed(seed: u64, direction: usize) -> u64 {
    use rand::Rng;
    stream(seed, QUEUE_STREAMS[direction]).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_component_has_a_stream_of_its_own() {
        // The single streams, and the first of each family (families are 2^24 apart and
        // more, far above every single stream).
        let mut ids = vec![
            LINK_STREAMS[0],
            LINK_STREAMS[1],
            DOCSIS_STREAMS[0],
            DOCSIS_STREAMS[1],
            LEO_STREAMS[0],
            LEO_STREAMS[1],
            QUEUE_STREAMS[0],
            QUEUE_STREAMS[1],
            MEDIA_STREAM,
            MEDIA_CALL_STREAMS,
            CBR_STREAMS,
            TCP_STREAMS,
            USER_STREAMS,
            CONN_STREAMS,
            START_STREAMS,
        ];
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "two components draw from one stream");
        assert!(ids[..10].iter().all(|&i| i < CBR_STREAMS));
    }

    #[test]
    fn start_offsets_are_uniform_in_the_spread_and_fixed_by_seed_and_flow() {
        const SPREAD: u64 = 1_000_000_000;
        assert_eq!(start_offset(7, 0, 0), 0);
        let draws: Vec<u64> = (0..4000).map(|s| start_offset(s, 3, SPREAD)).collect();
        assert!(draws.iter().all(|&d| d < SPREAD));
        // Uniform on [0, 1 s): mean 0.5 s, σ of the mean 0.289 s / √4000 = 4.6 ms; the
        // quarters each hold about 1000 ± 27.
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - 5e8).abs() < 2.5e7, "{mean}");
        for q in 0..4 {
            let n = draws.iter().filter(|&&d| d / (SPREAD / 4) == q).count();
            assert!((880..1120).contains(&n), "quarter {q}: {n}");
        }
        // The same seed and flow, the same offset; another flow or seed, another.
        assert_eq!(start_offset(11, 2, SPREAD), start_offset(11, 2, SPREAD));
        assert_ne!(start_offset(11, 2, SPREAD), start_offset(11, 3, SPREAD));
        assert_ne!(start_offset(11, 2, SPREAD), start_offset(12, 2, SPREAD));
        // A stream of its own: not the flow's own TCP stream's first number.
        use rand::Rng;
        let tcp_first = stream(11, TCP_STREAMS + 2).next_u64();
        assert_ne!(start_offset(11, 2, u64::MAX), tcp_first % u64::MAX);
    }
}
