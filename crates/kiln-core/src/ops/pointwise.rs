//! Pointwise: `out = mode(a[, b])`, its modes and parameters, validation and shape inference.

use crate::{Error, OpGraph, Result};
use serde::{Deserialize, Serialize};

/// Pointwise operation modes (cuDNN's `cudnnPointwiseMode_t`). Unary modes take `a`, binary
/// modes `a` and `b`, `binary_select` also `c` ([`PointwiseMode::operand_count`]).
///
/// Comparisons and logical modes write 1 where true and 0 where false; logical modes read any
/// nonzero value (NaN included) as true. The backward modes (`*_bwd`) take the incoming
/// gradient `dy` as `a` and the forward input `x` as `b`, and write `dx = dy * f'(x)` for the
/// forward mode `f` with the same parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointwiseMode {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
    CmpEq,
    CmpNe,
    CmpLt,
    CmpLe,
    CmpGt,
    CmpGe,
    Identity,
    /// `min(x, upper_clip)` when `x >= lower_clip`, else `lower_clip + slope * (x - lower_clip)`
    /// (exactly `lower_clip` when the slope is 0, also for `x = -inf`); NaN stays NaN.
    Relu,
    Sigmoid,
    Tanh,
    /// GELU with the exact erf.
    Gelu,
    /// GELU with the tanh approximation.
    GeluApproxTanh,
    /// `x * sigmoid(swish_beta * x)` (SiLU when beta is 1).
    Swish,
    /// `x` when `x > 0`, else `elu_alpha * (exp(x) - 1)`.
    Elu,
    /// `log(1 + exp(softplus_beta * x)) / softplus_beta`.
    Softplus,
    Exp,
    Log,
    Abs,
    Neg,
    Sqrt,
    Rsqrt,
    Reciprocal,
    /// `a + b * b`.
    AddSquare,
    /// The remainder of `a / b` with the sign of `a` (C's `fmod`).
    Mod,
    /// `atan2(a, b)`: the angle of the point (b, a).
    Atan2,
    Ceil,
    Floor,
    Sin,
    Cos,
    Tan,
    /// The error function.
    Erf,
    /// `dy` where relu's slope is 1, `dy * relu_lower_clip_slope` at or below the lower clip,
    /// 0 where the upper clip holds the output (see [`PointwiseMode::Relu`]).
    ReluBwd,
    /// `dy * (1 - tanh(x)^2)`.
    TanhBwd,
    /// `dy * s * (1 - s)` with `s = sigmoid(x)`.
    SigmoidBwd,
    /// `dy` for `x > 0`, else `dy * elu_alpha * exp(x)`.
    EluBwd,
    /// `dy * (Phi(x) + x * phi(x))`, the derivative of the exact gelu.
    GeluBwd,
    /// `dy` times the derivative of the tanh-approximated gelu.
    GeluApproxTanhBwd,
    /// `dy * sigmoid(softplus_beta * x)`.
    SoftplusBwd,
    /// `dy * (s + swish_beta * x * s * (1 - s))` with `s = sigmoid(swish_beta * x)`.
    SwishBwd,
    /// `a != 0 && b != 0`.
    LogicalAnd,
    /// `a != 0 || b != 0`.
    LogicalOr,
    /// `a == 0`.
    LogicalNot,
    /// The index of each element along dim `axis` (a parameter, default 0); `a` gives only
    /// the shape, its values are not read.
    GenIndex,
    /// `c != 0 ? a : b`: `c` is the mask.
    BinarySelect,
}

impl PointwiseMode {
    /// Every mode, in a fixed order.
    pub const ALL: [PointwiseMode; 51] = [
        PointwiseMode::Add,
        PointwiseMode::Sub,
        PointwiseMode::Mul,
        PointwiseMode::Div,
        PointwiseMode::Max,
        PointwiseMode::Min,
        PointwiseMode::Pow,
        PointwiseMode::CmpEq,
        PointwiseMode::CmpNe,
        PointwiseMode::CmpLt,
        PointwiseMode::CmpLe,
        PointwiseMode::CmpGt,
        PointwiseMode::CmpGe,
        PointwiseMode::Identity,
        PointwiseMode::Relu,
        PointwiseMode::Sigmoid,
        PointwiseMode::Tanh,
        PointwiseMode::Gelu,
        PointwiseMode::GeluApproxTanh,
        PointwiseMode::Swish,
        PointwiseMode::Elu,
        PointwiseMode::Softplus,
        PointwiseMode::Exp,
        PointwiseMode::Log,
        PointwiseMode::Abs,
        PointwiseMode::Neg,
        PointwiseMode::Sqrt,
        PointwiseMode::Rsqrt,
        PointwiseMode::Reciprocal,
        PointwiseMode::AddSquare,
        PointwiseMode::Mod,
        PointwiseMode::Atan2,
        PointwiseMode::Ceil,
        PointwiseMode::Floor,
        PointwiseMode::Sin,
        PointwiseMode::Cos,
        PointwiseMode::Tan,
        PointwiseMode::Erf,
        PointwiseMode::ReluBwd,
        PointwiseMode::TanhBwd,
        PointwiseMode::SigmoidBwd,
        PointwiseMode::EluBwd,
        PointwiseMode::GeluBwd,
        PointwiseMode::GeluApproxTanhBwd,
        PointwiseMode::SoftplusBwd,
        PointwiseMode::SwishBwd,
        PointwiseMode::LogicalAnd,
        PointwiseMode::LogicalOr,
        PointwiseMode::LogicalNot,
        PointwiseMode::GenIndex,
        PointwiseMode::BinarySelect,
    ];

    /// How many operands the mode takes: 1 (`a`), 2 (`a`, `b`) or 3 (`a`, `b`, `c`).
    pub fn operand_count(self) -> usize {
        if self == PointwiseMode::BinarySelect {
            3
        } else if self.is_binary() {
            2
        } else {
            1
        }
    }

    /// True for modes with one input.
    pub fn is_unary(self) -> bool {
        self.operand_count() == 1
    }

    /// True for the backward modes (`relu_bwd`, ...): `a` is dy, `b` is x.
    pub fn is_backward(self) -> bool {
        matches!(
            self,
            PointwiseMode::ReluBwd
                | PointwiseMode::TanhBwd
                | PointwiseMode::SigmoidBwd
                | PointwiseMode::EluBwd
                | PointwiseMode::GeluBwd
                | PointwiseMode::GeluApproxTanhBwd
                | PointwiseMode::SoftplusBwd
                | PointwiseMode::SwishBwd
        )
    }

    /// True for the modes whose operands and output may be `bool`, `i8` or `i32` tensors:
    /// cuDNN's list of modes with an integer math precision (arithmetic without
    /// transcendentals, comparisons, logical modes, `gen_index`, `binary_select`) and identity
    /// (a conversion). Every other mode computes on floating-point tensors only.
    pub fn allows_integral(self) -> bool {
        use PointwiseMode as M;
        matches!(
            self,
            M::Add
                | M::AddSquare
                | M::Sub
                | M::Mul
                | M::Div
                | M::Max
                | M::Min
                | M::Mod
                | M::Abs
                | M::Neg
                | M::Ceil
                | M::Floor
                | M::Identity
                | M::CmpEq
                | M::CmpNe
                | M::CmpLt
                | M::CmpLe
                | M::CmpGt
                | M::CmpGe
                | M::LogicalAnd
                | M::LogicalOr
                | M::LogicalNot
                | M::GenIndex
                | M::BinarySelect
        )
    }

    /// True for modes with exactly two inputs.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            PointwiseMode::AddSquare
                | PointwiseMode::Mod
                | PointwiseMode::Atan2
                | PointwiseMode::ReluBwd
                | PointwiseMode::TanhBwd
                | PointwiseMode::SigmoidBwd
                | PointwiseMode::EluBwd
                | PointwiseMode::GeluBwd
                | PointwiseMode::GeluApproxTanhBwd
                | PointwiseMode::SoftplusBwd
                | PointwiseMode::SwishBwd
                | PointwiseMode::LogicalAnd
                | PointwiseMode::LogicalOr
                | PointwiseMode::Add
                | PointwiseMode::Sub
                | PointwiseMode::Mul
                | PointwiseMode::Div
                | PointwiseMode::Max
                | PointwiseMode::Min
                | PointwiseMode::Pow
                | PointwiseMode::CmpEq
                | PointwiseMode::CmpNe
                | PointwiseMode::CmpLt
                | PointwiseMode::CmpLe
                | PointwiseMode::CmpGt
                | PointwiseMode::CmpGe
        )
    }

    /// The snake_case name used in JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            PointwiseMode::Add => "add",
            PointwiseMode::Sub => "sub",
            PointwiseMode::Mul => "mul",
            PointwiseMode::Div => "div",
            PointwiseMode::Max => "max",
            PointwiseMode::Min => "min",
            PointwiseMode::Pow => "pow",
            PointwiseMode::CmpEq => "cmp_eq",
            PointwiseMode::CmpNe => "cmp_ne",
            PointwiseMode::CmpLt => "cmp_lt",
            PointwiseMode::CmpLe => "cmp_le",
            PointwiseMode::CmpGt => "cmp_gt",
            PointwiseMode::CmpGe => "cmp_ge",
            PointwiseMode::Identity => "identity",
            PointwiseMode::Relu => "relu",
            PointwiseMode::Sigmoid => "sigmoid",
            PointwiseMode::Tanh => "tanh",
            PointwiseMode::Gelu => "gelu",
            PointwiseMode::GeluApproxTanh => "gelu_approx_tanh",
            PointwiseMode::Swish => "swish",
            PointwiseMode::Elu => "elu",
            PointwiseMode::Softplus => "softplus",
            PointwiseMode::Exp => "exp",
            PointwiseMode::Log => "log",
            PointwiseMode::Abs => "abs",
            PointwiseMode::Neg => "neg",
            PointwiseMode::Sqrt => "sqrt",
            PointwiseMode::Rsqrt => "rsqrt",
            PointwiseMode::Reciprocal => "reciprocal",
            PointwiseMode::AddSquare => "add_square",
            PointwiseMode::Mod => "mod",
            PointwiseMode::Atan2 => "atan2",
            PointwiseMode::Ceil => "ceil",
            PointwiseMode::Floor => "floor",
            PointwiseMode::Sin => "sin",
            PointwiseMode::Cos => "cos",
            PointwiseMode::Tan => "tan",
            PointwiseMode::Erf => "erf",
            PointwiseMode::ReluBwd => "relu_bwd",
            PointwiseMode::TanhBwd => "tanh_bwd",
            PointwiseMode::SigmoidBwd => "sigmoid_bwd",
            PointwiseMode::EluBwd => "elu_bwd",
            PointwiseMode::GeluBwd => "gelu_bwd",
            PointwiseMode::GeluApproxTanhBwd => "gelu_approx_tanh_bwd",
            PointwiseMode::SoftplusBwd => "softplus_bwd",
            PointwiseMode::SwishBwd => "swish_bwd",
            PointwiseMode::LogicalAnd => "logical_and",
            PointwiseMode::LogicalOr => "logical_or",
            PointwiseMode::LogicalNot => "logical_not",
            PointwiseMode::GenIndex => "gen_index",
            PointwiseMode::BinarySelect => "binary_select",
        }
    }

    /// A stable integer code, used by the binary formats.
    pub fn code(self) -> u8 {
        PointwiseMode::ALL
            .iter()
            .position(|&m| m == self)
            .unwrap_or(0) as u8
    }

    /// The mode of stable code `code`, or `None`.
    pub fn from_code(code: u8) -> Option<PointwiseMode> {
        PointwiseMode::ALL.get(code as usize).copied()
    }

    /// The mode called `name`, or `None`.
    pub fn from_name(name: &str) -> Option<PointwiseMode> {
        PointwiseMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Optional parameters of pointwise modes; `None` means the documented default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PointwiseParams {
    /// Relu lower clip, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relu_lower_clip: Option<f64>,
    /// Relu upper clip, default +infinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relu_upper_clip: Option<f64>,
    /// Relu slope below the lower clip, default 0 (0.01 gives leaky relu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relu_lower_clip_slope: Option<f64>,
    /// Elu alpha, default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elu_alpha: Option<f64>,
    /// Softplus beta, default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softplus_beta: Option<f64>,
    /// Swish beta, default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swish_beta: Option<f64>,
    /// The dim `gen_index` counts along, default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<i64>,
}

impl PointwiseParams {
    pub fn relu_lower_clip(&self) -> f64 {
        self.relu_lower_clip.unwrap_or(0.0)
    }
    pub fn relu_upper_clip(&self) -> f64 {
        self.relu_upper_clip.unwrap_or(f64::INFINITY)
    }
    pub fn relu_lower_clip_slope(&self) -> f64 {
        self.relu_lower_clip_slope.unwrap_or(0.0)
    }
    pub fn elu_alpha(&self) -> f64 {
        self.elu_alpha.unwrap_or(1.0)
    }
    pub fn softplus_beta(&self) -> f64 {
        self.softplus_beta.unwrap_or(1.0)
    }
    pub fn swish_beta(&self) -> f64 {
        self.swish_beta.unwrap_or(1.0)
    }
    pub fn axis(&self) -> i64 {
        self.axis.unwrap_or(0)
    }
}

/// A pointwise node: `out = mode(a[, b[, c]])` with broadcasting of the operands through
/// size-1 dims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointwiseOp {
    pub mode: PointwiseMode,
    pub a: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<i64>,
    /// The third operand: the mask of `binary_select`; absent for every other mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<i64>,
    pub out: i64,
    #[serde(default)]
    pub params: PointwiseParams,
}

/// Broadcast of two same-rank dim lists through size-1 dims; `what` names the node in errors.
pub fn broadcast(a: &[i64], b: &[i64], what: &str) -> Result<Vec<i64>> {
    if a.len() != b.len() {
        return Err(Error::BadParam(format!(
            "{what}: operands have ranks {} and {}; pointwise operands must have the same rank",
            a.len(),
            b.len()
        )));
    }
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (&x, &y))| match (x, y) {
            _ if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(Error::BadParam(format!(
                "{what}: dim {i} is {x} in one operand and {y} in the other; \
                 they must be equal or one of them 1"
            ))),
        })
        .collect()
}

impl PointwiseOp {
    /// UIDs read, in operand order.
    pub fn inputs(&self) -> Vec<i64> {
        std::iter::once(self.a)
            .chain(self.b)
            .chain(self.c)
            .collect()
    }

    /// How many operands are bound (1 to 3).
    pub fn operand_count(&self) -> usize {
        1 + usize::from(self.b.is_some()) + usize::from(self.c.is_some())
    }

    /// Checks the operand count of the mode, the operands' dims against `out`, the data types
    /// the mode allows, and `gen_index`'s axis; by-value scalars broadcast against a tensor of
    /// any rank, but not every operand may be one. Errors name `what` (the node).
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let t = |uid: i64| graph.tensor_for(uid, node);
        let want = self.mode.operand_count();
        if self.c.is_some() && self.b.is_none() {
            return Err(Error::BadParam(format!(
                "{what}: operand c is given without operand b"
            )));
        }
        if want != self.operand_count() {
            return Err(Error::BadParam(format!(
                "{what}: mode {} takes {want} operand(s) but {} given",
                self.mode.name(),
                self.operand_count()
            )));
        }
        let out = t(self.out)?;
        let operands = self
            .inputs()
            .into_iter()
            .map(t)
            .collect::<Result<Vec<_>>>()?;
        let tensors: Vec<_> = operands.iter().filter(|o| o.scalar.is_none()).collect();
        let dims = match tensors.split_first() {
            None if operands.len() == 1 => {
                return Err(Error::BadParam(format!(
                    "{what}: the only operand is a by-value scalar; it must be a tensor"
                )))
            }
            None => {
                return Err(Error::BadParam(format!(
                    "{what}: every operand is a by-value scalar; one must be a tensor"
                )))
            }
            Some((first, rest)) => rest
                .iter()
                .try_fold(first.dims.clone(), |acc, o| broadcast(&acc, &o.dims, what))?,
        };
        if !self.mode.allows_integral() {
            if let Some(bad) = operands
                .iter()
                .copied()
                .chain([out])
                .find(|x| x.data_type.is_integral())
            {
                return Err(Error::BadParam(format!(
                    "{what}: {} is {}, but mode {} computes on floating-point tensors only \
                     (bool, i8 and i32 tensors go with arithmetic, comparison, logical, \
                     gen_index, binary_select and identity modes)",
                    bad.label(),
                    bad.data_type,
                    self.mode.name()
                )));
            }
        }
        if self.mode == PointwiseMode::GenIndex {
            let axis = self.params.axis();
            if axis < 0 || axis as usize >= dims.len() {
                return Err(Error::BadParam(format!(
                    "{what}: gen_index axis {axis} is outside the output's {} dims",
                    dims.len()
                )));
            }
        } else if self.params.axis.is_some() {
            return Err(Error::BadParam(format!(
                "{what}: the axis parameter belongs to gen_index, not to mode {}",
                self.mode.name()
            )));
        }
        super::expect_dims(what, out, &dims)
    }
}
