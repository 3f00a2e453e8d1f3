//! Winograd F(2x2, 3x3) forward convolution: the `conv_algo = 2` path of
//! `KILN_CPU_CONV_FPROP_GEMM_V1`, and its automatic choice for 3x3 convolutions with enough
//! channels.
//!
//! A 3x3, stride-1, undilated, ungrouped 2-D convolution is computed on 2x2 output tiles. Each
//! 4x4 input tile `d` becomes `V = Bᵀ d B`, each 3x3 filter `g` becomes `U = G g Gᵀ`, the 16
//! element positions ξ of the transformed tiles are multiplied as 16 independent GEMMs over the
//! channels (`M_ξ[K x tiles] = U_ξ[K x C] · V_ξ[C x tiles]`), and each output tile is
//! `Y = Aᵀ M A`: 16 multiplies for 4 outputs instead of 36.
//!
//! The GEMMs run kiln's micro-kernel of the plan's level ([`Packed`]) on operands that are
//! already in its slivers, so nothing is packed between the transforms and the multiplies: the
//! filter transform writes U as left slivers (`mr` filters side by side), the input transform
//! writes V as right slivers (`nr` tiles side by side), and K and each block's tiles are padded
//! to whole slivers (the padding is zeros; its results are never read).
//!
//! At the AVX-512 levels the input transform (staged rows to V) and the output transform (M
//! to channels-first rows, with a fused bias + relu) run in AVX-512 registers 16 tiles at a
//! time, and at the AVX2 level both run in AVX2 registers 8 at a time, with the same
//! operations in the same order as the loops the portable level runs, so they give the same
//! bits.
//!
//! Both transforms work on rows of one channel. A channels-last input (dense channels) is
//! staged 16 channels at a time: each pixel's 16 channels are read as one run and spread over
//! 16 planes of rows, instead of each channel's row read element by element a pixel apart. A
//! channels-last output is transformed into channels-first rows of 16 channels, which are then
//! transposed into the output tile. On the 2-core AVX-512 Xeon of 2026-12-05 (N8 C64 56x56,
//! bias + relu) the channels-last case went from 10.8 to 6.2-6.5 ms, against 4.5-5.3 ms
//! channels-first, and f16 channels-last from 15.1 to 6.7-7.9 ms.
//!
//! The work is cut into blocks of whole rows of tiles (a block may run over several images).
//! Workers take blocks one at a time; each transforms its block's input into its own slice of
//! the caller's workspace, runs the 16 GEMMs, transforms the result back one image at a time
//! into a tile of the output and hands that tile to the fused epilogue, which stores it. The
//! filters are transformed once per execute, into the shared front of the workspace.
//!
//! Accuracy: every transform only adds, subtracts and halves, so the f32 error stays a small
//! multiple of a direct sum's. F(4x4, 3x3) would save more multiplies, but its transforms scale
//! values by up to 8 and lose about that much more precision, so it is not offered. Tried on
//! 2026-12-01 (points 0, ±1, ±2, generic transforms over 8 tiles at a time): errors of 3e-4 on
//! 171-term f32 sums, outside the conformance suite's f32 bound, and 1.2-1.35x slower than this
//! F(2x2) on the standard 3x3 cases (the transforms, not the GEMMs, dominated).

use super::geometry::Shape;
use crate::fast::claims::{run_slots, Claims};
use crate::fast::element_io::{load, SharedPtr};
use crate::fast::epilogue::{BoundEpilogue, EpiloguePtrs, Tile};
use crate::fast::isa::Isa;
use crate::fast::sgemm::Packed;
use kiln_core::DataType;
use std::ops::Range;

/// Element positions of a transformed 4x4 tile.
const XI: usize = 16;
/// Lanes the transforms work in (one AVX2 register of f32).
const LANES: usize = 8;
/// Bytes of transformed input and GEMM output (V and M) one block aims for, so that both stay
/// in a core's L2 cache with room to spare. On the 2-core AVX-512 Xeon of 2026-12-05 half of the
/// earlier 1 MiB made N1 C64 56x56 about 19% faster (median of six alternating rounds; blocks of
/// 2 rows of 28 tiles instead of 5, faster on one thread too) and N8 C64 about 5%; the clamp
/// below keeps wide-channel blocks (C256) as they were.
const TARGET_BLOCK_BYTES: usize = 1 << 19;
/// How many channels ahead the input transform prefetches the rows it will read.
const AHEAD: usize = 2;
/// Channels a channels-last input's rows are staged for at a time ([`WinogradPlan::stage_planes`]).
const STAGED_CHANNELS: usize = 16;
/// The fewest output channels of a part of a block ([`WinogradPlan::layout`]'s `k_parts`).
const K_PART_LEAST: usize = 2 * STAGED_CHANNELS;
/// Channels of the GEMMs' depth multiplied per pass, so that a right sliver stays in L1.
const KC: usize = 128;
/// Buffers start on a multiple of this many floats (64 bytes).
const FLOAT_ALIGN: usize = 16;
/// Floats between the end of one position's plane of V (or M) and the start of the next. The
/// planes' own sizes are multiples of 4 KiB for most shapes, so without it the input transform's
/// 16 stores of a tile (one per plane), and the output transform's 16 loads, would all fall in
/// one set of the L1 cache (sets repeat every 4 KiB), more lines than it has ways: each store
/// then evicted the line the one before had brought in. One cache line of skew per plane puts
/// the 16 in 16 sets.
const PLANE_SKEW: usize = 16;

/// Whether Winograd F(2x2, 3x3) computes this convolution: 2-D (or 3-D with a depth of 1 and a
/// 1-deep filter), 3x3 filter, stride 1, dilation 1, one group; any padding.
pub(crate) fn eligible(s: &Shape) -> bool {
    s.groups == 1
        && s.filter == [1, 3, 3]
        && s.stride == [1, 1, 1]
        && s.dilation == [1, 1, 1]
        && s.input[0] == 1
        && s.output[0] == 1
        && s.pad[0] == 0
}

/// Whether Winograd is expected to beat im2col: eligible, with enough channels on both sides
/// for the GEMMs to dominate the transforms, and an output of at least a few tiles: 64
/// positions an image, or 64 tiles over the batch (blocks span images). On the 2-core Xeon of
/// 2026-12-06, 7x7 outputs with 64-512 channels ran 1.3-2.1× faster as Winograd from 4 images
/// of 512 channels (64 tiles) and 8 of fewer, and slower with 1 or 2 images.
pub(crate) fn preferred(s: &Shape) -> bool {
    let tiles = s.output[1].div_ceil(2) * s.output[2].div_ceil(2);
    eligible(s)
        && s.cg >= 16
        && s.kg >= 16
        && (s.output[1] * s.output[2] >= 64 || s.n * tiles >= 64)
}

/// How much faster per column [`Packed::wide_for_isa`]'s kernel must be for a layout: a plan
/// takes it when its share of real columns ([`block_fill`]) times this is at least the other
/// kernel's.
const WIDE_KERNEL_GAIN: f64 = 1.05;

/// The share of the GEMMs' columns that are tiles rather than padding when `total_rows` rows
/// of `tiles_w` tiles run in blocks of `block_rows` rows, each block's tiles padded to whole
/// right slivers of `nr` (the last block's too, however few rows it has).
fn block_fill(total_rows: usize, tiles_w: usize, block_rows: usize, nr: usize) -> f64 {
    let block_rows = block_rows.clamp(1, total_rows.max(1));
    let blocks = total_rows.div_ceil(block_rows);
    let last = total_rows - (blocks - 1) * block_rows;
    let padded = (blocks - 1) * (block_rows * tiles_w).next_multiple_of(nr)
        + (last * tiles_w).next_multiple_of(nr);
    (total_rows * tiles_w) as f64 / padded.max(1) as f64
}

/// A Winograd F(2x2, 3x3) convolution prepared for one shape.
#[derive(Debug, Clone)]
pub(crate) struct WinogradPlan {
    s: Shape,
    /// The epilogue's tile rows are output positions (channels-last output), not channels.
    rows_are_positions: bool,
    tiles_h: usize,
    tiles_w: usize,
    /// Rows of tiles per block, and the number of blocks.
    block_rows: usize,
    blocks: usize,
    /// Each block's output channels in this many parts of `k_part` (a multiple of
    /// [`STAGED_CHANNELS`]), one work item each: with fewer blocks than twice the workers
    /// (one small image), the workers share a block's GEMMs instead of one running it alone.
    /// Each part transforms the block's input itself.
    k_parts: usize,
    k_part: usize,
    /// Tile stride of the M buffer (room for a full last chunk of lanes and for whole
    /// micro-kernel tiles).
    ld: usize,
    /// Tiles of a block rounded up to whole right slivers of the kernel.
    tpad: usize,
    /// The share of the GEMMs' columns that are tiles rather than padding ([`block_fill`]).
    fill: f64,
    /// Output channels rounded up to whole left slivers of the kernel.
    kpad: usize,
    /// Floats from one position ξ's part of a left sliver of U to the next: C steps of `mr`
    /// values, then [`PLANE_SKEW`] more. Without the skew a sliver's 16 parts began 8 KiB apart
    /// for C = 256 (4 KiB for C = 128), all in one set of the L1 cache, and the filter
    /// transform's 16 stores of a channel evicted each other.
    u_plane: usize,
    /// Left slivers of U (`kpad / mr`).
    u_slivers: usize,
    /// Floats per staging row of the input transform.
    row_len: usize,
    /// The input's channels are dense (channels-last): its rows are staged
    /// [`STAGED_CHANNELS`] channels at a time, each pixel's channels read as one run, instead of
    /// one channel's row at a time element by element.
    staged: bool,
    /// Most output positions one image contributes to a block.
    segment: usize,
    slots: usize,
    /// The instruction set the GEMMs run with.
    isa: Isa,
    /// Its micro-kernel; U and V are packed in its slivers.
    kernel: Packed,
    /// Floats of workspace: the most that any level's layout of this convolution needs.
    workspace: usize,
}

/// One worker's buffers.
struct Slot<'a> {
    v: &'a mut [f32],
    m: &'a mut [f32],
    out: &'a mut [f32],
    scratch: &'a mut [f32],
    rows: &'a mut [f32],
    /// The staged planes of a channels-last input ([`WinogradPlan::stage_planes`]).
    planes: &'a mut [f32],
    /// A channels-last output's group of channels, channels-first, before it is transposed into
    /// `out`.
    group: &'a mut [f32],
}

impl WinogradPlan {
    /// Plans the convolution `s` (which must be [`eligible`]) for `slots` workers, running the
    /// kernels of `isa`. `tile_knob`, when non-zero, is the output positions a block aims for
    /// (four per tile).
    pub fn new(
        s: &Shape,
        rows_are_positions: bool,
        tile_knob: usize,
        slots: usize,
        isa: Isa,
    ) -> Self {
        // SAFETY: the plan's level is one this processor runs (isa_to_run).
        let kernel = unsafe { Packed::for_isa(isa) };
        let mut plan = Self::layout(s, rows_are_positions, tile_knob, slots, isa, kernel.dims());
        plan.kernel = kernel;
        // The level's wider kernel where its columns are filled about as well (it multiplies
        // faster, but pads the tiles to more columns).
        // SAFETY: as above.
        if let Some(wide) = unsafe { Packed::wide_for_isa(isa) } {
            let other = Self::layout(s, rows_are_positions, tile_knob, slots, isa, wide.dims());
            if other.fill * WIDE_KERNEL_GAIN >= plan.fill {
                plan = other;
                plan.kernel = wide;
            }
        }
        // The workspace a plan asks for must not depend on the level it runs here (a plan
        // restored on another processor keeps its size), so it is the most any level's layout
        // needs, with either of its kernels.
        plan.workspace = Isa::ALL
            .into_iter()
            .flat_map(|level| {
                std::iter::once(Packed::dims_of(level))
                    .chain(Packed::wide_dims_of(level))
                    .map(move |dims| (level, dims))
            })
            .map(|(level, dims)| {
                Self::layout(s, rows_are_positions, tile_knob, slots, level, dims).own_floats()
            })
            .max()
            .unwrap_or(0);
        plan
    }

    /// The blocks and buffers of the convolution for a kernel of `(mr, nr)`.
    fn layout(
        s: &Shape,
        rows_are_positions: bool,
        tile_knob: usize,
        slots: usize,
        isa: Isa,
        (mr, nr): (usize, usize),
    ) -> Self {
        let slots = slots.max(1);
        let (oh, ow) = (s.output[1], s.output[2]);
        let (tiles_h, tiles_w) = (oh.div_ceil(2), ow.div_ceil(2).max(1));
        let total_rows = (s.n * tiles_h).max(1);
        // Enough blocks to keep every worker busy twice over, when there are that many rows,
        // unless the output channels can be split instead (k_parts below): thin blocks pad
        // their tiles to whole slivers (one 14x14 image in four blocks of 14 tiles ran its
        // GEMMs on 32 columns each).
        let most = if s.kg >= 2 * K_PART_LEAST {
            total_rows
        } else {
            total_rows.div_ceil(2 * slots).max(1)
        };
        let block_rows = if tile_knob > 0 {
            (tile_knob / 4).max(1).div_ceil(tiles_w).min(most)
        } else {
            // V and M take 16 floats per tile and channel: 64 tiles at 64 + 64 channels, 32
            // (the least) at 256 + 256. Between half and twice that, the rows of tiles that
            // fill the kernel's slivers best (rows of 7 tiles: 49 pad to 64 columns, 63 to 64).
            let target = (TARGET_BLOCK_BYTES / (XI * 4 * (s.cg + s.kg).max(1))).clamp(32, 256);
            let most = (2 * target).div_ceil(tiles_w).min(most);
            let least = (target / 2 / tiles_w).clamp(1, most);
            let fill = |r: usize| block_fill(total_rows, tiles_w, r, nr);
            let near = |r: usize| (r * tiles_w).abs_diff(target);
            (least..=most)
                .max_by(|&a, &b| fill(a).total_cmp(&fill(b)).then(near(b).cmp(&near(a))))
                .unwrap_or(1)
        };
        let block_tiles = block_rows * tiles_w;
        let tpad = block_tiles.next_multiple_of(nr);
        let blocks = total_rows.div_ceil(block_rows);
        // At least twice as many items as workers, in parts of at least K_PART_LEAST channels.
        // A part costs one more input transform of the block: about 2 / k_part of its GEMMs.
        let k_parts = if blocks >= 2 * slots {
            1
        } else {
            (2 * slots).div_ceil(blocks)
        }
        .min(s.kg / K_PART_LEAST)
        .max(1);
        let k_part = s.kg.div_ceil(k_parts).next_multiple_of(STAGED_CHANNELS);
        WinogradPlan {
            s: s.clone(),
            rows_are_positions,
            tiles_h,
            tiles_w,
            block_rows,
            blocks,
            k_parts: s.kg.div_ceil(k_part),
            k_part,
            ld: tpad.max(block_tiles.next_multiple_of(LANES) + LANES),
            tpad,
            fill: block_fill(total_rows, tiles_w, block_rows, nr),
            kpad: s.kg.next_multiple_of(mr),
            u_plane: s.cg * mr + PLANE_SKEW,
            u_slivers: s.kg.div_ceil(mr),
            row_len: (2 * tiles_w + 2).next_multiple_of(LANES) + LANES,
            staged: s.xs.1 == 1 && s.cg > 1,
            segment: block_rows.min(tiles_h) * 2 * ow,
            slots,
            isa,
            kernel: Packed::portable(),
            workspace: 0,
        }
    }

    /// Floats from one position's plane of V (C steps of tpad / nr right slivers) to the next.
    fn v_plane(&self) -> usize {
        self.s.cg * self.tpad + PLANE_SKEW
    }

    /// Floats from one position's plane of M (kpad rows of ld) to the next.
    fn m_plane(&self) -> usize {
        self.kpad * self.ld + PLANE_SKEW
    }

    fn filter_floats(&self) -> usize {
        (self.u_slivers * XI * self.u_plane).next_multiple_of(FLOAT_ALIGN)
    }

    /// Floats of one worker's buffers: V, M, the output tile, epilogue scratch, staging rows,
    /// staged planes, the group of output channels.
    fn slot_parts(&self) -> [usize; 7] {
        let round = |v: usize| v.next_multiple_of(FLOAT_ALIGN);
        let k = self.s.kg;
        [
            round(XI * self.v_plane()),
            round(XI * self.m_plane()),
            round(k * self.segment),
            round(self.segment.max(k)),
            round(16 * self.row_len),
            if self.staged {
                round(STAGED_CHANNELS * self.staged_plane())
            } else {
                0
            },
            if self.rows_are_positions {
                round(STAGED_CHANNELS * self.segment)
            } else {
                0
            },
        ]
    }

    /// Floats of one channel's staged rows: a block's tile rows read 2 new input rows each, and
    /// 2 more for each image the block starts (at most one per tile row).
    fn staged_plane(&self) -> usize {
        4 * self.block_rows * self.row_len
    }

    /// The first of the 4 staged rows that tile row `g` of the block starting at tile row `g0`
    /// reads: consecutive tile rows of an image share 2 rows, and each image starts 2 rows
    /// further on.
    fn staged_row(&self, g0: usize, g: usize) -> usize {
        2 * (g - g0) + 2 * (g / self.tiles_h - g0 / self.tiles_h)
    }

    fn slot_floats(&self) -> usize {
        self.slot_parts().iter().sum()
    }

    /// f32 values of workspace `execute` needs (from a 64-byte aligned start), at whatever
    /// level it runs.
    pub fn workspace_floats(&self) -> usize {
        self.workspace
    }

    /// Work items: blocks × parts of the output channels.
    fn items(&self) -> usize {
        self.blocks * self.k_parts
    }

    /// f32 values of workspace this layout uses.
    fn own_floats(&self) -> usize {
        self.filter_floats() + self.slots.min(self.items()) * self.slot_floats()
    }

    /// Runs the convolution and the epilogue; `ws` holds [`WinogradPlan::workspace_floats`]
    /// values.
    ///
    /// # Safety
    /// `x` and `w` are the bound input and weight pointers of a live execute call, and `ptrs`
    /// come from `epilogue.pointers` for the same call; `epilogue` is bound to the convolution's
    /// output geometry (rows = channels, or positions when `rows_are_positions`).
    pub unsafe fn execute(
        &self,
        x: SharedPtr,
        w: SharedPtr,
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        ws: &mut [f32],
    ) {
        let (u, rest) = ws.split_at_mut(self.filter_floats());
        let sliver_floats = XI * self.u_plane;
        let slivers = self.u_slivers;
        let u = &mut u[..slivers * sliver_floats];
        // Every level's kernel has 8 or 4 rows (Packed::dims_of).
        debug_assert!(matches!(self.kernel.mr, 4 | 8));
        let u_ptr = SharedPtr(u.as_mut_ptr().cast());
        let per_slot = self.slot_floats();
        let slots = self.slots.min(self.items()).max(1);
        // The workers first transform the filters, a sliver each in turn, then run the blocks
        // in turn: one fork-join per call instead of two.
        let filters = Claims::new(slivers);
        let items = Claims::new(self.items());
        let parts = self.slot_parts();
        let work = |buf: &mut [f32]| {
            filters.run_all_then_wait(|sliver| {
                // SAFETY: sliver < slivers, so its floats lie in u; each sliver is claimed by
                // one worker, and nothing reads u until every sliver is done.
                let us = unsafe {
                    std::slice::from_raw_parts_mut(
                        u_ptr.get().cast::<f32>().add(sliver * sliver_floats),
                        sliver_floats,
                    )
                };
                // SAFETY: w is bound for this call.
                unsafe { self.transform_filters(w, sliver, us) };
            });
            // SAFETY: every sliver is written (run_all_then_wait) and none is written again.
            let u: &[f32] = unsafe {
                std::slice::from_raw_parts(u_ptr.get().cast::<f32>(), slivers * sliver_floats)
            };
            let (v, buf) = buf.split_at_mut(parts[0]);
            let (m, buf) = buf.split_at_mut(parts[1]);
            let (out, buf) = buf.split_at_mut(parts[2]);
            let (scratch, buf) = buf.split_at_mut(parts[3]);
            let (rows, buf) = buf.split_at_mut(parts[4]);
            let (planes, group) = buf.split_at_mut(parts[5]);
            let mut slot = Slot {
                v,
                m,
                out,
                scratch,
                rows,
                planes,
                group,
            };
            while let Some(item) = items.claim() {
                let (b, part) = (item / self.k_parts, item % self.k_parts);
                let k0 = part * self.k_part;
                let ks = k0..(k0 + self.k_part).min(self.s.kg);
                // SAFETY: forwarded contract; items cover disjoint output elements.
                unsafe { self.run_block(b, ks, x, u, epilogue, ptrs, &mut slot) };
            }
        };
        run_slots(&mut rest[..slots * per_slot], per_slot, |_, buf| work(buf));
    }

    /// [`Self::transform_sliver`] for the kernel's `mr`, compiled for the plan's instruction set
    /// (the baseline build vectorised its combinations 4 lanes wide and spilled them).
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call.
    unsafe fn transform_filters(&self, w: SharedPtr, sliver: usize, us: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx512.is_available() => {
                // SAFETY: the processor has AVX-512 F (checked); the rest is forwarded.
                return unsafe { self.transform_filters_avx512(w, sliver, us) };
            }
            Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx2.is_available() => {
                // SAFETY: the processor has AVX2 and FMA (checked); the rest is forwarded.
                return unsafe { self.transform_filters_avx2(w, sliver, us) };
            }
            _ => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.transform_filters_body(w, sliver, us, false) }
    }

    /// [`Self::transform_filters`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor has AVX-512 F; otherwise as for [`Self::transform_filters`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn transform_filters_avx512(&self, w: SharedPtr, sliver: usize, us: &mut [f32]) {
        // SAFETY: forwarded contract; the processor has AVX.
        unsafe { self.transform_filters_body(w, sliver, us, true) }
    }

    /// [`Self::transform_filters`] compiled for AVX2 and FMA.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; otherwise as for [`Self::transform_filters`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn transform_filters_avx2(&self, w: SharedPtr, sliver: usize, us: &mut [f32]) {
        // SAFETY: forwarded contract; the processor has AVX.
        unsafe { self.transform_filters_body(w, sliver, us, true) }
    }

    /// # Safety
    /// `w` is the bound weight pointer of a live execute call; with `avx` the processor has
    /// AVX.
    #[inline(always)]
    unsafe fn transform_filters_body(
        &self,
        w: SharedPtr,
        sliver: usize,
        us: &mut [f32],
        avx: bool,
    ) {
        match self.kernel.mr {
            // SAFETY (both arms): forwarded contract.
            8 => unsafe { self.transform_sliver::<8>(w, sliver, us, avx) },
            _ => unsafe { self.transform_sliver::<4>(w, sliver, us, avx) },
        }
    }

    /// Writes `U = G g Gᵀ` of the `MR` filters of left sliver `sliver` (of U's layout
    /// `[K / mr][ξ][C][mr]`, each ξ's part `u_plane` floats long, the filters past K as zeros),
    /// computed side by side (the compiler vectorises across them) and stored as `MR`
    /// consecutive values.
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call; `MR` is the kernel's `mr`.
    #[inline(always)]
    unsafe fn transform_sliver<const MR: usize>(
        &self,
        w: SharedPtr,
        sliver: usize,
        us: &mut [f32],
        avx: bool,
    ) {
        let s = &self.s;
        let c_count = s.cg;
        let filters = MR.min(s.kg.saturating_sub(sliver * MR));
        let (rs, cs) = (s.ws.2[1], s.ws.2[2]);
        // Eight whole f32 filters whose taps are one dense run per filter ([C][3][3]): the
        // taps of a pass are the transpose of 8 rows of 9·cn values, 8 × 8 at a time in AVX
        // registers (gathering them one by one stored them as single floats, which the
        // combination then loaded as vectors: a store-forwarding stall each).
        let by_rows = cfg!(target_arch = "x86_64")
            && avx
            && MR == 8
            && filters == 8
            && s.w_type == DataType::F32
            && cs == 1
            && rs == 3
            && s.ws.1 == 9;
        let mut row = [0f32; 3];
        // Channels a pass: each filter's taps of these channels are first read in order into
        // `taps` ([channel][tap][filter]), then each channel's nine vectors of MR are combined.
        // (Gathering a channel's taps of the MR filters straight into vectors cost a
        // store-forwarding stall a vector: 5% of the N1 C64 case.)
        const CHANNELS: usize = 32;
        let mut taps = [[[0f32; MR]; 9]; CHANNELS];
        for c0 in (0..c_count).step_by(CHANNELS) {
            let cn = CHANNELS.min(c_count - c0);
            #[cfg(target_arch = "x86_64")]
            if by_rows {
                let base = (w.get() as *const f32)
                    .wrapping_offset(sliver as isize * 8 * s.ws.0 + c0 as isize * 9);
                let len = 9 * cn;
                let flat = taps.as_mut_ptr().cast::<f32>();
                let mut j = 0;
                while j + 8 <= len {
                    use std::arch::x86_64::{_mm256_loadu_ps, _mm256_storeu_ps};
                    // SAFETY: values j..j + 8 of each filter's run of 9·cn (in range: dense
                    // filters); the processor has AVX (the caller's contract); rows j..j + 8
                    // of the [9·cn][8] taps lie inside taps (9·CHANNELS rows).
                    unsafe {
                        let rows = std::array::from_fn(|r| {
                            _mm256_loadu_ps(base.wrapping_offset(r as isize * s.ws.0).add(j))
                        });
                        for (q, v) in crate::fast::transpose::transpose8(rows)
                            .into_iter()
                            .enumerate()
                        {
                            _mm256_storeu_ps(flat.add((j + q) * 8), v);
                        }
                    }
                    j += 8;
                }
                for jj in j..len {
                    for r in 0..8 {
                        // SAFETY: as above, one value.
                        unsafe {
                            *flat.add(jj * 8 + r) =
                                *base.wrapping_offset(r as isize * s.ws.0).add(jj)
                        };
                    }
                }
            }
            for r in 0..MR {
                if by_rows {
                    break;
                }
                for (c, g) in taps[..cn].iter_mut().enumerate() {
                    if r >= filters {
                        // Filters past K stay zero.
                        g.iter_mut().for_each(|tap| tap[r] = 0.0);
                        continue;
                    }
                    let base = (sliver * MR + r) as isize * s.ws.0 + (c0 + c) as isize * s.ws.1;
                    for i in 0..3 {
                        let off = base + i as isize * rs;
                        if s.w_type == DataType::F32 {
                            let p = (w.get() as *const f32).wrapping_offset(off);
                            for (j, tap) in g[3 * i..3 * i + 3].iter_mut().enumerate() {
                                // SAFETY: tap (i, j) of an in-range filter, in w's own layout.
                                tap[r] = unsafe { p.offset(j as isize * cs).read_unaligned() };
                            }
                        } else {
                            // SAFETY: three in-range filter columns of w's own layout.
                            unsafe { load(w.get(), s.w_type, off, cs, &mut row) };
                            for (tap, &v) in g[3 * i..3 * i + 3].iter_mut().zip(&row) {
                                tap[r] = v;
                            }
                        }
                    }
                }
            }
            for (c, g) in (c0..).zip(&taps[..cn]) {
                // G g: rows g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2 (per column), then the
                // same combination along each row: (G g) Gᵀ.
                let combine = |a: &[f32; MR], b: &[f32; MR], c2: &[f32; MR]| {
                    let mut out = [[0f32; MR]; 4];
                    for r in 0..MR {
                        out[0][r] = a[r];
                        out[1][r] = 0.5 * (a[r] + b[r] + c2[r]);
                        out[2][r] = 0.5 * (a[r] - b[r] + c2[r]);
                        out[3][r] = c2[r];
                    }
                    out
                };
                // (Written out: through `std::array::from_fn` the combination was called out
                // of line and its result came back through memory, a stall each.)
                let cols: [[[f32; MR]; 4]; 3] = [
                    combine(&g[0], &g[3], &g[6]),
                    combine(&g[1], &g[4], &g[7]),
                    combine(&g[2], &g[5], &g[8]),
                ];
                // Position ξ = 4i + j of channel c at ξ · u_plane + c · MR: one pointer walked
                // u_plane values a position (the sixteen slices, each bounds-checked, had kept
                // their addresses on the stack).
                let u_plane = self.u_plane;
                assert!(u_plane >= c_count * MR && us.len() >= (XI - 1) * u_plane + c_count * MR);
                let mut at = us[c * MR..].as_mut_ptr();
                for ((col0, col1), col2) in cols[0].iter().zip(&cols[1]).zip(&cols[2]) {
                    for v in &combine(col0, col1, col2) {
                        // SAFETY: ξ · u_plane + c · MR + MR <= (XI - 1) · u_plane + C · MR <=
                        // us.len() (asserted).
                        unsafe {
                            std::ptr::copy_nonoverlapping(v.as_ptr(), at, MR);
                            at = at.wrapping_add(u_plane);
                        }
                    }
                }
            }
        }
    }

    /// Loads `dst.len()` columns of input row `ih` (of image `n`, channel `c`) from column
    /// `-pad` on, zero outside the input.
    ///
    /// # Safety
    /// `x` is the bound input pointer of a live execute call.
    #[inline(always)]
    unsafe fn load_row(&self, x: SharedPtr, n: usize, c: usize, ih: isize, dst: &mut [f32]) {
        let s = &self.s;
        let (in_h, in_w, pad) = (s.input[1] as isize, s.input[2] as isize, s.pad[2]);
        if ih < 0 || ih >= in_h {
            dst.fill(0.0);
            return;
        }
        // Entry j reads input column j - pad.
        let len = dst.len() as isize;
        let j0 = pad.clamp(0, len);
        let j1 = (in_w + pad).clamp(j0, len);
        let (j0u, j1u) = (j0 as usize, j1 as usize);
        zero_run(&mut dst[..j0u]);
        zero_run(&mut dst[j1u..]);
        if j0 < j1 {
            let off =
                n as isize * s.xs.0 + c as isize * s.xs.1 + ih * s.xs.2[1] + (j0 - pad) * s.xs.2[2];
            let run = &mut dst[j0u..j1u];
            if s.x_type == DataType::F32 && s.xs.2[2] == 1 {
                let p = (x.get() as *const f32).wrapping_offset(off);
                // SAFETY: entries j0..j1 read in-range, consecutive input columns of row ih.
                unsafe { copy_run(p, run) };
            } else {
                // SAFETY: entries j0..j1 read in-range input columns of row ih.
                unsafe { load(x.get(), s.x_type, off, s.xs.2[2], run) };
            }
        }
    }

    /// Stages channels `c0..c0 + planes.len() / plane` of the input rows that the block's tile
    /// rows `g0..g1` read, from a channels-last input: plane `c - c0` holds the rows of channel
    /// `c` in the order [`Self::staged_row`] gives, each laid out as [`Self::load_row`] lays out
    /// a row (from column `-pad` on, zeros outside the input), so that the input transform
    /// reads 4 of them as it reads its staging rows. Each pixel's channels are read as one run
    /// (converted to f32 in vector registers), rather than every channel's row element by
    /// element a channel apart; with `levels` (AVX-512 F, the AVX2 level) 16 or 8 pixels at a
    /// time go through register transposes into the planes.
    ///
    /// # Safety
    /// `x` is the bound input pointer of a live execute call; the input's channel stride is 1;
    /// the processor has the levels set.
    unsafe fn stage_planes(
        &self,
        x: SharedPtr,
        g0: usize,
        g1: usize,
        c0: usize,
        planes: &mut [f32],
        levels: (bool, bool),
    ) {
        let (avx512, avx2) = levels;
        let s = &self.s;
        // The AVX2 staging widens f16 with F16C, which AVX2 does not imply.
        #[cfg(target_arch = "x86_64")]
        let avx2 = avx2 && std::arch::is_x86_feature_detected!("f16c");
        let (rl, plane) = (self.row_len, self.staged_plane());
        let channels = planes.len() / plane;
        let (in_h, in_w, pad) = (s.input[1] as isize, s.input[2] as isize, s.pad[2]);
        let width = 2 * (self.tiles_w + 1);
        let mut pixel = [0f32; STAGED_CHANNELS];
        let mut stage_row = |n: usize, ih: isize, r: usize| {
            let row = |c: usize| r * rl + c * plane;
            if ih < 0 || ih >= in_h {
                for c in 0..channels {
                    zero_run(&mut planes[row(c)..][..width]);
                }
                return;
            }
            let wide_type = matches!(s.x_type, DataType::F32 | DataType::F16 | DataType::Bf16);
            #[cfg(target_arch = "x86_64")]
            if (avx512 || avx2) && wide_type && channels == 16 && width >= 16 {
                let size = s.x_type.size() as isize;
                let first = n as isize * s.xs.0 + c0 as isize + ih * s.xs.2[1];
                let p = (x.get() as *const u8).wrapping_offset(first * size);
                let pixels = (p, s.xs.2[2] * size, pad, in_w);
                let planes = &mut planes[r * rl..];
                // SAFETY: the row's in-range pixels hold 16 channels from p (channel stride
                // 1) of type x_type; the planes hold 16 rows of `width` at row(c); AVX-512 F,
                // or AVX2 with F16C (the caller's contract).
                unsafe {
                    if avx512 {
                        stage_row_avx512(pixels, s.x_type, width, planes, plane)
                    } else {
                        stage_row_avx2(pixels, s.x_type, width, planes, plane)
                    }
                };
                return;
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = (avx512, avx2, wide_type);
            for j in 0..width {
                let iw = j as isize - pad;
                if iw < 0 || iw >= in_w {
                    for c in 0..channels {
                        planes[row(c) + j] = 0.0;
                    }
                    continue;
                }
                let off = n as isize * s.xs.0 + c0 as isize + ih * s.xs.2[1] + iw * s.xs.2[2];
                if s.x_type == DataType::F32 {
                    let p = (x.get() as *const f32).wrapping_offset(off);
                    for (c, v) in pixel[..channels].iter_mut().enumerate() {
                        // SAFETY: channel c0 + c of an in-range pixel (channel stride 1).
                        *v = unsafe { p.add(c).read_unaligned() };
                    }
                } else {
                    // SAFETY: channels c0..c0 + channels of an in-range pixel, consecutive
                    // (channel stride 1).
                    unsafe { load(x.get(), s.x_type, off, 1, &mut pixel[..channels]) };
                }
                for (c, &v) in pixel[..channels].iter().enumerate() {
                    planes[row(c) + j] = v;
                }
            }
        };
        for g in g0..g1 {
            let (n, th) = (g / self.tiles_h, g % self.tiles_h);
            let r = self.staged_row(g0, g);
            // An image's first tile row in the block stages all 4 of its rows, the others the
            // 2 they do not share with the tile row above.
            let first = if g == g0 || th == 0 { 0 } else { 2 };
            for i in first..4 {
                stage_row(n, (2 * th + i) as isize - s.pad[1], r + i);
            }
        }
    }

    /// Asks for input row `ih` of image `n`, channel `c` to be brought into the L2 cache. The
    /// input transform reads a block's rows of one channel, then the next channel's, a plane
    /// (several pages) further on, where the hardware's prefetchers have nothing to follow:
    /// reading the input from cache instead of memory made the N8 C64 3x3 case 9% faster.
    #[inline(always)]
    fn prefetch_row(&self, x: SharedPtr, n: usize, c: usize, ih: isize) {
        let s = &self.s;
        if ih < 0 || ih >= s.input[1] as isize || s.xs.2[2] != 1 {
            return;
        }
        let size = s.x_type.size();
        let off = (n as isize * s.xs.0 + c as isize * s.xs.1 + ih * s.xs.2[1]) * size as isize;
        prefetch_l2(
            (x.get() as *const u8).wrapping_offset(off),
            s.input[2] * size,
        );
    }

    /// Transforms, multiplies and stores output channels `ks` of block `b` (`ks.start` a
    /// multiple of [`STAGED_CHANNELS`]), with the transforms compiled for the plan's
    /// instruction set: they are plain loops over rows of tiles, which the compiler vectorises
    /// 4 lanes wide for the x86-64 baseline and 8 or 16 wide under AVX2 or AVX-512 (adds,
    /// subtracts and halvings only, so every result is the same bit for bit).
    ///
    /// # Safety
    /// As for [`WinogradPlan::execute`]; no other worker runs channels `ks` of block `b`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_block(
        &self,
        b: usize,
        ks: Range<usize>,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx512.is_available() => {
                // SAFETY: the processor has AVX-512 F (checked); the rest is forwarded.
                return unsafe { self.run_block_avx512(b, ks, x, u, epilogue, ptrs, slot) };
            }
            Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if Isa::Avx2.is_available() => {
                // SAFETY: the processor has AVX2 and FMA (checked); the rest is forwarded.
                return unsafe { self.run_block_avx2(b, ks, x, u, epilogue, ptrs, slot) };
            }
            _ => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.run_block_body::<false, false>(b, ks, x, u, epilogue, ptrs, slot) }
    }

    /// [`Self::run_block_body`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor must have AVX-512 F; otherwise as for [`WinogradPlan::run_block`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_block_avx512(
        &self,
        b: usize,
        ks: Range<usize>,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        // SAFETY: forwarded contract; the processor has AVX-512 F.
        unsafe { self.run_block_body::<true, false>(b, ks, x, u, epilogue, ptrs, slot) }
    }

    /// [`Self::run_block_body`] compiled for AVX2 and FMA.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; otherwise as for [`WinogradPlan::run_block`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_block_avx2(
        &self,
        b: usize,
        ks: Range<usize>,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        // SAFETY: forwarded contract; the processor has AVX2.
        unsafe { self.run_block_body::<false, true>(b, ks, x, u, epilogue, ptrs, slot) }
    }

    /// The work of [`WinogradPlan::run_block`], inlined into each instruction set's copy. With
    /// `AVX512` (only in the AVX-512 copy) the input transform and the output transform run in
    /// AVX-512 registers, with `AVX2` (only in the AVX2 copy) in AVX2 registers; both with the
    /// same operations in the same order.
    ///
    /// # Safety
    /// As for [`WinogradPlan::run_block`]; with `AVX512` the processor has AVX-512 F, with
    /// `AVX2` it has AVX2.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_block_body<const AVX512: bool, const AVX2: bool>(
        &self,
        b: usize,
        ks: Range<usize>,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        let s = &self.s;
        let (c_count, ld, tw_count) = (s.cg, self.ld, self.tiles_w);
        // This item's output channels: k_first.. of the group, k_len of them.
        let (k_first, k_len) = (ks.start, ks.len());
        let total_rows = s.n * self.tiles_h;
        let g0 = b * self.block_rows;
        let g1 = (g0 + self.block_rows).min(total_rows);
        let tiles = (g1 - g0) * tw_count;

        // Input transform: V[ξ] as right slivers of the kernel, [tiles / nr][c][nr]. Rows of
        // the input are staged whole, combined into Bᵀ d, then split into even and odd columns.
        let (nr, tpad, v_plane) = (self.kernel.nr, self.tpad, self.v_plane());
        let rl = self.row_len;
        let width = tw_count + 1;
        let (stage, rest) = slot.rows.split_at_mut(4 * rl);
        let (comb, eo) = rest.split_at_mut(4 * rl);
        let plane = self.staged_plane();
        for c in 0..c_count {
            let c0 = c - c % STAGED_CHANNELS;
            if self.staged && c == c0 {
                let channels = STAGED_CHANNELS.min(c_count - c0);
                let planes = &mut slot.planes[..channels * plane];
                // SAFETY: forwarded contract; the plan stages only dense channels.
                unsafe { self.stage_planes(x, g0, g1, c0, planes, (AVX512, AVX2)) };
            }
            for g in g0..g1 {
                let stage: &[f32] = if self.staged {
                    &slot.planes[(c - c0) * plane + self.staged_row(g0, g) * rl..][..4 * rl]
                } else {
                    let (n, th) = (g / self.tiles_h, g % self.tiles_h);
                    for i in 0..4 {
                        let ih = (2 * th + i) as isize - s.pad[1];
                        if c + AHEAD < c_count && (i >= 2 || g == g0) {
                            self.prefetch_row(x, n, c + AHEAD, ih);
                        }
                        // SAFETY: forwarded contract.
                        unsafe { self.load_row(x, n, c, ih, &mut stage[i * rl..][..2 * width]) };
                    }
                    stage
                };
                let runs =
                    || TileRun::of_row((g - g0) * tw_count, tw_count, nr, c_count, c, v_plane);
                #[cfg(target_arch = "x86_64")]
                if AVX512 || AVX2 {
                    for run in runs() {
                        if AVX512 {
                            // SAFETY: the caller's contract: this copy runs on AVX-512 F.
                            unsafe { input_tiles_avx512(stage, rl, 2 * width, run, slot.v) };
                        } else {
                            // SAFETY: the caller's contract: this copy runs on AVX2.
                            unsafe { input_tiles_avx2(stage, rl, 2 * width, run, slot.v) };
                        }
                    }
                    continue;
                }
                combine_rows(stage, comb, rl, 2 * width);
                for i in 0..4 {
                    let src = &comb[i * rl..][..2 * width];
                    let (e, o) = eo[2 * i * rl..][..2 * rl].split_at_mut(rl);
                    deinterleave(src, e, o);
                }
                // (Bᵀ d) B along each row, for every tile of the row, in runs that stay
                // inside one sliver.
                for TileRun { j0, len, base, .. } in runs() {
                    for i in 0..4 {
                        let e = &eo[2 * i * rl..][j0..j0 + len + 1];
                        let o = &eo[(2 * i + 1) * rl..][j0..j0 + len + 1];
                        let (e0, e1) = (&e[..len], &e[1..]);
                        let (o0, o1) = (&o[..len], &o[1..]);
                        let at = |j: usize| (4 * i + j) * v_plane + base;
                        let v = &mut *slot.v;
                        lanewise(&mut v[at(0)..at(0) + len], e0, e1, |a, b| a - b);
                        lanewise(&mut v[at(1)..at(1) + len], o0, e1, |a, b| a + b);
                        lanewise(&mut v[at(2)..at(2) + len], e1, o0, |a, b| a - b);
                        lanewise(&mut v[at(3)..at(3) + len], o0, o1, |a, b| a - b);
                    }
                }
            }
        }
        // The tiles past the block's last one, to the end of its last sliver: zeros, so that
        // the kernel multiplies no stale (perhaps subnormal) values into columns nobody reads.
        if tiles < tpad {
            let (last, off) = ((tiles / nr) * c_count * nr, tiles % nr);
            for xi in 0..XI {
                let sliver = &mut slot.v[xi * v_plane + last..][..c_count * nr];
                for step in sliver.chunks_exact_mut(nr) {
                    step[off..].fill(0.0);
                }
            }
        }

        // M_ξ[K x tiles] = U_ξ[K x C] · V_ξ[C x tiles], for the 16 positions, in whole
        // kernel tiles (K and the tiles padded to slivers), KC channels per pass.
        let (mr, kpad, m_plane) = (self.kernel.mr, self.kpad, self.m_plane());
        let used = tiles.div_ceil(nr);
        // The item's left slivers (k_first is a multiple of mr; the last part takes the
        // padded rows).
        let sliver_end = if ks.end == s.kg {
            kpad / mr
        } else {
            ks.end / mr
        };
        for xi in 0..XI {
            for p0 in (0..c_count).step_by(KC) {
                let kc = KC.min(c_count - p0);
                // A left sliver stays in L1 while the block's right slivers (in L2) pass by:
                // U is read once per block, and may be larger than L2.
                for ks in k_first / mr..sliver_end {
                    let a = u[(ks * XI + xi) * self.u_plane + p0 * mr..].as_ptr();
                    // The next left sliver is fetched while the kernel multiplies this one
                    // (at 256 channels U, 4 MiB, is larger than L2, so each sliver came from
                    // L3), by the kernel itself: a burst of fetches here stalled the loop.
                    let next = if ks + 1 < sliver_end {
                        a.wrapping_add(XI * self.u_plane)
                    } else {
                        std::ptr::null()
                    };
                    for js in 0..used {
                        let b = slot.v[xi * v_plane + js * c_count * nr + p0 * nr..].as_ptr();
                        let c = slot.m[xi * m_plane + ks * mr * ld + js * nr..].as_mut_ptr();
                        // SAFETY: a and b address kc packed steps of one sliver each (U holds
                        // kpad / mr slivers of XI·C steps, V_ξ tpad / nr slivers of C steps);
                        // the tile's mr rows of nr columns lie inside M_ξ (kpad rows of ld
                        // >= tpad columns); the kernel is this processor's (new).
                        unsafe {
                            let fetch = if js == 0 { next } else { std::ptr::null() };
                            self.kernel.tile_fetching(kc, a, b, c, ld, p0 == 0, fetch)
                        };
                    }
                }
            }
        }

        // Output transform and epilogue, one image's rows of tiles at a time. A channels-first
        // output under a bias + relu epilogue (or none) is written in place: each channel's
        // run of positions goes straight to the output, then gets its bias and relu while it
        // is in L1 (the tile buffer and the epilogue's pass over it are skipped).
        let (oh_count, ow_count) = (s.output[1], s.output[2]);
        let fused = epilogue
            .row_bias_relu()
            .filter(|_| !self.rows_are_positions);
        let mut g = g0;
        while g < g1 {
            let n = g / self.tiles_h;
            let seg_end = ((n + 1) * self.tiles_h).min(g1);
            let oh0 = 2 * (g % self.tiles_h);
            let oh1 = (2 * ((seg_end - 1) % self.tiles_h + 1)).min(oh_count);
            let (p0, cols) = (oh0 * ow_count, (oh1 - oh0) * ow_count);
            // Element (k, position p0 + q) of a channel's run is at base + q: in the tile
            // (channels-first), or for a channels-last tile in the rows of a group of
            // STAGED_CHANNELS channels, transposed into the tile once the group is done (one
            // position's channels then land together, instead of each value a row apart).
            let out = &mut slot.out[..k_len * cols];
            // In place when the output is also aligned for f32 (its rows are whole elements
            // apart, so one row tells for all).
            let direct = fused.filter(|_| epilogue.out_f32(ptrs, n, 0, p0).is_aligned());
            for k in ks.clone() {
                let (dst, base): (&mut [f32], usize) = match direct {
                    // SAFETY: channel k's positions p0..p0 + cols of image n, consecutive in
                    // the f32 output (RowBiasRelu) and owned by this block for this call.
                    Some(_) => {
                        let at = epilogue.out_f32(ptrs, n, k, p0);
                        (unsafe { std::slice::from_raw_parts_mut(at, cols) }, 0)
                    }
                    None if self.rows_are_positions => (
                        &mut slot.group[..STAGED_CHANNELS * cols],
                        (k % STAGED_CHANNELS) * cols,
                    ),
                    None => (&mut out[..], (k - k_first) * cols),
                };
                // The fused epilogue's bias of channel k (and its relu), which the AVX-512
                // output transform applies in registers.
                // SAFETY: channel k of image n is inside the output.
                let bias = direct
                    .filter(|f| f.has_bias())
                    .map(|f| unsafe { epilogue.row_bias(ptrs, f, n, k) });
                let relu = direct.is_some_and(|f| f.relu);
                for gg in g..seg_end {
                    let oh = 2 * (gg % self.tiles_h);
                    let two_rows = oh + 1 < oh_count;
                    let t0 = (gg - g0) * tw_count;
                    // Chunks of LANES tiles; when the row holds at least that many, the last
                    // chunk ends at the row's end and overlaps the one before (its outputs are
                    // written twice, with the same values), so every chunk is whole.
                    let mut at = 0;
                    // A channels-first row of tiles: 16 of them at a time in AVX-512 registers
                    // (the last chunk overlapping the one before, as below), a row of fewer
                    // tiles (images under 32 columns) in one masked chunk. (Below 16 tiles the
                    // loop below stored one value at a time: N8 C256 14x14 went from medians of
                    // 3.76-4.26 to 3.61-4.17 ms in five alternating rounds, N8 C64 6x6 from
                    // 0.142-0.159 to 0.124-0.127.) M's rows hold 16 values past any tile read
                    // here (`ld`).
                    // At AVX2 the same, 8 tiles (LANES) at a time.
                    #[cfg(target_arch = "x86_64")]
                    if AVX512 || AVX2 {
                        let (size, transform): (usize, Transform) = if AVX512 {
                            (16, output_tiles_avx512)
                        } else {
                            (LANES, output_tiles_avx2)
                        };
                        while at < tw_count {
                            let tw0 = if tw_count >= size {
                                at.min(tw_count - size)
                            } else {
                                at
                            };
                            at = tw0 + size;
                            let chunk = OutputChunk {
                                m0: k * ld + t0 + tw0,
                                m_plane,
                                q: base + (oh - oh0) * ow_count + 2 * tw0,
                                ow: ow_count,
                                two_rows,
                                width: (2 * (tw_count - tw0).min(size)).min(ow_count - 2 * tw0),
                                bias,
                                relu,
                            };
                            // SAFETY: the caller's contract: this copy runs on AVX-512 F
                            // (AVX512) or AVX2 (AVX2), the level of the transform chosen.
                            unsafe { transform(slot.m, chunk, dst) };
                        }
                    }
                    while at < tw_count {
                        let tw0 = if tw_count >= LANES {
                            at.min(tw_count - LANES)
                        } else {
                            at
                        };
                        at = tw0 + LANES;
                        let mut m = [[0f32; LANES]; XI];
                        for (xi, lane) in m.iter_mut().enumerate() {
                            lane.copy_from_slice(
                                &slot.m[xi * m_plane + k * ld + t0 + tw0..][..LANES],
                            );
                        }
                        let y = output_tiles(&m);
                        if 2 * (tw0 + LANES) <= ow_count {
                            // A full chunk of a channels-first row: interleave the columns.
                            let q = (oh - oh0) * ow_count + 2 * tw0;
                            interleave(&y[0], &y[1], &mut dst[base + q..][..2 * LANES]);
                            if two_rows {
                                let q = q + ow_count;
                                interleave(&y[2], &y[3], &mut dst[base + q..][..2 * LANES]);
                            }
                            continue;
                        }
                        let lanes = LANES.min(tw_count - tw0);
                        // Output (r, j) of tile tw0 + l is y[2 r + j][l].
                        let rows_here = if two_rows { 2 } else { 1 };
                        for (r, pair) in y.chunks_exact(2).take(rows_here).enumerate() {
                            for (l, (&y0, &y1)) in
                                pair[0].iter().zip(&pair[1]).take(lanes).enumerate()
                            {
                                let ow = 2 * (tw0 + l);
                                let q = (oh + r - oh0) * ow_count + ow;
                                dst[base + q] = y0;
                                if ow + 1 < ow_count {
                                    dst[base + q + 1] = y1;
                                }
                            }
                        }
                    }
                }
                // The epilogue, as BoundEpilogue::apply computes it: add, then relu (at the
                // AVX-512 and AVX2 levels already applied by the output transform, to every
                // tile).
                if direct.is_some() && !((AVX512 || AVX2) && cfg!(target_arch = "x86_64")) {
                    if let Some(bias) = bias {
                        dst.iter_mut().for_each(|v| *v += bias);
                    }
                    if relu {
                        dst.iter_mut()
                            .for_each(|v| *v = if *v < 0.0 { 0.0 } else { *v });
                    }
                }
                let last_of_group = (k + 1) % STAGED_CHANNELS == 0 || k + 1 == ks.end;
                if self.rows_are_positions && direct.is_none() && last_of_group {
                    // (k_first is a multiple of STAGED_CHANNELS: groups do not straddle items.)
                    let k0 = k - k % STAGED_CHANNELS;
                    transpose_group(
                        &slot.group[..(k + 1 - k0) * cols],
                        cols,
                        &mut out[k0 - k_first..],
                        k_len,
                        (AVX512, AVX2),
                    );
                }
            }
            if direct.is_some() {
                g = seg_end;
                continue;
            }
            let (row0, col0, rows, tile_cols, tile_ld) = if self.rows_are_positions {
                (p0, k_first, cols, k_len, k_len)
            } else {
                (k_first, p0, k_len, cols, cols)
            };
            let tile = Tile {
                fixed: n,
                row0,
                col0,
                rows,
                cols: tile_cols,
                values: out,
                ld: tile_ld,
            };
            // SAFETY: forwarded contract; this block owns these output positions of image n.
            unsafe { epilogue.apply(ptrs, tile, slot.scratch) };
            g = seg_end;
        }
    }
}

/// One staged row of 16 channels ([`WinogradPlan::stage_planes`]) for an input row in range:
/// entry `j` of channel `c`'s row (at `planes[c·plane + j]`) is channel `c` of input column
/// `j - pad` as f32 (f16 and bf16 widened exactly), zero outside the input; 16 columns at a
/// time through a register transpose, the last block overlapping the one before. `pixels` is
/// (channel 0 of column 0, the column stride in bytes, pad, the input's width).
///
/// # Safety
/// Each column inside the input addresses 16 consecutive values of `dt` (f32, f16 or bf16);
/// `planes` holds 16 rows of at least `width` (>= 16) at stride `plane`; the processor has
/// AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stage_row_avx512(
    pixels: (*const u8, isize, isize, isize),
    dt: DataType,
    width: usize,
    planes: &mut [f32],
    plane: usize,
) {
    use std::arch::x86_64::*;
    let (p, stride, pad, in_w) = pixels;
    assert!(planes.len() >= 15 * plane + width);
    // SAFETY (each read): 16 values of an in-range column (the caller's contract).
    let column = |at: *const u8| unsafe {
        match dt {
            DataType::F16 => _mm512_cvtph_ps(_mm256_loadu_si256(at.cast())),
            DataType::Bf16 => _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(
                _mm256_loadu_si256(at.cast()),
            ))),
            _ => _mm512_loadu_ps(at.cast()),
        }
    };
    for j in (0..width).step_by(16) {
        let j0 = j.min(width - 16);
        let cols: [__m512; 16] = std::array::from_fn(|jj| {
            let iw = (j0 + jj) as isize - pad;
            if iw < 0 || iw >= in_w {
                _mm512_setzero_ps()
            } else {
                column(p.wrapping_offset(iw * stride))
            }
        });
        for (c, v) in crate::fast::transpose::transpose16(cols)
            .into_iter()
            .enumerate()
        {
            // SAFETY: entries j0..j0 + 16 of channel c's row (checked length).
            unsafe { _mm512_storeu_ps(planes[c * plane + j0..].as_mut_ptr(), v) };
        }
    }
}

/// [`stage_row_avx512`] at the AVX2 level: 8 columns at a time, each half of the 16 channels
/// through an 8 × 8 register transpose.
///
/// # Safety
/// As for [`stage_row_avx512`], the processor having AVX2 and F16C instead of AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn stage_row_avx2(
    pixels: (*const u8, isize, isize, isize),
    dt: DataType,
    width: usize,
    planes: &mut [f32],
    plane: usize,
) {
    use std::arch::x86_64::*;
    let (p, stride, pad, in_w) = pixels;
    assert!(width >= 8 && planes.len() >= 15 * plane + width);
    // SAFETY (each read): 8 values of an in-range column (the caller's contract).
    let eight = |at: *const u8| unsafe {
        match dt {
            DataType::F16 => _mm256_cvtph_ps(_mm_loadu_si128(at.cast())),
            DataType::Bf16 => _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(
                _mm_loadu_si128(at.cast()),
            ))),
            _ => _mm256_loadu_ps(at.cast()),
        }
    };
    let half_bytes = 8 * dt.size() as isize;
    for j in (0..width).step_by(8) {
        let j0 = j.min(width - 8);
        for h in 0..2 {
            let cols: [__m256; 8] = std::array::from_fn(|jj| {
                let iw = (j0 + jj) as isize - pad;
                if iw < 0 || iw >= in_w {
                    _mm256_setzero_ps()
                } else {
                    eight(p.wrapping_offset(iw * stride + h as isize * half_bytes))
                }
            });
            for (c, v) in crate::fast::transpose::transpose8(cols)
                .into_iter()
                .enumerate()
            {
                let at = (8 * h + c) * plane + j0;
                // SAFETY: entries j0..j0 + 8 of channel 8h + c's row (checked length).
                unsafe { _mm256_storeu_ps(planes[at..at + 8].as_mut_ptr(), v) };
            }
        }
    }
}

/// [`transpose_group`] of 16 channels at the AVX2 level: 8 positions and 8 channels at a time.
///
/// # Safety
/// `group` holds 16 runs of `cols` (>= 8); `out` holds `(cols - 1) * ld + 16` values; the
/// processor has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_group_avx2(group: &[f32], cols: usize, out: &mut [f32], ld: usize) {
    use std::arch::x86_64::*;
    assert!(cols >= 8 && group.len() >= 16 * cols && out.len() >= (cols - 1) * ld + 16);
    for q in (0..cols).step_by(8) {
        let q0 = q.min(cols - 8);
        for h in 0..2 {
            // SAFETY: positions q0..q0 + 8 of channel 8h + i's run (checked lengths).
            let rows = std::array::from_fn(|i| unsafe {
                _mm256_loadu_ps(group[(8 * h + i) * cols + q0..].as_ptr())
            });
            for (j, v) in crate::fast::transpose::transpose8(rows)
                .into_iter()
                .enumerate()
            {
                let at = (q0 + j) * ld + 8 * h;
                // SAFETY: channels 8h..8h + 8 of position q0 + j (checked length).
                unsafe { _mm256_storeu_ps(out[at..at + 8].as_mut_ptr(), v) };
            }
        }
    }
}

/// Writes channel `c`'s run `group[c * cols..][..cols]` (a group of at most
/// [`STAGED_CHANNELS`] channels) into a channels-last tile, position `q`'s channel `c` at
/// `out[q * ld + c]`, a few positions at a time so that the lines written stay in L1.
///
/// Where the processor has AVX-512 F (`levels.0`) or AVX (`levels.1`: the AVX2 level), a group
/// of 16 channels goes 16 or 8 positions at a time through register transposes, the last block
/// overlapping the one before.
fn transpose_group(group: &[f32], cols: usize, out: &mut [f32], ld: usize, levels: (bool, bool)) {
    const POSITIONS: usize = 16;
    let channels = group.len() / cols.max(1);
    let (avx512, avx2) = levels;
    #[cfg(target_arch = "x86_64")]
    if avx2 && !avx512 && channels == 16 && cols >= 8 && out.len() >= (cols - 1) * ld + 16 {
        // SAFETY: as checked; the AVX2 level's processor has AVX (the caller's contract).
        unsafe { transpose_group_avx2(group, cols, out, ld) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if avx512 && channels == 16 && cols >= 16 && out.len() >= (cols - 1) * ld + 16 {
        for q in (0..cols).step_by(16) {
            let q0 = q.min(cols - 16);
            // SAFETY: 16 channels' runs of `cols` in group, from position q0 + 16 <= cols;
            // positions q0..q0 + 16 of out, 16 channels each (checked above); AVX-512 F (the
            // caller's contract).
            unsafe {
                crate::fast::transpose::transpose16_block(
                    group[q0..].as_ptr(),
                    cols as isize,
                    out[q0 * ld..].as_mut_ptr(),
                    ld as isize,
                )
            };
        }
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (avx512, avx2);
    for q0 in (0..cols).step_by(POSITIONS) {
        let q1 = (q0 + POSITIONS).min(cols);
        for (c, run) in group.chunks_exact(cols).enumerate().take(channels) {
            for (q, &v) in run[q0..q1].iter().enumerate() {
                out[(q0 + q) * ld + c] = v;
            }
        }
    }
}

/// Runs `$body::<W>(args.., start)` for groups of `W` consecutive indices that cover `0..$n`,
/// `W` the widest of 16, 8, 4, 2 and 1 that fits: starts `0, W, 2W, ...`, the last group ending at
/// `$n` and overlapping the one before when `W` does not divide it. A body that writes only its
/// outputs, from inputs it does not write, may run twice on an index; the short rows of these
/// transforms (a few dozen values) then run whole in vector registers, with no scalar
/// remainder. (A macro, not a function taking a closure: the closure would be compiled apart,
/// for the baseline instruction set, outside the caller's AVX-512 or AVX2 copy.)
macro_rules! in_groups {
    ($n:expr, $body:ident($($arg:expr),*)) => {{
        let n: usize = $n;
        if n >= 16 {
            in_groups!(@run n, 16, $body($($arg),*));
        } else if n >= 8 {
            in_groups!(@run n, 8, $body($($arg),*));
        } else if n >= 4 {
            in_groups!(@run n, 4, $body($($arg),*));
        } else if n >= 2 {
            in_groups!(@run n, 2, $body($($arg),*));
        } else if n > 0 {
            in_groups!(@run n, 1, $body($($arg),*));
        }
    }};
    (@run $n:ident, $w:literal, $body:ident($($arg:expr),*)) => {{
        let mut at = 0usize;
        loop {
            let start = at.min($n - $w);
            $body::<$w>($($arg,)* start);
            if start + $w >= $n {
                break;
            }
            at += $w;
        }
    }};
}

/// Copies `dst.len()` consecutive f32 values from `src` (a row of a few dozen values: a call
/// to `memcpy` per row cost more than the copy).
///
/// # Safety
/// `src` addresses `dst.len()` readable f32 values (any alignment).
#[inline(always)]
unsafe fn copy_run(src: *const f32, dst: &mut [f32]) {
    #[inline(always)]
    fn group<const W: usize>(src: *const f32, dst: &mut [f32], at: usize) {
        // SAFETY: values at..at + W of the run, which copy_run's caller made readable.
        let v = unsafe { src.add(at).cast::<[f32; W]>().read_unaligned() };
        dst[at..at + W].copy_from_slice(&v);
    }
    in_groups!(dst.len(), group(src, dst));
}

/// Zeroes `dst`, a few values of padding (`fill` called `memset` for them: 1% of the N1 C64
/// case's samples).
#[inline(always)]
fn zero_run(dst: &mut [f32]) {
    #[inline(always)]
    fn group<const W: usize>(dst: &mut [f32], at: usize) {
        dst[at..at + W].copy_from_slice(&[0.0; W]);
    }
    in_groups!(dst.len(), group(dst));
}

/// Asks for the `bytes` bytes from `p` to be brought into the L2 cache (a hint: nothing is read,
/// and no address faults).
#[inline(always)]
fn prefetch_l2(p: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        // SAFETY: a prefetch is only a hint: it never faults, whatever the address.
        let line = |at: usize| unsafe { _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(at).cast()) };
        let mut at = 0;
        while at < bytes {
            line(at);
            at += 64;
        }
        // The last line, when p does not start one.
        if bytes > 0 {
            line(bytes - 1);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// `dst[i] = f(a[i], b[i])` over a short run (a row of tiles, often under 32).
#[inline(always)]
fn lanewise(dst: &mut [f32], a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) {
    #[inline(always)]
    fn group<const W: usize>(
        dst: &mut [f32],
        a: &[f32],
        b: &[f32],
        f: &impl Fn(f32, f32) -> f32,
        at: usize,
    ) {
        // Through local arrays, which the compiler knows alias nothing, so it keeps them in
        // vector registers.
        let x: [f32; W] = a[at..at + W].try_into().expect("W values");
        let y: [f32; W] = b[at..at + W].try_into().expect("W values");
        let d: [f32; W] = std::array::from_fn(|l| f(x[l], y[l]));
        dst[at..at + W].copy_from_slice(&d);
    }
    let n = dst.len();
    let (a, b) = (&a[..n], &b[..n]);
    in_groups!(n, group(dst, a, b, &f));
}

/// `Bᵀ d` for `width` columns of four staged rows (each `rl` floats apart) into `dst`.
#[inline(always)]
fn combine_rows(src: &[f32], dst: &mut [f32], rl: usize, width: usize) {
    #[inline(always)]
    fn group<const W: usize>(r: [&[f32]; 4], d: [&mut [f32]; 4], at: usize) {
        // Through local arrays, as in `lanewise`.
        let row = |i: usize| -> [f32; W] { r[i][at..at + W].try_into().expect("W values") };
        let (a, b, c, e) = (row(0), row(1), row(2), row(3));
        let [d0, d1, d2, d3] = d;
        d0[at..at + W].copy_from_slice(&std::array::from_fn::<f32, W, _>(|j| a[j] - c[j]));
        d1[at..at + W].copy_from_slice(&std::array::from_fn::<f32, W, _>(|j| b[j] + c[j]));
        d2[at..at + W].copy_from_slice(&std::array::from_fn::<f32, W, _>(|j| c[j] - b[j]));
        d3[at..at + W].copy_from_slice(&std::array::from_fn::<f32, W, _>(|j| b[j] - e[j]));
    }
    let r = [
        &src[..width],
        &src[rl..rl + width],
        &src[2 * rl..2 * rl + width],
        &src[3 * rl..3 * rl + width],
    ];
    let (d0, rest) = dst.split_at_mut(rl);
    let (d1, rest) = rest.split_at_mut(rl);
    let (d2, d3) = rest.split_at_mut(rl);
    let (d0, d1, d2, d3) = (
        &mut d0[..width],
        &mut d1[..width],
        &mut d2[..width],
        &mut d3[..width],
    );
    in_groups!(width, group(r, [&mut *d0, &mut *d1, &mut *d2, &mut *d3]));
}

/// A run of tiles of one row of tiles and one channel, inside one right sliver of V: tiles
/// `j0..j0 + len` of the row, stored from element `base` of each of V's 16 planes (`plane`
/// floats apart).
#[derive(Clone, Copy, Debug, PartialEq)]
struct TileRun {
    j0: usize,
    len: usize,
    base: usize,
    plane: usize,
}

impl TileRun {
    /// The runs of a row of `tw` tiles whose first is the block's tile `t0`, channel `c` of
    /// `c_count`, in V's right slivers of `nr` tiles (`plane` floats per position's plane).
    fn of_row(
        t0: usize,
        tw: usize,
        nr: usize,
        c_count: usize,
        c: usize,
        plane: usize,
    ) -> impl Iterator<Item = TileRun> {
        let mut j0 = 0;
        std::iter::from_fn(move || {
            (j0 < tw).then(|| {
                let t = t0 + j0;
                let len = (nr - t % nr).min(tw - j0);
                let base = (t / nr) * c_count * nr + c * nr + t % nr;
                let run = TileRun {
                    j0,
                    len,
                    base,
                    plane,
                };
                j0 += len;
                run
            })
        })
    }
}

/// The input transform of `run` in AVX-512 registers: `Bᵀ d B` of each tile from the four
/// staged rows (`rl` floats apart, `width` valid values each), 16 tiles at a time. The same
/// adds and subtracts as `combine_rows`, `deinterleave` and `lanewise` (rows first, then columns),
/// so V is the same bit for bit; masked loads read only the staged values, masked stores write
/// only the run's tiles.
///
/// # Safety
/// The processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn input_tiles_avx512(stage: &[f32], rl: usize, width: usize, run: TileRun, v: &mut [f32]) {
    use std::arch::x86_64::*;
    let TileRun {
        j0,
        len,
        base,
        plane,
    } = run;
    // Tile j reads staged columns 2 j to 2 j + 3; the writes stay inside V's 16 planes.
    assert!(2 * (j0 + len) + 2 <= width && width <= rl && 4 * rl <= stage.len());
    assert!(len == 0 || 15 * plane + base + len <= v.len());
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    let lanes = |n: usize| -> __mmask16 { ((1u32 << n.min(16)) - 1) as __mmask16 };
    let mut k0 = 0;
    while k0 < len {
        let l = (len - k0).min(16);
        let (m_lo, m_hi) = (lanes(2 * l), lanes((2 * l).saturating_sub(16)));
        let col = 2 * (j0 + k0);
        let zero = _mm512_setzero_ps();
        let (mut e, mut o, mut e1, mut o1) = ([zero; 4], [zero; 4], [zero; 4], [zero; 4]);
        for i in 0..4 {
            // SAFETY: the masks keep every read at columns col..col + 2 l + 1 of staged row i,
            // inside its `width` values (asserted above); a masked-off lane reads nothing, so
            // its address (formed with wrapping_add) may lie past the slice.
            unsafe {
                let p = stage.as_ptr().wrapping_add(i * rl + col);
                let lo = _mm512_maskz_loadu_ps(m_lo, p);
                let hi = _mm512_maskz_loadu_ps(m_hi, p.wrapping_add(16));
                let lo1 = _mm512_maskz_loadu_ps(m_lo, p.wrapping_add(2));
                let hi1 = _mm512_maskz_loadu_ps(m_hi, p.wrapping_add(18));
                e[i] = _mm512_permutex2var_ps(lo, even, hi);
                o[i] = _mm512_permutex2var_ps(lo, odd, hi);
                e1[i] = _mm512_permutex2var_ps(lo1, even, hi1);
                o1[i] = _mm512_permutex2var_ps(lo1, odd, hi1);
            }
        }
        // Bᵀ d down the columns: rows r0 - r2, r1 + r2, r2 - r1, r1 - r3.
        let rows = |r: [__m512; 4]| {
            [
                _mm512_sub_ps(r[0], r[2]),
                _mm512_add_ps(r[1], r[2]),
                _mm512_sub_ps(r[2], r[1]),
                _mm512_sub_ps(r[1], r[3]),
            ]
        };
        let (e, o, e1, o1) = (rows(e), rows(o), rows(e1), rows(o1));
        let m_out = lanes(l);
        for i in 0..4 {
            // (Bᵀ d) B along the row: e - e1, o + e1, e1 - o, o - o1.
            let out = [
                _mm512_sub_ps(e[i], e1[i]),
                _mm512_add_ps(o[i], e1[i]),
                _mm512_sub_ps(e1[i], o[i]),
                _mm512_sub_ps(o[i], o1[i]),
            ];
            for (j, val) in out.into_iter().enumerate() {
                // SAFETY: tiles k0..k0 + l of the run in plane 4 i + j, inside v (asserted).
                unsafe {
                    let at = v.as_mut_ptr().wrapping_add((4 * i + j) * plane + base + k0);
                    _mm512_mask_storeu_ps(at, m_out, val);
                }
            }
        }
        k0 += l;
    }
}

/// [`input_tiles_avx512`] in AVX2 registers, 8 tiles at a time (even and odd columns by
/// in-lane shuffles and a 64-bit permute, masked loads and stores at a run's end): the same
/// operations in the same order, so the same bits. The two are written out apart on purpose: a
/// shared generic helper taking the vector add and subtract as closures made both levels about
/// 3x slower (the intrinsics behind the closures were no longer inlined).
///
/// # Safety
/// The processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn input_tiles_avx2(stage: &[f32], rl: usize, width: usize, run: TileRun, v: &mut [f32]) {
    use std::arch::x86_64::*;
    let TileRun {
        j0,
        len,
        base,
        plane,
    } = run;
    // As in input_tiles_avx512.
    assert!(2 * (j0 + len) + 2 <= width && width <= rl && 4 * rl <= stage.len());
    assert!(len == 0 || 15 * plane + base + len <= v.len());
    let lane_ids = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    // Lanes below n set (their top bit), for maskload and maskstore.
    let lanes = |n: usize| _mm256_cmpgt_epi32(_mm256_set1_epi32(n.min(8) as i32), lane_ids);
    // Columns 0, 2, ..., 14 (or 1, 3, ..., 15) of two vectors of 8: pairs in each 128-bit lane,
    // then the 64-bit pairs put in order.
    let split = |lo: __m256, hi: __m256| {
        let even = _mm256_shuffle_ps::<0b10_00_10_00>(lo, hi);
        let odd = _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi);
        let order = |x: __m256| {
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(x)))
        };
        (order(even), order(odd))
    };
    let mut k0 = 0;
    while k0 < len {
        let l = (len - k0).min(8);
        let (m_lo, m_hi) = (lanes(2 * l), lanes((2 * l).saturating_sub(8)));
        // A whole chunk loads and stores without masks: a vmaskmovps store costs about 12
        // cycles on Zen 4 (N1 C64 56x56 at AVX2 spent a third of its time on them).
        let whole = l == 8;
        let col = 2 * (j0 + k0);
        let zero = _mm256_setzero_ps();
        let (mut e, mut o, mut e1, mut o1) = ([zero; 4], [zero; 4], [zero; 4], [zero; 4]);
        for i in 0..4 {
            // SAFETY: as in input_tiles_avx512: the masks keep every read inside staged row i
            // (a whole chunk of 8 tiles reads columns col..col + 18, inside it as asserted).
            unsafe {
                let p = stage.as_ptr().wrapping_add(i * rl + col);
                let load = |at: *const f32, m: __m256i| {
                    if whole {
                        _mm256_loadu_ps(at)
                    } else {
                        _mm256_maskload_ps(at, m)
                    }
                };
                let lo = load(p, m_lo);
                let hi = load(p.wrapping_add(8), m_hi);
                let lo1 = load(p.wrapping_add(2), m_lo);
                let hi1 = load(p.wrapping_add(10), m_hi);
                (e[i], o[i]) = split(lo, hi);
                (e1[i], o1[i]) = split(lo1, hi1);
            }
        }
        let rows = |r: [__m256; 4]| {
            [
                _mm256_sub_ps(r[0], r[2]),
                _mm256_add_ps(r[1], r[2]),
                _mm256_sub_ps(r[2], r[1]),
                _mm256_sub_ps(r[1], r[3]),
            ]
        };
        let (e, o, e1, o1) = (rows(e), rows(o), rows(e1), rows(o1));
        let m_out = lanes(l);
        for i in 0..4 {
            let out = [
                _mm256_sub_ps(e[i], e1[i]),
                _mm256_add_ps(o[i], e1[i]),
                _mm256_sub_ps(e1[i], o[i]),
                _mm256_sub_ps(o[i], o1[i]),
            ];
            for (j, val) in out.into_iter().enumerate() {
                // SAFETY: tiles k0..k0 + l of the run in plane 4 i + j, inside v (asserted).
                unsafe {
                    let at = v.as_mut_ptr().wrapping_add((4 * i + j) * plane + base + k0);
                    if whole {
                        _mm256_storeu_ps(at, val);
                    } else {
                        _mm256_maskstore_ps(at, m_out, val);
                    }
                }
            }
        }
        k0 += l;
    }
}

/// `Aᵀ M A` of a chunk's tiles, one per lane, from the vectors `$mv` of M's 16 planes, with the
/// adds and subtracts of `output_tiles` in its order (so the same bits), then the fused
/// epilogue's `$bias` and `$relu`: the outputs (0,0), (0,1), (1,0), (1,1) of each tile, as the
/// vector instructions of one level (`$add`...) compute them. vmaxps returns its second operand
/// when either is NaN and for two zeros, so NaN and -0 pass through the relu as they do
/// `x < 0 ? 0 : x`.
#[cfg(target_arch = "x86_64")]
macro_rules! output_vectors {
    ($mv:expr, $bias:expr, $relu:expr, $add:ident, $sub:ident, $set1:ident, $max:ident,
     $zero:ident) => {{
        let mv = &$mv;
        // Aᵀ M: s_j = M0j + M1j + M2j, d_j = M1j - M2j - M3j.
        let s: [_; 4] = std::array::from_fn(|j| $add($add(mv[j], mv[4 + j]), mv[8 + j]));
        let d: [_; 4] = std::array::from_fn(|j| $sub($sub(mv[4 + j], mv[8 + j]), mv[12 + j]));
        let y = [
            $add($add(s[0], s[1]), s[2]),
            $sub($sub(s[1], s[2]), s[3]),
            $add($add(d[0], d[1]), d[2]),
            $sub($sub(d[1], d[2]), d[3]),
        ];
        y.map(|y| {
            let y = match $bias {
                Some(b) => $add(y, $set1(b)),
                None => y,
            };
            if $relu {
                $max($zero(), y)
            } else {
                y
            }
        })
    }};
}

/// Up to 16 tiles of one output channel's row of tiles, written to a channels-first output:
/// their M values from `m0` in each of M's 16 planes (`m_plane` floats apart; `width / 2`
/// tiles, rounded up, are read), their outputs from `q` in the output tile (the second output
/// row `ow` further on, when there is one), `width` of each output row's 32 columns stored.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct OutputChunk {
    m0: usize,
    m_plane: usize,
    q: usize,
    ow: usize,
    two_rows: bool,
    width: usize,
    /// A fused epilogue's bias to add to every output, then its relu (`x < 0 ? 0 : x`).
    bias: Option<f32>,
    relu: bool,
}

/// A level's output transform of a chunk ([`output_tiles_avx512`], [`output_tiles_avx2`]).
#[cfg(target_arch = "x86_64")]
type Transform = unsafe fn(&[f32], OutputChunk, &mut [f32]);

/// The output transform of `chunk` in AVX-512 registers: `Aᵀ M A` of 16 tiles with the adds
/// and subtracts of `output_tiles`, in its order (so the same bits), and the two columns of
/// each output row interleaved as `interleave` does, the first `chunk.width` of them stored
/// after the chunk's bias and relu.
///
/// # Safety
/// The processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn output_tiles_avx512(m: &[f32], chunk: OutputChunk, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let OutputChunk {
        m0,
        m_plane,
        q,
        ow,
        two_rows,
        width,
        bias,
        relu,
    } = chunk;
    assert!(m0 + (XI - 1) * m_plane + 16 <= m.len() && width <= 32);
    assert!(q + width <= out.len() && (!two_rows || q + ow + width <= out.len()));
    // The stored lanes of each half of a row.
    let lanes = |n: usize| ((1u32 << n.min(16)) - 1) as __mmask16;
    let (low, high) = (lanes(width), lanes(width.saturating_sub(16)));
    // The tiles of the chunk; M's values past them (other tiles', or columns no GEMM wrote,
    // perhaps subnormal) are not loaded.
    let tiles = width.div_ceil(2);
    // SAFETY: 16 values of each plane from m0, inside m (asserted); lanes past `tiles` are not
    // read.
    let mv: [__m512; XI] = std::array::from_fn(|xi| unsafe {
        _mm512_maskz_loadu_ps(lanes(tiles), m.as_ptr().add(xi * m_plane + m0))
    });
    let [y0, y1, y2, y3] = output_vectors!(
        mv,
        bias,
        relu,
        _mm512_add_ps,
        _mm512_sub_ps,
        _mm512_set1_ps,
        _mm512_max_ps,
        _mm512_setzero_ps
    );
    let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    let rows: &[(usize, __m512, __m512)] = if two_rows {
        &[(q, y0, y1), (q + ow, y2, y3)]
    } else {
        &[(q, y0, y1)]
    };
    for &(at, a, b) in rows {
        // SAFETY: `width` values from `at`, inside out (asserted); masked lanes are not written.
        unsafe {
            let p = out.as_mut_ptr().add(at);
            _mm512_mask_storeu_ps(p, low, _mm512_permutex2var_ps(a, first, b));
            _mm512_mask_storeu_ps(p.add(16), high, _mm512_permutex2var_ps(a, second, b));
        }
    }
}

/// [`output_tiles_avx512`] in AVX2 registers: 8 tiles, `chunk.width` of each output row's 16
/// columns stored (`chunk.q` and `chunk.width` counted as there), the same adds and subtracts
/// in the same order, so the same bits. Whole vectors are stored plainly and only a partial
/// one masked (a `vmaskmovps` store costs about 12 cycles on Zen 4).
///
/// # Safety
/// The processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn output_tiles_avx2(m: &[f32], chunk: OutputChunk, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let (m0, m_plane, q, ow, width) = (chunk.m0, chunk.m_plane, chunk.q, chunk.ow, chunk.width);
    assert!(m0 + (XI - 1) * m_plane + LANES <= m.len() && width <= 2 * LANES);
    assert!(q + width <= out.len() && (!chunk.two_rows || q + ow + width <= out.len()));
    let lanes = |n: usize| crate::fast::isa::masks::ymm_lanes(n.min(LANES));
    let tiles = width.div_ceil(2);
    // SAFETY: 8 values of each plane from m0, inside m (asserted); lanes past `tiles` are not
    // read (M's values there may be other tiles' or stale).
    let mv: [__m256; XI] = std::array::from_fn(|xi| unsafe {
        let at = m.as_ptr().add(xi * m_plane + m0);
        if tiles == LANES {
            _mm256_loadu_ps(at)
        } else {
            _mm256_maskload_ps(at, lanes(tiles))
        }
    });
    let [y0, y1, y2, y3] = output_vectors!(
        mv,
        chunk.bias,
        chunk.relu,
        _mm256_add_ps,
        _mm256_sub_ps,
        _mm256_set1_ps,
        _mm256_max_ps,
        _mm256_setzero_ps
    );
    // Columns 2l and 2l + 1 of a row are lane l of a and of b: pairs within each 128-bit half,
    // then the halves put in order.
    let interleave = |a: __m256, b: __m256| {
        let (lo, hi) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
        (
            _mm256_permute2f128_ps::<0x20>(lo, hi),
            _mm256_permute2f128_ps::<0x31>(lo, hi),
        )
    };
    // The chunk's output rows: one, or two `ow` apart.
    let rows = [(q, y0, y1), (q + ow, y2, y3)];
    let rows = &rows[..if chunk.two_rows { 2 } else { 1 }];
    for &(at, a, b) in rows {
        let (first, second) = interleave(a, b);
        // SAFETY: `width` values from `at`, inside out (asserted); masked lanes are not written.
        unsafe {
            let p = out.as_mut_ptr().add(at);
            for (h, v) in [first, second].into_iter().enumerate() {
                let n = width.saturating_sub(LANES * h).min(LANES);
                if n == LANES {
                    _mm256_storeu_ps(p.add(LANES * h), v);
                } else if n > 0 {
                    _mm256_maskstore_ps(p.add(LANES * h), lanes(n), v);
                }
            }
        }
    }
}

/// Splits `src[..2 n]` into its even values `e[..n]` and odd ones `o[..n]`.
#[inline(always)]
fn deinterleave(src: &[f32], e: &mut [f32], o: &mut [f32]) {
    #[inline(always)]
    fn group<const W: usize>(src: &[f32], e: &mut [f32], o: &mut [f32], at: usize) {
        let (pairs, e, o) = (
            &src[2 * at..2 * at + 2 * W],
            &mut e[at..at + W],
            &mut o[at..at + W],
        );
        for j in 0..W {
            e[j] = pairs[2 * j];
            o[j] = pairs[2 * j + 1];
        }
    }
    let n = src.len() / 2;
    let (e, o) = (&mut e[..n], &mut o[..n]);
    in_groups!(n, group(src, e, o));
}

/// Writes `a[0], b[0], a[1], b[1], ...` into `dst`.
#[inline(always)]
fn interleave(a: &[f32; LANES], b: &[f32; LANES], dst: &mut [f32]) {
    for (pair, (&a, &b)) in dst.chunks_exact_mut(2).zip(a.iter().zip(b)) {
        pair[0] = a;
        pair[1] = b;
    }
}

/// `Aᵀ M A` of `LANES` tiles at once: the outputs (0,0), (0,1), (1,0), (1,1) per lane.
#[inline(always)]
fn output_tiles(m: &[[f32; LANES]; XI]) -> [[f32; LANES]; 4] {
    let mut y = [[0f32; LANES]; 4];
    for l in 0..LANES {
        // Aᵀ M: row sums s_j = M0j + M1j + M2j and differences d_j = M1j - M2j - M3j.
        let s = |j: usize| m[j][l] + m[4 + j][l] + m[8 + j][l];
        let d = |j: usize| m[4 + j][l] - m[8 + j][l] - m[12 + j][l];
        let (s0, s1, s2, s3) = (s(0), s(1), s(2), s(3));
        let (d0, d1, d2, d3) = (d(0), d(1), d(2), d(3));
        y[0][l] = s0 + s1 + s2;
        y[1][l] = s1 - s2 - s3;
        y[2][l] = d0 + d1 + d2;
        y[3][l] = d1 - d2 - d3;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_wide_kernel_runs_where_it_fills_its_columns() {
        // 7 rows of 7 tiles in blocks of 4 rows: 28 and 21 tiles, each padded to 32.
        assert_eq!(block_fill(7, 7, 4, 32), 49.0 / 64.0);
        assert_eq!(block_fill(7, 7, 7, 48), 49.0 / 96.0);
        assert_eq!(block_fill(2, 24, 2, 48), 1.0);
        assert_eq!(block_fill(2, 24, 2, 32), 0.75);
        for level in Isa::ALL.into_iter().filter(|l| l.is_available()) {
            let wide = Packed::wide_dims_of(level).is_some();
            // Two rows of 24 tiles (a 4x48 image): one block of 48 tiles.
            let plan = WinogradPlan::new(&Shape::nchw_3x3(1, 8, 66, 4, 48), false, 0, 2, level);
            assert_eq!(plan.kernel.nr == 48, wide, "{level}: 4x48");
            // One 14x14 image: 49 tiles fill 32-column slivers better.
            let plan = WinogradPlan::new(&Shape::nchw_3x3(1, 256, 256, 14, 14), false, 0, 2, level);
            assert_ne!(plan.kernel.nr, 48, "{level}: 14x14");
            // The workspace asked for covers every level's layout with either kernel.
            let mine = WinogradPlan::layout(&plan.s, false, 0, 2, level, (8, 48));
            assert!(plan.workspace_floats() >= mine.own_floats(), "{level}");
        }
    }

    /// One row of tiles of one channel (`tw` tiles from block tile `t0`), in V's layout for a
    /// kernel `nr` tiles wide.
    struct Row {
        stage: Vec<f32>,
        rl: usize,
        tw: usize,
        t0: usize,
        nr: usize,
        c: usize,
        c_count: usize,
        plane: usize,
    }

    impl Row {
        fn new(rng: &mut StdRng, tw: usize, t0: usize) -> Row {
            let rl = (2 * tw + 2).next_multiple_of(LANES) + LANES;
            let (nr, c_count) = (32, 3);
            let tpad = (t0 + tw).next_multiple_of(nr);
            Row {
                stage: (0..4 * rl)
                    .map(|_| rng.random_range(-2.0f32..2.0))
                    .collect(),
                rl,
                tw,
                t0,
                nr,
                c: 1,
                c_count,
                plane: c_count * tpad + PLANE_SKEW,
            }
        }

        /// The runs of the row, each inside one sliver.
        fn runs(&self) -> impl Iterator<Item = TileRun> {
            TileRun::of_row(self.t0, self.tw, self.nr, self.c_count, self.c, self.plane)
        }

        fn fresh_v(&self) -> Vec<f32> {
            vec![f32::from_bits(0x7fc0_1234); 16 * self.plane]
        }

        /// V through the staged-row helpers, as `run_block_body` runs them below AVX-512.
        fn generic(&self) -> Vec<f32> {
            let (rl, width) = (self.rl, self.tw + 1);
            let mut v = self.fresh_v();
            let mut comb = vec![0f32; 4 * rl];
            let mut eo = vec![0f32; 8 * rl];
            combine_rows(&self.stage, &mut comb, rl, 2 * width);
            for i in 0..4 {
                let (e, o) = eo[2 * i * rl..][..2 * rl].split_at_mut(rl);
                deinterleave(&comb[i * rl..][..2 * width], e, o);
            }
            for TileRun { j0, len, base, .. } in self.runs() {
                for i in 0..4 {
                    let e = &eo[2 * i * rl..][j0..j0 + len + 1];
                    let o = &eo[(2 * i + 1) * rl..][j0..j0 + len + 1];
                    let at = |j: usize| (4 * i + j) * self.plane + base;
                    lanewise(&mut v[at(0)..at(0) + len], &e[..len], &e[1..], |a, b| a - b);
                    lanewise(&mut v[at(1)..at(1) + len], &o[..len], &e[1..], |a, b| a + b);
                    lanewise(&mut v[at(2)..at(2) + len], &e[1..], &o[..len], |a, b| a - b);
                    lanewise(&mut v[at(3)..at(3) + len], &o[..len], &o[1..], |a, b| a - b);
                }
            }
            v
        }

        /// V from the definition, tile by tile: rows of `Bᵀ d` first, then `(Bᵀ d) B`.
        fn direct(&self) -> Vec<f32> {
            let mut v = self.fresh_v();
            for TileRun { j0, len, base, .. } in self.runs() {
                for k in 0..len {
                    let d = |i: usize, j: usize| self.stage[i * self.rl + 2 * (j0 + k) + j];
                    let r = |j: usize| {
                        [
                            d(0, j) - d(2, j),
                            d(1, j) + d(2, j),
                            d(2, j) - d(1, j),
                            d(1, j) - d(3, j),
                        ]
                    };
                    let (c0, c1, c2, c3) = (r(0), r(1), r(2), r(3));
                    let rows = c0.iter().zip(c1).zip(c2.iter().zip(c3));
                    for (i, ((&e0, o0), (&e1, o1))) in rows.enumerate() {
                        let at = |j: usize| (4 * i + j) * self.plane + base + k;
                        v[at(0)] = e0 - e1;
                        v[at(1)] = o0 + e1;
                        v[at(2)] = e1 - o0;
                        v[at(3)] = o0 - o1;
                    }
                }
            }
            v
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The input transform's paths give V bit for bit as its definition does, on rows of 1 to
    /// 47 tiles starting anywhere in a sliver (runs of 1 to 32 tiles), and write nothing else:
    /// the staged-row helpers everywhere, the AVX2 and AVX-512 register paths where the
    /// processor has them.
    #[test]
    fn input_transform_paths_match_the_definition_bit_for_bit() {
        let mut rng = StdRng::seed_from_u64(5);
        #[cfg(target_arch = "x86_64")]
        let avx512 = crate::fast::isa::Isa::Avx512.is_available();
        #[cfg(target_arch = "x86_64")]
        let avx2 = crate::fast::isa::Isa::Avx2.is_available();
        for tw in [1, 5, 7, 15, 16, 17, 28, 32, 33, 47] {
            for t0 in [0, 5, 16, 31] {
                let row = Row::new(&mut rng, tw, t0);
                let want = bits(&row.direct());
                assert_eq!(bits(&row.generic()), want, "staged rows, tw {tw}, t0 {t0}");
                #[cfg(target_arch = "x86_64")]
                if avx512 {
                    let mut v = row.fresh_v();
                    for run in row.runs() {
                        // SAFETY: the processor has AVX-512 F (checked above).
                        unsafe {
                            input_tiles_avx512(&row.stage, row.rl, 2 * (tw + 1), run, &mut v)
                        };
                    }
                    assert_eq!(bits(&v), want, "AVX-512, tw {tw}, t0 {t0}");
                }
                #[cfg(target_arch = "x86_64")]
                if avx2 {
                    let mut v = row.fresh_v();
                    for run in row.runs() {
                        // SAFETY: the processor has AVX2 (checked above).
                        unsafe { input_tiles_avx2(&row.stage, row.rl, 2 * (tw + 1), run, &mut v) };
                    }
                    assert_eq!(bits(&v), want, "AVX2, tw {tw}, t0 {t0}");
                }
            }
        }
    }

    /// The AVX-512 output transform (16 tiles) and the AVX2 one (8 tiles) give the bits of
    /// `output_tiles` and `interleave` (chunks of 8 tiles), with one output row or two, with
    /// the fused bias and relu applied as the scalar path applies them, and write nothing past
    /// each row's first `width` values.
    #[test]
    fn output_transform_paths_agree_bit_for_bit() {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::fast::isa::Isa;
            let mut rng = StdRng::seed_from_u64(6);
            let (m_plane, m0, ow, q) = (83, 5, 37, 3);
            let m: Vec<f32> = (0..XI * m_plane)
                .map(|_| rng.random_range(-3.0f32..3.0))
                .collect();
            let cases = [
                (false, 32, None, false),
                (true, 32, None, false),
                (true, 14, Some(0.75f32), true),
                (false, 7, None, true),
                (true, 19, Some(-1.5), false),
                (true, 16, Some(0.25), true),
                (false, 9, None, false),
            ];
            // Each level's transform with its widest chunk (32 columns at AVX-512, 16 at AVX2).
            let levels: [(Isa, usize, Transform); 2] = [
                (Isa::Avx512, 32, output_tiles_avx512),
                (Isa::Avx2, 16, output_tiles_avx2),
            ];
            for (two_rows, width, bias, relu) in cases {
                let fresh = || vec![f32::from_bits(0x7fc0_4321); q + ow + 40];
                let mut full = fresh();
                for half in 0..2 {
                    let lanes: [[f32; LANES]; XI] = std::array::from_fn(|xi| {
                        std::array::from_fn(|l| m[xi * m_plane + m0 + 8 * half + l])
                    });
                    let y = output_tiles(&lanes);
                    let at = q + 16 * half;
                    interleave(&y[0], &y[1], &mut full[at..at + 16]);
                    if two_rows {
                        interleave(&y[2], &y[3], &mut full[at + ow..at + ow + 16]);
                    }
                }
                // The epilogue, as the scalar path applies it.
                for v in &mut full {
                    if let Some(b) = bias {
                        *v += b;
                    }
                    if relu {
                        *v = if *v < 0.0 { 0.0 } else { *v };
                    }
                }
                for &(isa, widest, transform) in &levels {
                    if !isa.is_available() {
                        continue;
                    }
                    let width = width.min(widest);
                    // Only each row's first `width` values are written.
                    let mut want = fresh();
                    want[q..q + width].copy_from_slice(&full[q..q + width]);
                    if two_rows {
                        want[q + ow..q + ow + width].copy_from_slice(&full[q + ow..q + ow + width]);
                    }
                    let mut got = fresh();
                    let chunk = OutputChunk {
                        m0,
                        m_plane,
                        q,
                        ow,
                        two_rows,
                        width,
                        bias,
                        relu,
                    };
                    // SAFETY: the processor has the level's features (checked above).
                    unsafe { transform(&m, chunk, &mut got) };
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "{isa:?}: two rows: {two_rows}, width {width}, bias {bias:?}, relu {relu}"
                    );
                }
            }
        }
        // The portable level's output transform is output_tiles itself: check it against its
        // definition on one tile.
        let mut tile = [[0f32; LANES]; XI];
        for (xi, lane) in tile.iter_mut().enumerate() {
            lane[0] = (xi as f32 * 0.37).sin();
        }
        let y = output_tiles(&tile);
        let mm = |i: usize, j: usize| tile[4 * i + j][0];
        let s = |j: usize| mm(0, j) + mm(1, j) + mm(2, j);
        let d = |j: usize| mm(1, j) - mm(2, j) - mm(3, j);
        assert_eq!(y[0][0].to_bits(), (s(0) + s(1) + s(2)).to_bits());
        assert_eq!(y[3][0].to_bits(), (d(1) - d(2) - d(3)).to_bits());
    }
}
