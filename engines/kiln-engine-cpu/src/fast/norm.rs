//! `KILN_CPU_NORM_V1`: the normalizations (layernorm, rmsnorm, batchnorm, batchnorm_inference
//! and the three backwards), one node per graph, with a fused pointwise chain after a forward's
//! `y` (cuDNN's norm + pointwise fusion: batchnorm_inference + relu, layernorm + gelu, ...).
//!
//! Inputs of any layout and of f32, f16 or bf16 are read into f32 buffers, computed in f32 and
//! stored once, rounded to their type; statistics and parameter gradients accumulate in f64.
//! - **Per sample** (layernorm, rmsnorm): the engine's thread pool over rows (samples); a row is
//!   read once into a buffer that stays in cache, its mean and variance are two passes over
//!   that buffer, and `y` goes through the epilogue chain straight from it into the output.
//! - **Per channel** (batchnorm): the tensor is walked in runs, along the channels when they are
//!   innermost in `x` (NHWC: a run is one position's channels) and along the spatial dims
//!   otherwise (NCHW: a run is one sample's plane of one channel). The statistics are one pass
//!   (sums of `x - pivot` and its square, with a per-channel pivot so that a large mean does not
//!   cancel), the output a second.
//! - **Backward**: the same walks; per sample each row is one pass, per channel two (the sums,
//!   then `dx`).
//!
//! - **layernorm and rmsnorm, f32** with contiguous rows and no chain after y: each row goes
//!   from x's memory to y's, the statistics in one pass (shifted sums and sums of squares in f32
//!   lanes, a second pass only when the shift was poor), then y; AVX-512 or AVX2 by run-time
//!   dispatch (`isa::best_available`, capped by `KILN_CPU_ISA`).
//! - **batchnorm_inference, f32** with contiguous runs (NCHW planes or NHWC positions): each run
//!   goes from x's memory to y's in one pass (`y = x * a + shift`, `a = inv * scale` and
//!   `shift = bias - mean * a` computed once per channel), or into the chain's buffer when a
//!   chain follows.
//!
//! Workspace: none (per-worker buffers are allocated at execute).

use super::element_io::SharedPtr;
use super::epilogue::{check_data_type, Addr, BoundEpilogue, Epilogue, Geometry, Tile};
use super::pool;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::batchnorm::BatchnormOp;
use kiln_core::ops::batchnorm_inference::BatchnormInferenceOp;
use kiln_core::ops::layernorm::LayernormOp;
use kiln_core::ops::norm_backward::NormBackwardOp;
use kiln_core::ops::rmsnorm::RmsnormOp;
use kiln_core::{GenericOp, Op, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_NORM_V1";

/// Elements a parallel task should cover at least, so that small rows are batched.
const TASK_ELEMENTS: usize = 16 * 1024;
/// Most groups of items whose f64 sums are kept apart ([`fold_groups`]).
const FOLD_GROUPS: usize = 64;
/// Most bytes of those groups' sums together.
const FOLD_BYTES: usize = 8 << 20;

/// How many groups the sums over `items` items (each worth a task's work every `min_len`) are
/// split into for `pool::fold`: one a task's work, at most [`FOLD_GROUPS`], and at most as many
/// as keep the groups' two f64 sums of `channels` values within [`FOLD_BYTES`]. It depends on
/// the graph alone, so the sums are the same at every execute and thread count.
fn fold_groups(items: usize, min_len: usize, channels: usize) -> usize {
    let by_memory = (FOLD_BYTES / (16 * channels.max(1))).max(1);
    items
        .div_ceil(min_len.max(1))
        .min(FOLD_GROUPS)
        .min(by_memory)
        .max(1)
}

/// The normalization engine.
pub struct NormEngine;

impl CpuEngine for NormEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    /// Accepts one norm node over f32/f16/bf16 tensors, followed (forwards only) by a
    /// pointwise chain on `y`.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        NormPlan::new(graph).map(|_| ())
    }

    fn prepare(&self, graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        let plan = NormPlan::new(graph)
            .map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        Ok(Box::new(plan))
    }
}

/// The names of the operations this engine runs.
const NORMS: [&str; 7] = [
    "layernorm",
    "rmsnorm",
    "batchnorm",
    "batchnorm_inference",
    "layernorm_backward",
    "rmsnorm_backward",
    "batchnorm_backward",
];

/// How the values sharing one per-channel statistic are walked: in runs of `cols` values, one
/// per (fixed index, row); along the channels (`inner`) or within one channel.
#[derive(Debug, Clone, Copy)]
struct Walk {
    inner: bool,
    fixed: usize,
    rows: usize,
    cols: usize,
    channels: usize,
}

impl Walk {
    /// The walk and its geometry for `x`: channels along the runs when dim 1 has the smallest
    /// stride of the dims larger than 1 (NHWC), within one channel otherwise (NCHW).
    fn of(x: &TensorDesc) -> (Walk, Geometry) {
        let rank = x.dims.len();
        let min_other = (2..rank)
            .filter(|&i| x.dims[i] > 1)
            .map(|i| x.strides[i].abs())
            .min();
        let inner = min_other.is_none_or(|s| x.strides[1].abs() <= s);
        let size = |axes: &[usize]| axes.iter().map(|&a| x.dims[a] as usize).product::<usize>();
        let (fixed, rows, cols) = if inner {
            let rows: Vec<usize> = std::iter::once(0).chain(2..rank).collect();
            (vec![], rows, vec![1])
        } else {
            (vec![1], vec![0], (2..rank).collect())
        };
        let walk = Walk {
            inner,
            fixed: size(&fixed),
            rows: size(&rows),
            cols: size(&cols),
            channels: x.dims[1] as usize,
        };
        let geometry = Geometry {
            dims: x.dims.clone(),
            fixed,
            rows,
            cols,
        };
        (walk, geometry)
    }

    fn segments(&self) -> usize {
        self.fixed * self.rows
    }

    /// Values per channel.
    fn per_channel(&self) -> usize {
        self.segments() * self.cols / self.channels.max(1)
    }

    /// Segments per parallel task.
    fn min_len(&self) -> usize {
        (TASK_ELEMENTS / self.cols.max(1)).max(1)
    }
}

/// The geometry of a per-sample walk of `x`: one row per sample, all other dims along it.
fn sample_geometry(x: &TensorDesc) -> Geometry {
    Geometry {
        dims: x.dims.clone(),
        fixed: vec![],
        rows: vec![0],
        cols: (1..x.dims.len()).collect(),
    }
}

/// A tensor read or written along a walk.
#[derive(Debug, Clone)]
struct Walked {
    addr: Addr,
    uid: i64,
}

impl Walked {
    fn new(graph: &OpGraph, uid: i64, g: &Geometry) -> Result<Walked, String> {
        let t = tensor(graph, uid)?;
        Ok(Walked {
            addr: Addr::new(uid, t.data_type, &t.dims, &t.strides, g),
            uid,
        })
    }
}

fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
    graph
        .tensor(uid)
        .ok_or_else(|| format!("tensor uid {uid} is not in the graph"))
}

/// The running statistics of a batchnorm: previous mean and variance, momentum, next ones.
#[derive(Debug, Clone, Copy)]
struct Running {
    prev_mean: i64,
    prev_var: i64,
    momentum: f64,
    next_mean: i64,
    next_var: i64,
}

/// What the per-channel forward computes its scale and shift from.
#[derive(Debug, Clone, Copy)]
enum ChannelStats {
    /// Batch statistics, written to `mean` and `inv_variance`.
    Batch {
        eps: f64,
        mean: i64,
        inv: i64,
        running: Option<Running>,
    },
    /// Given statistics.
    Given { mean: i64, inv: i64 },
}

/// The prepared work of one norm graph.
#[derive(Debug, Clone)]
enum Work {
    SampleForward {
        rms: bool,
        x: Walked,
        rows: usize,
        inner: usize,
        scale: i64,
        bias: Option<i64>,
        eps: f32,
        /// Training: the `mean` (layernorm only) and `inv_variance` / `inv_rms` outputs.
        mean: Option<i64>,
        inv: Option<i64>,
        epilogue: BoundEpilogue,
        /// f32 x and y with contiguous rows and no chain after y: each row goes from x's
        /// memory to y's (one pass for the statistics, one for y), vectorised for the best
        /// instruction set this processor has.
        direct: Option<DirectRows>,
    },
    ChannelForward {
        x: Walked,
        walk: Walk,
        scale: i64,
        bias: i64,
        stats: ChannelStats,
        epilogue: BoundEpilogue,
        /// x is f32 with contiguous runs: y is computed straight from x's memory.
        x_direct: bool,
        /// Also no chain after y, and y is f32 with contiguous runs: y is written straight into
        /// its memory (one pass from x to y per run): with given statistics folded as ONNX
        /// Runtime folds them, with batch statistics in the affine form of the other paths.
        y_direct: Option<Walked>,
    },
    SampleBackward {
        rms: bool,
        /// Row strides (elements) of dy, x and dx when all three are f32 with contiguous rows:
        /// rows are then read and written where they lie, not through buffers.
        direct: Option<[isize; 3]>,
        dy: Walked,
        x: Walked,
        dx: Walked,
        rows: usize,
        inner: usize,
        scale: i64,
        mean: Option<i64>,
        inv: i64,
        dscale: i64,
        dbias: Option<i64>,
    },
    ChannelBackward {
        /// Whether dy, x and dx are f32 with contiguous runs (`direct_runs`): runs are then
        /// read and written where they lie, not through buffers.
        direct: bool,
        dy: Walked,
        x: Walked,
        dx: Walked,
        walk: Walk,
        scale: i64,
        mean: i64,
        inv: i64,
        dscale: i64,
        dbias: Option<i64>,
    },
}

/// A prepared norm graph.
#[derive(Debug, Clone)]
struct NormPlan {
    work: Work,
}

impl NormPlan {
    /// The plan of `graph`, or why this engine does not run it.
    fn new(graph: &OpGraph) -> Result<NormPlan, String> {
        let found = graph
            .nodes
            .iter()
            .enumerate()
            .find_map(|(i, n)| match &n.op {
                Op::Generic(g) if NORMS.contains(&g.op.as_str()) => Some((i, g)),
                _ => None,
            });
        let Some((anchor, op)) = found else {
            let n = graph
                .nodes
                .first()
                .ok_or_else(|| "the graph has no nodes".to_string())?;
            return Err(format!(
                "node '{}' is {}; this engine runs graphs of one normalization node (and a \
                 pointwise chain after its y)",
                n.name,
                n.op.describe()
            ));
        };
        for t in graph.tensors.iter().filter(|t| t.scalar.is_none()) {
            check_data_type(graph, t.uid)?;
        }
        let node = &graph.nodes[anchor].name;
        let what = format!("node '{node}' ({})", op.op);
        let err = |e: kiln_core::Error| e.to_string();
        let epilogue = |y: i64, g: &Geometry| -> Result<BoundEpilogue, String> {
            Epilogue::parse_after(graph, anchor, y)?
                .bind(graph, g)
                .map_err(|e| e.message)
        };
        let single = || -> Result<(), String> {
            if graph.nodes.len() == 1 {
                Ok(())
            } else {
                Err(format!(
                    "{what}: a backward norm runs alone here; the graph has {} nodes",
                    graph.nodes.len()
                ))
            }
        };
        let x_of = |uid: i64| tensor(graph, uid);
        let work = match op.op.as_str() {
            "layernorm" | "rmsnorm" => {
                let (x, scale, bias, eps, y, mean, inv, rms) = forward_per_sample(op, &what)?;
                let eps = eps.value(graph, node, "epsilon").map_err(err)? as f32;
                let xt = x_of(x)?;
                let g = sample_geometry(xt);
                let rows = xt.dims[0] as usize;
                let direct = match (graph.nodes.len(), row_stride(xt), row_stride(x_of(y)?)) {
                    (1, Some(x_row), Some(y_row)) => Some(DirectRows { y, x_row, y_row }),
                    _ => None,
                };
                Work::SampleForward {
                    direct,
                    rms,
                    x: Walked::new(graph, x, &g)?,
                    rows,
                    inner: count(xt) / rows.max(1),
                    scale,
                    bias,
                    eps,
                    mean,
                    inv,
                    epilogue: epilogue(y, &g)?,
                }
            }
            "batchnorm" => {
                let b = BatchnormOp::from_generic(op, &what).map_err(err)?;
                let (walk, g) = Walk::of(x_of(b.x)?);
                let (x_direct, y_direct) = direct_channel_runs(graph, b.x, b.y, walk, &g)?;
                let running = match b.running {
                    Some(r) => Some(Running {
                        prev_mean: r.prev_mean,
                        prev_var: r.prev_var,
                        momentum: r.momentum.value(graph, node, "momentum").map_err(err)?,
                        next_mean: r.next_mean,
                        next_var: r.next_var,
                    }),
                    None => None,
                };
                Work::ChannelForward {
                    x: Walked::new(graph, b.x, &g)?,
                    walk,
                    scale: b.scale,
                    bias: b.bias,
                    stats: ChannelStats::Batch {
                        eps: b.epsilon.value(graph, node, "epsilon").map_err(err)?,
                        mean: b.mean,
                        inv: b.inv_variance,
                        running,
                    },
                    epilogue: epilogue(b.y, &g)?,
                    x_direct,
                    y_direct,
                }
            }
            "batchnorm_inference" => {
                let b = BatchnormInferenceOp::from_generic(op, &what).map_err(err)?;
                let (walk, g) = Walk::of(x_of(b.x)?);
                let (x_direct, y_direct) = direct_channel_runs(graph, b.x, b.y, walk, &g)?;
                Work::ChannelForward {
                    x: Walked::new(graph, b.x, &g)?,
                    walk,
                    scale: b.scale,
                    bias: b.bias,
                    stats: ChannelStats::Given {
                        mean: b.mean,
                        inv: b.inv_variance,
                    },
                    epilogue: epilogue(b.y, &g)?,
                    x_direct,
                    y_direct,
                }
            }
            _ => {
                single()?;
                let b = NormBackwardOp::of(op, &what)
                    .ok_or_else(|| format!("{what}: not a norm"))?
                    .map_err(err)?;
                let xt = x_of(b.x)?;
                if b.kind.per_channel() {
                    let (walk, g) = Walk::of(xt);
                    Work::ChannelBackward {
                        direct: direct_runs(x_of(b.dy)?, walk)
                            && direct_runs(xt, walk)
                            && direct_runs(x_of(b.dx)?, walk),
                        dy: Walked::new(graph, b.dy, &g)?,
                        x: Walked::new(graph, b.x, &g)?,
                        dx: Walked::new(graph, b.dx, &g)?,
                        walk,
                        scale: b.scale,
                        mean: b.mean.ok_or_else(|| format!("{what}: no mean"))?,
                        inv: b.inv,
                        dscale: b.dscale,
                        dbias: b.dbias,
                    }
                } else {
                    let g = sample_geometry(xt);
                    let rows = xt.dims[0] as usize;
                    let direct = match (
                        row_stride(x_of(b.dy)?),
                        row_stride(xt),
                        row_stride(x_of(b.dx)?),
                    ) {
                        (Some(dy), Some(x), Some(dx)) => Some([dy, x, dx]),
                        _ => None,
                    };
                    Work::SampleBackward {
                        rms: b.mean.is_none(),
                        direct,
                        dy: Walked::new(graph, b.dy, &g)?,
                        x: Walked::new(graph, b.x, &g)?,
                        dx: Walked::new(graph, b.dx, &g)?,
                        rows,
                        inner: count(xt) / rows.max(1),
                        scale: b.scale,
                        mean: b.mean,
                        inv: b.inv,
                        dscale: b.dscale,
                        dbias: b.dbias,
                    }
                }
            }
        };
        Ok(NormPlan { work })
    }
}

/// The rows of a direct layernorm or rmsnorm: y's UID and the row strides (elements) of x and y.
#[derive(Debug, Clone, Copy)]
struct DirectRows {
    y: i64,
    x_row: isize,
    y_row: isize,
}

/// The stride (elements) between the rows of `t` when it is a bound f32 tensor whose rows (a
/// sample: every dim after the first) are contiguous in memory; `None` otherwise.
fn row_stride(t: &TensorDesc) -> Option<isize> {
    if t.data_type != kiln_core::DataType::F32 || t.is_virtual || t.scalar.is_some() {
        return None;
    }
    let mut expect = 1i64;
    for a in (1..t.dims.len()).rev() {
        if t.dims[a] > 1 {
            if t.strides[a] != expect {
                return None;
            }
            expect = expect.saturating_mul(t.dims[a]);
        }
    }
    // A row stride shorter than a row would make rows overlap.
    match t.dims.first() {
        Some(&n) if n > 1 && t.strides[0] < expect => None,
        _ => Some(t.strides.first().copied().unwrap_or(0) as isize),
    }
}

/// Defines `$name(isa, args)`, which runs `$body(args)` (an `#[inline(always)]` function)
/// compiled for `isa`, a level this processor runs (from `isa::best_available`): inlined into a
/// function built with that level's features, its loops are vectorized for it. The arithmetic
/// is the same at every level (nothing is fused or reordered), and so are the bits.
macro_rules! by_level {
    ($(#[$m:meta])* fn $name:ident($($a:ident: $t:ty),*) $(-> $r:ty)? = $body:path) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        fn $name(isa: super::isa::Isa, $($a: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                /// # Safety
                /// The processor has AVX-512 F, AVX2 and FMA.
                #[target_feature(enable = "avx512f,avx2,fma")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx512($($a: $t),*) $(-> $r)? {
                    $body($($a),*)
                }
                /// # Safety
                /// The processor has AVX2 and FMA.
                #[target_feature(enable = "avx2,fma")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx2($($a: $t),*) $(-> $r)? {
                    $body($($a),*)
                }
                use super::isa::Isa;
                match isa {
                    // SAFETY: `isa` is a level this processor runs (the caller's contract).
                    Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => return unsafe { avx512($($a),*) },
                    // SAFETY: as above.
                    Isa::Avx2 => return unsafe { avx2($($a),*) },
                    Isa::Portable => {}
                }
            }
            let _ = isa;
            $body($($a),*)
        }
    };
}

/// Lanes of the direct rows' sums: four 8-lane or two 16-lane accumulators per sum, so that
/// the adds of consecutive chunks do not wait on each other.
const ROW_LANES: usize = 32;

/// Values the pivot of a direct layernorm row is the mean of.
const PIVOT_VALUES: usize = 32;

by_level!(
    /// One row of a direct layernorm (`rms` false) or rmsnorm into `y`; returns (mean, inverse
    /// standard deviation or inverse rms). The statistics are one pass: sums of `v - p` and of its
    /// square in f32 lanes (combined in f64), `p` the mean of the row's first values, so that a
    /// large mean does not cancel; when the row's mean still lies more than one standard deviation
    /// from `p`, the variance is taken again as the mean square deviation from the mean (a second
    /// pass, from cache). y is `((v - p) - d) * inv * scale + bias`, `d` the mean less `p`.
    #[inline]
    fn norm_row(
        x: &[f32],
        y: &mut [f32],
        scale: &[f32],
        bias: Option<&[f32]>,
        rms: bool,
        eps: f32
    ) -> (f32, f32) = norm_row_portable
);

#[inline(always)]
fn norm_row_portable(
    x: &[f32],
    y: &mut [f32],
    scale: &[f32],
    bias: Option<&[f32]>,
    rms: bool,
    eps: f32,
) -> (f32, f32) {
    let n = x.len() as f64;
    let p = if rms || x.is_empty() {
        0.0
    } else {
        let head = &x[..x.len().min(PIVOT_VALUES)];
        head.iter().sum::<f32>() / head.len() as f32
    };
    let (mut s1, mut s2) = ([0f32; ROW_LANES], [0f32; ROW_LANES]);
    let chunks = x.chunks_exact(ROW_LANES);
    let (mut t1, mut t2) = (0f64, 0f64);
    for &v in chunks.remainder() {
        let d = v - p;
        t1 += f64::from(d);
        t2 += f64::from(d * d);
    }
    for c in chunks {
        for k in 0..ROW_LANES {
            let d = c[k] - p;
            s1[k] += d;
            s2[k] = d.mul_add(d, s2[k]);
        }
    }
    let sum1 = s1.iter().map(|&v| f64::from(v)).sum::<f64>() + t1;
    let sum2 = s2.iter().map(|&v| f64::from(v)).sum::<f64>() + t2;
    let dm = if rms { 0.0 } else { sum1 / n };
    let mut var = (sum2 / n - dm * dm).max(0.0);
    if !rms && dm * dm > var {
        var = lane_sum_sq(x, p, dm as f32) / n;
    }
    let iv = (1.0 / (var + f64::from(eps)).sqrt()) as f32;
    let off = dm as f32;
    match bias {
        Some(b) => {
            for (((o, &v), &s), &b) in y.iter_mut().zip(x).zip(scale).zip(b) {
                *o = ((v - p) - off) * iv * s + b;
            }
        }
        None => {
            for ((o, &v), &s) in y.iter_mut().zip(x).zip(scale) {
                *o = ((v - p) - off) * iv * s;
            }
        }
    }
    ((f64::from(p) + dm) as f32, iv)
}

/// Whether a per-channel forward reads x where it lies (x f32 with contiguous runs), and y's
/// walk when it also writes y where it lies (no chain after y, y f32 with contiguous runs).
fn direct_channel_runs(
    graph: &OpGraph,
    x: i64,
    y: i64,
    walk: Walk,
    g: &Geometry,
) -> Result<(bool, Option<Walked>), String> {
    let x_direct = direct_runs(tensor(graph, x)?, walk);
    let y_direct = if x_direct && graph.nodes.len() == 1 && direct_runs(tensor(graph, y)?, walk) {
        Some(Walked::new(graph, y, g)?)
    } else {
        None
    };
    Ok((x_direct, y_direct))
}

/// True when `t` is a bound f32 tensor whose runs along `walk` are contiguous in memory (the
/// channels when they are innermost, a sample's plane of one channel otherwise).
fn direct_runs(t: &TensorDesc, walk: Walk) -> bool {
    if t.data_type != kiln_core::DataType::F32 || t.is_virtual || t.scalar.is_some() {
        return false;
    }
    let run_axes: Vec<usize> = if walk.inner {
        vec![1]
    } else {
        (2..t.dims.len()).collect()
    };
    // Innermost first: each axis of size > 1 has the stride of the run so far.
    let mut expect = 1i64;
    for &a in run_axes.iter().rev() {
        if t.dims[a] > 1 {
            if t.strides[a] != expect {
                return false;
            }
            expect = expect.saturating_mul(t.dims[a]);
        }
    }
    true
}

by_level!(
    /// `dst[i] = ((src[i] - centre) - off) * a + b`, the parameters per element (`Per`: runs
    /// along the channels) or one for the run (`One`: a plane of one channel).
    fn affine_run(src: &[f32], dst: &mut [f32], p: RunParams<'_>) = affine_run_portable
);

#[inline(always)]
fn affine_run_portable(src: &[f32], dst: &mut [f32], p: RunParams<'_>) {
    match p {
        RunParams::One(m, d, a, b) => {
            for (o, &v) in dst.iter_mut().zip(src) {
                *o = ((v - m) - d) * a + b;
            }
        }
        RunParams::Per(m, d, a, b) => {
            let params = m.iter().zip(d).zip(a).zip(b);
            for ((o, &v), (((&m, &d), &a), &b)) in dst.iter_mut().zip(src).zip(params) {
                *o = ((v - m) - d) * a + b;
            }
        }
    }
}

by_level!(
    /// `dst[i] = src[i] * a + shift`, the factors per element or one for the run.
    fn scale_shift_run(src: &[f32], dst: &mut [f32], p: ScaleShift<'_>) = scale_shift_portable
);

#[inline(always)]
fn scale_shift_portable(src: &[f32], dst: &mut [f32], p: ScaleShift<'_>) {
    match p {
        ScaleShift::One(a, c) => {
            for (o, &v) in dst.iter_mut().zip(src) {
                *o = v * a + c;
            }
        }
        ScaleShift::Per(a, c) => {
            for (((o, &v), &a), &c) in dst.iter_mut().zip(src).zip(a).zip(c) {
                *o = v * a + c;
            }
        }
    }
}

/// The factors of [`scale_shift_run`].
#[derive(Clone, Copy)]
enum ScaleShift<'a> {
    One(f32, f32),
    Per(&'a [f32], &'a [f32]),
}

/// The per-channel factors of one run of a channel walk.
#[derive(Clone, Copy)]
enum RunParams<'a> {
    One(f32, f32, f32, f32),
    Per(&'a [f32], &'a [f32], &'a [f32], &'a [f32]),
}

fn count(t: &TensorDesc) -> usize {
    t.dims.iter().map(|&d| d.max(0) as usize).product()
}

/// The ports of a layernorm or rmsnorm node: x, scale, bias, epsilon, y, mean, inv, is-rms.
#[allow(clippy::type_complexity)]
fn forward_per_sample(
    op: &GenericOp,
    what: &str,
) -> Result<
    (
        i64,
        i64,
        Option<i64>,
        kiln_core::ops::norm::Epsilon,
        i64,
        Option<i64>,
        Option<i64>,
        bool,
    ),
    String,
> {
    if op.op == "rmsnorm" {
        let r = RmsnormOp::from_generic(op, what).map_err(|e| e.to_string())?;
        Ok((r.x, r.scale, r.bias, r.epsilon, r.y, None, r.inv_rms, true))
    } else {
        let l = LayernormOp::from_generic(op, what).map_err(|e| e.to_string())?;
        Ok((
            l.x,
            l.scale,
            Some(l.bias),
            l.epsilon,
            l.y,
            l.mean,
            l.inv_variance,
            false,
        ))
    }
}

/// The sum of `v - p`, in eight lanes (vectorisable), then the lanes in f64.
#[inline]
fn lane_sum_shifted(v: &[f32], p: f32) -> f64 {
    let mut acc = [0f32; 8];
    let chunks = v.chunks_exact(8);
    let rest: f64 = chunks.remainder().iter().map(|&x| f64::from(x - p)).sum();
    for c in chunks {
        for k in 0..8 {
            acc[k] += c[k] - p;
        }
    }
    acc.iter().map(|&x| f64::from(x)).sum::<f64>() + rest
}

/// The sum of `((v - p) - off)^2`, in eight lanes.
#[inline]
fn lane_sum_sq(v: &[f32], p: f32, off: f32) -> f64 {
    let mut acc = [0f32; 8];
    let chunks = v.chunks_exact(8);
    let sq = |x: f32| {
        let d = (x - p) - off;
        d * d
    };
    let rest: f64 = chunks.remainder().iter().map(|&x| f64::from(sq(x))).sum();
    for ch in chunks {
        for k in 0..8 {
            acc[k] += sq(ch[k]);
        }
    }
    acc.iter().map(|&x| f64::from(x)).sum::<f64>() + rest
}

by_level!(
    /// Adds x - pivot and its square to `s1` and `s2` for a run along the channels.
    fn moments_along(x: &[f32], pivot: &[f32], s1: &mut [f64], s2: &mut [f64])
        = moments_along_portable
);

#[inline(always)]
fn moments_along_portable(x: &[f32], pivot: &[f32], s1: &mut [f64], s2: &mut [f64]) {
    let n = x.len();
    let (pivot, s1, s2) = (&pivot[..n], &mut s1[..n], &mut s2[..n]);
    for c in 0..n {
        let d = f64::from(x[c] - pivot[c]);
        s1[c] += d;
        s2[c] += d * d;
    }
}

by_level!(
    /// Σ (x - p) and Σ (x - p)² over a run of a channel's plane ([`lane_sum_shifted`],
    /// [`lane_sum_sq`]).
    fn plane_moments(x: &[f32], p: f32) -> (f64, f64) = plane_moments_portable
);

#[inline(always)]
fn plane_moments_portable(x: &[f32], p: f32) -> (f64, f64) {
    (lane_sum_shifted(x, p), lane_sum_sq(x, p, 0.0))
}

/// Σ dy·(x - m)·iv and Σ dy over one run of a channel's plane, each in [`ROW_LANES`] f32
/// lanes added up in a fixed order (and the values past the last whole lane group in f64).
#[inline(always)]
fn plane_sums(x: &[f32], dy: &[f32], m: f32, iv: f32) -> (f64, f64) {
    let n = x.len().min(dy.len());
    let whole = n - n % ROW_LANES;
    let (mut a1, mut a2) = ([0f32; ROW_LANES], [0f32; ROW_LANES]);
    let chunks = x[..whole]
        .chunks_exact(ROW_LANES)
        .zip(dy[..whole].chunks_exact(ROW_LANES));
    for (x, dy) in chunks {
        for k in 0..ROW_LANES {
            a1[k] += dy[k] * (x[k] - m) * iv;
            a2[k] += dy[k];
        }
    }
    let (mut t1, mut t2) = (0f64, 0f64);
    for i in whole..n {
        t1 += f64::from(dy[i] * (x[i] - m) * iv);
        t2 += f64::from(dy[i]);
    }
    let lanes = |v: &[f32; ROW_LANES], t: f64| v.iter().map(|&a| f64::from(a)).sum::<f64>() + t;
    (lanes(&a1, t1), lanes(&a2, t2))
}

by_level!(
    /// [`BackwardRow::run`] at a level.
    fn backward_row(row: &BackwardRow<'_>, dy: &[f32], x: &[f32], dx: &mut [f32], acc: &mut Sums)
        = BackwardRow::portable
);

by_level!(
    /// [`plane_sums`] at a level.
    fn plane_sums_at(x: &[f32], dy: &[f32], m: f32, iv: f32) -> (f64, f64) = plane_sums
);

by_level!(
    /// [`channel_sums_portable`] at a level.
    fn channel_sums(
        x: &[f32],
        dy: &[f32],
        mean: &[f32],
        inv: &[f32],
        s1: &mut [f64],
        s2: &mut [f64]
    ) = channel_sums_portable
);

by_level!(
    /// [`channel_dx_portable`] at a level.
    fn channel_dx(x: &[f32], dy: &[f32], p: ChannelDx<'_>, out: &mut [f32]) = channel_dx_portable
);

/// Adds dy·x̂ and dy to `s1` and `s2` for a run along the channels (x̂ = (x - mean)·inv per
/// channel).
#[inline(always)]
fn channel_sums_portable(
    x: &[f32],
    dy: &[f32],
    mean: &[f32],
    inv: &[f32],
    s1: &mut [f64],
    s2: &mut [f64],
) {
    let n = x.len();
    let (dy, mean, inv, s1, s2) = (&dy[..n], &mean[..n], &inv[..n], &mut s1[..n], &mut s2[..n]);
    for c in 0..n {
        let xh = (x[c] - mean[c]) * inv[c];
        s1[c] += f64::from(dy[c] * xh);
        s2[c] += f64::from(dy[c]);
    }
}

/// The per-channel factors of batchnorm's dx = k·(dy - mb - x̂·ms), x̂ = (x - mean)·inv: per
/// value of a run along the channels, or one for a run in a channel's plane.
#[derive(Clone, Copy)]
enum ChannelDx<'a> {
    Along {
        mean: &'a [f32],
        inv: &'a [f32],
        k: &'a [f32],
        mb: &'a [f32],
        ms: &'a [f32],
    },
    Plane {
        mean: f32,
        inv: f32,
        k: f32,
        mb: f32,
        ms: f32,
    },
}

/// dx of one run ([`ChannelDx`]).
#[inline(always)]
fn channel_dx_portable(x: &[f32], dy: &[f32], p: ChannelDx<'_>, out: &mut [f32]) {
    let n = x.len();
    let (dy, out) = (&dy[..n], &mut out[..n]);
    match p {
        ChannelDx::Along {
            mean,
            inv,
            k,
            mb,
            ms,
        } => {
            let (mean, inv, k, mb, ms) = (&mean[..n], &inv[..n], &k[..n], &mb[..n], &ms[..n]);
            for j in 0..n {
                let xh = (x[j] - mean[j]) * inv[j];
                out[j] = k[j] * (dy[j] - mb[j] - xh * ms[j]);
            }
        }
        ChannelDx::Plane {
            mean,
            inv,
            k,
            mb,
            ms,
        } => {
            for j in 0..n {
                let xh = (x[j] - mean) * inv;
                out[j] = k * (dy[j] - mb - xh * ms);
            }
        }
    }
}

/// The per-row values of the per-sample backward: the scale and the row's statistics.
struct BackwardRow<'a> {
    scale: &'a [f32],
    mu: f32,
    iv: f32,
    rms: bool,
}

impl BackwardRow<'_> {
    /// `dx` of one row from its `dy` and `x`, adding dy·x̂ and dy to the parameter gradients'
    /// sums `acc`: x̂ = (x - mean)·iv, g = dy·scale, dx = iv·(g - mean(g) - x̂·mean(g·x̂))
    /// (rmsnorm: without mean(g)). The row's two sums run in [`ROW_LANES`] lanes added up in a
    /// fixed order, compiled for `isa` (the same bits at every level).
    fn run(&self, isa: super::isa::Isa, dy: &[f32], x: &[f32], dx: &mut [f32], acc: &mut Sums) {
        backward_row(isa, self, dy, x, dx, acc)
    }

    #[inline(always)]
    fn portable(&self, dy: &[f32], x: &[f32], dx: &mut [f32], acc: &mut Sums) {
        let n = x.len();
        let (dy, scale, dx) = (&dy[..n], &self.scale[..n], &mut dx[..n]);
        let (s1, s2) = (&mut acc.s1[..n], &mut acc.s2[..n]);
        let (mu, iv) = (self.mu, self.iv);
        // dx holds x̂ until the sums are known.
        let (mut sg, mut sgx) = ([0f32; ROW_LANES], [0f32; ROW_LANES]);
        let whole = n - n % ROW_LANES;
        let chunks = x[..whole]
            .chunks_exact(ROW_LANES)
            .zip(dy[..whole].chunks_exact(ROW_LANES))
            .zip(scale[..whole].chunks_exact(ROW_LANES))
            .zip(dx[..whole].chunks_exact_mut(ROW_LANES));
        for (((x, dy), scale), dx) in chunks {
            for k in 0..ROW_LANES {
                let xh = (x[k] - mu) * iv;
                let g = dy[k] * scale[k];
                sg[k] += g;
                sgx[k] += g * xh;
                dx[k] = xh;
            }
        }
        let (mut tg, mut tgx) = (0f64, 0f64);
        for i in whole..n {
            let xh = (x[i] - mu) * iv;
            let g = dy[i] * scale[i];
            tg += f64::from(g);
            tgx += f64::from(g * xh);
            dx[i] = xh;
        }
        for i in 0..n {
            s1[i] += f64::from(dy[i] * dx[i]);
            s2[i] += f64::from(dy[i]);
        }
        let lanes = |v: &[f32; ROW_LANES], t: f64| v.iter().map(|&a| f64::from(a)).sum::<f64>() + t;
        let rows = n as f64;
        let mg = if self.rms {
            0.0
        } else {
            (lanes(&sg, tg) / rows) as f32
        };
        let mgx = (lanes(&sgx, tgx) / rows) as f32;
        for i in 0..n {
            dx[i] = iv * (dy[i] * scale[i] - mg - dx[i] * mgx);
        }
    }
}

/// The pointers of a walked tensor.
fn ptr(tensors: &TensorMap<'_>, w: &Walked) -> PluginResult<SharedPtr> {
    tensors.ptr(w.uid).map(SharedPtr)
}

/// Per-worker buffers of a walk.
struct Buffers {
    a: Vec<f32>,
    b: Vec<f32>,
    scratch: Vec<f32>,
}

impl Buffers {
    fn new(n: usize) -> Buffers {
        Buffers {
            a: vec![0.0; n],
            b: vec![0.0; n],
            scratch: vec![0.0; n],
        }
    }
}

/// Per-channel (or per-parameter) f64 sums of a walk's first pass.
#[derive(Clone)]
struct Sums {
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Sums {
    fn new(n: usize) -> Sums {
        Sums {
            s1: vec![0.0; n],
            s2: vec![0.0; n],
        }
    }

    fn merge(mut self, other: Sums) -> Sums {
        for (a, b) in self.s1.iter_mut().zip(&other.s1) {
            *a += b;
        }
        for (a, b) in self.s2.iter_mut().zip(&other.s2) {
            *a += b;
        }
        self
    }
}

impl Prepared for NormPlan {
    fn workspace_size(&self) -> usize {
        0
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        // SAFETY (every arm): execute's contract; every walk stays inside its tensor's dims,
        // and each task writes only the runs of its own rows or segments.
        unsafe {
            match &self.work {
                Work::SampleForward { .. } => self.sample_forward(tensors),
                Work::ChannelForward { .. } => self.channel_forward(tensors),
                Work::SampleBackward { .. } => self.sample_backward(tensors),
                Work::ChannelBackward { .. } => self.channel_backward(tensors),
            }
        }
    }
}

impl NormPlan {
    /// # Safety
    /// As for [`Prepared::execute`].
    unsafe fn sample_forward(&self, tensors: &TensorMap<'_>) -> PluginResult<()> {
        let Work::SampleForward {
            rms,
            x,
            rows,
            inner,
            scale,
            bias,
            eps,
            mean,
            inv,
            epilogue,
            direct,
        } = &self.work
        else {
            return Err(PluginError::internal("sample_forward on another plan"));
        };
        let (rms, rows, inner, eps) = (*rms, *rows, *inner, *eps);
        let scale = tensors.gather_f32(*scale)?;
        let bias = bias.map(|b| tensors.gather_f32(b)).transpose()?;
        let xp = ptr(tensors, x)?;
        // The direct rows are read and written as f32 slices: both tensors must be aligned.
        let direct = match direct {
            Some(d) => {
                let yp = SharedPtr(tensors.ptr(d.y)?);
                let aligned = |p: SharedPtr| p.get().cast::<f32>().is_aligned();
                (aligned(xp) && aligned(yp)).then_some((d, yp))
            }
            None => None,
        };
        let stats: Vec<(f32, f32)> = if let Some((d, yp)) = direct {
            let isa = super::isa::best_available();
            pool::map_init(
                rows,
                (TASK_ELEMENTS / inner.max(1)).max(1),
                || (),
                |_, r| {
                    // SAFETY: rows of x and y are `inner` contiguous f32 elements at their row
                    // strides (row_stride), inside their tensors; this task alone writes row r
                    // of y, and a graph never writes the x it reads.
                    let (xr, yr) = unsafe {
                        (
                            std::slice::from_raw_parts(
                                xp.get().cast::<f32>().offset(r as isize * d.x_row),
                                inner,
                            ),
                            std::slice::from_raw_parts_mut(
                                yp.get().cast::<f32>().offset(r as isize * d.y_row),
                                inner,
                            ),
                        )
                    };
                    norm_row(isa, xr, yr, &scale, bias.as_deref(), rms, eps)
                },
            )
        } else {
            let ptrs = epilogue.pointers(tensors)?;
            pool::map_init(
                rows,
                (TASK_ELEMENTS / inner.max(1)).max(1),
                || Buffers::new(inner),
                |buf, r| {
                    let v = &mut buf.a[..];
                    // SAFETY: row r of x, inside its dims.
                    unsafe { x.addr.load_run(xp, x.addr.row_base(0, r), 0, v) };
                    let n = inner as f64;
                    // Centred on the row's first value, so that the deviations keep their
                    // precision when the mean is large against them.
                    let p = if rms { 0.0 } else { v[0] };
                    let dm = if rms { 0.0 } else { lane_sum_shifted(v, p) / n };
                    let off = dm as f32;
                    let var = lane_sum_sq(v, p, off) / n;
                    let iv = (1.0 / (var + f64::from(eps)).sqrt()) as f32;
                    match &bias {
                        Some(b) => {
                            for ((o, &s), &b) in v.iter_mut().zip(&scale).zip(b) {
                                *o = ((*o - p) - off) * iv * s + b;
                            }
                        }
                        None => {
                            for (o, &s) in v.iter_mut().zip(&scale) {
                                *o = ((*o - p) - off) * iv * s;
                            }
                        }
                    }
                    let mu = (f64::from(p) + dm) as f32;
                    let tile = Tile {
                        fixed: 0,
                        row0: r,
                        col0: 0,
                        rows: 1,
                        cols: inner,
                        values: v,
                        ld: inner,
                    };
                    // SAFETY: this task owns row r of the output.
                    unsafe { epilogue.apply(&ptrs, tile, &mut buf.scratch) };
                    (mu, iv)
                },
            )
        };
        if let Some(m) = mean {
            tensors.scatter_f32(*m, &stats.iter().map(|s| s.0).collect::<Vec<_>>())?;
        }
        if let Some(i) = inv {
            tensors.scatter_f32(*i, &stats.iter().map(|s| s.1).collect::<Vec<_>>())?;
        }
        Ok(())
    }

    /// # Safety
    /// As for [`Prepared::execute`].
    unsafe fn channel_forward(&self, tensors: &TensorMap<'_>) -> PluginResult<()> {
        let Work::ChannelForward {
            x,
            walk,
            scale,
            bias,
            stats,
            epilogue,
            x_direct,
            y_direct,
        } = &self.work
        else {
            return Err(PluginError::internal("channel_forward on another plan"));
        };
        let w = *walk;
        let scale = tensors.gather_f32(*scale)?;
        let bias = tensors.gather_f32(*bias)?;
        let xp = ptr(tensors, x)?;
        let isa = super::isa::best_available();
        // y = ((x - centre) - off) * inv * scale + bias: batch statistics are centred on the
        // channel's pivot with the small offset to the mean apart, so that the deviations keep
        // their precision when the mean is large against them.
        let (centre, off, inv): (Vec<f32>, Vec<f32>, Vec<f32>) = match stats {
            ChannelStats::Given { mean, inv } => {
                let mean = tensors.gather_f32(*mean)?;
                let zeros = vec![0.0; mean.len()];
                (mean, zeros, tensors.gather_f32(*inv)?)
            }
            ChannelStats::Batch {
                eps,
                mean,
                inv,
                running,
            } => {
                // SAFETY: forwarded contract.
                let (pivot, dm, var) = unsafe { channel_moments(x, xp, w, *x_direct, isa) };
                let mu: Vec<f64> = pivot
                    .iter()
                    .zip(&dm)
                    .map(|(&p, d)| f64::from(p) + d)
                    .collect();
                let iv: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
                tensors.scatter_f64(*mean, &mu)?;
                tensors.scatter_f64(*inv, &iv)?;
                if let Some(r) = running {
                    let m = w.per_channel() as f64;
                    let bessel = if m > 1.0 { m / (m - 1.0) } else { 0.0 };
                    let prev_mean = tensors.gather_f64(r.prev_mean)?;
                    let prev_var = tensors.gather_f64(r.prev_var)?;
                    let mix = |prev: &[f64], stat: &[f64], f: f64| -> Vec<f64> {
                        prev.iter()
                            .zip(stat)
                            .map(|(p, s)| (1.0 - r.momentum) * p + r.momentum * s * f)
                            .collect()
                    };
                    tensors.scatter_f64(r.next_mean, &mix(&prev_mean, &mu, 1.0))?;
                    tensors.scatter_f64(r.next_var, &mix(&prev_var, &var, bessel))?;
                }
                (
                    pivot,
                    dm.iter().map(|&v| v as f32).collect(),
                    iv.iter().map(|&v| v as f32).collect(),
                )
            }
        };
        let a: Vec<f32> = inv.iter().zip(&scale).map(|(i, s)| i * s).collect();
        let ptrs = epilogue.pointers(tensors)?;
        let params = |f: usize| {
            if w.inner {
                RunParams::Per(&centre, &off, &a, &bias)
            } else {
                RunParams::One(centre[f], off[f], a[f], bias[f])
            }
        };
        if let Some(y) = y_direct {
            // Straight from x's memory into y's. Given statistics (batchnorm_inference):
            // y = x * a + shift, shift = bias - mean * a per channel, as cuDNN and ONNX Runtime
            // fold it (two operations per value). Batch statistics (training): the affine form
            // of the other paths, y = ((x - centre) - off) * a + bias.
            let shift: Option<Vec<f32>> = matches!(stats, ChannelStats::Given { .. }).then(|| {
                centre
                    .iter()
                    .zip(&off)
                    .zip(&a)
                    .zip(&bias)
                    .map(|(((&m, &d), &a), &b)| {
                        (f64::from(b) - (f64::from(m) + f64::from(d)) * f64::from(a)) as f32
                    })
                    .collect()
            });
            let yp = ptr(tensors, y)?;
            pool::for_each_init(
                w.segments(),
                w.min_len(),
                || (),
                |_, s| {
                    let (f, r) = (s / w.rows, s % w.rows);
                    // SAFETY: x and y are f32 with contiguous runs (direct_runs), so segment
                    // (f, r) is `cols` consecutive f32 at its row base in each, inside their
                    // dims; x is only read, and this task alone writes this run of y, which
                    // overlaps no other bound tensor (execute's contract).
                    let (src, dst) = unsafe {
                        (
                            std::slice::from_raw_parts(
                                (xp.get() as *const f32).offset(x.addr.row_base(f, r)),
                                w.cols,
                            ),
                            std::slice::from_raw_parts_mut(
                                (yp.get() as *mut f32).offset(y.addr.row_base(f, r)),
                                w.cols,
                            ),
                        )
                    };
                    match &shift {
                        Some(shift) if w.inner => {
                            scale_shift_run(isa, src, dst, ScaleShift::Per(&a, shift))
                        }
                        Some(shift) => {
                            scale_shift_run(isa, src, dst, ScaleShift::One(a[f], shift[f]))
                        }
                        None => affine_run(isa, src, dst, params(f)),
                    }
                },
            );
            return Ok(());
        }
        pool::for_each_init(
            w.segments(),
            w.min_len(),
            || Buffers::new(w.cols),
            |buf, s| {
                let (f, r) = (s / w.rows, s % w.rows);
                let (v, src) = (&mut buf.a[..], &mut buf.b[..]);
                if *x_direct {
                    // SAFETY: x is f32 with contiguous runs: segment (f, r) is `cols`
                    // consecutive f32 at its row base, inside its dims, only read.
                    let src = unsafe {
                        std::slice::from_raw_parts(
                            (xp.get() as *const f32).offset(x.addr.row_base(f, r)),
                            w.cols,
                        )
                    };
                    affine_run(isa, src, v, params(f));
                } else {
                    // SAFETY: segment (f, r) of x.
                    unsafe { x.addr.load_run(xp, x.addr.row_base(f, r), 0, src) };
                    affine_run(isa, src, v, params(f));
                }
                let tile = Tile {
                    fixed: f,
                    row0: r,
                    col0: 0,
                    rows: 1,
                    cols: w.cols,
                    values: v,
                    ld: w.cols,
                };
                // SAFETY: this task owns segment (f, r) of the output.
                unsafe { epilogue.apply(&ptrs, tile, &mut buf.scratch) };
            },
        );
        Ok(())
    }

    /// # Safety
    /// As for [`Prepared::execute`].
    unsafe fn sample_backward(&self, tensors: &TensorMap<'_>) -> PluginResult<()> {
        let Work::SampleBackward {
            rms,
            direct,
            dy,
            x,
            dx,
            rows,
            inner,
            scale,
            mean,
            inv,
            dscale,
            dbias,
        } = &self.work
        else {
            return Err(PluginError::internal("sample_backward on another plan"));
        };
        let (rms, rows, inner) = (*rms, *rows, *inner);
        let scale = tensors.gather_f32(*scale)?;
        let mean = match mean {
            Some(m) => tensors.gather_f32(*m)?,
            None => vec![0.0; rows],
        };
        let inv = tensors.gather_f32(*inv)?;
        let (dyp, xp, dxp) = (ptr(tensors, dy)?, ptr(tensors, x)?, ptr(tensors, dx)?);
        // Rows read and written where they lie: f32 rows (direct) at aligned pointers.
        let aligned = |p: SharedPtr| p.get().cast::<f32>().is_aligned();
        let direct = direct.filter(|_| aligned(dyp) && aligned(xp) && aligned(dxp));
        let isa = super::isa::best_available();
        let sums = pool::fold(
            rows,
            fold_groups(rows, (TASK_ELEMENTS / inner.max(1)).max(1), inner),
            || Buffers::new(if direct.is_some() { 0 } else { inner }),
            || Sums::new(inner),
            |buf, acc, r| {
                let (mu, iv) = (mean[r], inv[r]);
                let row = BackwardRow {
                    scale: &scale,
                    mu,
                    iv,
                    rms,
                };
                if let Some([dy_row, x_row, dx_row]) = direct {
                    // SAFETY: dy, x and dx are f32 with contiguous rows at these strides
                    // (row_stride) and aligned (checked above); row r lies inside each; this
                    // task alone writes row r of dx, which overlaps no input (execute's
                    // contract).
                    let (dyv, xv, dxv) = unsafe {
                        let at = |p: SharedPtr, stride: isize| {
                            p.get().cast::<f32>().offset(r as isize * stride)
                        };
                        (
                            std::slice::from_raw_parts(at(dyp, dy_row), inner),
                            std::slice::from_raw_parts(at(xp, x_row), inner),
                            std::slice::from_raw_parts_mut(at(dxp, dx_row), inner),
                        )
                    };
                    row.run(isa, dyv, xv, dxv, acc);
                    return;
                }
                let (xv, dyv) = (&mut buf.a[..], &mut buf.b[..]);
                // SAFETY: row r of x and dy.
                unsafe {
                    x.addr.load_run(xp, x.addr.row_base(0, r), 0, xv);
                    dy.addr.load_run(dyp, dy.addr.row_base(0, r), 0, dyv);
                }
                let dxv = &mut buf.scratch[..inner];
                row.run(isa, dyv, xv, dxv, acc);
                // SAFETY: this task owns row r of dx.
                unsafe { dx.addr.store_run(dxp, dx.addr.row_base(0, r), 0, dxv) };
            },
        )
        .into_iter()
        .fold(Sums::new(inner), Sums::merge);
        tensors.scatter_f64(*dscale, &sums.s1)?;
        if let Some(b) = dbias {
            tensors.scatter_f64(*b, &sums.s2)?;
        }
        Ok(())
    }

    /// # Safety
    /// As for [`Prepared::execute`].
    unsafe fn channel_backward(&self, tensors: &TensorMap<'_>) -> PluginResult<()> {
        let Work::ChannelBackward {
            direct,
            dy,
            x,
            dx,
            walk,
            scale,
            mean,
            inv,
            dscale,
            dbias,
        } = &self.work
        else {
            return Err(PluginError::internal("channel_backward on another plan"));
        };
        let w = *walk;
        let scale = tensors.gather_f32(*scale)?;
        let mean = tensors.gather_f32(*mean)?;
        let inv = tensors.gather_f32(*inv)?;
        let (dyp, xp, dxp) = (ptr(tensors, dy)?, ptr(tensors, x)?, ptr(tensors, dx)?);
        // Runs read and written where they lie: f32 runs (direct) at aligned pointers.
        let aligned = |p: SharedPtr| p.get().cast::<f32>().is_aligned();
        let direct = *direct && aligned(dyp) && aligned(xp) && aligned(dxp);
        let isa = super::isa::best_available();
        // Segment (f, r) of x and dy: in place, or loaded into `buf`.
        let runs = |buf: &'_ mut Buffers, f: usize, r: usize| -> (*const f32, *const f32) {
            if direct {
                let at = |p: SharedPtr, t: &Walked| {
                    (p.get() as *const f32).wrapping_offset(t.addr.row_base(f, r))
                };
                return (at(xp, x), at(dyp, dy));
            }
            // SAFETY: segment (f, r) of x and dy.
            unsafe {
                x.addr.load_run(xp, x.addr.row_base(f, r), 0, &mut buf.a);
                dy.addr.load_run(dyp, dy.addr.row_base(f, r), 0, &mut buf.b);
            }
            (buf.a.as_ptr(), buf.b.as_ptr())
        };
        let cols = w.cols;
        let sums = pool::fold(
            w.segments(),
            fold_groups(w.segments(), w.min_len(), w.channels),
            || Buffers::new(if direct { 0 } else { cols }),
            || Sums::new(w.channels),
            |buf, acc, s| {
                let (f, r) = (s / w.rows, s % w.rows);
                let (xr, dyr) = runs(buf, f, r);
                // SAFETY: `runs` gives `cols` values of each, in place (direct: f32 runs
                // inside their tensors, only read) or in `buf`.
                let (xr, dyr) = unsafe {
                    (
                        std::slice::from_raw_parts(xr, cols),
                        std::slice::from_raw_parts(dyr, cols),
                    )
                };
                if w.inner {
                    channel_sums(isa, xr, dyr, &mean, &inv, &mut acc.s1, &mut acc.s2);
                } else {
                    let (t1, t2) = plane_sums_at(isa, xr, dyr, mean[f], inv[f]);
                    acc.s1[f] += t1;
                    acc.s2[f] += t2;
                }
            },
        )
        .into_iter()
        .fold(Sums::new(w.channels), Sums::merge);
        tensors.scatter_f64(*dscale, &sums.s1)?;
        if let Some(b) = dbias {
            tensors.scatter_f64(*b, &sums.s2)?;
        }
        let m = w.per_channel() as f64;
        // dx = inv * scale * (dy - dbias / M - x̂ * dscale / M), per channel.
        let k: Vec<f32> = inv.iter().zip(&scale).map(|(i, s)| i * s).collect();
        let mb: Vec<f32> = sums.s2.iter().map(|v| (v / m) as f32).collect();
        let ms: Vec<f32> = sums.s1.iter().map(|v| (v / m) as f32).collect();
        pool::for_each_init(
            w.segments(),
            w.min_len(),
            || Buffers::new(if direct { 0 } else { cols }),
            |buf, s| {
                let (f, r) = (s / w.rows, s % w.rows);
                let (xr, dyr) = runs(buf, f, r);
                let out = if direct {
                    (dxp.get() as *mut f32).wrapping_offset(dx.addr.row_base(f, r))
                } else {
                    buf.scratch.as_mut_ptr()
                };
                // SAFETY: as in the first pass; `out` is this task's run of dx (direct: f32,
                // inside dx, which overlaps no input by execute's contract) or buf.scratch.
                let (xr, dyr, out) = unsafe {
                    (
                        std::slice::from_raw_parts(xr, cols),
                        std::slice::from_raw_parts(dyr, cols),
                        std::slice::from_raw_parts_mut(out, cols),
                    )
                };
                let factors = if w.inner {
                    ChannelDx::Along {
                        mean: &mean,
                        inv: &inv,
                        k: &k,
                        mb: &mb,
                        ms: &ms,
                    }
                } else {
                    ChannelDx::Plane {
                        mean: mean[f],
                        inv: inv[f],
                        k: k[f],
                        mb: mb[f],
                        ms: ms[f],
                    }
                };
                channel_dx(isa, xr, dyr, factors, out);
                if !direct {
                    // SAFETY: this task owns segment (f, r) of dx.
                    unsafe { dx.addr.store_run(dxp, dx.addr.row_base(f, r), 0, out) };
                }
            },
        );
        Ok(())
    }
}

/// The per-channel pivot, offset from the pivot to the mean, and biased variance of `x` along
/// `w`: one pass of sums of `x - pivot` and its square (f64), the pivot being one value of each
/// channel.
///
/// # Safety
/// `xp` is x's bound pointer for a live execute call.
unsafe fn channel_moments(
    x: &Walked,
    xp: SharedPtr,
    w: Walk,
    direct: bool,
    isa: super::isa::Isa,
) -> (Vec<f32>, Vec<f64>, Vec<f64>) {
    let mut pivot = vec![0f32; w.channels];
    let mut first = vec![0f32; w.cols];
    for f in 0..w.fixed {
        // SAFETY: segment (f, 0) of x.
        unsafe { x.addr.load_run(xp, x.addr.row_base(f, 0), 0, &mut first) };
        if w.inner {
            pivot.copy_from_slice(&first[..w.channels.min(w.cols)]);
        } else if let Some(&v) = first.first() {
            pivot[f] = v;
        }
    }
    let sums = pool::fold(
        w.segments(),
        fold_groups(w.segments(), w.min_len(), w.channels),
        || vec![0f32; if direct { 0 } else { w.cols }],
        || Sums::new(w.channels),
        |buf, acc, s| {
            let (f, r) = (s / w.rows, s % w.rows);
            let run = if direct {
                // SAFETY: x is f32 with contiguous runs (direct_runs) at an aligned pointer:
                // segment (f, r) is `cols` consecutive f32 at its row base, only read.
                unsafe {
                    std::slice::from_raw_parts(
                        (xp.get() as *const f32).offset(x.addr.row_base(f, r)),
                        w.cols,
                    )
                }
            } else {
                // SAFETY: segment (f, r) of x.
                unsafe { x.addr.load_run(xp, x.addr.row_base(f, r), 0, buf) };
                &buf[..]
            };
            if w.inner {
                moments_along(isa, run, &pivot, &mut acc.s1, &mut acc.s2);
            } else {
                let (s1, s2) = plane_moments(isa, run, pivot[f]);
                acc.s1[f] += s1;
                acc.s2[f] += s2;
            }
        },
    )
    .into_iter()
    .fold(Sums::new(w.channels), Sums::merge);
    let m = w.per_channel() as f64;
    let mut offset = Vec::with_capacity(w.channels);
    let mut var = Vec::with_capacity(w.channels);
    for (s1, s2) in sums.s1.iter().zip(&sums.s2) {
        let d = s1 / m;
        offset.push(d);
        var.push((s2 / m - d * d).max(0.0));
    }
    (pivot, offset, var)
}

#[cfg(test)]
mod tests {
    use super::{
        affine_run, channel_dx, channel_sums, moments_along, plane_moments, plane_sums_at,
        BackwardRow, ChannelDx, RunParams, Sums,
    };
    use crate::fast::isa::Isa;

    /// Values in [-1, 1) from a fixed xorshift sequence.
    fn values(seed: u64, n: usize) -> Vec<f32> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    /// The batchnorm run kernels (the backward's sums and dx, the forward's moments and affine
    /// map) at every level this processor runs: the same bits as the portable level, and the
    /// backward's plane sums within rounding of f64 sums.
    #[test]
    fn channel_runs_are_the_same_at_every_level() {
        for n in [1usize, 5, 32, 33, 64, 1000] {
            let (x, dy) = (values(1, n), values(2, n));
            let (mean, inv, k) = (values(3, n), values(4, n), values(5, n));
            let (mb, ms) = (values(6, n), values(7, n));
            let run = |isa: Isa| {
                let (mut s1, mut s2) = (vec![0.5f64; n], vec![0.25f64; n]);
                channel_sums(isa, &x, &dy, &mean, &inv, &mut s1, &mut s2);
                let plane = plane_sums_at(isa, &x, &dy, 0.1, 1.5);
                let (mut along, mut flat) = (vec![0f32; n], vec![0f32; n]);
                let p = ChannelDx::Along {
                    mean: &mean,
                    inv: &inv,
                    k: &k,
                    mb: &mb,
                    ms: &ms,
                };
                channel_dx(isa, &x, &dy, p, &mut along);
                let p = ChannelDx::Plane {
                    mean: 0.1,
                    inv: 1.5,
                    k: 0.7,
                    mb: -0.2,
                    ms: 0.3,
                };
                channel_dx(isa, &x, &dy, p, &mut flat);
                let bits = |v: &[f32]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
                // The forward's runs: moments and the affine map.
                let (mut m1, mut m2) = (vec![0.5f64; n], vec![0.25f64; n]);
                moments_along(isa, &x, &mean, &mut m1, &mut m2);
                let moments = plane_moments(isa, &x, 0.3);
                let (mut aff, mut aff1) = (vec![0f32; n], vec![0f32; n]);
                affine_run(isa, &x, &mut aff, RunParams::Per(&mean, &inv, &k, &mb));
                affine_run(isa, &x, &mut aff1, RunParams::One(0.1, 0.01, 1.5, -0.2));
                let forward = (m1, m2, moments, bits(&aff), bits(&aff1));
                (s1, s2, plane, bits(&along), bits(&flat), forward)
            };
            let want = run(Isa::Portable);
            for isa in Isa::ALL.into_iter().filter(|l| l.is_available()) {
                assert!(run(isa) == want, "n {n}, {isa:?}");
            }
            let exact: f64 = (0..n)
                .map(|i| f64::from(dy[i]) * (f64::from(x[i]) - 0.1) * 1.5)
                .sum();
            assert!((want.2 .0 - exact).abs() <= 1e-5 * (n as f64), "n {n}");
            let total: f64 = dy.iter().map(|&d| f64::from(d)).sum();
            assert!((want.2 .1 - total).abs() <= 1e-5 * (n as f64), "n {n}");
        }
    }

    /// The per-sample backward's row at every level this processor runs: the same bits as the
    /// portable level, and within f32 rounding of the formula in f64, for rows shorter and
    /// longer than the lanes and not a multiple of them.
    #[test]
    fn backward_rows_are_the_same_at_every_level_and_match_the_formula() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        for n in [1usize, 7, 31, 32, 33, 100, 1000] {
            let (x, dy, scale): (Vec<f32>, Vec<f32>, Vec<f32>) = (0..n)
                .map(|_| (next() * 3.0 + 0.5, next(), next() + 1.0))
                .fold((vec![], vec![], vec![]), |mut v, (a, b, c)| {
                    v.0.push(a);
                    v.1.push(b);
                    v.2.push(c);
                    v
                });
            for rms in [false, true] {
                let (mu, iv) = if rms { (0.0, 0.7) } else { (0.4, 0.6) };
                let row = BackwardRow {
                    scale: &scale,
                    mu,
                    iv,
                    rms,
                };
                let run = |isa: Isa| {
                    let (mut dx, mut acc) = (vec![f32::NAN; n], Sums::new(n));
                    row.run(isa, &dy, &x, &mut dx, &mut acc);
                    (dx, acc.s1, acc.s2)
                };
                let want = run(Isa::Portable);
                for isa in Isa::ALL.into_iter().filter(|l| l.is_available()) {
                    let got = run(isa);
                    let bits = |v: &[f32]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got.0), bits(&want.0), "dx, n {n}, rms {rms}, {isa:?}");
                    assert_eq!(got.1, want.1, "dscale, n {n}, {isa:?}");
                    assert_eq!(got.2, want.2, "dbias, n {n}, {isa:?}");
                }
                // The formula in f64.
                let xh: Vec<f64> = x
                    .iter()
                    .map(|&v| (f64::from(v) - f64::from(mu)) * f64::from(iv))
                    .collect();
                let g: Vec<f64> = dy
                    .iter()
                    .zip(&scale)
                    .map(|(&d, &s)| f64::from(d) * f64::from(s))
                    .collect();
                let mg = if rms {
                    0.0
                } else {
                    g.iter().sum::<f64>() / n as f64
                };
                let mgx = g.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / n as f64;
                for i in 0..n {
                    let dx = f64::from(iv) * (g[i] - mg - xh[i] * mgx);
                    let err = (f64::from(want.0[i]) - dx).abs();
                    assert!(
                        err <= 1e-5 * (1.0 + dx.abs()) * (n as f64).sqrt(),
                        "dx[{i}] {} want {dx}, n {n}",
                        want.0[i]
                    );
                    assert!(
                        (want.1[i] - f64::from(dy[i]) * xh[i]).abs() <= 1e-5 * (1.0 + xh[i].abs())
                    );
                    assert_eq!(want.2[i], f64::from(dy[i]));
                }
            }
        }
    }
}
