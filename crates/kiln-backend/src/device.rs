//! Devices a handle can be bound to.

use kiln_core::{Error, Result};
use kiln_plugin_abi::{KilnDevice, KILN_DEVICE_CPU, KILN_DEVICE_CUDA, KILN_DEVICE_CUDA_TARGET};

/// A device: the host CPU, one CUDA GPU by ordinal, or a CUDA target architecture with no GPU
/// behind it (deviceless build: plans can be built and saved for `sm_N`, not executed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Cuda(u32),
    /// A CUDA architecture by SM number (90 for `sm_90`), for building plans without a GPU.
    CudaTarget(u32),
}

impl Device {
    /// Parses `"cpu"`, `"cuda:N"` (`"cuda"` means `cuda:0`) or a deviceless CUDA target
    /// `"sm_NN"` (e.g. `"sm_90"`, SM numbers 10 to 999). Refuses anything else, naming it.
    pub fn parse(s: &str) -> Result<Device> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("cpu") {
            return Ok(Device::Cpu);
        }
        if let Some(n) = s.strip_prefix("sm_") {
            if let Ok(n) = n.parse::<u32>() {
                if (10..=999).contains(&n) {
                    return Ok(Device::CudaTarget(n));
                }
            }
        }
        if s.eq_ignore_ascii_case("cuda") {
            return Ok(Device::Cuda(0));
        }
        if let Some(n) = s.strip_prefix("cuda:") {
            if let Ok(n) = n.parse::<u32>() {
                if n <= i32::MAX as u32 {
                    return Ok(Device::Cuda(n));
                }
            }
        }
        Err(Error::BadParam(format!(
            "device '{s}': expected \"cpu\", \"cuda:N\" or \"sm_NN\""
        )))
    }

    /// The C ABI form.
    pub fn to_abi(self) -> KilnDevice {
        match self {
            Device::Cpu => KilnDevice {
                kind: KILN_DEVICE_CPU,
                ordinal: 0,
            },
            Device::Cuda(n) => KilnDevice {
                kind: KILN_DEVICE_CUDA,
                ordinal: n as i32,
            },
            Device::CudaTarget(sm) => KilnDevice {
                kind: KILN_DEVICE_CUDA_TARGET,
                ordinal: sm as i32,
            },
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
            Device::CudaTarget(sm) => write!(f, "sm_{sm}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices_and_refuses_others() {
        assert_eq!(Device::parse("cpu").unwrap(), Device::Cpu);
        assert_eq!(Device::parse("cuda:3").unwrap(), Device::Cuda(3));
        assert!(Device::parse("tpu")
            .unwrap_err()
            .to_string()
            .contains("tpu"));
        assert!(Device::parse("cuda:-1").is_err());
        assert_eq!(Device::parse("sm_90").unwrap(), Device::CudaTarget(90));
        assert_eq!(Device::CudaTarget(90).to_string(), "sm_90");
        assert!(Device::parse("sm_x").is_err());
        assert!(Device::parse("sm_1").is_err());
    }
}
