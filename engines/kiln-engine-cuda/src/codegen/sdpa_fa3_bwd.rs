//! `KILN_CUDA_SDPA_FA3_BACKWARD_V1`: the attention backward on Hopper in FlashAttention-3's
//! structure (`kernels/sdpa_fa3_backward.cuh`): a prep kernel (D = rowsum(dO * O), the stats in
//! log2 units, the dq accumulator zeroed, all in the workspace), the main kernel (sm_90a: per
//! block of 128 keys a TMA producer warp and two wgmma consumer warpgroups of 64 keys each, Q,
//! dO, lse and D streamed through an mbarrier ring, dK and dV in registers across the GQA
//! group's heads, dQ reduced into the f32 workspace), and a conversion kernel for dq.
//!
//! Code generation reuses the FA2 engine's prologue (sizes, offsets, lengths, scale, mask) and
//! the FA3 forward's tensor-map recipes and loaders. One plan serves every length up to the
//! graph's (the per-batch lengths are read from the seq_len tensors at run time).
//!
//! It declines, with the reason, what it does not cover; the FA2 engine then runs it: `sdpa`
//! (the forward); a bias tensor; head dims other than 64 and 128 or D_qk != D_v (at 256 the dK
//! and dV accumulators of 64 keys would need 256 registers a thread); q, k, v or do whose head
//! dim is not contiguous or whose other strides are not multiples of 16 bytes.

use super::sdpa::{prologue, Prologue};
use super::sdpa_fa3::{loader, map};
use super::{Kernel, WORKSPACE_ARG};
use kiln_core::ops::sdpa::SdpaBackwardOp;
use kiln_core::{DataType, Op, OpGraph, TensorDesc};
use std::fmt::Write;

/// Keys per block: two consumer warpgroups of 64.
const BLOCK_KEYS: usize = 128;
/// Query rows per tile of the ring.
const TILE_ROWS: usize = 64;
/// setmaxnreg target of the producer; the consumers share what it gives back.
const PRODUCER_REGS: u32 = 40;

/// Stages of the Q/dO ring at head dim `d`.
pub fn stages(d: usize) -> usize {
    match d {
        64 => 4,
        _ => 3,
    }
}

/// Dynamic shared memory of the main kernel: K, V, the stages, the two dS^T tiles, the
/// barriers, 1 KiB of alignment slack.
pub fn shared_bytes(d: usize, stages: usize) -> usize {
    2 * BLOCK_KEYS * d * 2
        + stages * (2 * TILE_ROWS * d * 2 + 1024)
        + 2 * 64 * 64 * 2
        + 8 * (1 + 2 * stages)
        + 1024
}

fn backward(graph: &OpGraph) -> Result<SdpaBackwardOp, String> {
    let [n] = &graph.nodes[..] else {
        return Err("this engine runs one sdpa_backward node".into());
    };
    match &n.op {
        Op::Generic(g) if g.op == "sdpa_backward" => {
            SdpaBackwardOp::from_generic(g, &format!("node '{}'", n.name))
                .map_err(|e| e.to_string())
        }
        Op::Generic(g) if g.op == "sdpa" => Err(format!(
            "node '{}' is sdpa; this engine is the backward only ({} runs the forward)",
            n.name,
            crate::SDPA_FA3_V1
        )),
        other => Err(format!(
            "node '{}' is {}; this engine runs sdpa_backward",
            n.name,
            other.describe()
        )),
    }
}

fn tensor(graph: &OpGraph, uid: i64) -> Result<&TensorDesc, String> {
    graph
        .tensor(uid)
        .ok_or_else(|| format!("no tensor uid {uid}"))
}

/// Accepts one `sdpa_backward` node that the FA2 engine accepts, without a bias, with equal
/// head dims of 64 or 128 and q, k, v, do laid out for the copy engine.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    super::sdpa::supports(graph)?;
    let op = backward(graph)?;
    let inputs = &op.inputs;
    if inputs.bias.is_some() {
        return Err(format!(
            "a bias tensor is not supported here ({} runs it)",
            crate::SDPA_FA2_V1
        ));
    }
    if let Some(t) = graph.tensors.iter().find(|t| t.uid == WORKSPACE_ARG) {
        return Err(format!(
            "{} has uid {WORKSPACE_ARG}, which this engine reserves for its workspace",
            t.label()
        ));
    }
    let q = tensor(graph, inputs.q)?;
    let k = tensor(graph, inputs.k)?;
    let v = tensor(graph, inputs.v)?;
    let d_o = tensor(graph, op.d_o)?;
    let (dqk, dv) = (q.dims[3] as usize, v.dims[3] as usize);
    if dqk != dv || !matches!(dqk, 64 | 128) {
        return Err(format!(
            "head dims {dqk} (q/k) and {dv} (v); this engine takes equal head dims of 64 or 128 \
             ({} runs the others)",
            crate::SDPA_FA2_V1
        ));
    }
    for t in [q, k, v, d_o] {
        if t.data_type != q.data_type {
            return Err(format!(
                "{} is {} and {} is {}",
                t.label(),
                t.data_type,
                q.label(),
                q.data_type
            ));
        }
        map(t, 64)?;
    }
    Ok(())
}

/// S_q rounded up to the query tile.
fn padded_rows(seq_q: usize) -> usize {
    seq_q.div_ceil(TILE_ROWS) * TILE_ROWS
}

/// The workspace: the f32 dq accumulator [B, H_q, SQP, D], then the log2 stats and D
/// [B, H_q, SQP] (SQP: S_q rounded up to 64), in bytes.
pub fn workspace_bytes(graph: &OpGraph) -> Result<u64, String> {
    supports(graph)?;
    let op = backward(graph)?;
    let q = tensor(graph, op.inputs.q)?;
    let rows = q.dims[0] as u64 * q.dims[1] as u64 * padded_rows(q.dims[2] as usize) as u64;
    Ok(4 * rows * (q.dims[3] as u64 + 2))
}

/// `kiln_fa3b_mma_<name>`: m64 x `n` x k16, f32 accumulators; A from registers when `a_regs`,
/// else a shared-memory descriptor; the transpose flags of A (shared memory only) and B.
fn wgmma(name: &str, n: usize, ty: &str, a_regs: bool, trans_a: bool, trans_b: bool) -> String {
    let r = n / 2;
    let list = |count: usize, from: usize| -> String {
        (from..from + count)
            .map(|i| format!("%{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let outs = (0..r)
        .map(|i| format!("\"+f\"(d[{i}])"))
        .collect::<Vec<_>>()
        .join(", ");
    let (a_param, a_operand, a_inputs, next) = if a_regs {
        (
            "const unsigned (&a)[4]",
            format!("{{{}}}", list(4, r)),
            "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), ".to_string(),
            r + 4,
        )
    } else {
        (
            "unsigned long long da",
            format!("%{r}"),
            "\"l\"(da), ".to_string(),
            r + 1,
        )
    };
    let flags = if a_regs {
        format!("p, 1, 1, {}", u8::from(trans_b))
    } else {
        format!("p, 1, 1, {}, {}", u8::from(trans_a), u8::from(trans_b))
    };
    format!(
        "__device__ __forceinline__ void kiln_fa3b_mma_{name}(float (&d)[{r}], {a_param}, unsigned long long db, int scale_d) {{\n\
         \x20   asm volatile(\n\
         \x20       \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{sd}, 0;\\n\"\n\
         \x20       \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} {{{dl}}}, {a_operand}, %{b}, {flags};\\n}}\\n\"\n\
         \x20       : {outs}\n\
         \x20       : {a_inputs}\"l\"(db), \"r\"(scale_d));\n\
         }}\n",
        sd = next + 1,
        dl = list(r, 0),
        b = next,
    )
}

/// Generates the three kernels (prep, main, convert) of an `sdpa_backward` graph that
/// `supports` accepted.
pub fn generate(graph: &OpGraph) -> Result<Vec<Kernel>, String> {
    supports(graph)?;
    let op = backward(graph)?;
    let Prologue {
        src,
        mut args,
        shape,
    } = prologue(graph, crate::SDPA_FA3_BWD_V1)?;
    args.push(WORKSPACE_ARG);
    let d = shape.dim_qk;
    let sqp = padded_rows(shape.seq_q);
    let rows = shape.batch * shape.heads_q * sqp;
    let mut common = src;
    for (key, val) in [
        ("KILN_FA3B_SQP", sqp),
        ("KILN_FA3B_WS_DQ", 0),
        ("KILN_FA3B_WS_LSE", rows * d),
        ("KILN_FA3B_WS_DLT", rows * d + rows),
    ] {
        let _ = writeln!(common, "#define {key} {val}");
    }
    let finish = |prefix: &str, s: String, grid: [u32; 3], block: u32, shared: usize| {
        let sym = super::symbol(prefix, &s);
        (
            sym.clone(),
            s.replace("KILN_SYMBOL", &sym),
            grid,
            block,
            shared,
        )
    };
    let grid_x = |n: usize, per: usize| -> Result<u32, String> {
        u32::try_from(n.div_ceil(per)).map_err(|_| "the grid is too large".to_string())
    };

    let mut prep = common.clone();
    prep.push_str("#define KILN_FA3B_PART 0\n#include \"sdpa_fa3_backward.cuh\"\n");
    let prep = finish("sdpa_fa3b_prep", prep, [grid_x(rows, 8)?, 1, 1], 256, 0);

    let (q, k, v, d_o) = (
        tensor(graph, op.inputs.q)?,
        tensor(graph, op.inputs.k)?,
        tensor(graph, op.inputs.v)?,
        tensor(graph, op.d_o)?,
    );
    let maps = vec![
        map(q, TILE_ROWS)?,
        map(k, BLOCK_KEYS)?,
        map(v, BLOCK_KEYS)?,
        map(d_o, TILE_ROWS)?,
    ];
    let stages = stages(d);
    let mut main = common.clone();
    for (key, val) in [
        ("KILN_FA3B_PART", "1".to_string()),
        ("KILN_FA3B_BN", BLOCK_KEYS.to_string()),
        ("KILN_FA3B_STAGES", stages.to_string()),
        ("KILN_FA3B_PRODUCER_REGS", PRODUCER_REGS.to_string()),
        (
            "KILN_FA3B_CONSUMER_REGS",
            super::hopper::consumer_regs(PRODUCER_REGS).to_string(),
        ),
        (
            "KILN_FA3B_MAP_PARAMS",
            "const __grid_constant__ kiln_tensor_map map_q, const __grid_constant__ \
             kiln_tensor_map map_k, const __grid_constant__ kiln_tensor_map map_v, const \
             __grid_constant__ kiln_tensor_map map_do"
                .to_string(),
        ),
    ] {
        let _ = writeln!(main, "#define {key} {val}");
    }
    main.push_str("#include \"hopper_ptx.cuh\"\n");
    for ((name, t), m) in ["q", "k", "v", "do"].iter().zip([q, k, v, d_o]).zip(&maps) {
        main.push_str(&loader(name, t, m.dims.len()));
    }
    let ty = if q.data_type == DataType::F16 {
        "f16"
    } else {
        "bf16"
    };
    main.push_str(&wgmma("ss", 64, ty, false, false, false));
    main.push_str(&wgmma("rs", d, ty, true, false, true));
    main.push_str(&wgmma("tt", 64, ty, false, true, true));
    main.push_str("#include \"sdpa_fa3_backward.cuh\"\n");
    let blocks = u32::try_from(shape.seq_kv.div_ceil(BLOCK_KEYS))
        .map_err(|_| "too many key blocks".to_string())?;
    let main = finish(
        "sdpa_fa3b_main",
        main,
        [blocks, shape.heads_kv as u32, shape.batch as u32],
        384,
        shared_bytes(d, stages),
    );

    let mut convert = common;
    convert.push_str("#define KILN_FA3B_PART 2\n#include \"sdpa_fa3_backward.cuh\"\n");
    let elems = shape.batch * shape.heads_q * shape.seq_q * d;
    let convert = finish(
        "sdpa_fa3b_convert",
        convert,
        [grid_x(elems, 256)?, 1, 1],
        256,
        0,
    );

    Ok([(prep, false), (main, true), (convert, false)]
        .into_iter()
        .map(|((symbol, source, grid, block, shared), hopper)| Kernel {
            symbol,
            source,
            args: args.clone(),
            grid,
            block: [block, 1, 1],
            shared_bytes: shared as u32,
            maps: if hopper { maps.clone() } else { Vec::new() },
            persistent: false,
            cooperative: false,
            arch_specific: hopper,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_head_dims_fit_the_shared_memory_of_a_hopper_block() {
        for d in [64, 128] {
            assert!(shared_bytes(d, stages(d)) <= 227 * 1024, "d = {d}");
        }
    }

    #[test]
    fn the_wgmma_wrappers_name_every_operand_once() {
        let ss = wgmma("ss", 64, "bf16", false, false, false);
        assert!(ss.contains("m64n64k16.f32.bf16.bf16 {%0,"));
        assert!(ss.contains("%31}, %32, %33, p, 1, 1, 0, 0;"));
        assert!(ss.contains("setp.ne.b32 p, %34, 0;"));
        let rs = wgmma("rs", 128, "f16", true, false, true);
        assert!(rs.contains("%63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;"));
        assert!(rs.contains("setp.ne.b32 p, %69, 0;"));
        let tt = wgmma("tt", 64, "bf16", false, true, true);
        assert!(tt.contains("%32, %33, p, 1, 1, 1, 1;"));
        assert_eq!(rs.matches("\"+f\"").count(), 64);
    }
}
