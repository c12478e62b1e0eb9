//! The exception hierarchy of `ecnsim.exceptions` and the one conversion
//! from the core's [`SimError`] to a Python exception.
//!
//! ```text
//! Exception
//! └── EcnsimError
//!     ├── SpecError(EcnsimError, ValueError)          SimError::InvalidSpec
//!     ├── TopologyError(EcnsimError, ValueError)      SimError::Topology
//!     ├── ResourceError(EcnsimError, MemoryError)     SimError::Resource
//!     └── SimulationError(EcnsimError, RuntimeError)  SimError::Runtime
//! ```
//!
//! `SimError::Cancelled` becomes `KeyboardInterrupt` (it is raised only on Ctrl-C).
//!
//! Every instance carries the offending field path as `.path`, and its
//! message is the core's `"{path}: {msg}"`.

use ecnsim_core::SimError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(ecnsim.exceptions, EcnsimError, PyException, "Base class of every error raised by ecnsim.");

/// A Python exception class with two bases (`EcnsimError` and `ValueError`).
///
/// `create_exception!` takes a single base, so these classes are made by
/// calling `type(name, bases, namespace)` once and cached per interpreter.
struct DualBaseException {
    name: &'static str,
    doc: &'static str,
    /// The built-in second base (`ValueError`, `MemoryError`, ...).
    builtin: fn(Python<'_>) -> Bound<'_, PyType>,
    cell: PyOnceLock<Py<PyType>>,
}

impl DualBaseException {
    const fn new(name: &'static str, doc: &'static str, builtin: fn(Python<'_>) -> Bound<'_, PyType>) -> Self {
        DualBaseException { name, doc, builtin, cell: PyOnceLock::new() }
    }

    fn type_object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyType>> {
        self.cell
            .get_or_try_init(py, || {
                let bases = PyTuple::new(py, [py.get_type::<EcnsimError>(), (self.builtin)(py)])?;
                let namespace = PyDict::new(py);
                namespace.set_item("__module__", "ecnsim.exceptions")?;
                namespace.set_item("__doc__", self.doc)?;
                let ty = py.get_type::<PyType>().call1((self.name, bases, namespace))?;
                Ok::<_, PyErr>(ty.cast_into::<PyType>()?.unbind())
            })
            .map(|ty| ty.bind(py).clone())
    }
}

static SPEC_ERROR: DualBaseException = DualBaseException::new(
    "SpecError",
    "The scenario is malformed or a value is out of range.\n\n\
     ``path`` names the offending field (``links[2].rate``); the message is\n\
     ``\"<path>: <what is wrong and what is allowed>\"``.",
    |py| py.get_type::<PyValueError>(),
);

static TOPOLOGY_ERROR: DualBaseException = DualBaseException::new(
    "TopologyError",
    "The scenario is well-formed but its network is not usable (no route\n\
     between a flow's endpoints, a link from a node to itself, ...).\n\n\
     ``path`` names the field whose value leads to the problem.",
    |py| py.get_type::<PyValueError>(),
);

static RESOURCE_ERROR: DualBaseException = DualBaseException::new(
    "ResourceError",
    "The run would need, or came to need, more memory than allowed.\n\n\
     ``path`` names the part of the scenario that needs the most (``nodes``\n\
     for the route table, ``simulation.sample_interval``, ...).",
    |py| py.get_type::<PyMemoryError>(),
);

static SIMULATION_ERROR: DualBaseException = DualBaseException::new(
    "SimulationError",
    "The run cannot go on: a component makes no progress in simulated time.\n\n\
     ``path`` names the component (``apps[1]``, ``links[0]``).",
    |py| py.get_type::<PyRuntimeError>(),
);

/// The `ResourceError` class.
pub(crate) fn resource_error_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    RESOURCE_ERROR.type_object(py)
}

/// The `SimulationError` class.
pub(crate) fn simulation_error_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    SIMULATION_ERROR.type_object(py)
}

/// The `SpecError` class.
pub(crate) fn spec_error_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    SPEC_ERROR.type_object(py)
}

/// The `TopologyError` class.
pub(crate) fn topology_error_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    TOPOLOGY_ERROR.type_object(py)
}

/// A core error on its way to Python: `?` turns it into the matching
/// exception through the single `From<PySimError> for PyErr` below.
#[derive(Debug)]
pub(crate) struct PySimError(pub(crate) SimError);

impl From<SimError> for PySimError {
    fn from(e: SimError) -> Self {
        PySimError(e)
    }
}

impl From<PySimError> for PyErr {
    fn from(PySimError(e): PySimError) -> PyErr {
        Python::attach(|py| {
            let ty = match &e {
                SimError::InvalidSpec { .. } => spec_error_type(py),
                SimError::Topology { .. } => topology_error_type(py),
                SimError::Resource { .. } => resource_error_type(py),
                SimError::Runtime { .. } => simulation_error_type(py),
                SimError::Cancelled => return PyKeyboardInterrupt::new_err(()),
                // SimError is #[non_exhaustive]: a variant added later is still an EcnsimError.
                _ => Ok(py.get_type::<EcnsimError>()),
            };
            let make = || -> PyResult<PyErr> {
                let exc = ty?.call1((e.to_string(),))?;
                exc.setattr("path", e.path())?;
                Ok(PyErr::from_value(exc))
            };
            make().unwrap_or_else(|err| err)
        })
    }
}
