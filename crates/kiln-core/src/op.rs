//! Operation nodes and their attributes.

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

/// Convolution geometry, one entry per spatial dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvParams {
    pub pre_padding: Vec<i64>,
    pub post_padding: Vec<i64>,
    pub stride: Vec<i64>,
    pub dilation: Vec<i64>,
}

impl ConvParams {
    /// Number of spatial dimensions.
    pub fn spatial_rank(&self) -> usize {
        self.stride.len()
    }
}

/// Which convolution: forward, data gradient or weight gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvDirection {
    Fprop,
    Dgrad,
    Wgrad,
}

/// A cross-correlation node (cuDNN's convention). Tensors: `x` [N, C, D...], `w` [K, C/G, R...],
/// `y` [N, K, O...]. Groups G = C / w.dims[1]. Fprop reads x and w and writes y; dgrad reads y
/// (as dy) and w and writes x (as dx); wgrad reads x and y (as dy) and writes w (as dw).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvOp {
    pub direction: ConvDirection,
    pub x: i64,
    pub w: i64,
    pub y: i64,
    pub params: ConvParams,
}

impl ConvOp {
    /// UIDs of the two inputs, in (first, second) order for the direction.
    pub fn inputs(&self) -> [i64; 2] {
        match self.direction {
            ConvDirection::Fprop => [self.x, self.w],
            ConvDirection::Dgrad => [self.y, self.w],
            ConvDirection::Wgrad => [self.x, self.y],
        }
    }

    /// UID of the output.
    pub fn output(&self) -> i64 {
        match self.direction {
            ConvDirection::Fprop => self.y,
            ConvDirection::Dgrad => self.x,
            ConvDirection::Wgrad => self.w,
        }
    }
}

/// A batched matmul node: `c[..., M, N] = a[..., M, K] * b[..., K, N]`, batch dims broadcast
/// through size 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatmulOp {
    pub a: i64,
    pub b: i64,
    pub c: i64,
}

/// Reduction modes. `Amax` is the maximum of absolute values; `Norm1`/`Norm2` are the L1/L2 norms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReductionMode {
    Sum,
    Mean,
    Max,
    Min,
    Amax,
    Norm1,
    Norm2,
}

impl ReductionMode {
    pub const ALL: [ReductionMode; 7] = [
        ReductionMode::Sum,
        ReductionMode::Mean,
        ReductionMode::Max,
        ReductionMode::Min,
        ReductionMode::Amax,
        ReductionMode::Norm1,
        ReductionMode::Norm2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReductionMode::Sum => "sum",
            ReductionMode::Mean => "mean",
            ReductionMode::Max => "max",
            ReductionMode::Min => "min",
            ReductionMode::Amax => "amax",
            ReductionMode::Norm1 => "norm1",
            ReductionMode::Norm2 => "norm2",
        }
    }

    pub fn code(self) -> u8 {
        ReductionMode::ALL
            .iter()
            .position(|&m| m == self)
            .unwrap_or(0) as u8
    }

    pub fn from_code(code: u8) -> Option<ReductionMode> {
        ReductionMode::ALL.get(code as usize).copied()
    }

    pub fn from_name(name: &str) -> Option<ReductionMode> {
        ReductionMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// A reduction node: `y` has the rank of `x`; each dim of `y` equals that of `x` (kept) or is 1
/// (reduced).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReductionOp {
    pub mode: ReductionMode,
    pub x: i64,
    pub y: i64,
}

/// An operation of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Pointwise(PointwiseOp),
    Conv(ConvOp),
    Matmul(MatmulOp),
    Reduction(ReductionOp),
}

/// The kind of an operation, without its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Pointwise,
    ConvFprop,
    ConvDgrad,
    ConvWgrad,
    Matmul,
    Reduction,
}

impl Op {
    /// The kind of this operation.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Pointwise(_) => OpKind::Pointwise,
            Op::Conv(c) => match c.direction {
                ConvDirection::Fprop => OpKind::ConvFprop,
                ConvDirection::Dgrad => OpKind::ConvDgrad,
                ConvDirection::Wgrad => OpKind::ConvWgrad,
            },
            Op::Matmul(_) => OpKind::Matmul,
            Op::Reduction(_) => OpKind::Reduction,
        }
    }

    /// UIDs this operation reads, in operand order.
    pub fn inputs(&self) -> Vec<i64> {
        match self {
            Op::Pointwise(p) => std::iter::once(p.a).chain(p.b).collect(),
            Op::Conv(c) => c.inputs().to_vec(),
            Op::Matmul(m) => vec![m.a, m.b],
            Op::Reduction(r) => vec![r.x],
        }
    }

    /// UID this operation writes.
    pub fn output(&self) -> i64 {
        match self {
            Op::Pointwise(p) => p.out,
            Op::Conv(c) => c.output(),
            Op::Matmul(m) => m.c,
            Op::Reduction(r) => r.y,
        }
    }

    /// A short name for messages (`conv_fprop`, `pointwise relu`, ...).
    pub fn describe(&self) -> String {
        match self {
            Op::Pointwise(p) => format!("pointwise {}", p.mode.name()),
            Op::Conv(c) => match c.direction {
                ConvDirection::Fprop => "conv_fprop".into(),
                ConvDirection::Dgrad => "conv_dgrad".into(),
                ConvDirection::Wgrad => "conv_wgrad".into(),
            },
            Op::Matmul(_) => "matmul".into(),
            Op::Reduction(r) => format!("reduction {}", r.mode.name()),
        }
    }
}
