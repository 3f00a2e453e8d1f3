//! Convolution geometry shared by the GEMM convolution engines: sizes normalized to three
//! spatial dims, weights packed as f32 matrices, and im2col (input patches unrolled into the
//! columns of a matrix, for any layout and data type).

use crate::fast::element_io::{load, load_one, SharedPtr};
use crate::fast::pool;
use kiln_core::{ConvOp, DataType, OpGraph};
use kiln_plugin_sdk::{PluginError, PluginResult};

/// Sizes and strides normalized to three spatial dims (missing leading dims have size 1).
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub n: usize,
    pub groups: usize,
    pub cg: usize,
    pub kg: usize,
    pub input: [usize; 3],
    pub filter: [usize; 3],
    pub output: [usize; 3],
    pub pad: [isize; 3],
    pub stride: [isize; 3],
    pub dilation: [isize; 3],
    /// x strides: N, C, spatial.
    pub xs: (isize, isize, [isize; 3]),
    /// w strides: K, C, spatial.
    pub ws: (isize, isize, [isize; 3]),
    pub x_type: DataType,
    pub w_type: DataType,
}

impl Shape {
    /// The normalized shape of `conv` (any direction: x, w and y play their fprop roles).
    pub fn new(graph: &OpGraph, conv: &ConvOp) -> PluginResult<Shape> {
        let tensor = |uid: i64| {
            graph.tensor(uid).ok_or_else(|| {
                PluginError::internal(format!("tensor uid {uid} is not in the graph"))
            })
        };
        let (x, w, y) = (tensor(conv.x)?, tensor(conv.w)?, tensor(conv.y)?);
        let p = &conv.params;
        let to_isize = |v: &[i64]| v.iter().map(|&a| a as isize).collect::<Vec<_>>();
        let to_usize = |v: &[i64]| v.iter().map(|&a| a as usize).collect::<Vec<_>>();
        let groups = (x.dims[1] / w.dims[1]) as usize;
        Ok(Shape {
            n: x.dims[0] as usize,
            groups,
            cg: w.dims[1] as usize,
            kg: w.dims[0] as usize / groups,
            input: spatial3(&to_usize(&x.dims[2..]), 1),
            filter: spatial3(&to_usize(&w.dims[2..]), 1),
            output: spatial3(&to_usize(&y.dims[2..]), 1),
            pad: spatial3(&to_isize(&p.pre_padding), 0),
            stride: spatial3(&to_isize(&p.stride), 1),
            dilation: spatial3(&to_isize(&p.dilation), 1),
            xs: (
                x.strides[0] as isize,
                x.strides[1] as isize,
                spatial3(&to_isize(&x.strides[2..]), 0),
            ),
            ws: (
                w.strides[0] as isize,
                w.strides[1] as isize,
                spatial3(&to_isize(&w.strides[2..]), 0),
            ),
            x_type: x.data_type,
            w_type: w.data_type,
        })
    }

    /// Floats of the weights packed as f32 [K, patch].
    pub fn weight_floats(&self) -> usize {
        self.kg * self.groups * self.patch()
    }

    pub fn positions(&self) -> usize {
        self.output.iter().product()
    }
    pub fn taps(&self) -> usize {
        self.filter.iter().product()
    }

    /// A dense NCHW f32 3x3 convolution with padding 1 of `n`×`c`×`h`×`w` to `k` channels (the
    /// engines' unit tests).
    #[cfg(test)]
    pub fn nchw_3x3(n: usize, c: usize, k: usize, h: usize, w: usize) -> Shape {
        let (hw, i) = ((h * w) as isize, |v: usize| v as isize);
        Shape {
            n,
            groups: 1,
            cg: c,
            kg: k,
            input: [1, h, w],
            filter: [1, 3, 3],
            output: [1, h, w],
            pad: [0, 1, 1],
            stride: [1, 1, 1],
            dilation: [1, 1, 1],
            xs: (i(c) * hw, hw, [hw, i(w), 1]),
            ws: (i(c * 9), 9, [9, 3, 1]),
            x_type: DataType::F32,
            w_type: DataType::F32,
        }
    }
    pub fn patch(&self) -> usize {
        self.cg * self.taps()
    }

    /// Whether each filter is one dense run of the weights in channels-first patch order (the
    /// stride of a dimension of size 1 does not matter).
    pub fn filters_dense(&self) -> bool {
        let fits = |size: usize, stride: isize, want: usize| size == 1 || stride == want as isize;
        fits(self.filter[2], self.ws.2[2], 1)
            && fits(self.filter[1], self.ws.2[1], self.filter[2])
            && fits(
                self.filter[0],
                self.ws.2[0],
                self.filter[1] * self.filter[2],
            )
            && fits(self.cg, self.ws.1, self.taps())
    }
}

fn spatial3<T: Copy>(v: &[T], fill: T) -> [T; 3] {
    let mut out = [fill; 3];
    let off = 3 - v.len().min(3);
    for (o, &x) in out[off..].iter_mut().zip(v) {
        *o = x;
    }
    out
}

/// Packs the weights as f32 [K, patch] in the patch order of the im2col layout.
///
/// # Safety
/// `w` is the bound weight pointer of a live execute call.
pub(crate) unsafe fn pack_weights(s: &Shape, channels_last: bool, w: SharedPtr, out: &mut [f32]) {
    let patch = s.patch();
    let out = &mut out[..s.weight_floats()];
    pool::for_each_chunk_mut(out, patch, |k, row| {
        // SAFETY: forwarded contract; k < K.
        unsafe { pack_weight_row(s, channels_last, w, k, row) }
    });
}

/// Writes filter `k` (of all groups' K) as f32 in the patch order of the im2col layout: the
/// first `patch` values of `row`.
///
/// # Safety
/// `w` is the bound weight pointer of a live execute call and `k` < K.
pub(crate) unsafe fn pack_weight_row(
    s: &Shape,
    channels_last: bool,
    w: SharedPtr,
    k: usize,
    row: &mut [f32],
) {
    let (taps, patch) = (s.taps(), s.patch());
    let row = &mut row[..patch];
    // Channels-first filters stored densely in that order: each filter is one run.
    let dense = s.filters_dense();
    if dense && !channels_last {
        // SAFETY: filter k's patch elements, consecutive in w's own layout.
        unsafe { load(w.get(), s.w_type, k as isize * s.ws.0, 1, row) };
        return;
    }
    if dense {
        // The channels-last order of dense channels-first filters (NCHW weights for the AMX
        // path's gathered patches): the run converted at once, then transposed in f32.
        let mut run = vec![0.0f32; patch];
        // SAFETY: as above.
        unsafe { load(w.get(), s.w_type, k as isize * s.ws.0, 1, &mut run) };
        for (c, taps_of_c) in run.chunks_exact(taps).enumerate() {
            for (tap, &v) in taps_of_c.iter().enumerate() {
                row[tap * s.cg + c] = v;
            }
        }
        return;
    }
    filter_runs(s, k, |base, c, tap0| {
        if channels_last {
            for f2 in 0..s.filter[2] {
                let off = base + f2 as isize * s.ws.2[2];
                let i = (tap0 + f2) * s.cg + c;
                // SAFETY: in-range indices of w's own layout.
                row[i] = unsafe { load_one(w.get(), s.w_type, off) };
            }
        } else {
            let i = c * taps + tap0;
            // SAFETY: a run of in-range filter positions of w's layout.
            unsafe {
                load(
                    w.get(),
                    s.w_type,
                    base,
                    s.ws.2[2],
                    &mut row[i..i + s.filter[2]],
                )
            };
        }
    });
}

/// Calls `run(off, c, tap0)` for each run of `filter[2]` taps of filter `k` (of all groups'
/// K): `off` is the element offset of the run's first tap in the weights' layout (the taps
/// `ws.2[2]` apart), `c` its input channel within the group and `tap0` its first tap's index.
pub(crate) fn filter_runs(s: &Shape, k: usize, mut run: impl FnMut(isize, usize, usize)) {
    for c in 0..s.cg {
        for f0 in 0..s.filter[0] {
            for f1 in 0..s.filter[1] {
                let off = k as isize * s.ws.0
                    + c as isize * s.ws.1
                    + f0 as isize * s.ws.2[0]
                    + f1 as isize * s.ws.2[1];
                run(off, c, (f0 * s.filter[1] + f1) * s.filter[2]);
            }
        }
    }
}

/// Unrolls the patches of image `n`, group `g`, output positions `p0..p0 + len` into `col`.
///
/// # Safety
/// `x` is the bound input pointer of a live execute call.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn im2col(
    s: &Shape,
    channels_last: bool,
    x: SharedPtr,
    n: usize,
    g: usize,
    p0: usize,
    len: usize,
    col: &mut [f32],
) {
    let (o1, o2) = (s.output[1], s.output[2]);
    let xbase = n as isize * s.xs.0 + (g * s.cg) as isize * s.xs.1;
    let taps = s.taps();
    let coord = |o: usize, f: usize, d: usize| -> isize {
        o as isize * s.stride[d] - s.pad[d] + f as isize * s.dilation[d]
    };
    let inside = |i: isize, d: usize| i >= 0 && i < s.input[d] as isize;
    if channels_last {
        let patch = s.patch();
        for pl in 0..len {
            let p = p0 + pl;
            let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
            let row = &mut col[pl * patch..(pl + 1) * patch];
            for f0 in 0..s.filter[0] {
                for f1 in 0..s.filter[1] {
                    for f2 in 0..s.filter[2] {
                        let tap = (f0 * s.filter[1] + f1) * s.filter[2] + f2;
                        let dst = &mut row[tap * s.cg..(tap + 1) * s.cg];
                        let (i0, i1, i2) = (coord(od, f0, 0), coord(oh, f1, 1), coord(ow, f2, 2));
                        if inside(i0, 0) && inside(i1, 1) && inside(i2, 2) {
                            let off = xbase + i0 * s.xs.2[0] + i1 * s.xs.2[1] + i2 * s.xs.2[2];
                            // SAFETY: in-range input coordinates of x's layout.
                            unsafe { load(x.get(), s.x_type, off, s.xs.1, dst) };
                        } else {
                            dst.fill(0.0);
                        }
                    }
                }
            }
        }
        return;
    }
    // The span of x's element offsets one channel of this tile reads (from its first input
    // row to its last), fetched into L1 for the next channel while this one's taps run, a
    // share of its lines per tap: the rows of a stride-2 tile are too far apart for the
    // processor's own prefetcher, and the first read of each took 30% of an im2col's time.
    let span = (len > 0 && o1 * o2 > 0).then_some(()).and_then(|()| {
        let end = p0 + len - 1;
        let (oh0, oh1) = ((p0 / o2) % o1, (end / o2) % o1);
        let same_depth = (p0 / (o1 * o2)) == (end / (o1 * o2)) && oh0 <= oh1;
        let rows = (
            coord(oh0, 0, 1).max(0),
            coord(oh1, s.filter[1].saturating_sub(1), 1),
        );
        (same_depth && s.xs.2[2] == 1 && s.xs.2[1] > 0 && rows.0 <= rows.1).then(|| {
            let i0 = coord(p0 / (o1 * o2), 0, 0)
                .min(s.input[0] as isize - 1)
                .max(0);
            let first = i0 * s.xs.2[0] + rows.0 * s.xs.2[1];
            let last = i0 * s.xs.2[0]
                + rows.1.min(s.input[1] as isize - 1) * s.xs.2[1]
                + s.input[2] as isize;
            (first, last)
        })
    });
    let elem = s.x_type.size() as isize;
    for c in 0..s.cg {
        // Lines of the next channel's span to fetch per tap.
        let fetch = span.filter(|_| c + 1 < s.cg).map(|(first, last)| {
            let at = xbase + (c + 1) as isize * s.xs.1 + first;
            let lines = (((last - first) * elem).max(0) as usize).div_ceil(64);
            (at, lines, lines.div_ceil(taps))
        });
        for f0 in 0..s.filter[0] {
            for f1 in 0..s.filter[1] {
                for f2 in 0..s.filter[2] {
                    let tap = (f0 * s.filter[1] + f1) * s.filter[2] + f2;
                    #[cfg(target_arch = "x86_64")]
                    if let Some((at, lines, per_tap)) = fetch {
                        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                        let base = (x.get() as *const i8).wrapping_offset(at * elem);
                        for l in tap * per_tap..((tap + 1) * per_tap).min(lines) {
                            // SAFETY: a prefetch is only a hint, whatever the address.
                            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(64 * l)) };
                        }
                    }
                    let row = &mut col[(c * taps + tap) * len..(c * taps + tap + 1) * len];
                    // Output widths whose input column is inside: lo..hi.
                    let first = s.pad[2] - (f2 as isize) * s.dilation[2];
                    let lo = if first <= 0 {
                        0
                    } else {
                        (first + s.stride[2] - 1) / s.stride[2]
                    };
                    let last = s.input[2] as isize - 1 + first;
                    let hi = if last < 0 { 0 } else { last / s.stride[2] + 1 };
                    let (lo, hi) = (lo.min(o2 as isize) as usize, hi.min(o2 as isize) as usize);
                    let mut p = p0;
                    let mut pos = 0;
                    while pos < len {
                        let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
                        let seg = (o2 - ow).min(len - pos);
                        let dst = &mut row[pos..pos + seg];
                        let (i0, i1) = (coord(od, f0, 0), coord(oh, f1, 1));
                        let (a, b) = (ow.max(lo).min(ow + seg), hi.min(ow + seg).max(ow));
                        if !inside(i0, 0) || !inside(i1, 1) || a >= b {
                            dst.fill(0.0);
                        } else {
                            dst[..a - ow].fill(0.0);
                            dst[b - ow..].fill(0.0);
                            let i2 = coord(a, f2, 2);
                            let off = xbase
                                + c as isize * s.xs.1
                                + i0 * s.xs.2[0]
                                + i1 * s.xs.2[1]
                                + i2 * s.xs.2[2];
                            // SAFETY: every position in a..b reads an in-range column.
                            unsafe {
                                load(
                                    x.get(),
                                    s.x_type,
                                    off,
                                    s.stride[2] * s.xs.2[2],
                                    &mut dst[a - ow..b - ow],
                                )
                            };
                        }
                        pos += seg;
                        p += seg;
                    }
                }
            }
        }
    }
}
