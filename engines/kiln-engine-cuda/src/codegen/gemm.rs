//! `KILN_CUDA_MATMUL_V1` and `KILN_CUDA_CONV_FPROP_V1`: one tiled GEMM kernel
//! (`kernels/gemm_mainloop.cuh`, `kernels/gemm_epilogue.cuh`) with its operand loads
//! (`kernels/matmul_operands.cuh`, `kernels/conv_fprop_operands.cuh`) and a fused pointwise
//! epilogue. Code generation writes only a prologue that specialises those headers to one graph
//! (`#define`s of types, extents, strides and load paths, the batch offsets and the epilogue as
//! small generated functions) and includes them; NVRTC gets the headers from
//! [`super::HEADERS`].
//!
//! - matmul: `c[b.., M, N] = a[b.., M, K] * b[b.., K, N]`, any strides, batch dims broadcast;
//!   one batch per `blockIdx.z`.
//! - conv fprop (2-D, groups 1, any layout by strides, NCHW and NHWC alike): implicit GEMM with
//!   M = N·P·Q, N = K, K = R·S·C (C fastest, so NHWC activations load contiguously).
//!
//! The epilogue is every pointwise node after the main node, evaluated per output element over
//! the output's dims: operands are the main node's result, earlier epilogue results, graph
//! inputs broadcast to the output's dims, or by-value scalars.

use super::{
    c_type, check_types, emit_pointwise_body, offset_expr, store_stmt, symbol, Kernel, Params,
};
use kiln_core::{ConvDirection, ConvOp, DataType, MatmulOp, Op, OpGraph, PointwiseOp, TensorDesc};
use std::collections::HashMap;
use std::fmt::Write;

/// The output tile of one block; `gemm_mainloop.cuh` checks it covers the same.
const BM: i64 = 128;
const BN: i64 = 128;

/// The main node of a GEMM-shaped graph.
pub(crate) enum Main<'g> {
    Matmul(&'g MatmulOp),
    Conv(&'g ConvOp),
}

pub(crate) struct Split<'g> {
    pub main: Main<'g>,
    pub out: i64,
    pub epilogue: Vec<&'g PointwiseOp>,
}

pub(crate) fn split(graph: &OpGraph) -> Result<Split<'_>, String> {
    let first = graph.nodes.first().ok_or("the graph has no nodes")?;
    let (main, out) = match &first.op {
        Op::Matmul(m) => (Main::Matmul(m), m.c),
        Op::Conv(c) if c.direction == ConvDirection::Fprop => (Main::Conv(c), c.y),
        other => {
            return Err(format!(
                "node '{}' is {}, not a matmul or a forward convolution",
                first.name,
                other.describe()
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
        main,
        out,
        epilogue,
    })
}

pub(crate) fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
    graph
        .tensor(uid)
        .ok_or_else(|| format!("no tensor uid {uid}"))
}

/// `Ok` when `kind` ("matmul" or "conv") can run `graph`.
pub fn supports(graph: &OpGraph, conv: bool) -> Result<(), String> {
    check_types(graph)?;
    let s = split(graph)?;
    let (a, b) = match (&s.main, conv) {
        (Main::Matmul(m), false) => (tensor(graph, m.a)?, tensor(graph, m.b)?),
        (Main::Conv(c), true) => {
            let x = tensor(graph, c.x)?;
            let w = tensor(graph, c.w)?;
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
            (x, w)
        }
        (Main::Matmul(_), true) => {
            return Err("the first node is a matmul, not a convolution".into())
        }
        (Main::Conv(_), false) => {
            return Err("the first node is a convolution, not a matmul".into())
        }
    };
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
    check_epilogue(graph, &s, a, b)
}

/// Checks the epilogue of a GEMM-shaped graph whose main node reads `a` and `b`: every node's
/// output has the main output's dims, every other operand broadcasts to them, and no node reads
/// `a` or `b` again.
pub(crate) fn check_epilogue(
    graph: &OpGraph,
    s: &Split<'_>,
    a: &TensorDesc,
    b: &TensorDesc,
) -> Result<(), String> {
    let out = tensor(graph, s.out)?;
    for p in &s.epilogue {
        let t = tensor(graph, p.out)?;
        if t.dims != out.dims {
            return Err(format!(
                "epilogue output {} has dims {:?}, not the main output's {:?}",
                t.label(),
                t.dims,
                out.dims
            ));
        }
        for u in std::iter::once(p.a).chain(p.b) {
            let t = tensor(graph, u)?;
            if u == a.uid || u == b.uid {
                continue;
            }
            if t.dims.len() != out.dims.len()
                || t.dims
                    .iter()
                    .zip(&out.dims)
                    .any(|(&d, &o)| d != 1 && d != o)
            {
                return Err(format!(
                    "epilogue operand {} with dims {:?} does not broadcast to {:?}",
                    t.label(),
                    t.dims,
                    out.dims
                ));
            }
        }
    }
    if !s.epilogue.is_empty()
        && s.epilogue
            .iter()
            .any(|p| p.a == a.uid || p.b == Some(a.uid) || p.a == b.uid || p.b == Some(b.uid))
    {
        // Operands of the main node read again by the epilogue would need their own indexing.
        return Err("an epilogue node reads the main node's operand".into());
    }
    Ok(())
}

/// Generates the kernel of a matmul or conv-fprop graph (which `supports` accepted): a prologue
/// that specialises the GEMM of `kernels/gemm_mainloop.cuh` to the graph (types, extents,
/// strides, load paths, the fused epilogue) and includes it.
pub fn generate(graph: &OpGraph, conv: bool) -> Result<Kernel, String> {
    supports(graph, conv)?;
    let s = split(graph)?;
    let out = tensor(graph, s.out)?;
    let params = gemm_params(graph);
    let rank = out.dims.len();
    let name = |u: i64| {
        params
            .name(u)
            .ok_or_else(|| format!("uid {u} is not a parameter"))
    };

    let elem = tensor(
        graph,
        match &s.main {
            Main::Matmul(mm) => mm.a,
            Main::Conv(cv) => cv.x,
        },
    )?
    .data_type;
    // Elements per 16-byte access.
    let vec = 16 / elem.size() as i64;
    // 32-bit index arithmetic when every offset the kernel forms fits (see `fits_i32`).
    let narrow = fits_i32(graph, &s)?;
    let (idx, sfx) = if narrow {
        ("int", "")
    } else {
        ("long long", "LL")
    };
    // `#define NAME value` lines; index values as literals of kiln_idx's width.
    let define = |out: &mut String, key: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(out, "#define {key} {v}");
    };
    let index = |v: i64| format!("{v}{sfx}");
    // The operand part of the prologue: the defines and functions of the operand header.
    let mut operands = String::new();
    let (m, n, k, batches, a_k_fast, b_n_fast, coords, batch_coords);
    let (a_vec, b_vec, b_vec_n, pa, pb);
    match &s.main {
        Main::Matmul(mm) => {
            let (a, b) = (tensor(graph, mm.a)?, tensor(graph, mm.b)?);
            m = out.dims[rank - 2];
            n = out.dims[rank - 1];
            k = a.dims[rank - 1];
            batches = out.dims[..rank - 2].iter().product::<i64>();
            let bcoords;
            (batch_coords, bcoords) = matmul_batch_coords(out);
            let boff = |t: &TensorDesc| {
                let mut tt = t.clone();
                tt.dims.truncate(rank - 2);
                tt.strides.truncate(rank - 2);
                offset_expr(&tt, &bcoords)
            };
            let (sam, sak) = (a.strides[rank - 2], a.strides[rank - 1]);
            let (sbk, sbn) = (b.strides[rank - 2], b.strides[rank - 1]);
            operands.push_str(
                "// Operand strides in elements, and each operand's offset in a batch.\n",
            );
            define(&mut operands, "KILN_MATMUL_A_STRIDE_M", &index(sam));
            define(&mut operands, "KILN_MATMUL_A_STRIDE_K", &index(sak));
            define(&mut operands, "KILN_MATMUL_B_STRIDE_K", &index(sbk));
            define(&mut operands, "KILN_MATMUL_B_STRIDE_N", &index(sbn));
            let _ = write!(
                operands,
                "__device__ __forceinline__ void kiln_matmul_batch_offsets(kiln_i64 batch, kiln_idx& off_a, kiln_idx& off_b) {{\n\
                 {batch_coords}\
                 \x20   off_a = (kiln_idx)({});\n\
                 \x20   off_b = (kiln_idx)({});\n\
                 }}\n\
                 #include \"matmul_operands.cuh\"\n",
                boff(a),
                boff(b)
            );
            a_k_fast = sak <= sam;
            b_n_fast = sbn <= sbk;
            // Wide loads along a contiguous dim whose extent and every other stride are
            // multiples of the vector, so each access stays inside the row and 16-byte aligned
            // once the base pointer is (checked at run time: one uniform branch).
            let others_aligned = |t: &TensorDesc, skip: usize| {
                t.dims
                    .iter()
                    .zip(&t.strides)
                    .enumerate()
                    .all(|(i, (&d, &st))| i == skip || d == 1 || st % vec == 0)
            };
            a_vec = sak == 1 && k % vec == 0 && others_aligned(a, rank - 1);
            let bn = sbn == 1 && n % vec == 0 && others_aligned(b, rank - 1);
            let bk = sbk == 1 && k % vec == 0 && others_aligned(b, rank - 2);
            b_vec = bn || bk;
            b_vec_n = bn;
            (pa, pb) = (name(a.uid)?, name(b.uid)?);
            let mut c: Vec<String> = bcoords.clone();
            c.push("(gm)".into());
            c.push("(gn)".into());
            coords = c;
        }
        Main::Conv(cv) => {
            let (x, w) = (tensor(graph, cv.x)?, tensor(graph, cv.w)?);
            let (nb, ch) = (x.dims[0], x.dims[1]);
            let (kk, r, ss) = (w.dims[0], w.dims[2], w.dims[3]);
            let (p, q) = (out.dims[2], out.dims[3]);
            let pr = &cv.params;
            m = nb * p * q;
            n = kk;
            k = r * ss * ch;
            batches = 1;
            batch_coords = String::new();
            let (sx, sw) = (&x.strides, &w.strides);
            operands.push_str("// Convolution geometry; strides in elements.\n");
            let mut geometry = conv_geometry(x, w, out, pr);
            // x's channel stride sits after its batch stride; then the filter's strides.
            geometry.insert(13, ("KILN_CONV_X_STRIDE_C", sx[1]));
            geometry.extend([
                ("KILN_CONV_FILTER_STRIDE_K", sw[0]),
                ("KILN_CONV_FILTER_STRIDE_C", sw[1]),
                ("KILN_CONV_FILTER_STRIDE_R", sw[2]),
                ("KILN_CONV_FILTER_STRIDE_S", sw[3]),
            ]);
            for (key, v) in geometry {
                define(&mut operands, key, &index(v));
            }
            operands.push_str("#include \"conv_fprop_operands.cuh\"\n");
            // Channels fastest along K: contiguous when C has the smallest stride (NHWC, KRSC).
            a_k_fast = sx[1] <= sx[3];
            b_n_fast = sw[0] < sw[1];
            // Wide loads along C: a vector never straddles (r, s) when C is a multiple of it.
            a_vec = sx[1] == 1 && ch % vec == 0 && [0, 2, 3].iter().all(|&i| sx[i] % vec == 0);
            b_vec = sw[1] == 1 && ch % vec == 0 && [0, 2, 3].iter().all(|&i| sw[i] % vec == 0);
            b_vec_n = false;
            (pa, pb) = (name(x.uid)?, name(w.uid)?);
            coords = vec![
                format!("(gm / {}{sfx})", p * q),
                "(gn)".into(),
                format!("((gm / {q}{sfx}) % {p}{sfx})"),
                format!("(gm % {q}{sfx})"),
            ];
        }
    }
    let epilogue = epilogue_body(graph, &s, &params, &coords, batch_coords)?;
    let tensor_cores = matches!(elem, DataType::F16 | DataType::Bf16);
    let (engine, operands_header) = if conv {
        (crate::CONV_FPROP_V1, "conv_fprop_operands.cuh")
    } else {
        (crate::MATMUL_V1, "matmul_operands.cuh")
    };
    let mut src = format!(
        "// {engine}, generated for one graph: the GEMM of gemm_mainloop.cuh with the\n\
         // operand loads of {operands_header}, specialised to the graph's types, shapes and\n\
         // strides, and its fused epilogue.\n\
         #include \"common.cuh\"\n\n\
         typedef {} elem_t;\n\
         typedef {idx} kiln_idx;\n\n\
         // C[M, N] = A[M, K] * B[K, N] per batch, in tiles of BM x BN; how the tiles load.\n",
        c_type(elem).ok_or("bad type")?
    );
    for (key, v) in [
        ("KILN_GEMM_M", index(m)),
        ("KILN_GEMM_N", index(n)),
        ("KILN_GEMM_K", index(k)),
        ("KILN_GEMM_BM", BM.to_string()),
        ("KILN_GEMM_BN", BN.to_string()),
        ("KILN_GEMM_TENSOR_CORES", u8::from(tensor_cores).to_string()),
        ("KILN_GEMM_A_K_FAST", u8::from(a_k_fast).to_string()),
        ("KILN_GEMM_B_N_FAST", u8::from(b_n_fast).to_string()),
        ("KILN_GEMM_A_VEC", u8::from(a_vec).to_string()),
        ("KILN_GEMM_B_VEC", u8::from(b_vec).to_string()),
        ("KILN_GEMM_B_VEC_N", u8::from(b_vec_n).to_string()),
        ("KILN_GEMM_A", pa),
        ("KILN_GEMM_B", pb),
    ] {
        define(&mut src, key, &v);
    }
    src.push('\n');
    src.push_str(&operands);
    let uids: Vec<String> = params.list.iter().map(|(u, _)| u.to_string()).collect();
    let args: Vec<String> = (0..params.list.len()).map(|i| format!("p{i}")).collect();
    let _ = write!(
        src,
        "\n// The kernel's parameters: tensor UIDs {} as {}.\n",
        uids.join(", "),
        args.join(", ")
    );
    define(&mut src, "KILN_GEMM_SYMBOL", &"KILN_SYMBOL");
    define(&mut src, "KILN_GEMM_PARAMS", &params.declare(graph)?);
    define(&mut src, "KILN_GEMM_ARGS", &args.join(", "));
    let _ = write!(
        src,
        "\n// The fused epilogue of output element (gm, gn) of batch `batch`, given its GEMM result.\n\
         __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
         {epilogue}}}\n\n\
         #include \"gemm_mainloop.cuh\"\n"
    );
    let sym = symbol(if conv { "conv_fprop" } else { "matmul" }, &src);
    let source = src.replace("KILN_SYMBOL", &sym);
    let gx = (m + BM - 1) / BM;
    let gy = (n + BN - 1) / BN;
    if gx > i32::MAX as i64 || gy > 65535 || !(1..=65535).contains(&batches) {
        return Err(format!(
            "grid {gx} x {gy} x {batches} is beyond the device's limits"
        ));
    }
    Ok(Kernel {
        symbol: sym,
        source,
        args: params.list.iter().map(|&(u, _)| u).collect(),
        grid: [gx as u32, gy as u32, batches as u32],
        block: [256, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    })
}

/// The `#define`s of a 2-D convolution's geometry both GEMM engines share: the input's and
/// output's extents, the filter width, stride, leading padding, dilation, and x's strides along
/// N, H and W (in elements).
pub(crate) fn conv_geometry(
    x: &TensorDesc,
    w: &TensorDesc,
    out: &TensorDesc,
    pr: &kiln_core::ConvParams,
) -> Vec<(&'static str, i64)> {
    let sx = &x.strides;
    vec![
        ("KILN_CONV_H", x.dims[2]),
        ("KILN_CONV_W", x.dims[3]),
        ("KILN_CONV_C", x.dims[1]),
        ("KILN_CONV_P", out.dims[2]),
        ("KILN_CONV_Q", out.dims[3]),
        ("KILN_CONV_S", w.dims[3]),
        ("KILN_CONV_STRIDE_H", pr.stride[0]),
        ("KILN_CONV_STRIDE_W", pr.stride[1]),
        ("KILN_CONV_PAD_H", pr.pre_padding[0]),
        ("KILN_CONV_PAD_W", pr.pre_padding[1]),
        ("KILN_CONV_DIL_H", pr.dilation[0]),
        ("KILN_CONV_DIL_W", pr.dilation[1]),
        ("KILN_CONV_X_STRIDE_N", sx[0]),
        ("KILN_CONV_X_STRIDE_H", sx[2]),
        ("KILN_CONV_X_STRIDE_W", sx[3]),
    ]
}

/// The kernel parameters of a GEMM graph: its inputs, then its outputs, each by ascending UID.
pub(crate) fn gemm_params(graph: &OpGraph) -> Params {
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
    Params {
        list: inputs
            .iter()
            .map(|&u| (u, false))
            .chain(outputs.iter().map(|&u| (u, true)))
            .collect(),
    }
}

/// The statements that decompose the flat batch index `batch` of a matmul output into one
/// coordinate `b<d>` per batch dim of extent above 1, and the coordinate expressions of every
/// batch dim (a dim of extent 1 has coordinate 0, and no offset term reads it).
pub(crate) fn matmul_batch_coords(out: &TensorDesc) -> (String, Vec<String>) {
    let rank = out.dims.len();
    let mut setup = String::new();
    if out.dims[..rank - 2].iter().any(|&d| d != 1) {
        setup.push_str("    kiln_i64 br = batch;\n");
    }
    for d in (0..rank - 2).rev().filter(|&d| out.dims[d] != 1) {
        let _ = writeln!(
            setup,
            "    const kiln_i64 b{d} = br % {}LL; br /= {}LL;",
            out.dims[d], out.dims[d]
        );
    }
    (setup, (0..rank - 2).map(|d| format!("b{d}")).collect())
}

/// The body of `kiln_gemm_epilogue`: `batch_coords`, the main result's store (unless virtual),
/// then every pointwise node, at output coordinates `coords`.
pub(crate) fn epilogue_body(
    graph: &OpGraph,
    s: &Split<'_>,
    params: &Params,
    coords: &[String],
    batch_coords: String,
) -> Result<String, String> {
    let out = tensor(graph, s.out)?;
    let mut values = HashMap::new();
    values.insert(s.out, "acc_".to_string());
    let mut epilogue = batch_coords;
    if !out.is_virtual {
        epilogue.push_str(&store_stmt(graph, params, out, coords, "acc_", "    ")?);
    }
    epilogue.push_str(&emit_pointwise_body(
        graph,
        &s.epilogue,
        params,
        coords,
        &mut values,
        "    ",
    )?);
    Ok(epilogue)
}

/// Whether the kernel can index in 32 bits: every tile coordinate (M, N, K plus a tile of
/// overhang) and every offset it forms into a bound tensor fit below 2^31. Offsets are bounded
/// by each dim's extent plus a tile of overhang plus the convolution's padding and filter
/// reach (window corners may lie in the padding), times the dim's stride; sums of such terms
/// are bounded by the sum over dims, which is what is checked. Arithmetic is in i128, so no
/// shape makes the check itself overflow.
pub(crate) fn fits_i32(graph: &OpGraph, s: &Split<'_>) -> Result<bool, String> {
    let limit = i128::from(i32::MAX);
    let mut slack = i128::from(BM.max(BN)) * 2;
    if let Main::Conv(cv) = &s.main {
        let p = &cv.params;
        let w = tensor(graph, cv.w)?;
        for v in p.pre_padding.iter().chain(&p.post_padding) {
            slack += i128::from(v.unsigned_abs());
        }
        for (i, d) in p.dilation.iter().enumerate() {
            let filter = w.dims.get(i + 2).copied().unwrap_or(1);
            let stride = p.stride.get(i).copied().unwrap_or(1);
            slack += i128::from(d.unsigned_abs()) * i128::from(filter.unsigned_abs())
                + i128::from(stride.unsigned_abs());
        }
    }
    for t in graph.bound_tensors() {
        let mut reach: i128 = 0;
        // A dim of extent 1 has coordinate 0 everywhere (offset_expr leaves it out).
        for (&d, &st) in t.dims.iter().zip(&t.strides).filter(|(&d, _)| d != 1) {
            let d = i128::from(d.unsigned_abs());
            reach += (d + slack) * i128::from(st.unsigned_abs());
            // Extents themselves become tile coordinates (M = N·P·Q, K = R·S·C): their
            // products are bounded below.
            if d + slack > limit {
                return Ok(false);
            }
        }
        if reach > limit {
            return Ok(false);
        }
    }
    let out = tensor(graph, s.out)?;
    let extents: i128 = out
        .dims
        .iter()
        .map(|&d| i128::from(d.unsigned_abs()))
        .product();
    let (gemm_m, gemm_k) = match &s.main {
        Main::Matmul(mm) => {
            let a = tensor(graph, mm.a)?;
            let last = a.dims.len().saturating_sub(1);
            (
                extents,
                i128::from(a.dims.get(last).copied().unwrap_or(1).unsigned_abs()),
            )
        }
        Main::Conv(cv) => {
            let w = tensor(graph, cv.w)?;
            let k: i128 = w.dims[1..]
                .iter()
                .map(|&d| i128::from(d.unsigned_abs()))
                .product();
            (extents, k)
        }
    };
    Ok(gemm_m + slack <= limit && gemm_k + slack <= limit)
}
