//! Prints the scenario JSON a fuzz input (e.g. a libFuzzer artifact) stands for:
//! `cargo run -p collateral-fuzz --example show -- FILE`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: show FILE");
        std::process::exit(2);
    };
    match std::fs::read(&path) {
        Ok(data) => {
            println!("{}", collateral_fuzz::scenario_json(&data));
            println!("-> {:?}", collateral_fuzz::run(&data));
        }
        Err(e) => {
            eprintln!("show: {path}: {e}");
            std::process::exit(2);
        }
    }
}
