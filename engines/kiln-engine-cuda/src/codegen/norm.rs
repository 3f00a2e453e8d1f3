//! `KILN_CUDA_NORM_V1`: the normalizations, one norm node per graph, a forward's `y` followed by
//! an optional pointwise chain fused into its kernel. Kernels (`src/kernels/norm_*.cu`):
//! - layernorm, rmsnorm: `norm_rows.cu`, one block per sample with the row in registers (x read
//!   once), block sums for the mean and the variance;
//! - layernorm_backward, rmsnorm_backward: `norm_rows_backward.cu` (dx, one block per sample, x
//!   and dy read once) then `norm_columns.cu` (dscale, dbias: one thread per element, summing
//!   over the samples);
//! - batchnorm: `norm_channels.cu`, one block per channel: the sums, then y;
//! - batchnorm_backward: `norm_channels.cu`: the sums (dscale, dbias), then dx;
//! - batchnorm_inference: `norm_affine.cu`, element by element.
//!
//! Every tensor may have any strides: loads and stores go through the tensor's own strides at
//! the element's coordinates. Compute is f32; statistics are sums of f32 per thread, then a
//! tree over the block.

use super::{check_types, emit_pointwise_body, fill, float_lit, offset_expr, store_stmt, symbol};
use super::{Kernel, Params};
use kiln_core::ops::batchnorm::BatchnormOp;
use kiln_core::ops::batchnorm_inference::BatchnormInferenceOp;
use kiln_core::ops::layernorm::LayernormOp;
use kiln_core::ops::norm_backward::NormBackwardOp;
use kiln_core::ops::rmsnorm::RmsnormOp;
use kiln_core::{GenericOp, Op, OpGraph, PointwiseOp, TensorDesc};
use std::collections::HashMap;
use std::fmt::Write;

const ROWS: &str = include_str!("../kernels/norm_rows.cu");
const ROWS_BACKWARD: &str = include_str!("../kernels/norm_rows_backward.cu");
const COLUMNS: &str = include_str!("../kernels/norm_columns.cu");
const CHANNELS: &str = include_str!("../kernels/norm_channels.cu");
const AFFINE: &str = include_str!("../kernels/norm_affine.cu");

/// Most values of one sample the per-sample kernels take (64 registers per thread of 1024).
pub const MAX_ROW: i64 = 64 * 1024;

/// The norm node of `graph`, its index, and the pointwise nodes after it.
fn split(graph: &OpGraph) -> Result<(usize, &GenericOp, Vec<&PointwiseOp>), String> {
    let mut norm = None;
    let mut chain = Vec::new();
    for (i, n) in graph.nodes.iter().enumerate() {
        match &n.op {
            Op::Generic(g) if norm.is_none() => norm = Some((i, g)),
            Op::Pointwise(p) if norm.is_some() => chain.push(p),
            other => {
                return Err(format!(
                    "node '{}' is {}; this engine runs one normalization node and a pointwise \
                     chain after its y",
                    n.name,
                    other.describe()
                ))
            }
        }
    }
    let (i, g) = norm.ok_or_else(|| "the graph has no normalization node".to_string())?;
    Ok((i, g, chain))
}

fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
    graph
        .tensor(uid)
        .ok_or_else(|| format!("no tensor uid {uid}"))
}

/// Checks the chain after `y` (dims of x): each operand is the chain's running value, a
/// by-value scalar or a graph input broadcast against x; each result has x's dims.
fn check_chain(
    graph: &OpGraph,
    x: &TensorDesc,
    y: i64,
    chain: &[&PointwiseOp],
) -> Result<(), String> {
    let mut live = vec![y];
    for p in chain {
        for uid in std::iter::once(p.a).chain(p.b) {
            if live.contains(&uid) {
                continue;
            }
            let t = tensor(graph, uid)?;
            if t.scalar.is_some() {
                continue;
            }
            if t.is_virtual || graph.producer(uid).is_some() {
                return Err(format!(
                    "{} is computed by another node; the operands of the chain after y must be \
                     graph inputs or by-value scalars",
                    t.label()
                ));
            }
            let fits = t.dims.len() == x.dims.len()
                && t.dims
                    .iter()
                    .zip(&x.dims)
                    .all(|(&d, &full)| d == 1 || d == full);
            if !fits {
                return Err(format!(
                    "{} has dims {:?}, which do not broadcast to x's {:?}",
                    t.label(),
                    t.dims,
                    x.dims
                ));
            }
        }
        let out = tensor(graph, p.out)?;
        if out.dims != x.dims {
            return Err(format!(
                "{} has dims {:?}; the chain after y keeps x's {:?}",
                out.label(),
                out.dims,
                x.dims
            ));
        }
        live.push(p.out);
    }
    Ok(())
}

/// `Ok` when the engine can run `graph`.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    generate_kernels(graph, false).map(|_| ())
}

/// Generates the kernels of `graph` (which `supports` accepted), in launch order.
pub fn generate(graph: &OpGraph) -> Result<Vec<Kernel>, String> {
    generate_kernels(graph, true)
}

/// Coordinate names `c0`, `c1`, ... of a tensor of rank `rank`.
fn coord_names(rank: usize) -> Vec<String> {
    (0..rank).map(|d| format!("c{d}")).collect()
}

/// Statements defining coordinates `c<axis>` from the flat index `var` over `axes` (row-major,
/// outermost first: (axis, size)), plus `fixed` ones given directly.
fn decompose(var: &str, axes: &[(usize, i64)], fixed: &[(usize, &str)], indent: &str) -> String {
    let mut out = String::new();
    for (axis, value) in fixed {
        let _ = writeln!(out, "{indent}const kiln_i64 c{axis} = {value};");
    }
    if axes.is_empty() {
        return out;
    }
    let _ = writeln!(out, "{indent}kiln_i64 rest_ = {var};");
    for (k, &(axis, size)) in axes.iter().enumerate().rev() {
        if k == 0 {
            let _ = writeln!(out, "{indent}const kiln_i64 c{axis} = rest_;");
        } else {
            let _ = writeln!(
                out,
                "{indent}const kiln_i64 c{axis} = rest_ % {size}LL; rest_ /= {size}LL;"
            );
        }
    }
    out
}

/// What every generator needs: the graph, the parameters and the load/store helpers.
struct Gen<'g> {
    graph: &'g OpGraph,
    params: Params,
}

impl Gen<'_> {
    fn new(graph: &OpGraph) -> Gen<'_> {
        let mut inputs: Vec<i64> = graph
            .bound_tensors()
            .filter(|t| graph.producer(t.uid).is_none())
            .map(|t| t.uid)
            .collect();
        let mut outputs: Vec<i64> = graph
            .bound_tensors()
            .filter(|t| graph.producer(t.uid).is_some())
            .map(|t| t.uid)
            .collect();
        inputs.sort_unstable();
        outputs.sort_unstable();
        Gen {
            graph,
            params: Params {
                list: inputs
                    .iter()
                    .map(|&u| (u, false))
                    .chain(outputs.iter().map(|&u| (u, true)))
                    .collect(),
            },
        }
    }

    /// The f32 value of tensor `uid` at `coords`.
    fn load(&self, uid: i64, coords: &[String]) -> Result<String, String> {
        let t = tensor(self.graph, uid)?;
        if let Some(v) = t.scalar {
            return Ok(float_lit(v));
        }
        let p = self
            .params
            .name(uid)
            .ok_or_else(|| format!("{} is not a kernel parameter", t.label()))?;
        Ok(format!("kiln_ld({p}[{}])", offset_expr(t, coords)))
    }

    /// Stores `value` into `uid` at `coords`; nothing for a virtual tensor.
    fn store(
        &self,
        uid: i64,
        coords: &[String],
        value: &str,
        indent: &str,
    ) -> Result<String, String> {
        let t = tensor(self.graph, uid)?;
        if t.is_virtual {
            return Ok(String::new());
        }
        store_stmt(self.graph, &self.params, t, coords, value, indent)
    }

    /// y stored (when bound) and the chain after it, at `coords`.
    fn epilogue(
        &self,
        y: i64,
        chain: &[&PointwiseOp],
        coords: &[String],
        indent: &str,
    ) -> Result<String, String> {
        let mut out = self.store(y, coords, "yv", indent)?;
        let mut values = HashMap::from([(y, "yv".to_string())]);
        out.push_str(&emit_pointwise_body(
            self.graph,
            chain,
            &self.params,
            coords,
            &mut values,
            indent,
        )?);
        Ok(out)
    }

    fn kernel(
        &self,
        prefix: &str,
        template: &str,
        mut values: Vec<(&str, String)>,
        grid: u64,
        block: u32,
    ) -> Result<Kernel, String> {
        values.push(("SYMBOL", "KILN_SYMBOL".into()));
        values.push(("PARAMS", self.params.declare(self.graph)?));
        let text = fill(template, &values)?;
        let sym = symbol(prefix, &text);
        if grid == 0 || grid > i32::MAX as u64 {
            return Err(format!("{grid} blocks is outside 1..2^31"));
        }
        Ok(Kernel {
            symbol: sym.clone(),
            source: text.replace("KILN_SYMBOL", &sym),
            args: self.params.list.iter().map(|&(u, _)| u).collect(),
            grid: [grid as u32, 1, 1],
            block: [block, 1, 1],
            shared_bytes: 0,
            maps: Vec::new(),
            persistent: false,
            arch_specific: false,
        })
    }
}

/// Threads per block and values per thread for a row of `inner` values: about 8 per thread,
/// 32 to 1024 threads.
fn row_shape(inner: i64) -> (u32, i64) {
    let block = (((inner + 7) / 8) as u64)
        .next_power_of_two()
        .clamp(32, 1024) as i64;
    (block as u32, (inner + block - 1) / block)
}

/// The per-sample geometry of `x`: rows and inner length, refused beyond the kernels' limits.
fn rows_of(x: &TensorDesc) -> Result<(i64, i64), String> {
    let rows = x.dims[0];
    let inner: i64 = x.dims[1..].iter().product();
    if inner > MAX_ROW {
        return Err(format!(
            "{} has {inner} values per sample; this engine takes up to {MAX_ROW}",
            x.label()
        ));
    }
    if rows < 1 || rows > i32::MAX as i64 || inner < 1 {
        return Err(format!("{} has dims {:?}", x.label(), x.dims));
    }
    Ok((rows, inner))
}

/// The walk of one sample's values: coordinates from `row` and `j`.
fn row_coords(x: &TensorDesc, indent: &str) -> String {
    let axes: Vec<(usize, i64)> = (1..x.dims.len()).map(|a| (a, x.dims[a])).collect();
    decompose("j", &axes, &[(0, "row")], indent)
}

/// The walk of one channel's values: coordinates from `c` and `m` over (sample, spatial).
fn channel_coords(x: &TensorDesc, indent: &str) -> String {
    let axes: Vec<(usize, i64)> = std::iter::once(0)
        .chain(2..x.dims.len())
        .map(|a| (a, x.dims[a]))
        .collect();
    decompose("m", &axes, &[(1, "c")], indent)
}

/// Coordinates of the first value of sample `row` (index 0 in every other dim).
fn at_row(rank: usize, row: &str) -> Vec<String> {
    (0..rank)
        .map(|d| if d == 0 { row.to_string() } else { "0".into() })
        .collect()
}

/// Coordinates of channel `c` (index 0 in every other dim).
fn at_channel(rank: usize) -> Vec<String> {
    (0..rank)
        .map(|d| if d == 1 { "c".to_string() } else { "0".into() })
        .collect()
}

fn generate_kernels(graph: &OpGraph, emit: bool) -> Result<Vec<Kernel>, String> {
    check_types(graph)?;
    let (anchor, op, chain) = split(graph)?;
    let node = &graph.nodes[anchor].name;
    let what = format!("node '{node}' ({})", op.op);
    let err = |e: kiln_core::Error| e.to_string();
    let single = || {
        if chain.is_empty() {
            Ok(())
        } else {
            Err(format!("{what}: a backward norm runs alone on this engine"))
        }
    };
    let g = Gen::new(graph);
    let mut kernels = Vec::new();
    match op.op.as_str() {
        "layernorm" | "rmsnorm" => {
            let (x, scale, bias, eps, y, mean, inv, rms) = if op.op == "rmsnorm" {
                let r = RmsnormOp::from_generic(op, &what).map_err(err)?;
                (r.x, r.scale, r.bias, r.epsilon, r.y, None, r.inv_rms, true)
            } else {
                let l = LayernormOp::from_generic(op, &what).map_err(err)?;
                let (mean, inv) = (l.mean, l.inv_variance);
                (l.x, l.scale, Some(l.bias), l.epsilon, l.y, mean, inv, false)
            };
            let xt = tensor(graph, x)?;
            check_chain(graph, xt, y, &chain)?;
            let (rows, inner) = rows_of(xt)?;
            if !emit {
                return Ok(kernels);
            }
            let eps = eps.value(graph, node, "epsilon").map_err(err)?;
            let coords = coord_names(xt.dims.len());
            let (block, items) = row_shape(inner);
            let mut stats = String::new();
            let here = at_row(xt.dims.len(), "row");
            for (uid, v) in [(mean, "mean"), (inv, "inv")] {
                if let Some(uid) = uid {
                    stats.push_str(&g.store(uid, &here, v, "        ")?);
                }
            }
            let bias = match bias {
                Some(b) => g.load(b, &coords)?,
                None => "0.0f".into(),
            };
            kernels.push(g.kernel(
                "norm_rows",
                ROWS,
                vec![
                    ("BLOCK", block.to_string()),
                    ("INNER", inner.to_string()),
                    ("ITEMS", items.to_string()),
                    ("RMS", rms.to_string()),
                    ("EPS", float_lit(eps)),
                    ("COORDS", row_coords(xt, "            ").trim_end().into()),
                    ("LOAD_X", g.load(x, &coords)?),
                    ("LOAD_PIVOT", g.load(x, &here)?),
                    ("LOAD_SCALE", g.load(scale, &coords)?),
                    ("LOAD_BIAS", bias),
                    (
                        "EPILOGUE",
                        g.epilogue(y, &chain, &coords, "            ")?
                            .trim_end()
                            .into(),
                    ),
                    ("STATS", stats.trim_end().into()),
                ],
                rows as u64,
                block,
            )?);
        }
        "batchnorm" | "batchnorm_inference" => {
            let (x, y) = if op.op == "batchnorm" {
                let b = BatchnormOp::from_generic(op, &what).map_err(err)?;
                (b.x, b.y)
            } else {
                let b = BatchnormInferenceOp::from_generic(op, &what).map_err(err)?;
                (b.x, b.y)
            };
            let xt = tensor(graph, x)?;
            check_chain(graph, xt, y, &chain)?;
            let total: i64 = xt.dims.iter().product();
            let channels = xt.dims[1];
            if total < 1 || channels > i32::MAX as i64 {
                return Err(format!("{} has dims {:?}", xt.label(), xt.dims));
            }
            if !emit {
                return Ok(kernels);
            }
            let rank = xt.dims.len();
            let coords = coord_names(rank);
            let here = at_channel(rank);
            let epilogue = g.epilogue(y, &chain, &coords, "        ")?;
            if op.op == "batchnorm_inference" {
                let b = BatchnormInferenceOp::from_generic(op, &what).map_err(err)?;
                let axes: Vec<(usize, i64)> = (0..rank).map(|a| (a, xt.dims[a])).collect();
                kernels.push(g.kernel(
                    "norm_affine",
                    AFFINE,
                    vec![
                        ("COUNT", total.to_string()),
                        (
                            "COORDS",
                            decompose("i", &axes, &[], "        ").trim_end().into(),
                        ),
                        ("LOAD_X", g.load(b.x, &coords)?),
                        ("LOAD_MEAN", g.load(b.mean, &coords)?),
                        ("LOAD_INV", g.load(b.inv_variance, &coords)?),
                        ("LOAD_SCALE", g.load(b.scale, &coords)?),
                        ("LOAD_BIAS", g.load(b.bias, &coords)?),
                        ("EPILOGUE", epilogue.trim_end().into()),
                    ],
                    (total as u64).div_ceil(256).clamp(1, 65536),
                    256,
                )?);
            } else {
                let b = BatchnormOp::from_generic(op, &what).map_err(err)?;
                let eps = b.epsilon.value(graph, node, "epsilon").map_err(err)?;
                let count = total / channels;
                let mut middle = format!(
                    "    const float dm = s1 / (float)count;\n    \
                     const float mean = pivot + dm;\n    \
                     const float var = fmaxf(s2 / (float)count - dm * dm, 0.0f);\n    \
                     const float inv = 1.0f / sqrtf(var + {});\n    \
                     const float sc = {};\n    const float bi = {};\n    \
                     if (threadIdx.x == 0) {{\n",
                    float_lit(eps),
                    g.load(b.scale, &here)?,
                    g.load(b.bias, &here)?
                );
                middle.push_str(&g.store(b.mean, &here, "mean", "        ")?);
                middle.push_str(&g.store(b.inv_variance, &here, "inv", "        ")?);
                if let Some(r) = &b.running {
                    let mo = r.momentum.value(graph, node, "momentum").map_err(err)?;
                    let bessel = if count > 1 {
                        count as f64 / (count - 1) as f64
                    } else {
                        0.0
                    };
                    let next_mean = format!(
                        "(1.0f - {m}) * {} + {m} * mean",
                        g.load(r.prev_mean, &here)?,
                        m = float_lit(mo)
                    );
                    let next_var = format!(
                        "(1.0f - {m}) * {} + {m} * var * {}",
                        g.load(r.prev_var, &here)?,
                        float_lit(bessel),
                        m = float_lit(mo)
                    );
                    middle.push_str(&g.store(r.next_mean, &here, &next_mean, "        ")?);
                    middle.push_str(&g.store(r.next_var, &here, &next_var, "        ")?);
                }
                middle.push_str("    }");
                let first: Vec<String> = (0..rank)
                    .map(|d| if d == 1 { "c".into() } else { "0".into() })
                    .collect();
                kernels.push(g.kernel(
                    "norm_channels",
                    CHANNELS,
                    vec![
                        ("COUNT", count.to_string()),
                        (
                            "SETUP",
                            format!("    const float pivot = {};", g.load(b.x, &first)?),
                        ),
                        ("COORDS", channel_coords(xt, "        ").trim_end().into()),
                        (
                            "PASS1",
                            format!(
                                "        const float d = {} - pivot;\n        s1 += d;\n        \
                                 s2 += d * d;",
                                g.load(b.x, &coords)?
                            ),
                        ),
                        ("MIDDLE", middle),
                        (
                            "PASS2",
                            format!(
                                "        const float yv = (({} - pivot) - dm) * inv * sc + bi;\n{}",
                                g.load(b.x, &coords)?,
                                epilogue.trim_end()
                            ),
                        ),
                    ],
                    channels as u64,
                    256,
                )?);
            }
        }
        _ => {
            single()?;
            let b = NormBackwardOp::of(op, &what)
                .ok_or_else(|| format!("{what}: not a normalization"))?
                .map_err(err)?;
            let xt = tensor(graph, b.x)?;
            let rank = xt.dims.len();
            let coords = coord_names(rank);
            if b.kind.per_channel() {
                let total: i64 = xt.dims.iter().product();
                let channels = xt.dims[1];
                if total < 1 || channels > i32::MAX as i64 {
                    return Err(format!("{} has dims {:?}", xt.label(), xt.dims));
                }
                if !emit {
                    return Ok(kernels);
                }
                let mean = b.mean.ok_or_else(|| format!("{what}: no mean"))?;
                let here = at_channel(rank);
                let count = total / channels;
                let mut middle = String::from("    if (threadIdx.x == 0) {\n");
                middle.push_str(&g.store(b.dscale, &here, "s1", "        ")?);
                if let Some(db) = b.dbias {
                    middle.push_str(&g.store(db, &here, "s2", "        ")?);
                }
                middle.push_str(
                    "    }\n    const float k = inv * sc;\n    \
                     const float mb = s2 / (float)count;\n    \
                     const float ms = s1 / (float)count;",
                );
                let dx = format!("k * ({} - mb - xh * ms)", g.load(b.dy, &coords)?);
                kernels.push(g.kernel(
                    "norm_channels_backward",
                    CHANNELS,
                    vec![
                        ("COUNT", count.to_string()),
                        (
                            "SETUP",
                            format!(
                                "    const float mean = {};\n    const float inv = {};\n    \
                                 const float sc = {};",
                                g.load(mean, &here)?,
                                g.load(b.inv, &here)?,
                                g.load(b.scale, &here)?
                            ),
                        ),
                        ("COORDS", channel_coords(xt, "        ").trim_end().into()),
                        (
                            "PASS1",
                            format!(
                                "        const float d = {};\n        \
                                 s1 += d * ({} - mean) * inv;\n        s2 += d;",
                                g.load(b.dy, &coords)?,
                                g.load(b.x, &coords)?
                            ),
                        ),
                        ("MIDDLE", middle),
                        (
                            "PASS2",
                            format!(
                                "        const float xh = ({} - mean) * inv;\n{}",
                                g.load(b.x, &coords)?,
                                g.store(b.dx, &coords, &dx, "        ")?.trim_end()
                            ),
                        ),
                    ],
                    channels as u64,
                    256,
                )?);
            } else {
                let (rows, inner) = rows_of(xt)?;
                if !emit {
                    return Ok(kernels);
                }
                let (block, items) = row_shape(inner);
                let here = at_row(rank, "row");
                let mean = match b.mean {
                    Some(m) => g.load(m, &here)?,
                    None => "0.0f".into(),
                };
                let dx = "inv * (g[k] - mg - xh[k] * mgx)";
                kernels.push(g.kernel(
                    "norm_rows_backward",
                    ROWS_BACKWARD,
                    vec![
                        ("BLOCK", block.to_string()),
                        ("INNER", inner.to_string()),
                        ("ITEMS", items.to_string()),
                        ("RMS", (b.mean.is_none()).to_string()),
                        ("LOAD_MEAN", mean.clone()),
                        ("LOAD_INV", g.load(b.inv, &here)?),
                        ("COORDS", row_coords(xt, "            ").trim_end().into()),
                        ("LOAD_X", g.load(b.x, &coords)?),
                        ("LOAD_DY", g.load(b.dy, &coords)?),
                        ("LOAD_SCALE", g.load(b.scale, &coords)?),
                        ("STORE_DX", g.store(b.dx, &coords, dx, "")?.trim().into()),
                    ],
                    rows as u64,
                    block,
                )?);
                let mut params = g.store(b.dscale, &coords, "ds", "    ")?;
                if let Some(db) = b.dbias {
                    params.push_str(&g.store(db, &coords, "db", "    ")?);
                }
                let col_coords = decompose(
                    "j",
                    &(1..rank).map(|a| (a, xt.dims[a])).collect::<Vec<_>>(),
                    &[(0, "row")],
                    "        ",
                );
                kernels.push(g.kernel(
                    "norm_columns",
                    COLUMNS,
                    vec![
                        ("INNER", inner.to_string()),
                        ("ROWS", rows.to_string()),
                        ("COORDS", col_coords.trim_end().into()),
                        ("LOAD_DY", g.load(b.dy, &coords)?),
                        ("LOAD_X", g.load(b.x, &coords)?),
                        (
                            "LOAD_MEAN",
                            match b.mean {
                                Some(m) => g.load(m, &coords)?,
                                None => "0.0f".into(),
                            },
                        ),
                        ("LOAD_INV", g.load(b.inv, &coords)?),
                        ("STORE_PARAMS", params.trim_end().into()),
                    ],
                    (inner as u64).div_ceil(256),
                    256,
                )?);
            }
        }
    }
    Ok(kernels)
}
