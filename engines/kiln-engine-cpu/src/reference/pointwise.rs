//! Pointwise operations: the scalar math of every [`PointwiseMode`] in f64, and the
//! broadcasting loop that applies it to whole tensors.
//!
//! NaN handling: every mode propagates a NaN operand (including `max` and `min`, which behave
//! like IEEE 754-2019 `maximum`/`minimum` and `torch.maximum`, not like `f64::max`).
//! Comparisons follow IEEE: every comparison with NaN is false, except `cmp_ne`.

use super::broadcast::broadcast_offsets;
use kiln_core::{PointwiseMode, PointwiseParams};
use kiln_plugin_sdk::PluginResult;

/// 2 / sqrt(pi).
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;
/// 1 / sqrt(pi).
const ONE_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI * 0.5;

/// The scalar math of one pointwise mode in f64 (`b` is ignored for unary modes).
///
/// Follows the definitions documented on [`PointwiseMode`] with `params`' defaults for unset
/// fields. The two modes that are not a function of `a` and `b` alone are NaN here: `gen_index`
/// (a function of the position) and `binary_select` (three operands); [`select_f64`] is the
/// latter, and whole-tensor evaluation handles both. Transcendental modes are evaluated in numerically stable forms of the same
/// mathematical functions (e.g. softplus never overflows for large inputs; gelu uses `erfc` so
/// that its negative tail keeps full relative accuracy). Never panics.
pub fn pointwise_f64(mode: PointwiseMode, params: &PointwiseParams, a: f64, b: f64) -> f64 {
    let flag = |c: bool| if c { 1.0 } else { 0.0 };
    match mode {
        PointwiseMode::Add => a + b,
        PointwiseMode::Sub => a - b,
        PointwiseMode::Mul => a * b,
        PointwiseMode::Div => a / b,
        PointwiseMode::Max => max_nan(a, b),
        PointwiseMode::Min => min_nan(a, b),
        PointwiseMode::Pow => a.powf(b),
        PointwiseMode::CmpEq => flag(a == b),
        PointwiseMode::CmpNe => flag(a != b),
        PointwiseMode::CmpLt => flag(a < b),
        PointwiseMode::CmpLe => flag(a <= b),
        PointwiseMode::CmpGt => flag(a > b),
        PointwiseMode::CmpGe => flag(a >= b),
        PointwiseMode::Identity => a,
        PointwiseMode::Relu => relu(params, a),
        PointwiseMode::Sigmoid => sigmoid(a),
        PointwiseMode::Tanh => a.tanh(),
        PointwiseMode::Gelu => 0.5 * a * erfc(-a * std::f64::consts::FRAC_1_SQRT_2),
        PointwiseMode::GeluApproxTanh => {
            // 0.5 x (1 + tanh(u)) == x sigmoid(2u): the same function without the cancellation
            // of 1 + tanh(u) for negative u.
            let u = (2.0 / std::f64::consts::PI).sqrt() * (a + 0.044715 * a * a * a);
            a * sigmoid(2.0 * u)
        }
        PointwiseMode::Swish => a * sigmoid(params.swish_beta() * a),
        PointwiseMode::Elu => {
            if a > 0.0 {
                a
            } else {
                params.elu_alpha() * a.exp_m1()
            }
        }
        PointwiseMode::Softplus => {
            let beta = params.softplus_beta();
            let z = beta * a;
            // log(1 + e^z) == z + log(1 + e^-z): the form whose exponential cannot overflow.
            let sp = if z > 0.0 {
                z + (-z).exp().ln_1p()
            } else {
                z.exp().ln_1p()
            };
            sp / beta
        }
        PointwiseMode::Exp => a.exp(),
        PointwiseMode::Log => a.ln(),
        PointwiseMode::Abs => a.abs(),
        PointwiseMode::Neg => -a,
        PointwiseMode::Sqrt => a.sqrt(),
        PointwiseMode::Rsqrt => 1.0 / a.sqrt(),
        PointwiseMode::Reciprocal => 1.0 / a,
        PointwiseMode::AddSquare => a + b * b,
        PointwiseMode::Mod => a % b,
        PointwiseMode::Atan2 => a.atan2(b),
        PointwiseMode::Ceil => a.ceil(),
        PointwiseMode::Floor => a.floor(),
        PointwiseMode::Sin => a.sin(),
        PointwiseMode::Cos => a.cos(),
        PointwiseMode::Tan => a.tan(),
        PointwiseMode::Erf => erf(a),
        PointwiseMode::ReluBwd => a * relu_slope(params, b),
        // 1 - tanh(x)^2 = 4 e / (1 + e)^2 and s (1 - s) = e / (1 + e)^2 with e = exp(-2|x|),
        // exp(-|x|): the forms that keep their relative accuracy in the tails.
        PointwiseMode::TanhBwd => {
            let e = (-2.0 * b.abs()).exp();
            a * 4.0 * e / ((1.0 + e) * (1.0 + e))
        }
        PointwiseMode::SigmoidBwd => {
            let e = (-b.abs()).exp();
            a * e / ((1.0 + e) * (1.0 + e))
        }
        PointwiseMode::EluBwd => {
            if b > 0.0 {
                a
            } else if b.is_nan() {
                f64::NAN
            } else {
                a * params.elu_alpha() * b.exp()
            }
        }
        PointwiseMode::GeluBwd => {
            let cdf = 0.5 * erfc(-b * std::f64::consts::FRAC_1_SQRT_2);
            let pdf = (-0.5 * b * b).exp() * ONE_OVER_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2;
            a * (cdf + b * pdf)
        }
        PointwiseMode::GeluApproxTanhBwd => {
            const K: f64 = 0.7978845608028654; // sqrt(2 / pi)
            const C: f64 = 0.044715;
            let u = K * (b + C * b * b * b);
            // 0.5 (1 + tanh(u)) = sigmoid(2u) and 1 - tanh(u)^2 = 4 s (1 - s), s = sigmoid(2u):
            // the forms that do not cancel for large |u|.
            let s = sigmoid(2.0 * u);
            a * (s + b * 2.0 * s * (1.0 - s) * K * (1.0 + 3.0 * C * b * b))
        }
        PointwiseMode::SoftplusBwd => a * sigmoid(params.softplus_beta() * b),
        PointwiseMode::SwishBwd => {
            let beta = params.swish_beta();
            let s = sigmoid(beta * b);
            a * (s + beta * b * s * (1.0 - s))
        }
        PointwiseMode::LogicalAnd => flag(a != 0.0 && b != 0.0),
        PointwiseMode::LogicalOr => flag(a != 0.0 || b != 0.0),
        PointwiseMode::LogicalNot => flag(a == 0.0),
        PointwiseMode::GenIndex | PointwiseMode::BinarySelect => f64::NAN,
    }
}

/// `binary_select`: `a` where the mask `c` is nonzero (NaN included), else `b`.
pub fn select_f64(a: f64, b: f64, c: f64) -> f64 {
    if c != 0.0 {
        a
    } else {
        b
    }
}

/// Relu as cuDNN defines its clips: the lower clip (with its slope) applies first, then the upper
/// clip applies to the result, so `min(upper, x >= lower ? x : lower + slope * (x - lower))`.
/// With the lower clip above the upper one every output is the upper clip (ONNX `Clip` with
/// min > max, numpy's `clip`). NaN stays NaN.
fn relu(params: &PointwiseParams, a: f64) -> f64 {
    let (lower, slope) = (params.relu_lower_clip(), params.relu_lower_clip_slope());
    let clipped_below = if a.is_nan() {
        return a;
    } else if a >= lower {
        a
    } else if slope == 0.0 {
        // Not `lower + 0 * (a - lower)`, which is NaN for a = -inf.
        lower
    } else {
        lower + slope * (a - lower)
    };
    min_nan(clipped_below, params.relu_upper_clip())
}

/// The derivative of [`relu`] at `x`: 0 where the upper clip holds the output, 1 above the
/// lower clip, the slope at or below it; NaN for NaN.
fn relu_slope(params: &PointwiseParams, x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let upper = params.relu_upper_clip();
    if upper.is_finite() && relu(params, x) >= upper {
        0.0
    } else if x > params.relu_lower_clip() {
        1.0
    } else {
        params.relu_lower_clip_slope()
    }
}

/// The larger of `a` and `b`, NaN when either is NaN.
pub(super) fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// The smaller of `a` and `b`, NaN when either is NaN.
pub(super) fn min_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// The logistic function, without overflow for inputs of either sign.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The error function, to about 1e-16 relative accuracy.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.abs() < 2.5 {
        erf_series(x)
    } else {
        (1.0 - erfc_continued_fraction(x.abs())).copysign(x)
    }
}

/// The complementary error function `1 - erf(x)`, to about 1e-15 relative accuracy (full
/// relative accuracy in the tail, where `1 - erf(x)` would cancel).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        f64::NAN
    } else if x < 0.0 {
        1.0 + erf(-x)
    } else if x < 1.0 {
        1.0 - erf_series(x)
    } else {
        erfc_continued_fraction(x)
    }
}

/// erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 * 3 * ... * (2n+1)).
///
/// Every term has the sign of x, so the sum does not cancel; for |x| < 2.5 it converges within
/// about 45 terms.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    // The cap only guards against non-finite input; convergence takes far fewer terms.
    for _ in 0..200 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
        if term.abs() <= sum.abs() * 1e-17 {
            break;
        }
    }
    TWO_OVER_SQRT_PI * (-x2).exp() * sum
}

/// erfc(x) for x >= 1 by Laplace's continued fraction
/// erfc(x) = e^(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...))))),
/// evaluated backwards from a fixed depth of 250, which converges to rounding error for x >= 1.
fn erfc_continued_fraction(x: f64) -> f64 {
    let mut f = x;
    for k in (1..=250).rev() {
        f = x + (k as f64 * 0.5) / f;
    }
    (-x * x).exp() * ONE_OVER_SQRT_PI / f
}

/// Applies `mode` to whole tensors in packed row-major f64 form.
///
/// `a`, `b` and `c` are either a buffer with its dims (same rank as `out_dims`, each dim equal to
/// it or 1) or a by-value scalar; `out_dims` is the broadcast shape the caller has checked.
/// `gen_index` writes each output element's index along `params.axis()` (its operand's values
/// are not read); `binary_select` reads all three operands.
pub(super) fn apply(
    mode: PointwiseMode,
    params: &PointwiseParams,
    operands: &[Operand<'_>],
    out_dims: &[i64],
) -> PluginResult<Vec<f64>> {
    if mode == PointwiseMode::GenIndex {
        return Ok(gen_index(out_dims, params.axis()));
    }
    let at = operands
        .iter()
        .map(|o| o.indexer(out_dims))
        .collect::<PluginResult<Vec<_>>>()?;
    Ok(match &at[..] {
        [a] => a
            .iter()
            .map(|va| pointwise_f64(mode, params, va, 0.0))
            .collect(),
        [a, b] => a
            .iter()
            .zip(b.iter())
            .map(|(va, vb)| pointwise_f64(mode, params, va, vb))
            .collect(),
        [a, b, c] => a
            .iter()
            .zip(b.iter())
            .zip(c.iter())
            .map(|((va, vb), vc)| select_f64(va, vb, vc))
            .collect(),
        _ => {
            return Err(kiln_plugin_sdk::PluginError::bad_param(format!(
                "pointwise {}: {} operands; a mode takes 1 to 3",
                mode.name(),
                operands.len()
            )))
        }
    })
}

/// The index along `axis` of every element of `dims`, in row-major order (an out-of-range axis,
/// refused by validation, gives zeros).
fn gen_index(dims: &[i64], axis: i64) -> Vec<f64> {
    let count = element_count(dims);
    let axis = usize::try_from(axis).ok().filter(|&a| a < dims.len());
    let Some(axis) = axis else {
        return vec![0.0; count];
    };
    let inner: usize = dims[axis + 1..]
        .iter()
        .map(|&d| d.max(1) as usize)
        .product();
    let size = dims[axis].max(1) as usize;
    (0..count).map(|i| ((i / inner) % size) as f64).collect()
}

/// One pointwise operand: a packed row-major buffer with its dims, or a by-value scalar.
#[derive(Clone, Copy)]
pub(super) enum Operand<'a> {
    Tensor { data: &'a [f64], dims: &'a [i64] },
    Scalar(f64),
}

impl<'a> Operand<'a> {
    fn indexer(self, out_dims: &[i64]) -> PluginResult<Indexer<'a>> {
        Ok(match self {
            Operand::Scalar(v) => Indexer::Scalar(v, element_count(out_dims)),
            Operand::Tensor { data, dims } => {
                let offsets = broadcast_offsets(dims, out_dims)?;
                Indexer::Tensor { data, offsets }
            }
        })
    }
}

fn element_count(dims: &[i64]) -> usize {
    dims.iter().map(|&d| d.max(0) as usize).product()
}

/// The value of an operand at every output element, in row-major order.
enum Indexer<'a> {
    Tensor {
        data: &'a [f64],
        offsets: Vec<usize>,
    },
    Scalar(f64, usize),
}

impl Indexer<'_> {
    fn iter(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            // Offsets come from the operand's own dims, whose element count the caller checked
            // against the buffer length; `get` keeps a mistake from panicking all the same.
            Indexer::Tensor { data, offsets } => Box::new(
                offsets
                    .iter()
                    .map(|&o| data.get(o).copied().unwrap_or(f64::NAN)),
            ),
            Indexer::Scalar(v, n) => Box::new(std::iter::repeat_n(*v, *n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) -> bool {
        if want == 0.0 {
            got.abs() <= rel
        } else {
            ((got - want) / want).abs() <= rel
        }
    }

    #[test]
    fn erf_and_erfc_match_known_values() {
        // Values from a correctly rounded libm (Python's math.erf / math.erfc).
        let table = [
            (0.1, 0.1124629160182849, 0.8875370839817152),
            (0.5, 0.5204998778130465, 0.4795001221869535),
            (1.0, 0.8427007929497149, 0.15729920705028513),
            (1.5, 0.9661051464753108, 0.033894853524689274),
            (2.0, 0.9953222650189527, 0.004677734981047265),
            (2.5, 0.999593047982555, 0.0004069520174449589),
            (3.0, 0.9999779095030014, 2.2090496998585438e-05),
            (4.0, 0.9999999845827421, 1.541725790028002e-08),
            (5.0, 0.9999999999984626, 1.5374597944280351e-12),
            (6.0, 1.0, 2.1519736712498916e-17),
            (10.0, 1.0, 2.088487583762545e-45),
            (26.0, 1.0, 5.663192408856143e-296),
        ];
        for (x, e, ec) in table {
            assert!(close(erf(x), e, 2e-15), "erf({x}) = {} want {e}", erf(x));
            assert!(close(erf(-x), -e, 2e-15), "erf(-{x})");
            assert!(
                close(erfc(x), ec, 2e-15),
                "erfc({x}) = {} want {ec}",
                erfc(x)
            );
            assert!(close(erfc(-x), 2.0 - ec, 2e-15), "erfc(-{x})");
        }
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erfc(0.0), 1.0);
        assert_eq!(erf(f64::INFINITY), 1.0);
        assert_eq!(erf(f64::NEG_INFINITY), -1.0);
        assert_eq!(erfc(f64::INFINITY), 0.0);
        assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
        assert!(erf(f64::NAN).is_nan() && erfc(f64::NAN).is_nan());
    }

    #[test]
    fn erf_is_continuous_across_its_method_switches() {
        for x in [1.0f64, 2.5] {
            let below = erf(x - 1e-12);
            let above = erf(x + 1e-12);
            assert!((above - below).abs() < 1e-11, "erf jumps at {x}");
            let below = erfc(x - 1e-12);
            let above = erfc(x + 1e-12);
            assert!((above - below).abs() < 1e-11, "erfc jumps at {x}");
        }
    }

    /// One case per mode: (mode, a, b, expected) with default parameters.
    fn default_cases() -> Vec<(PointwiseMode, f64, f64, f64)> {
        use PointwiseMode::*;
        let e = std::f64::consts::E;
        vec![
            (Add, 1.5, 2.25, 3.75),
            (Sub, 1.5, 2.25, -0.75),
            (Mul, 1.5, -2.0, -3.0),
            (Div, 3.0, -4.0, -0.75),
            (Max, -1.0, 2.0, 2.0),
            (Min, -1.0, 2.0, -1.0),
            (Pow, 2.0, 10.0, 1024.0),
            (CmpEq, 2.0, 2.0, 1.0),
            (CmpNe, 2.0, 2.0, 0.0),
            (CmpLt, 1.0, 2.0, 1.0),
            (CmpLe, 2.0, 2.0, 1.0),
            (CmpGt, 1.0, 2.0, 0.0),
            (CmpGe, 1.0, 2.0, 0.0),
            (Identity, -7.5, 0.0, -7.5),
            (Relu, -3.0, 0.0, 0.0),
            (Sigmoid, 0.0, 0.0, 0.5),
            (Tanh, 0.5, 0.0, 0.46211715726000974),
            // gelu(1) = Phi(1), the normal CDF at 1.
            (Gelu, 1.0, 0.0, 0.8413447460685429),
            (GeluApproxTanh, 1.0, 0.0, 0.8411919906082768),
            (Swish, 1.0, 0.0, 1.0 / (1.0 + 1.0 / e)),
            (Elu, -1.0, 0.0, 1.0 / e - 1.0),
            (Softplus, 0.0, 0.0, std::f64::consts::LN_2),
            (Exp, 1.0, 0.0, e),
            (Log, e, 0.0, 1.0),
            (Abs, -2.5, 0.0, 2.5),
            (Neg, 2.5, 0.0, -2.5),
            (Sqrt, 6.25, 0.0, 2.5),
            (Rsqrt, 4.0, 0.0, 0.5),
            (Reciprocal, -8.0, 0.0, -0.125),
            (AddSquare, 1.5, 2.0, 5.5),
            (Mod, -7.5, 2.0, -1.5),
            (Atan2, 1.0, 1.0, std::f64::consts::FRAC_PI_4),
            (Ceil, -1.5, 0.0, -1.0),
            (Floor, -1.5, 0.0, -2.0),
            (Sin, std::f64::consts::FRAC_PI_2, 0.0, 1.0),
            (Cos, 0.0, 0.0, 1.0),
            (Tan, std::f64::consts::FRAC_PI_4, 0.0, 1.0),
            (Erf, 0.5, 0.0, 0.5204998778130465),
            (ReluBwd, 2.0, 3.0, 2.0),
            (TanhBwd, 1.0, 0.5, 0.7864477329659274),
            (SigmoidBwd, 1.0, 0.0, 0.25),
            (EluBwd, 2.0, -1.0, 0.7357588823428847),
            (GeluBwd, 1.0, 0.0, 0.5),
            (GeluApproxTanhBwd, 1.0, 0.0, 0.5),
            (SoftplusBwd, 1.0, 0.0, 0.5),
            (SwishBwd, 1.0, 0.0, 0.5),
            (LogicalAnd, 2.0, 0.0, 0.0),
            (LogicalOr, 2.0, 0.0, 1.0),
            (LogicalNot, 0.0, 0.0, 1.0),
            // Not functions of (a, b): evaluated whole-tensor by `apply` (tested there).
            (GenIndex, 1.0, 0.0, f64::NAN),
            (BinarySelect, 1.0, 0.0, f64::NAN),
        ]
    }

    #[test]
    fn every_mode_has_a_hand_checked_value() {
        let cases = default_cases();
        for mode in PointwiseMode::ALL {
            assert!(
                cases.iter().any(|c| c.0 == mode),
                "mode {} has no case",
                mode.name()
            );
        }
        let p = PointwiseParams::default();
        for (mode, a, b, want) in cases {
            let got = pointwise_f64(mode, &p, a, b);
            assert!(
                close(got, want, 1e-15) || (got.is_nan() && want.is_nan()),
                "{}({a}, {b}) = {got}, want {want}",
                mode.name()
            );
        }
    }

    #[test]
    fn relu_parameters_clip_and_leak() {
        let p = PointwiseParams {
            relu_lower_clip: Some(-1.0),
            relu_upper_clip: Some(6.0),
            relu_lower_clip_slope: Some(0.5),
            ..Default::default()
        };
        let f = |x| pointwise_f64(PointwiseMode::Relu, &p, x, 0.0);
        assert_eq!(f(3.0), 3.0);
        assert_eq!(f(9.0), 6.0);
        assert_eq!(f(-1.0), -1.0);
        // -1 + 0.5 * (-3 - -1) = -2
        assert_eq!(f(-3.0), -2.0);
        let leaky = PointwiseParams {
            relu_lower_clip_slope: Some(0.01),
            ..Default::default()
        };
        assert_eq!(pointwise_f64(PointwiseMode::Relu, &leaky, -2.0, 0.0), -0.02);
        assert_eq!(
            pointwise_f64(PointwiseMode::Relu, &leaky, f64::INFINITY, 0.0),
            f64::INFINITY
        );
    }

    #[test]
    fn relu_with_the_lower_clip_above_the_upper_is_the_upper_clip() {
        // ONNX test_clip_min_greater_than_max: x = [-2, 0, 6], min 2, max 1 -> [1, 1, 1].
        let p = PointwiseParams {
            relu_lower_clip: Some(2.0),
            relu_upper_clip: Some(1.0),
            ..Default::default()
        };
        for x in [-2.0, 0.0, 6.0] {
            assert_eq!(
                pointwise_f64(PointwiseMode::Relu, &p, x, 0.0),
                1.0,
                "x = {x}"
            );
        }
        assert!(pointwise_f64(PointwiseMode::Relu, &p, f64::NAN, 0.0).is_nan());
    }

    #[test]
    fn backward_modes_are_the_derivatives_of_their_forward_modes() {
        use PointwiseMode::*;
        let params = [
            PointwiseParams::default(),
            PointwiseParams {
                relu_lower_clip: Some(-0.5),
                relu_upper_clip: Some(1.5),
                relu_lower_clip_slope: Some(0.1),
                elu_alpha: Some(0.7),
                softplus_beta: Some(2.0),
                swish_beta: Some(1.5),
                axis: None,
            },
        ];
        let pairs = [
            (Relu, ReluBwd),
            (Tanh, TanhBwd),
            (Sigmoid, SigmoidBwd),
            (Elu, EluBwd),
            (Gelu, GeluBwd),
            (GeluApproxTanh, GeluApproxTanhBwd),
            (Softplus, SoftplusBwd),
            (Swish, SwishBwd),
        ];
        let h = 1e-6;
        for p in &params {
            for (fwd, bwd) in pairs {
                // Points away from relu's and elu's kinks.
                for x in [-3.1, -1.7, -0.3, 0.2, 0.9, 2.3, 4.4] {
                    let f = |x| pointwise_f64(fwd, p, x, 0.0);
                    let numeric = (f(x + h) - f(x - h)) / (2.0 * h);
                    let got = pointwise_f64(bwd, p, 1.0, x);
                    assert!(
                        (got - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
                        "{}({x}) = {got}, numeric {numeric} ({p:?})",
                        bwd.name()
                    );
                    let scaled = pointwise_f64(bwd, p, 2.5, x);
                    assert!(close(scaled, 2.5 * got, 1e-15), "dy scales: {scaled}");
                }
            }
        }
    }

    #[test]
    fn parameterized_activations() {
        let p = PointwiseParams {
            elu_alpha: Some(2.0),
            softplus_beta: Some(2.0),
            swish_beta: Some(3.0),
            ..Default::default()
        };
        let f = |m, x| pointwise_f64(m, &p, x, 0.0);
        assert!(close(
            f(PointwiseMode::Elu, -1.0),
            2.0 * ((-1.0f64).exp() - 1.0),
            1e-15
        ));
        assert_eq!(f(PointwiseMode::Elu, 3.0), 3.0);
        // softplus_2(1) = ln(1 + e^2) / 2
        let want = (1.0 + 2.0f64.exp()).ln() / 2.0;
        assert!(close(f(PointwiseMode::Softplus, 1.0), want, 1e-15));
        let want = 0.5 / (1.0 + (-1.5f64).exp());
        assert!(close(f(PointwiseMode::Swish, 0.5), want, 1e-15));
    }

    #[test]
    fn transcendental_modes_are_stable_at_extremes() {
        let p = PointwiseParams::default();
        let f = |m, x| pointwise_f64(m, &p, x, 0.0);
        assert_eq!(f(PointwiseMode::Softplus, 800.0), 800.0);
        assert!(close(
            f(PointwiseMode::Softplus, -100.0),
            (-100.0f64).exp(),
            1e-15
        ));
        assert_eq!(f(PointwiseMode::Sigmoid, -800.0), 0.0);
        assert_eq!(f(PointwiseMode::Sigmoid, 800.0), 1.0);
        assert_eq!(f(PointwiseMode::Swish, 800.0), 800.0);
        assert_eq!(f(PointwiseMode::Gelu, 40.0), 40.0);
        // gelu(-10) = -10 * Phi(-10) = -7.619853024160526e-23 (40-digit value); rounding x/sqrt2
        // to f64 alone moves erfc by up to 2x^2 ulp, about 1e-14 relative here.
        let g = f(PointwiseMode::Gelu, -10.0);
        assert!(close(g, -7.619853024160526e-23, 3e-14), "{g:e}");
        assert_eq!(f(PointwiseMode::GeluApproxTanh, 1e200), 1e200);
        assert_eq!(f(PointwiseMode::GeluApproxTanh, -1e200), 0.0);
        // The naive formula for a moderate input, where it does not cancel.
        let x: f64 = 0.7;
        let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3));
        let naive = 0.5 * x * (1.0 + u.tanh());
        assert!(close(f(PointwiseMode::GeluApproxTanh, x), naive, 1e-15));
    }

    #[test]
    fn nan_propagates_and_comparisons_follow_ieee() {
        let p = PointwiseParams::default();
        for mode in PointwiseMode::ALL {
            let got = pointwise_f64(mode, &p, f64::NAN, 1.0);
            let is_cmp = matches!(
                mode,
                PointwiseMode::CmpEq
                    | PointwiseMode::CmpNe
                    | PointwiseMode::CmpLt
                    | PointwiseMode::CmpLe
                    | PointwiseMode::CmpGt
                    | PointwiseMode::CmpGe
            );
            let is_logical = matches!(
                mode,
                PointwiseMode::LogicalAnd | PointwiseMode::LogicalOr | PointwiseMode::LogicalNot
            );
            if is_logical {
                // NaN is nonzero, so true.
                let want = if mode == PointwiseMode::LogicalNot {
                    0.0
                } else {
                    1.0
                };
                assert_eq!(got, want, "{}", mode.name());
            } else if mode == PointwiseMode::CmpNe {
                assert_eq!(got, 1.0);
            } else if is_cmp {
                assert_eq!(got, 0.0, "{}", mode.name());
            } else if mode == PointwiseMode::Pow {
                // powf(NaN, y) is NaN except for y == 0.
                assert!(got.is_nan());
            } else {
                assert!(got.is_nan(), "{}(NaN) = {got}", mode.name());
            }
        }
        assert!(max_nan(1.0, f64::NAN).is_nan());
        assert!(min_nan(f64::NAN, 1.0).is_nan());
    }

    #[test]
    fn apply_broadcasts_size_one_dims_and_scalars() {
        let p = PointwiseParams::default();
        // a [2, 1] + b [1, 3] -> [2, 3]
        let a = [10.0, 20.0];
        let b = [1.0, 2.0, 3.0];
        let out = apply(
            PointwiseMode::Add,
            &p,
            &[
                Operand::Tensor {
                    data: &a,
                    dims: &[2, 1],
                },
                Operand::Tensor {
                    data: &b,
                    dims: &[1, 3],
                },
            ],
            &[2, 3],
        )
        .unwrap();
        assert_eq!(out, vec![11.0, 12.0, 13.0, 21.0, 22.0, 23.0]);
        let out = apply(
            PointwiseMode::Sub,
            &p,
            &[
                Operand::Scalar(100.0),
                Operand::Tensor {
                    data: &b,
                    dims: &[1, 3],
                },
            ],
            &[1, 3],
        )
        .unwrap();
        assert_eq!(out, vec![99.0, 98.0, 97.0]);
        // binary_select: the mask [1, 0, NaN] picks a, b, a.
        let mask = [1.0, 0.0, f64::NAN];
        let out = apply(
            PointwiseMode::BinarySelect,
            &p,
            &[
                Operand::Tensor {
                    data: &b,
                    dims: &[1, 3],
                },
                Operand::Scalar(-1.0),
                Operand::Tensor {
                    data: &mask,
                    dims: &[1, 3],
                },
            ],
            &[1, 3],
        )
        .unwrap();
        assert_eq!(out, vec![1.0, -1.0, 3.0]);
    }

    #[test]
    fn gen_index_counts_along_its_axis() {
        let p = |axis| PointwiseParams {
            axis: Some(axis),
            ..Default::default()
        };
        let x = [0.0; 6];
        let op = [Operand::Tensor {
            data: &x,
            dims: &[2, 3],
        }];
        let rows = apply(PointwiseMode::GenIndex, &p(0), &op, &[2, 3]).unwrap();
        assert_eq!(rows, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let cols = apply(PointwiseMode::GenIndex, &p(1), &op, &[2, 3]).unwrap();
        assert_eq!(cols, vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    }
}
