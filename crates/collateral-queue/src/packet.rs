//! The packet as queues and links see it: plain data, `Copy`, no payload.

use serde::{Deserialize, Serialize};

use crate::Nanos;

/// What a packet is, for classification and accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// TCP segment carrying payload.
    Data = 0,
    /// TCP pure acknowledgement.
    Ack = 1,
    /// UDP datagram of a constant-bit-rate / real-time flow.
    Cbr = 2,
    /// TCP connection set-up and application requests of short (web) connections: SYN,
    /// SYN-ACK and the request segment; `seq` says which (see the simulator's `web`).
    Setup = 3,
}

/// The ECN field of the IP header (RFC 3168 §5): the two low bits of the TOS byte.
/// In JSON: `"not_ect"`, `"ect1"`, `"ect0"`, `"ce"`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::VariantNames,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable: an AQM must drop it to signal congestion.
    #[default]
    NotEct = 0b00,
    /// ECT(1): the L4S identifier (RFC 9331 §4).
    Ect1 = 0b01,
    /// ECT(0): a classic ECN-capable transport (RFC 3168).
    Ect0 = 0b10,
    /// Congestion Experienced: set by an AQM instead of dropping.
    Ce = 0b11,
}

/// TCP header flags the simulator's TCP uses (bit values of our own; RFC 3168 §6.1 and
/// AccECN's ACE counter, whose three bits are AE, CWR and ECE, AE the most significant).
pub mod tcp_flags {
    /// ECN-Echo: the receiver saw CE (classic ECN), or ACE bit 0 (AccECN).
    pub const ECE: u8 = 1;
    /// Congestion Window Reduced: the sender reacted to ECE; ACE bit 1 (AccECN).
    pub const CWR: u8 = 2;
    /// Accurate ECN: ACE bit 2.
    pub const AE: u8 = 4;
}

/// A packet in flight. Sizes are IP lengths: what queues count and links serialise.
///
/// `repr(C)` in this order: the one-byte fields, `kind` among them, sit inside the
/// last 16-byte word. Left to the compiler, `kind` (the niche of `Option<Packet>`) was
/// the last byte, and every `Option<Packet>` unwrapped on the hot path was copied as a
/// misaligned 16-byte word plus that byte, which the next 16-byte read of the packet
/// could not forward from (a stall `perf annotate` showed as the simulator's hottest
/// instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Packet {
    /// Flow-specific number: the TCP segment number, the cumulative ACK, the CBR
    /// sequence number. In the emulator: the TCP sequence number of data, the ACK
    /// number of a pure ACK (unwrapped to 64 bits per connection), the CBR sequence
    /// number.
    pub seq: u64,
    /// When the source sent it (for one-way delay); CAKE's ACK filter compares it as
    /// the TCP timestamp (TSval). In the emulator it is not a time: an arrival counter
    /// above 24 bits of frame-buffer handle, increasing in arrival order, so it orders a
    /// connection's ACKs as their TSvals would. Queues must not read it as a time.
    pub sent: Nanos,
    /// When it arrived at the queue; set by the link on arrival. What queues measure
    /// sojourn times from.
    pub arrived: Nanos,
    /// TCP timestamp echo (RFC 7323 TSecr) on ACKs: the send time of the segment
    /// the receiver is acknowledging, for RTT samples; CAKE's ACK filter compares it.
    /// Zero elsewhere. In the emulator the real TSecr, unwrapped.
    pub echo: Nanos,
    /// Flow identifier (index into the scenario's flows).
    pub flow: u32,
    /// On a simulated TCP ACK with a SACK option: the handle under which the flow's
    /// receiver keeps the option's blocks (they travel beside the packet, not in it; `len`
    /// counts the option's bytes). Zero otherwise. In the emulator 1 if the ACK carries
    /// a SACK option (only `!= 0` means anything).
    pub sack: u32,
    /// IP length in bytes (an IPv4 total length fits in 16 bits).
    pub len: u16,
    /// TCP flags ([`tcp_flags`]); zero on other packets.
    pub flags: u8,
    /// The IP TOS byte: DSCP in the high six bits, [`Ecn`] in the low two. Read it with
    /// [`dscp`](Self::dscp) and [`ecn`](Self::ecn).
    pub tos: u8,
    pub kind: PacketKind,
    /// Which of the two hosts on the far side of the dumbbell it is for (0 or 1).
    pub dst: u8,
    /// Which host sent it, for per-host fairness (CAKE's host isolation): the index of
    /// the sending host on its side of the dumbbell. In the emulator both come from the
    /// IP addresses: 198.18.0.1 and .2 are host 0 (TCP), .3 and .4 host 1 (CBR).
    pub src: u8,
    /// Generation of the connection that sent it, for flows whose slot is reused by
    /// successive short connections: a late packet of an earlier connection is
    /// recognised and discarded. Zero for long-lived flows.
    pub conn: u8,
}

impl Packet {
    /// A packet with only the fields every source sets; the rest zero. `len` above
    /// 65 535 is a caller's bug (the scenario bounds packet sizes).
    #[inline]
    pub fn new(kind: PacketKind, flow: u32, len: u32, seq: u64, sent: Nanos) -> Self {
        debug_assert!(len <= u16::MAX as u32, "packet of {len} bytes");
        Packet {
            len: len as u16,
            flags: 0,
            tos: 0,
            flow,
            kind,
            dst: 0,
            src: 0,
            conn: 0,
            sack: 0,
            seq,
            sent,
            arrived: 0,
            echo: 0,
        }
    }

    /// IP length in bytes, widened for arithmetic.
    #[inline]
    pub fn bytes(&self) -> u32 {
        self.len as u32
    }

    /// The DiffServ code point (0 when unmarked).
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.tos >> 2
    }

    #[inline]
    pub fn set_dscp(&mut self, dscp: u8) {
        self.tos = (dscp << 2) | (self.tos & 3);
    }

    #[inline]
    pub fn ecn(&self) -> Ecn {
        match self.tos & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    #[inline]
    pub fn set_ecn(&mut self, e: Ecn) {
        self.tos = (self.tos & !3) | e as u8;
    }

    /// ECT(0), ECT(1) or already CE: an AQM may mark it instead of dropping it.
    #[inline]
    pub fn ecn_capable(&self) -> bool {
        self.tos & 3 != 0
    }

    /// Marks Congestion Experienced if the packet is ECN-capable; returns whether it is
    /// (RFC 3168 §5: a not-ECT packet must be dropped instead).
    #[inline]
    pub fn mark_ce(&mut self) -> bool {
        if self.ecn_capable() {
            self.tos |= 3;
            true
        } else {
            false
        }
    }
}

// Every queue copies packets: the SACK handle must not make them bigger.
const _: () = assert!(std::mem::size_of::<Packet>() == 48);
