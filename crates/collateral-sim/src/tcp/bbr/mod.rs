//! BBR v1 congestion control as in Linux (`net/ipv4/tcp_bbr.c`). First its windowed
//! max/min filter (Linux `lib/win_minmax.c`); the state machine follows.

pub mod minmax;
