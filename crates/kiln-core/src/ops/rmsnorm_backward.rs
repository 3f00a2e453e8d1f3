//! RMS normalization backward (cuDNN frontend's `rmsnorm_backward`), stored as a
//! [`super::GenericOp`]: per sample (dim 0), given the saved `inv_rms` of the forward.
//!
//! Ports: inputs `dy`, `x` [N, d1, ...], `scale` [1, d1, ...], `inv_rms` [N, 1, ...]; outputs
//! `dx` (dims of `x`), `dscale` and, when the forward had a bias (cuDNN's `has_dbias`), `dbias`
//! [1, d1, ...]. No attributes. The formulas are in [`super::norm_backward`].

use super::norm_backward::{NormBackwardKind, NormBackwardSpec};
use super::Port;

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

/// The [`super::OpSpec`] of rmsnorm_backward; its typed view is
/// [`super::norm_backward::NormBackwardOp`].
pub static RMSNORM_BACKWARD: NormBackwardSpec =
    NormBackwardSpec::new(NormBackwardKind::Rmsnorm, &INPUTS, &OUTPUTS);
