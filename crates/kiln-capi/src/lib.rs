//! kiln's C API: build an operation graph from JSON or saved bytes, build or load its plan, save
//! it, and run it on caller-owned memory, from C or C++.
//!
//! The header `include/kiln.h` is generated from this crate by cbindgen and committed
//! (`KILN_REGEN_HEADERS=1 cargo test -p kiln-capi --test header` rewrites it); `docs/c-api.md`
//! documents the API. Every entry point:
//! - checks its pointer arguments (a null one is `KILN_STATUS_BAD_PARAM_NULL_POINTER`), and the
//!   type tag and live state of every object argument (src/object.rs: a wrong kind, a destroyed
//!   object or zeroed memory is `KILN_STATUS_BAD_PARAM`),
//! - runs its body inside a panic guard (nothing unwinds into C; a caught panic is
//!   `KILN_STATUS_INTERNAL_ERROR`),
//! - returns the status code of kiln's error (`kiln_core::Status` numbering) and records its
//!   message for `kiln_get_last_error`.
//!
//! Serializers use the two-call pattern: a null buffer asks for the size; a buffer smaller than
//! the size is `KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT` and nothing is written.

mod boundary;
mod builtins;
mod graph;
mod handle;
mod object;
mod plan;
mod probe;

pub use boundary::{
    kiln_status_t, KILN_STATUS_ALLOC_FAILED, KILN_STATUS_BAD_PARAM,
    KILN_STATUS_BAD_PARAM_NULL_POINTER, KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT,
    KILN_STATUS_EXECUTION_FAILED, KILN_STATUS_INTERNAL_ERROR, KILN_STATUS_NOT_INITIALIZED,
    KILN_STATUS_NOT_SUPPORTED, KILN_STATUS_PLUGIN_ERROR, KILN_STATUS_SUCCESS,
};
pub use graph::{
    kiln_graph_deserialize, kiln_graph_destroy, kiln_graph_from_json, kiln_graph_serialize,
    kiln_graph_t,
};
pub use handle::{kiln_handle_create, kiln_handle_destroy, kiln_handle_set_stream, kiln_handle_t};
pub use plan::{
    kiln_graph_and_plan_serialize, kiln_graph_build_plan, kiln_plan_deserialize, kiln_plan_destroy,
    kiln_plan_execute, kiln_plan_serialize, kiln_plan_t, kiln_plan_tensor_uids,
    kiln_plan_workspace_size,
};
pub use probe::{
    kiln_blob_info_t, kiln_probe, KILN_BLOB_KIND_GRAPH, KILN_BLOB_KIND_GRAPH_AND_PLAN,
    KILN_BLOB_KIND_PLAN, KILN_NAME_CAPACITY, KILN_PROBLEM_CAPACITY,
};

use std::ffi::c_char;

/// The calling thread's last error message: that of the most recent call on this thread that
/// returned an error, prefixed with the function's name; `""` when no call has failed on this
/// thread. Successful calls leave it unchanged. The string is owned by kiln and valid until the
/// next failing call on the same thread; copy it to keep it. Never returns null.
#[no_mangle]
pub extern "C" fn kiln_get_last_error() -> *const c_char {
    boundary::last_error_ptr()
}

/// The name of status `status` as a static NUL-terminated string (`"KILN_STATUS_BAD_PARAM"`),
/// or `"KILN_STATUS_UNKNOWN"` for a code kiln does not define. Never returns null.
#[no_mangle]
pub extern "C" fn kiln_status_name(status: kiln_status_t) -> *const c_char {
    use kiln_core::Status;
    let name: &'static std::ffi::CStr = match Status::from_code(status) {
        Some(Status::Success) => c"KILN_STATUS_SUCCESS",
        Some(Status::BadParam) => c"KILN_STATUS_BAD_PARAM",
        Some(Status::BadParamNullPointer) => c"KILN_STATUS_BAD_PARAM_NULL_POINTER",
        Some(Status::BadParamSizeInsufficient) => c"KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT",
        Some(Status::NotSupported) => c"KILN_STATUS_NOT_SUPPORTED",
        Some(Status::NotInitialized) => c"KILN_STATUS_NOT_INITIALIZED",
        Some(Status::AllocFailed) => c"KILN_STATUS_ALLOC_FAILED",
        Some(Status::PluginError) => c"KILN_STATUS_PLUGIN_ERROR",
        Some(Status::ExecutionFailed) => c"KILN_STATUS_EXECUTION_FAILED",
        Some(Status::InternalError) => c"KILN_STATUS_INTERNAL_ERROR",
        None => c"KILN_STATUS_UNKNOWN",
    };
    name.as_ptr()
}
