//! Safe host memory: tensors, variant packs and workspaces, so that ordinary use never touches a
//! raw pointer.

use crate::tensor::Tensor;
use kiln_core::{Error, Result, TensorDesc};
use std::ffi::c_void;

/// Bytes aligned to 64 (a cache line, and more than any CPU kernel asks for).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; 64]);

/// A zero-initialised, 64-byte aligned byte buffer.
#[derive(Clone)]
struct AlignedBytes {
    chunks: Vec<Chunk>,
    len: usize,
}

impl AlignedBytes {
    fn zeroed(len: usize) -> Result<AlignedBytes> {
        let n = len.div_ceil(64);
        let mut chunks = Vec::new();
        chunks.try_reserve_exact(n).map_err(|_| {
            Error::AllocFailed(format!("cannot allocate {len} bytes of host memory"))
        })?;
        chunks.resize(n, Chunk([0; 64]));
        Ok(AlignedBytes { chunks, len })
    }
    fn as_slice(&self) -> &[u8] {
        // SAFETY: chunks hold n*64 >= len initialised bytes, contiguous (repr(C) arrays).
        unsafe { std::slice::from_raw_parts(self.chunks.as_ptr() as *const u8, self.len) }
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.chunks.as_mut_ptr() as *mut u8, self.len) }
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.chunks.as_mut_ptr() as *mut u8
    }
}

/// A tensor's memory on the host: its data type, dims, strides and the bytes its layout spans.
#[derive(Clone)]
pub struct HostTensor {
    desc: TensorDesc,
    data: AlignedBytes,
}

impl HostTensor {
    /// Zeroed memory for `desc`'s layout.
    pub fn zeros(desc: &TensorDesc) -> Result<HostTensor> {
        desc.validate()?;
        let bytes = desc
            .storage_bytes()
            .ok_or_else(|| Error::BadParam(format!("{}: size overflows", desc.label())))?;
        Ok(HostTensor {
            desc: desc.clone(),
            data: AlignedBytes::zeroed(bytes)?,
        })
    }

    /// Zeroed memory for tensor `t` of a validated graph.
    pub fn for_tensor(t: &Tensor) -> Result<HostTensor> {
        HostTensor::zeros(&t.desc()?)
    }

    /// Memory for tensor `t` filled from `values`, given in logical row-major order and rounded
    /// to the tensor's data type. Refuses a length other than the element count.
    pub fn from_f32(t: &Tensor, values: &[f32]) -> Result<HostTensor> {
        let mut h = HostTensor::for_tensor(t)?;
        h.fill_from_f32(values)?;
        Ok(h)
    }

    /// Memory for `desc` filled with reproducible pseudo-random values in [-1, 1).
    pub fn random(desc: &TensorDesc, seed: u64) -> Result<HostTensor> {
        let mut h = HostTensor::zeros(desc)?;
        let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
        let n = desc.element_count().unwrap_or(0);
        let values: Vec<f64> = (0..n)
            .map(|_| {
                // splitmix64
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect();
        h.fill_from_f64(&values)?;
        Ok(h)
    }

    /// The tensor description this memory was made for.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// The raw bytes of the layout's span.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_slice()
    }

    /// The raw bytes of the layout's span, writable.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.data.as_mut_slice()
    }

    /// A pointer to the first element.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.data.as_mut_ptr() as *mut c_void
    }

    fn offsets(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.desc.element_count().unwrap_or(0));
        let (dims, strides) = (&self.desc.dims, &self.desc.strides);
        let mut idx = vec![0i64; dims.len()];
        let n = self.desc.element_count().unwrap_or(0);
        for _ in 0..n {
            let off: i64 = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
            out.push(off as usize);
            for axis in (0..dims.len()).rev() {
                idx[axis] += 1;
                if idx[axis] < dims[axis] {
                    break;
                }
                idx[axis] = 0;
            }
        }
        out
    }

    /// Writes `values` (logical row-major order) into the layout, rounding to the data type.
    pub fn fill_from_f32(&mut self, values: &[f32]) -> Result<()> {
        let v: Vec<f64> = values.iter().map(|&x| x as f64).collect();
        self.fill_from_f64(&v)
    }

    /// Writes `values` (logical row-major order) into the layout, rounding to the data type.
    pub fn fill_from_f64(&mut self, values: &[f64]) -> Result<()> {
        let n = self.desc.element_count().unwrap_or(0);
        if values.len() != n {
            return Err(Error::BadParam(format!(
                "{}: {} values given for {n} elements",
                self.desc.label(),
                values.len()
            )));
        }
        let dt = self.desc.data_type;
        let size = dt.size();
        let offsets = self.offsets();
        let bytes = self.data.as_mut_slice();
        for (&off, &v) in offsets.iter().zip(values) {
            let at = off * size;
            dt.write_f64(v, &mut bytes[at..at + size])
                .ok_or_else(|| Error::Internal("offset outside the host tensor".into()))?;
        }
        Ok(())
    }

    /// The values in logical row-major order, as f64.
    pub fn to_f64_vec(&self) -> Vec<f64> {
        let dt = self.desc.data_type;
        let size = dt.size();
        let bytes = self.data.as_slice();
        self.offsets()
            .into_iter()
            .map(|off| dt.read_f64(&bytes[off * size..]).unwrap_or(f64::NAN))
            .collect()
    }

    /// The values in logical row-major order, as f32.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        self.to_f64_vec().into_iter().map(|v| v as f32).collect()
    }
}

impl std::fmt::Debug for HostTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTensor")
            .field("desc", &self.desc)
            .field("bytes", &self.data.len)
            .finish()
    }
}

enum Key {
    Tensor(Tensor),
    Uid(i64),
}

/// Memory bound in a variant pack: host memory, or device memory with the `cuda` feature.
pub(crate) enum Memory<'a> {
    Host(&'a mut HostTensor),
    #[cfg(feature = "cuda")]
    Device(&'a mut crate::DeviceTensor),
}

impl Memory<'_> {
    fn desc(&self) -> &TensorDesc {
        match self {
            Memory::Host(h) => &h.desc,
            #[cfg(feature = "cuda")]
            Memory::Device(d) => d.desc(),
        }
    }
    fn len(&self) -> usize {
        match self {
            Memory::Host(h) => h.data.len,
            #[cfg(feature = "cuda")]
            Memory::Device(d) => d.len(),
        }
    }
    fn ptr(&mut self) -> *mut c_void {
        match self {
            Memory::Host(h) => h.as_mut_ptr(),
            #[cfg(feature = "cuda")]
            Memory::Device(d) => d.device_ptr() as *mut c_void,
        }
    }
    /// `None` for host memory, the CUDA ordinal for device memory.
    fn cuda_ordinal(&self) -> Option<u32> {
        match self {
            Memory::Host(_) => None,
            #[cfg(feature = "cuda")]
            Memory::Device(d) => Some(d.ordinal()),
        }
    }
}

/// Host tensors (or, with the `cuda` feature, device tensors) bound to graph tensors for one
/// execute: cuDNN's variant pack, without raw pointers.
#[derive(Default)]
pub struct VariantPack<'a> {
    entries: Vec<(Key, Memory<'a>)>,
}

impl<'a> VariantPack<'a> {
    pub fn new() -> Self {
        VariantPack {
            entries: Vec::new(),
        }
    }

    /// Binds `memory` to `tensor`.
    pub fn insert(&mut self, tensor: &Tensor, memory: &'a mut HostTensor) -> &mut Self {
        self.entries
            .push((Key::Tensor(tensor.clone()), Memory::Host(memory)));
        self
    }

    /// Binds `memory` to the tensor with `uid`.
    pub fn insert_uid(&mut self, uid: i64, memory: &'a mut HostTensor) -> &mut Self {
        self.entries.push((Key::Uid(uid), Memory::Host(memory)));
        self
    }

    /// Binds device memory to `tensor` (checked like host memory at execute, and against the
    /// handle's device).
    #[cfg(feature = "cuda")]
    pub fn insert_device(
        &mut self,
        tensor: &Tensor,
        memory: &'a mut crate::DeviceTensor,
    ) -> &mut Self {
        self.entries
            .push((Key::Tensor(tensor.clone()), Memory::Device(memory)));
        self
    }

    /// Binds device memory to the tensor with `uid`.
    #[cfg(feature = "cuda")]
    pub fn insert_device_uid(
        &mut self,
        uid: i64,
        memory: &'a mut crate::DeviceTensor,
    ) -> &mut Self {
        self.entries.push((Key::Uid(uid), Memory::Device(memory)));
        self
    }

    /// Refuses memory that does not live where `device` runs: host memory on a CUDA handle,
    /// device memory on the CPU or on another GPU.
    pub(crate) fn check_device(&self, device: crate::Device) -> Result<()> {
        for (_, mem) in &self.entries {
            let ok = match (device, mem.cuda_ordinal()) {
                (crate::Device::Cpu, None) => true,
                (crate::Device::Cuda(n), Some(m)) => n == m,
                _ => false,
            };
            if !ok {
                let at = match mem.cuda_ordinal() {
                    None => "host memory".to_string(),
                    Some(m) => format!("memory on cuda:{m}"),
                };
                return Err(mem
                    .desc()
                    .error(format!("bound to {at}, but the handle runs on {device}")));
            }
        }
        Ok(())
    }

    /// (uid, pointer) pairs, each checked against `desc_of(uid)`: known tensor, same data type,
    /// memory at least as large as the tensor's layout spans.
    pub(crate) fn bindings(
        &mut self,
        desc_of: impl Fn(i64) -> Option<TensorDesc>,
    ) -> Result<Vec<(i64, *mut c_void)>> {
        let mut out = Vec::with_capacity(self.entries.len());
        for (key, mem) in self.entries.iter_mut() {
            let uid = match key {
                Key::Uid(u) => *u,
                Key::Tensor(t) => t.uid().ok_or_else(|| {
                    Error::BadParam(format!(
                        "tensor '{}' has no uid yet: validate the graph first",
                        t.name()
                    ))
                })?,
            };
            let want = desc_of(uid).ok_or_else(|| {
                Error::tensor(uid, "", "is bound, but the graph has no such tensor")
            })?;
            if mem.desc().data_type != want.data_type {
                return Err(want.error(format!(
                    "memory holds {} but the tensor is {}",
                    mem.desc().data_type,
                    want.data_type
                )));
            }
            let need = want.storage_bytes().unwrap_or(usize::MAX);
            if mem.len() < need {
                return Err(Error::SizeInsufficient(format!(
                    "{}: memory has {} bytes but its layout spans {need}",
                    want.label(),
                    mem.len()
                )));
            }
            out.push((uid, mem.ptr()));
        }
        Ok(out)
    }
}

/// Caller-owned scratch memory for execute, 64-byte aligned.
pub struct Workspace {
    data: AlignedBytes,
}

impl Workspace {
    /// A workspace of `bytes` bytes.
    pub fn new(bytes: usize) -> Result<Workspace> {
        Ok(Workspace {
            data: AlignedBytes::zeroed(bytes)?,
        })
    }

    /// A workspace sized for `graph`'s selected plan.
    pub fn for_graph(graph: &crate::Graph) -> Result<Workspace> {
        Workspace::new(graph.get_workspace_size()?)
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.data.len
    }

    /// True when it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.data.len == 0
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut c_void {
        if self.data.len == 0 {
            std::ptr::null_mut()
        } else {
            self.data.as_mut_ptr() as *mut c_void
        }
    }
}
