//! TCP at segment level: a bulk sender with loss recovery and pluggable congestion
//! control, and a receiver with cumulative and delayed ACKs.
//!
//! Sequence numbers count segments, not bytes: every data segment carries `mss` payload
//! bytes (a bulk sender always has a full segment to send), so nothing is lost by it.

pub mod bbr;
pub mod cc;
#[cfg(test)]
mod cc_op_harness;
pub mod cubic;
pub mod dctcp;
pub mod htcp;
pub mod newreno;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rto;
pub mod sack_scoreboard;
pub mod sender;

pub use cc::{
    AnyCc, CaState, CcKind, CongestionControl, EcnAck, Growth, NewReno, SlowStart, Window,
};
pub use collateral_model::tcp::{profile, Congestion, RecoveryStyle, TcpConfig, TcpEcn};
pub use profile::Profile;
pub use rto::RtoEstimator;

pub use rate::RateSample;
pub use receiver::Receiver;
pub use sack_scoreboard::SackBlock;
pub use sender::Sender;

/// Counters a sender keeps for the summary.
#[derive(Debug, Clone, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window reductions for ECN-Echo.
    pub ecn_reductions: u64,
}
