//! The device under test: chosen from the environment, so that one set of test binaries checks
//! the CPU engines (the default) or the engines of a GPU.
//!
//! The reference engine always runs on the CPU; only the engines under test move.

use kiln::{Device, Handle};
use std::sync::{Mutex, OnceLock};

/// Set this environment variable to the device whose engines the suite checks: `cpu` (the
/// default) or `cuda:N`. Anything else fails every case with a message saying why.
pub const DEVICE_ENV: &str = "KILN_CONFORMANCE_DEVICE";

/// The device named by [`DEVICE_ENV`], `cpu` when it is unset or empty.
///
/// Refuses a name [`Device::parse`] refuses, a deviceless CUDA target (`sm_NN`: plans built for
/// it cannot run), and `cuda:N` in a build without the crate's `cuda` feature.
pub fn device_under_test() -> Result<Device, String> {
    let value = std::env::var(DEVICE_ENV).unwrap_or_default();
    if value.trim().is_empty() {
        return Ok(Device::Cpu);
    }
    let device = Device::parse(&value).map_err(|e| format!("{DEVICE_ENV}={value}: {e}"))?;
    match device {
        Device::Cpu => Ok(device),
        Device::CudaTarget(_) => Err(format!(
            "{DEVICE_ENV}={value}: a deviceless CUDA target builds plans but cannot run them; \
             name a GPU (cuda:N)"
        )),
        Device::Cuda(_) if cfg!(feature = "cuda") => Ok(device),
        Device::Cuda(_) => Err(format!(
            "{DEVICE_ENV}={value}: this build of kiln-conformance has no CUDA support; build the \
             tests with `--features cuda` (scripts/gpu-package.sh does)"
        )),
    }
}

/// A handle on `device`. CPU handles are made fresh for every case, as before devices were a
/// parameter; GPU handles are made once per process and shared, since each one opens a device
/// context. A failure is not remembered, so every case reports it.
pub(crate) fn handle_on(device: Device) -> Result<Handle, String> {
    if device == Device::Cpu {
        return Handle::cpu().map_err(|e| format!("no CPU handle: {e}"));
    }
    static HANDLES: OnceLock<Mutex<Vec<(Device, Handle)>>> = OnceLock::new();
    let handles = HANDLES.get_or_init(|| Mutex::new(Vec::new()));
    // A test that panicked while holding the lock leaves the list itself intact.
    let mut handles = handles.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, h)) = handles.iter().find(|(d, _)| *d == device) {
        return Ok(h.clone());
    }
    let h = Handle::new(device).map_err(|e| format!("no handle on {device}: {e}"))?;
    handles.push((device, h.clone()));
    Ok(h)
}
