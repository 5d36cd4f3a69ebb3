//! collateral's packet-level simulator: a dumbbell with an asymmetric bottleneck, bulk TCP
//! and real-time CBR flows, and the measurements of SPEC §6.
//!
//! Time is integer nanoseconds throughout; randomness comes from per-component streams
//! derived from the scenario's seed, so the same scenario and seed give identical
//! results on any machine and any number of threads.

pub mod batch;
pub mod bottleneck;
pub mod dist;
pub mod engine;
pub mod limits;
pub mod link;
pub mod measure;
pub mod metrics;
pub mod quality;
pub mod rng;
pub mod scenario;
pub mod schema;
pub mod sim;
pub mod tcp;
pub mod traffic;
pub mod web;

pub use collateral_queue as queue;
pub use metrics::TrialResult;
pub use scenario::{Direction, Scenario};
pub use sim::{simulate, Simulation};
