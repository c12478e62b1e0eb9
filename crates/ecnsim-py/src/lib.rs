//! `ecnsim._core`: the Python bindings of `ecnsim-core`. A thin layer: every
//! type here is named `Py*`, wraps one core value and converts at the
//! boundary; the Python package `ecnsim` builds its API on top.

mod arrow_schema;
mod emulator;
mod error;
mod parquet_out;
mod results;
mod simulation;

use ecnsim_core::ScenarioSpec;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// Parse a JSON scenario as a scenario *file* (every non-zero time and rate
/// must carry its unit, as in TOML); raise `SpecError` naming the field if not.
#[pyfunction]
fn check_file_json(text: &str) -> PyResult<()> {
    ScenarioSpec::from_json_file_str(text).map_err(PySimError)?;
    Ok(())
}

/// Parse a JSON scenario (the builder's form) and write it back as JSON with
/// every time, rate and size as a string with its unit: what a scenario file
/// (`Scenario.to_toml()`) must say.
#[pyfunction]
fn json_with_units(text: &str) -> PyResult<String> {
    Ok(ScenarioSpec::from_json_str(text).map_err(PySimError)?.to_json())
}

/// Parse a JSON scenario (the builder's form) and expand its `[topology]` and
/// `[[flow_groups]]` into plain nodes, links and flows, written back as JSON
/// with every quantity carrying its unit (`SpecError` at the template's field).
#[pyfunction]
fn expanded_json(text: &str) -> PyResult<String> {
    Ok(ScenarioSpec::from_json_str(text).map_err(PySimError)?.expanded().map_err(PySimError)?.to_json())
}

/// A checked workload distribution from its scenario form (JSON text).
fn distribution(spec: &str) -> PyResult<ecnsim_core::Distribution> {
    Ok(ecnsim_core::Distribution::from_json(spec).map_err(PySimError)?)
}

/// Quantiles of the distribution `spec` (JSON) at each `u` in `[0, 1]`.
#[pyfunction]
fn dist_quantiles(spec: &str, us: Vec<f64>) -> PyResult<Vec<f64>> {
    let d = distribution(spec)?;
    Ok(us.into_iter().map(|u| d.quantile(u)).collect())
}

/// The distribution function `P(X <= x)` of `spec` (JSON) at each `x`.
#[pyfunction]
fn dist_cdf(spec: &str, xs: Vec<f64>) -> PyResult<Vec<f64>> {
    let d = distribution(spec)?;
    Ok(xs.into_iter().map(|x| d.cdf(x)).collect())
}

/// The survival function `P(X > x)` of `spec` (JSON) at each `x`, computed directly.
#[pyfunction]
fn dist_sf(spec: &str, xs: Vec<f64>) -> PyResult<Vec<f64>> {
    let d = distribution(spec)?;
    Ok(xs.into_iter().map(|x| d.sf(x)).collect())
}

/// The partial mean `E[X; X > x]` of `spec` (JSON) at each `x` (infinite where it diverges).
#[pyfunction]
fn dist_partial_mean(spec: &str, xs: Vec<f64>) -> PyResult<Vec<f64>> {
    let d = distribution(spec)?;
    Ok(xs.into_iter().map(|x| d.partial_mean(x)).collect())
}

/// The mean of the distribution `spec` (JSON), or None where it is infinite or has no closed form.
#[pyfunction]
fn dist_mean(spec: &str) -> PyResult<Option<f64>> {
    Ok(distribution(spec)?.mean())
}

/// `n` draws of the distribution `spec` (JSON), from the stream of component `component` under `seed`.
#[pyfunction]
fn dist_sample(spec: &str, n: usize, seed: u64, component: &str) -> PyResult<Vec<f64>> {
    Ok(distribution(spec)?.sample(n, seed, component))
}

/// The atoms `(values, probabilities)` of a discrete distribution `spec` (JSON), else None.
#[pyfunction]
fn dist_atoms(spec: &str) -> PyResult<Option<(Vec<f64>, Vec<f64>)>> {
    Ok(distribution(spec)?.atoms())
}

/// The default distributions of a workload model (`"http"`, `"websessions"`) as JSON
/// `{field: distribution}`, or None for a model without any.
#[pyfunction]
fn workload_defaults(model: &str) -> Option<String> {
    ecnsim_core::Distribution::workload_defaults_json(model)
}

/// The names of the shipped empirical tables.
#[pyfunction]
fn shipped_tables() -> Vec<&'static str> {
    ecnsim_core::Distribution::shipped_tables()
}

/// A shipped table's `(values, counts)`, or None for an unknown name.
#[pyfunction]
fn shipped_table(name: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    ecnsim_core::Distribution::shipped_table(name)
}

/// How this extension was built: `{"pgo": bool, "pgo_note": str, "debug_assertions": bool}`.
///
/// `pgo` says whether it was compiled with a profile (`-Cprofile-use`), as the build
/// backend (`build_backend/ecnsim_build.py`) reports it; `pgo_note` names the training set,
/// or why there was none. A build that did not go through the backend (`maturin develop`,
/// `cargo build`) says so. Benchmarks record this, so that a figure says what it measured.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let info = PyDict::new(py);
    info.set_item("pgo", option_env!("ECNSIM_BUILD_PGO") == Some("1"))?;
    let note = option_env!("ECNSIM_BUILD_PGO_NOTE")
        .unwrap_or("built without ecnsim's build backend (maturin or cargo directly)");
    info.set_item("pgo_note", note)?;
    info.set_item("debug_assertions", cfg!(debug_assertions))?;
    Ok(info)
}

/// The compiled core of ecnsim.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", ecnsim_core::VERSION)?;
    m.add_class::<PySimulation>()?;
    m.add_class::<PyEmulator>()?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(toml_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(parquet_out::write_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(results::name_codes, m)?)?;
    m.add_function(wrap_pyfunction!(expanded_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_file_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_with_units, m)?)?;
    m.add_function(wrap_pyfunction!(dist_quantiles, m)?)?;
    m.add_function(wrap_pyfunction!(dist_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_cdf, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sf, m)?)?;
    m.add_function(wrap_pyfunction!(dist_partial_mean, m)?)?;
    m.add_function(wrap_pyfunction!(dist_sample, m)?)?;
    m.add_function(wrap_pyfunction!(dist_atoms, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_tables, m)?)?;
    m.add_function(wrap_pyfunction!(workload_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(shipped_table, m)?)?;
    m.add("EcnsimError", py.get_type::<EcnsimError>())?;
    m.add("SpecError", error::spec_error_type(py)?)?;
    m.add("TopologyError", error::topology_error_type(py)?)?;
    m.add("ResourceError", error::resource_error_type(py)?)?;
    m.add("SimulationError", error::simulation_error_type(py)?)?;
    Ok(())
}
