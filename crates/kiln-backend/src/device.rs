//! Devices a handle can be bound to.

use kiln_core::{Error, Result};
use kiln_plugin_abi::{KilnDevice, KILN_DEVICE_CPU, KILN_DEVICE_CUDA};

/// A device: the host CPU or one CUDA GPU by ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    Cpu,
    Cuda(u32),
}

impl Device {
    /// Parses `"cpu"` or `"cuda:N"` (`"cuda"` means `cuda:0`).
    pub fn parse(s: &str) -> Result<Device> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("cpu") {
            return Ok(Device::Cpu);
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
        Err(Error::BadParam(format!("device '{s}': expected \"cpu\" or \"cuda:N\"")))
    }

    /// The C ABI form.
    pub fn to_abi(self) -> KilnDevice {
        match self {
            Device::Cpu => KilnDevice { kind: KILN_DEVICE_CPU, ordinal: 0 },
            Device::Cuda(n) => KilnDevice { kind: KILN_DEVICE_CUDA, ordinal: n as i32 },
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
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
        assert!(Device::parse("tpu").unwrap_err().to_string().contains("tpu"));
        assert!(Device::parse("cuda:-1").is_err());
    }
}
