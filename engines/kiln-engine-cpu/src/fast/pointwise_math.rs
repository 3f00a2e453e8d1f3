//! Every pointwise mode in f32, on single values and on runs of values.
//!
//! Semantics follow the reference engine's `pointwise_f64`; only the precision differs. The hot
//! modes of epilogues (add, mul, max, relu...) get their own loops so that they vectorize; the
//! others go through the per-element function.

use kiln_core::{PointwiseMode, PointwiseParams};

/// A mode with its parameters resolved to f32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pointwise {
    pub mode: PointwiseMode,
    relu_lower: f32,
    relu_upper: f32,
    relu_slope: f32,
    elu_alpha: f32,
    softplus_beta: f32,
    swish_beta: f32,
}

/// One operand of a binary run: a run of values or one value for every position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Operand<'a> {
    Run(&'a [f32]),
    Splat(f32),
}

impl Pointwise {
    /// Resolves `params` (defaults where unset) for `mode`.
    pub fn new(mode: PointwiseMode, params: &PointwiseParams) -> Pointwise {
        Pointwise {
            mode,
            relu_lower: params.relu_lower_clip() as f32,
            relu_upper: params.relu_upper_clip() as f32,
            relu_slope: params.relu_lower_clip_slope() as f32,
            elu_alpha: params.elu_alpha() as f32,
            softplus_beta: params.softplus_beta() as f32,
            swish_beta: params.swish_beta() as f32,
        }
    }

    /// True for relu with its default clips and slope (`max(x, 0)`, NaN kept): what a GEMM
    /// kernel applies in registers.
    pub fn is_plain_relu(&self) -> bool {
        self.mode == PointwiseMode::Relu
            && self.relu_lower == 0.0
            && self.relu_slope == 0.0
            && self.relu_upper == f32::INFINITY
    }

    /// The mode applied to one value (`b` is ignored by unary modes).
    #[inline]
    pub fn eval(&self, a: f32, b: f32) -> f32 {
        use PointwiseMode as M;
        let flag = |c: bool| if c { 1.0 } else { 0.0 };
        match self.mode {
            M::Add => a + b,
            M::Sub => a - b,
            M::Mul => a * b,
            M::Div => a / b,
            M::Max => max(a, b),
            M::Min => min(a, b),
            M::Pow => a.powf(b),
            M::CmpEq => flag(a == b),
            M::CmpNe => flag(a != b),
            M::CmpLt => flag(a < b),
            M::CmpLe => flag(a <= b),
            M::CmpGt => flag(a > b),
            M::CmpGe => flag(a >= b),
            M::Identity => a,
            M::Relu => self.relu(a),
            M::Sigmoid => sigmoid(a),
            M::Tanh => a.tanh(),
            // erfc keeps the negative tail's relative accuracy (1 + erf would cancel).
            M::Gelu => gelu(a),
            M::GeluApproxTanh => gelu_tanh(a),
            M::Swish => a * sigmoid(self.swish_beta * a),
            M::Elu => {
                if a > 0.0 {
                    a
                } else {
                    self.elu_alpha * a.exp_m1()
                }
            }
            M::Softplus => {
                let z = self.softplus_beta * a;
                // log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|).
                (z.max(0.0) + (-z.abs()).exp().ln_1p()) / self.softplus_beta
            }
            M::Exp => exp(a),
            M::Log => a.ln(),
            M::Abs => a.abs(),
            M::Neg => -a,
            M::Sqrt => a.sqrt(),
            M::Rsqrt => 1.0 / a.sqrt(),
            M::Reciprocal => 1.0 / a,
            M::AddSquare => a + b * b,
            M::Mod => a % b,
            M::Atan2 => a.atan2(b),
            M::Ceil => a.ceil(),
            M::Floor => a.floor(),
            M::Sin => a.sin(),
            M::Cos => a.cos(),
            M::Tan => a.tan(),
            M::Erf => libm::erff(a),
            M::ReluBwd => a * self.relu_slope_at(b),
            // The reference engine's tail-accurate forms.
            M::TanhBwd => {
                let e = (-2.0 * b.abs()).exp();
                a * 4.0 * e / ((1.0 + e) * (1.0 + e))
            }
            M::SigmoidBwd => {
                let e = (-b.abs()).exp();
                a * e / ((1.0 + e) * (1.0 + e))
            }
            M::EluBwd => {
                if b > 0.0 {
                    a
                } else if b.is_nan() {
                    f32::NAN
                } else {
                    a * self.elu_alpha * b.exp()
                }
            }
            M::GeluBwd => {
                // Phi(x) + x phi(x) cancels for negative x: evaluated in f64, as cheap as the
                // f32 erfc it replaces.
                let x = b as f64;
                let cdf = 0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2);
                let pdf = (-0.5 * x * x).exp() * 0.3989422804014327; // 1 / sqrt(2 pi)
                (a as f64 * (cdf + x * pdf)) as f32
            }
            M::GeluApproxTanhBwd => {
                // Cancels like gelu_bwd for negative x: f64 too.
                const K: f64 = 0.7978845608028654; // sqrt(2 / pi)
                const C: f64 = 0.044715;
                let x = b as f64;
                let u = K * (x + C * x * x * x);
                let s = 1.0 / (1.0 + (-2.0 * u).exp());
                (a as f64 * (s + x * 2.0 * s * (1.0 - s) * K * (1.0 + 3.0 * C * x * x))) as f32
            }
            M::SoftplusBwd => a * sigmoid(self.softplus_beta * b),
            M::SwishBwd => {
                let s = sigmoid(self.swish_beta * b);
                a * (s + self.swish_beta * b * s * (1.0 - s))
            }
            M::LogicalAnd => flag(a != 0.0 && b != 0.0),
            M::LogicalOr => flag(a != 0.0 || b != 0.0),
            M::LogicalNot => flag(a == 0.0),
            // Position-dependent and three-operand: the engines evaluate these whole.
            M::GenIndex | M::BinarySelect => f32::NAN,
        }
    }

    /// Relu with cuDNN's clip order: the lower clip (and its slope) first, then the upper clip
    /// on the result (the reference engine's definition).
    #[inline(always)]
    fn relu(&self, x: f32) -> f32 {
        let below = if x >= self.relu_lower {
            x
        } else if x.is_nan() {
            return x;
        } else if self.relu_slope == 0.0 {
            // Not `lower + 0 * (x - lower)`, which is NaN for x = -inf.
            self.relu_lower
        } else {
            self.relu_lower + self.relu_slope * (x - self.relu_lower)
        };
        min(below, self.relu_upper)
    }

    /// The derivative of [`Pointwise::relu`] at `x`.
    #[inline(always)]
    fn relu_slope_at(&self, x: f32) -> f32 {
        if x.is_nan() {
            f32::NAN
        } else if self.relu_upper.is_finite() && self.relu(x) >= self.relu_upper {
            0.0
        } else if x > self.relu_lower {
            1.0
        } else {
            self.relu_slope
        }
    }

    /// `out[i] = c[i] != 0 ? a[i] : b[i]` (binary_select); a `Splat` stands for every position.
    pub fn select(a: Operand<'_>, b: Operand<'_>, c: Operand<'_>, out: &mut [f32]) {
        let at = |o: Operand<'_>, i: usize| match o {
            Operand::Run(r) => r.get(i).copied().unwrap_or(f32::NAN),
            Operand::Splat(v) => v,
        };
        for (i, o) in out.iter_mut().enumerate() {
            *o = if at(c, i) != 0.0 { at(a, i) } else { at(b, i) };
        }
    }

    /// `out[i] = mode(a[i])` for a unary mode.
    pub fn unary(&self, a: &[f32], out: &mut [f32]) {
        use PointwiseMode as M;
        let n = out.len().min(a.len());
        let (a, out) = (&a[..n], &mut out[..n]);
        match self.mode {
            M::Identity => out.copy_from_slice(a),
            M::Relu
                if self.relu_lower == 0.0
                    && self.relu_slope == 0.0
                    && self.relu_upper == f32::INFINITY =>
            {
                map1(a, out, |x| if x < 0.0 { 0.0 } else { x }) // NaN stays NaN
            }
            M::Relu => map1(a, out, |x| self.relu(x)),
            M::Neg => map1(a, out, |x| -x),
            M::Abs => map1(a, out, f32::abs),
            M::Gelu => map1(a, out, gelu),
            M::Sigmoid => map1(a, out, sigmoid),
            M::Exp => map1(a, out, exp),
            M::Swish => map1(a, out, |x| x * sigmoid(self.swish_beta * x)),
            M::GeluApproxTanh => map1(a, out, gelu_tanh),
            _ => map1(a, out, |x| self.eval(x, 0.0)),
        }
    }

    /// `acc[i] = mode(acc[i])` for a unary mode (inlined, so that each instruction set's copy
    /// of a caller vectorises its loops).
    #[inline(always)]
    pub fn unary_in_place(&self, acc: &mut [f32]) {
        use PointwiseMode as M;
        match self.mode {
            M::Identity => {}
            M::Relu
                if self.relu_lower == 0.0
                    && self.relu_slope == 0.0
                    && self.relu_upper == f32::INFINITY =>
            {
                each(acc, |x| if x < 0.0 { 0.0 } else { x }) // NaN stays NaN
            }
            M::Relu => each(acc, |x| self.relu(x)),
            // The modes built on e^x get loops of their own, which vectorise (the generic
            // arm's match on the mode does not).
            M::Gelu => each(acc, gelu),
            M::Sigmoid => each(acc, sigmoid),
            M::Exp => each(acc, exp),
            M::Swish => each(acc, |x| x * sigmoid(self.swish_beta * x)),
            M::GeluApproxTanh => each(acc, gelu_tanh),
            _ => each(acc, |x| self.eval(x, 0.0)),
        }
    }

    /// `out[i] = mode(a[i], b[i])` for a binary mode; a `Splat` stands for every position.
    pub fn binary(&self, a: Operand<'_>, b: Operand<'_>, out: &mut [f32]) {
        match (a, b) {
            (Operand::Run(a), Operand::Run(b)) => {
                let n = out.len().min(a.len()).min(b.len());
                binary_runs(self, &a[..n], &b[..n], &mut out[..n])
            }
            (Operand::Run(a), Operand::Splat(b)) => {
                let n = out.len().min(a.len());
                binary_splat_right(self, &a[..n], b, &mut out[..n])
            }
            (Operand::Splat(a), Operand::Run(b)) => {
                let n = out.len().min(b.len());
                binary_splat_left(self, a, &b[..n], &mut out[..n])
            }
            (Operand::Splat(a), Operand::Splat(b)) => out.fill(self.eval(a, b)),
        }
    }

    /// `acc[i] = mode(acc[i], other[i])` (or `mode(other[i], acc[i])` when `acc_is_left` is
    /// false) for a binary mode (inlined, as [`Pointwise::unary_in_place`]).
    #[inline(always)]
    pub fn binary_in_place(&self, acc: &mut [f32], other: Operand<'_>, acc_is_left: bool) {
        use PointwiseMode as M;
        macro_rules! fast {
            ($f:expr) => {
                match other {
                    Operand::Run(o) => {
                        for (x, &y) in acc.iter_mut().zip(o) {
                            *x = $f(*x, y);
                        }
                    }
                    Operand::Splat(y) => each(acc, |x| $f(x, y)),
                }
            };
        }
        match (self.mode, acc_is_left) {
            (M::Add, _) => fast!(|x: f32, y: f32| x + y),
            (M::Mul, _) => fast!(|x: f32, y: f32| x * y),
            (M::Sub, true) => fast!(|x: f32, y: f32| x - y),
            (M::Sub, false) => fast!(|x: f32, y: f32| y - x),
            (M::Max, true) => fast!(max),
            (M::Max, false) => fast!(|x: f32, y: f32| max(y, x)),
            (M::Min, true) => fast!(min),
            (M::Min, false) => fast!(|x: f32, y: f32| min(y, x)),
            (_, true) => fast!(|x: f32, y: f32| self.eval(x, y)),
            (_, false) => fast!(|x: f32, y: f32| self.eval(y, x)),
        }
    }
}

/// The larger of two values; NaN when either is NaN (the reference engine's rule).
#[inline(always)]
fn max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// The smaller of two values; NaN when either is NaN.
#[inline(always)]
fn min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// The logistic function, without overflow for inputs of either sign: with `e = e^-|x|`,
/// `1 / (1 + e)` for x >= 0 and `e / (1 + e)` below (NaN stays NaN).
#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    let e = exp(-x.abs());
    let s = 1.0 / (1.0 + e);
    if x >= 0.0 {
        s
    } else if x < 0.0 {
        e * s
    } else {
        x
    }
}

/// GELU with the tanh approximation: 0.5 x (1 + tanh(u)) == x sigmoid(2u), without the
/// cancellation of 1 + tanh(u) for negative u.
#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    let u = (2.0 / std::f32::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    x * sigmoid(2.0 * u)
}

/// e^x in f32 with no library call, so that loops over it vectorise: `2^k e^r`, `k` the
/// integer nearest `x log2(e)` and `|r| <= ln(2) / 2`, `e^r` by its Taylor polynomial of
/// degree 7 (truncation under 6e-9 relative; about 2e-7 with f32 rounding). The range
/// reduction subtracts `k ln 2` in two parts, the first with few enough bits that `k` times it
/// is exact. Results overflow to infinity above about 88.72 and are zero below -87.33, where
/// they would be subnormal. No step computes a subnormal value either: x86 takes a microcode
/// assist of a hundred cycles or more for each vector that produces one, and a masked step
/// whose discarded lanes produce one costs as much (with inputs clamped at -104, the product of
/// the two powers of 2 was subnormal for every input below -87.33: a third of a bf16 matmul +
/// GELU epilogue's time on random data). NaN stays NaN.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    // 1.5 * 2^23: adding it leaves the integer nearest the sum in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_359_4; // 355 / 512, exact in 9 bits
    const LN2_LO: f32 = -2.121_944_4e-4; // ln 2 - LN2_HI
                                         // Far enough out above that the result is already infinite; below, no further than where
                                         // e^x and every partial product of it are still normal (e^-87.33 is 1.0065 times the
                                         // smallest normal f32): the select at the end zeroes what lies beyond.
    let (input, x) = (x, x.clamp(-87.33, 89.0));
    let shifted = x * std::f32::consts::LOG2_E + ROUND;
    let kf = shifted - ROUND;
    let k = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut p = 1.0 / 5040.0;
    for c in [
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p * r + c;
    }
    // 2^k in two factors, each a normal f32 for every k of the clamped range.
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let half = k >> 1;
    let y = p * pow2(half) * pow2(k - half);
    if input < -87.33 {
        0.0
    } else {
        y
    }
}

/// GELU, `0.5 x erfc(-x / sqrt 2)` (erfc keeps the negative tail's relative accuracy, where
/// `1 + erf` would cancel).
///
/// `erfc(a)` for `a >= 0` is `t exp(-a² + P(t))` with `t = 1 / (1 + a / 2)` and `P` the degree-9
/// polynomial of Numerical Recipes' `erfcc` (relative error under 1.2e-7 in exact arithmetic;
/// about 1e-6 in f32), and `2 - erfc(-z)` for negative `z`: no branch and no library call, so
/// loops over it vectorise. Below x = -12.6, where GELU's magnitude is under 1e-34, the result
/// is zero (of x's sign).
#[inline(always)]
pub(crate) fn gelu(x: f32) -> f32 {
    let z = -x * std::f32::consts::FRAC_1_SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + 0.5 * a);
    let mut p = 0.170_872_77;
    for c in [
        -0.822_152_23,
        1.488_515_9,
        -1.135_204,
        0.278_868_07,
        -0.186_288_06,
        0.096_784_18,
        0.374_091_96,
        1.000_023_7,
        -1.265_512_2,
    ] {
        p = p * t + c;
    }
    // Zero, not a subnormal, where the tail is under 1e-35 (see `exp`). The lanes that the
    // select discards compute with arguments that keep the product normal too: where arg >= -80,
    // a is under 9 and t above 0.18, so neither bound changes a kept value.
    let arg = p - a * a;
    let kept = t.max(1e-3) * exp(arg.max(-80.0));
    let tail = if arg < -80.0 { 0.0 } else { kept };
    let erfc = if z < 0.0 { 2.0 - tail } else { tail };
    0.5 * x * erfc
}

/// `acc[i] = f(acc[i])`, as a plain loop: an iterator's `for_each` is a generic function of
/// its own, which the compiler may leave out of line, compiled for the baseline instruction set
/// instead of the calling function's (a GELU epilogue was compiled 4 lanes wide that way).
#[inline(always)]
fn each(acc: &mut [f32], f: impl Fn(f32) -> f32) {
    for x in acc.iter_mut() {
        *x = f(*x);
    }
}

#[inline(always)]
fn map1(a: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

#[inline(always)]
fn map2(a: &[f32], b: &[f32], out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    for (o, (&x, &y)) in out.iter_mut().zip(a.iter().zip(b)) {
        *o = f(x, y);
    }
}

fn binary_runs(p: &Pointwise, a: &[f32], b: &[f32], out: &mut [f32]) {
    use PointwiseMode as M;
    match p.mode {
        M::Add => map2(a, b, out, |x, y| x + y),
        M::Sub => map2(a, b, out, |x, y| x - y),
        M::Mul => map2(a, b, out, |x, y| x * y),
        M::Div => map2(a, b, out, |x, y| x / y),
        M::Max => map2(a, b, out, max),
        M::Min => map2(a, b, out, min),
        _ => map2(a, b, out, |x, y| p.eval(x, y)),
    }
}

fn binary_splat_right(p: &Pointwise, a: &[f32], b: f32, out: &mut [f32]) {
    use PointwiseMode as M;
    match p.mode {
        M::Add => map1(a, out, |x| x + b),
        M::Sub => map1(a, out, |x| x - b),
        M::Mul => map1(a, out, |x| x * b),
        M::Div => map1(a, out, |x| x / b),
        M::Max => map1(a, out, |x| max(x, b)),
        M::Min => map1(a, out, |x| min(x, b)),
        _ => map1(a, out, |x| p.eval(x, b)),
    }
}

fn binary_splat_left(p: &Pointwise, a: f32, b: &[f32], out: &mut [f32]) {
    use PointwiseMode as M;
    match p.mode {
        M::Add => map1(b, out, |y| a + y),
        M::Sub => map1(b, out, |y| a - y),
        M::Mul => map1(b, out, |y| a * y),
        M::Div => map1(b, out, |y| a / y),
        _ => map1(b, out, |y| p.eval(a, y)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_agree_with_single_values_for_every_mode() {
        let params = PointwiseParams {
            relu_lower_clip: Some(-0.5),
            relu_upper_clip: Some(2.0),
            relu_lower_clip_slope: Some(0.1),
            ..Default::default()
        };
        let a: Vec<f32> = (0..37).map(|i| (i as f32 - 18.0) * 0.23).collect();
        let b: Vec<f32> = (0..37).map(|i| (i as f32 * 0.7).sin() + 1.5).collect();
        for mode in PointwiseMode::ALL {
            let p = Pointwise::new(mode, &params);
            let mut out = vec![0f32; a.len()];
            let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| p.eval(x, y)).collect();
            if matches!(mode, PointwiseMode::GenIndex | PointwiseMode::BinarySelect) {
                continue;
            }
            if mode.is_binary() {
                p.binary(Operand::Run(&a), Operand::Run(&b), &mut out);
                assert_same(&out, &want, mode);
                let mut acc = a.clone();
                p.binary_in_place(&mut acc, Operand::Run(&b), true);
                assert_same(&acc, &want, mode);
                let mut acc = b.clone();
                p.binary_in_place(&mut acc, Operand::Run(&a), false);
                assert_same(&acc, &want, mode);
                let want: Vec<f32> = a.iter().map(|&x| p.eval(x, 1.25)).collect();
                p.binary(Operand::Run(&a), Operand::Splat(1.25), &mut out);
                assert_same(&out, &want, mode);
                let want: Vec<f32> = a.iter().map(|&x| p.eval(1.25, x)).collect();
                p.binary(Operand::Splat(1.25), Operand::Run(&a), &mut out);
                assert_same(&out, &want, mode);
            } else {
                p.unary(&a, &mut out);
                assert_same(&out, &want, mode);
                let mut acc = a.clone();
                p.unary_in_place(&mut acc);
                assert_same(&acc, &want, mode);
            }
        }
    }

    /// Values every 1/64 over [-lo, hi], with the special values.
    fn sweep(lo: f32, hi: f32) -> Vec<f32> {
        let steps = ((hi + lo) * 64.0) as i32;
        (0..=steps)
            .map(|i| -lo + i as f32 / 64.0)
            .chain([
                0.0,
                -0.0,
                1e-30,
                -1e-30,
                f32::MIN_POSITIVE,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
            ])
            .collect()
    }

    #[test]
    fn exp_is_within_a_few_ulps_of_f64() {
        for x in sweep(110.0, 95.0) {
            let (got, want) = (exp(x) as f64, (x as f64).exp());
            if x.is_nan() {
                assert!(got.is_nan());
            } else if want > f32::MAX as f64 {
                assert_eq!(got, f64::INFINITY, "exp({x})");
            } else if want < f32::MIN_POSITIVE as f64 {
                // Subnormal results are flushed to zero.
                assert!(got == 0.0 || got >= 1e-38, "exp({x}) = {got}, want {want}");
            } else {
                assert!(
                    (got - want).abs() <= 3e-7 * want,
                    "exp({x}) = {got}, want {want}"
                );
            }
        }
    }

    /// `f(x)` with the SSE status register's sticky exception flags cleared before and read
    /// after: whether any step underflowed (a tiny inexact result: a subnormal value or a zero
    /// below them, each a microcode assist on x86).
    #[cfg(target_arch = "x86_64")]
    fn underflows(f: impl Fn(f32) -> f32, x: f32) -> bool {
        const UNDERFLOW: u32 = 1 << 4;
        let mut csr = 0u32;
        // SAFETY: reads the status register, then writes it back with the six exception flags
        // (bits 0-5) cleared; the rounding mode and the masks are kept.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
            csr &= !0x3f;
            std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack));
        }
        let y = f(std::hint::black_box(x));
        // SAFETY: reads the status register; y is an input so that it is computed first.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, in("xmm0") y, options(nostack))
        };
        csr & UNDERFLOW != 0
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn exp_and_the_gelus_never_compute_below_the_normal_range() {
        // Inputs of normal size (a tiny x makes tiny values of its own: 1e-30 squared).
        for x in sweep(120.0, 120.0).into_iter().filter(|x| x.abs() >= 1e-3) {
            for (name, f) in [
                ("exp", exp as fn(f32) -> f32),
                ("gelu", gelu),
                ("sigmoid", sigmoid),
                ("gelu_tanh", gelu_tanh),
            ] {
                assert!(!underflows(f, x), "{name}({x}) underflowed in a step");
            }
        }
    }

    #[test]
    fn gelu_matches_f64_in_both_tails() {
        for x in sweep(40.0, 40.0) {
            let want = 0.5 * x as f64 * libm::erfc(-x as f64 * std::f64::consts::FRAC_1_SQRT_2);
            let got = gelu(x) as f64;
            if want.is_nan() {
                assert!(got.is_nan(), "gelu({x}) = {got}, want NaN");
            } else if want.is_infinite() {
                assert_eq!(got, want, "gelu({x})");
            } else {
                // Relative; in the negative tail the f32 rounding of the exponent's argument
                // (x² / 2, a few ulps of it) adds an error that grows with it.
                let arg = 0.5 * (x as f64).powi(2);
                let tol = (2e-6 + 3e-7 * arg) * want.abs() + 1e-33;
                assert!((got - want).abs() <= tol, "gelu({x}) = {got}, want {want}");
            }
        }
    }

    #[test]
    fn sigmoid_and_the_tanh_gelu_match_f64() {
        for x in sweep(120.0, 120.0) {
            let xd = x as f64;
            let s = 1.0 / (1.0 + (-xd).exp());
            let got = sigmoid(x) as f64;
            if x.is_nan() {
                assert!(got.is_nan() && gelu_tanh(x).is_nan());
                continue;
            }
            assert!(
                (got - s).abs() <= 1e-6 * s + f32::MIN_POSITIVE as f64,
                "sigmoid({x}) = {got}, want {s}"
            );
            let u = (2.0 / std::f64::consts::PI).sqrt() * (xd + 0.044715 * xd * xd * xd);
            let want = xd / (1.0 + (-2.0 * u).exp());
            let got = gelu_tanh(x) as f64;
            if want.is_finite() && x.abs() < 1e12 {
                // As for gelu: the rounding of the argument 2u, in the negative tail.
                let tol = (2e-6 + 3e-7 * (2.0 * u).abs()) * want.abs() + 1e-33;
                assert!(
                    (got - want).abs() <= tol,
                    "gelu_tanh({x}) = {got}, want {want}"
                );
            }
        }
    }

    fn assert_same(got: &[f32], want: &[f32], mode: PointwiseMode) {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                g == w || (g.is_nan() && w.is_nan()),
                "{}: element {i}: {g} vs {w}",
                mode.name()
            );
        }
    }

    #[test]
    fn relu_parameters_and_nan_rules() {
        let p = Pointwise::new(
            PointwiseMode::Relu,
            &PointwiseParams {
                relu_lower_clip_slope: Some(0.01),
                relu_upper_clip: Some(6.0),
                ..Default::default()
            },
        );
        assert_eq!(p.eval(-2.0, 0.0), -0.02);
        assert_eq!(p.eval(7.0, 0.0), 6.0);
        let m = Pointwise::new(PointwiseMode::Max, &PointwiseParams::default());
        assert!(m.eval(f32::NAN, 1.0).is_nan());
        let s = Pointwise::new(PointwiseMode::Softplus, &PointwiseParams::default());
        assert!((s.eval(200.0, 0.0) - 200.0).abs() < 1e-3);
    }
}
