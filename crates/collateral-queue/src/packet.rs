//! The packet as queues and links see it: plain data, `Copy`, no payload.

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

/// A packet in flight. Sizes are IP lengths: what queues count and links serialise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// IP length in bytes.
    pub len: u32,
    /// Flow identifier (index into the scenario's flows).
    pub flow: u32,
    pub kind: PacketKind,
    /// DiffServ/tag byte for class-based disciplines; 0 when untagged.
    pub tag: u8,
    /// Which of the two hosts on the far side of the dumbbell it is for (0 or 1).
    pub dst: u8,
    /// Generation of the connection that sent it, for flows whose slot is reused by
    /// successive short connections: a late packet of an earlier connection is
    /// recognised and discarded. Zero for long-lived flows. Fills the byte of padding
    /// after `dst`.
    pub conn: u8,
    /// On a simulated TCP ACK with a SACK option: the handle under which the flow's
    /// receiver keeps the option's blocks (they travel beside the packet, not in it; `len`
    /// counts the option's bytes). Zero otherwise. Fits in padding: `Packet` stays 48
    /// bytes.
    pub sack: u32,
    /// Flow-specific number: the TCP segment number, the cumulative ACK, the CBR
    /// sequence number, or (in the emulator) a buffer handle.
    pub seq: u64,
    /// When the source sent it (for one-way delay).
    pub sent: Nanos,
    /// When it arrived at the queue; set by the link on arrival.
    pub arrived: Nanos,
    /// TCP timestamp echo (RFC 7323 TSecr) on ACKs: the send time of the segment
    /// the receiver is acknowledging, for RTT samples. Zero elsewhere.
    pub echo: Nanos,
}

impl Packet {
    /// A packet with only the fields every source sets; the rest zero.
    #[inline]
    pub fn new(kind: PacketKind, flow: u32, len: u32, seq: u64, sent: Nanos) -> Self {
        Packet {
            len,
            flow,
            kind,
            tag: 0,
            dst: 0,
            conn: 0,
            sack: 0,
            seq,
            sent,
            arrived: 0,
            echo: 0,
        }
    }
}

// Every queue copies packets: the SACK handle must not make them bigger.
const _: () = assert!(std::mem::size_of::<Packet>() == 48);
