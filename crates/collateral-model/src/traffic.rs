//! Real-time traffic: a constant-bit-rate UDP source with optionally jittered
//! inter-departure times, the thin-stream application profiles whose packet sizes and
//! gaps are random, and the sink bookkeeping of every packet's fate.

use collateral_queue::{Ecn, Nanos};
use rand::RngExt;
use rand_distr::{Distribution, Normal};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::dist::Dist;
use crate::rng;
use crate::units::Direction;

/// IP + UDP headers added to an application payload.
pub const UDP_HEADERS: u32 = 28;

/// Thin-stream applications (SPEC §5: the traces of Petlund et al.'s thin-stream
/// studies), one way, no ACKs. Each is a payload-size and an inter-arrival distribution
/// fitted to the published statistics:
///
/// | profile | payload (B) | gap (ms) |
/// |---|---|---|
/// | `rdp` (Windows remote desktop) | 8 + Exp(103), ≤ 1417 | lognormal, median 159, σ 1.375 (p99 3892), 1–12 254 |
/// | `vnc` (from the client) | 1 + Exp(7), ≤ 106 | lognormal, median 8, σ 1.792 (p99 517), 0.1–5 451 |
/// | `g711` (RTP VoIP) | 180 | normal, mean 20, σ 0.43 (p1/p99 19/21), 19–21 |
/// | `skype_udp` (2 users) | 11 + Exp(100), ≤ 316 | lognormal, median 24, σ 0.261 (p99 44), 0.1–20 015 |
/// | `wow` (World of Warcraft) | 6 + Exp(20), ≤ 1228 | lognormal, median 133, σ 1.439 (p99 3785), 0.1–14 855 |
/// | `quake3` (from the server) | 40 + Exp(40), ≤ 300 | normal, mean 50, σ 6.45 (p1/p99 35/65), 30–70 |
///
/// Payloads: the published minimum, average and maximum only, so a shifted exponential
/// with that minimum and mean, capped at the maximum. Gaps: the median and 99th
/// percentile are matched exactly (σ = ln(p99/median)/2.326); the means then come out
/// at 409 (RDP; published 318), 40 (VNC; 34), 24.8 (Skype; 30, whose average is pulled up
/// by rare gaps of up to 20 s), 374 (WoW; 314) ms. Skype over TCP (an application-
/// limited TCP flow) is not among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum AppProfile {
    Rdp,
    Vnc,
    G711,
    SkypeUdp,
    Wow,
    Quake3,
}

impl AppProfile {
    pub const ALL: [AppProfile; 6] = [
        AppProfile::Rdp,
        AppProfile::Vnc,
        AppProfile::G711,
        AppProfile::SkypeUdp,
        AppProfile::Wow,
        AppProfile::Quake3,
    ];

    /// Payload bytes and gap (ms) distributions.
    pub fn dists(self) -> (Dist, Dist) {
        let shifted = |min: f64, mean: f64, max: f64| Dist::Exponential {
            mean: mean - min,
            shift: Some(min),
            max: Some(max),
        };
        let lognormal = |median: f64, p99: f64, min: f64, max: f64| Dist::Lognormal {
            median,
            sigma: (p99 / median).ln() / 2.326_347_874,
            min: Some(min),
            max: Some(max),
        };
        let normal = |mean: f64, sd: f64, min: f64, max: f64| Dist::Normal {
            mean,
            sd,
            min: Some(min),
            max: Some(max),
        };
        match self {
            AppProfile::Rdp => (
                shifted(8.0, 111.0, 1417.0),
                lognormal(159.0, 3892.0, 1.0, 12254.0),
            ),
            AppProfile::Vnc => (shifted(1.0, 8.0, 106.0), lognormal(8.0, 517.0, 0.1, 5451.0)),
            AppProfile::G711 => (
                Dist::Constant { value: 180.0 },
                normal(20.0, 1.0 / 2.326_347_874, 19.0, 21.0),
            ),
            AppProfile::SkypeUdp => (
                shifted(11.0, 111.0, 316.0),
                lognormal(24.0, 44.0, 0.1, 20015.0),
            ),
            AppProfile::Wow => (
                shifted(6.0, 26.0, 1228.0),
                lognormal(133.0, 3785.0, 0.1, 14855.0),
            ),
            AppProfile::Quake3 => (
                shifted(40.0, 80.0, 300.0),
                normal(50.0, 15.0 / 2.326_347_874, 30.0, 70.0),
            ),
        }
    }
}

/// The ECN codepoints a source may send: every one but CE, which only a queue sets
/// (RFC 3168 §5).
pub const SOURCE_ECN: &[&str] = &["not_ect", "ect1", "ect0"];

/// A CBR/VoIP-like flow: `packet_bytes` (IP length) every `interval_ns` on average.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CbrConfig {
    pub direction: Direction,
    pub packet_bytes: u32,
    pub interval_ns: Nanos,
    /// Standard deviation of the normal jitter added to each inter-departure time
    /// (0 = perfectly periodic). MMSys 2011 used 1 ms to avoid phase lock-in.
    pub jitter_ns: Nanos,
    /// First departure; `None` = a random phase in `[0, interval)` drawn from the seed.
    pub start_ns: Option<Nanos>,
    pub stop_ns: Option<Nanos>,
    /// The DSCP the packets carry (0..=63, 0 = untagged; EF is 46): class-based
    /// disciplines (CBT, CBQ) treat a tagged UDP flow as multimedia, CAKE picks its tin.
    pub tag: u8,
    /// The ECN codepoint the packets carry: `ect1` puts the flow in DualPI2's L queue
    /// (RFC 9331), `ect0` lets classic AQMs mark it instead of dropping.
    pub ecn: Ecn,
    /// A thin-stream application: its payload sizes and gaps replace `packet_bytes`,
    /// `interval_ns` and `jitter_ns`.
    pub app: Option<AppProfile>,
    /// The application's one-way delay budget (base delay included): the summary's
    /// `over_budget` is the share of packets later than it, lost ones included.
    pub budget_ns: Option<Nanos>,
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig {
            direction: Direction::Down,
            packet_bytes: 186,
            interval_ns: 20_000_000,
            jitter_ns: 1_000_000,
            start_ns: None,
            stop_ns: None,
            tag: 0,
            ecn: Ecn::NotEct,
            app: None,
            budget_ns: None,
        }
    }
}

/// Marks in [`RealtimeRecords::arrived`] for packets that did not arrive: still in the network
/// when the trial ended, dropped by a bottleneck queue, lost on the wire (or, in the
/// testbed, anywhere but the router's queue).
pub const IN_FLIGHT: Nanos = Nanos::MAX;
pub const DROPPED: Nanos = Nanos::MAX - 1;
pub const LOST_ON_WIRE: Nanos = Nanos::MAX - 2;

/// What a real-time flow's sink knows of its packets, indexed by sequence number: the
/// simulator's CBR flow keeps these as it runs, the testbed's collection reads them
/// from the endpoints' and router's logs.
#[derive(Debug, Clone, Default)]
pub struct RealtimeRecords {
    /// When each packet was sent (trial time).
    pub sent: Vec<Nanos>,
    /// When it arrived, or [`IN_FLIGHT`], [`DROPPED`] (by a bottleneck queue) or
    /// [`LOST_ON_WIRE`] (anywhere else). An arrival after the end of the run counts as
    /// in flight, as it would in the simulator.
    pub arrived: Vec<Nanos>,
    /// Each packet's IP length; empty when all are the flow's `packet_bytes`.
    pub lens: Vec<u32>,
}

/// The sending side of a CBR or application flow: when each packet leaves and how big
/// it is. The simulator and the testbed's sender (`collateral-emu cbr-send`) both run
/// this, each from the flow's own random stream, so a seed gives the same departures in
/// both.
#[derive(Debug, Clone)]
pub struct CbrSource {
    pub cfg: CbrConfig,
    jitter: Option<Normal<f64>>,
    /// An application's payload and gap distributions (`None`: constant size).
    app: Option<(Dist, Dist)>,
    rng: Pcg64Mcg,
    /// The next departure.
    pub next_send: Nanos,
}

impl CbrSource {
    /// A source drawing from `rng`: the start phase first (when `cfg.start_ns` is
    /// unset), then a gap (and a size) per packet.
    pub fn new(cfg: &CbrConfig, mut rng: Pcg64Mcg) -> Self {
        let start = cfg
            .start_ns
            .unwrap_or_else(|| rng.random_range(0..cfg.interval_ns.max(1)));
        let jitter = (cfg.jitter_ns > 0)
            .then(|| Normal::new(cfg.interval_ns as f64, cfg.jitter_ns as f64).unwrap());
        CbrSource {
            cfg: cfg.clone(),
            jitter,
            app: cfg.app.map(AppProfile::dists),
            rng,
            next_send: start,
        }
    }

    /// The source of a trial's CBR flow `j` (`cfg` = the scenario's `cbr[j]`), on its own
    /// stream of the trial's `seed`: the simulator and the testbed draw the same schedule.
    pub fn of_flow(cfg: &CbrConfig, seed: u64, j: usize) -> Self {
        CbrSource::new(cfg, rng::stream(seed, rng::CBR_STREAMS + j as u64))
    }

    /// Whether the source sends a packet at `t` in a run that ends at `end`.
    pub fn active_at(&self, t: Nanos, end: Nanos) -> bool {
        t < end && self.cfg.stop_ns.is_none_or(|s| t < s)
    }

    /// The packet due now (at `next_send`): its IP length; draws the next departure.
    #[inline]
    pub fn send(&mut self) -> u32 {
        let (len, gap) = match &self.app {
            Some((size, gap)) => (
                UDP_HEADERS + size.sample(&mut self.rng).round().max(1.0) as u32,
                (gap.sample(&mut self.rng) * 1e6).round().max(1.0) as Nanos,
            ),
            None => {
                let gap = match &self.jitter {
                    // A negative draw (more than `interval / jitter` sigmas out) is
                    // clamped to zero: the packet leaves right after the previous one.
                    Some(n) => round_ns(n.sample(&mut self.rng).max(0.0)),
                    None => self.cfg.interval_ns,
                };
                (self.cfg.packet_bytes, gap)
            }
        };
        self.next_send += gap;
        len
    }

    /// The next departure `(time, IP length)` in a run that ends at `end`, or `None`
    /// once the source has stopped: the testbed's sender follows this schedule.
    pub fn next_departure(&mut self, end: Nanos) -> Option<(Nanos, u32)> {
        if !self.active_at(self.next_send, end) {
            return None;
        }
        let t = self.next_send;
        Some((t, self.send()))
    }
}

/// A CBR source and its sink's record of every packet.
#[derive(Debug, Clone)]
pub struct CbrFlow {
    pub flow: u32,
    pub source: CbrSource,
    /// Every packet's send time, fate and (for applications) size.
    pub records: RealtimeRecords,
}

impl CbrFlow {
    pub fn new(flow: u32, source: CbrSource, duration: Nanos) -> Self {
        let expect = if source.app.is_some() {
            64
        } else {
            (duration / source.cfg.interval_ns.max(1)).min(1 << 20) as usize + 16
        };
        CbrFlow {
            flow,
            source,
            records: RealtimeRecords {
                sent: Vec::with_capacity(expect),
                arrived: Vec::with_capacity(expect),
                lens: Vec::new(),
            },
        }
    }

    /// Sends the packet due at `now` (the source's `next_send`). Returns its seq and IP
    /// length.
    #[inline]
    pub fn send(&mut self, now: Nanos) -> (u64, u32) {
        debug_assert_eq!(now, self.source.next_send);
        let r = &mut self.records;
        let seq = r.sent.len() as u64;
        r.sent.push(now);
        r.arrived.push(IN_FLIGHT);
        let len = self.source.send();
        if self.source.app.is_some() {
            r.lens.push(len);
        }
        (seq, len)
    }

    #[inline]
    pub fn on_arrival(&mut self, now: Nanos, seq: u64) {
        self.records.arrived[seq as usize] = now;
    }

    #[inline]
    pub fn on_drop(&mut self, seq: u64, on_wire: bool) {
        self.records.arrived[seq as usize] = if on_wire { LOST_ON_WIRE } else { DROPPED };
    }
}

/// `x.round() as Nanos` for `x` ≥ 0 (half away from zero), without the call to libm's
/// `round` that `f64::round` is on baseline x86-64: below 2⁵³ the integer part converts
/// exactly and the fraction `x − ⌊x⌋` is exact.
#[inline]
pub fn round_ns(x: f64) -> Nanos {
    if x.is_nan() || x >= 9_007_199_254_740_992.0 {
        return x.round() as Nanos;
    }
    let i = x as Nanos;
    i + (x - i as f64 >= 0.5) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_ns_is_f64_round() {
        let mut v: u64 = 7;
        for k in 0..200_000u64 {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Halves, near-halves and spread magnitudes.
            let x = match k % 4 {
                0 => (v >> 40) as f64 + 0.5,
                1 => f64::from_bits(0x3FE0_0000_0000_0000 - (v & 0xff)) + (v >> 50) as f64,
                2 => (v >> 11) as f64 / (1u64 << (v % 53)) as f64,
                _ => f64::from_bits((v >> 2) % 0x4350_0000_0000_0000),
            };
            assert_eq!(round_ns(x), x.round() as Nanos, "{x:e}");
        }
        for x in [
            0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            4503599627370495.5,
            9.1e15,
            1e300,
        ] {
            assert_eq!(round_ns(x), x.round() as Nanos, "{x:e}");
        }
    }
    use rand::SeedableRng;

    /// `n` packets of `app`: sorted gaps (ms) and payload bytes.
    fn stream(app: AppProfile, n: usize) -> (Vec<f64>, Vec<f64>) {
        let cfg = CbrConfig {
            app: Some(app),
            start_ns: Some(0),
            ..Default::default()
        };
        let mut f = CbrSource::new(&cfg, Pcg64Mcg::seed_from_u64(11));
        let mut gaps = Vec::with_capacity(n);
        let mut sizes = Vec::with_capacity(n);
        for _ in 0..n {
            let now = f.next_send;
            let len = f.send();
            sizes.push((len - UDP_HEADERS) as f64);
            gaps.push((f.next_send - now) as f64 / 1e6);
        }
        gaps.sort_by(f64::total_cmp);
        (gaps, sizes)
    }

    fn q(sorted: &[f64], p: f64) -> f64 {
        sorted[((sorted.len() - 1) as f64 * p) as usize]
    }

    #[test]
    fn profiles_match_the_published_statistics_they_were_fitted_to() {
        let n = 200_000;
        for (app, median, p99, min, max, payload_mean, payload_max) in [
            (AppProfile::Rdp, 159.0, 3892.0, 1.0, 12254.0, 111.0, 1417.0),
            (AppProfile::Vnc, 8.0, 517.0, 0.1, 5451.0, 8.0, 106.0),
            (AppProfile::Wow, 133.0, 3785.0, 0.1, 14855.0, 26.0, 1228.0),
            (AppProfile::SkypeUdp, 24.0, 44.0, 0.1, 20015.0, 111.0, 316.0),
        ] {
            let (gaps, sizes) = stream(app, n);
            let (m, p) = (q(&gaps, 0.5), q(&gaps, 0.99));
            assert!((m / median - 1.0).abs() < 0.03, "{app:?} median {m}");
            assert!((p / p99 - 1.0).abs() < 0.08, "{app:?} p99 {p}");
            assert!(
                gaps[0] >= min - 1e-6 && gaps[n - 1] <= max + 1e-6,
                "{app:?}"
            );
            let mean = sizes.iter().sum::<f64>() / n as f64;
            // Skype's cap (316 B, three means above the minimum) trims the mean by
            // 100·e^(−3.05) = 4.7 B; the others' caps are many means out.
            let expect = if app == AppProfile::SkypeUdp {
                payload_mean - 100.0 * (-(316.0f64 - 11.0) / 100.0).exp()
            } else {
                payload_mean
            };
            assert!(
                (mean - expect).abs() < 0.02 * expect,
                "{app:?} payload {mean}"
            );
            assert!(sizes.iter().all(|&s| s <= payload_max), "{app:?}");
        }
        // G.711: 180-byte payloads every 20 ms, σ 1/2.326 ms, within 19–21 ms.
        let (gaps, sizes) = stream(AppProfile::G711, 50_000);
        assert!(sizes.iter().all(|&s| s == 180.0));
        assert!(gaps[0] >= 19.0 - 1e-6 && gaps[gaps.len() - 1] <= 21.0 + 1e-6);
        assert!((q(&gaps, 0.5) - 20.0).abs() < 0.02);
        assert!((q(&gaps, 0.99) - 21.0).abs() < 0.05, "{}", q(&gaps, 0.99));
        // Quake 3: 50 ms ± 6.45, 30–70 ms; payloads 40 + Exp(40).
        let (gaps, sizes) = stream(AppProfile::Quake3, 50_000);
        assert!((q(&gaps, 0.01) - 35.0).abs() < 0.5 && (q(&gaps, 0.99) - 65.0).abs() < 0.5);
        assert!((sizes.iter().sum::<f64>() / 50_000.0 - 80.0).abs() < 1.0);
    }
}
