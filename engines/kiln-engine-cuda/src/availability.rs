//! Whether the CUDA driver and NVRTC can be used, checked before any cudarc call (cudarc panics
//! on a missing library), each result kept for the life of the process.

use cudarc::{driver, nvrtc};
use std::sync::OnceLock;

/// The oldest driver API version accepted (CUDA 13.0; cubins come from NVRTC 13).
pub const MIN_DRIVER_VERSION: i32 = 13000;
/// The oldest NVRTC major accepted.
pub const MIN_NVRTC_MAJOR: i32 = 13;

/// The driver API version (e.g. 13000), or why the driver cannot be used.
pub fn driver() -> Result<i32, String> {
    static STATE: OnceLock<Result<i32, String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: probing only tries to open the library; it calls nothing inside it.
            if !unsafe { driver::sys::is_culib_present() } {
                return Err("the CUDA driver library (libcuda) was not found by the loader".into());
            }
            let mut v = 0i32;
            // SAFETY: the library is present; cuDriverGetVersion writes one int.
            let st = unsafe { driver::sys::cuDriverGetVersion(&mut v) };
            if st != driver::sys::CUresult::CUDA_SUCCESS {
                return Err(format!("cuDriverGetVersion failed: {st:?}"));
            }
            if v < MIN_DRIVER_VERSION {
                return Err(format!(
                    "the CUDA driver supports CUDA {}.{}, this provider needs {}.{} or newer",
                    v / 1000,
                    v % 1000 / 10,
                    MIN_DRIVER_VERSION / 1000,
                    MIN_DRIVER_VERSION % 1000 / 10
                ));
            }
            driver::result::init().map_err(|e| format!("cuInit failed: {e}"))?;
            Ok(v)
        })
        .clone()
}

/// NVRTC's (major, minor), or why NVRTC cannot be used.
pub fn nvrtc() -> Result<(i32, i32), String> {
    static STATE: OnceLock<Result<(i32, i32), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: probing only tries to open the library.
            if !unsafe { nvrtc::sys::is_culib_present() } {
                return Err(
                    "NVRTC (libnvrtc) was not found by the loader; see docs/engines/cuda.md".into(),
                );
            }
            let (mut major, mut minor) = (0i32, 0i32);
            // SAFETY: the library is present; nvrtcVersion writes two ints.
            let st = unsafe { nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
            if st != nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("nvrtcVersion failed: {st:?}"));
            }
            if major < MIN_NVRTC_MAJOR {
                return Err(format!(
                    "NVRTC {major}.{minor} is older than {MIN_NVRTC_MAJOR}.0"
                ));
            }
            Ok((major, minor))
        })
        .clone()
}
