//! Fast recovery, one module per source. Which one a flow uses follows from its
//! `recovery` style and whether it negotiates SACK:
//!
//! | style          | without SACK                          | with SACK                     |
//! |----------------|---------------------------------------|-------------------------------|
//! | `newreno`      | [`newreno_inflation`] (RFC 6582)      | [`freebsd_sack`] (FreeBSD 7)  |
//! | `rate_halving` | [`rate_halving`] (Linux 2.6.25)       | [`fack`] (Linux 2.6.25, FACK) |
//! | `prr`          | [`prr`] (RFC 6937, Linux ≥ 5.19)      | [`rfc6675`] with PRR's window |
//!
//! Each style is a plain struct holding its own state; [`Recovery`] dispatches to them
//! statically (one `match` per hook, no allocation). The hooks are the moments a
//! recovery algorithm acts on: entering recovery (fast retransmit), a duplicate ACK,
//! a partial ACK, the full ACK that ends recovery, and, for the SACK styles, the rules
//! that decide when recovery starts and which segments are lost. A timeout needs
//! nothing from any of them: the sender's retransmission timer (RFC 6298 §5, with the
//! backoff in [`rto`](super::rto)) resets the scoreboard and the window itself.
//!
//! The sender keeps what every style shares: the RFC 6582 `recover` point, the duplicate
//! ACK count, Linux's non-SACK scoreboard (`sacked_out`, the head marked lost) or the SACK
//! [`Scoreboard`], and the ACK/send paths. The hooks set `cwnd` (and the styles' own
//! counters) only; an algorithm that owns the window (BBR's `cong_control`) gets no
//! window hooks at all, though with SACK the style's loss rules still apply.

pub mod fack;
pub mod freebsd_sack;
pub mod newreno_inflation;
pub mod prr;
pub mod rate_halving;
pub mod rfc6675;

use super::cc::{AnyCc, Window};
use super::sack_scoreboard::Scoreboard;
use super::RecoveryStyle;

pub use fack::Fack;
pub use freebsd_sack::FreebsdSack;
pub use newreno_inflation::NewrenoInflation;
pub use prr::Prr;
pub use rate_halving::RateHalving;
pub use rfc6675::Rfc6675;

/// Linux's `tcp_reordering` default, RFC 5681's duplicate-ACK threshold and RFC 6675's
/// DupThresh.
pub const DUPTHRESH: u32 = 3;

/// What a window hook may know of the ACK that triggered it. Counts are in segments.
#[derive(Debug, Clone, Copy, Default)]
pub struct AckInfo {
    /// FlightSize (`snd_nxt − snd_una`) when the hook runs; at entry, before anything
    /// else of the ACK is applied.
    pub flight: u32,
    /// Packets in flight (Linux `tcp_packets_in_flight`, RFC 6675 `pipe`) when the hook
    /// runs.
    pub in_flight: u32,
    /// Segments the ACK cumulatively acknowledged.
    pub acked: u32,
    /// Segments newly SACKed by the ACK (0 without SACK).
    pub newly_sacked: u32,
    /// RFC 6937 DeliveredData: newly delivered by this ACK, cumulatively or by SACK.
    pub delivered: u32,
    /// The ACK moved `snd_una`.
    pub advanced: bool,
    /// Segments this ACK newly marked lost, lost retransmissions included (Linux
    /// `rs->losses`, what `tcp_cwnd_reduction` gets as `newly_lost`).
    pub newly_lost: u32,
    /// A duplicate ACK: `snd_una` unchanged with data outstanding.
    pub is_dupack: bool,
    /// New segments sent by limited transmit (RFC 3042) in this duplicate-ACK series.
    pub limited_sent: u32,
    /// `snd_nxt` when the hook runs.
    pub snd_nxt: u64,
    /// `snd_una` when the hook runs.
    pub snd_una: u64,
}

/// The recovery style of one flow.
#[derive(Debug, Clone)]
pub enum Recovery {
    NewrenoInflation(NewrenoInflation),
    RateHalving(RateHalving),
    Prr(Prr),
    Fack(Fack),
    Rfc6675(Rfc6675),
    FreebsdSack(FreebsdSack),
}

impl Recovery {
    pub fn new(style: RecoveryStyle, sack: bool) -> Self {
        match (style, sack) {
            (RecoveryStyle::Newreno, false) => Recovery::NewrenoInflation(NewrenoInflation),
            (RecoveryStyle::RateHalving, false) => Recovery::RateHalving(RateHalving::default()),
            (RecoveryStyle::Prr, false) => Recovery::Prr(Prr::default()),
            (RecoveryStyle::Newreno, true) => Recovery::FreebsdSack(FreebsdSack::default()),
            (RecoveryStyle::RateHalving, true) => Recovery::Fack(Fack::default()),
            (RecoveryStyle::Prr, true) => Recovery::Rfc6675(Rfc6675::default()),
        }
    }

    /// The style counts packets in flight with Linux's scoreboard (`sacked_out`, `lost_out`,
    /// `retrans_out`) rather than inflating cwnd over FlightSize.
    pub fn linux_scoreboard(&self) -> bool {
        !matches!(
            self,
            Recovery::NewrenoInflation(_) | Recovery::FreebsdSack(_)
        )
    }

    /// Fast retransmit: sets the window recovery starts with. Without SACK the sender
    /// has already retransmitted the head (NewReno) or marked it lost (Linux); with SACK
    /// it has marked the losses the ACK reveals.
    #[inline]
    pub fn enter(&mut self, w: &mut Window, cc: &AnyCc, a: &AckInfo) {
        match self {
            Recovery::NewrenoInflation(r) => r.enter(w, a),
            Recovery::RateHalving(r) => r.enter(w, cc, a),
            Recovery::Prr(r) => r.enter(w, a),
            Recovery::Fack(r) => r.enter(w, cc, a),
            Recovery::Rfc6675(r) => r.enter(w, a),
            Recovery::FreebsdSack(r) => r.enter(w, a),
        }
    }

    /// An ACK in recovery that does not move `snd_una`: without SACK a duplicate ACK; with
    /// SACK any such ACK (it may SACK new data).
    #[inline]
    pub fn dup_ack(&mut self, w: &mut Window, cc: &AnyCc, sb: Option<&Scoreboard>, a: &AckInfo) {
        match self {
            Recovery::NewrenoInflation(r) => r.dup_ack(w),
            Recovery::RateHalving(r) => r.dup_ack(w, cc, a),
            Recovery::Prr(r) => r.dup_ack(w, a),
            Recovery::Fack(r) => r.dup_ack(w, cc, a),
            Recovery::Rfc6675(r) => r.dup_ack(w, a),
            Recovery::FreebsdSack(r) => r.dup_ack(w, sb.expect("SACK sender"), a),
        }
    }

    /// A partial ACK: `snd_una` moved, but not past `recover`. Without SACK the sender
    /// has already retransmitted the new head (NewReno) or marked it lost (Linux).
    #[inline]
    pub fn partial_ack(
        &mut self,
        w: &mut Window,
        cc: &AnyCc,
        sb: Option<&Scoreboard>,
        a: &AckInfo,
    ) {
        match self {
            Recovery::NewrenoInflation(r) => r.partial_ack(w, a),
            Recovery::RateHalving(r) => r.partial_ack(w, cc, a),
            Recovery::Prr(r) => r.partial_ack(w, a),
            Recovery::Fack(r) => r.partial_ack(w, cc, a),
            Recovery::Rfc6675(r) => r.partial_ack(w, a),
            Recovery::FreebsdSack(r) => r.partial_ack(w, sb.expect("SACK sender"), a),
        }
    }

    /// The full ACK (past `recover`): the window recovery ends with, at least 1.
    #[inline]
    pub fn full_ack(&self, w: &Window, flight: u32) -> u32 {
        match self {
            Recovery::NewrenoInflation(_) | Recovery::FreebsdSack(_) => {
                newreno_inflation::exit_cwnd(w, flight)
            }
            Recovery::RateHalving(_) | Recovery::Fack(_) => rate_halving::exit_cwnd(w),
            Recovery::Prr(_) | Recovery::Rfc6675(_) => prr::exit_cwnd(w),
        }
        .max(1)
    }

    /// A segment (new or retransmitted) left while in recovery.
    #[inline]
    pub fn sent(&mut self) {
        match self {
            Recovery::Prr(r) => r.sent(),
            Recovery::Rfc6675(r) => r.prr.sent(),
            _ => {}
        }
    }

    // SACK-based loss detection: only the SACK styles are asked.

    /// With SACK: counts the ACK as a duplicate ACK the stack's way and says whether
    /// recovery starts now.
    pub fn time_to_recover(
        &self,
        sb: &Scoreboard,
        dupacks: &mut u32,
        is_dupack: bool,
        newly_sacked: u32,
        snd_una: u64,
    ) -> bool {
        match self {
            Recovery::Fack(_) => fack::time_to_recover(sb, snd_una),
            Recovery::Rfc6675(_) => rfc6675::time_to_recover(sb, dupacks, newly_sacked),
            Recovery::FreebsdSack(_) => freebsd_sack::time_to_recover(dupacks, is_dupack),
            _ => unreachable!("SACK loss detection asked of a non-SACK recovery style"),
        }
    }

    /// With SACK, in recovery: marks lost what the stack deems lost now (nothing at or
    /// beyond `high_seq`, Linux's `high_seq`, FreeBSD's `snd_recover`). Returns how many
    /// segments were newly marked.
    pub fn mark_lost(&self, sb: &mut Scoreboard, high_seq: u64, a: &AckInfo) -> u32 {
        match self {
            Recovery::Fack(_) => fack::mark_lost(sb, high_seq, a),
            Recovery::Rfc6675(_) => rfc6675::mark_lost(sb, a.snd_una),
            Recovery::FreebsdSack(_) => freebsd_sack::mark_lost(sb, high_seq, a.snd_una),
            _ => unreachable!("SACK loss detection asked of a non-SACK recovery style"),
        }
    }

    /// With SACK, at the start of recovery, before [`mark_lost`](Self::mark_lost): segments
    /// the style deems lost by entering recovery at all.
    pub fn mark_lost_at_entry(&self, sb: &mut Scoreboard, snd_una: u64) -> u32 {
        match self {
            Recovery::Rfc6675(_) => rfc6675::mark_lost_at_entry(sb, snd_una),
            _ => 0,
        }
    }

    /// With SACK: a retransmission is deemed lost again once a segment sent after it is
    /// SACKed (Linux `tcp_mark_lost_retrans`; FreeBSD leaves that to the RTO).
    pub fn detects_lost_retransmits(&self) -> bool {
        !matches!(self, Recovery::FreebsdSack(_))
    }

    /// With SACK: the style keeps its own send window (FreeBSD: retransmitted and new
    /// data counted against cwnd) instead of RFC 6675's `cwnd − pipe`, and so sends no
    /// forward retransmissions (`NextSeg()` rule 3).
    pub fn own_send_window(&self) -> Option<&FreebsdSack> {
        match self {
            Recovery::FreebsdSack(r) => Some(r),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_style_and_sack_setting_has_its_module() {
        let name = |r: &Recovery| match r {
            Recovery::NewrenoInflation(_) => "newreno_inflation",
            Recovery::RateHalving(_) => "rate_halving",
            Recovery::Prr(_) => "prr",
            Recovery::Fack(_) => "fack",
            Recovery::Rfc6675(_) => "rfc6675",
            Recovery::FreebsdSack(_) => "freebsd_sack",
        };
        let cases = [
            (RecoveryStyle::Newreno, false, "newreno_inflation", false),
            (RecoveryStyle::RateHalving, false, "rate_halving", true),
            (RecoveryStyle::Prr, false, "prr", true),
            (RecoveryStyle::Newreno, true, "freebsd_sack", false),
            (RecoveryStyle::RateHalving, true, "fack", true),
            (RecoveryStyle::Prr, true, "rfc6675", true),
        ];
        for (style, sack, module, linux) in cases {
            let r = Recovery::new(style, sack);
            assert_eq!((name(&r), r.linux_scoreboard()), (module, linux));
            assert_eq!(r.own_send_window().is_some(), module == "freebsd_sack");
            assert_eq!(r.detects_lost_retransmits(), module != "freebsd_sack");
        }
    }
}
