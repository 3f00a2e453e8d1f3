//! Layer normalization backward (cuDNN frontend's `layernorm_backward`), stored as a
//! [`super::GenericOp`]: per sample (dim 0), given the saved statistics of the forward.
//!
//! Ports: inputs `dy`, `x` [N, d1, ...], `scale` [1, d1, ...], `mean`, `inv_variance`
//! [N, 1, ...]; outputs `dx` (dims of `x`), `dscale`, `dbias` [1, d1, ...]. No attributes. The
//! formulas are in [`super::norm_backward`].

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

/// The [`super::OpSpec`] of layernorm_backward; its typed view is
/// [`super::norm_backward::NormBackwardOp`].
pub static LAYERNORM_BACKWARD: NormBackwardSpec =
    NormBackwardSpec::new(NormBackwardKind::Layernorm, &INPUTS, &OUTPUTS);
