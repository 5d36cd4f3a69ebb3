//! SACK-based loss recovery by RFC 6675 (§4 `IsLost()`, §5 the algorithm), with the
//! window of RFC 6937 PRR ([`prr`](super::prr)): the `prr` style with SACK, standing in
//! for modern Linux (whose RACK loss detection is approximated by RFC 6675's rule).
//!
//! - Only an ACK that SACKs new data is a duplicate ACK (§5). Recovery starts at the
//!   DupThresh-th (3rd) one, or as soon as `IsLost(HighACK + 1)`: three segments are
//!   SACKed, or a loss is already marked.
//! - On entry the first unacknowledged segment is lost (§5 step (4.3): it is
//!   retransmitted at once); in recovery a segment is lost once DupThresh SACKed
//!   segments lie above it.
//! - cwnd follows RFC 6937 with DeliveredData = newly acknowledged and not SACKed
//!   before + newly SACKed; an ACK that delivers nothing changes nothing (Linux
//!   `tcp_cwnd_reduction` returns early).
//! - Lost retransmissions are detected as Linux's `tcp_mark_lost_retrans` does (RACK
//!   does the same by send time).
//!
//! `NextSeg()` (§4: lost first, then new data, then the forward retransmission of rule
//! 3; the rescue retransmission of rule 4 is not modelled) is the sender's.

use super::prr::Prr;
use super::{AckInfo, DUPTHRESH};
use crate::tcp::cc::Window;
use crate::tcp::sack_scoreboard::Scoreboard;

/// RFC 6675 recovery with PRR's counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rfc6675 {
    pub(super) prr: Prr,
}

impl Rfc6675 {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, a: &AckInfo) {
        self.prr.start(a.flight);
        if a.delivered > 0 {
            self.prr.reduce(w, a, true);
        }
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if a.delivered > 0 {
            self.prr.reduce(w, a, false);
        }
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, a: &AckInfo) {
        self.dup_ack(w, a);
    }
}

/// §5: counts a DupAck (an ACK that SACKs new data) and says whether recovery starts.
pub fn time_to_recover(sb: &Scoreboard, dupacks: &mut u32, newly_sacked: u32) -> bool {
    if newly_sacked == 0 {
        return false;
    }
    *dupacks += 1;
    *dupacks >= DUPTHRESH || sb.sacked_out >= DUPTHRESH || sb.lost_out > 0
}

/// §4 `IsLost()`: every segment below the DupThresh-th highest SACKed one.
pub fn mark_lost(sb: &mut Scoreboard, snd_una: u64) -> u32 {
    match sb.nth_highest_sacked(snd_una, DUPTHRESH) {
        Some(b) => sb.mark_lost(snd_una, b),
        None => 0,
    }
}

/// §5 (4.3): the first segment presumed dropped goes at once.
pub fn mark_lost_at_entry(sb: &mut Scoreboard, snd_una: u64) -> u32 {
    sb.mark_lost(snd_una, snd_una + 1)
}
