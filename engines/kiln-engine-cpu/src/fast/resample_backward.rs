//! `KILN_CPU_RESAMPLE_BACKWARD_V1`: pooling's backward (a graph of one `resample_backward`
//! node) in f32, on the engine's thread pool.
//!
//! dx is gathered, never scattered: each dx element sums, in row-major order of the output
//! positions, the dy of the windows that cover it (per spatial dim the outputs `o` with
//! `o * stride - pre <= p < o * stride - pre + window`). No two tasks write one element and the
//! order of the additions is fixed, so results are deterministic. Per window:
//! - max pooling adds dy where the window's maximum is this element: the index input names it
//!   (a value equal to this element's window position; anything else, padded positions and
//!   values that are not whole included, routes nothing), or, without an index, a first pass
//!   finds every window's maximum in x again with the forward engine (its rules: padding is
//!   never a maximum, NaN is the largest value, the first maximum in row-major window order
//!   wins), writing only the positions into the plan's workspace;
//! - the including average adds dy / (window elements), the excluding one dy / (the window's
//!   elements inside x, the product of the per-dim counts).
//!
//! Two loop orders: when channels are the innermost dim of dy and dx a task takes one dx
//! position for every channel (the channel loops vectorise); otherwise a task takes one (n, c)
//! plane, a row of dx at a time in the last stride's phases ([`Backward::gather_plane_body`]):
//! the same additions in the same order, as vector loops.

use super::element_io::{load, store, SharedPtr};
use super::epilogue::check_data_type;
use super::isa::Isa;
use super::pool;
use super::resample::{channels_innermost, Argmax};
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::resample::{ResampleMode, ResampleOp};
use kiln_core::{DataType, GenericOp, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_RESAMPLE_BACKWARD_V1";

/// Most window elements: every window position is exact in the f32 the engine compares an
/// index in.
const MAX_WINDOW: i64 = 1 << 24;

/// Pooling backward.
pub struct ResampleBackwardEngine;

/// The resample_backward node of `graph`, or why this engine does not run the graph.
fn node(graph: &OpGraph) -> Result<(&GenericOp, &str), String> {
    graph.single_generic("resample_backward", "resample_backward (pooling backward)")
}

impl CpuEngine for ResampleBackwardEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    /// Accepts one resample_backward node over f32/f16/bf16 dy, dx and x, with an i8, i32 or
    /// f32 index, and windows of at most 2^24 elements.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        let (op, name) = node(graph)?;
        for uid in ["dy", "x"].iter().filter_map(|p| op.inputs.get(*p)) {
            check_data_type(graph, *uid)?;
        }
        if let Some(&uid) = op.outputs.get("dx") {
            check_data_type(graph, uid)?;
        }
        if let Some(&uid) = op.inputs.get("index") {
            let t = graph
                .tensor(uid)
                .ok_or_else(|| format!("tensor uid {uid} is not in the graph"))?;
            if !matches!(t.data_type, DataType::I8 | DataType::I32 | DataType::F32) {
                return Err(format!(
                    "index {} is {}; this engine reads i8, i32 or f32 indices",
                    t.label(),
                    t.data_type
                ));
            }
        }
        let dy = graph
            .tensor(op.inputs.get("dy").copied().unwrap_or_default())
            .ok_or("the graph has no dy tensor")?;
        let (_, g) = ResampleOp::mode_and_geometry(
            op,
            dy.dims.len().saturating_sub(2),
            &format!("node '{name}'"),
        )
        .map_err(|e| e.to_string())?;
        if g.window_elements() > MAX_WINDOW {
            return Err(format!(
                "the window holds {} elements; this engine takes at most 2^24",
                g.window_elements()
            ));
        }
        Ok(())
    }

    fn prepare(&self, graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        self.supports(graph)
            .map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        Ok(Box::new(Backward::new(graph)?))
    }
}

/// One tensor's address pattern over [N, C, 3 spatial dims] (missing leading spatial dims have
/// size 1 and stride 0): its UID, type and strides (elements).
#[derive(Debug, Clone)]
struct Io {
    uid: i64,
    data_type: DataType,
    n: isize,
    c: isize,
    spatial: [isize; 3],
}

impl Io {
    fn of(t: &TensorDesc) -> Io {
        let mut spatial = [0isize; 3];
        let rank = t.dims.len() - 2;
        for (d, &s) in t.strides[2..].iter().enumerate() {
            spatial[3 - rank + d] = s as isize;
        }
        Io {
            uid: t.uid,
            data_type: t.data_type,
            n: t.strides[0] as isize,
            c: t.strides[1] as isize,
            spatial,
        }
    }

    /// Offset (elements) of batch `n`, channel `c`.
    fn base(&self, n: usize, c: usize) -> isize {
        n as isize * self.n + c as isize * self.c
    }

    /// Offset (elements) of spatial coordinates `at`.
    fn at(&self, at: [i64; 3]) -> isize {
        (0..3).map(|d| at[d] as isize * self.spatial[d]).sum()
    }
}

/// Where max pooling's backward finds each window's maximum.
enum Maxima {
    /// Not max pooling.
    None,
    /// The index input.
    Index(Io),
    /// Found again from x (the forward input) by a first pass into the workspace (the forward
    /// engine's max pooling, writing only the positions), an f32 window position per dy element
    /// laid out as `workspace`.
    FromX {
        x: Io,
        workspace: Io,
        argmax: Box<Argmax>,
    },
}

/// A prepared pooling backward, its geometry over 3 spatial dims (leading ones of size 1).
struct Backward {
    mode: ResampleMode,
    n: usize,
    c: usize,
    /// dx's (x's) and dy's spatial dims.
    input: [i64; 3],
    output: [i64; 3],
    window: [i64; 3],
    stride: [i64; 3],
    pre: [i64; 3],
    /// Elements of one window.
    full: usize,
    /// Per spatial dim and output position: the window's elements inside x along that dim.
    inside: [Vec<f32>; 3],
    dy: Io,
    dx: Io,
    maxima: Maxima,
    /// Channels are the innermost dim of dy and dx.
    channels_inner: bool,
}

impl Backward {
    fn new(graph: &OpGraph) -> PluginResult<Backward> {
        let (op, name) =
            node(graph).map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        let what = format!("node '{name}' (resample_backward)");
        let dy = graph.tensor_for(op.inputs.get("dy").copied().unwrap_or_default(), name)?;
        let rank = dy.dims.len();
        if !(3..=5).contains(&rank) {
            return Err(PluginError::bad_param(format!(
                "{what}: dy needs 1 to 3 spatial dims"
            )));
        }
        let r = ResampleOp::from_generic(op, rank - 2, &what)?;
        let dx = graph.tensor_for(r.dx.unwrap_or_default(), name)?;
        if dx.dims.len() != rank {
            return Err(PluginError::bad_param(format!(
                "{what}: dx and dy must have the same rank"
            )));
        }
        let want = r.geometry.output_dims(&dx.dims, &what)?;
        if dy.dims != want {
            return Err(PluginError::bad_param(format!(
                "{what}: dy has dims {:?}, pooling dx gives {want:?}",
                dy.dims
            )));
        }
        let spatial = rank - 2;
        let lift = |v: &[i64], fill: i64| {
            let mut out = [fill; 3];
            out[3 - spatial..].copy_from_slice(v);
            out
        };
        let g = &r.geometry;
        let (input, output) = (lift(&dx.dims[2..], 1), lift(&dy.dims[2..], 1));
        let (window, stride, pre) = (
            lift(&g.window, 1),
            lift(&g.stride, 1),
            lift(&g.pre_padding, 0),
        );
        let inside = std::array::from_fn(|d| {
            (0..output[d])
                .map(|o| {
                    let start = o * stride[d] - pre[d];
                    ((start + window[d]).min(input[d]) - start.max(0)) as f32
                })
                .collect()
        });
        let (n, c) = (dx.dims[0] as usize, dx.dims[1] as usize);
        let channels_inner = channels_innermost(dx) && channels_innermost(dy);
        let positions: usize = output.iter().map(|&d| d as usize).product();
        let maxima = match (r.mode, r.index, r.x) {
            (ResampleMode::MaxPool, Some(i), _) => {
                Maxima::Index(Io::of(graph.tensor_for(i, name)?))
            }
            (ResampleMode::MaxPool, None, Some(x)) => {
                let x_desc = graph.tensor_for(x, name)?;
                let x = Io::of(x_desc);
                // [N, C, positions] or, channels inner, [N, positions, C].
                let (sc, sp) = if channels_inner {
                    (1, c as isize)
                } else {
                    (positions as isize, 1)
                };
                let mut spatial = [0isize; 3];
                spatial[2] = sp;
                spatial[1] = sp * output[2] as isize;
                spatial[0] = spatial[1] * output[1] as isize;
                let workspace = Io {
                    uid: 0,
                    data_type: DataType::F32,
                    n: (c * positions) as isize,
                    c: sc,
                    spatial,
                };
                let mut strides = vec![workspace.n, workspace.c];
                strides.extend_from_slice(&spatial[3 - (rank - 2)..]);
                let argmax = Box::new(Argmax::new(x_desc, &dy.dims, g, strides));
                Maxima::FromX {
                    x,
                    workspace,
                    argmax,
                }
            }
            (ResampleMode::MaxPool, None, None) => {
                return Err(PluginError::bad_param(format!(
                    "{what}: maxpool backward needs the input 'index' or 'x'"
                )))
            }
            _ => Maxima::None,
        };
        Ok(Backward {
            mode: r.mode,
            n,
            c,
            input,
            output,
            window,
            stride,
            pre,
            full: g.window_elements() as usize,
            inside,
            dy: Io::of(dy),
            dx: Io::of(dx),
            maxima,
            channels_inner,
        })
    }

    fn positions(dims: &[i64; 3]) -> usize {
        dims.iter().map(|&d| d as usize).product()
    }

    /// The coordinates of row-major position `flat` of `dims`.
    fn coords(dims: &[i64; 3], flat: usize) -> [i64; 3] {
        let f = flat as i64;
        [f / (dims[1] * dims[2]), f / dims[2] % dims[1], f % dims[2]]
    }

    /// The divisor of the average of window `o`.
    fn divisor(&self, o: [i64; 3]) -> f32 {
        match self.mode {
            ResampleMode::AvgPoolExcludePadding => {
                self.inside[0][o[0] as usize]
                    * self.inside[1][o[1] as usize]
                    * self.inside[2][o[2] as usize]
            }
            _ => self.full as f32,
        }
    }

    /// Calls `f(o, w)` for every output position `o` whose window covers x position `p`, in
    /// row-major order of `o`, with `w` the row-major position of `p` in that window.
    #[inline]
    fn for_each_cover(&self, p: [i64; 3], mut f: impl FnMut([i64; 3], usize)) {
        let range = |d: usize| {
            let (s, top) = (self.stride[d], p[d] + self.pre[d]);
            let first = top - self.window[d] + 1;
            let lo = if first <= 0 { 0 } else { (first + s - 1) / s };
            (lo, (top / s).min(self.output[d] - 1))
        };
        let (r0, r1, r2) = (range(0), range(1), range(2));
        let tap = |d: usize, o: i64| p[d] - (o * self.stride[d] - self.pre[d]);
        for o0 in r0.0..=r0.1 {
            let w0 = tap(0, o0) * self.window[1];
            for o1 in r1.0..=r1.1 {
                let w1 = (w0 + tap(1, o1)) * self.window[2];
                for o2 in r2.0..=r2.1 {
                    f([o0, o1, o2], (w1 + tap(2, o2)) as usize);
                }
            }
        }
    }

    /// dx of plane (n, c), a row of dx at a time: the windows covering the row, in row-major
    /// order of their outputs, each add their row of dy (max pooling: where the window's
    /// maximum is the tap) to the columns their taps reach. The row is kept split into the last
    /// stride's phases (dx column m·s + r at entry m of phase r), so that one tap of a row of
    /// windows adds a run of consecutive dy values to a run of consecutive entries (a vector
    /// loop); within a row of windows the taps go from the last to the first, so that every dx
    /// element still receives its windows in row-major order, as the gather in
    /// [`Backward::for_each_cover`]'s order adds them.
    ///
    /// # Safety
    /// `ptrs` are dy, dx and the maxima (index or workspace) of a live execute call; no other
    /// task writes plane (n, c) of dx.
    #[inline(always)]
    unsafe fn gather_plane_body(&self, ptrs: &Ptrs<'_>, n: usize, c: usize, s: &mut PlaneScratch) {
        let (dyb, dxb) = (self.dy.base(n, c), self.dx.base(n, c));
        let maxb = ptrs.maxima.map(|(_, io)| io.base(n, c));
        let (iw, ow) = (self.input[2] as usize, self.output[2] as usize);
        let (sw, pw, kw) = (
            self.stride[2] as usize,
            self.pre[2] as usize,
            self.window[2] as usize,
        );
        let phase_len = iw.div_ceil(sw);
        let exclude = self.mode == ResampleMode::AvgPoolExcludePadding;
        for p0 in 0..self.input[0] {
            for p1 in 0..self.input[1] {
                let acc = &mut s.acc[..sw * phase_len];
                acc.fill(0.0);
                let (r0, r1) = (self.cover(0, p0), self.cover(1, p1));
                for o0 in r0.0..r0.1 {
                    let t0 = p0 - (o0 * self.stride[0] - self.pre[0]);
                    for o1 in r1.0..r1.1 {
                        let t1 = p1 - (o1 * self.stride[1] - self.pre[1]);
                        let row = [o0, o1, 0];
                        let g = &mut s.dy[..ow];
                        // SAFETY: row (o0, o1) of dy's plane.
                        unsafe {
                            load(
                                ptrs.dy.get(),
                                self.dy.data_type,
                                dyb + self.dy.at(row),
                                self.dy.spatial[2],
                                g,
                            )
                        };
                        if let (Some((mp, mio)), Some(mb)) = (ptrs.maxima, maxb) {
                            // SAFETY: the maxima share dy's dims.
                            unsafe {
                                load(
                                    mp.get(),
                                    mio.data_type,
                                    mb + mio.at(row),
                                    mio.spatial[2],
                                    &mut s.max[..ow],
                                )
                            };
                        } else if exclude {
                            let outer = self.inside[0][o0 as usize] * self.inside[1][o1 as usize];
                            for (v, &k) in g.iter_mut().zip(&self.inside[2]) {
                                *v /= outer * k;
                            }
                        } else {
                            let full = self.full as f32;
                            g.iter_mut().for_each(|v| *v /= full);
                        }
                        let w01 = ((t0 * self.window[1] + t1) * self.window[2]) as f32;
                        for (r, phase) in acc.chunks_exact_mut(phase_len).enumerate() {
                            let count = iw.saturating_sub(r).div_ceil(sw);
                            // Taps reaching this phase, last first: column m·sw + r of dx is
                            // tap k of output m + (r + pw - k) / sw.
                            for k in (0..kw).rev() {
                                if (r + pw) % sw != k % sw {
                                    continue;
                                }
                                let off = (r + pw) as isize - k as isize;
                                let off = off.div_euclid(sw as isize);
                                let lo = (-off).max(0) as usize;
                                let hi = (count as isize).min(ow as isize - off).max(0) as usize;
                                if lo >= hi {
                                    continue;
                                }
                                let (from, to) =
                                    ((lo as isize + off) as usize, (hi as isize + off) as usize);
                                let dst = &mut phase[lo..hi];
                                if ptrs.maxima.is_some() {
                                    let w = w01 + k as f32;
                                    add_where(dst, &s.dy[from..to], &s.max[from..to], w);
                                } else {
                                    add(dst, &s.dy[from..to]);
                                }
                            }
                        }
                    }
                }
                // Back to the row's order (pairs at stride 2, which the compiler interleaves in
                // vector registers), then into dx.
                let out = &mut s.row[..iw];
                match sw {
                    1 => out.copy_from_slice(&acc[..iw]),
                    2 => {
                        let (even, odd) = acc.split_at(phase_len);
                        for ((pair, &e), &o) in out.chunks_exact_mut(2).zip(even).zip(odd) {
                            pair[0] = e;
                            pair[1] = o;
                        }
                        if iw % 2 == 1 {
                            out[iw - 1] = even[iw / 2];
                        }
                    }
                    _ => {
                        for (r, phase) in acc.chunks_exact(phase_len).enumerate() {
                            for (d, &v) in out.iter_mut().skip(r).step_by(sw).zip(phase) {
                                *d = v;
                            }
                        }
                    }
                }
                let at = dxb + self.dx.at([p0, p1, 0]);
                // SAFETY: this task owns plane (n, c) of dx.
                unsafe {
                    store(
                        ptrs.dx.get(),
                        self.dx.data_type,
                        at,
                        self.dx.spatial[2],
                        out,
                    )
                };
            }
        }
    }

    /// [`Backward::gather_plane_body`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor has AVX-512 F; otherwise as for [`Backward::gather_plane_body`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn gather_plane_avx512(
        &self,
        ptrs: &Ptrs<'_>,
        n: usize,
        c: usize,
        s: &mut PlaneScratch,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.gather_plane_body(ptrs, n, c, s) }
    }

    /// [`Backward::gather_plane_body`] compiled for AVX2.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; otherwise as for [`Backward::gather_plane_body`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn gather_plane_avx2(&self, ptrs: &Ptrs<'_>, n: usize, c: usize, s: &mut PlaneScratch) {
        // SAFETY: forwarded contract.
        unsafe { self.gather_plane_body(ptrs, n, c, s) }
    }

    /// [`Backward::gather_plane_body`] at the best level this processor runs (capped by
    /// `KILN_CPU_ISA`; every level gives the same bits).
    ///
    /// # Safety
    /// As for [`Backward::gather_plane_body`].
    unsafe fn gather_plane(&self, ptrs: &Ptrs<'_>, n: usize, c: usize, s: &mut PlaneScratch) {
        #[cfg(target_arch = "x86_64")]
        match super::isa::best_available() {
            // SAFETY (both arms): the level is one this processor runs.
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                return unsafe { self.gather_plane_avx512(ptrs, n, c, s) }
            }
            Isa::Avx2 => return unsafe { self.gather_plane_avx2(ptrs, n, c, s) },
            Isa::Portable => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.gather_plane_body(ptrs, n, c, s) }
    }

    /// The outputs along spatial dim `d` whose windows cover x position `p` (a range).
    #[inline(always)]
    fn cover(&self, d: usize, p: i64) -> (i64, i64) {
        let (st, top) = (self.stride[d], p + self.pre[d]);
        let first = top - self.window[d] + 1;
        let lo = if first <= 0 { 0 } else { (first + st - 1) / st };
        (lo, (top / st).min(self.output[d] - 1) + 1)
    }

    fn plane_scratch(&self) -> PlaneScratch {
        let (iw, ow, sw) = (
            self.input[2] as usize,
            self.output[2] as usize,
            self.stride[2] as usize,
        );
        PlaneScratch {
            acc: vec![0.0; iw.div_ceil(sw) * sw],
            dy: vec![0.0; ow],
            max: vec![0.0; ow],
            row: vec![0.0; iw],
        }
    }

    /// dx at x position `flat` of batch `n`, every channel.
    ///
    /// # Safety
    /// As for [`Backward::gather_plane`], for position (n, flat).
    unsafe fn gather_channels(
        &self,
        ptrs: &Ptrs<'_>,
        n: usize,
        flat: usize,
        scratch: &mut Scratch,
    ) {
        let c = self.c;
        let p = Self::coords(&self.input, flat);
        let (acc, aux, run) = (&mut scratch.acc, &mut scratch.aux, &mut scratch.run);
        acc[..c].fill(0.0);
        let dyb = self.dy.base(n, 0);
        self.for_each_cover(p, |o, w| {
            // SAFETY: o is a position of dy; channels run along dy's channel stride.
            unsafe {
                load(
                    ptrs.dy.get(),
                    self.dy.data_type,
                    dyb + self.dy.at(o),
                    self.dy.c,
                    &mut run[..c],
                )
            };
            match ptrs.maxima {
                Some((mp, mio)) => {
                    // SAFETY: the maxima share dy's dims.
                    unsafe {
                        load(
                            mp.get(),
                            mio.data_type,
                            mio.base(n, 0) + mio.at(o),
                            mio.c,
                            &mut aux[..c],
                        )
                    };
                    let w = w as f32;
                    for ((a, &g), &i) in acc[..c].iter_mut().zip(&run[..c]).zip(&aux[..c]) {
                        *a += if i == w { g } else { 0.0 };
                    }
                }
                None => {
                    let d = self.divisor(o);
                    acc[..c]
                        .iter_mut()
                        .zip(&run[..c])
                        .for_each(|(a, &g)| *a += g / d);
                }
            }
        });
        // SAFETY: this task owns position (n, flat) of dx for every channel.
        unsafe {
            store(
                ptrs.dx.get(),
                self.dx.data_type,
                self.dx.base(n, 0) + self.dx.at(p),
                self.dx.c,
                &acc[..c],
            )
        };
    }

    fn scratch(&self) -> Scratch {
        Scratch {
            acc: vec![0.0; self.c],
            aux: vec![0.0; self.c],
            run: vec![0.0; self.c],
        }
    }
}

/// The pointers of one execute call.
struct Ptrs<'a> {
    dy: SharedPtr,
    dx: SharedPtr,
    /// The index input or the workspace of maxima, with its address pattern.
    maxima: Option<(SharedPtr, &'a Io)>,
}

/// Per-task buffers of the plane loops: a dx row split into the stride's phases, a row of dy
/// and of the maxima (as f32), the dx row in order.
struct PlaneScratch {
    acc: Vec<f32>,
    dy: Vec<f32>,
    max: Vec<f32>,
    row: Vec<f32>,
}

/// Adds `g[i]` to `acc[i]` where `max[i]` is `w` (a vector loop: no branch).
#[inline(always)]
fn add_where(acc: &mut [f32], g: &[f32], max: &[f32], w: f32) {
    for ((a, &g), &m) in acc.iter_mut().zip(g).zip(max) {
        *a += if m == w { g } else { 0.0 };
    }
}

/// Adds `g` to `acc`.
#[inline(always)]
fn add(acc: &mut [f32], g: &[f32]) {
    for (a, &g) in acc.iter_mut().zip(g) {
        *a += g;
    }
}

/// Per-task buffers of the channels-inner loops.
struct Scratch {
    acc: Vec<f32>,
    aux: Vec<f32>,
    run: Vec<f32>,
}

impl Prepared for Backward {
    fn workspace_size(&self) -> usize {
        match &self.maxima {
            Maxima::FromX { .. } => self
                .n
                .saturating_mul(self.c)
                .saturating_mul(Self::positions(&self.output))
                .saturating_mul(4),
            _ => 0,
        }
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, workspace: *mut u8) -> PluginResult<()> {
        let maxima = match &self.maxima {
            Maxima::None => None,
            Maxima::Index(io) => Some((SharedPtr(tensors.ptr(io.uid)?), io)),
            Maxima::FromX {
                x,
                workspace: wio,
                argmax,
            } => {
                if workspace.is_null() {
                    return Err(PluginError::bad_param(format!(
                        "{NAME}: max pooling backward from x needs a workspace of {} bytes",
                        self.workspace_size()
                    )));
                }
                let (xp, wp) = (SharedPtr(tensors.ptr(x.uid)?), SharedPtr(workspace));
                // SAFETY: x is bound for this call; the workspace holds workspace_size()
                // bytes laid out as `wio`, and only this pass writes it.
                unsafe { argmax.run(xp, wp) };
                Some((wp, wio))
            }
        };
        let ptrs = Ptrs {
            dy: SharedPtr(tensors.ptr(self.dy.uid)?),
            dx: SharedPtr(tensors.ptr(self.dx.uid)?),
            maxima,
        };
        if self.channels_inner {
            let positions = Self::positions(&self.input);
            pool::for_each_init(
                self.n * positions,
                1,
                || self.scratch(),
                |s, task| {
                    // SAFETY: execute's contract; tasks own distinct dx positions.
                    unsafe { self.gather_channels(&ptrs, task / positions, task % positions, s) }
                },
            );
        } else {
            pool::for_each_init(
                self.n * self.c,
                1,
                || self.plane_scratch(),
                |s, task| {
                    // SAFETY: execute's contract; tasks own distinct dx planes.
                    unsafe { self.gather_plane(&ptrs, task / self.c, task % self.c, s) }
                },
            );
        }
        Ok(())
    }
}
