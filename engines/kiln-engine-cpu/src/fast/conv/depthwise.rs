//! Depthwise convolutions (one input and one output channel per group, as in MobileNet's
//! separable blocks) computed directly: each output row segment is the sum, tap by tap, of a
//! weight times a run of an input row. im2col + GEMM spent most of such a convolution unrolling
//! patches for products of a single filter row (a GEMV per tile).

use super::geometry::Shape;
use crate::fast::element_io::{load_one, SharedPtr};
use crate::fast::isa::Isa;
use kiln_core::DataType;

/// Whether the direct kernel runs this convolution: f32 input, groups of one input and one
/// output channel, and more than one tap (a 1x1 one is the direct 1x1 path's).
pub(crate) fn eligible(s: &Shape) -> bool {
    s.groups > 1 && s.cg == 1 && s.kg == 1 && s.x_type == DataType::F32 && s.taps() > 1
}

/// The filter of group `g` (its `taps` weights, in tap order) as f32.
///
/// # Safety
/// `w` is the bound weight pointer of a live execute call; `g` < groups.
pub(crate) unsafe fn filter(s: &Shape, w: SharedPtr, g: usize, out: &mut Vec<f32>) {
    out.clear();
    for f0 in 0..s.filter[0] {
        for f1 in 0..s.filter[1] {
            for f2 in 0..s.filter[2] {
                let off = g as isize * s.ws.0
                    + f0 as isize * s.ws.2[0]
                    + f1 as isize * s.ws.2[1]
                    + f2 as isize * s.ws.2[2];
                // SAFETY: an in-range weight of w's layout (the caller's contract).
                out.push(unsafe { load_one(w.get(), s.w_type, off) });
            }
        }
    }
}

/// Output positions `p0..p0 + out.len()` of channel `g` of image `n` into `out`, with the
/// instructions of `isa`. Taps that fall in the padding are skipped, as the reference engine
/// skips them (so an infinite weight meets no padding zero).
///
/// # Safety
/// `x` is the bound f32 input of a live execute call; `weights` is [`filter`] of group `g`;
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
    let x = x.get() as *const f32;
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
                    let dst = &mut acc[a - ow..b - ow];
                    if step == 1 {
                        // SAFETY: columns a..b of this input row are inside it (above).
                        let run = unsafe { std::slice::from_raw_parts(x.offset(off), b - a) };
                        for (d, &v) in dst.iter_mut().zip(run) {
                            *d += wv * v;
                        }
                    } else {
                        for (i, d) in dst.iter_mut().enumerate() {
                            // SAFETY: as above, column a + i.
                            *d += wv * unsafe { *x.offset(off + i as isize * step) };
                        }
                    }
                }
            }
        }
        pos += seg;
    }
}

/// The whole output plane of channel `g` of image `n` (2-D, stride 1) into `out`, through
/// `scratch`: the input plane is staged with its padding as zeros, at the width W' of the
/// output plus the filter's reach, so that every tap is one long run over the flattened
/// staged plane (its offset `f1·d1·W' + f2·d2`), the rows' extra columns computed and dropped;
/// each tap then costs one pass over the plane instead of one short pass per output row.
/// Returns false, having done nothing, where the convolution is not 2-D with stride 1 or
/// `scratch` is too small.
///
/// # Safety
/// As for [`tile`]; `out` holds the output plane.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn plane(
    isa: Isa,
    s: &Shape,
    x: SharedPtr,
    weights: &[f32],
    n: usize,
    g: usize,
    scratch: &mut [f32],
    out: &mut [f32],
) -> bool {
    let two_d = s.filter[0] == 1 && s.input[0] == 1 && s.output[0] == 1;
    if !two_d || s.stride[1] != 1 || s.stride[2] != 1 {
        return false;
    }
    let (oh, ow) = (s.output[1], s.output[2]);
    let reach = |d: usize| (s.filter[d] - 1) * s.dilation[d].max(0) as usize;
    let (rows, width) = (oh + reach(1), ow + reach(2));
    let staged_len = rows * width;
    // The flattened outputs: up to the last output row's last column.
    let flat_len = (oh - 1) * width + ow;
    if s.dilation[1] < 1 || s.dilation[2] < 1 || scratch.len() < staged_len + flat_len {
        return false;
    }
    let (staged, rest) = scratch.split_at_mut(staged_len);
    let flat = &mut rest[..flat_len];
    // Staged row y, column c is input row y - pad1, column c - pad2 (zero outside).
    let base = n as isize * s.xs.0 + g as isize * s.xs.1;
    for (y, row) in staged.chunks_exact_mut(width).enumerate() {
        let iy = y as isize - s.pad[1];
        if iy < 0 || iy >= s.input[1] as isize {
            row.fill(0.0);
            continue;
        }
        let c0 = s.pad[2].clamp(0, width as isize) as usize;
        let c1 = (s.pad[2] + s.input[2] as isize).clamp(c0 as isize, width as isize) as usize;
        row[..c0].fill(0.0);
        row[c1..].fill(0.0);
        // Input columns c0 - pad2 .. c1 - pad2 are inside the row.
        let off = base + iy * s.xs.2[1] + (c0 as isize - s.pad[2]) * s.xs.2[2];
        let dst = &mut row[c0..c1];
        if s.xs.2[2] == 1 {
            // SAFETY: in-range columns of an in-range row of x, f32 and aligned (the caller's
            // contract, `tile`'s).
            dst.copy_from_slice(unsafe {
                std::slice::from_raw_parts((x.get() as *const f32).offset(off), c1 - c0)
            });
        } else {
            // SAFETY: as above, strided.
            unsafe { crate::fast::element_io::load(x.get(), s.x_type, off, s.xs.2[2], dst) };
        }
    }
    // SAFETY (all arms): each copy runs only where its level does (the caller's contract).
    unsafe {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                taps_avx512(s, width, weights, staged, flat)
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => taps_avx2(s, width, weights, staged, flat),
            _ => taps_body::<false, 64>(s, width, weights, staged, flat),
        }
    }
    for (r, dst) in out[..oh * ow].chunks_exact_mut(ow).enumerate() {
        dst.copy_from_slice(&flat[r * width..r * width + ow]);
    }
    true
}

/// [`taps_body`] compiled for AVX-512 F.
///
/// # Safety
/// The processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn taps_avx512(s: &Shape, width: usize, weights: &[f32], staged: &[f32], flat: &mut [f32]) {
    taps_body::<true, 128>(s, width, weights, staged, flat)
}

/// [`taps_body`] compiled for AVX2 and FMA.
///
/// # Safety
/// The processor has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn taps_avx2(s: &Shape, width: usize, weights: &[f32], staged: &[f32], flat: &mut [f32]) {
    taps_body::<true, 64>(s, width, weights, staged, flat)
}

/// `flat[i] = Σ_taps w · staged[i + offset(tap)]`, the taps added in order: `R` outputs at a
/// time held in registers across every tap (8 zmm or 8 ymm: enough independent sums to hide
/// the adds' latency; a pass of each tap over a block in L1 was bound by its stores), the last
/// `len % R` one tap at a time. `FUSED`: each step one FMA (the copies whose level has FMA;
/// elsewhere `mul_add` would be a library call).
#[inline(always)]
fn taps_body<const FUSED: bool, const R: usize>(
    s: &Shape,
    width: usize,
    weights: &[f32],
    staged: &[f32],
    flat: &mut [f32],
) {
    let step = |a: f32, w: f32, v: f32| if FUSED { w.mul_add(v, a) } else { a + w * v };
    let (d1, d2) = (s.dilation[1] as usize, s.dilation[2] as usize);
    let (rows, cols) = (s.filter[1], s.filter[2]);
    let len = flat.len();
    let mut i = 0;
    while i + R <= len {
        let mut acc = [0.0f32; R];
        for f1 in 0..rows {
            for f2 in 0..cols {
                let (off, wv) = (i + f1 * d1 * width + f2 * d2, weights[f1 * cols + f2]);
                for (a, &v) in acc.iter_mut().zip(&staged[off..off + R]) {
                    *a = step(*a, wv, v);
                }
            }
        }
        flat[i..i + R].copy_from_slice(&acc);
        i += R;
    }
    let tail = &mut flat[i..];
    tail.fill(0.0);
    for f1 in 0..rows {
        for f2 in 0..cols {
            let (off, wv) = (i + f1 * d1 * width + f2 * d2, weights[f1 * cols + f2]);
            for (d, &v) in tail.iter_mut().zip(&staged[off..]) {
                *d = step(*d, wv, v);
            }
        }
    }
}
