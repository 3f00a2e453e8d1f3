//! `KILN_CPU_CONV_DGRAD_GEMM_V1` and `KILN_CPU_CONV_WGRAD_GEMM_V1`: the two convolution
//! gradients through GEMM, without epilogues.
//!
//! Data gradient: per image, the weights' transpose times a tile of dy gives the tile's patch
//! gradients, which col2im adds into an f32 image of dx in the worker's workspace; the finished
//! image is stored into dx. Weight gradient: each worker unrolls tiles of x (im2col) and
//! accumulates dy-tile times patches-transposed into its own f32 copy of dw; the copies are
//! summed and stored. Any layout and f32/f16/bf16 tensors, 1 to 3 spatial dims, groups.

use super::geometry::{filter_runs, im2col, pack_weights, Shape};
use crate::engine::{CpuEngine, Prepared};
use crate::fast::element_io::{gather, load, store, SharedPtr};
use crate::fast::epilogue::check_data_type;
use crate::fast::isa::{isa_knob, isa_to_run, resolve_isa_knob, Isa};
use crate::fast::pool;
use crate::fast::sgemm::sgemm;
use crate::tensor_map::TensorMap;
use kiln_core::{ConvDirection, ConvOp, Op, OpGraph};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{KnobDescriptor, PluginError, PluginResult};

/// The data-gradient engine's unique name.
pub const DGRAD_NAME: &str = "KILN_CPU_CONV_DGRAD_GEMM_V1";
/// The weight-gradient engine's unique name.
pub const WGRAD_NAME: &str = "KILN_CPU_CONV_WGRAD_GEMM_V1";

/// Knob of both engines: per-worker scratch regions in the workspace (images of dx, or copies of
/// dw, accumulated at once); 0 = choose at build time (see [`crate::fast::WORKSPACE_SLOTS_KNOB`]).
pub const KNOB_WORKSPACE_SLOTS: i64 = 1;
/// Knob: the instruction set of the GEMM kernels (see [`crate::fast::isa`]); 0 = the best at
/// build time.
pub const KNOB_ISA: i64 = 2;

/// Patch floats one tile aims for, as in the forward engine.
const TARGET_COL_FLOATS: usize = 128 * 1024;
const ALIGN: usize = 64;

/// Convolution data gradient through GEMM.
pub struct ConvDgradEngine;
/// Convolution weight gradient through GEMM.
pub struct ConvWgradEngine;

fn find(graph: &OpGraph, direction: ConvDirection) -> Result<&ConvOp, String> {
    let [node] = &graph.nodes[..] else {
        return Err(format!(
            "the graph has {} nodes; this engine runs one {} node (no fused epilogue)",
            graph.nodes.len(),
            describe(direction)
        ));
    };
    match &node.op {
        Op::Conv(c) if c.direction == direction => {
            for uid in [c.x, c.w, c.y] {
                check_data_type(graph, uid)?;
            }
            Ok(c)
        }
        other => Err(format!(
            "node '{}' is {}; this engine runs {}",
            node.name,
            other.describe(),
            describe(direction)
        )),
    }
}

fn describe(direction: ConvDirection) -> &'static str {
    match direction {
        ConvDirection::Fprop => "conv_fprop",
        ConvDirection::Dgrad => "conv_dgrad",
        ConvDirection::Wgrad => "conv_wgrad",
    }
}

impl CpuEngine for ConvDgradEngine {
    fn name(&self) -> &'static str {
        DGRAD_NAME
    }
    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }
    /// Accepts a graph of exactly one conv_dgrad node over f32/f16/bf16 tensors.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        find(graph, ConvDirection::Dgrad).map(|_| ())
    }
    fn knobs(&self) -> Vec<KnobDescriptor> {
        vec![
            crate::fast::workspace_slots_knob(KNOB_WORKSPACE_SLOTS),
            isa_knob(KNOB_ISA),
        ]
    }
    fn resolve_auto_knobs(&self, _graph: &OpGraph, knobs: &mut [i64]) {
        crate::fast::resolve_workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        resolve_isa_knob(knobs, KNOB_ISA, Isa::Avx512);
    }
    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        let conv = find(graph, ConvDirection::Dgrad)
            .map_err(|why| PluginError::not_supported(format!("{DGRAD_NAME}: {why}")))?;
        let slots = crate::fast::workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        Ok(Box::new(GradPlan::new(
            graph,
            conv,
            ConvDirection::Dgrad,
            slots,
            isa_to_run(DGRAD_NAME, knobs, KNOB_ISA),
        )?))
    }
}

impl CpuEngine for ConvWgradEngine {
    fn name(&self) -> &'static str {
        WGRAD_NAME
    }
    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_DETERMINISTIC | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }
    /// Accepts a graph of exactly one conv_wgrad node over f32/f16/bf16 tensors.
    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        find(graph, ConvDirection::Wgrad).map(|_| ())
    }
    fn knobs(&self) -> Vec<KnobDescriptor> {
        vec![
            crate::fast::workspace_slots_knob(KNOB_WORKSPACE_SLOTS),
            isa_knob(KNOB_ISA),
        ]
    }
    fn resolve_auto_knobs(&self, _graph: &OpGraph, knobs: &mut [i64]) {
        crate::fast::resolve_workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        resolve_isa_knob(knobs, KNOB_ISA, Isa::Avx512);
    }
    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        let conv = find(graph, ConvDirection::Wgrad)
            .map_err(|why| PluginError::not_supported(format!("{WGRAD_NAME}: {why}")))?;
        let slots = crate::fast::workspace_slots(knobs, KNOB_WORKSPACE_SLOTS);
        Ok(Box::new(GradPlan::new(
            graph,
            conv,
            ConvDirection::Wgrad,
            slots,
            isa_to_run(WGRAD_NAME, knobs, KNOB_ISA),
        )?))
    }
}

struct GradPlan {
    s: Shape,
    direction: ConvDirection,
    x_uid: i64,
    w_uid: i64,
    y_uid: i64,
    y_type: kiln_core::DataType,
    /// dy strides: N, K, and the offset of each output position.
    ys: (isize, isize),
    y_positions: Vec<isize>,
    /// dy's output positions are `index * step` apart when `Some`.
    y_step: Option<isize>,
    tile_positions: usize,
    chunks: usize,
    /// Per-worker scratch regions in the workspace, fixed when the plan is prepared (at most the
    /// `workspace_slots` knob); the scratch-using loop runs at most this many tasks.
    regions: usize,
    /// The instruction set the GEMMs run with.
    isa: Isa,
}

impl GradPlan {
    fn new(
        graph: &OpGraph,
        conv: &ConvOp,
        direction: ConvDirection,
        slots: usize,
        isa: Isa,
    ) -> PluginResult<GradPlan> {
        let s = Shape::new(graph, conv)?;
        let y = graph.tensor(conv.y).ok_or_else(|| {
            PluginError::internal(format!("tensor uid {} is not in the graph", conv.y))
        })?;
        let mut sp = [0isize; 3];
        for (i, &st) in y.strides[2..].iter().enumerate() {
            sp[3 - (y.strides.len() - 2) + i] = st as isize;
        }
        let mut y_positions = Vec::with_capacity(s.positions());
        for o0 in 0..s.output[0] {
            for o1 in 0..s.output[1] {
                for o2 in 0..s.output[2] {
                    y_positions
                        .push(o0 as isize * sp[0] + o1 as isize * sp[1] + o2 as isize * sp[2]);
                }
            }
        }
        let step = y_positions.get(1).copied().unwrap_or(1);
        let linear = y_positions
            .iter()
            .enumerate()
            .all(|(i, &o)| o == i as isize * step);
        let positions = s.positions();
        let want = (TARGET_COL_FLOATS / s.patch().max(1)).clamp(32, 1024);
        let chunks = positions.div_ceil(want);
        let tile_positions = positions.div_ceil(chunks).min(positions);
        let chunks = positions.div_ceil(tile_positions);
        // Tasks of the scratch-using loop: images (dgrad) or tiles (wgrad).
        let items = match direction {
            ConvDirection::Dgrad => s.n,
            _ => s.n * s.groups * chunks,
        };
        Ok(GradPlan {
            direction,
            x_uid: conv.x,
            w_uid: conv.w,
            y_uid: conv.y,
            y_type: y.data_type,
            ys: (y.strides[0] as isize, y.strides[1] as isize),
            y_positions,
            y_step: linear.then_some(step),
            tile_positions,
            chunks,
            regions: slots.min(items).max(1),
            isa,
            s,
        })
    }

    fn in_positions(&self) -> usize {
        self.s.input.iter().product()
    }

    /// f32 per worker: [accumulator, patches, dy tile], each rounded to the alignment.
    fn slot_floats(&self) -> [usize; 3] {
        let round = |v: usize| v.next_multiple_of(ALIGN / 4);
        let acc = match self.direction {
            ConvDirection::Dgrad => self.s.cg * self.s.groups * self.in_positions(),
            _ => self.s.weight_floats(),
        };
        [
            round(acc),
            round(self.s.patch() * self.tile_positions),
            round(self.s.kg * self.tile_positions),
        ]
    }

    fn weight_pack_floats(&self) -> usize {
        match self.direction {
            ConvDirection::Dgrad => self.s.weight_floats().next_multiple_of(ALIGN / 4),
            _ => 0,
        }
    }

    /// Reads dy[n, g*kg.., p0..p0+len] into `tile` as f32 [kg, len].
    ///
    /// # Safety
    /// `y` is dy's bound pointer for a live execute call.
    unsafe fn load_dy(
        &self,
        y: SharedPtr,
        n: usize,
        g: usize,
        p0: usize,
        len: usize,
        tile: &mut [f32],
    ) {
        let s = &self.s;
        for k in 0..s.kg {
            let base = n as isize * self.ys.0 + (g * s.kg + k) as isize * self.ys.1;
            let row = &mut tile[k * len..(k + 1) * len];
            // SAFETY: in-range positions of dy's layout.
            unsafe {
                match self.y_step {
                    Some(step) => load(y.get(), self.y_type, base + p0 as isize * step, step, row),
                    None => gather(
                        y.get(),
                        self.y_type,
                        base,
                        &self.y_positions[p0..p0 + len],
                        row,
                    ),
                }
            }
        }
    }

    /// Adds the patch gradients `col` [patch, len] of group `g` into the f32 image `img`
    /// [C, input positions].
    fn col2im(&self, g: usize, p0: usize, len: usize, col: &[f32], img: &mut [f32]) {
        let s = &self.s;
        let (o1, o2) = (s.output[1], s.output[2]);
        let (i1, i2) = (s.input[1], s.input[2]);
        let in_pos = self.in_positions();
        let taps = s.taps();
        let coord = |o: usize, f: usize, d: usize| -> isize {
            o as isize * s.stride[d] - s.pad[d] + f as isize * s.dilation[d]
        };
        let inside = |i: isize, d: usize| i >= 0 && i < s.input[d] as isize;
        let (sw, dw, pw) = (s.stride[2], s.dilation[2], s.pad[2]);
        for c in 0..s.cg {
            let plane = &mut img[(g * s.cg + c) * in_pos..(g * s.cg + c + 1) * in_pos];
            for f0 in 0..s.filter[0] {
                for f1 in 0..s.filter[1] {
                    for f2 in 0..s.filter[2] {
                        let tap = (f0 * s.filter[1] + f1) * s.filter[2] + f2;
                        let row = &col[(c * taps + tap) * len..(c * taps + tap + 1) * len];
                        // Output widths whose input column is inside: lo..hi.
                        let first = pw - f2 as isize * dw;
                        let lo = if first <= 0 { 0 } else { (first + sw - 1) / sw };
                        let last = i2 as isize - 1 + first;
                        let hi = if last < 0 { 0 } else { last / sw + 1 };
                        let (lo, hi) = (lo.min(o2 as isize) as usize, hi.min(o2 as isize) as usize);
                        let mut pos = 0;
                        while pos < len {
                            let p = p0 + pos;
                            let (od, oh, ow) = (p / (o1 * o2), (p / o2) % o1, p % o2);
                            let seg = (o2 - ow).min(len - pos);
                            let (a, b) = (ow.max(lo), hi.min(ow + seg));
                            let (ia, ib) = (coord(od, f0, 0), coord(oh, f1, 1));
                            if inside(ia, 0) && inside(ib, 1) && a < b {
                                let base = (ia as usize * i1 + ib as usize) * i2;
                                let src = &row[pos + a - ow..pos + b - ow];
                                let iw0 = coord(a, f2, 2) as usize;
                                if sw == 1 {
                                    let dst = &mut plane[base + iw0..base + iw0 + src.len()];
                                    dst.iter_mut().zip(src).for_each(|(d, &v)| *d += v);
                                } else {
                                    for (j, &v) in src.iter().enumerate() {
                                        plane[base + iw0 + j * sw as usize] += v;
                                    }
                                }
                            }
                            pos += seg;
                        }
                    }
                }
            }
        }
    }

    /// # Safety
    /// Execute's contract.
    unsafe fn dgrad(
        &self,
        tensors: &TensorMap<'_>,
        wpack: &[f32],
        bufs: &mut [f32],
    ) -> PluginResult<()> {
        let s = &self.s;
        let (x, y) = (
            SharedPtr(tensors.ptr(self.x_uid)?),
            SharedPtr(tensors.ptr(self.y_uid)?),
        );
        let [acc_f, col_f, tile_f] = self.slot_floats();
        let per_slot = acc_f + col_f + tile_f;
        let slots = self.regions.min(s.n).max(1);
        let patch = s.patch();
        let in_pos = self.in_positions();
        pool::for_each_chunk_mut(&mut bufs[..slots * per_slot], per_slot, |slot, buf| {
            let (img, rest) = buf.split_at_mut(acc_f);
            let (col, tile) = rest.split_at_mut(col_f);
            for n in (slot * s.n / slots)..((slot + 1) * s.n / slots) {
                img.fill(0.0);
                for g in 0..s.groups {
                    for chunk in 0..self.chunks {
                        let p0 = chunk * self.tile_positions;
                        let len = self.tile_positions.min(s.positions() - p0);
                        // SAFETY: dy is bound for this call.
                        unsafe { self.load_dy(y, n, g, p0, len, tile) };
                        // SAFETY: col = W_g^T [patch, kg] * dy tile [kg, len], all in the
                        // worker's buffers and the packed weights.
                        unsafe {
                            sgemm(
                                self.isa,
                                patch,
                                len,
                                s.kg,
                                (col.as_mut_ptr(), len as isize, 1),
                                (wpack.as_ptr().add(g * s.kg * patch), 1, patch as isize),
                                (tile.as_ptr(), len as isize, 1),
                                false,
                                1,
                            )
                        };
                        self.col2im(g, p0, len, &col[..patch * len], img);
                    }
                }
                for c in 0..s.cg * s.groups {
                    for a in 0..s.input[0] {
                        for b in 0..s.input[1] {
                            let off = n as isize * s.xs.0
                                + c as isize * s.xs.1
                                + a as isize * s.xs.2[0]
                                + b as isize * s.xs.2[1];
                            let start = c * in_pos + (a * s.input[1] + b) * s.input[2];
                            // SAFETY: one row of image n of dx; images are owned by one
                            // worker each.
                            unsafe {
                                store(
                                    x.get(),
                                    s.x_type,
                                    off,
                                    s.xs.2[2],
                                    &img[start..start + s.input[2]],
                                )
                            };
                        }
                    }
                }
            }
        });
        Ok(())
    }

    /// # Safety
    /// Execute's contract.
    unsafe fn wgrad(&self, tensors: &TensorMap<'_>, bufs: &mut [f32]) -> PluginResult<()> {
        let s = &self.s;
        let (x, y) = (
            SharedPtr(tensors.ptr(self.x_uid)?),
            SharedPtr(tensors.ptr(self.y_uid)?),
        );
        let w = SharedPtr(tensors.ptr(self.w_uid)?);
        let [acc_f, col_f, tile_f] = self.slot_floats();
        let per_slot = acc_f + col_f + tile_f;
        let items = s.n * s.groups * self.chunks;
        let slots = self.regions.min(items).max(1);
        let patch = s.patch();
        let bufs = &mut bufs[..slots * per_slot];
        pool::for_each_chunk_mut(bufs, per_slot, |slot, buf| {
            let (acc, rest) = buf.split_at_mut(acc_f);
            let (col, tile) = rest.split_at_mut(col_f);
            acc.fill(0.0);
            for item in (slot * items / slots)..((slot + 1) * items / slots) {
                let (n, g, chunk) = (
                    item / (s.groups * self.chunks),
                    (item / self.chunks) % s.groups,
                    item % self.chunks,
                );
                let p0 = chunk * self.tile_positions;
                let len = self.tile_positions.min(s.positions() - p0);
                // SAFETY: x and dy are bound for this call.
                unsafe {
                    im2col(s, false, x, n, g, p0, len, col);
                    self.load_dy(y, n, g, p0, len, tile);
                }
                // SAFETY: acc_g [kg, patch] += dy tile [kg, len] * col^T [len, patch], all in
                // the worker's buffers.
                unsafe {
                    sgemm(
                        self.isa,
                        s.kg,
                        patch,
                        len,
                        (acc.as_mut_ptr().add(g * s.kg * patch), patch as isize, 1),
                        (tile.as_ptr(), len as isize, 1),
                        (col.as_ptr(), 1, len as isize),
                        true,
                        1,
                    )
                };
            }
        });
        // Sum the workers' copies into the first and store it.
        let (first, others) = bufs.split_at_mut(per_slot);
        let total = &mut first[..s.weight_floats()];
        for other in others.chunks(per_slot) {
            total.iter_mut().zip(other).for_each(|(t, &o)| *t += o);
        }
        let taps = s.taps();
        for (k, row) in total.chunks(patch).enumerate() {
            filter_runs(s, k, |off, c, tap0| {
                let i = c * taps + tap0;
                // SAFETY: a run of in-range filter positions of dw's layout.
                unsafe { store(w.get(), s.w_type, off, s.ws.2[2], &row[i..i + s.filter[2]]) };
            });
        }
        Ok(())
    }
}

impl Prepared for GradPlan {
    fn workspace_size(&self) -> usize {
        let [a, b, c] = self.slot_floats();
        ALIGN + 4 * (self.weight_pack_floats() + self.regions * (a + b + c))
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, workspace: *mut u8) -> PluginResult<()> {
        if workspace.is_null() {
            return Err(PluginError::bad_param(format!(
                "conv gradient: the workspace is null but {} bytes are needed",
                self.workspace_size()
            )));
        }
        let skip = workspace.align_offset(ALIGN);
        let floats = (self.workspace_size() - ALIGN) / 4;
        // SAFETY: the caller provides workspace_size() bytes; after aligning we use at most
        // workspace_size() - ALIGN of them, as f32.
        let ws = unsafe { std::slice::from_raw_parts_mut(workspace.add(skip) as *mut f32, floats) };
        let (wpack, bufs) = ws.split_at_mut(self.weight_pack_floats());
        match self.direction {
            ConvDirection::Dgrad => {
                let w = SharedPtr(tensors.ptr(self.w_uid)?);
                // SAFETY: w is bound for this call.
                unsafe { pack_weights(&self.s, false, w, wpack) };
                // SAFETY: forwarded contract.
                unsafe { self.dgrad(tensors, wpack, bufs) }
            }
            // SAFETY: forwarded contract.
            _ => unsafe { self.wgrad(tensors, bufs) },
        }
    }
}
