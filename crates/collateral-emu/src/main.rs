//! `collateral-emu`: the real-time half of collateral's testbed. Python's
//! `collateral.emulate` builds the namespaces and runs these subcommands inside them.
//! Every one that follows the scenario reads the same scenario JSON the simulator
//! takes (`--scenario FILE`), and all share the run's origin `--t0` (CLOCK_REALTIME ns)
//! and log in trial time (ns since it):
//!
//! ```text
//! collateral-emu router --scenario F --t0 NS --until-ns N --left IF --right IF
//!                       [--l2-overhead B] [--log FILE] [--report FILE] [--stats FILE]
//!                       [--cpu N] [--spin-ns N]
//! collateral-emu cbr-send --scenario F --flow J --t0 NS --src IP:PORT --dst IP:PORT --out F
//! collateral-emu cbr-recv --bind IP:PORT --t0 NS --until-ns N --out F
//! collateral-emu tcp-send --src IP --dst IP:PORT --cc NAME --t0 NS --duration-ns N
//!                         --poll-ns N --out F --congestion-out F
//! collateral-emu tcp-recv --bind IP:PORT --t0 NS --until-ns N --out F
//! collateral-emu flood --src IP:PORT --dst IP:PORT --size B --rate-bps R --duration-ns N
//! collateral-emu train --src IP:PORT --dst IP:PORT --sizes 1500,186,... [--first-seq N]
//! ```

mod endpoints;
mod net;
mod router;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when the command line itself is wrong: the process then exits 2, not 1.
static USAGE_ERROR: AtomicBool = AtomicBool::new(false);

/// A command-line error (exit status 2).
fn usage(msg: String) -> String {
    USAGE_ERROR.store(true, Ordering::Relaxed);
    msg
}

struct Args(HashMap<String, String>);

impl Args {
    fn parse(v: &[String]) -> Result<Args, String> {
        let mut m = HashMap::new();
        let mut it = v.iter();
        while let Some(k) = it.next() {
            let k = k
                .strip_prefix("--")
                .ok_or_else(|| usage(format!("unexpected argument {k:?}")))?;
            let val = it
                .next()
                .ok_or_else(|| usage(format!("--{k} needs a value")))?;
            m.insert(k.to_string(), val.clone());
        }
        Ok(Args(m))
    }
    fn s(&self, k: &str) -> Result<String, String> {
        self.0
            .get(k)
            .cloned()
            .ok_or_else(|| usage(format!("--{k} is required")))
    }
    fn n(&self, k: &str) -> Result<u64, String> {
        self.s(k)?
            .parse()
            .map_err(|_| usage(format!("--{k}: expected a non-negative integer")))
    }
    fn opt_n(&self, k: &str) -> Result<Option<u64>, String> {
        self.0
            .get(k)
            .map(|v| {
                v.parse()
                    .map_err(|_| usage(format!("--{k}: expected a non-negative integer")))
            })
            .transpose()
    }
}

/// The scenario JSON at `path`, validated as the simulator validates it.
fn scenario(path: &str) -> Result<collateral_model::Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    collateral_model::Scenario::from_json(&text).map_err(|e| format!("{path}: {e}"))
}

/// Dies with the process that started it (`collateral emulate`, through `ip netns
/// exec`, which execs rather than forks): a SIGKILLed run leaves no endpoint or router
/// running on. SIGTERM, so a router still flushes its log.
fn die_with_parent() {
    // SAFETY: prctl with an integer argument; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
        // The parent may already have gone between fork and prctl.
        if libc::getppid() == 1 {
            libc::raise(libc::SIGTERM);
        }
    }
}

fn main() -> ExitCode {
    die_with_parent();
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
                l2_overhead: a.opt_n("l2-overhead")?.unwrap_or(0) as u32,
                log: a.0.get("log").cloned(),
                report: a.0.get("report").cloned(),
                t0_real: a.n("t0")?,
                until_ns: a.n("until-ns")?,
                stats: a.0.get("stats").cloned(),
                cpu: a
                    .0
                    .get("cpu")
                    .map(|v| {
                        v.parse()
                            .map_err(|_| usage("--cpu: expected an integer".into()))
                    })
                    .transpose()?,
                spin_ns: a.opt_n("spin-ns")?.unwrap_or(300_000),
                // Read last: every argument is checked before any file is read.
                scenario: scenario(&a.s("scenario")?)?,
            }),
            "cbr-send" => {
                router::install_signal_handlers();
                net::avoid_router_cpu();
                endpoints::cbr_send(endpoints::CbrSend {
                    flow: a.n("flow")? as usize,
                    src: a.s("src")?,
                    dst: a.s("dst")?,
                    t0_real: a.n("t0")?,
                    out: a.s("out")?,
                    scenario: scenario(&a.s("scenario")?)?,
                })
            }
            "cbr-recv" => {
                router::install_signal_handlers();
                net::avoid_router_cpu();
                endpoints::cbr_recv(&a.s("bind")?, a.n("t0")?, a.n("until-ns")?, &a.s("out")?)
            }
            "tcp-send" => {
                router::install_signal_handlers();
                net::avoid_router_cpu();
                endpoints::tcp_send(endpoints::TcpSend {
                    src_ip: a.s("src")?,
                    dst: a.s("dst")?,
                    cc: a.s("cc")?,
                    t0_real: a.n("t0")?,
                    duration_ns: a.n("duration-ns")?,
                    poll_ns: a.n("poll-ns")?,
                    out: a.s("out")?,
                    congestion_out: a.s("congestion-out")?,
                })
            }
            "tcp-recv" => {
                router::install_signal_handlers();
                net::avoid_router_cpu();
                endpoints::tcp_recv(&a.s("bind")?, a.n("t0")?, a.n("until-ns")?, &a.s("out")?)
            }
            "flood" => {
                router::install_signal_handlers();
                net::avoid_router_cpu();
                endpoints::flood(
                    &a.s("src")?,
                    &a.s("dst")?,
                    a.n("size")? as u32,
                    a.n("rate-bps")?,
                    a.n("duration-ns")?,
                )
            }
            "train" => {
                let sizes = a
                    .s("sizes")?
                    .split(',')
                    .map(|x| {
                        x.parse()
                            .map_err(|_| usage(format!("--sizes: bad size {x:?}")))
                    })
                    .collect::<Result<Vec<usize>, String>>()?;
                endpoints::train(
                    &a.s("src")?,
                    &a.s("dst")?,
                    &sizes,
                    a.opt_n("first-seq")?.unwrap_or(0),
                )
            }
            other => Err(usage(format!("unknown subcommand {other:?}"))),
        }
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("collateral-emu {cmd}: {e}");
            ExitCode::from(if USAGE_ERROR.load(Ordering::Relaxed) {
                2
            } else {
                1
            })
        }
    }
}
