//! Operation nodes: the [`Op`] enum over every operation, and what every node answers (inputs,
//! outputs, kind, validation). Each operation's own types and rules live in [`crate::ops`].

use crate::ops::{self, GenericOp};
use crate::{OpGraph, Result};
use serde::{Deserialize, Serialize};

pub use crate::ops::conv::{ConvDirection, ConvOp, ConvParams};
pub use crate::ops::matmul::MatmulOp;
pub use crate::ops::pointwise::{PointwiseMode, PointwiseOp, PointwiseParams};
pub use crate::ops::reduction::{ReductionMode, ReductionOp};

/// An operation of the graph.
///
/// The four typed variants predate the generic encoding and keep their JSON and FlatBuffer
/// forms. Every other operation is a [`GenericOp`] (JSON: `"op"` holds its registered name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Pointwise(PointwiseOp),
    Conv(ConvOp),
    Matmul(MatmulOp),
    Reduction(ReductionOp),
    /// An operation registered in [`crate::ops::SPECS`], by name.
    #[serde(untagged)]
    Generic(GenericOp),
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
    /// A [`GenericOp`]; its name says which.
    Generic,
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
            Op::Generic(_) => OpKind::Generic,
        }
    }

    /// UIDs this operation reads, in operand order (a generic node's in its spec's port order;
    /// absent optional ports are left out).
    pub fn inputs(&self) -> Vec<i64> {
        match self {
            Op::Pointwise(p) => p.inputs(),
            Op::Conv(c) => c.inputs().to_vec(),
            Op::Matmul(m) => vec![m.a, m.b],
            Op::Reduction(r) => vec![r.x],
            Op::Generic(g) => generic_ports(g, &g.inputs, |s| s.inputs()),
        }
    }

    /// UIDs this operation writes, in output-port order; absent optional outputs are left out.
    pub fn outputs(&self) -> Vec<i64> {
        match self {
            Op::Pointwise(p) => vec![p.out],
            Op::Conv(c) => vec![c.output()],
            Op::Matmul(m) => vec![m.c],
            Op::Reduction(r) => vec![r.y],
            Op::Generic(g) => generic_ports(g, &g.outputs, |s| s.outputs()),
        }
    }

    /// Every UID the operation reads or writes.
    pub fn tensor_uids(&self) -> Vec<i64> {
        let mut uids = self.inputs();
        uids.extend(self.outputs());
        uids
    }

    /// True when this operation writes more than one tensor.
    pub fn has_several_outputs(&self) -> bool {
        self.outputs().len() > 1
    }

    /// A short name for messages (`conv_fprop`, `pointwise relu`, `rmsnorm`, ...).
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
            Op::Generic(g) => g.op.clone(),
        }
    }

    /// Checks the operation's own rules (operand counts, dims, attributes) in `graph`, whose
    /// tensors `node` refers to; errors name `what`.
    pub fn validate(&self, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        match self {
            Op::Pointwise(p) => p.validate(graph, node, what),
            Op::Conv(_) | Op::Matmul(_) | Op::Reduction(_) => {
                ops::refuse_integral(graph, node, &self.tensor_uids(), what)?;
                match self {
                    Op::Conv(c) => c.validate(graph, node, what),
                    Op::Matmul(m) => m.validate(graph, node, what),
                    Op::Reduction(r) => r.validate(graph, node, what),
                    _ => Ok(()),
                }
            }
            Op::Generic(g) => ops::check_generic(g, what)?.validate(g, graph, node, what),
        }
    }
}

/// The UIDs of `given` in the order of the spec's ports; names the spec does not know (refused
/// by validation) and nodes of unknown operations follow in name order.
fn generic_ports(
    g: &GenericOp,
    given: &std::collections::BTreeMap<String, i64>,
    ports: impl Fn(&dyn ops::OpSpec) -> &'static [ops::Port],
) -> Vec<i64> {
    let known: &[ops::Port] = ops::spec(&g.op).map(ports).unwrap_or(&[]);
    let in_order = known.iter().filter_map(|p| given.get(p.name).copied());
    let rest = given
        .iter()
        .filter(|(k, _)| !known.iter().any(|p| p.name == k.as_str()))
        .map(|(_, &v)| v);
    in_order.chain(rest).collect()
}
