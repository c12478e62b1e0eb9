//! `ecnsim._core`: the Python bindings of `ecnsim-core`. A thin layer: every
//! type here is named `Py*`, wraps one core value and converts at the
//! boundary; the Python package `ecnsim` builds its API on top.

mod emulator;
mod error;
mod results;
mod simulation;

use ecnsim_core::ScenarioSpec;
use pyo3::prelude::*;

use crate::emulator::PyEmulator;
use crate::error::{EcnsimError, PySimError};
use crate::simulation::PySimulation;

/// Parse a TOML scenario and return it as JSON (the form `ecnsim.spec` builds).
#[pyfunction]
fn toml_to_json(text: &str) -> PyResult<String> {
    Ok(ScenarioSpec::from_toml_str(text).map_err(PySimError)?.to_json())
}

/// Parse a JSON scenario and check every field rule; raise `SpecError` on the first violation.
///
/// Network-level problems (`TopologyError`) are found when a simulation is built.
#[pyfunction]
fn check_json(text: &str) -> PyResult<()> {
    let spec = ScenarioSpec::from_json_str(text).map_err(PySimError)?;
    spec.validate().map_err(PySimError)?;
    Ok(())
}

/// The compiled core of ecnsim.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", ecnsim_core::VERSION)?;
    m.add_class::<PySimulation>()?;
    m.add_class::<PyEmulator>()?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add("EcnsimError", py.get_type::<EcnsimError>())?;
    m.add("SpecError", error::spec_error_type(py)?)?;
    m.add("TopologyError", error::topology_error_type(py)?)?;
    Ok(())
}
