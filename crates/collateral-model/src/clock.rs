//! The rate clock of a bottleneck direction: when a transmission that starts at a given
//! time ends. A constant line rate ([`Rate`]) or a packet-delivery trace
//! ([`DeliveryTrace`], Mahimahi's format) or a DOCSIS upstream's grants
//! ([`crate::docsis`]); both clocks — the simulator's virtual time
//! and the testbed router's real time — ask the same [`RateClock`].

use serde::{Deserialize, Serialize};

use crate::rate::Rate;
use crate::units::{Nanos, NEVER};

/// Bytes one delivery opportunity carries: Mahimahi's `PACKET_SIZE`, the largest TUN
/// payload (a 1500-byte MTU plus 4 bytes), so one opportunity per millisecond is
/// 12.032 Mbit/s.
pub const OPPORTUNITY_BYTES: u32 = 1504;
/// What Mahimahi's link charges a packet beyond its IP length: the 4-byte packet
/// information its TUN device prepends (opened without `IFF_NO_PI`), counted in the
/// bytes a delivery opportunity carries (`QueuedPacket::bytes_to_transmit` is the TUN
/// read's size). So a 1500-byte packet fills one opportunity exactly and a 52-byte ACK
/// takes 56 bytes of one.
pub const TUN_HEADER_BYTES: u32 = 4;
/// The most opportunities a trace may list (a cellular trace of Mahimahi's runs to a
/// few hundred thousand lines).
pub const MAX_TRACE_LINES: usize = 10_000_000;
const MS: Nanos = 1_000_000;

/// A packet-delivery trace as Mahimahi's `mm-link` reads it (its `LinkQueue`): each
/// entry is a millisecond, counted from the start of the run, at which the link may
/// deliver up to [`OPPORTUNITY_BYTES`]; an entry repeated gives several opportunities in
/// that millisecond. The entries never decrease and the last is positive: it is the
/// period after which the trace repeats (unless `once`), the first opportunity of the
/// next round falling at that period plus the first entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeliveryTrace {
    pub ms: Vec<u64>,
    /// Stop at the end of the trace instead of repeating it: the link then delivers
    /// nothing more (Mahimahi without `repeat` ends the run there).
    #[serde(default)]
    pub once: bool,
}

impl DeliveryTrace {
    /// Reads Mahimahi's text format: one whole number of milliseconds per line. An
    /// error names the line. A leading byte-order mark (a Windows editor's UTF-8) is
    /// not part of the first line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() {
                return Err(format!(
                    "line {}: empty; one millisecond count per line",
                    i + 1
                ));
            }
            let v: u64 = t.parse().map_err(|_| {
                format!(
                    "line {}: {t:?} is not a whole number of milliseconds",
                    i + 1
                )
            })?;
            ms.push(v);
        }
        let trace = DeliveryTrace { ms, once: false };
        trace
            .validate()
            .map_err(|e| e.strip_prefix("ms: ").unwrap_or(&e).to_string())?;
        Ok(trace)
    }

    pub fn validate(&self) -> Result<(), String> {
        let Some(&last) = self.ms.last() else {
            return Err("ms: an empty trace; give at least one delivery time".into());
        };
        if self.ms.len() > MAX_TRACE_LINES {
            return Err(format!(
                "ms: {} delivery times, above the limit of {MAX_TRACE_LINES}",
                self.ms.len()
            ));
        }
        if let Some(i) = self.ms.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!(
                "ms: line {} ({}) is before line {} ({}); times never decrease",
                i + 2,
                self.ms[i + 1],
                i + 1,
                self.ms[i]
            ));
        }
        if last == 0 {
            return Err("ms: the trace must last a positive time (its last line is 0)".into());
        }
        if last > crate::limits::MAX_TIME_NS / MS {
            return Err(format!(
                "ms: {last} ms is beyond the longest time a trial can hold"
            ));
        }
        Ok(())
    }

    /// The mean rate: the opportunities' bytes over the period.
    pub fn mean_bps(&self) -> u64 {
        let period_ms = self.ms.last().copied().unwrap_or(0).max(1);
        (self.ms.len() as u64 * OPPORTUNITY_BYTES as u64 * 8 * 1000).div_ceil(period_ms)
    }
}

/// A [`DeliveryTrace`] being used: which opportunity comes next, and what is left of
/// the last one used.
///
/// A packet may use an opportunity later than its arrival (Mahimahi stamps an arrival
/// after using the opportunities due by then), or, when it was queued behind the
/// packet that ended at an opportunity, what that packet left of it. A packet longer
/// than what is left spans several opportunities; bytes nobody is queued for are lost.
#[derive(Debug, Clone)]
pub struct TraceClock {
    /// Each opportunity's time within the period, in ns.
    at: Vec<Nanos>,
    period: Nanos,
    once: bool,
    /// Index of the next unused opportunity, counted over the repeats.
    next: u64,
    /// Bytes left of the last opportunity used, and its time.
    left: u32,
    left_at: Nanos,
}

impl TraceClock {
    pub fn new(trace: &DeliveryTrace) -> Self {
        TraceClock {
            at: trace.ms.iter().map(|&m| m * MS).collect(),
            period: trace.ms.last().copied().unwrap_or(1).max(1) * MS,
            once: trace.once,
            next: 0,
            left: 0,
            left_at: NEVER,
        }
    }

    /// The time of opportunity `i` (counted over the repeats); [`NEVER`] past the end
    /// of a trace played once.
    #[inline]
    fn time(&self, i: u64) -> Nanos {
        let n = self.at.len() as u64;
        let round = i / n;
        if self.once && round > 0 {
            return NEVER;
        }
        round
            .saturating_mul(self.period)
            .saturating_add(self.at[(i % n) as usize])
    }

    /// The first opportunity after `t`, at or after `from`.
    fn first_after(&self, t: Nanos, from: u64) -> u64 {
        if self.time(from) > t {
            return from;
        }
        let n = self.at.len() as u64;
        let round = t / self.period;
        let within = t - round * self.period;
        // `within` < period = the last entry: some entry of this round is later.
        let k = self.at.partition_point(|&a| a <= within) as u64;
        (round * n + k).max(from)
    }

    /// When a transmission of `len` bytes (the TUN header added: [`TUN_HEADER_BYTES`])
    /// starting at `start` ends: at the opportunity that carries its last byte. `queued`:
    /// the packet was waiting when the previous one ended at `start` (it may use what
    /// that one left of the opportunity).
    pub fn end(&mut self, start: Nanos, len: u32, queued: bool) -> Nanos {
        let mut need = len.saturating_add(TUN_HEADER_BYTES);
        if queued && self.left > 0 && self.left_at == start {
            if need <= self.left {
                self.left -= need;
                return start;
            }
            need -= self.left;
        }
        self.left = 0;
        self.next = self.first_after(start, self.next);
        loop {
            let t = self.time(self.next);
            if t == NEVER {
                return NEVER;
            }
            self.next += 1;
            if need <= OPPORTUNITY_BYTES {
                self.left = OPPORTUNITY_BYTES - need;
                self.left_at = t;
                return t;
            }
            need -= OPPORTUNITY_BYTES;
        }
    }

    /// The earliest a packet of `len` bytes arriving at `at` can end, whatever is
    /// queued: a lower bound for the simulator's next-delivery bound. Sharing what a
    /// packet left of an opportunity ends a packet no sooner than a fresh start at the
    /// first opportunity after `at` would: `L` bytes left (< 1504) save at most one of
    /// the ⌈len/1504⌉ opportunities, and that one is not earlier than the first.
    pub fn earliest_end(&self, at: Nanos, len: u32) -> Nanos {
        let opps = len
            .saturating_add(TUN_HEADER_BYTES)
            .div_ceil(OPPORTUNITY_BYTES)
            .max(1) as u64;
        // The opportunity last used may still carry it, when something is left of it.
        let from = self.next - (self.left > 0) as u64;
        self.time(self.first_after(at, from) + opps - 1)
    }
}

/// A direction's rate clock.
#[derive(Debug, Clone)]
pub enum RateClock {
    Constant(Rate),
    Trace(Box<TraceClock>),
    Docsis(Box<crate::docsis::DocsisClock>),
    /// A rate in steps: outages, a satellite link's intervals.
    Schedule(Box<crate::schedule::RateSchedule>),
}

impl RateClock {
    /// When a transmission of `len` wire bytes starting at `start` ends (see
    /// [`TraceClock::end`] for `queued`); `backlog`: the wire bytes waiting behind it
    /// (what a DOCSIS modem requests).
    #[inline]
    pub fn end(&mut self, start: Nanos, len: u32, queued: bool, backlog: u64) -> Nanos {
        match self {
            RateClock::Constant(r) => start + r.ser(len),
            RateClock::Trace(t) => t.end(start, len, queued),
            RateClock::Docsis(d) => d.end(start, len, backlog),
            RateClock::Schedule(s) => s.end(start, len),
        }
    }

    /// A lower bound on when a packet of `len` wire bytes arriving at `at` ends.
    #[inline]
    pub fn earliest_end(&self, at: Nanos, len: u32) -> Nanos {
        match self {
            RateClock::Constant(r) => at + r.ser(len),
            RateClock::Trace(t) => t.earliest_end(at, len),
            RateClock::Docsis(d) => d.earliest_end(at, len),
            RateClock::Schedule(s) => s.earliest_end(at, len),
        }
    }

    /// A lower bound on when a packet of `len` wire bytes queued behind one that ends
    /// at `end` ends: a trace's next packet may share the same opportunity.
    #[inline]
    pub fn after(&self, end: Nanos, len: u32) -> Nanos {
        match self {
            RateClock::Constant(r) => end + r.ser(len),
            RateClock::Trace(_) => end,
            RateClock::Docsis(d) => d.after(end, len),
            RateClock::Schedule(s) => s.earliest_end(end, len),
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, RateClock::Constant(_))
    }

    /// Whether `end` reads its `backlog` (a DOCSIS modem's request).
    pub fn is_docsis(&self) -> bool {
        matches!(self, RateClock::Docsis(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(ms: &[u64]) -> TraceClock {
        TraceClock::new(&DeliveryTrace {
            ms: ms.to_vec(),
            once: false,
        })
    }

    #[test]
    fn one_line_one_is_an_opportunity_every_millisecond() {
        let t = DeliveryTrace::parse("1\n").unwrap();
        // 1504 B per ms = 1504 · 8 · 1000 bit/s.
        assert_eq!(t.mean_bps(), 12_032_000);
        let mut c = TraceClock::new(&t);
        // A full packet (1500 + 4 B of TUN header) arriving at 0 fills the first
        // opportunity, 1 ms, exactly; the next, queued behind it, takes the one at 2 ms.
        assert_eq!(c.end(0, 1500, false), MS);
        assert_eq!(c.end(MS, 1500, true), 2 * MS);
        // 1501 B (1505 with the header) take 1504 B at 3 ms and 1 B at 4 ms; a packet
        // queued behind them has the 1503 B left at 4 ms.
        assert_eq!(c.end(2 * MS + 1, 1501, false), 4 * MS);
        assert_eq!(c.end(4 * MS, 1499, true), 4 * MS);
        // An arrival exactly at an opportunity cannot use it (Mahimahi uses the
        // opportunities due by an arrival's timestamp before queueing it).
        assert_eq!(c.end(5 * MS, 100, false), 6 * MS);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_leftovers_are_not_kept() {
        let mut c = clock(&[1]);
        // Four 372-byte packets queued together fill one opportunity exactly (4 · (372 +
        // 4) = 1504); the fifth needs the next.
        assert_eq!(c.end(0, 372, false), MS);
        for _ in 0..3 {
            assert_eq!(c.end(MS, 372, true), MS);
        }
        assert_eq!(c.end(MS, 372, true), 2 * MS);
        // 1128 bytes were left at 2 ms; a packet arriving later cannot use them.
        assert_eq!(c.end(2 * MS + 1, 100, false), 3 * MS);
        // Nor can one that was not queued when the opportunity came.
        assert_eq!(c.end(3 * MS, 100, false), 4 * MS);
    }

    #[test]
    fn a_long_packet_spans_opportunities() {
        let mut c = clock(&[1]);
        // 4000 + 4 B = 1504 + 1504 + 996: the third opportunity, with 508 B left.
        assert_eq!(c.end(0, 4000, false), 3 * MS);
        assert_eq!(c.end(3 * MS, 504, true), 3 * MS);
        assert_eq!(c.end(3 * MS, 1, true), 4 * MS);
    }

    #[test]
    fn the_trace_repeats_after_its_last_line_as_mahimahi_wraps_it() {
        // Lines 0, 0, 3, 5: opportunities at 0, 0, 3, 5 ms, then the period 5 ms is
        // added: 5, 5, 8, 10, then 10, 10, 13, 15 ...
        let c = clock(&[0, 0, 3, 5]);
        let times: Vec<Nanos> = (0..10).map(|i| c.time(i) / MS).collect();
        assert_eq!(times, [0, 0, 3, 5, 5, 5, 8, 10, 10, 10]);
        // Mean rate: 4 opportunities per 5 ms.
        assert_eq!(
            DeliveryTrace {
                ms: vec![0, 0, 3, 5],
                once: false
            }
            .mean_bps(),
            9_625_600
        );
        // The first opportunity after 5.5 ms is the one at 8 ms; after 5 ms too.
        assert_eq!(c.time(c.first_after(5 * MS + MS / 2, 0)) / MS, 8);
        assert_eq!(c.time(c.first_after(5 * MS, 0)) / MS, 8);
        // Far ahead: the round is found without stepping through the rounds.
        assert_eq!(c.time(c.first_after(1_000_001 * MS, 0)) / MS, 1_000_003);
    }

    #[test]
    fn a_trace_played_once_stops_delivering() {
        let mut c = TraceClock::new(&DeliveryTrace {
            ms: vec![1, 2],
            once: true,
        });
        assert_eq!(c.end(0, 1500, false), MS);
        assert_eq!(c.end(MS, 1500, true), 2 * MS);
        assert_eq!(c.end(2 * MS, 1500, true), NEVER);
    }

    #[test]
    fn earliest_end_never_exceeds_the_end() {
        let mut c = clock(&[1, 1, 2, 7]);
        let mut t = 0;
        for (k, len) in [40u32, 1500, 3000, 52, 1504, 1505, 200, 9000]
            .iter()
            .enumerate()
        {
            let start = t + (k as u64 % 3) * MS / 3;
            let lower = c.earliest_end(start, *len);
            let end = c.end(start, *len, k % 2 == 1);
            assert!(lower <= end, "{len} B at {start}: {lower} > {end}");
            t = end;
        }
    }

    #[test]
    fn bad_traces_are_refused_naming_the_line() {
        assert!(DeliveryTrace::parse("")
            .unwrap_err()
            .contains("empty trace"));
        assert!(DeliveryTrace::parse("1\n\n2\n")
            .unwrap_err()
            .starts_with("line 2: empty"));
        assert!(DeliveryTrace::parse("1\nx\n")
            .unwrap_err()
            .starts_with("line 2: \"x\""));
        assert!(DeliveryTrace::parse("5\n3\n")
            .unwrap_err()
            .contains("line 2 (3) is before"));
        assert!(DeliveryTrace::parse("0\n0\n")
            .unwrap_err()
            .contains("positive time"));
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        let t = DeliveryTrace::parse("\u{feff}1\n2\n").unwrap();
        assert_eq!(t.ms, [1, 2]);
        // Anywhere else it is a bad line.
        assert!(DeliveryTrace::parse("1\n\u{feff}2\n")
            .unwrap_err()
            .starts_with("line 2:"));
    }
}
