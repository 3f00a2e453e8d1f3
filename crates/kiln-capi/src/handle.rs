//! `kiln_handle_t`: a handle bound to one device.

use crate::boundary::{arg, guard, kiln_status_t, null, write_out};
use kiln_backend::{Device, Handle, Registry};
use kiln_core::{Error, Result};
use std::ffi::{c_char, CStr};

/// A handle bound to one device, with one instance of every engine plugin that accepts it.
/// Created by `kiln_handle_create`, released by `kiln_handle_destroy`. A handle may be used from
/// several threads at once.
#[allow(non_camel_case_types)]
pub struct kiln_handle_t {
    pub(crate) handle: Handle,
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
        unsafe { write_out(out, Box::into_raw(Box::new(kiln_handle_t { handle }))) };
        Ok(())
    })
}

/// Destroys a handle made by `kiln_handle_create`. Plans loaded or built with it keep their own
/// reference to its plugins and stay usable. Null is accepted and does nothing.
///
/// # Safety
/// `handle` must be null or a handle from `kiln_handle_create` not destroyed before.
#[no_mangle]
pub unsafe extern "C" fn kiln_handle_destroy(handle: *mut kiln_handle_t) -> kiln_status_t {
    guard("kiln_handle_destroy", || {
        if !handle.is_null() {
            // SAFETY: made by Box::into_raw in kiln_handle_create and destroyed once.
            drop(unsafe { Box::from_raw(handle) });
        }
        Ok(())
    })
}

/// The handle behind `ptr`, or a null-pointer error naming `argument`.
///
/// # Safety
/// A non-null `ptr` must be a live handle from `kiln_handle_create`.
pub(crate) unsafe fn handle_arg<'a>(
    ptr: *const kiln_handle_t,
    argument: &str,
) -> Result<&'a Handle> {
    // SAFETY: forwarded contract.
    Ok(&unsafe { arg(ptr, argument) }?.handle)
}
