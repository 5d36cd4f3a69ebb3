//! An imported measurement's records (JSON from `collateral.measured.records`) into a
//! trial of mode "measured": summary and the `cbr`, `rtt` and `throughput` traces.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use collateral_sim::measured::{measured_result, MeasuredRecords, RttTrace, ThroughputTrace};
use collateral_sim::metrics::Traces;
use collateral_sim::Scenario;

/// `{"summary": dict, "traces": {name: {column: ndarray}}}` of the measurement in
/// `records_json`; `scenario_json`, when given, is the link it is compared with (its
/// warm-up and base delays). Bad records: ValueError naming the part at fault.
#[pyfunction]
#[pyo3(signature = (records_json, scenario_json=None))]
pub fn measure_measured<'py>(
    py: Python<'py>,
    records_json: &str,
    scenario_json: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let rec: MeasuredRecords = collateral_sim::error::from_json(records_json)
        .map_err(|e| PyValueError::new_err(format!("measured records: {e}")))?;
    let sc = scenario_json
        .map(Scenario::parse)
        .transpose()
        .map_err(|e| crate::config_error(py, &e))?;
    let m = measured_result(&rec, sc.as_ref()).map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    let summary =
        pythonize::pythonize(py, &m.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
    out.set_item("summary", summary)?;
    let all = crate::traces_to_py(
        py,
        Traces {
            cbr: m.cbr,
            ..Default::default()
        },
    )?;
    add_traces(py, &all, m.rtt, m.throughput)?;
    let traces = PyDict::new(py);
    for name in ["cbr", "rtt", "throughput"] {
        traces.set_item(name, all.get_item(name)?)?;
    }
    out.set_item("traces", traces)?;
    Ok(out)
}

/// The `rtt` and `throughput` tables into `out` (a trial's traces): an imported
/// measurement's, or empty ones for a simulated or emulated trial, so that every trial
/// hands over every declared table.
pub fn add_traces<'py>(
    py: Python<'py>,
    out: &Bound<'py, PyDict>,
    rtt: RttTrace,
    thr: ThroughputTrace,
) -> PyResult<()> {
    let d = PyDict::new(py);
    d.set_item("time_s", crate::seconds(rtt.time).into_pyarray(py))?;
    d.set_item("probe", rtt.probe.into_pyarray(py))?;
    d.set_item("rtt_s", rtt.rtt_s.into_pyarray(py))?;
    d.set_item("fate", rtt.fate.into_pyarray(py))?;
    d.set_item("load", rtt.load.into_pyarray(py))?;
    out.set_item("rtt", d)?;
    let d = PyDict::new(py);
    d.set_item("time_s", crate::seconds(thr.time).into_pyarray(py))?;
    d.set_item("interval_s", thr.interval_s.into_pyarray(py))?;
    d.set_item("flow", thr.flow.into_pyarray(py))?;
    d.set_item("direction", thr.direction.into_pyarray(py))?;
    d.set_item("bytes", thr.bytes.into_pyarray(py))?;
    out.set_item("throughput", d)
}
