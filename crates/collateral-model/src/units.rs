//! The vocabulary every other module shares and that depends on nothing: time in integer
//! nanoseconds, the "no time" sentinel, and the two directions of the dumbbell. It is a
//! leaf so that the scenario, the TCP configuration, the bottleneck and the simulator's
//! event loop can all name these without importing one another.

pub use collateral_queue::Nanos;

/// One microsecond, millisecond and second in nanoseconds.
pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const S: Nanos = 1_000_000_000;

/// A time that never comes: a deadline not set, an event not pending.
pub const NEVER: Nanos = Nanos::MAX;

/// Which way a flow's data goes across the dumbbell.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    strum::VariantNames,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Direction {
    /// From the left hosts (A, B: the Internet side) to the right (C, D: the home).
    #[default]
    Down,
    Up,
}

impl Direction {
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn reverse(self) -> Direction {
        match self {
            Direction::Down => Direction::Up,
            Direction::Up => Direction::Down,
        }
    }
    /// The name JSON, TOML and Python use (serde's and strum's spelling).
    pub fn name(self) -> &'static str {
        self.into()
    }
}
