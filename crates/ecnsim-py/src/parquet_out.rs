//! Parquet files written from the columns as the core hands them to Python,
//! without pyarrow (whose import alone costs more CPU than a whole
//! 120-flow run).
//!
//! A file holds one table: one column per `(name, (dtype, payload))`, in
//! order, where `dtype` is `"<u8"`/`"<i8"` (`payload`: bytes of little-endian
//! 64-bit integers), `"<f8"` (bytes of little-endian doubles), `"str"` (a
//! `list[str]`) or `"dict"` (`(codes, names)`: bytes of little-endian u32
//! indices into the `list[str]` `names`), the forms `results.rs` produces.
//!
//! The files are those pyarrow's `pq.write_table` wrote from the same columns
//! (what `Results.write_parquet` did before): every column optional (nullable,
//! no nulls), integers `INT64` with no annotation (Arrow `int64`; a counter
//! above 2^63 - 1 is refused, as before), reals `DOUBLE`, names `BYTE_ARRAY`
//! annotated `String`, dictionary-encoded pages, Snappy, row groups of at most
//! 2^20 rows, and pyarrow's `ARROW:schema` key (the Arrow schema, written by
//! [`crate::arrow_schema`]: the same schema once decoded, not the same bytes).
//! What differs: the `created_by` string (parquet-rs) and data pages of format
//! version 1 (pyarrow: 2.6; the same logical types for these columns).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use pyo3::exceptions::{PyOSError, PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::arrow_schema::{arrow_schema_metadata, ArrowType};

/// Rows per row group (pyarrow's default maximum, 1 Mi rows).
const ROW_GROUP_ROWS: usize = 1 << 20;

/// One column as Python handed it over.
enum Encoded<'py> {
    /// Little-endian u64 words (refused above `i64::MAX`).
    U64(Bound<'py, PyBytes>),
    /// Little-endian i64 words.
    I64(Bound<'py, PyBytes>),
    /// Little-endian f64 words.
    F64(Bound<'py, PyBytes>),
    /// Names, one per row (equal names share their bytes).
    Names(Vec<ByteArray>),
    /// Names as little-endian u32 codes into `names` (checked), expanded a row group at a
    /// time: a name per row for the whole table would take 32 bytes a row.
    Dict { codes: Bound<'py, PyBytes>, names: Vec<ByteArray> },
}

/// One column's values, borrowed from the Python objects where they are numbers.
enum Values<'a> {
    U64(&'a [u8]),
    I64(&'a [u8]),
    F64(&'a [u8]),
    Names(&'a [ByteArray]),
    Dict { codes: &'a [u8], names: &'a [ByteArray] },
}

impl Encoded<'_> {
    fn values(&self) -> Values<'_> {
        match self {
            Encoded::U64(b) => Values::U64(b.as_bytes()),
            Encoded::I64(b) => Values::I64(b.as_bytes()),
            Encoded::F64(b) => Values::F64(b.as_bytes()),
            Encoded::Names(v) => Values::Names(v),
            Encoded::Dict { codes, names } => Values::Dict { codes: codes.as_bytes(), names },
        }
    }
}

impl Values<'_> {
    fn len(&self) -> usize {
        match self {
            Values::U64(b) | Values::I64(b) | Values::F64(b) => b.len() / 8,
            Values::Names(v) => v.len(),
            Values::Dict { codes, .. } => codes.len() / 4,
        }
    }
}

/// Rows `range` of 8-byte little-endian words.
fn words(bytes: &[u8], range: std::ops::Range<usize>) -> impl Iterator<Item = [u8; 8]> + '_ {
    bytes[range.start * 8..range.end * 8].chunks_exact(8).map(|w| w.try_into().expect("8-byte chunks"))
}

/// Little-endian u32 codes as indices.
fn dict_codes(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4-byte chunks")) as usize)
}

/// Names as byte arrays, each distinct name's bytes allocated once.
struct Interner(HashMap<String, ByteArray>);

impl Interner {
    fn get(&mut self, s: &str) -> ByteArray {
        if let Some(v) = self.0.get(s) {
            return v.clone();
        }
        let v = ByteArray::from(s.as_bytes().to_vec());
        self.0.insert(s.to_owned(), v.clone());
        v
    }
}

/// A `list[str]` as byte arrays.
fn names_of(list: &Bound<'_, PyAny>, interner: &mut Interner) -> PyResult<Vec<ByteArray>> {
    let list = list.cast::<PyList>()?;
    let mut out = Vec::with_capacity(list.len());
    for item in list.iter() {
        out.push(interner.get(&item.cast::<PyString>()?.to_cow()?));
    }
    Ok(out)
}

/// One encoded column (`(dtype, payload)`).
fn encoded<'py>(name: &str, pair: &Bound<'py, PyAny>) -> PyResult<Encoded<'py>> {
    let pair = pair.cast::<PyTuple>()?;
    let dtype: String = pair.get_item(0)?.extract()?;
    let payload = pair.get_item(1)?;
    let bytes = |p: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyBytes>> {
        let b = p.cast_into::<PyBytes>()?;
        if b.as_bytes().len() % 8 != 0 {
            return Err(PyValueError::new_err(format!("column {name:?}: {} bytes, not 8-byte words", b.len()?)));
        }
        Ok(b)
    };
    let mut interner = Interner(HashMap::new());
    Ok(match dtype.as_str() {
        "<u8" => Encoded::U64(bytes(payload)?),
        "<i8" => Encoded::I64(bytes(payload)?),
        "<f8" => Encoded::F64(bytes(payload)?),
        "str" => Encoded::Names(names_of(&payload, &mut interner)?),
        "dict" => {
            let parts = payload.cast::<PyTuple>()?;
            let codes = parts.get_item(0)?.cast_into::<PyBytes>()?;
            let names: Vec<ByteArray> = names_of(&parts.get_item(1)?, &mut interner)?.into_iter().collect();
            if codes.as_bytes().len() % 4 != 0 {
                return Err(PyValueError::new_err(format!("column {name:?}: codes are not 4-byte words")));
            }
            if let Some(c) = dict_codes(codes.as_bytes()).find(|&c| c >= names.len()) {
                return Err(PyValueError::new_err(format!(
                    "column {name:?}: code {c} outside its {} names",
                    names.len()
                )));
            }
            Encoded::Dict { codes, names }
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "column {name:?}: unknown dtype {other:?} (one of \"<u8\", \"<i8\", \"<f8\", \"str\", \"dict\")"
            )))
        }
    })
}

/// Why a write failed.
enum WriteError {
    /// A counter above `i64::MAX` in this column.
    Overflow(String),
    /// The file could not be written.
    Io(String),
}

impl From<parquet::errors::ParquetError> for WriteError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        WriteError::Io(e.to_string())
    }
}

/// The table's schema: every column optional, as pyarrow writes a nullable Arrow field.
fn schema(columns: &[(String, Values<'_>)]) -> Result<Type, WriteError> {
    let fields = columns
        .iter()
        .map(|(name, values)| {
            let builder = match values {
                Values::U64(_) | Values::I64(_) => Type::primitive_type_builder(name, PhysicalType::INT64),
                Values::F64(_) => Type::primitive_type_builder(name, PhysicalType::DOUBLE),
                Values::Names(_) | Values::Dict { .. } => Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                    .with_logical_type(Some(LogicalType::String)),
            };
            Ok(Arc::new(builder.with_repetition(Repetition::OPTIONAL).build()?))
        })
        .collect::<Result<Vec<_>, WriteError>>()?;
    Ok(Type::group_type_builder("schema").with_fields(fields).build()?)
}

/// Write `columns` (equally long) as one Parquet file at `path`.
fn write(path: &str, columns: &[(String, Values<'_>)]) -> Result<(), WriteError> {
    let rows = columns.first().map_or(0, |(_, v)| v.len());
    let arrow_types: Vec<(&str, ArrowType)> = columns
        .iter()
        .map(|(name, values)| {
            let ty = match values {
                Values::U64(_) | Values::I64(_) => ArrowType::Int64,
                Values::F64(_) => ArrowType::Float64,
                Values::Names(_) | Values::Dict { .. } => ArrowType::Utf8,
            };
            (name.as_str(), ty)
        })
        .collect();
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(Compression::SNAPPY)
        // As pyarrow: the Arrow schema, for readers that restore Arrow types from it.
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "ARROW:schema".to_owned(),
            arrow_schema_metadata(&arrow_types),
        )]))
        .build();
    let file = File::create(path).map_err(|e| WriteError::Io(format!("{path}: {e}")))?;
    let mut writer = SerializedFileWriter::new(BufWriter::new(file), Arc::new(schema(columns)?), Arc::new(props))?;
    let mut start = 0;
    // A table without rows still gets its (empty) row group, as pyarrow writes one.
    while start < rows || start == 0 {
        let end = rows.min(start + ROW_GROUP_ROWS);
        let defined = vec![1_i16; end - start];
        let mut group = writer.next_row_group()?;
        for (name, values) in columns {
            let mut column = group.next_column()?.ok_or_else(|| WriteError::Io("fewer columns than fields".into()))?;
            match values {
                Values::U64(b) => {
                    let v = words(b, start..end)
                        .map(|w| i64::try_from(u64::from_le_bytes(w)))
                        .collect::<Result<Vec<i64>, _>>()
                        .map_err(|_| WriteError::Overflow(name.clone()))?;
                    column.typed::<Int64Type>().write_batch(&v, Some(&defined), None)?;
                }
                Values::I64(b) => {
                    let v: Vec<i64> = words(b, start..end).map(i64::from_le_bytes).collect();
                    column.typed::<Int64Type>().write_batch(&v, Some(&defined), None)?;
                }
                Values::F64(b) => {
                    let v: Vec<f64> = words(b, start..end).map(f64::from_le_bytes).collect();
                    column.typed::<DoubleType>().write_batch(&v, Some(&defined), None)?;
                }
                Values::Names(v) => {
                    column.typed::<ByteArrayType>().write_batch(&v[start..end], Some(&defined), None)?;
                }
                Values::Dict { codes, names } => {
                    // Codes were checked against the names when the column was read.
                    let v: Vec<ByteArray> = dict_codes(&codes[start * 4..end * 4]).map(|c| names[c].clone()).collect();
                    column.typed::<ByteArrayType>().write_batch(&v, Some(&defined), None)?;
                }
            }
            column.close()?;
        }
        group.close()?;
        if end == rows {
            break;
        }
        start = end;
    }
    writer.close()?;
    Ok(())
}

/// Write one table as a Parquet file at `path`: `columns` maps each column's name to
/// `(dtype, payload)` as `results.rs` produces them (see the module doc). The GIL is
/// released while the file is written.
///
/// Errors: `ValueError` for columns of different lengths or an unknown dtype,
/// `OverflowError` for a counter above 2^63 - 1, `OSError` if the file cannot be written.
#[pyfunction]
pub(crate) fn write_parquet(py: Python<'_>, path: &str, columns: &Bound<'_, PyDict>) -> PyResult<()> {
    let mut owned = Vec::with_capacity(columns.len());
    for (name, pair) in columns.iter() {
        let name: String = name.extract()?;
        let column = encoded(&name, &pair)?;
        owned.push((name, column));
    }
    let views: Vec<(String, Values<'_>)> = owned.iter().map(|(n, c)| (n.clone(), c.values())).collect();
    if let Some((first, v)) = views.first() {
        if let Some((name, w)) = views.iter().find(|(_, w)| w.len() != v.len()) {
            return Err(PyValueError::new_err(format!(
                "column {name:?} has {} rows, column {first:?} {}",
                w.len(),
                v.len()
            )));
        }
    }
    match py.detach(|| write(path, &views)) {
        Ok(()) => Ok(()),
        Err(WriteError::Overflow(name)) => {
            Err(PyOverflowError::new_err(format!("column '{name}': a counter exceeds the int64 range")))
        }
        Err(WriteError::Io(msg)) => Err(PyOSError::new_err(format!("cannot write Parquet file: {msg}"))),
    }
}
