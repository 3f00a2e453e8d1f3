//! Scaled dot-product attention in f64, forward and backward, one query row at a time with the
//! textbook two-pass softmax (max, then sum of exponentials). See `kiln_core::ops::sdpa` for
//! the semantics; the masks come from [`SdpaMask::allowed_keys`], shared with every engine.

use super::GenericInputs;
use kiln_core::ops::sdpa::{SdpaBackwardOp, SdpaInputs, SdpaOp, SdpaShape};
use kiln_core::GenericOp;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// The operands of one node as packed row-major f64 buffers, with what indexes them.
struct Operands<'a> {
    shape: SdpaShape,
    q: &'a [f64],
    k: &'a [f64],
    v: &'a [f64],
    scale: f64,
    /// The bias values and its dims (broadcast dims are 1).
    bias: Option<(&'a [f64], [usize; 4])>,
    len_q: Vec<usize>,
    len_kv: Vec<usize>,
}

/// A per-batch length from a `seq_len` tensor: rounded down, clamped to `0..=max`, NaN as 0 (a
/// length is user data read at execute, so it is bounded rather than trusted).
pub(crate) fn clamp_len(v: f64, max: usize) -> usize {
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= max as f64 {
        max
    } else {
        v.floor() as usize
    }
}

impl<'a> Operands<'a> {
    fn read(inputs: &SdpaInputs, io: &GenericInputs<'a>) -> PluginResult<Operands<'a>> {
        let shape = inputs.shape(io.graph, io.node, io.what)?;
        let (_, q) = (io.read)(inputs.q)?;
        let (_, k) = (io.read)(inputs.k)?;
        let (_, v) = (io.read)(inputs.v)?;
        let scale = match inputs.static_scale(io.graph, io.node)? {
            Some(s) => s,
            None => {
                let kiln_core::ops::sdpa::AttnScale::Tensor(uid) = inputs.attn_scale else {
                    return Err(PluginError::internal("attn_scale has no value"));
                };
                let (t, s) = (io.read)(uid)?;
                *s.first().ok_or_else(|| {
                    PluginError::bad_param(format!(
                        "{}: attn_scale {} is empty",
                        io.what,
                        t.label()
                    ))
                })?
            }
        };
        let bias = match inputs.bias {
            Some(uid) => {
                let (t, b) = (io.read)(uid)?;
                let d = t.dims.iter().map(|&d| d as usize).collect::<Vec<_>>();
                let dims = [d[0], d[1], d[2], d[3]];
                if b.len() != dims.iter().product::<usize>() {
                    return Err(PluginError::bad_param(format!(
                        "{}: bias {} holds {} values for dims {dims:?}",
                        io.what,
                        t.label(),
                        b.len()
                    )));
                }
                Some((b, dims))
            }
            None => None,
        };
        let lengths = |uid: Option<i64>, max: usize| -> PluginResult<Vec<usize>> {
            match uid {
                None => Ok(vec![max; shape.batch]),
                Some(uid) => {
                    let (_, l) = (io.read)(uid)?;
                    Ok(l.iter().map(|&v| clamp_len(v, max)).collect())
                }
            }
        };
        let len_q = lengths(inputs.seq_len_q, shape.seq_q)?;
        let len_kv = lengths(inputs.seq_len_kv, shape.seq_kv)?;
        let s = &shape;
        let want = [
            ("q", q.len(), s.batch * s.heads_q * s.seq_q * s.dim_qk),
            ("k", k.len(), s.batch * s.heads_kv * s.seq_kv * s.dim_qk),
            ("v", v.len(), s.batch * s.heads_kv * s.seq_kv * s.dim_v),
            ("seq_len_q", len_q.len(), s.batch),
            ("seq_len_kv", len_kv.len(), s.batch),
        ];
        if let Some((name, got, want)) = want.into_iter().find(|(_, g, w)| g != w) {
            return Err(PluginError::bad_param(format!(
                "{}: {name} holds {got} values, not {want}",
                io.what
            )));
        }
        Ok(Operands {
            shape,
            q,
            k,
            v,
            scale,
            bias,
            len_q,
            len_kv,
        })
    }

    fn q_row(&self, b: usize, h: usize, i: usize) -> &[f64] {
        let s = &self.shape;
        let at = ((b * s.heads_q + h) * s.seq_q + i) * s.dim_qk;
        &self.q[at..at + s.dim_qk]
    }

    fn kv_index(&self, b: usize, h: usize, j: usize) -> usize {
        let s = &self.shape;
        (b * s.heads_kv + h / s.group()) * s.seq_kv + j
    }

    fn k_row(&self, b: usize, h: usize, j: usize) -> &[f64] {
        let at = self.kv_index(b, h, j) * self.shape.dim_qk;
        &self.k[at..at + self.shape.dim_qk]
    }

    fn v_row(&self, b: usize, h: usize, j: usize) -> &[f64] {
        let at = self.kv_index(b, h, j) * self.shape.dim_v;
        &self.v[at..at + self.shape.dim_v]
    }

    /// The scaled, biased score of query `i` and key `j`.
    fn score(&self, b: usize, h: usize, i: usize, j: usize) -> f64 {
        let dot: f64 = self
            .q_row(b, h, i)
            .iter()
            .zip(self.k_row(b, h, j))
            .map(|(x, y)| x * y)
            .sum();
        let bias = self.bias.map_or(0.0, |(values, d)| {
            let at = |x: usize, n: usize| if n == 1 { 0 } else { x };
            values[((at(b, d[0]) * d[1] + at(h, d[1])) * d[2] + at(i, d[2])) * d[3] + j]
        });
        self.scale * dot + bias
    }

    fn keys(
        &self,
        b: usize,
        i: usize,
        mask: &kiln_core::ops::sdpa::SdpaMask,
    ) -> std::ops::Range<usize> {
        mask.allowed_keys(i, self.len_q[b], self.len_kv[b])
    }
}

/// Evaluates an `sdpa` node; returns `o` and, with `generate_stats`, `stats`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let node = SdpaOp::from_generic(op, io.what)?;
    let x = Operands::read(&node.inputs, io)?;
    let s = x.shape;
    let mut o = vec![0.0; s.batch * s.heads_q * s.seq_q * s.dim_v];
    let mut stats = vec![f64::NEG_INFINITY; s.batch * s.heads_q * s.seq_q];
    for b in 0..s.batch {
        for h in 0..s.heads_q {
            for i in 0..s.seq_q {
                let keys = x.keys(b, i, &node.inputs.mask);
                let scores: Vec<f64> = keys.clone().map(|j| x.score(b, h, i, j)).collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let row = (b * s.heads_q + h) * s.seq_q + i;
                if max == f64::NEG_INFINITY {
                    continue;
                }
                let weights: Vec<f64> = scores.iter().map(|&v| (v - max).exp()).collect();
                let sum: f64 = weights.iter().sum();
                stats[row] = max + sum.ln();
                let out = &mut o[row * s.dim_v..(row + 1) * s.dim_v];
                for (w, j) in weights.iter().zip(keys) {
                    for (acc, vv) in out.iter_mut().zip(x.v_row(b, h, j)) {
                        *acc += w / sum * vv;
                    }
                }
            }
        }
    }
    let mut out = vec![(node.o, o)];
    if let Some(uid) = node.stats {
        out.push((uid, stats));
    }
    Ok(out)
}

/// Evaluates an `sdpa_backward` node; returns `dq`, `dk` and `dv`.
pub(super) fn run_backward(
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let node = SdpaBackwardOp::from_generic(op, io.what)?;
    let x = Operands::read(&node.inputs, io)?;
    let s = x.shape;
    let (_, o) = (io.read)(node.o)?;
    let (_, d_o) = (io.read)(node.d_o)?;
    let (_, stats) = (io.read)(node.stats)?;
    let rows = s.batch * s.heads_q * s.seq_q;
    if o.len() != rows * s.dim_v || d_o.len() != o.len() || stats.len() != rows {
        return Err(PluginError::bad_param(format!(
            "{}: o, do and stats hold {}, {} and {} values for {rows} rows of {}",
            io.what,
            o.len(),
            d_o.len(),
            stats.len(),
            s.dim_v
        )));
    }
    let mut dq = vec![0.0; x.q.len()];
    let mut dk = vec![0.0; x.k.len()];
    let mut dv = vec![0.0; x.v.len()];
    for b in 0..s.batch {
        for h in 0..s.heads_q {
            for i in 0..s.seq_q {
                let row = (b * s.heads_q + h) * s.seq_q + i;
                let lse = stats[row];
                if lse == f64::NEG_INFINITY {
                    continue;
                }
                let (o_row, do_row) = (
                    &o[row * s.dim_v..(row + 1) * s.dim_v],
                    &d_o[row * s.dim_v..(row + 1) * s.dim_v],
                );
                let delta: f64 = o_row.iter().zip(do_row).map(|(a, b)| a * b).sum();
                for j in x.keys(b, i, &node.inputs.mask) {
                    let p = (x.score(b, h, i, j) - lse).exp();
                    let dp: f64 = do_row
                        .iter()
                        .zip(x.v_row(b, h, j))
                        .map(|(a, b)| a * b)
                        .sum();
                    let ds = p * (dp - delta) * x.scale;
                    let kv = x.kv_index(b, h, j);
                    for d in 0..s.dim_qk {
                        dq[row * s.dim_qk + d] += ds * x.k[kv * s.dim_qk + d];
                        dk[kv * s.dim_qk + d] += ds * x.q[row * s.dim_qk + d];
                    }
                    for d in 0..s.dim_v {
                        dv[kv * s.dim_v + d] += p * do_row[d];
                    }
                }
            }
        }
    }
    Ok(vec![(node.dq, dq), (node.dk, dk), (node.dv, dv)])
}
