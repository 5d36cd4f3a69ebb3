//! The sender with SACK: scoreboard updates on every ACK, loss marking, the choice of what
//! to send next, and how each recovery style sets the window from SACK information.
//!
//! Per ACK, in the order of Linux's `tcp_ack`: the SACK blocks are applied to the
//! scoreboard (`tcp_sacktag_write_queue`; FreeBSD `tcp_sack_doack`), then the cumulative
//! ACK (`tcp_clean_rtx_queue`), the window grows if the state allows, and the recovery
//! state machine runs (`tcp_fastretrans_alert`). What is sent then follows RFC 6675's
//! `NextSeg()`: (1) the lowest lost segment not yet retransmitted, (2) new data, (3) in
//! recovery, when no new data may go, the lowest un-SACKed segment below the highest
//! SACKed one that is neither lost nor retransmitted (Linux's forward retransmission).
//! Rule (4), the rescue retransmission, is not modelled.
//!
//! When recovery starts, which segments are lost and how the window moves in recovery
//! are the recovery style's ([`Recovery`](crate::tcp::recovery::Recovery)):
//! [`fack`](crate::tcp::recovery::fack) (Linux 2.6.25),
//! [`rfc6675`](crate::tcp::recovery::rfc6675) (with PRR) and
//! [`freebsd_sack`](crate::tcp::recovery::freebsd_sack) (FreeBSD 7, which also keeps a
//! send window of its own in recovery and sends no forward retransmissions).
//!
//! Recovery ends when the cumulative ACK passes `recover`, with each style's exit rule
//! ([`Sender::exit_recovery`]); the scoreboard above it is kept (RFC 6675 §5 (A)), so
//! the same ACK may start the next recovery. A timeout marks everything un-SACKed lost
//! and resends it lowest first as the window allows, skipping SACKed segments; the
//! window is Linux's in-flight count, except FreeBSD's, which counts from `snd_una`.
//!
//! Not modelled: D-SACK and undo (spurious-retransmission detection), reneging, Linux's
//! adaptive `reordering`, FACK's head-timeout marking, `tcp_moderate_cwnd`, and the
//! small-window trigger of `tcp_time_to_recover`.

use collateral_queue::{Nanos, Packet};

use super::super::cc::{Ack, CaState, CongestionControl};
use super::super::recovery::AckInfo;
use super::{SackBlock, Sender};

impl Sender {
    /// Processes an ACK that may carry SACK blocks. A sender without SACK ignores them
    /// (its peer sends none).
    pub fn on_ack_sack(
        &mut self,
        now: Nanos,
        ack: u64,
        echo: Nanos,
        sack: &[SackBlock],
        out: &mut Vec<Packet>,
    ) {
        if self.sb.is_none() {
            self.on_ack(now, ack, echo, out)
        } else if self.extras {
            self.sack_ack::<true>(now, ack, echo, sack, out)
        } else {
            self.sack_ack::<false>(now, ack, echo, sack, out)
        }
    }

    fn sack_ack<const X: bool>(
        &mut self,
        now: Nanos,
        ack: u64,
        echo: Nanos,
        blocks: &[SackBlock],
        out: &mut Vec<Packet>,
    ) {
        let prior_in_flight = self.in_flight();
        let fresh = ack >= self.snd_una;
        if X {
            if let Some(r) = &mut self.rate {
                r.start_ack();
            }
        }
        let una = self.snd_una;
        let snd_nxt = self.snd_nxt;
        let detect_lost_rexmit = self.recovery.detects_lost_retransmits();
        let sb = self.sb.as_deref_mut().expect("SACK sender");
        let prior_high = sb.high_sacked;
        // The SACK blocks first, clipped to what is outstanding. Each newly SACKed segment
        // is delivered now (Linux `tcp_rate_skb_delivered` from `tcp_sacktag_one`).
        let lo = ack.max(una);
        let mut newly_sacked = 0;
        for b in blocks {
            let (start, end) = (b.start.max(lo), b.end.min(snd_nxt));
            if start < end {
                let rate = &mut self.rate;
                newly_sacked += sb.sack(start, end, |seq| {
                    if X {
                        if let Some(r) = rate.as_deref_mut() {
                            r.on_acked(seq);
                        }
                    }
                });
            }
        }
        // A new highest SACK in recovery: retransmissions sent before it were lost.
        let mut lost = 0;
        if self.state == CaState::Recovery && detect_lost_rexmit && sb.high_sacked > prior_high {
            lost = sb.lost_retransmits(una, snd_nxt, sb.high_sacked - 1);
        }
        // Then the cumulative ACK: a segment it covers is newly delivered unless SACKed.
        let advanced = ack > una;
        let mut acked = 0;
        let mut delivered = newly_sacked;
        if advanced {
            acked = (ack - una) as u32;
            if X {
                if let Some(r) = &mut self.rate {
                    for seq in una..ack {
                        if !sb.is_sacked(seq) {
                            r.on_acked(seq);
                        }
                    }
                }
            }
            delivered += acked - sb.ack(una, ack);
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.limited_sent = 0;
        }
        if let Some(r) = &mut self.rate {
            r.delivered(delivered as u64);
            r.lost(lost as u64);
        }
        let mut echo_rtt = None;
        let mut grow = None;
        if advanced {
            let rtt = now.saturating_sub(echo);
            self.rtt_sample(now, rtt);
            echo_rtt = Some(rtt);
            let a = Ack {
                now,
                acked,
                prior_in_flight,
                rtt: echo_rtt,
                state: self.state,
            };
            self.cc.pkts_acked(&a);
            let recover = self.recover.unwrap_or(0);
            match self.state {
                CaState::Recovery if ack > recover => {
                    self.exit_recovery(now);
                    self.restart_timer(now);
                }
                CaState::Recovery => {
                    if self.cfg.slow_but_steady || !self.partial_seen {
                        self.partial_seen = true;
                        self.restart_timer(now);
                    }
                }
                _ => {
                    if self.state == CaState::Loss && ack > recover {
                        self.set_state(now, CaState::Open);
                    }
                    self.dupacks = 0;
                    // Window growth counts what was delivered, not what the cumulative ACK
                    // covered (modern Linux passes `acked_sacked` to `cong_avoid`).
                    grow = Some(Ack {
                        acked: delivered,
                        ..a
                    });
                    self.restart_timer(now);
                }
            }
        }
        if let Some(a) = grow {
            if (self.window_full || prior_in_flight >= self.w.cwnd.min(self.cfg.rwnd_segments))
                && !self.in_cwr()
            {
                self.cc.on_ack(&mut self.w, &a);
            }
        }
        let is_dupack = !advanced && ack == una && snd_nxt > una;
        match self.state {
            CaState::Recovery => {
                let newly_lost = lost + self.sack_mark(advanced, is_dupack, newly_sacked);
                let counts = [acked, newly_sacked, delivered, newly_lost];
                self.sack_recovery_window(advanced, is_dupack, counts);
            }
            CaState::Loss => {}
            CaState::Open | CaState::Disorder => {
                if self.sack_time_to_recover(is_dupack, newly_sacked) {
                    self.sack_enter_recovery(now, advanced, is_dupack, newly_sacked, delivered);
                } else {
                    let sacked = self.sb.as_deref().map_or(0, |sb| sb.sacked_out);
                    let disorder = sacked > 0 || self.dupacks > 0;
                    self.set_state(
                        now,
                        if disorder {
                            CaState::Disorder
                        } else {
                            CaState::Open
                        },
                    );
                }
            }
        }
        if X && fresh && self.rate.is_some() {
            self.cong_control(now, echo_rtt, prior_in_flight);
        }
        self.sack_send_as::<X>(now, out);
    }

    /// Counts duplicate ACKs the style's way and says whether recovery starts now.
    fn sack_time_to_recover(&mut self, is_dupack: bool, newly_sacked: u32) -> bool {
        let sb = self.sb.as_deref().expect("SACK sender");
        let una = self.snd_una;
        self.recovery
            .time_to_recover(sb, &mut self.dupacks, is_dupack, newly_sacked, una)
    }

    /// Fast retransmit with SACK: the start of recovery.
    fn sack_enter_recovery(
        &mut self,
        now: Nanos,
        advanced: bool,
        is_dupack: bool,
        newly_sacked: u32,
        delivered: u32,
    ) {
        let flight = self.start_recovery(now);
        let una = self.snd_una;
        let n = (self.recovery).mark_lost_at_entry(self.sb.as_deref_mut().unwrap(), una);
        if n > 0 {
            if let Some(r) = &mut self.rate {
                r.lost(n as u64);
            }
        }
        // At entry Linux's `do_lost` ignores whether the ACK advanced snd_una.
        let newly_lost = n + self.sack_mark(false, is_dupack, newly_sacked);
        if self.owns_window() {
            return;
        }
        let a = AckInfo {
            flight,
            advanced,
            is_dupack,
            newly_sacked,
            delivered,
            newly_lost,
            ..self.ack_info()
        };
        self.recovery.enter(&mut self.w, &self.cc, &a);
    }

    /// Marks lost what the style's rule deems lost now (in recovery); returns how many.
    fn sack_mark(&mut self, advanced: bool, is_dupack: bool, newly_sacked: u32) -> u32 {
        let una = self.snd_una;
        // Linux `high_seq` / FreeBSD `snd_recover`: no loss marked at or beyond it.
        let high_seq = self.recover.map_or(una, |r| r + 1);
        let a = AckInfo {
            advanced,
            is_dupack,
            newly_sacked,
            snd_una: una,
            ..AckInfo::default()
        };
        let sb = self.sb.as_deref_mut().expect("SACK sender");
        let n = self.recovery.mark_lost(sb, high_seq, &a);
        if let Some(r) = &mut self.rate {
            r.lost(n as u64);
        }
        n
    }

    /// How an ACK in recovery changes cwnd: the style's partial-ACK hook if it moved
    /// `snd_una`, its duplicate-ACK hook otherwise.
    /// `counts`: segments acked, newly SACKed, delivered and newly marked lost.
    fn sack_recovery_window(&mut self, advanced: bool, is_dupack: bool, counts: [u32; 4]) {
        if self.owns_window() {
            return;
        }
        let [acked, newly_sacked, delivered, newly_lost] = counts;
        let a = AckInfo {
            acked,
            advanced,
            is_dupack,
            newly_sacked,
            delivered,
            newly_lost,
            ..self.ack_info()
        };
        let sb = self.sb.as_deref();
        if advanced {
            self.recovery.partial_ack(&mut self.w, &self.cc, sb, &a);
        } else {
            self.recovery.dup_ack(&mut self.w, &self.cc, sb, &a);
        }
    }

    #[inline]
    pub(super) fn sack_send(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.extras {
            self.sack_send_as::<true>(now, out);
        } else {
            self.sack_send_as::<false>(now, out);
        }
    }

    /// Sends by RFC 6675 `NextSeg()` while the window allows.
    fn sack_send_as<const X: bool>(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let limit = self.cfg.size_segments.unwrap_or(u64::MAX);
        let new_end = (self.snd_una + self.cfg.rwnd_segments as u64).min(limit);
        self.before_sending::<X>();
        // FreeBSD keeps its own window in recovery (unless the algorithm owns it).
        let own_window = !self.owns_window() && self.recovery.own_send_window().is_some();
        let repairing = matches!(self.state, CaState::Recovery | CaState::Loss);
        self.window_full = false;
        loop {
            let una = self.snd_una;
            let sb = self.sb.as_deref_mut().expect("SACK sender");
            let (seq, retx) = match repairing.then(|| sb.next_lost(una)).flatten() {
                Some(s) => (s, true),
                None if self.snd_nxt < new_end => (self.snd_nxt, false),
                None if self.state == CaState::Recovery && !own_window => {
                    match sb.next_forward(una) {
                        Some(s) => (s, true),
                        None => break,
                    }
                }
                None => break,
            };
            if !self.sack_window_allows(own_window, seq, retx) {
                self.window_full = true;
                break;
            }
            if self.pace_blocked::<X>(now) {
                break;
            }
            let nxt = self.snd_nxt;
            let sb = self.sb.as_deref_mut().expect("SACK sender");
            if retx {
                sb.retransmitted(seq, nxt);
                // The head's retransmission restarts the timer (Linux
                // `tcp_xmit_retransmit_queue`; FreeBSD re-arms it as it sends).
                if seq == una {
                    self.rto_deadline = Some(now + self.rto);
                }
            } else {
                sb.reserve(una, nxt, nxt + 1);
                self.snd_nxt += 1;
            }
            self.segment_as::<X>(now, seq, out);
        }
        self.after_sending::<X>(now, limit);
    }

    /// Whether the window lets segment `seq` (a retransmission if `retx`) go now.
    fn sack_window_allows(&self, own_window: bool, seq: u64, retx: bool) -> bool {
        if !own_window {
            // RFC 6675 (C): while cwnd − pipe ≥ 1 segment.
            return self.in_flight() < self.w.cwnd;
        }
        match (self.state, self.recovery.own_send_window()) {
            (CaState::Recovery, Some(r)) => {
                let sb = self.sb.as_deref().expect("SACK sender");
                r.window_allows(&self.w, sb, retx, self.snd_nxt)
            }
            // Outside recovery FreeBSD counts the window from snd_una.
            _ => seq < self.snd_una + self.una_window(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{CcKind, RecoveryStyle, TcpConfig};
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64Mcg;

    const MS: Nanos = 1_000_000;

    fn sender(cfg: TcpConfig) -> Sender {
        Sender::new(0, &cfg, Pcg64Mcg::seed_from_u64(1))
    }

    fn seqs(out: &mut Vec<Packet>) -> Vec<u64> {
        out.drain(..).map(|p| p.seq).collect()
    }

    /// Blocks from (start, end) pairs.
    fn blocks(b: &[(u64, u64)]) -> Vec<SackBlock> {
        b.iter()
            .map(|&(start, end)| SackBlock { start, end })
            .collect()
    }

    fn sack_cfg(recovery: RecoveryStyle) -> TcpConfig {
        TcpConfig {
            initial_cwnd: 10,
            recovery,
            ssthresh_from_cwnd: true,
            sack: true,
            ..TcpConfig::default()
        }
    }

    /// An ACK: the cumulative ACK and its SACK blocks.
    type A = (u64, &'static [(u64, u64)]);

    /// Drives a SACK sender with window 10 (segments 0–9) through `acks`; returns cwnd
    /// after each ACK and the segments each released.
    fn episode(cfg: TcpConfig, acks: &[A]) -> (Sender, Vec<u32>, Vec<Vec<u64>>) {
        let mut s = sender(cfg);
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(seqs(&mut out), (0..10).collect::<Vec<_>>());
        let (mut cwnd, mut sent) = (Vec::new(), Vec::new());
        for (i, &(ack, b)) in acks.iter().enumerate() {
            s.on_ack_sack((100 + i as u64) * MS, ack, 0, &blocks(b), &mut out);
            cwnd.push(s.w.cwnd);
            sent.push(seqs(&mut out));
        }
        (s, cwnd, sent)
    }

    // Window of 10, segments 0 and 5 lost. The receiver SACKs 1–4 and 6–9 as they come
    // (RFC 2018 order: the block just extended first), then the new segments 10 and 11
    // sent on the first two ACKs, then — in the order the sender sent them in every
    // style below — the retransmitted 0 (ACK 5), new segment 12, the retransmitted 5.
    const TWO_LOSSES: [A; 13] = [
        (0, &[(1, 2)]),
        (0, &[(1, 3)]),
        (0, &[(1, 4)]),
        (0, &[(1, 5)]),
        (0, &[(6, 7), (1, 5)]),
        (0, &[(6, 8), (1, 5)]),
        (0, &[(6, 9), (1, 5)]),
        (0, &[(6, 10), (1, 5)]),
        (0, &[(6, 11), (1, 5)]),
        (0, &[(6, 12), (1, 5)]),
        (5, &[(6, 12)]),
        (5, &[(6, 13)]),
        (13, &[]),
    ];

    #[test]
    fn rate_halving_with_fack_two_losses_worked_episode() {
        // Linux 2.6.25, FACK: in_flight = packets_out − sacked − lost + retrans;
        // fackets = highest SACKed + 1 − snd_una; ssthresh = 10/2 = 5, Reno floor 2.
        //  1: SACK 1: fackets 2 ≤ 3, Disorder; in_flight 10−1 = 9 < 10: send 10.
        //  2: SACK 2: fackets 3; in_flight 11−2 = 9: send 11.
        //  3: SACK 3: fackets 4 > 3: Recovery (high_seq 12). Duplicate ACK: mark
        //     max(4−3, 1) = 1 segment: 0 lost. cwnd_down: toggle 0→1, no decrement;
        //     cap in_flight 12−3−1 = 8, +1 → 9. Retransmit 0 (in_flight 9).
        //  4: SACK 4 (fackets 5, marks up to 2: nothing new). Toggle 1→0: cwnd 8; in
        //     flight 12−4−1+1 = 8, cap 9 → 8. Nothing to send.
        //  5: SACK 6 (fackets 7, up to 4: nothing). No decrement; in_flight 7, cap 8:
        //     cwnd 8, send 12 (in_flight 8).
        //  6: SACK 7 (fackets 8, up to 5: nothing). Decrement to 7; in_flight 13−6−1+1
        //     = 7, cap 8 → 7. Nothing.
        //  7: SACK 8: fackets 9, marks up to 6: segment 5 lost. No decrement; in_flight
        //     13−7−2+1 = 5, cap 6 → cwnd 6. Retransmit 5 (in_flight 6).
        //  8: SACK 9 (fackets 10). Decrement to 5; in_flight 13−8−2+2 = 5, cap 6 → 5.
        //  9: SACK 10 (new data; not after the retransmissions, which left when snd_nxt
        //     was 12 and 13). No decrement; in_flight 4, cap 5: cwnd 5, send 13.
        // 10: SACK 11. Decrement to 4; in_flight 14−10−2+2 = 4, cap 5 → 4. Nothing.
        // 11: the retransmitted 0 arrives: ACK 5, partial (recover 11). 0–4 leave (1–4
        //     were SACKed). fackets 12−5 = 7 > 3: mark up to 5+4 = 9: 5 was lost
        //     already. No decrement; in_flight 14−5 = 9 − 6 − 1 + 1 = 3, cap 4: cwnd 4,
        //     send 14.
        // 12: SACK 12 (sent after the retransmission of 0 only, which is acked; 5 left
        //     when snd_nxt was 13: not lost). Decrement to 3; in_flight 10−7−1+1 = 3,
        //     cap 4 → 3. Nothing.
        // 13: the retransmitted 5 arrives: ACK 13 > recover 11: tcp_complete_cwr, cwnd
        //     = min(3, ssthresh 5) = 3. FlightSize 15−13 = 2 < 3: send 15.
        let (s, cwnd, sent) = episode(sack_cfg(RecoveryStyle::RateHalving), &TWO_LOSSES);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 6, 5, 5, 4, 4, 3, 3]);
        let want: Vec<Vec<u64>> = vec![
            vec![10],
            vec![11],
            vec![0],
            vec![],
            vec![12],
            vec![],
            vec![5],
            vec![],
            vec![13],
            vec![],
            vec![14],
            vec![],
            vec![15],
        ];
        assert_eq!(sent, want);
        assert!(!s.in_recovery());
        assert_eq!((s.stats.retransmits, s.stats.fast_retransmits), (2, 1));
    }

    #[test]
    fn prr_with_rfc6675_two_losses_worked_episode() {
        // RFC 6675 loss detection, RFC 6937 PRR with SSRB; RecoverFS = FlightSize at
        // entry; DeliveredData = newly SACKed + newly acked and not SACKed before.
        //  1, 2: SACKs of new data are DupAcks 1, 2 (< 3 SACKed: no IsLost); pipe 9:
        //     send 10, then 11.
        //  3: DupAck 3: recovery, ssthresh 5, RecoverFS 12; 0 is retransmitted at once
        //     (4.3): lost. 3rd-highest SACKed is 1: nothing else lost. pd 1, pipe
        //     12−3−1 = 8 > 5: sndcnt ⌈1·5/12⌉ − 0 = 1 → cwnd 9; retransmit 0.
        //  4: SACK 4: pd 2, pipe 12−4−1+1 = 8: ⌈10/12⌉ − 1 = 0 → cwnd 8.
        //  5: SACK 6: pd 3, pipe 7: ⌈15/12⌉ − 1 = 1 → cwnd 8; send 12 (prr_out 2).
        //  6: SACK 7: pd 4, pipe 13−6−1+1 = 7: ⌈20/12⌉ − 2 = 0 → cwnd 7.
        //  7: SACK 8: 8, 7 and 6 are SACKed above 5: IsLost(5). pd 5, pipe 13−7−2+1 = 5
        //     ≤ 5: SSRB min(5−5, max(5−2, 1)+1) = 0 → cwnd 5; 5 must wait.
        //  8: SACK 9: pd 6, pipe 4: min(1, max(6−2, 1)+1) = 1 → cwnd 5: retransmit 5.
        //  9: SACK 10: pd 7, pipe 13−9−2+2 = 4: 1 → cwnd 5, send 13.
        // 10: SACK 11: pd 8, pipe 4: 1 → 5, send 14.
        // 11: ACK 5 (partial): delivered 1 (0; 1–4 were SACKed), pd 9; pipe
        //     (15−5) − 6 − 1 + 1 = 4: 1 → cwnd 5, send 15.
        // 12: SACK 12: pd 10, pipe 11−7−1+1 = 4: 1 → 5, send 16.
        // 13: ACK 13 > recover 11: PRR ends at ssthresh 5; FlightSize 17−13 = 4: send 17.
        let (s, cwnd, sent) = episode(sack_cfg(RecoveryStyle::Prr), &TWO_LOSSES);
        assert_eq!(cwnd, vec![10, 10, 9, 8, 8, 7, 5, 5, 5, 5, 5, 5, 5]);
        let want: Vec<Vec<u64>> = vec![
            vec![10],
            vec![11],
            vec![0],
            vec![],
            vec![12],
            vec![],
            vec![],
            vec![5],
            vec![13],
            vec![14],
            vec![15],
            vec![16],
            vec![17],
        ];
        assert_eq!(sent, want);
        assert!(!s.in_recovery());
        assert_eq!(s.stats.retransmits, 2);
    }

    #[test]
    fn freebsd_sack_recovery_two_losses_worked_episode() {
        // FreeBSD 7: limited transmit, then SACK recovery from cwnd = 1 segment.
        //  1, 2: dupACKs 1, 2: limited transmit sends 10, then 11.
        //  3: dupACK 3: ssthresh = 10/2 = 5, snd_recover = 12, sack_newdata = 12, cwnd
        //     1: the hole below the highest SACK (0) is retransmitted.
        //  4: awnd = snd_nxt − snd_fack + retransmitted = 12 − 5 + 1 = 8 ≥ 5: cwnd
        //     stays 1 (the retransmission fills it).
        //  5: SACK 6 opens the hole 5; awnd 12−7+1 = 6: cwnd 1, nothing may go.
        //  6: awnd 12−8+1 = 5: still 1.
        //  7: awnd 12−9+1 = 4 < 5: cwnd 2: retransmitted 1 < 2: retransmit 5.
        //  8: awnd 12−10+2 = 4: cwnd 3; no hole left; new data: 2 retransmitted + 0 new
        //     since recovery < 3: send 12.
        //  9: awnd 13−11+2 = 4: cwnd 4; 2 + 1 < 4: send 13.
        // 10: awnd 14−12+2 = 4: cwnd 5; 2 + 2 < 5: send 14.
        // 11: ACK 5, partial, 5 segments (> 2): cwnd = 1 retransmitted (5) + 3 new
        //     since recovery + 2 = 6, at most ssthresh: 5; 1 + 3 < 5: send 15.
        // 12: the retransmitted 5 arrives with 6–11 held: ACK 12 > recover 11: cwnd =
        //     min(ssthresh 5, snd_max − ack + 1 = 16 − 12 + 1) = 5: window 12 + 5 = 17:
        //     send 16.
        let cfg = TcpConfig {
            limited_transmit: true,
            ..sack_cfg(RecoveryStyle::Newreno)
        };
        let (s, cwnd, sent) = episode(cfg, &TWO_LOSSES[..11]);
        let mut out = Vec::new();
        let mut s = s;
        s.on_ack_sack(200 * MS, 12, 0, &[], &mut out);
        let (cwnd, sent) = (
            [cwnd, vec![s.w.cwnd]].concat(),
            [sent, vec![seqs(&mut out)]].concat(),
        );
        assert_eq!(cwnd, vec![10, 10, 1, 1, 1, 1, 2, 3, 4, 5, 5, 5]);
        let want: Vec<Vec<u64>> = vec![
            vec![10],
            vec![11],
            vec![0],
            vec![],
            vec![],
            vec![],
            vec![5],
            vec![12],
            vec![13],
            vec![14],
            vec![15],
            vec![16],
        ];
        assert_eq!(sent, want);
        assert!(!s.in_recovery());
    }

    #[test]
    fn scoreboard_and_is_lost_on_a_crafted_ack_sequence() {
        // Window of 10; the receiver gets 9, then 7, then 5, then 3 (each ACK 0).
        let mut s = sender(sack_cfg(RecoveryStyle::Prr));
        let mut out = Vec::new();
        s.start(0, &mut out);
        out.clear();
        let sb = |s: &Sender, f: fn(&super::super::Scoreboard, u64) -> bool| -> Vec<u64> {
            (s.snd_una..s.snd_nxt)
                .filter(|&q| f(s.sb.as_deref().unwrap(), q))
                .collect()
        };
        let sacked = |s: &Sender| sb(s, |b, q| b.is_sacked(q));
        let lost = |s: &Sender| sb(s, |b, q| b.is_lost(q));
        // SACK 9: one DupAck, one segment SACKed above the rest: nothing is lost;
        // pipe 10 − 1 = 9 < 10: new segment 10.
        s.on_ack_sack(MS, 0, 0, &blocks(&[(9, 10)]), &mut out);
        assert_eq!(
            (sacked(&s), lost(&s), s.in_recovery()),
            (vec![9], Vec::<u64>::new(), false)
        );
        assert_eq!(seqs(&mut out), vec![10]);
        // SACK 7: two DupAcks; IsLost holds nowhere (at most 2 SACKed above): send 11.
        s.on_ack_sack(MS, 0, 0, &blocks(&[(7, 8), (9, 10)]), &mut out);
        assert!(lost(&s).is_empty());
        assert_eq!(seqs(&mut out), vec![11]);
        // SACK 5: third DupAck: recovery. 5, 7 and 9 lie above 0–4: all lost; 6 has two
        // SACKed segments above it and 8 one: not lost. pipe = 12 − 3 − 5 = 4; PRR
        // (SSRB, pipe ≤ ssthresh 5): min(5 − 4, max(1, 1) + 1) = 1 → cwnd 5:
        // retransmit 0.
        s.on_ack_sack(MS, 0, 0, &blocks(&[(5, 6), (7, 8), (9, 10)]), &mut out);
        assert!(s.in_recovery());
        assert_eq!(sacked(&s), vec![5, 7, 9]);
        assert_eq!(lost(&s), vec![0, 1, 2, 3, 4]);
        assert_eq!((s.in_flight(), s.w.cwnd), (5, 5));
        assert_eq!(seqs(&mut out), vec![0]);
        // SACK 3 (the option has room for three blocks; 9 is remembered): 3 is no
        // longer lost; 1, 2 and 4 still wait. pipe 12 − 4 − 4 + 1 = 5 = ssthresh: PRR
        // sends nothing (min(5 − 5, …) = 0).
        s.on_ack_sack(MS, 0, 0, &blocks(&[(3, 4), (5, 6), (7, 8)]), &mut out);
        assert_eq!(sacked(&s), vec![3, 5, 7, 9]);
        assert_eq!(lost(&s), vec![0, 1, 2, 4]);
        assert_eq!((s.in_flight(), s.w.cwnd), (5, 5));
        assert!(out.is_empty());
        let b = s.sb.as_deref().unwrap();
        assert_eq!((b.sacked_out, b.lost_out, b.retrans_out), (4, 4, 1));

        // Linux 2.6.25's FACK is far quicker to call a loss: the first SACK, of 9, puts
        // the highest SACKed segment 10 segments above snd_una (fackets 10 > 3):
        // recovery at once, and the first 10 − 3 = 7 segments (0–6) are lost.
        let mut s = sender(sack_cfg(RecoveryStyle::RateHalving));
        s.start(0, &mut out);
        out.clear();
        s.on_ack_sack(MS, 0, 0, &blocks(&[(9, 10)]), &mut out);
        assert!(s.in_recovery());
        assert_eq!(lost(&s), (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn a_timeout_resends_what_is_not_sacked_lowest_first() {
        // Window of 10; 0, 1 and 4 are lost, 2 and 3 SACKed by one duplicate ACK (too
        // few for recovery in either style below), then the RTO fires.
        //
        // FreeBSD style (counts the window from snd_una): cwnd 1 → 0 again. Its
        // retransmission arrives: ACK 1, slow start to cwnd 2: window 1..3 holds 1
        // (2 is SACKed). ACK 4 (1 filled the hole up to the SACKed 2–3): cwnd 3: window
        // 4..7: 4, 5, 6.
        let mut s = sender(TcpConfig {
            sack: true,
            initial_cwnd: 10,
            ..TcpConfig::default()
        });
        let mut out = Vec::new();
        s.start(0, &mut out);
        out.clear();
        s.on_ack_sack(MS, 0, 0, &blocks(&[(2, 4)]), &mut out);
        assert!(out.is_empty());
        s.on_timeout(1000 * MS, &mut out);
        assert_eq!((seqs(&mut out), s.w.cwnd), (vec![0], 1));
        s.on_ack_sack(1100 * MS, 1, 1000 * MS, &blocks(&[(2, 4)]), &mut out);
        assert_eq!((seqs(&mut out), s.w.cwnd), (vec![1], 2));
        s.on_ack_sack(1200 * MS, 4, 1100 * MS, &[], &mut out);
        assert_eq!((seqs(&mut out), s.w.cwnd), (vec![4, 5, 6], 3));
        assert_eq!(s.stats.timeouts, 1);

        // Linux accounting (RFC 6675 / PRR profile): the SACKs of 2 and 3 free two
        // segments of pipe, so 10 and 11 went before the RTO. After it all 10 un-SACKed
        // segments are lost and in flight is 0: cwnd 1 → 0. ACK 1: cwnd 2, in flight
        // 11 − 2 − 9 + 0 = 0: 1 and 4 go (2 and 3 skipped).
        let mut s = sender(sack_cfg(RecoveryStyle::Prr));
        s.start(0, &mut out);
        out.clear();
        s.on_ack_sack(MS, 0, 0, &blocks(&[(2, 4)]), &mut out);
        assert_eq!(seqs(&mut out), vec![10, 11]);
        s.on_timeout(1000 * MS, &mut out);
        assert_eq!(seqs(&mut out), vec![0]);
        s.on_ack_sack(1100 * MS, 1, 1000 * MS, &blocks(&[(2, 4)]), &mut out);
        assert_eq!((seqs(&mut out), s.w.cwnd), (vec![1, 4], 2));
    }

    #[test]
    fn with_sack_each_sacked_segment_is_delivered_once() {
        // BBR with SACK: 0 lost, 1–9 SACKed one by one (9 deliveries at once, not via
        // duplicate-ACK credit); the hole's retransmission then adds exactly 1, although
        // the ACK covers 10 segments.
        let mut s = sender(TcpConfig {
            cc: CcKind::Bbr,
            sack: true,
            initial_cwnd: 10,
            ..TcpConfig::default()
        });
        let mut out = Vec::new();
        s.start(0, &mut out);
        while let Some(d) = s.pace_deadline.filter(|&d| d <= MS) {
            s.on_pace(d, &mut out);
        }
        assert_eq!(out.len(), 10);
        for k in 1..10u64 {
            let t = 100 * MS + k * MS;
            s.on_ack_sack(t, 0, 0, &blocks(&[(1, k + 1)]), &mut out);
            while let Some(d) = s.pace_deadline.filter(|&d| d <= t + MS / 2) {
                s.on_pace(d, &mut out);
            }
        }
        assert_eq!(s.delivered(), Some(9));
        assert!(s.in_recovery());
        // The same SACK again says nothing new.
        s.on_ack_sack(111 * MS, 0, 0, &blocks(&[(1, 10)]), &mut out);
        assert_eq!(s.delivered(), Some(9));
        s.on_ack_sack(200 * MS, 10, 100 * MS, &[], &mut out);
        assert_eq!(s.delivered(), Some(10));
    }
}
