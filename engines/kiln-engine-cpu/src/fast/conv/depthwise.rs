//! Depthwise convolutions (one input and one output channel per group, as in MobileNet's
//! separable blocks) computed directly: each output row segment is the sum, tap by tap, of a
//! weight times a run of an input row. im2col + GEMM spent most of such a convolution unrolling
//! patches for products of a single filter row (a GEMV per tile).

use super::geometry::Shape;
use crate::fast::element_io::SharedPtr;
use crate::fast::isa::Isa;
use kiln_core::DataType;

/// Whether the direct kernel runs this convolution: an f32, f16 or bf16 input (16-bit values
/// widened as they are read), groups of one input and one output channel, and more than one
/// tap (a 1x1 one is the direct 1x1 path's).
pub(crate) fn eligible(s: &Shape) -> bool {
    let types = matches!(s.x_type, DataType::F32 | DataType::F16 | DataType::Bf16);
    s.groups > 1 && s.cg == 1 && s.kg == 1 && types && s.taps() > 1
}

/// Adds `w` times the `dst.len()` input values at element offset `off`, `step` apart, to
/// `dst`: read in place where x is f32, else widened into a buffer first, in pieces.
///
/// # Safety
/// Those elements of x lie inside it; an f32 x is 4-byte aligned.
#[inline(always)]
unsafe fn add_run(s: &Shape, x: SharedPtr, off: isize, step: isize, w: f32, dst: &mut [f32]) {
    if s.x_type == DataType::F32 {
        let x = x.get() as *const f32;
        if step == 1 {
            // SAFETY: dst.len() consecutive f32 values (the caller's contract).
            let run = unsafe { std::slice::from_raw_parts(x.offset(off), dst.len()) };
            for (d, &v) in dst.iter_mut().zip(run) {
                *d += w * v;
            }
        } else {
            for (i, d) in dst.iter_mut().enumerate() {
                // SAFETY: as above, value i.
                *d += w * unsafe { *x.offset(off + i as isize * step) };
            }
        }
        return;
    }
    let mut buf = [0.0f32; 256];
    for (k, piece) in dst.chunks_mut(256).enumerate() {
        let wide = &mut buf[..piece.len()];
        let at = off + (k * 256) as isize * step;
        // SAFETY: the piece's values (the caller's contract), any alignment.
        unsafe { crate::fast::element_io::load(x.get(), s.x_type, at, step, wide) };
        for (d, &v) in piece.iter_mut().zip(wide.iter()) {
            *d += w * v;
        }
    }
}

/// Output positions `p0..p0 + out.len()` of channel `g` of image `n` into `out`, with the
/// instructions of `isa`. Taps that fall in the padding are skipped, as the reference engine
/// skips them (so an infinite weight meets no padding zero).
///
/// # Safety
/// `x` is the bound input of a live execute call (an f32 one 4-byte aligned); `weights` is
/// group `g`'s filter in tap order;
/// `isa` runs on this processor.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn tile(
    isa: Isa,
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    p0: usize,
    out: &mut [f32],
) {
    // SAFETY (all arms): forwarded contract; each copy runs only where its level does.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => tile_avx512(s, x, weights, n, g, p0, out),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => tile_avx2(s, x, weights, n, g, p0, out),
            _ => tile_body(s, x, weights, n, g, p0, out),
        }
    }
}

/// [`tile_body`] compiled for AVX-512 F.
///
/// # Safety
/// As for [`tile`]; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tile_avx512(
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    p0: usize,
    out: &mut [f32],
) {
    // SAFETY: forwarded contract.
    unsafe { tile_body(s, x, weights, n, g, p0, out) }
}

/// [`tile_body`] compiled for AVX2 and FMA.
///
/// # Safety
/// As for [`tile`]; the processor has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tile_avx2(
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    p0: usize,
    out: &mut [f32],
) {
    // SAFETY: forwarded contract.
    unsafe { tile_body(s, x, weights, n, g, p0, out) }
}

/// The work of [`tile`], inlined into each level's copy: output rows segment by segment, each
/// tap adding its weight times the input run it sees (a contiguous run where the input's
/// column stride times the convolution's stride is 1).
///
/// # Safety
/// As for [`tile`].
#[inline(always)]
unsafe fn tile_body(
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    p0: usize,
    out: &mut [f32],
) {
    let (o1, o2) = (s.output[1], s.output[2]);
    let base = n as isize * s.xs.0 + g as isize * s.xs.1;
    let coord = |o: usize, f: usize, d: usize| -> isize {
        o as isize * s.stride[d] - s.pad[d] + f as isize * s.dilation[d]
    };
    let inside = |i: isize, d: usize| i >= 0 && i < s.input[d] as isize;
    let step = s.stride[2] * s.xs.2[2];
    let (mut pos, len) = (0, out.len());
    while pos < len {
        let p = p0 + pos;
        let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
        let seg = (o2 - ow).min(len - pos);
        let acc = &mut out[pos..pos + seg];
        acc.fill(0.0);
        let mut tap = 0;
        for f0 in 0..s.filter[0] {
            for f1 in 0..s.filter[1] {
                let (i0, i1) = (coord(od, f0, 0), coord(oh, f1, 1));
                let row_inside = inside(i0, 0) && inside(i1, 1);
                for f2 in 0..s.filter[2] {
                    let wv = weights[tap];
                    tap += 1;
                    if !row_inside {
                        continue;
                    }
                    // Output columns ow.. of the segment whose input column is inside: a..b.
                    let first = s.pad[2] - f2 as isize * s.dilation[2];
                    let lo = if first <= 0 {
                        0
                    } else {
                        (first + s.stride[2] - 1) / s.stride[2]
                    };
                    let last = s.input[2] as isize - 1 + first;
                    let hi = if last < 0 { 0 } else { last / s.stride[2] + 1 };
                    let a = (lo.max(0) as usize).clamp(ow, ow + seg);
                    let b = (hi.max(0) as usize).clamp(a, ow + seg);
                    if a == b {
                        continue;
                    }
                    let off = base + i0 * s.xs.2[0] + i1 * s.xs.2[1] + coord(a, f2, 2) * s.xs.2[2];
                    // SAFETY: columns a..b of this input row are inside it (above).
                    unsafe { add_run(s, x, off, step, wv, &mut acc[a - ow..b - ow]) };
                }
            }
        }
        pos += seg;
    }
}

/// Where [`plane`] puts the output plane.
pub(crate) enum PlaneOut<'a> {
    /// Into this buffer, the plane's positions in order, for the epilogue to take.
    Tile(&'a mut [f32]),
    /// Into the output itself, the plane's positions consecutive from `out`, the bias (when
    /// there is one) added and then a plain relu (when `relu`), as
    /// [`crate::fast::epilogue::BoundEpilogue::apply`] would for a `RowBiasRelu` chain.
    Output {
        out: *mut f32,
        bias: Option<f32>,
        relu: bool,
    },
}

/// The whole output plane of channel `g` of image `n` (2-D) into `to`, through `scratch`:
/// the input plane is staged with its padding as zeros, split by the stride into its phases
/// (phase (py, px) holds staged rows py, py + s1, ... and columns px, px + s2, ...), each phase
/// at the width W' of the output plus the filter's reach in that phase, so that every tap reads
/// one run of one phase, flattened (tap (f1, f2) at row f1·d1 / s1 and column f2·d2 / s2 of
/// phase (f1·d1 % s1, f2·d2 % s2)); the rows' extra columns are computed and dropped. Each tap
/// then costs one pass over the plane instead of one short pass per output row. Returns false,
/// having done nothing, where the convolution is not 2-D or `scratch` is too small.
///
/// # Safety
/// As for [`tile`]; `to` holds the output plane (a `PlaneOut::Output` pointer addresses the
/// plane's positions, which no other thread writes).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn plane(
    isa: Isa,
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    scratch: &mut [f32],
    to: PlaneOut<'_>,
) -> bool {
    // A depth of 1 whose one output reads the input's one slice (with depth padding it reads
    // padding, and the general tile computes it).
    let two_d = s.filter[0] == 1 && s.input[0] == 1 && s.output[0] == 1 && s.pad[0] == 0;
    let positive = (1..3).all(|d| s.stride[d] >= 1 && s.dilation[d] >= 1);
    if !two_d || !positive {
        return false;
    }
    let (oh, ow) = (s.output[1], s.output[2]);
    let geo = Phases {
        s1: s.stride[1] as usize,
        s2: s.stride[2] as usize,
        d1: s.dilation[1] as usize,
        d2: s.dilation[2] as usize,
        rows: oh + (s.filter[1] - 1) * s.dilation[1] as usize / s.stride[1] as usize,
        width: ow + (s.filter[2] - 1) * s.dilation[2] as usize / s.stride[2] as usize,
    };
    let staged_len = geo.s1 * geo.s2 * geo.rows * geo.width;
    // The flattened outputs: up to the last output row's last column.
    let flat_len = (oh - 1) * geo.width + ow;
    // The staged phases are followed by TAIL_PAD zeros, so that the last block of outputs,
    // partial, still reads whole runs (see taps_body).
    if scratch.len() < staged_len + TAIL_PAD + flat_len {
        return false;
    }
    if let PlaneOut::Tile(out) = &to {
        if out.len() < oh * ow {
            return false;
        }
    }
    // SAFETY (all arms): forwarded contract; each copy runs only where its level does.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                plane_avx512(s, &geo, x, weights, (n, g), scratch, to)
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => plane_avx2(s, &geo, x, weights, (n, g), scratch, to),
            _ => plane_body::<false, 64>(s, &geo, x, weights, (n, g), scratch, to),
        }
    }
    true
}

/// [`plane_body`] compiled for AVX-512 F.
///
/// # Safety
/// As for [`plane_body`]; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn plane_avx512(
    s: &Shape,
    geo: &Phases,
    x: SharedPtr,
    weights: &[f32],
    at: (usize, usize),
    scratch: &mut [f32],
    to: PlaneOut<'_>,
) {
    // SAFETY: forwarded contract.
    unsafe { plane_body::<true, 128>(s, geo, x, weights, at, scratch, to) }
}

/// [`plane_body`] compiled for AVX2 and FMA.
///
/// # Safety
/// As for [`plane_body`]; the processor has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn plane_avx2(
    s: &Shape,
    geo: &Phases,
    x: SharedPtr,
    weights: &[f32],
    at: (usize, usize),
    scratch: &mut [f32],
    to: PlaneOut<'_>,
) {
    // SAFETY: forwarded contract.
    unsafe { plane_body::<true, 64>(s, geo, x, weights, at, scratch, to) }
}

/// The work of [`plane`] for image and channel `at`, once its checks passed (`scratch` holds
/// the staged phases, [`TAIL_PAD`] values and the flattened outputs), inlined into each
/// level's copy (`FUSED` and `R` as for [`taps_body`]).
///
/// # Safety
/// As for [`plane`].
#[inline(always)]
unsafe fn plane_body<const FUSED: bool, const R: usize>(
    s: &Shape,
    geo: &Phases,
    x: SharedPtr,
    weights: &[f32],
    (n, g): (usize, usize),
    scratch: &mut [f32],
    to: PlaneOut<'_>,
) {
    let (oh, ow) = (s.output[1], s.output[2]);
    let staged_len = geo.s1 * geo.s2 * geo.rows * geo.width;
    let flat_len = (oh - 1) * geo.width + ow;
    let (staged, rest) = scratch.split_at_mut(staged_len + TAIL_PAD);
    staged[staged_len..].fill(0.0);
    let flat = &mut rest[..flat_len];
    let base = n as isize * s.xs.0 + g as isize * s.xs.1;
    let (s1, s2) = (geo.s1 as isize, geo.s2 as isize);
    for (q, phase) in staged[..staged_len]
        .chunks_exact_mut(geo.rows * geo.width)
        .enumerate()
    {
        let (py, px) = ((q / geo.s2) as isize, (q % geo.s2) as isize);
        // Phase column c is input column c·s2 + px - pad2: inside for c in c0..c1.
        let first = s.pad[2] - px;
        let c0 = if first <= 0 { 0 } else { (first + s2 - 1) / s2 };
        let limit = s.input[2] as isize + s.pad[2] - px;
        let c1 = if limit <= 0 { 0 } else { (limit + s2 - 1) / s2 };
        let (c0, c1) = (
            c0.clamp(0, geo.width as isize) as usize,
            c1.clamp(c0.clamp(0, geo.width as isize), geo.width as isize) as usize,
        );
        for (y, row) in phase.chunks_exact_mut(geo.width).enumerate() {
            let iy = y as isize * s1 + py - s.pad[1];
            if iy < 0 || iy >= s.input[1] as isize || c0 == c1 {
                row.fill(0.0);
                continue;
            }
            row[..c0].fill(0.0);
            row[c1..].fill(0.0);
            let ix = c0 as isize * s2 + px - s.pad[2];
            let off = base + iy * s.xs.2[1] + ix * s.xs.2[2];
            let step = s2 * s.xs.2[2];
            let dst = &mut row[c0..c1];
            if step == 1 && s.x_type == DataType::F32 {
                // SAFETY: in-range columns of an in-range row of x, f32 and aligned (the
                // caller's contract, `tile`'s).
                copy_run(dst, unsafe {
                    std::slice::from_raw_parts((x.get() as *const f32).offset(off), c1 - c0)
                });
            } else {
                // SAFETY: as above, every step2-th column.
                unsafe { crate::fast::element_io::load(x.get(), s.x_type, off, step, dst) };
            }
        }
    }
    // Each tap's run in the staged phases, computed once for the plane.
    let taps = s.filter[1] * s.filter[2];
    let (mut few, mut many) = ([0usize; 64], Vec::new());
    let offsets = if taps <= few.len() {
        &mut few[..taps]
    } else {
        many.resize(taps, 0);
        &mut many[..]
    };
    for (t, o) in offsets.iter_mut().enumerate() {
        *o = geo.offset(t / s.filter[2], t % s.filter[2]);
    }
    taps_body::<FUSED, R>(offsets, &weights[..taps], staged, flat);
    let rows = flat.chunks(geo.width).take(oh);
    match to {
        PlaneOut::Tile(out) => {
            for (dst, src) in out[..oh * ow].chunks_exact_mut(ow).zip(rows) {
                copy_run(dst, &src[..ow]);
            }
        }
        PlaneOut::Output { out, bias, relu } => {
            for (r, src) in rows.enumerate() {
                // SAFETY: output row r of the plane (the caller's contract).
                let dst = unsafe { std::slice::from_raw_parts_mut(out.add(r * ow), ow) };
                for (d, &v) in dst.iter_mut().zip(&src[..ow]) {
                    let v = match bias {
                        Some(b) => v + b,
                        None => v,
                    };
                    // `x < 0 ? 0 : x`, the epilogue's plain relu (NaN and -0 pass through).
                    *d = if relu && v < 0.0 { 0.0 } else { v };
                }
            }
        }
    }
}

/// `dst` = `src` (the same length), 16 values at a time inline, the last 16 overlapping the
/// ones before: a call to memmove per short row cost about as much as the row's arithmetic.
#[inline(always)]
fn copy_run(dst: &mut [f32], src: &[f32]) {
    let len = dst.len();
    let src = &src[..len];
    if len < 16 {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = v;
        }
        return;
    }
    let (whole, _) = src.as_chunks::<16>();
    let (into, _) = dst.as_chunks_mut::<16>();
    for (d, v) in into.iter_mut().zip(whole) {
        *d = *v;
    }
    let last: &[f32; 16] = src[len - 16..].try_into().expect("16 values");
    dst[len - 16..].copy_from_slice(last);
}

/// Zeros after [`plane`]'s staged phases: the widest register block of [`taps_body`].
const TAIL_PAD: usize = 128;

/// How [`plane`] lays out its staged phases: strides, dilations, and each phase's rows and
/// width.
struct Phases {
    s1: usize,
    s2: usize,
    d1: usize,
    d2: usize,
    rows: usize,
    width: usize,
}

impl Phases {
    /// Where tap (f1, f2)'s run starts in the staged phases.
    fn offset(&self, f1: usize, f2: usize) -> usize {
        let (a, b) = (f1 * self.d1, f2 * self.d2);
        let phase = (a % self.s1) * self.s2 + b % self.s2;
        (phase * self.rows + a / self.s1) * self.width + b / self.s2
    }
}

/// `flat[i] = Σ_t weights[t] · staged[i + offsets[t]]`, the taps added in order: `R` outputs
/// at a time held in registers across every tap (8 zmm or 8 ymm: enough independent sums to
/// hide the adds' latency; a pass of each tap over a block in L1 was bound by its stores), the
/// last block partial (its runs reach into the zeros after the staged phases, up to `R` ≤
/// [`TAIL_PAD`] values past them). `FUSED`: each step one FMA (the copies whose level has FMA;
/// elsewhere `mul_add` would be a library call).
#[inline(always)]
fn taps_body<const FUSED: bool, const R: usize>(
    offsets: &[usize],
    weights: &[f32],
    staged: &[f32],
    flat: &mut [f32],
) {
    let step = |a: f32, w: f32, v: f32| if FUSED { w.mul_add(v, a) } else { a + w * v };
    let last = offsets
        .iter()
        .max()
        .map_or(0, |&o| o + flat.len().next_multiple_of(R));
    let staged = &staged[..last];
    for (b, block) in flat.chunks_mut(R).enumerate() {
        let i = b * R;
        let mut acc = [0.0f32; R];
        for (&o, &wv) in offsets.iter().zip(weights) {
            let run: &[f32; R] = staged[i + o..i + o + R].try_into().expect("R values");
            for (a, &v) in acc.iter_mut().zip(run) {
                *a = step(*a, wv, v);
            }
        }
        block.copy_from_slice(&acc[..block.len()]);
    }
}

/// Whether a depthwise convolution runs channels-last ([`channels_last_tile`]): x's and the
/// output's channels adjacent (stride 1 for x; the output tile's rows are positions). A
/// channels-last input read plane by plane would gather one value of every cache line per
/// plane.
pub(crate) fn runs_channels_last(s: &Shape, rows_are_positions: bool) -> bool {
    s.xs.1 == 1 && rows_are_positions
}

/// Writes the filters as `[tap][C]` f32 (every channel's weight of one tap together) into
/// `out` (`taps · C` values), the channels-last kernel's layout.
///
/// # Safety
/// `w` is the bound weight pointer of a live execute call.
pub(crate) unsafe fn pack_taps(s: &Shape, w: SharedPtr, out: &mut [f32]) {
    let c = s.groups;
    let mut filter = vec![0.0f32; s.taps()];
    for g in 0..c {
        // SAFETY: forwarded contract; filter g (one a group) < K.
        unsafe { super::geometry::pack_weight_row(s, false, w, g, &mut filter) };
        for (tap, &v) in filter.iter().enumerate() {
            out[tap * c + g] = v;
        }
    }
}

/// Output positions `p0..p0 + len` of image `n`, every channel, into `out` as `[len][C]`:
/// for each position, each tap inside the input adds its weights times the input's run of C
/// channels there (taps in the padding skipped, as the reference engine skips them).
///
/// # Safety
/// `x` is the bound input of a live execute call (an f32 one 4-byte aligned), channels
/// adjacent; `taps` is
/// [`pack_taps`]' layout; `out` holds `len · C` values; `isa` runs on this processor.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn channels_last_tile(
    isa: Isa,
    s: &Shape,
    x: SharedPtr,
    taps: &[f32],
    n: usize,
    p0: usize,
    len: usize,
    out: &mut [f32],
) {
    // SAFETY (all arms): forwarded contract; each copy runs only where its level does.
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                channels_last_avx512(s, x, taps, n, p0, len, out)
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => channels_last_avx2(s, x, taps, n, p0, len, out),
            _ => channels_last_body::<false>(s, x, taps, n, p0, len, out),
        }
    }
}

/// [`channels_last_body`] compiled for AVX-512 F.
///
/// # Safety
/// As for [`channels_last_tile`]; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn channels_last_avx512(
    s: &Shape,
    x: SharedPtr,
    taps: &[f32],
    n: usize,
    p0: usize,
    len: usize,
    out: &mut [f32],
) {
    // SAFETY: forwarded contract.
    unsafe { channels_last_body::<true>(s, x, taps, n, p0, len, out) }
}

/// [`channels_last_body`] compiled for AVX2 and FMA.
///
/// # Safety
/// As for [`channels_last_tile`]; the processor has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn channels_last_avx2(
    s: &Shape,
    x: SharedPtr,
    taps: &[f32],
    n: usize,
    p0: usize,
    len: usize,
    out: &mut [f32],
) {
    // SAFETY: forwarded contract.
    unsafe { channels_last_body::<true>(s, x, taps, n, p0, len, out) }
}

/// The work of [`channels_last_tile`], inlined into each level's copy (`FUSED` as for
/// [`taps_body`]).
///
/// # Safety
/// As for [`channels_last_tile`].
#[inline(always)]
unsafe fn channels_last_body<const FUSED: bool>(
    s: &Shape,
    x: SharedPtr,
    taps: &[f32],
    n: usize,
    p0: usize,
    len: usize,
    out: &mut [f32],
) {
    let c = s.groups;
    let (o1, o2) = (s.output[1], s.output[2]);
    let coord = |o: usize, f: usize, d: usize| -> isize {
        o as isize * s.stride[d] - s.pad[d] + f as isize * s.dilation[d]
    };
    let inside = |i: isize, d: usize| i >= 0 && i < s.input[d] as isize;
    let step = |a: f32, w: f32, v: f32| if FUSED { w.mul_add(v, a) } else { a + w * v };
    // A 16-bit input's channels are widened into this run first.
    let mut wide = if s.x_type == DataType::F32 {
        Vec::new()
    } else {
        vec![0.0f32; c]
    };
    for (pl, acc) in out[..len * c].chunks_exact_mut(c).enumerate() {
        let p = p0 + pl;
        let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
        acc.fill(0.0);
        let mut tap = 0;
        for f0 in 0..s.filter[0] {
            let i0 = coord(od, f0, 0);
            for f1 in 0..s.filter[1] {
                let i1 = coord(oh, f1, 1);
                for f2 in 0..s.filter[2] {
                    let i2 = coord(ow, f2, 2);
                    let weights = &taps[tap * c..(tap + 1) * c];
                    tap += 1;
                    if !(inside(i0, 0) && inside(i1, 1) && inside(i2, 2)) {
                        continue;
                    }
                    let off =
                        n as isize * s.xs.0 + i0 * s.xs.2[0] + i1 * s.xs.2[1] + i2 * s.xs.2[2];
                    let run: &[f32] = if s.x_type == DataType::F32 {
                        // SAFETY: the C channels of an in-range input position, adjacent, f32
                        // and aligned (the caller's contract).
                        unsafe {
                            std::slice::from_raw_parts((x.get() as *const f32).offset(off), c)
                        }
                    } else {
                        // SAFETY: as above, 16-bit values at any alignment.
                        unsafe {
                            crate::fast::element_io::load(x.get(), s.x_type, off, 1, &mut wide)
                        };
                        &wide
                    };
                    for ((a, &w), &v) in acc.iter_mut().zip(weights).zip(run) {
                        *a = step(*a, w, v);
                    }
                }
            }
        }
    }
}
