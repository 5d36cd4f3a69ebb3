//! Python bindings: one call, `simulate(scenario_json) -> dict`. The scenario crosses
//! the boundary once as JSON; the trial runs without the GIL; traces come back as numpy
//! arrays (moved, not copied element by element).

mod batch_columns;
mod measured_py;
mod media_records;

use batch_columns::Columns;
use collateral_sim::error::{ConfigError as CoreConfigError, PathPart};
use collateral_sim::measure;
use collateral_sim::metrics::Traces;
use collateral_sim::{Scenario, TrialResult};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

pyo3::create_exception!(
    _native,
    ConfigError,
    PyValueError,
    "A scenario, queue or distribution the core refuses. `str(e)` is `path: detail` (the detail \
     alone when no key is at fault); `path` is the JSON key path as a tuple of str and \
     int (`(\"cbr\", 0, \"interval_ns\")`, `()` for none) and `detail` the text after it."
);

/// A ConfigError raised with `message` as its text (the core's `path: detail`, with any
/// prefix an entry point adds) and the path and detail of `e` as attributes.
fn config_error_with(py: Python<'_>, message: String, e: &CoreConfigError) -> PyErr {
    let err = ConfigError::new_err(message);
    let parts: Vec<Bound<'_, PyAny>> = e
        .path
        .iter()
        .map(|p| match p {
            PathPart::Key(k) => PyString::new(py, k).into_any(),
            PathPart::Index(i) => match i.into_pyobject(py) {
                Ok(x) => x.into_any(),
                Err(never) => match never {},
            },
        })
        .collect();
    let v = err.value(py);
    let set = PyTuple::new(py, parts)
        .and_then(|t| v.setattr("path", t))
        .and_then(|_| v.setattr("detail", e.detail.as_str()));
    match set {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// [`config_error_with`] with the error's own text.
fn config_error(py: Python<'_>, e: &CoreConfigError) -> PyErr {
    config_error_with(py, e.to_string(), e)
}

fn seconds(v: Vec<u64>) -> Vec<f64> {
    v.into_iter().map(|t| t as f64 / 1e9).collect()
}

fn traces_to_py<'py>(py: Python<'py>, t: Traces) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let d = PyDict::new(py);
    d.set_item("time_s", seconds(t.cwnd.time).into_pyarray(py))?;
    d.set_item("flow", t.cwnd.flow.into_pyarray(py))?;
    d.set_item("cwnd", t.cwnd.cwnd.into_pyarray(py))?;
    d.set_item("ssthresh", t.cwnd.ssthresh.into_pyarray(py))?;
    out.set_item("cwnd", d)?;
    let d = PyDict::new(py);
    d.set_item("time_s", seconds(t.queue.time).into_pyarray(py))?;
    d.set_item("direction", t.queue.direction.into_pyarray(py))?;
    d.set_item("bytes", t.queue.bytes.into_pyarray(py))?;
    d.set_item("packets", t.queue.packets.into_pyarray(py))?;
    out.set_item("queue", d)?;
    let d = PyDict::new(py);
    d.set_item("flow", t.cbr.flow.into_pyarray(py))?;
    d.set_item("direction", t.cbr.direction.into_pyarray(py))?;
    d.set_item("seq", t.cbr.seq.into_pyarray(py))?;
    d.set_item("sent_s", seconds(t.cbr.sent).into_pyarray(py))?;
    d.set_item("bytes", t.cbr.bytes.into_pyarray(py))?;
    d.set_item("owd_s", t.cbr.owd_s.into_pyarray(py))?;
    d.set_item("extra_delay_s", t.cbr.extra_delay_s.into_pyarray(py))?;
    d.set_item("fate", t.cbr.fate.into_pyarray(py))?;
    out.set_item("cbr", d)?;
    let d = PyDict::new(py);
    d.set_item("time_s", seconds(t.drops.time).into_pyarray(py))?;
    d.set_item("direction", t.drops.direction.into_pyarray(py))?;
    d.set_item("flow", t.drops.flow.into_pyarray(py))?;
    d.set_item("bytes", t.drops.bytes.into_pyarray(py))?;
    out.set_item("drops", d)?;
    let d = PyDict::new(py);
    d.set_item("time_s", seconds(t.congestion.time).into_pyarray(py))?;
    d.set_item("flow", t.congestion.flow.into_pyarray(py))?;
    d.set_item("kind", t.congestion.kind.into_pyarray(py))?;
    out.set_item("congestion", d)?;
    let d = PyDict::new(py);
    d.set_item("time_s", seconds(t.classes.time).into_pyarray(py))?;
    d.set_item("direction", t.classes.direction.into_pyarray(py))?;
    d.set_item("class", t.classes.class.into_pyarray(py))?;
    d.set_item("arrivals", t.classes.arrivals.into_pyarray(py))?;
    d.set_item("drops", t.classes.drops.into_pyarray(py))?;
    d.set_item("bytes", t.classes.bytes.into_pyarray(py))?;
    d.set_item("latency_s", t.classes.latency_s.into_pyarray(py))?;
    out.set_item("classes", d)?;
    let d = PyDict::new(py);
    d.set_item("flow", t.media.flow.into_pyarray(py))?;
    d.set_item("time_s", seconds(t.media.time).into_pyarray(py))?;
    d.set_item("target_bps", t.media.target_bps.into_pyarray(py))?;
    d.set_item("sent_bps", t.media.sent_bps.into_pyarray(py))?;
    d.set_item("received_bps", t.media.received_bps.into_pyarray(py))?;
    out.set_item("media", d)?;
    measured_py::add_traces(py, &out, Default::default(), Default::default())?;
    Ok(out)
}

/// `{"summary": dict, "traces": {name: {column: ndarray}}, "wall_s": float}`. The
/// summary becomes Python objects directly (pythonize), so NaN stays NaN: JSON has no
/// NaN and would turn it into None. A trial that asked for no trace gets `{}`: making
/// an array would import numpy, a tenth of a second of a command that prints a table.
fn result_to_py<'py>(
    py: Python<'py>,
    r: TrialResult,
    traced: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let summary =
        pythonize::pythonize(py, &r.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    let traces = if traced {
        traces_to_py(py, r.traces)?
    } else {
        PyDict::new(py)
    };
    out.set_item("traces", traces)?;
    out.set_item("wall_s", r.wall_s)?;
    Ok(out)
}

/// Runs one trial of the scenario (JSON, integer ns and bit/s) and returns
/// `{"summary": dict, "traces": {name: {column: ndarray}}, "wall_s": float}`.
#[pyfunction]
fn simulate<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let sc = Scenario::parse(scenario_json).map_err(|e| config_error(py, &e))?;
    let traced = sc.trace.any();
    let res: TrialResult = py
        .detach(|| collateral_sim::simulate(sc))
        .map_err(PyValueError::new_err)?; // the trial stopped (e.g. its memory watch)
    result_to_py(py, res, traced)
}

/// Runs many trials on `threads` OS threads (0 = all cores) without the GIL, returning,
/// in input order, the result of each as [`simulate`] does (traces only when each
/// scenario asks for them). A bad scenario raises ValueError naming its index before
/// anything runs.
#[pyfunction]
#[pyo3(signature = (scenario_jsons, threads=None))]
fn simulate_many<'py>(
    py: Python<'py>,
    scenario_jsons: Vec<String>,
    threads: Option<&Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let threads: usize = match threads {
        Some(t) => int_arg("threads", t, 0, 4096)?,
        None => 0,
    };
    let scenarios = scenario_jsons
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Scenario::parse(s).map_err(|e| config_error_with(py, format!("scenario {i}: {e}"), &e))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let traced: Vec<bool> = scenarios.iter().map(|s| s.trace.any()).collect();
    let results = py.detach(|| collateral_sim::batch::run_all(scenarios, threads));
    results
        .into_iter()
        .zip(traced)
        .map(|(r, t)| result_to_py(py, r.map_err(PyValueError::new_err)?, t))
        .collect()
}

/// An integer argument within `lo … hi`, or an error naming it: pyo3's own conversion
/// of `-1` or `2**70` to an unsigned type raises an OverflowError that names nothing.
fn int_arg<T: TryFrom<i128>>(name: &str, v: &Bound<'_, PyAny>, lo: i128, hi: i128) -> PyResult<T> {
    if !v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance_of::<pyo3::types::PyBool>() {
        let ty = v
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name}: expected a whole number, got {ty}"
        )));
    }
    v.extract::<i128>()
        .ok()
        .filter(|x| (lo..=hi).contains(x))
        .and_then(|x| T::try_from(x).ok())
        .ok_or_else(|| PyValueError::new_err(format!("{name}: {v} is not in {lo} … {hi}")))
}

/// A flat summary value as a Python object: None, int, float or str (`phases`: its
/// stored JSON text).
fn flat_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A trial's summary as the store's flat columns (the core's declared schema, see
/// `collateral_model::schema::flatten`): `{"events": ..., "tcp0_goodput_bps": ...}`, NaN
/// as None, `phases` as its stored JSON text. ValueError names an undeclared field.
#[pyfunction]
fn flatten_summary<'py>(
    py: Python<'py>,
    summary: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let v: serde_json::Value = pythonize::depythonize(summary)
        .map_err(|e| PyValueError::new_err(format!("summary: {e}")))?;
    let flat = collateral_sim::schema::flatten(&v).map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    for (name, x) in &flat {
        out.set_item(name, flat_to_py(py, x)?)?;
    }
    Ok(out)
}

/// The sweep runner's call: runs the trials on one OS thread without the GIL and
/// returns `{"errors": [str | None per trial], "columns": {name: values per trial that
/// ran}, "nulls": {name: mask}, "traces": [per trial that ran, as simulate gives them],
/// "core_s": float}`. The summaries come back already flat (as [`flatten_summary`]
/// makes them), column by column in first-seen order and typed as declared: a numeric
/// column is a numpy array, with a bool mask in `nulls` (True: missing) where a trial
/// lacks the value; text and records are lists (None where missing). A scenario that
/// does not parse or run is an error in its slot; the others run. `core_s`: the
/// seconds spent without the GIL (parsing, running, building the columns), so that the
/// caller can tell them from the hand-back: making the Python objects and, when other
/// threads hold the GIL, waiting for it. `traces`: the trace tables the batch stores
/// (each trial's dict holds only those; none: `{}`, so a sweep of summaries builds no
/// arrays); all of them when not given. The core records some tables (`congestion`,
/// `media`) whatever the scenario's trace switches say, so the caller names them.
#[pyfunction]
#[pyo3(signature = (scenario_jsons, traces=None))]
fn simulate_batch<'py>(
    py: Python<'py>,
    scenario_jsons: Vec<String>,
    traces: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    type Done = Result<Option<collateral_sim::metrics::Traces>, String>;
    let wanted = traces;
    let traced = wanted.as_ref().is_none_or(|w| !w.is_empty());
    let (done, columns, core_s): (Vec<Done>, Columns, f64) = py.detach(|| {
        let t0 = std::time::Instant::now();
        let mut columns = Columns::default();
        let done = scenario_jsons
            .iter()
            .map(|js| {
                let sc = Scenario::from_json(js)?;
                let r = collateral_sim::simulate(sc)?;
                let v = serde_json::to_value(&r.summary).map_err(|e| e.to_string())?;
                columns.push_row(collateral_sim::schema::flatten_typed(&v)?)?;
                Ok(traced.then_some(r.traces))
            })
            .collect();
        (done, columns, t0.elapsed().as_secs_f64())
    });
    let mut errors = Vec::with_capacity(done.len());
    let mut traces = Vec::new();
    for r in done {
        match r {
            Ok(tr) => {
                errors.push(None);
                let d = match tr {
                    Some(tr) => traces_to_py(py, tr)?,
                    None => PyDict::new(py),
                };
                if let Some(w) = &wanted {
                    for k in d.keys() {
                        if !w.iter().any(|n| k.eq(n.as_str()).unwrap_or(false)) {
                            d.del_item(k)?;
                        }
                    }
                }
                traces.push(d);
            }
            Err(e) => errors.push(Some(e)),
        }
    }
    let (cols, nulls) = columns.into_py(py)?;
    let out = PyDict::new(py);
    out.set_item("errors", errors)?;
    out.set_item("columns", cols)?;
    out.set_item("nulls", nulls)?;
    out.set_item("traces", traces)?;
    out.set_item("core_s", core_s)?;
    Ok(out)
}

/// The testbed's collection: a trial's result in the simulator's schema from what the
/// endpoints and the router logged. `tcp_json`: a JSON list of each bulk flow's records
/// (`bytes_delivered`, `congestion_times`, `retransmits`, ...); `cbr`: per CBR flow,
/// (sent, arrived, lens) arrays in trial-time ns (arrived: `u64::MAX` in flight,
/// `u64::MAX - 1` dropped by the router's queue, `u64::MAX - 2` lost elsewhere; lens
/// empty for fixed-size flows); `router_json`: the router's end-of-run report. Errors
/// are ConfigError; for the records and the report, the text starts `tcp records: ` or
/// `router report: ` and `path` is within that JSON; `media`: [`media_records::add_call`];
/// `web_json`: the web users' records (`{"objects": [...], "pages": [...]}`,
/// [`collateral_sim::web_records::WebRecords`]), measured as the simulator's are.
#[pyfunction]
#[pyo3(signature = (scenario_json, tcp_json, cbr, router_json=None, media=None, web_json=None))]
fn measure_testbed<'py>(
    py: Python<'py>,
    scenario_json: &str,
    tcp_json: &str,
    cbr: Vec<(
        PyReadonlyArray1<'py, u64>,
        PyReadonlyArray1<'py, u64>,
        PyReadonlyArray1<'py, u32>,
    )>,
    router_json: Option<&str>,
    media: Option<Bound<'py, PyDict>>,
    web_json: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = Scenario::parse(scenario_json).map_err(|e| config_error(py, &e))?;
    let tcp: Vec<measure::TcpRecords> = collateral_sim::error::from_json(tcp_json)
        .map_err(|e| config_error_with(py, format!("tcp records: {e}"), &e))?;
    let cbr = cbr
        .iter()
        .map(|(s, a, l)| {
            Ok(measure::RealtimeRecords {
                sent: s.as_slice()?.to_vec(),
                arrived: a.as_slice()?.to_vec(),
                lens: l.as_slice()?.to_vec(),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let router = router_json
        .map(collateral_sim::error::from_json::<measure::RouterReport>)
        .transpose()
        .map_err(|e| config_error_with(py, format!("router report: {e}"), &e))?;
    let mut r = measure::testbed_result(&sc, &tcp, &cbr, router).map_err(PyValueError::new_err)?;
    media
        .map(|m| media_records::add_call(&mut r, &sc, &m))
        .transpose()?;
    if let Some(js) = web_json {
        use collateral_sim::web_records::{web_summaries, WebRecords};
        let rec: WebRecords = collateral_sim::error::from_json(js)
            .map_err(|e| config_error_with(py, format!("web records: {e}"), &e))?;
        r.summary.web = web_summaries(&sc, &rec).map_err(PyValueError::new_err)?;
    }
    result_to_py(py, r, true)
}

/// The declared result schema: `{"version": int, "summary": [group...], "traces":
/// [table...]}`, each group/table with its columns (name, dtype, unit, null, meaning).
#[pyfunction]
fn schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use collateral_sim::schema::{Column, FLOW_LABELS, PARAMETER_FIELDS, SUMMARY, TRACES, VERSION};
    let cols = |cs: &[Column]| -> PyResult<Vec<Bound<'py, PyDict>>> {
        cs.iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("name", c.name)?;
                d.set_item("dtype", c.dtype.name())?;
                d.set_item("unit", c.unit)?;
                d.set_item("null", c.null)?;
                d.set_item("meaning", c.meaning)?;
                d.set_item("codes", c.codes.to_vec())?;
                Ok(d)
            })
            .collect()
    };
    let out = PyDict::new(py);
    out.set_item("version", VERSION)?;
    let groups = SUMMARY
        .iter()
        .map(|g| {
            let d = PyDict::new(py);
            d.set_item("key", g.key)?;
            d.set_item("prefix", g.prefix)?;
            d.set_item("meaning", g.meaning)?;
            d.set_item("columns", cols(g.columns)?)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("summary", groups)?;
    out.set_item("parameter_fields", PARAMETER_FIELDS.to_vec())?;
    out.set_item("flow_labels", FLOW_LABELS.to_vec())?;
    let tables = TRACES
        .iter()
        .map(|t| {
            let d = PyDict::new(py);
            d.set_item("name", t.name)?;
            d.set_item("row", t.row)?;
            d.set_item("columns", cols(t.columns)?)?;
            Ok(d)
        })
        .collect::<PyResult<Vec<_>>>()?;
    out.set_item("traces", tables)?;
    Ok(out)
}

/// The stack profiles and the settings each gives a TCP flow (JSON field names).
#[pyfunction]
fn profiles<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use collateral_sim::tcp::Profile;
    let json = py.import("json")?;
    let out = PyDict::new(py);
    for p in Profile::ALL {
        let cfg =
            serde_json::to_string(&p.config()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        out.set_item(p.name(), json.call_method1("loads", (cfg,))?)?;
    }
    Ok(out)
}

/// The default HTTP model of web users (Mah 1997's empirical distributions), as the
/// scenario JSON spells it.
#[pyfunction]
fn http_model<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
    let js = serde_json::to_string(&collateral_sim::web::HttpModel::mah1997())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (js,))
}

/// A built-in workload's flows (`workload`: `{"kind": "rrul", ...}` as the scenario
/// spells it): `{"workload": the workload with its defaults, "tcp": its TCP flows as
/// `{"direction", "tag", "start_ns"}`, "cbr": the probes as CBR flows}`, for the front to
/// put in the scenario (probes first among its CBR flows).
#[pyfunction]
fn workload_flows<'py>(py: Python<'py>, workload: &str) -> PyResult<Bound<'py, PyAny>> {
    let w: collateral_sim::rrul::Workload = serde_json::from_str(workload)
        .map_err(|e| PyValueError::new_err(format!("workload: {e}")))?;
    let js = serde_json::json!({
        "workload": w,
        "tcp": w
            .tcp_flows()
            .iter()
            .map(|(d, tag, start)| serde_json::json!({"direction": d, "tag": tag, "start_ns": start}))
            .collect::<Vec<_>>(),
        "cbr": w.cbr_flows(),
    });
    py.import("json")?.call_method1("loads", (js.to_string(),))
}

/// A packet-delivery trace in Mahimahi's text format (one millisecond per line):
/// its delivery times and mean rate in bit/s. ValueError names the line at fault.
#[pyfunction]
fn delivery_trace(text: &str) -> PyResult<(Vec<u64>, u64)> {
    let t = collateral_sim::clock::DeliveryTrace::parse(text).map_err(PyValueError::new_err)?;
    let bps = t.mean_bps();
    Ok((t.ms, bps))
}

/// ITU-T G.107 rating and MOS of a G.711 (PLC) call with mean one-way (mouth-to-ear)
/// delay `owd_s` seconds and loss rate `loss` (a fraction).
#[pyfunction]
fn voip_quality(owd_s: f64, loss: f64) -> (f64, f64) {
    let q = collateral_sim::quality::voip_quality(owd_s, loss);
    (q.r_factor, q.mos)
}

/// Bytes on a bottleneck's wire for an IP packet of `ip_bytes`: plus `overhead_bytes`,
/// then with `atm` whole 48-byte cell payloads sent as 53 bytes each — the link's own
/// framing arithmetic, for the inference of a measured line's framing.
#[pyfunction]
fn wire_bytes(ip_bytes: u32, overhead_bytes: u32, atm: bool) -> PyResult<u32> {
    if ip_bytes > 65_535 || overhead_bytes > 65_535 {
        return Err(PyValueError::new_err(format!(
            "wire_bytes: {ip_bytes} + {overhead_bytes}: a packet and its overhead are at most 65535 bytes each"
        )));
    }
    let f = collateral_sim::queue::framing::Framing {
        overhead_bytes,
        atm,
    };
    Ok(f.wire_bytes(ip_bytes))
}

/// Checks a scenario (JSON, as `simulate` takes it) without running it: the types, the
/// ranges and what the trial would hold (`collateral_model::limits`). Raises ConfigError
/// whose text starts with the JSON key path of the first problem (`cbr[0].interval_ns:
/// ...`), the path also as data (`e.path`).
#[pyfunction]
fn validate_scenario(py: Python<'_>, scenario_json: &str) -> PyResult<()> {
    Scenario::parse(scenario_json)
        .map(|_| ())
        .map_err(|e| config_error(py, &e))
}

/// The core's limits (`collateral_model::limits`), for messages and documentation.
#[pyfunction]
fn limits<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use collateral_sim::limits as l;
    let d = PyDict::new(py);
    d.set_item("max_time_ns", l::MAX_TIME_NS)?;
    d.set_item("max_rate_bps", l::MAX_RATE_BPS)?;
    d.set_item("max_packet_bytes", l::MAX_PACKET_BYTES)?;
    d.set_item("max_queue_limit", l::MAX_QUEUE_LIMIT)?;
    d.set_item("max_window_bytes", l::MAX_WINDOW_BYTES)?;
    d.set_item("max_initial_cwnd", l::MAX_INITIAL_CWND)?;
    d.set_item("max_tcp_flows", l::MAX_TCP_FLOWS)?;
    d.set_item("max_cbr_flows", l::MAX_CBR_FLOWS)?;
    d.set_item("max_web_slots", l::MAX_WEB_SLOTS)?;
    d.set_item("memory_budget_bytes", l::MEMORY_BUDGET)?;
    // The longest delivery trace a link takes (what `collateral trace` may write).
    d.set_item("max_trace_lines", collateral_sim::clock::MAX_TRACE_LINES)?;
    // The testbed's accuracy target, which flags a trial `late`.
    d.set_item(
        "release_error_target_ns",
        collateral_sim::measure::RELEASE_ERROR_TARGET_NS,
    )?;
    Ok(d)
}

/// Checks a distribution (`{"kind": "pareto", "scale": 1000, "shape": 1.2}`); raises
/// ConfigError saying what is wrong (path relative to the distribution).
#[pyfunction]
fn validate_dist(py: Python<'_>, dist_json: &str) -> PyResult<()> {
    let d: collateral_sim::dist::Dist =
        collateral_sim::error::from_json(dist_json).map_err(|e| {
            // The `kind` tag is the distribution itself: its error (an unknown kind) is
            // the distribution's, as the text has always said.
            let e = if e.path == [PathPart::Key("kind".into())] {
                CoreConfigError::new(Vec::new(), e.detail)
            } else {
                e
            };
            config_error(py, &e)
        })?;
    // A check's text names its own parameter; it is not a key path.
    d.validate("distribution")
        .map_err(|e| config_error(py, &CoreConfigError::new(Vec::new(), e)))
}

/// Checks an AQM/scheduler queue description (`{"kind": "red", ...}`) for a link of
/// `rate_bps`; raises ConfigError saying what is wrong (path relative to the queue:
/// `("flows",)`).
#[pyfunction]
fn validate_queue(py: Python<'_>, queue_json: &str, rate_bps: &Bound<'_, PyAny>) -> PyResult<()> {
    let max = collateral_sim::limits::MAX_RATE_BPS;
    let rate_bps: u64 = int_arg("rate_bps", rate_bps, 1, max.into())?;
    let c = collateral_sim::scenario::parse_aqm(queue_json).map_err(|e| config_error(py, &e))?;
    // A discipline's check starts with the key at fault ("flows: must be ...").
    c.validate(rate_bps)
        .map_err(|e| config_error(py, &CoreConfigError::parse(&e)))
}

/// The congestion-control algorithms the core implements.
#[pyfunction]
fn congestion_controls() -> Vec<&'static str> {
    collateral_sim::tcp::CcKind::ALL
        .iter()
        .map(|c| c.name())
        .collect()
}

/// Every name a scenario accepts, as the core spells it (the one vocabulary of CLI,
/// TOML, Python and stored data): `{"rule": [...], "aqm": [...], "recovery": [...],
/// "cubic_variant": [...], "htcp_flavor": [...], "cc": [...], "profile": [...], "app":
/// [...], "direction": [...], "trace": [...], "link_presets": {name: {"down_bps": int,
/// "up_bps": int}}, "aqm_info": {kind: {"display": str, "limit_field": str | None,
/// "limit_unit": "packets" | "bytes" | None}}, "cc_info": {cc: {"kernel": str | None}}, "bufferbloat_grades": [...]}`.
/// Lists are in the core's order; `trace` names the trace tables; `aqm_info` and
/// `cc_info` are what each discipline and congestion control declares (display name,
/// the hard limit `--queue` sets, the Linux module); `bufferbloat_grades` the grades
/// DSLReports gives, best first (`scores::grade`).
#[pyfunction]
fn vocabulary<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use collateral_sim::scenario::{LINK_PRESETS, VOCABULARY};
    let out = PyDict::new(py);
    for (key, names) in VOCABULARY {
        out.set_item(*key, names.to_vec())?;
    }
    let traces: Vec<&str> = collateral_sim::schema::TRACES
        .iter()
        .map(|t| t.name)
        .collect();
    out.set_item("trace", traces)?;
    let presets = PyDict::new(py);
    for p in LINK_PRESETS {
        let d = PyDict::new(py);
        d.set_item("down_bps", p.down_bps)?;
        d.set_item("up_bps", p.up_bps)?;
        presets.set_item(p.name, d)?;
    }
    out.set_item("link_presets", presets)?;
    // What each queue discipline and congestion control declares beside itself.
    let aqm = PyDict::new(py);
    for k in collateral_sim::queue::DisciplineConfig::KINDS {
        let d = PyDict::new(py);
        d.set_item("display", k.display)?;
        d.set_item("limit_field", k.hard_limit.map(|h| h.field))?;
        d.set_item("limit_unit", k.hard_limit.map(|h| h.unit.name()))?;
        aqm.set_item(k.kind, d)?;
    }
    out.set_item("aqm_info", aqm)?;
    let cc = PyDict::new(py);
    for k in collateral_sim::tcp::CcKind::ALL {
        let d = PyDict::new(py);
        d.set_item("kernel", k.kernel())?;
        cc.set_item(k.name(), d)?;
    }
    out.set_item("cc_info", cc)?;
    let grades: Vec<&str> = collateral_sim::scores::grade::grades_best_first().collect();
    out.set_item("bufferbloat_grades", grades)?;
    Ok(out)
}

/// The model version that trial keys include: the crate version and a hash of the
/// simulator's and queue disciplines' sources, so any change to the model changes it.
#[pyfunction]
fn version() -> &'static str {
    concat!(
        env!("CARGO_PKG_VERSION"),
        "+",
        env!("COLLATERAL_MODEL_HASH")
    )
}

/// How this module was built: `checked` (the tests' build: debug assertions and overflow
/// checks on in the core, the same results, slower trials) and `pgo` ("use": optimised
/// with a profile; "generate": the instrumented training build; "": neither).
#[pyfunction]
fn build(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("checked", collateral_sim::CHECKED)?;
    out.set_item("pgo", env!("COLLATERAL_PGO"))?;
    Ok(out)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(flatten_summary, m)?)?;
    m.add_function(wrap_pyfunction!(measure_testbed, m)?)?;
    m.add_function(wrap_pyfunction!(measured_py::measure_measured, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(vocabulary, m)?)?;
    m.add_function(wrap_pyfunction!(validate_queue, m)?)?;
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(http_model, m)?)?;
    m.add_function(wrap_pyfunction!(workload_flows, m)?)?;
    m.add_function(wrap_pyfunction!(validate_dist, m)?)?;
    m.add_function(wrap_pyfunction!(voip_quality, m)?)?;
    m.add_function(wrap_pyfunction!(delivery_trace, m)?)?;
    m.add_function(wrap_pyfunction!(wire_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    Ok(())
}
