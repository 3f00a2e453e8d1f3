//! Batch normalization with given statistics (cuDNN frontend's `batchnorm_inference`), stored as
//! a [`GenericOp`]: `y = (x - mean) * inv_variance * scale + bias`, per channel (dim 1).
//!
//! Ports: inputs `x` [N, C, ...], `mean`, `inv_variance`, `scale`, `bias` [1, C, 1, ...];
//! output `y` (dims of `x`). No attributes: epsilon is already inside `inv_variance`.

use super::norm::{self, NodePorts};
use super::{GenericOp, OpSpec, Port};
use crate::{OpGraph, Result};

/// A typed view of a batchnorm_inference node.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchnormInferenceOp {
    pub x: i64,
    pub mean: i64,
    pub inv_variance: i64,
    pub scale: i64,
    pub bias: i64,
    pub y: i64,
}

impl BatchnormInferenceOp {
    /// The typed view of `op`, a node that passed [`super::check_generic`]; errors name `what`.
    pub fn from_generic(op: &GenericOp, what: &str) -> Result<BatchnormInferenceOp> {
        let p = NodePorts { op, what };
        Ok(BatchnormInferenceOp {
            x: p.input("x")?,
            mean: p.input("mean")?,
            inv_variance: p.input("inv_variance")?,
            scale: p.input("scale")?,
            bias: p.input("bias")?,
            y: p.output("y")?,
        })
    }

    /// The generic node this view describes.
    pub fn to_generic(&self) -> GenericOp {
        GenericOp::new(BatchnormInference.name())
            .input("x", self.x)
            .input("mean", self.mean)
            .input("inv_variance", self.inv_variance)
            .input("scale", self.scale)
            .input("bias", self.bias)
            .output("y", self.y)
    }
}

/// The [`OpSpec`] of batchnorm_inference.
pub struct BatchnormInference;

static INPUTS: [Port; 5] = [
    Port::required("x"),
    Port::required("mean"),
    Port::required("inv_variance"),
    Port::required("scale"),
    Port::required("bias"),
];
static OUTPUTS: [Port; 1] = [Port::required("y")];

impl OpSpec for BatchnormInference {
    fn name(&self) -> &'static str {
        "batchnorm_inference"
    }

    fn inputs(&self) -> &'static [Port] {
        &INPUTS
    }

    fn outputs(&self) -> &'static [Port] {
        &OUTPUTS
    }

    fn attributes(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    fn validate(&self, op: &GenericOp, graph: &OpGraph, node: &str, what: &str) -> Result<()> {
        let b = BatchnormInferenceOp::from_generic(op, what)?;
        let x = norm::check_normalized(what, graph, node, "x", b.x)?;
        let channel = norm::per_channel_dims(&x.dims);
        for (port, uid) in [
            ("mean", b.mean),
            ("inv_variance", b.inv_variance),
            ("scale", b.scale),
            ("bias", b.bias),
        ] {
            norm::check_operand(what, graph, node, port, uid, &channel)?;
        }
        super::expect_dims(what, graph.tensor_for(b.y, node)?, &x.dims)
    }

    fn infer_output_dims(
        &self,
        _op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        Ok(vec![(
            "y",
            norm::inferred_input(input, "x", self.name(), what)?,
        )])
    }
}
