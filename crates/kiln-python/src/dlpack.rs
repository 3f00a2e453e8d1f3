//! A small, checked DLPack consumer: the C structs of `dlpack.h` (v0.8 legacy and v1 versioned
//! capsules), the `__dlpack__` / `__dlpack_device__` protocol, and the capsule rules.
//!
//! The rules kept here (the Python array API standard's): the capsule `__dlpack__` returns is
//! named `dltensor` (or `dltensor_versioned`); a consumer that takes the tensor renames the
//! capsule to `used_dltensor` (`used_dltensor_versioned`), so that the capsule's destructor no
//! longer frees it, and then owns the managed tensor: it calls the tensor's `deleter` exactly
//! once, when it no longer uses the memory. [`Imported`] is that ownership: its `Drop` calls the
//! deleter. A capsule of another name (already consumed, or not DLPack) is refused untouched.

use crate::errors::bad_param;
use kiln_core::DataType;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::ffi::{c_void, CStr};

/// `DLDeviceType::kDLCPU`.
pub const KDL_CPU: i32 = 1;
/// `DLDeviceType::kDLCUDA`.
pub const KDL_CUDA: i32 = 2;

const KDL_INT: u8 = 0;
const KDL_UINT: u8 = 1;
const KDL_FLOAT: u8 = 2;
const KDL_BFLOAT: u8 = 4;
const KDL_BOOL: u8 = 6;

/// `DLPACK_FLAG_BITMASK_READ_ONLY` of a versioned tensor.
const FLAG_READ_ONLY: u64 = 1;

/// The DLPack major version this consumer reads (`max_version` it asks for).
const MAJOR: u32 = 1;

/// More dims than any tensor kiln takes: a producer claiming more is refused before its shape
/// array is read.
const MAX_NDIM: i32 = 64;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const NAME_LEGACY: &CStr = c"dltensor";
const NAME_LEGACY_USED: &CStr = c"used_dltensor";
const NAME_VERSIONED: &CStr = c"dltensor_versioned";
const NAME_VERSIONED_USED: &CStr = c"used_dltensor_versioned";

enum Managed {
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
}

/// A tensor taken from a DLPack capsule: its description, and the ownership of the producer's
/// managed tensor (released, through its deleter, when this is dropped; drop it with the GIL
/// held, as producers such as NumPy release Python objects in their deleters).
pub struct Imported {
    managed: Managed,
    /// The address of the first element (`data + byte_offset`).
    pub data: *mut c_void,
    /// `(device_type, device_id)`.
    pub device: (i32, i32),
    /// The element type, when kiln has it.
    pub data_type: Option<DataType>,
    /// The element type as DLPack says it, for messages.
    pub dtype_text: String,
    /// Bits per element (times lanes).
    pub element_bits: u64,
    /// The shape.
    pub shape: Vec<i64>,
    /// The strides in elements (compact row-major when the producer gave none).
    pub strides: Vec<i64>,
    /// True when the producer marked the memory read-only (versioned capsules only; a legacy
    /// producer refuses to export read-only memory).
    pub read_only: bool,
}

// SAFETY: the managed tensor is owned by this value alone (its capsule was renamed), and the
// DLPack contract lets its deleter run on any thread (producers take the GIL they need).
unsafe impl Send for Imported {}

impl Drop for Imported {
    fn drop(&mut self) {
        match self.managed {
            Managed::Legacy(m) => {
                // SAFETY: `m` came from a capsule this value consumed (renamed), so nobody else
                // calls its deleter; it is called once, here.
                if let Some(d) = unsafe { (*m).deleter } {
                    unsafe { d(m) }
                }
            }
            Managed::Versioned(m) => {
                // SAFETY: as above, for the versioned struct.
                if let Some(d) = unsafe { (*m).deleter } {
                    unsafe { d(m) }
                }
            }
        }
    }
}

impl Imported {
    /// Bytes the memory spans (for a compact tensor, its size); `None` on overflow.
    pub fn span_bytes(&self) -> Option<u64> {
        let mut last = 0u64;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            if d == 0 {
                return Some(0);
            }
            let step = u64::try_from(s).ok()?;
            last = last.checked_add(step.checked_mul(u64::try_from(d - 1).ok()?)?)?;
        }
        (last + 1)
            .checked_mul(self.element_bits)
            .map(|b| b.div_ceil(8))
    }

    /// True when the strides are compact row-major (dims of extent 1 may have any stride).
    pub fn is_compact(&self) -> bool {
        strides_match(&self.shape, &self.strides, &packed(&self.shape))
    }
}

/// Compact row-major strides of `shape`, in elements.
pub fn packed(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(shape[i + 1].max(1));
    }
    s
}

/// True when `have` and `want` are the same strides for `shape`, ignoring dims of extent 1
/// (whose stride never moves the address; producers write anything there).
pub fn strides_match(shape: &[i64], have: &[i64], want: &[i64]) -> bool {
    have.len() == want.len()
        && shape.len() == have.len()
        && shape
            .iter()
            .zip(have.iter().zip(want))
            .all(|(&d, (&h, &w))| d == 1 || h == w)
}

/// What `__dlpack__` gets as `stream`.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    /// No `stream` argument: host memory, or the CUDA legacy default stream.
    None,
    /// A CUDA stream handle (an integer, never 0).
    Cuda(u64),
}

/// `obj.__dlpack_device__()` as `(device_type, device_id)`.
pub fn device_of(obj: &Bound<'_, PyAny>) -> PyResult<(i32, i32)> {
    let py = obj.py();
    let dev = obj
        .call_method0(pyo3::intern!(py, "__dlpack_device__"))
        .map_err(|e| not_dlpack(obj, e))?;
    dev.extract::<(i32, i32)>().map_err(|_| {
        bad_param(format!(
            "__dlpack_device__ of {} returned {}, not (device_type, device_id)",
            type_name(obj),
            dev.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an object".into())
}

fn not_dlpack(obj: &Bound<'_, PyAny>, e: PyErr) -> PyErr {
    let py = obj.py();
    if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) {
        return pyo3::exceptions::PyTypeError::new_err(format!(
            "{} is not a DLPack array (it has no __dlpack__/__dlpack_device__); pass a NumPy \
             array, a PyTorch tensor or any object with __dlpack__",
            type_name(obj)
        ));
    }
    e
}

/// Takes the tensor `obj` exports through `__dlpack__` (asking for a versioned capsule, and
/// falling back to the legacy call for producers that do not know `max_version`).
pub fn import(obj: &Bound<'_, PyAny>, stream: Stream) -> PyResult<Imported> {
    let py = obj.py();
    let kwargs = PyDict::new(py);
    if let Stream::Cuda(s) = stream {
        kwargs.set_item(pyo3::intern!(py, "stream"), s)?;
    }
    let method = obj
        .getattr(pyo3::intern!(py, "__dlpack__"))
        .map_err(|e| not_dlpack(obj, e))?;
    kwargs.set_item(
        pyo3::intern!(py, "max_version"),
        PyTuple::new(py, [MAJOR, 0])?,
    )?;
    let capsule = match method.call((), Some(&kwargs)) {
        Ok(c) => c,
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            // A producer from before DLPack 1.0 (NumPy < 2.1, say) takes no max_version.
            kwargs.del_item(pyo3::intern!(py, "max_version"))?;
            method.call((), Some(&kwargs))?
        }
        Err(e) => return Err(e),
    };
    consume(obj, &capsule)
}

fn consume(obj: &Bound<'_, PyAny>, capsule: &Bound<'_, PyAny>) -> PyResult<Imported> {
    let cap = capsule.as_ptr();
    // SAFETY: `cap` is a live object (borrowed from `capsule`); the check reads its type only.
    if unsafe { ffi::PyCapsule_CheckExact(cap) } == 0 {
        return Err(bad_param(format!(
            "__dlpack__ of {} returned a {}, not a DLPack capsule",
            type_name(obj),
            type_name(capsule)
        )));
    }
    // SAFETY: `cap` is a capsule; its name is a C string it owns (or null) that lives as long
    // as the capsule, and is read before anything renames it.
    let name = unsafe { ffi::PyCapsule_GetName(cap) };
    if name.is_null() {
        // SAFETY: clears the error GetName may set; we hold the GIL.
        unsafe { ffi::PyErr_Clear() };
        return Err(bad_param(format!(
            "__dlpack__ of {} returned a capsule without a name",
            type_name(obj)
        )));
    }
    // SAFETY: non-null, NUL-terminated, owned by the live capsule.
    let name = unsafe { CStr::from_ptr(name) };
    let versioned = if name == NAME_VERSIONED {
        true
    } else if name == NAME_LEGACY {
        false
    } else {
        return Err(bad_param(format!(
            "__dlpack__ of {} returned a capsule named {:?}: it was already consumed, or is not \
             DLPack",
            type_name(obj),
            name.to_string_lossy()
        )));
    };
    let (valid, used) = if versioned {
        (NAME_VERSIONED, NAME_VERSIONED_USED)
    } else {
        (NAME_LEGACY, NAME_LEGACY_USED)
    };
    // SAFETY: the name was checked to be `valid`, so GetPointer returns the producer's managed
    // tensor (non-null by the protocol; checked).
    let ptr = unsafe { ffi::PyCapsule_GetPointer(cap, valid.as_ptr()) };
    if ptr.is_null() {
        return Err(PyErr::take(obj.py()).unwrap_or_else(|| {
            bad_param(format!(
                "__dlpack__ of {} returned an empty capsule",
                type_name(obj)
            ))
        }));
    }
    // SAFETY: renaming a live capsule to a 'static name: from here the capsule's destructor
    // leaves the tensor alone and this consumer owns it (the protocol's handover).
    if unsafe { ffi::PyCapsule_SetName(cap, used.as_ptr()) } != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    let (managed, tensor, read_only) = if versioned {
        let m = ptr as *mut DLManagedTensorVersioned;
        let guard = Imported::empty(Managed::Versioned(m));
        // SAFETY: a consumed `dltensor_versioned` capsule holds a DLManagedTensorVersioned;
        // only its version is read before it is known to be of a major this code reads.
        let version = unsafe { (*m).version };
        if version.major != MAJOR {
            // Dropping the guard calls the deleter, as the protocol asks of a consumer that
            // cannot read the tensor.
            drop(guard);
            return Err(bad_param(format!(
                "{} exported a DLPack {}.{} tensor; this kiln reads DLPack {MAJOR}.x",
                type_name(obj),
                version.major,
                version.minor
            )));
        }
        std::mem::forget(guard);
        // SAFETY: a version-1 struct, laid out as declared above.
        let (t, flags) = unsafe { (&(*m).dl_tensor as *const DLTensor, (*m).flags) };
        (Managed::Versioned(m), t, flags & FLAG_READ_ONLY != 0)
    } else {
        let m = ptr as *mut DLManagedTensor;
        // SAFETY: a consumed `dltensor` capsule holds a DLManagedTensor.
        (
            Managed::Legacy(m),
            unsafe { &(*m).dl_tensor as *const DLTensor },
            false,
        )
    };
    let mut out = Imported::empty(managed);
    out.read_only = read_only;
    // SAFETY: the producer keeps the DLTensor alive until its deleter runs, which `out` owns.
    let t = unsafe { &*tensor };
    if !(0..=MAX_NDIM).contains(&t.ndim) {
        return Err(bad_param(format!(
            "{} exported a DLPack tensor with {} dims",
            type_name(obj),
            t.ndim
        )));
    }
    let ndim = t.ndim as usize;
    if ndim > 0 && t.shape.is_null() {
        return Err(bad_param(format!(
            "{} exported a DLPack tensor without a shape",
            type_name(obj)
        )));
    }
    // SAFETY: DLPack: `shape` holds `ndim` values (checked non-null above for ndim > 0).
    out.shape = if ndim == 0 {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(t.shape, ndim) }.to_vec()
    };
    out.strides = if t.strides.is_null() {
        packed(&out.shape)
    } else if ndim == 0 {
        Vec::new()
    } else {
        // SAFETY: DLPack: non-null `strides` holds `ndim` values, in elements.
        unsafe { std::slice::from_raw_parts(t.strides, ndim) }.to_vec()
    };
    out.device = (t.device.device_type, t.device.device_id);
    let DLDataType { code, bits, lanes } = t.dtype;
    out.data_type = match (code, bits, lanes) {
        (KDL_FLOAT, 32, 1) => Some(DataType::F32),
        (KDL_FLOAT, 16, 1) => Some(DataType::F16),
        (KDL_FLOAT, 64, 1) => Some(DataType::F64),
        (KDL_BFLOAT, 16, 1) => Some(DataType::Bf16),
        (KDL_BOOL, 8, 1) => Some(DataType::Boolean),
        (KDL_INT, 8, 1) => Some(DataType::I8),
        (KDL_INT, 32, 1) => Some(DataType::I32),
        _ => None,
    };
    let kind = match code {
        KDL_INT => "int",
        KDL_UINT => "uint",
        KDL_FLOAT => "float",
        KDL_BFLOAT => "bfloat",
        KDL_BOOL => "bool",
        _ => "code ",
    };
    out.dtype_text = if kind == "code " {
        format!("DLPack type code {code} ({bits} bits)")
    } else if lanes == 1 {
        format!("{kind}{bits}")
    } else {
        format!("{kind}{bits}x{lanes}")
    };
    out.element_bits = u64::from(bits) * u64::from(lanes);
    out.data = (t.data as *mut u8).wrapping_add(t.byte_offset as usize) as *mut c_void;
    Ok(out)
}

impl Imported {
    fn empty(managed: Managed) -> Imported {
        Imported {
            managed,
            data: std::ptr::null_mut(),
            device: (0, 0),
            data_type: None,
            dtype_text: String::new(),
            element_bits: 0,
            shape: Vec::new(),
            strides: Vec::new(),
            read_only: false,
        }
    }
}

/// `cpu` or `cuda:N` (or the DLPack device type number) for messages.
pub fn device_text((kind, id): (i32, i32)) -> String {
    match kind {
        KDL_CPU => "cpu".into(),
        KDL_CUDA => format!("cuda:{id}"),
        3 => "CUDA host (pinned) memory".into(),
        13 => format!("CUDA managed memory on device {id}"),
        10 => format!("ROCm device {id}"),
        other => format!("DLPack device type {other} id {id}"),
    }
}
