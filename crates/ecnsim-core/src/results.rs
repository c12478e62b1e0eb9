//! Results as column tables, the form every consumer wants: the Python layer
//! turns each numeric column into a numpy array without per-row objects, and
//! Parquet and pandas take columns directly.
//!
//! A [`Results`] holds named [`Table`]s; each table is a list of equally long
//! [`Column`]s. Table and column names are part of the public interface and
//! are documented in `docs/results.md`.

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Unsigned counters, ids and nanosecond times.
    U64(Vec<u64>),
    /// Real-valued measures (rates, averages, seconds). `NaN` means "none".
    F64(Vec<f64>),
    /// Names.
    Str(Vec<String>),
}

impl ColumnData {
    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
        }
    }
    /// True if there are no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Column name (snake_case, with the unit as suffix: `_bytes`, `_s`, `_bps`).
    pub name: String,
    /// The values.
    pub data: ColumnData,
}

/// A named table of equally long columns.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    /// Table name (`flows`, `queues`, `flow_series`, `queue_series`).
    pub name: String,
    /// The columns, in a fixed order.
    pub columns: Vec<Column>,
}

impl Table {
    /// An empty table called `name`.
    #[must_use]
    pub fn new(name: &str) -> Self {
        Table { name: name.to_owned(), columns: Vec::new() }
    }
    /// Append a column of counters.
    pub fn push_u64(&mut self, name: &str, v: Vec<u64>) {
        self.columns.push(Column { name: name.to_owned(), data: ColumnData::U64(v) });
    }
    /// Append a column of reals.
    pub fn push_f64(&mut self, name: &str, v: Vec<f64>) {
        self.columns.push(Column { name: name.to_owned(), data: ColumnData::F64(v) });
    }
    /// Append a column of names.
    pub fn push_str(&mut self, name: &str, v: Vec<String>) {
        self.columns.push(Column { name: name.to_owned(), data: ColumnData::Str(v) });
    }
    /// Number of rows (0 for a table without columns).
    #[must_use]
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.data.len())
    }
    /// The column called `name`.
    #[must_use]
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|c| c.name == name).map(|c| &c.data)
    }
}

/// Everything a run produced.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Results {
    /// The tables: `flows`, `queues`, `flow_series`, `queue_series`.
    pub tables: Vec<Table>,
    /// Run metadata as key/value strings: `seed`, `end_time_s`, `warmup_s`,
    /// `finished` ("true"/"false"), `resolved_spec` (JSON of the fully
    /// resolved scenario), `ecnsim_version`.
    pub meta: Vec<(String, String)>,
}

impl Results {
    /// The table called `name`.
    #[must_use]
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The metadata value for `key`.
    #[must_use]
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// A 64-bit FNV-1a digest of every table (names, column names and the
    /// exact bits of every value) and of the metadata except the version.
    /// Equal digests mean bit-identical results.
    #[must_use]
    pub fn digest(&self) -> u64 {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        for t in &self.tables {
            h.bytes(t.name.as_bytes());
            for c in &t.columns {
                h.bytes(c.name.as_bytes());
                match &c.data {
                    ColumnData::U64(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                    ColumnData::F64(v) => v.iter().for_each(|x| h.bytes(&x.to_bits().to_le_bytes())),
                    ColumnData::Str(v) => v.iter().for_each(|s| {
                        h.bytes(s.as_bytes());
                        h.bytes(&[0xff]);
                    }),
                }
            }
        }
        for (k, v) in &self.meta {
            if k != "ecnsim_version" {
                h.bytes(k.as_bytes());
                h.bytes(v.as_bytes());
            }
        }
        h.0
    }
}

struct Fnv(u64);
impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
