//! `kiln_graph_t`: an operation graph, read from JSON or from saved bytes.

use crate::boundary::{bytes_arg, copy_out, guard, kiln_status_t, null, write_out};
use crate::object::{self, Contents, Kind};
use kiln_core::{Error, OpGraph, Result};
use std::ffi::c_char;
use std::sync::Arc;

/// A validated operation graph and its saved form (a graph blob). Made by `kiln_graph_from_json`
/// or `kiln_graph_deserialize`, released by `kiln_graph_destroy`. Immutable: it may be read from
/// several threads at once. Opaque; every function checks that it is given a live graph
/// (docs/c-api.md, "Objects").
#[allow(non_camel_case_types)]
pub struct kiln_graph_t {
    _opaque: [u8; 0],
}

/// What a live `kiln_graph_t` holds.
pub(crate) struct GraphData {
    pub(crate) graph: OpGraph,
    pub(crate) blob: Vec<u8>,
}

/// Stores a new graph in `*out`.
///
/// # Safety
/// `out` must be writable.
unsafe fn give(out: *mut *mut kiln_graph_t, graph: OpGraph) {
    let blob = kiln_format::encode_graph(&graph);
    let data = Arc::new(GraphData { graph, blob });
    // SAFETY: forwarded contract.
    unsafe { write_out(out, object::make(Contents::Graph(data))) };
}

/// The graph behind `ptr`, checked to be a live graph; errors name `argument`.
///
/// # Safety
/// A non-null `ptr` must be an object of this API (any kind, live or destroyed); anything else
/// is undefined behaviour (docs/c-api.md).
pub(crate) unsafe fn graph_arg(ptr: *const kiln_graph_t, argument: &str) -> Result<Arc<GraphData>> {
    // SAFETY: forwarded contract.
    match unsafe { object::live(ptr.cast(), argument, Kind::Graph) }? {
        Contents::Graph(graph) => Ok(graph),
        _ => Err(Error::Internal(format!(
            "argument '{argument}': a graph tag over other contents"
        ))),
    }
}

/// Reads a graph from `len` bytes of JSON text (the JSON mirror of the graph blob, described in
/// docs/format.md; need not be NUL-terminated) and validates it.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `json` or `out` is null;
/// `KILN_STATUS_BAD_PARAM` for text that is not UTF-8, not JSON of a graph (the message gives
/// line and column) or a graph that does not validate (the message names the tensor or node).
/// On failure `*out` is set to null.
///
/// # Safety
/// `json` must address `len` readable bytes; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_from_json(
    json: *const c_char,
    len: usize,
    out: *mut *mut kiln_graph_t,
) -> kiln_status_t {
    guard("kiln_graph_from_json", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, std::ptr::null_mut()) };
        // SAFETY: `len` readable bytes per the contract.
        let bytes = unsafe { bytes_arg(json.cast::<u8>(), len, "json") }?;
        let text = std::str::from_utf8(bytes).map_err(|e| {
            Error::BadParam(format!(
                "graph JSON: not UTF-8 at byte offset {}",
                e.valid_up_to()
            ))
        })?;
        let graph = kiln_format::graph_from_json(text)?;
        // SAFETY: checked non-null above.
        unsafe { give(out, graph) };
        Ok(())
    })
}

/// Loads a graph from saved bytes: a graph blob, or a graph-and-plan container of which only the
/// graph is kept (load its plan with `kiln_plan_deserialize`).
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `bytes` or `out` is null;
/// `KILN_STATUS_BAD_PARAM` for a bare plan blob (the message says to use the plan loader) and for
/// damaged, truncated or foreign bytes (the message names the field or offset);
/// `KILN_STATUS_NOT_SUPPORTED` for a newer format version. On failure `*out` is set to null.
///
/// # Safety
/// `bytes` must address `len` readable bytes; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_deserialize(
    bytes: *const u8,
    len: usize,
    out: *mut *mut kiln_graph_t,
) -> kiln_status_t {
    guard("kiln_graph_deserialize", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, std::ptr::null_mut()) };
        // SAFETY: `len` readable bytes per the contract.
        let bytes = unsafe { bytes_arg(bytes, len, "bytes") }?;
        let graph = kiln_format::decode_graph(bytes)?;
        // SAFETY: checked non-null above.
        unsafe { give(out, graph) };
        Ok(())
    })
}

/// Saves the graph (a graph blob), with the two-call pattern: with `buf` null, stores the size in
/// `*size` and returns `KILN_STATUS_SUCCESS`; with a `buf` of `requested` bytes, stores the size
/// and copies the blob, or returns `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and writes nothing
/// to `buf` when `requested` is smaller than the size. The bytes are the same on every call.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `graph` or `size` is null.
///
/// # Safety
/// `graph` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked); `size` writable; a non-null `buf` must address `requested` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_serialize(
    graph: *const kiln_graph_t,
    requested: usize,
    size: *mut usize,
    buf: *mut u8,
) -> kiln_status_t {
    guard("kiln_graph_serialize", || {
        // SAFETY: forwarded contract.
        let graph = unsafe { graph_arg(graph, "graph") }?;
        // SAFETY: forwarded contract.
        unsafe { copy_out(&graph.blob, requested, size, buf) }
    })
}

/// Destroys a graph. Plans built from it do not depend on it and stay usable. Null is accepted
/// and does nothing; a graph destroyed before (a double destroy), or another kind of object, is
/// `KILN_STATUS_BAD_PARAM`. The pointer stays recognisable as a destroyed graph: every later call
/// with it is `KILN_STATUS_BAD_PARAM`.
///
/// # Safety
/// `graph` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked).
#[no_mangle]
pub unsafe extern "C" fn kiln_graph_destroy(graph: *mut kiln_graph_t) -> kiln_status_t {
    guard("kiln_graph_destroy", || {
        // SAFETY: forwarded contract.
        unsafe { object::destroy(graph.cast(), "graph", Kind::Graph) }
    })
}
