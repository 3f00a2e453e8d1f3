//! `KILN_CPU_RESAMPLE_BACKWARD_V1`: pooling's backward (a graph of one `resample_backward`
//! node) in f32, on rayon.
//!
//! dx is gathered, never scattered: each dx element sums, in row-major order of the output
//! positions, the dy of the windows that cover it (per spatial dim the outputs `o` with
//! `o * stride - pre <= p < o * stride - pre + window`). No two tasks write one element and the
//! order of the additions is fixed, so results are deterministic. Per window:
//! - max pooling adds dy where the window's maximum is this element: the index input names it
//!   (a value equal to this element's window position; anything else, padded positions and
//!   values that are not whole included, routes nothing), or, without an index, a first pass
//!   finds every window's maximum in x again (the forward's rules: padding is never a maximum,
//!   NaN is the largest value, the first maximum in row-major window order wins) into the
//!   plan's workspace;
//! - the including average adds dy / (window elements), the excluding one dy / (the window's
//!   elements inside x, the product of the per-dim counts).
//!
//! Two loop orders, as in the forward: when channels are the innermost dim of dy and dx a task
//! takes one dx position for every channel (the channel loops vectorise); otherwise a task takes
//! one (n, c) plane.

use super::element_io::{load, load_one, store, SharedPtr};
use super::epilogue::check_data_type;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::resample::{ResampleMode, ResampleOp};
use kiln_core::{DataType, GenericOp, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};
use rayon::prelude::*;

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
#[derive(Debug, Clone)]
enum Maxima {
    /// Not max pooling.
    None,
    /// The index input.
    Index(Io),
    /// Found again from x (the forward input) by a first pass into the workspace, an f32
    /// window position per dy element laid out as `workspace`.
    FromX { x: Io, workspace: Io },
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

/// Whether channels are the innermost dim of `t` (and there is more than one).
fn channels_innermost(t: &TensorDesc) -> bool {
    let sc = t.strides[1];
    t.dims[1] > 1
        && t.dims
            .iter()
            .zip(&t.strides)
            .enumerate()
            .all(|(i, (&d, &s))| i == 1 || d == 1 || s > sc)
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
                let x = Io::of(graph.tensor_for(x, name)?);
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
                Maxima::FromX { x, workspace }
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

    /// Calls `f(w, q)` for every position `w` (row-major) of window `o` whose x position `q`
    /// lies inside x.
    #[inline]
    fn for_each_tap(&self, o: [i64; 3], mut f: impl FnMut(usize, [i64; 3])) {
        let start: [i64; 3] = std::array::from_fn(|d| o[d] * self.stride[d] - self.pre[d]);
        let mut w = 0usize;
        for t0 in 0..self.window[0] {
            for t1 in 0..self.window[1] {
                for t2 in 0..self.window[2] {
                    let q = [start[0] + t0, start[1] + t1, start[2] + t2];
                    if (0..3).all(|d| q[d] >= 0 && q[d] < self.input[d]) {
                        f(w, q);
                    }
                    w += 1;
                }
            }
        }
    }

    /// First pass of max pooling without an index: the maximum's window position of every
    /// window of plane (n, c), into `ws`.
    ///
    /// # Safety
    /// `x` and `ws` address x and the workspace of a live execute call; no other task writes
    /// plane (n, c) of the workspace.
    unsafe fn argmax_plane(&self, x: (SharedPtr, &Io), ws: (SharedPtr, &Io), n: usize, c: usize) {
        let (xb, wb) = (x.1.base(n, c), ws.1.base(n, c));
        for flat in 0..Self::positions(&self.output) {
            let o = Self::coords(&self.output, flat);
            let (mut best, mut arg) = (f32::NEG_INFINITY, f32::NAN);
            self.for_each_tap(o, |w, q| {
                // SAFETY: q lies inside x.
                let v = unsafe { load_one(x.0.get(), x.1.data_type, xb + x.1.at(q)) };
                if arg.is_nan() || (v.is_nan() && !best.is_nan()) || v > best {
                    best = v;
                    arg = w as f32;
                }
            });
            // SAFETY: this task owns plane (n, c) of the workspace.
            unsafe { store(ws.0.get(), DataType::F32, wb + ws.1.at(o), 1, &[arg]) };
        }
    }

    /// As [`Backward::argmax_plane`] for output position `flat` of batch `n`, every channel.
    ///
    /// # Safety
    /// As for [`Backward::argmax_plane`], for position (n, flat).
    unsafe fn argmax_channels(
        &self,
        x: (SharedPtr, &Io),
        ws: (SharedPtr, &Io),
        n: usize,
        flat: usize,
        scratch: &mut Scratch,
    ) {
        let c = self.c;
        let o = Self::coords(&self.output, flat);
        let (best, arg, run) = (&mut scratch.acc, &mut scratch.aux, &mut scratch.run);
        best[..c].fill(f32::NEG_INFINITY);
        arg[..c].fill(f32::NAN);
        self.for_each_tap(o, |w, q| {
            // SAFETY: the tap lies inside x; channels run along x's channel stride.
            unsafe {
                load(
                    x.0.get(),
                    x.1.data_type,
                    x.1.base(n, 0) + x.1.at(q),
                    x.1.c,
                    &mut run[..c],
                )
            };
            for ((b, i), &v) in best[..c].iter_mut().zip(&mut arg[..c]).zip(&run[..c]) {
                if i.is_nan() || (v.is_nan() && !b.is_nan()) || v > *b {
                    *b = v;
                    *i = w as f32;
                }
            }
        });
        // SAFETY: this task owns position (n, flat) of the workspace.
        unsafe {
            store(
                ws.0.get(),
                DataType::F32,
                ws.1.base(n, 0) + ws.1.at(o),
                ws.1.c,
                &arg[..c],
            )
        };
    }

    /// dx of plane (n, c).
    ///
    /// # Safety
    /// `ptrs` are dy, dx and the maxima (index or workspace) of a live execute call; no other
    /// task writes plane (n, c) of dx.
    unsafe fn gather_plane(&self, ptrs: &Ptrs<'_>, n: usize, c: usize) {
        let (dyb, dxb) = (self.dy.base(n, c), self.dx.base(n, c));
        let maxb = ptrs.maxima.map(|(_, io)| io.base(n, c));
        for flat in 0..Self::positions(&self.input) {
            let p = Self::coords(&self.input, flat);
            let mut acc = 0f32;
            self.for_each_cover(p, |o, w| match (ptrs.maxima, maxb) {
                (Some((mp, mio)), Some(mb)) => {
                    // SAFETY: o is a position of dy, whose dims the maxima share.
                    let i = unsafe { load_one(mp.get(), mio.data_type, mb + mio.at(o)) };
                    if i == w as f32 {
                        // SAFETY: as above.
                        acc += unsafe {
                            load_one(ptrs.dy.get(), self.dy.data_type, dyb + self.dy.at(o))
                        };
                    }
                }
                _ => {
                    // SAFETY: as above.
                    let g =
                        unsafe { load_one(ptrs.dy.get(), self.dy.data_type, dyb + self.dy.at(o)) };
                    acc += g / self.divisor(o);
                }
            });
            // SAFETY: this task owns plane (n, c) of dx.
            unsafe {
                store(
                    ptrs.dx.get(),
                    self.dx.data_type,
                    dxb + self.dx.at(p),
                    1,
                    &[acc],
                )
            };
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
            Maxima::FromX { x, workspace: wio } => {
                if workspace.is_null() {
                    return Err(PluginError::bad_param(format!(
                        "{NAME}: max pooling backward from x needs a workspace of {} bytes",
                        self.workspace_size()
                    )));
                }
                let (xp, wp) = (SharedPtr(tensors.ptr(x.uid)?), SharedPtr(workspace));
                let positions = Self::positions(&self.output);
                if self.channels_inner {
                    (0..self.n * positions).into_par_iter().for_each_init(
                        || self.scratch(),
                        |s, task| {
                            // SAFETY: execute's contract; tasks own distinct positions.
                            unsafe {
                                self.argmax_channels(
                                    (xp, x),
                                    (wp, wio),
                                    task / positions,
                                    task % positions,
                                    s,
                                )
                            }
                        },
                    );
                } else {
                    (0..self.n * self.c).into_par_iter().for_each(|task| {
                        // SAFETY: execute's contract; tasks own distinct planes.
                        unsafe {
                            self.argmax_plane((xp, x), (wp, wio), task / self.c, task % self.c)
                        }
                    });
                }
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
            (0..self.n * positions).into_par_iter().for_each_init(
                || self.scratch(),
                |s, task| {
                    // SAFETY: execute's contract; tasks own distinct dx positions.
                    unsafe { self.gather_channels(&ptrs, task / positions, task % positions, s) }
                },
            );
        } else {
            (0..self.n * self.c).into_par_iter().for_each(|task| {
                // SAFETY: execute's contract; tasks own distinct dx planes.
                unsafe { self.gather_plane(&ptrs, task / self.c, task % self.c) }
            });
        }
        Ok(())
    }
}
