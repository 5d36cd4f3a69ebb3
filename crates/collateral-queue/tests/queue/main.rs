//! The queue disciplines' integration tests, one module per concern, built as one test
//! binary (one compile and link instead of one per file: the suite's budget).

mod disciplines;
mod ecn;
mod invariants;
mod vocabulary;
