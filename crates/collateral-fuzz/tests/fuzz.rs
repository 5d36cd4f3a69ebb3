//! The fuzz property in CI: fixed seeds and a bounded number of cases (about 30 s on 2
//! cores in the test-release profile, the core's overflow checks and debug assertions
//! on).
//! Long coverage-guided runs: `fuzz/README.md`.

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

/// The core's property in two halves of the cases, from two seeds, so that the test
/// harness runs them on two threads at once: half the wall time on two cores.
macro_rules! the_core_never_panics {
    ($name:ident, $seed:expr) => {
        proptest! {
            #![proptest_config(Config {
                cases: cases().div_ceil(2),
                rng_seed: RngSeed::Fixed($seed),
                failure_persistence: None,
                ..Config::default()
            })]

            /// Any edit of a real scenario: an error or a finished (bounded) trial,
            /// never a panic.
            #[test]
            fn $name(data in prop::collection::vec(any::<u8>(), 0..512)) {
                let _ = collateral_fuzz::run(&data);
            }
        }
    };
}

the_core_never_panics!(the_core_never_panics, seed());
the_core_never_panics!(
    the_core_never_panics_other_half,
    seed().wrapping_add(1 << 32)
);

proptest! {
    #![proptest_config(Config {
        cases: cases() / 3,
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: None,
        ..Config::default()
    })]

    /// Any edit of a discipline's configuration: refused naming the key at fault, or
    /// built and run with packets, never a panic. A configuration that is a JSON object
    /// with a known `kind` is refused with a key path (a missing or unknown `kind`, or a
    /// root that is not an object, is the document's fault as a whole).
    #[test]
    fn aqm_configurations_are_refused_at_a_key_or_run(
        data in prop::collection::vec(any::<u8>(), 0..256)
    ) {
        if let Err(e) = collateral_fuzz::run_aqm(&data) {
            let (js, _) = collateral_fuzz::aqm_json(&data);
            let v: serde_json::Value = serde_json::from_str(&js).unwrap();
            let known = v.get("kind").and_then(|k| k.as_str()).is_some_and(|k| {
                collateral_sim::queue::DisciplineConfig::kind_info(k).is_some()
            });
            prop_assert!(!known || !e.path.is_empty(), "{js}: {e} has no key path");
        }
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
