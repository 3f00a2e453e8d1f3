//! Layer normalization in f64: for each sample `n` (index of dim 0), `mean[n]` and the biased
//! variance of `x[n, ...]` (two passes: the mean, then the squared deviations from it),
//! `inv_variance[n] = 1 / sqrt(var + epsilon)`, `y = (x - mean) * inv_variance * scale + bias`.

use super::norm_layout::{check_len, Rows};
use super::GenericInputs;
use kiln_core::ops::layernorm::LayernormOp;
use kiln_core::GenericOp;
use kiln_plugin_sdk::PluginResult;

/// Evaluates a layernorm node; returns `y` and, in training, `mean` and `inv_variance`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let l = LayernormOp::from_generic(op, io.what)?;
    let eps = l.epsilon.value(io.graph, io.node, "epsilon")?;
    let (tx, x) = (io.read)(l.x)?;
    let rows = Rows::per_sample(io.what, tx, x.len())?;
    let (ts, scale) = (io.read)(l.scale)?;
    let (tb, bias) = (io.read)(l.bias)?;
    check_len(io.what, ts, scale, rows.inner)?;
    check_len(io.what, tb, bias, rows.inner)?;
    let mut y = Vec::with_capacity(x.len());
    let mut means = Vec::with_capacity(rows.count);
    let mut invs = Vec::with_capacity(rows.count);
    for sample in x.chunks(rows.inner) {
        let n = sample.len() as f64;
        let mean = sample.iter().sum::<f64>() / n;
        let var = sample.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        let inv = 1.0 / (var + eps).sqrt();
        for (i, &v) in sample.iter().enumerate() {
            y.push((v - mean) * inv * scale[i] + bias[i]);
        }
        means.push(mean);
        invs.push(inv);
    }
    let mut out = vec![(l.y, y)];
    if let (Some(m), Some(v)) = (l.mean, l.inv_variance) {
        out.push((m, means));
        out.push((v, invs));
    }
    Ok(out)
}
