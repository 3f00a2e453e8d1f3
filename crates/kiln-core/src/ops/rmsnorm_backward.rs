//! RMS normalization backward (cuDNN frontend's `rmsnorm_backward`), stored as a
//! [`GenericOp`]: per sample (dim 0), given the saved `inv_rms` of the forward.
//!
//! Ports: inputs `dy`, `x` [N, d1, ...], `scale` [1, d1, ...], `inv_rms` [N, 1, ...]; outputs
//! `dx` (dims of `x`), `dscale` and, when the forward had a bias (cuDNN's `has_dbias`), `dbias`
//! [1, d1, ...]. No attributes. The formulas are in [`super::norm_backward`].

use super::norm_backward::{self, NormBackwardKind};
use super::{GenericOp, OpSpec, Port};
use crate::{OpGraph, Result};

/// The [`OpSpec`] of rmsnorm_backward; its typed view is [`norm_backward::NormBackwardOp`].
pub struct RmsnormBackward;

static INPUTS: [Port; 4] = [
    Port::required("dy"),
    Port::required("x"),
    Port::required("scale"),
    Port::required("inv_rms"),
];
static OUTPUTS: [Port; 3] = [
    Port::required("dx"),
    Port::required("dscale"),
    Port::optional("dbias"),
];

impl OpSpec for RmsnormBackward {
    fn name(&self) -> &'static str {
        NormBackwardKind::Rmsnorm.name()
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
        norm_backward::validate(NormBackwardKind::Rmsnorm, op, graph, node, what)
    }

    fn infer_output_dims(
        &self,
        op: &GenericOp,
        input: &dyn Fn(&str) -> Option<Vec<i64>>,
        what: &str,
    ) -> Result<Vec<(&'static str, Vec<i64>)>> {
        norm_backward::infer_output_dims(self, NormBackwardKind::Rmsnorm, op, input, what)
    }
}
