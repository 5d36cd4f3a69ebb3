//! The scenario: everything one trial needs, in integer units (ns, bit/s, bytes). It
//! crosses from Python once, as JSON, and is validated here too so the Rust API is safe
//! on its own.

use std::mem::size_of;

use collateral_queue::{AnyQueue, DisciplineConfig, DropTail, Ecn, Framing, FullRule, Nanos};
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, PathPart};
use crate::metrics::ClassCount;
use crate::tcp::TcpConfig;
use crate::traffic::CbrConfig;
pub use crate::units::Direction;
use crate::web::WebConfig;

/// A named access link: the bottleneck rates a scenario's `link` stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkPreset {
    pub name: &'static str,
    pub down_bps: u64,
    pub up_bps: u64,
}

/// The link presets (the MMSys 2011 study's ADSL lines).
pub const LINK_PRESETS: &[LinkPreset] = &[
    LinkPreset {
        name: "adsl1",
        down_bps: 1_500_000,
        up_bps: 256_000,
    },
    LinkPreset {
        name: "adsl2",
        down_bps: 24_000_000,
        up_bps: 1_000_000,
    },
];

/// Every enumeration a scenario spells by name, under the key the Python side uses, with
/// the names exactly as serde reads and writes them (strum lists the variants; the
/// crate's tests check that serde agrees). `_native.vocabulary()` exports this.
pub const VOCABULARY: &[(&str, &[&str])] = {
    use crate::tcp::cubic::CubicVariant;
    use crate::tcp::htcp::HtcpFlavor;
    use crate::tcp::{CcKind, Profile, RecoveryStyle, TcpEcn};
    use crate::traffic::AppProfile;
    use strum::VariantNames;
    &[
        ("rule", FullRule::VARIANTS),
        ("aqm", DisciplineConfig::VARIANTS),
        ("recovery", RecoveryStyle::VARIANTS),
        ("cubic_variant", CubicVariant::VARIANTS),
        ("htcp_flavor", HtcpFlavor::VARIANTS),
        ("cc", CcKind::VARIANTS),
        ("tcp_ecn", TcpEcn::VARIANTS),
        ("cbr_ecn", crate::traffic::SOURCE_ECN),
        ("profile", Profile::VARIANTS),
        ("app", AppProfile::VARIANTS),
        ("direction", Direction::VARIANTS),
        ("media_controller", crate::media::Controller::VARIANTS),
        ("workload", crate::rrul::WorkloadKind::VARIANTS),
        ("send_buffer", crate::resp_probe::SEND_BUFFER_NAMES),
    ]
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    pub rule: FullRule,
    /// Packets for `ps`, bytes for `fb-strict` and `fb-loose`.
    pub limit: u64,
    /// Whether the packet being transmitted still counts as occupancy.
    #[serde(default)]
    pub count_in_service: bool,
}

impl QueueConfig {
    /// Drop-tail with `rule` and `limit` (packets for `ps`, bytes otherwise); the packet
    /// in transmission does not count.
    pub fn drop_tail(rule: FullRule, limit: u64) -> Self {
        QueueConfig {
            rule,
            limit,
            count_in_service: false,
        }
    }

    pub fn build(&self) -> AnyQueue {
        AnyQueue::DropTail(DropTail::new(self.rule, self.limit, self.count_in_service))
    }
}

/// A direction's queue discipline: drop-tail with one of the three rules (`{"rule":
/// "fb-strict", "limit": 20000}`), or an AQM/scheduler of the queue crate tagged by
/// `kind` (`{"kind": "red", ...}`, see `collateral_queue::DisciplineConfig`).
/// Built once per trial and direction, never on the hot path: the size of CAKE's
/// configuration in the enum costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Queue {
    DropTail(QueueConfig),
    Aqm(DisciplineConfig),
}

impl From<QueueConfig> for Queue {
    fn from(q: QueueConfig) -> Self {
        Queue::DropTail(q)
    }
}

impl<'de> Deserialize<'de> for Queue {
    /// Dispatches on `kind` so errors speak of the form the user meant, not of both.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        let q = if v.get("kind").is_some() {
            aqm_from_value(v).map(Queue::Aqm)
        } else {
            crate::error::from_value(v).map(Queue::DropTail)
        };
        // The inner error's path (`flows`) goes on below the queue's own.
        q.map_err(|e| serde::de::Error::custom(e.nested()))
    }
}

/// Parses an AQM/scheduler description (`{"kind": "red", ...}`), an error naming the
/// key path within it (`flows`).
pub fn parse_aqm(json: &str) -> Result<DisciplineConfig, ConfigError> {
    aqm_from_value(crate::error::from_json(json)?)
}

/// [`DisciplineConfig`] from a value through the named kind's own configuration type:
/// serde reads an internally tagged enum from a buffer that path tracking cannot see
/// into, so going through the enum would lose the key (`flows`) of an error. The
/// result is the enum's (the tag is all it reads besides the variant's fields); an
/// unknown or missing `kind` is left to the enum, for serde's own message.
fn aqm_from_value(v: serde_json::Value) -> Result<DisciplineConfig, ConfigError> {
    use crate::error::from_value;
    use DisciplineConfig as D;
    let kind = v.get("kind").and_then(|k| k.as_str()).map(str::to_owned);
    let mut fields = v.clone();
    if let Some(o) = fields.as_object_mut() {
        o.remove("kind");
    }
    match kind.as_deref() {
        Some("red") => from_value(fields).map(D::Red),
        Some("fred") => from_value(fields).map(D::Fred),
        Some("cbt") => from_value(fields).map(D::Cbt),
        Some("cbq") => from_value(fields).map(D::Cbq),
        Some("codel") => from_value(fields).map(D::Codel),
        Some("fq_codel") => from_value(fields).map(D::FqCodel),
        Some("pie") => from_value(fields).map(D::Pie),
        Some("dualpi2") => from_value(fields).map(D::DualPi2),
        Some("cake") => from_value(fields).map(D::Cake),
        _ => from_value(v),
    }
}

impl Queue {
    pub fn validate(&self, rate_bps: u64) -> Result<(), String> {
        match self {
            Queue::DropTail(q) if q.limit == 0 => Err("limit: must be positive".into()),
            Queue::DropTail(_) => Ok(()),
            Queue::Aqm(c) => c.validate(rate_bps),
        }
    }

    /// The discipline for a link of `rate_bps`; `seed` feeds the random drops of RED-like
    /// disciplines (drop-tail has none).
    pub fn build(&self, rate_bps: u64, seed: u64) -> Result<AnyQueue, String> {
        match self {
            Queue::DropTail(q) => Ok(q.build()),
            Queue::Aqm(c) => c.with_seed(seed).build(rate_bps),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// The line rate; with a `trace`, 0 (or absent) stands for the trace's mean rate.
    #[serde(default)]
    pub rate_bps: u64,
    /// Delivery opportunities instead of a constant rate (Mahimahi's trace format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::clock::DeliveryTrace>,
    /// A DOCSIS upstream's request–grant cycle instead of a constant rate: `rate_bps`
    /// is then the channel rate of the grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docsis: Option<crate::docsis::DocsisConfig>,
    /// A satellite link: rate and delay redrawn each reconfiguration interval; with
    /// `rate_bps` 0 (or absent) the nominal rate is the middle of its range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leo: Option<crate::leo::LeoConfig>,
    /// On/off outages of a constant-rate link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outages: Option<crate::schedule::Outages>,
    /// Extra one-way delay in steps over time, after the queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<crate::path_delay::DelaySteps>,
    pub queue: Queue,
    /// Random loss on the wire after the queue (for tests of TCP's recovery).
    #[serde(default)]
    pub loss_rate: f64,
    /// Burst loss on the wire instead (Gilbert–Elliott).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_loss: Option<crate::loss::GilbertElliott>,
    /// Link-layer overhead and ATM cells on the wire (off by default).
    #[serde(default)]
    pub framing: Framing,
}

/// Which time series to record.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    pub cwnd: bool,
    pub queue: bool,
    pub cbr: bool,
    pub drops: bool,
    /// Per-class counters of each bottleneck direction in bins of `bin_ns`.
    pub classes: bool,
}

impl TraceConfig {
    /// Whether any trace is kept.
    pub fn any(&self) -> bool {
        self.cwnd || self.queue || self.cbr || self.drops || self.classes
    }
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            cwnd: true,
            queue: true,
            cbr: true,
            drops: true,
            classes: true,
        }
    }
}

impl TraceConfig {
    pub const OFF: TraceConfig = TraceConfig {
        cwnd: false,
        queue: false,
        cbr: false,
        drops: false,
        classes: false,
    };
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub seed: u64,
    pub duration_ns: Nanos,
    #[serde(default)]
    pub warmup_ns: Nanos,
    /// Base RTT: the propagation delay is half of it in each direction.
    #[serde(default = "default_rtt")]
    pub rtt_ns: Nanos,
    #[serde(default = "default_access")]
    pub access_rate_bps: u64,
    pub down: LinkConfig,
    pub up: LinkConfig,
    /// Bulk TCP flows; each may name a stack `profile` and override its fields.
    #[serde(default, deserialize_with = "tcp_flows")]
    pub tcp: Vec<TcpConfig>,
    #[serde(default)]
    pub cbr: Vec<CbrConfig>,
    /// Groups of web users (short TCP connections).
    #[serde(default)]
    pub web: Vec<WebConfig>,
    /// Video calls, each run by a congestion controller (adaptive real-time media): one
    /// call (an object) or a list ([`crate::media::calls`]).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::media::calls"
    )]
    pub media: Vec<crate::media::MediaConfig>,
    /// Named phases for the per-class summaries, each from its start to the next one's
    /// (the last to the end of the run). None given: one phase, "all", from the warm-up.
    #[serde(default)]
    pub phases: Vec<PhaseConfig>,
    /// Width of the per-class time bins (throughput over time).
    #[serde(default = "default_bin")]
    pub bin_ns: Nanos,
    #[serde(default)]
    pub trace: TraceConfig,
    /// A built-in workload (RRUL) whose flows are among `tcp` and `cbr`: the trial's
    /// scores ([`crate::scores`]) read its probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<crate::rrul::Workload>,
}

/// A named stretch of a phased experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    pub name: String,
    pub start_ns: Nanos,
}

fn default_bin() -> Nanos {
    1_000_000_000
}

fn tcp_flows<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<TcpConfig>, D::Error> {
    let raw: Vec<serde_json::Value> = Deserialize::deserialize(d)?;
    raw.iter()
        .enumerate()
        .map(|(i, v)| {
            crate::tcp::profile::parse_config(v)
                .map_err(|e| serde::de::Error::custom(e.within(&[PathPart::Index(i)]).nested()))
        })
        .collect()
}

fn default_rtt() -> Nanos {
    100_000_000
}
fn default_access() -> u64 {
    1_000_000_000
}

/// Builds a [`Scenario`] in code (tests, benchmarks) from defaults, naming only what
/// differs: `Scenario::builder().link(10_000_000, 10_000_000, q).tcp(cfg).build()`.
///
/// The defaults are those of the JSON form where it has them (no warm-up, 100 ms RTT,
/// 1 Gbit/s access links, 1 s bins, default traces, no flows) and otherwise seed 1,
/// 60 s, and 10 Mbit/s each way through 100-packet drop-tail queues without wire loss.
#[derive(Debug, Clone)]
pub struct ScenarioBuilder {
    sc: Scenario,
}

impl ScenarioBuilder {
    pub fn seed(mut self, seed: u64) -> Self {
        self.sc.seed = seed;
        self
    }

    pub fn duration(mut self, ns: Nanos) -> Self {
        self.sc.duration_ns = ns;
        self
    }

    pub fn warmup(mut self, ns: Nanos) -> Self {
        self.sc.warmup_ns = ns;
        self
    }

    pub fn rtt(mut self, ns: Nanos) -> Self {
        self.sc.rtt_ns = ns;
        self
    }

    /// The bottleneck's rates down and up, with `queue` in both directions.
    pub fn link(mut self, down_bps: u64, up_bps: u64, queue: impl Into<Queue>) -> Self {
        let queue = queue.into();
        self.sc.down.rate_bps = down_bps;
        self.sc.up.rate_bps = up_bps;
        self.sc.up.queue = queue.clone();
        self.sc.down.queue = queue;
        self
    }

    /// The downstream queue alone (after [`link`](Self::link), which sets both).
    pub fn down_queue(mut self, queue: impl Into<Queue>) -> Self {
        self.sc.down.queue = queue.into();
        self
    }

    /// Random loss on the wire, both directions.
    pub fn loss(mut self, rate: f64) -> Self {
        self.sc.down.loss_rate = rate;
        self.sc.up.loss_rate = rate;
        self
    }

    /// Adds a bulk TCP flow.
    pub fn tcp(mut self, cfg: TcpConfig) -> Self {
        self.sc.tcp.push(cfg);
        self
    }

    /// Adds bulk TCP flows.
    pub fn tcp_flows(mut self, cfgs: impl IntoIterator<Item = TcpConfig>) -> Self {
        self.sc.tcp.extend(cfgs);
        self
    }

    /// Adds a CBR flow.
    pub fn cbr(mut self, cfg: CbrConfig) -> Self {
        self.sc.cbr.push(cfg);
        self
    }

    /// Adds the default CBR flow (the MMSys 2011 VoIP-like stream) in each direction.
    pub fn cbr_both_ways(self) -> Self {
        let down = CbrConfig {
            direction: Direction::Down,
            ..Default::default()
        };
        let up = CbrConfig {
            direction: Direction::Up,
            ..Default::default()
        };
        self.cbr(down).cbr(up)
    }

    pub fn web(mut self, cfg: WebConfig) -> Self {
        self.sc.web.push(cfg);
        self
    }

    pub fn trace(mut self, trace: TraceConfig) -> Self {
        self.sc.trace = trace;
        self
    }

    pub fn build(self) -> Scenario {
        self.sc
    }
}

impl Scenario {
    /// A [`ScenarioBuilder`] holding the defaults.
    pub fn builder() -> ScenarioBuilder {
        let link = LinkConfig {
            rate_bps: 10_000_000,
            trace: None,
            docsis: None,
            leo: None,
            outages: None,
            delay: None,
            queue: QueueConfig::drop_tail(FullRule::Ps, 100).into(),
            loss_rate: 0.0,
            burst_loss: None,
            framing: Framing::default(),
        };
        ScenarioBuilder {
            sc: Scenario {
                seed: 1,
                duration_ns: 60_000_000_000,
                warmup_ns: 0,
                rtt_ns: default_rtt(),
                access_rate_bps: default_access(),
                down: link.clone(),
                up: link,
                tcp: vec![],
                cbr: vec![],
                web: vec![],
                media: vec![],
                phases: vec![],
                bin_ns: default_bin(),
                trace: TraceConfig::default(),
                workload: None,
            },
        }
    }

    /// Parses and validates a scenario; the error's text is `path: detail`
    /// (`scenario: detail` when no key is at fault, a JSON syntax error for one).
    pub fn from_json(s: &str) -> Result<Scenario, String> {
        Self::parse(s).map_err(|e| e.to_string())
    }

    /// [`from_json`](Self::from_json) with the error's key path as data.
    pub fn parse(s: &str) -> Result<Scenario, ConfigError> {
        let sc: Scenario = crate::error::from_json(s).map_err(|e| {
            if e.path.is_empty() {
                ConfigError::new(Vec::new(), format!("scenario: {}", e.detail))
            } else {
                e
            }
        })?;
        let mut sc = sc;
        for l in [&mut sc.down, &mut sc.up] {
            if let (0, Some(t)) = (l.rate_bps, &l.trace) {
                l.rate_bps = t.mean_bps(); // the nominal rate (ignored if the trace is bad)
            }
            if let (0, Some(c)) = (l.rate_bps, &l.leo) {
                l.rate_bps = c.mean_bps();
            }
        }
        sc.validate().map_err(|e| ConfigError::parse(&e))?;
        Ok(sc)
    }

    /// Checks what the types cannot: positive rates and limits, sane times, and what the
    /// trial may hold (`crate::limits`).
    pub fn validate(&self) -> Result<(), String> {
        if self.duration_ns == 0 {
            return Err("duration_ns: must be positive".into());
        }
        if self.warmup_ns >= self.duration_ns {
            return Err("warmup_ns: must be shorter than the duration".into());
        }
        if self.access_rate_bps == 0 {
            return Err("access_rate_bps: must be positive".into());
        }
        for (name, l) in [("down", &self.down), ("up", &self.up)] {
            if let Some(t) = &l.trace {
                t.validate().map_err(|e| format!("{name}.trace.{e}"))?;
            }
            if l.rate_bps == 0 {
                return Err(format!("{name}.rate_bps: must be positive"));
            }
            if let Some(c) = &l.docsis {
                if l.trace.is_some() {
                    return Err(format!(
                        "{name}.docsis: give either a trace or docsis, not both"
                    ));
                }
                c.validate(l.rate_bps)
                    .map_err(|e| format!("{name}.docsis.{e}"))?;
            }
            validate_variable(name, l, self.duration_ns)?;
            l.queue
                .validate(l.rate_bps)
                .map_err(|e| format!("{name}.queue: {e}"))?;
            if !(0.0..1.0).contains(&l.loss_rate) {
                return Err(format!("{name}.loss_rate: must be in [0, 1)"));
            }
            if let Some(b) = &l.burst_loss {
                b.validate().map_err(|e| format!("{name}.burst_loss.{e}"))?;
                if l.loss_rate > 0.0 {
                    return Err(format!(
                        "{name}.burst_loss: give either loss_rate or burst_loss, not both"
                    ));
                }
            }
        }
        for (i, t) in self.tcp.iter().enumerate() {
            for (key, v) in [
                ("mss", u64::from(t.mss)),
                ("ack_bytes", u64::from(t.ack_bytes)),
                ("initial_cwnd", u64::from(t.initial_cwnd)),
                ("rwnd_segments", u64::from(t.rwnd_segments)),
                ("ack_every", u64::from(t.ack_every)),
                ("rto_min_ns", t.rto_min_ns),
            ] {
                if v == 0 {
                    return Err(format!("tcp[{i}].{key}: must be positive"));
                }
            }
            if t.data_bytes <= 40 {
                return Err(format!(
                    "tcp[{i}].data_bytes: must be above 40 (the IP and TCP headers)"
                ));
            }
            if t.tag > 63 {
                return Err(format!("tcp[{i}].tag: {} is not a DSCP (0..=63)", t.tag));
            }
            if t.rto_min_ns > t.rto_max_ns {
                return Err(format!(
                    "tcp[{i}].rto_min_ns: must be at most rto_max ({} ns)",
                    t.rto_max_ns
                ));
            }
        }
        for (i, c) in self.cbr.iter().enumerate() {
            if c.packet_bytes == 0 {
                return Err(format!("cbr[{i}].packet_bytes: must be positive"));
            }
            if c.interval_ns == 0 {
                return Err(format!("cbr[{i}].interval_ns: must be positive"));
            }
        }
        for (i, w) in self.web.iter().enumerate() {
            w.validate(self.duration_ns)
                .map_err(|e| format!("web[{i}]: {e}"))?;
        }
        if self.bin_ns == 0 {
            return Err("bin_ns: must be positive".into());
        }
        crate::media::calls::validate(&self.media)?;
        for (i, p) in self.phases.iter().enumerate() {
            if p.start_ns >= self.duration_ns {
                return Err(format!("phases[{i}]: starts after the end of the run"));
            }
            if i > 0 && p.start_ns <= self.phases[i - 1].start_ns {
                return Err(format!(
                    "phases[{i}]: phases must start in increasing order"
                ));
            }
        }
        if let Some(w) = &self.workload {
            w.check(&self.cbr, self.duration_ns)?;
        }
        let flows =
            self.tcp.len() + self.web.iter().map(|w| w.slots()).sum::<usize>() + self.cbr.len();
        if flows >= u32::MAX as usize {
            return Err("too many flows (users × parallel connections)".into());
        }
        check_limits(self)
    }

    pub fn link(&self, d: Direction) -> &LinkConfig {
        match d {
            Direction::Down => &self.down,
            Direction::Up => &self.up,
        }
    }
}

/// A direction's satellite model, outages and delay steps: each valid, and at most one
/// clock (trace, DOCSIS, satellite, outages) and one source of variable delay.
fn validate_variable(name: &str, l: &LinkConfig, duration: Nanos) -> Result<(), String> {
    if let Some(c) = &l.leo {
        c.validate().map_err(|e| format!("{name}.leo.{e}"))?;
        let intervals = duration / c.interval_ns.max(1);
        if intervals > crate::leo::MAX_INTERVALS {
            return Err(format!(
                "{name}.leo.interval_ns: {intervals} intervals in the run, above the limit of {}",
                crate::leo::MAX_INTERVALS
            ));
        }
        if l.trace.is_some() || l.docsis.is_some() {
            return Err(format!(
                "{name}.leo: a satellite link sets its own rate; drop trace or docsis"
            ));
        }
        if l.delay.is_some() {
            return Err(format!(
                "{name}.delay: a satellite link sets its own delay; give one or the other"
            ));
        }
    }
    if let Some(o) = &l.outages {
        o.validate().map_err(|e| format!("{name}.outages.{e}"))?;
        if l.trace.is_some() || l.docsis.is_some() || l.leo.is_some() {
            return Err(format!(
                "{name}.outages: only for a constant-rate link (a trace carries its own gaps)"
            ));
        }
    }
    if let Some(d) = &l.delay {
        d.validate().map_err(|e| format!("{name}.delay.{e}"))?;
    }
    Ok(())
}

/// Checks every bound of [`crate::limits`]; the first one broken is the error.
fn check_limits(sc: &Scenario) -> Result<(), String> {
    use crate::limits::*;
    time("duration_ns", sc.duration_ns)?;
    time("rtt_ns", sc.rtt_ns)?;
    if sc.rtt_ns == 0 {
        // No path has zero propagation delay; the Python side refuses it too, so both
        // entry points answer alike.
        return Err("rtt_ns: must be positive".into());
    }
    time("bin_ns", sc.bin_ns)?;
    rate("access_rate_bps", sc.access_rate_bps)?;
    for (name, l) in [("down", &sc.down), ("up", &sc.up)] {
        rate(&format!("{name}.rate_bps"), l.rate_bps)?;
        if let Queue::DropTail(q) = &l.queue {
            if q.limit > MAX_QUEUE_LIMIT {
                return Err(format!(
                    "{name}.queue.limit: {} is above the limit of {MAX_QUEUE_LIMIT}",
                    q.limit
                ));
            }
        }
        if !l.loss_rate.is_finite() {
            return Err(format!("{name}.loss_rate: must be a number in [0, 1)"));
        }
    }
    if sc.tcp.len() > MAX_TCP_FLOWS {
        return Err(format!(
            "tcp: {} flows is above the limit of {MAX_TCP_FLOWS}",
            sc.tcp.len()
        ));
    }
    if sc.cbr.len() > MAX_CBR_FLOWS {
        return Err(format!(
            "cbr: {} flows is above the limit of {MAX_CBR_FLOWS}",
            sc.cbr.len()
        ));
    }
    let slots: usize = sc.web.iter().map(|w| w.slots()).sum();
    if slots > MAX_WEB_SLOTS {
        return Err(format!(
            "web: {slots} users × parallel connections is above the limit of {MAX_WEB_SLOTS}"
        ));
    }
    for (i, t) in sc.tcp.iter().enumerate() {
        tcp(&format!("tcp[{i}]"), t)?;
    }
    for (i, w) in sc.web.iter().enumerate() {
        time(&format!("web[{i}].start_ns"), w.start_ns)?;
        if let Some(s) = w.stop_ns {
            time(&format!("web[{i}].stop_ns"), s)?;
        }
        tcp(&format!("web[{i}].tcp"), &w.tcp)?;
    }
    for (i, c) in sc.cbr.iter().enumerate() {
        let k = |f: &str| format!("cbr[{i}].{f}");
        size(&k("packet_bytes"), c.packet_bytes as u64, 1)?;
        time(&k("interval_ns"), c.interval_ns)?;
        time(&k("jitter_ns"), c.jitter_ns)?;
        if c.tag > 63 {
            return Err(format!("{}: {} is not a DSCP (0..=63)", k("tag"), c.tag));
        }
        if c.ecn == Ecn::Ce {
            return Err(format!(
                "{}: a source sends not_ect, ect0 or ect1, not ce",
                k("ecn")
            ));
        }
        if let Some(s) = c.start_ns {
            time(&k("start_ns"), s)?;
        }
        if let Some(b) = c.budget_ns {
            time(&k("budget_ns"), b)?;
        }
        if let Some(s) = c.stop_ns {
            time(&k("stop_ns"), s)?;
        }
    }
    for (i, p) in sc.phases.iter().enumerate() {
        time(&format!("phases[{i}].start_ns"), p.start_ns)?;
    }
    check_memory(sc)
}

/// The memory the scenario fixes in advance, against [`crate::limits::MEMORY_BUDGET`]; an error names
/// the largest part.
fn check_memory(sc: &Scenario) -> Result<(), String> {
    use crate::limits::*;
    let bins = if sc.trace.classes {
        (sc.duration_ns / sc.bin_ns.max(1) + 1) * 2 * 3 * size_of::<ClassCount>() as u64
    } else {
        0
    };
    let mut parts: Vec<(String, u64, String)> = vec![(
        "bin_ns".into(),
        bins,
        format!(
            "{} bins of per-class counters",
            sc.duration_ns / sc.bin_ns.max(1) + 1
        ),
    )];
    for (i, c) in sc.cbr.iter().enumerate() {
        if c.app.is_none() {
            let n = sc.duration_ns / c.interval_ns.max(1);
            parts.push((
                format!("cbr[{i}].interval_ns"),
                n.saturating_mul(CBR_RECORD_BYTES),
                format!("{n} packets' records"),
            ));
        }
    }
    let tcp: u64 = sc
        .tcp
        .iter()
        .map(|t| FLOW_BYTES + scoreboard_bytes(t.rwnd_segments as usize))
        .sum();
    parts.push(("tcp".into(), tcp, format!("{} flows", sc.tcp.len())));
    let web: u64 = sc.web.iter().map(|w| w.slots() as u64 * FLOW_BYTES).sum();
    parts.push(("web".into(), web, "connection slots".into()));
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    if total > MEMORY_BUDGET {
        let (key, bytes, what) = parts.iter().max_by_key(|p| p.1).expect("parts");
        return Err(format!(
            "{key}: the trial would hold {what} ({}, {} in all), above the limit of {} per trial",
            gib(*bytes),
            gib(total),
            gib(MEMORY_BUDGET)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builders_defaults_are_valid_and_those_of_the_json_form() {
        let built = Scenario::builder().build();
        built.validate().unwrap();
        let json = Scenario::from_json(
            r#"{"seed": 1, "duration_ns": 60000000000,
                "down": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}},
                "up": {"rate_bps": 10000000, "queue": {"rule": "ps", "limit": 100}}}"#,
        )
        .unwrap();
        let v = |s: &Scenario| serde_json::to_value(s).unwrap();
        assert_eq!(v(&built), v(&json));
        // `link` sets both directions; `down_queue` then the downstream one alone.
        let sc = Scenario::builder()
            .link(
                1_500_000,
                256_000,
                QueueConfig::drop_tail(FullRule::FbLoose, 60_000),
            )
            .down_queue(QueueConfig::drop_tail(FullRule::Ps, 7))
            .loss(0.01)
            .build();
        assert_eq!((sc.down.rate_bps, sc.up.rate_bps), (1_500_000, 256_000));
        assert!(matches!(&sc.down.queue, Queue::DropTail(q) if q.limit == 7));
        assert!(matches!(&sc.up.queue, Queue::DropTail(q) if q.limit == 60_000));
        assert_eq!((sc.down.loss_rate, sc.up.loss_rate), (0.01, 0.01));
    }

    /// A serde error names its key path in the form of the semantic checks, nested
    /// parses (a queue by `kind`, a TCP flow's profile and overrides) included.
    #[test]
    fn errors_name_their_key_path() {
        let base = serde_json::json!({
            "seed": 1, "duration_ns": 60_000_000_000u64,
            "down": {"rate_bps": 1_500_000, "queue": {"rule": "ps", "limit": 20}},
            "up": {"rate_bps": 256_000, "queue": {"rule": "ps", "limit": 20}},
            "tcp": [{}, {"profile": "linux-6"}], "cbr": [{}], "web": [{"users": 2}]
        });
        let err = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = base.clone();
            f(&mut v);
            Scenario::parse(&v.to_string()).unwrap_err()
        };
        Scenario::parse(&base.to_string()).unwrap();
        type Edit = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|v| {
                    v["down"]["queue"] = serde_json::json!({"kind": "fq_codel", "flows": -1})
                }),
                "down.queue.flows: invalid value: integer `-1`, expected a whole number 0 … 4294967295",
            ),
            (
                Box::new(|v| v["cbr"][0]["interval_ns"] = "x".into()),
                "cbr[0].interval_ns: invalid type: string \"x\", expected a whole number 0 … 18446744073709551615",
            ),
            (
                Box::new(|v| v["tcp"][1]["cubic"] = serde_json::json!({"beta": "x"})),
                "tcp[1].cubic.beta: invalid type: string \"x\", expected a whole number 0 … 4294967295",
            ),
            (
                Box::new(|v| v["web"][0]["tcp"] = serde_json::json!({"mss": -1})),
                "web[0].tcp.mss: invalid value: integer `-1`, expected a whole number 0 … 4294967295",
            ),
            (
                Box::new(|v| v["up"]["queue"]["limit"] = 0.into()),
                "up.queue.limit: must be positive",
            ),
            (
                Box::new(|v| v["cbr"][0]["interval_ns"] = 0.into()),
                "cbr[0].interval_ns: must be positive",
            ),
        ];
        for (f, want) in &cases {
            let e = err(f.as_ref());
            assert_eq!(e.to_string(), *want);
            assert_eq!(format!("{}: {}", e.path_text(), e.detail), *want);
        }
        let e = err(&|v| v["tcp"][1]["profile"] = "bsd".into());
        assert_eq!(e.path_text(), "tcp[1].profile");
        // No key at fault: the whole document, as before.
        let e = Scenario::parse("{not json").unwrap_err();
        assert!(e.path.is_empty());
        assert!(
            e.detail
                .starts_with("scenario: key must be a string at line 1"),
            "{e}"
        );
        // A required key that is missing is named at its place.
        let e = Scenario::parse(r#"{"seed": 1}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "duration_ns: missing: this parameter has no default"
        );
    }

    /// Going through each kind's own type reads exactly what the tagged enum reads.
    #[test]
    fn aqms_parse_by_kind_as_the_enum_does() {
        for k in DisciplineConfig::KINDS {
            let json = format!(r#"{{"kind": "{}"}}"#, k.kind);
            let via_enum = serde_json::from_str::<DisciplineConfig>(&json);
            match (via_enum, parse_aqm(&json)) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", k.kind),
                // The enum's "missing field `min_th`" is ours at the key: `min_th: missing`.
                (Err(a), Err(b)) => assert!(a.to_string().contains(&b.path_text()), "{a} / {b}"),
                (a, b) => panic!("{}: {a:?} / {b:?}", k.kind),
            }
        }
        let e = parse_aqm(r#"{"kind": "fq_codel", "flows": -1}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flows: invalid value: integer `-1`, expected a whole number 0 … 4294967295"
        );
        let e = parse_aqm(r#"{"kind": "fifo"}"#).unwrap_err();
        assert!(e.detail.starts_with("unknown variant `fifo`"), "{e}");
    }
}
