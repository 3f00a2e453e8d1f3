//! `KILN_CUDA_SDPA_FA2_V1`: scaled dot-product attention, forward (one kernel) and backward (a
//! dq kernel and a dk/dv kernel), FlashAttention-2's algorithm on `mma.sync` tensor cores.
//!
//! The kernels live in `kernels/sdpa_*.cuh`; this module writes their prologue: the sizes,
//! each tensor's offset expression from its strides (broadcast dims contribute nothing), the
//! scale (a literal or a read of the scale tensor), the per-batch lengths (reads of the
//! seq_len tensors, else the dims), the mask constants and the tile sizes, chosen so that each
//! kernel's static shared memory stays within 48 KiB. Sequence lengths are maxima: one plan
//! serves every ragged batch up to the graph's lengths, since the kernels take each batch's
//! lengths from its seq_len tensors at run time and skip the tiles those lengths mask.

use super::{c_type, check_types, float_lit, symbol, Kernel, Params};
use kiln_core::ops::sdpa::{DiagonalAlignment, SdpaBackwardOp, SdpaInputs, SdpaOp, SdpaShape};
use kiln_core::{DataType, Op, OpGraph, TensorDesc};
use std::fmt::Write;

/// Rows of queries (forward, dq) or keys (dk/dv) one block owns: 4 warps of 16.
const BLOCK_ROWS: i64 = 64;
/// Static shared memory a kernel may declare.
const SHARED_LIMIT: usize = 48 * 1024;
/// Padding of shared-memory rows, as `KILN_PAD` in `sdpa_common.cuh`.
const PAD: usize = 8;
/// The largest head dim the kernels hold in registers.
const MAX_HEAD_DIM: usize = 256;

enum Node<'a> {
    Forward(SdpaOp, &'a str),
    Backward(SdpaBackwardOp, &'a str),
}

fn node(graph: &OpGraph) -> Result<Node<'_>, String> {
    let [n] = &graph.nodes[..] else {
        return Err(format!(
            "the graph has {} nodes; this engine runs one sdpa or sdpa_backward node",
            graph.nodes.len()
        ));
    };
    let what = format!("node '{}'", n.name);
    match &n.op {
        Op::Generic(g) if g.op == "sdpa" => SdpaOp::from_generic(g, &what)
            .map(|op| Node::Forward(op, &n.name))
            .map_err(|e| e.to_string()),
        Op::Generic(g) if g.op == "sdpa_backward" => SdpaBackwardOp::from_generic(g, &what)
            .map(|op| Node::Backward(op, &n.name))
            .map_err(|e| e.to_string()),
        other => Err(format!(
            "{what} is {}; this engine runs sdpa and sdpa_backward",
            other.describe()
        )),
    }
}

fn inputs<'a>(n: &'a Node<'_>) -> (&'a SdpaInputs, &'a str) {
    match n {
        Node::Forward(f, name) => (&f.inputs, name),
        Node::Backward(b, name) => (&b.inputs, name),
    }
}

fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
    graph
        .tensor(uid)
        .ok_or_else(|| format!("no tensor uid {uid}"))
}

/// Accepts one `sdpa` or `sdpa_backward` node with f16 or bf16 q, k and v, head dims that are
/// multiples of 16 up to 256, and batch and heads within the grid's limits.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    check_types(graph)?;
    let n = node(graph)?;
    let (inputs, name) = inputs(&n);
    let shape = inputs
        .shape(graph, name, &format!("node '{name}'"))
        .map_err(|e| e.to_string())?;
    let q = tensor(graph, inputs.q)?;
    if !matches!(q.data_type, DataType::F16 | DataType::Bf16) {
        return Err(format!(
            "{} is {}; the tensor-core attention kernels take f16 and bf16 q, k and v",
            q.label(),
            q.data_type
        ));
    }
    for (what, d) in [("q/k", shape.dim_qk), ("v", shape.dim_v)] {
        if d % 16 != 0 || d > MAX_HEAD_DIM {
            return Err(format!(
                "the head dim of {what} is {d}; these kernels take multiples of 16 up to \
                 {MAX_HEAD_DIM}"
            ));
        }
    }
    if shape.batch > 65535 || shape.heads_q > 65535 {
        return Err(format!(
            "batch {} and {} heads exceed the grid's limits (65535)",
            shape.batch, shape.heads_q
        ));
    }
    if shape.seq_q > i32::MAX as usize / 2 || shape.seq_kv > i32::MAX as usize / 2 {
        return Err("sequence lengths must stay below 2^30".into());
    }
    Ok(())
}

/// The offset macro of tensor `t`: `#define KILN_<NAME>_OFF(b, h, s, d) ...`.
fn offset_macro(src: &mut String, name: &str, t: &TensorDesc) {
    let terms: Vec<String> = ["b", "h", "s", "d"]
        .iter()
        .zip(t.dims.iter().zip(&t.strides))
        .filter(|(_, (&dim, &stride))| dim != 1 && stride != 0)
        .map(|(c, (_, &stride))| format!("(kiln_i64)({c}) * {stride}LL"))
        .collect();
    let expr = if terms.is_empty() {
        "0LL".to_string()
    } else {
        terms.join(" + ")
    };
    let _ = writeln!(src, "#define KILN_{name}_OFF(b, h, s, d) ({expr})");
}

/// Largest of 64, 32, 16 whose shared memory (`bytes(tile)`) fits.
fn tile(bytes: impl Fn(usize) -> usize) -> Result<usize, String> {
    [64usize, 32, 16]
        .into_iter()
        .find(|&t| bytes(t) <= SHARED_LIMIT)
        .ok_or_else(|| "no tile fits in 48 KiB of shared memory".to_string())
}

/// Tile sizes: (forward keys per tile, dq keys per tile, dk/dv queries per tile).
pub fn tiles(shape: &SdpaShape) -> Result<(usize, usize, usize), String> {
    let (dqk, dv) = (shape.dim_qk, shape.dim_v);
    let fwd = tile(|bn| 2 * (bn * (dqk + PAD) + dv * (bn + PAD)))?;
    let dq = tile(|bn| 2 * (bn * (dqk + PAD) + dqk * (bn + PAD) + bn * (dv + PAD)))?;
    let dkdv = tile(|bm| {
        2 * (bm * (dqk + PAD) + dqk * (bm + PAD) + bm * (dv + PAD) + dv * (bm + PAD)) + 8 * bm
    })?;
    Ok((fwd, dq, dkdv))
}

/// What every attention kernel's source starts with: the prologue `sdpa_common.cuh` documents
/// (sizes, offsets, lengths, scale, mask, parameter list), and the kernel's tensor arguments.
pub(super) struct Prologue {
    pub src: String,
    pub args: Vec<i64>,
    pub shape: SdpaShape,
}

/// The prologue of the graph's node for engine `engine` (named in the source's first line).
pub(super) fn prologue(graph: &OpGraph, engine: &str) -> Result<Prologue, String> {
    let n = node(graph)?;
    let (inputs, name) = inputs(&n);
    let shape = inputs
        .shape(graph, name, &format!("node '{name}'"))
        .map_err(|e| e.to_string())?;
    // Parameters: the operands (inputs, const) in port order, then the outputs.
    let mut named: Vec<(&str, i64, bool)> = vec![
        ("Q", inputs.q, false),
        ("K", inputs.k, false),
        ("V", inputs.v, false),
    ];
    match &n {
        Node::Forward(f, _) => {
            named.push(("O", f.o, true));
            if let Some(s) = f.stats {
                named.push(("STATS", s, true));
            }
        }
        Node::Backward(bw, _) => {
            named.push(("O", bw.o, false));
            named.push(("DO", bw.d_o, false));
            named.push(("STATS", bw.stats, false));
            named.push(("DQ", bw.dq, true));
            named.push(("DK", bw.dk, true));
            named.push(("DV", bw.dv, true));
        }
    }
    let scale_tensor = match inputs.attn_scale {
        kiln_core::ops::sdpa::AttnScale::Tensor(uid) => {
            (tensor(graph, uid)?.scalar.is_none()).then_some(uid)
        }
        kiln_core::ops::sdpa::AttnScale::Value(_) => None,
    };
    for (port, uid) in [
        ("SCALE_TENSOR", scale_tensor),
        ("BIAS", inputs.bias),
        ("SEQ_LEN_Q", inputs.seq_len_q),
        ("SEQ_LEN_KV", inputs.seq_len_kv),
    ] {
        if let Some(uid) = uid {
            named.push((port, uid, false));
        }
    }
    let mut order: Vec<usize> = (0..named.len()).collect();
    order.sort_by_key(|&i| named[i].2);
    let params = Params {
        list: order.iter().map(|&i| (named[i].1, named[i].2)).collect(),
    };

    let mut src = format!(
        "// Generated by kiln's CUDA kernel provider ({engine}).\n#include \"common.cuh\"\n"
    );
    let q = tensor(graph, inputs.q)?;
    let elem = c_type(q.data_type).ok_or("q has no CUDA type")?;
    let define = |src: &mut String, key: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(src, "#define {key} {v}");
    };
    let _ = writeln!(src, "typedef {elem} elem_t;");
    define(
        &mut src,
        "KILN_SDPA_BF16",
        &u8::from(q.data_type == DataType::Bf16),
    );
    for (key, v) in [
        ("KILN_BATCH", shape.batch),
        ("KILN_HEADS_Q", shape.heads_q),
        ("KILN_HEADS_KV", shape.heads_kv),
        ("KILN_GROUP", shape.group()),
        ("KILN_SEQ_Q", shape.seq_q),
        ("KILN_SEQ_KV", shape.seq_kv),
        ("KILN_D_QK", shape.dim_qk),
        ("KILN_D_V", shape.dim_v),
    ] {
        define(&mut src, key, &v);
    }
    for &(key, uid, written) in &named {
        let t = tensor(graph, uid)?;
        let p = params
            .name(uid)
            .ok_or_else(|| format!("{} is not a parameter", t.label()))?;
        define(&mut src, &format!("KILN_{key}"), &p);
        offset_macro(&mut src, key, t);
        if written {
            let ty = c_type(t.data_type).ok_or_else(|| format!("{}: no CUDA type", t.label()))?;
            define(&mut src, &format!("KILN_{key}_T"), &ty);
        }
    }
    // 16-byte reads along the head dim: the q/k/v type, a contiguous head dim of a multiple of 8
    // and every other stride a multiple of 8 (so every row starts 16-byte aligned).
    for key in ["Q", "K", "V", "DO"] {
        let vec = match named.iter().find(|(k, _, _)| *k == key) {
            Some(&(_, uid, _)) => {
                let t = tensor(graph, uid)?;
                t.data_type == q.data_type
                    && t.strides[3] == 1
                    && t.dims[3] % 8 == 0
                    && t.dims[..3]
                        .iter()
                        .zip(&t.strides[..3])
                        .all(|(&d, &st)| d == 1 || st % 8 == 0)
            }
            None => false,
        };
        define(&mut src, &format!("KILN_VEC_{key}"), &u8::from(vec));
    }
    define(
        &mut src,
        "KILN_HAS_STATS",
        &u8::from(named.iter().any(|(k, _, _)| *k == "STATS")),
    );
    define(&mut src, "KILN_HAS_BIAS", &u8::from(inputs.bias.is_some()));
    for (key, port, max) in [
        ("KILN_LEN_Q(b)", inputs.seq_len_q, "KILN_SEQ_Q"),
        ("KILN_LEN_KV(b)", inputs.seq_len_kv, "KILN_SEQ_KV"),
    ] {
        let v = match port {
            Some(_) => {
                let base = if key.contains("KV") {
                    "SEQ_LEN_KV"
                } else {
                    "SEQ_LEN_Q"
                };
                format!("kiln_len(KILN_{base}[KILN_{base}_OFF(b, 0, 0, 0)], {max})")
            }
            None => max.to_string(),
        };
        define(&mut src, key, &v);
    }
    let scale = match (scale_tensor, inputs.static_scale(graph, name)) {
        (Some(_), _) => "(KILN_SCALE_TENSOR[0])".to_string(),
        (None, Ok(Some(v))) => float_lit(v),
        (None, other) => {
            return Err(format!(
                "attn_scale has no value before execute and no tensor: {other:?}"
            ))
        }
    };
    define(&mut src, "KILN_SCALE", &scale);
    let mask = inputs.mask;
    define(
        &mut src,
        "KILN_MASK_BR",
        &u8::from(mask.alignment == DiagonalAlignment::BottomRight),
    );
    define(
        &mut src,
        "KILN_MASK_HAS_LEFT",
        &u8::from(mask.left.is_some()),
    );
    define(
        &mut src,
        "KILN_MASK_LEFT",
        &format!("{}LL", mask.left.unwrap_or(0)),
    );
    define(
        &mut src,
        "KILN_MASK_HAS_RIGHT",
        &u8::from(mask.right.is_some()),
    );
    define(
        &mut src,
        "KILN_MASK_RIGHT",
        &format!("{}LL", mask.right.unwrap_or(0)),
    );
    let uids: Vec<String> = params.list.iter().map(|(u, _)| u.to_string()).collect();
    let _ = writeln!(
        src,
        "// The kernel's parameters: tensor UIDs {} as p0...",
        uids.join(", ")
    );
    define(&mut src, "KILN_SDPA_SYMBOL", &"KILN_SYMBOL");
    define(&mut src, "KILN_SDPA_PARAMS", &params.declare(graph)?);

    Ok(Prologue {
        src,
        args: params.list.iter().map(|&(u, _)| u).collect(),
        shape,
    })
}

/// Generates the kernels of the graph's node: one for `sdpa`, two (dq, then dk/dv) for
/// `sdpa_backward`.
pub fn generate(graph: &OpGraph) -> Result<Vec<Kernel>, String> {
    supports(graph)?;
    let n = node(graph)?;
    let Prologue { src, args, shape } = prologue(graph, crate::SDPA_FA2_V1)?;
    let (bn_fwd, bn_dq, bm_dkdv) = tiles(&shape)?;
    let blocks = |s: usize| (s as i64 + BLOCK_ROWS - 1) / BLOCK_ROWS;
    let kernel = |prefix: &str, tile_key: &str, tile: usize, file: &str, grid: [u32; 3]| {
        let mut s = src.clone();
        let _ = writeln!(s, "#define {tile_key} {tile}\n#include \"{file}\"");
        let sym = symbol(prefix, &s);
        Kernel {
            symbol: sym.clone(),
            source: s.replace("KILN_SYMBOL", &sym),
            args: args.clone(),
            grid,
            block: [128, 1, 1],
            shared_bytes: 0,
            maps: Vec::new(),
            persistent: false,
            cooperative: false,
            arch_specific: false,
        }
    };
    let grid = |rows: usize, heads: usize| -> Result<[u32; 3], String> {
        let x = u32::try_from(blocks(rows)).map_err(|_| "too many row blocks".to_string())?;
        Ok([x, heads as u32, shape.batch as u32])
    };
    Ok(match n {
        Node::Forward(..) => vec![kernel(
            "sdpa_fwd",
            "KILN_BN",
            bn_fwd,
            "sdpa_forward.cuh",
            grid(shape.seq_q, shape.heads_q)?,
        )],
        Node::Backward(..) => vec![
            kernel(
                "sdpa_bwd_dq",
                "KILN_BN",
                bn_dq,
                "sdpa_backward_dq.cuh",
                grid(shape.seq_q, shape.heads_q)?,
            ),
            kernel(
                "sdpa_bwd_dkdv",
                "KILN_BMQ",
                bm_dkdv,
                "sdpa_backward_dkdv.cuh",
                grid(shape.seq_kv, shape.heads_kv)?,
            ),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: usize) -> SdpaShape {
        SdpaShape {
            batch: 1,
            heads_q: 1,
            heads_kv: 1,
            seq_q: 1,
            seq_kv: 1,
            dim_qk: d,
            dim_v: d,
        }
    }

    #[test]
    fn tiles_fit_in_shared_memory() {
        assert_eq!(tiles(&shape(64)).unwrap(), (64, 64, 64));
        assert_eq!(tiles(&shape(128)).unwrap(), (64, 32, 32));
        assert_eq!(tiles(&shape(256)).unwrap(), (32, 16, 16));
    }
}
