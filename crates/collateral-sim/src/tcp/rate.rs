//! Delivery-rate estimation (Linux `net/ipv4/tcp_rate.c`; draft-cheng-iccrg-delivery-
//! rate-estimation): on every ACK, how fast did the network deliver the flight that the
//! newest acknowledged segment belonged to?
//!
//! The connection counts segments `delivered` and remembers when that count last moved
//! (`delivered_time`). Each transmission snapshots both, with the start of its send phase
//! (`first_tx`), in a per-segment record. When a segment is acknowledged, the sample is
//! (delivered now − delivered then) over the longer of the send phase and the ACK phase
//! (`tcp_rate_gen`): the ACK phase alone would overestimate when ACKs are compressed, the
//! send phase alone when the sender was slow.
//!
//! With SACK the sender knows exactly what arrived, as Linux does: every newly SACKed
//! segment is delivered when its SACK arrives and is a candidate for the sample
//! ([`RateSampler::on_acked`] from `tcp_sacktag_one`'s `tcp_rate_skb_delivered`), so a
//! duplicate ACK carrying new SACK blocks gives a rate sample; a cumulative ACK then
//! delivers only the segments it covers that were not SACKed before, and a SACKed
//! segment's record is not used twice (Linux clears its `delivered_mstamp`). The sender
//! passes the exact count to [`RateSampler::delivered`].
//!
//! Without SACK, a duplicate ACK stands for one segment that reached the receiver out of
//! order, and a cumulative ACK that ends a series of them counts only what they did not
//! already count: one for the hole, the rest having come with the duplicate ACKs
//! (`tcp_add_reno_sack`, `tcp_remove_reno_sacks`). The sender reports both
//! ([`RateSampler::dup_delivered`], [`RateSampler::cum_delivered`]); such duplicate ACKs
//! acknowledge no particular segment and give no rate sample.
//!
//! One deliberate difference in the SACK-less case: Linux keeps that credit in `sacked_out`, which it resets
//! when recovery ends or an RTO strikes (`tcp_reset_reno_sack`), although the receiver
//! still holds the segments; they are then counted again when finally acknowledged,
//! and one ACK closing a long recovery reports hundreds of segments "delivered" within
//! one round trip. Linux BBR flows use SACK and never meet this; here, without SACK, it
//! would inflate the bandwidth estimate several-fold after every long recovery. So the
//! sampler keeps its own credit, which only cumulative ACKs consume.
//!
//! Only algorithms that want samples (BBR) pay for this: the sender keeps no sampler
//! otherwise. The per-segment records live in a ring indexed by segment number that
//! doubles when the window outgrows it, so steady sending never allocates.

use collateral_queue::Nanos;

use super::bbr::minmax::WindowedFilter;
use super::cc::CaState;

/// Rates are segments per second scaled by 2^24 (Linux's `BW_SCALE` idea, per second
/// rather than per µs because time here is in ns): 1/2^24 segment/s resolution, and up
/// to 2^40 segments/s before a `u64` overflows.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;

const SEC: u64 = 1_000_000_000;

/// The window of the connection's minimum RTT (Linux `sysctl_tcp_min_rtt_wlen`, 300 s),
/// against which samples are checked.
const MIN_RTT_WINDOW: Nanos = 300 * SEC;

/// What one ACK says about the delivery rate, with the connection state an algorithm
/// reads beside it (Linux `struct rate_sample` plus the `tcp_sock` fields BBR uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSample {
    pub now: Nanos,
    /// Segments this ACK newly acknowledged or, by a duplicate ACK, reported received
    /// (`acked_sacked`).
    pub acked_sacked: u32,
    /// Segments newly marked lost while this ACK was processed (`losses`).
    pub losses: u32,
    /// Segments delivered over the sample's interval (`delivered`).
    pub delivered: u64,
    /// The sample's interval, max(send phase, ACK phase); `None` if the ACK gives no valid
    /// sample (`interval_us = -1`): it acknowledged no segment, or the interval was
    /// shorter than the minimum RTT, which cannot be a real round trip.
    pub interval: Option<Nanos>,
    /// The connection's `delivered` when the sampled segment was sent
    /// (`prior_delivered`); BBR counts rounds with it.
    pub prior_delivered: u64,
    /// The sampled flight had a moment with nothing to send (`is_app_limited`).
    pub is_app_limited: bool,
    /// The sampled segment was a retransmission (`is_retrans`).
    pub is_retrans: bool,
    /// Packets in flight when the ACK arrived (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// RTT of the newest segment this ACK acknowledged (`rtt_us`): from its send time if
    /// no retransmission was acknowledged, else from the timestamp echo (Linux
    /// `tcp_clean_rtx_queue` and `tcp_ack_update_rtt`); `None` for a duplicate ACK.
    pub rtt: Option<Nanos>,
    /// Connection state after the ACK: `tp->delivered`, `tp->delivered_mstamp`,
    /// `tcp_packets_in_flight`, `icsk_ca_state` and the smoothed RTT.
    pub conn_delivered: u64,
    pub delivered_time: Nanos,
    pub in_flight: u32,
    pub state: CaState,
    pub srtt: Option<Nanos>,
}

impl RateSample {
    /// The delivery rate in segments per second × [`BW_UNIT`], if the sample is valid
    /// (BBR's `bbr_update_bw` division).
    #[inline]
    pub fn rate(&self) -> Option<u64> {
        let i = self.interval.filter(|&i| i > 0)?;
        let r = (self.delivered as u128 * BW_UNIT as u128 * SEC as u128) / i as u128;
        Some(r.min(u64::MAX as u128) as u64)
    }
}

/// Send-time snapshot of one segment (Linux `tcp_skb_cb.tx`, the skb's timestamp and
/// its `TCPCB_RETRANS` bit).
#[derive(Debug, Clone, Copy, Default)]
struct TxRecord {
    sent: Nanos,
    first_tx: Nanos,
    delivered_time: Nanos,
    delivered: u64,
    app_limited: bool,
    retrans: bool,
}

/// What the segments acknowledged so far by the ACK being processed have contributed
/// (the parts of `struct rate_sample` that `tcp_rate_skb_delivered` fills).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    /// `(prior_delivered, prior_mstamp)` of the chosen segment.
    prior: Option<(u64, Nanos)>,
    is_app_limited: bool,
    is_retrans: bool,
    send_phase: Nanos,
    /// Send time of the newest never-retransmitted segment acknowledged.
    last_ackt: Option<Nanos>,
    retrans_acked: bool,
    delivered_before: u64,
    lost_before: u64,
}

/// The sender's delivery-rate state.
#[derive(Debug, Clone)]
pub struct RateSampler {
    ring: Vec<TxRecord>,
    /// Segments delivered so far, retransmissions included (`tp->delivered`).
    pub delivered: u64,
    /// When `delivered` last grew (`tp->delivered_mstamp`).
    pub delivered_time: Nanos,
    /// Send time of the newest segment acknowledged: the start of the send phase of
    /// segments sent from now on (`tp->first_tx_mstamp`).
    first_tx: Nanos,
    /// Non-zero while the connection is application-limited: the `delivered` count
    /// beyond which that ends (`tp->app_limited`).
    app_limited: u64,
    /// Segments marked lost so far by ACK processing (`tp->lost`).
    pub lost: u64,
    /// Segments counted as delivered by duplicate ACKs and not yet cumulatively
    /// acknowledged (Linux's `sacked_out` without its resets).
    dup_credit: u64,
    /// Minimum RTT over 300 s (`tp->rtt_min`, `tcp_min_rtt`).
    min_rtt: WindowedFilter,
    ack: Pending,
}

impl RateSampler {
    /// A sampler whose ring starts with room for `capacity` segments in flight.
    pub fn new(capacity: usize) -> Self {
        RateSampler {
            ring: vec![TxRecord::default(); capacity.max(16).next_power_of_two()],
            delivered: 0,
            delivered_time: 0,
            first_tx: 0,
            app_limited: 0,
            lost: 0,
            dup_credit: 0,
            min_rtt: WindowedFilter::new(0, u64::MAX),
            ack: Pending::default(),
        }
    }

    #[inline]
    fn slot(&self, seq: u64) -> usize {
        (seq & (self.ring.len() as u64 - 1)) as usize
    }

    /// Doubles the ring until it holds segments `snd_una .. end`, keeping the records of
    /// those below `high_sent`. Rare: only when the window reaches a new power of two.
    #[cold]
    fn grow(&mut self, snd_una: u64, high_sent: u64, end: u64) {
        let mut cap = self.ring.len() * 2;
        while ((end - snd_una) as usize) > cap {
            cap *= 2;
        }
        let mut ring = vec![TxRecord::default(); cap];
        for seq in snd_una..high_sent {
            ring[(seq & (cap as u64 - 1)) as usize] = self.ring[self.slot(seq)];
        }
        self.ring = ring;
    }

    /// Segment `seq` leaves at `now`; segments `snd_una .. high_sent` have been sent
    /// before (Linux `tcp_rate_skb_sent`).
    #[inline]
    pub fn on_send(&mut self, now: Nanos, seq: u64, snd_una: u64, high_sent: u64) {
        if high_sent == snd_una {
            // Nothing outstanding (Linux tests `packets_out`, not the loss-marking guess
            // of in-flight): the network can deliver only what leaves from now on, so
            // both phases start here.
            self.first_tx = now;
            self.delivered_time = now;
        }
        let end = high_sent.max(seq + 1);
        if end - snd_una > self.ring.len() as u64 {
            self.grow(snd_una, high_sent, end);
        }
        let i = self.slot(seq);
        self.ring[i] = TxRecord {
            sent: now,
            first_tx: self.first_tx,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            retrans: seq < high_sent,
        };
    }

    /// An ACK arrives: start collecting its sample.
    #[inline]
    pub fn start_ack(&mut self) {
        self.ack = Pending {
            delivered_before: self.delivered,
            lost_before: self.lost,
            ..Pending::default()
        };
    }

    /// The ACK being processed delivers segment `seq`, by a new SACK block or by the
    /// cumulative ACK (called in ascending order, SACKed segments first as in Linux's
    /// `tcp_ack`; `tcp_rate_skb_delivered`). The sample follows the most
    /// recently sent of them: the one with the highest send-time `delivered`.
    #[inline]
    pub fn on_acked(&mut self, seq: u64) {
        let tx = self.ring[self.slot(seq)];
        // Linux replaces the choice while `prior_delivered` is still 0 (its "no choice
        // yet" value), so among segments sent before anything was delivered the last one
        // wins; otherwise only a strictly higher count does.
        let take = match self.ack.prior {
            None => true,
            Some((pd, _)) => pd == 0 || tx.delivered > pd,
        };
        if take {
            self.ack.prior = Some((tx.delivered, tx.delivered_time));
            self.ack.is_app_limited = tx.app_limited;
            self.ack.is_retrans = tx.retrans;
            self.first_tx = tx.sent;
            self.ack.send_phase = tx.sent.saturating_sub(tx.first_tx);
        }
        if tx.retrans {
            self.ack.retrans_acked = true;
        } else {
            self.ack.last_ackt = Some(tx.sent);
        }
    }

    /// `n` more segments reached the receiver.
    #[inline]
    pub fn delivered(&mut self, n: u64) {
        self.delivered += n;
    }

    /// A duplicate ACK reported a segment received out of order (`tcp_add_reno_sack`),
    /// `outstanding` segments being unacknowledged; the receiver cannot hold more than all
    /// but the hole.
    #[inline]
    pub fn dup_delivered(&mut self, outstanding: u64) {
        if self.dup_credit < outstanding.saturating_sub(1) {
            self.delivered += 1;
            self.dup_credit += 1;
        }
    }

    /// A cumulative ACK acknowledged `acked` segments, leaving `outstanding`: the hole it
    /// filled is new, the rest were counted by duplicate ACKs as far as they go
    /// (`tcp_remove_reno_sacks`).
    #[inline]
    pub fn cum_delivered(&mut self, acked: u64, outstanding: u64) {
        self.delivered += acked.saturating_sub(self.dup_credit).max(1);
        self.dup_credit -= self.dup_credit.min(acked.saturating_sub(1));
        self.dup_credit = self.dup_credit.min(outstanding.saturating_sub(1));
    }

    /// `n` segments were marked lost.
    #[inline]
    pub fn lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// The connection is application-limited until what is in flight now has been
    /// delivered (Linux `tcp_rate_check_app_limited`; BBR's PROBE_RTT does the same).
    #[inline]
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + in_flight as u64).max(1);
    }

    /// Ends the ACK and produces its sample (Linux `tcp_rate_gen`). `echo_rtt` is the
    /// timestamp-echo RTT if the ACK acknowledged new data; the `conn` fields describe
    /// the connection around the ACK.
    pub fn finish_ack(
        &mut self,
        now: Nanos,
        echo_rtt: Option<Nanos>,
        prior_in_flight: u32,
        in_flight: u32,
        state: CaState,
        srtt: Option<Nanos>,
    ) -> RateSample {
        // The application-limited stretch ends once its last packet is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let acked_sacked = self.delivered - self.ack.delivered_before;
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let a = self.ack;
        // RTT of the newest segment acknowledged, unless a retransmission was among them
        // (its send time is ambiguous), then the timestamp echo.
        let rtt = match (a.last_ackt, a.retrans_acked) {
            (Some(t), false) => Some(now - t),
            _ => echo_rtt,
        };
        if let Some(r) = rtt {
            self.min_rtt.running_min(MIN_RTT_WINDOW, now, r);
        }
        let mut rs = RateSample {
            now,
            acked_sacked: acked_sacked.min(u32::MAX as u64) as u32,
            losses: (self.lost - a.lost_before).min(u32::MAX as u64) as u32,
            delivered: 0,
            interval: None,
            prior_delivered: 0,
            is_app_limited: a.is_app_limited,
            is_retrans: a.is_retrans,
            prior_in_flight,
            rtt,
            conn_delivered: self.delivered,
            delivered_time: self.delivered_time,
            in_flight,
            state,
            srtt,
        };
        let Some((prior_delivered, prior_time)) = a.prior else {
            return rs;
        };
        rs.prior_delivered = prior_delivered;
        rs.delivered = self.delivered - prior_delivered;
        // Sending and acknowledging are two pipeline phases of one flight; the longer one
        // bounds the rate from below honestly.
        let ack_phase = now.saturating_sub(prior_time);
        let interval = a.send_phase.max(ack_phase);
        // Shorter than the minimum RTT cannot be a round trip (e.g. after a spurious
        // retransmission): no sample.
        if interval >= self.min_rtt.get() {
            rs.interval = Some(interval);
        }
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn finish(r: &mut RateSampler, now: Nanos, echo: Option<Nanos>) -> RateSample {
        r.finish_ack(now, echo, 0, 0, CaState::Open, None)
    }

    #[test]
    fn a_window_delivered_in_one_rtt_gives_the_window_per_rtt() {
        // 10 segments leave at 0, 1, ..., 9 ms; ACKs (one per segment) come back 100 ms
        // after each. Segment k's ACK: delivered = k + 1 − 0 (all were sent with nothing
        // delivered yet), send phase k ms, ACK phase 100 + k ms (delivered_time was set
        // to 0 when the first segment left an empty pipe).
        let mut r = RateSampler::new(4);
        for seq in 0..10 {
            r.on_send(seq * MS, seq, 0, seq);
        }
        for seq in 0..10 {
            r.start_ack();
            r.on_acked(seq);
            r.delivered(1);
            let rs = finish(&mut r, (100 + seq) * MS, None);
            assert_eq!(rs.delivered, seq + 1);
            assert_eq!(rs.interval, Some((100 + seq) * MS));
            assert_eq!(rs.rtt, Some(100 * MS));
            assert_eq!(rs.acked_sacked, 1);
        }
    }

    #[test]
    fn a_steady_window_gives_window_per_rtt() {
        // Window 2, RTT 100 ms, segments 10 ms apart (times in ms):
        //   0: send 0 (pipe empty: first_tx = delivered_time = 0) → {d 0, t 0, ftx 0}
        //  10: send 1 → {d 0, t 0, ftx 0}
        // 100: ACK 0 → delivered 1, delivered_time 100, first_tx 0; send 2 → {1, 100, 0}
        // 110: ACK 1 → delivered 2 over max(10 − 0, 110 − 0) = 110 ms;
        //      first_tx 10; send 3 → {2, 110, 10}
        // 200: ACK 2 → delivered 3 − 1 = 2 over max(100 − 0, 200 − 100) = 100 ms
        // 210: ACK 3 → delivered 4 − 2 = 2 over max(110 − 10, 210 − 110) = 100 ms
        let mut r = RateSampler::new(16);
        let ack = |r: &mut RateSampler, now: Nanos, seq: u64| {
            r.start_ack();
            r.on_acked(seq);
            r.delivered(1);
            finish(r, now * MS, None)
        };
        r.on_send(0, 0, 0, 0);
        r.on_send(10 * MS, 1, 0, 1);
        let rs = ack(&mut r, 100, 0);
        assert_eq!((rs.delivered, rs.interval), (1, Some(100 * MS)));
        r.on_send(100 * MS, 2, 1, 2);
        let rs = ack(&mut r, 110, 1);
        assert_eq!((rs.delivered, rs.interval), (2, Some(110 * MS)));
        r.on_send(110 * MS, 3, 2, 3);
        let rs = ack(&mut r, 200, 2);
        assert_eq!((rs.delivered, rs.interval), (2, Some(100 * MS)));
        let rs = ack(&mut r, 210, 3);
        assert_eq!((rs.delivered, rs.interval), (2, Some(100 * MS)));
        // 2 segments per 100 ms = 20 segments/s.
        assert_eq!(rs.rate(), Some(20 * BW_UNIT));
    }

    #[test]
    fn an_ack_covering_several_segments_samples_the_newest() {
        let mut r = RateSampler::new(16);
        r.on_send(0, 0, 0, 0);
        r.start_ack();
        r.on_acked(0);
        r.delivered(1);
        finish(&mut r, 50 * MS, None);
        // Segments 1 (delivered 1 at send) and 2, 3 (sent after another ACK raised
        // delivered to 2) — here we simply bump delivered between sends.
        r.on_send(50 * MS, 1, 1, 1);
        r.delivered += 1; // as if a duplicate ACK had reported one
        r.on_send(51 * MS, 2, 1, 2);
        r.on_send(52 * MS, 3, 1, 3);
        r.start_ack();
        for s in 1..4 {
            r.on_acked(s);
        }
        r.delivered(2);
        let rs = finish(&mut r, 102 * MS, None);
        // Segment 2 is the first with the highest send-time count (2): prior = 2,
        // delivered 4 − 2 = 2; RTT from the newest segment (3): 102 − 52 = 50 ms.
        assert_eq!((rs.prior_delivered, rs.delivered), (2, 2));
        assert_eq!(rs.rtt, Some(50 * MS));
        assert_eq!(rs.acked_sacked, 2);
    }

    #[test]
    fn duplicate_acks_deliver_without_a_sample_and_short_intervals_are_rejected() {
        let mut r = RateSampler::new(16);
        r.on_send(0, 0, 0, 0);
        r.start_ack();
        r.on_acked(0);
        r.delivered(1);
        let rs = finish(&mut r, 100 * MS, Some(100 * MS));
        assert_eq!(rs.interval, Some(100 * MS));
        // A duplicate ACK: one delivered, no segment acknowledged, so no rate.
        r.start_ack();
        r.dup_delivered(2);
        let rs = finish(&mut r, 110 * MS, None);
        assert_eq!((rs.acked_sacked, rs.interval, rs.rtt), (1, None, None));
        assert_eq!(rs.conn_delivered, 2);
        // Segment 1 leaves at 120 ms and is retransmitted at 140 ms; the ACK at 150 ms
        // covers it. Send phase 140 − 120 = 20 ms, ACK phase 150 − 120 = 30 ms: shorter
        // than the minimum RTT (100 ms), so no rate; the RTT comes from the echo.
        r.on_send(120 * MS, 1, 1, 1);
        r.on_send(140 * MS, 1, 1, 2);
        r.start_ack();
        r.on_acked(1);
        r.delivered(1);
        let rs = finish(&mut r, 150 * MS, Some(100 * MS));
        assert!(rs.is_retrans);
        assert_eq!(
            (rs.delivered, rs.interval, rs.rtt),
            (1, None, Some(100 * MS))
        );
    }

    #[test]
    fn retransmissions_use_the_echo_rtt_and_app_limited_marks_clear() {
        let mut r = RateSampler::new(2);
        for seq in 0..4 {
            r.on_send(0, seq, 0, seq);
        }
        r.mark_app_limited(4); // app-limited until delivered > 0 + 4
        r.on_send(MS, 0, 0, 4); // retransmission of 0, marked app-limited
        r.start_ack();
        r.on_acked(0);
        r.delivered(1);
        let rs = finish(&mut r, 100 * MS, Some(60 * MS));
        assert!(rs.is_retrans && rs.is_app_limited);
        assert_eq!(rs.rtt, Some(60 * MS));
        r.start_ack();
        for s in 1..4 {
            r.on_acked(s);
        }
        r.delivered(3);
        finish(&mut r, 101 * MS, None);
        assert_eq!(r.app_limited, 4, "delivered 4 is not beyond 4 yet");
        r.start_ack();
        r.delivered(1);
        finish(&mut r, 102 * MS, None);
        assert_eq!(r.app_limited, 0);
    }

    #[test]
    fn duplicate_ack_credit_is_spent_only_by_cumulative_acks() {
        let mut r = RateSampler::new(16);
        // Segments 0..9 outstanding; 0 and 5 are lost, so 1–4 and 6–9 draw 8 duplicate
        // ACKs: 8 delivered.
        for _ in 0..8 {
            r.dup_delivered(10);
        }
        assert_eq!(r.delivered, 8);
        // The retransmitted 0 arrives: ACK 5 covers 5 segments, 4 of them counted: +1.
        // 6–9 are still held beyond the new hole: credit 4.
        r.cum_delivered(5, 5);
        assert_eq!((r.delivered, r.dup_credit), (9, 4));
        // Linux's reno accounting forgets the credit when recovery ends; the sampler
        // keeps it, so ACK 10 (the retransmitted 5 arrives) adds 1, not 5: 10 segments
        // delivered in all.
        r.cum_delivered(5, 0);
        assert_eq!((r.delivered, r.dup_credit), (10, 0));
        // Nothing held: an ACK of 3 is 3 new deliveries.
        r.cum_delivered(3, 2);
        assert_eq!(r.delivered, 13);
        // The receiver cannot hold more than all outstanding segments but the hole: with
        // 2 outstanding, a second duplicate ACK is not a second delivery.
        r.dup_delivered(2);
        r.dup_delivered(2);
        assert_eq!(r.delivered, 14);
    }

    #[test]
    fn the_ring_grows_and_keeps_outstanding_records() {
        let mut r = RateSampler::new(16);
        for seq in 0..100 {
            r.on_send(seq, seq, 0, seq);
        }
        assert_eq!(r.ring.len(), 128);
        for seq in 0..100 {
            assert_eq!(r.ring[r.slot(seq)].sent, seq);
        }
    }

    #[test]
    fn rate_is_segments_per_second_scaled() {
        let rs = RateSample {
            now: 0,
            acked_sacked: 1,
            losses: 0,
            delivered: 5,
            interval: Some(10 * MS),
            prior_delivered: 0,
            is_app_limited: false,
            is_retrans: false,
            prior_in_flight: 0,
            rtt: None,
            conn_delivered: 5,
            delivered_time: 0,
            in_flight: 0,
            state: CaState::Open,
            srtt: None,
        };
        // 5 segments in 10 ms = 500 segments/s.
        assert_eq!(rs.rate(), Some(500 * BW_UNIT));
        assert_eq!(
            RateSample {
                interval: None,
                ..rs
            }
            .rate(),
            None
        );
    }
}
