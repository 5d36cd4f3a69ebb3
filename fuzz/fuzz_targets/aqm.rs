//! libFuzzer target: any input is an edit of one discipline's configuration (see
//! collateral-fuzz's `run_aqm`); the core must refuse it or build and run it, never
//! panic. (The key-path property is checked by `tests/fuzz.rs`.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = collateral_fuzz::run_aqm(data);
});
