//! What every entry point does at the C boundary: status codes, the per-thread last error, the
//! panic guard, null checks and the two-call copy-out.

use kiln_core::{Error, Result};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A status code returned by every `kiln_*` function: `KILN_STATUS_SUCCESS` (0) or one of the
/// error codes below. The numbering is stable and equals `kiln_core::Status`.
#[allow(non_camel_case_types)]
pub type kiln_status_t = i32;

/// The call succeeded.
pub const KILN_STATUS_SUCCESS: kiln_status_t = 0;
/// An argument is wrong: bad JSON, damaged or foreign bytes, a plan where a graph is expected,
/// an unknown tensor UID, a misaligned pointer.
pub const KILN_STATUS_BAD_PARAM: kiln_status_t = 1;
/// A required pointer argument is null.
pub const KILN_STATUS_BAD_PARAM_NULL_POINTER: kiln_status_t = 2;
/// The caller's buffer is smaller than the size the call reports; nothing was written.
pub const KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT: kiln_status_t = 3;
/// Valid, but not possible here: no engine for the graph or device, a newer format version, an
/// engine that cannot save its plans.
pub const KILN_STATUS_NOT_SUPPORTED: kiln_status_t = 4;
/// Something needed first was not done.
pub const KILN_STATUS_NOT_INITIALIZED: kiln_status_t = 5;
/// Memory could not be allocated.
pub const KILN_STATUS_ALLOC_FAILED: kiln_status_t = 6;
/// An engine plugin refused or failed; its message is in `kiln_get_last_error()`.
pub const KILN_STATUS_PLUGIN_ERROR: kiln_status_t = 7;
/// Execution started but failed.
pub const KILN_STATUS_EXECUTION_FAILED: kiln_status_t = 8;
/// A bug in kiln (a caught panic included); please report it with the last error message.
pub const KILN_STATUS_INTERNAL_ERROR: kiln_status_t = 9;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error (interior NULs become spaces).
pub(crate) fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // try_with: during thread teardown the slot may be gone; the message is then dropped.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = text);
}

/// The pointer `kiln_get_last_error` returns: valid until this thread's next failing call.
pub(crate) fn last_error_ptr() -> *const c_char {
    static EMPTY: &CStr = c"";
    LAST_ERROR
        .try_with(|slot| slot.borrow().as_ptr())
        .unwrap_or(EMPTY.as_ptr())
}

/// Runs `body` as the entry point `function`: a returned error sets the last error to
/// "`function`: message" and gives its status code; a panic is caught and becomes
/// `KILN_STATUS_INTERNAL_ERROR`. Nothing unwinds into C.
pub(crate) fn guard(function: &str, body: impl FnOnce() -> Result<()>) -> kiln_status_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => KILN_STATUS_SUCCESS,
        Ok(Err(e)) => {
            set_last_error(&format!("{function}: {e}"));
            e.status() as kiln_status_t
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            set_last_error(&format!(
                "{function}: internal error (a panic was caught): {what}"
            ));
            KILN_STATUS_INTERNAL_ERROR
        }
    }
}

/// A null-pointer error naming the argument.
pub(crate) fn null(argument: &str) -> Error {
    Error::NullPointer(format!("argument '{argument}' is null"))
}

/// `len` bytes at `ptr` as a slice, or a null-pointer error naming `argument`.
///
/// # Safety
/// A non-null `ptr` must address `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(ptr: *const u8, len: usize, argument: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        return Err(null(argument));
    }
    if len > isize::MAX as usize {
        return Err(Error::BadParam(format!(
            "argument '{argument}': length {len} is larger than any buffer"
        )));
    }
    // SAFETY: non-null, and the caller vouches for `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Writes `value` through `out` (checked non-null by the caller).
///
/// # Safety
/// `out` must be a valid, writable pointer.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) {
    // SAFETY: the caller checked `out` and vouches that it is writable.
    unsafe { out.write(value) }
}

/// The two-call pattern: always stores the needed size in `*size`; with a null `buf` that is
/// all; with a `buf` of `requested` bytes smaller than needed, refuses with `SizeInsufficient`
/// and writes nothing to `buf`; otherwise copies `data` into `buf`.
///
/// # Safety
/// `size` must be writable; a non-null `buf` must address `requested` writable bytes.
pub(crate) unsafe fn copy_out(
    data: &[u8],
    requested: usize,
    size: *mut usize,
    buf: *mut u8,
) -> Result<()> {
    if size.is_null() {
        return Err(null("size"));
    }
    // SAFETY: checked non-null above; writable per the caller's contract.
    unsafe { write_out(size, data.len()) };
    if buf.is_null() {
        return Ok(());
    }
    if requested < data.len() {
        return Err(Error::SizeInsufficient(format!(
            "the buffer has {requested} bytes but {} are needed (call with a null buffer to ask for the size)",
            data.len()
        )));
    }
    // SAFETY: buf holds at least `requested >= data.len()` writable bytes, and cannot overlap
    // `data`, which kiln owns.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf, data.len()) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: last_error_ptr returns a live NUL-terminated string.
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_internal_error_with_its_message() {
        let st = guard("kiln_test", || panic!("boom at node 'x'"));
        assert_eq!(st, KILN_STATUS_INTERNAL_ERROR);
        let e = last_error();
        assert!(e.starts_with("kiln_test: internal error"), "{e}");
        assert!(e.contains("boom at node 'x'"), "{e}");
    }

    #[test]
    fn errors_map_to_their_status_and_success_keeps_the_last_error() {
        let st = guard("kiln_test", || {
            Err(Error::NotSupported("no engine for sm_12".into()))
        });
        assert_eq!(st, KILN_STATUS_NOT_SUPPORTED);
        assert_eq!(guard("kiln_test", || Ok(())), KILN_STATUS_SUCCESS);
        assert!(last_error().contains("no engine for sm_12"));
        assert_eq!(
            guard("kiln_test", || Err(Error::NullPointer("x".into()))),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
    }

    #[test]
    fn the_last_error_is_per_thread() {
        set_last_error("main thread");
        std::thread::spawn(|| assert_eq!(last_error(), ""))
            .join()
            .unwrap();
        assert_eq!(last_error(), "main thread");
        set_last_error("with\0nul");
        assert_eq!(last_error(), "with nul");
    }

    #[test]
    fn copy_out_follows_the_two_call_pattern() {
        let data = [1u8, 2, 3, 4];
        let mut size = 0usize;
        // SAFETY: size is writable; buf is null.
        unsafe { copy_out(&data, 0, &mut size, std::ptr::null_mut()) }.unwrap();
        assert_eq!(size, 4);
        let mut small = [9u8; 3];
        // SAFETY: small holds 3 writable bytes.
        let e = unsafe { copy_out(&data, 3, &mut size, small.as_mut_ptr()) }.unwrap_err();
        assert_eq!(e.status(), kiln_core::Status::BadParamSizeInsufficient);
        assert_eq!(small, [9, 9, 9]);
        let mut big = [0u8; 6];
        // SAFETY: big holds 6 writable bytes.
        unsafe { copy_out(&data, 6, &mut size, big.as_mut_ptr()) }.unwrap();
        assert_eq!(&big[..4], &data);
        assert_eq!(big[4..], [0, 0]);
        // SAFETY: a null size is refused before any write.
        let e = unsafe { copy_out(&data, 6, std::ptr::null_mut(), big.as_mut_ptr()) }.unwrap_err();
        assert_eq!(e.status(), kiln_core::Status::BadParamNullPointer);
    }
}
