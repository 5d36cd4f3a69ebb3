//! Stamps the native module with a hash of the model's sources (the model, the simulator
//! and the queue disciplines), so results stored under one model version are never mixed with
//! another's: trial keys include `version()`, and any change to the model changes it.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut all = Vec::new();
    for c in [
        "collateral-model/src",
        "collateral-sim/src",
        "collateral-queue/src",
    ] {
        let d = root.join(c);
        println!("cargo:rerun-if-changed={}", d.display());
        files(&d, &mut all);
    }
    all.sort();
    // FNV-1a over relative paths and contents: stable across toolchains and machines.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in &all {
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/");
        for b in rel.bytes().chain(std::fs::read(p).unwrap_or_default()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=COLLATERAL_MODEL_HASH={:012x}", h >> 16);
    // How tools/build_native.sh built the module (`_native.build()`): its RUSTFLAGS carry
    // rustc's -Cprofile-generate (the training build) or -Cprofile-use (the optimised
    // one); a change of RUSTFLAGS builds everything again, this script included.
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let pgo = if flags.contains("profile-use=") {
        "use"
    } else if flags.contains("profile-generate") {
        "generate"
    } else {
        ""
    };
    println!("cargo:rustc-env=COLLATERAL_PGO={pgo}");
}
