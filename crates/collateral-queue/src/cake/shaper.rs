//! CAKE's deficit-mode shaper and its per-packet cost (Piece of CAKE §3.1; sch_cake
//! `cake_calc_overhead`, `cake_advance_shaper`, the start of `cake_dequeue`).
//!
//! * **Cost of a packet** on the shaped link: its IP length plus `overhead` (which may
//!   be negative, e.g. to strip a header the kernel counts), raised to `mpu`, then with
//!   ATM framing padded to whole 48-byte cell payloads sent as 53-byte cells. Linux
//!   applies the same steps to the frame length minus its network offset when an
//!   overhead is configured; our lengths are IP lengths already.
//! * **Deficit mode** (as in sch_fq): no token bucket. The shaper keeps the time the
//!   next packet may leave; each packet sent pushes it on by its serialisation time
//!   at the configured rate, counted from the previous value rather than from `now`,
//!   so time the link spent busy elsewhere is made up without a burst parameter. It is
//!   reset to `now` only when a packet arrives to an empty queue.
//! * **Tin thresholds** keep their own next-packet time, advanced at the tin's
//!   threshold rate, but differently: a tin that is behind advances from its old
//!   value, one ahead by less than a packet time moves to `now + packet time`, one
//!   further ahead stays. The tin scheduler reads them to tell whether a tin is within
//!   its share.
//!
//! Durations are `⌊bytes · 8·10⁹ / rate⌋` ns exactly; Linux multiplies by a per-byte
//! time in fixed point with a 34-bit shift, which truncates similarly.

use crate::Nanos;

/// sch_cake `MIN_RATE` (64 bytes/s): a threshold is never slower, so it always unwedges.
pub(super) const MIN_RATE_BPS: u64 = 64 * 8;

/// Linux's `psched_mtu` of an Ethernet device (1500 + 14 B): the packet size every
/// tin's COBALT parameters are scaled with (`mtu_time`, the low-rate target and
/// interval; sch_cake `cake_set_rate`). Linux uses it as is, whatever the overhead,
/// MPU or ATM settings: at 256 kbit/s with ATM framing an MTU *costs* 1696 B on the
/// shaper, but `mtu_time` stays 1514 B · 8 / rate = 47.3 ms.
pub(super) const PSCHED_MTU: u32 = 1514;

/// The bytes `len` (IP length) costs on the shaped link (sch_cake `cake_calc_overhead`,
/// without its min/max statistics and PTM mode).
#[inline]
pub fn adjusted_len(len: u32, overhead: i32, mpu: u32, atm: bool) -> u32 {
    let mut l = (len as i64 + overhead as i64).clamp(0, u32::MAX as i64) as u32;
    if l < mpu {
        l = mpu;
    }
    if atm {
        l = l.div_ceil(48).saturating_mul(53);
    }
    l
}

/// Serialisation time of `bytes` at `rate_bps` (0 when unshaped).
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Nanos {
    if rate_bps == 0 {
        return 0;
    }
    let t = bytes as u128 * 8_000_000_000 / rate_bps as u128;
    t.min(Nanos::MAX as u128) as Nanos
}

/// The DRR quantum of a tin's flows (sch_cake `cake_set_rate`): 1/4096 of a second's
/// worth of bytes at the tin's rate, within 300..=1514; 1514 unshaped.
#[inline]
pub(super) fn flow_quantum(rate_bps: u64) -> u32 {
    if rate_bps == 0 {
        1514
    } else {
        ((rate_bps / 8) >> 12).clamp(300, 1514) as u32
    }
}

/// Advances a tin's next-packet time after it sent a packet of duration `dur` at its
/// threshold rate (the tin half of sch_cake `cake_advance_shaper`).
#[inline]
pub(super) fn charge_tin(time_next: &mut Nanos, now: Nanos, dur: Nanos) {
    if *time_next < now {
        *time_next = time_next.saturating_add(dur);
    } else if *time_next < now.saturating_add(dur) {
        *time_next = now.saturating_add(dur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_mpu_and_atm_cells_by_hand() {
        // 100 B + 8 = 108 B → ⌈108/48⌉ = 3 cells → 159 B.
        assert_eq!(adjusted_len(100, 8, 0, true), 159);
        // 1500 + 18 (Ethernet header + FCS) = 1518, no cells.
        assert_eq!(adjusted_len(1500, 18, 0, false), 1518);
        // PPPoA VC-MUX (10): 1500 → 1510 → 32 cells → 1696 (as `Framing`).
        assert_eq!(adjusted_len(1500, 10, 0, true), 1696);
        // Exactly 48 B: one cell. 49 B: two.
        assert_eq!(adjusted_len(40, 8, 0, true), 53);
        assert_eq!(adjusted_len(41, 8, 0, true), 106);
        // mpu applies before the cell rounding: 40 + 0 → 64 → 2 cells.
        assert_eq!(adjusted_len(40, 0, 64, false), 64);
        assert_eq!(adjusted_len(40, 0, 64, true), 106);
        // Negative overhead, never below zero.
        assert_eq!(adjusted_len(1500, -20, 0, false), 1480);
        assert_eq!(adjusted_len(10, -64, 0, false), 0);
    }

    #[test]
    fn durations_and_quanta() {
        // 1518 B at 10 Mbit/s: 1518·8/10⁷ s = 1.2144 ms.
        assert_eq!(tx_time(1518, 10_000_000), 1_214_400);
        // 159 B at 1 Mbit/s: 1.272 ms.
        assert_eq!(tx_time(159, 1_000_000), 1_272_000);
        assert_eq!(tx_time(1500, 0), 0);
        // 10 Mbit/s = 1.25 MB/s → 1_250_000 >> 12 = 305; 1 Mbit/s → 30 → 300;
        // 100 Mbit/s → 3051 → 1514.
        assert_eq!(flow_quantum(10_000_000), 305);
        assert_eq!(flow_quantum(1_000_000), 300);
        assert_eq!(flow_quantum(100_000_000), 1514);
        assert_eq!(flow_quantum(0), 1514);
    }

    #[test]
    fn tin_clock_catches_up_from_behind_but_not_from_ahead() {
        let mut t = 100;
        charge_tin(&mut t, 1_000, 50); // behind: from its old value
        assert_eq!(t, 150);
        let mut t = 1_010;
        charge_tin(&mut t, 1_000, 50); // ahead by less than a packet: now + dur
        assert_eq!(t, 1_050);
        let mut t = 2_000;
        charge_tin(&mut t, 1_000, 50); // further ahead: unchanged
        assert_eq!(t, 2_000);
    }
}
