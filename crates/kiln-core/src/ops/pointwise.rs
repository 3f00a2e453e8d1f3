//! Pointwise: `out = mode(a[, b])`, its modes and parameters, validation and shape inference.

use crate::{Error, OpGraph, Result};
use serde::{Deserialize, Serialize};

/// Pointwise operation modes. Binary modes take `a` and `b`; unary modes take `a` only.
/// Comparisons write 1.0 where true and 0.0 where false.
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
}

impl PointwiseMode {
    /// Every mode, in a fixed order.
    pub const ALL: [PointwiseMode; 29] = [
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
    ];

    /// True for modes with two inputs.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            PointwiseMode::Add
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
}

/// A pointwise node: `out = mode(a[, b])` with broadcasting of `a` and `b` through size-1 dims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointwiseOp {
    pub mode: PointwiseMode,
    pub a: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<i64>,
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
        std::iter::once(self.a).chain(self.b).collect()
    }

    /// Checks the operand count of the mode and the operands' dims against `out`; by-value
    /// scalars broadcast against a tensor of any rank. Errors name `what` (the node).
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let t = |uid: i64| graph.tensor_for(uid, node);
        if self.mode.is_binary() != self.b.is_some() {
            return Err(Error::BadParam(format!(
                "{what}: mode {} takes {} operand(s) but {} given",
                self.mode.name(),
                if self.mode.is_binary() { 2 } else { 1 },
                if self.b.is_some() { 2 } else { 1 }
            )));
        }
        let a = t(self.a)?;
        let out = t(self.out)?;
        let dims = match self.b {
            None if a.scalar.is_some() => {
                return Err(Error::BadParam(format!(
                    "{what}: the only operand is a by-value scalar; it must be a tensor"
                )))
            }
            None => a.dims.clone(),
            Some(b) => {
                let b = t(b)?;
                match (a.scalar.is_some(), b.scalar.is_some()) {
                    (true, true) => {
                        return Err(Error::BadParam(format!(
                            "{what}: both operands are by-value scalars; one must be a tensor"
                        )))
                    }
                    (true, false) => b.dims.clone(),
                    (false, true) => a.dims.clone(),
                    (false, false) => broadcast(&a.dims, &b.dims, what)?,
                }
            }
        };
        super::expect_dims(what, out, &dims)
    }
}
