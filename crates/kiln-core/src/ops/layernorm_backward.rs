//! Layer normalization backward (cuDNN frontend's `layernorm_backward`), stored as a
//! [`GenericOp`]: per sample (dim 0), given the saved statistics of the forward.
//!
//! Ports: inputs `dy`, `x` [N, d1, ...], `scale` [1, d1, ...], `mean`, `inv_variance`
//! [N, 1, ...]; outputs `dx` (dims of `x`), `dscale`, `dbias` [1, d1, ...]. No attributes. The
//! formulas are in [`super::norm_backward`].

use super::norm_backward::{self, NormBackwardKind};
use super::{GenericOp, OpSpec, Port};
use crate::{OpGraph, Result};

/// The [`OpSpec`] of layernorm_backward; its typed view is [`norm_backward::NormBackwardOp`].
pub struct LayernormBackward;

static INPUTS: [Port; 5] = [
    Port::required("dy"),
    Port::required("x"),
    Port::required("scale"),
    Port::required("mean"),
    Port::required("inv_variance"),
];
static OUTPUTS: [Port; 3] = [
    Port::required("dx"),
    Port::required("dscale"),
    Port::required("dbias"),
];

impl OpSpec for LayernormBackward {
    fn name(&self) -> &'static str {
        NormBackwardKind::Layernorm.name()
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
        norm_backward::validate(NormBackwardKind::Layernorm, op, graph, node, what)
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        norm_backward::infer_output_dims(self, NormBackwardKind::Layernorm, op, input, what)
    }
}
