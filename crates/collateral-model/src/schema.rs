//! The result schema, declared once: every summary field and trace column a trial
//! produces (simulated or emulated), with its type, unit and meaning. The bindings
//! export it (`collateral._native.schema()`); the Python store types its Parquet
//! columns from it, `collateral schema` prints it, and tests hold the structs in
//! [`crate::metrics`], the bindings' traces, the stub and the figures to it.

/// A column's stored type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    F64,
    U64,
    U32,
    U8,
    Str,
    /// A list of records kept whole, as JSON text.
    Json,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "float64",
            Dtype::U64 => "uint64",
            Dtype::U32 => "uint32",
            Dtype::U8 => "uint8",
            Dtype::Str => "string",
            Dtype::Json => "json",
        }
    }
}

/// One declared column: name, type, unit ("" for counts and labels), meaning; `null`:
/// may be missing (the testbed does not know it, or the trial had nothing to measure).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub dtype: Dtype,
    pub unit: &'static str,
    pub null: bool,
    pub meaning: &'static str,
    /// For a code column (`u8`), the name of each code in order (code 0 first): what a
    /// data frame shows as a category. Empty otherwise.
    pub codes: &'static [&'static str],
}

const fn c(name: &'static str, dtype: Dtype, unit: &'static str, meaning: &'static str) -> Column {
    Column {
        name,
        dtype,
        unit,
        null: false,
        meaning,
        codes: &[],
    }
}

/// A code column: `u8` codes whose names are `codes`.
const fn coded(
    name: &'static str,
    meaning: &'static str,
    codes: &'static [&'static str],
) -> Column {
    Column {
        name,
        dtype: Dtype::U8,
        unit: "",
        null: false,
        meaning,
        codes,
    }
}

/// Directions by code, as the core numbers and names them.
const DIRECTIONS: &[&str] = <crate::units::Direction as strum::VariantNames>::VARIANTS;

/// May be NaN/None: NULL in the store.
const fn n(name: &'static str, dtype: Dtype, unit: &'static str, meaning: &'static str) -> Column {
    Column {
        name,
        dtype,
        unit,
        null: true,
        meaning,
        codes: &[],
    }
}

use Dtype::*;

/// A part of the summary: `key` is where it sits in the summary object ("" for the
/// trial's own fields), `prefix` how its fields are named as flat store columns
/// (`{i}` is the flow's, group's or direction's index or name).
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub key: &'static str,
    pub prefix: &'static str,
    pub meaning: &'static str,
    pub columns: &'static [Column],
}

/// Bumped whenever a declared column changes; stores record it.
pub const VERSION: u32 = 8;

pub const TRIAL: &[Column] = &[
    c("mode", Str, "", "simulation, emulation (the testbed) or measured (imported from a real client: collateral import)"),
    c("duration_s", F64, "s", "length of the run"),
    c("warmup_s", F64, "s", "start of the measured part"),
    n(
        "events",
        U64,
        "",
        "events the simulator processed (none in the testbed): the engine's bookkeeping, not a result; a trial with the queue or drops trace on counts more (the links then wake for each packet), the rest of its row the same",
    ),
    c(
        "packets_delivered",
        U64,
        "",
        "packets the bottleneck carried to the far side, both directions",
    ),
    c(
        "down_goodput_bps",
        F64,
        "bit/s",
        "goodput of all downstream TCP flows together",
    ),
    c(
        "up_goodput_bps",
        F64,
        "bit/s",
        "goodput of all upstream TCP flows together",
    ),
    n(
        "release_error_p50_s",
        F64,
        "s",
        "testbed: how late the router put frames on the wire against the model's release time, median (none in the simulator)",
    ),
    n(
        "release_error_p99_s",
        F64,
        "s",
        "testbed: the same, 99th percentile (the accuracy target bounds it)",
    ),
    n(
        "release_error_max_s",
        F64,
        "s",
        "testbed: the same, maximum",
    ),
    n(
        "router_preemptions",
        U64,
        "",
        "testbed: times another task took the router's CPU (involuntary context switches)",
    ),
    n(
        "router_voluntary_switches",
        U64,
        "",
        "testbed: times the router slept waiting (voluntary context switches)",
    ),
    n(
        "late",
        U8,
        "",
        "testbed: 1 when release_error_p99_s is beyond the accuracy target (its delays hold the router's lateness), else 0",
    ),
    // Scores of a workload with round-trip probes (RRUL; `crate::scores`), else none.
    n("latency_idle_s", F64, "s", "workload: median round trip of the probes sent before the load (Cloudflare's idle latency)"),
    n("latency_loaded_s", F64, "s", "workload: median round trip of the probes sent under load, once it settled (5 s, or saturation if later) (Cloudflare's loaded latency)"),
    n("latency_loaded_iqm_s", F64, "s", "workload: interquartile mean of the loaded round trips (Ookla's loaded latency)"),
    n("latency_loaded_down_s", F64, "s", "measured speed test that loaded one direction after the other: median round trip of the download phase's probes (its download latency); NULL when both were loaded at once"),
    n("latency_loaded_up_s", F64, "s", "the same for the upload phase (its upload latency)"),
    n("latency_increase_s", F64, "s", "workload: mean loaded round trip minus mean idle one (what DSLReports grades)"),
    n("jitter_idle_s", F64, "s", "workload: mean absolute difference of consecutive idle round trips"),
    n("jitter_loaded_s", F64, "s", "workload: the same under load"),
    n("probe_loss_rate", F64, "", "workload: share of the loaded probes lost either way"),
    n("rpm", F64, "RPM", "workload: responsiveness, round trips per minute (draft-ietf-ippm-responsiveness: trimmed means of foreign and self probes)"),
    n("rpm_p90", F64, "RPM", "workload: the same formula with the 90th percentiles"),
    n("rpm_p99", F64, "RPM", "workload: the same formula with the 99th percentiles"),
    n("rpm_band", Str, "", "workload: the draft's word for the RPM: poor, fair, good, excellent"),
    n("bufferbloat_grade", Str, "", "workload: DSLReports' bufferbloat grade of the latency increase, A+ to F"),
    n("aim_streaming", Str, "", "workload: Cloudflare AIM class for streaming: bad, poor, average, good, great"),
    n("aim_streaming_points", F64, "", "workload: its AIM points"),
    n("aim_gaming", Str, "", "workload: Cloudflare AIM class for gaming"),
    n("aim_gaming_points", F64, "", "workload: its AIM points"),
    n("aim_rtc", Str, "", "workload: Cloudflare AIM class for real-time communication"),
    n("aim_rtc_points", F64, "", "workload: its AIM points"),
    n("qoo_voip", F64, "", "workload: Quality of Outcome (draft-ietf-ippm-qoo) of the loaded probes for VoIP, 0-100"),
    n("qoo_gaming", F64, "", "workload: QoO for gaming, 0-100"),
    n("qoo_video_conferencing", F64, "", "workload: QoO for video conferencing, 0-100"),
    n("qoo_web", F64, "", "workload: QoO for web browsing, 0-100"),
    n("load_saturated_s", F64, "s", "workload: when the load saturated: the responsiveness draft's criterion (4 moving averages of goodput within 5 %) met by both directions (none: never)"),
    // The responsiveness test's own figures (`crate::scores::resp_test`, `crate::ramp`).
    n("rpm_foreign", F64, "RPM", "workload: the RPM's foreign half, 60000 over the mean of the foreign probes' trimmed means (the responsiveness test: TCP, TLS and HTTP times of new connections; else the UDP probes)"),
    n("rpm_loaded", F64, "RPM", "workload: the RPM's loaded half, 60000 over the self probes' trimmed mean (the responsiveness test: plus the wait in the send buffer)"),
    n("foreign_probes_per_s", F64, "1/s", "workload: foreign probes (the responsiveness test: new connections; else UDP probe round trips) per second of the loaded span, against the draft's MPS of 100"),
    n("self_probes_per_s", F64, "1/s", "workload: self probes (samples on the load connections) per second of the loaded span, against MPS"),
    n("probe_capacity_share", F64, "", "responsiveness test: the probes' bit rate by the draft's estimates (5000 B a foreign probe, 1000 B a self probe) over both line rates, against its PTC of 5 % (null for other workloads)"),
    n("probe_rate_within_limits", U8, "", "responsiveness test: 1 when both probe rates are within MPS and their share within PTC, else 0 (null for other workloads)"),
    n("foreign_probes_skipped", U64, "", "responsiveness test: foreign probes not launched because all 32 probe connections were still busy"),
    n("ramp_saturated_interval", U64, "", "responsiveness test: the ramp interval (0-based) at whose end both directions' goodput had saturated (none: never)"),
    n("ramp_flows_down", U64, "", "responsiveness test: load connections downstream when the trial ended (held from saturation on, at most 16)"),
    n("ramp_flows_up", U64, "", "responsiveness test: load connections upstream when the trial ended"),
    n("ramp_flows_per_interval", Str, "", "responsiveness test: load connections in use in each ramp interval, down+up, space-separated"),
];

pub const TCP: &[Column] = &[
    c("flow", U32, "", "flow id"),
    c("direction", Str, "", "down or up"),
    c("cc", Str, "", "congestion control"),
    c(
        "goodput_bps",
        F64,
        "bit/s",
        "application bytes delivered in order after the warm-up, per second",
    ),
    c(
        "bytes_delivered",
        U64,
        "B",
        "application bytes delivered in order after the warm-up",
    ),
    n(
        "segments_sent",
        U64,
        "",
        "segments sent, retransmissions included (not in the testbed)",
    ),
    c("retransmits", U64, "", "segments retransmitted"),
    n(
        "timeouts",
        U64,
        "",
        "retransmission timeouts (not in the testbed)",
    ),
    n(
        "fast_retransmits",
        U64,
        "",
        "fast retransmits (not in the testbed)",
    ),
    n(
        "ecn_reductions",
        U64,
        "",
        "window reductions for ECN-Echo (not in the testbed)",
    ),
    n(
        "ce_received",
        U64,
        "",
        "data segments that arrived marked CE",
    ),
    n(
        "completed_s",
        F64,
        "s",
        "when a finite transfer was fully acknowledged",
    ),
    c(
        "congestion_events",
        U64,
        "",
        "fast retransmits and timeouts after the warm-up (testbed: entries into Recovery or Loss)",
    ),
    n(
        "epoch_mean_s",
        F64,
        "s",
        "mean time between consecutive congestion events",
    ),
    n(
        "epoch_median_s",
        F64,
        "s",
        "median time between consecutive congestion events",
    ),
];

pub const CBR: &[Column] = &[
    c("flow", U32, "", "flow id"),
    c("direction", Str, "", "down or up"),
    c("sent", U64, "", "packets sent after the warm-up"),
    c("received", U64, "", "of those, received"),
    c("lost", U64, "", "of those, lost"),
    c("lost_in_queue", U64, "", "of the lost, dropped by a bottleneck queue"),
    c("in_flight", U64, "", "of those, still in the network at the end"),
    n("loss_rate", F64, "", "lost / (sent - in_flight)"),
    c("base_owd_s", F64, "s", "one-way delay through empty queues (access links, bottleneck serialisation with framing, propagation)"),
    n("delay_median_s", F64, "s", "median additional delay (one-way delay - base) of the received packets"),
    n("delay_p95_s", F64, "s", "95th percentile of the additional delay"),
    n("delay_max_s", F64, "s", "largest additional delay"),
    n("owd_mean_s", F64, "s", "mean one-way delay of the received packets"),
    n("r_factor", F64, "", "ITU-T G.107 rating of a G.711 call (PLC) at this mean delay and loss"),
    n("mos", F64, "", "ITU-T G.107 mean opinion score, 1-4.5"),
    n("over_100ms", F64, "", "share of packets (lost included) later than 100 ms one way (shooters)"),
    n("over_500ms", F64, "", "share later than 500 ms (MMOs)"),
    n("over_1000ms", F64, "", "share later than 1000 ms (strategy games)"),
    n("over_budget", F64, "", "share later than the flow's own budget (none: NaN)"),
];

/// A video call (`media`; draft-ietf-rmcat-gcc-02 over RFC 8888 feedback, RFC 8593's
/// synthetic encoder).
#[rustfmt::skip]
pub const MEDIA: &[Column] = &[
    c("flow", U32, "", "flow id of the media stream (its feedback is the next id)"),
    c("direction", Str, "", "down or up: the video's"),
    c("cc", Str, "", "the call's congestion controller (gcc, nada, scream)"),
    c("sent_bps", F64, "bit/s", "media bytes (IP) sent after the warm-up, per second"),
    c("received_bps", F64, "bit/s", "media bytes (IP) of those received, per second"),
    n("target_mean_bps", F64, "bit/s", "the controller's target rate, averaged over time after the warm-up"),
    n("loss_rate", F64, "", "media packets lost / those whose fate is known (in the network; sender discards apart)"),
    n("discarded", F64, "", "share of the media packets made after the warm-up that the sender discarded from its RTP queue, never sent (SCReAM, past the playout deadline; 0 for the others)"),
    c("frames", U64, "", "frames captured after the warm-up, complete or not (in flight at the end excluded)"),
    n("frames_incomplete", F64, "", "share of frames with a packet lost"),
    n("frame_delay_p50_s", F64, "s", "median frame delay: capture to arrival of its last packet, complete frames"),
    n("frame_delay_p95_s", F64, "s", "95th percentile of the frame delay"),
    n("frame_delay_p99_s", F64, "s", "99th percentile of the frame delay"),
    n("frames_late", F64, "", "share of frames later than the playout deadline (media.playout_ns, 150 ms), incomplete ones included"),
    n("rate_share", F64, "", "received_bps / (received_bps + the TCP goodput of the same direction)"),
    c("feedback_sent", U64, "", "RFC 8888 feedback packets the receiver sent, the warm-up included"),
    c("feedback_lost", U64, "", "of those, dropped on the way back"),
    n("capacity_bps", F64, "bit/s", "RFC 8868: mean capacity of the call's direction after the warm-up (a trace's opportunities, else the line rate)"),
    n("utilisation", F64, "", "RFC 8868: received_bps / capacity_bps"),
    n("call_share", F64, "", "received_bps / the received rate of all calls of the same direction"),
    n("jain_index", F64, "", "RFC 8868: Jain's fairness index over the received rates of the calls of the same direction (1: equal)"),
    n("convergence_s", F64, "s", "RFC 8868: from the call's start to the end of the first bin whose received rate is 80 % of its fair share, min(max rate, capacity / calls started) (none: never)"),
    n("adapt_down_s", F64, "s", "RFC 8867 5.1: the longest, over the capacity's falls by over 20 %, from the fall to the end of the first bin sent at most at 1.1 x the new fair share (the rest of the step if never; none: no fall)"),
    n("rate_cov", F64, "", "RFC 8868: instability, standard deviation / mean of the received rate over the whole bins after the warm-up and the call's start"),
];

pub const WEB: &[Column] = &[
    c("users", U32, "", "web users in the group"),
    c("pages_started", U64, "", "pages started after the warm-up"),
    c(
        "pages_completed",
        U64,
        "",
        "pages completed after the warm-up",
    ),
    c("objects_completed", U64, "", "objects completed"),
    c(
        "connections",
        U64,
        "",
        "TCP connections opened (one per object)",
    ),
    c("setup_retries", U64, "", "SYNs and requests sent again"),
    c(
        "reply_bytes",
        U64,
        "B",
        "reply bytes of the completed objects",
    ),
    c("segments_sent", U64, "", "segments the servers sent"),
    c("retransmits", U64, "", "segments the servers retransmitted"),
    c("timeouts", U64, "", "the servers' retransmission timeouts"),
    n(
        "response_mean_s",
        F64,
        "s",
        "mean object response time (first SYN to last byte)",
    ),
    n("response_median_s", F64, "s", "median object response time"),
    n(
        "response_p95_s",
        F64,
        "s",
        "95th percentile of the object response time",
    ),
];

pub const QUEUE: &[Column] = &[
    c(
        "arrivals",
        U64,
        "",
        "packets offered to the bottleneck queue",
    ),
    c("delivered", U64, "", "packets carried to the far side"),
    c("drops", U64, "", "packets the queue discipline dropped"),
    c(
        "ce_marks",
        U64,
        "",
        "packets the queue discipline marked CE instead of dropping (ECN)",
    ),
    c(
        "wire_losses",
        U64,
        "",
        "packets lost on the wire after the queue",
    ),
    c(
        "in_flight",
        U64,
        "",
        "packets inside the bottleneck at the end",
    ),
    c(
        "max_bytes",
        U64,
        "B",
        "largest occupancy, bytes as the discipline counts them",
    ),
    c("max_packets", U32, "", "largest occupancy, packets"),
];

pub const PHASE: &[Column] = &[
    c("phase", Str, "", "phase name"),
    c("start_s", F64, "s", "phase start"),
    c("end_s", F64, "s", "phase end"),
    c("direction", Str, "", "down or up"),
    c("class", Str, "", "tcp, tagged or other"),
    c(
        "arrivals",
        U64,
        "",
        "packets of the class offered to the queue",
    ),
    c("drops", U64, "", "of those, dropped"),
    n("drop_rate", F64, "", "drops / arrivals"),
    c(
        "throughput_bps",
        F64,
        "bit/s",
        "bytes through the bottleneck per second",
    ),
    n(
        "latency_mean_s",
        F64,
        "s",
        "mean time from arrival at the queue to the end of transmission",
    ),
];

/// The summary, part by part. `phases` is stored whole, as JSON text.
pub const SUMMARY: &[Group] = &[
    Group {
        key: "",
        prefix: "",
        meaning: "the trial",
        columns: TRIAL,
    },
    Group {
        key: "tcp",
        prefix: "tcp{i}_",
        meaning: "each bulk TCP flow",
        columns: TCP,
    },
    Group {
        key: "cbr",
        prefix: "cbr{i}_",
        meaning: "each CBR or application flow",
        columns: CBR,
    },
    Group {
        key: "web",
        prefix: "web{i}_",
        meaning: "each group of web users",
        columns: WEB,
    },
    Group {
        key: "media",
        prefix: "media{i}_",
        meaning: "each video call (adaptive real-time media)",
        columns: MEDIA,
    },
    Group {
        key: "queues",
        prefix: "queue_{i}_",
        meaning: "each bottleneck direction (down, up)",
        columns: QUEUE,
    },
    Group {
        key: "phases",
        prefix: "phases",
        meaning: "per phase, direction and class (JSON)",
        columns: PHASE,
    },
];

/// Summary fields of the trial that are parameters already (the store keeps them as
/// parameter columns, not twice).
pub const PARAMETER_FIELDS: &[&str] = &["duration_s", "warmup_s"];
/// A flow's fields that label it and are parameters too (its id, direction, congestion
/// control, users): not stored as metrics.
pub const FLOW_LABELS: &[&str] = &["flow", "direction", "cc", "users"];

/// A trial's summary (as serialised) as the store's flat columns, in declared order:
/// `events`, `tcp0_goodput_bps`, `cbr1_delay_p95_s`, `queue_down_drops`, and `phases`
/// whole, as the JSON text the store keeps ([`crate::stored_json`]). NaN and infinities are
/// already null in a serialised summary (JSON has neither). Fails naming a field the
/// schema does not declare: a summary and its schema never disagree silently.
pub fn flatten(summary: &serde_json::Value) -> Result<Vec<(String, serde_json::Value)>, String> {
    Ok(flatten_typed(summary)?
        .into_iter()
        .map(|(name, _, v)| (name, v))
        .collect())
}

/// [`flatten`] with each column's declared type (`phases`: [`Dtype::Json`]), for a
/// caller that builds typed columns.
pub fn flatten_typed(
    summary: &serde_json::Value,
) -> Result<Vec<(String, Dtype, serde_json::Value)>, String> {
    use serde_json::Value;
    let obj = summary
        .as_object()
        .ok_or("summary: not an object of fields")?;
    let mut out = Vec::with_capacity(128);
    let mut known = 0;
    for g in SUMMARY {
        if g.key.is_empty() {
            for c in g.columns {
                if let Some(v) = obj.get(c.name) {
                    known += 1;
                    if !PARAMETER_FIELDS.contains(&c.name) {
                        out.push((c.name.to_string(), c.dtype, v.clone()));
                    }
                }
            }
            continue;
        }
        let Some(v) = obj.get(g.key) else { continue };
        known += 1;
        if v.is_null() {
            continue;
        }
        if g.key == "phases" {
            out.push((
                "phases".to_string(),
                Dtype::Json,
                Value::String(crate::stored_json::to_text(v)),
            ));
            continue;
        }
        let items: Vec<(String, &Value)> = match v {
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, x)| (i.to_string(), x))
                .collect(),
            Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), x)).collect(),
            _ => return Err(format!("summary.{}: not a list or a map", g.key)),
        };
        for (i, item) in items {
            let fields = item
                .as_object()
                .ok_or_else(|| format!("summary.{}[{i}]: not an object of fields", g.key))?;
            if let Some(extra) = fields
                .keys()
                .find(|k| !g.columns.iter().any(|c| c.name == k.as_str()))
            {
                return Err(format!(
                    "summary.{}[{i}]: undeclared field {extra:?}",
                    g.key
                ));
            }
            let prefix = g.prefix.replace("{i}", &i);
            for c in g.columns {
                if let Some(x) = fields.get(c.name) {
                    if !FLOW_LABELS.contains(&c.name) {
                        out.push((format!("{prefix}{}", c.name), c.dtype, x.clone()));
                    }
                }
            }
        }
    }
    if known < obj.len() {
        let top = obj.keys().find(|k| {
            !SUMMARY[0].columns.iter().any(|c| c.name == k.as_str())
                && !SUMMARY[1..].iter().any(|g| g.key == k.as_str())
        });
        return Err(format!(
            "summary: undeclared field {:?}",
            top.map_or("?", |k| k)
        ));
    }
    Ok(out)
}

/// A trace table: its name, what a row is, its columns.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub row: &'static str,
    pub columns: &'static [Column],
}

pub const TRACES: &[Table] = &[
    Table {
        name: "cwnd",
        row: "a change of a TCP flow's window",
        columns: &[
            c("time_s", F64, "s", "when"),
            c("flow", U32, "", "flow id"),
            c("cwnd", U32, "segments", "congestion window"),
            c(
                "ssthresh",
                U32,
                "segments",
                "slow-start threshold (not yet set: 4294967295 in the core's arrays, missing in tables and the store)",
            ),
        ],
    },
    Table {
        name: "queue",
        row: "a change of a bottleneck queue's occupancy",
        columns: &[
            c("time_s", F64, "s", "when"),
            coded("direction", "0 down, 1 up", DIRECTIONS),
            c("bytes", U64, "B", "occupancy in bytes"),
            c("packets", U32, "", "occupancy in packets"),
        ],
    },
    Table {
        name: "cbr",
        row: "a CBR or application packet",
        columns: &[
            c("flow", U32, "", "flow id"),
            coded("direction", "0 down, 1 up: the flow's", DIRECTIONS),
            c("seq", U64, "", "sequence number"),
            c("sent_s", F64, "s", "when it was sent"),
            c("bytes", U32, "B", "IP length"),
            n("owd_s", F64, "s", "one-way delay (NaN: did not arrive)"),
            n(
                "extra_delay_s",
                F64,
                "s",
                "one-way delay minus the base delay",
            ),
            coded(
                "fate",
                "0 arrived, 1 dropped by a queue, 2 lost elsewhere, 3 in flight at the end",
                &["arrived", "dropped", "lost", "in_flight"],
            ),
        ],
    },
    Table {
        name: "drops",
        row: "a packet dropped at a bottleneck (or lost on its wire)",
        columns: &[
            c("time_s", F64, "s", "when"),
            coded("direction", "0 down, 1 up", DIRECTIONS),
            c("flow", U32, "", "flow id"),
            c("bytes", U32, "B", "IP length"),
        ],
    },
    Table {
        name: "congestion",
        row: "a TCP congestion event",
        columns: &[
            c("time_s", F64, "s", "when"),
            c("flow", U32, "", "flow id"),
            coded(
                "kind",
                "0 fast retransmit, 1 timeout",
                &["fast_retransmit", "timeout"],
            ),
        ],
    },
    Table {
        name: "classes",
        row: "a time bin of one class at one bottleneck direction",
        columns: &[
            c("time_s", F64, "s", "bin start"),
            coded("direction", "0 down, 1 up", DIRECTIONS),
            coded(
                "class",
                "0 tcp, 1 tagged, 2 other",
                &["tcp", "tagged", "other"],
            ),
            c("arrivals", U64, "", "packets offered"),
            c("drops", U64, "", "packets dropped"),
            c("bytes", U64, "B", "bytes through the bottleneck"),
            n(
                "latency_s",
                F64,
                "s",
                "mean bottleneck latency of the bin's departures",
            ),
        ],
    },
    Table {
        name: "rtt",
        row: "a latency probe of an imported measurement (collateral import)",
        columns: &[
            c("time_s", F64, "s", "when it was sent, from the measurement's start"),
            c("probe", U32, "", "probe stream (the measurement's probes[i])"),
            n("rtt_s", F64, "s", "round trip (NaN: lost)"),
            coded(
                "fate",
                "0 arrived, 1 lost on the way up, 2 on the way down, 3 lost (which way unknown)",
                crate::measured::PROBE_FATES,
            ),
            coded(
                "load",
                "what loaded the link when it was sent: 0 idle, 1 download, 2 upload, 3 both",
                crate::measured::LOADS,
            ),
        ],
    },
    Table {
        name: "throughput",
        row: "an interval of a flow of an imported measurement (collateral import)",
        columns: &[
            c("time_s", F64, "s", "interval end, from the measurement's start"),
            c("interval_s", F64, "s", "interval length"),
            c("flow", U32, "", "flow id (the summary's tcp{i})"),
            coded("direction", "0 down, 1 up", DIRECTIONS),
            c("bytes", U64, "B", "bytes the flow moved in the interval"),
        ],
    },
    Table {
        name: "media",
        row: "a time bin (bin_ns) of a video call; with several calls, each call's bins follow the previous call's, in the summary's order",
        columns: &[
            c("flow", U32, "", "flow id of the call's media stream (its summary's media{i}_flow)"),
            c("time_s", F64, "s", "bin start"),
            n("target_bps", F64, "bit/s", "the controller's target, averaged over the bin"),
            c("sent_bps", F64, "bit/s", "media bytes (IP) sent in the bin, per second"),
            c("received_bps", F64, "bit/s", "media bytes (IP) that arrived in the bin, per second"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_follow_the_cores_numbering() {
        use crate::measure::Fate;
        use crate::tcp::Congestion;
        use collateral_queue::TrafficClass;
        for d in [crate::units::Direction::Down, crate::units::Direction::Up] {
            assert_eq!(DIRECTIONS[d.index()], d.name());
        }
        let col = |t: &str, c: &str| {
            let table = TRACES.iter().find(|x| x.name == t).unwrap();
            table.columns.iter().find(|x| x.name == c).unwrap().codes
        };
        for k in TrafficClass::ALL {
            assert_eq!(col("classes", "class")[k.index()], k.name());
        }
        let fate = col("cbr", "fate");
        assert_eq!(fate[Fate::Arrived as usize], "arrived");
        assert_eq!(fate[Fate::Dropped as usize], "dropped");
        assert_eq!(fate[Fate::Lost as usize], "lost");
        assert_eq!(fate[Fate::InFlight as usize], "in_flight");
        let kind = col("congestion", "kind");
        assert_eq!(kind[Congestion::FastRetransmit as usize], "fast_retransmit");
        assert_eq!(kind[Congestion::Timeout as usize], "timeout");
        // Every u8 column of a trace is a code column.
        for t in TRACES {
            for c in t.columns {
                assert_eq!(
                    c.dtype == Dtype::U8,
                    !c.codes.is_empty(),
                    "{}.{}",
                    t.name,
                    c.name
                );
            }
        }
    }

    /// The store's flat columns: prefixed per flow and direction, labels and parameters
    /// left out, NaN as null, an undeclared field refused by name.
    #[test]
    fn flatten_names_the_stored_columns() {
        let v = serde_json::json!({
            "mode": "simulation", "duration_s": 3.0, "events": 10,
            "tcp": [{"flow": 0, "cc": "cubic", "goodput_bps": 5.0}],
            "queues": {"down": {"drops": 2}, "up": {"drops": 0}},
            "cbr": [], "phases": [{"phase": "all"}]
        });
        let flat = flatten(&v).unwrap();
        let names: Vec<&str> = flat.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "mode",
                "events",
                "tcp0_goodput_bps",
                "queue_down_drops",
                "queue_up_drops",
                "phases"
            ]
        );
        assert_eq!(flat[2].1, serde_json::json!(5.0));
        assert_eq!(flat[5].1, serde_json::json!(r#"[{"phase": "all"}]"#));
        let mut bad = v.clone();
        bad["tcp"][0]["jitter"] = serde_json::json!(1);
        assert_eq!(
            flatten(&bad).unwrap_err(),
            r#"summary.tcp[0]: undeclared field "jitter""#
        );
        bad = v.clone();
        bad["extra"] = serde_json::json!(1);
        assert_eq!(
            flatten(&bad).unwrap_err(),
            r#"summary: undeclared field "extra""#
        );
    }
}
