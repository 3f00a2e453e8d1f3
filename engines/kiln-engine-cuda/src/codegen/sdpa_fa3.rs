//! `KILN_CUDA_SDPA_FA3_V1`: the attention forward on Hopper (sm_90a only) in
//! FlashAttention-3's structure (`kernels/sdpa_fa3_forward.cuh`): a producer warp loads Q, K and
//! V tiles by TMA into an mbarrier ring, two consumer warpgroups run S = Q K^T and O += P V on
//! wgmma with P kept in registers, in ping-pong, with an f32 online softmax.
//!
//! Code generation reuses the FA2 engine's prologue (sizes, offsets, lengths, scale, mask) and
//! adds the tile configuration, the three tensor maps' recipes and loaders, and the two wgmma
//! instructions. Like the FA2 kernels, one plan serves every length up to the graph's (the
//! per-batch lengths are read from the seq_len tensors at run time), and every diagonal band
//! (causal top-left or bottom-right, sliding windows) skips the tiles it masks for a whole
//! block.
//!
//! It declines, with the reason, what it does not cover; the FA2 engine then runs it:
//! `sdpa_backward`; a bias tensor; head dims other than 64, 128 and 256 or D_qk != D_v;
//! q, k, v whose head dim is not contiguous or whose other strides are not multiples of
//! 16 bytes (the copy engine's rule).

use super::sdpa::{prologue, Prologue};
use super::{Kernel, TensorMapRecipe};
use kiln_core::ops::sdpa::SdpaOp;
use kiln_core::{DataType, Op, OpGraph, TensorDesc};
use std::fmt::Write;

/// Query rows per consumer warpgroup.
const CONSUMER_ROWS: usize = 64;

/// Keys per tile and ring depth for a head dim: as many stages as fit beside Q in the 227 KiB
/// a Hopper block may use. At d = 128 the third stage (224 KiB in all) is worth 1.3x over two
/// on an H200 (docs/benchmarks/sdpa-fa3-notes.md); at d = 64 a fifth gives nothing.
pub fn config(d: usize) -> Option<(usize, usize)> {
    match d {
        64 => Some((128, 4)),
        128 => Some((128, 3)),
        256 => Some((64, 2)),
        _ => None,
    }
}

/// A schedule variant, picked by the engine's `tile` knob (value `v > 0` is `VARIANTS[v - 1]`;
/// 0 is the first). `kiln build --autotune` times them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// The consumers issue their GEMMs in turn (named barriers).
    pub pingpong: bool,
    /// One stage more than the head dim's default, where it fits.
    pub extra_stage: bool,
    /// Tiles of 64 keys instead of the head dim's default.
    pub narrow_keys: bool,
    /// Three consumer warpgroups (192 query rows per block) instead of two, at head dim 64
    /// only (their registers: 160 each beside a producer of 24); elsewhere two.
    pub three_consumers: bool,
    /// A persistent grid (one CTA per SM at most, set at load) that runs blocks one after
    /// another, loading the next block's Q and first tiles under this one's last tiles and
    /// epilogue. With ping-pong, the consumers' turns restart at every block (each block's
    /// turns are balanced: every arrive is answered within the block).
    pub persistent: bool,
    /// Persistent CTAs take their blocks in a snake order (odd rounds backwards) instead of
    /// round-robin, which balances blocks of unequal lengths (causal, ragged).
    pub snake: bool,
    /// Persistent CTAs load the next block's Q earlier: a consumer releases Q once its
    /// block's last S = Q K^T has retired (not after the last softmax), and Q is
    /// double-buffered where shared memory allows (d = 64), so that it loads a block ahead.
    pub early_q: bool,
    /// O leaves through shared memory and the copy engine (staged in the block's last ring
    /// stage) instead of by stores from registers, where O's layout allows a tensor map.
    pub store_o: bool,
}

/// Variants 1-15 of the `tile` knob: O stored from registers.
const REGISTER_STORE: [Variant; 15] = [
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: true,
        narrow_keys: false,
        three_consumers: false,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: true,
        narrow_keys: true,
        three_consumers: false,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: false,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: true,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: true,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: true,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: true,
        snake: false,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: true,
        snake: true,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: false,
        persistent: true,
        snake: true,
        early_q: true,
        store_o: false,
    },
    Variant {
        pingpong: false,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: true,
        snake: true,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: true,
        snake: true,
        early_q: false,
        store_o: false,
    },
    Variant {
        pingpong: true,
        extra_stage: false,
        narrow_keys: false,
        three_consumers: true,
        persistent: true,
        snake: true,
        early_q: true,
        store_o: false,
    },
];

/// The `tile` knob's variants (value `v` is `VARIANTS[v - 1]`): 1-15 store O from registers,
/// 16-21 are variants 7, 12, 14, 15, 5 and 2 with O through shared memory and the copy engine
/// (`store_o`).
pub const VARIANTS: [Variant; 21] = {
    let mut all = [REGISTER_STORE[0]; 21];
    let mut i = 0;
    while i < REGISTER_STORE.len() {
        all[i] = REGISTER_STORE[i];
        i += 1;
    }
    let stored = [7, 12, 14, 15, 5, 2];
    let mut j = 0;
    while j < stored.len() {
        all[REGISTER_STORE.len() + j] = Variant {
            store_o: true,
            ..REGISTER_STORE[stored[j] - 1]
        };
        j += 1;
    }
    all
};

/// The shared memory a Hopper block may use.
const SHARED_LIMIT: usize = 227 * 1024;

/// Consumer warpgroups of `variant` at head dim `d`.
pub fn consumers(d: usize, variant: Variant) -> usize {
    if variant.three_consumers && d == 64 {
        3
    } else {
        2
    }
}

/// Keys per tile and stages of `variant` at head dim `d`.
pub fn tiles(d: usize, variant: Variant) -> Option<(usize, usize)> {
    let (mut bn, mut stages) = config(d)?;
    if variant.narrow_keys {
        bn = 64;
    }
    let rows = CONSUMER_ROWS * consumers(d, variant);
    if variant.extra_stage && shared_bytes(rows, d, bn, stages + 1) <= SHARED_LIMIT {
        stages += 1;
    }
    Some((bn, stages))
}

/// Dynamic shared memory of a launch with `rows` query rows per block: Q, the stages, the
/// barriers, 1 KiB of alignment slack.
pub fn shared_bytes(rows: usize, d: usize, bn: usize, stages: usize) -> usize {
    rows * d * 2 + stages * 2 * bn * d * 2 + 8 * (1 + 3 * stages) + 1024
}

/// setmaxnreg targets (producer, consumers) for a block with `consumers` consumer warpgroups.
/// Two: the producer keeps 40 of the 168 registers a 384-thread block starts with and the
/// consumers share the rest. Three: a 512-thread block starts with 128; the producer keeps the
/// minimum, 24, and each consumer gets (65536 - 128 * 24) / 384 rounded down to 8: 160.
fn registers(consumers: usize) -> (u32, u32) {
    if consumers == 3 {
        (24, 160)
    } else {
        (40, super::hopper::consumer_regs(40))
    }
}

fn forward(graph: &OpGraph) -> Result<SdpaOp, String> {
    let [n] = &graph.nodes[..] else {
        return Err("this engine runs one sdpa node".into());
    };
    match &n.op {
        Op::Generic(g) if g.op == "sdpa" => {
            SdpaOp::from_generic(g, &format!("node '{}'", n.name)).map_err(|e| e.to_string())
        }
        Op::Generic(g) if g.op == "sdpa_backward" => Err(format!(
            "node '{}' is sdpa_backward; this engine is the forward only ({} runs the backward)",
            n.name,
            crate::SDPA_FA2_V1
        )),
        other => Err(format!(
            "node '{}' is {}; this engine runs sdpa",
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

/// The tensor map of q, k or v (logical dims [B, H, S, D]): D innermost and contiguous, then S,
/// then H and B where their extent is not 1; boxes of 64 head-dim elements by `rows`.
pub(super) fn map(t: &TensorDesc, rows: usize) -> Result<TensorMapRecipe, String> {
    if t.strides[3] != 1 {
        return Err(format!(
            "{} has head-dim stride {}; the tensor memory accelerator needs a contiguous head dim",
            t.label(),
            t.strides[3]
        ));
    }
    let stride = |i: usize| -> Result<u64, String> {
        let s = t.strides[i];
        if s <= 0 || s % 8 != 0 || s >= 1 << 39 {
            return Err(format!(
                "{} has strides {:?}; the tensor memory accelerator needs strides of the batch, \
                 head and sequence dims that are positive multiples of 8 elements (16 bytes)",
                t.label(),
                t.strides
            ));
        }
        Ok(s as u64 * 2)
    };
    let mut dims = vec![t.dims[3] as u64, t.dims[2] as u64];
    // A single row: any valid stride (the span check sees one row).
    let mut strides = vec![if t.dims[2] == 1 { 16 } else { stride(2)? }];
    for i in [1, 0] {
        if t.dims[i] != 1 {
            dims.push(t.dims[i] as u64);
            strides.push(stride(i)?);
        }
    }
    let mut box_dims = vec![64u32, rows as u32];
    box_dims.resize(dims.len(), 1);
    Ok(TensorMapRecipe {
        uid: t.uid,
        data_type: t.data_type,
        dims,
        strides,
        box_dims,
    })
}

/// The coordinates (head-dim column `d`, row `s`, head `h`, batch `b`) of the dims the map of
/// `t` (see [`map`]) has.
fn coords(t: &TensorDesc, rank: usize) -> String {
    let mut coords = vec!["d", "s"];
    if t.dims[1] != 1 {
        coords.push("h");
    }
    if t.dims[0] != 1 {
        coords.push("b");
    }
    debug_assert_eq!(coords.len(), rank);
    coords.join(", ")
}

/// `kiln_fa3_tma_<name>(dst, map, bar, d, s, h, b)` over the map of `t`.
pub(super) fn loader(name: &str, t: &TensorDesc, rank: usize) -> String {
    format!(
        "__device__ __forceinline__ void kiln_fa3_tma_{name}(unsigned dst, const kiln_tensor_map* map, unsigned bar, int d, int s, int h, int b) {{\n\
         \x20   (void)h;\n\
         \x20   (void)b;\n\
         \x20   kiln_tma_load_{rank}d(dst, map, bar, {});\n\
         }}\n",
        coords(t, rank)
    )
}

/// `kiln_fa3_tma_store_o(src, map, d, s, h, b)`: one box from shared memory at `src` to O at
/// those coordinates, over the map of `o`.
fn storer(o: &TensorDesc, rank: usize) -> String {
    format!(
        "__device__ __forceinline__ void kiln_fa3_tma_store_o(unsigned src, const kiln_tensor_map* map, int d, int s, int h, int b) {{\n\
         \x20   (void)h;\n\
         \x20   (void)b;\n\
         \x20   kiln_tma_store_{rank}d(src, map, {});\n\
         }}\n",
        coords(o, rank)
    )
}

/// The two wgmma instructions: `kiln_fa3_mma_qk` (m64 x `bn` x k16, A and B K-major in shared
/// memory) and `kiln_fa3_mma_pv` (m64 x `dv` x k16, A from registers, B N-major).
fn mma_wrappers(bn: usize, dv: usize, ty: &str) -> String {
    let list = |n: usize, from: usize| -> String {
        (from..from + n)
            .map(|i| format!("%{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let outs = |n: usize, name: &str| -> String {
        (0..n)
            .map(|i| format!("\"+f\"({name}[{i}])"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (rs, ro) = (bn / 2, dv / 2);
    format!(
        "__device__ __forceinline__ void kiln_fa3_mma_qk(float (&d)[{rs}], unsigned long long da, unsigned long long db, int scale_d) {{\n\
         \x20   asm volatile(\n\
         \x20       \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{qs}, 0;\\n\"\n\
         \x20       \"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.{ty}.{ty} {{{qd}}}, %{qa}, %{qb}, p, 1, 1, 0, 0;\\n}}\\n\"\n\
         \x20       : {qo}\n\
         \x20       : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n\
         }}\n\
         __device__ __forceinline__ void kiln_fa3_mma_pv(float (&d)[{ro}], const unsigned (&a)[4], unsigned long long db, int scale_d) {{\n\
         \x20   asm volatile(\n\
         \x20       \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{ps}, 0;\\n\"\n\
         \x20       \"wgmma.mma_async.sync.aligned.m64n{dv}k16.f32.{ty}.{ty} {{{pd}}}, {{{pa}}}, %{pb}, p, 1, 1, 1;\\n}}\\n\"\n\
         \x20       : {po}\n\
         \x20       : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(scale_d));\n\
         }}\n",
        qs = rs + 2,
        qd = list(rs, 0),
        qa = rs,
        qb = rs + 1,
        qo = outs(rs, "d"),
        ps = ro + 5,
        pd = list(ro, 0),
        pa = list(4, ro),
        pb = ro + 4,
        po = outs(ro, "d"),
    )
}

/// Accepts one `sdpa` node that the FA2 engine accepts, without a bias, with equal head dims of
/// 64, 128 or 256 and q, k, v laid out for the copy engine.
pub fn supports(graph: &OpGraph) -> Result<(), String> {
    super::sdpa::supports(graph)?;
    let op = forward(graph)?;
    let inputs = &op.inputs;
    if inputs.bias.is_some() {
        return Err(format!(
            "a bias tensor is not supported here ({} runs it)",
            crate::SDPA_FA2_V1
        ));
    }
    let q = tensor(graph, inputs.q)?;
    let k = tensor(graph, inputs.k)?;
    let v = tensor(graph, inputs.v)?;
    let (dqk, dv) = (q.dims[3] as usize, v.dims[3] as usize);
    if dqk != dv || config(dqk).is_none() {
        return Err(format!(
            "head dims {dqk} (q/k) and {dv} (v); this engine takes equal head dims of 64, 128 or \
             256 ({} runs the others)",
            crate::SDPA_FA2_V1
        ));
    }
    for t in [q, k, v] {
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

/// The variant the `tile` knob's 0 picks at head dim `d` over `seq_kv` keys, `right` when the
/// mask has a right bound (causal, band), measured on an H200
/// (docs/benchmarks/sdpa-fa3-notes.md, sessions 6, 8 and 10):
/// - up to 4k keys at d = 128 and up to 1k at d = 64: persistent blocks of two consumers in a
///   snake, with the early Q release and O stored by the copy engine (variant 17). In one call
///   against the persistent round-robin variant 7: 1.10x at 1k d128 (0.0630 against 0.0694 ms),
///   1.07x at 1k d64, 1.03x at 4k d128; against variant 12 (the same storing O from registers,
///   the previous default on causal and ragged batches) 1.02-1.11x there.
/// - d = 64 causal up to 4k keys: three consumers in ping-pong, persistent, in a snake, O by the
///   copy engine (variant 18; 1.02x over variant 14, which stores from registers).
/// - beyond: one block per CTA storing O from registers (the copy engine's store measured
///   0.99-1.01x there), at d = 128 without ping-pong (persistent blocks were 0.89x at 16k
///   causal, 0.99x non-causal), at d = 64 three consumers in ping-pong (persistent blocks
///   0.82-0.98x of them at 4k non-causal, variants 17 and 19 0.93x).
/// - otherwise the first.
pub fn default_variant(d: usize, seq_kv: usize, right: bool) -> Variant {
    match d {
        64 if seq_kv <= 1024 => VARIANTS[16],
        64 if seq_kv <= 4096 && right => VARIANTS[17],
        64 => VARIANTS[4],
        128 if seq_kv <= 4096 => VARIANTS[16],
        128 => VARIANTS[1],
        _ => VARIANTS[0],
    }
}

/// Generates the kernel of an `sdpa` graph that `supports` accepted, with schedule `variant`
/// (`None`: [`default_variant`] of its head dim).
pub fn generate(graph: &OpGraph, variant: Option<Variant>) -> Result<Kernel, String> {
    supports(graph)?;
    let op = forward(graph)?;
    let variant = variant.unwrap_or_else(|| {
        let d = tensor(graph, op.inputs.q).map_or(0, |q| q.dims[3] as usize);
        let seq_kv = tensor(graph, op.inputs.k).map_or(0, |k| k.dims[2] as usize);
        default_variant(d, seq_kv, op.inputs.mask.right.is_some())
    });
    let Prologue {
        mut src,
        args,
        shape,
    } = prologue(graph, crate::SDPA_FA3_V1)?;
    let d = shape.dim_qk;
    let (bn, stages) = tiles(d, variant).ok_or("no tile configuration")?;
    let consumers = consumers(d, variant);
    let rows = CONSUMER_ROWS * consumers;
    let (q, k, v, o) = (
        tensor(graph, op.inputs.q)?,
        tensor(graph, op.inputs.k)?,
        tensor(graph, op.inputs.v)?,
        tensor(graph, op.o)?,
    );
    let mut maps = vec![map(q, rows)?, map(k, bn)?, map(v, 64)?];
    // O leaves through shared memory and the copy engine where its layout allows a map (16-bit
    // like q, a contiguous head dim, strides of 16 bytes) and the block's rows fit in one stage
    // (the epilogue of kernels/sdpa_fa3_forward.cuh); otherwise by stores from registers.
    let o_map = map(o, 64).ok().filter(|_| {
        variant.store_o && o.data_type == q.data_type && rows * shape.dim_v <= 2 * bn * d
    });
    let store_o = o_map.is_some();
    maps.extend(o_map);
    // Two consecutive head-dim elements of O as one store: a contiguous head dim and even
    // strides elsewhere (so every pair starts at an even element).
    // Persistent blocks need 8 bytes more for their barrier; a variant that asks for them
    // where those do not fit runs one block per CTA. Early Q release double-buffers Q where a
    // second Q buffer and its two barriers fit.
    let persistent = variant.persistent && shared_bytes(rows, d, bn, stages) + 8 <= SHARED_LIMIT;
    let early_q = persistent && variant.early_q;
    let (producer_regs, consumer_regs) = registers(consumers);
    let q_bytes = rows * d * 2;
    let qbufs = if early_q && shared_bytes(rows, d, bn, stages) + 8 + q_bytes + 16 <= SHARED_LIMIT {
        2
    } else {
        1
    };
    let blocks = shape.seq_q.div_ceil(rows);
    let pair = o.strides[3] == 1
        && o.dims[..3]
            .iter()
            .zip(&o.strides[..3])
            .all(|(&dim, &st)| dim == 1 || st % 2 == 0);
    for (key, val) in [
        ("KILN_FA3_BN", bn.to_string()),
        ("KILN_FA3_STAGES", stages.to_string()),
        ("KILN_FA3_PRODUCER_REGS", producer_regs.to_string()),
        ("KILN_FA3_CONSUMER_REGS", consumer_regs.to_string()),
        ("KILN_FA3_PINGPONG", u8::from(variant.pingpong).to_string()),
        ("KILN_FA3_CONSUMERS", consumers.to_string()),
        ("KILN_FA3_PERSISTENT", u8::from(persistent).to_string()),
        ("KILN_FA3_QBLOCKS", blocks.to_string()),
        (
            "KILN_FA3_SNAKE",
            u8::from(persistent && variant.snake).to_string(),
        ),
        ("KILN_FA3_EARLY_Q", u8::from(early_q).to_string()),
        ("KILN_FA3_QBUFS", qbufs.to_string()),
        ("KILN_O_PAIR", u8::from(pair).to_string()),
        ("KILN_FA3_STORE_O", u8::from(store_o).to_string()),
        (
            "KILN_FA3_MAP_PARAMS",
            format!(
                "const __grid_constant__ kiln_tensor_map map_q, const __grid_constant__ \
                 kiln_tensor_map map_k, const __grid_constant__ kiln_tensor_map map_v{}",
                if store_o {
                    ", const __grid_constant__ kiln_tensor_map map_o"
                } else {
                    ""
                }
            ),
        ),
    ] {
        let _ = writeln!(src, "#define {key} {val}");
    }
    src.push_str("#include \"hopper_ptx.cuh\"\n");
    for ((name, t), m) in ["q", "k", "v"].iter().zip([q, k, v]).zip(&maps) {
        src.push_str(&loader(name, t, m.dims.len()));
    }
    if let Some(m) = maps.get(3) {
        src.push_str(&storer(o, m.dims.len()));
    }
    let ty = if q.data_type == DataType::F16 {
        "f16"
    } else {
        "bf16"
    };
    src.push_str(&mma_wrappers(bn, shape.dim_v, ty));
    src.push_str("#include \"sdpa_fa3_forward.cuh\"\n");
    let sym = super::symbol("sdpa_fa3_fwd", &src);
    let too_many = || "too many query tiles".to_string();
    // Persistent: one linear grid (capped at the SM count at load) and the Q_EMPTY barrier.
    let (grid, extra) = if persistent {
        let total = (blocks as u64)
            .checked_mul(shape.heads_q as u64)
            .and_then(|v| v.checked_mul(shape.batch as u64))
            .ok_or_else(too_many)?;
        (
            [u32::try_from(total).map_err(|_| too_many())?, 1, 1],
            8 + (qbufs - 1) * (q_bytes + 16),
        )
    } else {
        let x = u32::try_from(blocks).map_err(|_| too_many())?;
        ([x, shape.heads_q as u32, shape.batch as u32], 0)
    };
    Ok(Kernel {
        symbol: sym.clone(),
        source: src.replace("KILN_SYMBOL", &sym),
        args,
        grid,
        block: [128 * (1 + consumers as u32), 1, 1],
        shared_bytes: (shared_bytes(rows, d, bn, stages) + extra) as u32,
        maps,
        persistent,
        cooperative: false,
        arch_specific: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configuration_fits_the_shared_memory_of_a_hopper_block() {
        for d in [64, 128, 256] {
            for v in VARIANTS {
                let (bn, stages) = tiles(d, v).unwrap();
                let rows = CONSUMER_ROWS * consumers(d, v);
                assert!(
                    shared_bytes(rows, d, bn, stages) <= SHARED_LIMIT,
                    "d = {d}, {v:?}"
                );
                assert!(stages >= 2 && bn % 64 == 0);
            }
        }
        assert_eq!(tiles(128, VARIANTS[2]), Some((128, 3)));
        assert_eq!(tiles(256, VARIANTS[2]), Some((64, 2)));
    }

    #[test]
    fn the_store_variants_are_their_register_store_originals_with_the_store() {
        for (v, base) in VARIANTS[15..].iter().zip([7, 12, 14, 15, 5, 2]) {
            assert!(v.store_o && !VARIANTS[base - 1].store_o);
            assert_eq!(
                Variant {
                    store_o: false,
                    ..*v
                },
                VARIANTS[base - 1]
            );
        }
        assert!(VARIANTS[..15].iter().all(|v| !v.store_o));
        assert_eq!(default_variant(128, 1024, false), VARIANTS[16]);
        assert_eq!(default_variant(64, 4096, true), VARIANTS[17]);
    }

    #[test]
    fn the_wgmma_wrappers_name_every_operand_once() {
        let w = mma_wrappers(128, 64, "bf16");
        assert!(w.contains("m64n128k16.f32.bf16.bf16 {%0, %1,"));
        assert!(w.contains("%63}, %64, %65, p, 1, 1, 0, 0;"));
        assert!(w.contains("setp.ne.b32 p, %66, 0;"));
        assert!(w.contains("m64n64k16.f32.bf16.bf16 {%0,"));
        assert!(w.contains("%31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;"));
        assert!(w.contains("setp.ne.b32 p, %37, 0;"));
        assert_eq!(w.matches("\"+f\"").count(), 64 + 32);
    }
}
