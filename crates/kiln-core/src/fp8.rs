//! The two 8-bit float storage formats of NVIDIA's FP8 (OCP 8-bit floating point): E4M3
//! (`float8_e4m3fn`: 4 exponent bits, bias 7, no infinities, NaN = `S.1111.111`, largest finite
//! 448) and E5M2 (`float8_e5m2`: 5 exponent bits, bias 15, IEEE-style infinities and NaNs,
//! largest finite 57344).
//!
//! Encoding rounds to nearest, ties to even, and **saturates**: a finite value beyond the largest
//! finite one, and an infinity, become the largest finite value of its sign (CUDA's
//! `__NV_SATFINITE`, what cuDNN uses); NaN stays NaN. The CUDA provider converts with the same
//! rule, so both engines store the same bits.

/// One of the FP8 formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8Format {
    /// 4 exponent bits, 3 mantissa bits, no infinities.
    E4m3,
    /// 5 exponent bits, 2 mantissa bits, with infinities.
    E5m2,
}

impl Fp8Format {
    const fn mantissa_bits(self) -> u32 {
        match self {
            Fp8Format::E4m3 => 3,
            Fp8Format::E5m2 => 2,
        }
    }

    const fn bias(self) -> i32 {
        match self {
            Fp8Format::E4m3 => 7,
            Fp8Format::E5m2 => 15,
        }
    }

    /// The largest finite value.
    pub const fn max_finite(self) -> f64 {
        match self {
            Fp8Format::E4m3 => 448.0,
            Fp8Format::E5m2 => 57344.0,
        }
    }

    /// The bits of the largest finite value (sign clear).
    const fn max_bits(self) -> u8 {
        match self {
            Fp8Format::E4m3 => 0x7e,
            Fp8Format::E5m2 => 0x7b,
        }
    }

    const fn nan_bits(self) -> u8 {
        match self {
            Fp8Format::E4m3 => 0x7f,
            Fp8Format::E5m2 => 0x7e,
        }
    }

    /// Decodes `bits`.
    pub fn decode(self, bits: u8) -> f64 {
        let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
        let m_bits = self.mantissa_bits();
        let exp = ((bits & 0x7f) >> m_bits) as i32;
        let man = (bits & ((1 << m_bits) - 1)) as f64;
        let scale = (1u32 << m_bits) as f64;
        match self {
            Fp8Format::E4m3 if bits & 0x7f == 0x7f => return f64::NAN,
            Fp8Format::E5m2 if exp == 31 => {
                return if man == 0.0 {
                    sign * f64::INFINITY
                } else {
                    f64::NAN
                }
            }
            _ => {}
        }
        let magnitude = if exp == 0 {
            man / scale * 2f64.powi(1 - self.bias())
        } else {
            (1.0 + man / scale) * 2f64.powi(exp - self.bias())
        };
        sign * magnitude
    }

    /// Encodes `value`: round to nearest even, saturating to the largest finite value.
    pub fn encode(self, value: f64) -> u8 {
        if value.is_nan() {
            return self.nan_bits();
        }
        let sign = if value.is_sign_negative() { 0x80u8 } else { 0 };
        let a = value.abs();
        if a >= self.max_finite() {
            return sign | self.max_bits();
        }
        let m_bits = self.mantissa_bits() as i32;
        let min_normal_exp = 1 - self.bias();
        // The spacing of representable values around `a`: subnormals share the smallest one.
        let exp = if a == 0.0 {
            min_normal_exp
        } else {
            (a.log2().floor() as i32).max(min_normal_exp)
        };
        let ulp = 2f64.powi(exp - m_bits);
        // `a / ulp` is exact in f64 (a power-of-two scaling); round half to even.
        let q = a / ulp;
        let mut n = q.floor();
        let frac = q - n;
        if frac > 0.5 || (frac == 0.5 && n % 2.0 == 1.0) {
            n += 1.0;
        }
        let rounded = n * ulp;
        if rounded >= self.max_finite() {
            // Rounding up past the largest finite value (only possible from just below it).
            return sign | self.max_bits();
        }
        if rounded == 0.0 {
            return sign;
        }
        let scale = (1i64 << m_bits) as f64;
        let e = rounded.log2().floor() as i32;
        if e < min_normal_exp {
            // Subnormal: exponent field 0, mantissa = rounded / 2^(min_normal_exp - m_bits).
            let man = (rounded / 2f64.powi(min_normal_exp - m_bits)) as u8;
            return sign | man;
        }
        let man = ((rounded / 2f64.powi(e) - 1.0) * scale) as u8;
        let field = (e + self.bias()) as u8;
        sign | (field << m_bits) | man
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bit_pattern_decodes_and_encodes_back() {
        for f in [Fp8Format::E4m3, Fp8Format::E5m2] {
            for bits in 0..=255u8 {
                let v = f.decode(bits);
                if v.is_nan() {
                    assert!(f.decode(f.encode(v)).is_nan());
                    continue;
                }
                if v.is_infinite() {
                    assert_eq!(f.encode(v) & 0x7f, f.max_bits(), "{f:?} {bits:#x}");
                    continue;
                }
                assert_eq!(f.encode(v), bits, "{f:?} {bits:#04x} = {v}");
            }
        }
    }

    #[test]
    fn known_values_ties_and_saturation() {
        let e4 = Fp8Format::E4m3;
        assert_eq!(e4.decode(0x38), 1.0);
        assert_eq!(e4.decode(0x7e), 448.0);
        assert_eq!(e4.decode(0x01), 2f64.powi(-9));
        assert_eq!(e4.encode(1000.0), 0x7e);
        assert_eq!(e4.encode(f64::NEG_INFINITY), 0xfe);
        // 1.0625 lies halfway between 1.0 (mantissa 0, even) and 1.125: ties go to even.
        assert_eq!(e4.encode(1.0625), 0x38);
        assert_eq!(e4.encode(1.1875), 0x3a);
        assert_eq!(e4.encode(-0.0), 0x80);
        let e5 = Fp8Format::E5m2;
        assert_eq!(e5.decode(0x3c), 1.0);
        assert_eq!(e5.decode(0x7b), 57344.0);
        assert_eq!(e5.decode(0x7c), f64::INFINITY);
        assert_eq!(e5.encode(1e9), 0x7b);
        assert_eq!(
            e5.encode(2f64.powi(-17)),
            0x00,
            "half the smallest subnormal ties to 0"
        );
        assert_eq!(e5.encode(3.0 * 2f64.powi(-17)), 0x02);
    }
}
