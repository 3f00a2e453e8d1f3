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
const ROWS_WIDE: &str = include_str!("../kernels/norm_rows_wide.cu");
const ROWS_BACKWARD_WIDE: &str = include_str!("../kernels/norm_rows_backward_wide.cu");
const ROWS_BACKWARD_RING: &str = include_str!("../kernels/norm_rows_backward_ring.cu");
const COLUMNS_REDUCE: &str = include_str!("../kernels/norm_columns_reduce.cu");
const NHWC_STATS: &str = include_str!("../kernels/norm_nhwc_stats.cu");
const NHWC_FINALIZE: &str = include_str!("../kernels/norm_nhwc_finalize.cu");
const NHWC_AFFINE: &str = include_str!("../kernels/norm_nhwc_affine.cu");
const NHWC_PERSISTENT: &str = include_str!("../kernels/norm_nhwc_persistent.cu");

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
    generate_kernels(graph, false, Path::Wide).map(|_| ())
}

/// Which kernels the engine's `wide` knob selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// 0: the scalar kernels everywhere (any strides).
    Scalar,
    /// 1: the wide kernels (16-byte accesses) where the layout allows them.
    Wide,
    /// 2: as 1, with the sm_90 kernels (older targets take 1): the per-sample backward's rows
    /// brought into a shared-memory ring by the bulk copy engine (`norm_rows_backward_ring.cu`),
    /// and the channels-last batchnorm training forward as one cooperative kernel that keeps
    /// part of x in shared memory across its grid barriers (`norm_nhwc_persistent.cu`).
    Ring,
}

impl Path {
    /// The path of knob value `wide` on `sm_<arch>`; `None` outside 0..=2.
    pub fn of_knob(wide: i64, arch: u32) -> Option<Path> {
        match wide {
            0 => Some(Path::Scalar),
            1 => Some(Path::Wide),
            2 if arch >= 90 => Some(Path::Ring),
            2 => Some(Path::Wide),
            _ => None,
        }
    }
}

/// Generates the kernels of `graph` (which `supports` accepted), in launch order, with the
/// default knobs.
pub fn generate(graph: &OpGraph) -> Result<Vec<Kernel>, String> {
    generate_with(graph, Path::Wide)
}

/// Generates the kernels of `graph` on `path` (the wide ones only where the layout allows).
pub fn generate_with(graph: &OpGraph, path: Path) -> Result<Vec<Kernel>, String> {
    generate_kernels(graph, true, path).map(|(k, _)| k)
}

/// The workspace bytes the kernels of `graph` take on `path` (0 for the scalar kernels).
pub fn workspace_bytes(graph: &OpGraph, path: Path) -> Result<u64, String> {
    generate_kernels(graph, true, path).map(|(_, w)| w)
}

/// True when `t` is laid out with strides `packed` (dims of size 1 may have any stride).
fn packed_as(t: &TensorDesc, packed: &[i64]) -> bool {
    t.scalar.is_none()
        && !t.is_virtual
        && t.dims.len() == packed.len()
        && t.dims
            .iter()
            .zip(&t.strides)
            .zip(packed)
            .all(|((&d, &s), &p)| d == 1 || s == p)
}

/// True when every tensor of `uids` is packed row-major.
fn row_major(graph: &OpGraph, uids: &[i64]) -> bool {
    uids.iter().all(|&u| {
        graph
            .tensor(u)
            .is_some_and(|t| packed_as(t, &kiln_core::tensor::packed_strides(&t.dims)))
    })
}

/// True when every tensor of `uids` is packed channels-last.
fn channels_last(graph: &OpGraph, uids: &[i64]) -> bool {
    uids.iter().all(|&u| {
        graph
            .tensor(u)
            .is_some_and(|t| packed_as(t, &kiln_core::tensor::channels_last_strides(&t.dims)))
    })
}

/// The kernel parameter name of tensor `uid`.
fn name(g: &Gen<'_>, uid: i64) -> Result<String, String> {
    g.params
        .name(uid)
        .ok_or_else(|| format!("tensor uid {uid} is not a kernel parameter"))
}

/// The run-time test that every pointer of `uids` is 16-byte aligned.
fn aligned_expr(g: &Gen<'_>, uids: &[i64]) -> Result<String, String> {
    let names = uids
        .iter()
        .map(|&u| name(g, u).map(|p| format!("(unsigned long long){p}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(format!("(({}) % 16ULL) == 0", names.join(" | ")))
}

/// Threads per row group and 8-value vectors per thread of the wide per-sample kernels: a warp
/// when that holds the row in `max_vpt` vectors per thread, else a block of up to 1024 threads.
fn wide_row_shape(inner: i64, max_vpt: i64) -> (u32, i64) {
    let nvec = inner / 8;
    let group = (((nvec + max_vpt - 1) / max_vpt) as u64)
        .next_power_of_two()
        .clamp(32, 1024) as i64;
    (group as u32, (nvec + group - 1) / group)
}

/// Shared-memory bytes the ring backward's stages take at most (2 to 4 stages of a row's x and
/// dy): two blocks of a multiprocessor fit in an H200's 228 KiB.
const RING_BYTES: u64 = 96 * 1024;

/// Most shared-memory bytes of the ring backward's two stages (longer rows take the register
/// path): under the 227 KiB a Hopper block may opt into.
const RING_BYTES_MAX: u64 = 200 * 1024;

/// Rows per block of the wide per-sample kernels when a warp takes a row.
const WARP_ROWS: u32 = 4;

/// Channel groups (8 channels each) and lanes of the channels-last kernels' blocks of about
/// `threads` threads.
fn nhwc_shape(channels: i64, threads: i64) -> (i64, i64) {
    let cg = channels / 8;
    (cg, (threads / cg).max(1))
}

/// Most 8-channel groups the channels-last kernels take (a block of at most 512 threads).
const MAX_NHWC_GROUPS: i64 = 512;

/// Blocks of the channels-last statistics kernel at most (three per multiprocessor of an H200:
/// one wave).
const NHWC_STAT_BLOCKS: i64 = 396;

/// Shared-memory bytes of x each block of the cooperative batchnorm kernel keeps (one block a
/// multiprocessor: with its 16 KiB of sums, under the 227 KiB a Hopper block may opt into).
const PERSISTENT_KEEP_BYTES: i64 = 200 * 1024;

/// Blocks of the cooperative batchnorm kernel at most (the grid is capped at load at the blocks
/// the device holds at once; its workspace holds this many partial rows).
const PERSISTENT_MAX_BLOCKS: i64 = 1024;

/// Positions whose loads a thread of the channels-last statistics kernel issues together.
const NHWC_STAT_UNROLL: i64 = 6;

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

    /// The stores of batchnorm's next running statistics at `coords`, from the kernel's
    /// `mean` and (biased) `var` over `count` values: `(1 - momentum) * prev + momentum * stat`,
    /// the variance with Bessel's correction.
    fn running_stats(
        &self,
        r: &kiln_core::ops::batchnorm::RunningStats,
        momentum: f64,
        count: i64,
        coords: &[String],
        indent: &str,
    ) -> Result<String, String> {
        let bessel = if count > 1 {
            count as f64 / (count - 1) as f64
        } else {
            0.0
        };
        let m = float_lit(momentum);
        let next_mean = format!(
            "(1.0f - {m}) * {} + {m} * mean",
            self.load(r.prev_mean, coords)?
        );
        let next_var = format!(
            "(1.0f - {m}) * {} + {m} * var * {}",
            self.load(r.prev_var, coords)?,
            float_lit(bessel)
        );
        let mut out = self.store(r.next_mean, coords, &next_mean, indent)?;
        out.push_str(&self.store(r.next_var, coords, &next_var, indent)?);
        Ok(out)
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
        values: Vec<(&str, String)>,
        grid: u64,
        block: u32,
    ) -> Result<Kernel, String> {
        self.kernel_ws(prefix, template, values, grid, block, false)
    }

    /// A kernel; with `ws`, its last parameter is the plan's workspace.
    fn kernel_ws(
        &self,
        prefix: &str,
        template: &str,
        mut values: Vec<(&str, String)>,
        grid: u64,
        block: u32,
        ws: bool,
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
            args: self
                .params
                .list
                .iter()
                .map(|&(u, _)| u)
                .chain(ws.then_some(super::WORKSPACE_ARG))
                .collect(),
            grid: [grid as u32, 1, 1],
            block: [block, 1, 1],
            shared_bytes: 0,
            maps: Vec::new(),
            persistent: false,
            cooperative: false,
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

fn generate_kernels(graph: &OpGraph, emit: bool, path: Path) -> Result<(Vec<Kernel>, u64), String> {
    let wide = path != Path::Scalar;
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
    let mut workspace = 0u64;
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
                return Ok((kernels, 0));
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
            let wide_uids: Vec<i64> = [x, y, scale].into_iter().chain(bias).collect();
            if wide && chain.is_empty() && inner % 8 == 0 && row_major(graph, &wide_uids) {
                let (group, vpt) = wide_row_shape(inner, 4);
                let (block, grid) = if group == 32 {
                    (32 * WARP_ROWS, (rows as u64).div_ceil(u64::from(WARP_ROWS)))
                } else {
                    (group, rows as u64)
                };
                let load_bias = match bias {
                    Some(b) => format!("            kiln_ld8({} + c * 8, wide, bi);", name(&g, b)?),
                    None => {
                        "#pragma unroll\n            for (int e = 0; e < 8; ++e) { bi[e] = 0.0f; }"
                            .to_string()
                    }
                };
                kernels.push(g.kernel(
                    "norm_rows_wide",
                    ROWS_WIDE,
                    vec![
                        ("BLOCK", block.to_string()),
                        ("GROUP", group.to_string()),
                        ("VPT", vpt.to_string()),
                        ("INNER", inner.to_string()),
                        ("ROWS", rows.to_string()),
                        ("RMS", rms.to_string()),
                        ("EPS", float_lit(eps)),
                        ("ALIGNED", aligned_expr(&g, &wide_uids)?),
                        ("X", name(&g, x)?),
                        ("Y", name(&g, y)?),
                        ("SCALE", name(&g, scale)?),
                        ("LOAD_BIAS", load_bias),
                        ("STATS", stats.trim_end().into()),
                    ],
                    grid,
                    block,
                )?);
                return Ok((kernels, 0));
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
                return Ok((kernels, 0));
            }
            let rank = xt.dims.len();
            let coords = coord_names(rank);
            let here = at_channel(rank);
            let epilogue = g.epilogue(y, &chain, &coords, "        ")?;
            let positions = total / channels;
            if wide
                && chain.is_empty()
                && channels % 8 == 0
                && (1..=MAX_NHWC_GROUPS).contains(&(channels / 8))
                && channels_last(graph, &[x, y])
            {
                let (cg, lanes) = nhwc_shape(channels, 256);
                let affine = |g: &Gen<'_>, factors: String, reverse: bool, ws: bool| {
                    // 4 vectors of 8 channels per thread, one block per 4 * block vectors.
                    let grid = ((positions * cg) as u64).div_ceil((4 * cg * lanes) as u64);
                    g.kernel_ws(
                        "norm_nhwc_affine",
                        NHWC_AFFINE,
                        vec![
                            ("BLOCK", (cg * lanes).to_string()),
                            ("GROUPS_C", cg.to_string()),
                            ("C", channels.to_string()),
                            ("POSITIONS", positions.to_string()),
                            ("ALIGNED", aligned_expr(g, &[x, y])?),
                            ("X", name(g, x)?),
                            ("Y", name(g, y)?),
                            ("FACTORS", factors),
                            ("REVERSE", reverse.to_string()),
                            (
                                "WS_PARAM",
                                if ws {
                                    ", float* __restrict__ kiln_ws"
                                } else {
                                    ""
                                }
                                .into(),
                            ),
                        ],
                        grid,
                        (cg * lanes) as u32,
                        ws,
                    )
                };
                if op.op == "batchnorm_inference" {
                    let b = BatchnormInferenceOp::from_generic(op, &what).map_err(err)?;
                    let factors = format!(
                        "        const float inv = {};\n        const float sc = {};\n        \
                         sfa[c] = inv * sc;\n        sfb[c] = {};\n        sfm[c] = {};",
                        g.load(b.inv_variance, &here)?,
                        g.load(b.scale, &here)?,
                        g.load(b.bias, &here)?,
                        g.load(b.mean, &here)?
                    );
                    kernels.push(affine(&g, factors, false, false)?);
                    return Ok((kernels, 0));
                }
                let b = BatchnormOp::from_generic(op, &what).map_err(err)?;
                let eps = b.epsilon.value(graph, node, "epsilon").map_err(err)?;
                let mut stats = g.store(b.mean, &here, "mean", "    ")?;
                stats.push_str(&g.store(b.inv_variance, &here, "inv", "    ")?);
                if let Some(r) = &b.running {
                    let mo = r.momentum.value(graph, node, "momentum").map_err(err)?;
                    stats.push_str(&g.running_stats(r, mo, positions, &here, "    ")?);
                }
                let first: Vec<String> = (0..rank)
                    .map(|d| if d == 1 { "c".into() } else { "0".into() })
                    .collect();
                if path == Path::Ring {
                    // One cooperative kernel, a block of about 512 threads a multiprocessor,
                    // each keeping up to PERSISTENT_KEEP_BYTES of its positions in shared
                    // memory.
                    let (pcg, planes) = nhwc_shape(channels, 512);
                    let elem = xt.data_type.size() as i64;
                    let keep = (PERSISTENT_KEEP_BYTES / (channels * elem)).min(positions);
                    let nb = positions.clamp(1, PERSISTENT_MAX_BLOCKS);
                    let mut k = g.kernel_ws(
                        "norm_nhwc_persistent",
                        NHWC_PERSISTENT,
                        vec![
                            ("BLOCK", (pcg * planes).to_string()),
                            ("GROUPS_C", pcg.to_string()),
                            ("C", channels.to_string()),
                            ("POSITIONS", positions.to_string()),
                            ("KEEP", keep.to_string()),
                            ("NB", nb.to_string()),
                            ("ALIGNED", aligned_expr(&g, &[x, y])?),
                            ("X", name(&g, x)?),
                            ("Y", name(&g, y)?),
                            ("TX", super::c_type(xt.data_type).unwrap_or("float").into()),
                            ("COUNT", positions.to_string()),
                            ("LOAD_PIVOT", g.load(b.x, &first)?),
                            ("EPS", float_lit(eps)),
                            ("LOAD_SCALE", g.load(b.scale, &here)?),
                            ("LOAD_BIAS", g.load(b.bias, &here)?),
                            ("STATS", stats.trim_end().replace('\n', "\n            ")),
                        ],
                        nb as u64,
                        (pcg * planes) as u32,
                        true,
                    )?;
                    k.shared_bytes = (keep * channels * elem) as u32;
                    k.cooperative = true;
                    kernels.push(k);
                    workspace = ((2 * nb * channels + 3 * channels) * 4) as u64;
                    return Ok((kernels, workspace));
                }
                // Blocks of about 256 threads, 768 resident a multiprocessor (at most 80
                // registers each), each thread with 6 positions' loads in flight.
                let (scg, slanes) = nhwc_shape(channels, 256);
                let min_blocks = (768 / (scg * slanes)).max(1);
                let nb = ((positions + slanes * NHWC_STAT_UNROLL - 1)
                    / (slanes * NHWC_STAT_UNROLL))
                    .clamp(1, NHWC_STAT_BLOCKS);
                kernels.push(g.kernel_ws(
                    "norm_nhwc_stats",
                    NHWC_STATS,
                    vec![
                        ("BLOCK", (scg * slanes).to_string()),
                        ("GROUPS_C", scg.to_string()),
                        ("C", channels.to_string()),
                        ("POSITIONS", positions.to_string()),
                        ("ALIGNED", aligned_expr(&g, &[x])?),
                        ("X", name(&g, x)?),
                        ("NB", nb.to_string()),
                        ("MIN_BLOCKS", min_blocks.to_string()),
                        ("UNROLL", NHWC_STAT_UNROLL.to_string()),
                        ("TX", super::c_type(xt.data_type).unwrap_or("float").into()),
                    ],
                    nb as u64,
                    (scg * slanes) as u32,
                    true,
                )?);
                kernels.push(g.kernel_ws(
                    "norm_nhwc_finalize",
                    NHWC_FINALIZE,
                    vec![
                        ("C", channels.to_string()),
                        ("NB", nb.to_string()),
                        ("COUNT", positions.to_string()),
                        ("LOAD_PIVOT", g.load(b.x, &first)?),
                        ("EPS", float_lit(eps)),
                        ("LOAD_SCALE", g.load(b.scale, &here)?),
                        ("LOAD_BIAS", g.load(b.bias, &here)?),
                        ("STATS", stats.trim_end().into()),
                    ],
                    (channels as u64).div_ceil(8),
                    1024,
                    true,
                )?);
                let factors = format!(
                    "        sfa[c] = kiln_ws[{o}LL + c];\n        sfm[c] = kiln_ws[{o}LL + {channels}LL + c];\n        \
                     sfb[c] = kiln_ws[{o}LL + {}LL + c];",
                    2 * channels,
                    o = 2 * nb * channels
                );
                kernels.push(affine(&g, factors, true, true)?);
                workspace = ((2 * nb * channels + 3 * channels) * 4) as u64;
                return Ok((kernels, workspace));
            }
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
                    middle.push_str(&g.running_stats(r, mo, count, &here, "        ")?);
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
                    return Ok((kernels, 0));
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
                    return Ok((kernels, 0));
                }
                let (block, items) = row_shape(inner);
                let here = at_row(rank, "row");
                let mean = match b.mean {
                    Some(m) => g.load(m, &here)?,
                    None => "0.0f".into(),
                };
                let mut wide_params = g.store(b.dscale, &coords, "ds", "        ")?;
                if let Some(db) = b.dbias {
                    wide_params.push_str(&g.store(db, &coords, "db", "        ")?);
                }
                let wide_coords = decompose(
                    "j",
                    &(1..rank).map(|a| (a, xt.dims[a])).collect::<Vec<_>>(),
                    &[(0, "row")],
                    "        ",
                );
                let (group, vpt) = wide_row_shape(inner, 2);
                let wide_uids = [b.x, b.dy, b.dx, b.scale];
                if wide && inner % 8 == 0 && vpt <= 4 && row_major(graph, &wide_uids) {
                    let groups = (65536 / i64::from(group))
                        .min((rows / 8).max(1))
                        .clamp(1, rows);
                    let (block, grid) = if group == 32 {
                        (
                            32 * WARP_ROWS,
                            (groups as u64).div_ceil(u64::from(WARP_ROWS)),
                        )
                    } else {
                        (group, groups as u64)
                    };
                    let mut values = vec![
                        ("VPT", vpt.to_string()),
                        ("INNER", inner.to_string()),
                        ("ROWS", rows.to_string()),
                        ("GROUPS", groups.to_string()),
                        ("RMS", (b.mean.is_none()).to_string()),
                        ("ALIGNED", aligned_expr(&g, &wide_uids)?),
                        ("LOAD_MEAN", mean.clone()),
                        ("LOAD_INV", g.load(b.inv, &here)?),
                        ("X", name(&g, b.x)?),
                        ("DY", name(&g, b.dy)?),
                        ("DX", name(&g, b.dx)?),
                        ("SCALE", name(&g, b.scale)?),
                    ];
                    let stage = inner as u64
                        * (tensor(graph, b.x)?.data_type.size()
                            + tensor(graph, b.dy)?.data_type.size())
                            as u64;
                    if path == Path::Ring && 2 * stage <= RING_BYTES_MAX {
                        // A block per group (a warp-sized group is a block of one warp).
                        let c_type = |uid| -> Result<&'static str, String> {
                            let t = tensor(graph, uid)?;
                            super::c_type(t.data_type)
                                .ok_or_else(|| format!("{}: not a CUDA engine type", t.label()))
                        };
                        let (tx, tdy) = (c_type(b.x)?, c_type(b.dy)?);
                        let stages = (RING_BYTES / stage).clamp(2, 4);
                        values.extend([
                            ("BLOCK", group.to_string()),
                            ("STAGES", stages.to_string()),
                            ("TX", tx.to_string()),
                            ("TDY", tdy.to_string()),
                        ]);
                        let mut k = g.kernel_ws(
                            "norm_rows_backward_ring",
                            ROWS_BACKWARD_RING,
                            values,
                            groups as u64,
                            group,
                            true,
                        )?;
                        k.shared_bytes = u32::try_from(stages * stage)
                            .map_err(|_| format!("{what}: a row of {inner} is too long"))?;
                        kernels.push(k);
                    } else {
                        values.extend([("BLOCK", block.to_string()), ("GROUP", group.to_string())]);
                        kernels.push(g.kernel_ws(
                            "norm_rows_backward_wide",
                            ROWS_BACKWARD_WIDE,
                            values,
                            grid,
                            block,
                            true,
                        )?);
                    }
                    kernels.push(g.kernel_ws(
                        "norm_columns_reduce",
                        COLUMNS_REDUCE,
                        vec![
                            ("INNER", inner.to_string()),
                            ("GROUPS", groups.to_string()),
                            ("COORDS", wide_coords.trim_end().into()),
                            ("STORE_PARAMS", wide_params.trim_end().into()),
                        ],
                        (inner as u64).div_ceil(32),
                        1024,
                        true,
                    )?);
                    workspace = (2 * groups * inner * 4) as u64;
                    return Ok((kernels, workspace));
                }
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
    Ok((kernels, workspace))
}
