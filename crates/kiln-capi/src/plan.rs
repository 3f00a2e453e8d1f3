//! `kiln_plan_t`: an execution plan, built from a graph or restored from saved bytes.

use crate::boundary::{bytes_arg, copy_out, guard, kiln_status_t, null, write_out};
use crate::graph::{graph_arg, kiln_graph_t, GraphData};
use crate::handle::{handle_arg, kiln_handle_t};
use crate::object::{self, Contents, Kind};
use kiln_backend::{heuristics, ExecutionPlan, Handle, HeurMode};
use kiln_core::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// A compiled plan bound to the device of the handle it was built or loaded with. Immutable: it
/// may be executed from several threads at once, each with its own workspace and outputs.
/// Released by `kiln_plan_destroy`. Opaque; every function checks that it is given a live plan
/// (docs/c-api.md, "Objects").
#[allow(non_camel_case_types)]
pub struct kiln_plan_t {
    _opaque: [u8; 0],
}

/// Builds the first plan that builds, trying engines in the default heuristic order
/// (`HeurMode::A`: optimized engines first, reference engines last).
fn build(handle: &Handle, graph: &GraphData) -> Result<ExecutionPlan> {
    let configs = heuristics::engine_configs(handle, &graph.blob, &[HeurMode::A])?;
    if configs.is_empty() {
        let declined: Vec<String> = heuristics::declined_engines(handle, &graph.blob)
            .iter()
            .map(ToString::to_string)
            .collect();
        return Err(Error::NotSupported(format!(
            "no engine on {} supports this graph: {}",
            handle.device(),
            declined.join("; ")
        )));
    }
    let mut failures = Vec::new();
    for cfg in &configs {
        match ExecutionPlan::build(handle, cfg, &graph.graph, &graph.blob) {
            Ok(plan) => return Ok(plan),
            Err(e) => failures.push(format!("{}: {e}", cfg.engine_name)),
        }
    }
    Err(Error::NotSupported(format!(
        "no plan could be built: {}",
        failures.join("; ")
    )))
}

/// Stores a new plan in `*out`.
///
/// # Safety
/// `out` must be writable.
unsafe fn give(out: *mut *mut kiln_plan_t, plan: ExecutionPlan) {
    // SAFETY: forwarded contract.
    unsafe { write_out(out, object::make(Contents::Plan(Arc::new(plan)))) };
}

/// The plan behind `ptr`, checked to be a live plan; errors name `argument`.
///
/// # Safety
/// A non-null `ptr` must be an object of this API (any kind, live or destroyed); anything else
/// is undefined behaviour (docs/c-api.md).
unsafe fn plan_arg(ptr: *const kiln_plan_t, argument: &str) -> Result<Arc<ExecutionPlan>> {
    // SAFETY: forwarded contract.
    match unsafe { object::live(ptr.cast(), argument, Kind::Plan) }? {
        Contents::Plan(plan) => Ok(plan),
        _ => Err(Error::Internal(format!(
            "argument '{argument}': a plan tag over other contents"
        ))),
    }
}

/// Builds a plan for `graph` on `handle`'s device with the default heuristics: engines in their
/// heuristic order (optimized first, the reference engine last); the first that builds is kept.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null,
/// `KILN_STATUS_NOT_SUPPORTED` when no engine on the device supports the graph (each engine's
/// reason is in the message). On failure `*out` is set to null.
///
/// # Safety
/// `handle` and `graph` must be null or objects of this API (any kind, live or destroyed: the
/// kind and state are checked); `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_build_plan(
    handle: *mut kiln_handle_t,
    graph: *mut kiln_graph_t,
    out: *mut *mut kiln_plan_t,
) -> kiln_status_t {
    guard("kiln_graph_build_plan", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, std::ptr::null_mut()) };
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_arg(handle, "handle") }?;
        // SAFETY: forwarded contract.
        let graph = unsafe { graph_arg(graph, "graph") }?;
        let plan = build(&handle, &graph)?;
        // SAFETY: checked non-null above.
        unsafe { give(out, plan) };
        Ok(())
    })
}

/// Saves the plan alone (a bare plan blob), with the two-call pattern of `kiln_graph_serialize`.
/// A plan loaded from bytes saves to exactly the plan bytes it was loaded from, without calling
/// its engine (so the re-save holds the original kernel; build again from the graph for a newer
/// one); a built plan asks its engine once, on the first save, and returns the same bytes
/// afterwards.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `plan` or `size` is null,
/// `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` when `requested` is too small (nothing written),
/// `KILN_STATUS_NOT_SUPPORTED` when the plan's engine cannot save plans, and
/// `KILN_STATUS_PLUGIN_ERROR` when its save fails.
///
/// # Safety
/// `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked); `size` writable; a non-null `buf` must address `requested` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_serialize(
    plan: *const kiln_plan_t,
    requested: usize,
    size: *mut usize,
    buf: *mut u8,
) -> kiln_status_t {
    guard("kiln_plan_serialize", || {
        // SAFETY: forwarded contract.
        let plan = unsafe { plan_arg(plan, "plan") }?;
        if size.is_null() {
            return Err(null("size"));
        }
        let bytes = plan.serialize()?;
        // SAFETY: forwarded contract.
        unsafe { copy_out(&bytes, requested, size, buf) }
    })
}

/// Restores a plan on `handle`'s device from saved bytes, without rebuilding: a bare plan blob,
/// or a graph-and-plan container of which the plan part is kept. Its re-save returns exactly the
/// plan bytes it was loaded from: the original kernel, provider version and format versions. The
/// plan keeps one copy of those bytes (code objects included) for its lifetime. To run a newer
/// kernel after upgrading a provider, build the plan again from its graph.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null; `KILN_STATUS_BAD_PARAM`
/// for a graph-only blob (the message says to use the graph loader) and for damaged, truncated
/// or foreign bytes; `KILN_STATUS_NOT_SUPPORTED` when the plan's engine is not available on the
/// handle or the format version is newer; `KILN_STATUS_PLUGIN_ERROR` when the engine refuses
/// the payload (its message is kept). On failure `*out` is set to null and nothing is kept.
///
/// # Safety
/// `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked); `bytes` must address `len` readable bytes; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_deserialize(
    handle: *mut kiln_handle_t,
    bytes: *const u8,
    len: usize,
    out: *mut *mut kiln_plan_t,
) -> kiln_status_t {
    guard("kiln_plan_deserialize", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, std::ptr::null_mut()) };
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_arg(handle, "handle") }?;
        // SAFETY: forwarded contract.
        let bytes = unsafe { bytes_arg(bytes, len, "bytes") }?;
        let plan = ExecutionPlan::restore(&handle, bytes)?;
        // SAFETY: checked non-null above.
        unsafe { give(out, plan) };
        Ok(())
    })
}

/// Saves `graph` together with `plan` (a graph-and-plan container), with the two-call pattern of
/// `kiln_graph_serialize`. The plan part is the plan's saved bytes (see `kiln_plan_serialize`).
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `graph`, `plan` or `size` is null;
/// `KILN_STATUS_BAD_PARAM` when the plan binds other tensor UIDs than the graph's (it was built
/// for another graph); `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` when `requested` is too small
/// (nothing written); `KILN_STATUS_NOT_SUPPORTED` when the plan's engine cannot save plans.
///
/// # Safety
/// `graph` and `plan` must be null or objects of this API (any kind, live or destroyed: the
/// kind and state are checked); `size` writable; a non-null `buf` must address `requested`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_and_plan_serialize(
    graph: *const kiln_graph_t,
    plan: *const kiln_plan_t,
    requested: usize,
    size: *mut usize,
    buf: *mut u8,
) -> kiln_status_t {
    guard("kiln_graph_and_plan_serialize", || {
        // SAFETY: forwarded contract.
        let graph = unsafe { graph_arg(graph, "graph") }?;
        // SAFETY: forwarded contract.
        let plan = unsafe { plan_arg(plan, "plan") }?;
        if size.is_null() {
            return Err(null("size"));
        }
        let mut want: Vec<i64> = graph.graph.bound_tensors().map(|t| t.uid).collect();
        let mut have = plan.tensor_uids().to_vec();
        want.sort_unstable();
        have.sort_unstable();
        if want != have {
            return Err(Error::BadParam(format!(
                "the plan binds tensor uids {have:?} but the graph binds {want:?}: it was built for another graph"
            )));
        }
        let plan_bytes = plan.serialize()?;
        let container = kiln_format::encode_container(&graph.blob, Some(&plan_bytes));
        // SAFETY: forwarded contract.
        unsafe { copy_out(&container, requested, size, buf) }
    })
}

/// Stores in `*out` the workspace bytes `kiln_plan_execute` needs (0: none, the workspace may be
/// null).
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when an argument is null.
///
/// # Safety
/// `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked); `out` writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_workspace_size(
    plan: *const kiln_plan_t,
    out: *mut usize,
) -> kiln_status_t {
    guard("kiln_plan_workspace_size", || {
        // SAFETY: forwarded contract.
        let plan = unsafe { plan_arg(plan, "plan") }?;
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, plan.workspace_size()) };
        Ok(())
    })
}

/// The UIDs of the tensors `kiln_plan_execute` must bind, with the two-call pattern: stores their
/// number in `*count`; with `uids` null that is all; with `capacity` smaller than the number,
/// returns `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and writes nothing to `uids`; otherwise
/// copies them.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `plan` or `count` is null.
///
/// # Safety
/// `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked); `count` writable; a non-null `uids` must address `capacity` writable
/// `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_tensor_uids(
    plan: *const kiln_plan_t,
    uids: *mut i64,
    capacity: usize,
    count: *mut usize,
) -> kiln_status_t {
    guard("kiln_plan_tensor_uids", || {
        // SAFETY: forwarded contract.
        let plan = unsafe { plan_arg(plan, "plan") }?;
        if count.is_null() {
            return Err(null("count"));
        }
        let have = plan.tensor_uids();
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(count, have.len()) };
        if uids.is_null() {
            return Ok(());
        }
        if capacity < have.len() {
            return Err(Error::SizeInsufficient(format!(
                "room for {capacity} uids but the plan binds {}",
                have.len()
            )));
        }
        // SAFETY: uids holds capacity >= have.len() writable i64 that do not overlap the plan's.
        unsafe { std::ptr::copy_nonoverlapping(have.as_ptr(), uids, have.len()) };
        Ok(())
    })
}

/// Runs `plan` on `handle` with `count` (UID, pointer) bindings and `workspace`.
///
/// Checked, each with an error naming the UID: `count` is at most the number of UIDs of
/// `kiln_plan_tensor_uids` (checked first, before anything is read or allocated); `handle` is on
/// the plan's device; every UID of
/// `kiln_plan_tensor_uids` is bound exactly once and no other; no pointer is null; each pointer
/// meets its tensor's alignment (version-2 plans); the workspace is non-null when
/// `kiln_plan_workspace_size` is not 0. These give `KILN_STATUS_BAD_PARAM` or
/// `KILN_STATUS_BAD_PARAM_NULL_POINTER`; an engine failure gives `KILN_STATUS_PLUGIN_ERROR` or
/// `KILN_STATUS_EXECUTION_FAILED`.
///
/// Not checkable here, and so the caller's duty: each pointer addresses memory of the plan's
/// device large enough for its tensor's layout (dims, strides, data type of the graph), valid for
/// the call; outputs do not overlap other bound memory; the workspace holds at least
/// `kiln_plan_workspace_size` bytes and is not used by another call at the same time.
///
/// # Safety
/// As above; `handle` and `plan` must be null or objects of this API (any kind, live or
/// destroyed: the kind and state are checked); `uids` and `pointers` must address `count`
/// readable elements (they may be null when `count` is 0).
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_execute(
    handle: *mut kiln_handle_t,
    plan: *const kiln_plan_t,
    uids: *const i64,
    pointers: *const *mut c_void,
    count: usize,
    workspace: *mut c_void,
) -> kiln_status_t {
    guard("kiln_plan_execute", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_arg(handle, "handle") }?;
        // SAFETY: forwarded contract.
        let plan = unsafe { plan_arg(plan, "plan") }?;
        // Checked before anything is read or allocated: a plan binds each of its UIDs exactly
        // once, so more bindings than it has UIDs cannot be right (fewer get the missing UID
        // named below).
        let expected = plan.tensor_uids().len();
        if count > expected {
            return Err(Error::BadParam(format!(
                "count is {count} but the plan binds {expected} tensors (uids {:?})",
                plan.tensor_uids()
            )));
        }
        let mut bindings = Vec::with_capacity(count);
        if count > 0 {
            if uids.is_null() {
                return Err(null("uids"));
            }
            if pointers.is_null() {
                return Err(null("pointers"));
            }
            // SAFETY: non-null, `count` readable elements per the contract.
            let (uids, pointers) = unsafe {
                (
                    std::slice::from_raw_parts(uids, count),
                    std::slice::from_raw_parts(pointers, count),
                )
            };
            bindings.extend(uids.iter().copied().zip(pointers.iter().copied()));
        }
        // SAFETY: ExecutionPlan::execute checks the binding set, null pointers, alignment and the
        // workspace's presence; the memory sizes and the workspace length are the caller's duty,
        // documented above.
        unsafe { plan.execute(&handle, &bindings, workspace, plan.workspace_size()) }
    })
}

/// Destroys a plan. Null is accepted and does nothing; a plan destroyed before (a double
/// destroy), or another kind of object, is `KILN_STATUS_BAD_PARAM`. The pointer stays
/// recognisable as a destroyed plan: every later call with it is `KILN_STATUS_BAD_PARAM`. A call
/// still running with the plan on another thread keeps it alive until it returns.
///
/// # Safety
/// `plan` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked).
#[no_mangle]
pub unsafe extern "C" fn kiln_plan_destroy(plan: *mut kiln_plan_t) -> kiln_status_t {
    guard("kiln_plan_destroy", || {
        // SAFETY: forwarded contract.
        unsafe { object::destroy(plan.cast(), "plan", Kind::Plan) }
    })
}
