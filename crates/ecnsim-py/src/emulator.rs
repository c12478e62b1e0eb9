//! `PyEmulator`: one [`Emulator`] (real hosts through the core's links and
//! queues, in real time) behind a Python handle; see `ecnsim.emulation` for
//! the Python side that sets up the namespaces and the traffic.
//!
//! `run()` releases the GIL for the whole run; another thread stops it early
//! with `stop()` (the driver looks at the flag at least every 50 ms).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ecnsim_core::{ScenarioSpec, Simulation};
use ecnsim_emu::{EmuConfig, EmuError, Emulator, HostPort};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::PySimError;
use crate::results::results_to_py;

fn emu_err(e: EmuError) -> PyErr {
    match e {
        EmuError::Sim(e) => PySimError(e).into(),
        EmuError::Io(e) => PyOSError::new_err(e.to_string()),
        EmuError::Config(m) => PyValueError::new_err(m),
    }
}

fn closed() -> PyErr {
    PyRuntimeError::new_err("the emulator is closed")
}

/// A real-time emulation of a scenario's network between real hosts.
#[pyclass(module = "ecnsim._core", name = "PyEmulator", frozen)]
#[derive(Debug)]
pub(crate) struct PyEmulator {
    /// `None` once closed.
    inner: Mutex<Option<Emulator>>,
    stop: Arc<AtomicBool>,
}

#[pymethods]
impl PyEmulator {
    /// Build the scenario's network (`spec_json`, normally without flows or
    /// apps) and open a TUN device for each host in `hosts`, a list of
    /// `(host, netns_path, ifname, "a.b.c.d", pcap_path_or_None)`.
    #[new]
    #[pyo3(signature = (spec_json, hosts, *, seed = None, pool_packets = 65536, late_threshold_ns = 1_000_000, flow_port_base = 20000, flow_count = 0, warmup_ns = 0, realtime_priority = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        spec_json: &str,
        hosts: Vec<(String, PathBuf, String, String, Option<PathBuf>)>,
        seed: Option<u64>,
        pool_packets: usize,
        late_threshold_ns: u64,
        flow_port_base: u16,
        flow_count: u16,
        warmup_ns: u64,
        realtime_priority: Option<i32>,
    ) -> PyResult<Self> {
        let spec = ScenarioSpec::from_json_str(spec_json).map_err(PySimError)?;
        let mut ports = Vec::with_capacity(hosts.len());
        for (i, (host, netns, ifname, addr, pcap)) in hosts.into_iter().enumerate() {
            let ip: std::net::Ipv4Addr =
                addr.parse().map_err(|_| PyValueError::new_err(format!("hosts[{i}]: bad IPv4 address {addr:?}")))?;
            ports.push(HostPort { host, netns, ifname, addr: ip.octets(), pcap });
        }
        let cfg = EmuConfig {
            hosts: ports,
            pool_packets,
            late_threshold_ns,
            flow_port_base,
            flow_count,
            warmup_ns,
            realtime_priority,
        };
        let emu = py
            .detach(|| {
                let sim = Simulation::new(&spec, seed).map_err(EmuError::Sim)?;
                Emulator::new(sim, &cfg)
            })
            .map_err(emu_err)?;
        Ok(PyEmulator { inner: Mutex::new(Some(emu)), stop: Arc::new(AtomicBool::new(false)) })
    }

    /// Run in real time to the scenario's end (or until `stop()`), without the
    /// GIL; simulated time zero is monotonic time `start_at_ns` (Python's
    /// `time.monotonic_ns()`), or the call if that is `None` or past.
    #[pyo3(signature = (start_at_ns = None))]
    fn run(&self, py: Python<'_>, start_at_ns: Option<u64>) -> PyResult<()> {
        let stop = Arc::clone(&self.stop);
        py.detach(|| {
            let mut guard = self.inner.lock().map_err(|_| PyRuntimeError::new_err("emulator poisoned"))?;
            let emu = guard.as_mut().ok_or_else(closed)?;
            emu.run(&stop, start_at_ns).map_err(emu_err)
        })
    }

    /// Close the TUN devices (they disappear from their namespaces) and free
    /// the emulator; stops a running `run()` first. Idempotent.
    fn close(&self, py: Python<'_>) {
        self.stop.store(true, Ordering::Relaxed);
        py.detach(|| {
            let mut guard = match self.inner.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            guard.take();
        });
    }

    /// Ask a running `run()` to return soon (within about 50 ms); safe from any thread.
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Simulated time reached, ns (0 before `run()`; locks, so not during it).
    fn now_ns(&self) -> PyResult<u64> {
        let guard = self.inner.try_lock().map_err(|_| PyRuntimeError::new_err("the emulator is running"))?;
        Ok(guard.as_ref().ok_or_else(closed)?.sim().now().as_nanos())
    }

    /// The results as `{"tables": {...}, "meta": {...}, "digest": int}`: the
    /// core's tables (queues, links, ...) plus `emulation`, `emu_ports` and `emu_flow_dirs`.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (results, digest) = py.detach(|| {
            let guard = self.inner.lock().map_err(|_| PyRuntimeError::new_err("emulator poisoned"))?;
            let r = guard.as_ref().ok_or_else(closed)?.results();
            let d = r.digest();
            Ok::<_, PyErr>((r, d))
        })?;
        results_to_py(py, results, digest, None, &[])
    }
}
