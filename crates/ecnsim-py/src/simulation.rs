//! `PySimulation`: one [`Simulation`] behind a Python handle.
//!
//! Building and running release the GIL (`py.detach`): the work runs on a
//! worker thread while this thread checks for signals every
//! [`SIGNAL_POLL`]; on Ctrl-C it raises the core's cancellation flag, which
//! the build and the run loop look at every few thousand flows or events, so
//! `KeyboardInterrupt` comes within a fraction of a second, also inside a
//! long chunk or a long build. A run goes in chunks of simulated time sized
//! to take about [`CHUNK_WALL_TARGET`] of wall time each; between chunks the
//! optional progress callback is called. The simulation is left where it
//! stopped, so partial results stay readable after an interrupt.
//!
//! After every chunk the finished records (`records` rows) move out of the
//! core into a columnar table held here ([`Simulation::drain_records`]), so
//! the core holds only the records of objects still open; `results()` puts
//! them back in front of the core's own rows (the same table, bit for bit, as
//! a run never drained).
//!
//! The cost of simulated time is not steady (an idle network before the
//! flows start, then slow start doubling the packet rate every round trip),
//! so a chunk grows at most [`MAX_CHUNK_GROWTH`]-fold over the previous one
//! and never beyond [`MAX_CHUNK_NS`] of simulated time; it shrinks as fast as
//! needed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use ecnsim_core::{Results, ScenarioSpec, SimError, SimOptions, SimTime, Simulation, Table, TraceFilter};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::PySimError;
use crate::results::{results_to_py, table_to_py};

/// How often a thread waiting for the core checks for signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(50);
/// Wall time one GIL-free chunk of simulation should take.
const CHUNK_WALL_TARGET: Duration = Duration::from_millis(75);
/// Simulated length of the first chunk (1 ms), before any measurement.
const FIRST_CHUNK_NS: u64 = 1_000_000;
/// Smallest simulated chunk (1 us), so every chunk makes progress.
const MIN_CHUNK_NS: u64 = 1_000;
/// Largest simulated chunk (100 ms): bounds the wall time of a chunk whose
/// cost rises sharply after cheap ones, at a few microseconds of overhead
/// per chunk.
const MAX_CHUNK_NS: u64 = 100_000_000;
/// A chunk is at most this many times longer (in simulated time) than the previous one.
const MAX_CHUNK_GROWTH: f64 = 2.0;
/// A chunk is at least this fraction of the previous one.
const MIN_CHUNK_SHRINK: f64 = 1.0 / 16.0;

/// A simulation built from a scenario; see `ecnsim.Simulation` for the Python API.
#[pyclass(module = "ecnsim._core", name = "PySimulation")]
#[derive(Debug)]
pub(crate) struct PySimulation {
    inner: Simulation,
    spec: ScenarioSpec,
    /// The core's cancellation flag, raised on Ctrl-C.
    cancel: Arc<AtomicBool>,
    /// Simulated length of the next chunk, adapted to [`CHUNK_WALL_TARGET`].
    chunk_ns: u64,
    /// The `records` rows drained from the core so far, in order (no columns before the first).
    records: Table,
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
        Ok(PySimulation { inner, spec, cancel, chunk_ns: FIRST_CHUNK_NS, records: Table::new("records") })
    }

    /// The core's results so far and the digest of them with the drained records in front
    /// of the core's own (`results_to_py` puts them there).
    fn full_results(&self) -> (Results, u64) {
        let results = self.inner.results();
        let digest = results.digest_with_front(Some(&self.records));
        (results, digest)
    }

    /// Run to `min(until_ns, end)` in GIL-free chunks, checking signals and
    /// calling `progress(now_ns, min(until_ns, end_ns))` between chunks. Chunks
    /// are `fixed_chunk_ns` long if given, otherwise sized by wall time.
    ///
    /// The simulation is borrowed only while a chunk runs, so the callback
    /// may read it (`now_ns`, `conservation()`, ...).
    fn run_chunked(
        slf: &Bound<'_, Self>,
        until_ns: u64,
        progress: Option<&Bound<'_, PyAny>>,
        fixed_chunk_ns: Option<u64>,
    ) -> PyResult<()> {
        let py = slf.py();
        loop {
            let (now, stop) = {
                let mut this = slf.try_borrow_mut()?;
                let stop = until_ns.min(this.inner.end_time().as_nanos());
                let now = this.inner.now().as_nanos();
                if now >= stop || this.inner.is_finished() {
                    return Ok(());
                }
                let next = now.saturating_add(fixed_chunk_ns.unwrap_or(this.chunk_ns)).min(stop);
                let this = &mut *this;
                let (inner, cancel, records) = (&mut this.inner, &this.cancel, &mut this.records);
                let work = || {
                    let started = Instant::now();
                    let outcome = inner.run_until(SimTime::from_nanos(next));
                    // Also after an error or a cancel: the records so far stay readable. A drain
                    // with nothing to move only rebuilds the table's name dictionaries (every app's
                    // and node's name), which with thousands of flows cost more than the chunk's
                    // simulation: after the first (which gives the columns), drain only records.
                    if inner.finished_records() > 0 || !records.has_columns() {
                        records.append(inner.drain_records());
                    }
                    (outcome, started.elapsed())
                };
                let (outcome, wall) = if fixed_chunk_ns.is_some() {
                    // Fixed chunks run on this thread (without the GIL) with no watcher
                    // waking up on a wall-time clock, so the work done is the same on
                    // every run; Ctrl-C is seen between chunks.
                    py.detach(work)
                } else {
                    detached(py, cancel, work)?
                };
                match outcome {
                    Ok(()) => {}
                    // Raised only with the flag, which `detached` raises on a signal it returned.
                    Err(SimError::Cancelled) => return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
                    Err(e) => return Err(PySimError(e).into()),
                }
                if fixed_chunk_ns.is_none() {
                    this.chunk_ns = next_chunk_ns(next - now, wall);
                }
                (now, stop)
            };
            py.check_signals()?;
            if let Some(callback) = progress {
                let now_ns = slf.try_borrow()?.inner.now().as_nanos();
                callback.call1((now_ns, stop))?;
            }
            if slf.try_borrow()?.inner.now().as_nanos() <= now {
                // The core did not advance its clock: stop rather than spin.
                return Ok(());
            }
        }
    }
}

/// The simulated length of the next chunk, given that `span_ns` took `wall`.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn next_chunk_ns(span_ns: u64, wall: Duration) -> u64 {
    let wall_s = wall.as_secs_f64();
    let factor = if wall_s > 0.0 { CHUNK_WALL_TARGET.as_secs_f64() / wall_s } else { MAX_CHUNK_GROWTH };
    let factor = factor.clamp(MIN_CHUNK_SHRINK, MAX_CHUNK_GROWTH);
    ((span_ns as f64 * factor) as u64).clamp(MIN_CHUNK_NS, MAX_CHUNK_NS)
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
        self.spec.warnings().into_iter().map(|(path, msg)| format!("{path}: {msg}")).collect()
    }

    /// Why the run stopped for good (`"path: message"`), or None.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.inner.fault().map(ToString::to_string)
    }

    /// The scenario as parsed, as JSON (quantities written with units).
    fn spec_json(&self) -> String {
        self.spec.to_json()
    }

    /// Run every event due at or before `min(t_ns, end)`, without the GIL.
    ///
    /// `chunk_ns`: run in chunks of exactly this much simulated time instead of
    /// chunks sized by wall time, each on this thread, so the work done
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
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (results, digest) = py.detach(|| self.full_results());
        results_to_py(py, results, digest, Some(&self.records))
    }

    /// 64-bit digest of the results so far; equal digests mean bit-identical results.
    fn digest(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.full_results().1)
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
    /// finished records moved out of the core into this handle's columnar table.
    fn live_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let l = self.inner.live_state();
        let out = PyDict::new(py);
        out.set_item("live_connections", l.live_connections)?;
        out.set_item("endpoint_slots", l.endpoint_slots)?;
        out.set_item("app_slots", l.app_slots)?;
        out.set_item("pending_events", l.pending_events)?;
        out.set_item("connection_slots", l.connection_slots)?;
        out.set_item("record_slots", l.record_slots)?;
        out.set_item("drained_records", self.records.rows())?;
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
