//! Tensor element types and their conversions to and from `f32`/`f64`.

use crate::fp8::Fp8Format;
use half::{bf16, f16};
use serde::{Deserialize, Serialize};

/// The element type of a tensor.
///
/// Floating-point tensors are f32, f16 or bf16; f64 exists for the reference engine's own
/// tensors and for tests. `bool`, `i8` and `i32` tensors carry comparison and logical results,
/// select masks and indices (pointwise modes that cuDNN allows them for, resample's index
/// output); `fp8_e4m3` and `fp8_e5m2` are storage types (see [`crate::fp8`]). Compute is always
/// f32 (the reference uses f64): every element is read as a float and written back rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DataType {
    F32,
    F16,
    Bf16,
    F64,
    /// One byte per element: 0 is false, anything else true; written as 0 or 1.
    #[serde(rename = "bool")]
    Boolean,
    /// Signed 8-bit integers; writing rounds to nearest (ties to even) and saturates, NaN is 0.
    I8,
    /// Signed 32-bit integers; writing rounds like [`DataType::I8`].
    I32,
    /// FP8 E4M3 storage ([`Fp8Format::E4m3`]).
    #[serde(rename = "fp8_e4m3")]
    Fp8E4m3,
    /// FP8 E5M2 storage ([`Fp8Format::E5m2`]).
    #[serde(rename = "fp8_e5m2")]
    Fp8E5m2,
}

impl DataType {
    /// All data types, in code order.
    pub const ALL: [DataType; 9] = [
        DataType::F32,
        DataType::F16,
        DataType::Bf16,
        DataType::F64,
        DataType::Boolean,
        DataType::I8,
        DataType::I32,
        DataType::Fp8E4m3,
        DataType::Fp8E5m2,
    ];

    /// The floating-point types of full or half width that every operation accepts.
    pub const FLOATS: [DataType; 4] = [DataType::F32, DataType::F16, DataType::Bf16, DataType::F64];

    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DataType::F32 | DataType::I32 => 4,
            DataType::F16 | DataType::Bf16 => 2,
            DataType::F64 => 8,
            DataType::Boolean | DataType::I8 | DataType::Fp8E4m3 | DataType::Fp8E5m2 => 1,
        }
    }

    /// The name used in JSON, the CLI and messages (`f32`, `f16`, `bf16`, `f64`, `bool`, `i8`,
    /// `i32`, `fp8_e4m3`, `fp8_e5m2`).
    pub const fn name(self) -> &'static str {
        match self {
            DataType::F32 => "f32",
            DataType::F16 => "f16",
            DataType::Bf16 => "bf16",
            DataType::F64 => "f64",
            DataType::Boolean => "bool",
            DataType::I8 => "i8",
            DataType::I32 => "i32",
            DataType::Fp8E4m3 => "fp8_e4m3",
            DataType::Fp8E5m2 => "fp8_e5m2",
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
            DataType::Boolean => 4,
            DataType::I8 => 5,
            DataType::I32 => 6,
            DataType::Fp8E4m3 => 7,
            DataType::Fp8E5m2 => 8,
        }
    }

    /// The data type of stable code `code`, or `None`.
    pub fn from_code(code: u8) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.code() == code)
    }

    /// True for `bool`, `i8` and `i32`: the types whose values are whole numbers.
    pub const fn is_integral(self) -> bool {
        matches!(self, DataType::Boolean | DataType::I8 | DataType::I32)
    }

    /// True for the FP8 storage types.
    pub const fn is_fp8(self) -> bool {
        matches!(self, DataType::Fp8E4m3 | DataType::Fp8E5m2)
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
            DataType::Boolean => f64::from(u8::from(*bytes.first()? != 0)),
            DataType::I8 => f64::from(*bytes.first()? as i8),
            DataType::I32 => f64::from(i32::from_ne_bytes(bytes.get(..4)?.try_into().ok()?)),
            DataType::Fp8E4m3 => Fp8Format::E4m3.decode(*bytes.first()?),
            DataType::Fp8E5m2 => Fp8Format::E5m2.decode(*bytes.first()?),
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
            DataType::Boolean => *bytes.first_mut()? = u8::from(value != 0.0),
            DataType::I8 => *bytes.first_mut()? = integral(value, -128.0, 127.0) as i8 as u8,
            DataType::I32 => bytes.get_mut(..4)?.copy_from_slice(
                &(integral(value, i32::MIN as f64, i32::MAX as f64) as i32).to_ne_bytes(),
            ),
            DataType::Fp8E4m3 => *bytes.first_mut()? = Fp8Format::E4m3.encode(value),
            DataType::Fp8E5m2 => *bytes.first_mut()? = Fp8Format::E5m2.encode(value),
        }
        Some(())
    }

    /// Rounds `value` to the precision of this type and back (what storing it would keep).
    pub fn round_trip(self, value: f64) -> f64 {
        let mut buf = [0u8; 8];
        match self.write_f64(value, &mut buf) {
            Some(()) => self.read_f64(&buf).unwrap_or(f64::NAN),
            None => f64::NAN,
        }
    }

    /// Unit roundoff of the type (half the distance from 1 to the next value); 0 for the
    /// integral types, whose stored values are exact.
    pub fn epsilon(self) -> f64 {
        match self {
            DataType::F32 => f32::EPSILON as f64 / 2.0,
            DataType::F16 => 2f64.powi(-11),
            DataType::Bf16 => 2f64.powi(-8),
            DataType::F64 => f64::EPSILON / 2.0,
            DataType::Boolean | DataType::I8 | DataType::I32 => 0.0,
            DataType::Fp8E4m3 => 2f64.powi(-4),
            DataType::Fp8E5m2 => 2f64.powi(-3),
        }
    }
}

/// `value` rounded to nearest (ties to even), clamped to `lo..=hi`; NaN is 0.
fn integral(value: f64, lo: f64, hi: f64) -> f64 {
    if value.is_nan() {
        0.0
    } else {
        value.round_ties_even().clamp(lo, hi)
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
            let value = if dt.is_integral() { 1.0 } else { 1.5 };
            dt.write_f64(value, &mut buf).unwrap();
            assert_eq!(dt.read_f64(&buf), Some(value));
            assert_eq!(DataType::from_code(dt.code()), Some(dt));
            assert_eq!(DataType::from_name(dt.name()), Some(dt));
        }
    }

    #[test]
    fn integral_types_round_saturate_and_zero_nan() {
        assert_eq!(DataType::I8.round_trip(2.5), 2.0);
        assert_eq!(DataType::I8.round_trip(-300.0), -128.0);
        assert_eq!(DataType::I8.round_trip(f64::NAN), 0.0);
        assert_eq!(DataType::I32.round_trip(1e12), i32::MAX as f64);
        assert_eq!(DataType::I32.round_trip(-7.5), -8.0);
        assert_eq!(DataType::Boolean.round_trip(-0.25), 1.0);
        assert_eq!(DataType::Boolean.round_trip(0.0), 0.0);
        assert_eq!(DataType::Fp8E4m3.round_trip(3.3), 3.25);
        assert_eq!(DataType::Fp8E5m2.round_trip(3.3), 3.5);
    }

    #[test]
    fn short_buffers_are_refused() {
        assert_eq!(DataType::F32.read_f64(&[0, 0]), None);
        assert_eq!(DataType::F64.write_f64(1.0, &mut [0u8; 4]), None);
    }
}
