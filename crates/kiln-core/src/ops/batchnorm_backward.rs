//! Batch normalization backward (cuDNN frontend's `batchnorm_backward`), stored as a
//! [`super::GenericOp`]: per channel (dim 1), given the saved statistics of the forward.
//!
//! Ports: inputs `dy`, `x` [N, C, ...], `scale`, `mean`, `inv_variance` [1, C, 1, ...];
//! outputs `dx` (dims of `x`), `dscale`, `dbias` [1, C, 1, ...]. No attributes. The formulas
//! are in [`super::norm_backward`].

use super::norm_backward::{NormBackwardKind, NormBackwardSpec};
use super::Port;

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

/// The [`super::OpSpec`] of batchnorm_backward; its typed view is
/// [`super::norm_backward::NormBackwardOp`].
pub static BATCHNORM_BACKWARD: NormBackwardSpec =
    NormBackwardSpec::new(NormBackwardKind::Batchnorm, &INPUTS, &OUTPUTS);
