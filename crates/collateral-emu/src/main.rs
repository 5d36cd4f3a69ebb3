//! `collateral-emu`: the real-time half of collateral's testbed. Python's
//! `collateral.emulate` builds the namespaces and runs these subcommands inside them.
//! Every one that follows the scenario reads the same scenario JSON the simulator
//! takes (`--scenario FILE`), and all share the run's origin `--t0` (CLOCK_REALTIME ns)
//! and log in trial time (ns since it). `collateral-emu --help` and `collateral-emu
//! SUBCOMMAND --help` list the arguments:
//!
//! ```text
//! collateral-emu router --scenario F --t0 NS --until-ns N --left IF --right IF
//!                       [--l2-overhead B] [--log FILE] [--report FILE] [--stats FILE]
//!                       [--cpu N] [--spin-ns N]
//! collateral-emu cbr-send --scenario F --flow J --t0 NS --src IP:PORT --dst IP:PORT --out F
//! collateral-emu cbr-recv --bind IP:PORT --t0 NS --until-ns N --out F
//! collateral-emu media-send --scenario F --t0 NS --src IP:PORT --dst IP:PORT --out PREFIX
//! collateral-emu media-recv --scenario F --t0 NS --until-ns N --bind IP:PORT
//!                           --peer IP:PORT --out PREFIX
//! collateral-emu tcp-send --src IP --dst IP:PORT --cc NAME --t0 NS --duration-ns N
//!                         --poll-ns N --out F --congestion-out F
//!                         [--scenario F --flow I [--rtt-out F]]
//! collateral-emu tcp-recv --bind IP:PORT [--tos TOS] --t0 NS --until-ns N --out F
//! collateral-emu web-server --bind IP:PORT --cc NAME --t0 NS --until-ns N --out F
//! collateral-emu web-client --scenario F --group G --t0 NS --src IP --dst IP:PORT
//!                           --out PREFIX
//! collateral-emu flood --src IP:PORT --dst IP:PORT --size B --rate-bps R --duration-ns N
//! collateral-emu train --src IP:PORT --dst IP:PORT --sizes 1500,186,... [--first-seq N]
//! ```
//!
//! A command-line error is one line on stderr naming the argument, exit status 2 (the
//! Python wrapper and its tests rely on both); a failure while running is exit 1.

mod endpoints;
mod media;
mod net;
mod router;
mod self_probe;
mod timing;
mod web;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// `--version`: the crate's version and whether the model is the checked build (the
/// tests'), whose router is slower: the accuracy benchmark refuses it.
const VERSION: &str = if collateral_model::CHECKED {
    concat!(env!("CARGO_PKG_VERSION"), " (checked build)")
} else {
    concat!(env!("CARGO_PKG_VERSION"), " (release build)")
};

#[derive(Parser)]
#[command(
    name = "collateral-emu",
    version = VERSION,
    about = "The real-time half of collateral's testbed: the bottleneck router and the \
             measurement endpoints that `collateral emulate` runs in its namespaces"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// The run's clock: origin and end, shared by every process of a run.
#[derive(Args)]
struct Clock {
    /// The run's origin, CLOCK_REALTIME ns.
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    t0: u64,
    /// Stop at this trial time, ns since --t0.
    #[arg(long, value_name = "NS", allow_negative_numbers = true)]
    until_ns: u64,
}

#[derive(Subcommand)]
enum Cmd {
    /// The bottleneck: reads frames on --left and --right and forwards them through the
    /// scenario's queue, rate and delay in real time.
    Router {
        /// The scenario JSON (the simulator's).
        #[arg(long, value_name = "FILE")]
        scenario: String,
        #[command(flatten)]
        clock: Clock,
        /// Interface towards the Internet side.
        #[arg(long, value_name = "IF")]
        left: String,
        /// Interface towards the home side.
        #[arg(long, value_name = "IF")]
        right: String,
        /// Bytes added to each IP length for queue accounting and serialisation.
        #[arg(
            long,
            value_name = "B",
            default_value_t = 0,
            allow_negative_numbers = true
        )]
        l2_overhead: u32,
        /// Per-packet log (CSV).
        #[arg(long, value_name = "FILE")]
        log: Option<String>,
        /// End-of-run report (JSON).
        #[arg(long, value_name = "FILE")]
        report: Option<String>,
        /// The router's own timing (JSON).
        #[arg(long, value_name = "FILE")]
        stats: Option<String>,
        /// CPU to pin the router to (negative: not pinned; default: the last allowed).
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        cpu: Option<i64>,
        /// Spin rather than sleep when the next release is this close, ns.
        #[arg(
            long,
            value_name = "NS",
            default_value_t = 300_000,
            allow_negative_numbers = true
        )]
        spin_ns: u64,
    },
    /// Sends the scenario's CBR flow --flow on the simulator's schedule; logs
    /// seq,send_ns,len.
    CbrSend {
        #[arg(long, value_name = "FILE")]
        scenario: String,
        /// The flow's index among the scenario's CBR flows.
        #[arg(long, value_name = "J", allow_negative_numbers = true)]
        flow: usize,
        /// The run's origin, CLOCK_REALTIME ns.
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        t0: u64,
        #[arg(long, value_name = "IP:PORT")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        #[arg(long, value_name = "FILE")]
        out: String,
    },
    /// Receives a CBR flow; logs seq,recv_ns.
    CbrRecv {
        #[arg(long, value_name = "IP:PORT")]
        bind: String,
        #[command(flatten)]
        clock: Clock,
        #[arg(long, value_name = "FILE")]
        out: String,
    },
    /// Sends the scenario's video call: the model's encoder and GCC on real feedback;
    /// logs PREFIX-send.csv, -frames.csv, -target.csv and -reports.csv.
    MediaSend {
        #[arg(long, value_name = "FILE")]
        scenario: String,
        /// The run's origin, CLOCK_REALTIME ns.
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        t0: u64,
        #[arg(long, value_name = "IP:PORT")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        #[arg(long, value_name = "PREFIX")]
        out: String,
    },
    /// Receives the video call and sends its RFC 8888 feedback to --peer; logs
    /// PREFIX-recv.csv and PREFIX-feedback.csv.
    MediaRecv {
        #[arg(long, value_name = "FILE")]
        scenario: String,
        #[command(flatten)]
        clock: Clock,
        #[arg(long, value_name = "IP:PORT")]
        bind: String,
        /// The sender's address, where the feedback goes.
        #[arg(long, value_name = "IP:PORT")]
        peer: String,
        #[arg(long, value_name = "PREFIX")]
        out: String,
    },
    /// A bulk TCP sender with the kernel's congestion control --cc; logs its progress
    /// and its congestion events.
    TcpSend {
        #[arg(long, value_name = "IP")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        /// The kernel's name of the congestion control.
        #[arg(long, value_name = "NAME")]
        cc: String,
        /// The run's origin, CLOCK_REALTIME ns.
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        t0: u64,
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        duration_ns: u64,
        /// How often to read the socket's state, ns.
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        poll_ns: u64,
        #[arg(long, value_name = "FILE")]
        out: String,
        #[arg(long, value_name = "FILE")]
        congestion_out: String,
        /// The scenario and this flow's index in it: the flow connects at its start
        /// (its seeded offset, as the simulator draws it) instead of at the origin.
        #[arg(long, value_name = "FILE", requires = "flow")]
        scenario: Option<String>,
        #[arg(long, value_name = "I", requires = "scenario")]
        flow: Option<usize>,
        /// The flow's self probes (RTT samples of its own bytes, one per the
        /// scenario's workload's probe interval): `sent_ns,rtt_ns,acked_bytes`.
        #[arg(long, value_name = "FILE", requires = "scenario")]
        rtt_out: Option<String>,
    },
    /// Receives bulk TCP; logs what arrives.
    TcpRecv {
        #[arg(long, value_name = "IP:PORT")]
        bind: String,
        /// The IP TOS byte of its ACKs (the flow's DSCP shifted left by two).
        #[arg(
            long,
            value_name = "TOS",
            default_value_t = 0,
            allow_negative_numbers = true
        )]
        tos: u8,
        #[command(flatten)]
        clock: Clock,
        #[arg(long, value_name = "FILE")]
        out: String,
    },
    /// Serves the web users' objects: answers each request with the reply length it
    /// asks for; logs each connection's counters.
    WebServer {
        #[arg(long, value_name = "IP:PORT")]
        bind: String,
        /// The kernel's name of the replies' congestion control.
        #[arg(long, value_name = "NAME")]
        cc: String,
        #[command(flatten)]
        clock: Clock,
        #[arg(long, value_name = "FILE")]
        out: String,
    },
    /// The scenario's web group --group: its users browse by the model's draws; logs
    /// PREFIX-objects.csv and PREFIX-pages.csv.
    WebClient {
        #[arg(long, value_name = "FILE")]
        scenario: String,
        /// The group's index among the scenario's web groups.
        #[arg(long, value_name = "G", allow_negative_numbers = true)]
        group: usize,
        /// The run's origin, CLOCK_REALTIME ns.
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        t0: u64,
        #[arg(long, value_name = "IP")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        #[arg(long, value_name = "PREFIX")]
        out: String,
    },
    /// UDP at a fixed rate (for measuring the testbed itself).
    Flood {
        #[arg(long, value_name = "IP:PORT")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        /// IP length of each packet, bytes.
        #[arg(long, value_name = "B", allow_negative_numbers = true)]
        size: u32,
        #[arg(long, value_name = "R", allow_negative_numbers = true)]
        rate_bps: u64,
        #[arg(long, value_name = "NS", allow_negative_numbers = true)]
        duration_ns: u64,
    },
    /// A back-to-back train of UDP packets of the given sizes, numbered from
    /// --first-seq.
    Train {
        #[arg(long, value_name = "IP:PORT")]
        src: String,
        #[arg(long, value_name = "IP:PORT")]
        dst: String,
        /// IP lengths, comma-separated.
        #[arg(
            long,
            value_name = "B,B,...",
            value_delimiter = ',',
            required = true,
            allow_negative_numbers = true
        )]
        sizes: Vec<usize>,
        #[arg(
            long,
            value_name = "N",
            default_value_t = 0,
            allow_negative_numbers = true
        )]
        first_seq: u64,
    },
}

impl Cmd {
    fn name(&self) -> &'static str {
        match self {
            Cmd::Router { .. } => "router",
            Cmd::CbrSend { .. } => "cbr-send",
            Cmd::CbrRecv { .. } => "cbr-recv",
            Cmd::MediaSend { .. } => "media-send",
            Cmd::MediaRecv { .. } => "media-recv",
            Cmd::TcpSend { .. } => "tcp-send",
            Cmd::TcpRecv { .. } => "tcp-recv",
            Cmd::WebServer { .. } => "web-server",
            Cmd::WebClient { .. } => "web-client",
            Cmd::Flood { .. } => "flood",
            Cmd::Train { .. } => "train",
        }
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
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return parse_error(e),
    };
    let name = cli.cmd.name();
    match run(cli.cmd) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("collateral-emu {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--help` and `--version` print as clap writes them (exit 0). A command-line error is
/// one line, exit 2: clap's first paragraph (which names the argument; a list of missing
/// arguments is joined onto it), without its usage and tips.
fn parse_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    use clap::CommandFactory;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            let names: Vec<String> = Cli::command()
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            eprintln!(
                "collateral-emu: a subcommand is required: {} (see --help)",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
        _ => {}
    }
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let line = first.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    eprintln!("collateral-emu: {line} (see --help)");
    ExitCode::from(2)
}

fn run(cmd: Cmd) -> Result<(), String> {
    if !matches!(cmd, Cmd::Router { .. } | Cmd::Train { .. }) {
        router::install_stop_handlers();
        net::avoid_router_cpu();
    }
    match cmd {
        Cmd::Router {
            scenario: path,
            clock,
            left,
            right,
            l2_overhead,
            log,
            report,
            stats,
            cpu,
            spin_ns,
        } => router::run(router::RouterConfig {
            left,
            right,
            l2_overhead,
            log,
            report,
            t0_real: clock.t0,
            until_ns: clock.until_ns,
            stats,
            cpu,
            spin_ns,
            // Read last: every argument is checked before any file is read.
            scenario: scenario(&path)?,
        }),
        Cmd::CbrSend {
            scenario: path,
            flow,
            t0,
            src,
            dst,
            out,
        } => endpoints::cbr_send(endpoints::CbrSend {
            flow,
            src,
            dst,
            t0_real: t0,
            out,
            scenario: scenario(&path)?,
        }),
        Cmd::CbrRecv { bind, clock, out } => {
            endpoints::cbr_recv(&bind, clock.t0, clock.until_ns, &out)
        }
        Cmd::MediaSend {
            scenario: path,
            t0,
            src,
            dst,
            out,
        } => media::media_send(media::MediaSend {
            t0_real: t0,
            src,
            dst,
            out,
            scenario: scenario(&path)?,
        }),
        Cmd::MediaRecv {
            scenario: path,
            clock,
            bind,
            peer,
            out,
        } => media::media_recv(media::MediaRecv {
            t0_real: clock.t0,
            until_ns: clock.until_ns,
            bind,
            peer,
            out,
            scenario: scenario(&path)?,
        }),
        Cmd::TcpSend {
            src,
            dst,
            cc,
            t0,
            duration_ns,
            poll_ns,
            out,
            congestion_out,
            scenario: path,
            flow,
            rtt_out,
        } => {
            // Its seeded start, its stop and its DSCP, as the simulator's flow has them.
            let (start_ns, stop_ns, tos, every) = match (path, flow) {
                (Some(path), Some(i)) => {
                    let sc = scenario(&path)?;
                    let t = sc
                        .tcp
                        .get(i)
                        .ok_or_else(|| format!("--flow: {i}: the scenario has no TCP flow {i}"))?;
                    let every = sc.workload.map(|w| w.probe_interval_ns);
                    (t.start_at(sc.seed, i), t.stop_ns, t.tag << 2, every)
                }
                _ => (0, None, 0, None),
            };
            let self_probes = match (rtt_out, every) {
                (Some(path), Some(every)) => Some((every, path)),
                (Some(_), None) => {
                    return Err(
                        "--rtt-out: the scenario runs no workload (no probe interval)".into(),
                    )
                }
                _ => None,
            };
            endpoints::tcp_send(endpoints::TcpSend {
                src_ip: src,
                dst,
                cc,
                tos,
                t0_real: t0,
                start_ns,
                stop_ns,
                duration_ns,
                poll_ns,
                out,
                congestion_out,
                self_probes,
            })
        }
        Cmd::TcpRecv {
            bind,
            tos,
            clock,
            out,
        } => endpoints::tcp_recv(&bind, tos, clock.t0, clock.until_ns, &out),
        Cmd::WebServer {
            bind,
            cc,
            clock,
            out,
        } => web::web_server(web::WebServer {
            bind,
            cc,
            t0_real: clock.t0,
            until_ns: clock.until_ns,
            out,
        }),
        Cmd::WebClient {
            scenario: path,
            group,
            t0,
            src,
            dst,
            out,
        } => web::web_client(web::WebClient {
            group,
            src_ip: src,
            dst,
            t0_real: t0,
            out,
            scenario: scenario(&path)?,
        }),
        Cmd::Flood {
            src,
            dst,
            size,
            rate_bps,
            duration_ns,
        } => endpoints::flood(&src, &dst, size, rate_bps, duration_ns),
        Cmd::Train {
            src,
            dst,
            sizes,
            first_seq,
        } => endpoints::train(&src, &dst, &sizes, first_seq),
    }
}
