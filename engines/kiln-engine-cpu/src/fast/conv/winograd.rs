//! Winograd F(2x2, 3x3) forward convolution: the `conv_algo = 2` path of
//! `KILN_CPU_CONV_FPROP_GEMM_V1`, and its automatic choice for 3x3 convolutions with enough
//! channels.
//!
//! A 3x3, stride-1, undilated, ungrouped 2-D convolution is computed on 2x2 output tiles. Each
//! 4x4 input tile `d` becomes `V = Bᵀ d B`, each 3x3 filter `g` becomes `U = G g Gᵀ`, the 16
//! element positions ξ of the transformed tiles are multiplied as 16 independent GEMMs over the
//! channels (`M_ξ[K x tiles] = U_ξ[K x C] · V_ξ[C x tiles]`, through the `gemm` crate), and each
//! output tile is `Y = Aᵀ M A`: 16 multiplies for 4 outputs instead of 36.
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
use crate::fast::element_io::{load, SharedPtr};
use crate::fast::epilogue::{BoundEpilogue, EpiloguePtrs, Tile};
use crate::fast::isa::Isa;
use crate::fast::sgemm::sgemm;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Element positions of a transformed 4x4 tile.
const XI: usize = 16;
/// Lanes the transforms work in (one AVX2 register of f32).
const LANES: usize = 8;
/// Tiles one block aims for: wide enough for GEMM, small enough to stay in cache.
const TARGET_TILES: usize = 128;
/// Buffers start on a multiple of this many floats (64 bytes).
const FLOAT_ALIGN: usize = 16;

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
/// for the GEMMs to dominate the transforms, and an output of at least a few tiles.
pub(crate) fn preferred(s: &Shape) -> bool {
    eligible(s) && s.cg >= 16 && s.kg >= 16 && s.output[1] * s.output[2] >= 64
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
    /// Tile stride of the V and M buffers (room for a full last chunk of lanes).
    ld: usize,
    /// Floats per staging row of the input transform.
    row_len: usize,
    /// Most output positions one image contributes to a block.
    segment: usize,
    slots: usize,
    /// The instruction set the GEMMs run with.
    isa: Isa,
}

/// One worker's buffers.
struct Slot<'a> {
    v: &'a mut [f32],
    m: &'a mut [f32],
    out: &'a mut [f32],
    scratch: &'a mut [f32],
    rows: &'a mut [f32],
}

impl WinogradPlan {
    /// Plans the convolution `s` (which must be [`eligible`]) for `slots` workers. `tile_knob`,
    /// when non-zero, is the output positions a block aims for (four per tile).
    pub fn new(
        s: &Shape,
        rows_are_positions: bool,
        tile_knob: usize,
        slots: usize,
        isa: Isa,
    ) -> Self {
        let slots = slots.max(1);
        let (oh, ow) = (s.output[1], s.output[2]);
        let (tiles_h, tiles_w) = (oh.div_ceil(2), ow.div_ceil(2));
        let total_rows = (s.n * tiles_h).max(1);
        let target = if tile_knob > 0 {
            (tile_knob / 4).max(1)
        } else {
            TARGET_TILES
        };
        // Enough blocks to keep every worker busy twice over, when there are that many rows.
        let block_rows = target
            .div_ceil(tiles_w.max(1))
            .min(total_rows.div_ceil(2 * slots))
            .max(1);
        WinogradPlan {
            s: s.clone(),
            rows_are_positions,
            tiles_h,
            tiles_w,
            block_rows,
            blocks: total_rows.div_ceil(block_rows),
            ld: (block_rows * tiles_w).next_multiple_of(LANES) + LANES,
            row_len: (2 * tiles_w + 2).next_multiple_of(LANES) + LANES,
            segment: block_rows.min(tiles_h) * 2 * ow,
            slots,
            isa,
        }
    }

    fn filter_floats(&self) -> usize {
        (self.s.kg * XI * self.s.cg).next_multiple_of(FLOAT_ALIGN)
    }

    /// Floats of one worker's buffers: V, M, the output tile, epilogue scratch, staging rows.
    fn slot_parts(&self) -> [usize; 5] {
        let round = |v: usize| v.next_multiple_of(FLOAT_ALIGN);
        let (c, k) = (self.s.cg, self.s.kg);
        [
            round(XI * c * self.ld),
            round(XI * k * self.ld),
            round(k * self.segment),
            round(self.segment.max(k)),
            round(16 * self.row_len),
        ]
    }

    fn slot_floats(&self) -> usize {
        self.slot_parts().iter().sum()
    }

    /// f32 values of workspace `execute` needs (from a 64-byte aligned start).
    pub fn workspace_floats(&self) -> usize {
        self.filter_floats() + self.slots.min(self.blocks) * self.slot_floats()
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
        // SAFETY: w is bound for this call.
        unsafe { self.transform_filters(w, u) };
        let u: &[f32] = u;
        let per_slot = self.slot_floats();
        let slots = self.slots.min(self.blocks).max(1);
        let next = AtomicUsize::new(0);
        let parts = self.slot_parts();
        let work = |buf: &mut [f32]| {
            let (v, buf) = buf.split_at_mut(parts[0]);
            let (m, buf) = buf.split_at_mut(parts[1]);
            let (out, buf) = buf.split_at_mut(parts[2]);
            let (scratch, rows) = buf.split_at_mut(parts[3]);
            let mut slot = Slot {
                v,
                m,
                out,
                scratch,
                rows,
            };
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= self.blocks {
                    break;
                }
                // SAFETY: forwarded contract; blocks cover disjoint output elements.
                unsafe { self.run_block(b, x, u, epilogue, ptrs, &mut slot) };
            }
        };
        let bufs = &mut rest[..slots * per_slot];
        if slots == 1 {
            work(bufs);
        } else {
            bufs.par_chunks_mut(per_slot).for_each(work);
        }
    }

    /// Writes `U = G g Gᵀ` of every filter as f32 `[K][ξ][C]`.
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call.
    unsafe fn transform_filters(&self, w: SharedPtr, u: &mut [f32]) {
        let s = &self.s;
        let c_count = s.cg;
        let u = &mut u[..s.kg * XI * c_count];
        u.par_chunks_mut(XI * c_count)
            .enumerate()
            .for_each(|(k, uk)| {
                for c in 0..c_count {
                    let mut g = [0f32; 9];
                    for (r, row) in g.chunks_exact_mut(3).enumerate() {
                        let off =
                            k as isize * s.ws.0 + c as isize * s.ws.1 + r as isize * s.ws.2[1];
                        // SAFETY: three in-range filter columns of w's own layout.
                        unsafe { load(w.get(), s.w_type, off, s.ws.2[2], row) };
                    }
                    // G g: rows g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2 (per column).
                    let mut t = [[0f32; 3]; 4];
                    for j in 0..3 {
                        let (a, b, c2) = (g[j], g[3 + j], g[6 + j]);
                        t[0][j] = a;
                        t[1][j] = 0.5 * (a + b + c2);
                        t[2][j] = 0.5 * (a - b + c2);
                        t[3][j] = c2;
                    }
                    // (G g) Gᵀ: the same combination along each row.
                    for (i, row) in t.iter().enumerate() {
                        let (a, b, c2) = (row[0], row[1], row[2]);
                        let vals = [a, 0.5 * (a + b + c2), 0.5 * (a - b + c2), c2];
                        for (j, &val) in vals.iter().enumerate() {
                            uk[(4 * i + j) * c_count + c] = val;
                        }
                    }
                }
            });
    }

    /// Loads `dst.len()` columns of input row `ih` (of image `n`, channel `c`) from column
    /// `-pad` on, zero outside the input.
    ///
    /// # Safety
    /// `x` is the bound input pointer of a live execute call.
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
        dst[..j0u].fill(0.0);
        dst[j1u..].fill(0.0);
        if j0 < j1 {
            let off =
                n as isize * s.xs.0 + c as isize * s.xs.1 + ih * s.xs.2[1] + (j0 - pad) * s.xs.2[2];
            // SAFETY: entries j0..j1 read in-range input columns of row ih.
            unsafe { load(x.get(), s.x_type, off, s.xs.2[2], &mut dst[j0u..j1u]) };
        }
    }

    /// Transforms, multiplies and stores block `b`, with the transforms compiled for the plan's
    /// instruction set: they are plain loops over rows of tiles, which the compiler vectorises
    /// 4 lanes wide for the x86-64 baseline and 8 or 16 wide under AVX2 or AVX-512 (adds,
    /// subtracts and halvings only, so every result is the same bit for bit).
    ///
    /// # Safety
    /// As for [`WinogradPlan::execute`]; no other worker runs block `b`.
    unsafe fn run_block(
        &self,
        b: usize,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            Isa::Avx512 | Isa::Amx if Isa::Avx512.is_available() => {
                // SAFETY: the processor has AVX-512 F (checked); the rest is forwarded.
                return unsafe { self.run_block_avx512(b, x, u, epilogue, ptrs, slot) };
            }
            Isa::Avx2 | Isa::Avx512 | Isa::Amx if Isa::Avx2.is_available() => {
                // SAFETY: the processor has AVX2 and FMA (checked); the rest is forwarded.
                return unsafe { self.run_block_avx2(b, x, u, epilogue, ptrs, slot) };
            }
            _ => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.run_block_body(b, x, u, epilogue, ptrs, slot) }
    }

    /// [`Self::run_block_body`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor must have AVX-512 F; otherwise as for [`WinogradPlan::run_block`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn run_block_avx512(
        &self,
        b: usize,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.run_block_body(b, x, u, epilogue, ptrs, slot) }
    }

    /// [`Self::run_block_body`] compiled for AVX2 and FMA.
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA; otherwise as for [`WinogradPlan::run_block`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_block_avx2(
        &self,
        b: usize,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.run_block_body(b, x, u, epilogue, ptrs, slot) }
    }

    /// The work of [`WinogradPlan::run_block`], inlined into each instruction set's copy.
    ///
    /// # Safety
    /// As for [`WinogradPlan::run_block`].
    #[inline(always)]
    unsafe fn run_block_body(
        &self,
        b: usize,
        x: SharedPtr,
        u: &[f32],
        epilogue: &BoundEpilogue,
        ptrs: &EpiloguePtrs,
        slot: &mut Slot<'_>,
    ) {
        let s = &self.s;
        let (c_count, k_count, ld, tw_count) = (s.cg, s.kg, self.ld, self.tiles_w);
        let total_rows = s.n * self.tiles_h;
        let g0 = b * self.block_rows;
        let g1 = (g0 + self.block_rows).min(total_rows);
        let tiles = (g1 - g0) * tw_count;

        // Input transform: V[ξ][c][t]. Rows of the input are staged whole, combined into
        // Bᵀ d, then split into even and odd columns.
        let rl = self.row_len;
        let width = tw_count + 1;
        let (stage, rest) = slot.rows.split_at_mut(4 * rl);
        let (comb, eo) = rest.split_at_mut(4 * rl);
        for c in 0..c_count {
            for g in g0..g1 {
                let (n, th) = (g / self.tiles_h, g % self.tiles_h);
                for i in 0..4 {
                    let ih = (2 * th + i) as isize - s.pad[1];
                    // SAFETY: forwarded contract.
                    unsafe { self.load_row(x, n, c, ih, &mut stage[i * rl..][..2 * width]) };
                }
                combine_rows(stage, comb, rl, 2 * width);
                for i in 0..4 {
                    let src = &comb[i * rl..][..2 * width];
                    let (e, o) = eo[2 * i * rl..][..2 * rl].split_at_mut(rl);
                    for ((pair, e), o) in src
                        .chunks_exact(2)
                        .zip(&mut e[..width])
                        .zip(&mut o[..width])
                    {
                        *e = pair[0];
                        *o = pair[1];
                    }
                }
                // (Bᵀ d) B along each row, for every tile of the row.
                let t0 = (g - g0) * tw_count;
                for i in 0..4 {
                    let e = &eo[2 * i * rl..][..width];
                    let o = &eo[(2 * i + 1) * rl..][..width];
                    let (e0, e1) = (&e[..tw_count], &e[1..]);
                    let (o0, o1) = (&o[..tw_count], &o[1..]);
                    let at = |j: usize| (4 * i + j) * c_count * ld + c * ld + t0;
                    let v = &mut *slot.v;
                    for ((d, &a), &b) in v[at(0)..at(0) + tw_count].iter_mut().zip(e0).zip(e1) {
                        *d = a - b;
                    }
                    for ((d, &a), &b) in v[at(1)..at(1) + tw_count].iter_mut().zip(o0).zip(e1) {
                        *d = a + b;
                    }
                    for ((d, &a), &b) in v[at(2)..at(2) + tw_count].iter_mut().zip(e1).zip(o0) {
                        *d = a - b;
                    }
                    for ((d, &a), &b) in v[at(3)..at(3) + tw_count].iter_mut().zip(o0).zip(o1) {
                        *d = a - b;
                    }
                }
            }
        }

        // M_ξ[K x tiles] = U_ξ[K x C] · V_ξ[C x tiles], for the 16 positions.
        for xi in 0..XI {
            // SAFETY: lhs is U_ξ inside u ([K][ξ][C]: row stride 16 C), rhs V_ξ ([C][ld]) and
            // dst M_ξ ([K][ld]) inside this worker's buffers; tiles <= ld.
            unsafe {
                sgemm(
                    self.isa,
                    k_count,
                    tiles,
                    c_count,
                    (slot.m.as_mut_ptr().add(xi * k_count * ld), ld as isize, 1),
                    (u.as_ptr().add(xi * c_count), (XI * c_count) as isize, 1),
                    (slot.v.as_ptr().add(xi * c_count * ld), ld as isize, 1),
                    false,
                    1,
                )
            };
        }

        // Output transform and epilogue, one image's rows of tiles at a time.
        let (oh_count, ow_count) = (s.output[1], s.output[2]);
        let mut g = g0;
        while g < g1 {
            let n = g / self.tiles_h;
            let seg_end = ((n + 1) * self.tiles_h).min(g1);
            let oh0 = 2 * (g % self.tiles_h);
            let oh1 = (2 * ((seg_end - 1) % self.tiles_h + 1)).min(oh_count);
            let (p0, cols) = (oh0 * ow_count, (oh1 - oh0) * ow_count);
            // Element (k, position p0 + q) of the tile is at k * k_step + q * q_step.
            let (k_step, q_step) = if self.rows_are_positions {
                (1, k_count)
            } else {
                (cols, 1)
            };
            let out = &mut slot.out[..k_count * cols];
            for k in 0..k_count {
                for gg in g..seg_end {
                    let oh = 2 * (gg % self.tiles_h);
                    let two_rows = oh + 1 < oh_count;
                    let t0 = (gg - g0) * tw_count;
                    let mut tw0 = 0;
                    while tw0 < tw_count {
                        let mut m = [[0f32; LANES]; XI];
                        for (xi, lane) in m.iter_mut().enumerate() {
                            lane.copy_from_slice(
                                &slot.m[(xi * k_count + k) * ld + t0 + tw0..][..LANES],
                            );
                        }
                        let y = output_tiles(&m);
                        let base = k * k_step;
                        if q_step == 1 && 2 * (tw0 + LANES) <= ow_count {
                            // A full chunk of a channels-first row: interleave the columns.
                            let q = (oh - oh0) * ow_count + 2 * tw0;
                            interleave(&y[0], &y[1], &mut out[base + q..][..2 * LANES]);
                            if two_rows {
                                let q = q + ow_count;
                                interleave(&y[2], &y[3], &mut out[base + q..][..2 * LANES]);
                            }
                            tw0 += LANES;
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
                                out[base + q * q_step] = y0;
                                if ow + 1 < ow_count {
                                    out[base + (q + 1) * q_step] = y1;
                                }
                            }
                        }
                        tw0 += LANES;
                    }
                }
            }
            let (row0, col0, rows, tile_cols, tile_ld) = if self.rows_are_positions {
                (p0, 0, cols, k_count, k_count)
            } else {
                (0, p0, k_count, cols, cols)
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

/// `Bᵀ d` for `width` columns of four staged rows (each `rl` floats apart) into `dst`.
#[inline(always)]
fn combine_rows(src: &[f32], dst: &mut [f32], rl: usize, width: usize) {
    let (r0, r1, r2, r3) = (
        &src[..width],
        &src[rl..rl + width],
        &src[2 * rl..2 * rl + width],
        &src[3 * rl..3 * rl + width],
    );
    let (d0, rest) = dst.split_at_mut(rl);
    let (d1, rest) = rest.split_at_mut(rl);
    let (d2, d3) = rest.split_at_mut(rl);
    let (d0, d1, d2, d3) = (
        &mut d0[..width],
        &mut d1[..width],
        &mut d2[..width],
        &mut d3[..width],
    );
    for j in 0..width {
        let (a, b, c, d) = (r0[j], r1[j], r2[j], r3[j]);
        d0[j] = a - c;
        d1[j] = b + c;
        d2[j] = c - b;
        d3[j] = b - d;
    }
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
