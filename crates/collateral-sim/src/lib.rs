//! collateral's packet-level simulator: the discrete-event clock that runs the model
//! (`collateral-model`: scenario, bottleneck, traffic, measurements) with simulated
//! hosts and links and TCP's behaviour (senders, receivers, congestion control).
//! What it adds to the model is what only a simulated clock needs: the event queue
//! ([`engine`]), the access links feeding the bottleneck ([`link`]), TCP ([`tcp`]) and
//! the trial loop ([`sim`]).
//!
//! The model's modules are re-exported under their old paths (`collateral_sim::scenario`,
//! ...), so code written against the simulator alone keeps working.
//!
//! Time is integer nanoseconds throughout; randomness comes from per-component streams
//! derived from the scenario's seed, so the same scenario and seed give identical
//! results on any machine and any number of threads.

pub mod batch;
pub mod engine;
pub mod link;
pub mod sim;
pub mod tcp;

pub use collateral_model::CHECKED;
pub use collateral_model::{
    bottleneck, clock, delay_line, dist, error, limits, measure, measured, media, metrics, quality,
    ramp, rate, resp_probe, rng, rrul, scenario, schema, scores, traffic, units, web, web_records,
};
pub use collateral_queue as queue;
pub use metrics::TrialResult;
pub use scenario::{Direction, Scenario};
pub use sim::{simulate, Simulation};
