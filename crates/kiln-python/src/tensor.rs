//! `kiln.Tensor`: a tensor of a graph (a shared handle: two `Tensor` objects for the same graph
//! tensor compare and hash equal, so either can key a variant pack).

use crate::enums::{data_type_arg, PyDataType};
use pyo3::prelude::*;

/// A tensor of a `kiln.Graph`. Operation methods return new virtual tensors; `set_output(True)`
/// makes one real (bound at execute).
#[pyclass(name = "Tensor", module = "kiln", frozen)]
pub struct PyTensor {
    pub inner: kiln::Tensor,
}

impl PyTensor {
    pub fn wrap(t: kiln::Tensor) -> PyTensor {
        PyTensor { inner: t }
    }
}

#[pymethods]
impl PyTensor {
    /// Makes the tensor a real output (`True`, bound at execute) or virtual (`False`). Returns
    /// the tensor.
    #[pyo3(signature = (is_output = true))]
    fn set_output(slf: Bound<'_, Self>, is_output: bool) -> Bound<'_, Self> {
        slf.get().inner.set_output(is_output);
        slf
    }
    /// Sets the data type (`kiln.data_type.X` or `"f32"`...). Returns the tensor.
    fn set_data_type<'py>(
        slf: Bound<'py, Self>,
        data_type: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let what = label(&slf.get().inner);
        slf.get()
            .inner
            .set_data_type(data_type_arg(data_type, &what)?);
        Ok(slf)
    }
    /// Sets the dims (needed for outputs whose dims cannot be inferred: conv_dgrad, conv_wgrad,
    /// reduction). Returns the tensor.
    fn set_dim(slf: Bound<'_, Self>, dim: Vec<i64>) -> Bound<'_, Self> {
        slf.get().inner.set_dim(&dim);
        slf
    }
    /// Sets the strides, in elements. Returns the tensor.
    fn set_stride(slf: Bound<'_, Self>, stride: Vec<i64>) -> Bound<'_, Self> {
        slf.get().inner.set_stride(&stride);
        slf
    }
    /// Sets the uid that binds memory at execute. Returns the tensor.
    fn set_uid(slf: Bound<'_, Self>, uid: i64) -> Bound<'_, Self> {
        slf.get().inner.set_uid(uid);
        slf
    }
    /// Sets the name used in messages. Returns the tensor.
    fn set_name(slf: Bound<'_, Self>, name: String) -> Bound<'_, Self> {
        slf.get().inner.set_name(name);
        slf
    }
    /// Sets the required pointer alignment in bytes. Returns the tensor.
    fn set_alignment(slf: Bound<'_, Self>, alignment: u32) -> Bound<'_, Self> {
        slf.get().inner.set_alignment(alignment);
        slf
    }

    /// The uid (None until set or assigned by validate).
    fn get_uid(&self) -> Option<i64> {
        self.inner.uid()
    }
    /// The dims (empty until set or inferred by validate).
    fn get_dim(&self) -> Vec<i64> {
        self.inner.dims()
    }
    /// The strides in elements (empty until set or inferred).
    fn get_stride(&self) -> Vec<i64> {
        self.inner.strides()
    }
    /// The data type (None until set or inferred).
    fn get_data_type(&self) -> Option<PyDataType> {
        self.inner.data_type().map(PyDataType::from_kiln)
    }
    /// The name.
    fn get_name(&self) -> String {
        self.inner.name()
    }
    /// True for virtual tensors (not bound at execute).
    fn get_is_virtual(&self) -> bool {
        self.inner.is_virtual()
    }

    /// The uid (None until set or assigned by validate).
    #[getter(uid)]
    fn prop_uid(&self) -> Option<i64> {
        self.inner.uid()
    }
    /// The dims.
    #[getter(dim)]
    fn prop_dim(&self) -> Vec<i64> {
        self.inner.dims()
    }
    /// The strides in elements.
    #[getter(stride)]
    fn prop_stride(&self) -> Vec<i64> {
        self.inner.strides()
    }
    /// The data type.
    #[getter(data_type)]
    fn prop_data_type(&self) -> Option<PyDataType> {
        self.get_data_type()
    }
    /// The name.
    #[getter(name)]
    fn prop_name(&self) -> String {
        self.inner.name()
    }
    /// True for virtual tensors.
    #[getter(is_virtual)]
    fn prop_is_virtual(&self) -> bool {
        self.inner.is_virtual()
    }
    /// The by-value scalar of a scalar operand (`Graph.scalar`), else None.
    #[getter(scalar)]
    fn prop_scalar(&self) -> Option<f64> {
        self.inner.scalar()
    }

    fn __hash__(&self) -> u64 {
        self.inner.id() as u64
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<PyTensor>() {
            Ok(o) => self.inner.same(&o.get().inner),
            Err(_) => false,
        }
    }
    fn __repr__(&self) -> String {
        let t = &self.inner;
        format!(
            "kiln.Tensor(name='{}', uid={}, dim={:?}, stride={:?}, data_type={}, is_virtual={})",
            t.name(),
            t.uid()
                .map(|u| u.to_string())
                .unwrap_or_else(|| "None".into()),
            t.dims(),
            t.strides(),
            t.data_type().map(|d| d.name()).unwrap_or("None"),
            if t.is_virtual() { "True" } else { "False" }
        )
    }
}

/// `tensor 'x'` or `a tensor` for messages before validate.
pub fn label(t: &kiln::Tensor) -> String {
    let name = t.name();
    match (name.is_empty(), t.uid()) {
        (false, Some(u)) => format!("tensor '{name}' (uid {u})"),
        (false, None) => format!("tensor '{name}'"),
        (true, Some(u)) => format!("tensor uid {u}"),
        (true, None) => "a tensor".into(),
    }
}
