//! Linux 2.6.25 with SACK and FACK on (its defaults): forward-acknowledgment loss
//! detection with rate-halving's window (`tcp_input.c`: `tcp_time_to_recover`,
//! `tcp_update_scoreboard`, `tcp_mark_head_lost`, `tcp_fastretrans_alert`,
//! `tcp_cwnd_down`).
//!
//! - Recovery starts when the highest SACKed segment lies more than `reordering` = 3
//!   above `snd_una` (`fackets_out > reordering`), or something is already marked lost.
//! - In recovery, on a duplicate ACK, and on an ACK that SACKs new data while
//!   `fackets_out > reordering` (on a partial ACK only the latter), the first
//!   `fackets_out − reordering` segments (at least one) are marked lost, never at or
//!   beyond `high_seq`.
//! - cwnd follows [`rate_halving`](super::rate_halving), on ACKs that acknowledge or
//!   SACK something (`FLAG_ANY_PROGRESS`) only.
//! - A retransmission is deemed lost again once a segment sent after it is SACKed
//!   (`tcp_mark_lost_retrans`; the sender's scoreboard does that).
//!
//! Not modelled: FACK's head-timeout marking, adaptive `reordering`, the small-window
//! trigger of `tcp_time_to_recover`.

use super::rate_halving::RateHalving;
use super::{AckInfo, DUPTHRESH};
use crate::tcp::cc::{AnyCc, Window};
use crate::tcp::sack_scoreboard::Scoreboard;

const REORDERING: u64 = DUPTHRESH as u64;

/// FACK recovery: rate-halving's toggle.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fack {
    halving: RateHalving,
}

impl Fack {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        self.halving.reset();
        if a.advanced || a.newly_sacked > 0 {
            self.halving.cwnd_down(w, cc, a.in_flight);
        }
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        if a.newly_sacked > 0 {
            self.halving.cwnd_down(w, cc, a.in_flight);
        }
    }

    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        self.halving.cwnd_down(w, cc, a.in_flight);
    }
}

/// `tcp_time_to_recover`: a loss is already known, or `fackets_out > reordering`.
pub fn time_to_recover(sb: &Scoreboard, snd_una: u64) -> bool {
    sb.lost_out > 0 || sb.fackets(snd_una) > REORDERING
}

/// `tcp_fastretrans_alert`'s `do_lost`, then `tcp_mark_head_lost`.
pub fn mark_lost(sb: &mut Scoreboard, high_seq: u64, a: &AckInfo) -> u32 {
    let una = a.snd_una;
    let beyond = sb.fackets(una) > REORDERING;
    let do_lost = if a.advanced {
        beyond
    } else {
        a.is_dupack || (a.newly_sacked > 0 && beyond)
    };
    if do_lost {
        let lost = sb.fackets(una).saturating_sub(REORDERING).max(1);
        sb.mark_lost(una, (una + lost).min(high_seq))
    } else {
        0
    }
}
