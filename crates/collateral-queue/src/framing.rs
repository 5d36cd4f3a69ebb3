//! How many bytes a packet occupies on the bottleneck's wire: its IP length plus a
//! per-packet link-layer overhead, and for ATM (ADSL) the AAL5 padding to whole 48-byte
//! cell payloads, each cell sent as 53 bytes. Queues still count IP lengths; only the
//! serialisation time changes. Shared by the simulator's link and the emulator's router.

use serde::{Deserialize, Serialize};

/// Link-layer framing of a bottleneck direction (default: none, IP lengths on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Framing {
    /// Bytes added to every packet: encapsulation headers and, with `atm`, the 8-byte
    /// AAL5 trailer (e.g. 10 for PPPoA VC-MUX, 32 for PPPoE over LLC/SNAP; RFC 2684).
    pub overhead_bytes: u32,
    /// Carry the result in ATM cells: padded to a multiple of 48 bytes, 53 per cell.
    pub atm: bool,
}

impl Framing {
    /// Bytes on the wire for an IP packet of `len` bytes.
    #[inline]
    pub fn wire_bytes(&self, len: u32) -> u32 {
        let b = len + self.overhead_bytes;
        if self.atm {
            b.div_ceil(48) * 53
        } else {
            b
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atm_cells_by_hand() {
        let pppoa = Framing {
            overhead_bytes: 10,
            atm: true,
        };
        // 1500 + 10 = 1510 B → 32 cells (31·48 = 1488 < 1510 ≤ 1536) → 1696 B.
        assert_eq!(pppoa.wire_bytes(1500), 1696);
        // 186 + 10 = 196 → 5 cells → 265 B; 52 + 10 = 62 → 2 cells → 106 B.
        assert_eq!(pppoa.wire_bytes(186), 265);
        assert_eq!(pppoa.wire_bytes(52), 106);
        // Exactly 48: one cell.
        assert_eq!(pppoa.wire_bytes(38), 53);
        assert_eq!(Framing::default().wire_bytes(1500), 1500);
        let eth = Framing {
            overhead_bytes: 14,
            atm: false,
        };
        assert_eq!(eth.wire_bytes(1500), 1514);
    }
}
