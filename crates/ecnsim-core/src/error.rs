//! The one error type of the core. The Python layer maps it onto
//! `ecnsim.exceptions` in a single `From<SimError> for PyErr`.

use thiserror::Error;

/// Everything that can go wrong when building or running a simulation.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// The scenario is malformed or a value is out of range. `path` names the
    /// offending field (`links[2].rate`), `msg` what was wrong and what is allowed.
    #[error("{path}: {msg}")]
    InvalidSpec {
        /// Dotted field path, e.g. `links[2].queue.limit_packets`.
        path: String,
        /// What is wrong and what is allowed.
        msg: String,
    },
    /// The scenario is well-formed but its network is not usable (no route
    /// between a flow's endpoints, a link to itself, ...).
    #[error("{path}: {msg}")]
    Topology {
        /// The field whose value leads to the problem.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// The run would need, or came to need, more memory than allowed
    /// (`SimOptions::max_memory`). `path` names the part of the scenario
    /// that needs the most (`nodes` for the route table,
    /// `simulation.sample_interval`, `apps[0].model.session_rate`, ...).
    #[error("{path}: {msg}")]
    Resource {
        /// The field responsible for most of the memory.
        path: String,
        /// The estimate, its largest parts and the limit.
        msg: String,
    },
    /// The run cannot go on: a component makes no progress in simulated time
    /// (unboundedly many events at one instant). `path` names the component
    /// (`apps[1]`, `links[0]`, `flows[3]`). The simulation stays stopped at
    /// that instant; its results so far remain readable.
    #[error("{path}: {msg}")]
    Runtime {
        /// The component that made no progress.
        path: String,
        /// What happened, and when.
        msg: String,
    },
    /// The run or the build was cancelled through `SimOptions::cancel`
    /// (Ctrl-C in the bindings). A cancelled run may be resumed.
    #[error("cancelled")]
    Cancelled,
}

impl SimError {
    /// An [`SimError::InvalidSpec`] for `path`.
    pub fn spec(path: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::InvalidSpec { path: path.into(), msg: msg.into() }
    }
    /// A [`SimError::Topology`] for `path`.
    pub fn topology(path: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Topology { path: path.into(), msg: msg.into() }
    }
    /// A [`SimError::Resource`] for `path`.
    pub fn resource(path: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Resource { path: path.into(), msg: msg.into() }
    }
    /// A [`SimError::Runtime`] for `path`.
    pub fn runtime(path: impl Into<String>, msg: impl Into<String>) -> Self {
        SimError::Runtime { path: path.into(), msg: msg.into() }
    }
    /// The field path the error is about (`"<run>"` for a cancellation).
    #[must_use]
    pub fn path(&self) -> &str {
        match self {
            SimError::InvalidSpec { path, .. }
            | SimError::Topology { path, .. }
            | SimError::Resource { path, .. }
            | SimError::Runtime { path, .. } => path,
            SimError::Cancelled => "<run>",
        }
    }
}

/// Return early with an [`SimError::InvalidSpec`] unless `cond` holds.
#[macro_export]
macro_rules! ensure_spec {
    ($cond:expr, $path:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::error::SimError::spec($path, format!($($fmt)+)));
        }
    };
}

/// `bytes` with a decimal unit: `"10.2 GB"`.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
