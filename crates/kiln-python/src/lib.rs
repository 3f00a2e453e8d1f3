//! `kiln._kiln`, the extension module of the `kiln` Python package: cuDNN frontend's Python API
//! over the kiln frontend, with tensors exchanged by DLPack. The package's `__init__.py`
//! re-exports it and adds the operation table (`python/kiln/_operations.py`).

mod dlpack;
mod enums;
mod errors;
mod execute;
mod graph;
mod handle;
mod tensor;

use errors::IntoPyResult;
use pyo3::prelude::*;

/// What a saved blob is, without a handle or plugin: the fields `kiln inspect --json` prints
/// (kind, versions, engine and plugin, sizes, checksum state). Damaged or foreign bytes raise
/// BadParamError.
#[pyfunction]
fn probe<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let info = kiln::probe(data).py()?;
    let json = serde_json::to_string(&info)
        .map_err(|e| errors::to_py(kiln::Error::Internal(format!("probe result: {e}"))))?;
    py.import("json")?.call_method1("loads", (json,))
}

/// The version of the kiln crates this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _kiln(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<handle::PyHandle>()?;
    m.add_class::<tensor::PyTensor>()?;
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<enums::PyDataType>()?;
    m.add_class::<enums::PyHeurMode>()?;
    m.add_class::<enums::PyBuildPlanPolicy>()?;
    m.add_class::<enums::PyBehaviorNote>()?;
    m.add_function(wrap_pyfunction!(probe, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(graph::operation_specs, m)?)?;
    m.add_function(wrap_pyfunction!(enums::_pointwise_modes, m)?)?;
    m.add_function(wrap_pyfunction!(enums::_reduction_modes, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
