//! How far an engine's output may be from the reference engine's.
//!
//! The reference computes in f64 and rounds each output once to its data type; other engines
//! compute in f32 and round once too. Both read the same stored inputs. So the difference has two
//! parts:
//! - f32 compute error: a few f32 ulps per node, and for sums (convolution, matmul, reductions)
//!   an error growing with the number of terms. Inputs are O(1), so it is counted in absolute
//!   terms as `eps32 * terms`;
//! - the final rounding: both results may round to neighbouring values of the output type, one
//!   ulp apart: `2^-10` relative for f16, `2^-7` for bf16, nothing more for f32.

use kiln::DataType;

const EPS32: f64 = f32::EPSILON as f64;

/// An element passes when `|got - want| <= atol + rtol * |want|`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute part of the allowance.
    pub atol: f64,
    /// Part of the allowance relative to the reference value.
    pub rtol: f64,
}

impl Tolerance {
    /// Exact equality (for outputs every engine must reproduce bit for bit).
    pub const EXACT: Tolerance = Tolerance {
        atol: 0.0,
        rtol: 0.0,
    };

    /// The tolerance of an output of type `dt` computed through `depth` nodes (at least 1) whose
    /// longest sum has `terms` terms (1 for pointwise work), from inputs of magnitude about 1.
    pub fn for_output(dt: DataType, terms: usize, depth: usize) -> Tolerance {
        let terms = terms.max(1) as f64;
        let depth = depth.max(1) as f64;
        let compute_rel = 8.0 * EPS32 * depth;
        let compute_abs = 4.0 * EPS32 * (terms + depth);
        let (store_rel, store_abs) = match dt {
            DataType::F32 | DataType::F64 => (0.0, 0.0),
            // One ulp of the type, relative to the value; the smallest subnormal near zero.
            DataType::F16 => (1.25 * 2f64.powi(-10), 2f64.powi(-24)),
            DataType::Bf16 => (1.25 * 2f64.powi(-7), 2f64.powi(-133)),
            // Whole numbers: both engines must store the same one.
            DataType::Boolean | DataType::I8 | DataType::I32 => return Tolerance::EXACT,
            // One ulp (3 and 2 mantissa bits); the smallest subnormal near zero.
            DataType::Fp8E4m3 => (1.25 * 2f64.powi(-3), 2f64.powi(-9)),
            DataType::Fp8E5m2 => (1.25 * 2f64.powi(-2), 2f64.powi(-16)),
        };
        Tolerance {
            atol: compute_abs + store_abs,
            rtol: compute_rel + store_rel,
        }
    }

    /// The allowed difference at reference value `want`.
    pub fn allowed(&self, want: f64) -> f64 {
        self.atol + self.rtol * want.abs()
    }

    /// The same tolerance with both bounds multiplied by `factor` (for ill-conditioned modes).
    pub fn scaled(self, factor: f64) -> Tolerance {
        Tolerance {
            atol: self.atol * factor,
            rtol: self.rtol * factor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looser_for_half_types_and_long_sums() {
        let f32_pw = Tolerance::for_output(DataType::F32, 1, 1);
        let f16_pw = Tolerance::for_output(DataType::F16, 1, 1);
        let bf16_pw = Tolerance::for_output(DataType::Bf16, 1, 1);
        assert!(f32_pw.rtol < f16_pw.rtol && f16_pw.rtol < bf16_pw.rtol);
        assert!(f32_pw.rtol < 1e-5 && f32_pw.atol < 1e-5);
        let f32_sum = Tolerance::for_output(DataType::F32, 1000, 1);
        assert!(f32_sum.atol > 100.0 * f32_pw.atol / 2.0);
        assert!(f32_sum.allowed(1.0) < 1e-3);
    }
}
