//! Python bindings: one call, `simulate(scenario_json) -> dict`. The scenario crosses
//! the boundary once as JSON; the trial runs without the GIL; traces come back as numpy
//! arrays (moved, not copied element by element).

use collateral_sim::metrics::Traces;
use collateral_sim::{Scenario, TrialResult};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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
    d.set_item("seq", t.cbr.seq.into_pyarray(py))?;
    d.set_item("sent_s", seconds(t.cbr.sent).into_pyarray(py))?;
    d.set_item("owd_s", t.cbr.owd_s.into_pyarray(py))?;
    d.set_item("extra_delay_s", t.cbr.extra_delay_s.into_pyarray(py))?;
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
    Ok(out)
}

/// Runs one trial of the scenario (JSON, integer ns and bit/s) and returns
/// `{"summary": dict, "traces": {name: {column: ndarray}}}`.
#[pyfunction]
fn simulate<'py>(py: Python<'py>, scenario_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let sc = Scenario::from_json(scenario_json).map_err(PyValueError::new_err)?;
    let res: TrialResult = py
        .detach(|| collateral_sim::simulate(sc))
        .map_err(PyValueError::new_err)?;
    let summary_json = serde_json::to_string(&res.summary)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let json = py.import("json")?;
    let summary = json.call_method1("loads", (summary_json,))?;
    let out = PyDict::new(py);
    out.set_item("summary", summary)?;
    out.set_item("traces", traces_to_py(py, res.traces)?)?;
    Ok(out)
}

/// The version of the native core (the model version that trial keys include).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
