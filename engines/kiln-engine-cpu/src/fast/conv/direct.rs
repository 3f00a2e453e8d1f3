//! The AVX-512 levels' direct convolution: a 1x1, stride-1, unpadded convolution with a
//! channels-first input and output is a product of the group's filters `[kg, c]` with the image's
//! input `[c, positions]`, whose rows are already consecutive in memory. This path multiplies the
//! input where it lies (no im2col, no packing of the right operand) and applies a bias + relu
//! epilogue in registers as it stores the output, as ONNX Runtime's MLAS does; any other
//! epilogue runs on a small tile while it is in L1.
//!
//! The micro-kernel holds a 6 × 64 tile of the output in 24 zmm accumulators: per input channel
//! it loads 64 positions (four vectors) of the input row and broadcasts six filter values, for
//! 24 FMAs against 10 loads. The filters are packed once per execute into slivers of six
//! (`[kg / 6][c][6]`). Loops: positions in blocks of 64 (the block of input, `KC` channels × 64
//! positions, stays in L1 while every filter sliver passes over it), then channels in blocks of
//! `KC`, then the filter slivers.

use crate::fast::epilogue::{BoundEpilogue, EpiloguePtrs, RowBiasRelu, Tile};

/// Filter rows of the micro-kernel's tile.
pub(super) const MR: usize = 6;
/// Output positions of the widest tile (four zmm vectors).
pub(super) const NR: usize = 64;
/// Input channels per block: 128 × 64 positions × 4 bytes is 32 KiB, which stays in L1.
const KC: usize = 128;

/// One tile of the direct path: `len` output positions of one image and group.
pub(super) struct DirectTile<'a> {
    /// The group's packed filters, `[kg.div_ceil(MR)][patch][MR]`, zeros past `kg`.
    pub u: &'a [f32],
    /// Filters in the group.
    pub kg: usize,
    /// Input channels in the group.
    pub patch: usize,
    /// The group's first input channel at the tile's first position.
    pub x: *const f32,
    /// Elements between input channels.
    pub cs: isize,
    /// Output positions in the tile.
    pub len: usize,
    /// The epilogue's tile coordinates: fixed index, first row (filter), first column
    /// (position).
    pub fixed: usize,
    pub row0: usize,
    pub col0: usize,
}

/// Floats of the tile buffer [`run_avx512`] needs for `kg` filters: the partial sums of one
/// block of positions.
pub(super) fn tile_floats(kg: usize) -> usize {
    kg.next_multiple_of(MR) * NR
}

/// Floats of the input block buffer [`run_avx512`] needs for `patch` input channels.
pub(super) fn block_floats(patch: usize) -> usize {
    KC.min(patch) * NR
}

/// Computes the tile and stores it through the epilogue: in registers when `fused` is set
/// (the epilogue is a [`RowBiasRelu`]), otherwise through [`BoundEpilogue::apply`] on each
/// block of 64 positions. `buf` holds [`tile_floats`] floats, `block` [`block_floats`],
/// `scratch` at least 64 and at least `kg`.
///
/// # Safety
/// The processor has AVX-512 F; `t.x` addresses `patch` channels (stride `cs`) of `len`
/// consecutive positions; `ptrs` are this execute call's and no other thread writes the tile's
/// output elements.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run_avx512(
    t: &DirectTile<'_>,
    buf: &mut [f32],
    block: &mut [f32],
    scratch: &mut [f32],
    epilogue: &BoundEpilogue,
    ptrs: &EpiloguePtrs,
    fused: Option<RowBiasRelu>,
) {
    let kslivers = t.kg.div_ceil(MR);
    let buf = &mut buf[..tile_floats(t.kg)];
    let block = &mut block[..block_floats(t.patch)];
    // The fused epilogue's per-row values, looked up once per tile: each filter's bias (in
    // scratch) and where its output row starts.
    let fused = fused.map(|f| {
        for (r, b) in scratch[..t.kg].iter_mut().enumerate() {
            // SAFETY: row r is one of the tile's filters.
            *b = unsafe { epilogue.row_bias(ptrs, f, t.fixed, t.row0 + r) };
        }
        (f, epilogue.out_f32(ptrs, t.fixed, t.row0, t.col0))
    });
    for pb in (0..t.len).step_by(NR) {
        let cols = NR.min(t.len - pb);
        let xb = t.x.wrapping_add(pb);
        for kb in (0..t.patch).step_by(KC) {
            let kc = KC.min(t.patch - kb);
            let last = kb + kc == t.patch;
            // The block of input, copied into consecutive rows of 64 (zeros past `cols`):
            // read in place, its rows would sit on a different 4 KiB page every step or two.
            // SAFETY: kc channels of `cols` positions from xb (the caller's contract); `block`
            // holds kc rows of NR.
            unsafe {
                x86::copy_block(
                    kc,
                    xb.wrapping_offset(kb as isize * t.cs),
                    t.cs,
                    cols,
                    block.as_mut_ptr(),
                )
            };
            // The first four slivers fetch the same channels of the next block of positions
            // into L1, one line of 16 positions each (spread over the kernel's steps, the
            // fetches do not queue up behind each other).
            let next =
                (pb + NR < t.len).then(|| xb.wrapping_offset(kb as isize * t.cs).wrapping_add(NR));
            for ks in 0..kslivers {
                let rows = MR.min(t.kg - ks * MR);
                let a = t.u[(ks * t.patch + kb) * MR..].as_ptr();
                let b = block.as_ptr();
                let c = buf[ks * MR * NR..].as_mut_ptr();
                let mut finish = None;
                let mut store = x86::Finish {
                    rows,
                    bias: None,
                    relu: false,
                    out: [std::ptr::null_mut(); MR],
                };
                if let (true, Some((f, out))) = (last, fused) {
                    let mut bias = [0.0; MR];
                    bias[..rows].copy_from_slice(&scratch[ks * MR..ks * MR + rows]);
                    for (r, o) in store.out[..rows].iter_mut().enumerate() {
                        let row = (ks * MR + r) as isize;
                        *o = out.wrapping_offset(row * f.row_stride + pb as isize);
                    }
                    store.bias = f.has_bias().then_some(bias);
                    store.relu = f.relu;
                    finish = Some(&store);
                }
                let fetch = match next {
                    Some(n) if ks * 16 < NR.min(t.len - pb - NR) => (n.wrapping_add(ks * 16), t.cs),
                    _ => (std::ptr::null(), 0),
                };
                // SAFETY: `a` holds kc packed steps of this sliver; `b` the block's kc rows of
                // NR; `c` the sliver's MR × NR partial sums in buf; the output rows (when
                // finishing) are the tile's own; fetches never fault.
                unsafe { x86::tile(kc, a, b, cols, c, kb > 0, finish, fetch) };
            }
        }
        if fused.is_none() {
            let tile = Tile {
                fixed: t.fixed,
                row0: t.row0,
                col0: t.col0 + pb,
                rows: t.kg,
                cols,
                values: &mut buf[..t.kg * NR],
                ld: NR,
            };
            // SAFETY: forwarded contract; the tile is this call's.
            unsafe { epilogue.apply(ptrs, tile, scratch) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MR, NR};
    use std::arch::x86_64::*;

    /// How a tile's last channel block ends: bias, relu, and the f32 output rows.
    pub struct Finish {
        /// Rows of the tile that exist (the rest are the sliver's zero padding).
        pub rows: usize,
        /// Each row's bias, when the epilogue has one (adding 0 would turn -0 into +0).
        pub bias: Option<[f32; MR]>,
        pub relu: bool,
        /// Where each row's first position is stored.
        pub out: [*mut f32; MR],
    }

    /// Copies `kc` rows of `cols` (1 to 64) floats, `ld` apart from `src`, into rows of `NR` at
    /// `dst`, zeros past `cols`.
    ///
    /// # Safety
    /// The processor has AVX-512 F; `src` addresses `kc` rows of `cols` floats, `dst` `kc`
    /// rows of `NR`.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn copy_block(kc: usize, src: *const f32, ld: isize, cols: usize, dst: *mut f32) {
        let mask = |h: usize| -> __mmask16 {
            let lanes = cols.saturating_sub(16 * h).min(16) as u32;
            ((1u32 << lanes) - 1) as __mmask16
        };
        let masks = [mask(0), mask(1), mask(2), mask(3)];
        for c in 0..kc {
            let row = src.wrapping_offset(c as isize * ld);
            for (h, &m) in masks.iter().enumerate() {
                // SAFETY: masked to the row's first cols floats; dst's row of NR.
                unsafe {
                    let v = _mm512_maskz_loadu_ps(m, row.add(16 * h));
                    _mm512_storeu_ps(dst.add(c * NR + 16 * h), v);
                }
            }
        }
    }

    /// The tile of `cols` (1 to 64) positions, with as many vectors as it needs.
    ///
    /// # Safety
    /// As for [`tile_v`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tile(
        kc: usize,
        a: *const f32,
        b: *const f32,
        cols: usize,
        c: *mut f32,
        add_c: bool,
        finish: Option<&Finish>,
        fetch: (*const f32, isize),
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match cols.div_ceil(16) {
                4 => tile_v::<4>(kc, a, b, cols, c, add_c, finish, fetch),
                3 => tile_v::<3>(kc, a, b, cols, c, add_c, finish, fetch),
                2 => tile_v::<2>(kc, a, b, cols, c, add_c, finish, fetch),
                _ => tile_v::<1>(kc, a, b, cols, c, add_c, finish, fetch),
            }
        }
    }

    /// `MR` × `cols` tile = (`add_c` ? c : 0) + a·b over `kc` steps; `a` packed (`MR` values a
    /// step), `b` a copied block (rows of `NR`, zeros past `cols`). Without `finish` the sums
    /// go to `c` (row stride `NR`); with it each row gets its bias and relu and goes to its
    /// output row, only its first `cols` floats written. A non-null `fetch.0` is prefetched
    /// into L1 once a step, `fetch.1` floats further each step.
    ///
    /// # Safety
    /// The processor has AVX-512 F; `a` holds `kc` steps, `b` `kc` rows of `NR` floats, `c`
    /// `MR` rows of `NR` floats; `16 * (V - 1) < cols <= 16 * V`; each of `finish`'s first
    /// `rows` outputs addresses `cols` floats.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile_v<const V: usize>(
        kc: usize,
        a: *const f32,
        b: *const f32,
        cols: usize,
        c: *mut f32,
        add_c: bool,
        finish: Option<&Finish>,
        fetch: (*const f32, isize),
    ) {
        debug_assert!(V * 16 <= NR && cols > 16 * (V - 1) && cols <= 16 * V);
        // Lanes of the last vector inside the tile.
        let tail: __mmask16 = (((1u32 << (cols - 16 * (V - 1))) - 1) & 0xffff) as __mmask16;
        // The output rows' lines, claimed for writing while the loop runs: a store that
        // misses at the end would hold up the next tile.
        if let Some(f) = finish {
            for &row in &f.out[..f.rows] {
                for h in 0..V {
                    _mm_prefetch::<_MM_HINT_ET0>(row.wrapping_add(16 * h) as *const i8);
                }
            }
        }
        let mut acc = [[_mm512_setzero_ps(); V]; MR];
        let (mut a, mut b, mut f) = (a, b, fetch.0);
        for _ in 0..kc {
            if !f.is_null() {
                _mm_prefetch::<_MM_HINT_T0>(f as *const i8);
                f = f.wrapping_offset(fetch.1);
            }
            // SAFETY: one step: MR packed values of a, NR floats of b.
            unsafe {
                let mut bv = [_mm512_setzero_ps(); V];
                for (h, v) in bv.iter_mut().enumerate() {
                    *v = _mm512_loadu_ps(b.add(16 * h));
                }
                for (r, row) in acc.iter_mut().enumerate() {
                    let x = _mm512_set1_ps(*a.add(r));
                    for (o, v) in row.iter_mut().zip(&bv) {
                        *o = _mm512_fmadd_ps(x, *v, *o);
                    }
                }
                a = a.add(MR);
                b = b.add(NR);
            }
        }
        if add_c {
            for (r, row) in acc.iter_mut().enumerate() {
                for (h, o) in row.iter_mut().enumerate() {
                    // SAFETY: inside row r of c.
                    *o = _mm512_add_ps(*o, unsafe { _mm512_loadu_ps(c.add(r * NR + 16 * h)) });
                }
            }
        }
        let Some(f) = finish else {
            for (r, row) in acc.iter().enumerate() {
                for (h, o) in row.iter().enumerate() {
                    // SAFETY: inside row r of c.
                    unsafe { _mm512_storeu_ps(c.add(r * NR + 16 * h), *o) };
                }
            }
            return;
        };
        let zero = _mm512_setzero_ps();
        for (r, row) in acc.iter().enumerate().take(f.rows) {
            for (h, o) in row.iter().enumerate() {
                let mut v = match &f.bias {
                    Some(bias) => _mm512_add_ps(*o, _mm512_set1_ps(bias[r])),
                    None => *o,
                };
                if f.relu {
                    // `x < 0 ? 0 : x`: vmaxps returns its second operand when either is NaN
                    // and for two zeros, so NaN and -0 pass through as in the epilogue.
                    v = _mm512_max_ps(zero, v);
                }
                let at = f.out[r].wrapping_add(16 * h);
                // SAFETY: the row's first cols floats.
                unsafe {
                    if h + 1 < V {
                        _mm512_storeu_ps(at, v);
                    } else {
                        _mm512_mask_storeu_ps(at, tail, v);
                    }
                }
            }
        }
    }
}
