//! The three traffic classes of the class-based disciplines (CBT, CBQ) and how packets
//! are sorted into them.
//!
//! Following Parris, Jeffay & Smith (MMCN '99): responsive traffic (TCP), *tagged*
//! UDP — necessarily unresponsive multimedia that has been marked (DSCP) or configured —
//! and all *other* UDP. Here TCP is `PacketKind::Data`/`Ack`/`Setup`; a `Cbr` packet is tagged
//! when its flow is listed in `tagged_flows`, or when its tag byte is in `tagged_tags`
//! (any non-zero tag when no list is given).

use serde::{Deserialize, Serialize};

use crate::{Packet, PacketKind};

/// A traffic class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrafficClass {
    Tcp = 0,
    Tagged = 1,
    Other = 2,
}

impl TrafficClass {
    pub const ALL: [TrafficClass; 3] =
        [TrafficClass::Tcp, TrafficClass::Tagged, TrafficClass::Other];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            TrafficClass::Tcp => "tcp",
            TrafficClass::Tagged => "tagged",
            TrafficClass::Other => "other",
        }
    }
}

/// One value per class, as configurations carry them:
/// `{"tcp": 0.74, "tagged": 0.14, "other": 0.12}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerClass<T> {
    pub tcp: T,
    pub tagged: T,
    pub other: T,
}

impl<T: Copy> PerClass<T> {
    pub fn get(&self, c: TrafficClass) -> T {
        match c {
            TrafficClass::Tcp => self.tcp,
            TrafficClass::Tagged => self.tagged,
            TrafficClass::Other => self.other,
        }
    }

    pub fn to_array(&self) -> [T; 3] {
        [self.tcp, self.tagged, self.other]
    }
}

/// Sorts packets into [`TrafficClass`]es without allocating.
#[derive(Debug, Clone)]
pub struct Classifier {
    /// Bit `d`: DSCP `d` marks a packet as tagged.
    tag_set: u64,
    /// Flows always tagged, sorted.
    flows: Vec<u32>,
}

impl Classifier {
    /// `tags`: the DSCPs that mark a UDP packet as tagged (`None`: any non-zero DSCP;
    /// values above 63 are not DSCPs and match nothing — configurations check them with
    /// [`check_dscps`]). `flows`: flows whose UDP packets are tagged whatever their DSCP.
    pub fn new(tags: Option<&[u8]>, flows: &[u32]) -> Self {
        let tag_set = match tags {
            None => !1,
            Some(list) => list
                .iter()
                .filter(|&&t| t < 64)
                .fold(0u64, |s, &t| s | 1 << t),
        };
        let mut flows = flows.to_vec();
        flows.sort_unstable();
        flows.dedup();
        Classifier { tag_set, flows }
    }

    #[inline]
    pub fn classify(&self, pkt: &Packet) -> TrafficClass {
        match pkt.kind {
            PacketKind::Data | PacketKind::Ack | PacketKind::Setup => TrafficClass::Tcp,
            PacketKind::Cbr => {
                if self.tag_set >> pkt.dscp() & 1 == 1
                    || self.flows.binary_search(&pkt.flow).is_ok()
                {
                    TrafficClass::Tagged
                } else {
                    TrafficClass::Other
                }
            }
        }
    }
}

/// Checks that every value of a `tagged_tags` list is a DSCP (0..=63).
pub fn check_dscps(what: &str, tags: Option<&[u8]>) -> Result<(), String> {
    match tags.and_then(|t| t.iter().find(|&&d| d > 63)) {
        Some(d) => Err(format!("{what}: {d} is not a DSCP (0..=63)")),
        None => Ok(()),
    }
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new(None, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(kind: PacketKind, flow: u32, tag: u8) -> Packet {
        let mut p = Packet::new(kind, flow, 100, 0, 0);
        p.set_dscp(tag);
        p
    }

    #[test]
    fn classes() {
        use TrafficClass::*;
        let c = Classifier::default();
        assert_eq!(c.classify(&p(PacketKind::Data, 0, 0)), Tcp);
        assert_eq!(c.classify(&p(PacketKind::Ack, 0, 46)), Tcp);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 0)), Other);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 46)), Tagged);
        // Only EF (DSCP 46) counts; flow 7 is tagged regardless.
        let c = Classifier::new(Some(&[46]), &[7, 3, 7]);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 10)), Other);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 46)), Tagged);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 7, 0)), Tagged);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 3, 0)), Tagged);
        assert_eq!(c.classify(&p(PacketKind::Data, 7, 46)), Tcp);
        // Both ends of the DSCP range; the ECN bits do not change the class.
        let c = Classifier::new(Some(&[0, 63]), &[]);
        for t in [0u8, 63] {
            assert_eq!(c.classify(&p(PacketKind::Cbr, 0, t)), Tagged, "{t}");
        }
        for t in [1u8, 62] {
            assert_eq!(c.classify(&p(PacketKind::Cbr, 0, t)), Other, "{t}");
        }
        let mut ce = p(PacketKind::Cbr, 0, 63);
        ce.set_ecn(crate::Ecn::Ce);
        assert_eq!(c.classify(&ce), Tagged);
        assert!(check_dscps("x", Some(&[46, 64])).is_err());
        assert!(check_dscps("x", Some(&[46, 63])).is_ok());
        // The default: every DSCP but 0.
        let c = Classifier::default();
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 1)), Tagged);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 63)), Tagged);
        // An empty list tags nothing by tag.
        let c = Classifier::new(Some(&[]), &[]);
        assert_eq!(c.classify(&p(PacketKind::Cbr, 0, 46)), Other);
    }
}
