//! Flent's Realtime Response Under Load (RRUL) test as a built-in workload
//! (tohojo/flent `tests/rrul.conf`, `tests/rrul_be.conf`): four TCP downloads and four
//! uploads, marked CS0 (best effort), CS1 (background), CS5 and EF in `rrul` and all best
//! effort in `rrul_be`, beside round-trip probes that run the whole test: in `rrul`
//! UDP probes marked EF, CS1 and best effort plus an ICMP ping, in `rrul_be` three best
//! effort UDP probes plus the ping. Flent sends them every step (0.2 s by default;
//! irtt's `-i` is the step) and starts the TCP flows after a quiet delay (5 s), so the
//! first probes see the idle path. Flent also ends with 5 s of quiet, which nothing
//! scored here reads, so the load runs to the end of the trial.
//!
//! The workload is built from the scenario's own parts: the TCP flows are bulk flows
//! with a DSCP ([`crate::tcp::TcpConfig::tag`]); each probe is a pair of CBR flows
//! with the same schedule, a request up and a reply down, whose one-way delays add up
//! to the probe's round trip ([`crate::scores`]). (A real echo's reply leaves when the
//! request arrives, one upstream delay later; at 0.2 s spacing a queue moves little in
//! that time.) The bulk senders log one RTT sample per probe interval: the self probes
//! of the responsiveness draft, a request on a loaded connection.

use serde::{Deserialize, Serialize};

use crate::traffic::CbrConfig;
use crate::units::{Direction, Nanos};

/// DSCPs by name (RFC 4594): best effort, CS1 (background), CS5, EF.
const CS0: u8 = 0;
const CS1: u8 = 8;
const CS5: u8 = 40;
const EF: u8 = 46;

/// IP length of a UDP probe: irtt's packet without `-l` padding (its 60-byte header
/// with timestamps, [assumed]) plus 28 bytes of IP and UDP.
pub const UDP_PROBE_BYTES: u32 = 88;
/// IP length of an ICMP echo: ping's 56 data bytes, 8 of ICMP, 20 of IP.
pub const PING_BYTES: u32 = 84;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantNames)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum WorkloadKind {
    Rrul,
    RrulBe,
    /// The responsiveness test: its load ramp ([`crate::ramp`]), which holds its flows
    /// once the goodput saturates, its foreign probes (a new TCP and TLS connection
    /// each, [`crate::resp_probe`]) and RRUL-BE's UDP probes for the idle latency.
    Responsiveness,
}

/// A built-in workload and its timing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// Quiet before the TCP flows start: the probes sent in it give the idle latency.
    pub idle_ns: Nanos,
    /// Time after the load starts before probes count as loaded (the queues fill and
    /// slow start ends); later if the load saturates later (the responsiveness draft's
    /// criterion, [`crate::scores`]).
    pub settle_ns: Nanos,
    /// The probes' spacing (Flent's step) and the self probes' sampling interval.
    pub probe_interval_ns: Nanos,
    /// The responsiveness draft's interval for its saturation criterion: 1 s as in
    /// drafts -02 to -08 (and Apple's networkQuality); -09 proposes 5 s, which needs
    /// 35 s of load before a verdict.
    pub saturation_interval_ns: Nanos,
    /// The responsiveness test's self probes: what waits ahead of them in the sender's
    /// socket buffer ([`crate::resp_probe::SendBuffer`]; the draft's 5 ms low-water
    /// mark by default). RRUL's self probes are the bare RTT samples.
    pub send_buffer: crate::resp_probe::SendBuffer,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Rrul,
            idle_ns: 5_000_000_000,
            settle_ns: 5_000_000_000,
            probe_interval_ns: 200_000_000,
            saturation_interval_ns: 1_000_000_000,
            send_buffer: crate::resp_probe::SendBuffer::DRAFT,
        }
    }
}

impl Workload {
    /// The workload's TCP flows: (direction, DSCP, start). RRUL: four each way, all
    /// after the idle time; the responsiveness ramp: one more each way per saturation
    /// interval, up to sixteen, as planned (the simulator starts them only while the
    /// ramp adds: [`crate::ramp::Ramp`]).
    pub fn tcp_flows(&self) -> Vec<(Direction, u8, Nanos)> {
        let marks = match self.kind {
            WorkloadKind::Rrul => [CS0, CS1, CS5, EF],
            WorkloadKind::RrulBe => [CS0; 4],
            WorkloadKind::Responsiveness => {
                return crate::ramp::flows(self.idle_ns, self.saturation_interval_ns)
                    .into_iter()
                    .map(|(d, t)| (d, CS0, t))
                    .collect()
            }
        };
        [Direction::Down, Direction::Up]
            .into_iter()
            .flat_map(|d| marks.map(|tag| (d, tag, self.idle_ns)))
            .collect()
    }

    /// The round-trip probes: (DSCP, IP length) of each.
    pub fn probes(&self) -> [(u8, u32); 4] {
        match self.kind {
            WorkloadKind::Rrul => [
                (EF, UDP_PROBE_BYTES),
                (CS1, UDP_PROBE_BYTES),
                (CS0, UDP_PROBE_BYTES),
                (CS0, PING_BYTES),
            ],
            WorkloadKind::RrulBe | WorkloadKind::Responsiveness => [
                (CS0, UDP_PROBE_BYTES),
                (CS0, UDP_PROBE_BYTES),
                (CS0, UDP_PROBE_BYTES),
                (CS0, PING_BYTES),
            ],
        }
    }

    /// The probes as CBR flows, request (up) then reply (down) for each, all sent on
    /// the same schedule from 0, without jitter: the first `2 × 4` of the scenario's
    /// CBR flows. Probe `p` staggers its start by `p/4` of an interval so the four do
    /// not queue behind one another.
    pub fn cbr_flows(&self) -> Vec<CbrConfig> {
        let n = self.probes().len() as Nanos;
        self.probes()
            .iter()
            .enumerate()
            .flat_map(|(p, &(tag, bytes))| {
                [Direction::Up, Direction::Down].map(|direction| CbrConfig {
                    direction,
                    packet_bytes: bytes,
                    interval_ns: self.probe_interval_ns,
                    jitter_ns: 0,
                    start_ns: Some(self.probe_interval_ns * p as Nanos / n),
                    tag,
                    ..CbrConfig::default()
                })
            })
            .collect()
    }

    /// Checks the workload's timing and that the scenario holds its probes first
    /// among its CBR flows (as the Python front builds it), so the scores read the
    /// right flows.
    pub fn check(&self, cbr: &[CbrConfig], duration_ns: Nanos) -> Result<(), String> {
        if self.probe_interval_ns == 0 {
            return Err("workload.probe_interval_ns: must be positive".into());
        }
        if self.saturation_interval_ns == 0 {
            return Err("workload.saturation_interval_ns: must be positive".into());
        }
        if self.idle_ns.saturating_add(self.settle_ns) >= duration_ns {
            return Err(format!(
                "workload: the idle time ({} s) and the settling time ({} s) leave no loaded time in a {} s trial",
                self.idle_ns as f64 / 1e9,
                self.settle_ns as f64 / 1e9,
                duration_ns as f64 / 1e9
            ));
        }
        let want = self.cbr_flows();
        let same = |a: &CbrConfig, b: &CbrConfig| {
            (
                a.direction,
                a.packet_bytes,
                a.interval_ns,
                a.jitter_ns,
                a.start_ns,
                a.tag,
            ) == (
                b.direction,
                b.packet_bytes,
                b.interval_ns,
                b.jitter_ns,
                b.start_ns,
                b.tag,
            ) && a.app.is_none()
        };
        if cbr.len() < want.len() || !want.iter().zip(cbr).all(|(w, c)| same(w, c)) {
            return Err(format!(
                "workload: cbr[0..{}] must be the workload's probes (Workload::cbr_flows)",
                want.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrul_marks_and_probes_follow_flent() {
        let w = Workload::default();
        let marks = |w: &Workload| w.tcp_flows().iter().map(|f| f.1).collect::<Vec<_>>();
        assert_eq!(marks(&w), [0, 8, 40, 46, 0, 8, 40, 46]);
        assert!(w.tcp_flows().iter().all(|f| f.2 == w.idle_ns));
        assert_eq!(w.tcp_flows()[4].0, Direction::Up);
        let be = Workload {
            kind: WorkloadKind::RrulBe,
            ..w
        };
        assert_eq!(marks(&be), [0; 8]);
        let ramp = Workload {
            kind: WorkloadKind::Responsiveness,
            ..w
        };
        assert_eq!(ramp.tcp_flows().len(), 32);
        assert_eq!(ramp.tcp_flows()[15].2, 5_000_000_000 + 15 * 1_000_000_000);
        assert!(be.probes().iter().all(|p| p.0 == 0));
        let flows = w.cbr_flows();
        assert_eq!(flows.len(), 8);
        // EF request up and reply down, at the same instants.
        assert_eq!(
            (flows[0].direction, flows[1].direction),
            (Direction::Up, Direction::Down)
        );
        assert_eq!((flows[0].tag, flows[1].tag), (46, 46));
        assert_eq!(flows[0].start_ns, flows[1].start_ns);
        assert_eq!(flows[6].packet_bytes, PING_BYTES);
        assert_eq!(flows[6].start_ns, Some(150_000_000));
        w.check(&flows, 60_000_000_000).unwrap();
        assert!(w.check(&flows[1..], 60_000_000_000).is_err());
        assert!(w.check(&flows, 10_000_000_000).is_err());
    }
}
