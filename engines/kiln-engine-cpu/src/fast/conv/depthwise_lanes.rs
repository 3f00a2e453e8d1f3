//! Depthwise convolutions of channels-first f32 tensors with the channels in the vector lanes,
//! at the AVX2 and AVX-512 levels. A work item is a block of 8 or 16 channels (one register's
//! lanes) of one image and a stripe of output rows. Its input rows are staged in L2 with the
//! channels interleaved, each position one vector of the block's channels, its padding as
//! zeros (a 16 × 16 or 8 × 8 register transpose of each run of a row's columns). Every tap of
//! every output position is then one aligned vector load and one FMA, for any stride,
//! dilation or plane size, with the filters a vector per tap. Positions are summed 16 or 8 at
//! a time in registers across every tap, the bias and relu applied in the lanes, and each
//! block transposed back into runs of the channels' output rows.
//!
//! A channels-last (NHWC) input and output take the same path with no transposes: a position's
//! run of the block's channels is a vector as it lies, in the input and in the output.
//!
//! Grouped convolutions of 2, 4 or 8 channels a group (input and output) take it too: a block
//! holds whole groups, its staged rows are copied once for each input channel of a group with
//! the lanes permuted so that each lane sees its own group's channel, and each output vector
//! sums G · taps steps of one load and one FMA ([`Lanes`]' `group`).
//!
//! Computed a plane at a time with the positions in the lanes instead
//! ([`super::depthwise::plane`]), each tap read an unaligned run and the per-plane work
//! (staging, filters, offsets) dominated small planes: 0.23-0.75 of ONNX Runtime's speed on
//! MobileNet-like layers (session 35).

use super::geometry::Shape;
use crate::fast::element_io::SharedPtr;
use crate::fast::isa::masks::{ymm_lanes, zmm_lanes};
use crate::fast::isa::Isa;
use kiln_core::DataType;
use std::arch::x86_64::*;

/// The most staged values an item aims at (256 KiB, in L2 beside the other worker's), unless
/// one stripe row needs more.
const STAGE_FLOATS: usize = 1 << 16;

/// The most staged values an item may take (8 MiB): rows so wide that one stripe row's
/// staging would pass it run on the other depthwise paths, which need far less workspace.
const MOST_STAGE_FLOATS: usize = 1 << 21;

/// About how many outputs a worker's claim of items covers ([`Lanes::batch`]).
const CLAIM_VALUES: usize = 1 << 13;

/// How a depthwise convolution is cut into items: channel blocks of `lanes` and stripes of
/// output rows, and the staged rows' width.
#[derive(Debug, Clone)]
pub(crate) struct Lanes {
    /// 16 at the AVX-512 levels, 8 at AVX2.
    lanes: usize,
    /// Channels a group (input and output alike): 1 for a depthwise convolution, 2, 4 or 8
    /// (G) for a grouped one. Lane k of a block holds output channel c0 + k, whose group's
    /// input channels are the block's channels (k / G) · G .. (k / G + 1) · G (kg = cg = G,
    /// so a block starts at a group). Copy j of the staged rows holds in lane k input channel
    /// (k / G) · G + j (a permutation of the staged vector), and filter vector (j, tap) holds
    /// in lane k the weight of output channel c0 + k for its group's input channel j: each
    /// of the G · taps steps is then one load and one FMA, as a depthwise tap is.
    group: usize,
    /// Positions per staged row: every column that a stripe's (rounded-up) blocks read.
    width: usize,
    /// Output rows per stripe (the last stripe may have fewer).
    stripe: usize,
    /// Stride 1 with rows narrower than the lanes: the staged rows are exactly as wide as the
    /// filter's reach past the output row, and blocks of positions run on through the rows
    /// (the flattened positions `row · width + column`; those past a row's last output are
    /// summed and not stored), instead of a block or more to each row.
    flat: bool,
    /// A channels-last input and output (channels adjacent): staged and stored without
    /// transposes ([`Out::Positions`]).
    channels_last: bool,
    stripes: usize,
    blocks: usize,
}

/// One item: image `n`, channels `c0..c0 + channels`, output rows `oy0..oy0 + rows`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub n: usize,
    pub c0: usize,
    pub channels: usize,
    oy0: usize,
    rows: usize,
}

/// Where an item's outputs go.
pub(crate) enum Out {
    /// Channels-first: each channel's output plane (positions consecutive, no other thread
    /// writing the item's rows), with the channel's bias added when there is one, then a plain
    /// relu when `relu` (`x < 0 ? 0 : x`, as the epilogue's `RowBiasRelu`).
    Planes {
        planes: [*mut f32; 16],
        bias: Option<[f32; 16]>,
        relu: bool,
    },
    /// Channels-last: output position p's run of the item's channels at `first + p ·
    /// position_stride` (no other thread writing them), with each channel's bias added when
    /// there is one, then a plain relu when `relu`.
    Positions {
        first: *mut f32,
        position_stride: isize,
        bias: Option<[f32; 16]>,
        relu: bool,
    },
}

impl Lanes {
    /// The cut for `s` at level `isa`, where this path runs it: a 2-D depthwise convolution
    /// (the caller checked [`super::depthwise::eligible`]) or a grouped one of 2, 4 or 8
    /// channels a group in and out, of an f32 input whose columns are consecutive (or,
    /// `channels_last`, whose channels are), non-negative padding, at the AVX2 or AVX-512
    /// levels.
    pub(crate) fn new(s: &Shape, isa: Isa, channels_last: bool) -> Option<Lanes> {
        let group = if s.cg == 1 && s.kg == 1 {
            1
        } else if s.groups > 1 && s.cg == s.kg && matches!(s.cg, 2 | 4 | 8) {
            s.cg
        } else {
            return None;
        };
        // An output at most 8 wide with more than 9 taps takes 8 lanes at every level: with
        // 16, the positions summed for nothing cost more than the extra items (on the Zen 4
        // of session 35, 1×672×14²→7² 5x5 stride 2 took 0.059 ms against 0.079 one-threaded;
        // with 9 taps 16 lanes stayed faster, 1×960×7² 3x3 0.042 against 0.045).
        let unit = s.stride[1] == 1 && s.stride[2] == 1;
        let narrow = s.output[2] <= 8 && s.taps() > 9 && !unit;
        let lanes = match isa {
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if !narrow => 16,
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx | Isa::Avx2 => 8,
            Isa::Portable => return None,
        };
        let two_d = s.filter[0] == 1 && s.input[0] == 1 && s.output[0] == 1 && s.pad[0] == 0;
        let steps = (1..3).all(|d| s.stride[d] >= 1 && s.dilation[d] >= 1 && s.pad[d] >= 0);
        let adjacent = if channels_last { s.xs.1 } else { s.xs.2[2] };
        if !two_d || !steps || s.x_type != DataType::F32 || adjacent != 1 {
            return None;
        }
        let (oh, ow) = (s.output[1], s.output[2]);
        if oh == 0 || ow == 0 {
            return None;
        }
        let (s1, s2) = (s.stride[1] as usize, s.stride[2] as usize);
        let (d1, d2) = (s.dilation[1] as usize, s.dilation[2] as usize);
        let reach = (s.filter[1] - 1) * d1 + 1;
        // Flattened where that sums fewer blocks for the whole plane (a 7x7 plane, 3x3: 4
        // blocks of 16 instead of 7).
        let tight = ow + (s.filter[2] - 1) * d2;
        let flat = unit
            && !channels_last
            && ((oh - 1) * tight + ow).div_ceil(lanes) < oh * ow.div_ceil(lanes);
        let width = if flat {
            tight
        } else {
            (ow.next_multiple_of(lanes) - 1) * s2 + (s.filter[2] - 1) * d2 + 1
        };
        let copies = width * lanes * group;
        if reach.saturating_mul(copies) > MOST_STAGE_FLOATS {
            return None;
        }
        // The most output rows whose staged rows fit STAGE_FLOATS (at least one), then spread
        // evenly over the stripes.
        let fit = (STAGE_FLOATS / copies).saturating_sub(reach) / s1 + 1;
        let stripes = oh.div_ceil(fit.clamp(1, oh));
        Some(Lanes {
            lanes,
            group,
            width,
            stripe: oh.div_ceil(stripes),
            flat,
            channels_last,
            stripes,
            blocks: (s.groups * group).div_ceil(lanes),
        })
    }

    /// Staged rows of a stripe of `rows` output rows.
    fn staged_rows(&self, s: &Shape, rows: usize) -> usize {
        (rows - 1) * s.stride[1] as usize + (s.filter[1] - 1) * s.dilation[1] as usize + 1
    }

    /// Zero positions after the staged rows: the flattened blocks' last one reads up to
    /// `lanes - 1` positions past them.
    fn tail(&self) -> usize {
        if self.flat {
            self.lanes
        } else {
            0
        }
    }

    /// Values of one copy of an item's staged rows (and the zeros after them) for a stripe of
    /// `rows` output rows.
    fn copy_floats(&self, s: &Shape, rows: usize) -> usize {
        (self.staged_rows(s, rows) * self.width + self.tail()) * self.lanes
    }

    /// f32 values of an item's scratch: its block's filters, then its staged rows (and the
    /// zeros after them), once for each input channel of a group.
    pub(crate) fn scratch_floats(&self, s: &Shape) -> usize {
        self.group * (s.taps() * self.lanes + self.copy_floats(s, self.stripe))
    }

    /// The number of items.
    pub(crate) fn items(&self, s: &Shape) -> usize {
        s.n * self.blocks * self.stripes
    }

    /// Items a worker claims at a time: about [`CLAIM_VALUES`] outputs, so that two workers
    /// contending for the counter do not cost as much as the items (a block of a 7x7 plane is
    /// 784 outputs, under a microsecond).
    pub(crate) fn batch(&self, s: &Shape) -> usize {
        let outputs = self.stripe * s.output[2] * self.lanes;
        (CLAIM_VALUES / outputs.max(1)).clamp(1, 64)
    }

    /// Item `i` (`i < self.items(s)`).
    pub(crate) fn item(&self, s: &Shape, i: usize) -> Item {
        let (n, b, stripe) = (
            i / (self.blocks * self.stripes),
            (i / self.stripes) % self.blocks,
            i % self.stripes,
        );
        let oy0 = stripe * self.stripe;
        Item {
            n,
            c0: b * self.lanes,
            channels: self.lanes.min(s.groups * self.group - b * self.lanes),
            oy0,
            rows: self.stripe.min(s.output[1] - oy0),
        }
    }

    /// Writes the filters of item `it`'s channels as `[j][tap][lane]` into `out` (G · taps ×
    /// lanes values; j the input channel of the lane's group), the lanes past its last
    /// channel as zeros; `temp` holds at least G · taps values.
    /// Each item packs its own: a pass over every filter before the items ran alone and took a
    /// fifth of a 960-channel 7x7 layer.
    ///
    /// # Safety
    /// `w` is the bound weight pointer of a live execute call.
    unsafe fn pack_filters(
        &self,
        s: &Shape,
        w: SharedPtr,
        it: Item,
        out: &mut [f32],
        temp: &mut [f32],
    ) {
        // A filter's patch is its group's input channels' taps, channel-major: step
        // j · taps + tap of the patch is filter vector (j, tap).
        let (patch, l) = (s.patch(), self.lanes);
        out.fill(0.0);
        let dense = s.w_type == DataType::F32 && s.filters_dense();
        for lane in 0..it.channels {
            let k = it.c0 + lane;
            if dense {
                // Each filter one run of f32 values, read in place (any alignment).
                let w = (w.get() as *const f32).wrapping_offset(k as isize * s.ws.0);
                for step in 0..patch {
                    // SAFETY: value `step` of filter k's patch, inside w (the caller's
                    // contract).
                    out[step * l + lane] = unsafe { w.add(step).read_unaligned() };
                }
            } else {
                // SAFETY: forwarded contract; filter k < K.
                unsafe { super::geometry::pack_weight_row(s, false, w, k, &mut temp[..patch]) };
                for step in 0..patch {
                    out[step * l + lane] = temp[step];
                }
            }
        }
    }

    /// Computes item `it` into `out`, through `scratch` ([`Self::scratch_floats`] values).
    ///
    /// # Safety
    /// `x` is the bound f32 input of a live execute call, 4-byte aligned, and `w` its bound
    /// weights; `Out::Planes` addresses the item's channels' output planes; this cut's level (the
    /// `isa` it was made for) runs on this processor.
    pub(crate) unsafe fn run(
        &self,
        s: &Shape,
        x: SharedPtr,
        w: SharedPtr,
        it: Item,
        scratch: &mut [f32],
        out: &Out,
    ) {
        let (filters, stage) = scratch.split_at_mut(s.patch() * self.lanes);
        // SAFETY: forwarded contract; the staged rows serve as the temporary.
        unsafe { self.pack_filters(s, w, it, filters, stage) };
        let stage = &mut stage[..self.group * self.copy_floats(s, it.rows)];
        let x = x.get() as *const f32;
        let filters = &*filters;
        // SAFETY (all arms): forwarded contract; each copy runs only at its own level.
        unsafe {
            match (self.lanes, s.stride[2]) {
                (16, 1) => item_avx512::<1>(self, s, x, filters, it, stage, out),
                (16, 2) => item_avx512::<2>(self, s, x, filters, it, stage, out),
                (16, _) => item_avx512::<0>(self, s, x, filters, it, stage, out),
                (_, 1) => item_avx2::<1>(self, s, x, filters, it, stage, out),
                (_, 2) => item_avx2::<2>(self, s, x, filters, it, stage, out),
                (_, _) => item_avx2::<0>(self, s, x, filters, it, stage, out),
            }
        }
    }
}

/// The first `n` (1-16) values at `p`, the other lanes zero (masked lanes are not read).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn first_avx512(p: *const f32, n: usize) -> __m512 {
    // SAFETY: the caller's contract: `p[..n]` is readable.
    unsafe { _mm512_maskz_loadu_ps(zmm_lanes(n), p) }
}

/// Stores the first `n` (1-16) lanes of `v` at `p`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store_first_avx512(p: *mut f32, n: usize, v: __m512) {
    // SAFETY: the caller's contract: `p[..n]` is writable.
    unsafe { _mm512_mask_storeu_ps(p, zmm_lanes(n), v) }
}

/// Stores lanes `a..b` (`a < b <= 16`) of `v` at `p[..b - a]`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn store_lanes_avx512(p: *mut f32, a: usize, b: usize, v: __m512) {
    let mask = zmm_lanes(b) & !zmm_lanes(a);
    // SAFETY: the caller's contract: `p[..b - a]` is writable; lane l goes to p + l - a, and
    // only lanes a..b are written (the others are masked and never touched).
    unsafe { _mm512_mask_storeu_ps(p.wrapping_sub(a), mask, v) }
}

/// Stores lanes `a..b` (`a < b <= 8`) of `v` at `p[..b - a]`, through a buffer.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn store_lanes_avx2(p: *mut f32, a: usize, b: usize, v: __m256) {
    let mut buf = [0.0f32; 16];
    // SAFETY: buf holds 16 floats, lanes a..a + 8 of it with a < 8; the caller's contract:
    // `p[..b - a]` is writable.
    unsafe {
        _mm256_storeu_ps(buf.as_mut_ptr(), v);
        store_first_avx2(p, b - a, _mm256_loadu_ps(buf.as_ptr().add(a)));
    }
}

/// The first `n` (1-8) values at `p`, the other lanes zero (masked lanes are not read).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn first_avx2(p: *const f32, n: usize) -> __m256 {
    // SAFETY: the caller's contract: `p[..n]` is readable.
    unsafe { _mm256_maskload_ps(p, ymm_lanes(n)) }
}

/// Stores the first `n` (1-8) lanes of `v` at `p` as at most three plain stores of 4, 2 and 1
/// values: AVX2's masked store costs about six plain ones on a Zen 4, and a copy through a
/// buffer called memmove (9% of a 14x14 depthwise layer).
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn store_first_avx2(p: *mut f32, n: usize, v: __m256) {
    if n == 8 {
        // SAFETY: the caller's contract: `p[..8]` is writable.
        return unsafe { _mm256_storeu_ps(p, v) };
    }
    let (mut p, mut n) = (p, n);
    let mut part = _mm256_castps256_ps128(v);
    // SAFETY (each store): the caller's contract: `p[..n]` is writable, and each store writes
    // the next values of it.
    unsafe {
        if n >= 4 {
            _mm_storeu_ps(p, part);
            part = _mm256_extractf128_ps::<1>(v);
            (p, n) = (p.add(4), n - 4);
        }
        if n >= 2 {
            _mm_storel_pd(p.cast(), _mm_castps_pd(part));
            part = _mm_movehl_ps(part, part);
            (p, n) = (p.add(2), n - 2);
        }
        if n == 1 {
            _mm_store_ss(p, part);
        }
    }
}

/// The permutation of copy `j` of a grouped convolution's staged rows (`g` channels a group):
/// lane k takes lane (k / g) · g + j.
#[target_feature(enable = "avx512f")]
#[inline]
fn index_avx512(g: usize, j: usize) -> __m512i {
    let lanes: [i32; 16] = std::array::from_fn(|k| ((k / g) * g + j) as i32);
    // SAFETY: 16 i32 values.
    unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
}

/// `v` permuted by `index` ([`index_avx512`]).
#[target_feature(enable = "avx512f")]
#[inline]
fn permute_avx512(v: __m512, index: __m512i) -> __m512 {
    _mm512_permutexvar_ps(index, v)
}

/// As [`index_avx512`] for 8 lanes.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn index_avx2(g: usize, j: usize) -> __m256i {
    let lanes: [i32; 8] = std::array::from_fn(|k| ((k / g) * g + j) as i32);
    // SAFETY: 8 i32 values.
    unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) }
}

/// `v` permuted by `index` ([`index_avx2`]).
#[target_feature(enable = "avx2,fma")]
#[inline]
fn permute_avx2(v: __m256, index: __m256i) -> __m256 {
    _mm256_permutevar8x32_ps(v, index)
}

/// Calls `sum` with each of a grouped convolution's `g` copies of the staged rows (`copy`
/// values apart) and the filter steps of the same input channel (`step` values apart); a
/// depthwise block's one copy directly.
#[inline(always)]
fn over_copies(
    g: usize,
    (staged, copy): (*const f32, usize),
    (filters, step): (*const f32, usize),
    mut sum: impl FnMut(*const f32, *const f32),
) {
    if g == 1 {
        return sum(staged, filters);
    }
    for j in 0..g {
        sum(
            staged.wrapping_add(j * copy),
            filters.wrapping_add(j * step),
        );
    }
}

/// An item's work at one level: `$name::<S>` with `S` the column stride when it is 1 or 2
/// (folded into the loads' displacements) or 0 for any other (read from the shape).
macro_rules! item_kernel {
    ($name:ident, $feature:literal, $lanes:literal, $v:ty, $zero:ident, $load:ident,
     $store:ident, $fma:ident, $add:ident, $max:ident, $first:ident, $store_first:ident,
     $store_lanes:ident, $transpose:path, $index:ident, $permute:ident) => {
        /// Stages item `it`'s input rows into `stage` and computes its outputs into `out`, at
        /// this level ([`Lanes::run`]).
        ///
        /// # Safety
        /// As for [`Lanes::run`]; the processor runs this level; `stage` holds the item's
        /// staged rows.
        #[target_feature(enable = $feature)]
        unsafe fn $name<const S: usize>(
            cut: &Lanes,
            s: &Shape,
            x: *const f32,
            filters: &[f32],
            it: Item,
            stage: &mut [f32],
            out: &Out,
        ) {
            const L: usize = $lanes;
            let (s1, s2) = (
                s.stride[1] as usize,
                if S == 0 { s.stride[2] as usize } else { S },
            );
            let (d1, d2) = (s.dilation[1] as usize, s.dilation[2] as usize);
            let width = cut.width;
            let zero = $zero();
            // The staged rows: row j is input row oy0·s1 + j - pad1, column c input column
            // c - pad2; both outside the input are zeros.
            let (pad2, iw) = (s.pad[2] as usize, s.input[2]);
            let copied = iw.min(width.saturating_sub(pad2));
            let first = x.wrapping_offset(it.n as isize * s.xs.0 + it.c0 as isize * s.xs.1);
            let copy = cut.copy_floats(s, it.rows);
            let (rows, tail) = stage[..copy].split_at_mut(cut.staged_rows(s, it.rows) * width * L);
            for v in tail.chunks_exact_mut(L) {
                // SAFETY: L floats.
                unsafe { $store(v.as_mut_ptr(), zero) };
            }
            for (j, row) in rows.chunks_exact_mut(width * L).enumerate() {
                let dst = row.as_mut_ptr();
                let iy = (it.oy0 * s1 + j) as isize - s.pad[1];
                let outside = iy < 0 || iy >= s.input[1] as isize;
                let zeros = if outside {
                    [0..width, 0..0]
                } else {
                    [0..pad2.min(width), pad2 + copied..width]
                };
                for c in zeros.into_iter().flatten() {
                    // SAFETY: position c < width of the row.
                    unsafe { $store(dst.add(c * L), zero) };
                }
                if outside {
                    continue;
                }
                let src = first.wrapping_offset(iy * s.xs.2[1]);
                if cut.channels_last {
                    for cx in 0..copied {
                        let at = src.wrapping_offset(cx as isize * s.xs.2[2]);
                        // SAFETY: the block's channels of input position (iy, cx), inside x;
                        // position pad2 + cx < width of the staged row.
                        unsafe {
                            let v = if it.channels == L {
                                $load(at)
                            } else {
                                $first(at, it.channels)
                            };
                            $store(dst.add((pad2 + cx) * L), v);
                        }
                    }
                    continue;
                }
                for cx in (0..copied).step_by(L) {
                    let n = (copied - cx).min(L);
                    let r: [$v; L] = std::array::from_fn(|ch| {
                        let p = src.wrapping_offset(ch as isize * s.xs.1 + cx as isize);
                        // SAFETY: columns cx..cx + n of input row iy of channel c0 + ch,
                        // inside x (iy and the columns are in range, ch < channels).
                        match (ch < it.channels, n == L) {
                            (false, _) => zero,
                            (true, true) => unsafe { $load(p) },
                            (true, false) => unsafe { $first(p, n) },
                        }
                    });
                    for (i, v) in $transpose(r).into_iter().enumerate().take(n) {
                        // SAFETY: position pad2 + cx + i < pad2 + copied <= width.
                        unsafe { $store(dst.add((pad2 + cx + i) * L), v) };
                    }
                }
            }
            // A grouped convolution's copies of the staged rows: copy j holds in lane k the
            // value of lane (k / G) · G + j (copy 0 rewritten last, in place).
            let g = cut.group;
            if g > 1 {
                let index: [_; 8] = std::array::from_fn(|j| $index(g, j.min(g - 1)));
                let (first_copy, others) = stage.split_at_mut(copy);
                for (q, v) in first_copy.chunks_exact_mut(L).enumerate() {
                    // SAFETY: L floats; copy j's position q lies in `others` for j >= 1 (the
                    // stage holds G copies).
                    unsafe {
                        let v = v.as_mut_ptr();
                        let value = $load(v);
                        for j in 1..g {
                            let at = others.as_mut_ptr().add((j - 1) * copy + q * L);
                            $store(at, $permute(value, index[j]));
                        }
                        $store(v, $permute(value, index[0]));
                    }
                }
            }
            let taps = s.taps();
            // The outputs, L positions of a row at a time (the last block of a row partial:
            // its extra positions read staged columns inside `width` and are not stored).
            let (f1s, f2s, ow) = (s.filter[1], s.filter[2], s.output[2]);
            let (planes, bias, relu) = match out {
                Out::Planes { planes, bias, relu } => (*planes, *bias, *relu),
                Out::Positions { bias, relu, .. } => ([std::ptr::null_mut(); 16], *bias, *relu),
            };
            let bias = bias.map(|b| {
                // SAFETY: b holds 16 >= L values.
                unsafe { $load(b.as_ptr()) }
            });
            let staged = stage.as_ptr();
            let finish = |acc: &mut [$v; L]| {
                for a in acc.iter_mut() {
                    if let Some(b) = bias {
                        *a = $add(*a, b);
                    }
                    if relu {
                        // `x < 0 ? 0 : x`: vmaxps returns its second operand when either
                        // is NaN and for two zeros, so NaN and -0 pass through.
                        *a = $max(zero, *a);
                    }
                }
            };
            if cut.flat {
                // Flattened position i is staged row i / width, column i % width (stride 1),
                // so tap (f1, f2) reads position i + f1·d1·width + f2·d2 for every i.
                let len = (it.rows - 1) * width + ow;
                for i0 in (0..len).step_by(L) {
                    let mut acc = [zero; L];
                    let sum = |staged: *const f32, filters: *const f32| {
                        for f1 in 0..f1s {
                            for f2 in 0..f2s {
                                // SAFETY: positions up to len - 1 + L - 1 + the tap's offset,
                                // at most the staged rows' and L - 1 zeros after them; tap
                                // f1·f2s + f2 of the block's filters.
                                let p = unsafe { staged.add((i0 + f1 * d1 * width + f2 * d2) * L) };
                                let wv = unsafe { $load(filters.add((f1 * f2s + f2) * L)) };
                                for (q, a) in acc.iter_mut().enumerate() {
                                    *a = $fma(wv, unsafe { $load(p.add(q * L)) }, *a);
                                }
                            }
                        }
                    };
                    over_copies(g, (staged, copy), (filters.as_ptr(), taps * L), sum);
                    finish(&mut acc);
                    let t = $transpose(acc);
                    // The block's runs of one output row each: lanes a..b, row r from
                    // column c.
                    let end = (i0 + L).min(len);
                    let mut i = i0;
                    while i < end {
                        let (r, c) = (i / width, i % width);
                        if c >= ow {
                            i = (r + 1) * width;
                            continue;
                        }
                        let stop = (r * width + ow).min(end);
                        let (a, b) = (i - i0, stop - i0);
                        let at = (it.oy0 + r) * ow + c;
                        for (ch, v) in t.into_iter().enumerate().take(it.channels) {
                            // SAFETY: positions at..at + b - a of channel c0 + ch's plane.
                            unsafe { $store_lanes(planes[ch].wrapping_add(at), a, b, v) };
                        }
                        i = stop;
                    }
                }
                return;
            }
            for r in 0..it.rows {
                let at = (it.oy0 + r) * ow;
                for ox0 in (0..ow).step_by(L) {
                    let mut acc = [zero; L];
                    let sum = |staged: *const f32, filters: *const f32| {
                        for f1 in 0..f1s {
                            // SAFETY (this loop): staged row r·s1 + f1·d1 < staged rows,
                            // columns up to (ox0 + L - 1)·s2 + (f2s - 1)·d2 < width; tap
                            // f1·f2s + f2 of the block's filters.
                            let row =
                                unsafe { staged.add(((r * s1 + f1 * d1) * width + ox0 * s2) * L) };
                            for f2 in 0..f2s {
                                let wv = unsafe { $load(filters.add((f1 * f2s + f2) * L)) };
                                let p = unsafe { row.add(f2 * d2 * L) };
                                for (q, a) in acc.iter_mut().enumerate() {
                                    *a = $fma(wv, unsafe { $load(p.add(q * s2 * L)) }, *a);
                                }
                            }
                        }
                    };
                    over_copies(g, (staged, copy), (filters.as_ptr(), taps * L), sum);
                    finish(&mut acc);
                    let n = (ow - ox0).min(L);
                    if let Out::Positions {
                        first,
                        position_stride,
                        ..
                    } = out
                    {
                        for (q, v) in acc.into_iter().enumerate().take(n) {
                            let p = (at + ox0 + q) as isize;
                            let dst = first.wrapping_offset(p * position_stride);
                            // SAFETY: the item's channels of output position p.
                            unsafe {
                                if it.channels == L {
                                    $store(dst, v)
                                } else {
                                    $store_first(dst, it.channels, v)
                                }
                            }
                        }
                        continue;
                    }
                    for (ch, v) in $transpose(acc).into_iter().enumerate().take(it.channels) {
                        let dst = planes[ch].wrapping_add(at + ox0);
                        // SAFETY: positions at + ox0.. (n of them) of channel c0 + ch's plane.
                        unsafe {
                            if n == L {
                                $store(dst, v)
                            } else {
                                $store_first(dst, n, v)
                            }
                        }
                    }
                }
            }
        }
    };
}

item_kernel!(
    item_avx512,
    "avx512f,avx2,fma",
    16,
    __m512,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_storeu_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_max_ps,
    first_avx512,
    store_first_avx512,
    store_lanes_avx512,
    crate::fast::transpose::transpose16,
    index_avx512,
    permute_avx512
);
item_kernel!(
    item_avx2,
    "avx2,fma",
    8,
    __m256,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_storeu_ps,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    _mm256_max_ps,
    first_avx2,
    store_first_avx2,
    store_lanes_avx2,
    crate::fast::transpose::transpose8,
    index_avx2,
    permute_avx2
);
