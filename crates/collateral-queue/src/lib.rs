//! Queue disciplines for a bottleneck, written once against an abstract clock.
//!
//! Every method that needs the time takes `now` (nanoseconds) as an argument and no
//! discipline ever reads a system clock, so the discrete-event simulator (virtual time)
//! and the real-time emulator (monotonic clock) run exactly the same code.
//!
//! The shape follows Mahimahi's `AbstractPacketQueue`: a queue decides *which* packet
//! leaves and *which* is dropped; *when* a packet may leave is the link's business.

/// The occupancy methods of a discipline that keeps its packets in an inner drop-tail
/// FIFO named `fifo` (RED, FRED, CBT): one definition instead of a copy per discipline.
macro_rules! occupancy_of_inner_fifo {
    () => {
        fn bytes(&self) -> u64 {
            self.fifo.bytes()
        }

        fn packets(&self) -> u32 {
            self.fifo.packets()
        }

        fn waiting(&self) -> usize {
            self.fifo.waiting()
        }

        fn visit(&self, f: &mut dyn FnMut(&Packet)) {
            self.fifo.visit(f)
        }
    };
}

pub mod cake;
pub mod cbq;
pub mod cbt;
pub mod class;
pub mod codel;
pub mod config;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod framing;
pub mod fred;
pub mod packet;
pub mod pie;
pub mod red;
pub mod rng;

pub use cake::{Cake, CakeConfig};
pub use cbq::{Cbq, CbqConfig};
pub use cbt::{Cbt, CbtConfig, TcpAverage};
pub use class::{Classifier, PerClass, TrafficClass};
pub use codel::{Codel, CodelConfig};
pub use config::DisciplineConfig;
pub use droptail::{DropTail, FullRule};
pub use dualpi2::{DualPi2, DualPi2Config};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use framing::Framing;
pub use fred::{Fred, FredConfig};
pub use packet::{tcp_flags, Ecn, Packet, PacketKind};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};

/// Nanoseconds: instants since the start of a run, and durations.
pub type Nanos = u64;

/// A queue discipline.
///
/// Drops are reported by pushing the dropped packet into `drops` (a buffer the caller
/// owns and reuses, so the hot path does not allocate). An arrival that is refused is
/// pushed there too, so callers have one place to look.
pub trait Discipline {
    /// Offers `pkt` at `now`. Returns `true` if it was queued.
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool;

    /// Hands out the next packet to transmit at `now`, if any. Disciplines that drop at
    /// dequeue (CoDel, …) push those packets into `drops`.
    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet>;

    /// The packet last handed out by [`dequeue`](Self::dequeue) has finished serialising.
    /// Disciplines that count the packet in transmission as occupancy release it here.
    fn transmit_done(&mut self, _now: Nanos) {}

    /// For a discipline with a shaper of its own (CAKE): after `dequeue` returned `None`
    /// although packets wait, the earliest time at which it may hand one out. The link
    /// calls `dequeue` again then. `Nanos::MAX` for work-conserving disciplines.
    fn ready_at(&self) -> Nanos {
        Nanos::MAX
    }

    /// Occupancy in bytes (IP lengths), as the discipline counts it for its limit.
    fn bytes(&self) -> u64;

    /// Occupancy in packets, as the discipline counts it for its limit.
    fn packets(&self) -> u32;

    /// Number of packets waiting (never counting the one in transmission).
    fn waiting(&self) -> usize;

    /// Calls `f` on every waiting packet (for end-of-run accounting, not the hot path).
    fn visit(&self, f: &mut dyn FnMut(&Packet));
}

/// Static dispatch over the disciplines (no boxing, no allocation): the simulator's
/// inner loop calls through this enum.
///
/// The variants differ in size (a few hundred bytes for the class-based ones), which
/// is harmless: there is one queue per link direction, built once and never moved on
/// the hot path, and boxing the large variants would cost a pointer chase per packet.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum AnyQueue {
    DropTail(DropTail),
    Red(Red),
    Fred(Fred),
    Cbt(Cbt),
    Cbq(Cbq),
    Codel(Codel),
    FqCodel(FqCodel),
    Pie(Pie),
    DualPi2(DualPi2),
    Cake(Cake),
}

impl Discipline for AnyQueue {
    #[inline]
    fn enqueue(&mut self, now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool {
        match self {
            AnyQueue::DropTail(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Red(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Fred(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Cbt(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Cbq(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Codel(q) => q.enqueue(now, pkt, drops),
            AnyQueue::FqCodel(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Pie(q) => q.enqueue(now, pkt, drops),
            AnyQueue::DualPi2(q) => q.enqueue(now, pkt, drops),
            AnyQueue::Cake(q) => q.enqueue(now, pkt, drops),
        }
    }
    #[inline]
    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet> {
        match self {
            AnyQueue::DropTail(q) => q.dequeue(now, drops),
            AnyQueue::Red(q) => q.dequeue(now, drops),
            AnyQueue::Fred(q) => q.dequeue(now, drops),
            AnyQueue::Cbt(q) => q.dequeue(now, drops),
            AnyQueue::Cbq(q) => q.dequeue(now, drops),
            AnyQueue::Codel(q) => q.dequeue(now, drops),
            AnyQueue::FqCodel(q) => q.dequeue(now, drops),
            AnyQueue::Pie(q) => q.dequeue(now, drops),
            AnyQueue::DualPi2(q) => q.dequeue(now, drops),
            AnyQueue::Cake(q) => q.dequeue(now, drops),
        }
    }
    #[inline]
    fn transmit_done(&mut self, now: Nanos) {
        match self {
            AnyQueue::DropTail(q) => q.transmit_done(now),
            AnyQueue::Red(q) => q.transmit_done(now),
            AnyQueue::Fred(q) => q.transmit_done(now),
            AnyQueue::Cbt(q) => q.transmit_done(now),
            AnyQueue::Cbq(q) => q.transmit_done(now),
            AnyQueue::Codel(q) => q.transmit_done(now),
            AnyQueue::FqCodel(q) => q.transmit_done(now),
            AnyQueue::Pie(q) => q.transmit_done(now),
            AnyQueue::DualPi2(q) => q.transmit_done(now),
            AnyQueue::Cake(q) => q.transmit_done(now),
        }
    }
    #[inline]
    fn ready_at(&self) -> Nanos {
        match self {
            AnyQueue::DropTail(q) => q.ready_at(),
            AnyQueue::Red(q) => q.ready_at(),
            AnyQueue::Fred(q) => q.ready_at(),
            AnyQueue::Cbt(q) => q.ready_at(),
            AnyQueue::Cbq(q) => q.ready_at(),
            AnyQueue::Codel(q) => q.ready_at(),
            AnyQueue::FqCodel(q) => q.ready_at(),
            AnyQueue::Pie(q) => q.ready_at(),
            AnyQueue::DualPi2(q) => q.ready_at(),
            AnyQueue::Cake(q) => q.ready_at(),
        }
    }
    #[inline]
    fn bytes(&self) -> u64 {
        match self {
            AnyQueue::DropTail(q) => q.bytes(),
            AnyQueue::Red(q) => q.bytes(),
            AnyQueue::Fred(q) => q.bytes(),
            AnyQueue::Cbt(q) => q.bytes(),
            AnyQueue::Cbq(q) => q.bytes(),
            AnyQueue::Codel(q) => q.bytes(),
            AnyQueue::FqCodel(q) => q.bytes(),
            AnyQueue::Pie(q) => q.bytes(),
            AnyQueue::DualPi2(q) => q.bytes(),
            AnyQueue::Cake(q) => q.bytes(),
        }
    }
    #[inline]
    fn packets(&self) -> u32 {
        match self {
            AnyQueue::DropTail(q) => q.packets(),
            AnyQueue::Red(q) => q.packets(),
            AnyQueue::Fred(q) => q.packets(),
            AnyQueue::Cbt(q) => q.packets(),
            AnyQueue::Cbq(q) => q.packets(),
            AnyQueue::Codel(q) => q.packets(),
            AnyQueue::FqCodel(q) => q.packets(),
            AnyQueue::Pie(q) => q.packets(),
            AnyQueue::DualPi2(q) => q.packets(),
            AnyQueue::Cake(q) => q.packets(),
        }
    }
    #[inline]
    fn waiting(&self) -> usize {
        match self {
            AnyQueue::DropTail(q) => q.waiting(),
            AnyQueue::Red(q) => q.waiting(),
            AnyQueue::Fred(q) => q.waiting(),
            AnyQueue::Cbt(q) => q.waiting(),
            AnyQueue::Cbq(q) => q.waiting(),
            AnyQueue::Codel(q) => q.waiting(),
            AnyQueue::FqCodel(q) => q.waiting(),
            AnyQueue::Pie(q) => q.waiting(),
            AnyQueue::DualPi2(q) => q.waiting(),
            AnyQueue::Cake(q) => q.waiting(),
        }
    }
    fn visit(&self, f: &mut dyn FnMut(&Packet)) {
        match self {
            AnyQueue::DropTail(q) => q.visit(f),
            AnyQueue::Red(q) => q.visit(f),
            AnyQueue::Fred(q) => q.visit(f),
            AnyQueue::Cbt(q) => q.visit(f),
            AnyQueue::Cbq(q) => q.visit(f),
            AnyQueue::Codel(q) => q.visit(f),
            AnyQueue::FqCodel(q) => q.visit(f),
            AnyQueue::Pie(q) => q.visit(f),
            AnyQueue::DualPi2(q) => q.visit(f),
            AnyQueue::Cake(q) => q.visit(f),
        }
    }
}
