//! What the mutations yield: the share of inputs the core accepts and the most common
//! refusals, over 2 000 pseudo-random inputs (`cargo run --release -p collateral-fuzz
//! --example stats`). A harness whose inputs all fail to parse tests nothing.

use std::collections::BTreeMap;

fn main() {
    let mut m: BTreeMap<String, u32> = BTreeMap::new();
    let t = std::time::Instant::now();
    let mut seed: u64 = 1;
    let n = 2000;
    for _ in 0..n {
        let data: Vec<u8> = (0..256)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        let k = match collateral_fuzz::run(&data) {
            Ok(()) => "(accepted and simulated)".to_string(),
            Err(e) => e.chars().take(70).collect(),
        };
        *m.entry(k).or_default() += 1;
    }
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    for (k, c) in v.iter().take(25) {
        println!("{c:5}  {k}");
    }
    println!("{n} inputs in {:.2?}", t.elapsed());
}
