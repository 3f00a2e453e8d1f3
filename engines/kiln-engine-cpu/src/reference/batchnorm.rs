//! Batch normalization, training forward, in f64: per channel `c` (dim 1), the mean and the
//! biased variance of its `M` values (two passes), `inv_variance = 1 / sqrt(var + epsilon)`,
//! `y = (x - mean) * inv_variance * scale + bias`; with running statistics,
//! `next = (1 - momentum) * prev + momentum * stat`, the variance's statistic unbiased
//! (`var * M / (M - 1)`).

use super::norm_layout::{check_len, Channels};
use super::GenericInputs;
use kiln_core::ops::batchnorm::BatchnormOp;
use kiln_core::GenericOp;
use kiln_plugin_sdk::PluginResult;

/// Evaluates a batchnorm node; returns `y`, `mean`, `inv_variance` and, with running
/// statistics, `next_running_mean` and `next_running_var`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let b = BatchnormOp::from_generic(op, io.what)?;
    let eps = b.epsilon.value(io.graph, io.node, "epsilon")?;
    let (tx, x) = (io.read)(b.x)?;
    let ch = Channels::of(io.what, tx, x.len())?;
    let (ts, scale) = (io.read)(b.scale)?;
    let (tb, bias) = (io.read)(b.bias)?;
    check_len(io.what, ts, scale, ch.channels)?;
    check_len(io.what, tb, bias, ch.channels)?;
    let m = ch.per_channel() as f64;
    let mut y = vec![0.0; x.len()];
    let mut means = vec![0.0; ch.channels];
    let mut vars = vec![0.0; ch.channels];
    let mut invs = vec![0.0; ch.channels];
    for c in 0..ch.channels {
        let mut sum = 0.0;
        ch.for_each(c, |i| sum += x[i]);
        let mean = sum / m;
        let mut sq = 0.0;
        ch.for_each(c, |i| sq += (x[i] - mean) * (x[i] - mean));
        let var = sq / m;
        let inv = 1.0 / (var + eps).sqrt();
        ch.for_each(c, |i| y[i] = (x[i] - mean) * inv * scale[c] + bias[c]);
        (means[c], vars[c], invs[c]) = (mean, var, inv);
    }
    let mut out = vec![(b.y, y)];
    if let Some(r) = &b.running {
        let momentum = r.momentum.value(io.graph, io.node, "momentum")?;
        let (tpm, prev_mean) = (io.read)(r.prev_mean)?;
        let (tpv, prev_var) = (io.read)(r.prev_var)?;
        check_len(io.what, tpm, prev_mean, ch.channels)?;
        check_len(io.what, tpv, prev_var, ch.channels)?;
        let bessel = if m > 1.0 { m / (m - 1.0) } else { 0.0 };
        let next_mean = (0..ch.channels)
            .map(|c| (1.0 - momentum) * prev_mean[c] + momentum * means[c])
            .collect();
        let next_var = (0..ch.channels)
            .map(|c| (1.0 - momentum) * prev_var[c] + momentum * vars[c] * bessel)
            .collect();
        out.push((r.next_mean, next_mean));
        out.push((r.next_var, next_var));
    }
    out.push((b.mean, means));
    out.push((b.inv_variance, invs));
    Ok(out)
}
