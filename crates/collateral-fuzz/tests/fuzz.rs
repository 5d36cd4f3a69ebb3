//! The fuzz property in CI: a fixed seed and a bounded number of cases (about a minute
//! on two cores in release). Long coverage-guided runs: `fuzz/README.md`.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

fn cases() -> u32 {
    std::env::var("COLLATERAL_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30_000)
}

/// `COLLATERAL_FUZZ_SEED` explores another sequence (CI keeps 16, so its run is the same
/// every time).
fn seed() -> u64 {
    std::env::var("COLLATERAL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: None,
        ..Config::default()
    })]

    /// Any edit of a real scenario: an error or a finished (bounded) trial, never a
    /// panic.
    #[test]
    fn the_core_never_panics(data in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = collateral_fuzz::run(&data);
    }
}

/// The mutations reach both outcomes (otherwise the property above would be vacuous):
/// some inputs are accepted and simulated, some are refused with a message naming a key.
#[test]
fn inputs_reach_both_verdicts() {
    let (mut ok, mut err) = (0, 0);
    let mut keyed = 0;
    for i in 0..400u32 {
        let data: Vec<u8> = (0..64u32)
            .map(|k| (i.wrapping_mul(2654435761).wrapping_add(k * 97) >> 7) as u8)
            .collect();
        match collateral_fuzz::run(&data) {
            Ok(()) => ok += 1,
            Err(e) => {
                err += 1;
                if e.contains(':') {
                    keyed += 1;
                }
            }
        }
    }
    assert!(ok > 40 && err > 40, "accepted {ok}, refused {err}");
    assert_eq!(keyed, err, "every refusal names where");
}
