//! The scenario's web users over the kernel's TCP: a browser process (`web-client`) in
//! the users' namespace that follows the model's draws ([`UserDraws`], the simulator's
//! users' own code and seeded streams) and fetches each object over a new connection,
//! and a server (`web-server`) on the other side that answers a request with as many
//! bytes as it asks for.
//!
//! A request carries what the server needs in its first [`HEADER_BYTES`]: the reply
//! length, the request length and the object's id; a drawn request shorter than that
//! is sent as the header alone. The browser logs every page and object (opened, done,
//! its kernel's retransmissions of SYN and request), the server each connection's
//! counters (data segments, retransmissions, timeouts) by the object's id, all in
//! trial time; the core measures them ([`collateral_model::web_records`]).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use collateral_model::web::{ObjectDraw, UserDraws, WebConfig};
use collateral_model::Scenario;

use crate::endpoints::{connect_from, create, trial_ns};
use crate::net::{mono_ns, set_congestion, sleep_until_mono, tcp_info};
use crate::router::{mono_of_real, STOP};

/// The request's head: reply length (u64), request length (u32), object id (u64),
/// big-endian.
pub const HEADER_BYTES: usize = 20;

pub struct WebServer {
    pub bind: String,
    /// The kernel's congestion control for the replies.
    pub cc: String,
    pub t0_real: u64,
    pub until_ns: u64,
    /// `id,segments_sent,retransmits,timeouts` per connection the browser closed.
    pub out: String,
}

/// A connection's counters as the server's kernel has them once the browser closed.
type ConnRow = (u64, u64, u64, u64);

/// Answers every connection on its own thread until trial time `until_ns`; then logs.
pub fn web_server(c: WebServer) -> Result<(), String> {
    let l = TcpListener::bind(&c.bind).map_err(|e| format!("bind {}: {e}", c.bind))?;
    // On the listener, before any connection: an accepted connection is established
    // with the listener's algorithm (see `connect_from` on why a later switch is not the
    // same).
    set_congestion(l.as_raw_fd(), &c.cc)
        .map_err(|e| format!("congestion control {}: {e}", c.cc))?;
    let rows: Arc<Mutex<Vec<ConnRow>>> = Arc::default();
    {
        let rows = rows.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let rows = rows.clone();
                std::thread::spawn(move || {
                    if let Some(row) = serve(s) {
                        rows.lock().unwrap().push(row);
                    }
                });
            }
        });
    }
    let end = mono_of_real(c.t0_real) + c.until_ns;
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = create(&c.out)?;
    let io = |e: std::io::Error| e.to_string();
    writeln!(out, "id,segments_sent,retransmits,timeouts").map_err(io)?;
    for (id, seg, re, rto) in rows.lock().unwrap().iter() {
        writeln!(out, "{id},{seg},{re},{rto}").map_err(io)?;
    }
    out.flush().map_err(io)
}

/// One connection: read the request, send the reply, wait for the browser to close;
/// `None` when the connection broke before that.
fn serve(mut s: TcpStream) -> Option<ConnRow> {
    let mut head = [0u8; HEADER_BYTES];
    s.read_exact(&mut head).ok()?;
    let reply = u64::from_be_bytes(head[..8].try_into().unwrap());
    let request = u32::from_be_bytes(head[8..12].try_into().unwrap()) as u64;
    let id = u64::from_be_bytes(head[12..20].try_into().unwrap());
    let mut rest = request.saturating_sub(HEADER_BYTES as u64);
    let mut buf = vec![0u8; 1 << 16];
    while rest > 0 {
        let n = s.read(&mut buf[..rest.min(1 << 16) as usize]).ok()?;
        if n == 0 {
            return None;
        }
        rest -= n as u64;
    }
    let mut left = reply;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        s.write_all(&buf[..n]).ok()?;
        left -= n as u64;
    }
    s.shutdown(Shutdown::Write).ok()?;
    // The browser closes once it has the whole reply: all of it acknowledged by then.
    while s.read(&mut buf).ok()? > 0 {}
    let i = tcp_info(s.as_raw_fd()).ok()?;
    Some((
        id,
        i.tcpi_data_segs_out as u64,
        i.tcpi_total_retrans as u64,
        i.tcpi_total_rto as u64,
    ))
}

pub struct WebClient {
    pub scenario: Scenario,
    /// The group's index among the scenario's web groups.
    pub group: usize,
    pub src_ip: String,
    pub dst: String,
    pub t0_real: u64,
    /// Logs PREFIX-objects.csv and PREFIX-pages.csv.
    pub out: String,
}

/// An object's row: user, id, opened, done (-1: not done), request, reply, the SYNs and
/// requests sent again.
type ObjRow = (u32, u64, i64, i64, u64, u64, u64);

#[derive(Default)]
struct Logs {
    objects: Mutex<Vec<ObjRow>>,
    /// user, started, done (-1: not done).
    pages: Mutex<Vec<(u32, i64, i64)>>,
}

/// The group's users, a thread each, browsing until the end of the run; then logs
/// what they did (objects and pages under way at the end as not done).
pub fn web_client(c: WebClient) -> Result<(), String> {
    let sc = Arc::new(c.scenario);
    let cfg = sc
        .web
        .get(c.group)
        .ok_or_else(|| {
            format!(
                "--group {}: the scenario has {} web groups",
                c.group,
                sc.web.len()
            )
        })?
        .clone();
    // Users are numbered over all groups, as the simulator numbers their streams.
    let first: u32 = sc.web[..c.group].iter().map(|g| g.users).sum();
    let logs = Arc::new(Logs::default());
    let origin = mono_of_real(c.t0_real);
    for u in first..first + cfg.users {
        let (sc, cfg, logs) = (sc.clone(), cfg.clone(), logs.clone());
        let (src, dst, t0) = (c.src_ip.clone(), c.dst.clone(), c.t0_real);
        std::thread::spawn(move || browse(&sc, &cfg, u, &src, &dst, t0, &logs));
    }
    let end = origin + sc.duration_ns;
    while mono_ns() < end && !STOP.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let io = |e: std::io::Error| e.to_string();
    let mut out = create(&format!("{}-objects.csv", c.out))?;
    writeln!(out, "user,id,opened_ns,done_ns,request,reply,setup_retries").map_err(io)?;
    for (u, id, o, d, rq, rp, r) in logs.objects.lock().unwrap().iter() {
        writeln!(out, "{u},{id},{o},{d},{rq},{rp},{r}").map_err(io)?;
    }
    out.flush().map_err(io)?;
    let mut out = create(&format!("{}-pages.csv", c.out))?;
    writeln!(out, "user,started_ns,done_ns").map_err(io)?;
    for (u, s, d) in logs.pages.lock().unwrap().iter() {
        writeln!(out, "{u},{s},{d}").map_err(io)?;
    }
    out.flush().map_err(io)
}

/// User `u`'s pages, as the simulator's user makes them: think, then the primary
/// object alone, then the embedded ones over up to `parallel` connections at once.
fn browse(sc: &Scenario, cfg: &WebConfig, u: u32, src: &str, dst: &str, t0: u64, logs: &Logs) {
    let origin = mono_of_real(t0);
    let mut d = UserDraws::new(sc.seed, u);
    let mut next = cfg.start_ns + d.first_think_ns(cfg);
    let mut objects = 0u64;
    loop {
        if next >= sc.duration_ns || cfg.stop_ns.is_some_and(|s| next >= s) {
            return;
        }
        sleep_until_mono(origin + next);
        let n = d.objects(cfg);
        let draws: Vec<ObjectDraw> = (0..n).map(|_| d.object(cfg)).collect();
        let page = {
            let mut p = logs.pages.lock().unwrap();
            p.push((u, trial_ns(t0), -1));
            p.len() - 1
        };
        let ids: Vec<u64> = (objects..objects + n as u64)
            .map(|k| (u as u64) << 32 | k)
            .collect();
        objects += n as u64;
        fetch(u, ids[0], &draws[0], src, dst, t0, logs);
        let taken = AtomicUsize::new(1);
        std::thread::scope(|s| {
            for _ in 0..(cfg.parallel as usize).min(n as usize - 1) {
                s.spawn(|| loop {
                    let k = taken.fetch_add(1, Ordering::Relaxed);
                    if k >= n as usize {
                        return;
                    }
                    fetch(u, ids[k], &draws[k], src, dst, t0, logs);
                });
            }
        });
        let done = trial_ns(t0);
        logs.pages.lock().unwrap()[page].2 = done;
        next = done.max(0) as u64 + d.think_ns(cfg);
    }
}

/// One object over a new connection: the SYN, the request, the whole reply; logs it
/// when it opens and again when it is done.
fn fetch(u: u32, id: u64, o: &ObjectDraw, src: &str, dst: &str, t0: u64, logs: &Logs) {
    let opened = trial_ns(t0);
    let k = {
        let mut v = logs.objects.lock().unwrap();
        v.push((u, id, opened, -1, o.request_bytes, o.reply_bytes, 0));
        v.len() - 1
    };
    // No deadline of its own: the kernel's SYN retries give up, or the run stops it.
    let Ok(Some(mut s)) = connect_from(src, dst, 0, None, u64::MAX) else {
        return;
    };
    let _ = s.set_nodelay(true);
    let mut req = vec![0u8; (o.request_bytes as usize).max(HEADER_BYTES)];
    req[..8].copy_from_slice(&o.reply_bytes.to_be_bytes());
    let len = req.len() as u32;
    req[8..12].copy_from_slice(&len.to_be_bytes());
    req[12..20].copy_from_slice(&id.to_be_bytes());
    if s.write_all(&req).is_err() {
        return;
    }
    let mut got = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    // The whole reply; a reply of no bytes is done when the server closes.
    while got < o.reply_bytes || o.reply_bytes == 0 {
        match s.read(&mut buf) {
            Ok(0) if o.reply_bytes == 0 => break,
            Ok(0) | Err(_) => return,
            Ok(n) => got += n as u64,
        }
    }
    let done = trial_ns(t0);
    let retries = tcp_info(s.as_raw_fd()).map_or(0, |i| i.tcpi_total_retrans as u64);
    let mut v = logs.objects.lock().unwrap();
    v[k].3 = done;
    v[k].6 = retries;
}
