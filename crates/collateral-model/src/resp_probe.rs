//! The responsiveness test's probes (draft-ietf-ippm-responsiveness -09, "Measuring
//! Responsiveness"): what a foreign probe sends, the times it yields, what waits ahead
//! of a self probe in the sender's socket buffer, and the draft's limits on probing.
//!
//! A *foreign* probe is a new connection each time: the TCP handshake (SYN, SYN-ACK:
//! `tcp_f`), the TLS 1.3 handshake, one round trip of ClientHello and the server's
//! flight (`tls_f`, per TLS round trip), then an HTTP/2 GET of a 1-byte object and
//! its response (`http_f`, from the GET until the whole response has arrived). The
//! simulator runs it over the web users' short-connection machinery: the handshake
//! and TLS messages are set-up packets, the response a TCP transfer from slow start.
//!
//! A *self* probe is a GET on a load connection: it waits behind the bytes the sending
//! side has written and not yet sent (the response behind the server's on a download,
//! the request behind the client's on an upload). The draft asks both ends to keep
//! that backlog to 5 ms of throughput (TCP_REPLENISH_TIME, or TCP_NOTSENT_LOWAT set to
//! throughput × 5 ms before each write): the wait is then 5 ms. Without it, Linux
//! autotunes the send buffer to about twice the congestion window, so about one window
//! waits unsent: one more round trip ([`SendBuffer`]).

use serde::{Deserialize, Serialize};

use crate::units::Nanos;

/// TLS round trips of a full TLS 1.3 handshake before the client may send (RFC 8446 §2).
pub const TLS13_ROUND_TRIPS: u32 = 1;
/// TCP payload of the ClientHello: 517 bytes, the size browsers pad theirs to
/// (RFC 7685's padding to past 512) [assumed].
pub const CLIENT_HELLO_BYTES: u32 = 517;
/// TCP payload of the server's flight (ServerHello to Finished, with a certificate):
/// one full segment here [assumed; a real chain is 2-5 kB, which the draft's estimate
/// of ~5000 B per foreign probe includes].
pub const SERVER_FLIGHT_BYTES: u32 = 1448;
/// TCP payload of the HTTP/2 GET (a HEADERS frame) [assumed].
pub const GET_BYTES: u32 = 100;
/// TCP payload of the response: HEADERS (~40 B) and a DATA frame (9 B header) with the
/// 1-byte object [assumed].
pub const RESPONSE_BYTES: u64 = 50;

/// The draft's MPS: at most 100 probes per second (of each kind: "the same amount of
/// probes should be sent on load-generating as well as on separate connections").
pub const MPS: f64 = 100.0;
/// The draft's PTC: the probes may use at most 5 % of the capacity.
pub const PTC: f64 = 0.05;
/// The draft's estimates of bytes exchanged per foreign and per self probe.
pub const FOREIGN_PROBE_BYTES: f64 = 5000.0;
pub const SELF_PROBE_BYTES: f64 = 1000.0;

/// One foreign probe's times, ns after its SYN left (`None`: not completed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ForeignProbe {
    pub sent_ns: Nanos,
    /// SYN to SYN-ACK (from the first SYN: retransmissions count, as in `connect()`).
    pub tcp_ns: Option<Nanos>,
    /// ClientHello to the server's last flight, per TLS round trip.
    pub tls_ns: Option<Nanos>,
    /// GET to the whole response.
    pub http_ns: Option<Nanos>,
}

/// What waits ahead of a self probe in the sending application's socket buffer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SendBuffer {
    /// Nothing: the probe's round trip is the connection's RTT (the draft's proxy when
    /// requests cannot be multiplexed: "the TCP stack estimated round-trip-time").
    Empty,
    /// TCP_NOTSENT_LOWAT at `replenish_ns` of throughput (the draft: 5 ms).
    Lowat { replenish_ns: Nanos },
    /// Linux's autotuned buffer without a low-water mark: about a window unsent.
    Autotuned,
}

/// The send buffers a scenario names: the draft's low-water mark (the default, left out
/// of a scenario's JSON), then the unit variants as serde spells them.
pub const SEND_BUFFER_NAMES: &[&str] = &["draft", "autotuned", "empty"];

impl SendBuffer {
    /// The draft's setting: 5 ms of throughput.
    pub const DRAFT: SendBuffer = SendBuffer::Lowat {
        replenish_ns: 5_000_000,
    };

    /// The self probe's wait in the buffer: the unsent bytes ahead of it drained at the
    /// connection's rate (a window per `rtt_ns`): `replenish_ns` with a low-water mark,
    /// about one RTT (a window's worth) when autotuned.
    pub fn wait_ns(self, rtt_ns: Nanos) -> Nanos {
        match self {
            SendBuffer::Empty => 0,
            SendBuffer::Lowat { replenish_ns } => replenish_ns,
            SendBuffer::Autotuned => rtt_ns,
        }
    }
}

/// Probes per second of each kind, against the draft's limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeRate {
    pub foreign_per_s: f64,
    pub self_per_s: f64,
    /// The bits per second the draft's estimates give them, as a share of `capacity`.
    pub capacity_share: f64,
}

impl ProbeRate {
    /// `foreign` and `self_` probes sent in `span_ns`, on a path of `capacity_bps`.
    pub fn of(foreign: u64, self_: u64, span_ns: Nanos, capacity_bps: f64) -> Self {
        let s = span_ns as f64 / 1e9;
        let (f, l) = (foreign as f64 / s, self_ as f64 / s);
        ProbeRate {
            foreign_per_s: f,
            self_per_s: l,
            capacity_share: (f * FOREIGN_PROBE_BYTES + l * SELF_PROBE_BYTES) * 8.0 / capacity_bps,
        }
    }

    /// Within MPS for each kind and within PTC of the capacity.
    pub fn within_limits(&self) -> bool {
        self.foreign_per_s <= MPS && self.self_per_s <= MPS && self.capacity_share <= PTC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5 foreign and 5 self probes a second (one pair every 200 ms) on 50 Mbit/s:
    /// (5 · 5000 + 5 · 1000) · 8 = 240 kbit/s = 0.48 %: within. On ADSL's 1.5 Mbit/s
    /// 16 %: beyond PTC. 101 a second of either kind is beyond MPS.
    #[test]
    fn probe_rates_against_mps_and_ptc() {
        let r = ProbeRate::of(100, 100, 20_000_000_000, 50e6);
        assert_eq!((r.foreign_per_s, r.self_per_s), (5.0, 5.0));
        assert!((r.capacity_share - 240e3 / 50e6).abs() < 1e-12);
        assert!(r.within_limits());
        assert!(!ProbeRate::of(100, 100, 20_000_000_000, 1.5e6).within_limits());
        assert!(
            (ProbeRate::of(100, 100, 20_000_000_000, 1.5e6).capacity_share - 0.16).abs() < 1e-12
        );
        assert!(!ProbeRate::of(0, 101, 1_000_000_000, 1e12).within_limits());
        assert!(ProbeRate::of(100, 100, 1_000_000_000, 1e12).within_limits());
    }

    #[test]
    fn a_self_probe_waits_behind_the_unsent_backlog() {
        assert_eq!(SendBuffer::Empty.wait_ns(40_000_000), 0);
        assert_eq!(SendBuffer::DRAFT.wait_ns(40_000_000), 5_000_000);
        assert_eq!(SendBuffer::Autotuned.wait_ns(40_000_000), 40_000_000);
    }
}
