//! Layer normalization (cuDNN frontend's `layernorm`), stored as a [`GenericOp`].
//!
//! For each sample `n` (index of dim 0), over all its other dims:
//! `mean[n] = mean(x[n, ...])`, `inv_variance[n] = 1 / sqrt(var(x[n, ...]) + epsilon)` (the
//! biased variance), `y = (x - mean) * inv_variance * scale + bias`.
//!
//! Ports: inputs `x` [N, d1, ...], `scale` and `bias` [1, d1, ...], optional `epsilon` (a
//! by-value scalar); outputs `y` (dims of `x`) and, in training, `mean` and `inv_variance`
//! [N, 1, ...]. Attributes: `forward_phase` (`"training"` or `"inference"`, default inference)
//! and `epsilon` (float). Epsilon comes from exactly one of the `epsilon` port and attribute.

use super::norm::{self, Epsilon, NodePorts, NormPhase};
use super::{GenericOp, OpSpec, Port};
use crate::{AttrValue, Error, OpGraph, Result};

/// A typed view of a layernorm node.
#[derive(Debug, Clone, PartialEq)]
pub struct LayernormOp {
    pub x: i64,
    pub scale: i64,
    pub bias: i64,
    pub epsilon: Epsilon,
    pub phase: NormPhase,
    pub y: i64,
    /// Training only, with `inv_variance`.
    pub mean: Option<i64>,
    /// Training only, with `mean`.
    pub inv_variance: Option<i64>,
}

impl LayernormOp {
    /// The typed view of `op`, a layernorm node that passed [`super::check_generic`]. Refuses a
    /// missing port, a bad phase, or epsilon given twice or not at all; errors name `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<LayernormOp> {
        let p = NodePorts { op, what };
        Ok(LayernormOp {
            x: p.input("x")?,
            scale: p.input("scale")?,
            bias: p.input("bias")?,
            epsilon: p.required_scalar("epsilon")?,
            phase: NormPhase::of(op, what)?,
            y: p.output("y")?,
            mean: p.opt_output("mean"),
            inv_variance: p.opt_output("inv_variance"),
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        let mut op = GenericOp::new(Layernorm.name())
            .input("x", self.x)
            .input("scale", self.scale)
            .input("bias", self.bias)
            .output("y", self.y)
            .attribute("forward_phase", AttrValue::Str(self.phase.name().into()));
        match self.epsilon {
            Epsilon::Tensor(uid) => op = op.input("epsilon", uid),
            Epsilon::Value(v) => op = op.attribute("epsilon", AttrValue::Float(v)),
        }
        if let Some(m) = self.mean {
            op = op.output("mean", m);
        }
        if let Some(v) = self.inv_variance {
            op = op.output("inv_variance", v);
        }
        op
    }
}

/// The [`OpSpec`] of layernorm.
pub struct Layernorm;

static INPUTS: [Port; 4] = [
    Port::required("x"),
    Port::required("scale"),
    Port::required("bias"),
    Port::optional("epsilon"),
];
static OUTPUTS: [Port; 3] = [
    Port::required("y"),
    Port::optional("mean"),
    Port::optional("inv_variance"),
];

impl OpSpec for Layernorm {
    fn name(&self) -> &'static str {
        "layernorm"
    }

    fn inputs(&self) -> &'static [Port] {
        &INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &[("epsilon", "float"), ("forward_phase", "str")]
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let l = LayernormOp::from_generic(op, what)?;
        let x = norm::check_normalized(what, graph, node, "x", l.x)?;
        let params = norm::per_sample_param_dims(&x.dims);
        norm::check_operand(what, graph, node, "scale", l.scale, &params)?;
        norm::check_operand(what, graph, node, "bias", l.bias, &params)?;
        norm::check_epsilon(what, l.epsilon.value(graph, node, "epsilon")?)?;
        match (l.phase, l.mean, l.inv_variance) {
            (NormPhase::Training, Some(_), Some(_)) | (NormPhase::Inference, None, None) => {}
            (NormPhase::Training, ..) => {
                return Err(Error::BadParam(format!(
                    "{what}: forward_phase is training; bind both output ports 'mean' and \
                     'inv_variance'"
                )))
            }
            (NormPhase::Inference, ..) => {
                return Err(Error::BadParam(format!(
                    "{what}: output ports 'mean' and 'inv_variance' are written in training only; \
                     set forward_phase to training or leave them out"
                )))
            }
        }
        super::expect_dims(what, graph.tensor_for(l.y, node)?, &x.dims)?;
        let stats = norm::per_sample_stat_dims(&x.dims);
        for uid in [l.mean, l.inv_variance].into_iter().flatten() {
            super::expect_dims(what, graph.tensor_for(uid, node)?, &stats)?;
        }
        Ok(())
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        let x = norm::inferred_input(input, "x", self.name(), what)?;
        let mut out = vec![("y", x.clone())];
        for port in ["mean", "inv_variance"] {
            if op.outputs.contains_key(port) {
                out.push((port, norm::per_sample_stat_dims(&x)));
            }
        }
        Ok(out)
    }
}
