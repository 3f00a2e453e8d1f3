//! RMS normalization in f64: for each sample `n` (index of the first dim),
//! `inv_rms[n] = 1 / sqrt(mean(x[n, ...]^2) + epsilon)` and
//! `y[n, i] = x[n, i] * inv_rms[n] * scale[i] (+ bias[i])`.
//!
//! The mean of squares accumulates in f64 in row-major order.

use super::GenericInputs;
use kiln_core::ops::rmsnorm::RmsnormOp;
use kiln_core::GenericOp;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// Evaluates an rmsnorm node; returns `y` and, in training, `inv_rms`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let r = RmsnormOp::from_generic(op, io.what)?;
    let eps = r.epsilon_value(io.graph, io.node)?;
    let (tx, x) = (io.read)(r.x)?;
    let (_, scale) = (io.read)(r.scale)?;
    let bias = r.bias.map(|b| (io.read)(b)).transpose()?;
    let batch = usize::try_from(tx.dims.first().copied().unwrap_or(0)).unwrap_or(0);
    let inner = scale.len();
    if batch == 0 || inner == 0 || x.len() != batch * inner {
        return Err(PluginError::bad_param(format!(
            "{}: x {} holds {} values, which is not {batch} samples of scale's {inner}",
            io.what,
            tx.label(),
            x.len()
        )));
    }
    if let Some((tb, b)) = bias {
        if b.len() != inner {
            return Err(PluginError::bad_param(format!(
                "{}: bias {} holds {} values, scale {inner}",
                io.what,
                tb.label(),
                b.len()
            )));
        }
    }
    let mut y = Vec::with_capacity(x.len());
    let mut inv_rms = Vec::with_capacity(batch);
    for sample in x.chunks(inner) {
        let mean_square = sample.iter().map(|v| v * v).sum::<f64>() / inner as f64;
        let inv = 1.0 / (mean_square + eps).sqrt();
        inv_rms.push(inv);
        for (i, &v) in sample.iter().enumerate() {
            let shift = bias.map_or(0.0, |(_, b)| b[i]);
            y.push(v * inv * scale[i] + shift);
        }
    }
    let mut out = vec![(r.y, y)];
    if let Some(uid) = r.inv_rms {
        out.push((uid, inv_rms));
    }
    Ok(out)
}
