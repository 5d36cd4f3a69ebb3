//! Web traffic: a population of users browsing by an empirical HTTP/1.0 model, every
//! object fetched over a short TCP connection of its own.
//!
//! A user alternates between *thinking* and fetching a *page*. A page is a primary
//! object (the HTML) followed, once it has arrived, by its embedded objects, fetched
//! over up to `parallel` connections at once (Netscape-era browsers opened four). Each
//! object is a new TCP connection: SYN and SYN-ACK (one RTT), the request, then the
//! reply from slow start with the initial window, with the usual loss recovery and
//! timeouts of the flow's stack profile. The page is done when its last object has
//! arrived; the user then thinks before the next page. Users stop starting pages at the
//! group's stop time.
//!
//! The distributions default to **Mah's measurements** (B. A. Mah, "An Empirical Model
//! of HTTP Network Traffic", INFOCOM '97): the empirical CDFs of request length, reply
//! length, files per Web page and user think time that Mah distributed with his model
//! (the data files ns-2 ships as `tcl/http/data/*.cdf`), reduced here to the quantiles
//! listed in [`HttpModel::mah1997`]. Values between the listed quantiles are
//! interpolated linearly, so the body of each distribution is reproduced closely and
//! the heavy tails are kept up to the largest observation (1.6 MB replies, 24 h think
//! times).
//!
//! The simulation side (connection slots, set-up, timers) lives in `collateral_sim::sim::web_users`.

use collateral_queue::Nanos;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::dist::Dist;
use crate::tcp::TcpConfig;
use crate::units::Direction;

/// The random quantities of the HTTP model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpModel {
    /// HTTP request length (bytes of TCP payload, client to server).
    pub request_bytes: Dist,
    /// Reply length (bytes of TCP payload, server to client), per object.
    pub reply_bytes: Dist,
    /// Objects per page, primary included (a draw is rounded up, at least 1).
    pub objects_per_page: Dist,
    /// Think time between the end of one page and the request of the next (seconds).
    pub think_s: Dist,
}

impl Default for HttpModel {
    fn default() -> Self {
        HttpModel::mah1997()
    }
}

impl HttpModel {
    /// Mah's empirical distributions (see the module doc), as quantiles
    /// `(value, cumulative probability)` read off his data files.
    pub fn mah1997() -> Self {
        HttpModel {
            request_bytes: Dist::Empirical {
                points: MAH_REQUEST_BYTES.to_vec(),
                max: None,
            },
            reply_bytes: Dist::Empirical {
                points: MAH_REPLY_BYTES.to_vec(),
                max: None,
            },
            objects_per_page: Dist::Empirical {
                points: MAH_FILES_PER_PAGE.to_vec(),
                max: None,
            },
            think_s: Dist::Empirical {
                points: MAH_THINK_S.to_vec(),
                max: None,
            },
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        self.request_bytes.validate("request_bytes")?;
        self.reply_bytes.validate("reply_bytes")?;
        self.objects_per_page.validate("objects_per_page")?;
        self.think_s.validate("think_s")
    }
}

/// Request length, bytes: 4 100 requests. Mostly 100–300 B GETs, and a second mode
/// of ~13 % at 1 030–1 370 B.
pub const MAH_REQUEST_BYTES: &[(f64, f64)] = &[
    (0.0, 0.00146),
    (120.0, 0.02),
    (137.0, 0.0785),
    (176.0, 0.12),
    (200.0, 0.2276),
    (210.0, 0.3132),
    (220.0, 0.4068),
    (231.0, 0.5010),
    (246.0, 0.6007),
    (259.0, 0.6695),
    (276.0, 0.7241),
    (289.0, 0.7924),
    (300.0, 0.8307),
    (355.0, 0.86),
    (1028.0, 0.87),
    (1058.0, 0.9127),
    (1079.0, 0.9507),
    (1100.0, 0.9654),
    (1134.0, 0.9905),
    (1373.0, 1.0),
];

/// Files per Web page (Mah's "files per document"), 1 445 pages: the exact discrete
/// distribution (with `ceil`, the piecewise-linear CDF through integer points gives
/// each integer its measured probability); mean 2.84.
pub const MAH_FILES_PER_PAGE: &[(f64, f64)] = &[
    (0.0, 0.0),
    (1.0, 0.511773),
    (2.0, 0.720914),
    (3.0, 0.795706),
    (4.0, 0.832410),
    (5.0, 0.882271),
    (6.0, 0.907202),
    (7.0, 0.923823),
    (8.0, 0.939058),
    (9.0, 0.950139),
    (10.0, 0.961911),
    (11.0, 0.968144),
    (12.0, 0.972299),
    (13.0, 0.972992),
    (14.0, 0.977147),
    (15.0, 0.979917),
    (16.0, 0.987535),
    (17.0, 0.988227),
    (18.0, 0.989612),
    (19.0, 0.993075),
    (20.0, 0.995845),
    (21.0, 0.996537),
    (32.0, 0.997230),
    (35.0, 0.997922),
    (37.0, 0.998615),
    (63.0, 0.999307),
    (65.0, 1.0),
];

/// Reply length, bytes: 4 100 replies; median 2 112 B, mean 7 231 B, 10 % at most
/// 110 B (headers only), 1 % over 67 kB, the largest 1.6 MB.
pub const MAH_REPLY_BYTES: &[(f64, f64)] = &[
    (0.0, 0.001951),
    (83.0, 0.017805),
    (90.0, 0.020976),
    (103.0, 0.057317),
    (110.0, 0.103902),
    (306.0, 0.151463),
    (412.0, 0.2),
    (560.0, 0.25),
    (830.0, 0.3),
    (1078.0, 0.35),
    (1434.0, 0.400244),
    (1800.0, 0.45),
    (2112.0, 0.502439),
    (2522.0, 0.550488),
    (2811.0, 0.600488),
    (3275.0, 0.650244),
    (3886.0, 0.7),
    (4797.0, 0.75),
    (6036.0, 0.8),
    (8188.0, 0.850488),
    (12_581.0, 0.9),
    (16_664.0, 0.925122),
    (23_332.0, 0.95),
    (33_537.0, 0.970244),
    (47_758.0, 0.98),
    (67_379.0, 0.99),
    (103_200.0, 0.995122),
    (290_407.0, 0.998049),
    (649_354.0, 0.999512),
    (1_636_039.0, 1.0),
];

/// Think time, seconds: 1 314 gaps between pages (gaps under ~1 s count as within a
/// page, so the smallest is 1.005 s); median 16.2 s, but 15 % over 197 s and 5 % over
/// 100 min (users who left), so the mean is 30 min.
pub const MAH_THINK_S: &[(f64, f64)] = &[
    (1.005, 0.000761),
    (1.102, 0.010654),
    (1.235, 0.020548),
    (1.58, 0.050228),
    (2.212, 0.100457),
    (3.211, 0.150685),
    (4.198, 0.200152),
    (5.171, 0.250381),
    (6.682, 0.300609),
    (8.323, 0.350076),
    (10.911, 0.400304),
    (13.019, 0.450533),
    (16.192, 0.5),
    (20.243, 0.550228),
    (25.119, 0.600457),
    (32.696, 0.650685),
    (41.638, 0.700152),
    (61.573, 0.750381),
    (98.426, 0.800609),
    (197.008, 0.850076),
    (794.455, 0.900304),
    (2414.215, 0.925419),
    (6014.229, 0.950533),
    (16337.937, 0.97032),
    (28400.325, 0.980213),
    (61568.396, 0.990107),
    (73348.352, 0.995434),
    (83060.516, 0.998478),
    (84659.438, 0.999239),
    (86394.941, 1.0),
];

/// A group of web users: its population, when it is active, its HTTP model, the TCP
/// its connections use, and the extra delay each connection gets.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    pub users: u32,
    /// Which way the replies go: `down` = servers on the left (Internet side), browsers
    /// on the right (home side).
    #[serde(default)]
    pub direction: Direction,
    /// When the users start browsing: each user's first page comes after the residual of
    /// a think time (`Dist::sample_residual`), as if they had been browsing before, so
    /// the load is steady from the start rather than a burst.
    #[serde(default)]
    pub start_ns: Nanos,
    /// From when no new page is started (pages under way complete).
    #[serde(default)]
    pub stop_ns: Option<Nanos>,
    /// Connections a user has open at most (for the embedded objects).
    #[serde(default = "default_parallel")]
    pub parallel: u32,
    #[serde(default)]
    pub model: HttpModel,
    /// Extra one-way delay of each connection, in milliseconds, drawn per connection
    /// and added to its packets towards the browser (as the CBT study's per-receiver
    /// dummynet delays did), to spread the connections' RTTs.
    #[serde(default = "default_extra_delay")]
    pub extra_delay_ms: Dist,
    /// The TCP stack of servers and browsers (`{"profile": "freebsd-7", ...}`, as for
    /// bulk flows); `direction`, `start_ns`, `stop_ns` and `size_segments` are set per
    /// connection.
    #[serde(default, deserialize_with = "crate::tcp::profile::tcp_flow")]
    pub tcp: TcpConfig,
}

fn default_parallel() -> u32 {
    4
}
fn default_extra_delay() -> Dist {
    Dist::Constant { value: 0.0 }
}

impl WebConfig {
    pub fn validate(&self, duration: Nanos) -> Result<(), String> {
        if self.users == 0 {
            return Err("users: must be positive".into());
        }
        if self.parallel == 0 {
            return Err("parallel: must be positive".into());
        }
        if self.start_ns >= duration {
            return Err("start_ns: must be before the end of the run".into());
        }
        if self.stop_ns.is_some_and(|s| s <= self.start_ns) {
            return Err("stop_ns: must be after start_ns".into());
        }
        self.model.validate()?;
        self.extra_delay_ms.validate("extra_delay_ms")
    }

    /// Connection slots the group needs (users × parallel).
    pub fn slots(&self) -> usize {
        self.users as usize * self.parallel as usize
    }
}

/// One object of a page as a user draws it: request and reply length (bytes of
/// payload), and the connection's extra one-way delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectDraw {
    pub request_bytes: u64,
    pub reply_bytes: u64,
    pub extra_delay_ns: Nanos,
}

/// A web user's draws from its own seeded stream (`USER_STREAMS + u`, `u` counted over
/// all groups), in the order the user makes them: the residual think time before the
/// first page, then per page its number of objects, each object as it is opened, and
/// the think time after it. The order depends on nothing the network does, so the
/// simulator's users and the testbed's browser (`collateral-emu web-client`) draw
/// the same pages from the same seed.
#[derive(Debug, Clone)]
pub struct UserDraws {
    rng: Pcg64Mcg,
}

impl UserDraws {
    pub fn new(seed: u64, user: u32) -> Self {
        UserDraws {
            rng: crate::rng::stream(seed, crate::rng::USER_STREAMS + user as u64),
        }
    }

    /// The rest of a think time under way when the run begins (the users have been
    /// browsing before it), so the load is steady from the start.
    pub fn first_think_ns(&mut self, cfg: &WebConfig) -> Nanos {
        secs(cfg.model.think_s.sample_residual(&mut self.rng))
    }

    /// Objects of the next page, primary included: a draw rounded up, at least one.
    pub fn objects(&mut self, cfg: &WebConfig) -> u32 {
        cfg.model
            .objects_per_page
            .sample(&mut self.rng)
            .ceil()
            .max(1.0) as u32
    }

    /// The next object the user opens.
    pub fn object(&mut self, cfg: &WebConfig) -> ObjectDraw {
        let request_bytes = cfg.model.request_bytes.sample(&mut self.rng).round() as u64;
        let reply_bytes = cfg.model.reply_bytes.sample(&mut self.rng).round() as u64;
        let extra_delay_ns = secs(cfg.extra_delay_ms.sample(&mut self.rng) / 1e3);
        ObjectDraw {
            request_bytes,
            reply_bytes,
            extra_delay_ns,
        }
    }

    /// The think time after a page.
    pub fn think_ns(&mut self, cfg: &WebConfig) -> Nanos {
        secs(cfg.model.think_s.sample(&mut self.rng))
    }
}

/// Seconds to nanoseconds, saturating far beyond any run.
pub fn secs(s: f64) -> Nanos {
    (s * 1e9).clamp(0.0, 1e18) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of a user's draws is the contract between the simulator's users and
    /// the testbed's browser: residual think, objects, each object's request, reply and
    /// extra delay, think. Read off the user's stream by hand in that order, with
    /// uniform distributions whose draws differ.
    #[test]
    fn a_users_draws_come_in_the_simulators_order() {
        let u = |low: f64, high: f64| Dist::Uniform { low, high };
        let cfg = WebConfig {
            users: 1,
            direction: Direction::Down,
            start_ns: 0,
            stop_ns: None,
            parallel: 4,
            model: HttpModel {
                request_bytes: u(100.0, 200.0),
                reply_bytes: u(1000.0, 9000.0),
                objects_per_page: u(1.0, 5.0),
                think_s: u(1.0, 3.0),
            },
            extra_delay_ms: u(0.0, 10.0),
            tcp: TcpConfig::default(),
        };
        let mut d = UserDraws::new(7, 3);
        let mut rng = crate::rng::stream(7, crate::rng::USER_STREAMS + 3);
        let m = &cfg.model;
        assert_eq!(
            d.first_think_ns(&cfg),
            secs(m.think_s.sample_residual(&mut rng))
        );
        let n = d.objects(&cfg);
        assert_eq!(n, m.objects_per_page.sample(&mut rng).ceil() as u32);
        for _ in 0..n {
            let o = d.object(&cfg);
            assert_eq!(
                o.request_bytes,
                m.request_bytes.sample(&mut rng).round() as u64
            );
            assert_eq!(o.reply_bytes, m.reply_bytes.sample(&mut rng).round() as u64);
            let extra = secs(cfg.extra_delay_ms.sample(&mut rng) / 1e3);
            assert_eq!(o.extra_delay_ns, extra);
            assert!((1000..=9000).contains(&o.reply_bytes));
        }
        let think = d.think_ns(&cfg);
        assert_eq!(think, secs(m.think_s.sample(&mut rng)));
        assert!((1_000_000_000..=3_000_000_000).contains(&think));
    }
}
