//! DualPI2: the Dual-Queue Coupled AQM of RFC 9332 with its PI2 base controller
//! (Appendix A), using the defaults and edge-case rules of Linux
//! `net/sched/sch_dualpi2.c` where the RFC leaves a choice open.
//!
//! * **Classifier** (RFC 9332 §2.3, RFC 9331 §5.1): ECT(1) and CE go to the L queue,
//!   Not-ECT and ECT(0) to the Classic (C) queue. CE counts as L4S because most CE
//!   packets were ECT(1) before an upstream AQM marked them.
//! * **Base PI controller** (RFC 9332 Appendix A.1, the `dualpi2_update` step), every
//!   `tupdate`: `p' += α·(q − target) + β·(q − q_prev)` with delays in seconds and α, β
//!   in Hz; `p'` stays in `[0, 1]`. There is no `tupdate` factor: the RFC folds it into
//!   α (`α = 0.1·Tupdate/RTT_max²`), and Linux applies α per update the same way. `q` is
//!   the sojourn time, at the update instant, of the packet at the head of the C queue
//!   (0 when it is empty), as the RFC's `cq.time()`. Linux instead takes the larger of
//!   the C and L head sojourns; with a responsive L4S load the two coincide, but an
//!   unresponsive L-only overload raises Linux's `p'` and not ours.
//! * **Coupling** (RFC 9332 §2.1): `p_C = p'²` for the C queue, `p_CL = k·p'` for the L
//!   queue. Squaring makes Classic flows (rate ∝ 1/√p) and scalable flows (rate ∝ 1/p)
//!   get roughly equal windows for `k = 2`.
//! * **L queue**: `p_L = max(native step, p_CL)`. The native AQM is a step on the
//!   packet's own sojourn (Linux's default, 1 ms; the RFC's example is a ramp from
//!   800 µs to 1.2 ms of which a step is the zero-width case): sojourn ≥ `step_thresh`
//!   marks CE with certainty. Otherwise the packet is marked with `p_CL` through the
//!   RFC's de-randomised `recur()` accumulator (Linux rolls a random number instead).
//!   As in Linux, the step applies only to packets that found at least `min_qlen_step`
//!   L packets ahead of them on arrival.
//! * **C queue**: with probability `p_C`, an ECT(0) packet is marked CE and a Not-ECT
//!   packet dropped (one uniform draw per packet; Linux ANDs two rolls of `p'`, the
//!   same distribution).
//! * **Overload** (RFC 9332 §4.2.3; Linux `must_drop`): when `k·p' > 1` the coupled L
//!   probability is saturated, so ECN can no longer rein in unresponsive ECN-capable
//!   traffic. With `drop_overload` (default) L packets are then dropped with `p_C` and
//!   all the rest marked, and C packets hit by `p_C` are dropped even if ECT(0) (RFC
//!   3168 §7). Without it `p'` is capped at `1/k`, so the L queue marks every packet and
//!   never drops (Linux: "overflow" mode, the limit becomes the only drop).
//! * **Small-queue floor** (Linux `must_drop`): no PI mark or drop while less than two
//!   MTUs are queued in both queues together (not counting the packet decided on), so a
//!   slow link is not signalled for the serialisation of a packet or two. The step is
//!   not subject to it.
//! * **Where the PI verdict is applied**: at dequeue by default (Linux, and the RFC's
//!   pseudocode), or at enqueue with `drop_early`. The step is always at dequeue.
//! * **Scheduler** between the queues, chosen by `scheduler`:
//!   - `wrr` (default; Linux's only scheduler, `dualpi2_reset_default` sets
//!     `c_protection` 10 %): a byte-credit weighted round robin in which C gets
//!     `c_protection` % of the link and L the rest when both are backlogged. The credit
//!     starts at `mtu·(w_C − w_L)` (negative: L first); sending an L packet while C
//!     waits adds `w_C·len`, sending a C packet while L waits subtracts `w_L·len`; L
//!     is served while the credit is ≤ 0; it resets when both queues are empty.
//!     `c_protection = 0` is strict priority for L.
//!   - `ts_fifo` (RFC 9332 §4.2.2 and Appendix A.1, not in Linux): time-shifted FIFO.
//!     The L head is served unless the C head has waited more than `tshift` longer
//!     than it, i.e. L while `sojourn(L head) + tshift ≥ sojourn(C head)`. Default
//!     `tshift` 50 ms, the RFC's suggestion for the public Internet. Until issue 28
//!     this was the default; a classic flow beside L4S downloads then waits up to
//!     `tshift` behind the L queue (the issue measured 51 ms p95 for a call beside
//!     Prague downloads against 2.4 ms under `wrr`), so the default is now Linux's.
//! * **Limit**: `limit` packets over both queues (tail drop), as Linux's `sch->limit`;
//!   Linux's additional memory (truesize) limit is not modelled.
//! * **Delay estimate**, chosen by `estimate`: `sojourn` (default; Linux and the RFC)
//!   times packets in the queue. `virtual` estimates from bytes at a rate instead, as
//!   Low Latency DOCSIS does (CableLabs MULPI Annex O; docsis-ns3's
//!   `QDelayCoupledV`/`QDelayCoupledC`), because a cable modem's upstream packets also
//!   wait for their grant, a wait that sojourn would count as queueing and mark every
//!   L packet for: the L step is decided at enqueue on a virtual queue that drains at
//!   `rate_bps` (the link's when 0) and grows by each L packet's serialisation time
//!   (the step: virtual delay ≥ `step_thresh`, or two MTUs at the rate if that is
//!   longer, LLD's FLOOR), and the PI's `q` is the C queue's bytes at that rate. Not
//!   modelled from LLD: the virtual queue's alignment to the actual
//!   one, the IAQM ramp (a step here), r_C's share of the rate, and the PIE-style
//!   Classic controller.
//!
//! The periodic update runs lazily, as in [`Pie`](crate::Pie): before each enqueue or
//! dequeue at `now`, every update due at or before `now` is applied with the C head's
//! sojourn at that update's instant. The head can only change at enqueues and
//! dequeues, so this equals a timer. An idle C queue is caught up in constant time.
//! Probabilities are `f64` (Linux: 32-bit fixed point).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::check;
use crate::config::{Described, HardLimit};
use crate::rng::SplitMix64;
use crate::{Discipline, Ecn, Nanos, Packet};

const MS: Nanos = 1_000_000;

fn default_limit() -> u64 {
    10_000
}
fn default_target() -> Nanos {
    15 * MS
}
fn default_tupdate() -> Nanos {
    16 * MS
}
fn default_alpha() -> f64 {
    0.16
}
fn default_beta() -> f64 {
    3.2
}
fn default_k() -> f64 {
    2.0
}
fn default_step_thresh() -> Nanos {
    MS
}
fn default_true() -> bool {
    true
}
fn default_c_protection() -> u8 {
    10
}
fn default_tshift() -> Nanos {
    50 * MS
}
fn default_mtu() -> u32 {
    1500
}

/// How the L and C queues share the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DualPi2Scheduler {
    /// Time-shifted FIFO (RFC 9332 §A.1), using `tshift_ns`; not in Linux.
    TsFifo,
    /// Linux's byte-credit WRR, using `c_protection` and `mtu` (the default, as Linux
    /// has no other).
    #[default]
    Wrr,
}

/// How DualPI2 measures queue delay (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DualPi2Estimate {
    /// Each packet's sojourn time (Linux, RFC 9332).
    #[default]
    Sojourn,
    /// Bytes at a rate: LLD's virtual L queue and C backlog (MULPI Annex O).
    Virtual,
}

/// DualPI2's parameters. Defaults are Linux's (`dualpi2_reset_default`); the RFC 9332
/// Appendix A values, where they differ, are noted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// Packets held at most, both queues together (Linux 10 000; the RFC sizes the
    /// buffer as 250 ms at the link rate).
    #[serde(default = "default_limit")]
    pub limit: u64,
    /// Classic queuing-delay target (15 ms, RFC and Linux).
    #[serde(default = "default_target")]
    pub target_ns: Nanos,
    /// PI update period (Linux 16 ms; RFC `min(target, RTT_max/3)` = 15 ms).
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: Nanos,
    /// Integral gain in Hz (Linux 41/256 ≈ 0.16; RFC `0.1·Tupdate/RTT_max²` = 0.15).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Proportional gain in Hz (Linux 819/256 ≈ 3.2; RFC `0.3/RTT_max` = 3).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Coupling factor: `p_CL = k·p'` (2 in both).
    #[serde(default = "default_k")]
    pub k: f64,
    /// L-queue native step: a sojourn at least this long marks CE (Linux 1 ms).
    #[serde(default = "default_step_thresh")]
    pub step_thresh_ns: Nanos,
    /// The step applies only to an L packet that finds at least this many L packets
    /// ahead of it on arrival (Linux 0: always).
    #[serde(default)]
    pub min_qlen_step: u32,
    /// On overload (`k·p' > 1`) drop L packets with `p_C` and Classic ECT packets
    /// instead of marking them (Linux default); otherwise cap `p'` at `1/k`.
    #[serde(default = "default_true")]
    pub drop_overload: bool,
    /// Apply the PI mark/drop verdict at enqueue instead of at dequeue (Linux default:
    /// at dequeue).
    #[serde(default)]
    pub drop_early: bool,
    /// Which scheduler shares the link between L and C (Linux's WRR unless asked).
    #[serde(default)]
    pub scheduler: DualPi2Scheduler,
    /// WRR only: the C queue's share in percent, 0..=100 (Linux 10).
    #[serde(default = "default_c_protection")]
    pub c_protection: u8,
    /// TS-FIFO only: the time shift favouring L (RFC 9332 §A.1: 50 ms).
    #[serde(default = "default_tshift")]
    pub tshift_ns: Nanos,
    /// Bytes per MTU, for the two-MTU floor of the PI verdict and the WRR's initial
    /// credit (Linux takes the device's).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// How queue delay is measured: sojourn (Linux) or virtual (Low Latency DOCSIS).
    #[serde(default)]
    pub estimate: DualPi2Estimate,
    /// `virtual` only: the rate the estimate drains at, bit/s (0: the link's).
    #[serde(default)]
    pub rate_bps: u64,
    #[serde(default)]
    pub seed: u64,
}

impl Described for DualPi2Config {
    const DISPLAY: &'static str = "DualPI2";
    const HARD_LIMIT: Option<HardLimit> = Some(HardLimit::packets("limit"));
}

impl Default for DualPi2Config {
    fn default() -> Self {
        DualPi2Config {
            limit: default_limit(),
            target_ns: default_target(),
            tupdate_ns: default_tupdate(),
            alpha: default_alpha(),
            beta: default_beta(),
            k: default_k(),
            step_thresh_ns: default_step_thresh(),
            min_qlen_step: 0,
            drop_overload: true,
            drop_early: false,
            scheduler: DualPi2Scheduler::Wrr,
            c_protection: default_c_protection(),
            tshift_ns: default_tshift(),
            mtu: default_mtu(),
            estimate: DualPi2Estimate::Sojourn,
            rate_bps: 0,
            seed: 0,
        }
    }
}

impl DualPi2Config {
    pub fn validate(&self) -> Result<(), String> {
        check::limit("limit", self.limit)?;
        check::positive("tupdate_ns", self.tupdate_ns)?;
        for (key, v) in [
            ("target_ns", self.target_ns),
            ("tupdate_ns", self.tupdate_ns),
            ("step_thresh_ns", self.step_thresh_ns),
            ("tshift_ns", self.tshift_ns),
        ] {
            check::time(key, v)?;
        }
        check::non_negative("alpha", self.alpha)?;
        check::non_negative("beta", self.beta)?;
        if !(self.k.is_finite() && self.k > 0.0) {
            return Err(format!("k: must be a finite number > 0, got {}", self.k));
        }
        if self.c_protection > 100 {
            return Err(format!(
                "c_protection: a percentage (0..=100), got {}",
                self.c_protection
            ));
        }
        check::positive("mtu", self.mtu.into())
    }
}

/// Counters. Marks count decisions to set CE (a packet that arrived CE and is "marked"
/// again counts, as in Linux); with `drop_early` one L packet can count a coupled mark
/// at enqueue and a step mark at dequeue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DualPi2Stats {
    /// Packets accepted into the L queue.
    pub l_enqueued: u64,
    /// Packets accepted into the C queue.
    pub c_enqueued: u64,
    /// Arrivals refused because `limit` packets were queued.
    pub limit_drops: u64,
    /// Not-ECT Classic packets dropped with `p_C`.
    pub classic_drops: u64,
    /// ECN-capable packets dropped because of overload: L packets dropped with `p_C`,
    /// and ECT(0) Classic packets dropped instead of marked.
    pub overload_drops: u64,
    /// L packets marked by the native step.
    pub step_marks: u64,
    /// L packets marked by the coupled probability (including every L packet not
    /// dropped during overload).
    pub coupled_marks: u64,
    /// ECT(0) Classic packets marked with `p_C`.
    pub classic_marks: u64,
}

impl DualPi2Stats {
    /// All drops.
    pub fn drops(&self) -> u64 {
        self.limit_drops + self.classic_drops + self.overload_drops
    }
}

/// An L-queue entry: the packet and whether the step may apply to it (it found at
/// least `min_qlen_step` L packets ahead on arrival).
type LEntry = (Packet, bool);

/// DualPI2 on two FIFOs.
#[derive(Debug, Clone)]
pub struct DualPi2 {
    cfg: DualPi2Config,
    l: VecDeque<LEntry>,
    c: VecDeque<Packet>,
    l_bytes: u64,
    c_bytes: u64,
    /// The base probability p'.
    prob: f64,
    /// Classic queue delay used at the previous update.
    prevq: Nanos,
    /// When the next periodic update is due (`None`: not started; the timer starts at
    /// the first event, as the qdisc's starts when it is created).
    next_update: Option<Nanos>,
    /// The L queue's `recur()` accumulator.
    l_count: f64,
    /// WRR credit (sign says which queue is next).
    credit: i64,
    /// `virtual` estimate: the rate it drains at (bit/s; 0 under `sojourn`), the L
    /// virtual queue's delay and when it was last updated.
    vq_rate: u64,
    vq: Nanos,
    vq_at: Nanos,
    rng: SplitMix64,
    stats: DualPi2Stats,
}

impl DualPi2 {
    /// DualPI2 where the link rate is not known (the `virtual` estimate then needs
    /// `rate_bps`).
    pub fn new(cfg: &DualPi2Config) -> Result<Self, String> {
        Self::for_link(cfg, 0)
    }

    /// DualPI2 on a link of `link_rate_bps` (the `virtual` estimate's rate unless
    /// `rate_bps` is given).
    pub fn for_link(cfg: &DualPi2Config, link_rate_bps: u64) -> Result<Self, String> {
        cfg.validate()?;
        let vq_rate = match (cfg.estimate, cfg.rate_bps) {
            (DualPi2Estimate::Sojourn, _) => 0,
            (DualPi2Estimate::Virtual, 0) if link_rate_bps == 0 => {
                return Err("estimate: virtual needs a rate: rate_bps, or a link rate".into())
            }
            (DualPi2Estimate::Virtual, 0) => link_rate_bps,
            (DualPi2Estimate::Virtual, r) => r,
        };
        let mut q = DualPi2 {
            cfg: *cfg,
            l: VecDeque::with_capacity(256),
            c: VecDeque::with_capacity(256),
            l_bytes: 0,
            c_bytes: 0,
            prob: 0.0,
            prevq: 0,
            next_update: None,
            l_count: 0.0,
            credit: 0,
            vq_rate,
            vq: 0,
            vq_at: 0,
            rng: SplitMix64::new(cfg.seed),
            stats: DualPi2Stats::default(),
        };
        q.credit = q.credit_init();
        Ok(q)
    }

    pub fn config(&self) -> &DualPi2Config {
        &self.cfg
    }

    pub fn stats(&self) -> DualPi2Stats {
        self.stats
    }

    /// The base probability p'.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The Classic mark/drop probability `p_C = p'²`.
    pub fn p_c(&self) -> f64 {
        self.prob * self.prob
    }

    /// The coupled L marking probability `p_CL = k·p'`, clamped to 1. (The native step
    /// raises an individual packet's probability to 1 on top of this.)
    pub fn p_l(&self) -> f64 {
        (self.cfg.k * self.prob).min(1.0)
    }

    /// Whether the coupled L probability is saturated (`k·p' > 1`).
    pub fn overloaded(&self) -> bool {
        self.cfg.k * self.prob > 1.0
    }

    /// Test and experiment access: sets p' (clamped as an update would clamp it).
    pub fn set_prob(&mut self, p: f64) {
        self.prob = if p.is_nan() {
            0.0
        } else {
            p.clamp(0.0, self.prob_max())
        };
    }

    /// L packets waiting.
    pub fn l_waiting(&self) -> usize {
        self.l.len()
    }

    /// C packets waiting.
    pub fn c_waiting(&self) -> usize {
        self.c.len()
    }

    /// The ceiling of p': 1, or `1/k` when overload must not drop (so `p_CL ≤ 1`).
    fn prob_max(&self) -> f64 {
        if self.cfg.drop_overload {
            1.0
        } else {
            (1.0 / self.cfg.k).min(1.0)
        }
    }

    /// `bytes` at the `virtual` estimate's rate, in ns (rounded down, as LLD's).
    fn at_rate(&self, bytes: u64) -> Nanos {
        (bytes as u128 * 8_000_000_000 / self.vq_rate.max(1) as u128).min(Nanos::MAX as u128)
            as Nanos
    }

    /// The `virtual` L queue at `now` after an L packet of `len` bytes joined it.
    fn virtual_l_delay(&mut self, now: Nanos, len: u16) -> Nanos {
        let drained = now.saturating_sub(self.vq_at);
        self.vq = self
            .vq
            .saturating_sub(drained)
            .saturating_add(self.at_rate(len.into()));
        self.vq_at = now;
        self.vq
    }

    fn credit_init(&self) -> i64 {
        let wc = self.cfg.c_protection as i64;
        self.cfg.mtu as i64 * (wc - (100 - wc))
    }

    /// One PI2 update with Classic queue delay `curq` (RFC 9332 §A.1 `dualpi2_update`).
    pub fn pi_update(&mut self, curq: Nanos) {
        let c = &self.cfg;
        let secs = |a: Nanos, b: Nanos| (a as f64 - b as f64) * 1e-9;
        let p = self.prob + c.alpha * secs(curq, c.target_ns) + c.beta * secs(curq, self.prevq);
        self.prob = if p.is_nan() {
            0.0
        } else {
            p.clamp(0.0, self.prob_max())
        };
        self.prevq = curq;
    }

    /// Runs every periodic update due by `now`.
    fn catch_up(&mut self, now: Nanos) {
        let t = self.cfg.tupdate_ns;
        let Some(mut next) = self.next_update else {
            self.next_update = Some(now.saturating_add(t));
            return;
        };
        let mut steps = 0u32;
        while next <= now {
            let Some(head) = self.c.front() else {
                // Empty C queue: q = 0 at this and every later boundary up to `now`.
                // After this step q_prev = 0 too, so each later step only subtracts
                // α·target (never below 0): apply them at once.
                self.pi_update(0);
                let more = (now - next) / t;
                if more > 0 {
                    let dec = self.cfg.alpha * self.cfg.target_ns as f64 * 1e-9 * more as f64;
                    self.prob = (self.prob - dec).max(0.0);
                }
                next = next.saturating_add(more.saturating_add(1).saturating_mul(t));
                break;
            };
            // The C queue has not changed since the last event: its bytes then are its
            // bytes at `next`.
            let q = if self.vq_rate > 0 {
                self.at_rate(self.c_bytes)
            } else {
                next.saturating_sub(head.arrived)
            };
            self.pi_update(q);
            if next == Nanos::MAX {
                break;
            }
            next = next.saturating_add(t);
            steps += 1;
            // A backlog left undequeued for over 100 000 periods (a stalled link):
            // p' saturated long ago; skip to the schedule's next boundary after `now`.
            if steps == 100_000 && next <= now {
                let more = (now - next) / t + 1;
                next = next.saturating_add(more.saturating_mul(t));
                break;
            }
        }
        self.next_update = Some(next);
    }

    /// RFC 9332 `recur()`: true with long-run frequency `likelihood`, evenly spread.
    /// A likelihood of 1 or more is certain (the RFC's strict comparison would skip
    /// the first packet).
    fn recur(&mut self, likelihood: f64) -> bool {
        if likelihood >= 1.0 {
            return true;
        }
        self.l_count += likelihood;
        if self.l_count > 1.0 {
            self.l_count -= 1.0;
            true
        } else {
            false
        }
    }

    /// The PI verdict on `pkt` (from the L queue if `in_l`), with `backlog` bytes
    /// queued besides it. Marks CE where due; returns `true` if it must be dropped.
    fn pi_verdict(&mut self, pkt: &mut Packet, in_l: bool, backlog: u64) -> bool {
        if backlog < 2 * self.cfg.mtu as u64 {
            return false;
        }
        let p = self.prob;
        let overload = self.overloaded();
        if in_l {
            if overload {
                if self.cfg.drop_overload && self.rng.chance(p * p) {
                    self.stats.overload_drops += 1;
                    return true;
                }
                // p_L is saturated: every remaining L packet is marked.
                if pkt.mark_ce() {
                    self.stats.coupled_marks += 1;
                }
            } else if self.recur(self.cfg.k * p) && pkt.mark_ce() {
                self.stats.coupled_marks += 1;
            }
            // (L packets are ECT(1) or CE by classification, so marking never fails.)
            false
        } else {
            if !self.rng.chance(p * p) {
                return false;
            }
            if !pkt.ecn_capable() {
                self.stats.classic_drops += 1;
                true
            } else if overload && self.cfg.drop_overload {
                self.stats.overload_drops += 1;
                true
            } else {
                pkt.mark_ce();
                self.stats.classic_marks += 1;
                false
            }
        }
    }

    /// Which queue to serve at `now`: `Some(true)` for L, `Some(false)` for C.
    fn pick(&self) -> Option<bool> {
        match (self.l.front(), self.c.front()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some((l, _)), Some(c)) => Some(match self.cfg.scheduler {
                // sojourn(L) + tshift >= sojourn(C), with sojourn = now − arrived.
                DualPi2Scheduler::TsFifo => {
                    c.arrived.saturating_add(self.cfg.tshift_ns) >= l.arrived
                }
                DualPi2Scheduler::Wrr => self.credit <= 0,
            }),
        }
    }
}

impl Discipline for DualPi2 {
    fn enqueue(&mut self, now: Nanos, mut pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        self.catch_up(now);
        if (self.l.len() + self.c.len()) as u64 >= self.cfg.limit {
            self.stats.limit_drops += 1;
            drops.push(pkt);
            return false;
        }
        let in_l = matches!(pkt.ecn(), Ecn::Ect1 | Ecn::Ce);
        if self.cfg.drop_early && self.pi_verdict(&mut pkt, in_l, self.l_bytes + self.c_bytes) {
            drops.push(pkt);
            return false;
        }
        if in_l {
            let mut step_ok = self.l.len() as u64 >= self.cfg.min_qlen_step as u64;
            if self.vq_rate > 0 {
                // LLD decides the step as the packet joins, on the virtual queue.
                let delay = self.virtual_l_delay(now, pkt.len);
                // LLD's FLOOR: never below two MTUs at the rate (a slow upstream).
                let thresh = self
                    .cfg
                    .step_thresh_ns
                    .max(self.at_rate(2 * self.cfg.mtu as u64));
                if step_ok && delay >= thresh {
                    pkt.mark_ce();
                    self.stats.step_marks += 1;
                }
                step_ok = false;
            }
            self.l_bytes += pkt.len as u64;
            self.l.push_back((pkt, step_ok));
            self.stats.l_enqueued += 1;
        } else {
            self.c_bytes += pkt.len as u64;
            self.c.push_back(pkt);
            self.stats.c_enqueued += 1;
        }
        true
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        self.catch_up(now);
        while let Some(in_l) = self.pick() {
            let (mut pkt, step_ok, change) = if in_l {
                let (pkt, step_ok) = self.l.pop_front()?;
                self.l_bytes -= pkt.len as u64;
                let change = if self.c.is_empty() {
                    0
                } else {
                    self.cfg.c_protection as i64 * pkt.len as i64
                };
                (pkt, step_ok, change)
            } else {
                let pkt = self.c.pop_front()?;
                self.c_bytes -= pkt.len as u64;
                let change = if self.l.is_empty() {
                    0
                } else {
                    -((100 - self.cfg.c_protection as i64) * pkt.len as i64)
                };
                (pkt, false, change)
            };
            if !self.cfg.drop_early && self.pi_verdict(&mut pkt, in_l, self.l_bytes + self.c_bytes)
            {
                drops.push(pkt);
                continue;
            }
            if in_l && step_ok && now.saturating_sub(pkt.arrived) >= self.cfg.step_thresh_ns {
                pkt.mark_ce();
                self.stats.step_marks += 1;
            }
            self.credit = self.credit.saturating_add(change);
            return Some(pkt);
        }
        self.credit = self.credit_init();
        None
    }

    fn bytes(&self) -> u64 {
        self.l_bytes + self.c_bytes
    }

    fn packets(&self) -> u32 {
        (self.l.len() + self.c.len()) as u32
    }

    fn waiting(&self) -> usize {
        self.l.len() + self.c.len()
    }

    fn visit(&self, f: &mut dyn FnMut(&Packet)) {
        self.l.iter().for_each(|(p, _)| f(p));
        self.c.iter().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PacketKind;
    use proptest::prelude::*;

    fn pkt(ecn: Ecn, seq: u64, arrived: Nanos) -> Packet {
        let mut p = Packet::new(PacketKind::Data, 0, 1500, seq, 0);
        p.set_ecn(ecn);
        p.arrived = arrived;
        p
    }

    /// A queue with p' set to `p` and held there: with a 1000 s period no update falls
    /// due within a test.
    fn held(p: f64, c: DualPi2Config) -> DualPi2 {
        let mut q = DualPi2::new(&DualPi2Config {
            tupdate_ns: 1_000_000 * MS,
            ..c
        })
        .unwrap();
        q.set_prob(p);
        q
    }

    /// The L packets (seq) a queue let through with CE after ECT(1) packets of 1500 B
    /// arrived at `times` and all left at 100 ms.
    fn ce_after(q: &mut DualPi2, times: &[Nanos]) -> Vec<u64> {
        let mut drops = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            assert!(q.enqueue(t, pkt(Ecn::Ect1, i as u64, t), &mut drops));
        }
        let mut ce = Vec::new();
        while let Some(p) = q.dequeue(100 * MS, &mut drops) {
            if p.ecn() == Ecn::Ce {
                ce.push(p.seq);
            }
        }
        assert!(drops.is_empty());
        ce
    }

    #[test]
    fn the_virtual_estimate_steps_on_bytes_at_the_rate_not_on_sojourn() {
        // 12 Mbit/s: a 1500-byte packet is 1 ms; the threshold is LLD's floor of two
        // MTUs, 2 ms, above the 1 ms step. Arrivals at 0, 0, 0.5 and 3.5 ms: the
        // virtual queue reads 1, 2, 2.5 (2 - 0.5 drained + 1) and 1 ms (drained to 0).
        let lld = DualPi2Config {
            estimate: DualPi2Estimate::Virtual,
            tupdate_ns: 1_000_000 * MS,
            ..DualPi2Config::default()
        };
        let times = [0, 0, MS / 2, 7 * MS / 2];
        let mut q = DualPi2::for_link(&lld, 12_000_000).unwrap();
        assert_eq!(ce_after(&mut q, &times), [1, 2]);
        assert_eq!(q.stats().step_marks, 2);
        // `rate_bps` overrides the link's: at 24 Mbit/s (0.5 ms a packet, floor 1 ms)
        // the estimate reads 0.5, 1, 1 and 0.5 ms.
        let fast = DualPi2Config {
            rate_bps: 24_000_000,
            ..lld
        };
        let mut q = DualPi2::for_link(&fast, 12_000_000).unwrap();
        assert_eq!(ce_after(&mut q, &times), [1, 2]);
        let mut q = DualPi2::for_link(&fast, 12_000_000).unwrap();
        assert_eq!(
            ce_after(&mut q, &[0, MS, 2 * MS, 3 * MS]),
            Vec::<u64>::new()
        );
        // Sojourn (Linux): every packet waited 96.5 ms or more, every one is marked.
        let linux = DualPi2Config {
            estimate: DualPi2Estimate::Sojourn,
            ..lld
        };
        let mut q = DualPi2::for_link(&linux, 12_000_000).unwrap();
        assert_eq!(ce_after(&mut q, &times), [0, 1, 2, 3]);
        // Virtual without a rate anywhere is refused, naming it.
        let err = DualPi2::new(&lld).unwrap_err();
        assert!(err.starts_with("estimate: virtual needs a rate"), "{err}");
    }

    #[test]
    fn the_virtual_estimate_feeds_the_pi_the_classic_bytes_at_the_rate() {
        // 20 Not-ECT packets of 1500 B at 0: 30 000 B, 20 ms at 12 Mbit/s. The first
        // update falls at 16 ms (the timer starts with the first event): q = 20 ms
        // from the bytes, where sojourn reads the head's 16 ms.
        for (estimate, q_s) in [
            (DualPi2Estimate::Virtual, 0.020),
            (DualPi2Estimate::Sojourn, 0.016),
        ] {
            let cfg = DualPi2Config {
                estimate,
                ..DualPi2Config::default()
            };
            let mut q = DualPi2::for_link(&cfg, 12_000_000).unwrap();
            let mut drops = Vec::new();
            for i in 0..20 {
                q.enqueue(0, pkt(Ecn::NotEct, i, 0), &mut drops);
            }
            q.dequeue(16 * MS, &mut drops);
            let want = cfg.alpha * (q_s - 0.015) + cfg.beta * q_s;
            assert!(
                close(q.prob(), want),
                "{estimate:?}: {} vs {want}",
                q.prob()
            );
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn defaults_parse_and_invalid_values_are_named() {
        let d: DualPi2Config = serde_json::from_str("{}").unwrap();
        assert_eq!(d, DualPi2Config::default());
        assert_eq!(
            (d.limit, d.target_ns, d.tupdate_ns, d.alpha, d.beta, d.k),
            (10_000, 15 * MS, 16 * MS, 0.16, 3.2, 2.0)
        );
        assert_eq!(
            (
                d.step_thresh_ns,
                d.min_qlen_step,
                d.c_protection,
                d.tshift_ns,
                d.mtu
            ),
            (MS, 0, 10, 50 * MS, 1500)
        );
        assert!(d.drop_overload && !d.drop_early);
        // Linux's scheduler (sch_dualpi2.c has only the WRR), not the RFC's TS-FIFO.
        assert_eq!(d.scheduler, DualPi2Scheduler::Wrr);
        let w: DualPi2Config =
            serde_json::from_str(r#"{"scheduler": "wrr", "k": 1, "seed": 3}"#).unwrap();
        assert_eq!((w.scheduler, w.k, w.seed), (DualPi2Scheduler::Wrr, 1.0, 3));
        let back: DualPi2Config =
            serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(back, w);
        assert!(serde_json::from_str::<DualPi2Config>(r#"{"classic_ecn": true}"#).is_err());

        let d = DualPi2Config::default();
        let bad = [
            (DualPi2Config { limit: 0, ..d }, "limit"),
            (DualPi2Config { tupdate_ns: 0, ..d }, "tupdate_ns"),
            (
                DualPi2Config {
                    alpha: f64::NAN,
                    ..d
                },
                "alpha",
            ),
            (DualPi2Config { beta: -1.0, ..d }, "beta"),
            (DualPi2Config { k: 0.0, ..d }, "k:"),
            (
                DualPi2Config {
                    k: f64::INFINITY,
                    ..d
                },
                "k:",
            ),
            (
                DualPi2Config {
                    c_protection: 101,
                    ..d
                },
                "c_protection",
            ),
            (DualPi2Config { mtu: 0, ..d }, "mtu"),
        ];
        for (c, field) in bad {
            let e = c.validate().unwrap_err();
            assert!(e.starts_with(field), "{e}");
            assert!(DualPi2::new(&c).is_err());
        }
    }

    #[test]
    fn pi_update_by_hand() {
        // RFC 9332 A.1: p' += α·(q − target) + β·(q − q_prev), seconds, α = 0.16 Hz,
        // β = 3.2 Hz, target = 0.015 s (no tupdate factor: α already contains it).
        let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
        // q = 25 ms, q_prev = 0: 0.16·0.010 + 3.2·0.025 = 0.0016 + 0.08 = 0.0816.
        q.pi_update(25 * MS);
        assert!(close(q.prob(), 0.0816), "{}", q.prob());
        // q = q_prev = 25 ms: only the integral term, +0.0016 each time.
        q.pi_update(25 * MS);
        assert!(close(q.prob(), 0.0832), "{}", q.prob());
        q.pi_update(25 * MS);
        assert!(close(q.prob(), 0.0848), "{}", q.prob());
        // q = 10 ms, q_prev = 25 ms: 0.16·(−0.005) + 3.2·(−0.015) = −0.0008 − 0.048
        // = −0.0488: p' = 0.036, p_C = 0.036² = 0.001296, p_CL = 2·0.036 = 0.072.
        q.pi_update(10 * MS);
        assert!(close(q.prob(), 0.036), "{}", q.prob());
        assert!(close(q.p_c(), 0.001296));
        assert!(close(q.p_l(), 0.072));
        // Empty queue, q_prev = 10 ms: 0.16·(−0.015) + 3.2·(−0.010) = −0.0344: 0.0016.
        q.pi_update(0);
        assert!(close(q.prob(), 0.0016), "{}", q.prob());
        // Then −0.0024 would go below 0: clamped.
        q.pi_update(0);
        assert_eq!(q.prob(), 0.0);
        // A 2 s delay: +0.16·1.985 + 3.2·2 ≫ 1: clamped to 1, or to 1/k = 0.5 when
        // overload must not drop.
        q.pi_update(2_000 * MS);
        assert_eq!(q.prob(), 1.0);
        let mut q = DualPi2::new(&DualPi2Config {
            drop_overload: false,
            ..Default::default()
        })
        .unwrap();
        q.pi_update(2_000 * MS);
        assert_eq!((q.prob(), q.p_l()), (0.5, 1.0));
        assert!(!q.overloaded());
    }

    #[test]
    fn lazy_updates_use_the_classic_head_sojourn_at_each_boundary() {
        let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
        let mut d = Vec::new();
        // The first event starts the 16 ms timer: boundaries at 16, 32, 48, 64, … ms.
        assert!(q.enqueue(0, pkt(Ecn::NotEct, 0, 0), &mut d));
        // The next event, at 50 ms, first runs the updates at 16, 32 and 48 ms with the
        // head (arrived at 0) as the Classic delay:
        //   16 ms: 0.16·0.001 + 3.2·0.016 = 0.00016 + 0.0512 = 0.05136
        //   32 ms: 0.16·0.017 + 3.2·0.016 = 0.00272 + 0.0512 → 0.10528
        //   48 ms: 0.16·0.033 + 3.2·0.016 = 0.00528 + 0.0512 → 0.16176
        assert!(q.enqueue(50 * MS, pkt(Ecn::NotEct, 1, 50 * MS), &mut d));
        assert!(close(q.prob(), 0.16176), "{}", q.prob());
        // Under two MTUs queued besides the packet: no PI verdict, both leave intact.
        assert_eq!(q.dequeue(50 * MS, &mut d).map(|p| p.seq), Some(0));
        assert_eq!(q.dequeue(50 * MS, &mut d).map(|p| p.seq), Some(1));
        assert!(d.is_empty());
        // Empty from here. 64 ms: q = 0, q_prev = 48 ms: −0.0024 − 3.2·0.048 = −0.156
        // → 0.00576; 80 ms: −0.0024 → 0.00336.
        assert!(q.dequeue(81 * MS, &mut d).is_none());
        assert!(close(q.prob(), 0.00336), "{}", q.prob());
        // 96 ms → 0.00096, 112 ms → 0.
        assert!(q.dequeue(10_000 * MS, &mut d).is_none());
        assert_eq!(q.prob(), 0.0);

        // The constant-time catch-up of an empty queue: from p' = 0.9 with q_prev = 0,
        // 100 updates (16 ms … 1600 ms) subtract 100·0.16·0.015 = 0.24: 0.66.
        let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
        assert!(q.dequeue(0, &mut d).is_none());
        q.set_prob(0.9);
        assert!(q.dequeue(1600 * MS, &mut d).is_none());
        assert!((q.prob() - 0.66).abs() < 1e-9, "{}", q.prob());

        // An L backlog alone does not move p' (RFC: the Classic queue's delay).
        let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
        for i in 0..5 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
        }
        assert!(q.enqueue(500 * MS, pkt(Ecn::Ect1, 9, 500 * MS), &mut d));
        assert_eq!(q.prob(), 0.0);
    }

    #[test]
    fn probabilities_derive_from_the_base() {
        let mut q = DualPi2::new(&DualPi2Config::default()).unwrap();
        q.set_prob(0.036);
        assert!(close(q.p_c(), 0.001296) && close(q.p_l(), 0.072));
        q.set_prob(0.5); // k·p' = 1: saturated, not yet overload
        assert!(close(q.p_c(), 0.25) && q.p_l() == 1.0 && !q.overloaded());
        q.set_prob(0.7); // p_CL = 1.4, clamped to 1; p_C = 0.49
        assert!(close(q.p_c(), 0.49) && q.p_l() == 1.0 && q.overloaded());
        q.set_prob(7.0);
        assert_eq!(q.prob(), 1.0);
    }

    #[test]
    fn the_step_marks_every_l_packet_from_one_millisecond_of_sojourn() {
        // p' = 0: only the step can mark.
        let mut q = held(0.0, DualPi2Config::default());
        let mut d = Vec::new();
        assert!(q.enqueue(0, pkt(Ecn::Ect1, 0, 9 * MS), &mut d));
        assert!(q.enqueue(0, pkt(Ecn::Ect1, 1, 9 * MS + 1), &mut d));
        assert!(q.enqueue(0, pkt(Ecn::Ect0, 2, 0), &mut d));
        // At 10 ms: sojourn exactly 1 ms → CE; 999 999 ns → untouched.
        let a = q.dequeue(10 * MS, &mut d).unwrap();
        let b = q.dequeue(10 * MS, &mut d).unwrap();
        assert_eq!((a.seq, a.ecn()), (0, Ecn::Ce));
        assert_eq!((b.seq, b.ecn()), (1, Ecn::Ect1));
        // A Classic packet is never step-marked, whatever its sojourn (10 ms).
        assert_eq!(q.dequeue(10 * MS, &mut d).unwrap().ecn(), Ecn::Ect0);
        assert_eq!(q.stats().step_marks, 1);

        // min_qlen_step = 2: only a packet that found two L packets ahead of it.
        let mut q = held(
            0.0,
            DualPi2Config {
                min_qlen_step: 2,
                ..Default::default()
            },
        );
        for i in 0..3 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
        }
        let ecns: Vec<Ecn> = (0..3)
            .map(|_| q.dequeue(5 * MS, &mut d).unwrap().ecn())
            .collect();
        assert_eq!(ecns, [Ecn::Ect1, Ecn::Ect1, Ecn::Ce]);
        assert!(d.is_empty());
    }

    #[test]
    fn below_the_step_l_packets_are_marked_with_p_cl_by_recurrence() {
        // p' = 0.25: p_CL = 0.5. recur(): the count runs 0.5, 1.0, 1.5 → mark (0.5),
        // 1.0, 1.5 → mark, …: packets 3, 5, 7, 9 of ten.
        let mut q = held(0.25, DualPi2Config::default());
        let mut d = Vec::new();
        for i in 0..20 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
        }
        let marked: Vec<bool> = (0..10)
            .map(|_| q.dequeue(0, &mut d).unwrap().ecn() == Ecn::Ce)
            .collect();
        let mut want = [false; 10];
        for i in [2, 4, 6, 8] {
            want[i] = true;
        }
        assert_eq!(marked, want);
        assert_eq!(q.stats().coupled_marks, 4);
        assert_eq!(q.stats().step_marks, 0);

        // Under two MTUs queued besides it, not even p_CL = 1 marks.
        let mut q = held(0.5, DualPi2Config::default());
        for i in 0..2 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
        }
        assert_eq!(q.dequeue(0, &mut d).unwrap().ecn(), Ecn::Ect1);
        assert_eq!(q.dequeue(0, &mut d).unwrap().ecn(), Ecn::Ect1);
        assert!(d.is_empty());
    }

    /// Offers `n` packets of `ecn` at time 0 to `q`, then dequeues until `keep` are left.
    /// Returns the packets handed out and the packets dropped.
    fn drain(q: &mut DualPi2, ecn: Ecn, n: u64, keep: usize) -> (Vec<Packet>, Vec<Packet>) {
        let mut d = Vec::new();
        for i in 0..n {
            assert!(q.enqueue(0, pkt(ecn, i, 0), &mut d));
        }
        let mut out = Vec::new();
        while q.waiting() > keep {
            out.extend(q.dequeue(0, &mut d));
        }
        (out, d)
    }

    #[test]
    fn classic_ect0_is_marked_where_not_ect_is_dropped() {
        // p' = 0.4: p_C = 0.16, p_CL = 0.8 (no overload). Two queues in the same state
        // and with the same seed draw the same numbers, so the ECT(0) packets marked are
        // exactly the Not-ECT packets dropped.
        let c = DualPi2Config {
            seed: 7,
            ..Default::default()
        };
        let (out, drops) = drain(&mut held(0.4, c), Ecn::Ect0, 2000, 100);
        assert!(drops.is_empty());
        assert_eq!(out.len(), 1900);
        let marked: Vec<u64> = out
            .iter()
            .filter(|p| p.ecn() == Ecn::Ce)
            .map(|p| p.seq)
            .collect();
        let (out, drops) = drain(&mut held(0.4, c), Ecn::NotEct, 2000, 100);
        assert!(out.iter().all(|p| p.ecn() == Ecn::NotEct));
        let dropped: Vec<u64> = drops.iter().map(|p| p.seq).filter(|&s| s < 1900).collect();
        assert_eq!(marked, dropped);
        // Binomial(1900, 0.16): mean 304, sd ≈ 16; ±96 is 6 sd.
        assert!((marked.len() as i64 - 304).abs() < 96, "{}", marked.len());
    }

    #[test]
    fn overload_drops_with_p_c_instead_of_marking() {
        // p' = 0.6: p_CL = 1.2 > 1 (overload), p_C = 0.36.
        let c = DualPi2Config::default();
        let frac = |out: &[Packet], d: &[Packet]| d.len() as f64 / (out.len() + d.len()) as f64;
        // L: dropped with p_C, every survivor marked.
        let mut q = held(0.6, c);
        let (out, d) = drain(&mut q, Ecn::Ect1, 2000, 100);
        assert!(out.iter().all(|p| p.ecn() == Ecn::Ce));
        // Binomial(≈1900, 0.36): sd ≈ 0.011 as a fraction; ±0.066 is 6 sd.
        assert!((frac(&out, &d) - 0.36).abs() < 0.066, "{}", frac(&out, &d));
        assert_eq!(q.stats().overload_drops, d.len() as u64);
        // C ECT(0): dropped with p_C instead of marked.
        let mut q = held(0.6, c);
        let (out, d) = drain(&mut q, Ecn::Ect0, 2000, 100);
        assert!(out.iter().all(|p| p.ecn() == Ecn::Ect0));
        assert!((frac(&out, &d) - 0.36).abs() < 0.066, "{}", frac(&out, &d));
        assert_eq!(q.stats().overload_drops, d.len() as u64);
        assert_eq!(q.stats().classic_marks, 0);
        // C Not-ECT: dropped as always (counted as Classic drops).
        let mut q = held(0.6, c);
        let (_, d) = drain(&mut q, Ecn::NotEct, 2000, 100);
        assert_eq!(
            (q.stats().classic_drops, q.stats().overload_drops),
            (d.len() as u64, 0)
        );

        // Without drop_overload p' stops at 1/k = 0.5: every L packet is marked (p_CL = 1)
        // and none dropped; ECT(0) is marked with p_C = 0.25, not dropped.
        let c = DualPi2Config {
            drop_overload: false,
            ..Default::default()
        };
        let mut q = held(0.9, c);
        assert_eq!(q.prob(), 0.5);
        let (out, d) = drain(&mut q, Ecn::Ect1, 2000, 100);
        assert!(d.is_empty() && out.len() == 1900);
        assert!(out.iter().all(|p| p.ecn() == Ecn::Ce));
        let mut q = held(0.9, c);
        let (out, d) = drain(&mut q, Ecn::Ect0, 2000, 100);
        assert!(d.is_empty());
        let marked = out.iter().filter(|p| p.ecn() == Ecn::Ce).count();
        // Binomial(1900, 0.25): mean 475, sd ≈ 19; ±114 is 6 sd.
        assert!((marked as i64 - 475).abs() < 114, "{marked}");
    }

    #[test]
    fn ts_fifo_serves_l_until_the_classic_head_waits_tshift_longer() {
        let mut d = Vec::new();
        // (C arrival, L arrival, now) in ms, tshift = 50 ms, and who goes first.
        for (c_at, l_at, now, l_first) in [
            (0, 30, 40, true),  // sojourns C 40, L 10: 10 + 50 ≥ 40
            (0, 50, 55, true),  // C 55, L 5: 5 + 50 = 55, a tie goes to L
            (0, 51, 56, false), // C 56, L 5: 5 + 50 < 56
            (0, 60, 70, false), // C 70, L 10: 60 < 70
        ] {
            let ts_fifo = DualPi2Config {
                scheduler: DualPi2Scheduler::TsFifo,
                ..Default::default()
            };
            let mut q = held(0.0, ts_fifo);
            assert!(q.enqueue(c_at * MS, pkt(Ecn::NotEct, 0, c_at * MS), &mut d));
            assert!(q.enqueue(l_at * MS, pkt(Ecn::Ect1, 1, l_at * MS), &mut d));
            let first = q.dequeue(now * MS, &mut d).unwrap().seq;
            let second = q.dequeue(now * MS, &mut d).unwrap().seq;
            assert_eq!((first, second), if l_first { (1, 0) } else { (0, 1) });
        }
        assert!(d.is_empty());
    }

    /// Queue labels ('L' or 'C') of the first `n` dequeues from a queue holding 30 L
    /// and 30 C packets of 1500 B, under WRR with weight `wc`.
    fn wrr_order(wc: u8, n: usize) -> String {
        let mut q = held(
            0.0,
            DualPi2Config {
                scheduler: DualPi2Scheduler::Wrr,
                c_protection: wc,
                ..Default::default()
            },
        );
        let mut d = Vec::new();
        for i in 0..30 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
            assert!(q.enqueue(0, pkt(Ecn::NotEct, 100 + i, 0), &mut d));
        }
        (0..n)
            .map(|_| {
                if q.dequeue(0, &mut d).unwrap().seq < 100 {
                    'L'
                } else {
                    'C'
                }
            })
            .collect()
    }

    #[test]
    fn wrr_gives_classic_its_weight() {
        // w_C = 10, w_L = 90, MTU 1500: credit starts at 1500·(10 − 90) = −120 000.
        // Each L packet adds 10·1500 = 15 000: −105 000, …, 0 after eight, and the
        // ninth (credit 0 ≤ 0) still goes to L, leaving +15 000. Then C goes, taking
        // 90·1500 = 135 000 off: −120 000 again. So: nine L, one C, repeated.
        assert_eq!(wrr_order(10, 20), "LLLLLLLLLCLLLLLLLLLC");
        // w_C = 50: credit starts at 0 → L (+75 000) → C (−75 000) → L …
        assert_eq!(wrr_order(50, 6), "LCLCLC");
        // w_C = 0: strict priority for L.
        assert_eq!(wrr_order(0, 31), format!("{}C", "L".repeat(30)));
    }

    #[test]
    fn the_limit_counts_both_queues() {
        let mut q = held(
            0.0,
            DualPi2Config {
                limit: 5,
                ..Default::default()
            },
        );
        let mut d = Vec::new();
        for i in 0..3 {
            assert!(q.enqueue(0, pkt(Ecn::Ect1, i, 0), &mut d));
        }
        for i in 3..5 {
            assert!(q.enqueue(0, pkt(Ecn::Ect0, i, 0), &mut d));
        }
        assert!(!q.enqueue(0, pkt(Ecn::Ect1, 5, 0), &mut d));
        assert!(!q.enqueue(0, pkt(Ecn::NotEct, 6, 0), &mut d));
        assert_eq!(d.iter().map(|p| p.seq).collect::<Vec<_>>(), [5, 6]);
        assert_eq!(
            (q.packets(), q.bytes(), q.stats().limit_drops),
            (5, 7500, 2)
        );
        assert_eq!((q.stats().l_enqueued, q.stats().c_enqueued), (3, 2));
        assert_eq!((q.l_waiting(), q.c_waiting()), (3, 2));
    }

    #[test]
    fn drop_early_decides_at_enqueue() {
        let c = DualPi2Config {
            drop_early: true,
            seed: 5,
            ..Default::default()
        };
        // Not-ECT at p_C = 0.16: arrivals are refused (none of the first two, under two
        // MTUs queued), and nothing is dropped at dequeue.
        let mut q = held(0.4, c);
        let mut d = Vec::new();
        let accepted = (0..1000)
            .filter(|&i| q.enqueue(0, pkt(Ecn::NotEct, i, 0), &mut d))
            .count();
        assert_eq!(accepted + d.len(), 1000);
        assert!(d.iter().all(|p| p.seq >= 2));
        // Binomial(998, 0.16): mean ≈ 160, sd ≈ 11.6; ±70 is 6 sd.
        assert!((d.len() as i64 - 160).abs() < 70, "{}", d.len());
        assert_eq!(q.stats().classic_drops, d.len() as u64);
        let refused = d.len();
        while q.dequeue(0, &mut d).is_some() {}
        assert_eq!(d.len(), refused);
        // ECT(0) is marked on arrival, visible while it waits.
        let mut q = held(0.4, c);
        for i in 0..200 {
            assert!(q.enqueue(0, pkt(Ecn::Ect0, i, 0), &mut d));
        }
        let mut ce = 0;
        q.visit(&mut |p| ce += (p.ecn() == Ecn::Ce) as u32);
        assert!(ce > 0 && ce as u64 == q.stats().classic_marks);
    }

    #[test]
    fn extreme_inputs_neither_panic_nor_hang() {
        let mut d = Vec::new();
        let mut q = DualPi2::new(&DualPi2Config {
            tupdate_ns: 1,
            k: 1e-9,
            drop_overload: false,
            ..Default::default()
        })
        .unwrap();
        // Arrival stamps in the future, zero lengths, huge gaps between events with a
        // 1 ns period, the end of time.
        let mut p = pkt(Ecn::NotEct, 0, Nanos::MAX);
        p.len = 0;
        assert!(q.enqueue(0, p, &mut d));
        assert!(q.enqueue(0, pkt(Ecn::Ect1, 1, 5), &mut d));
        assert!(q.enqueue(1_000_000_000_000, pkt(Ecn::Ect0, 2, 0), &mut d));
        assert!(q.dequeue(Nanos::MAX - 1, &mut d).is_some());
        assert!(q.enqueue(Nanos::MAX, pkt(Ecn::Ce, 3, 0), &mut d));
        while q.dequeue(Nanos::MAX, &mut d).is_some() {}
        assert!(q.dequeue(Nanos::MAX, &mut d).is_none());
        assert!((0.0..=1.0).contains(&q.prob()));
        assert_eq!(q.waiting(), 0);
        assert_eq!(q.bytes(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Arrive { ecn: u8, len: u32, dt: Nanos },
        Depart { dt: Nanos },
        SetProb(f64),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            6 => (0u8..4, 0u32..=1500, 0..3 * MS).prop_map(|(ecn, len, dt)| Op::Arrive { ecn, len, dt }),
            4 => (0..4 * MS).prop_map(|dt| Op::Depart { dt }),
            1 => (0.0f64..1.2).prop_map(Op::SetProb),
        ];
        prop::collection::vec(op, 0..400)
    }

    fn config() -> impl Strategy<Value = DualPi2Config> {
        (
            (1u64..60, 1..30 * MS, 0u32..4, 0..60 * MS),
            (any::<bool>(), any::<bool>(), any::<bool>(), 0u8..=100),
            (1u32..3000, any::<u64>()),
        )
            .prop_map(
                |(
                    (limit, tupdate_ns, min_qlen_step, tshift_ns),
                    (ovl, early, wrr, wc),
                    (mtu, seed),
                )| {
                    DualPi2Config {
                        limit,
                        tupdate_ns,
                        min_qlen_step,
                        tshift_ns,
                        drop_overload: ovl,
                        drop_early: early,
                        scheduler: if wrr {
                            DualPi2Scheduler::Wrr
                        } else {
                            DualPi2Scheduler::TsFifo
                        },
                        c_protection: wc,
                        mtu,
                        seed,
                        ..Default::default()
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn conservation_fifo_and_limit(cfg in config(), ops in ops()) {
            let mut q = DualPi2::new(&cfg).unwrap();
            let mut drops = Vec::new();
            let mut now: Nanos = 0;
            // Per offered packet (seq = index): its ECN on arrival, and how many times
            // it has been handed out or dropped.
            let mut ecn_in = Vec::new();
            let mut seen = Vec::new();
            let (mut last_l, mut last_c) = (None, None);
            let mut handed = 0usize;
            for op in ops {
                match op {
                    Op::Arrive { ecn, len, dt } => {
                        now += dt;
                        let seq = ecn_in.len() as u64;
                        let mut p = Packet::new(PacketKind::Data, 0, len, seq, now);
                        p.tos = ecn;
                        p.arrived = now;
                        ecn_in.push(p.ecn());
                        seen.push(0u8);
                        let before = drops.len();
                        let ok = q.enqueue(now, p, &mut drops);
                        prop_assert_eq!(ok, drops.len() == before);
                        prop_assert!(ok || (drops.len() == before + 1 && drops[before].seq == seq));
                    }
                    Op::Depart { dt } => {
                        now += dt;
                        if let Some(p) = q.dequeue(now, &mut drops) {
                            handed += 1;
                            seen[p.seq as usize] += 1;
                            // FIFO within each queue. Marking only turns ECN-capable
                            // packets CE.
                            let e = ecn_in[p.seq as usize];
                            prop_assert!(p.ecn() == e || (e != Ecn::NotEct && p.ecn() == Ecn::Ce));
                            let in_l = matches!(e, Ecn::Ect1 | Ecn::Ce);
                            let last = if in_l { &mut last_l } else { &mut last_c };
                            prop_assert!(last.is_none_or(|s| s < p.seq));
                            *last = Some(p.seq);
                        }
                    }
                    Op::SetProb(p) => q.set_prob(p),
                }
                prop_assert!(q.packets() as u64 <= cfg.limit);
                prop_assert_eq!(q.packets() as usize, q.waiting());
                let (mut n, mut b) = (0usize, 0u64);
                q.visit(&mut |p| { n += 1; b += p.len as u64; });
                prop_assert_eq!((n, b), (q.waiting(), q.bytes()));
                prop_assert!((0.0..=1.0).contains(&q.prob()));
                prop_assert!((0.0..=1.0).contains(&q.p_c()) && (0.0..=1.0).contains(&q.p_l()));
            }
            // Every packet offered was handed out, dropped or is still waiting, once.
            for p in &drops {
                seen[p.seq as usize] += 1;
            }
            q.visit(&mut |p| seen[p.seq as usize] += 1);
            prop_assert!(seen.iter().all(|&s| s == 1));
            let s = q.stats();
            prop_assert_eq!(s.drops() as usize, drops.len());
            prop_assert_eq!((s.l_enqueued + s.c_enqueued) as usize, handed + q.waiting()
                + drops.len() - s.limit_drops as usize
                - if cfg.drop_early { (s.classic_drops + s.overload_drops) as usize } else { 0 });
        }
    }
}
