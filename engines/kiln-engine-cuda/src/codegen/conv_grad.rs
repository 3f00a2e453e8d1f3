//! `KILN_CUDA_CONV_DGRAD_V1` and `KILN_CUDA_CONV_WGRAD_V1`: the convolution gradients as
//! implicit GEMMs on the portable tiled GEMM of `kernels/gemm_mainloop.cuh` (the same kernel as
//! `KILN_CUDA_CONV_FPROP_V1`, wmma on f16/bf16 and FMA on f32), with their own operand loads
//! (`kernels/conv_dgrad_operands.cuh`, `kernels/conv_wgrad_operands.cuh`) and the fused
//! pointwise epilogue of [`super::gemm`]. 2-D, groups 1, any layout by strides; both inputs in
//! one type, the output and the epilogue in any of f32, f16 and bf16.
//!
//! - dgrad: `dx[N·H·W, C] = dy'[N·H·W, R·S·K] * w'[R·S·K, C]`. Row (n, h, w) and tap (r, s)
//!   meet at dy's position ((h + pad − r·dil) / stride, ...) when the division is exact and
//!   inside dy; the load returns zero for every other tap, so strides, padding and dilation need
//!   no special cases (a stride of 2 spends three quarters of its taps on zeros).
//! - wgrad: `dw[K, R·S·C] = dy'[K, N·P·Q] * x'[N·P·Q, R·S·C]`. Its output is small and its
//!   reduction long, so the reduction is split into chunks, one per `blockIdx.z`, when the tiles
//!   alone would leave the device mostly idle: each chunk writes f32 partial sums to the plan's
//!   workspace and a second kernel (`kernels/gemm_split_reduce.cuh`) adds them in chunk order
//!   (deterministic) and runs the epilogue.

use super::gemm::{check_epilogue, epilogue_body, gemm_params, tensor, Main, Split};
use super::{c_type, check_types, symbol, Kernel};
use kiln_core::{ConvDirection, ConvOp, DataType, Op, OpGraph};
use std::fmt::Write;

/// The entry of [`Kernel::args`] that stands for the plan's workspace pointer (shared with the
/// other engines that take a workspace; no tensor may have this UID in a graph these engines
/// run).
pub use super::WORKSPACE_ARG;

/// The mainloop's tile (`gemm_mainloop.cuh` checks the grid was sized with it).
const BM: i64 = 128;
const BN: i64 = 128;
const BK: i64 = 32;

/// Blocks a split wgrad aims for: two per multiprocessor of an H200 (132). A device with more
/// or fewer only runs the same plan a little less evenly.
const TARGET_BLOCKS: i64 = 264;
/// Each split reduces at least this many BK steps, so its tile loads and partial store pay off.
const MIN_STEPS_PER_SPLIT: i64 = 16;
/// The workspace of a split never exceeds this; fewer splits are used instead.
const MAX_WORKSPACE: i64 = 1 << 28;

/// The graph's gradient convolution and its epilogue.
pub(super) fn split(graph: &OpGraph, dir: ConvDirection) -> Result<Split<'_>, String> {
    let first = graph.nodes.first().ok_or("the graph has no nodes")?;
    let cv = match &first.op {
        Op::Conv(c) if c.direction == dir => c,
        other => {
            return Err(format!(
                "node '{}' is {}, not a {}",
                first.name,
                other.describe(),
                match dir {
                    ConvDirection::Dgrad => "data-gradient convolution",
                    ConvDirection::Wgrad => "weight-gradient convolution",
                    ConvDirection::Fprop => "forward convolution",
                }
            ))
        }
    };
    let mut epilogue = Vec::new();
    for n in &graph.nodes[1..] {
        match &n.op {
            Op::Pointwise(p) => epilogue.push(p),
            other => {
                return Err(format!(
                    "node '{}' is {}; only pointwise nodes can follow",
                    n.name,
                    other.describe()
                ))
            }
        }
    }
    Ok(Split {
        main: Main::Conv(cv),
        out: cv.output(),
        epilogue,
    })
}

pub(super) fn conv_of<'g>(s: &Split<'g>) -> &'g ConvOp {
    match s.main {
        Main::Conv(cv) => cv,
        Main::Matmul(_) => unreachable!("split() makes convolutions only"),
    }
}

/// `Ok` when the engine of direction `dir` (dgrad or wgrad) can run `graph`.
pub fn supports(graph: &OpGraph, dir: ConvDirection) -> Result<(), String> {
    check_types(graph)?;
    let s = split(graph, dir)?;
    let cv = conv_of(&s);
    let (x, w) = (tensor(graph, cv.x)?, tensor(graph, cv.w)?);
    if x.dims.len() != 4 {
        return Err(format!(
            "{} has rank {}; this engine runs 2-D convolutions (rank 4)",
            x.label(),
            x.dims.len()
        ));
    }
    if w.dims[1] != x.dims[1] {
        return Err(format!(
            "grouped convolution ({} groups) is not supported",
            x.dims[1] / w.dims[1].max(1)
        ));
    }
    let [a, b] = cv.inputs().map(|u| tensor(graph, u));
    let (a, b) = (a?, b?);
    if a.data_type != b.data_type {
        return Err(format!(
            "{} is {} but {} is {}; the operands must share a type",
            a.label(),
            a.data_type,
            b.label(),
            b.data_type
        ));
    }
    if a.is_virtual || b.is_virtual || a.scalar.is_some() || b.scalar.is_some() {
        return Err("the main node's operands must be bound tensors".into());
    }
    if let Some(t) = graph.tensors.iter().find(|t| t.uid == WORKSPACE_ARG) {
        return Err(format!(
            "{} has uid {WORKSPACE_ARG}, which this engine reserves for its workspace",
            t.label()
        ));
    }
    check_epilogue(graph, &s, a, b)?;
    geometry(graph, &s).map(|_| ())
}

/// The GEMM a gradient graph becomes.
struct Gemm {
    m: i64,
    n: i64,
    /// The whole reduction.
    k: i64,
    /// Reduction chunks (wgrad; 1 for dgrad) and each chunk's length, a multiple of BK.
    splits: i64,
    chunk: i64,
    narrow: bool,
}

fn geometry(graph: &OpGraph, s: &Split<'_>) -> Result<Gemm, String> {
    let cv = conv_of(s);
    let (x, w, y) = (
        tensor(graph, cv.x)?,
        tensor(graph, cv.w)?,
        tensor(graph, cv.y)?,
    );
    let (nb, c, h, wd) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3]);
    let (kk, r, ss) = (w.dims[0], w.dims[2], w.dims[3]);
    let (p, q) = (y.dims[2], y.dims[3]);
    let (m, n, k) = match cv.direction {
        ConvDirection::Dgrad => (nb * h * wd, c, r * ss * kk),
        _ => (kk, r * ss * c, nb * p * q),
    };
    let (mut splits, mut chunk) = (1, k);
    if cv.direction == ConvDirection::Wgrad {
        let tiles = ((m + BM - 1) / BM) * ((n + BN - 1) / BN);
        let steps = (k + BK - 1) / BK;
        let want = (TARGET_BLOCKS + tiles - 1) / tiles;
        splits = want.min(steps / MIN_STEPS_PER_SPLIT).clamp(1, 64);
        while splits > 1 && splits * m * n * 4 > MAX_WORKSPACE {
            splits -= 1;
        }
        if splits > 1 {
            chunk = ((steps + splits - 1) / splits) * BK;
            splits = (k + chunk - 1) / chunk;
        }
    }
    let narrow = fits_i32(graph, cv, [m, n, k + chunk])?;
    let gx = (m + BM - 1) / BM;
    let gy = (n + BN - 1) / BN;
    if gx > i32::MAX as i64 || gy > 65535 {
        return Err(format!("grid {gx} x {gy} is beyond the device's limits"));
    }
    Ok(Gemm {
        m,
        n,
        k,
        splits,
        chunk,
        narrow,
    })
}

/// Whether every index the kernel forms fits below 2^31: each bound tensor's reach (its dims
/// plus a tile of overhang and the convolution's padding and filter reach, times its strides)
/// and the GEMM extents plus that slack. Arithmetic in i128.
pub(super) fn fits_i32(graph: &OpGraph, cv: &ConvOp, extents: [i64; 3]) -> Result<bool, String> {
    let limit = i128::from(i32::MAX);
    let mut slack = i128::from(BM.max(BN)) * 2;
    let w = tensor(graph, cv.w)?;
    let p = &cv.params;
    for v in p.pre_padding.iter().chain(&p.post_padding) {
        slack += i128::from(v.unsigned_abs());
    }
    for (i, d) in p.dilation.iter().enumerate() {
        let filter = w.dims.get(i + 2).copied().unwrap_or(1);
        let stride = p.stride.get(i).copied().unwrap_or(1);
        slack += (i128::from(d.unsigned_abs()) * i128::from(filter.unsigned_abs())
            + i128::from(stride.unsigned_abs()))
            * i128::from(stride.unsigned_abs());
    }
    for t in graph.bound_tensors() {
        let mut reach: i128 = 0;
        for (&d, &st) in t.dims.iter().zip(&t.strides).filter(|(&d, _)| d != 1) {
            let d = i128::from(d.unsigned_abs()) + slack;
            if d > limit {
                return Ok(false);
            }
            reach += d * i128::from(st.unsigned_abs());
        }
        if reach > limit {
            return Ok(false);
        }
    }
    Ok(extents
        .iter()
        .all(|&e| i128::from(e.unsigned_abs()) + slack <= limit))
}

/// Workspace bytes of the plan: the partial sums of a split wgrad, else none.
pub fn workspace_bytes(graph: &OpGraph, dir: ConvDirection) -> Result<u64, String> {
    let s = split(graph, dir)?;
    let g = geometry(graph, &s)?;
    Ok(if g.splits > 1 {
        (g.splits * g.m * g.n * 4) as u64
    } else {
        0
    })
}

fn define(out: &mut String, key: &str, v: &dyn std::fmt::Display) {
    let _ = writeln!(out, "#define {key} {v}");
}

/// Generates the kernels of a dgrad or wgrad graph (which `supports` accepted): the GEMM, and
/// for a split wgrad the reduction of its partial sums.
pub fn generate(graph: &OpGraph, dir: ConvDirection) -> Result<Vec<Kernel>, String> {
    supports(graph, dir)?;
    let s = split(graph, dir)?;
    let cv = conv_of(&s);
    let g = geometry(graph, &s)?;
    let params = gemm_params(graph);
    let name = |u: i64| {
        params
            .name(u)
            .ok_or_else(|| format!("uid {u} is not a parameter"))
    };
    let (x, w, y) = (
        tensor(graph, cv.x)?,
        tensor(graph, cv.w)?,
        tensor(graph, cv.y)?,
    );
    // The GEMM's operands: dgrad dy × w, wgrad dy × x (dy's filters are wgrad's rows).
    let (ua, ub) = match dir {
        ConvDirection::Dgrad => (cv.y, cv.w),
        _ => (cv.y, cv.x),
    };
    let elem = tensor(graph, ua)?.data_type;
    let vec = 16 / elem.size() as i64;
    let (idx, sfx) = if g.narrow {
        ("int", "")
    } else {
        ("long long", "LL")
    };
    let index = |v: i64| format!("{v}{sfx}");
    let pr = &cv.params;
    let (sx, sw, sy) = (&x.strides, &w.strides, &y.strides);
    let (c, h, wd) = (x.dims[1], x.dims[2], x.dims[3]);
    let (kk, ss) = (w.dims[0], w.dims[3]);
    let (p, q) = (y.dims[2], y.dims[3]);
    let aligned = |st: &[i64], skip: usize| {
        st.iter()
            .enumerate()
            .all(|(i, &v)| i == skip || v % vec == 0)
    };
    let mut operands = String::new();
    let (a_k_fast, b_n_fast, a_vec, b_vec, b_vec_n, coords, header, engine, prefix);
    let geometry_defs: Vec<(&str, i64)>;
    match dir {
        ConvDirection::Dgrad => {
            operands.push_str("// Data-gradient geometry; strides in elements.\n");
            geometry_defs = vec![
                ("KILN_DGRAD_H", h),
                ("KILN_DGRAD_W", wd),
                ("KILN_DGRAD_P", p),
                ("KILN_DGRAD_Q", q),
                ("KILN_DGRAD_K", kk),
                ("KILN_DGRAD_S", ss),
                ("KILN_DGRAD_STRIDE_H", pr.stride[0]),
                ("KILN_DGRAD_STRIDE_W", pr.stride[1]),
                ("KILN_DGRAD_PAD_H", pr.pre_padding[0]),
                ("KILN_DGRAD_PAD_W", pr.pre_padding[1]),
                ("KILN_DGRAD_DIL_H", pr.dilation[0]),
                ("KILN_DGRAD_DIL_W", pr.dilation[1]),
                ("KILN_DGRAD_DY_STRIDE_N", sy[0]),
                ("KILN_DGRAD_DY_STRIDE_K", sy[1]),
                ("KILN_DGRAD_DY_STRIDE_H", sy[2]),
                ("KILN_DGRAD_DY_STRIDE_W", sy[3]),
                ("KILN_DGRAD_FILTER_STRIDE_K", sw[0]),
                ("KILN_DGRAD_FILTER_STRIDE_C", sw[1]),
                ("KILN_DGRAD_FILTER_STRIDE_R", sw[2]),
                ("KILN_DGRAD_FILTER_STRIDE_S", sw[3]),
            ];
            // The reduction runs over (r, s, k), k fastest: contiguous in dy when k has its
            // smallest stride (NHWC), and in w when k does there.
            a_k_fast = sy[1] <= sy[3];
            b_n_fast = sw[1] < sw[0];
            a_vec = sy[1] == 1 && kk % vec == 0 && aligned(sy, 1);
            let bn = sw[1] == 1 && c % vec == 0 && aligned(sw, 1);
            let bk = sw[0] == 1 && kk % vec == 0 && aligned(sw, 0);
            b_vec = bn || bk;
            b_vec_n = bn;
            coords = vec![
                format!("(gm / {}{sfx})", h * wd),
                "(gn)".into(),
                format!("((gm / {wd}{sfx}) % {h}{sfx})"),
                format!("(gm % {wd}{sfx})"),
            ];
            header = "conv_dgrad_operands.cuh";
            engine = crate::CONV_DGRAD_V1;
            prefix = "conv_dgrad";
        }
        _ => {
            operands.push_str("// Weight-gradient geometry; strides in elements.\n");
            geometry_defs = vec![
                ("KILN_WGRAD_KT", g.k),
                ("KILN_WGRAD_H", h),
                ("KILN_WGRAD_W", wd),
                ("KILN_WGRAD_C", c),
                ("KILN_WGRAD_P", p),
                ("KILN_WGRAD_Q", q),
                ("KILN_WGRAD_S", ss),
                ("KILN_WGRAD_STRIDE_H", pr.stride[0]),
                ("KILN_WGRAD_STRIDE_W", pr.stride[1]),
                ("KILN_WGRAD_PAD_H", pr.pre_padding[0]),
                ("KILN_WGRAD_PAD_W", pr.pre_padding[1]),
                ("KILN_WGRAD_DIL_H", pr.dilation[0]),
                ("KILN_WGRAD_DIL_W", pr.dilation[1]),
                ("KILN_WGRAD_X_STRIDE_N", sx[0]),
                ("KILN_WGRAD_X_STRIDE_C", sx[1]),
                ("KILN_WGRAD_X_STRIDE_H", sx[2]),
                ("KILN_WGRAD_X_STRIDE_W", sx[3]),
                ("KILN_WGRAD_DY_STRIDE_N", sy[0]),
                ("KILN_WGRAD_DY_STRIDE_K", sy[1]),
                ("KILN_WGRAD_DY_STRIDE_H", sy[2]),
                ("KILN_WGRAD_DY_STRIDE_W", sy[3]),
            ];
            // The reduction runs over (n, p, q), q fastest; dy's rows are its filters, x's
            // columns the taps (r, s, c), c fastest.
            a_k_fast = sy[3] < sy[1];
            b_n_fast = sx[1] < sx[3];
            a_vec = false;
            b_vec = sx[1] == 1 && c % vec == 0 && aligned(sx, 1);
            b_vec_n = b_vec;
            coords = vec![
                "(gm)".into(),
                format!("(gn % {c}{sfx})"),
                format!("(gn / {}{sfx})", c * ss),
                format!("((gn / {c}{sfx}) % {ss}{sfx})"),
            ];
            header = "conv_wgrad_operands.cuh";
            engine = crate::CONV_WGRAD_V1;
            prefix = "conv_wgrad";
        }
    }
    for (key, v) in geometry_defs {
        define(&mut operands, key, &index(v));
    }
    let _ = writeln!(operands, "#include \"{header}\"");

    let split_k = g.splits > 1;
    let ty = c_type(elem).ok_or("bad type")?;
    let mut src = format!(
        "// {engine}, generated for one graph: the GEMM of gemm_mainloop.cuh with the\n\
         // operand loads of {header}, specialised to the graph's types, shapes and\n\
         // strides, and {}.\n\
         #include \"common.cuh\"\n\n\
         typedef {ty} elem_t;\n\
         typedef {idx} kiln_idx;\n\n\
         // C[M, N] = A[M, K] * B[K, N] per batch, in tiles of BM x BN; how the tiles load.\n",
        if split_k {
            "its partial sums stored to the workspace"
        } else {
            "its fused epilogue"
        }
    );
    let tensor_cores = matches!(elem, DataType::F16 | DataType::Bf16);
    for (key, v) in [
        ("KILN_GEMM_M", index(g.m)),
        ("KILN_GEMM_N", index(g.n)),
        ("KILN_GEMM_K", index(g.chunk)),
        ("KILN_GEMM_BM", BM.to_string()),
        ("KILN_GEMM_BN", BN.to_string()),
        ("KILN_GEMM_TENSOR_CORES", u8::from(tensor_cores).to_string()),
        ("KILN_GEMM_A_K_FAST", u8::from(a_k_fast).to_string()),
        ("KILN_GEMM_B_N_FAST", u8::from(b_n_fast).to_string()),
        ("KILN_GEMM_A_VEC", u8::from(a_vec).to_string()),
        ("KILN_GEMM_B_VEC", u8::from(b_vec).to_string()),
        ("KILN_GEMM_B_VEC_N", u8::from(b_vec_n).to_string()),
        ("KILN_GEMM_A", name(ua)?),
        ("KILN_GEMM_B", name(ub)?),
    ] {
        define(&mut src, key, &v);
    }
    if split_k {
        src.push_str("// The reduction is split in chunks of KILN_GEMM_K, one per blockIdx.z.\n");
    }
    src.push('\n');
    src.push_str(&operands);

    let uids: Vec<String> = params.list.iter().map(|(u, _)| u.to_string()).collect();
    let mut args: Vec<String> = (0..params.list.len()).map(|i| format!("p{i}")).collect();
    let mut declared = params.declare(graph)?;
    let mut kernel_args: Vec<i64> = params.list.iter().map(|&(u, _)| u).collect();
    if split_k {
        args.push("kiln_ws".into());
        kernel_args.push(WORKSPACE_ARG);
    }
    let _ = write!(
        src,
        "\n// The kernel's parameters: tensor UIDs {} as {}{}.\n",
        uids.join(", "),
        args[..params.list.len()].join(", "),
        if split_k {
            ", then the workspace as kiln_ws"
        } else {
            ""
        }
    );
    let reduce_params = format!("{declared}, const float* __restrict__ kiln_ws");
    if split_k {
        declared.push_str(", float* __restrict__ kiln_ws");
    }
    define(&mut src, "KILN_GEMM_SYMBOL", &"KILN_SYMBOL");
    define(&mut src, "KILN_GEMM_PARAMS", &declared);
    define(&mut src, "KILN_GEMM_ARGS", &args.join(", "));
    let epilogue = epilogue_body(graph, &s, &params, &coords, String::new())?;
    if split_k {
        let _ = write!(
            src,
            "\n// Chunk `batch`'s partial sum of output element (gm, gn), to the workspace.\n\
             __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
             \x20   kiln_ws[(batch * {}LL + (kiln_i64)gm) * {}LL + (kiln_i64)gn] = acc_;\n\
             }}\n\n\
             #include \"gemm_mainloop.cuh\"\n",
            g.m, g.n
        );
    } else {
        let _ = write!(
            src,
            "\n// The fused epilogue of output element (gm, gn), given its GEMM result.\n\
             __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
             {epilogue}}}\n\n\
             #include \"gemm_mainloop.cuh\"\n"
        );
    }
    let sym = symbol(prefix, &src);
    let source = src.replace("KILN_SYMBOL", &sym);
    let gx = (g.m + BM - 1) / BM;
    let gy = (g.n + BN - 1) / BN;
    let mut kernels = vec![Kernel {
        symbol: sym,
        source,
        args: kernel_args.clone(),
        grid: [gx as u32, gy as u32, g.splits as u32],
        block: [256, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    }];
    if split_k {
        kernels.push(reduce_kernel(
            engine,
            ty,
            idx,
            (g.m, g.n, g.splits),
            &reduce_params,
            &args,
            &epilogue,
            &uids,
            kernel_args,
        ));
    }
    Ok(kernels)
}

/// The kernel that adds a split wgrad's partial sums in chunk order and runs the epilogue.
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce_kernel(
    engine: &str,
    ty: &str,
    idx: &str,
    (m, n, splits): (i64, i64, i64),
    declared: &str,
    args: &[String],
    epilogue: &str,
    uids: &[String],
    kernel_args: Vec<i64>,
) -> Kernel {
    let sfx = if idx == "int" { "" } else { "LL" };
    let mut src = format!(
        "// {engine}, generated for one graph: the sum of the split reduction's partial\n\
         // results (gemm_split_reduce.cuh) and the graph's fused epilogue.\n\
         #include \"common.cuh\"\n\n\
         typedef {ty} elem_t;\n\
         typedef {idx} kiln_idx;\n\n"
    );
    define(&mut src, "KILN_GEMM_M", &format!("{m}{sfx}"));
    define(&mut src, "KILN_GEMM_N", &format!("{n}{sfx}"));
    define(&mut src, "KILN_SPLIT_COUNT", &splits);
    let _ = write!(
        src,
        "\n// The kernel's parameters: tensor UIDs {} as {}, then the workspace as kiln_ws.\n",
        uids.join(", "),
        args[..uids.len()].join(", ")
    );
    define(&mut src, "KILN_SPLIT_SYMBOL", &"KILN_SYMBOL");
    define(&mut src, "KILN_GEMM_PARAMS", &declared);
    define(&mut src, "KILN_GEMM_ARGS", &args.join(", "));
    let _ = write!(
        src,
        "\n// The fused epilogue of output element (gm, gn), given its sum.\n\
         __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
         {epilogue}}}\n\n\
         #include \"gemm_split_reduce.cuh\"\n"
    );
    let sym = symbol("conv_wgrad_reduce", &src);
    let source = src.replace("KILN_SYMBOL", &sym);
    let blocks = ((m * n + 255) / 256).clamp(1, 4096);
    Kernel {
        symbol: sym,
        source,
        args: kernel_args,
        grid: [blocks as u32, 1, 1],
        block: [256, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    }
}
