//! Whether NVRTC can be used, checked before any cudarc call (cudarc panics on a missing
//! library), the result kept for the life of the process. The driver's check lives with the
//! driver layer (`kiln_cuda_driver::availability`) and is re-exported here.

use cudarc::nvrtc;
use std::sync::OnceLock;

pub use kiln_cuda_driver::availability::{driver, MIN_DRIVER_VERSION};

/// The oldest NVRTC major accepted.
pub const MIN_NVRTC_MAJOR: i32 = 13;

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
