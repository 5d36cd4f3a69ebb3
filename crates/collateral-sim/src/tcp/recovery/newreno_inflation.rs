//! NewReno fast recovery with window inflation, without SACK: RFC 6582 §3.2, as FreeBSD
//! 7 runs it for a connection without SACK (`tcp_input.c`: the duplicate-ACK branch of
//! `tcp_input` and `tcp_newreno_partial_ack`).
//!
//! - Entering (step 2): the sender retransmits the head at once; cwnd = ssthresh + 3
//!   segments for the three duplicate ACKs, less the segments RFC 3042 limited transmit
//!   already sent for the first two (FreeBSD: `ssthresh + maxseg · (t_dupacks −
//!   snd_limited)`).
//! - Each further duplicate ACK (step 3) means a segment has left the network: cwnd
//!   grows by one ("inflation"), so new data can keep the ACK clock going.
//! - A partial ACK (step 4): the sender retransmits the new head; cwnd is deflated by
//!   the amount acknowledged and one segment added back.
//! - The full ACK (§3.2 step 3, "full acknowledgment"): cwnd =
//!   min(ssthresh, max(FlightSize, SMSS) + SMSS). FreeBSD 7 takes `snd_max − th_ack +
//!   maxseg` when that is below ssthresh, else ssthresh: the same except when nothing
//!   is outstanding (one segment there, two here). FreeBSD's SACK recovery
//!   ([`freebsd_sack`](super::freebsd_sack)) ends the same way.
//!
//! Whether the RTO restarts on every partial ACK ("Slow-but-Steady") or the first only
//! ("Impatient", §4) is the sender's `slow_but_steady` switch.

use super::{AckInfo, DUPTHRESH};
use crate::tcp::cc::Window;

/// RFC 6582 window inflation. The style keeps no state of its own: FlightSize and the
/// inflated cwnd say everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NewrenoInflation;

impl NewrenoInflation {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, a: &AckInfo) {
        w.cwnd = w.ssthresh + DUPTHRESH - a.limited_sent;
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window) {
        w.cwnd += 1;
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, a: &AckInfo) {
        w.cwnd = (w.cwnd.saturating_sub(a.acked) + 1).max(1);
    }
}

/// cwnd after the full ACK: min(ssthresh, max(FlightSize, 1) + 1).
#[inline]
pub fn exit_cwnd(w: &Window, flight: u32) -> u32 {
    w.ssthresh.min(flight.max(1) + 1)
}
