//! `KILN_CPU_RESAMPLE_V1`: pooling (a graph of one `resample` node) in f32, on rayon.
//!
//! Two loop orders, both for any strides: when channels are x's innermost dim (NHWC, NDHWC) a
//! task pools one output position for every channel at once, loading each window tap's channel
//! run in one go; otherwise (NCHW, NCDHW, other orders) a task pools one (n, c) plane. The
//! arithmetic is the reference's (`kiln_core::ops::resample`): padding is never a maximum and
//! counts as zeros in averages, NaN propagates, the index is the first maximum's row-major
//! window position.

use super::element_io::{load, load_one, store, SharedPtr};
use super::epilogue::check_data_type;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::resample::{ResampleMode, ResampleOp};
use kiln_core::{DataType, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};
use rayon::prelude::*;

/// The engine's unique name.
pub const NAME: &str = "KILN_CPU_RESAMPLE_V1";

/// Pooling forward.
pub struct ResampleEngine;

/// The resample node of `graph`, or why this engine does not run the graph.
fn node(graph: &OpGraph) -> Result<(&kiln_core::GenericOp, &str), String> {
    graph.single_generic("resample", "resample (pooling)")
}

impl CpuEngine for ResampleEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }

    /// Accepts one resample node over f32/f16/bf16 tensors, with an i8, i32 or f32 index.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        let (op, _) = node(graph)?;
        for port in ["x"] {
            if let Some(&uid) = op.inputs.get(port) {
                check_data_type(graph, uid)?;
            }
        }
        if let Some(&uid) = op.outputs.get("y") {
            check_data_type(graph, uid)?;
        }
        if let Some(&uid) = op.outputs.get("index") {
            let t = graph
                .tensor(uid)
                .ok_or_else(|| format!("tensor uid {uid} is not in the graph"))?;
            if !matches!(t.data_type, DataType::I8 | DataType::I32 | DataType::F32) {
                return Err(format!(
                    "index {} is {}; this engine writes i8, i32 or f32 indices",
                    t.label(),
                    t.data_type
                ));
            }
        }
        Ok(())
    }

    fn prepare(&self, graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        self.supports(graph)
            .map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        Ok(Box::new(Pooling::new(graph)?))
    }
}

/// One tensor's address pattern: its UID, type and strides (elements).
#[derive(Debug, Clone)]
struct Io {
    uid: i64,
    data_type: DataType,
    strides: Vec<isize>,
}

impl Io {
    fn of(t: &TensorDesc) -> Io {
        Io {
            uid: t.uid,
            data_type: t.data_type,
            strides: t.strides.iter().map(|&s| s as isize).collect(),
        }
    }
}

/// A prepared pooling.
struct Pooling {
    mode: ResampleMode,
    n: usize,
    c: usize,
    /// Input and output spatial dims.
    input: Vec<i64>,
    output: Vec<i64>,
    stride: Vec<i64>,
    pre: Vec<i64>,
    /// Window taps in row-major order: their offsets within the window per spatial dim.
    taps: Vec<Vec<i64>>,
    x: Io,
    y: Io,
    index: Option<Io>,
    /// Channels are x's and y's innermost dim.
    channels_inner: bool,
}

impl Pooling {
    fn new(graph: &OpGraph) -> PluginResult<Pooling> {
        let (op, name) =
            node(graph).map_err(|why| PluginError::not_supported(format!("{NAME}: {why}")))?;
        let what = format!("node '{name}' (resample)");
        let x_uid = op.inputs.get("x").copied().unwrap_or_default();
        let x = graph.tensor_for(x_uid, name)?;
        let rank = x.dims.len();
        if !(3..=5).contains(&rank) {
            return Err(PluginError::bad_param(format!(
                "{what}: x needs 1 to 3 spatial dims"
            )));
        }
        let r = ResampleOp::from_generic(op, rank - 2, &what)?;
        let y = graph.tensor_for(r.y, name)?;
        let output = r.geometry.output_dims(&x.dims, &what)?;
        if y.dims != output {
            return Err(PluginError::bad_param(format!(
                "{what}: y has dims {:?}, the pooling gives {output:?}",
                y.dims
            )));
        }
        let index = match r.index {
            Some(i) => Some(Io::of(graph.tensor_for(i, name)?)),
            None => None,
        };
        let g = &r.geometry;
        let mut taps = vec![Vec::new()];
        for &w in &g.window {
            taps = taps
                .into_iter()
                .flat_map(|t: Vec<i64>| {
                    (0..w).map(move |k| {
                        let mut t = t.clone();
                        t.push(k);
                        t
                    })
                })
                .collect();
        }
        let innermost = |t: &TensorDesc| {
            let sc = t.strides[1];
            t.dims[1] > 1
                && t.dims
                    .iter()
                    .zip(&t.strides)
                    .enumerate()
                    .all(|(i, (&d, &s))| i == 1 || d == 1 || s > sc)
        };
        Ok(Pooling {
            mode: r.mode,
            n: x.dims[0] as usize,
            c: x.dims[1] as usize,
            input: x.dims[2..].to_vec(),
            output: output[2..].to_vec(),
            stride: g.stride.clone(),
            pre: g.pre_padding.clone(),
            taps,
            channels_inner: innermost(x) && innermost(y),
            x: Io::of(x),
            y: Io::of(y),
            index,
        })
    }

    /// The output positions of a plane, in row-major order.
    fn positions(&self) -> usize {
        self.output.iter().map(|&d| d as usize).product()
    }

    /// The spatial coordinates of output position `o`.
    fn coords(&self, o: usize) -> [i64; 3] {
        let mut c = [0i64; 3];
        let mut rest = o as i64;
        for d in (0..self.output.len()).rev() {
            c[d] = rest % self.output[d];
            rest /= self.output[d];
        }
        c
    }

    /// Offset (elements) of spatial coordinates `at` in `io`.
    fn spatial_offset(&self, io: &Io, at: &[i64]) -> isize {
        at.iter()
            .enumerate()
            .map(|(d, &p)| p as isize * io.strides[d + 2])
            .sum()
    }

    /// Calls `f(window position, x's spatial offset)` for the window taps of output position
    /// `out` that lie inside x.
    fn for_each_tap(&self, out: &[i64; 3], mut f: impl FnMut(usize, isize)) {
        let rank = self.output.len();
        let mut pos = [0i64; 3];
        'taps: for (w, tap) in self.taps.iter().enumerate() {
            for d in 0..rank {
                let p = out[d] * self.stride[d] - self.pre[d] + tap[d];
                if p < 0 || p >= self.input[d] {
                    continue 'taps;
                }
                pos[d] = p;
            }
            f(w, self.spatial_offset(&self.x, &pos[..rank]));
        }
    }

    fn divisor(&self, inside: usize) -> f32 {
        match self.mode {
            ResampleMode::AvgPoolIncludePadding => self.taps.len() as f32,
            _ => inside.max(1) as f32,
        }
    }

    /// # Safety
    /// `ptrs` are x, y and the index (if any) of a live execute call; no other task writes
    /// output position `o` of batch `n`.
    unsafe fn pool_channels(&self, ptrs: &[SharedPtr], n: usize, o: usize, scratch: &mut Scratch) {
        let c = self.c;
        let out = self.coords(o);
        let x_base = n as isize * self.x.strides[0];
        let (acc, arg, run) = (&mut scratch.acc, &mut scratch.arg, &mut scratch.run);
        let max = self.mode == ResampleMode::MaxPool;
        acc[..c].fill(if max { f32::NEG_INFINITY } else { 0.0 });
        arg[..c].fill(f32::NAN);
        let mut inside = 0usize;
        self.for_each_tap(&out, |w, off| {
            inside += 1;
            // SAFETY: the tap lies inside x; channels run along x's stride 1.
            unsafe {
                load(
                    ptrs[0].get(),
                    self.x.data_type,
                    x_base + off,
                    self.x.strides[1],
                    &mut run[..c],
                )
            };
            if max {
                for ((a, i), &v) in acc[..c].iter_mut().zip(&mut arg[..c]).zip(&run[..c]) {
                    if i.is_nan() || (v.is_nan() && !a.is_nan()) || v > *a {
                        *a = v;
                        *i = w as f32;
                    }
                }
            } else {
                acc[..c]
                    .iter_mut()
                    .zip(&run[..c])
                    .for_each(|(a, &v)| *a += v);
            }
        });
        if !max {
            let d = self.divisor(inside);
            acc[..c].iter_mut().for_each(|a| *a /= d);
        }
        let y_off = n as isize * self.y.strides[0]
            + self.spatial_offset(&self.y, &out[..self.output.len()]);
        // SAFETY: this task owns output position (n, o) for every channel.
        unsafe {
            store(
                ptrs[1].get(),
                self.y.data_type,
                y_off,
                self.y.strides[1],
                &acc[..c],
            )
        };
        if let Some(ix) = &self.index {
            let i_off =
                n as isize * ix.strides[0] + self.spatial_offset(ix, &out[..self.output.len()]);
            // SAFETY: as for y.
            unsafe { store(ptrs[2].get(), ix.data_type, i_off, ix.strides[1], &arg[..c]) };
        }
    }

    /// # Safety
    /// As for [`Pooling::pool_channels`], for plane (n, c).
    unsafe fn pool_plane(&self, ptrs: &[SharedPtr], n: usize, c: usize) {
        let max = self.mode == ResampleMode::MaxPool;
        let x_base = n as isize * self.x.strides[0] + c as isize * self.x.strides[1];
        let rank = self.output.len();
        for o in 0..self.positions() {
            let out = self.coords(o);
            let (mut acc, mut arg, mut inside) =
                (if max { f32::NEG_INFINITY } else { 0.0 }, f32::NAN, 0usize);
            self.for_each_tap(&out, |w, off| {
                inside += 1;
                // SAFETY: the tap lies inside x.
                let v = unsafe { load_one(ptrs[0].get(), self.x.data_type, x_base + off) };
                if max {
                    if arg.is_nan() || (v.is_nan() && !acc.is_nan()) || v > acc {
                        acc = v;
                        arg = w as f32;
                    }
                } else {
                    acc += v;
                }
            });
            if !max {
                acc /= self.divisor(inside);
            }
            let y_off = n as isize * self.y.strides[0]
                + c as isize * self.y.strides[1]
                + self.spatial_offset(&self.y, &out[..rank]);
            // SAFETY: this task owns plane (n, c) of the outputs.
            unsafe { store(ptrs[1].get(), self.y.data_type, y_off, 1, &[acc]) };
            if let Some(ix) = &self.index {
                let i_off = n as isize * ix.strides[0]
                    + c as isize * ix.strides[1]
                    + self.spatial_offset(ix, &out[..rank]);
                // SAFETY: as for y.
                unsafe { store(ptrs[2].get(), ix.data_type, i_off, 1, &[arg]) };
            }
        }
    }
}

/// Per-task buffers of the channels-inner loop.
struct Scratch {
    acc: Vec<f32>,
    arg: Vec<f32>,
    run: Vec<f32>,
}

impl Prepared for Pooling {
    fn workspace_size(&self) -> usize {
        0
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        let mut ptrs = vec![
            SharedPtr(tensors.ptr(self.x.uid)?),
            SharedPtr(tensors.ptr(self.y.uid)?),
        ];
        if let Some(ix) = &self.index {
            ptrs.push(SharedPtr(tensors.ptr(ix.uid)?));
        }
        if self.channels_inner {
            let positions = self.positions();
            let scratch = || Scratch {
                acc: vec![0.0; self.c],
                arg: vec![0.0; self.c],
                run: vec![0.0; self.c],
            };
            (0..self.n * positions)
                .into_par_iter()
                .for_each_init(scratch, |s, task| {
                    // SAFETY: execute's contract; tasks own distinct output positions.
                    unsafe { self.pool_channels(&ptrs, task / positions, task % positions, s) }
                });
        } else {
            (0..self.n * self.c).into_par_iter().for_each(|task| {
                // SAFETY: execute's contract; tasks own distinct planes.
                unsafe { self.pool_plane(&ptrs, task / self.c, task % self.c) }
            });
        }
        Ok(())
    }
}
