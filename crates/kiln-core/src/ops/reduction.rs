//! Reduction: its modes, validation and shape rule.

use crate::{Error, OpGraph, Result};
use serde::{Deserialize, Serialize};

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

/// Checks that reduction output dims `y` keep or reduce (to 1) each dim of `x`.
pub fn check_reduction_dims(x: &[i64], y: &[i64], what: &str) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::BadParam(format!(
            "{what}: x has rank {} but y rank {}; a reduction keeps the rank",
            x.len(),
            y.len()
        )));
    }
    match x.iter().zip(y).position(|(&a, &b)| b != a && b != 1) {
        Some(i) => Err(Error::BadParam(format!(
            "{what}: y dim {i} is {} but x dim {i} is {}; it must equal it or be 1",
            y[i], x[i]
        ))),
        None => Ok(()),
    }
}

impl ReductionOp {
    /// Checks that `x` is a tensor and `y` keeps or reduces each of its dims. Errors name `what`.
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let t = |uid: i64| graph.tensor_for(uid, node);
        let (x, y) = (t(self.x)?, t(self.y)?);
        if x.scalar.is_some() {
            return Err(Error::BadParam(format!(
                "{what}: the reduction input cannot be a by-value scalar"
            )));
        }
        check_reduction_dims(&x.dims, &y.dims, what)
    }
}
