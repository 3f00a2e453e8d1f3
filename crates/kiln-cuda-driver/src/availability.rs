//! Whether the CUDA driver can be used, checked before any cudarc call (cudarc panics on a
//! missing library), the result kept for the life of the process.

use cudarc::driver;
use std::sync::OnceLock;

/// The oldest driver API version accepted (CUDA 13.0; cubins come from NVRTC 13).
pub const MIN_DRIVER_VERSION: i32 = 13000;

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
