//! `KILN_CUDA_MATMUL_V1` and `KILN_CUDA_CONV_FPROP_V1`: one tiled GEMM template
//! (`kernels/gemm.cu`) with generated operand loads and a fused pointwise epilogue.
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
    c_type, check_types, emit_pointwise_body, fill, offset_expr, store_stmt, symbol, Kernel,
    Params, COMMON_CUH,
};
use kiln_core::{ConvDirection, ConvOp, DataType, MatmulOp, Op, OpGraph, PointwiseOp, TensorDesc};
use std::collections::HashMap;
use std::fmt::Write;

const TEMPLATE: &str = include_str!("../kernels/gemm.cu");
const BM: i64 = 128;
const BN: i64 = 128;

/// The main node of a GEMM-shaped graph.
enum Main<'g> {
    Matmul(&'g MatmulOp),
    Conv(&'g ConvOp),
}

struct Split<'g> {
    main: Main<'g>,
    out: i64,
    epilogue: Vec<&'g PointwiseOp>,
}

fn split(graph: &OpGraph) -> Result<Split<'_>, String> {
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

fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
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

/// Generates the kernel of a matmul or conv-fprop graph (which `supports` accepted).
pub fn generate(graph: &OpGraph, conv: bool) -> Result<Kernel, String> {
    supports(graph, conv)?;
    let s = split(graph)?;
    let out = tensor(graph, s.out)?;
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
    let params = Params {
        list: inputs
            .iter()
            .map(|&u| (u, false))
            .chain(outputs.iter().map(|&u| (u, true)))
            .collect(),
    };
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
    let mut helpers = String::new();
    let (m, n, k, batches, a_k_fast, b_n_fast, coords, batch_setup);
    let mut row_setup = String::new();
    let (a_vec, a_aligned, b_vec, b_aligned, b_vec_n);
    match &s.main {
        Main::Matmul(mm) => {
            let (a, b) = (tensor(graph, mm.a)?, tensor(graph, mm.b)?);
            m = out.dims[rank - 2];
            n = out.dims[rank - 1];
            k = a.dims[rank - 1];
            batches = out.dims[..rank - 2].iter().product::<i64>();
            // Batch coordinates from blockIdx.z, then each operand's batch offset.
            let mut setup = String::from("    kiln_i64 br = batch;\n");
            for d in (0..rank - 2).rev() {
                let _ = writeln!(
                    setup,
                    "    const kiln_i64 b{d} = br % {}LL; br /= {}LL;",
                    out.dims[d], out.dims[d]
                );
            }
            let bcoords: Vec<String> = (0..rank - 2).map(|d| format!("b{d}")).collect();
            let boff = |t: &TensorDesc| {
                let mut tt = t.clone();
                tt.dims.truncate(rank - 2);
                tt.strides.truncate(rank - 2);
                offset_expr(&tt, &bcoords)
            };
            let _ = writeln!(setup, "    const kiln_idx off_a = (kiln_idx)({});", boff(a));
            let _ = writeln!(setup, "    const kiln_idx off_b = (kiln_idx)({});", boff(b));
            batch_setup = setup;
            let (pa, pb) = (name(a.uid)?, name(b.uid)?);
            let (sam, sak) = (a.strides[rank - 2], a.strides[rank - 1]);
            let (sbk, sbn) = (b.strides[rank - 2], b.strides[rank - 1]);
            let _ = writeln!(
                helpers,
                "#define A_KPREP(gk) const bool ka_ok = (gk) < K; const kiln_idx ka_off = off_a + (gk) * {sak}{sfx};\n\
                 #define LOAD_A(mm, gm) ({pa}[ka_off + (gm) * {sam}{sfx}])\n\
                 #define VLOAD_A(mm, gm) (*reinterpret_cast<const vec_t*>({pa} + ka_off + (gm) * {sam}{sfx}))\n\
                 #define B_KPREP(gk) const bool kb_ok = (gk) < K; const kiln_idx kb_off = off_b + (gk) * {sbk}{sfx};\n\
                 #define LOAD_B(gn) ({pb}[kb_off + (gn) * {sbn}{sfx}])\n\
                 #define VLOAD_B(gn) (*reinterpret_cast<const vec_t*>({pb} + kb_off + (gn) * {sbn}{sfx}))"
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
            a_aligned = format!("((unsigned long long){pa} % 16ULL) == 0");
            let bn = sbn == 1 && n % vec == 0 && others_aligned(b, rank - 1);
            let bk = sbk == 1 && k % vec == 0 && others_aligned(b, rank - 2);
            b_vec = bn || bk;
            b_vec_n = bn;
            b_aligned = format!("((unsigned long long){pb} % 16ULL) == 0");
            let mut c: Vec<String> = bcoords.clone();
            c.push("(gm)".into());
            c.push("(gn)".into());
            coords = c;
        }
        Main::Conv(cv) => {
            let (x, w) = (tensor(graph, cv.x)?, tensor(graph, cv.w)?);
            let (nb, ch, h, wd) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3]);
            let (kk, r, ss) = (w.dims[0], w.dims[2], w.dims[3]);
            let (p, q) = (out.dims[2], out.dims[3]);
            let pr = &cv.params;
            m = nb * p * q;
            n = kk;
            k = r * ss * ch;
            batches = 1;
            batch_setup = String::new();
            let (px, pw) = (name(x.uid)?, name(w.uid)?);
            let sx = &x.strides;
            let sw = &w.strides;
            // Each tile row's output pixel, decomposed once per block: the base offset of its
            // input window and the window's top-left corner (h, w), which may lie in the padding.
            let _ = write!(
                row_setup,
                "    __shared__ kiln_idx row_base[BM], row_h[BM], row_w[BM];\n\
                 \x20   if (tid < BM) {{\n\
                 \x20       const kiln_idx gm = m0 + tid < M ? m0 + tid : M - 1;\n\
                 \x20       const kiln_idx q = gm % {q}{sfx}, t = gm / {q}{sfx}, p = t % {p}{sfx}, n = t / {p}{sfx};\n\
                 \x20       const kiln_idx h = p * {sh}{sfx} - {ph}{sfx}, w = q * {sww}{sfx} - {pwd}{sfx};\n\
                 \x20       row_base[tid] = n * {s0}{sfx} + h * {s2}{sfx} + w * {s3}{sfx};\n\
                 \x20       row_h[tid] = h;\n\
                 \x20       row_w[tid] = w;\n\
                 \x20   }}\n\
                 \x20   __syncthreads();",
                sh = pr.stride[0],
                sww = pr.stride[1],
                ph = pr.pre_padding[0],
                pwd = pr.pre_padding[1],
                s0 = sx[0],
                s2 = sx[2],
                s3 = sx[3],
            );
            // K = (r, s, c), c fastest: decomposed once per K index of a thread.
            let _ = write!(
                helpers,
                "__device__ __forceinline__ bool kiln_in_window(kiln_idx h, kiln_idx w) {{\n\
                 \x20   return h >= 0 && h < {h}{sfx} && w >= 0 && w < {wd}{sfx};\n}}\n\
                 #define A_KPREP(gk) const bool ka_ok = (gk) < K; \\\n\
                 \x20   const kiln_idx ka_c = (gk) % {ch}{sfx}, ka_rs = (gk) / {ch}{sfx}; \\\n\
                 \x20   const kiln_idx ka_h = (ka_rs / {ss}{sfx}) * {dh}{sfx}, ka_w = (ka_rs % {ss}{sfx}) * {dw}{sfx}; \\\n\
                 \x20   const kiln_idx ka_off = ka_c * {s1}{sfx} + ka_h * {s2}{sfx} + ka_w * {s3}{sfx};\n\
                 #define LOAD_A(mm, gm) (kiln_in_window(row_h[mm] + ka_h, row_w[mm] + ka_w) ? {px}[row_base[mm] + ka_off] : kiln_st<elem_t>(0.0f))\n\
                 #define VLOAD_A(mm, gm) (kiln_in_window(row_h[mm] + ka_h, row_w[mm] + ka_w) ? *reinterpret_cast<const vec_t*>({px} + row_base[mm] + ka_off) : kiln_vzero())\n\
                 #define B_KPREP(gk) const bool kb_ok = (gk) < K; \\\n\
                 \x20   const kiln_idx kb_c = (gk) % {ch}{sfx}, kb_rs = (gk) / {ch}{sfx}; \\\n\
                 \x20   const kiln_idx kb_off = kb_c * {w1}{sfx} + (kb_rs / {ss}{sfx}) * {w2}{sfx} + (kb_rs % {ss}{sfx}) * {w3}{sfx};\n\
                 #define LOAD_B(gn) ({pw}[(gn) * {w0}{sfx} + kb_off])\n\
                 #define VLOAD_B(gn) (*reinterpret_cast<const vec_t*>({pw} + (gn) * {w0}{sfx} + kb_off))\n",
                dh = pr.dilation[0],
                dw = pr.dilation[1],
                s1 = sx[1],
                s2 = sx[2],
                s3 = sx[3],
                w0 = sw[0],
                w1 = sw[1],
                w2 = sw[2],
                w3 = sw[3],
            );
            // Channels fastest along K: contiguous when C has the smallest stride (NHWC, KRSC).
            a_k_fast = sx[1] <= sx[3];
            b_n_fast = sw[0] < sw[1];
            // Wide loads along C: a vector never straddles (r, s) when C is a multiple of it.
            a_vec = sx[1] == 1 && ch % vec == 0 && [0, 2, 3].iter().all(|&i| sx[i] % vec == 0);
            a_aligned = format!("((unsigned long long){px} % 16ULL) == 0");
            b_vec = sw[1] == 1 && ch % vec == 0 && [0, 2, 3].iter().all(|&i| sw[i] % vec == 0);
            b_vec_n = false;
            b_aligned = format!("((unsigned long long){pw} % 16ULL) == 0");
            coords = vec![
                format!("(gm / {}{sfx})", p * q),
                "(gn)".into(),
                format!("((gm / {q}{sfx}) % {p}{sfx})"),
                format!("(gm % {q}{sfx})"),
            ];
        }
    }
    // The epilogue: the main result, then every pointwise node.
    let mut values = HashMap::new();
    values.insert(s.out, "acc_".to_string());
    let mut epi = String::new();
    if !out.is_virtual {
        epi.push_str(&store_stmt(
            graph, &params, out, &coords, "acc_", "        ",
        )?);
    }
    epi.push_str(&emit_pointwise_body(
        graph,
        &s.epilogue,
        &params,
        &coords,
        &mut values,
        "        ",
    )?);
    let mut epilogue = String::from(
        "#define EPILOGUE(gm, gn, value) do { \\\n        const float acc_ = (value); \\\n",
    );
    for line in epi.lines() {
        let _ = writeln!(epilogue, "{line} \\");
    }
    epilogue.push_str("    } while (0)\n");
    helpers.push_str(&epilogue);
    let tensor_cores = matches!(elem, DataType::F16 | DataType::Bf16);
    let kernel = fill(
        TEMPLATE,
        &[
            ("ELEM", c_type(elem).ok_or("bad type")?.to_string()),
            ("HELPERS", helpers.trim_end().to_string()),
            ("SYMBOL", "KILN_SYMBOL".into()),
            ("PARAMS", params.declare(graph)?),
            ("IDX", idx.to_string()),
            ("M", format!("{m}{sfx}")),
            ("N", format!("{n}{sfx}")),
            ("K", format!("{k}{sfx}")),
            ("ROW_SETUP", row_setup),
            ("A_VEC", (a_vec as u8).to_string()),
            ("A_ALIGNED", a_aligned),
            ("B_VEC", (b_vec as u8).to_string()),
            ("B_VEC_N", (b_vec_n as u8).to_string()),
            ("B_ALIGNED", b_aligned),
            ("BATCH_SETUP", batch_setup.trim_end().to_string()),
            ("TENSOR_CORES", (tensor_cores as u8).to_string()),
            ("A_K_FAST", (a_k_fast as u8).to_string()),
            ("B_N_FAST", (b_n_fast as u8).to_string()),
        ],
    )?;
    let source = format!("{COMMON_CUH}\n{kernel}");
    let sym = symbol(if conv { "conv_fprop" } else { "matmul" }, &source);
    let source = source.replace("KILN_SYMBOL", &sym);
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
    })
}

/// Whether the kernel can index in 32 bits: every tile coordinate (M, N, K plus a tile of
/// overhang) and every offset it forms into a bound tensor fit below 2^31. Offsets are bounded
/// by each dim's extent plus a tile of overhang plus the convolution's padding and filter
/// reach (window corners may lie in the padding), times the dim's stride; sums of such terms
/// are bounded by the sum over dims, which is what is checked. Arithmetic is in i128, so no
/// shape makes the check itself overflow.
fn fits_i32(graph: &OpGraph, s: &Split<'_>) -> Result<bool, String> {
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
        for (&d, &st) in t.dims.iter().zip(&t.strides) {
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
