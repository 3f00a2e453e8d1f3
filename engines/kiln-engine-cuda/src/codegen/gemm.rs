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

    let mut helpers = String::new();
    let (m, n, k, batches, elem, a_k_fast, b_n_fast, coords, batch_setup);
    match &s.main {
        Main::Matmul(mm) => {
            let (a, b) = (tensor(graph, mm.a)?, tensor(graph, mm.b)?);
            elem = a.data_type;
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
            let _ = setup.len();
            let bcoords: Vec<String> = (0..rank - 2).map(|d| format!("b{d}")).collect();
            let boff = |t: &TensorDesc| {
                let mut tt = t.clone();
                tt.dims.truncate(rank - 2);
                tt.strides.truncate(rank - 2);
                offset_expr(&tt, &bcoords)
            };
            let _ = writeln!(setup, "    const kiln_i64 off_a = {};", boff(a));
            let _ = writeln!(setup, "    const kiln_i64 off_b = {};", boff(b));
            batch_setup = setup;
            let (pa, pb) = (name(a.uid)?, name(b.uid)?);
            let ty = c_type(elem).ok_or("bad type")?;
            let (sam, sak) = (a.strides[rank - 2], a.strides[rank - 1]);
            let (sbk, sbn) = (b.strides[rank - 2], b.strides[rank - 1]);
            let _ = writeln!(
                helpers,
                "#define LOAD_A(gm, gk) ((elem_t){pa}[off_a + (gm) * {sam}LL + (gk) * {sak}LL])"
            );
            let _ = writeln!(
                helpers,
                "#define LOAD_B(gk, gn) ((elem_t){pb}[off_b + (gk) * {sbk}LL + (gn) * {sbn}LL])"
            );
            let _ = ty;
            a_k_fast = sak <= sam;
            b_n_fast = sbn <= sbk;
            let mut c: Vec<String> = bcoords.clone();
            c.push("(gm)".into());
            c.push("(gn)".into());
            coords = c;
        }
        Main::Conv(cv) => {
            let (x, w) = (tensor(graph, cv.x)?, tensor(graph, cv.w)?);
            elem = x.data_type;
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
            let _ = write!(
                helpers,
                "__device__ __forceinline__ elem_t kiln_load_x(const elem_t* __restrict__ x, kiln_i64 gm, kiln_i64 gk) {{\n\
                 \x20   const kiln_i64 q = gm % {q}LL, t = gm / {q}LL, p = t % {p}LL, n = t / {p}LL;\n\
                 \x20   const kiln_i64 c = gk % {ch}LL, rs = gk / {ch}LL, s = rs % {ss}LL, r = rs / {ss}LL;\n\
                 \x20   const kiln_i64 h = p * {sh}LL - {ph}LL + r * {dh}LL, w = q * {sww}LL - {pwd}LL + s * {dw}LL;\n\
                 \x20   if (h < 0 || h >= {h}LL || w < 0 || w >= {wd}LL) {{ return kiln_st<elem_t>(0.0f); }}\n\
                 \x20   return x[n * {s0}LL + c * {s1}LL + h * {s2}LL + w * {s3}LL];\n}}\n\
                 __device__ __forceinline__ elem_t kiln_load_w(const elem_t* __restrict__ w, kiln_i64 gk, kiln_i64 gn) {{\n\
                 \x20   const kiln_i64 c = gk % {ch}LL, rs = gk / {ch}LL, s = rs % {ss}LL, r = rs / {ss}LL;\n\
                 \x20   return w[gn * {w0}LL + c * {w1}LL + r * {w2}LL + s * {w3}LL];\n}}\n\
                 #define LOAD_A(gm, gk) kiln_load_x({px}, gm, gk)\n\
                 #define LOAD_B(gk, gn) kiln_load_w({pw}, gk, gn)\n",
                sh = pr.stride[0],
                sww = pr.stride[1],
                ph = pr.pre_padding[0],
                pwd = pr.pre_padding[1],
                dh = pr.dilation[0],
                dw = pr.dilation[1],
                s0 = sx[0],
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
            coords = vec![
                "(gm / {PQ}LL)".replace("{PQ}", &(p * q).to_string()),
                "(gn)".into(),
                format!("((gm / {q}LL) % {p}LL)"),
                format!("(gm % {q}LL)"),
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
            ("M", m.to_string()),
            ("N", n.to_string()),
            ("K", k.to_string()),
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
