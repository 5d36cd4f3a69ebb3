//! The simulator's integration tests, one module per concern, built as one test binary
//! (one compile and link instead of one per file: the suite's budget).

mod support;

mod aqm;
mod bbr;
mod cbr_schedule;
mod dumbbell;
mod framing;
mod media;
mod quality;
mod responsiveness;
mod sack;
mod schema;
mod vocabulary;
mod web;
