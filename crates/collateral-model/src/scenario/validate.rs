//! What the types cannot check: positive rates and limits, sane times, at most one
//! clock per direction, and what a trial may hold (`crate::limits`).

use std::mem::size_of;

use collateral_queue::{Ecn, Nanos};

use super::{LinkConfig, Queue, Scenario};
use crate::metrics::ClassCount;

impl Scenario {
    /// Checks what the types cannot: positive rates and limits, sane times, and what the
    /// trial may hold (`crate::limits`).
    pub fn validate(&self) -> Result<(), String> {
        if self.duration_ns == 0 {
            return Err("duration_ns: must be positive".into());
        }
        if self.warmup_ns >= self.duration_ns {
            return Err("warmup_ns: must be shorter than the duration".into());
        }
        if self.access_rate_bps == 0 {
            return Err("access_rate_bps: must be positive".into());
        }
        for (name, l) in [("down", &self.down), ("up", &self.up)] {
            if let Some(t) = &l.trace {
                t.validate().map_err(|e| format!("{name}.trace.{e}"))?;
            }
            if l.rate_bps == 0 {
                return Err(format!("{name}.rate_bps: must be positive"));
            }
            if let Some(c) = &l.docsis {
                if l.trace.is_some() {
                    return Err(format!(
                        "{name}.docsis: give either a trace or docsis, not both"
                    ));
                }
                c.validate(l.rate_bps)
                    .map_err(|e| format!("{name}.docsis.{e}"))?;
            }
            validate_variable(name, l, self.duration_ns)?;
            l.queue
                .validate(l.rate_bps)
                .map_err(|e| format!("{name}.queue: {e}"))?;
            if !(0.0..1.0).contains(&l.loss_rate) {
                return Err(format!("{name}.loss_rate: must be in [0, 1)"));
            }
            if let Some(b) = &l.burst_loss {
                b.validate().map_err(|e| format!("{name}.burst_loss.{e}"))?;
                if l.loss_rate > 0.0 {
                    return Err(format!(
                        "{name}.burst_loss: give either loss_rate or burst_loss, not both"
                    ));
                }
            }
        }
        for (i, t) in self.tcp.iter().enumerate() {
            for (key, v) in [
                ("mss", u64::from(t.mss)),
                ("ack_bytes", u64::from(t.ack_bytes)),
                ("initial_cwnd", u64::from(t.initial_cwnd)),
                ("rwnd_segments", u64::from(t.rwnd_segments)),
                ("ack_every", u64::from(t.ack_every)),
                ("rto_min_ns", t.rto_min_ns),
            ] {
                if v == 0 {
                    return Err(format!("tcp[{i}].{key}: must be positive"));
                }
            }
            if t.data_bytes <= 40 {
                return Err(format!(
                    "tcp[{i}].data_bytes: must be above 40 (the IP and TCP headers)"
                ));
            }
            if t.tag > 63 {
                return Err(format!("tcp[{i}].tag: {} is not a DSCP (0..=63)", t.tag));
            }
            if self.workload.is_none() {
                starts_in_run(&format!("tcp[{i}]"), t.start_ns, self.duration_ns)?;
            }
            if t.rto_min_ns > t.rto_max_ns {
                return Err(format!(
                    "tcp[{i}].rto_min_ns: must be at most rto_max ({} ns)",
                    t.rto_max_ns
                ));
            }
        }
        for (i, c) in self.cbr.iter().enumerate() {
            if c.packet_bytes == 0 {
                return Err(format!("cbr[{i}].packet_bytes: must be positive"));
            }
            if c.interval_ns == 0 {
                return Err(format!("cbr[{i}].interval_ns: must be positive"));
            }
            if let (Some(t), None) = (c.start_ns, &self.workload) {
                starts_in_run(&format!("cbr[{i}]"), t, self.duration_ns)?;
            }
        }
        for (i, w) in self.web.iter().enumerate() {
            w.validate(self.duration_ns)
                .map_err(|e| format!("web[{i}]: {e}"))?;
        }
        if self.bin_ns == 0 {
            return Err("bin_ns: must be positive".into());
        }
        crate::media::calls::validate(&self.media)?;
        for (i, m) in self.media.iter().enumerate() {
            let at = if self.media.len() == 1 {
                "media".into()
            } else {
                format!("media[{i}]")
            };
            starts_in_run(&at, m.start_ns, self.duration_ns)?;
        }
        for (i, p) in self.phases.iter().enumerate() {
            if p.start_ns >= self.duration_ns {
                return Err(format!("phases[{i}]: starts after the end of the run"));
            }
            if i > 0 && p.start_ns <= self.phases[i - 1].start_ns {
                return Err(format!(
                    "phases[{i}]: phases must start in increasing order"
                ));
            }
        }
        if let Some(w) = &self.workload {
            w.check(&self.cbr, self.duration_ns)?;
        }
        let flows =
            self.tcp.len() + self.web.iter().map(|w| w.slots()).sum::<usize>() + self.cbr.len();
        if flows >= u32::MAX as usize {
            return Err("too many flows (users × parallel connections)".into());
        }
        check_limits(self)
    }
}

/// A flow that starts at or after the end of the run would send nothing: a mistake
/// (a start meant for a longer run), not a flow to measure. Not a workload's flows: the
/// responsiveness ramp schedules more than a short run reaches, and starts those it needs.
fn starts_in_run(flow: &str, start: Nanos, duration: Nanos) -> Result<(), String> {
    if start >= duration {
        return Err(format!(
            "{flow}.start_ns: must be before the end of the run"
        ));
    }
    Ok(())
}

/// A direction's satellite model, outages and delay steps: each valid, and at most one
/// clock (trace, DOCSIS, satellite, outages) and one source of variable delay.
fn validate_variable(name: &str, l: &LinkConfig, duration: Nanos) -> Result<(), String> {
    if let Some(c) = &l.leo {
        c.validate().map_err(|e| format!("{name}.leo.{e}"))?;
        let intervals = duration / c.interval_ns.max(1);
        if intervals > crate::leo::MAX_INTERVALS {
            return Err(format!(
                "{name}.leo.interval_ns: {intervals} intervals in the run, above the limit of {}",
                crate::leo::MAX_INTERVALS
            ));
        }
        if l.trace.is_some() || l.docsis.is_some() {
            return Err(format!(
                "{name}.leo: a satellite link sets its own rate; drop trace or docsis"
            ));
        }
        if l.delay.is_some() {
            return Err(format!(
                "{name}.delay: a satellite link sets its own delay; give one or the other"
            ));
        }
    }
    if let Some(o) = &l.outages {
        o.validate().map_err(|e| format!("{name}.outages.{e}"))?;
        if l.trace.is_some() || l.docsis.is_some() || l.leo.is_some() {
            return Err(format!(
                "{name}.outages: only for a constant-rate link (a trace carries its own gaps)"
            ));
        }
    }
    if let Some(d) = &l.delay {
        d.validate().map_err(|e| format!("{name}.delay.{e}"))?;
    }
    Ok(())
}

/// Checks every bound of [`crate::limits`]; the first one broken is the error.
fn check_limits(sc: &Scenario) -> Result<(), String> {
    use crate::limits::*;
    time("duration_ns", sc.duration_ns)?;
    time("rtt_ns", sc.rtt_ns)?;
    if sc.rtt_ns == 0 {
        // No path has zero propagation delay; the Python side refuses it too, so both
        // entry points answer alike.
        return Err("rtt_ns: must be positive".into());
    }
    time("bin_ns", sc.bin_ns)?;
    rate("access_rate_bps", sc.access_rate_bps)?;
    for (name, l) in [("down", &sc.down), ("up", &sc.up)] {
        rate(&format!("{name}.rate_bps"), l.rate_bps)?;
        if let Queue::DropTail(q) = &l.queue {
            if q.limit > MAX_QUEUE_LIMIT {
                return Err(format!(
                    "{name}.queue.limit: {} is above the limit of {MAX_QUEUE_LIMIT}",
                    q.limit
                ));
            }
        }
        if !l.loss_rate.is_finite() {
            return Err(format!("{name}.loss_rate: must be a number in [0, 1)"));
        }
    }
    if sc.tcp.len() > MAX_TCP_FLOWS {
        return Err(format!(
            "tcp: {} flows is above the limit of {MAX_TCP_FLOWS}",
            sc.tcp.len()
        ));
    }
    if sc.cbr.len() > MAX_CBR_FLOWS {
        return Err(format!(
            "cbr: {} flows is above the limit of {MAX_CBR_FLOWS}",
            sc.cbr.len()
        ));
    }
    let slots: usize = sc.web.iter().map(|w| w.slots()).sum();
    if slots > MAX_WEB_SLOTS {
        return Err(format!(
            "web: {slots} users × parallel connections is above the limit of {MAX_WEB_SLOTS}"
        ));
    }
    for (i, t) in sc.tcp.iter().enumerate() {
        tcp(&format!("tcp[{i}]"), t)?;
    }
    for (i, w) in sc.web.iter().enumerate() {
        time(&format!("web[{i}].start_ns"), w.start_ns)?;
        if let Some(s) = w.stop_ns {
            time(&format!("web[{i}].stop_ns"), s)?;
        }
        tcp(&format!("web[{i}].tcp"), &w.tcp)?;
    }
    for (i, c) in sc.cbr.iter().enumerate() {
        let k = |f: &str| format!("cbr[{i}].{f}");
        size(&k("packet_bytes"), c.packet_bytes as u64, 1)?;
        time(&k("interval_ns"), c.interval_ns)?;
        time(&k("jitter_ns"), c.jitter_ns)?;
        if c.tag > 63 {
            return Err(format!("{}: {} is not a DSCP (0..=63)", k("tag"), c.tag));
        }
        if c.ecn == Ecn::Ce {
            return Err(format!(
                "{}: a source sends not_ect, ect0 or ect1, not ce",
                k("ecn")
            ));
        }
        if let Some(s) = c.start_ns {
            time(&k("start_ns"), s)?;
        }
        if let Some(b) = c.budget_ns {
            time(&k("budget_ns"), b)?;
        }
        if let Some(s) = c.stop_ns {
            time(&k("stop_ns"), s)?;
        }
    }
    for (i, p) in sc.phases.iter().enumerate() {
        time(&format!("phases[{i}].start_ns"), p.start_ns)?;
    }
    check_memory(sc)
}

/// The memory the scenario fixes in advance, against [`crate::limits::MEMORY_BUDGET`]; an error names
/// the largest part.
fn check_memory(sc: &Scenario) -> Result<(), String> {
    use crate::limits::*;
    let bins = if sc.trace.classes {
        (sc.duration_ns / sc.bin_ns.max(1) + 1) * 2 * 3 * size_of::<ClassCount>() as u64
    } else {
        0
    };
    let mut parts: Vec<(String, u64, String)> = vec![(
        "bin_ns".into(),
        bins,
        format!(
            "{} bins of per-class counters",
            sc.duration_ns / sc.bin_ns.max(1) + 1
        ),
    )];
    for (i, c) in sc.cbr.iter().enumerate() {
        if c.app.is_none() {
            let n = sc.duration_ns / c.interval_ns.max(1);
            parts.push((
                format!("cbr[{i}].interval_ns"),
                n.saturating_mul(CBR_RECORD_BYTES),
                format!("{n} packets' records"),
            ));
        }
    }
    let tcp: u64 = sc
        .tcp
        .iter()
        .map(|t| FLOW_BYTES + scoreboard_bytes(t.rwnd_segments as usize))
        .sum();
    parts.push(("tcp".into(), tcp, format!("{} flows", sc.tcp.len())));
    let web: u64 = sc.web.iter().map(|w| w.slots() as u64 * FLOW_BYTES).sum();
    parts.push(("web".into(), web, "connection slots".into()));
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.1));
    if total > MEMORY_BUDGET {
        let (key, bytes, what) = parts.iter().max_by_key(|p| p.1).expect("parts");
        return Err(format!(
            "{key}: the trial would hold {what} ({}, {} in all), above the limit of {} per trial",
            gib(*bytes),
            gib(total),
            gib(MEMORY_BUDGET)
        ));
    }
    Ok(())
}
