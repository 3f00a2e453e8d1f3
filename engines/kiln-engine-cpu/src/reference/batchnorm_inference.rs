//! Batch normalization with given statistics in f64: `y = (x - mean[c]) * inv_variance[c] *
//! scale[c] + bias[c]` for every value of channel `c` (dim 1).

use super::norm_layout::{check_len, Channels};
use super::GenericInputs;
use kiln_core::ops::batchnorm_inference::BatchnormInferenceOp;
use kiln_core::GenericOp;
use kiln_plugin_sdk::PluginResult;

/// Evaluates a batchnorm_inference node; returns `y`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let b = BatchnormInferenceOp::from_generic(op, io.what)?;
    let (tx, x) = (io.read)(b.x)?;
    let ch = Channels::of(io.what, tx, x.len())?;
    let param = |uid: i64| -> PluginResult<&[f64]> {
        let (t, v) = (io.read)(uid)?;
        check_len(io.what, t, v, ch.channels)?;
        Ok(v)
    };
    let (mean, inv) = (param(b.mean)?, param(b.inv_variance)?);
    let (scale, bias) = (param(b.scale)?, param(b.bias)?);
    let mut y = vec![0.0; x.len()];
    for c in 0..ch.channels {
        ch.for_each(c, |i| y[i] = (x[i] - mean[c]) * inv[c] * scale[c] + bias[c]);
    }
    Ok(vec![(b.y, y)])
}
