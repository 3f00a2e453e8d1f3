//! The tensors of one execute call: each bound UID with its description and host pointer, plus
//! gather/scatter between strided storage of any data type and packed row-major buffers.

use half::{bf16, f16};
use kiln_core::{DataType, OpGraph, TensorDesc};
use kiln_plugin_sdk::{KilnTensorBinding, PluginError, PluginResult};
use std::collections::HashMap;

/// Bound tensors of one execute call.
pub struct TensorMap<'a> {
    graph: &'a OpGraph,
    ptrs: HashMap<i64, *mut u8>,
}

impl<'a> TensorMap<'a> {
    /// Pairs every bound tensor of `graph` with its pointer from `bindings`.
    ///
    /// Refuses a missing or null binding and a binding for a UID the graph does not bind.
    ///
    /// # Safety
    /// The pointers must address memory for their tensors' layouts for as long as the map lives.
    pub unsafe fn new(graph: &'a OpGraph, bindings: &[KilnTensorBinding]) -> PluginResult<Self> {
        let mut ptrs = HashMap::new();
        for b in bindings {
            let t = graph.tensor(b.uid).ok_or_else(|| {
                PluginError::bad_param(format!(
                    "binding for uid {}: the graph has no such tensor",
                    b.uid
                ))
            })?;
            if t.is_virtual || t.scalar.is_some() {
                return Err(PluginError::bad_param(format!(
                    "binding for {}: virtual tensors and by-value scalars are not bound",
                    t.label()
                )));
            }
            if b.ptr.is_null() {
                return Err(PluginError::bad_param(format!(
                    "binding for {}: null pointer",
                    t.label()
                )));
            }
            ptrs.insert(b.uid, b.ptr as *mut u8);
        }
        if let Some(t) = graph.bound_tensors().find(|t| !ptrs.contains_key(&t.uid)) {
            return Err(PluginError::bad_param(format!(
                "{} is not bound",
                t.label()
            )));
        }
        Ok(TensorMap { graph, ptrs })
    }

    /// The graph these tensors belong to.
    pub fn graph(&self) -> &'a OpGraph {
        self.graph
    }

    /// The description of `uid`.
    pub fn desc(&self, uid: i64) -> PluginResult<&'a TensorDesc> {
        self.graph
            .tensor(uid)
            .ok_or_else(|| PluginError::internal(format!("tensor uid {uid} is not in the graph")))
    }

    /// The host pointer bound to `uid`.
    pub fn ptr(&self, uid: i64) -> PluginResult<*mut u8> {
        self.ptrs
            .get(&uid)
            .copied()
            .ok_or_else(|| PluginError::internal(format!("tensor uid {uid} is not bound")))
    }

    /// Reads tensor `uid` (or its by-value scalar) into a packed row-major f32 buffer.
    pub fn gather_f32(&self, uid: i64) -> PluginResult<Vec<f32>> {
        let t = self.desc(uid)?;
        if let Some(v) = t.scalar {
            return Ok(vec![v as f32; t.element_count().unwrap_or(1)]);
        }
        let ptr = self.ptr(uid)?;
        let mut out = Vec::with_capacity(t.element_count().unwrap_or(0));
        // SAFETY: TensorMap::new's contract: ptr addresses storage for t's layout.
        unsafe { gather(t, ptr, |v| out.push(v)) };
        Ok(out)
    }

    /// Reads tensor `uid` (or its by-value scalar) into a packed row-major f64 buffer.
    pub fn gather_f64(&self, uid: i64) -> PluginResult<Vec<f64>> {
        let t = self.desc(uid)?;
        if let Some(v) = t.scalar {
            return Ok(vec![v; t.element_count().unwrap_or(1)]);
        }
        let ptr = self.ptr(uid)?;
        let mut out = Vec::with_capacity(t.element_count().unwrap_or(0));
        // SAFETY: TensorMap::new's contract: ptr addresses storage for t's layout.
        unsafe { gather_wide(t, ptr, |v| out.push(v)) };
        Ok(out)
    }

    /// Writes a packed row-major buffer into tensor `uid`, rounding to its data type.
    pub fn scatter_f32(&self, uid: i64, data: &[f32]) -> PluginResult<()> {
        let t = self.desc(uid)?;
        let ptr = self.ptr(uid)?;
        check_len(t, data.len())?;
        // SAFETY: TensorMap::new's contract; data has one value per logical element.
        unsafe { scatter(t, ptr, |i| data[i] as f64) };
        Ok(())
    }

    /// Writes a packed row-major f64 buffer into tensor `uid`, rounding to its data type.
    pub fn scatter_f64(&self, uid: i64, data: &[f64]) -> PluginResult<()> {
        let t = self.desc(uid)?;
        let ptr = self.ptr(uid)?;
        check_len(t, data.len())?;
        // SAFETY: TensorMap::new's contract; data has one value per logical element.
        unsafe { scatter(t, ptr, |i| data[i]) };
        Ok(())
    }
}

fn check_len(t: &TensorDesc, len: usize) -> PluginResult<()> {
    if t.element_count() != Some(len) {
        return Err(PluginError::internal(format!(
            "{}: {} values for {:?} elements",
            t.label(),
            len,
            t.element_count()
        )));
    }
    Ok(())
}

/// Calls `f(offset)` with the storage offset (in elements) of every logical index of `dims`
/// with `strides`, in row-major logical order.
pub fn for_each_offset(dims: &[i64], strides: &[i64], mut f: impl FnMut(usize)) {
    let rank = dims.len();
    if dims.iter().any(|&d| d <= 0) {
        return;
    }
    if rank == 0 {
        f(0);
        return;
    }
    let inner = dims[rank - 1] as usize;
    let inner_stride = strides[rank - 1] as usize;
    let mut idx = vec![0i64; rank];
    loop {
        let base: i64 = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
        let base = base as usize;
        for j in 0..inner {
            f(base + j * inner_stride);
        }
        // Advance the outer indices.
        let mut axis = rank - 1;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            idx[axis] += 1;
            if idx[axis] < dims[axis] {
                break;
            }
            idx[axis] = 0;
        }
    }
}

/// # Safety
/// `ptr` addresses storage for `t`'s layout.
unsafe fn gather(t: &TensorDesc, ptr: *mut u8, mut push: impl FnMut(f32)) {
    match t.data_type {
        DataType::F32 => {
            let p = ptr as *const f32;
            if t.is_packed_row_major() {
                let n = t.element_count().unwrap_or(0);
                // SAFETY: a packed layout spans exactly n elements.
                let s = unsafe { std::slice::from_raw_parts(p, n) };
                s.iter().for_each(|&v| push(v));
            } else {
                // SAFETY: every offset lies inside the layout's span.
                for_each_offset(&t.dims, &t.strides, |o| {
                    push(unsafe { p.add(o).read_unaligned() })
                });
            }
        }
        _ => {
            // SAFETY: forwarded contract.
            unsafe { gather_wide(t, ptr, |v| push(v as f32)) }
        }
    }
}

/// # Safety
/// `ptr` addresses storage for `t`'s layout.
unsafe fn gather_wide(t: &TensorDesc, ptr: *mut u8, mut push: impl FnMut(f64)) {
    let (dims, strides) = (&t.dims, &t.strides);
    // SAFETY (all arms): every offset lies inside the layout's span.
    match t.data_type {
        DataType::F32 => {
            let p = ptr as *const f32;
            for_each_offset(dims, strides, |o| {
                push(unsafe { p.add(o).read_unaligned() } as f64)
            })
        }
        DataType::F16 => {
            let p = ptr as *const f16;
            for_each_offset(dims, strides, |o| {
                push(unsafe { p.add(o).read_unaligned() }.to_f64())
            })
        }
        DataType::Bf16 => {
            let p = ptr as *const bf16;
            for_each_offset(dims, strides, |o| {
                push(unsafe { p.add(o).read_unaligned() }.to_f64())
            })
        }
        DataType::F64 => {
            let p = ptr as *const f64;
            for_each_offset(dims, strides, |o| {
                push(unsafe { p.add(o).read_unaligned() })
            })
        }
        dt @ (DataType::Boolean
        | DataType::I8
        | DataType::I32
        | DataType::Fp8E4m3
        | DataType::Fp8E5m2) => {
            let size = dt.size();
            for_each_offset(dims, strides, |o| {
                let bytes = unsafe { std::slice::from_raw_parts(ptr.add(o * size), size) };
                push(dt.read_f64(bytes).unwrap_or(f64::NAN))
            })
        }
    }
}

/// # Safety
/// `ptr` addresses storage for `t`'s layout; `value(i)` is defined for every logical index.
unsafe fn scatter(t: &TensorDesc, ptr: *mut u8, value: impl Fn(usize) -> f64) {
    let (dims, strides) = (&t.dims, &t.strides);
    let mut i = 0usize;
    // SAFETY (all arms): every offset lies inside the layout's span.
    match t.data_type {
        DataType::F32 => {
            let p = ptr as *mut f32;
            for_each_offset(dims, strides, |o| {
                unsafe { p.add(o).write_unaligned(value(i) as f32) };
                i += 1;
            })
        }
        DataType::F16 => {
            let p = ptr as *mut f16;
            for_each_offset(dims, strides, |o| {
                unsafe { p.add(o).write_unaligned(f16::from_f64(value(i))) };
                i += 1;
            })
        }
        DataType::Bf16 => {
            let p = ptr as *mut bf16;
            for_each_offset(dims, strides, |o| {
                unsafe { p.add(o).write_unaligned(bf16::from_f64(value(i))) };
                i += 1;
            })
        }
        DataType::F64 => {
            let p = ptr as *mut f64;
            for_each_offset(dims, strides, |o| {
                unsafe { p.add(o).write_unaligned(value(i)) };
                i += 1;
            })
        }
        dt @ (DataType::Boolean
        | DataType::I8
        | DataType::I32
        | DataType::Fp8E4m3
        | DataType::Fp8E5m2) => {
            let size = dt.size();
            for_each_offset(dims, strides, |o| {
                let bytes = unsafe { std::slice::from_raw_parts_mut(ptr.add(o * size), size) };
                // The slice has exactly `size` bytes, so the write cannot fail.
                let _ = dt.write_f64(value(i), bytes);
                i += 1;
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_strides_in_logical_order() {
        let mut seen = Vec::new();
        for_each_offset(&[2, 3], &[1, 2], |o| seen.push(o));
        assert_eq!(seen, vec![0, 2, 4, 1, 3, 5]);
    }
}
