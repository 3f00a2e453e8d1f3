//! `kiln_handle_t`: a handle bound to one device.

use crate::boundary::{guard, kiln_status_t, null, write_out};
use crate::object::{self, Contents, Kind};
use kiln_backend::{Device, Handle, Registry};
use kiln_core::{Error, Result};
use std::ffi::{c_char, c_void, CStr};

/// A handle bound to one device, with one instance of every engine plugin that accepts it.
/// Created by `kiln_handle_create`, released by `kiln_handle_destroy`. A handle may be used from
/// several threads at once. Opaque; every function checks that it is given a live handle
/// (docs/c-api.md, "Objects").
#[allow(non_camel_case_types)]
pub struct kiln_handle_t {
    _opaque: [u8; 0],
}

/// The handle for `device`; a CUDA device that no registered plugin accepts gets an error that
/// says so plainly, with each plugin's reason after it.
fn create(device: &str) -> Result<Handle> {
    let device = Device::parse(device)?;
    Handle::new(device).map_err(|e| {
        if device == Device::Cpu {
            return e;
        }
        let registry = Registry::global();
        let names: Vec<&str> = registry.plugins().iter().map(|p| p.name()).collect();
        let cuda: Vec<&str> = registry
            .plugins()
            .iter()
            .filter(|p| p.engines().iter().any(|e| e.name.starts_with("KILN_CUDA_")))
            .map(|p| p.name())
            .collect();
        let message = if cuda.is_empty() {
            format!(
                "device {device}: no CUDA engine is available (registered plugins: {}; a CUDA \
                 engine plugin can be added through KILN_PLUGIN_PATH): {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                },
                e.message()
            )
        } else {
            format!(
                "device {device}: the CUDA engine plugin {} cannot run on it here (no such GPU, \
                 driver or NVRTC?): {}",
                cuda.join(", "),
                e.message()
            )
        };
        Error::from_status(e.status(), message)
    })
}

/// Creates a handle on `device`: `"cpu"`, or `"cuda:N"` for CUDA GPU number N (`"cuda"` is
/// `"cuda:0"`). Engine plugins are discovered on first use: the built-in CPU engines, then the
/// libraries named by `KILN_PLUGIN_PATH`, then `kiln-plugins/` next to the executable.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `out` or `device` is null,
/// `KILN_STATUS_BAD_PARAM` for a device string of another form or not UTF-8, and
/// `KILN_STATUS_NOT_SUPPORTED` when no engine runs on the device (a CUDA device without a CUDA
/// engine plugin). On failure `*out` is set to null.
///
/// # Safety
/// `out` must be writable; `device` must be a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn kiln_handle_create(
    out: *mut *mut kiln_handle_t,
    device: *const c_char,
) -> kiln_status_t {
    guard("kiln_handle_create", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, std::ptr::null_mut()) };
        if device.is_null() {
            return Err(null("device"));
        }
        // SAFETY: non-null and NUL-terminated per the contract.
        let device = unsafe { CStr::from_ptr(device) }
            .to_str()
            .map_err(|_| Error::BadParam("device: the string is not UTF-8".into()))?;
        let handle = create(device)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(out, object::make(Contents::Handle(handle))) };
        Ok(())
    })
}

/// Sets the stream that work queued through `handle` runs on, for every engine plugin of the
/// handle: a `CUstream` for a CUDA handle, or null for the device's default stream (the initial
/// state). CPU handles accept any value and ignore it. The stream applies to calls made after
/// this one returns (`kiln_plan_execute` with this handle), from any thread; plans are not bound
/// to a stream.
///
/// Returns `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `handle` is null, `KILN_STATUS_BAD_PARAM`
/// when it is not a live handle, and `KILN_STATUS_PLUGIN_ERROR` when a plugin refuses the stream.
///
/// # Safety
/// `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked). On a CUDA handle, a non-null
/// `stream` must be a live stream of the handle's device, in the CUDA context kiln uses for it
/// (the device's primary context), that outlives the work queued on it.
#[no_mangle]
pub unsafe extern "C" fn kiln_handle_set_stream(
    handle: *mut kiln_handle_t,
    stream: *mut c_void,
) -> kiln_status_t {
    guard("kiln_handle_set_stream", || {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle_arg(handle, "handle") }?;
        // SAFETY: the stream's validity on a CUDA device is the caller's duty, stated above; CPU
        // plugins ignore it.
        unsafe { handle.set_stream(stream) }
    })
}

/// Destroys a handle made by `kiln_handle_create`. Plans loaded or built with it keep their own
/// reference to its plugins and stay usable. Null is accepted and does nothing; a handle
/// destroyed before (a double destroy), or another kind of object, is `KILN_STATUS_BAD_PARAM`.
/// The pointer stays recognisable as a destroyed handle: every later call with it is
/// `KILN_STATUS_BAD_PARAM`.
///
/// # Safety
/// `handle` must be null or an object of this API (any kind, live or destroyed: the kind and
/// state are checked).
#[no_mangle]
pub unsafe extern "C" fn kiln_handle_destroy(handle: *mut kiln_handle_t) -> kiln_status_t {
    guard("kiln_handle_destroy", || {
        // SAFETY: forwarded contract.
        unsafe { object::destroy(handle.cast(), "handle", Kind::Handle) }
    })
}

/// The handle behind `ptr`, checked to be a live handle; errors name `argument`.
///
/// # Safety
/// A non-null `ptr` must be an object of this API (any kind, live or destroyed); anything else
/// is undefined behaviour (docs/c-api.md).
pub(crate) unsafe fn handle_arg(ptr: *const kiln_handle_t, argument: &str) -> Result<Handle> {
    // SAFETY: forwarded contract.
    match unsafe { object::live(ptr.cast(), argument, Kind::Handle) }? {
        Contents::Handle(handle) => Ok(handle),
        _ => Err(Error::Internal(format!(
            "argument '{argument}': a handle tag over other contents"
        ))),
    }
}
