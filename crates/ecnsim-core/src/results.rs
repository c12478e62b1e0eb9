//! Results as column tables, the form every consumer wants: the Python layer
//! turns each numeric column into a numpy array without per-row objects, and
//! Parquet and pandas take columns directly.
//!
//! A [`Results`] holds named [`Table`]s; each table is a list of equally long
//! [`Column`]s. Table and column names are part of the public interface and
//! are documented in `docs/results.md`.

use crate::stats::SeriesTable;

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Unsigned counters, ids and nanosecond times.
    U64(Vec<u64>),
    /// Real-valued measures (rates, averages, seconds). `NaN` means "none".
    F64(Vec<f64>),
    /// Names.
    Str(Vec<String>),
    /// Names from a small set: `names[codes[i]]` is row `i`'s (a column of a few distinct
    /// values, such as kinds, states and hosts, costs 4 bytes per row, not a string).
    Dict {
        /// Each row's index into `names`.
        codes: Vec<u32>,
        /// The distinct names.
        names: Vec<String>,
    },
}

impl ColumnData {
    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Str(v) => v.len(),
            ColumnData::Dict { codes, .. } => codes.len(),
        }
    }
    /// The names of a `Str` or `Dict` column, row by row (`None` for numbers).
    #[must_use]
    pub fn strings(&self) -> Option<Vec<String>> {
        match self {
            ColumnData::Str(v) => Some(v.clone()),
            ColumnData::Dict { codes, names } => Some(codes.iter().map(|&c| names[c as usize].clone()).collect()),
            ColumnData::U64(_) | ColumnData::F64(_) => None,
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
    /// Append a column of names from a small set: row `i` is `names[codes[i]]`.
    ///
    /// # Panics
    /// If a code is not an index of `names`.
    pub fn push_dict(&mut self, name: &str, codes: Vec<u32>, names: Vec<String>) {
        assert!(codes.iter().all(|&c| (c as usize) < names.len()), "column {name}: a code outside its names");
        self.columns.push(Column { name: name.to_owned(), data: ColumnData::Dict { codes, names } });
    }
    /// True once the table has columns (possibly no rows).
    #[must_use]
    pub fn has_columns(&self) -> bool {
        !self.columns.is_empty()
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

    /// Append `other`'s rows after this table's (a table without columns takes `other`'s
    /// columns). A `Dict` column keeps one list of names: `other`'s codes are translated.
    ///
    /// # Panics
    /// If `other` has rows and its columns differ from this table's in name, order or kind.
    pub fn append(&mut self, other: Table) {
        if self.columns.is_empty() {
            self.columns = other.columns;
            return;
        }
        if other.rows() == 0 {
            return;
        }
        assert_eq!(self.columns.len(), other.columns.len(), "table {}: appended rows have other columns", self.name);
        for (mine, theirs) in self.columns.iter_mut().zip(other.columns) {
            assert_eq!(mine.name, theirs.name, "table {}: appended rows have other columns", self.name);
            match (&mut mine.data, theirs.data) {
                (ColumnData::U64(a), ColumnData::U64(b)) => a.extend(b),
                (ColumnData::F64(a), ColumnData::F64(b)) => a.extend(b),
                (ColumnData::Str(a), ColumnData::Str(b)) => a.extend(b),
                (ColumnData::Dict { codes, names }, ColumnData::Dict { codes: b, names: bn }) => {
                    if *names == bn {
                        codes.extend(b);
                    } else {
                        let map: Vec<u32> = bn
                            .into_iter()
                            .map(|n| match names.iter().position(|m| *m == n) {
                                Some(i) => u32::try_from(i).expect("codes fit in u32"),
                                None => {
                                    names.push(n);
                                    u32::try_from(names.len() - 1).expect("codes fit in u32")
                                }
                            })
                            .collect();
                        codes.extend(b.into_iter().map(|c| map[c as usize]));
                    }
                }
                _ => panic!("table {}: column {} changed kind", self.name, mine.name),
            }
        }
    }

    /// Bytes the table's values occupy (numbers 8 bytes, dictionary codes 4, names their
    /// length): what holding it costs, for memory accounting.
    #[must_use]
    pub fn value_bytes(&self) -> u64 {
        let bytes = |c: &Column| match &c.data {
            ColumnData::U64(v) => 8 * v.len(),
            ColumnData::F64(v) => 8 * v.len(),
            ColumnData::Str(v) => v.iter().map(|s| s.len() + size_of::<String>()).sum(),
            ColumnData::Dict { codes, names } => 4 * codes.len() + names.iter().map(String::len).sum::<usize>(),
        };
        self.columns.iter().map(|c| bytes(c) as u64).sum()
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
        self.digest_with_front(None)
    }

    /// The digest of these results with `front`'s rows put before the rows of the table of
    /// the same name ([`Table::append`]), without building that table: for a caller that
    /// holds rows drained from a simulation ([`crate::Simulation::drain_records`]).
    ///
    /// # Panics
    /// If `front` has rows and its columns are not those of the table of its name.
    #[must_use]
    pub fn digest_with_front(&self, front: Option<&Table>) -> u64 {
        self.digest_with_series(front, &[])
    }

    /// [`Results::digest_with_front`] of these results with the columns of `series` as those
    /// of the tables of their names: the digest of [`crate::Simulation::results`] from
    /// [`crate::Simulation::results_without_series`] and [`crate::Simulation::series`],
    /// without copying the series into tables.
    ///
    /// # Panics
    /// If `front` has rows and its columns are not those of the table of its name.
    #[must_use]
    pub fn digest_with_series(&self, front: Option<&Table>, series: &[SeriesTable<'_>]) -> u64 {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        for t in &self.tables {
            h.bytes(t.name.as_bytes());
            if let Some(view) = series.iter().find(|v| v.name == t.name) {
                for (name, values) in &view.columns {
                    h.bytes(name.as_bytes());
                    values.for_each_bits(|bits| h.bytes(&bits.to_le_bytes()));
                }
                continue;
            }
            let front = front.filter(|f| f.name == t.name && f.rows() > 0);
            if let Some(f) = front {
                let names = |t: &Table| t.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
                assert_eq!(names(f), names(t), "table {}: the rows in front have other columns", t.name);
            }
            for (i, c) in t.columns.iter().enumerate() {
                h.bytes(c.name.as_bytes());
                if let Some(f) = front {
                    h.values(&f.columns[i].data);
                }
                h.values(&c.data);
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

    /// A column's values, the exact bits of each.
    fn values(&mut self, data: &ColumnData) {
        match data {
            ColumnData::U64(v) => v.iter().for_each(|x| self.bytes(&x.to_le_bytes())),
            ColumnData::F64(v) => v.iter().for_each(|x| self.bytes(&x.to_bits().to_le_bytes())),
            ColumnData::Str(v) => v.iter().for_each(|s| {
                self.bytes(s.as_bytes());
                self.bytes(&[0xff]);
            }),
            // Hashed as the names it stands for: a `Dict` column digests as its `Str` form.
            ColumnData::Dict { codes, names } => codes.iter().for_each(|&c| {
                self.bytes(names[c as usize].as_bytes());
                self.bytes(&[0xff]);
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dict_column_reads_and_digests_as_its_names() {
        let names = vec!["a".to_owned(), "bb".to_owned()];
        let rows = vec!["bb".to_owned(), "a".to_owned(), "bb".to_owned()];
        let mut d = Table::new("t");
        d.push_dict("c", vec![1, 0, 1], names);
        let mut s = Table::new("t");
        s.push_str("c", rows.clone());
        assert_eq!(d.column("c").unwrap().strings().unwrap(), rows);
        assert_eq!(d.rows(), 3);
        let digest = |t: Table| Results { tables: vec![t], meta: vec![] }.digest();
        assert_eq!(digest(d), digest(s));
    }

    fn part(kinds: &[&str], codes: Vec<u32>, x: Vec<u64>) -> Table {
        let mut t = Table::new("t");
        t.push_dict("kind", codes, kinds.iter().map(|&k| k.to_owned()).collect());
        t.push_f64("f", x.iter().map(|&v| v as f64 / 2.0).collect());
        t.push_u64("x", x);
        t
    }

    #[test]
    fn appended_parts_equal_the_whole_table_and_digest_alike() {
        let whole = part(&["a", "b"], vec![1, 0, 1, 1, 0], vec![1, 2, 3, 4, 5]);
        let mut acc = Table::new("t");
        acc.append(part(&["a", "b"], vec![1], vec![1]));
        acc.append(part(&["a", "b"], vec![], vec![]));
        acc.append(part(&["a", "b"], vec![0, 1], vec![2, 3]));
        // Other names: the codes are translated into the first part's names.
        acc.append(part(&["b", "a"], vec![0, 1], vec![4, 5]));
        assert_eq!(acc.column("kind").unwrap().strings(), whole.column("kind").unwrap().strings());
        assert_eq!(acc.column("x"), whole.column("x"));
        let digest = |t: Table| Results { tables: vec![t], meta: vec![] }.digest();
        assert_eq!(digest(acc.clone()), digest(whole.clone()));
        assert_eq!(acc.value_bytes(), 5 * 4 + 2 + 5 * 8 * 2);
        // The rows in front digest as if appended, without building the table.
        let front = part(&["b", "a"], vec![0, 1, 0], vec![1, 2, 3]);
        let rest = Results { tables: vec![part(&["a", "b"], vec![1, 0], vec![4, 5])], meta: vec![] };
        assert_eq!(rest.digest_with_front(Some(&front)), digest(whole));
        assert_eq!(rest.digest_with_front(Some(&Table::new("t"))), rest.digest());
        assert_eq!(rest.digest_with_front(Some(&Table::new("other"))), rest.digest());
    }

    #[test]
    #[should_panic(expected = "appended rows have other columns")]
    fn appending_other_columns_panics() {
        let mut acc = part(&["a"], vec![0], vec![1]);
        let mut other = Table::new("t");
        other.push_u64("y", vec![1]);
        acc.append(other);
    }
}
