//! `kiln.Handle`: a device and its engine plugins, with the CUDA stream work is queued on.

use crate::errors::{bad_param, IntoPyResult};
use kiln::{Device, Handle};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// A handle bound to one device: `kiln.Handle("cpu")`, `kiln.Handle("cuda:0")`.
///
/// On a machine without a CUDA driver, `Handle("cuda:0")` raises `NotSupportedError` saying
/// why; the CPU engine is always there.
#[pyclass(name = "Handle", module = "kiln", frozen)]
pub struct PyHandle {
    pub inner: Handle,
    /// The stream set with `set_stream` (0: the default stream), passed to `__dlpack__` so
    /// that producers order their pending work before kiln's.
    stream: AtomicU64,
}

impl PyHandle {
    /// The stream set on this handle, 0 for the default stream.
    pub fn stream(&self) -> u64 {
        self.stream.load(Ordering::Relaxed)
    }
}

#[pymethods]
impl PyHandle {
    /// A handle on `device`: `"cpu"` (the default), `"cuda"`/`"cuda:N"`, or a deviceless CUDA
    /// target `"sm_NN"` (plans are built and saved for it, not executed).
    #[new]
    #[pyo3(signature = (device = "cpu"))]
    fn new(py: Python<'_>, device: &str) -> PyResult<PyHandle> {
        let device = Device::parse(device).py()?;
        let inner = py.detach(|| Handle::new(device)).py()?;
        Ok(PyHandle {
            inner,
            stream: AtomicU64::new(0),
        })
    }

    /// The device, as `"cpu"`, `"cuda:N"` or `"sm_NN"`.
    #[getter]
    fn device(&self) -> String {
        self.inner.device().to_string()
    }

    /// The names of the engine plugins active on this handle.
    #[getter]
    fn plugins(&self) -> Vec<String> {
        self.inner.plugins().map(|p| p.name().to_string()).collect()
    }

    /// The names of every engine on this handle.
    #[getter]
    fn engines(&self) -> Vec<String> {
        self.inner
            .plugins()
            .flat_map(|p| p.engines().iter().map(|e| e.name.clone()))
            .collect()
    }

    /// Queues this handle's work on `stream`, a `CUstream` as an integer
    /// (`torch.cuda.current_stream().cuda_stream`); 0 or None is the default stream. The stream
    /// must belong to this handle's device and outlive the work queued on it. CPU handles take
    /// and ignore it.
    #[pyo3(signature = (stream))]
    fn set_stream(&self, stream: Option<u64>) -> PyResult<()> {
        let stream = stream.unwrap_or(0);
        let ptr = usize::try_from(stream)
            .map_err(|_| bad_param(format!("stream {stream:#x} is not an address")))?;
        // SAFETY: the caller hands a live stream of this device (documented above, as cuDNN
        // frontend's set_stream asks); null is the default stream.
        unsafe { self.inner.set_stream(ptr as *mut std::ffi::c_void) }.py()?;
        self.stream.store(stream, Ordering::Relaxed);
        Ok(())
    }

    /// The stream set with `set_stream` (0: the default stream).
    fn get_stream(&self) -> u64 {
        self.stream()
    }

    fn __repr__(&self) -> String {
        format!("kiln.Handle('{}')", self.inner.device())
    }
}
