//! The sampled time series, held compactly and read in place.
//!
//! Each sample gives one `flow_series` row per sampled connection and one
//! `queue_series` row per sampled port. What every row of a sample shares, or
//! every sample, is stored once rather than per row:
//! - a sample's time: one word per sample (and its count of flow rows);
//! - the queue rows' ids: the ports are fixed once the simulation is built, and
//!   so is the choice of sampled ones, so every sample lists the same ports in
//!   the same order (stored once, at the first sample);
//! - the AQM estimates of a queue row whose three are all NaN (a discipline
//!   without them, such as the drop-tail access links that are most of a star's
//!   ports): a bit per row says which rows hold the three values, and only
//!   those rows' values are stored.
//!
//! [`Series::tables`] reads the columns in place as [`SeriesValues`], which give
//! each row's value as a table column of one value per row would hold it, bit for
//! bit (`time_s` is computed once per sample). Nothing is copied to read them: the
//! Python layer writes its column bytes straight from them, and the digest hashes
//! them ([`crate::Results::digest_with_series`]).

use std::collections::TryReserveError;

use crate::qdisc::AqmState;
use crate::time::ns_to_secs;

/// The bits of the NaN an AQM reports for an estimate it has not got ([`AqmState::NONE`]).
const NAN_BITS: u64 = f64::NAN.to_bits();

/// One connection's sampled values (a `flow_series` row without its time).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowSample {
    pub(crate) flow_id: u64,
    pub(crate) cwnd: u64,
    pub(crate) ssthresh: f64,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_delivered: u64,
    pub(crate) drops: u64,
    pub(crate) marks: u64,
    pub(crate) owd_sum_ns: u64,
    pub(crate) owd_count: u64,
}

/// Sampled time series, columnar and compact (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Each sample's time, ns.
    times: Vec<u64>,
    /// Each sample's number of flow rows (at most the connection slots, which `FlowId`'s
    /// `u32` index bounds).
    flow_rows: Vec<u32>,
    flow_id: Vec<u64>,
    cwnd: Vec<u64>,
    ssthresh: Vec<f64>,
    /// Cumulative payload bytes sent by the initiator (retransmissions included).
    bytes_sent: Vec<u64>,
    /// Cumulative payload bytes the responder delivered in order.
    bytes_delivered: Vec<u64>,
    /// Cumulative drops of the flow's packets (both directions).
    drops: Vec<u64>,
    /// Cumulative CE marks of the flow's packets.
    marks: Vec<u64>,
    /// Cumulative one-way delay of delivered data segments, ns.
    owd_sum_ns: Vec<u64>,
    /// Cumulative delivered data segments.
    owd_count: Vec<u64>,
    /// The sampled ports in row order: the `queue_id`s of every sample's queue rows.
    queue_ids: Vec<u32>,
    queue_packets: Vec<u64>,
    queue_bytes: Vec<u64>,
    /// Bit `r % 64` of word `r / 64` is set if queue row `r` has AQM estimates in `aqm`.
    aqm_present: Vec<u64>,
    /// `[avg, prob, max_p]` of the queue rows with AQM estimates, in row order: the AQM's
    /// averaged queue (RED, AECN), its drop/mark probability, RED's current max_p.
    aqm: Vec<[f64; 3]>,
}

impl Series {
    /// Samples taken so far.
    #[cfg(test)]
    pub(crate) fn samples(&self) -> usize {
        self.times.len()
    }

    /// Rows of `flow_series` so far.
    pub(crate) fn flow_rows(&self) -> usize {
        self.flow_id.len()
    }

    /// Rows of `queue_series` so far.
    pub(crate) fn queue_rows(&self) -> usize {
        self.queue_packets.len()
    }

    /// Queue rows with AQM estimates so far.
    pub(crate) fn aqm_rows(&self) -> usize {
        self.aqm.len()
    }

    /// The sampled ports, in row order (empty until the first sample sets them).
    pub(crate) fn queue_ids(&self) -> &[u32] {
        &self.queue_ids
    }

    /// Start a sample at `now_ns`; at the first, `queue_ids` are the ports every sample lists.
    pub(crate) fn begin_sample(&mut self, now_ns: u64, queue_ids: impl FnOnce() -> Vec<u32>) {
        if self.times.is_empty() {
            self.queue_ids = queue_ids();
        }
        self.times.push(now_ns);
        self.flow_rows.push(0);
    }

    /// One flow row of the current sample.
    pub(crate) fn push_flow(&mut self, row: &FlowSample) {
        *self.flow_rows.last_mut().expect("a sample was begun") += 1;
        self.flow_id.push(row.flow_id);
        self.cwnd.push(row.cwnd);
        self.ssthresh.push(row.ssthresh);
        self.bytes_sent.push(row.bytes_sent);
        self.bytes_delivered.push(row.bytes_delivered);
        self.drops.push(row.drops);
        self.marks.push(row.marks);
        self.owd_sum_ns.push(row.owd_sum_ns);
        self.owd_count.push(row.owd_count);
    }

    /// The next queue row of the current sample (that of port `queue_ids()[k]` for the
    /// `k`-th call in the sample).
    pub(crate) fn push_queue(&mut self, packets: u64, bytes: u64, aqm: AqmState) {
        let row = self.queue_packets.len();
        self.queue_packets.push(packets);
        self.queue_bytes.push(bytes);
        if row % 64 == 0 {
            self.aqm_present.push(0);
        }
        let values = [aqm.avg, aqm.prob, aqm.max_p];
        if values.iter().any(|v| v.to_bits() != NAN_BITS) {
            self.aqm_present[row / 64] |= 1 << (row % 64);
            self.aqm.push(values);
        }
    }

    /// Heap bytes held by the columns.
    pub(crate) fn heap_bytes(&self) -> u64 {
        fn bytes<T>(v: &Vec<T>) -> u64 {
            (v.capacity() * size_of::<T>()) as u64
        }
        bytes(&self.times)
            + bytes(&self.flow_rows)
            + bytes(&self.flow_id)
            + bytes(&self.cwnd)
            + bytes(&self.ssthresh)
            + bytes(&self.bytes_sent)
            + bytes(&self.bytes_delivered)
            + bytes(&self.drops)
            + bytes(&self.marks)
            + bytes(&self.owd_sum_ns)
            + bytes(&self.owd_count)
            + bytes(&self.queue_ids)
            + bytes(&self.queue_packets)
            + bytes(&self.queue_bytes)
            + bytes(&self.aqm_present)
            + bytes(&self.aqm)
    }

    /// Room for `samples` more samples holding `flow_rows` more flow rows, `queue_rows` more
    /// queue rows and `aqm_rows` more rows of AQM estimates, or an error if the allocator
    /// refuses (never an abort).
    pub(crate) fn try_reserve(
        &mut self,
        samples: usize,
        flow_rows: usize,
        queue_rows: usize,
        aqm_rows: usize,
    ) -> Result<(), TryReserveError> {
        self.times.try_reserve(samples)?;
        self.flow_rows.try_reserve(samples)?;
        self.flow_id.try_reserve(flow_rows)?;
        self.cwnd.try_reserve(flow_rows)?;
        self.ssthresh.try_reserve(flow_rows)?;
        self.bytes_sent.try_reserve(flow_rows)?;
        self.bytes_delivered.try_reserve(flow_rows)?;
        self.drops.try_reserve(flow_rows)?;
        self.marks.try_reserve(flow_rows)?;
        self.owd_sum_ns.try_reserve(flow_rows)?;
        self.owd_count.try_reserve(flow_rows)?;
        self.queue_packets.try_reserve(queue_rows)?;
        self.queue_bytes.try_reserve(queue_rows)?;
        // One word more than the rows need: the partial word at either end.
        let words = (self.queue_packets.len() + queue_rows).div_ceil(64).saturating_sub(self.aqm_present.len());
        self.aqm_present.try_reserve(words + 1)?;
        self.aqm.try_reserve(aqm_rows)?;
        Ok(())
    }

    /// The `flow_series` and `queue_series` tables, read in place: their column names, in
    /// order, and each column's values.
    #[must_use]
    pub fn tables(&self) -> [SeriesTable<'_>; 2] {
        let flow_times = SeriesValues::Times { times: &self.times, rows: Rows::PerSample(&self.flow_rows) };
        let queue_times = SeriesValues::Times { times: &self.times, rows: Rows::Each(self.queue_ids.len()) };
        // Every sample lists every sampled port, so the queue rows are counted from the
        // samples, not from a column ([`Series::hand_over`] frees `queue_packets` before the
        // AQM columns are read).
        let queue_rows = self.queue_ids.len() * self.times.len();
        debug_assert!(self.queue_packets.is_empty() || self.queue_packets.len() == queue_rows);
        let aqm = |field| SeriesValues::Aqm { present: &self.aqm_present, values: &self.aqm, field, rows: queue_rows };
        [
            SeriesTable {
                name: "flow_series",
                columns: vec![
                    ("time_s", flow_times),
                    ("flow_id", SeriesValues::U64(&self.flow_id)),
                    ("cwnd_bytes", SeriesValues::U64(&self.cwnd)),
                    ("ssthresh_bytes", SeriesValues::F64(&self.ssthresh)),
                    // Cumulative since the connection opened (not warm-up adjusted): differences
                    // give rates per bin.
                    ("bytes_sent", SeriesValues::U64(&self.bytes_sent)),
                    ("bytes_delivered", SeriesValues::U64(&self.bytes_delivered)),
                    ("drops", SeriesValues::U64(&self.drops)),
                    ("marks", SeriesValues::U64(&self.marks)),
                    ("owd_sum_ns", SeriesValues::U64(&self.owd_sum_ns)),
                    ("owd_count", SeriesValues::U64(&self.owd_count)),
                ],
            },
            SeriesTable {
                name: "queue_series",
                columns: vec![
                    ("time_s", queue_times),
                    ("queue_id", SeriesValues::Ids { ids: &self.queue_ids, samples: self.times.len() }),
                    ("packets", SeriesValues::U64(&self.queue_packets)),
                    ("bytes", SeriesValues::U64(&self.queue_bytes)),
                    ("aqm_avg", aqm(0)),
                    ("aqm_prob", aqm(1)),
                    ("aqm_max_p", aqm(2)),
                ],
            },
        ]
    }

    /// Each column of [`Series::tables`], in order, as `f(table, column, values)`, freeing
    /// each column's storage as soon as `f` has had the last column that reads it: a caller
    /// that copies the columns out (the Python layer, once a run has finished) holds each
    /// about once, the store shrinking as the copies grow. Stops at `f`'s first error.
    ///
    /// # Errors
    /// The first error `f` returns.
    pub fn hand_over<E>(
        mut self,
        mut f: impl FnMut(&'static str, &'static str, &SeriesValues<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        for t in 0..2 {
            for c in 0..self.tables()[t].columns.len() {
                let (table, column) = {
                    let tables = self.tables();
                    let (column, values) = &tables[t].columns[c];
                    f(tables[t].name, column, values)?;
                    (tables[t].name, *column)
                };
                self.release(table, column);
            }
        }
        Ok(())
    }

    /// Free what only column `column` of `table` reads (nothing for a column whose storage a
    /// later column reads too; the per-sample times, row counts and port ids, a word per
    /// sample or per port, go with the store).
    fn release(&mut self, table: &str, column: &str) {
        fn free<T>(v: &mut Vec<T>) {
            drop(std::mem::take(v));
        }
        match (table, column) {
            ("flow_series", "flow_id") => free(&mut self.flow_id),
            ("flow_series", "cwnd_bytes") => free(&mut self.cwnd),
            ("flow_series", "ssthresh_bytes") => free(&mut self.ssthresh),
            ("flow_series", "bytes_sent") => free(&mut self.bytes_sent),
            ("flow_series", "bytes_delivered") => free(&mut self.bytes_delivered),
            ("flow_series", "drops") => free(&mut self.drops),
            ("flow_series", "marks") => free(&mut self.marks),
            ("flow_series", "owd_sum_ns") => free(&mut self.owd_sum_ns),
            ("flow_series", "owd_count") => free(&mut self.owd_count),
            ("queue_series", "packets") => free(&mut self.queue_packets),
            ("queue_series", "bytes") => free(&mut self.queue_bytes),
            // The last of the three AQM columns.
            ("queue_series", "aqm_max_p") => {
                free(&mut self.aqm);
                free(&mut self.aqm_present);
            }
            _ => {}
        }
    }
}

/// A series table read in place ([`Series::tables`]).
#[derive(Clone, Debug)]
pub struct SeriesTable<'a> {
    /// `flow_series` or `queue_series`.
    pub name: &'static str,
    /// Column names and values, in the table's order.
    pub columns: Vec<(&'static str, SeriesValues<'a>)>,
}

/// How many rows each sample has.
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// Sample `i` has `rows[i]`.
    PerSample(&'a [u32]),
    /// Every sample has this many.
    Each(usize),
}

/// One series column's values, read in place from [`Series`]: one value per row once
/// expanded, as [`Self::for_each_bits`] gives them.
#[derive(Clone, Copy, Debug)]
pub enum SeriesValues<'a> {
    /// Counters, one per row.
    U64(&'a [u64]),
    /// Reals, one per row.
    F64(&'a [f64]),
    /// Seconds (reals): each sample's time (`times`, ns) on each of its rows.
    Times {
        /// Each sample's time, ns.
        times: &'a [u64],
        /// Each sample's rows.
        rows: Rows<'a>,
    },
    /// Counters: the same `ids` in every one of `samples` samples.
    Ids {
        /// One sample's ids, in row order.
        ids: &'a [u32],
        /// How many samples.
        samples: usize,
    },
    /// Reals: field `field` of `[avg, prob, max_p]` of the rows whose bit is set in
    /// `present` (in row order in `values`), NaN in the others.
    Aqm {
        /// Bit `r % 64` of word `r / 64`: row `r` has values.
        present: &'a [u64],
        /// The rows with values, in row order.
        values: &'a [[f64; 3]],
        /// Which of the three.
        field: usize,
        /// How many rows.
        rows: usize,
    },
}

impl SeriesValues<'_> {
    /// Number of rows.
    #[must_use]
    pub fn len(&self) -> usize {
        match *self {
            SeriesValues::U64(v) => v.len(),
            SeriesValues::F64(v) => v.len(),
            SeriesValues::Times { times, rows: Rows::PerSample(rows) } => {
                debug_assert_eq!(times.len(), rows.len());
                rows.iter().map(|&n| n as usize).sum()
            }
            SeriesValues::Times { times, rows: Rows::Each(n) } => times.len() * n,
            SeriesValues::Ids { ids, samples } => ids.len() * samples,
            SeriesValues::Aqm { rows, .. } => rows,
        }
    }

    /// True if there are no rows.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True for reals (`f64`), false for counters (`u64`).
    #[must_use]
    pub fn is_real(&self) -> bool {
        matches!(self, SeriesValues::F64(_) | SeriesValues::Times { .. } | SeriesValues::Aqm { .. })
    }

    /// Call `f` with each row's value in order, as the bits of a `u64` or an `f64`.
    pub fn for_each_bits(&self, mut f: impl FnMut(u64)) {
        match *self {
            SeriesValues::U64(v) => v.iter().for_each(|&x| f(x)),
            SeriesValues::F64(v) => v.iter().for_each(|x| f(x.to_bits())),
            SeriesValues::Times { times, rows } => {
                for (i, &t) in times.iter().enumerate() {
                    // One division per sample, the same as a row's own.
                    let bits = ns_to_secs(t).to_bits();
                    let n = match rows {
                        Rows::PerSample(r) => r[i] as usize,
                        Rows::Each(n) => n,
                    };
                    (0..n).for_each(|_| f(bits));
                }
            }
            SeriesValues::Ids { ids, samples } => {
                (0..samples).for_each(|_| ids.iter().for_each(|&id| f(u64::from(id))));
            }
            SeriesValues::Aqm { present, values, field, rows } => {
                let mut stored = values.iter();
                for r in 0..rows {
                    if present[r / 64] >> (r % 64) & 1 == 1 {
                        f(stored.next().expect("a value per present row")[field].to_bits());
                    } else {
                        f(NAN_BITS);
                    }
                }
            }
        }
    }

    /// The values as 8-byte little-endian words, into `out` (`8 * self.len()` bytes).
    ///
    /// # Panics
    /// If `out` is not `8 * self.len()` bytes long.
    pub fn write_le(&self, out: &mut [u8]) {
        assert_eq!(out.len(), 8 * self.len(), "write_le: 8 bytes per row");
        let mut words = out.chunks_exact_mut(8);
        self.for_each_bits(|bits| words.next().expect("8 bytes per row").copy_from_slice(&bits.to_le_bytes()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ColumnData;

    fn expand(v: &SeriesValues<'_>) -> ColumnData {
        crate::collect::series_column(v)
    }

    fn flow(id: u64) -> FlowSample {
        FlowSample {
            flow_id: id,
            cwnd: 10 * id,
            ssthresh: f64::INFINITY,
            bytes_sent: 1,
            bytes_delivered: 2,
            drops: 3,
            marks: 4,
            owd_sum_ns: 5,
            owd_count: 6,
        }
    }

    /// Three samples: flows 1, 2 | 2 | none; ports 0 and 2, port 2 with AQM estimates
    /// from the second sample on; 70 queue rows in all, across two bitset words.
    fn series() -> Series {
        let mut s = Series::default();
        let mut n = 0.0;
        for (t, flows) in [(100_000_000, &[1, 2][..]), (300_000_000, &[2][..]), (500_000_000, &[][..])] {
            s.begin_sample(t, || vec![0, 2]);
            for &f in flows {
                s.push_flow(&flow(f));
            }
            s.push_queue(7, 7000, AqmState::NONE);
            let aqm = if t > 100_000_000 { AqmState { avg: 1.5, prob: 0.25, max_p: f64::NAN } } else { AqmState::NONE };
            s.push_queue(8, 8000, aqm);
        }
        for _ in 0..64 {
            n += 1.0;
            s.begin_sample(600_000_000, Vec::new);
            s.push_queue(0, 0, AqmState::NONE);
            s.push_queue(1, 1, AqmState { avg: n, prob: f64::NAN, max_p: f64::NAN });
        }
        s
    }

    fn column(t: &SeriesTable<'_>, name: &str) -> ColumnData {
        t.columns.iter().find(|(n, _)| *n == name).map(|(_, v)| expand(v)).unwrap()
    }

    #[test]
    fn rows_read_back_as_one_value_per_row() {
        let s = series();
        let [f, q] = s.tables();
        let secs = |v: &[f64]| ColumnData::F64(v.to_vec());
        assert_eq!(column(&f, "time_s"), secs(&[0.1, 0.1, 0.3]));
        assert_eq!(column(&f, "flow_id"), ColumnData::U64(vec![1, 2, 2]));
        assert_eq!(column(&f, "cwnd_bytes"), ColumnData::U64(vec![10, 20, 20]));
        assert_eq!(q.columns[0].1.len(), 2 * 67);
        let ColumnData::U64(ids) = column(&q, "queue_id") else { panic!("queue_id is u64") };
        assert_eq!(&ids[..6], &[0, 2, 0, 2, 0, 2]);
        let ColumnData::F64(t) = column(&q, "time_s") else { panic!("time_s is f64") };
        assert_eq!(&t[..6], &[0.1, 0.1, 0.3, 0.3, 0.5, 0.5]);
        let ColumnData::F64(avg) = column(&q, "aqm_avg") else { panic!("aqm_avg is f64") };
        let ColumnData::F64(max_p) = column(&q, "aqm_max_p") else { panic!("aqm_max_p is f64") };
        assert!(avg[0].is_nan() && avg[1].is_nan() && avg[2].is_nan() && avg[4].is_nan());
        assert_eq!((avg[3], avg[5]), (1.5, 1.5));
        assert!(max_p.iter().all(|x| x.to_bits() == NAN_BITS));
        // The last sample's port row, past the first bitset word.
        assert_eq!(avg[2 * 67 - 1], 64.0);
        assert!(avg[2 * 67 - 2].is_nan());
        for t in [&f, &q] {
            for (name, v) in &t.columns {
                let mut bytes = vec![0; 8 * v.len()];
                v.write_le(&mut bytes);
                let words: Vec<u64> =
                    bytes.chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().unwrap())).collect();
                let expect = match expand(v) {
                    ColumnData::U64(x) => x,
                    ColumnData::F64(x) => x.iter().map(|v| v.to_bits()).collect(),
                    _ => unreachable!(),
                };
                assert_eq!(words, expect, "{name}");
            }
        }
    }

    /// Each column's values as 8-byte little-endian words.
    fn words(v: &SeriesValues<'_>) -> Vec<u8> {
        let mut bytes = vec![0; 8 * v.len()];
        v.write_le(&mut bytes);
        bytes
    }

    #[test]
    fn hand_over_gives_the_columns_of_tables_in_order() {
        let kept = series();
        let expect: Vec<_> =
            kept.tables().iter().flat_map(|t| t.columns.iter().map(|(c, v)| (t.name, *c, words(v)))).collect();
        let mut got = Vec::new();
        series()
            .hand_over(|t, c, v| {
                got.push((t, c, words(v)));
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(got, expect);
    }

    #[test]
    fn hand_over_frees_each_column_after_its_last_reader() {
        let mut s = series();
        let names: Vec<_> = s.tables().iter().flat_map(|t| t.columns.iter().map(|(c, _)| (t.name, *c))).collect();
        let mut held = s.heap_bytes();
        for (table, column) in names {
            s.release(table, column);
            let now = s.heap_bytes();
            // Shared storage (the AQM estimates of three columns) goes with the last reader.
            let shared = matches!(column, "time_s" | "queue_id" | "aqm_avg" | "aqm_prob");
            assert!(if shared { now == held } else { now < held }, "{table}.{column}: {held} -> {now}");
            held = now;
        }
        // What is left is a word per sample and per port.
        let per_sample = (s.times.capacity() * 8 + s.flow_rows.capacity() * 4 + s.queue_ids.capacity() * 4) as u64;
        assert_eq!(held, per_sample);
    }

    #[test]
    fn rows_without_aqm_estimates_store_none_of_them() {
        let s = series();
        // 67 samples of two ports: 2 rows of the first three samples and 64 of the others have
        // estimates; 134 rows, 3 bitset words.
        assert_eq!((s.samples(), s.queue_rows(), s.aqm_rows(), s.aqm_present.len()), (67, 134, 66, 3));
        assert_eq!(s.flow_rows(), 3);
        assert_eq!(s.queue_ids(), &[0, 2]);
    }
}
