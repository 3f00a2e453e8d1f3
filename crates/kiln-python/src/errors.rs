//! kiln's errors as Python exceptions: one class per status, all subclasses of `kiln.Error`, each
//! carrying the Rust message and the status code.

use kiln_core::{Error, Status};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    kiln,
    KilnError,
    PyException,
    "Base class of every kiln error. `status` is the stable status code (an int), `status_name` its C name."
);
pyo3::create_exception!(
    kiln,
    BadParamError,
    KilnError,
    "A bad parameter: the message names the tensor, node, field or byte offset at fault."
);
pyo3::create_exception!(
    kiln,
    NullPointerError,
    BadParamError,
    "A required pointer or buffer is missing."
);
pyo3::create_exception!(
    kiln,
    SizeInsufficientError,
    BadParamError,
    "A buffer (a tensor's memory, the workspace) is too small."
);
pyo3::create_exception!(
    kiln,
    NotSupportedError,
    KilnError,
    "Valid, but not supported here (device, engine, data type, saved-file version)."
);
pyo3::create_exception!(
    kiln,
    NotInitializedError,
    KilnError,
    "A lifecycle step was skipped (e.g. execute before build)."
);
pyo3::create_exception!(
    kiln,
    AllocFailedError,
    KilnError,
    "Memory could not be allocated."
);
pyo3::create_exception!(
    kiln,
    PluginError,
    KilnError,
    "An engine plugin failed; the message keeps the plugin's words."
);
pyo3::create_exception!(
    kiln,
    ExecutionFailedError,
    KilnError,
    "A plan failed while it ran."
);
pyo3::create_exception!(
    kiln,
    InternalError,
    KilnError,
    "A bug in kiln: please report it with the message."
);

/// The Python exception for `e`, with `status` and `status_name` attributes set.
pub fn to_py(e: Error) -> PyErr {
    raise(e.status(), e.to_string())
}

/// The Python exception of `status` carrying `message`.
pub fn raise(status: Status, message: String) -> PyErr {
    let err = match status {
        Status::BadParam => BadParamError::new_err(message),
        Status::BadParamNullPointer => NullPointerError::new_err(message),
        Status::BadParamSizeInsufficient => SizeInsufficientError::new_err(message),
        Status::NotSupported => NotSupportedError::new_err(message),
        Status::NotInitialized => NotInitializedError::new_err(message),
        Status::AllocFailed => AllocFailedError::new_err(message),
        Status::PluginError => PluginError::new_err(message),
        Status::ExecutionFailed => ExecutionFailedError::new_err(message),
        Status::InternalError | Status::Success => InternalError::new_err(message),
    };
    Python::attach(|py| {
        let value = err.value(py);
        // Attributes on a fresh exception instance cannot fail but for memory; a failure only
        // loses the attribute, never the exception.
        let _ = value.setattr("status", status as i32);
        let _ = value.setattr("status_name", status.name());
    });
    err
}

/// A `BadParamError` with `message`.
pub fn bad_param(message: impl Into<String>) -> PyErr {
    raise(Status::BadParam, message.into())
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<KilnError>())?;
    m.add("BadParamError", py.get_type::<BadParamError>())?;
    m.add("NullPointerError", py.get_type::<NullPointerError>())?;
    m.add(
        "SizeInsufficientError",
        py.get_type::<SizeInsufficientError>(),
    )?;
    m.add("NotSupportedError", py.get_type::<NotSupportedError>())?;
    m.add("NotInitializedError", py.get_type::<NotInitializedError>())?;
    m.add("AllocFailedError", py.get_type::<AllocFailedError>())?;
    m.add("PluginError", py.get_type::<PluginError>())?;
    m.add(
        "ExecutionFailedError",
        py.get_type::<ExecutionFailedError>(),
    )?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

/// `?` on kiln results inside Python entry points.
pub trait IntoPyResult<T> {
    /// The result with kiln's error turned into its Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for kiln_core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
