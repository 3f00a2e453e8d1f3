//! Tensor handles of the frontend graph.

use kiln_core::{DataType, Error, Result, TensorDesc};
use std::sync::{Arc, Mutex, MutexGuard};

/// Attributes of a tensor, set with builder methods. Unset dims, strides and data types of
/// operation outputs are inferred by [`crate::Graph::validate`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorAttributes {
    pub(crate) uid: Option<i64>,
    pub(crate) name: String,
    pub(crate) dims: Vec<i64>,
    pub(crate) strides: Vec<i64>,
    pub(crate) data_type: Option<DataType>,
    pub(crate) is_virtual: bool,
    pub(crate) alignment: u32,
    pub(crate) scalar: Option<f64>,
}

impl TensorAttributes {
    /// Empty attributes: no uid (assigned at validate), no name, no dims.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the unique id used to bind memory at execute.
    pub fn uid(mut self, uid: i64) -> Self {
        self.uid = Some(uid);
        self
    }
    /// Sets the name used in messages.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Sets the dims, in logical order (N, C, spatial... for convolutions).
    pub fn dim(mut self, dims: &[i64]) -> Self {
        self.dims = dims.to_vec();
        self
    }
    /// Sets the strides in elements; unset strides are packed row-major (inputs) or follow the
    /// layout of the operation's first input (outputs).
    pub fn stride(mut self, strides: &[i64]) -> Self {
        self.strides = strides.to_vec();
        self
    }
    /// Sets the element type.
    pub fn data_type(mut self, dt: DataType) -> Self {
        self.data_type = Some(dt);
        self
    }
    /// Sets the required pointer alignment in bytes (a power of two; 0 = the element size).
    pub fn alignment(mut self, bytes: u32) -> Self {
        self.alignment = bytes;
        self
    }
}

/// A tensor of a [`crate::Graph`]: a shared handle (clones refer to the same tensor), as
/// cuDNN frontend's `shared_ptr<Tensor_attributes>`.
#[derive(Debug, Clone)]
pub struct Tensor(pub(crate) Arc<Mutex<TensorAttributes>>);

impl Tensor {
    pub(crate) fn new(attrs: TensorAttributes) -> Tensor {
        Tensor(Arc::new(Mutex::new(attrs)))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, TensorAttributes> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when both handles are the same tensor.
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// An identity for this tensor, equal for handles that are [`Tensor::same`] and stable for
    /// the tensor's life (bindings such as Python's hash the tensor by it).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Makes the tensor a real output (bound at execute) or, with `false`, virtual.
    pub fn set_output(&self, output: bool) -> &Self {
        self.lock().is_virtual = !output;
        self
    }
    /// Sets the uid.
    pub fn set_uid(&self, uid: i64) -> &Self {
        self.lock().uid = Some(uid);
        self
    }
    /// Sets the name.
    pub fn set_name(&self, name: impl Into<String>) -> &Self {
        self.lock().name = name.into();
        self
    }
    /// Sets the dims (needed for outputs whose dims cannot be inferred: conv_dgrad, conv_wgrad,
    /// reduction).
    pub fn set_dim(&self, dims: &[i64]) -> &Self {
        self.lock().dims = dims.to_vec();
        self
    }
    /// Sets the strides.
    pub fn set_stride(&self, strides: &[i64]) -> &Self {
        self.lock().strides = strides.to_vec();
        self
    }
    /// Sets the data type.
    pub fn set_data_type(&self, dt: DataType) -> &Self {
        self.lock().data_type = Some(dt);
        self
    }
    /// Sets the required pointer alignment in bytes.
    pub fn set_alignment(&self, bytes: u32) -> &Self {
        self.lock().alignment = bytes;
        self
    }

    /// The uid, once set or assigned by validate.
    pub fn uid(&self) -> Option<i64> {
        self.lock().uid
    }
    /// The name.
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }
    /// The dims (empty until set or inferred).
    pub fn dims(&self) -> Vec<i64> {
        self.lock().dims.clone()
    }
    /// The strides (empty until set or inferred).
    pub fn strides(&self) -> Vec<i64> {
        self.lock().strides.clone()
    }
    /// The data type, once set or inferred.
    pub fn data_type(&self) -> Option<DataType> {
        self.lock().data_type
    }
    /// True for virtual tensors (not bound at execute).
    pub fn is_virtual(&self) -> bool {
        self.lock().is_virtual
    }
    /// The by-value scalar, for scalar operands.
    pub fn scalar(&self) -> Option<f64> {
        self.lock().scalar
    }

    /// The full description; refuses a tensor whose uid, dims, strides or type are not known yet
    /// (call [`crate::Graph::validate`] first).
    pub fn desc(&self) -> Result<TensorDesc> {
        let a = self.lock();
        let label = if a.name.is_empty() {
            "a tensor".to_string()
        } else {
            format!("tensor '{}'", a.name)
        };
        let uid = a.uid.ok_or_else(|| {
            Error::BadParam(format!("{label} has no uid yet: call validate() first"))
        })?;
        let data_type = a
            .data_type
            .ok_or_else(|| Error::BadParam(format!("{label} has no data type yet")))?;
        if a.dims.is_empty() {
            return Err(Error::BadParam(format!("{label} has no dims yet")));
        }
        Ok(TensorDesc {
            uid,
            name: a.name.clone(),
            dims: a.dims.clone(),
            strides: if a.strides.is_empty() {
                kiln_core::tensor::packed_strides(&a.dims)
            } else {
                a.strides.clone()
            },
            data_type,
            is_virtual: a.is_virtual,
            alignment: a.alignment,
            scalar: a.scalar,
        })
    }
}
