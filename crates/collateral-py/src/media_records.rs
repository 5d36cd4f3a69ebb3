//! The testbed's records of a video call as Python hands them over (a dict of numpy
//! arrays read from the endpoints' logs), into the core's `MediaRecords`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use collateral_sim::{Scenario, TrialResult};

/// Adds the call to the testbed's trial result `r`: its records from `d`
/// ([`from_dict`]), checked and measured by the core as the simulator's call is.
pub fn add_call(r: &mut TrialResult, sc: &Scenario, d: &Bound<'_, PyDict>) -> PyResult<()> {
    let rec = from_dict(d)?;
    collateral_sim::media::testbed::add_testbed_call(r, sc, &rec).map_err(PyValueError::new_err)
}

/// A call's records from a dict of arrays (trial-time ns): per packet `sent`, `arrived`
/// (the marks as for CBR), `lens`, `frame`; per frame `captured`, `first`, `count`;
/// the target's changes `target_t`, `target_bps`; and the counts `feedback_sent`,
/// `feedback_lost`. A missing or mistyped key is a ValueError naming it.
pub fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<collateral_sim::media::MediaRecords> {
    fn item<'py>(d: &Bound<'py, PyDict>, k: &str) -> PyResult<Bound<'py, PyAny>> {
        d.get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("media records: {k}: missing")))
    }
    fn bad(k: &str, e: impl Into<PyErr>) -> PyErr {
        PyValueError::new_err(format!("media records: {k}: {}", e.into()))
    }
    fn array<T: numpy::Element + Copy>(d: &Bound<'_, PyDict>, k: &str) -> PyResult<Vec<T>> {
        let a = item(d, k)?;
        let a = a.cast::<numpy::PyArray1<T>>().map_err(|e| bad(k, e))?;
        Ok(numpy::PyArrayMethods::readonly(a).as_slice()?.to_vec())
    }
    let arr = |k: &str| array::<u64>(d, k);
    let arr32 = |k: &str| array::<u32>(d, k);
    let count = |k: &str| -> PyResult<u64> { item(d, k)?.extract().map_err(|e| bad(k, e)) };
    let tb = array::<f64>(d, "target_bps")?;
    let (cap, first, n) = (arr("captured")?, arr("first")?, arr32("count")?);
    let tt = arr("target_t")?;
    if first.len() != cap.len() || n.len() != cap.len() || tb.len() != tt.len() {
        return Err(PyValueError::new_err(
            "media records: captured, first and count (and target_t, target_bps) differ in length",
        ));
    }
    Ok(collateral_sim::media::MediaRecords {
        sent: arr("sent")?,
        arrived: arr("arrived")?,
        lens: arr32("lens")?,
        frame: arr32("frame")?,
        frames: cap
            .into_iter()
            .zip(first)
            .zip(n)
            .map(|((a, b), c)| (a, b, c))
            .collect(),
        target: tt.into_iter().zip(tb).collect(),
        feedback_sent: count("feedback_sent")?,
        feedback_lost: count("feedback_lost")?,
    })
}
