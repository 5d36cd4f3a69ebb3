//! FreeBSD 7's SACK recovery, the `newreno` style with SACK (`tcp_input.c`: the
//! duplicate-ACK branch of `tcp_input` with `TF_SACK_PERMIT`; `tcp_sack.c`:
//! `tcp_sack_doack`, `tcp_sack_partialack`, `tcp_sack_output`; `tcp_output.c`'s use of
//! `sack_bytes_rexmit` and `sack_newdata`).
//!
//! - Recovery starts at the third pure duplicate ACK (`t_dupacks == tcprexmtthresh`):
//!   ssthresh is set, `snd_recover` and `sack_newdata` are `snd_nxt`, and cwnd drops to
//!   one segment, which the first hole's retransmission fills.
//! - Every hole below the highest SACKed segment (and below `snd_recover`) is lost and
//!   may be retransmitted, lowest first (`tcp_sack_output`).
//! - Each further duplicate ACK adds a segment to cwnd, up to ssthresh, while the data
//!   in flight beyond the highest SACK plus the retransmitted data outstanding
//!   (`snd_nxt − snd_fack + sack_bytes_rexmit`) is below ssthresh.
//! - A partial ACK sets cwnd to the retransmitted data outstanding plus the new data
//!   sent since recovery began plus one segment (two if it acknowledged more than two),
//!   at most ssthresh (`tcp_sack_partialack`).
//! - The send window in recovery is FreeBSD's own: a retransmission may go while the
//!   retransmitted data outstanding is below cwnd; new data while that plus the new
//!   data sent since recovery began is. No forward retransmissions.
//! - The full ACK ends recovery as NewReno's does
//!   ([`newreno_inflation::exit_cwnd`](super::newreno_inflation::exit_cwnd): RFC 6582's
//!   rule, which gives two segments where FreeBSD 7 gives one when nothing is
//!   outstanding).
//! - Lost retransmissions are not detected: the RTO recovers them.

use super::{AckInfo, DUPTHRESH};
use crate::tcp::cc::Window;
use crate::tcp::sack_scoreboard::Scoreboard;

/// FreeBSD SACK recovery's state.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreebsdSack {
    /// `sack_newdata`: `snd_nxt` when recovery began; new data sent since counts
    /// against cwnd.
    newdata: u64,
}

impl FreebsdSack {
    #[inline]
    pub fn enter(&mut self, w: &mut Window, a: &AckInfo) {
        self.newdata = a.snd_nxt;
        w.cwnd = 1;
    }

    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, sb: &Scoreboard, a: &AckInfo) {
        if a.is_dupack {
            let fack = sb.high_sacked.max(a.snd_una);
            let awnd = (a.snd_nxt - fack) as u32 + sb.retrans_out;
            if awnd < w.ssthresh {
                w.cwnd = (w.cwnd + 1).min(w.ssthresh);
            }
        }
    }

    /// `tcp_sack_partialack`.
    #[inline]
    pub fn partial_ack(&mut self, w: &mut Window, sb: &Scoreboard, a: &AckInfo) {
        let segs = if a.acked > 2 { 2 } else { 1 };
        let sent = sb.retrans_out + (a.snd_nxt - self.newdata) as u32;
        w.cwnd = (sent + segs).min(w.ssthresh).max(1);
    }

    /// In recovery: whether cwnd lets a retransmission (`retx`) or a new segment go.
    #[inline]
    pub fn window_allows(&self, w: &Window, sb: &Scoreboard, retx: bool, snd_nxt: u64) -> bool {
        let rexmit = sb.retrans_out;
        if retx {
            rexmit < w.cwnd
        } else {
            rexmit + ((snd_nxt - self.newdata) as u32) < w.cwnd
        }
    }
}

/// The third pure duplicate ACK (`t_dupacks == tcprexmtthresh`).
pub fn time_to_recover(dupacks: &mut u32, is_dupack: bool) -> bool {
    if !is_dupack {
        return false;
    }
    *dupacks += 1;
    *dupacks == DUPTHRESH
}

/// Every hole below the highest SACKed segment and below `high_seq` (`snd_recover`).
pub fn mark_lost(sb: &mut Scoreboard, high_seq: u64, snd_una: u64) -> u32 {
    let to = sb.high_sacked.min(high_seq);
    sb.mark_lost(snd_una, to)
}
