//! Parameters of the RED family (RED, FRED, CBT, CBQ) that a configuration leaves out,
//! derived from the link they run on, so that `{"kind": "red"}` is a working RED.
//!
//! With `C` the link rate in packets of `mean_pkt_size` per second:
//!
//! * **RED** — `min_th = max(5, C·5 ms / 2)` packets, `max_th = 3·min_th` and
//!   `w_q = 1 − e^(−1/C)`: Adaptive RED's automatic setting (Floyd, Gummadi & Shenker,
//!   "Adaptive RED", 2001, §6: a 5 ms target delay, min_th at least Floyd & Jacobson's
//!   5 packets, an average that forgets in about a second), which ns-3's
//!   `RedQueueDisc` applies when its thresholds and `QW` are 0. `max_p = 0.1`, Floyd &
//!   Jacobson's (1993) and Floyd's 1997 parameter notes'. The hard limit is `4·max_th`,
//!   the relation iproute2's `tc red` assumes the other way round (`max = limit/4`,
//!   `min = max/3`). Thresholds and limit scale by `mean_pkt_size` where the queue (or
//!   the limit's rule) counts bytes.
//! * **FRED** — Lin & Morris (SIGCOMM '97) as summarised in [`crate::fred`]: RED's
//!   `min_th` and `w_q`, `max_th = 2·min_th`, `max_p = 0.02`, and a buffer of
//!   `4·min_th` (their `min_th = buffer/4`).
//! * **CBT** — TCP's RED as RED's above; the UDP classes held to the shares of Parris,
//!   Jeffay & Smith's experiment (160 kB/s of multimedia and 150 kB/s of other UDP on
//!   their 10 Mbit/s link: 12.8 % and 12 % of the link), in 1000 B multimedia and
//!   1500 B other packets, at the backlog TCP's RED settles at, `max_th` full-size
//!   packets over TCP's share ([`crate::cbt`]'s rule). Limit as RED's.
//! * **CBQ** — the same study's shares, 74 % TCP, 14 % multimedia, 12 % other; per-class
//!   limits RED's limit for TCP and half of it for each UDP class (their 60/30/30 at
//!   10 Mbit/s).
//!
//! At 1.5 Mbit/s (ADSL1) and at 10 Mbit/s these give min_th 5, max_th 15, limit 60;
//! at 100 Mbit/s min_th 20.8, max_th 62.5, limit 250.

use crate::cbt::{CbtShares, CbtTcp};
use crate::class::PerClass;
use crate::FullRule;

/// Floyd & Jacobson's smallest useful minimum threshold, in packets.
pub const MIN_TH_FLOOR: f64 = 5.0;
/// Adaptive RED's target queueing delay, from which `min_th` grows on fast links.
pub const TARGET_DELAY_S: f64 = 0.005;
/// RED's and CBT's drop probability at `max_th`.
pub const RED_MAX_P: f64 = 0.1;
/// FRED's (Lin & Morris).
pub const FRED_MAX_P: f64 = 0.02;
/// Parris et al.'s shares of the link: multimedia (tagged) and other UDP, for CBT.
pub const CBT_TAGGED_SHARE: f64 = 0.128;
pub const CBT_OTHER_SHARE: f64 = 0.12;
/// Their multimedia packets (CBT's tagged class), bytes.
pub const CBT_TAGGED_PKT: u32 = 1000;
/// Their CBQ shares: TCP, multimedia, other.
pub const CBQ_SHARES: PerClass<f64> = PerClass {
    tcp: 0.74,
    tagged: 0.14,
    other: 0.12,
};

/// RED's or FRED's curve, weight and hard limit as derived for a link: `min_th` in
/// packets, `max_th` and the limit as multiples (of `min_th` and of `max_th`), so that a
/// given threshold carries the derived ones with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedDefaults {
    pub min_th: f64,
    pub max_over_min: f64,
    pub limit_over_max: f64,
    pub max_p: f64,
    pub w_q: f64,
}

/// The link rate in packets of `mean_pkt_size` per second, or an error naming `key`
/// (the first parameter that would have been derived) when the rate is unknown.
fn packets_per_s(key: &str, rate_bps: u64, mean_pkt_size: u32) -> Result<f64, String> {
    if rate_bps == 0 || mean_pkt_size == 0 {
        return Err(format!(
            "{key}: not given, and there is no link rate to derive it from"
        ));
    }
    Ok(rate_bps as f64 / (8.0 * mean_pkt_size as f64))
}

/// `1 − e^(−x)` for `x ≥ 0` with IEEE operations only, so that the derived weight is
/// the same on every platform: the series `a = y − y²/2! + y³/3! − …` on `y = x/2^k ≤
/// 1/2` (no cancellation for small `x`), then `k` doublings `a ← a·(2 − a)`, since
/// `1 − e^(−2y) = 1 − (1 − a)²`.
pub fn one_minus_exp_neg(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return if x > 0.0 { 1.0 } else { 0.0 };
    }
    let mut y = x;
    let mut halvings = 0;
    while y > 0.5 && halvings < 64 {
        y /= 2.0;
        halvings += 1;
    }
    // 20 terms are far below an ulp for y ≤ 1/2.
    let (mut term, mut a) = (y, y);
    for n in 2..=20 {
        term *= -y / n as f64;
        a += term;
    }
    for _ in 0..halvings {
        a *= 2.0 - a;
    }
    a
}

/// RED's defaults for a link of `rate_bps` carrying `mean_pkt_size`-byte packets; `key`
/// names the parameter reported if the rate is unknown.
pub fn red(key: &str, rate_bps: u64, mean_pkt_size: u32) -> Result<RedDefaults, String> {
    let c = packets_per_s(key, rate_bps, mean_pkt_size)?;
    Ok(RedDefaults {
        min_th: MIN_TH_FLOOR.max(TARGET_DELAY_S * c / 2.0),
        max_over_min: 3.0,
        limit_over_max: 4.0,
        max_p: RED_MAX_P,
        w_q: one_minus_exp_neg(1.0 / c),
    })
}

/// FRED's defaults (see the module doc): the buffer is `4·min_th = 2·max_th`.
pub fn fred(key: &str, rate_bps: u64, mean_pkt_size: u32) -> Result<RedDefaults, String> {
    Ok(RedDefaults {
        max_over_min: 2.0,
        limit_over_max: 2.0,
        max_p: FRED_MAX_P,
        ..red(key, rate_bps, mean_pkt_size)?
    })
}

/// The bytes one packet counts for in the thresholds (`thresholds_in_bytes`) and in a
/// limit under `rule` (1 where they count packets), for [`Given::complete`].
pub fn units(mean_pkt_size: u32, thresholds_in_bytes: bool, rule: FullRule) -> (f64, f64) {
    let size = mean_pkt_size as f64;
    let limit = if rule == FullRule::Ps { 1.0 } else { size };
    (if thresholds_in_bytes { size } else { 1.0 }, limit)
}

/// A derived limit as a whole number: the nearest, at least 1.
pub fn whole(limit: f64) -> u64 {
    (limit.round() as u64).max(1)
}

/// RED's or FRED's parameters as a configuration gives them, `None` where left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Given {
    pub min_th: Option<f64>,
    pub max_th: Option<f64>,
    pub max_p: Option<f64>,
    pub w_q: Option<f64>,
    pub limit: Option<u64>,
}

/// The parameters in force.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub limit: u64,
}

impl Given {
    /// Fills what is left out from `derive` ([`red`] or [`fred`]) for the link: a given
    /// `min_th` sets the derived `max_th`, a given `max_th` the derived limit.
    /// `th_bytes` and `limit_bytes` are the bytes one packet counts for in the
    /// thresholds and in the limit (1 where they count packets).
    pub fn complete(
        self,
        derive: fn(&str, u64, u32) -> Result<RedDefaults, String>,
        rate_bps: u64,
        mean_pkt_size: u32,
        (th_bytes, limit_bytes): (f64, f64),
    ) -> Result<Params, String> {
        let missing = [
            ("min_th", self.min_th.is_none()),
            ("max_th", self.max_th.is_none()),
            ("max_p", self.max_p.is_none()),
            ("w_q", self.w_q.is_none()),
            ("limit", self.limit.is_none()),
        ]
        .into_iter()
        .find(|(_, m)| *m);
        let d = match missing {
            Some((key, _)) => derive(key, rate_bps, mean_pkt_size)?,
            // Nothing to derive: the rate may be unknown.
            None => RedDefaults {
                min_th: 0.0,
                max_over_min: 0.0,
                limit_over_max: 0.0,
                max_p: 0.0,
                w_q: 0.0,
            },
        };
        let min_th = self.min_th.unwrap_or(d.min_th * th_bytes);
        let max_th = self.max_th.unwrap_or(min_th * d.max_over_min);
        let limit = self
            .limit
            .unwrap_or_else(|| whole(max_th / th_bytes * d.limit_over_max * limit_bytes));
        Ok(Params {
            min_th,
            max_th,
            max_p: self.max_p.unwrap_or(d.max_p),
            w_q: self.w_q.unwrap_or(d.w_q),
            limit,
        })
    }
}

/// CBT's TCP RED (RED's defaults, not gentle).
pub fn cbt_tcp(rate_bps: u64, mean_pkt_size: u32) -> Result<CbtTcp, String> {
    let r = red("tcp", rate_bps, mean_pkt_size)?;
    Ok(CbtTcp {
        min_th: r.min_th,
        max_th: r.min_th * r.max_over_min,
        max_p: r.max_p,
        w_q: r.w_q,
        gentle: false,
    })
}

/// CBT's shares: the study's fractions of this link, at the backlog of TCP's `max_th`
/// full-size packets over TCP's share.
pub fn cbt_shares(rate_bps: u64, mean_pkt_size: u32, tcp_max_th: f64) -> CbtShares {
    let tcp_share = 1.0 - CBT_TAGGED_SHARE - CBT_OTHER_SHARE;
    CbtShares {
        link_rate_bps: rate_bps,
        tagged_bps: (rate_bps as f64 * CBT_TAGGED_SHARE).round() as u64,
        other_bps: (rate_bps as f64 * CBT_OTHER_SHARE).round() as u64,
        backlog_bytes: (tcp_max_th * mean_pkt_size as f64 / tcp_share).round() as u64,
        tagged_pkt_len: CBT_TAGGED_PKT,
        other_pkt_len: mean_pkt_size,
    }
}

/// CBQ's per-class limits in packets: RED's limit for TCP, half of it for each UDP class.
pub fn cbq_limits(rate_bps: u64, mean_pkt_size: u32) -> Result<PerClass<u64>, String> {
    let r = red("limits", rate_bps, mean_pkt_size)?;
    let limit = r.min_th * r.max_over_min * r.limit_over_max;
    Ok(PerClass {
        tcp: whole(limit),
        tagged: whole(limit / 2.0),
        other: whole(limit / 2.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(given: Given, rate: u64, units: (f64, f64)) -> Result<Params, String> {
        given.complete(red, rate, 1500, units)
    }

    const NONE: Given = Given {
        min_th: None,
        max_th: None,
        max_p: None,
        w_q: None,
        limit: None,
    };

    #[test]
    fn red_follows_adaptive_red_and_iproute2_by_hand() {
        // 1.5 Mbit/s, 1500 B: C = 125 packets/s; 5 ms of it is 0.625 packets, half of
        // it under the floor, so min_th 5, max_th 15, limit 60.
        let r = complete(NONE, 1_500_000, (1.0, 1.0)).unwrap();
        assert_eq!((r.min_th, r.max_th, r.max_p, r.limit), (5.0, 15.0, 0.1, 60));
        // w_q = 1 − e^(−1/125) = 0.00796808516...
        assert!(
            (r.w_q - 0.007_968_085_162_939_37).abs() < 1e-17,
            "{}",
            r.w_q
        );
        // 100 Mbit/s: C = 8333.3; 5 ms = 41.67 packets, min_th 20.83, max_th 62.5.
        let r = complete(NONE, 100_000_000, (1.0, 1.0)).unwrap();
        assert!((r.min_th - 125.0 / 6.0).abs() < 1e-12, "{}", r.min_th);
        assert!((r.max_th - 62.5).abs() < 1e-12 && r.limit == 250);
        // Bytes: thresholds in bytes (5 × 1500), the limit in bytes by its rule.
        let r = complete(NONE, 1_500_000, (1500.0, 1500.0)).unwrap();
        assert_eq!((r.min_th, r.max_th, r.limit), (7500.0, 22_500.0, 90_000));
        // A given min_th carries max_th (×3) and the limit (×4) with it.
        let given = Given {
            min_th: Some(10.0),
            ..NONE
        };
        let r = complete(given, 1_500_000, (1.0, 1.0)).unwrap();
        assert_eq!((r.min_th, r.max_th, r.limit), (10.0, 30.0, 120));
        // An unknown rate is an error naming the first parameter to derive ...
        let e = complete(given, 0, (1.0, 1.0)).unwrap_err();
        assert!(e.starts_with("max_th: not given"), "{e}");
        // ... but with everything given no rate is needed.
        let all = Given {
            min_th: Some(5.0),
            max_th: Some(15.0),
            max_p: Some(0.1),
            w_q: Some(0.002),
            limit: Some(60),
        };
        assert_eq!(complete(all, 0, (1.0, 1.0)).unwrap().w_q, 0.002);
    }

    #[test]
    fn the_exponential_is_accurate_everywhere() {
        for (x, want) in [
            (1e-6, 9.999_995_000_001_666e-7),
            (0.5, 0.393_469_340_287_366_6),
            (1.0, 0.632_120_558_828_557_7),
            (12.0, 0.999_993_855_787_647_2),
        ] {
            let got = one_minus_exp_neg(x);
            assert!((got - want).abs() <= 1e-15 * want.max(1e-3), "{x}: {got}");
        }
        assert_eq!(one_minus_exp_neg(0.0), 0.0);
        assert_eq!(one_minus_exp_neg(f64::INFINITY), 1.0);
    }

    #[test]
    fn fred_cbt_and_cbq_by_hand() {
        let f = NONE.complete(fred, 10_000_000, 1500, (1.0, 1.0)).unwrap();
        assert_eq!(
            (f.min_th, f.max_th, f.max_p, f.limit),
            (5.0, 10.0, 0.02, 20)
        );
        // CBT at 10 Mbit/s: backlog 15 × 1500 / 0.752 = 29 920 B; tagged
        // 1.28 Mbit/s → 0.128 × 29 920 / 1000 = 3.83 packets, other 0.12 × 29 920 /
        // 1500 = 2.39 packets (the study's 3.84 and 2.4 at its 30 kB).
        let s = cbt_shares(10_000_000, 1500, 15.0);
        assert_eq!(
            (s.tagged_bps, s.other_bps, s.backlog_bytes),
            (1_280_000, 1_200_000, 29_920)
        );
        let (t, o) = s.thresholds().unwrap();
        assert!(
            (t - 3.82976).abs() < 1e-5 && (o - 2.3936).abs() < 1e-5,
            "{t} {o}"
        );
        let l = cbq_limits(10_000_000, 1500).unwrap();
        assert_eq!((l.tcp, l.tagged, l.other), (60, 30, 30));
    }
}
