//! The direct convolution of the AVX2 and AVX-512 levels: a 1x1, stride-1, unpadded
//! convolution with a channels-first input and output is a product of the group's filters
//! `[kg, c]` with the image's input `[c, positions]`, whose rows are already consecutive in
//! memory. This path multiplies the input where it lies (no im2col, no packing of the right
//! operand) and applies a bias + relu epilogue in registers as it stores the output, as ONNX
//! Runtime's MLAS does; any other epilogue runs on a small tile while it is in L1. Other
//! stride-1 convolutions run the same kernels on rows listed by offset ([`DirectTile::rows`]):
//! each patch row (channel, filter row, filter column) is a run of a padded band of the input
//! rows (`fprop::Banded`).
//!
//! The micro-kernel holds an 8 × 48 tile of the output in 24 zmm accumulators at the AVX-512
//! levels (per input channel it loads 48 positions, three vectors, of the input row and
//! broadcasts eight filter values: 24 FMAs against 11 loads; with its operands in L1 it ran
//! 205-208 GFLOP/s on one core of the Xeon of 2026-12-06, where the 6 × 64 tile it replaced
//! ran 191-200), and a 6 × 16 tile in 12 ymm accumulators at the AVX2 level (12 FMAs against
//! 8 loads). The filters are packed once per execute into slivers of the level's rows
//! (`[kg / mr][c][mr]`). Loops: positions in groups of blocks of the
//! tile's width (one block at AVX-512, three at AVX2; the group's input, `KC` channels × the
//! width per block, stays in L1 while every filter sliver passes over it), then channels in
//! blocks of `KC`, then the filter slivers, then the group's blocks (a sliver's packed
//! filters, 3 KiB, are read from L1 for the second and third block: on a Zen 4 guest the
//! AVX2 level's N8 C128 28x28 case went from 1.11-1.15 to 1.08-1.09 ms, best of 30, four
//! alternating rounds).

use crate::fast::epilogue::{BoundEpilogue, EpiloguePtrs, RowBiasRelu, Tile};

/// Filter rows of the AVX-512 and AVX2 tiles ([`mr`]).
const MR_AVX512: usize = 8;
const MR_AVX2: usize = 6;
/// Output positions of the widest tile (three zmm vectors), the row length of the buffers.
pub(super) const NR: usize = 48;
/// Output positions of the AVX2 tile (two ymm vectors).
const NR_AVX2: usize = 16;
/// Input channels per block: 128 × 48 positions × 4 bytes is 24 KiB, which stays in L1.
const KC: usize = 128;
/// Blocks of 16 positions the AVX2 kernel takes in turn for each filter sliver: the buffers
/// sized for one AVX-512 block hold three.
const GROUP_AVX2: usize = 3;
const _: () = assert!(GROUP_AVX2 * NR_AVX2 <= NR);

/// One tile of the direct path: `len` output positions of one image and group.
pub(super) struct DirectTile<'a> {
    /// The group's packed filters, `[kg.div_ceil(mr)][patch][mr]` ([`mr`] of the level),
    /// sliver `ks` holding the filters [`sliver_span`] gives it, zeros after them.
    pub u: &'a [f32],
    /// Filters in the group.
    pub kg: usize,
    /// Input channels in the group.
    pub patch: usize,
    /// The group's first input channel at the tile's first position.
    pub x: *const f32,
    /// Elements between input channels.
    pub cs: isize,
    /// Where each row of the right operand (each of `patch`) starts relative to `x`, when
    /// they are not `cs` apart: the patch rows (channel, filter row, filter column) of a
    /// convolution whose input rows are copied padded into a band (see `fprop::Banded`), the
    /// tile's positions then lying in one row of the output.
    pub rows: Option<&'a [isize]>,
    /// Output positions in the tile.
    pub len: usize,
    /// The epilogue's tile coordinates: fixed index, first row (filter), first column
    /// (position).
    pub fixed: usize,
    pub row0: usize,
    pub col0: usize,
}

/// Filter rows of the micro-kernel of the AVX-512 levels (`avx512`) or of the AVX2 level: the
/// slivers the filters are packed in.
pub(super) fn mr(avx512: bool) -> usize {
    if avx512 {
        MR_AVX512
    } else {
        MR_AVX2
    }
}

/// The filters of sliver `ks` of a group of `kg` packed in slivers of `mr` rows: its first
/// filter and how many. Every sliver has `mr` but the last two, which share what is left
/// between them (at AVX2 K = 128 is 20 slivers of six and two of four instead of 21 and one of
/// two): a sliver of one or two rows keeps too few accumulator chains in flight to hide the
/// FMAs' latency, and ran at about half the rate of the others.
pub(super) fn sliver_span(kg: usize, mr: usize, ks: usize) -> (usize, usize) {
    let (slivers, rem) = (kg.div_ceil(mr), kg % mr);
    if slivers < 2 || rem == 0 || ks + 2 < slivers {
        return (ks * mr, mr.min(kg - ks * mr));
    }
    // The last two slivers' mr + rem filters, the larger half first.
    let (first, second) = ((mr + rem).div_ceil(2), (mr + rem) / 2);
    let start = (slivers - 2) * mr;
    if ks + 2 == slivers {
        (start, first)
    } else {
        (start + first, second)
    }
}

/// Floats of the tile buffer [`run`] needs for `kg` filters at any level: the partial sums of
/// one group of blocks of positions.
pub(super) fn tile_floats(kg: usize) -> usize {
    kg.next_multiple_of(MR_AVX512)
        .max(kg.next_multiple_of(MR_AVX2))
        * NR
}

/// Floats of the input block buffer [`run`] needs for `patch` input channels.
pub(super) fn block_floats(patch: usize) -> usize {
    KC.min(patch) * NR
}

/// Computes the tile and stores it through the epilogue: in registers when `fused` is set
/// (the epilogue is a [`RowBiasRelu`]), otherwise through [`BoundEpilogue::apply`] on each
/// block of positions. `avx512` picks the 6 × 64 kernel, else the AVX2 6 × 16 one. `buf` holds
/// [`tile_floats`] floats, `block` [`block_floats`], `scratch` at least 64 and at least `kg`.
///
/// # Safety
/// The processor has AVX-512 F when `avx512` is set, AVX2 and FMA otherwise; `t.x` addresses
/// `patch` channels (stride `cs`) of `len` consecutive positions; `ptrs` are this execute
/// call's and no other thread writes the tile's output elements.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn run(
    avx512: bool,
    t: &DirectTile<'_>,
    buf: &mut [f32],
    block: &mut [f32],
    scratch: &mut [f32],
    epilogue: &BoundEpilogue,
    ptrs: &EpiloguePtrs,
    fused: Option<RowBiasRelu>,
) {
    // The tile's width: positions per block, and the row length of `block` and `buf`.
    let (mr, nr) = (mr(avx512), if avx512 { NR } else { NR_AVX2 });
    // Blocks of positions per group: each filter sliver multiplies every block of the group
    // while its packed values are in L1 (at AVX-512 one block fills L1 by itself).
    let group = if avx512 { 1 } else { GROUP_AVX2 };
    let kslivers = t.kg.div_ceil(mr);
    let buf = &mut buf[..group * t.kg.next_multiple_of(mr) * nr];
    let block = &mut block[..group * KC.min(t.patch) * nr];
    // The fused epilogue's per-row values, looked up once per tile: each filter's bias (in
    // scratch) and where its output row starts.
    let fused = fused.map(|f| {
        for (r, b) in scratch[..t.kg].iter_mut().enumerate() {
            // SAFETY: row r is one of the tile's filters.
            *b = unsafe { epilogue.row_bias(ptrs, f, t.fixed, t.row0 + r) };
        }
        (f, epilogue.out_f32(ptrs, t.fixed, t.row0, t.col0))
    });
    let tile_stride = t.kg.next_multiple_of(mr) * nr;
    for g0 in (0..t.len).step_by(nr * group) {
        let blocks = (t.len - g0).div_ceil(nr).min(group);
        let cols = |q: usize| nr.min(t.len - g0 - q * nr);
        for kb in (0..t.patch).step_by(KC) {
            let kc = KC.min(t.patch - kb);
            let last = kb + kc == t.patch;
            for q in 0..blocks {
                // Block q of input, copied into consecutive rows of nr (zeros past its
                // columns): read in place, its rows would sit on a different 4 KiB page every
                // step or two.
                let at = t.x.wrapping_add(g0 + q * nr);
                let (src, rows) = match t.rows {
                    Some(rows) => (at, x86::Rows::At(&rows[kb..kb + kc])),
                    None => (
                        at.wrapping_offset(kb as isize * t.cs),
                        x86::Rows::Apart(t.cs),
                    ),
                };
                let dst = block[q * kc * nr..].as_mut_ptr();
                // SAFETY: kc rows of cols(q) positions from src (the caller's contract);
                // `block` holds `group` blocks of kc rows of nr; the level's features (the
                // caller's contract).
                unsafe {
                    if avx512 {
                        x86::copy_block(kc, src, rows, cols(q), dst)
                    } else {
                        x86::copy_block_avx2(kc, src, rows, cols(q), dst)
                    }
                };
            }
            // Slivers evenly spaced among the group's fetch the same channels of the next
            // group into L1, each one column of lines (16 positions) of it, one line a step:
            // spread over the kernel's steps and over the group, the fetches do not queue up
            // behind each other. (At AVX2 the three columns fetched by slivers 0, 7 and 14 of
            // N8 C128 28x28→128 made one thread 3% faster than sliver 0 fetching the first
            // column alone; at AVX-512, one column a block, it measured the same as slivers
            // 0-2.)
            let next_at = g0 + group * nr;
            let next = (next_at < t.len && t.rows.is_none()).then(|| {
                t.x.wrapping_add(next_at)
                    .wrapping_offset(kb as isize * t.cs)
            });
            let columns = (group * nr).min(t.len.saturating_sub(next_at)).div_ceil(16);
            let spacing = (kslivers / columns.max(1)).max(1);
            for ks in 0..kslivers {
                let (row0, rows) = sliver_span(t.kg, mr, ks);
                let a = t.u[(ks * t.patch + kb) * mr..].as_ptr();
                for q in 0..blocks {
                    let pb = g0 + q * nr;
                    let b = block[q * kc * nr..].as_ptr();
                    let c = buf[q * tile_stride + row0 * nr..].as_mut_ptr();
                    // The fused store's rows: the sliver's biases (in scratch) and its first
                    // output row at this block, the rest `row_stride` apart.
                    let store = (last && fused.is_some()).then(|| {
                        let (f, out) = fused.expect("checked above");
                        x86::Finish {
                            rows,
                            bias: if f.has_bias() {
                                scratch[row0..].as_ptr()
                            } else {
                                std::ptr::null()
                            },
                            relu: f.relu,
                            out: out.wrapping_offset(row0 as isize * f.row_stride + pb as isize),
                            ld: f.row_stride,
                        }
                    });
                    let finish = store.as_ref();
                    let fetch = match next {
                        Some(n) if q == 0 && ks % spacing == 0 && ks / spacing < columns => {
                            (n.wrapping_add(ks / spacing * 16), t.cs)
                        }
                        _ => (std::ptr::null(), 0),
                    };
                    // SAFETY: `a` holds kc packed steps of this sliver; `b` the block's kc
                    // rows of nr; `c` the sliver's mr × nr partial sums in block q's part of
                    // buf; the output rows (when finishing) are the tile's own; fetches never
                    // fault; the level's features.
                    unsafe {
                        if avx512 {
                            x86::tile(kc, a, b, rows, cols(q), c, kb > 0, finish, fetch)
                        } else {
                            x86::tile_avx2(kc, a, b, rows, cols(q), c, kb > 0, finish, fetch)
                        }
                    };
                }
            }
        }
        if fused.is_none() {
            for q in 0..blocks {
                let tile = Tile {
                    fixed: t.fixed,
                    row0: t.row0,
                    col0: t.col0 + g0 + q * nr,
                    rows: t.kg,
                    cols: cols(q),
                    values: &mut buf[q * tile_stride..q * tile_stride + t.kg * nr],
                    ld: nr,
                };
                // SAFETY: forwarded contract; the tile is this call's.
                unsafe { epilogue.apply(ptrs, tile, scratch) };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use super::{MR_AVX2, MR_AVX512, NR, NR_AVX2};
    use crate::fast::isa::masks::{ymm_lanes, zmm_lanes};
    use std::arch::x86_64::*;

    /// Steps of the kernels' channel loop per iteration.
    const UNROLL: usize = 4;

    /// How a tile's last channel block ends: bias, relu, and the f32 output rows.
    pub struct Finish {
        /// Rows of the tile that exist (the rest are the sliver's zero padding).
        pub rows: usize,
        /// The rows' biases, one after another, or null when the epilogue has none (adding 0
        /// would turn -0 into +0).
        pub bias: *const f32,
        pub relu: bool,
        /// Where the first row's first position is stored; row r's is `r * ld` further.
        pub out: *mut f32,
        pub ld: isize,
    }

    /// Where the rows of a block start relative to its first: `ld` apart, or at the offsets
    /// given (one per row).
    #[derive(Clone, Copy)]
    pub enum Rows<'a> {
        Apart(isize),
        At(&'a [isize]),
    }

    impl Rows<'_> {
        /// Row `c`'s offset.
        #[inline(always)]
        fn of(self, c: usize) -> isize {
            match self {
                Rows::Apart(ld) => c as isize * ld,
                Rows::At(at) => at[c],
            }
        }
    }

    /// Copies `kc` rows of `cols` (1 to 48) floats, at `rows` from `src`, into rows of `NR` at
    /// `dst`, zeros past `cols`.
    ///
    /// # Safety
    /// The processor has AVX-512 F; `src` addresses `kc` rows of `cols` floats, `dst` `kc`
    /// rows of `NR`; `rows` has `kc` offsets when it lists them.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn copy_block(kc: usize, src: *const f32, rows: Rows, cols: usize, dst: *mut f32) {
        let mask = |h: usize| -> __mmask16 {
            let lanes = cols.saturating_sub(16 * h).min(16) as u32;
            ((1u32 << lanes) - 1) as __mmask16
        };
        let masks = [mask(0), mask(1), mask(2)];
        for c in 0..kc {
            let row = src.wrapping_offset(rows.of(c));
            for (h, &m) in masks.iter().enumerate() {
                // SAFETY: masked to the row's first cols floats; dst's row of NR.
                unsafe {
                    let v = _mm512_maskz_loadu_ps(m, row.add(16 * h));
                    _mm512_storeu_ps(dst.add(c * NR + 16 * h), v);
                }
            }
        }
    }

    /// Calls `$f::<$v, R>` with the sliver's row count `$rows` (1 to the kernel's rows, the
    /// last listed) as `R`: a sliver with fewer filters than the kernel's rows (the last two of
    /// a group whose filter count is no multiple of them) multiplies only its own rows.
    macro_rules! by_rows {
        ($rows:expr, $f:ident, $v:literal, $args:tt, [$($r:literal)*] $last:literal) => {
            match $rows {
                $($r => by_rows!(@call $f, $v, $r, $args),)*
                _ => by_rows!(@call $f, $v, $last, $args),
            }
        };
        (@call $f:ident, $v:literal, $r:literal, $args:tt) => {
            $f::<$v, $r> $args
        };
    }

    /// The tile of `rows` (1 to 8) filters and `cols` (1 to 48) positions, with as many
    /// accumulators as it needs.
    ///
    /// # Safety
    /// As for [`tile_v`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tile(
        kc: usize,
        a: *const f32,
        b: *const f32,
        rows: usize,
        cols: usize,
        c: *mut f32,
        add_c: bool,
        finish: Option<&Finish>,
        fetch: (*const f32, isize),
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            match cols.div_ceil(16) {
                3 => by_rows!(rows, tile_v, 3, (kc, a, b, cols, c, add_c, finish, fetch),
                    [1 2 3 4 5 6 7] 8),
                2 => by_rows!(rows, tile_v, 2, (kc, a, b, cols, c, add_c, finish, fetch),
                    [1 2 3 4 5 6 7] 8),
                _ => by_rows!(rows, tile_v, 1, (kc, a, b, cols, c, add_c, finish, fetch),
                    [1 2 3 4 5 6 7] 8),
            }
        }
    }

    /// Copies `kc` rows of `cols` (1 to 16) floats, at `rows` from `src`, into rows of
    /// `NR_AVX2` at `dst`, zeros past `cols`.
    ///
    /// # Safety
    /// The processor has AVX2; `src` addresses `kc` rows of `cols` floats, `dst` `kc` rows of
    /// `NR_AVX2`; `rows` has `kc` offsets when it lists them.
    #[target_feature(enable = "avx2")]
    pub unsafe fn copy_block_avx2(
        kc: usize,
        src: *const f32,
        rows: Rows,
        cols: usize,
        dst: *mut f32,
    ) {
        let masks = [ymm_lanes(cols.min(8)), ymm_lanes(cols.saturating_sub(8))];
        for c in 0..kc {
            let row = src.wrapping_offset(rows.of(c));
            for (h, &m) in masks.iter().enumerate() {
                // SAFETY: full rows read 16 floats of the row; masked lanes are not read (nor
                // can they fault); dst's row of NR_AVX2.
                unsafe {
                    let at = row.wrapping_add(8 * h);
                    let v = if cols == NR_AVX2 {
                        _mm256_loadu_ps(at)
                    } else {
                        _mm256_maskload_ps(at, m)
                    };
                    _mm256_storeu_ps(dst.add(c * NR_AVX2 + 8 * h), v);
                }
            }
        }
    }

    /// The AVX2 tile of `cols` (1 to 16) positions, with as many vectors as it needs.
    ///
    /// # Safety
    /// As for [`tile_avx2_v`].
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn tile_avx2(
        kc: usize,
        a: *const f32,
        b: *const f32,
        rows: usize,
        cols: usize,
        c: *mut f32,
        add_c: bool,
        finish: Option<&Finish>,
        fetch: (*const f32, isize),
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            if cols > 8 {
                by_rows!(
                    rows,
                    tile_avx2_v,
                    2,
                    (kc, a, b, cols, c, add_c, finish, fetch),
                    [1 2 3 4 5] 6
                )
            } else {
                by_rows!(
                    rows,
                    tile_avx2_v,
                    1,
                    (kc, a, b, cols, c, add_c, finish, fetch),
                    [1 2 3 4 5] 6
                )
            }
        }
    }

    /// Generates a direct micro-kernel for one instruction set (`$lanes` floats a vector, rows
    /// of `$width` in `b` and `c`): the `R` × `cols` tile = (`add_c` ? c : 0) + a·b over `kc`
    /// steps, `a` packed (`$mr` values a step, the first `R` used), `b` a copied block (zeros
    /// past `cols`). Without `finish` the sums go to `c`'s first `R` rows; with it each row
    /// gets its bias and relu and goes to its output row, only its first `cols` floats written
    /// (`$mask(n)` selects a vector's first n lanes for `$mstore`). A non-null `fetch.0` is
    /// prefetched into L1 once a step, `fetch.1` floats further each step.
    macro_rules! direct_tile {
        ($(#[$doc:meta])* $name:ident, $feat:literal, $vec:ty, $lanes:literal, $width:ident,
         $mr:ident, $zero:ident, $load:ident, $set1:ident, $fmadd:ident, $add:ident,
         $store:ident, $max:ident, $mask:ident, $mstore:ident) => {
            $(#[$doc])*
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn $name<const V: usize, const R: usize>(
                kc: usize,
                a: *const f32,
                b: *const f32,
                cols: usize,
                c: *mut f32,
                add_c: bool,
                finish: Option<&Finish>,
                fetch: (*const f32, isize),
            ) {
                debug_assert!(V * $lanes <= $width && R <= $mr);
                debug_assert!(cols > $lanes * (V - 1) && cols <= $lanes * V);
                debug_assert!(finish.is_none_or(|f| f.rows == R));
                // Lanes of the last vector inside the tile.
                let tail = $mask(cols - $lanes * (V - 1));
                // Whether the last vector is whole too: then it is stored as the others are
                // (a masked vmaskmovps store costs about 12 cycles on Zen 4).
                let full = cols == $lanes * V;
                // The output rows' lines, claimed for writing while the loop runs: a store
                // that misses at the end would hold up the next tile.
                if let Some(f) = finish {
                    for r in 0..f.rows {
                        let row = f.out.wrapping_offset(r as isize * f.ld);
                        for line in 0..(V * $lanes).div_ceil(16) {
                            _mm_prefetch::<_MM_HINT_ET0>(row.wrapping_add(16 * line) as *const i8);
                        }
                    }
                }
                let mut acc = [[$zero(); V]; R];
                let (mut a, mut b, mut f) = (a, b, fetch.0);
                // One step: a channel's $mr packed filter values of a, $width floats of b,
                // and the fetch of one line of the next block's channel.
                let mut step = |acc: &mut [[$vec; V]; R]| {
                    if !f.is_null() {
                        _mm_prefetch::<_MM_HINT_T0>(f as *const i8);
                        f = f.wrapping_offset(fetch.1);
                    }
                    // SAFETY: one of the kc steps the caller's contract provides.
                    unsafe {
                        let mut bv = [$zero(); V];
                        for (h, v) in bv.iter_mut().enumerate() {
                            *v = $load(b.add($lanes * h));
                        }
                        for (r, row) in acc.iter_mut().enumerate() {
                            let x = $set1(*a.add(r));
                            for (o, v) in row.iter_mut().zip(&bv) {
                                *o = $fmadd(x, *v, *o);
                            }
                        }
                        a = a.add($mr);
                        b = b.add($width);
                    }
                };
                // Four steps an iteration: the loop's own instructions took a share of the
                // front end that the AVX2 kernel's 12 FMAs a step could not spare.
                for _ in 0..kc / UNROLL {
                    for _ in 0..UNROLL {
                        step(&mut acc);
                    }
                }
                for _ in 0..kc % UNROLL {
                    step(&mut acc);
                }
                if add_c {
                    for (r, row) in acc.iter_mut().enumerate() {
                        for (h, o) in row.iter_mut().enumerate() {
                            // SAFETY: inside row r of c.
                            *o = $add(*o, unsafe { $load(c.add(r * $width + $lanes * h)) });
                        }
                    }
                }
                let Some(f) = finish else {
                    for (r, row) in acc.iter().enumerate() {
                        for (h, o) in row.iter().enumerate() {
                            // SAFETY: inside row r of c.
                            unsafe { $store(c.add(r * $width + $lanes * h), *o) };
                        }
                    }
                    return;
                };
                let zero = $zero();
                for (r, row) in acc.iter().enumerate().take(f.rows) {
                    for (h, o) in row.iter().enumerate() {
                        let mut v = if f.bias.is_null() {
                            *o
                        } else {
                            // SAFETY: the bias of each of the tile's rows (the contract).
                            $add(*o, $set1(unsafe { *f.bias.add(r) }))
                        };
                        if f.relu {
                            // `x < 0 ? 0 : x`: vmaxps returns its second operand when either
                            // is NaN and for two zeros, so NaN and -0 pass through as in the
                            // epilogue.
                            v = $max(zero, v);
                        }
                        let at = f
                            .out
                            .wrapping_offset(r as isize * f.ld)
                            .wrapping_add($lanes * h);
                        // SAFETY: the row's first cols floats (masked lanes are not written).
                        unsafe {
                            if h + 1 < V || full {
                                $store(at, v);
                            } else {
                                $mstore(at, tail, v);
                            }
                        }
                    }
                }
            }
        };
    }

    direct_tile!(
        /// The AVX-512 kernel: `R` × `cols` in `R × V` zmm accumulators, `b` and `c` in rows
        /// of `NR` (see `direct_tile!`).
        ///
        /// # Safety
        /// The processor has AVX-512 F; `a` holds `kc` steps, `b` `kc` rows of `NR` floats,
        /// `c` `MR_AVX512` rows of `NR` floats; `R <= MR_AVX512`; `16 * (V - 1) < cols <= 16 * V`; `finish`,
        /// when given, has `rows == R`, each of its first `R` output rows addresses `cols`
        /// floats, and its bias (when not null) `R` floats.
        tile_v, "avx512f", __m512, 16, NR, MR_AVX512, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_set1_ps,
        _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, _mm512_max_ps, zmm_lanes,
        _mm512_mask_storeu_ps
    );

    direct_tile!(
        /// The AVX2 kernel: `R` × `cols` in `R × V` ymm accumulators, `b` and `c` in rows of
        /// `NR_AVX2` (see `direct_tile!`).
        ///
        /// # Safety
        /// The processor has AVX2 and FMA; `a` holds `kc` steps, `b` `kc` rows of `NR_AVX2`
        /// floats, `c` `MR_AVX2` rows of `NR_AVX2` floats; `R <= MR_AVX2`; `8 * (V - 1) < cols <= 8 * V`;
        /// `finish`, when given, has `rows == R`, each of its first `R` output rows addresses
        /// `cols` floats, and its bias (when not null) `R` floats.
        tile_avx2_v, "avx2,fma", __m256, 8, NR_AVX2, MR_AVX2, _mm256_setzero_ps, _mm256_loadu_ps,
        _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, _mm256_max_ps, ymm_lanes,
        _mm256_maskstore_ps
    );
}

#[cfg(test)]
mod tests {
    use super::sliver_span;

    /// The slivers of a group cover its filters in order, each once, with at most `mr` and at
    /// least one each, as many slivers as `kg.div_ceil(mr)` (the packed layout's count), and a
    /// group's last two differ by at most one filter when the count is no multiple of `mr`.
    #[test]
    fn slivers_cover_the_filters_and_share_the_rest() {
        for mr in [6, 8] {
            for kg in 1..=70usize {
                let slivers = kg.div_ceil(mr);
                let spans: Vec<_> = (0..slivers).map(|ks| sliver_span(kg, mr, ks)).collect();
                let mut next = 0;
                for &(first, rows) in &spans {
                    assert_eq!(first, next, "mr {mr}, kg {kg}: {spans:?}");
                    assert!((1..=mr).contains(&rows), "mr {mr}, kg {kg}: {spans:?}");
                    next += rows;
                }
                assert_eq!(next, kg, "mr {mr}, kg {kg}: {spans:?}");
                if slivers >= 2 && kg % mr != 0 {
                    let (a, b) = (spans[slivers - 2].1, spans[slivers - 1].1);
                    assert!(a >= b && a - b <= 1, "mr {mr}, kg {kg}: {spans:?}");
                }
            }
        }
        assert_eq!(sliver_span(128, 6, 20), (120, 4));
        assert_eq!(sliver_span(128, 6, 21), (124, 4));
    }
}
