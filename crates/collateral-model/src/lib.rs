//! What both of collateral's clocks run: the scenario and its limits, the bottleneck
//! (rate, queue discipline, framing), the traffic sources, and the measurements taken
//! from what happened. The discrete-event simulator (`collateral-sim`) and the
//! real-time emulator (`collateral-emu`) each drive these with their own time, so a
//! trial means the same in both; neither clock's machinery (the event loop, TCP's
//! behaviour, sockets) is in here, which is why the emulator can depend on this crate
//! alone.
//!
//! TCP appears only as configuration ([`tcp`]): the scenario names a stack and its
//! switches as data, and the simulator's TCP implements them.
//!
//! Time is integer nanoseconds throughout ([`units`]); randomness comes from
//! per-component streams derived from the scenario's seed ([`rng`]).

pub mod bottleneck;
pub mod clock;
pub mod delay_line;
pub mod dist;
pub mod docsis;
pub mod error;
pub mod leo;
pub mod limits;
pub mod loss;
pub mod measure;
pub mod measured;
pub mod media;
pub mod metrics;
pub mod path_delay;
pub mod quality;
pub mod ramp;
pub mod rate;
pub mod resp_probe;
pub mod rng;
pub mod rrul;
pub mod scenario;
pub mod schedule;
pub mod schema;
pub mod scores;
pub mod stored_json;
pub mod tcp;
pub mod traffic;
pub mod units;
pub mod web;
pub mod web_records;

pub use collateral_queue as queue;
pub use error::ConfigError;
pub use metrics::TrialResult;
pub use scenario::Scenario;
pub use units::{Direction, Nanos};

/// Whether this build checks the model's invariants as it runs (debug assertions and
/// overflow checks: Cargo's `dev` profile and the tests' `test-release`). Its results
/// are the same as the release build's, its trials slower: a timing taken with it says
/// nothing about the release build, so the benchmarks refuse it and `--version` says it.
pub const CHECKED: bool = cfg!(debug_assertions);

#[cfg(test)]
mod tests {
    /// `CHECKED` speaks for overflow checks too: the profiles turn both on together.
    #[test]
    fn checked_means_overflow_checks_too() {
        let max = std::hint::black_box(u8::MAX);
        let overflowed = std::panic::catch_unwind(|| max + 1).is_err();
        assert_eq!(overflowed, super::CHECKED);
    }
}
