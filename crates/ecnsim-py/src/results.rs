//! [`Results`] to Python, without a Python object per row.
//!
//! The shape is generic (no table or column name is known here):
//!
//! ```text
//! {"tables": {table: {column: (dtype, payload)}}, "meta": {key: value}, "digest": int}
//! ```
//!
//! where `dtype` is `"<u8"` or `"<f8"` and `payload` is `bytes` of
//! little-endian values (Python calls `numpy.frombuffer(payload, dtype)`),
//! or `dtype` is `"str"` and `payload` a `list[str]`. Tables and columns keep
//! the core's order (dicts are ordered).

use std::collections::HashMap;

use ecnsim_core::stats::{Series, SeriesTable, SeriesValues};
use ecnsim_core::{ColumnData, Results, Table};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

/// numpy dtype string of a little-endian u64 column.
const DTYPE_U64: &str = "<u8";
/// numpy dtype string of a little-endian f64 column.
const DTYPE_F64: &str = "<f8";
/// Marker of a column of names.
const DTYPE_STR: &str = "str";

/// The parts' values, one after the other, as `bytes` of 8-byte little-endian words,
/// written in place.
fn le_bytes<'py, T: Copy>(
    py: Python<'py>,
    parts: &[&[T]],
    to_le: impl Fn(T) -> [u8; 8],
) -> PyResult<Bound<'py, PyBytes>> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    PyBytes::new_with(py, len * 8, |buf| {
        for (word, &x) in buf.chunks_exact_mut(8).zip(parts.iter().flat_map(|p| p.iter())) {
            word.copy_from_slice(&to_le(x));
        }
        Ok(())
    })
}

/// A `list[str]` in which equal values are one shared `str` object: a column of
/// a few distinct names (kinds, states, hosts, apps) costs a pointer per row,
/// not a Python object per row.
fn interned_list<'py>(py: Python<'py>, values: &[String]) -> PyResult<Bound<'py, PyList>> {
    let mut seen: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    let items: Vec<Bound<'py, PyString>> =
        values.iter().map(|v| seen.entry(v.as_str()).or_insert_with(|| PyString::new(py, v)).clone()).collect();
    PyList::new(py, items)
}

/// One series column, read in place from the core, as `(dtype, payload)`: the bytes are
/// written straight from the core's compact store (no table column in between).
fn series_column_to_py<'py>(py: Python<'py>, values: &SeriesValues<'_>) -> PyResult<Bound<'py, PyAny>> {
    let dtype = if values.is_real() { DTYPE_F64 } else { DTYPE_U64 };
    let payload = PyBytes::new_with(py, 8 * values.len(), |buf| {
        values.write_le(buf);
        Ok(())
    })?;
    (dtype, payload).into_pyobject(py).map(Bound::into_any)
}

/// A series table's columns, `{column: (dtype, payload)}`, by table name, in the core's order.
pub(crate) type SeriesColumns<'py> = Vec<(&'static str, Bound<'py, PyDict>)>;

/// The series tables so far, read in place: the core's store stays as it is.
pub(crate) fn series_to_py<'py>(py: Python<'py>, series: &[SeriesTable<'_>]) -> PyResult<SeriesColumns<'py>> {
    let mut out = Vec::with_capacity(series.len());
    for view in series {
        let columns = PyDict::new(py);
        for (name, values) in &view.columns {
            columns.set_item(name, series_column_to_py(py, values)?)?;
        }
        out.push((view.name, columns));
    }
    Ok(out)
}

/// A finished run's series, moved out of the core: each column's storage is freed as soon as
/// its bytes are written ([`Series::hand_over`]), so the store and Python's columns do not
/// coexist (at N = 9,600 the store is about 1 GB).
pub(crate) fn hand_over_series(py: Python<'_>, series: Series) -> PyResult<SeriesColumns<'_>> {
    let mut out: SeriesColumns<'_> = Vec::with_capacity(2);
    series.hand_over(|table, column, values| {
        if out.last().is_none_or(|(t, _)| *t != table) {
            out.push((table, PyDict::new(py)));
        }
        let (_, columns) = out.last().expect("pushed above");
        columns.set_item(column, series_column_to_py(py, values)?)
    })?;
    Ok(out)
}

/// One column as `(dtype, payload)`.
fn column_to_py<'py>(py: Python<'py>, data: &ColumnData) -> PyResult<Bound<'py, PyAny>> {
    let pair = match data {
        ColumnData::U64(v) => (DTYPE_U64, le_bytes(py, &[v], u64::to_le_bytes)?.into_any()),
        ColumnData::F64(v) => (DTYPE_F64, le_bytes(py, &[v], f64::to_le_bytes)?.into_any()),
        ColumnData::Str(v) => (DTYPE_STR, interned_list(py, v)?.into_any()),
        ColumnData::Dict { codes, names } => {
            // One `str` per distinct name; the list holds a pointer per row.
            let strs: Vec<Bound<'py, PyString>> = names.iter().map(|n| PyString::new(py, n)).collect();
            let items = codes.iter().map(|&c| strs[c as usize].clone());
            (DTYPE_STR, PyList::new(py, items)?.into_any())
        }
    };
    pair.into_pyobject(py).map(Bound::into_any)
}

/// One column as `(dtype, payload)`: `front`'s values, then `data`'s (one column of the
/// same kind, or names either way), without building the joined column.
fn joined_column_to_py<'py, 'c>(
    py: Python<'py>,
    front: &'c ColumnData,
    data: &'c ColumnData,
) -> PyResult<Bound<'py, PyAny>> {
    let pair = match (front, data) {
        (ColumnData::U64(a), ColumnData::U64(b)) => (DTYPE_U64, le_bytes(py, &[a, b], u64::to_le_bytes)?.into_any()),
        (ColumnData::F64(a), ColumnData::F64(b)) => (DTYPE_F64, le_bytes(py, &[a, b], f64::to_le_bytes)?.into_any()),
        (a, b) => {
            // Names: one `str` per distinct name across both parts; the list holds a pointer per row.
            let mut seen: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
            let mut intern = |name: &'c str| seen.entry(name).or_insert_with(|| PyString::new(py, name)).clone();
            let mut items: Vec<Bound<'py, PyString>> = Vec::with_capacity(a.len() + b.len());
            for part in [a, b] {
                match part {
                    ColumnData::Dict { codes, names } => {
                        items.extend(codes.iter().map(|&c| intern(&names[c as usize])))
                    }
                    ColumnData::Str(v) => items.extend(v.iter().map(|n| intern(n))),
                    ColumnData::U64(_) | ColumnData::F64(_) => {
                        return Err(pyo3::exceptions::PyRuntimeError::new_err("joined columns of different kinds"))
                    }
                }
            }
            (DTYPE_STR, PyList::new(py, items)?.into_any())
        }
    };
    pair.into_pyobject(py).map(Bound::into_any)
}

/// One table as `{column: (dtype, payload)}`.
pub(crate) fn table_to_py<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let columns = PyDict::new(py);
    for column in &table.columns {
        columns.set_item(&column.name, column_to_py(py, &column.data)?)?;
    }
    Ok(columns)
}

/// The whole [`Results`] as `{"tables": ..., "meta": ..., "digest": ...}`, with
/// `front`'s rows (records drained from the core) before those of the table of its name.
///
/// The columns of a table named in `series` are those of `series` (the core's time series as
/// [`series_to_py`] or [`hand_over_series`] wrote them: `results` then comes from
/// `Simulation::results_without_series`).
///
/// `digest` is `results.digest_with_series(front, series)`, computed by the caller without
/// the GIL. Each column (of `results` and of `front`) is dropped once converted, so the core's
/// copy and Python's coexist one column at a time (a run of many connections has big
/// tables), and `front` is read in place, never joined to the core's rows in a copy.
pub(crate) fn results_to_py<'py>(
    py: Python<'py>,
    results: Results,
    digest: u64,
    mut front: Option<Table>,
    series: &[(&str, Bound<'py, PyDict>)],
) -> PyResult<Bound<'py, PyDict>> {
    let tables = PyDict::new(py);
    for table in results.tables {
        let columns = PyDict::new(py);
        if let Some((_, series_columns)) = series.iter().find(|(name, _)| *name == table.name) {
            tables.set_item(&table.name, series_columns)?;
            continue;
        }
        let mut front = front.as_mut().filter(|f| f.name == table.name && f.rows() > 0);
        for (i, column) in table.columns.into_iter().enumerate() {
            let value = match front.as_mut().map(|f| &mut f.columns[i]) {
                Some(f) if f.name == column.name => {
                    let value = joined_column_to_py(py, &f.data, &column.data)?;
                    f.data = ColumnData::U64(Vec::new());
                    value
                }
                Some(_) => return Err(pyo3::exceptions::PyRuntimeError::new_err("drained rows with other columns")),
                None => column_to_py(py, &column.data)?,
            };
            columns.set_item(&column.name, value)?;
        }
        tables.set_item(&table.name, columns)?;
    }
    let meta = PyDict::new(py);
    for (key, value) in &results.meta {
        meta.set_item(key, value)?;
    }
    let out = PyDict::new(py);
    out.set_item("tables", tables)?;
    out.set_item("meta", meta)?;
    out.set_item("digest", digest)?;
    Ok(out)
}

/// The name of each row's id as a dictionary column: `ids` and `keys` are bytes of
/// little-endian u64 words, `names[i]` is the name of id `keys[i]`. Returns `(codes,
/// names)`: bytes of little-endian u32 indices into `names` (with `""` appended if an id
/// is not among `keys`), the `"dict"` column form `Table` and the Parquet writer read.
/// A row costs a lookup in a table of the keys, and no Python object.
#[pyfunction]
pub(crate) fn name_codes<'py>(
    py: Python<'py>,
    ids: &[u8],
    keys: &[u8],
    mut names: Vec<String>,
) -> PyResult<(Bound<'py, PyBytes>, Vec<String>)> {
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8-byte chunks"));
    if ids.len() % 8 != 0 || keys.len() % 8 != 0 || keys.len() / 8 != names.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "name_codes: {} id bytes, {} key bytes and {} names (8 bytes per id and key, a name per key)",
            ids.len(),
            keys.len(),
            names.len()
        )));
    }
    // Keys are ids such as flow serials and queue indices: usually small and dense, so a
    // direct table; otherwise a map.
    let key_values: Vec<u64> = keys.chunks_exact(8).map(word).collect();
    let dense = key_values.iter().max().is_some_and(|&m| m < 4 * key_values.len() as u64 + 1024);
    let unnamed = u32::try_from(names.len()).map_err(|_| pyo3::exceptions::PyValueError::new_err("too many names"))?;
    let mut missing = false;
    let codes: Vec<u32> = if dense || key_values.is_empty() {
        let len = key_values.iter().max().map_or(0, |&m| m as usize + 1);
        let mut table = vec![unnamed; len];
        // The last of equal keys names them, as a dict built in order (keys are unique in
        // the tables this reads).
        for (i, &k) in key_values.iter().enumerate() {
            table[k as usize] = i as u32;
        }
        ids.chunks_exact(8)
            .map(|w| {
                let code = usize::try_from(word(w)).ok().and_then(|i| table.get(i).copied()).unwrap_or(unnamed);
                missing |= code == unnamed;
                code
            })
            .collect()
    } else {
        let mut map = HashMap::with_capacity(key_values.len());
        for (i, &k) in key_values.iter().enumerate() {
            map.insert(k, i as u32);
        }
        ids.chunks_exact(8)
            .map(|w| {
                let code = map.get(&word(w)).copied().unwrap_or(unnamed);
                missing |= code == unnamed;
                code
            })
            .collect()
    };
    if missing {
        names.push(String::new());
    }
    let bytes = PyBytes::new_with(py, codes.len() * 4, |buf| {
        for (out, c) in buf.chunks_exact_mut(4).zip(&codes) {
            out.copy_from_slice(&c.to_le_bytes());
        }
        Ok(())
    })?;
    Ok((bytes, names))
}
