//! CAKE's tins: DiffServ classes, each with a bandwidth threshold and a DRR weight
//! (Piece of CAKE §3.2; sch_cake `cake_config_*`, the `diffserv3/4/8` and `precedence`
//! lookup tables, `cake_select_tin`).
//!
//! The tin index order is sch_cake's: for diffserv3 tin 0 is Best Effort, 1 Bulk, 2
//! Voice; for diffserv4 0 Best Effort, 1 Bulk, 2 Video, 3 Voice. Tin 0 always has the
//! full rate, so its threshold is the global shaper's rate. Thresholds are fractions of
//! the shaped rate (Bulk 1/16, Video 1/2, Voice 1/4; diffserv8 and precedence: each tin
//! 7/8 of the one before) and the DRR weights (`tin_quantum`) the same fractions of
//! 1024 (256 for diffserv8/precedence; besteffort 65535).
//!
//! How they are used (see `Cake::dequeue`): shaped, the *highest-index* tin whose
//! threshold clock has come due is served — a higher class has priority as long as it
//! stays within its threshold, and above it falls back to competing on its clock —
//! else the tin whose clock is earliest. Unshaped there are no clocks and the tins
//! share by weighted DRR over `tin_quantum`.
//!
//! A consequence (Linux's too): Best Effort's threshold is the full rate and its clock
//! moves only with its own packets, so while it is backlogged it is always due, and a
//! higher tin above its threshold is served only when its own clock comes due — it gets
//! its threshold, not more. On a 256 kbit/s upstream an EF-marked G.711 call (106
//! kbit/s with ATM cells) in Voice (1/4 = 64 kbit/s) beside an upload loses ~40 %,
//! where in Best Effort it would get its fair share.

use serde::{Deserialize, Serialize};

/// DiffServ mode (`tc … cake diffserv3`, …). Linux default: diffserv3.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Diffserv {
    /// One tin.
    Besteffort,
    /// Bulk (CS1, LE), Best Effort, Voice (EF, VA, CS6, CS7 and TOS4).
    #[default]
    Diffserv3,
    /// Bulk, Best Effort, Video (AF2x–AF4x, CS2, CS3, TOS4), Voice (EF, VA, CS4–CS7).
    Diffserv4,
    /// Eight classes (sch_cake `cake_config_diffserv8`).
    Diffserv8,
    /// Eight tins by IP precedence (the top three DSCP bits).
    Precedence,
}

/// Highest number of tins (sch_cake `CAKE_MAX_TINS`).
pub const MAX_TINS: usize = 8;

impl Diffserv {
    pub fn tin_count(self) -> usize {
        match self {
            Diffserv::Besteffort => 1,
            Diffserv::Diffserv3 => 3,
            Diffserv::Diffserv4 => 4,
            Diffserv::Diffserv8 | Diffserv::Precedence => 8,
        }
    }

    /// The tin of a packet with DSCP `dscp` (sch_cake's `tin_index` tables, written as
    /// lists of code points; unlisted code points go to Best Effort).
    pub fn tin_of(self, dscp: u8) -> usize {
        match self {
            Diffserv::Besteffort => 0,
            Diffserv::Diffserv3 => match dscp {
                1 | 8 => 1,                 // LE, CS1
                4 | 44 | 46 | 48 | 56 => 2, // TOS4, VA, EF, CS6, CS7
                _ => 0,
            },
            Diffserv::Diffserv4 => match dscp {
                1 | 8 => 1,
                // TOS4, CS2, AF2x, CS3, AF3x, AF4x
                4 | 16 | 18 | 20 | 22 | 24 | 26 | 28 | 30 | 34 | 36 | 38 => 2,
                32 | 40 | 44 | 46 | 48 | 56 => 3, // CS4, CS5, VA, EF, CS6, CS7
                _ => 0,
            },
            Diffserv::Diffserv8 => match dscp {
                1 => 0,                                // background (LE)
                2 | 8 | 10 | 12 | 14 => 1,             // high throughput (TOS2, CS1, AF1x)
                4 | 18 | 20 | 22 => 4,                 // low-latency transactions
                16 => 5,                               // interactive shell (CS2)
                24 | 26 | 28 | 30 | 34 | 36 | 38 => 3, // video (CS3, AF3x, AF4x)
                32 | 40 | 44 | 46 => 6,                // minimum latency
                48 | 56 => 7,                          // network control
                _ => 2,                                // best effort
            },
            Diffserv::Precedence => (dscp >> 3).min(7) as usize,
        }
    }

    /// A short name for tin `i`, for reports.
    pub fn tin_name(self, i: usize) -> &'static str {
        const D8: [&str; 8] = [
            "background",
            "high_throughput",
            "best_effort",
            "video",
            "low_latency",
            "interactive",
            "min_latency",
            "net_control",
        ];
        const PREC: [&str; 8] = [
            "prec0", "prec1", "prec2", "prec3", "prec4", "prec5", "prec6", "prec7",
        ];
        let names: &[&str] = match self {
            Diffserv::Besteffort => &["best_effort"],
            Diffserv::Diffserv3 => &["best_effort", "bulk", "voice"],
            Diffserv::Diffserv4 => &["best_effort", "bulk", "video", "voice"],
            Diffserv::Diffserv8 => &D8,
            Diffserv::Precedence => &PREC,
        };
        names.get(i).copied().unwrap_or("")
    }

    /// Tin `i`'s threshold rate (bit/s) for a shaped rate of `rate_bps`, and its DRR
    /// weight.
    pub fn tin_share(self, i: usize, rate_bps: u64) -> (u64, u32) {
        match self {
            Diffserv::Besteffort => (rate_bps, 65535),
            Diffserv::Diffserv3 | Diffserv::Diffserv4 => {
                let shift = match (self, i) {
                    (_, 0) => 0,
                    (_, 1) => 4,                   // Bulk: 1/16
                    (Diffserv::Diffserv4, 2) => 1, // Video: 1/2
                    _ => 2,                        // Voice: 1/4
                };
                (rate_bps >> shift, 1024 >> shift)
            }
            Diffserv::Diffserv8 | Diffserv::Precedence => {
                let (mut rate, mut quantum) = (rate_bps, 256u32);
                for _ in 0..i.min(MAX_TINS) {
                    rate = rate.saturating_mul(7) >> 3;
                    quantum = (quantum * 7) >> 3;
                }
                (rate, quantum.max(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EF: u8 = 46;
    const CS1: u8 = 8;
    const AF41: u8 = 34;
    const CS5: u8 = 40;
    const CS6: u8 = 48;

    #[test]
    fn tins_by_dscp_in_each_mode() {
        for d in 0..64 {
            assert_eq!(Diffserv::Besteffort.tin_of(d), 0);
        }
        let d3 = Diffserv::Diffserv3;
        assert_eq!((d3.tin_of(0), d3.tin_of(CS1), d3.tin_of(EF)), (0, 1, 2));
        assert_eq!(d3.tin_name(d3.tin_of(EF)), "voice");
        assert_eq!(d3.tin_name(d3.tin_of(CS1)), "bulk");
        assert_eq!((d3.tin_of(CS6), d3.tin_of(56), d3.tin_of(44)), (2, 2, 2));
        // sch_cake's diffserv3 table leaves AF4x, CS4 and CS5 in Best Effort.
        assert_eq!((d3.tin_of(AF41), d3.tin_of(32), d3.tin_of(CS5)), (0, 0, 0));
        let d4 = Diffserv::Diffserv4;
        assert_eq!((d4.tin_of(0), d4.tin_of(CS1), d4.tin_of(EF)), (0, 1, 3));
        assert_eq!((d4.tin_of(AF41), d4.tin_of(24), d4.tin_of(16)), (2, 2, 2));
        assert_eq!((d4.tin_of(32), d4.tin_of(CS5), d4.tin_of(CS6)), (3, 3, 3));
        assert_eq!(d4.tin_of(10), 0, "AF11 is best effort");
        assert_eq!(d4.tin_name(2), "video");
        let d8 = Diffserv::Diffserv8;
        assert_eq!(
            (d8.tin_of(0), d8.tin_of(1), d8.tin_of(EF), d8.tin_of(56)),
            (2, 0, 6, 7)
        );
        assert_eq!((d8.tin_of(16), d8.tin_of(18), d8.tin_of(AF41)), (5, 4, 3));
        let p = Diffserv::Precedence;
        assert_eq!((p.tin_of(0), p.tin_of(EF), p.tin_of(63)), (0, 5, 7));
        for mode in [d3, d4, d8, p] {
            assert!((0..64).all(|d| mode.tin_of(d) < mode.tin_count()));
        }
    }

    #[test]
    fn thresholds_and_weights() {
        let r = 16_000_000;
        let d3 = Diffserv::Diffserv3;
        assert_eq!(
            (0..3).map(|i| d3.tin_share(i, r)).collect::<Vec<_>>(),
            [(16_000_000, 1024), (1_000_000, 64), (4_000_000, 256)]
        );
        let d4 = Diffserv::Diffserv4;
        assert_eq!(
            (0..4).map(|i| d4.tin_share(i, r)).collect::<Vec<_>>(),
            [
                (16_000_000, 1024),
                (1_000_000, 64),
                (8_000_000, 512),
                (4_000_000, 256)
            ]
        );
        // 7/8 steps: 256, 224, 196, 171 …; 16 M, 14 M, 12.25 M …
        let d8 = Diffserv::Diffserv8;
        assert_eq!(d8.tin_share(1, r), (14_000_000, 224));
        assert_eq!(d8.tin_share(2, r), (12_250_000, 196));
        assert_eq!(d8.tin_share(3, r).1, 171);
        assert_eq!(Diffserv::Besteffort.tin_share(0, r), (r, 65535));
    }
}
