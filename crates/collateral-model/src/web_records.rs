//! The testbed's web users measured as the simulator's are: what the browser
//! (`collateral-emu web-client`) and the server (`web-server`) logged of every page and
//! object, counted into each group's [`WebSummary`] by the simulator's rules (a page
//! counts as started when it starts after the warm-up, an object when its connection
//! opened after it; the response time runs from the first SYN to the reply's last byte
//! at the browser), and the response times reduced by [`finish_responses`], which the
//! simulator's web users use too.

use serde::Deserialize;

use crate::metrics::{quantile, WebSummary};
use crate::scenario::Scenario;
use crate::units::Nanos;

/// One object: its connection, as the browser saw it, and the server's counters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebObjectRecord {
    /// The user, counted over all groups in the scenario's order.
    pub user: u32,
    /// When the browser sent the first SYN (trial time).
    pub opened_ns: Nanos,
    /// When the reply's last byte reached the browser; `None`: not by the end.
    pub done_ns: Option<Nanos>,
    pub reply_bytes: u64,
    /// SYNs and requests the browser sent again (its kernel's retransmissions).
    pub setup_retries: u64,
    /// The server's data segments, retransmissions and timeouts on this connection;
    /// `None` where the server logged nothing for it.
    pub segments_sent: Option<u64>,
    pub retransmits: Option<u64>,
    pub timeouts: Option<u64>,
}

/// One page: when the user began it (the think time over) and when its last object
/// arrived (`None`: not by the end).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebPageRecord {
    pub user: u32,
    pub started_ns: Nanos,
    pub done_ns: Option<Nanos>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebRecords {
    pub objects: Vec<WebObjectRecord>,
    pub pages: Vec<WebPageRecord>,
}

/// The mean, median and 95th percentile of a group's response times (seconds, any
/// order) into its summary; NaN without any.
pub fn finish_responses(s: &mut WebSummary, mut r: Vec<f64>) {
    r.sort_unstable_by(f64::total_cmp);
    s.response_mean_s = if r.is_empty() {
        f64::NAN
    } else {
        r.iter().sum::<f64>() / r.len() as f64
    };
    s.response_median_s = quantile(&r, 0.5);
    s.response_p95_s = quantile(&r, 0.95);
}

/// Each web group's summary from the testbed's records; an error names a record whose
/// user the scenario does not have.
pub fn web_summaries(sc: &Scenario, rec: &WebRecords) -> Result<Vec<WebSummary>, String> {
    let mut group_of = Vec::new();
    for (g, cfg) in sc.web.iter().enumerate() {
        group_of.extend(std::iter::repeat_n(g, cfg.users as usize));
    }
    let group = |what: &str, k: usize, u: u32| {
        group_of.get(u as usize).copied().ok_or_else(|| {
            format!(
                "web records: {what}[{k}].user: {u}; the scenario has {} users",
                group_of.len()
            )
        })
    };
    let mut out: Vec<WebSummary> = sc
        .web
        .iter()
        .map(|c| WebSummary {
            users: c.users,
            ..Default::default()
        })
        .collect();
    let mut responses = vec![Vec::new(); sc.web.len()];
    let (warm, end) = (sc.warmup_ns, sc.duration_ns);
    let by_end = |t: Option<Nanos>| t.filter(|&t| t <= end);
    for (k, p) in rec.pages.iter().enumerate() {
        let s = &mut out[group("pages", k, p.user)?];
        if p.started_ns >= warm && p.started_ns < end {
            s.pages_started += 1;
        }
        if by_end(p.done_ns).is_some_and(|t| t >= warm) {
            s.pages_completed += 1;
        }
    }
    for (k, o) in rec.objects.iter().enumerate() {
        let g = group("objects", k, o.user)?;
        if o.opened_ns < warm || o.opened_ns >= end {
            continue;
        }
        let s = &mut out[g];
        s.connections += 1;
        s.setup_retries += o.setup_retries;
        s.segments_sent += o.segments_sent.unwrap_or(0);
        s.retransmits += o.retransmits.unwrap_or(0);
        s.timeouts += o.timeouts.unwrap_or(0);
        if let Some(t) = by_end(o.done_ns) {
            s.objects_completed += 1;
            s.reply_bytes += o.reply_bytes;
            responses[g].push(t.saturating_sub(o.opened_ns) as f64 / 1e9);
        }
    }
    for (s, r) in out.iter_mut().zip(responses) {
        finish_responses(s, r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    /// Two groups (2 users and 1); a 10 s run with a 2 s warm-up. Hand-counted: group 0
    /// has one page started before the warm-up (not counted as started, counted as
    /// completed at 3 s) and one started at 4 s and never done; objects opened at 1 s
    /// (before the warm-up: ignored), 3 s (done 3.5 s: 0.5 s), 4 s (done 5 s: 1 s) and
    /// 9 s (not done); group 1 one object of 0.2 s.
    #[test]
    fn counts_follow_the_simulators_rules() {
        let mut sc = Scenario::builder().duration(10 * S).build();
        sc.warmup_ns = 2 * S;
        let g: crate::web::WebConfig = serde_json::from_str(r#"{"users": 2}"#).unwrap();
        sc.web = vec![g.clone(), crate::web::WebConfig { users: 1, ..g }];
        let obj = |user, opened_ns, done_ns, reply_bytes| WebObjectRecord {
            user,
            opened_ns,
            done_ns,
            reply_bytes,
            setup_retries: 1,
            segments_sent: Some(3),
            retransmits: Some(1),
            timeouts: None,
        };
        let rec = WebRecords {
            objects: vec![
                obj(0, S, Some(3 * S), 10),
                obj(1, 3 * S, Some(3 * S + S / 2), 100),
                obj(0, 4 * S, Some(5 * S), 1000),
                obj(1, 9 * S, None, 5),
                obj(2, 6 * S, Some(6 * S + S / 5), 7),
            ],
            pages: vec![
                WebPageRecord {
                    user: 0,
                    started_ns: S,
                    done_ns: Some(3 * S),
                },
                WebPageRecord {
                    user: 1,
                    started_ns: 4 * S,
                    done_ns: None,
                },
            ],
        };
        let w = web_summaries(&sc, &rec).unwrap();
        assert_eq!((w[0].users, w[1].users), (2, 1));
        assert_eq!((w[0].pages_started, w[0].pages_completed), (1, 1));
        assert_eq!((w[0].connections, w[0].objects_completed), (3, 2));
        assert_eq!((w[0].reply_bytes, w[0].setup_retries), (1100, 3));
        assert_eq!(
            (w[0].segments_sent, w[0].retransmits, w[0].timeouts),
            (9, 3, 0)
        );
        assert_eq!(w[0].response_mean_s, 0.75);
        assert_eq!(w[0].response_median_s, 0.75);
        assert_eq!(w[0].response_p95_s, 0.5 + 0.95 * 0.5);
        assert_eq!((w[1].objects_completed, w[1].response_mean_s), (1, 0.2));
        let bad = WebRecords {
            objects: vec![obj(3, S, None, 1)],
            pages: vec![],
        };
        let e = web_summaries(&sc, &bad).unwrap_err();
        assert!(e.contains("objects[0].user: 3"), "{e}");
    }
}
