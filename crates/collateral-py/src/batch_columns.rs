//! A batch's summaries as typed columns, built without the GIL.
//!
//! The sweep runner stores each batch as an Arrow table. Handing it the flat summaries
//! value by value made a Python object per cell under the GIL (about 25 µs a trial of
//! 108 columns), which every worker thread of a many-core sweep queues for. Here each
//! numeric column is one `Vec` of its declared type ([`Dtype`]), handed over as one
//! numpy array, with a null mask beside it only where some trial lacked the value; the
//! few text columns (`phases` is its stored JSON text) stay lists of `str`.

use std::collections::HashMap;

use collateral_sim::schema::Dtype;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

enum Data {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U8(Vec<u8>),
    /// Text: converted one by one.
    Obj(Vec<Value>),
}

/// One value checked against its column's type: what [`Columns::push_row`] appends.
enum Cell {
    Null,
    F64(f64),
    U64(u64),
    Obj(Value),
}

struct Column {
    name: String,
    data: Data,
    /// True where the trial lacked the value (or it was null: nothing to measure).
    null: Vec<bool>,
}

impl Column {
    fn new(name: String, dtype: Dtype, rows: usize) -> Self {
        let data = match dtype {
            Dtype::F64 => Data::F64(vec![f64::NAN; rows]),
            Dtype::U64 => Data::U64(vec![0; rows]),
            Dtype::U32 => Data::U32(vec![0; rows]),
            Dtype::U8 => Data::U8(vec![0; rows]),
            Dtype::Str | Dtype::Json => Data::Obj(vec![Value::Null; rows]),
        };
        Column {
            name,
            data,
            null: vec![true; rows],
        }
    }

    fn push(&mut self, cell: Cell) {
        let null = matches!(cell, Cell::Null);
        match (&mut self.data, cell) {
            (Data::F64(v), Cell::F64(x)) => v.push(x),
            (Data::U64(v), Cell::U64(x)) => v.push(x),
            // In range: checked by `cell`.
            (Data::U32(v), Cell::U64(x)) => v.push(x as u32),
            (Data::U8(v), Cell::U64(x)) => v.push(x as u8),
            (Data::Obj(v), Cell::Obj(x)) => v.push(x),
            (Data::F64(v), _) => v.push(f64::NAN),
            (Data::U64(v), _) => v.push(0),
            (Data::U32(v), _) => v.push(0),
            (Data::U8(v), _) => v.push(0),
            (Data::Obj(v), _) => v.push(Value::Null),
        }
        self.null.push(null);
    }
}

/// A value as a cell of a `dtype` column, or why it is not one.
fn cell(name: &str, dtype: Dtype, v: Value) -> Result<Cell, String> {
    if v.is_null() {
        return Ok(Cell::Null);
    }
    let max = match dtype {
        Dtype::F64 => {
            return v
                .as_f64()
                .map(Cell::F64)
                .ok_or_else(|| format!("summary column {name}: {v} is not a number"));
        }
        Dtype::Str | Dtype::Json => return Ok(Cell::Obj(v)),
        Dtype::U64 => u64::MAX,
        Dtype::U32 => u32::MAX as u64,
        Dtype::U8 => u8::MAX as u64,
    };
    match v.as_u64() {
        Some(x) if x <= max => Ok(Cell::U64(x)),
        _ => Err(format!(
            "summary column {name}: {v} is not a {}",
            dtype.name()
        )),
    }
}

/// The batch's columns in first-seen order, one row per trial that ran.
#[derive(Default)]
pub struct Columns {
    cols: Vec<Column>,
    index: HashMap<String, usize>,
    rows: usize,
}

impl Columns {
    /// Appends a trial's flat summary (`schema::flatten_typed`); a value that does not
    /// fit its declared type is an error and the row is not added.
    pub fn push_row(&mut self, flat: Vec<(String, Dtype, Value)>) -> Result<(), String> {
        let cells = flat
            .into_iter()
            .map(|(name, dtype, v)| Ok((cell(&name, dtype, v)?, name, dtype)))
            .collect::<Result<Vec<_>, String>>()?;
        let rows = self.rows;
        for (k, (c, name, dtype)) in cells.into_iter().enumerate() {
            // Trials of a batch mostly share their columns in the same order.
            let i = match self.cols.get(k) {
                Some(col) if col.name == name => k,
                _ => match self.index.get(&name) {
                    Some(&i) => i,
                    None => {
                        self.index.insert(name.clone(), self.cols.len());
                        self.cols.push(Column::new(name, dtype, rows));
                        self.cols.len() - 1
                    }
                },
            };
            self.cols[i].push(c);
        }
        self.rows += 1;
        for col in self.cols.iter_mut().filter(|c| c.null.len() < self.rows) {
            col.push(Cell::Null);
        }
        Ok(())
    }

    /// `(columns, nulls)`: `{name: ndarray | list}` and, for the numeric columns with a
    /// missing value, `{name: bool ndarray}` (True where missing).
    pub fn into_py<'py>(
        self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let (cols, nulls) = (PyDict::new(py), PyDict::new(py));
        for c in self.cols {
            let masked = !matches!(c.data, Data::Obj(_)) && c.null.iter().any(|&n| n);
            let values = match c.data {
                Data::F64(v) => v.into_pyarray(py).into_any(),
                Data::U64(v) => v.into_pyarray(py).into_any(),
                Data::U32(v) => v.into_pyarray(py).into_any(),
                Data::U8(v) => v.into_pyarray(py).into_any(),
                Data::Obj(v) => {
                    let items = v
                        .iter()
                        .map(|x| crate::flat_to_py(py, x))
                        .collect::<PyResult<Vec<_>>>()?;
                    PyList::new(py, items)?.into_any()
                }
            };
            if masked {
                nulls.set_item(&c.name, c.null.into_pyarray(py))?;
            }
            cols.set_item(c.name, values)?;
        }
        Ok((cols, nulls))
    }
}
