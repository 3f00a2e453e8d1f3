//! Tensor element types and their conversions to and from `f32`/`f64`.

use half::{bf16, f16};
use serde::{Deserialize, Serialize};

/// The element type of a tensor. Tensors are f32, f16 or bf16; f64 exists for the reference
/// engine's own tensors and for tests. Compute is always f32 (the reference uses f64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    F32,
    F16,
    Bf16,
    F64,
}

impl DataType {
    /// All data types, in a fixed order.
    pub const ALL: [DataType; 4] = [DataType::F32, DataType::F16, DataType::Bf16, DataType::F64];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DataType::F32 => 4,
            DataType::F16 | DataType::Bf16 => 2,
            DataType::F64 => 8,
        }
    }

    /// The lowercase name used in JSON, the CLI and messages (`f32`, `f16`, `bf16`, `f64`).
    pub const fn name(self) -> &'static str {
        match self {
            DataType::F32 => "f32",
            DataType::F16 => "f16",
            DataType::Bf16 => "bf16",
            DataType::F64 => "f64",
        }
    }

    /// The data type called `name`, or `None`.
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// A stable integer code, used by the binary formats.
    pub const fn code(self) -> u8 {
        match self {
            DataType::F32 => 0,
            DataType::F16 => 1,
            DataType::Bf16 => 2,
            DataType::F64 => 3,
        }
    }

    /// The data type of stable code `code`, or `None`.
    pub fn from_code(code: u8) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.code() == code)
    }

    /// Decodes one element from the first `self.size()` bytes of `bytes` (native endianness).
    ///
    /// Returns `None` when `bytes` is too short.
    pub fn read_f64(self, bytes: &[u8]) -> Option<f64> {
        Some(match self {
            DataType::F32 => f32::from_ne_bytes(bytes.get(..4)?.try_into().ok()?) as f64,
            DataType::F16 => f16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?).to_f64(),
            DataType::Bf16 => bf16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?).to_f64(),
            DataType::F64 => f64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?),
        })
    }

    /// Encodes `value` (rounded to nearest) into the first `self.size()` bytes of `bytes`.
    ///
    /// Returns `None` when `bytes` is too short.
    pub fn write_f64(self, value: f64, bytes: &mut [u8]) -> Option<()> {
        match self {
            DataType::F32 => bytes
                .get_mut(..4)?
                .copy_from_slice(&(value as f32).to_ne_bytes()),
            DataType::F16 => bytes
                .get_mut(..2)?
                .copy_from_slice(&f16::from_f64(value).to_ne_bytes()),
            DataType::Bf16 => bytes
                .get_mut(..2)?
                .copy_from_slice(&bf16::from_f64(value).to_ne_bytes()),
            DataType::F64 => bytes.get_mut(..8)?.copy_from_slice(&value.to_ne_bytes()),
        }
        Some(())
    }

    /// Rounds `value` to the precision of this type and back (what storing it would keep).
    pub fn round_trip(self, value: f64) -> f64 {
        match self {
            DataType::F32 => value as f32 as f64,
            DataType::F16 => f16::from_f64(value).to_f64(),
            DataType::Bf16 => bf16::from_f64(value).to_f64(),
            DataType::F64 => value,
        }
    }

    /// Unit roundoff of the type (half the distance from 1 to the next value).
    pub fn epsilon(self) -> f64 {
        match self {
            DataType::F32 => f32::EPSILON as f64 / 2.0,
            DataType::F16 => 2f64.powi(-11),
            DataType::Bf16 => 2f64.powi(-8),
            DataType::F64 => f64::EPSILON / 2.0,
        }
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_round_trip_every_type() {
        for dt in DataType::ALL {
            let mut buf = [0u8; 8];
            dt.write_f64(1.5, &mut buf).unwrap();
            assert_eq!(dt.read_f64(&buf), Some(1.5));
            assert_eq!(DataType::from_code(dt.code()), Some(dt));
            assert_eq!(DataType::from_name(dt.name()), Some(dt));
        }
    }

    #[test]
    fn short_buffers_are_refused() {
        assert_eq!(DataType::F32.read_f64(&[0, 0]), None);
        assert_eq!(DataType::F64.write_f64(1.0, &mut [0u8; 4]), None);
    }
}
