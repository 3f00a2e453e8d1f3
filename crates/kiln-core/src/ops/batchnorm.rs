//! Batch normalization, training forward (cuDNN frontend's `batchnorm`), stored as a
//! [`GenericOp`].
//!
//! For each channel `c` (index of dim 1), over every other dim (`M` values: batch and spatial):
//! `mean[c] = mean(x[:, c, ...])`, `inv_variance[c] = 1 / sqrt(var + epsilon)` (the biased
//! variance), `y = (x - mean) * inv_variance * scale + bias`. With the previous running
//! statistics and a momentum, also `next_running_mean = (1 - momentum) * prev_running_mean +
//! momentum * mean` and `next_running_var = (1 - momentum) * prev_running_var + momentum *
//! var * M / (M - 1)` (the unbiased variance, as cuDNN and PyTorch keep it).
//!
//! Ports: inputs `x` [N, C, ...], `scale`, `bias` [1, C, 1, ...], optional `epsilon`,
//! `prev_running_mean`, `prev_running_var` [1, C, 1, ...] and `momentum` (a by-value scalar);
//! outputs `y`, `mean`, `inv_variance` [1, C, 1, ...] and, with the running statistics,
//! `next_running_mean`, `next_running_var`. Attributes: `epsilon`, `momentum` (floats), each
//! the alternative to its port.

use super::norm::{self, Epsilon, NodePorts};
use super::{GenericOp, OpSpec, Port};
use crate::{AttrValue, Error, OpGraph, Result};

/// The running statistics a batchnorm node updates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningStats {
    pub prev_mean: i64,
    pub prev_var: i64,
    pub momentum: Epsilon,
    pub next_mean: i64,
    pub next_var: i64,
}

/// A typed view of a batchnorm (training) node.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormOp {
    pub x: i64,
    pub scale: i64,
    pub bias: i64,
    pub epsilon: Epsilon,
    pub y: i64,
    pub mean: i64,
    pub inv_variance: i64,
    pub running: Option<RunningStats>,
}

const RUNNING_PORTS: &str = "'prev_running_mean', 'prev_running_var', momentum, \
                             'next_running_mean' and 'next_running_var'";

impl BatchnormOp {
    /// The typed view of `op`, a batchnorm node that passed [`super::check_generic`]. Refuses a
    /// missing port, a scalar given twice, and running statistics given in part; errors name
    /// `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<BatchnormOp> {
        let p = NodePorts { op, what };
        let running = (
            p.opt_input("prev_running_mean"),
            p.opt_input("prev_running_var"),
            p.scalar("momentum")?,
            p.opt_output("next_running_mean"),
            p.opt_output("next_running_var"),
        );
        let running = match running {
            (Some(prev_mean), Some(prev_var), Some(momentum), Some(next_mean), Some(next_var)) => {
                Some(RunningStats {
                    prev_mean,
                    prev_var,
                    momentum,
                    next_mean,
                    next_var,
                })
            }
            (None, None, None, None, None) => None,
            _ => {
                return Err(Error::BadParam(format!(
                    "{what}: running statistics are given in part; give all of \
                     {RUNNING_PORTS}, or none"
                )))
            }
        };
        Ok(BatchnormOp {
            x: p.input("x")?,
            scale: p.input("scale")?,
            bias: p.input("bias")?,
            epsilon: p.required_scalar("epsilon")?,
            y: p.output("y")?,
            mean: p.output("mean")?,
            inv_variance: p.output("inv_variance")?,
            running,
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        let mut op = GenericOp::new(Batchnorm.name())
            .input("x", self.x)
            .input("scale", self.scale)
            .input("bias", self.bias)
            .output("y", self.y)
            .output("mean", self.mean)
            .output("inv_variance", self.inv_variance);
        op = scalar_to_generic(op, "epsilon", self.epsilon);
        if let Some(r) = &self.running {
            op = op
                .input("prev_running_mean", r.prev_mean)
                .input("prev_running_var", r.prev_var)
                .output("next_running_mean", r.next_mean)
                .output("next_running_var", r.next_var);
            op = scalar_to_generic(op, "momentum", r.momentum);
        }
        op
    }
}

/// Binds scalar `name` as its input port or its float attribute.
pub(crate) fn scalar_to_generic(op: GenericOp, name: &str, v: Epsilon) -> GenericOp {
    match v {
        Epsilon::Tensor(uid) => op.input(name, uid),
        Epsilon::Value(v) => op.attribute(name, AttrValue::Float(v)),
    }
}

/// The [`OpSpec`] of batchnorm (training forward).
pub struct Batchnorm;

static INPUTS: [Port; 7] = [
    Port::required("x"),
    Port::required("scale"),
    Port::required("bias"),
    Port::optional("epsilon"),
    Port::optional("prev_running_mean"),
    Port::optional("prev_running_var"),
    Port::optional("momentum"),
];
static OUTPUTS: [Port; 5] = [
    Port::required("y"),
    Port::required("mean"),
    Port::required("inv_variance"),
    Port::optional("next_running_mean"),
    Port::optional("next_running_var"),
];

impl OpSpec for Batchnorm {
    fn name(&self) -> &'static str {
        "batchnorm"
    }

    fn inputs(&self) -> &'static [Port] {
        &INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &[("epsilon", "float"), ("momentum", "float")]
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let b = BatchnormOp::from_generic(op, what)?;
        let x = norm::check_normalized(what, graph, node, "x", b.x)?;
        let channel = norm::per_channel_dims(&x.dims);
        norm::check_operand(what, graph, node, "scale", b.scale, &channel)?;
        norm::check_operand(what, graph, node, "bias", b.bias, &channel)?;
        norm::check_epsilon(what, b.epsilon.value(graph, node, "epsilon")?)?;
        super::expect_dims(what, graph.tensor_for(b.y, node)?, &x.dims)?;
        for uid in [b.mean, b.inv_variance] {
            super::expect_dims(what, graph.tensor_for(uid, node)?, &channel)?;
        }
        if let Some(r) = &b.running {
            norm::check_operand(
                what,
                graph,
                node,
                "prev_running_mean",
                r.prev_mean,
                &channel,
            )?;
            norm::check_operand(what, graph, node, "prev_running_var", r.prev_var, &channel)?;
            for uid in [r.next_mean, r.next_var] {
                super::expect_dims(what, graph.tensor_for(uid, node)?, &channel)?;
            }
            let m = r.momentum.value(graph, node, "momentum")?;
            if !(0.0..=1.0).contains(&m) {
                return Err(Error::BadParam(format!(
                    "{what}: momentum is {m}; it must lie in [0, 1]"
                )));
            }
            let per_channel: i64 = x.dims.iter().product::<i64>() / x.dims[1].max(1);
            if per_channel < 2 {
                return Err(Error::BadParam(format!(
                    "{what}: x {} has {per_channel} value per channel; the running variance \
                     (unbiased) needs at least 2",
                    x.label()
                )));
            }
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
        for port in [
            "mean",
            "inv_variance",
            "next_running_mean",
            "next_running_var",
        ] {
            if op.outputs.contains_key(port) {
                out.push((port, norm::per_channel_dims(&x)));
            }
        }
        Ok(out)
    }
}
