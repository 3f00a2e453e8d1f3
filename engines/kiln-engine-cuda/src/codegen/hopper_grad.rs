//! `KILN_CUDA_CONV_DGRAD_V2` and `KILN_CUDA_CONV_WGRAD_V2`: the 2-D convolution gradients as
//! implicit GEMMs on the Hopper mainloop of `kernels/hopper_gemm.cuh` (the same kernel as
//! `KILN_CUDA_CONV_FPROP_V2`: TMA and cp.async into an mbarrier ring, warp-specialised wgmma,
//! persistent tiles), compiled for `sm_90a`. The gathered operand of each is in
//! `kernels/hopper_conv_grad.cuh`; the other is loaded by the copy engine through a generated
//! `kiln_h_tma_b`. f16/bf16 operands, NHWC activations (channels contiguous, a multiple of 8),
//! KRSC filters (channels contiguous); anything else is declined with its reason and the V1
//! engines (`super::conv_grad`) run it.
//!
//! - dgrad: `dx[N·H·W, C] = dy'[N·H·W, R·S·Kp] * w[R·S·Kp, C]`, the reduction tap by tap over
//!   the K filters padded to `Kp` (a multiple of 64, so each K slice lies in one tap). A is
//!   dy gathered (taps that a stride skips or that fall outside dy are zero-filled); B is the
//!   filter by TMA through a 4-D map (C, K, S, R), C-contiguous (the GEMM's N-major B).
//! - wgrad: `dwᵀ[R·S·C, K] = x'[R·S·C, N·P·Q] * dy[N·P·Q, K]`: the rows are the filter taps so
//!   that the gathered operand is x (M-major, 16-byte chunks of channels) and dy is a plain 2-D
//!   TMA map (K, N·P·Q). The reduction is split into chunks (the mainloop's batches) when the
//!   tiles alone would leave SMs idle: each chunk's f32 partial sums go to the workspace as
//!   `[chunk][K][R·S·C]` (V1's layout) and V1's reduction kernel (`gemm_split_reduce.cuh`) adds
//!   them in chunk order (deterministic) and runs the epilogue. Where few tiles have many K
//!   slices, the reduction runs stream-K instead (`KILN_H_STREAM_K`): every block the same
//!   number of slices across tile boundaries, the partial tiles added by the block that ends
//!   each tile, in block order, after a launch that zeroes the tiles' counters.

use super::conv_grad::{self, WORKSPACE_ARG};
use super::gemm::{epilogue_body, gemm_params, tensor, Split};
use super::hopper::{self, TileConfig};
use super::{c_type, symbol, Kernel, TensorMapRecipe};
use kiln_core::{ConvDirection, DataType, OpGraph, TensorDesc};
use std::fmt::Write;

/// The tile configurations of the gradient engines: the GEMM's four cooperative ones, then
/// 128 x 64 for narrow problems (a wgrad of 64 filters), then the GEMM's 64 x 256 ping-pong
/// tile (each consumer its own tiles; the wgrad heuristic models the cooperative ones only).
/// The tile knob's value `v > 0` picks `CONFIGS[v - 1]`.
pub const CONFIGS: [TileConfig; 6] = [
    hopper::CONFIGS[0],
    hopper::CONFIGS[1],
    hopper::CONFIGS[2],
    hopper::CONFIGS[3],
    TileConfig {
        wm: 1,
        bn: 64,
        stages: 8,
        staged_stages: 7,
        pingpong: false,
    },
    hopper::CONFIGS[4],
];

/// Multiprocessors the split heuristic assumes (an H100 or H200 SXM). Stream-K plans also give
/// work to at most this many blocks (their workspace holds one partial tile per block): every
/// compute capability 9.0 part has 132 SMs or fewer.
const ASSUMED_SMS: i64 = 132;
/// Stream-K is taken when its modelled time is under this fraction of the best split's (the
/// model is coarse; a close call keeps the measured split).
const STREAM_K_MARGIN: f64 = 0.85;

/// Stream-K is considered only where no tile is spread over more blocks than this: the block
/// that ends a tile adds the others' partial tiles one after another, and on the H200
/// (2026-12-02, docs/benchmarks/conv-grad-notes.md) 4 to 66 parts a tile ran 1.3-2.6x slower
/// than the split, 2 to 3 parts (the C512 7x7 wgrad) 1.18x faster.
const MAX_STREAM_K_PARTS: i64 = 3;

/// A value of the gradient engines' tile knob: a tile configuration, and for wgrad whether the
/// reduction runs stream-K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knob {
    pub tile: TileConfig,
    pub stream_k: bool,
}

/// The configurations stream-K runs with (the cooperative ones).
fn stream_k_configs() -> impl Iterator<Item = TileConfig> {
    CONFIGS.into_iter().filter(|c| !c.pingpong)
}

/// The largest value of direction `dir`'s tile knob: `CONFIGS.len()`, and for wgrad one more
/// per cooperative configuration (the same tile with a stream-K reduction).
pub fn knob_max(dir: ConvDirection) -> i64 {
    let extra = match dir {
        ConvDirection::Wgrad => stream_k_configs().count(),
        _ => 0,
    };
    (CONFIGS.len() + extra) as i64
}

/// Knob value `v` of direction `dir` (0: the heuristic's choice, `None`): `v <=
/// CONFIGS.len()` is `CONFIGS[v - 1]`, a wgrad's larger value the `v - CONFIGS.len()`-th
/// cooperative configuration with stream-K.
pub fn knob(dir: ConvDirection, v: i64) -> Result<Option<Knob>, String> {
    if v == 0 {
        return Ok(None);
    }
    let bad = || format!("tile configuration {v} does not exist");
    let i = usize::try_from(v - 1).map_err(|_| bad())?;
    if let Some(&tile) = CONFIGS.get(i) {
        return Ok(Some(Knob {
            tile,
            stream_k: false,
        }));
    }
    if dir != ConvDirection::Wgrad {
        return Err(bad());
    }
    stream_k_configs()
        .nth(i - CONFIGS.len())
        .map(|tile| {
            Some(Knob {
                tile,
                stream_k: true,
            })
        })
        .ok_or_else(bad)
}
/// A split chunk reduces at least this many slices of 64.
const MIN_ITERS_PER_SPLIT: i64 = 4;
/// At most this many chunks, and at most this much workspace.
const MAX_SPLITS: i64 = 64;
const MAX_WORKSPACE: i64 = 1 << 28;

fn cdiv(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The GEMM a gradient graph becomes on the Hopper mainloop.
struct Plan {
    m: i64,
    n: i64,
    /// The mainloop's reduction extent per batch: dgrad R·S·Kp, wgrad one chunk.
    k: i64,
    /// Reduction chunks (wgrad; 1 for dgrad).
    splits: i64,
    /// Stride phases (a strided dgrad's dense sub-problems; else 1). The mainloop's batches
    /// are the chunks or the phases.
    phases: i64,
    /// Statements before the epilogue's coordinates (a phased dgrad's pixel, and its return
    /// for rows past the image).
    epilogue_prefix: String,
    /// The same for the staged epilogue's values: a phased dgrad's pixel clamped into the
    /// image (a row past it is computed, never stored).
    value_prefix: String,
    /// A phased dgrad's pixel geometry for the staged stores' row offsets.
    phase_rows: Option<PhaseRows>,
    /// B's tensor map.
    b: TensorMapRecipe,
    /// A is K-major (dgrad) or M-major (wgrad).
    a_k_major: bool,
    /// The operand geometry's defines and `kiln_h_tma_b`.
    defines: String,
    /// The epilogue's output coordinates of GEMM element (gm, gn).
    coords: Vec<String>,
    narrow: bool,
}

/// Row gm of phase `batch` of a strided dgrad is dx pixel (gm / (hq·wq), ph_h + stride_h ·
/// ((gm / wq) mod hq), ph_w + stride_w · (gm mod wq)), (ph_h, ph_w) = (batch / stride_w,
/// batch mod stride_w), or none when that lies past the image (h × w).
struct PhaseRows {
    hq: i64,
    wq: i64,
    h: i64,
    w: i64,
    stride_h: i64,
    stride_w: i64,
}

fn aligned(v: i64) -> bool {
    v % 8 == 0
}

/// Why the V2 engine of direction `dir` declines `graph`, or `Ok`.
pub fn supports(graph: &OpGraph, dir: ConvDirection) -> Result<(), String> {
    conv_grad::supports(graph, dir)?;
    let s = conv_grad::split(graph, dir)?;
    let cv = conv_grad::conv_of(&s);
    let dy = tensor(graph, cv.y)?;
    if !matches!(dy.data_type, DataType::F16 | DataType::Bf16) {
        return Err(format!(
            "{} is {}; the Hopper GEMM takes f16 and bf16 operands",
            dy.label(),
            dy.data_type
        ));
    }
    plan(graph, &s, 1).map(|_| ())
}

/// `t`'s stride `st` in bytes when the copy engine can take it, with a size-1 dim's stride free.
fn map_stride(t: &TensorDesc, dim: usize) -> Result<u64, String> {
    if t.dims[dim] == 1 {
        return Ok(16);
    }
    hopper::check_stride(t, t.strides[dim])
}

fn plan(graph: &OpGraph, s: &Split<'_>, splits: i64) -> Result<Plan, String> {
    let cv = conv_grad::conv_of(s);
    let (x, w, dy) = (
        tensor(graph, cv.x)?,
        tensor(graph, cv.w)?,
        tensor(graph, cv.y)?,
    );
    let (nb, c, h, wd) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3]);
    let (kk, r, ss) = (w.dims[0], w.dims[2], w.dims[3]);
    let (p, q) = (dy.dims[2], dy.dims[3]);
    let pr = &cv.params;
    let (sx, sw, sy) = (&x.strides, &w.strides, &dy.strides);
    let mut defines = String::new();
    match cv.direction {
        ConvDirection::Dgrad => {
            if sy[1] != 1 || kk % 8 != 0 || [0, 2, 3].iter().any(|&i| !aligned(sy[i])) {
                return Err(format!(
                    "{} must have contiguous filters, K a multiple of 8 and other strides \
                     multiples of 8 elements (NHWC) for 16-byte gathers; it has K = {kk}, \
                     strides {sy:?}",
                    dy.label()
                ));
            }
            if sw[1] != 1 || c % 8 != 0 {
                return Err(format!(
                    "{} must have contiguous channels and C a multiple of 8 (KRSC) for the \
                     tensor memory accelerator; it has C = {c}, strides {sw:?}",
                    w.label()
                ));
            }
            let kp = cdiv(kk, 64) * 64;
            let (sh, sv) = (pr.stride[0], pr.stride[1]);
            // A strided dgrad without dilation runs as stride_h · stride_w dense sub-problems
            // (phases): the dx pixels of one (h mod stride_h, w mod stride_w), each over only the
            // taps that reach them, ceil(R / stride_h) · ceil(S / stride_w) (a phase with fewer
            // visits its missing ones as zeros).
            let phased = (sh > 1 || sv > 1) && pr.dilation[0] == 1 && pr.dilation[1] == 1;
            let (hq, wq, th, tw) = if phased {
                (cdiv(h, sh), cdiv(wd, sv), cdiv(r, sh), cdiv(ss, sv))
            } else {
                (h, wd, r, ss)
            };
            let phases = if phased { sh * sv } else { 1 };
            let (m, n, k) = (nb * hq * wq, c, th * tw * kp);
            let narrow = conv_grad::fits_i32(graph, cv, [nb * h * wd, n, r * ss * kp])?;
            if !narrow && (h >= 1 << 28 || wd >= 1 << 28 || p >= 1 << 28 || q >= 1 << 28) {
                return Err("the image is too large for the gather's 32-bit coordinates".into());
            }
            if m > i64::from(i32::MAX) - 512 || k > i64::from(i32::MAX) - 512 {
                return Err("the GEMM's extents exceed the tile coordinates' 31 bits".into());
            }
            let b = TensorMapRecipe {
                uid: w.uid,
                data_type: w.data_type,
                dims: vec![c as u64, kk as u64, ss as u64, r as u64],
                strides: vec![map_stride(w, 0)?, map_stride(w, 3)?, map_stride(w, 2)?],
                box_dims: vec![64, 64, 1, 1],
            };
            let sfx = if narrow { "" } else { "LL" };
            defines.push_str("// Data-gradient geometry; strides in elements.\n");
            for (key, v) in [
                ("KILN_DG_H", h),
                ("KILN_DG_W", wd),
                ("KILN_DG_P", p),
                ("KILN_DG_Q", q),
                ("KILN_DG_K", kk),
                ("KILN_DG_KP", kp),
                ("KILN_DG_R", r),
                ("KILN_DG_S", ss),
                ("KILN_DG_STRIDE_H", sh),
                ("KILN_DG_STRIDE_W", sv),
                ("KILN_DG_PAD_H", pr.pre_padding[0]),
                ("KILN_DG_PAD_W", pr.pre_padding[1]),
                ("KILN_DG_DIL_H", pr.dilation[0]),
                ("KILN_DG_DIL_W", pr.dilation[1]),
                ("KILN_DG_DY_STRIDE_N", sy[0]),
                ("KILN_DG_DY_STRIDE_H", sy[2]),
                ("KILN_DG_DY_STRIDE_W", sy[3]),
                ("KILN_DG_HQ", hq),
                ("KILN_DG_WQ", wq),
            ] {
                let _ = writeln!(defines, "#define {key} {v}{sfx}");
            }
            let _ = writeln!(defines, "#define KILN_DG_PHASED {}", u8::from(phased));
            if phased {
                // Phase `batch` = (ph_h, ph_w) reduces over its own taps only: the j-th
                // (jh, jw), jw < tw = ceil((S - s0) / stride_w), is filter tap (r0 + stride_h jh,
                // s0 + stride_w jw), r0 = (ph_h + pad_h) mod stride_h, s0 alike
                // (hopper_conv_grad.cuh counts them).
                let _ = write!(
                    defines,
                    "\n// The filter box of channels [c0, c0 + 64) and reduction indices [c1, c1 + 64) of phase\n\
                     // `batch`: one tap's filters, past K zero-filled by the copy engine.\n\
                     __device__ __forceinline__ void kiln_h_tma_b(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int batch) {{\n\
                     \x20   const int tap = c1 / {kp}, ph_h = batch / {sv}, ph_w = batch % {sv};\n\
                     \x20   const int r0 = (ph_h + {pad_h}) % {sh}, s0 = (ph_w + {pad_w}) % {sv};\n\
                     \x20   const int tw = s0 < {ss} ? ({ss} - s0 + {sv} - 1) / {sv} : 1;\n\
                     \x20   kiln_tma_load_4d(dst, map, bar, c0, c1 - tap * {kp}, s0 + {sv} * (tap % tw), r0 + {sh} * (tap / tw));\n\
                     }}\n",
                    pad_h = pr.pre_padding[0],
                    pad_w = pr.pre_padding[1],
                );
            } else {
                // B slice (c0 = channel, c1 = reduction index): tap c1 / Kp, filter c1 % Kp.
                let _ = write!(
                    defines,
                    "\n// The filter box of channels [c0, c0 + 64) and reduction indices [c1, c1 + 64): one tap's\n\
                     // filters, past K zero-filled by the copy engine.\n\
                     __device__ __forceinline__ void kiln_h_tma_b(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int batch) {{\n\
                     \x20   (void)batch;\n\
                     \x20   const int tap = c1 / {kp};\n\
                     \x20   kiln_tma_load_4d(dst, map, bar, c0, c1 - tap * {kp}, tap % {ss}, tap / {ss});\n\
                     }}\n"
                );
            }
            let value_prefix = if phased {
                format!(
                    "    // Row gm of phase `batch`: pixel (n_, h_, w_) of dx, clamped into the image.\n\
                     \x20   const kiln_idx n_ = gm / {hqwq}{sfx};\n\
                     \x20   const kiln_idx h_ = min((kiln_idx)(batch / {sv}) + {sh}{sfx} * ((gm / {wq}{sfx}) % {hq}{sfx}), (kiln_idx){hl}{sfx});\n\
                     \x20   const kiln_idx w_ = min((kiln_idx)(batch % {sv}) + {sv}{sfx} * (gm % {wq}{sfx}), (kiln_idx){wl}{sfx});\n",
                    hqwq = hq * wq,
                    hl = h - 1,
                    wl = wd - 1
                )
            } else {
                String::new()
            };
            let phase_rows = phased.then_some(PhaseRows {
                hq,
                wq,
                h,
                w: wd,
                stride_h: sh,
                stride_w: sv,
            });
            let (coords, epilogue_prefix) = if phased {
                (
                    vec!["n_".into(), "(gn)".into(), "h_".into(), "w_".into()],
                    format!(
                        "    // Row gm of phase `batch`: pixel (n_, h_, w_) of dx, or none past the image.\n\
                         \x20   const kiln_idx n_ = gm / {hqwq}{sfx};\n\
                         \x20   const kiln_idx h_ = (kiln_idx)(batch / {sv}) + {sh}{sfx} * ((gm / {wq}{sfx}) % {hq}{sfx});\n\
                         \x20   const kiln_idx w_ = (kiln_idx)(batch % {sv}) + {sv}{sfx} * (gm % {wq}{sfx});\n\
                         \x20   if (h_ >= {h}{sfx} || w_ >= {wd}{sfx}) return;\n",
                        hqwq = hq * wq
                    ),
                )
            } else {
                (
                    vec![
                        format!("(gm / {}{sfx})", h * wd),
                        "(gn)".into(),
                        format!("((gm / {wd}{sfx}) % {h}{sfx})"),
                        format!("(gm % {wd}{sfx})"),
                    ],
                    String::new(),
                )
            };
            Ok(Plan {
                m,
                n,
                k,
                splits: 1,
                phases,
                epilogue_prefix,
                value_prefix,
                phase_rows,
                b,
                a_k_major: true,
                defines,
                coords,
                narrow,
            })
        }
        _ => {
            if sx[1] != 1 || c % 8 != 0 || [0, 2, 3].iter().any(|&i| !aligned(sx[i])) {
                return Err(format!(
                    "{} must have contiguous channels, C a multiple of 8 and other strides \
                     multiples of 8 elements (NHWC) for 16-byte gathers; it has C = {c}, \
                     strides {sx:?}",
                    x.label()
                ));
            }
            // dy as one 2-D map (K, N·P·Q): its positions evenly spaced, filters contiguous.
            let ld = if q > 1 {
                sy[3]
            } else if p > 1 {
                sy[2]
            } else {
                sy[0]
            };
            let even = sy[1] == 1
                && (q == 1 || sy[3] == ld)
                && (p == 1 || sy[2] == q * ld)
                && (nb == 1 || sy[0] == p * q * ld);
            if !even || kk % 8 != 0 {
                return Err(format!(
                    "{} must be NHWC-dense (contiguous filters, K a multiple of 8, positions \
                     evenly spaced) for the tensor memory accelerator; it has K = {kk}, strides \
                     {sy:?}",
                    dy.label()
                ));
            }
            let npq = nb * p * q;
            let rows = if npq == 1 {
                16
            } else {
                hopper::check_stride(dy, ld)?
            };
            let (m, n) = (r * ss * c, kk);
            let chunk = cdiv(cdiv(npq, 64), splits) * 64;
            let narrow = conv_grad::fits_i32(graph, cv, [m, n, npq + chunk])?;
            if npq + chunk > i64::from(i32::MAX) || m > i64::from(i32::MAX) - 512 {
                return Err("the GEMM's extents exceed the tile coordinates' 31 bits".into());
            }
            if !narrow && (h >= 1 << 28 || wd >= 1 << 28) {
                return Err("the image is too large for the gather's 32-bit coordinates".into());
            }
            let b = TensorMapRecipe {
                uid: dy.uid,
                data_type: dy.data_type,
                dims: vec![kk as u64, npq as u64],
                strides: vec![rows],
                box_dims: vec![64, 64],
            };
            let sfx = if narrow { "" } else { "LL" };
            defines.push_str("// Weight-gradient geometry; strides in elements.\n");
            for (key, v) in [
                ("KILN_WG_NPQ", npq),
                ("KILN_WG_CHUNK", chunk),
                ("KILN_WG_H", h),
                ("KILN_WG_W", wd),
                ("KILN_WG_C", c),
                ("KILN_WG_P", p),
                ("KILN_WG_Q", q),
                ("KILN_WG_S", ss),
                ("KILN_WG_STRIDE_H", pr.stride[0]),
                ("KILN_WG_STRIDE_W", pr.stride[1]),
                ("KILN_WG_PAD_H", pr.pre_padding[0]),
                ("KILN_WG_PAD_W", pr.pre_padding[1]),
                ("KILN_WG_DIL_H", pr.dilation[0]),
                ("KILN_WG_DIL_W", pr.dilation[1]),
                ("KILN_WG_X_STRIDE_N", sx[0]),
                ("KILN_WG_X_STRIDE_H", sx[2]),
                ("KILN_WG_X_STRIDE_W", sx[3]),
            ] {
                let _ = writeln!(defines, "#define {key} {v}{sfx}");
            }
            let _ = write!(
                defines,
                "\n// The dy box of filters [c0, c0 + 64) at positions [c1, c1 + 64) of chunk `batch`; past\n\
                 // N·P·Q zero-filled by the copy engine.\n\
                 __device__ __forceinline__ void kiln_h_tma_b(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int batch) {{\n\
                 \x20   kiln_tma_load_2d(dst, map, bar, c0, c1 + batch * {chunk});\n\
                 }}\n"
            );
            Ok(Plan {
                m,
                n,
                k: chunk,
                splits: cdiv(npq, chunk),
                phases: 1,
                epilogue_prefix: String::new(),
                value_prefix: String::new(),
                phase_rows: None,
                b,
                a_k_major: false,
                defines,
                // dw is K, C, R, S by dims; row gm = (r, s, c), column gn = the filter.
                coords: vec![
                    "(gn)".into(),
                    format!("(gm % {c}{sfx})"),
                    format!("(gm / {}{sfx})", c * ss),
                    format!("((gm / {c}{sfx}) % {ss}{sfx})"),
                ],
                narrow,
            })
        }
    }
}

/// The wgrad's tile configuration and reduction chunks: the pair with the least modelled time,
/// waves of (tile, chunk) units over the SMs times each unit's slices, plus the workspace's
/// write and read when split.
fn wgrad_choice(graph: &OpGraph, s: &Split<'_>) -> Result<Reduction, String> {
    let cv = conv_grad::conv_of(s);
    let (x, w, dy) = (
        tensor(graph, cv.x)?,
        tensor(graph, cv.w)?,
        tensor(graph, cv.y)?,
    );
    let (m, n) = (w.dims[2] * w.dims[3] * x.dims[1], w.dims[0]);
    let npq = dy.dims[0] * dy.dims[2] * dy.dims[3];
    let iters = cdiv(npq, 64).max(1);
    let mut best = (CONFIGS[0], 1, f64::MAX);
    let mut streamed = (CONFIGS[0], f64::MAX);
    for cfg in stream_k_configs() {
        let (bm, bn) = (i64::from(cfg.bm()), i64::from(cfg.bn));
        let tiles = cdiv(m, bm) * cdiv(n, bn);
        // µs per slice of 64: its MMAs at about 5 TFLOP/s per SM, or its operands' bytes
        // at about 80 GB/s per SM from L2 (narrow tiles load more per MMA), whichever is
        // longer; about 1.5 µs per unit to fill the ring and run the epilogue.
        let mma = (2 * bm * bn * 64) as f64 / 5.0e6;
        let bytes = ((bm + bn) * 64 * 2) as f64 / 8.0e4;
        let slice = mma.max(bytes);
        let units = tiles * iters;
        let per = cdiv(units, units.min(ASSUMED_SMS));
        // The most blocks one tile's slices are spread over.
        let parts = cdiv(iters, per) + 1;
        if tiles < ASSUMED_SMS && parts <= MAX_STREAM_K_PARTS {
            // Stream-K: the slices evenly over the blocks; a partial tile written, and the
            // others' read by the block that ends the tile, through L2 (about 80 GB/s per
            // SM); the counters' launch.
            let t = per as f64 * slice + 1.5 + (parts * bm * bn * 4) as f64 / 8.0e4 + 2.0;
            if t < streamed.1 {
                streamed = (cfg, t);
            }
        }
        let max_splits = (iters / MIN_ITERS_PER_SPLIT).clamp(1, MAX_SPLITS);
        for want in 1..=max_splits {
            let chunk = cdiv(iters, want);
            let splits = cdiv(iters, chunk);
            if splits > 1 && splits * m * n * 4 > MAX_WORKSPACE {
                break;
            }
            let waves = cdiv(tiles * splits, ASSUMED_SMS) as f64;
            let mut t = waves * (chunk as f64 * slice + 1.5);
            if splits > 1 {
                // The partial sums written and read again at about 3 TB/s, and a launch.
                t += 2.0 * (splits * m * n * 4) as f64 / 3.0e6 + 3.0;
            }
            if t < best.2 {
                best = (cfg, splits, t);
            }
        }
    }
    Ok(if streamed.1 < STREAM_K_MARGIN * best.2 {
        Reduction {
            tile: streamed.0,
            splits: 1,
            stream_k: true,
        }
    } else {
        Reduction {
            tile: best.0,
            splits: best.1,
            stream_k: false,
        }
    })
}

/// A plan's tile configuration and how its reduction runs: in `splits` chunks (1: whole), or
/// stream-K (wgrad).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Reduction {
    tile: TileConfig,
    splits: i64,
    stream_k: bool,
}

impl Reduction {
    fn whole(tile: TileConfig) -> Reduction {
        Reduction {
            tile,
            splits: 1,
            stream_k: false,
        }
    }
}

/// The blocks a stream-K plan gives work to, and the f32 offset of their partial tiles in the
/// workspace (after a u32 counter per tile, rounded up to 64): as `hopper_gemm.cuh` lays it out.
fn stream_k_layout(pl: &Plan, cfg: TileConfig) -> (i64, i64) {
    let tiles = cdiv(pl.m, i64::from(cfg.bm())) * cdiv(pl.n, i64::from(cfg.bn));
    hopper::stream_k_layout(tiles, cdiv(pl.k, 64))
}

/// Workspace bytes of the plan: the partial sums of a split wgrad, else none.
pub fn workspace_bytes(
    graph: &OpGraph,
    dir: ConvDirection,
    knob: Option<Knob>,
) -> Result<u64, String> {
    if dir != ConvDirection::Wgrad {
        return Ok(0);
    }
    let s = conv_grad::split(graph, dir)?;
    let r = choice(graph, &s, knob)?;
    let pl = plan(graph, &s, r.splits)?;
    Ok(if r.stream_k {
        let (ctas, flags) = stream_k_layout(&pl, r.tile);
        ((flags + ctas * i64::from(r.tile.bm()) * i64::from(r.tile.bn)) * 4) as u64
    } else if pl.splits > 1 {
        (pl.splits * pl.m * pl.n * 4) as u64
    } else {
        0
    })
}

/// The tile configuration (the knob's, else the heuristic's) and, for wgrad, the reduction.
fn choice(graph: &OpGraph, s: &Split<'_>, knob: Option<Knob>) -> Result<Reduction, String> {
    let cv = conv_grad::conv_of(s);
    match cv.direction {
        ConvDirection::Dgrad => {
            let pl = plan(graph, s, 1)?;
            // As for fprop, 64x256 ping-pong tiles where `pick` took 128x128 ones with N >= 256
            // (stride phases excepted: not measured there). H200, bf16, 2026-12-02
            // (docs/benchmarks/h200-2026-12-02-session11.md): N64 C512 H7 3x3 0.0491 -> 0.0350
            // ms, N32 C256 H14 3x3 0.0264 -> 0.0195.
            let pick = || {
                let cfg = hopper::pick(pl.m, pl.n, pl.phases);
                if pl.phases == 1 && hopper::prefers_wide_ping_pong(cfg, pl.n) {
                    hopper::CONFIGS[4]
                } else {
                    cfg
                }
            };
            Ok(Reduction::whole(knob.map_or_else(pick, |k| k.tile)))
        }
        _ => {
            match knob {
                None => wgrad_choice(graph, s),
                Some(k) if k.stream_k => Ok(Reduction {
                    tile: k.tile,
                    splits: 1,
                    stream_k: true,
                }),
                // A chosen tile keeps the split that fills the SMs with its own tile count.
                Some(Knob { tile: t, .. }) => {
                    let pl = plan(graph, s, 1)?;
                    let tiles = cdiv(pl.m, i64::from(t.bm())) * cdiv(pl.n, i64::from(t.bn));
                    let iters = cdiv(pl.k, 64).max(1);
                    let mut want = (ASSUMED_SMS / tiles)
                        .clamp(1, (iters / MIN_ITERS_PER_SPLIT).clamp(1, MAX_SPLITS));
                    while want > 1 && want * pl.m * pl.n * 4 > MAX_WORKSPACE {
                        want -= 1;
                    }
                    Ok(Reduction {
                        tile: t,
                        splits: want,
                        stream_k: false,
                    })
                }
            }
        }
    }
}

/// The staged-store output of a dgrad: the one tensor the epilogue writes, 16-bit, with
/// element (gm, gn) at gm · ld + gn (NHWC-like, rows 16-byte aligned).
fn staged(graph: &OpGraph, s: &Split<'_>) -> Option<(i64, i64)> {
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
    let (h, w) = (f.dims[2], f.dims[3]);
    let ld = st[3];
    let even = st[1] == 1
        && aligned(ld)
        && (h == 1 || st[2] == w * ld)
        && (f.dims[0] == 1 || st[0] == h * w * ld);
    even.then_some((f.uid, ld))
}

/// Generates the kernels of a dgrad or wgrad graph (which `supports` accepted) with the knob's
/// choice (`None`: the heuristic's): the Hopper GEMM; for a split wgrad also the reduction of
/// its partial sums, for a stream-K one first the zeroing of its tile counters.
pub fn generate(
    graph: &OpGraph,
    dir: ConvDirection,
    knob: Option<Knob>,
) -> Result<Vec<Kernel>, String> {
    supports(graph, dir)?;
    let s = conv_grad::split(graph, dir)?;
    let cv = conv_grad::conv_of(&s);
    let red = choice(graph, &s, knob)?;
    let cfg = red.tile;
    let pl = plan(graph, &s, red.splits)?;
    let split_k = pl.splits > 1;
    let stream_k = red.stream_k.then(|| stream_k_layout(&pl, cfg));
    let params = gemm_params(graph);
    let name = |u: i64| {
        params
            .name(u)
            .ok_or_else(|| format!("uid {u} is not a parameter"))
    };
    let dy = tensor(graph, cv.y)?;
    let elem = dy.data_type;
    let a_uid = if dir == ConvDirection::Dgrad {
        cv.y
    } else {
        cv.x
    };
    let (idx, sfx) = if pl.narrow {
        ("int", "")
    } else {
        ("long long", "LL")
    };
    // (A phased dgrad's rows are strided pixels: each row's offset is its pixel's.)
    let stage_out = if dir == ConvDirection::Dgrad {
        staged(graph, &s)
    } else {
        None
    };
    let (engine, prefix) = match dir {
        ConvDirection::Dgrad => (crate::CONV_DGRAD_V2, "conv_dgrad_v2"),
        _ => (crate::CONV_WGRAD_V2, "conv_wgrad_v2"),
    };
    let ty = c_type(elem).ok_or("bad type")?;
    let mut src = format!(
        "// {engine}, generated for one graph: the Hopper GEMM of hopper_gemm.cuh with the\n\
         // gathered operand of hopper_conv_grad.cuh, specialised to the graph's types, shapes and\n\
         // strides, and {}.\n\
         #include \"common.cuh\"\n\
         #include \"hopper_ptx.cuh\"\n\n\
         typedef {ty} elem_t;\n\
         typedef {idx} kiln_idx;\n\n",
        if split_k {
            "its partial sums stored to the workspace"
        } else if stream_k.is_some() {
            "a stream-K reduction, then its fused epilogue"
        } else {
            "its fused epilogue"
        }
    );
    // The gathering producer keeps its rows' windows in registers: 16 rows of a 256-row dgrad
    // tile (three values each) need more than the 56 of 8 rows, or they spill.
    let producer = if dir == ConvDirection::Dgrad && cfg.wm == 2 {
        88
    } else {
        56
    };
    let define = |src: &mut String, key: &str, v: String| {
        let _ = writeln!(src, "#define {key} {v}");
    };
    for (key, v) in [
        ("KILN_GEMM_M", format!("{}{sfx}", pl.m)),
        ("KILN_GEMM_N", format!("{}{sfx}", pl.n)),
        ("KILN_GEMM_K", format!("{}{sfx}", pl.k)),
        ("KILN_H_BATCHES", (pl.splits * pl.phases).to_string()),
        ("KILN_H_WM", cfg.wm.to_string()),
        ("KILN_H_BN", cfg.bn.to_string()),
        (
            "KILN_H_STAGES",
            hopper::stages(cfg, stage_out.is_some()).to_string(),
        ),
        ("KILN_H_STAGED", u8::from(stage_out.is_some()).to_string()),
        ("KILN_H_GROUP_M", "16".to_string()),
        ("KILN_H_A_KMAJOR", u8::from(pl.a_k_major).to_string()),
        ("KILN_H_B_KMAJOR", "0".to_string()),
        ("KILN_H_A_GATHER", "2".to_string()),
        (
            "KILN_GRAD_DGRAD",
            u8::from(dir == ConvDirection::Dgrad).to_string(),
        ),
        ("KILN_H_PRODUCER_REGS", producer.to_string()),
        (
            "KILN_H_CONSUMER_REGS",
            hopper::consumer_regs(producer).to_string(),
        ),
        ("KILN_GEMM_A", name(a_uid)?),
    ] {
        define(&mut src, key, v);
    }
    if cfg.pingpong {
        define(&mut src, "KILN_H_PINGPONG", "1".into());
    }
    if let Some((ctas, _)) = stream_k {
        define(&mut src, "KILN_H_STREAM_K", "1".into());
        define(&mut src, "KILN_H_SK_CTAS", ctas.to_string());
        define(&mut src, "KILN_H_SK_WS", "kiln_ws".into());
    }
    if split_k {
        src.push_str("// The reduction is split in chunks of KILN_GEMM_K, one per batch.\n");
    }
    src.push('\n');
    src.push_str(&pl.defines);
    src.push_str(&hopper::wgmma_wrapper(
        cfg.bn,
        if elem == DataType::F16 { "f16" } else { "bf16" },
        !pl.a_k_major,
        true,
    ));
    let uids: Vec<String> = params.list.iter().map(|(u, _)| u.to_string()).collect();
    let mut args: Vec<String> = (0..params.list.len()).map(|i| format!("p{i}")).collect();
    let mut declared = params.declare(graph)?;
    let mut kernel_args: Vec<i64> = params.list.iter().map(|&(u, _)| u).collect();
    let reduce_params = format!("{declared}, const float* __restrict__ kiln_ws");
    if split_k || stream_k.is_some() {
        args.push("kiln_ws".into());
        kernel_args.push(WORKSPACE_ARG);
        declared.push_str(", float* __restrict__ kiln_ws");
    }
    let _ = write!(
        src,
        "\n// The kernel's parameters: the tensor map, then tensor UIDs {} as {}{}.\n",
        uids.join(", "),
        args[..params.list.len()].join(", "),
        if split_k || stream_k.is_some() {
            ", then the workspace as kiln_ws"
        } else {
            ""
        }
    );
    define(&mut src, "KILN_GEMM_SYMBOL", "KILN_SYMBOL".into());
    define(
        &mut src,
        "KILN_H_MAP_PARAMS",
        "const __grid_constant__ kiln_tensor_map map_b".into(),
    );
    define(&mut src, "KILN_GEMM_PARAMS", declared);
    define(&mut src, "KILN_GEMM_ARGS", args.join(", "));
    let epilogue = epilogue_body(graph, &s, &params, &pl.coords, pl.epilogue_prefix.clone())?;
    if split_k {
        // Element (gm = tap, gn = filter) of chunk `batch` at [batch][gn][gm]: V1's layout
        // [chunk][K][R·S·C], which its reduction kernel reads.
        let _ = write!(
            src,
            "\n// Chunk `batch`'s partial sum of dw[gn][gm], to the workspace.\n\
             __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
             \x20   kiln_ws[(batch * {}LL + (kiln_i64)gn) * {}LL + (kiln_i64)gm] = acc_;\n\
             }}\n",
            pl.n, pl.m
        );
    } else {
        let _ = write!(
            src,
            "\n// The fused epilogue of output element (gm, gn), given its GEMM result.\n\
             __device__ __forceinline__ void kiln_gemm_epilogue(KILN_GEMM_PARAMS, kiln_i64 batch, kiln_idx gm, kiln_idx gn, float acc_) {{\n\
             {epilogue}}}\n"
        );
    }
    if let Some((uid, ld)) = stage_out {
        let out = tensor(graph, uid)?;
        let _ = write!(
            src,
            "\n// Staged stores: the one tensor the epilogue writes, row gm at gm * ld.\n\
             typedef {} out_t;\n",
            c_type(out.data_type).ok_or("bad type")?
        );
        define(&mut src, "KILN_H_OUT", name(uid)?);
        define(&mut src, "KILN_H_OUT_LD", format!("{ld}{sfx}"));
        src.push_str(
            "__device__ __forceinline__ kiln_i64 kiln_h_out_offset(kiln_i64 batch) {\n\
             \x20   (void)batch;\n\
             \x20   return 0;\n\
             }\n",
        );
        if let Some(g) = &pl.phase_rows {
            // dx is NHWC-dense with rows of ld elements (`staged`): pixel (n, h, w) is row
            // (n·H + h)·W + w.
            let _ = write!(
                src,
                "// Row gm of phase `batch`: its dx pixel's offset, or -1 past the image.\n\
                 __device__ __forceinline__ kiln_i64 kiln_h_out_row(int batch, kiln_idx gm) {{\n\
                 \x20   const kiln_i64 n = gm / {hqwq}LL, h = batch / {sw} + {sh}LL * ((gm / {wq}LL) % {hq}LL), w = batch % {sw} + {sw}LL * (gm % {wq}LL);\n\
                 \x20   return h < {h}LL && w < {w}LL ? ((n * {h}LL + h) * {w}LL + w) * {ld}LL : -1;\n\
                 }}\n",
                hqwq = g.hq * g.wq,
                wq = g.wq,
                hq = g.hq,
                h = g.h,
                w = g.w,
                sh = g.stride_h,
                sw = g.stride_w,
            );
            define(
                &mut src,
                "KILN_H_OUT_ROW(batch, gm)",
                "kiln_h_out_row(batch, gm)".into(),
            );
        }
        src.push_str(&hopper::epilogue_value(
            graph,
            &s,
            &params,
            &pl.coords,
            &pl.value_prefix,
            uid,
        )?);
    }
    src.push_str("\n#include \"hopper_gemm.cuh\"\n");
    let sym = symbol(prefix, &src);
    let source = src.replace("KILN_SYMBOL", &sym);
    let bm = i64::from(cfg.bm());
    let tiles = cdiv(pl.m, bm) as i128
        * cdiv(pl.n, i64::from(cfg.bn)) as i128
        * (pl.splits * pl.phases) as i128;
    if tiles > i128::from(i32::MAX) {
        return Err(format!("{tiles} tiles are beyond the grid's limit"));
    }
    let grid = match stream_k {
        Some((ctas, _)) => ctas as u32,
        None => tiles as u32,
    };
    let mut kernels = Vec::new();
    if let Some((_, flags)) = stream_k {
        kernels.push(stream_k_counters(
            engine,
            "conv_wgrad_v2_counters",
            tiles as i64,
            flags,
        ));
    }
    kernels.push(Kernel {
        symbol: sym,
        source,
        args: kernel_args.clone(),
        grid: [grid, 1, 1],
        block: [384, 1, 1],
        shared_bytes: hopper::shared_bytes(cfg, stage_out.is_some()),
        maps: vec![pl.b.clone()],
        persistent: true,
        cooperative: false,
        arch_specific: true,
    });
    if split_k {
        // V1's reduction: M = K filters, N = R·S·C, with V1's output coordinates.
        let (c, ss) = (tensor(graph, cv.x)?.dims[1], tensor(graph, cv.w)?.dims[3]);
        let coords = [
            "(gm)".to_string(),
            format!("(gn % {c}{sfx})"),
            format!("(gn / {}{sfx})", c * ss),
            format!("((gn / {c}{sfx}) % {ss}{sfx})"),
        ];
        let epilogue = epilogue_body(graph, &s, &params, &coords, String::new())?;
        kernels.push(conv_grad::reduce_kernel(
            engine,
            ty,
            idx,
            (pl.n, pl.m, pl.splits),
            &reduce_params,
            &args,
            &epilogue,
            &uids,
            kernel_args,
        ));
    }
    Ok(kernels)
}

/// The launch before a stream-K GEMM: its `tiles` counters (the first `flags` u32 of the
/// workspace) set to zero; `prefix` names its symbol.
pub(super) fn stream_k_counters(engine: &str, prefix: &str, tiles: i64, flags: i64) -> Kernel {
    let src = format!(
        "// {engine}, generated for one graph: the stream-K tile counters of the GEMM that
         // follows, zeroed.
         extern \"C\" __global__ void __launch_bounds__(256) KILN_SYMBOL(float* __restrict__ kiln_ws) {{
         \x20   unsigned* counters = reinterpret_cast<unsigned*>(kiln_ws);
         \x20   for (int i = blockIdx.x * 256 + threadIdx.x; i < {flags}; i += gridDim.x * 256) counters[i] = 0u;
         }}
"
    );
    let sym = symbol(prefix, &src);
    Kernel {
        symbol: sym.clone(),
        source: src.replace("KILN_SYMBOL", &sym),
        args: vec![WORKSPACE_ARG],
        grid: [cdiv(tiles, 256).clamp(1, 64) as u32, 1, 1],
        block: [256, 1, 1],
        shared_bytes: 0,
        maps: Vec::new(),
        persistent: false,
        cooperative: false,
        arch_specific: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gradient_configuration_fits_the_shared_memory_of_a_hopper_block() {
        for cfg in CONFIGS {
            assert!(hopper::shared_bytes(cfg, false) <= 227 * 1024, "{cfg:?}");
            assert!(
                hopper::shared_bytes(cfg, true) <= 227 * 1024,
                "{cfg:?} staged"
            );
            assert!(cfg.wm * cfg.bn / 2 <= 128, "{cfg:?}");
        }
    }
}
