//! `KILN_CUDA_MATMUL_V2` and `KILN_CUDA_CONV_FPROP_V2`: the Hopper GEMM of
//! `kernels/hopper_gemm.cuh` (TMA, mbarrier ring, warp-specialised wgmma, persistent tiles),
//! compiled for `sm_90a`. Code generation writes the prologue that specialises the header to one
//! graph (extents, tile configuration, operand majorness, the tensor-map loads with their batch
//! coordinates, the wgmma instruction and the fused epilogue) and the recipes of the tensor maps
//! the launch takes. A recipe holds no address: the provider encodes it on the load device and
//! re-encodes it when a bound pointer changes (`crate::tensor_map`).
//!
//! Operands: f16 or bf16, every stride a multiple of 16 bytes except the contiguous one (the
//! copy engine's rule). Matmul operands may be K- or M/N-contiguous (transposes by strides) and
//! have up to three batch dims of their own (size-1 dims broadcast). Convolutions take NHWC-like
//! activations (channels contiguous, C a multiple of 8, gathered by cp.async) and KRSC filters
//! (one contiguous R·S·C row per filter, loaded by TMA). Anything else is declined with its
//! reason, and the V1 engines run it.

use super::gemm::{
    conv_geometry, epilogue_body, fits_i32, gemm_params, matmul_batch_coords, split, tensor, Main,
    Split,
};
use super::{c_type, symbol, Kernel, Params, TensorMapRecipe, WORKSPACE_ARG};
use kiln_core::{DataType, OpGraph, TensorDesc};
use std::fmt::Write;

/// A tile configuration: `wm` 64-row MMA tiles per consumer warpgroup, `bn` columns, `stages`
/// shared-memory stages, and the consumer schedule: cooperative (both consumers on one tile of
/// 128 `wm` rows) or ping-pong (each consumer its own tile of 64 `wm` rows, one's epilogue
/// under the other's MMAs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileConfig {
    pub wm: u32,
    pub bn: u32,
    pub stages: u32,
    /// Stages when the output tile is staged in shared memory for coalesced stores (which
    /// takes the room of a stage or two).
    pub staged_stages: u32,
    pub pingpong: bool,
}

impl TileConfig {
    /// Rows of one tile: 128 `wm` when both consumers share it, 64 `wm` in ping-pong.
    pub fn bm(self) -> u32 {
        if self.pingpong {
            64 * self.wm
        } else {
            128 * self.wm
        }
    }
}

/// The configurations a plan may use; the tile knob's value `v > 0` picks `CONFIGS[v - 1]`.
/// Values 1-4 are the cooperative configurations that plans recorded before the ping-pong
/// schedule existed (their meaning never changes); 5-7 are ping-pong.
pub const CONFIGS: [TileConfig; 7] = [
    TileConfig {
        wm: 1,
        bn: 256,
        stages: 4,
        staged_stages: 3,
        pingpong: false,
    },
    TileConfig {
        wm: 1,
        bn: 128,
        stages: 6,
        staged_stages: 5,
        pingpong: false,
    },
    TileConfig {
        wm: 2,
        bn: 128,
        stages: 4,
        staged_stages: 3,
        pingpong: false,
    },
    TileConfig {
        wm: 2,
        bn: 64,
        stages: 5,
        staged_stages: 4,
        pingpong: false,
    },
    // Ping-pong: 64 x 256 per consumer (the wide tile's accumulators, half its rows).
    TileConfig {
        wm: 1,
        bn: 256,
        stages: 5,
        staged_stages: 3,
        pingpong: true,
    },
    // 128 x 128 per consumer.
    TileConfig {
        wm: 2,
        bn: 128,
        stages: 6,
        staged_stages: 4,
        pingpong: true,
    },
    // 128 x 64 per consumer: small N (convolutions with 64 filters).
    TileConfig {
        wm: 2,
        bn: 64,
        stages: 8,
        staged_stages: 7,
        pingpong: true,
    },
];

/// The cooperative configurations, the heuristic's candidates.
const COOPERATIVE: usize = 4;

/// What a value of the V2 GEMM engines' tile knob builds: 0 the heuristic's choice
/// (`pick_for`, with B resident where that keeps at least the ring's stages);
/// `1..=CONFIGS.len()` is `CONFIGS[v - 1]` with B in the ring (what those values built before B
/// could be resident); the next `CONFIGS.len()` values are the same configurations with B
/// resident, refused where it does not fit; the `COOPERATIVE` values after those are the
/// cooperative configurations with a stream-K reduction (B in the ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    pub tile: Option<TileConfig>,
    /// `None`: resident wherever it fits.
    pub b_resident: Option<bool>,
    pub stream_k: bool,
}

/// The largest value of the V2 GEMM engines' tile knob.
pub const KNOB_MAX: i64 = RESIDENT_MAX + COOPERATIVE as i64;
/// The largest knob value with B in the ring or resident.
const RESIDENT_MAX: i64 = 2 * CONFIGS.len() as i64;

/// The meaning of tile knob value `v` (see `Knob`), or why it has none.
pub fn knob(v: i64) -> Result<Knob, String> {
    let n = CONFIGS.len() as i64;
    match v {
        0 => Ok(Knob {
            tile: None,
            b_resident: None,
            stream_k: false,
        }),
        1..=RESIDENT_MAX => Ok(Knob {
            tile: Some(CONFIGS[((v - 1) % n) as usize]),
            b_resident: Some(v > n),
            stream_k: false,
        }),
        _ if (RESIDENT_MAX + 1..=KNOB_MAX).contains(&v) => Ok(Knob {
            tile: Some(CONFIGS[(v - RESIDENT_MAX - 1) as usize]),
            b_resident: Some(false),
            stream_k: true,
        }),
        _ => Err(format!("tile configuration {v} does not exist")),
    }
}

/// Stream-K plans give work to at most this many blocks (their workspace holds one partial
/// tile per block): every compute capability 9.0 part has 132 SMs or fewer.
const STREAM_K_CTAS: i64 = ASSUMED_SMS;

/// A stream-K plan's blocks with work (`min(units, STREAM_K_CTAS)`) and the f32 offset of
/// their partial tiles in the workspace, after a u32 counter per tile rounded up to 64, as
/// `hopper_gemm.cuh` lays it out.
pub(super) fn stream_k_layout(tiles: i64, k_iters: i64) -> (i64, i64) {
    (
        (tiles * k_iters.max(1)).min(STREAM_K_CTAS),
        cdiv(tiles, 64) * 64,
    )
}

/// Workspace bytes of a matmul or conv-fprop plan with the tile knob's choice `knob`: the tile
/// counters and partial tiles of a stream-K plan, else none.
pub fn workspace_bytes(graph: &OpGraph, conv: bool, knob: Knob) -> Result<u64, String> {
    let s = split(graph)?;
    let probe = plan(graph, &s, CONFIGS[0])?;
    let (cfg, stream_k) = configuration(&probe, conv, knob);
    if !stream_k {
        return Ok(0);
    }
    let tiles =
        cdiv(probe.m, i64::from(cfg.bm())) * cdiv(probe.n, i64::from(cfg.bn)) * probe.batches;
    let (ctas, flags) = stream_k_layout(tiles, cdiv(probe.k, 64));
    Ok(((flags + ctas * i64::from(cfg.bm()) * i64::from(cfg.bn)) * 4) as u64)
}

/// The tile configuration and stream-K choice of `knob` for the GEMM of `pl`. The heuristic
/// never takes stream-K: on the H200 it ran slower than whole tiles on every matmul and
/// convolution of the benchmark (conv C128 H56 3×3 stride 2 with bias + relu, whose
/// 196 tiles of 128×128 fill 74% of two waves: 0.0257 ms stream-K against 0.0236 whole, and
/// 0.0222 on 256×128 tiles; docs/benchmarks/cuda-h200-2026-12-03.md). The knob offers it.
fn configuration(pl: &Plan, conv: bool, knob: Knob) -> (TileConfig, bool) {
    match knob.tile {
        Some(t) => (t, knob.stream_k),
        None => (pick_for(pl.m, pl.n, pl.k, pl.batches, conv), false),
    }
}

/// The fewest ring stages worth keeping B resident for.
const MIN_RESIDENT_STAGES: u32 = 3;

/// The most shared memory a Hopper block may ask for (227 KiB).
const MAX_SHARED: u32 = 227 * 1024;

/// The ring stages of `cfg` when all `k_iters` K slices of its B tile stay resident in shared
/// memory beside the ring (which then holds A alone): as many as fit, at most the stages of
/// the configuration without its output tile; `None` when fewer than `MIN_RESIDENT_STAGES` do.
pub fn resident_stages(cfg: TileConfig, staged: bool, k_iters: u32) -> Option<u32> {
    // In u64: K (from the graph) may be large enough for u32 products to wrap.
    let fixed = u64::from(c_tiles_bytes(cfg, staged))
        + u64::from(k_iters) * (u64::from(cfg.bn) * 64 * 2 + 8)
        + 1024;
    let per_stage = u64::from(cfg.bm() * 64 * 2 + 16);
    let n = u64::from(MAX_SHARED).checked_sub(fixed)? / per_stage;
    (n >= u64::from(MIN_RESIDENT_STAGES)).then(|| (n as u32).min(cfg.stages))
}

/// Bytes of the two consumers' staged output tiles (64 `wm` rows of `bn` 2-byte elements, each
/// row padded by 16 bytes), or 0.
fn c_tiles_bytes(cfg: TileConfig, staged: bool) -> u32 {
    if staged {
        2 * 64 * cfg.wm * (cfg.bn * 2 + 16)
    } else {
        0
    }
}

/// The stages of `cfg`, with or without the staged output tile.
pub fn stages(cfg: TileConfig, staged: bool) -> u32 {
    if staged {
        cfg.staged_stages
    } else {
        cfg.stages
    }
}

/// Bytes of shared memory a launch of `cfg` asks for: the stages, the two consumers' output
/// tiles when staged (64 `wm` rows of `bn` 2-byte elements, each row padded by 16 bytes), their
/// barriers, and 1 KiB of slack to align the tiles to 1024 bytes.
pub fn shared_bytes(cfg: TileConfig, staged: bool) -> u32 {
    let stage = (cfg.bm() + cfg.bn) * 64 * 2;
    let n = stages(cfg, staged);
    n * stage + c_tiles_bytes(cfg, staged) + 16 * n + 1024
}

/// `shared_bytes` with B resident: `stages` A-only stages, the output tiles, the `k_iters`
/// slices of B and their barriers.
fn resident_shared_bytes(cfg: TileConfig, staged: bool, stages: u32, k_iters: u32) -> u32 {
    stages * (cfg.bm() * 64 * 2 + 16)
        + c_tiles_bytes(cfg, staged)
        + k_iters * (cfg.bn * 64 * 2 + 8)
        + 1024
}

/// Registers per thread at kernel entry: `__launch_bounds__(384, 1)` caps them at 65536 / 384,
/// rounded down to the allocation granularity of 8.
const ENTRY_REGS: u32 = 65536 / 384 / 8 * 8;

/// The consumers' setmaxnreg target given the producer's: the two consumer warpgroups share
/// exactly what the producer warpgroup gives back (`setmaxnreg.inc` waits until registers are
/// free, so asking for more than is released never returns), at most 240.
pub fn consumer_regs(producer: u32) -> u32 {
    ((ENTRY_REGS + (ENTRY_REGS - producer) / 2) / 8 * 8).min(240)
}

/// Multiprocessors the heuristic assumes (an H100 or H200 SXM); the launch grid itself is sized
/// from the load device.
const ASSUMED_SMS: i64 = 132;

/// The configuration the heuristic picks for an M x N GEMM with `batches` batches: the one whose
/// tiles, in waves over the SMs, cover the fewest output elements (less padding and less wave
/// quantisation), preferring larger tiles on ties (better reuse of each loaded byte).
pub fn pick(m: i64, n: i64, batches: i64) -> TileConfig {
    let mut best = CONFIGS[0];
    let mut best_cost = i128::MAX;
    for cfg in &CONFIGS[..COOPERATIVE] {
        let cfg = *cfg;
        let (bm, bn) = (i64::from(cfg.bm()), i64::from(cfg.bn));
        let tiles = i128::from(cdiv(m, bm)) * i128::from(cdiv(n, bn)) * i128::from(batches);
        let waves = (tiles + i128::from(ASSUMED_SMS) - 1) / i128::from(ASSUMED_SMS);
        // A wave of smaller tiles is cheaper in proportion to its area, plus a fixed cost per
        // loaded byte of operands that small tiles re-read more often.
        let area = i128::from(bm * bn);
        let reuse_penalty = 1_000_000 / i128::from(bm) + 1_000_000 / i128::from(bn);
        let cost = waves * area * (10_000 + reuse_penalty);
        if cost < best_cost {
            best_cost = cost;
            best = cfg;
        }
    }
    best
}

/// The configuration knob 0 builds for an M x N x K GEMM: `pick`'s, except that a convolution
/// with fewer than `MIN_COOPERATIVE_CONV_ITERS` K slices takes the ping-pong counterpart of a
/// 256-row cooperative tile (256×128 → 128×128 per consumer, 256×64 → 128×64 per consumer: the
/// same accumulators per consumer, one's epilogue under the other's MMAs). Measured on the H200:
/// conv C128 H28 1×1 (2 slices) with bias + relu 0.0100 → 0.0091 ms
/// (docs/benchmarks/cuda-h200-2026-12-03.md). Until session 13 every convolution took the
/// counterpart (C64 H56 3×3 0.0459 → 0.0354 ms, C128 H56 3×3 stride 2 0.0347 → 0.0304 in
/// docs/benchmarks/cuda-h200-2026-12-01-epilogue.md), but the 256-row tiles' gathering
/// producer spilled then (16 rows' windows in 56 registers); with 88 registers, the longer
/// convolutions run faster on the cooperative tile (C64 H56 0.0290 → 0.0278 ms against the
/// counterpart with B resident, C128 H56 stride 2 0.0247 → 0.0222). The matmul cases stay
/// cooperative (ping-pong measured slower there: its 64×256 and 128×128 tiles re-read more
/// operand bytes).
///
/// And a convolution for which `pick` chose 128×128 cooperative tiles although N is 256 or
/// more (about one wave of tiles: short M) takes 64×256 ping-pong tiles. Measured on the H200
/// after the epilogue's loads were batched (docs/benchmarks/h200-2026-12-02-session11.md): with
/// bias + relu, C256 H14 3×3 0.0219 → 0.0189 ms and C512 H7 3×3 0.0381 → 0.0337 (f16; bf16
/// alike); bare, 0.0206 → 0.0178 and 0.0369 → 0.0315.
pub fn pick_for(m: i64, n: i64, k: i64, batches: i64, conv: bool) -> TileConfig {
    let cfg = pick(m, n, batches);
    if conv && prefers_wide_ping_pong(cfg, n) {
        return CONFIGS[4];
    }
    if !conv || cfg.wm != 2 || cdiv(k, 64) >= MIN_COOPERATIVE_CONV_ITERS {
        return cfg;
    }
    CONFIGS[COOPERATIVE..]
        .iter()
        .copied()
        .find(|p| p.wm == 2 && p.bn == cfg.bn)
        .unwrap_or(cfg)
}

/// A convolution keeps `pick`'s 256-row cooperative tile from this many K slices on (see
/// `pick_for`).
const MIN_COOPERATIVE_CONV_ITERS: i64 = 8;

/// Whether a convolution's GEMM (fprop, or a dgrad without stride phases) for which `pick`
/// chose `cfg` runs faster on 64x256 ping-pong tiles (`CONFIGS[4]`): `pick` took 128x128
/// cooperative tiles although N is 256 or more, which it does when M is short (about one wave).
pub fn prefers_wide_ping_pong(cfg: TileConfig, n: i64) -> bool {
    cfg == CONFIGS[1] && n >= 256
}

/// `a / b` rounded up, for positive `b` and non-negative `a`.
fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// One operand's tensor map and how its loads address it.
struct OperandMap {
    recipe: TensorMapRecipe,
    /// True when the GEMM K dim is the contiguous one (the map's innermost dim is K).
    k_major: bool,
    /// For each map dim after the first two, the output batch dim it follows.
    batch_dims: Vec<usize>,
}

pub(super) fn check_stride(t: &TensorDesc, stride: i64) -> Result<u64, String> {
    let bytes = (stride as i128) * i128::from(t.data_type.size() as u64);
    if stride <= 0 || bytes % 16 != 0 || bytes >= 1i128 << 40 {
        return Err(format!(
            "{} has a stride of {stride} elements; the tensor memory accelerator needs positive \
             strides that are multiples of 16 bytes (below 2^40)",
            t.label()
        ));
    }
    Ok(bytes as u64)
}

/// The map of a matmul operand `t` with dims [b.., rows, cols] (A: rows M, cols K; B: rows K,
/// cols N). `k_is_cols` says which of the last two dims is K. The contiguous one of the last two
/// dims becomes the map's innermost dim; boxes are 64 wide along it and `outer_box` along the
/// other (64 for M/N-contiguous boxes, the tile's extent for K-contiguous ones).
fn matmul_map(t: &TensorDesc, k_is_cols: bool, mn_tile: u32) -> Result<OperandMap, String> {
    let r = t.dims.len();
    let (rows, cols) = (r - 2, r - 1);
    let inner = if t.strides[cols] == 1 || t.dims[cols] == 1 && t.strides[rows] != 1 {
        cols
    } else if t.strides[rows] == 1 {
        rows
    } else {
        return Err(format!(
            "{} has strides {:?}: neither of its last two dims is contiguous",
            t.label(),
            t.strides
        ));
    };
    let outer = if inner == cols { rows } else { cols };
    let k_major = (inner == cols) == k_is_cols;
    let mut dims = vec![t.dims[inner] as u64, t.dims[outer] as u64];
    let mut strides = vec![if t.dims[outer] == 1 {
        // A single row: any valid stride; the span check below sees one row.
        16
    } else {
        check_stride(t, t.strides[outer])?
    }];
    let mut batch_dims = Vec::new();
    for d in (0..r - 2).rev() {
        if t.dims[d] != 1 {
            dims.push(t.dims[d] as u64);
            strides.push(check_stride(t, t.strides[d])?);
            batch_dims.push(d);
        }
    }
    if dims.len() > 5 {
        return Err(format!(
            "{} has {} batch dims above extent 1; the tensor memory accelerator takes at most 3",
            t.label(),
            dims.len() - 2
        ));
    }
    let outer_box = if k_major { mn_tile } else { 64 };
    let mut boxes = vec![64u32, outer_box];
    boxes.resize(dims.len(), 1);
    Ok(OperandMap {
        recipe: TensorMapRecipe {
            uid: t.uid,
            data_type: t.data_type,
            dims,
            strides,
            box_dims: boxes,
        },
        k_major,
        batch_dims,
    })
}

/// `kiln_h_tma_<name>(dst, map, bar, c0, c1, batch)`: one box at (c0, c1) plus the operand's
/// batch coordinates, derived from the flat output batch index.
fn tma_loader(name: &str, map: &OperandMap, out: &TensorDesc) -> String {
    let rank = map.recipe.dims.len();
    let out_rank = out.dims.len();
    let mut coords = vec!["c0".to_string(), "c1".to_string()];
    for &d in &map.batch_dims {
        // The flat batch index runs over the output's batch dims, last fastest.
        let inner: i64 = out.dims[d + 1..out_rank - 2].iter().product();
        coords.push(format!("(int)((batch / {inner}) % {})", out.dims[d]));
    }
    format!(
        "__device__ __forceinline__ void kiln_h_tma_{name}(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int batch) {{\n\
         \x20   (void)batch;\n\
         \x20   kiln_tma_load_{rank}d(dst, map, bar, {});\n\
         }}\n",
        coords.join(", ")
    )
}

/// The m64 x `n` x k16 wgmma of `ty` ("f16" or "bf16") with f32 accumulators, as a function of
/// the accumulator array, the two descriptors and whether to add to the accumulators.
pub(super) fn wgmma_wrapper(n: u32, ty: &str, trans_a: bool, trans_b: bool) -> String {
    let regs = n / 2;
    let list: Vec<String> = (0..regs).map(|i| format!("%{i}")).collect();
    let outs: Vec<String> = (0..regs).map(|i| format!("\"+f\"(d[{i}])")).collect();
    let mut s = String::new();
    let _ = write!(
        s,
        "__device__ __forceinline__ void kiln_wgmma(float (&d)[{regs}], unsigned long long da, unsigned long long db, int scale_d) {{\n\
         \x20   asm volatile(\n\
         \x20       \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{}, 0;\\n\"\n\
         \x20       \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} {{{}}}, %{}, %{}, p, 1, 1, {}, {};\\n}}\\n\"\n\
         \x20       : {}\n\
         \x20       : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n\
         }}\n",
        regs + 2,
        list.join(", "),
        regs,
        regs + 1,
        u8::from(trans_a),
        u8::from(trans_b),
        outs.join(", ")
    );
    s
}

/// Why the V2 engine declines `graph` (matmul when `!conv`), or `Ok`.
pub fn supports(graph: &OpGraph, conv: bool) -> Result<(), String> {
    super::gemm::supports(graph, conv)?;
    let s = split(graph)?;
    let (a, b) = operands(graph, &s)?;
    if !matches!(a.data_type, DataType::F16 | DataType::Bf16) {
        return Err(format!(
            "{} is {}; the Hopper GEMM takes f16 and bf16 operands",
            a.label(),
            a.data_type
        ));
    }
    if b.data_type != a.data_type {
        return Err(format!("{} and {} differ in type", a.label(), b.label()));
    }
    plan(graph, &s, CONFIGS[0]).map(|_| ())
}

fn operands<'g>(
    graph: &'g OpGraph,
    s: &Split<'_>,
) -> Result<(&'g TensorDesc, &'g TensorDesc), String> {
    match &s.main {
        Main::Matmul(m) => Ok((tensor(graph, m.a)?, tensor(graph, m.b)?)),
        Main::Conv(c) => Ok((tensor(graph, c.x)?, tensor(graph, c.w)?)),
    }
}

/// What the prologue needs beyond the epilogue: GEMM extents, batches, the maps and the
/// operand-specific defines.
struct Plan {
    m: i64,
    n: i64,
    k: i64,
    batches: i64,
    a: Option<OperandMap>,
    b: OperandMap,
    a_k_major: bool,
    /// Defines and functions of the A operand when it is gathered (convolution).
    gather: Option<String>,
    coords: Vec<String>,
    batch_coords: String,
}

fn plan(graph: &OpGraph, s: &Split<'_>, cfg: TileConfig) -> Result<Plan, String> {
    let out = tensor(graph, s.out)?;
    let bm = cfg.bm();
    match &s.main {
        Main::Matmul(mm) => {
            let (a, b) = (tensor(graph, mm.a)?, tensor(graph, mm.b)?);
            let rank = out.dims.len();
            let (m, n, k) = (out.dims[rank - 2], out.dims[rank - 1], a.dims[rank - 1]);
            let batches: i64 = out.dims[..rank - 2].iter().product();
            if batches > i64::from(i32::MAX)
                || m > i64::from(i32::MAX) - 512
                || n > i64::from(i32::MAX) - 512
            {
                return Err("the GEMM's extents exceed the tile coordinates' 31 bits".into());
            }
            let am = matmul_map(a, true, bm)?;
            let bmap = matmul_map(b, false, cfg.bn)?;
            let (batch_coords, mut coords) = matmul_batch_coords(out);
            coords.push("(gm)".into());
            coords.push("(gn)".into());
            Ok(Plan {
                m,
                n,
                k,
                batches,
                a_k_major: am.k_major,
                a: Some(am),
                b: bmap,
                gather: None,
                coords,
                batch_coords,
            })
        }
        Main::Conv(cv) => {
            let (x, w) = (tensor(graph, cv.x)?, tensor(graph, cv.w)?);
            let (nb, ch, h, wd) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3]);
            let (kk, r, ss) = (w.dims[0], w.dims[2], w.dims[3]);
            let (p, q) = (out.dims[2], out.dims[3]);
            let (sx, sw) = (&x.strides, &w.strides);
            if sx[1] != 1 || ch % 8 != 0 || [0, 2, 3].iter().any(|&i| sx[i] % 8 != 0) {
                return Err(format!(
                    "{} must have contiguous channels, C a multiple of 8 and other strides multiples \
                     of 8 elements (NHWC) for 16-byte gathers; it has C = {ch}, strides {sx:?}",
                    x.label()
                ));
            }
            if sw[1] != 1 || sw[3] != ch || sw[2] != ss * ch {
                return Err(format!(
                    "{} must be KRSC (each filter one contiguous R·S·C row); it has strides {sw:?}",
                    w.label()
                ));
            }
            let gemm_k = r * ss * ch;
            let wmap = OperandMap {
                recipe: TensorMapRecipe {
                    uid: w.uid,
                    data_type: w.data_type,
                    dims: vec![gemm_k as u64, kk as u64],
                    strides: vec![if kk == 1 { 16 } else { check_stride(w, sw[0])? }],
                    box_dims: vec![64, cfg.bn],
                },
                k_major: true,
                batch_dims: Vec::new(),
            };
            let m = nb * p * q;
            let pr = &cv.params;
            let narrow = fits_i32(graph, s)?;
            let sfx = if narrow { "" } else { "LL" };
            let mut g = String::from("// Convolution geometry; strides in elements.\n");
            for (key, v) in conv_geometry(x, w, out, pr) {
                let _ = writeln!(g, "#define {key} {v}{sfx}");
            }
            if h >= 1 << 29 || wd >= 1 << 29 {
                return Err("the image is too large for the gather's 32-bit corners".into());
            }
            Ok(Plan {
                m,
                n: kk,
                k: gemm_k,
                batches: 1,
                a: None,
                b: wmap,
                a_k_major: true,
                gather: Some(g),
                coords: vec![
                    format!("(gm / {}{sfx})", p * q),
                    "(gn)".into(),
                    format!("((gm / {q}{sfx}) % {p}{sfx})"),
                    format!("(gm % {q}{sfx})"),
                ],
                batch_coords: String::new(),
            })
        }
    }
}

/// The staged-store plan of a graph: the one tensor the epilogue writes, when it is 16-bit with
/// element (gm, gn) at `offset(batch) + gm * ld + gn` and 16-byte aligned rows.
struct Staged<'g> {
    out: &'g TensorDesc,
    ld: i64,
    /// Per output batch dim, its stride (matmul); empty for a convolution.
    batch_strides: Vec<i64>,
}

fn staged<'g>(graph: &'g OpGraph, s: &Split<'_>) -> Option<Staged<'g>> {
    let main = graph.tensor(s.out)?;
    let mut stored: Vec<&TensorDesc> = Vec::new();
    if !main.is_virtual {
        stored.push(main);
    }
    for p in &s.epilogue {
        let t = graph.tensor(p.out)?;
        if !t.is_virtual {
            stored.push(t);
        }
    }
    let last = s.epilogue.last().map(|p| p.out).unwrap_or(s.out);
    let [f] = stored.as_slice() else { return None };
    if f.uid != last || !matches!(f.data_type, DataType::F16 | DataType::Bf16) {
        return None;
    }
    let st = &f.strides;
    let r = f.dims.len();
    let aligned = |v: i64| v % 8 == 0;
    match &s.main {
        Main::Matmul(_) => {
            let ld = if f.dims[r - 2] == 1 {
                f.dims[r - 1].max(8)
            } else {
                st[r - 2]
            };
            let batch: Vec<i64> = (0..r - 2)
                .map(|d| if f.dims[d] == 1 { 0 } else { st[d] })
                .collect();
            (st[r - 1] == 1 && aligned(ld) && batch.iter().all(|&b| aligned(b))).then_some(Staged {
                out: f,
                ld,
                batch_strides: batch,
            })
        }
        Main::Conv(_) => {
            // y is N, K, P, Q by dims: rows gm = (n, p, q) must be evenly spaced.
            let (p, q) = (f.dims[2], f.dims[3]);
            let ld = st[3];
            let even = st[1] == 1
                && aligned(ld)
                && (p == 1 || st[2] == q * ld)
                && (f.dims[0] == 1 || st[0] == p * q * ld);
            even.then_some(Staged {
                out: f,
                ld,
                batch_strides: Vec::new(),
            })
        }
    }
}

/// `kiln_gemm_epilogue_value`: the epilogue's final value at (gm, gn), computed as
/// `kiln_gemm_epilogue` computes it but stored by the caller.
pub(super) fn epilogue_value(
    graph: &OpGraph,
    s: &Split<'_>,
    params: &Params,
    coords: &[String],
    batch_coords: &str,
    stored: i64,
) -> Result<String, String> {
    // The same chain with its one stored tensor made virtual: no store is emitted.
    let mut g = graph.clone();
    if let Some(t) = g.tensors.iter_mut().find(|t| t.uid == stored) {
        t.is_virtual = true;
    }
    let mut values = std::collections::HashMap::new();
    values.insert(s.out, "acc_".to_string());
    let mut body = batch_coords.to_string();
    body.push_str(&super::emit_pointwise_body(
        &g,
        &s.epilogue,
        params,
        coords,
        &mut values,
        "    ",
    )?);
    let last = s.epilogue.last().map(|p| p.out).unwrap_or(s.out);
    let v = values
        .get(&last)
        .cloned()
        .unwrap_or_else(|| "acc_".to_string());
    Ok(format!(
        "__device__ __forceinline__ float kiln_gemm_epilogue_value(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
         {body}    (void)batch;\n\
         \x20   return {v};\n\
         }}\n"
    ))
}

/// Generates the kernel of a matmul or conv-fprop graph (which `supports` accepted) with the
/// tile knob's choice `knob`.
pub fn generate(graph: &OpGraph, conv: bool, knob: Knob) -> Result<Vec<Kernel>, String> {
    supports(graph, conv)?;
    let s = split(graph)?;
    let (a, _) = operands(graph, &s)?;
    let elem = a.data_type;
    let probe = plan(graph, &s, CONFIGS[0])?;
    let (cfg, stream_k) = configuration(&probe, conv, knob);
    let pl = plan(graph, &s, cfg)?;
    let params: Params = gemm_params(graph);
    let stage_out = staged(graph, &s);
    // B resident: one column tile and one batch, so that every tile reads the same B (and no
    // stream-K, whose partial tiles take the room).
    let k_iters = u32::try_from(cdiv(pl.k, 64)).map_err(|_| "K is too large")?;
    let fits = (cdiv(pl.n, i64::from(cfg.bn)) == 1 && pl.batches == 1 && !stream_k)
        .then(|| resident_stages(cfg, stage_out.is_some(), k_iters))
        .flatten();
    let resident = match knob.b_resident {
        // The heuristic keeps B resident only where the ring keeps its depth: on 256x64
        // cooperative tiles (conv C64 H56) B leaves room for 3 of the ring's 4 stages and ran
        // slower than B in the ring (0.0306 against 0.0278 ms with bias + relu).
        None => fits.filter(|&n| n >= stages(cfg, stage_out.is_some())),
        Some(false) => None,
        Some(true) => Some(fits.ok_or_else(|| {
            let tiles_n = cdiv(pl.n, i64::from(cfg.bn));
            if tiles_n != 1 || pl.batches != 1 || stream_k {
                format!(
                    "B cannot stay resident: the GEMM has {tiles_n} column tiles of {} and {} \
                     batches (a resident B is the GEMM's one B tile, without stream-K)",
                    cfg.bn, pl.batches
                )
            } else {
                format!(
                    "B cannot stay resident: its {} x {} elements beside a ring of at least \
                     {MIN_RESIDENT_STAGES} stages of {}x{} tiles exceed a block's 227 KiB of \
                     shared memory",
                    pl.k,
                    cfg.bn,
                    cfg.bm(),
                    cfg.bn
                )
            }
        })?),
    };
    if stream_k && cfg.pingpong {
        return Err(format!(
            "stream-K runs the cooperative schedule, not the ping-pong {}x{} tiles",
            cfg.bm(),
            cfg.bn
        ));
    }
    let tiles = cdiv(pl.m, i64::from(cfg.bm())) * cdiv(pl.n, i64::from(cfg.bn)) * pl.batches;
    let stream_k = stream_k.then(|| stream_k_layout(tiles, i64::from(k_iters)));
    let narrow = fits_i32(graph, &s)?;
    let (idx, sfx) = if narrow {
        ("int", "")
    } else {
        ("long long", "LL")
    };
    let name = |u: i64| {
        params
            .name(u)
            .ok_or_else(|| format!("uid {u} is not a parameter"))
    };
    let out = tensor(graph, s.out)?;
    let engine = if conv {
        crate::CONV_FPROP_V2
    } else {
        crate::MATMUL_V2
    };
    let ty = c_type(elem).ok_or("bad type")?;
    let mut src = format!(
        "// {engine}, generated for one graph: the Hopper GEMM of hopper_gemm.cuh specialised to\n\
         // the graph's types, shapes and operand layouts, and its fused epilogue.\n\
         #include \"common.cuh\"\n\
         #include \"hopper_ptx.cuh\"\n\n\
         typedef {ty} elem_t;\n\
         typedef {idx} kiln_idx;\n\n"
    );
    // The gathering producer computes addresses and keeps its rows' windows in registers: the
    // 16 rows of a 256-row tile (three values each) need more than the 56 of 8 rows, or they
    // spill (conv C128 H56 3x3 stride 2 on 256x128 tiles: 88 bytes of local memory).
    let producer = match (pl.gather.is_some(), cfg.bm() > 128) {
        (true, true) => 88,
        (true, false) => 56,
        _ => 40,
    };
    let define = |src: &mut String, key: &str, v: String| {
        let _ = writeln!(src, "#define {key} {v}");
    };
    for (key, v) in [
        ("KILN_GEMM_M", format!("{}{sfx}", pl.m)),
        ("KILN_GEMM_N", format!("{}{sfx}", pl.n)),
        ("KILN_GEMM_K", format!("{}{sfx}", pl.k)),
        ("KILN_H_BATCHES", pl.batches.to_string()),
        ("KILN_H_WM", cfg.wm.to_string()),
        ("KILN_H_BN", cfg.bn.to_string()),
        (
            "KILN_H_STAGES",
            resident
                .unwrap_or_else(|| stages(cfg, stage_out.is_some()))
                .to_string(),
        ),
        ("KILN_H_STAGED", u8::from(stage_out.is_some()).to_string()),
        ("KILN_H_GROUP_M", "16".to_string()),
        ("KILN_H_A_KMAJOR", u8::from(pl.a_k_major).to_string()),
        ("KILN_H_B_KMAJOR", u8::from(pl.b.k_major).to_string()),
        ("KILN_H_A_GATHER", u8::from(pl.gather.is_some()).to_string()),
        ("KILN_H_PRODUCER_REGS", producer.to_string()),
        ("KILN_H_CONSUMER_REGS", consumer_regs(producer).to_string()),
        ("KILN_GEMM_A", name(a.uid)?),
    ] {
        define(&mut src, key, v);
    }
    if cfg.pingpong {
        // Only ping-pong prologues name the schedule, so the cooperative configurations'
        // sources stay what they were.
        define(&mut src, "KILN_H_PINGPONG", "1".into());
    }
    if resident.is_some() {
        // Likewise only the prologues with a resident B name it.
        define(&mut src, "KILN_H_B_RESIDENT", "1".into());
    }
    if let Some((ctas, _)) = stream_k {
        define(&mut src, "KILN_H_STREAM_K", "1".into());
        define(&mut src, "KILN_H_SK_CTAS", ctas.to_string());
        define(&mut src, "KILN_H_SK_WS", "kiln_ws".into());
    }
    src.push('\n');
    let mut maps = Vec::new();
    if let Some(am) = &pl.a {
        src.push_str(&tma_loader("a", am, out));
        maps.push(am.recipe.clone());
    }
    src.push_str(&tma_loader("b", &pl.b, out));
    maps.push(pl.b.recipe.clone());
    if let Some(g) = &pl.gather {
        src.push_str(g);
    }
    src.push_str(&wgmma_wrapper(
        cfg.bn,
        if elem == DataType::F16 { "f16" } else { "bf16" },
        !pl.a_k_major,
        !pl.b.k_major,
    ));
    let uids: Vec<String> = params.list.iter().map(|(u, _)| u.to_string()).collect();
    let mut args: Vec<String> = (0..params.list.len()).map(|i| format!("p{i}")).collect();
    let mut declared = params.declare(graph)?;
    let mut kernel_args: Vec<i64> = params.list.iter().map(|&(u, _)| u).collect();
    if stream_k.is_some() {
        args.push("kiln_ws".into());
        declared.push_str(", float* __restrict__ kiln_ws");
        kernel_args.push(WORKSPACE_ARG);
    }
    let map_params = if pl.a.is_some() {
        "const __grid_constant__ kiln_tensor_map map_a, const __grid_constant__ kiln_tensor_map map_b"
    } else {
        "const __grid_constant__ kiln_tensor_map map_b"
    };
    let _ = write!(
        src,
        "\n// The kernel's parameters: the tensor maps, then tensor UIDs {} as {}{}.\n",
        uids.join(", "),
        args[..params.list.len()].join(", "),
        if stream_k.is_some() {
            ", then the workspace as kiln_ws"
        } else {
            ""
        }
    );
    define(&mut src, "KILN_GEMM_SYMBOL", "KILN_SYMBOL".into());
    define(&mut src, "KILN_H_MAP_PARAMS", map_params.into());
    define(&mut src, "KILN_GEMM_PARAMS", declared);
    define(&mut src, "KILN_GEMM_ARGS", args.join(", "));
    let epilogue = epilogue_body(graph, &s, &params, &pl.coords, pl.batch_coords.clone())?;
    let _ = write!(
        src,
        "\n// The fused epilogue of output element (gm, gn) of batch `batch`, given its GEMM result.\n\
         __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
         {epilogue}}}\n"
    );
    if let Some(st) = &stage_out {
        let _ = write!(
            src,
            "\n// Staged stores: the one tensor the epilogue writes, row gm at offset + gm * ld.\n\
             typedef {} out_t;\n",
            c_type(st.out.data_type).ok_or("bad type")?
        );
        define(&mut src, "KILN_H_OUT", name(st.out.uid)?);
        define(&mut src, "KILN_H_OUT_LD", format!("{}{sfx}", st.ld));
        let (bsetup, bcoords) = if st.batch_strides.is_empty() {
            (String::new(), Vec::new())
        } else {
            matmul_batch_coords(out)
        };
        let terms: Vec<String> = bcoords
            .iter()
            .zip(&st.batch_strides)
            .filter(|(_, &s)| s != 0)
            .map(|(c, s)| format!("{c} * {s}LL"))
            .collect();
        let offset = if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" + ")
        };
        let _ = write!(
            src,
            "__device__ __forceinline__ kiln_i64 kiln_h_out_offset(kiln_i64 batch) {{\n\
             {bsetup}    (void)batch;\n\
             \x20   return {offset};\n\
             }}\n"
        );
        src.push_str(&epilogue_value(
            graph,
            &s,
            &params,
            &pl.coords,
            &pl.batch_coords,
            st.out.uid,
        )?);
    }
    src.push_str("\n#include \"hopper_gemm.cuh\"\n");
    let sym = symbol(if conv { "conv_fprop_v2" } else { "matmul_v2" }, &src);
    let source = src.replace("KILN_SYMBOL", &sym);
    if tiles > i64::from(i32::MAX) {
        return Err(format!("{tiles} tiles are beyond the grid's limit"));
    }
    let main = Kernel {
        symbol: sym,
        source,
        args: kernel_args,
        // Blocks: one per tile at most (stream-K: one per share of the K slices); the load
        // device caps them at its SM count.
        grid: [stream_k.map_or(tiles, |(ctas, _)| ctas) as u32, 1, 1],
        block: [384, 1, 1],
        shared_bytes: match resident {
            Some(n) => resident_shared_bytes(cfg, stage_out.is_some(), n, k_iters),
            None => shared_bytes(cfg, stage_out.is_some()),
        },
        maps,
        persistent: true,
        cooperative: false,
        arch_specific: true,
    };
    Ok(match stream_k {
        Some((_, flags)) => vec![
            super::hopper_grad::stream_k_counters(engine, "gemm_v2_counters", tiles, flags),
            main,
        ],
        None => vec![main],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_configuration_fits_the_shared_memory_of_a_hopper_block() {
        for cfg in CONFIGS {
            assert!(shared_bytes(cfg, false) <= MAX_SHARED, "{cfg:?}");
            assert!(shared_bytes(cfg, true) <= MAX_SHARED, "{cfg:?} staged");
            // The accumulators of one consumer thread stay within its registers.
            assert!(cfg.wm * cfg.bn / 2 <= 128, "{cfg:?}");
        }
    }

    #[test]
    fn the_knob_values_that_plans_recorded_keep_their_configurations() {
        // Knob values 1-4 (saved in plans before the ping-pong schedule): cooperative, as then.
        let recorded = [
            (1, 256, 4, 3),
            (1, 128, 6, 5),
            (2, 128, 4, 3),
            (2, 64, 5, 4),
        ];
        for (cfg, (wm, bn, stages, staged)) in CONFIGS.iter().zip(recorded) {
            assert_eq!(
                (cfg.wm, cfg.bn, cfg.stages, cfg.staged_stages, cfg.pingpong),
                (wm, bn, stages, staged, false)
            );
            assert_eq!(cfg.bm(), 128 * wm);
        }
        for cfg in &CONFIGS[COOPERATIVE..] {
            assert!(cfg.pingpong, "{cfg:?}");
            assert_eq!(cfg.bm(), 64 * cfg.wm);
        }
    }

    #[test]
    fn register_reallocation_never_asks_for_more_than_the_producer_gives_back() {
        for producer in [24, 40, 56, 64] {
            let consumer = consumer_regs(producer);
            assert_eq!(consumer % 8, 0);
            assert!(
                128 * producer + 256 * consumer <= 128 * 3 * ENTRY_REGS,
                "{producer}"
            );
            assert!(consumer >= ENTRY_REGS);
        }
        assert_eq!(consumer_regs(40), 232);
        assert_eq!(consumer_regs(56), 224);
    }

    #[test]
    fn the_heuristic_prefers_wide_tiles_for_large_problems_and_narrow_ones_for_small_n() {
        assert_eq!(pick(8192, 8192, 1), CONFIGS[0]);
        assert_eq!(pick(100352, 64, 1).bn, 64);
    }

    #[test]
    fn short_convolutions_take_the_ping_pong_counterpart_of_a_256_row_tile() {
        // conv C64 H56 (M = 100352, N = 64, K = 576: 9 slices): 256x64 cooperative, kept.
        assert_eq!(pick(100352, 64, 1), CONFIGS[3]);
        assert_eq!(pick_for(100352, 64, 576, 1, true), CONFIGS[3]);
        // conv C128 H56 3x3 stride 2 (M = 25088, N = 128, K = 1152): 256x128, kept.
        assert_eq!(pick_for(25088, 128, 1152, 1, true), CONFIGS[2]);
        // conv C128 H28 1x1 (M = 25088, N = 128, K = 128: 2 slices): 256x128 -> 128x128
        // ping-pong.
        assert_eq!(pick(25088, 128, 1), CONFIGS[2]);
        assert_eq!(pick_for(25088, 128, 128, 1, true), CONFIGS[5]);
        // Matmuls keep the cooperative choice, and so do convolutions on 128 x 256 tiles.
        assert_eq!(pick_for(100352, 64, 128, 1, false), CONFIGS[3]);
        assert_eq!(pick_for(8192, 8192, 8192, 1, true), pick(8192, 8192, 1));
        // Short-M convolutions with N >= 256 on 128 x 128 tiles: 64 x 256 ping-pong
        // (conv C512 H7, conv C256 H14).
        assert_eq!(pick(3136, 512, 1), CONFIGS[1]);
        assert_eq!(pick_for(3136, 512, 4608, 1, true), CONFIGS[4]);
        assert_eq!(pick_for(6272, 256, 2304, 1, true), CONFIGS[4]);
        assert_eq!(pick_for(3136, 512, 4608, 1, false), CONFIGS[1]);
    }

    #[test]
    fn knob_values_past_the_configurations_keep_b_resident() {
        let n = CONFIGS.len() as i64;
        assert_eq!(knob(0).unwrap().tile, None);
        for v in 1..=n {
            let (ring, res) = (knob(v).unwrap(), knob(v + n).unwrap());
            assert_eq!(ring.tile, Some(CONFIGS[v as usize - 1]));
            assert_eq!(res.tile, ring.tile);
            assert_eq!((ring.b_resident, res.b_resident), (Some(false), Some(true)));
        }
        assert!(knob(KNOB_MAX + 1).is_err());
        assert!(knob(-1).is_err());
    }

    #[test]
    fn the_last_knob_values_run_the_cooperative_configurations_stream_k() {
        for (i, cfg) in CONFIGS[..COOPERATIVE].iter().enumerate() {
            let k = knob(RESIDENT_MAX + 1 + i as i64).unwrap();
            assert_eq!(k.tile, Some(*cfg));
            assert!(k.stream_k && !cfg.pingpong);
            assert_eq!(k.b_resident, Some(false));
        }
        assert!((0..=RESIDENT_MAX).all(|v| !knob(v).unwrap().stream_k));
    }

    #[test]
    fn a_resident_b_fits_beside_the_ring_or_is_refused() {
        // conv C64 H56 (K = 576: 9 slices) on 128x64 ping-pong tiles, output staged: 7 stages.
        let pp = CONFIGS[6];
        assert_eq!(resident_stages(pp, true, 9), Some(7));
        assert!(resident_shared_bytes(pp, true, 7, 9) <= MAX_SHARED);
        assert!(resident_shared_bytes(pp, true, 8, 9) > MAX_SHARED);
        // Never more stages than the configuration has without its output tile.
        assert_eq!(resident_stages(pp, false, 1), Some(pp.stages));
        // 18 slices of 128 columns (conv C128 H56 3x3) do not fit, nor does a K whose bytes
        // would wrap a u32.
        assert_eq!(resident_stages(CONFIGS[5], true, 18), None);
        assert_eq!(resident_stages(CONFIGS[0], false, u32::MAX), None);
        for cfg in CONFIGS {
            for k_iters in 1..40 {
                for staged in [false, true] {
                    if let Some(n) = resident_stages(cfg, staged, k_iters) {
                        assert!(n >= MIN_RESIDENT_STAGES);
                        assert!(
                            resident_shared_bytes(cfg, staged, n, k_iters) <= MAX_SHARED,
                            "{cfg:?} {k_iters}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_wgmma_wrapper_names_every_accumulator_once() {
        let w = wgmma_wrapper(64, "bf16", false, true);
        assert!(w.contains("m64n64k16.f32.bf16.bf16 {%0, %1,"));
        assert!(w.contains("%31}, %32, %33, p, 1, 1, 0, 1;"));
        assert!(w.contains("setp.ne.b32 p, %34, 0;"));
        assert_eq!(w.matches("\"+f\"").count(), 32);
    }
}
