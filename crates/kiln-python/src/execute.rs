//! The execute path: a binding table made once per selected plan (each bound tensor's uid,
//! label, data type, dims, strides, and whether the graph writes it), then, per call, one
//! DLPack import and a few comparisons per array before the plan runs with the GIL released.

use crate::dlpack::{self, Imported, Stream, KDL_CPU, KDL_CUDA};
use crate::errors::{bad_param, to_py};
use crate::handle::PyHandle;
use crate::tensor::PyTensor;
use kiln::{Device, ExecutionPlan, Graph};
use kiln_core::{DataType, Error, Result};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};
use std::ffi::c_void;

/// One tensor the plan binds.
struct Slot {
    uid: i64,
    name: String,
    data_type: DataType,
    dims: Vec<i64>,
    strides: Vec<i64>,
    /// A node of the graph writes it (read-only memory is refused).
    written: bool,
}

impl Slot {
    fn error(&self, message: impl Into<String>) -> PyErr {
        to_py(Error::tensor(self.uid, self.name.clone(), message))
    }
}

/// What execute checks arrays against, made when a plan is selected: the same checks
/// `kiln::Graph::execute` runs per call (the plan fits the graph, its layouts are recorded),
/// run once.
pub struct BindingTable {
    slots: Vec<Slot>,
    workspace_size: usize,
}

impl BindingTable {
    /// The table for `graph`'s selected plan. Refuses a plan that does not fit the graph and a
    /// version-1 plan (which records no layouts to check arrays against), as `Graph::execute`.
    pub fn new(graph: &Graph) -> Result<BindingTable> {
        let plan = graph.plan().ok_or_else(|| {
            Error::NotInitialized("no plan: call build_plans (or build) first".into())
        })?;
        let g = graph
            .op_graph()
            .ok_or_else(|| Error::NotInitialized("the graph is not validated".into()))?;
        if plan.tensor_layouts().is_none() {
            return Err(Error::NotSupported(format!(
                "the plan of engine {} was loaded from a file that does not record its tensor \
                 layouts (a version-1 plan), so execute cannot check arrays against it; build \
                 the plan again from the graph and save that",
                plan.engine_name()
            )));
        }
        kiln_backend::check_plan_fits_graph(g, plan.tensor_uids(), plan.tensor_layouts())?;
        let written: Vec<i64> = g.nodes.iter().flat_map(|n| n.op.outputs()).collect();
        let mut slots = Vec::with_capacity(plan.tensor_uids().len());
        for &uid in plan.tensor_uids() {
            let t = g
                .tensor(uid)
                .ok_or_else(|| Error::Internal(format!("plan uid {uid} not in its graph")))?;
            slots.push(Slot {
                uid,
                name: t.name.clone(),
                data_type: t.data_type,
                dims: t.dims.clone(),
                strides: t.strides.clone(),
                written: written.contains(&uid),
            });
        }
        Ok(BindingTable {
            slots,
            workspace_size: plan.workspace_size(),
        })
    }

    /// Runs `plan` (the one this table was made for) on the arrays of `pack` (tensor or uid →
    /// array) and `workspace` (any array of at least `get_workspace_size()` bytes, or None when
    /// that is 0) on `handle`.
    pub fn execute(
        &self,
        py: Python<'_>,
        plan: &ExecutionPlan,
        handle: &PyHandle,
        pack: &Bound<'_, PyDict>,
        workspace: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let device = handle.inner.device();
        let (want_device, stream) = match device {
            Device::Cpu => ((KDL_CPU, 0), Stream::None),
            Device::Cuda(n) => (
                (KDL_CUDA, n as i32),
                match handle.stream() {
                    0 => Stream::None,
                    s => Stream::Cuda(s),
                },
            ),
            Device::CudaTarget(_) => {
                return Err(to_py(Error::NotSupported(format!(
                    "the handle is a deviceless target ({device}): plans built on it can be \
                     saved, not executed; load them with a cuda:N handle"
                ))))
            }
        };
        let mut held: Vec<Imported> = Vec::with_capacity(self.slots.len() + 1);
        let mut bindings: Vec<(i64, *mut c_void)> = Vec::with_capacity(self.slots.len());
        for (key, value) in pack.iter() {
            let uid = key_uid(&key)?;
            let Some(slot) = self.slots.iter().find(|s| s.uid == uid) else {
                return Err(to_py(Error::tensor(
                    uid,
                    key.cast::<PyTensor>()
                        .map(|t| t.get().inner.name())
                        .unwrap_or_default(),
                    "is bound, but the plan binds no such tensor (a virtual tensor, or one of \
                     another graph)",
                )));
            };
            let arr = import_on(&value, want_device, stream, |m| slot.error(m))?;
            check(slot, &arr)?;
            bindings.push((uid, arr.data));
            held.push(arr);
        }
        if bindings.len() < self.slots.len() {
            if let Some(missing) = self
                .slots
                .iter()
                .find(|s| !bindings.iter().any(|b| b.0 == s.uid))
            {
                return Err(missing.error("is not bound in the variant pack"));
            }
        }
        let (ws_ptr, ws_len) = match workspace {
            Some(w) if !w.is_none() => {
                let arr = import_on(w, want_device, stream, |m| {
                    bad_param(format!("the workspace: {m}"))
                })?;
                if !arr.is_compact() {
                    return Err(bad_param("the workspace array is not contiguous"));
                }
                let len = arr.span_bytes().unwrap_or(0) as usize;
                if len < self.workspace_size {
                    return Err(to_py(Error::SizeInsufficient(format!(
                        "the workspace has {len} bytes; the plan needs {}",
                        self.workspace_size
                    ))));
                }
                let p = arr.data;
                held.push(arr);
                (p, len)
            }
            _ if self.workspace_size > 0 => {
                return Err(to_py(Error::NullPointer(format!(
                    "the plan needs a workspace of {} bytes (get_workspace_size()) but none was \
                     given",
                    self.workspace_size
                ))))
            }
            _ => (std::ptr::null_mut(), 0),
        };
        let call = Call {
            bindings,
            workspace: ws_ptr,
        };
        let inner = &handle.inner;
        let result = py.detach(|| {
            let call = call;
            // SAFETY: every pointer was checked above against its tensor: device, data type,
            // shape and strides equal to the tensor's layout (so the memory spans it), and
            // `held` owns each producer's tensor until after this call returns.
            unsafe { plan.execute(inner, &call.bindings, call.workspace, ws_len) }
        });
        drop(held);
        result.map_err(to_py)
    }
}

/// Pointers handed to the plan while the GIL is released.
struct Call {
    bindings: Vec<(i64, *mut c_void)>,
    workspace: *mut c_void,
}

// SAFETY: the pointers address memory the caller's arrays own; the arrays are held (with their
// DLPack deleters) by the thread that waits for this call, and the plan may run on any thread.
unsafe impl Send for Call {}

fn key_uid(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    if let Ok(t) = key.cast::<PyTensor>() {
        let t = &t.get().inner;
        return t.uid().ok_or_else(|| {
            bad_param(format!(
                "tensor '{}' has no uid yet: build the graph first",
                t.name()
            ))
        });
    }
    if key.cast::<PyInt>().is_ok() {
        return key.extract::<i64>();
    }
    Err(bad_param(format!(
        "a variant pack key is a kiln.Tensor or a tensor uid (int), not {}",
        key.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}

/// Imports `value` and checks it lives on `want` (a CUDA array is asked for its device before
/// it is exported with the handle's stream).
fn import_on(
    value: &Bound<'_, PyAny>,
    want: (i32, i32),
    stream: Stream,
    error: impl Fn(String) -> PyErr,
) -> PyResult<Imported> {
    if want.0 == KDL_CUDA {
        let dev = dlpack::device_of(value)?;
        if dev != want {
            return Err(error(format!(
                "the array is on {}, but the handle runs on {}",
                dlpack::device_text(dev),
                dlpack::device_text(want)
            )));
        }
    }
    let arr = dlpack::import(
        value,
        if want.0 == KDL_CUDA {
            stream
        } else {
            Stream::None
        },
    )?;
    if arr.device != want {
        return Err(error(format!(
            "the array is on {}, but the handle runs on {}",
            dlpack::device_text(arr.device),
            dlpack::device_text(want)
        )));
    }
    if arr.data.is_null() && arr.shape.iter().product::<i64>() != 0 {
        return Err(error("the array has no data pointer".into()));
    }
    Ok(arr)
}

fn check(slot: &Slot, arr: &Imported) -> PyResult<()> {
    if arr.data_type != Some(slot.data_type) {
        return Err(slot.error(format!(
            "the array is {} but the tensor is {}",
            arr.dtype_text, slot.data_type
        )));
    }
    if arr.shape != slot.dims {
        return Err(slot.error(format!(
            "the array has shape {:?} but the tensor has dims {:?}",
            arr.shape, slot.dims
        )));
    }
    if !dlpack::strides_match(&arr.shape, &arr.strides, &slot.strides) {
        return Err(slot.error(format!(
            "the array has strides {:?} (in elements) but the tensor has strides {:?}; pass an \
             array of the tensor's layout (e.g. np.ascontiguousarray, torch .contiguous()) or \
             give the tensor the array's strides",
            arr.strides, slot.strides
        )));
    }
    if slot.written && arr.read_only {
        return Err(slot.error("the array is read-only, but the graph writes this tensor"));
    }
    Ok(())
}
