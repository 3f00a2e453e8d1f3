//! What the normalization operations (batchnorm, layernorm, rmsnorm and their inference and
//! backward forms) share: where a scalar such as epsilon or momentum comes from, the forward
//! phase, the dims of their parameters and statistics, and the checks they all make.
//!
//! Two families by the dims they normalize over (`docs/norms.md`):
//! - **per sample** (layernorm, rmsnorm): statistics of each index of dim 0 over every other
//!   dim; parameters `[1, d1, ...]`, statistics `[N, 1, ...]`;
//! - **per channel** (batchnorm): statistics of each index of dim 1 over every other dim;
//!   parameters and statistics `[1, C, 1, ...]`.

use super::{AttrValue, GenericOp};
use crate::{Error, OpGraph, Result, TensorDesc};
use std::collections::BTreeMap;

/// Where a node's scalar operand (epsilon, momentum) comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Epsilon {
    /// The float attribute of the same name.
    Value(f64),
    /// The input port of the same name: the UID of a by-value scalar.
    Tensor(i64),
}

impl Epsilon {
    /// The scalar's value: the attribute, or the value of the by-value scalar. `name` is the
    /// scalar's port (`epsilon`, `momentum`); errors name `node`.
    pub fn value(self, graph: &OpGraph, node: &str, name: &str) -> Result<f64> {
        match self {
            Epsilon::Value(v) => Ok(v),
            Epsilon::Tensor(uid) => {
                let t = graph.tensor_for(uid, node)?;
                t.scalar.ok_or_else(|| {
                    Error::BadParam(format!(
                        "node '{node}': {name} {} must be a by-value scalar",
                        t.label()
                    ))
                })
            }
        }
    }
}

/// Whether a forward node also writes its statistics (training) or only `y` (inference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormPhase {
    /// Writes `y` and the statistics.
    Training,
    /// Writes `y` only.
    Inference,
}

impl NormPhase {
    /// The attribute value: `training` or `inference`.
    pub fn name(self) -> &'static str {
        match self {
            NormPhase::Training => "training",
            NormPhase::Inference => "inference",
        }
    }

    /// The `forward_phase` attribute of `op` (inference when absent); errors name `what`.
    pub fn of(op: &GenericOp, what: &str) -> Result<NormPhase> {
        match op.attributes.get("forward_phase") {
            None => Ok(NormPhase::Inference),
            Some(AttrValue::Str(s)) if s == "training" => Ok(NormPhase::Training),
            Some(AttrValue::Str(s)) if s == "inference" => Ok(NormPhase::Inference),
            Some(v) => Err(Error::BadParam(format!(
                "{what}: attribute 'forward_phase' is {v:?}; it must be \"training\" or \
                 \"inference\""
            ))),
        }
    }
}

/// The ports of a generic node, read with errors that name the node and operation.
pub(crate) struct NodePorts<'a> {
    pub op: &'a GenericOp,
    pub what: &'a str,
}

impl NodePorts<'_> {
    fn get(side: &BTreeMap<String, i64>, name: &str) -> Option<i64> {
        side.get(name).copied()
    }

    /// The UID bound to required input `name`.
    pub fn input(&self, name: &str) -> Result<i64> {
        Self::get(&self.op.inputs, name).ok_or_else(|| self.missing("input", name))
    }

    /// The UID bound to optional input `name`.
    pub fn opt_input(&self, name: &str) -> Option<i64> {
        Self::get(&self.op.inputs, name)
    }

    /// The UID bound to required output `name`.
    pub fn output(&self, name: &str) -> Result<i64> {
        Self::get(&self.op.outputs, name).ok_or_else(|| self.missing("output", name))
    }

    /// The UID bound to optional output `name`.
    pub fn opt_output(&self, name: &str) -> Option<i64> {
        Self::get(&self.op.outputs, name)
    }

    fn missing(&self, side: &str, name: &str) -> Error {
        Error::BadParam(format!(
            "{}: required {side} port '{name}' of {} is missing",
            self.what, self.op.op
        ))
    }

    /// A scalar given as the input port or the float attribute `name`, not both; `None` when
    /// neither is given.
    pub fn scalar(&self, name: &str) -> Result<Option<Epsilon>> {
        let what = self.what;
        match (self.op.inputs.get(name), self.op.attributes.get(name)) {
            (Some(&uid), None) => Ok(Some(Epsilon::Tensor(uid))),
            (None, Some(AttrValue::Float(v))) => Ok(Some(Epsilon::Value(*v))),
            (None, Some(v)) => Err(Error::BadParam(format!(
                "{what}: attribute '{name}' is a {}; it must be a float",
                v.type_name()
            ))),
            (Some(_), Some(_)) => Err(Error::BadParam(format!(
                "{what}: {name} is given both as the '{name}' input and as an attribute; give one"
            ))),
            (None, None) => Ok(None),
        }
    }

    /// Like [`NodePorts::scalar`], refusing a node without it.
    pub fn required_scalar(&self, name: &str) -> Result<Epsilon> {
        self.scalar(name)?.ok_or_else(|| {
            Error::BadParam(format!(
                "{}: {} needs {name}: a '{name}' input (a by-value scalar) or a '{name}' \
                 attribute",
                self.what, self.op.op
            ))
        })
    }
}

/// The dims of the parameters of a per-sample norm of `x`: dim 0 set to 1.
pub fn per_sample_param_dims(x: &[i64]) -> Vec<i64> {
    x.iter()
        .enumerate()
        .map(|(i, &d)| if i == 0 { 1 } else { d })
        .collect()
}

/// The dims of the statistics of a per-sample norm of `x`: dim 0 kept, every other dim 1.
pub fn per_sample_stat_dims(x: &[i64]) -> Vec<i64> {
    x.iter()
        .enumerate()
        .map(|(i, &d)| if i == 0 { d } else { 1 })
        .collect()
}

/// The dims of the parameters and statistics of a per-channel norm of `x`: dim 1 kept, every
/// other dim 1.
pub fn per_channel_dims(x: &[i64]) -> Vec<i64> {
    x.iter()
        .enumerate()
        .map(|(i, &d)| if i == 1 { d } else { 1 })
        .collect()
}

/// Refuses `x` unless it is a tensor of rank 2 or more; `port` names it in the error.
pub(crate) fn check_normalized<'g>(
    what: &str,
    graph: &'g OpGraph,
    node: &str,
    port: &str,
    uid: i64,
) -> Result<&'g TensorDesc> {
    let x = graph.tensor_for(uid, node)?;
    if x.scalar.is_some() || x.dims.len() < 2 {
        return Err(Error::BadParam(format!(
            "{what}: {port} {} must be a tensor of rank 2 or more (batch, channels, ...)",
            x.label()
        )));
    }
    Ok(x)
}

/// Refuses the tensor `uid` bound to `port` unless it is a tensor of dims `want`.
pub(crate) fn check_operand(
    what: &str,
    graph: &OpGraph,
    node: &str,
    port: &str,
    uid: i64,
    want: &[i64],
) -> Result<()> {
    let p = graph.tensor_for(uid, node)?;
    if p.scalar.is_some() || p.dims != want {
        return Err(Error::BadParam(format!(
            "{what}: {port} {} has dims {:?}; it must be a tensor of dims {want:?}",
            p.label(),
            p.dims
        )));
    }
    Ok(())
}

/// Refuses an epsilon that is not finite and at least 0.
pub(crate) fn check_epsilon(what: &str, eps: f64) -> Result<()> {
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(Error::BadParam(format!(
            "{what}: epsilon is {eps}; it must be finite and at least 0"
        )));
    }
    Ok(())
}

/// The dims bound to required input `port`, for shape inference.
pub(crate) fn inferred_input(
    input: &dyn Fn(&str) -> Option<Vec<i64>>,
    port: &str,
    op: &str,
    what: &str,
) -> Result<Vec<i64>> {
    input(port).ok_or_else(|| {
        Error::BadParam(format!(
            "{what}: required input port '{port}' of {op} is missing"
        ))
    })
}
