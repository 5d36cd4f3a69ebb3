//! The scenario: everything one trial needs, in integer units (ns, bit/s, bytes). It
//! crosses from Python once, as JSON, and is validated here too so the Rust API is safe
//! on its own.

use collateral_queue::{AnyQueue, DisciplineConfig, DropTail, Framing, FullRule, Nanos};
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, PathPart};
use crate::tcp::TcpConfig;
use crate::traffic::CbrConfig;
pub use crate::units::Direction;
use crate::web::WebConfig;

mod builder;
mod validate;

pub use builder::ScenarioBuilder;

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

impl Scenario {
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

    pub fn link(&self, d: Direction) -> &LinkConfig {
        match d {
            Direction::Down => &self.down,
            Direction::Up => &self.up,
        }
    }
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
            // A flow starting at the end of the run (60 s) or later would send nothing.
            (
                Box::new(|v| v["tcp"][1]["start_ns"] = 60_000_000_000u64.into()),
                "tcp[1].start_ns: must be before the end of the run",
            ),
            (
                Box::new(|v| v["cbr"][0]["start_ns"] = 61_000_000_000u64.into()),
                "cbr[0].start_ns: must be before the end of the run",
            ),
            (
                Box::new(|v| v["media"] = serde_json::json!([{}, {"start_ns": 60_000_000_000u64}])),
                "media[1].start_ns: must be before the end of the run",
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
