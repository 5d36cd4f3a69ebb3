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

/// Implements a trait for an enum of its implementations by forwarding every listed
/// method to the variant's own: `forward_to_variants!(Enum { A, B } &mut fn m(x: T) -> R;
/// ... & fn n() -> S; ...)`. The variants are named once, so a method listed here reaches
/// every implementation, and a new variant reaches every method. The impls that use it
/// deny `clippy::missing_trait_methods`, so a trait method left off the list (which
/// would silently run the trait's default instead of the variant's) fails the lint.
/// Used for [`AnyQueue`] here and for the simulator's `AnyCc`.
#[macro_export]
macro_rules! forward_to_variants {
    (
        $Enum:ident $variants:tt
        $(&mut fn $mm:ident($($ma:ident: $mt:ty),* $(,)?) $(-> $mr:ty)?;)*
        $(&fn $rm:ident($($ra:ident: $rt:ty),* $(,)?) $(-> $rr:ty)?;)*
    ) => {
        $($crate::forward_to_variants!(
            @mut $Enum $variants $mm($($ma: $mt),*) ($($ma),*) $(-> $mr)?
        );)*
        $($crate::forward_to_variants!(
            @ref $Enum $variants $rm($($ra: $rt),*) ($($ra),*) $(-> $rr)?
        );)*
    };
    (@mut $Enum:ident { $($V:ident),+ $(,)? } $m:ident($($a:ident: $t:ty),*) $call:tt
     $(-> $r:ty)?) => {
        #[inline]
        fn $m(&mut self, $($a: $t),*) $(-> $r)? {
            match self {
                $($Enum::$V(x) => x.$m $call,)+
            }
        }
    };
    (@ref $Enum:ident { $($V:ident),+ $(,)? } $m:ident($($a:ident: $t:ty),*) $call:tt
     $(-> $r:ty)?) => {
        #[inline]
        fn $m(&self, $($a: $t),*) $(-> $r)? {
            match self {
                $($Enum::$V(x) => x.$m $call,)+
            }
        }
    };
}

pub mod cake;
pub mod cbq;
pub mod cbt;
pub mod check;
pub mod class;
pub mod codel;
pub mod config;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod framing;
pub mod fred;
pub mod link_defaults;
pub mod packet;
pub mod pie;
pub mod red;
pub mod rng;

pub use cake::{Cake, CakeConfig};
pub use cbq::{Cbq, CbqConfig};
pub use cbt::{Cbt, CbtConfig, TcpAverage};
pub use class::{Classifier, PerClass, TrafficClass};
pub use codel::{Codel, CodelConfig};
pub use config::{Described, DisciplineConfig, HardLimit, KindInfo, LimitUnit};
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

#[deny(clippy::missing_trait_methods)]
impl Discipline for AnyQueue {
    forward_to_variants! {
        AnyQueue { DropTail, Red, Fred, Cbt, Cbq, Codel, FqCodel, Pie, DualPi2, Cake }
        &mut fn enqueue(now: Nanos, pkt: Packet, drops: &mut Vec<Packet>) -> bool;
        &mut fn dequeue(now: Nanos, drops: &mut Vec<Packet>) -> Option<Packet>;
        &mut fn transmit_done(now: Nanos);
        &fn ready_at() -> Nanos;
        &fn bytes() -> u64;
        &fn packets() -> u32;
        &fn waiting() -> usize;
        &fn visit(f: &mut dyn FnMut(&Packet));
    }
}
