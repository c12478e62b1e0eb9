//! `PySimulation`: one [`Simulation`] behind a Python handle.
//!
//! Building and running release the GIL (`py.detach`). A build runs on a
//! worker thread while this thread checks for signals every [`SIGNAL_POLL`];
//! on Ctrl-C it raises the core's cancellation flag, which the build looks at
//! every few thousand flows, so `KeyboardInterrupt` comes within a fraction of
//! a second, also inside a long build.
//!
//! A run goes in chunks on the calling thread, at most [`MAX_CHUNK_NS`] of
//! simulated time each. A timer thread (one per `run`/`run_until` call, waking
//! every [`TIMER_TICK`]) ends a chunk that has run for one to two ticks of wall
//! time: it raises the core's flag, which the run loop looks at every few thousand events, and the
//! core stops between two events (the same results as a chunk boundary in
//! simulated time: the core resumes where it stopped). Between chunks this
//! thread takes the GIL back, checks for signals (Ctrl-C raises
//! `KeyboardInterrupt` within about two ticks) and calls the
//! optional progress callback, which may read the simulation. The simulation is
//! left where it stopped, so partial results stay readable after an interrupt.
//!
//! After every chunk the finished records (`records` rows) move out of the
//! core and are held here as the core's compact rows
//! ([`Simulation::drain_finished_into`]), so the core holds only the records of
//! objects still open (at most those of [`MAX_CHUNK_NS`] of simulated time);
//! `results()` makes them a table ([`Simulation::finished_table`]) in front of
//! the core's own rows (the same table, bit for bit, as a run never drained).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use ecnsim_core::{
    FinishedRecords, Results, ScenarioSpec, SimError, SimOptions, SimTime, Simulation, Table, TraceFilter,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::PySimError;
use crate::results::{hand_over_series, results_to_py, series_to_py, table_to_py};

/// How often a thread waiting for a build checks for signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(50);
/// The chunk timer's period: a chunk seen running at two ticks in a row is ended
/// (signals are checked, progress reported), so a chunk runs at most about 50 ms.
const TIMER_TICK: Duration = Duration::from_millis(25);
/// Largest simulated chunk (100 ms): bounds the finished records the core holds
/// between drains (memory flat in simulated time), at about a microsecond of work
/// per chunk (two atomic increments, taking the GIL back, a signal check).
const MAX_CHUNK_NS: u64 = 100_000_000;

/// A simulation built from a scenario; see `ecnsim.Simulation` for the Python API.
#[pyclass(module = "ecnsim._core", name = "PySimulation")]
#[derive(Debug)]
pub(crate) struct PySimulation {
    inner: Simulation,
    /// The scenario as parsed, as JSON: kept as text, not as the parsed scenario, whose
    /// per-client entries would cost tens of bytes each for the whole life of the simulation.
    spec_json: String,
    /// The scenario's warnings (`"path: message"`), found once at the build.
    warnings: Vec<String>,
    /// The core's cancellation flag: raised on Ctrl-C during a build, and by the
    /// chunk timer during a run.
    cancel: Arc<AtomicBool>,
    /// The finished records drained from the core so far, in order.
    records: FinishedRecords,
    /// Who holds the time series.
    series: SeriesHolder,
}

/// Who holds the time series: the core's compact store until `results()` is first read on a
/// finished run, which moves them into the columns it hands to Python (freeing the store as it
/// goes); later calls hand out the same columns again.
#[derive(Debug)]
enum SeriesHolder {
    /// The core's store (read in place by every `results()` until the run has finished).
    Core,
    /// The columns handed to Python, `{column: (dtype, bytes)}` by table (immutable `bytes`,
    /// shared by every `results()` since), and the digest of the results they belong to.
    Python { tables: Vec<(&'static str, Py<PyDict>)>, digest: u64 },
    /// Writing the columns failed part way (out of memory): the store is gone.
    Lost(String),
}

/// Run `work` on a worker thread without the GIL, checking for signals every
/// [`SIGNAL_POLL`] meanwhile; on a signal that raises (Ctrl-C), raise `cancel`,
/// wait for `work` to return, and return the signal's exception.
fn detached<T: Send>(py: Python<'_>, cancel: &AtomicBool, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    cancel.store(false, Ordering::Relaxed);
    let (value, interrupt) = py.detach(|| {
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            scope.spawn(move || {
                let _ = tx.send(work());
            });
            let mut interrupt: Option<PyErr> = None;
            loop {
                match rx.recv_timeout(SIGNAL_POLL) {
                    Ok(value) => return (Some(value), interrupt),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if interrupt.is_none() {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                cancel.store(true, Ordering::Relaxed);
                                interrupt = Some(e);
                            }
                        }
                    }
                    // The worker panicked; leaving the scope re-raises its panic.
                    Err(mpsc::RecvTimeoutError::Disconnected) => return (None, interrupt),
                }
            }
        })
    });
    cancel.store(false, Ordering::Relaxed);
    match (interrupt, value) {
        (Some(e), _) => Err(e),
        (None, Some(v)) => Ok(v),
        (None, None) => Err(pyo3::exceptions::PyRuntimeError::new_err("the simulation thread stopped")),
    }
}

/// Parse a scenario on a thread of its own without the GIL, checking for
/// signals meanwhile; on Ctrl-C return at once (the parser, which has no
/// cancellation flag, finishes in the background and its result is dropped).
fn parse_detached(py: Python<'_>, text: &str, json: bool) -> PyResult<ScenarioSpec> {
    let text = text.to_owned();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let spec = if json { ScenarioSpec::from_json_str(&text) } else { ScenarioSpec::from_toml_str(&text) };
        let _ = tx.send(spec);
    });
    let mut rx = rx;
    loop {
        let (received, back) = py.detach(move || (rx.recv_timeout(SIGNAL_POLL), rx));
        rx = back;
        match received {
            Ok(spec) => return Ok(spec.map_err(PySimError)?),
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err("the scenario parser stopped"))
            }
        }
    }
}

impl PySimulation {
    fn build(py: Python<'_>, spec: ScenarioSpec, seed: Option<u64>, max_memory: Option<u64>) -> PyResult<Self> {
        let cancel = Arc::new(AtomicBool::new(false));
        let options = SimOptions { seed, max_memory, cancel: Some(Arc::clone(&cancel)) };
        let inner = detached(py, &cancel, || Simulation::with_options(&spec, &options))?.map_err(PySimError)?;
        // The scenario as run: templates expanded (built above, so expansion succeeds).
        let spec = if spec.has_templates() { spec.expanded().map_err(PySimError)? } else { spec };
        let warnings = spec.warnings().into_iter().map(|(path, msg)| format!("{path}: {msg}")).collect();
        Ok(PySimulation {
            inner,
            spec_json: spec.to_json(),
            warnings,
            cancel,
            records: FinishedRecords::default(),
            series: SeriesHolder::Core,
        })
    }

    /// The core's results so far without the series' rows (`results_to_py` reads those in
    /// place from the core), and the digest of the whole with the drained records in front
    /// of the core's own (`results_to_py` puts them there).
    fn full_results(&self) -> (Results, u64, Table) {
        let results = self.inner.results_without_series();
        let front = self.inner.finished_table(&self.records);
        let digest = results.digest_with_series(Some(&front), &self.inner.series());
        (results, digest, front)
    }

    /// Run to `min(until_ns, end)` in GIL-free chunks on this thread, checking
    /// signals and calling `progress(now_ns, min(until_ns, end_ns))` between chunks.
    /// Chunks are `fixed_chunk_ns` long if given (no timer: the work done is a
    /// function of the scenario alone, and Ctrl-C is seen between chunks), otherwise
    /// at most [`MAX_CHUNK_NS`] and ended by the timer after one to two [`TIMER_TICK`]s.
    ///
    /// The simulation is borrowed only while a chunk runs, so the callback
    /// may read it (`now_ns`, `conservation()`, ...).
    fn run_chunked(
        slf: &Bound<'_, Self>,
        until_ns: u64,
        progress: Option<&Bound<'_, PyAny>>,
        fixed_chunk_ns: Option<u64>,
    ) -> PyResult<()> {
        let pause = Arc::clone(&slf.try_borrow()?.cancel);
        if fixed_chunk_ns.is_some() {
            return Self::run_chunks(slf, until_ns, progress, fixed_chunk_ns, None);
        }
        let chunks = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let (stop, stopped) = mpsc::channel::<()>();
            let (chunks, pause) = (&chunks, &pause);
            scope.spawn(move || chunk_timer(&stopped, chunks, pause));
            let outcome = Self::run_chunks(slf, until_ns, progress, None, Some(chunks));
            // Ends the timer before the scope joins it.
            drop(stop);
            outcome
        })
    }

    /// The chunk loop of [`Self::run_chunked`]; `chunks` (absent with fixed chunks, which
    /// have no timer) is incremented as a chunk starts and as it ends (odd while one runs).
    // Never inlined: `ecnsim bench` counts instructions only inside this function
    // (callgrind's `--toggle-collect`, `RUN_LOOP_SYMBOL` in `cli/bench.py`).
    #[inline(never)]
    fn run_chunks(
        slf: &Bound<'_, Self>,
        until_ns: u64,
        progress: Option<&Bound<'_, PyAny>>,
        fixed_chunk_ns: Option<u64>,
        chunks: Option<&AtomicU64>,
    ) -> PyResult<()> {
        let py = slf.py();
        loop {
            let (now, stop, paused) = {
                let mut this = slf.try_borrow_mut()?;
                let stop = until_ns.min(this.inner.end_time().as_nanos());
                let now = this.inner.now().as_nanos();
                if now >= stop || this.inner.is_finished() {
                    return Ok(());
                }
                let next = now.saturating_add(fixed_chunk_ns.unwrap_or(MAX_CHUNK_NS)).min(stop);
                let this = &mut *this;
                let (inner, records) = (&mut this.inner, &mut this.records);
                let work = || {
                    let outcome = inner.run_until(SimTime::from_nanos(next));
                    // Also after an error or a pause: the records so far stay readable.
                    inner.drain_finished_into(records);
                    outcome
                };
                if let Some(chunks) = chunks {
                    this.cancel.store(false, Ordering::Relaxed);
                    chunks.fetch_add(1, Ordering::Relaxed);
                }
                let outcome = py.detach(work);
                if let Some(chunks) = chunks {
                    chunks.fetch_add(1, Ordering::Relaxed);
                }
                let paused = match outcome {
                    Ok(()) => false,
                    // The timer ended the chunk; the core resumes where it stopped.
                    Err(SimError::Cancelled) if chunks.is_some() => {
                        this.cancel.store(false, Ordering::Relaxed);
                        true
                    }
                    Err(SimError::Cancelled) => return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
                    Err(e) => return Err(PySimError(e).into()),
                };
                (now, stop, paused)
            };
            py.check_signals()?;
            if let Some(callback) = progress {
                let now_ns = slf.try_borrow()?.inner.now().as_nanos();
                callback.call1((now_ns, stop))?;
            }
            if !paused && slf.try_borrow()?.inner.now().as_nanos() <= now {
                // The core did not advance its clock: stop rather than spin.
                return Ok(());
            }
        }
    }
}

/// The chunk timer: every [`TIMER_TICK`], raise `pause` if the chunk that was running at
/// the previous tick (`chunks` odd and unchanged) still is. Returns once `stop`'s sender
/// is dropped.
fn chunk_timer(stop: &mpsc::Receiver<()>, chunks: &AtomicU64, pause: &AtomicBool) {
    let mut seen = u64::MAX;
    while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(TIMER_TICK) {
        let now = chunks.load(Ordering::Relaxed);
        if now % 2 == 1 && now == seen {
            pause.store(true, Ordering::Relaxed);
        }
        seen = now;
    }
}

#[pymethods]
impl PySimulation {
    /// Build from a TOML scenario; `seed` overrides the scenario's seed; a
    /// scenario whose memory estimate exceeds `max_memory` bytes is refused.
    #[staticmethod]
    #[pyo3(signature = (text, seed = None, max_memory = None))]
    fn from_toml(py: Python<'_>, text: &str, seed: Option<u64>, max_memory: Option<u64>) -> PyResult<Self> {
        Self::build(py, parse_detached(py, text, false)?, seed, max_memory)
    }

    /// Build from a JSON scenario (what `ecnsim.spec` produces); `seed` and `max_memory` as `from_toml`.
    #[staticmethod]
    #[pyo3(signature = (text, seed = None, max_memory = None))]
    fn from_json(py: Python<'_>, text: &str, seed: Option<u64>, max_memory: Option<u64>) -> PyResult<Self> {
        Self::build(py, parse_detached(py, text, true)?, seed, max_memory)
    }

    /// Current simulated time in nanoseconds.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now().as_nanos()
    }

    /// End of the run in nanoseconds (the scenario's duration).
    #[getter]
    fn end_ns(&self) -> u64 {
        self.inner.end_time().as_nanos()
    }

    /// True once the run reached its end.
    #[getter]
    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    /// Allowed values that make part of the scenario inert, as `"path: message"`.
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// Why the run stopped for good (`"path: message"`), or None.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.inner.fault().map(ToString::to_string)
    }

    /// The scenario as parsed, as JSON (quantities written with units).
    fn spec_json(&self) -> String {
        self.spec_json.clone()
    }

    /// Run every event due at or before `min(t_ns, end)`, without the GIL.
    ///
    /// `chunk_ns`: run in chunks of exactly this much simulated time instead of
    /// chunks ended by wall time, with no timer thread, so the work done
    /// (instructions, chunks) is a function of the scenario alone (the
    /// benchmark's callgrind runs use it); Ctrl-C is then seen between chunks.
    #[pyo3(signature = (t_ns, chunk_ns = None))]
    fn run_until(slf: &Bound<'_, Self>, t_ns: u64, chunk_ns: Option<u64>) -> PyResult<()> {
        if chunk_ns == Some(0) {
            return Err(pyo3::exceptions::PyValueError::new_err("chunk_ns must be > 0 (nanoseconds), got 0"));
        }
        Self::run_chunked(slf, t_ns, None, chunk_ns)
    }

    /// Run to the end, without the GIL; `progress(now_ns, end_ns)` is called between chunks.
    /// Another thread touching this simulation meanwhile gets a `RuntimeError` (already borrowed).
    #[pyo3(signature = (progress = None))]
    fn run(slf: &Bound<'_, Self>, progress: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        Self::run_chunked(slf, u64::MAX, progress, None)
    }

    /// The results so far as `{"tables": {...}, "meta": {...}, "digest": int}` (see `results.rs`).
    ///
    /// The first call on a finished run moves the time series out of the core into the
    /// columns it returns, and every later call returns those same `bytes` objects again
    /// (in a new dict per table): the series are held once, by Python, from then on.
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if matches!(self.series, SeriesHolder::Core) && self.inner.is_finished() {
            let this = &*self;
            let (results, digest, front) = py.detach(|| this.full_results());
            // Until every column is written: an error part way leaves the store part freed.
            self.series = SeriesHolder::Lost("writing the time series for Python failed".to_owned());
            let tables = hand_over_series(py, self.inner.take_series())?;
            self.series = SeriesHolder::Python {
                tables: tables.iter().map(|(name, columns)| (*name, columns.clone().unbind())).collect(),
                digest,
            };
            return results_to_py(py, results, digest, Some(front), &tables);
        }
        match &self.series {
            SeriesHolder::Core => {
                let (results, digest, front) = py.detach(|| self.full_results());
                let tables = series_to_py(py, &self.inner.series())?;
                results_to_py(py, results, digest, Some(front), &tables)
            }
            SeriesHolder::Python { tables, digest } => {
                let (results, front) =
                    py.detach(|| (self.inner.results_without_series(), self.inner.finished_table(&self.records)));
                let tables = tables
                    .iter()
                    .map(|(name, columns)| Ok((*name, columns.bind(py).copy()?)))
                    .collect::<PyResult<Vec<_>>>()?;
                results_to_py(py, results, *digest, Some(front), &tables)
            }
            SeriesHolder::Lost(why) => Err(pyo3::exceptions::PyMemoryError::new_err(why.clone())),
        }
    }

    /// Heap bytes the core holds for the time series (its compact store, which `results()`
    /// reads in place until the run has finished; 0 once `results()` has moved a finished
    /// run's series into the columns it handed to Python).
    fn series_bytes(&self) -> u64 {
        self.inner.series_bytes()
    }

    /// 64-bit digest of the results so far; equal digests mean bit-identical results.
    fn digest(&self, py: Python<'_>) -> PyResult<u64> {
        match &self.series {
            SeriesHolder::Core => Ok(py.detach(|| self.full_results().1)),
            SeriesHolder::Python { digest, .. } => Ok(*digest),
            SeriesHolder::Lost(why) => Err(pyo3::exceptions::PyMemoryError::new_err(why.clone())),
        }
    }

    /// Record link events (`+ - r d`) from now on for the selected links
    /// (indices), nodes and flows (flow or app names); `None` keeps all.
    #[pyo3(signature = (links = None, nodes = None, flows = None))]
    fn enable_trace(
        &mut self,
        links: Option<Vec<usize>>,
        nodes: Option<Vec<String>>,
        flows: Option<Vec<String>>,
    ) -> PyResult<()> {
        self.inner.enable_trace(&TraceFilter { links, nodes, flows }).map_err(PySimError)?;
        Ok(())
    }

    /// The trace records since the last call, as `{column: (dtype, payload)}`.
    fn drain_trace<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let table = self.inner.drain_trace();
        table_to_py(py, &table)
    }

    /// Engine work counters: `{"events": int, "packet_hops": int}`.
    fn perf<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let perf = self.inner.perf();
        let out = PyDict::new(py);
        out.set_item("events", perf.events)?;
        out.set_item("packet_hops", perf.packet_hops)?;
        Ok(out)
    }

    /// What is held for live connections: `{"live_connections", "endpoint_slots", "app_slots",
    /// "pending_events", "connection_slots", "record_slots"}`, and `"drained_records"`, the
    /// finished records moved out of the core and held by this handle (as compact rows).
    fn live_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = self.inner.live_state();
        let out = PyDict::new(py);
        out.set_item("live_connections", l.live_connections)?;
        out.set_item("endpoint_slots", l.endpoint_slots)?;
        out.set_item("app_slots", l.app_slots)?;
        out.set_item("pending_events", l.pending_events)?;
        out.set_item("connection_slots", l.connection_slots)?;
        out.set_item("record_slots", l.record_slots)?;
        out.set_item("drained_records", self.records.len())?;
        Ok(out)
    }

    /// Packet accounting: `{"sent", "delivered", "dropped", "in_flight"}`.
    fn conservation<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.inner.conservation();
        let out = PyDict::new(py);
        out.set_item("sent", c.sent)?;
        out.set_item("delivered", c.delivered)?;
        out.set_item("dropped", c.dropped)?;
        out.set_item("in_flight", c.in_flight)?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "PySimulation(now_ns={}, end_ns={}, finished={})",
            self.inner.now().as_nanos(),
            self.inner.end_time().as_nanos(),
            self.inner.is_finished()
        )
    }
}
