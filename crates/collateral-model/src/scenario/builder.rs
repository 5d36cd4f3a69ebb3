//! Scenarios built in code (tests, benchmarks) from the JSON form's defaults.

use collateral_queue::{Framing, FullRule, Nanos};

use super::{
    default_access, default_bin, default_rtt, Direction, LinkConfig, Queue, QueueConfig, Scenario,
    TraceConfig,
};
use crate::tcp::TcpConfig;
use crate::traffic::CbrConfig;
use crate::web::WebConfig;

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
}
