//! What the three normalization backward operations share: their typed view and their
//! validation. Each operation has its own module with its [`super::OpSpec`]
//! (`batchnorm_backward`, `layernorm_backward`, `rmsnorm_backward`).
//!
//! With `x̂ = (x - mean) * inv` (rmsnorm: `x̂ = x * inv_rms`), `g = dy * scale` and the means
//! taken over the values that share one statistic (a sample, or a channel for batchnorm):
//! - `dx = inv * (g - mean(g) - x̂ * mean(g * x̂))` (rmsnorm: without the `- mean(g)` term);
//! - `dscale = Σ dy * x̂` and `dbias = Σ dy`, summed over the other axis (the samples, or the
//!   batch and spatial positions for batchnorm).
//!
//! The saved statistics are taken as given (they are the forward's outputs): the gradient is
//! that of the forward whose statistics they are.

use super::norm::{self, NodePorts};
use super::{GenericOp, OpSpec, Port};
use crate::{Error, OpGraph, Result};

/// Which backward operation a [`NormBackwardOp`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormBackwardKind {
    /// Per-channel statistics `mean`, `inv_variance`.
    Batchnorm,
    /// Per-sample statistics `mean`, `inv_variance`.
    Layernorm,
    /// Per-sample statistic `inv_rms`; `dbias` optional.
    Rmsnorm,
}

impl NormBackwardKind {
    /// The operation's name.
    pub fn name(self) -> &'static str {
        match self {
            NormBackwardKind::Batchnorm => "batchnorm_backward",
            NormBackwardKind::Layernorm => "layernorm_backward",
            NormBackwardKind::Rmsnorm => "rmsnorm_backward",
        }
    }

    /// The port of the inverse deviation: `inv_variance`, or `inv_rms` for rmsnorm.
    pub fn inv_port(self) -> &'static str {
        match self {
            NormBackwardKind::Rmsnorm => "inv_rms",
            _ => "inv_variance",
        }
    }

    /// True when the statistics are per channel (dim 1) rather than per sample (dim 0).
    pub fn per_channel(self) -> bool {
        self == NormBackwardKind::Batchnorm
    }

    /// The dims of the parameters (`scale`, `dscale`, `dbias`) for `x`.
    pub fn param_dims(self, x: &[i64]) -> Vec<i64> {
        if self.per_channel() {
            norm::per_channel_dims(x)
        } else {
            norm::per_sample_param_dims(x)
        }
    }

    /// The dims of the statistics (`mean`, `inv_variance`, `inv_rms`) for `x`.
    pub fn stat_dims(self, x: &[i64]) -> Vec<i64> {
        if self.per_channel() {
            norm::per_channel_dims(x)
        } else {
            norm::per_sample_stat_dims(x)
        }
    }
}

/// A typed view of a batchnorm_backward, layernorm_backward or rmsnorm_backward node.
#[derive(Debug, Clone, PartialEq)]
pub struct NormBackwardOp {
    pub kind: NormBackwardKind,
    pub dy: i64,
    pub x: i64,
    pub scale: i64,
    /// The saved mean; `None` for rmsnorm.
    pub mean: Option<i64>,
    /// The saved `inv_variance` (or `inv_rms`).
    pub inv: i64,
    pub dx: i64,
    pub dscale: i64,
    /// Always bound for batchnorm and layernorm; optional for rmsnorm (`has_dbias`).
    pub dbias: Option<i64>,
}

impl NormBackwardOp {
    /// The typed view of `op`, a node of `kind` that passed [`super::check_generic`]; errors
    /// name `what`.
    pub fn from_generic(kind: NormBackwardKind, op: &GenericOp, what: &str) -> Result<Self> {
        let p = NodePorts { op, what };
        let (mean, dbias) = match kind {
            NormBackwardKind::Rmsnorm => (None, p.opt_output("dbias")),
            _ => (Some(p.input("mean")?), Some(p.output("dbias")?)),
        };
        Ok(NormBackwardOp {
            kind,
            dy: p.input("dy")?,
            x: p.input("x")?,
            scale: p.input("scale")?,
            mean,
            inv: p.input(kind.inv_port())?,
            dx: p.output("dx")?,
            dscale: p.output("dscale")?,
            dbias,
        })
    }

    /// The typed view of any of the three backward nodes, or `None` for another operation.
    pub fn of(op: &GenericOp, what: &str) -> Option<Result<Self>> {
        let kind = [
            NormBackwardKind::Batchnorm,
            NormBackwardKind::Layernorm,
            NormBackwardKind::Rmsnorm,
        ]
        .into_iter()
        .find(|k| k.name() == op.op)?;
        Some(Self::from_generic(kind, op, what))
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        let mut op = GenericOp::new(self.kind.name())
            .input("dy", self.dy)
            .input("x", self.x)
            .input("scale", self.scale)
            .input(self.kind.inv_port(), self.inv)
            .output("dx", self.dx)
            .output("dscale", self.dscale);
        if let Some(m) = self.mean {
            op = op.input("mean", m);
        }
        if let Some(b) = self.dbias {
            op = op.output("dbias", b);
        }
        op
    }
}

/// The validation of a backward node of `kind`.
pub(crate) fn validate(
    kind: NormBackwardKind,
    op: &GenericOp,
    graph: &OpGraph,
    node: &str,
    what: &str,
) -> Result<()> {
    let b = NormBackwardOp::from_generic(kind, op, what)?;
    let x = norm::check_normalized(what, graph, node, "x", b.x)?;
    let dy = graph.tensor_for(b.dy, node)?;
    if dy.scalar.is_some() || dy.dims != x.dims {
        return Err(Error::BadParam(format!(
            "{what}: dy {} has dims {:?}; it must have the dims of x {:?}",
            dy.label(),
            dy.dims,
            x.dims
        )));
    }
    let params = kind.param_dims(&x.dims);
    let stats = kind.stat_dims(&x.dims);
    norm::check_operand(what, graph, node, "scale", b.scale, &params)?;
    if let Some(m) = b.mean {
        norm::check_operand(what, graph, node, "mean", m, &stats)?;
    }
    norm::check_operand(what, graph, node, kind.inv_port(), b.inv, &stats)?;
    super::expect_dims(what, graph.tensor_for(b.dx, node)?, &x.dims)?;
    for uid in [Some(b.dscale), b.dbias].into_iter().flatten() {
        super::expect_dims(what, graph.tensor_for(uid, node)?, &params)?;
    }
    Ok(())
}

/// The [`OpSpec`] of the three norm backward operations: the kind and its ports (declared in
/// each operation's module) pick everything else.
pub struct NormBackwardSpec {
    kind: NormBackwardKind,
    inputs: &'static [Port],
    outputs: &'static [Port],
}

impl NormBackwardSpec {
    /// The spec of `kind`'s operation with these ports.
    pub const fn new(
        kind: NormBackwardKind,
        inputs: &'static [Port],
        outputs: &'static [Port],
    ) -> Self {
        NormBackwardSpec {
            kind,
            inputs,
            outputs,
        }
    }
}

impl OpSpec for NormBackwardSpec {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn inputs(&self) -> &'static [Port] {
        self.inputs
    }

    fn outputs(&self) -> &'static [Port] {
        self.outputs
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        validate(self.kind, op, graph, node, what)
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        infer_output_dims(self, self.kind, op, input, what)
    }
}

/// The shape inference of a backward node of `kind`.
pub(crate) fn infer_output_dims(
    spec: &dyn OpSpec,
    kind: NormBackwardKind,
    op: &GenericOp,
    input: &dyn Fn(&str) -> Option<Vec<i64>>,
    what: &str,
) -> Result<Vec<(&'static str, Vec<i64>)>> {
    let x = norm::inferred_input(input, "x", spec.name(), what)?;
    let mut out = vec![("dx", x.clone()), ("dscale", kind.param_dims(&x))];
    if op.outputs.contains_key("dbias") {
        out.push(("dbias", kind.param_dims(&x)));
    }
    Ok(out)
}
