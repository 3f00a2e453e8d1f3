//! What each pointwise mode needs of its inputs, and interesting parameter values.

use crate::Domain;
use kiln::PointwiseMode;
use kiln_core::PointwiseParams;

/// The domains of a pointwise mode's operands `a` and `b` (`b` is unused by unary modes), chosen
/// so that comparisons are meaningful: divisors, logarithms, roots, reciprocals and pow bases
/// positive and away from zero; comparisons on a coarse grid so that equalities occur;
/// activations over a range that reaches their tails and clips.
pub fn input_domains(mode: PointwiseMode) -> (Domain, Domain) {
    use PointwiseMode as M;
    match mode {
        M::Div | M::Mod => (Domain::SYMMETRIC, Domain::POSITIVE),
        M::LogicalAnd | M::LogicalOr | M::LogicalNot | M::BinarySelect => {
            (Domain::COARSE, Domain::COARSE)
        }
        M::ReluBwd
        | M::TanhBwd
        | M::SigmoidBwd
        | M::EluBwd
        | M::GeluBwd
        | M::GeluApproxTanhBwd
        | M::SoftplusBwd
        | M::SwishBwd => (Domain::SYMMETRIC, Domain::WIDE),
        M::Pow => (Domain::POSITIVE, Domain::EXPONENT),
        M::Log | M::Sqrt | M::Rsqrt | M::Reciprocal => (Domain::POSITIVE, Domain::SYMMETRIC),
        M::CmpEq | M::CmpNe | M::CmpLt | M::CmpLe | M::CmpGt | M::CmpGe | M::Max | M::Min => {
            (Domain::COARSE, Domain::COARSE)
        }
        M::Relu
        | M::Sigmoid
        | M::Tanh
        | M::Gelu
        | M::GeluApproxTanh
        | M::Swish
        | M::Elu
        | M::Softplus
        | M::Exp => (Domain::WIDE, Domain::WIDE),
        _ => (Domain::SYMMETRIC, Domain::SYMMETRIC),
    }
}

/// True for modes whose result is 0 or 1 and can flip between f32 and f64 computation of their
/// operands (a comparison), or that jump at whole numbers (ceil, floor, mod).
pub fn is_comparison(mode: PointwiseMode) -> bool {
    use PointwiseMode as M;
    matches!(
        mode,
        M::CmpEq | M::CmpNe | M::CmpLt | M::CmpLe | M::CmpGt | M::CmpGe | M::Mod
    )
}

/// True for unary modes defined (and well conditioned) only for positive inputs.
pub fn needs_positive_input(mode: PointwiseMode) -> bool {
    use PointwiseMode as M;
    matches!(mode, M::Log | M::Sqrt | M::Rsqrt | M::Reciprocal)
}

/// True for unary modes whose result is positive and, for inputs of moderate size, away from
/// zero.
///
/// Softplus with a steep beta is not away from zero: at beta 10 a conv output of -1.5 gives
/// about 3e-8, whose rsqrt (about 5800) turns one f32 rounding of the input into an error of
/// 1e-3 after a sine. It counts as positive only for beta up to 2.
pub fn gives_positive(mode: PointwiseMode, params: &PointwiseParams) -> bool {
    use PointwiseMode as M;
    match mode {
        M::Exp | M::Sigmoid => true,
        M::Softplus => params.softplus_beta.is_none_or(|beta| beta <= 2.0),
        _ => false,
    }
}

/// Variant `k` (0 = all defaults) of the parameters of `mode`; modes without parameters get the
/// defaults for every `k`. Variants cover relu's clips and slope (leaky relu, relu6-style upper
/// clips, a shifted lower clip), elu's alpha, softplus's beta and swish's beta.
pub fn params_variant(mode: PointwiseMode, k: u8) -> PointwiseParams {
    use PointwiseMode as M;
    let mut p = PointwiseParams::default();
    match (mode, k % 5) {
        (M::Relu, 1) => p.relu_lower_clip_slope = Some(0.1),
        (M::Relu, 2) => p.relu_upper_clip = Some(0.75),
        (M::Relu, 3) => {
            p.relu_lower_clip = Some(-0.5);
            p.relu_upper_clip = Some(1.5);
            p.relu_lower_clip_slope = Some(0.01);
        }
        (M::Relu | M::ReluBwd, 4) => p.relu_lower_clip = Some(0.25),
        (M::ReluBwd, 1) => p.relu_lower_clip_slope = Some(0.1),
        (M::ReluBwd, 2) => p.relu_upper_clip = Some(0.75),
        (M::ReluBwd, 3) => {
            p.relu_lower_clip = Some(-0.5);
            p.relu_upper_clip = Some(1.5);
            p.relu_lower_clip_slope = Some(0.01);
        }
        (M::EluBwd, 1 | 3) => p.elu_alpha = Some(0.5),
        (M::EluBwd, 2 | 4) => p.elu_alpha = Some(2.0),
        (M::SoftplusBwd, 1) => p.softplus_beta = Some(0.5),
        (M::SoftplusBwd, 2..=4) => p.softplus_beta = Some(2.0),
        (M::SwishBwd, 1) => p.swish_beta = Some(0.5),
        (M::SwishBwd, 2..=4) => p.swish_beta = Some(1.702),
        (M::Elu, 1 | 3) => p.elu_alpha = Some(0.5),
        (M::Elu, 2 | 4) => p.elu_alpha = Some(2.0),
        (M::Softplus, 1) => p.softplus_beta = Some(0.5),
        (M::Softplus, 2) => p.softplus_beta = Some(2.0),
        (M::Softplus, 3 | 4) => p.softplus_beta = Some(10.0),
        (M::Swish, 1) => p.swish_beta = Some(0.5),
        (M::Swish, 2) => p.swish_beta = Some(1.702),
        (M::Swish, 3 | 4) => p.swish_beta = Some(2.0),
        _ => {}
    }
    p
}

/// The frontend attributes of `mode` with `params`.
pub fn attributes(mode: PointwiseMode, params: &PointwiseParams) -> kiln::PointwiseAttributes {
    let mut a = kiln::PointwiseAttributes::new(mode);
    if let Some(v) = params.relu_lower_clip {
        a = a.relu_lower_clip(v);
    }
    if let Some(v) = params.relu_upper_clip {
        a = a.relu_upper_clip(v);
    }
    if let Some(v) = params.relu_lower_clip_slope {
        a = a.relu_lower_clip_slope(v);
    }
    if let Some(v) = params.elu_alpha {
        a = a.elu_alpha(v);
    }
    if let Some(v) = params.softplus_beta {
        a = a.softplus_beta(v);
    }
    if let Some(v) = params.swish_beta {
        a = a.swish_beta(v);
    }
    if let Some(v) = params.axis {
        a = a.axis(v);
    }
    a
}

/// A compact description of `mode` with its non-default parameters, for case names.
pub fn describe(mode: PointwiseMode, params: &PointwiseParams) -> String {
    let mut s = mode.name().to_string();
    let fields = [
        ("lower", params.relu_lower_clip),
        ("upper", params.relu_upper_clip),
        ("slope", params.relu_lower_clip_slope),
        ("alpha", params.elu_alpha),
        ("beta", params.softplus_beta.or(params.swish_beta)),
        ("axis", params.axis.map(|a| a as f64)),
    ];
    let set: Vec<String> = fields
        .iter()
        .filter_map(|(n, v)| v.map(|v| format!("{n}={v}")))
        .collect();
    if !set.is_empty() {
        s.push_str(&format!("({})", set.join(",")));
    }
    s
}
