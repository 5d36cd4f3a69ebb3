//! `collateral-emu`: the real-time half of collateral's testbed. Python's
//! `collateral.emulate` builds the namespaces and runs these subcommands inside them:
//!
//! ```text
//! collateral-emu router --left IF --right IF --down RATE,DELAY,QUEUE --up RATE,DELAY,QUEUE
//!                       [--l2-overhead B] [--framing-down B[:atm]] [--framing-up B[:atm]]
//!                       [--log FILE] [--duration-ns N]
//! collateral-emu cbr-send --src IP:PORT --dst IP:PORT --size B --interval-ns N
//!                         --jitter-ns N --seed S --start-delay-ns N --duration-ns N --out F
//!                         [--tos N]
//! collateral-emu cbr-recv --bind IP:PORT --duration-ns N --out F
//! collateral-emu tcp-send --src IP --dst IP:PORT --cc NAME --duration-ns N --poll-ns N --out F
//! collateral-emu tcp-recv --bind IP:PORT --duration-ns N --out F
//! collateral-emu train --src IP:PORT --dst IP:PORT --sizes 1500,186,... [--first-seq N]
//! ```
//! QUEUE is `RULE:LIMIT[:count]` with the simulator's rules (`ps`, `fb_strict`,
//! `fb_loose`), or an AQM's JSON as the simulator takes it (`{"kind": "red", ...}`);
//! RATE in bit/s, DELAY (one way) in ns.

mod endpoints;
mod net;
mod router;

use std::collections::HashMap;
use std::process::ExitCode;

struct Args(HashMap<String, String>);

impl Args {
    fn parse(v: &[String]) -> Result<Args, String> {
        let mut m = HashMap::new();
        let mut it = v.iter();
        while let Some(k) = it.next() {
            let k = k
                .strip_prefix("--")
                .ok_or_else(|| format!("unexpected argument {k:?}"))?;
            let val = it.next().ok_or_else(|| format!("--{k} needs a value"))?;
            m.insert(k.to_string(), val.clone());
        }
        Ok(Args(m))
    }
    fn s(&self, k: &str) -> Result<String, String> {
        self.0
            .get(k)
            .cloned()
            .ok_or_else(|| format!("--{k} is required"))
    }
    fn n(&self, k: &str) -> Result<u64, String> {
        self.s(k)?
            .parse()
            .map_err(|_| format!("--{k}: expected a non-negative integer"))
    }
    fn opt_n(&self, k: &str) -> Result<Option<u64>, String> {
        self.0
            .get(k)
            .map(|v| v.parse().map_err(|_| format!("--{k}: expected an integer")))
            .transpose()
    }
}

/// `OVERHEAD` or `OVERHEAD:atm` (bytes added per packet, ATM cells).
fn framing(spec: Option<&String>) -> Result<collateral_queue::Framing, String> {
    let Some(spec) = spec else {
        return Ok(Default::default());
    };
    let (n, atm) = match spec.split_once(':') {
        None => (spec.as_str(), false),
        Some((n, "atm")) => (n, true),
        Some(_) => return Err(format!("--framing {spec:?}: expected BYTES or BYTES:atm")),
    };
    let overhead_bytes = n
        .parse()
        .map_err(|_| format!("--framing {spec:?}: bad byte count"))?;
    Ok(collateral_queue::Framing {
        overhead_bytes,
        atm,
    })
}

fn dir(spec: &str, framing_spec: Option<&String>) -> Result<router::DirConfig, String> {
    let p: Vec<&str> = spec.splitn(3, ',').collect();
    let [rate, delay, queue] = p[..] else {
        return Err(format!("{spec:?}: expected RATE,DELAY,QUEUE"));
    };
    let rate_bps: u64 = rate
        .parse()
        .ok()
        .filter(|&r| r > 0)
        .ok_or(format!("{spec:?}: bad rate"))?;
    let delay_ns: u64 = delay.parse().map_err(|_| format!("{spec:?}: bad delay"))?;
    Ok(router::DirConfig {
        rate_bps,
        delay_ns,
        queue: router::parse_queue_spec(queue)?,
        framing: framing(framing_spec)?,
    })
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = argv.split_first() else {
        eprintln!(
            "usage: collateral-emu router|cbr-send|cbr-recv|tcp-send|tcp-recv --key value ..."
        );
        return ExitCode::from(2);
    };
    let run = || -> Result<(), String> {
        let a = Args::parse(rest)?;
        match cmd.as_str() {
            "router" => router::run(router::RouterConfig {
                left: a.s("left")?,
                right: a.s("right")?,
                dirs: [
                    dir(&a.s("down")?, a.0.get("framing-down"))?,
                    dir(&a.s("up")?, a.0.get("framing-up"))?,
                ],
                l2_overhead: a.opt_n("l2-overhead")?.unwrap_or(0) as u32,
                log: a.0.get("log").cloned(),
                duration_ns: a.opt_n("duration-ns")?,
            }),
            "cbr-send" => {
                router::install_signal_handlers();
                endpoints::cbr_send(endpoints::CbrSend {
                    src: a.s("src")?,
                    dst: a.s("dst")?,
                    size: a.n("size")? as usize,
                    interval_ns: a.n("interval-ns")?,
                    jitter_ns: a.n("jitter-ns")?,
                    seed: a.n("seed")?,
                    start_delay_ns: a.n("start-delay-ns")?,
                    duration_ns: a.n("duration-ns")?,
                    out: a.s("out")?,
                    tos: a.opt_n("tos")?.unwrap_or(0).min(255) as u8,
                })
            }
            "cbr-recv" => {
                router::install_signal_handlers();
                endpoints::cbr_recv(&a.s("bind")?, a.n("duration-ns")?, &a.s("out")?)
            }
            "tcp-send" => {
                router::install_signal_handlers();
                endpoints::tcp_send(
                    &a.s("src")?,
                    &a.s("dst")?,
                    &a.s("cc")?,
                    a.n("duration-ns")?,
                    a.n("poll-ns")?,
                    &a.s("out")?,
                )
            }
            "tcp-recv" => {
                router::install_signal_handlers();
                endpoints::tcp_recv(&a.s("bind")?, a.n("duration-ns")?, &a.s("out")?)
            }
            "train" => {
                let sizes = a
                    .s("sizes")?
                    .split(',')
                    .map(|x| x.parse().map_err(|_| format!("--sizes: bad size {x:?}")))
                    .collect::<Result<Vec<usize>, String>>()?;
                endpoints::train(
                    &a.s("src")?,
                    &a.s("dst")?,
                    &sizes,
                    a.opt_n("first-seq")?.unwrap_or(0),
                )
            }
            other => Err(format!("unknown subcommand {other:?}")),
        }
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("collateral-emu {cmd}: {e}");
            ExitCode::from(1)
        }
    }
}
