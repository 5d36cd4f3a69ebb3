//! libFuzzer target: any input is an edit of a real scenario (see collateral-fuzz); the
//! core must answer Ok or Err. Panics (overflow checks and debug assertions are on in
//! cargo-fuzz builds), aborts and allocations above `-malloc_limit_mb` are findings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = collateral_fuzz::run(data);
});
