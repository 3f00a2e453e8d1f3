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
            M::Gelu => 0.5 * a * libm::erfcf(-a * std::f32::consts::FRAC_1_SQRT_2),
            M::GeluApproxTanh => {
                // 0.5 x (1 + tanh(u)) == x sigmoid(2u), without the cancellation.
                let u = (2.0 / std::f32::consts::PI).sqrt() * (a + 0.044715 * a * a * a);
                a * sigmoid(2.0 * u)
            }
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
            M::Exp => a.exp(),
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
                acc.iter_mut()
                    .for_each(|x| *x = if *x < 0.0 { 0.0 } else { *x }) // NaN stays NaN
            }
            M::Relu => acc.iter_mut().for_each(|x| *x = self.relu(*x)),
            _ => acc.iter_mut().for_each(|x| *x = self.eval(*x, 0.0)),
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
                    Operand::Run(o) => acc.iter_mut().zip(o).for_each(|(x, &y)| *x = $f(*x, y)),
                    Operand::Splat(y) => acc.iter_mut().for_each(|x| *x = $f(*x, y)),
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

/// The logistic function, without overflow for inputs of either sign.
#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

#[inline(always)]
fn map1(a: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    out.iter_mut().zip(a).for_each(|(o, &x)| *o = f(x));
}

#[inline(always)]
fn map2(a: &[f32], b: &[f32], out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    out.iter_mut()
        .zip(a.iter().zip(b))
        .for_each(|(o, (&x, &y))| *o = f(x, y));
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
