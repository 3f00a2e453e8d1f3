//! The normalization backward operations in f64 (batchnorm_backward, layernorm_backward,
//! rmsnorm_backward): for each group of values sharing one statistic (a channel, or a sample),
//! `x̂ = (x - mean) * inv` (rmsnorm: `x * inv_rms`), `g = dy * scale`,
//! `dx = inv * (g - mean(g) - x̂ * mean(g * x̂))` (rmsnorm: no `mean(g)` term), and
//! `dscale = Σ dy * x̂`, `dbias = Σ dy` over the other axis.

use super::norm_layout::{check_len, Channels, Rows};
use super::GenericInputs;
use kiln_core::ops::norm_backward::{NormBackwardKind, NormBackwardOp};
use kiln_core::GenericOp;
use kiln_plugin_sdk::PluginResult;

pub(super) fn batchnorm(
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    run(NormBackwardKind::Batchnorm, op, io)
}

pub(super) fn layernorm(
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    run(NormBackwardKind::Layernorm, op, io)
}

pub(super) fn rmsnorm(
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    run(NormBackwardKind::Rmsnorm, op, io)
}

/// Evaluates a backward node of `kind`; returns `dx`, `dscale` and, when bound, `dbias`.
fn run(
    kind: NormBackwardKind,
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let b = NormBackwardOp::from_generic(kind, op, io.what)?;
    let (tx, x) = (io.read)(b.x)?;
    let (tdy, dy) = (io.read)(b.dy)?;
    check_len(io.what, tdy, dy, x.len())?;
    let (ts, scale) = (io.read)(b.scale)?;
    let (ti, inv) = (io.read)(b.inv)?;
    let mean = b.mean.map(|m| (io.read)(m)).transpose()?;
    // Each group: the flat indices of its values, and the parameter index of each.
    let groups: Vec<Vec<(usize, usize)>> = if kind.per_channel() {
        let ch = Channels::of(io.what, tx, x.len())?;
        (0..ch.channels)
            .map(|c| {
                let mut g = Vec::with_capacity(ch.per_channel());
                ch.for_each(c, |i| g.push((i, c)));
                g
            })
            .collect()
    } else {
        let rows = Rows::per_sample(io.what, tx, x.len())?;
        (0..rows.count)
            .map(|r| (0..rows.inner).map(|i| (r * rows.inner + i, i)).collect())
            .collect()
    };
    let params = if kind.per_channel() {
        groups.len()
    } else {
        x.len() / groups.len()
    };
    check_len(io.what, ts, scale, params)?;
    check_len(io.what, ti, inv, groups.len())?;
    if let Some((tm, m)) = mean {
        check_len(io.what, tm, m, groups.len())?;
    }
    let mut dx = vec![0.0; x.len()];
    let mut dscale = vec![0.0; params];
    let mut dbias = vec![0.0; params];
    for (k, group) in groups.iter().enumerate() {
        let mu = mean.map_or(0.0, |(_, m)| m[k]);
        let xhat = |i: usize| (x[i] - mu) * inv[k];
        let n = group.len() as f64;
        let (mut mean_g, mut mean_gx) = (0.0, 0.0);
        for &(i, p) in group {
            let g = dy[i] * scale[p];
            mean_g += g;
            mean_gx += g * xhat(i);
            dscale[p] += dy[i] * xhat(i);
            dbias[p] += dy[i];
        }
        mean_g /= n;
        mean_gx /= n;
        if kind == NormBackwardKind::Rmsnorm {
            mean_g = 0.0;
        }
        for &(i, p) in group {
            dx[i] = inv[k] * (dy[i] * scale[p] - mean_g - xhat(i) * mean_gx);
        }
    }
    let mut out = vec![(b.dx, dx), (b.dscale, dscale)];
    if let Some(uid) = b.dbias {
        out.push((uid, dbias));
    }
    Ok(out)
}
