//! `KILN_CPU_RESAMPLE_V1`: pooling (a graph of one `resample` node) in f32, on rayon.
//!
//! The outputs are folded 16 at a time in vector registers (AVX-512, two AVX2 registers, or
//! plain loops), each vector folding every tap of its window before it is stored once. Two
//! loop orders, both for any strides, and tasks of whole output rows:
//! - channels not innermost (NCHW, NCDHW, other orders): a vector is 16 outputs of a row. Each
//!   input row a window reads is staged once as f32 between neutral values (-inf for max, 0 for
//!   averages: the padding, and the columns past the row that whole vectors read), so a column
//!   tap of 16 outputs is 16 consecutive values at stride 1, 32 deinterleaved at stride 2, or
//!   16 consecutive values of the row split into the stride's phases at larger strides;
//! - channels innermost (NHWC, NDHWC): a vector is 16 channels of one output, and each tap is a
//!   run of channels, read where it lies when x is f32 with unit channel stride (the last
//!   vector masked), else staged as f32.
//!
//! The arithmetic is the reference's (`kiln_core::ops::resample`), in its order of taps:
//! padding is never a maximum and counts as zeros in averages, NaN propagates, the index is the
//! first maximum's row-major window position. Every level gives the same bits. The buffers a
//! task needs are bounded whatever the window: taps fold in batches of at most [`BATCH`], the
//! results carried from one batch to the next.

use super::element_io::{load, store, SharedPtr};
use super::epilogue::check_data_type;
use super::isa::Isa;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::resample::{ResampleGeometry, ResampleMode, ResampleOp};
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
    window: Vec<i64>,
    /// Taps in the window, as the divisor of an average that counts the padding.
    taps: f32,
    /// The last dim's column taps (plane path): where output 0's value of tap k is in a staged
    /// row (k, or at strides above 2 entry k / stride of phase k % stride).
    columns: Vec<usize>,
    /// Per output of a row (plane path, whole vectors): the first column tap inside x, and
    /// how many are.
    first_column: Vec<f32>,
    inside_columns: Vec<f32>,
    /// Floats of a staged row (see [`Pooling::new`]).
    row_len: usize,
    /// The instruction set the folds run with: the best this processor runs (capped by
    /// `KILN_CPU_ISA`); every level gives the same bits.
    isa: Isa,
    x: Io,
    /// y; `None` when only the positions are wanted ([`Argmax`]).
    y: Option<Io>,
    index: Option<Io>,
    /// Channels are x's and y's innermost dim.
    channels_inner: bool,
}

/// Taps folded per call of a vector kernel (the next call carries the results on), and
/// input rows staged at once.
const BATCH: usize = 256;
const STAGED_ROWS: usize = 16;
/// Floats of one batch of staged channel runs (channels-innermost path, when x's channels are
/// not f32 with unit stride): 256 KiB.
const STAGED_FLOATS: usize = 64 * 1024;
/// Values folded at once: one AVX-512 register of f32 (two at the AVX2 level).
const LANES: usize = 16;
/// The kinds of fold ([`fold_row`]).
const MAX_INDEXED: u8 = 0;
const MAX: u8 = 1;
const SUM: u8 = 2;

/// `n` rounded up to whole vectors of [`LANES`].
fn padded(n: usize) -> usize {
    n.next_multiple_of(LANES)
}

/// Whether channels are the innermost dim of `t` (and there is more than one).
pub(super) fn channels_innermost(t: &TensorDesc) -> bool {
    let sc = t.strides[1];
    t.dims[1] > 1
        && t.dims
            .iter()
            .zip(&t.strides)
            .enumerate()
            .all(|(i, (&d, &s))| i == 1 || d == 1 || s > sc)
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
        let inner = channels_innermost(x) && channels_innermost(y);
        Ok(Pooling::of(
            r.mode,
            x,
            &output,
            &r.geometry,
            Some(Io::of(y)),
            index,
            inner,
        ))
    }

    /// The pooling of x into `output` dims (y and the index as given), its loop order chosen
    /// by `channels_inner`.
    fn of(
        mode: ResampleMode,
        x: &TensorDesc,
        output: &[i64],
        g: &ResampleGeometry,
        y: Option<Io>,
        index: Option<Io>,
        channels_inner: bool,
    ) -> Pooling {
        // The last dim's column taps, for the plane path. A staged row holds input column
        // j - pw at entry j; at strides above 2 it is then split into the stride's phases of
        // `phase_len` values. Either way a vector of 16 outputs (32 entries at stride 2) past
        // any output's first entry lies inside the row.
        let last = g.window.len() - 1;
        let (iw, ow) = (x.dims[last + 2] as usize, output[last + 2] as usize);
        let (sw, pw, kw) = (
            g.stride[last] as usize,
            g.pre_padding[last] as usize,
            g.window[last] as usize,
        );
        let phase_len = (pw + iw).div_ceil(sw).max(padded(ow) + kw / sw + 1);
        let columns = (0..kw)
            .map(|k| {
                if sw <= 2 {
                    k
                } else {
                    (k % sw) * phase_len + k / sw
                }
            })
            .collect();
        // Output o's column taps inside x: k from pw - o·sw to pw + iw - o·sw (exclusive).
        let inside = |o: usize| {
            let lo = pw.saturating_sub(o * sw);
            (lo, kw.min((pw + iw).saturating_sub(o * sw)).max(lo))
        };
        let first_column = (0..padded(ow)).map(|o| inside(o).0 as f32).collect();
        let inside_columns = (0..padded(ow))
            .map(|o| (inside(o).1 - inside(o).0) as f32)
            .collect();
        Pooling {
            mode,
            n: x.dims[0] as usize,
            c: x.dims[1] as usize,
            input: x.dims[2..].to_vec(),
            output: output[2..].to_vec(),
            stride: g.stride.clone(),
            pre: g.pre_padding.clone(),
            window: g.window.clone(),
            taps: g.window.iter().map(|&w| w as f32).product(),
            columns,
            first_column,
            inside_columns,
            row_len: phase_len * sw,
            isa: super::isa::best_available(),
            channels_inner,
            x: Io::of(x),
            y,
            index,
        }
    }

    /// Output rows per plane: the output positions of every spatial dim but the last.
    fn rows(&self) -> usize {
        let rank = self.output.len();
        self.output[..rank - 1]
            .iter()
            .map(|&d| d as usize)
            .product()
    }

    /// The spatial coordinates of output row `r` (the last dim's left 0).
    fn row_coords(&self, r: usize) -> [i64; 3] {
        let rank = self.output.len();
        let mut c = [0i64; 3];
        let mut rest = r as i64;
        for d in (0..rank - 1).rev() {
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

    /// The window's taps over every spatial dim but the last (at most two) that lie inside x
    /// for output row `out`: per dim (outermost first, a missing dim as one tap) the taps
    /// inside, the window size, and x's stride; with x's offset (relative to the plane) of the
    /// row of window offset 0. Tap (a, b) is number a·w1 + b in row-major order, at x offset
    /// `base + a·s0 + b·s1`. (Inlined: returned through memory, its array was stored in
    /// pieces and read back whole, which stalled the store buffer once per row.)
    #[inline(always)]
    fn outer_ranges(&self, out: &[i64; 3]) -> ([(usize, usize, usize, isize); 2], isize) {
        let rank = self.output.len();
        let mut dims = [(0, 1, 1, 0); 2];
        let mut base = 0;
        for d in 0..rank - 1 {
            let start = out[d] * self.stride[d] - self.pre[d];
            let lo = (-start).clamp(0, self.window[d]);
            let hi = (self.input[d] - start).clamp(lo, self.window[d]);
            let xs = self.x.strides[d + 2];
            dims[2 - (rank - 1) + d] = (lo as usize, hi as usize, self.window[d] as usize, xs);
            base += start as isize * xs;
        }
        (dims, base)
    }

    /// The last dim's geometry: input and output length, stride, pre-padding, window.
    fn last(&self) -> (usize, usize, usize, usize, usize) {
        let d = self.output.len() - 1;
        (
            self.input[d] as usize,
            self.output[d] as usize,
            self.stride[d] as usize,
            self.pre[d] as usize,
            self.window[d] as usize,
        )
    }

    /// The value a tap outside x brings: -inf for max, 0 for sums.
    fn neutral(&self) -> f32 {
        if self.mode == ResampleMode::MaxPool {
            f32::NEG_INFINITY
        } else {
            0.0
        }
    }

    /// Pools output row `r` of plane (n, c) (channels not innermost): the row's input rows are
    /// staged (see the module's notes) a batch at a time, and each batch's taps folded into
    /// every vector of the row.
    ///
    /// # Safety
    /// `ptrs` are x, y and the index (if any) of a live execute call; no other task writes
    /// this row of the outputs; `s` was made for this plan.
    #[inline(always)]
    unsafe fn pool_row<const F: u8>(
        &self,
        ptrs: &[SharedPtr],
        n: usize,
        c: usize,
        r: usize,
        s: &mut Scratch,
    ) {
        let (iw, ow, sw, pw, kw) = self.last();
        let out = self.row_coords(r);
        let plane = n as isize * self.x.strides[0] + c as isize * self.x.strides[1];
        let x_last = self.x.strides[self.x.strides.len() - 1];
        let (dims, base) = self.outer_ranges(&out);
        let rows_inside = ((dims[0].1 - dims[0].0) * (dims[1].1 - dims[1].0)) as f32;
        let first_row = (dims[0].0 * dims[1].2 + dims[1].0) * kw;
        let wide = padded(ow);
        for (f, &k) in s.arg[..wide].iter_mut().zip(&self.first_column) {
            *f = first_row as f32 + k;
        }
        let (step, len) = (if sw == 2 { 2 } else { 1 }, self.row_len);
        let mut carry = false;
        let mut staged = 0;
        s.list.clear();
        for a in dims[0].0..dims[0].1 {
            for b in dims[1].0..dims[1].1 {
                if staged == STAGED_ROWS || s.list.len() + kw > BATCH.max(kw) {
                    // SAFETY: the taps address staged rows, which are not written until
                    // the fold returns; forwarded contract.
                    unsafe { self.fold::<F>(step, carry, wide, s) };
                    (carry, staged) = (true, 0);
                }
                let off = plane + base + a as isize * dims[0].3 + b as isize * dims[1].3;
                let slot = staged * len;
                staged += 1;
                // Entry j of the row is input column j - pw; the rest keeps its neutral value.
                let row = &mut s.rows[slot..slot + len];
                // SAFETY: iw columns of an input row inside x.
                unsafe {
                    let columns = &mut row[pw..pw + iw];
                    load(ptrs[0].get(), self.x.data_type, off, x_last, columns)
                };
                let row: *const f32 = if sw > 2 {
                    split_phases(
                        &s.rows[slot..slot + len],
                        sw,
                        &mut s.phases[slot..slot + len],
                    );
                    s.phases[slot..].as_ptr()
                } else {
                    s.rows[slot..].as_ptr()
                };
                let t = (a * dims[1].2 + b) * kw;
                for (k, &entry) in self.columns.iter().enumerate() {
                    s.list.push((row.wrapping_add(entry), (t + k) as f32));
                }
            }
        }
        // SAFETY: as above.
        unsafe { self.fold::<F>(step, carry, wide, s) };
        if F == SUM {
            // Every lane (those past the row's end divide stale sums, never stored).
            let include = self.mode == ResampleMode::AvgPoolIncludePadding;
            for (a, &k) in s.acc[..wide].iter_mut().zip(&self.inside_columns) {
                *a /= if include {
                    self.taps
                } else {
                    (rows_inside * k).max(1.0)
                };
            }
        }
        let rank = self.output.len();
        let plane_of = |io: &Io| {
            n as isize * io.strides[0]
                + c as isize * io.strides[1]
                + self.spatial_offset(io, &out[..rank])
        };
        // SAFETY: this task owns the row's outputs.
        unsafe { self.store_outputs(ptrs, plane_of, rank + 1, &s.acc[..ow], &s.arg[..ow]) };
    }

    /// Folds the taps in `s.list` into `s.acc` and `s.arg` (a row of `wide` lanes; `carry`:
    /// on from their values, else from the start), then clears the list.
    ///
    /// # Safety
    /// Every tap addresses `step · wide + 16` readable values (the staged rows).
    #[inline(always)]
    unsafe fn fold<const F: u8>(&self, step: usize, carry: bool, wide: usize, s: &mut Scratch) {
        let (acc, arg) = (&mut s.acc[..wide], &mut s.arg[..wide]);
        // Max pooling at stride 2 at the AVX2 level: the window's rows first, then its columns
        // (see fold_rows_max_s2_avx2); the whole rule below where a value is NaN or -0.
        #[cfg(target_arch = "x86_64")]
        if F == MAX && step == 2 && !carry && self.isa == Isa::Avx2 && self.columns.len() == 3 {
            // SAFETY: forwarded contract (the taps' rows are readable as far as the general
            // fold reads them); the processor has AVX2 (the plan's level).
            if unsafe { fold_rows_max_s2_avx2(&s.list, acc) } {
                s.list.clear();
                return;
            }
        }
        // SAFETY: forwarded contract; the lanes stay inside the row.
        unsafe { fold_row::<F>(self.isa, &s.list, step, usize::MAX, carry, acc, arg) };
        s.list.clear();
    }

    /// Stores y's values and the index's positions (if any): `at(io)` is the offset of the
    /// first, consecutive ones `io.strides[dim]` apart.
    ///
    /// # Safety
    /// `ptrs` are this execute call's; the task owns these output elements.
    #[inline(always)]
    unsafe fn store_outputs(
        &self,
        ptrs: &[SharedPtr],
        at: impl Fn(&Io) -> isize,
        dim: usize,
        values: &[f32],
        positions: &[f32],
    ) {
        let (y, ix) = (self.y.as_ref(), self.index.as_ref());
        if let Some(y) = y {
            // SAFETY: forwarded contract.
            unsafe { store(ptrs[1].get(), y.data_type, at(y), y.strides[dim], values) };
        }
        if let Some(ix) = ix {
            // SAFETY: as above.
            unsafe {
                store(
                    ptrs[2].get(),
                    ix.data_type,
                    at(ix),
                    ix.strides[dim],
                    positions,
                )
            };
        }
    }

    /// Pools output row `r` of image `n` for every channel at once (channels innermost): for
    /// each output position, the taps inside x fold into every vector of channels, a batch at
    /// a time.
    ///
    /// # Safety
    /// As for [`Pooling::pool_row`], for row `r` of image `n`, every channel.
    #[inline(always)]
    unsafe fn pool_channels_row<const F: u8>(
        &self,
        ptrs: &[SharedPtr],
        n: usize,
        r: usize,
        s: &mut Scratch,
    ) {
        let (iw, ow, sw, pw, kw) = self.last();
        let ch = self.c;
        let wide = padded(ch);
        let out = self.row_coords(r);
        let rank = self.output.len();
        let image = n as isize * self.x.strides[0];
        let (cs, x_last) = (self.x.strides[1], self.x.strides[rank + 1]);
        let in_place = self.x.data_type == DataType::F32 && cs == 1;
        let x = ptrs[0].get() as *const f32;
        let (dims, base) = self.outer_ranges(&out);
        // Channel runs staged per batch (when not read in place).
        let per_batch = if in_place {
            BATCH
        } else {
            (STAGED_FLOATS / wide).clamp(1, BATCH)
        };
        for o in 0..ow {
            let lo = pw.saturating_sub(o * sw);
            let hi = kw.min((pw + iw).saturating_sub(o * sw)).max(lo);
            let first = ((dims[0].0 * dims[1].2 + dims[1].0) * kw + lo) as f32;
            s.arg[..wide].fill(first);
            let mut carry = false;
            let mut inside = 0usize;
            s.list.clear();
            for a in dims[0].0..dims[0].1 {
                for b in dims[1].0..dims[1].1 {
                    let row = image + base + a as isize * dims[0].3 + b as isize * dims[1].3;
                    let t = (a * dims[1].2 + b) * kw;
                    for k in lo..hi {
                        if s.list.len() == per_batch {
                            // SAFETY: the taps address x's channels or staged runs.
                            unsafe { self.fold_channels::<F>(carry, s) };
                            carry = true;
                        }
                        let at = row + (o * sw + k - pw) as isize * x_last;
                        let p = if in_place {
                            x.wrapping_offset(at)
                        } else {
                            let slot = s.list.len() * wide;
                            let run = &mut s.rows[slot..slot + ch];
                            // SAFETY: the tap's channels, inside x.
                            unsafe { load(ptrs[0].get(), self.x.data_type, at, cs, run) };
                            s.rows[slot..].as_ptr()
                        };
                        s.list.push((p, (t + k) as f32));
                        inside += 1;
                    }
                }
            }
            // SAFETY: as above.
            unsafe { self.fold_channels::<F>(carry, s) };
            if F == SUM {
                let d = if self.mode == ResampleMode::AvgPoolIncludePadding {
                    self.taps
                } else {
                    (inside as f32).max(1.0)
                };
                s.acc[..ch].iter_mut().for_each(|a| *a /= d);
            }
            let mut at = out;
            at[rank - 1] = o as i64;
            let position =
                |io: &Io| n as isize * io.strides[0] + self.spatial_offset(io, &at[..rank]);
            // SAFETY: this task owns position (n, at) of the outputs, every channel.
            unsafe { self.store_outputs(ptrs, position, 1, &s.acc[..ch], &s.arg[..ch]) };
        }
    }

    /// [`Pooling::fold`] for one output's channels: the taps' runs hold `c` values (the last
    /// vector's lanes past them are not read).
    ///
    /// # Safety
    /// Every tap addresses `c` readable values.
    #[inline(always)]
    unsafe fn fold_channels<const F: u8>(&self, carry: bool, s: &mut Scratch) {
        let wide = padded(self.c);
        let (acc, arg) = (&mut s.acc[..wide], &mut s.arg[..wide]);
        // SAFETY: forwarded contract; lanes past c are masked.
        unsafe { fold_row::<F>(self.isa, &s.list, 1, self.c, carry, acc, arg) };
        s.list.clear();
    }

    /// Pools output rows `rows` (numbered over the images, and over the channels too when they
    /// are not innermost), compiled for the instruction set the caller chose.
    ///
    /// # Safety
    /// As for [`Pooling::pool_row`], for each of the rows.
    #[inline(always)]
    unsafe fn pool_rows_body(
        &self,
        ptrs: &[SharedPtr],
        rows: std::ops::Range<usize>,
        s: &mut Scratch,
    ) {
        match (self.mode, self.index.is_some()) {
            // SAFETY (every arm): forwarded contract.
            (ResampleMode::MaxPool, true) => unsafe { self.rows_of::<MAX_INDEXED>(ptrs, rows, s) },
            (ResampleMode::MaxPool, false) => unsafe { self.rows_of::<MAX>(ptrs, rows, s) },
            _ => unsafe { self.rows_of::<SUM>(ptrs, rows, s) },
        }
    }

    /// [`Pooling::pool_rows_body`] for one kind of fold.
    ///
    /// # Safety
    /// As for [`Pooling::pool_row`], for each of the rows.
    #[inline(always)]
    unsafe fn rows_of<const F: u8>(
        &self,
        ptrs: &[SharedPtr],
        rows: std::ops::Range<usize>,
        s: &mut Scratch,
    ) {
        let per_plane = self.rows();
        for task in rows {
            let (plane, r) = (task / per_plane, task % per_plane);
            if self.channels_inner {
                // SAFETY: forwarded contract.
                unsafe { self.pool_channels_row::<F>(ptrs, plane, r, s) };
            } else {
                // SAFETY: forwarded contract.
                unsafe { self.pool_row::<F>(ptrs, plane / self.c, plane % self.c, r, s) };
            }
        }
    }

    /// [`Pooling::pool_rows_body`] compiled for AVX-512 F.
    ///
    /// # Safety
    /// The processor has AVX-512 F; otherwise as for [`Pooling::pool_rows_body`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn pool_rows_avx512(
        &self,
        ptrs: &[SharedPtr],
        rows: std::ops::Range<usize>,
        s: &mut Scratch,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pool_rows_body(ptrs, rows, s) }
    }

    /// [`Pooling::pool_rows_body`] compiled for AVX2.
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; otherwise as for [`Pooling::pool_rows_body`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn pool_rows_avx2(
        &self,
        ptrs: &[SharedPtr],
        rows: std::ops::Range<usize>,
        s: &mut Scratch,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.pool_rows_body(ptrs, rows, s) }
    }

    /// [`Pooling::pool_rows_body`] at the plan's instruction set.
    ///
    /// # Safety
    /// As for [`Pooling::pool_rows_body`].
    unsafe fn pool_rows(&self, ptrs: &[SharedPtr], rows: std::ops::Range<usize>, s: &mut Scratch) {
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            // SAFETY (both arms): the level is one this processor runs.
            Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                return unsafe { self.pool_rows_avx512(ptrs, rows, s) }
            }
            Isa::Avx2 => return unsafe { self.pool_rows_avx2(ptrs, rows, s) },
            Isa::Portable => {}
        }
        // SAFETY: forwarded contract.
        unsafe { self.pool_rows_body(ptrs, rows, s) }
    }
}

/// One tap of a fold: where the value of its first lane is, and its window position.
type Tap = (*const f32, f32);

/// Folds `taps` (in the reference's order of taps) into a row of lanes, 16 at a time: lane
/// `o`'s value of a tap is at `tap + step · o`, two values apart at step 2 (the even entries
/// of 32 loaded); lanes from `valid` on are not read (their results are stale). The lanes
/// start at -inf (sums at 0) with the positions already in `arg` (each lane's first tap inside
/// x), or with `carry` at `acc`'s and `arg`'s values.
///
/// `MAX`: a value replaces the maximum when it is larger or a NaN meets a number;
/// `MAX_INDEXED` also takes its position. This is the reference's rule, which takes the first
/// tap inside x and then applies the same test: from -inf, a first tap that is larger or NaN
/// is taken here too, and one of -inf leaves the maximum at -inf and the position at the first
/// tap's, where the lanes start. A tap outside x brings -inf, which is never taken. `SUM` adds
/// (a tap outside x brings 0). The vector levels fold maxima with `max` and a strict compare
/// first (one short dependency chain a tap), which is the rule for every value but NaN, and
/// fold a vector again with the whole rule when one of its taps held a NaN.
///
/// # Safety
/// Every tap addresses `step · acc.len() + 16` readable f32 values, or at step 1 `valid` of
/// them; `acc` and `arg` have the same length, a multiple of 16; the processor runs `isa`.
#[inline(always)]
unsafe fn fold_row<const F: u8>(
    isa: Isa,
    taps: &[Tap],
    step: usize,
    valid: usize,
    carry: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY (both arms): forwarded contract; the processor runs the level.
        Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
            return unsafe { fold_row_avx512::<F>(taps, step, valid, carry, acc, arg) }
        }
        Isa::Avx2 => return unsafe { fold_row_avx2::<F>(taps, step, valid, carry, acc, arg) },
        Isa::Portable => {}
    }
    let _ = isa;
    let start = if F == SUM { 0.0 } else { f32::NEG_INFINITY };
    for (o, (a, i)) in acc.iter_mut().zip(arg.iter_mut()).enumerate().take(valid) {
        if !carry {
            *a = start;
        }
        for &(p, w) in taps {
            // SAFETY: lane o's value of the tap (the caller's contract).
            let x = unsafe { p.add(step * o).read_unaligned() };
            if F == SUM {
                *a += x;
            } else if (x > *a || x.is_nan()) && !a.is_nan() {
                *a = x;
                *i = w;
            }
        }
    }
}

/// [`fold_row`] in AVX-512 registers (a mask per test).
///
/// # Safety
/// As for [`fold_row`]; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn fold_row_avx512<const F: u8>(
    taps: &[Tap],
    step: usize,
    valid: usize,
    carry: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    use std::arch::x86_64::*;
    // The even entries of two vectors: lanes 0, 2, .., 30 of their concatenation.
    let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for o0 in (0..acc.len()).step_by(LANES) {
        let lanes = valid.saturating_sub(o0).min(LANES);
        let mask: __mmask16 = if lanes == LANES { !0 } else { (1 << lanes) - 1 };
        // SAFETY: lanes o0..o0 + 16 of acc and arg (whole vectors), and each tap's values for
        // them (the caller's contract; lanes past `valid` masked off).
        unsafe {
            let (pa, pi) = (acc.as_mut_ptr().add(o0), arg.as_mut_ptr().add(o0));
            let start = if carry {
                _mm512_loadu_ps(pa)
            } else {
                _mm512_set1_ps(if F == SUM { 0.0 } else { f32::NEG_INFINITY })
            };
            let fetch = |p: *const f32| {
                if step == 2 {
                    let q = p.add(2 * o0);
                    _mm512_permutex2var_ps(_mm512_loadu_ps(q), evens, _mm512_loadu_ps(q.add(16)))
                } else {
                    _mm512_maskz_loadu_ps(mask, p.add(o0))
                }
            };
            let (mut a, mut i) = (start, _mm512_loadu_ps(pi));
            let mut nan: __mmask16 = 0;
            // The fast pass: sums, or maxima as `vmaxps` keeps them (x only when larger, so the
            // first of equal values stays), which is the rule for every value but NaN.
            for &(p, w) in taps {
                let x = fetch(p);
                if F == SUM {
                    a = _mm512_add_ps(a, x);
                } else {
                    nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                    if F == MAX_INDEXED {
                        let take = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, a);
                        i = _mm512_mask_mov_ps(i, take, _mm512_set1_ps(w));
                    }
                    a = _mm512_max_ps(x, a);
                }
            }
            if nan != 0 {
                // A NaN among the taps: again with the whole rule.
                (a, i) = (start, _mm512_loadu_ps(pi));
                for &(p, w) in taps {
                    let x = fetch(p);
                    // Not (x <= a) (so x > a, or x NaN), and a is a number.
                    let le = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(x, a);
                    let number = _mm512_cmp_ps_mask::<_CMP_ORD_Q>(a, a);
                    let take = !le & number;
                    a = _mm512_mask_mov_ps(a, take, x);
                    if F == MAX_INDEXED {
                        i = _mm512_mask_mov_ps(i, take, _mm512_set1_ps(w));
                    }
                }
            }
            _mm512_storeu_ps(pa, a);
            _mm512_storeu_ps(pi, i);
        }
    }
}

/// [`fold_row`] in AVX registers, 8 lanes at a time.
///
/// # Safety
/// As for [`fold_row`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_row_avx2<const F: u8>(
    taps: &[Tap],
    step: usize,
    valid: usize,
    carry: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    use std::arch::x86_64::*;
    // Within each 128-bit half, entries 0 and 2 of each 4.
    let evens = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for o0 in (0..acc.len()).step_by(8) {
        let lanes = valid.saturating_sub(o0).min(8) as i32;
        let mask = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), mask);
        // SAFETY: lanes o0..o0 + 8 of acc and arg (whole vectors), and each tap's values for
        // them (the caller's contract; lanes past `valid` masked off).
        unsafe {
            let (pa, pi) = (acc.as_mut_ptr().add(o0), arg.as_mut_ptr().add(o0));
            let start = if carry {
                _mm256_loadu_ps(pa)
            } else {
                _mm256_set1_ps(if F == SUM { 0.0 } else { f32::NEG_INFINITY })
            };
            let fetch = |p: *const f32| {
                if step == 2 {
                    // Entries 0, 2, 4, 6 of the first vector and of the second, in order.
                    let q = p.add(2 * o0);
                    let lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(q), evens);
                    let hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(q.add(8)), evens);
                    _mm256_permute2f128_ps::<0x20>(lo, hi)
                } else {
                    _mm256_maskload_ps(p.add(o0), mask)
                }
            };
            let (mut a, mut i) = (start, _mm256_loadu_ps(pi));
            let mut nan = _mm256_setzero_ps();
            // The fast pass, as in fold_row_avx512.
            for &(p, w) in taps {
                let x = fetch(p);
                if F == SUM {
                    a = _mm256_add_ps(a, x);
                } else {
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
                    if F == MAX_INDEXED {
                        let take = _mm256_cmp_ps::<_CMP_GT_OQ>(x, a);
                        i = _mm256_blendv_ps(i, _mm256_set1_ps(w), take);
                    }
                    a = _mm256_max_ps(x, a);
                }
            }
            if _mm256_movemask_ps(nan) != 0 {
                (a, i) = (start, _mm256_loadu_ps(pi));
                for &(p, w) in taps {
                    let x = fetch(p);
                    let le = _mm256_cmp_ps::<_CMP_LE_OQ>(x, a);
                    let number = _mm256_cmp_ps::<_CMP_ORD_Q>(a, a);
                    let take = _mm256_andnot_ps(le, number);
                    a = _mm256_blendv_ps(a, x, take);
                    if F == MAX_INDEXED {
                        i = _mm256_blendv_ps(i, _mm256_set1_ps(w), take);
                    }
                }
            }
            _mm256_storeu_ps(pa, a);
            _mm256_storeu_ps(pi, i);
        }
    }
}

/// Max pooling of a row at stride 2 with windows 3 columns wide, in AVX2 registers, the
/// window's rows first: 8 outputs read entries 2·o0 .. 2·o0 + 17 of each row; the rows'
/// elementwise maximum of them (three vectors, the third kept for the next 8) is split into
/// its even and odd entries, and the even ones shifted by one give the third column. That is 7
/// shuffles for 8 outputs, where the per-tap fold shuffles every tap of every row (27 for a
/// 3x3 window). The maximum does not depend on the order of the taps except for NaN (the first
/// one wins) and for -0 against +0 (the first of equal values stays), so where any value read
/// is NaN or -0 this returns false (having written `acc`), and the caller folds the taps in
/// order with the whole rule: every result is the same bits as the rule's.
///
/// `taps` must be whole rows of 3 taps at consecutive entries (`columns` at stride 2);
/// otherwise this returns false without reading them.
///
/// # Safety
/// As for [`fold_row`] at step 2 (each tap addresses `2 · acc.len() + 16` readable values);
/// the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_rows_max_s2_avx2(taps: &[Tap], acc: &mut [f32]) -> bool {
    use std::arch::x86_64::*;
    const KW: usize = 3;
    if taps.is_empty() || !taps.len().is_multiple_of(KW) {
        return false;
    }
    let rows = taps.chunks_exact(KW);
    if rows.clone().any(|row| {
        row.iter()
            .enumerate()
            .any(|(k, t)| t.0 != row[0].0.wrapping_add(k))
    }) {
        return false;
    }
    // Sign bits: NaN (all bits of the comparison) or -0 (x's own bits where x == 0).
    let mut odd = _mm256_setzero_ps();
    let zero = _mm256_setzero_ps();
    // The rows' maximum at entries e..e + 8: within the 2·acc.len() + 16 + 2 entries the
    // third column's taps address (e + 8 <= 2·acc.len() + 8).
    let mut rows_max = |e: usize| {
        let mut m = _mm256_set1_ps(f32::NEG_INFINITY);
        for row in rows.clone() {
            // SAFETY: entries e..e + 8 of a staged row (above).
            let x = unsafe { _mm256_loadu_ps(row[0].0.add(e)) };
            let zeros = _mm256_and_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(x, zero), x);
            odd = _mm256_or_ps(
                odd,
                _mm256_or_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x), zeros),
            );
            m = _mm256_max_ps(x, m);
        }
        m
    };
    // Within each 128-bit half, entries 0 and 2 of each 4; lanes 1..8 then 0; lane 0.
    let evens = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let rotate = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0);
    let first = _mm256_setzero_si256();
    let mut v0 = rows_max(0);
    for o0 in (0..acc.len()).step_by(8) {
        let (v1, v2) = (rows_max(2 * o0 + 8), rows_max(2 * o0 + 16));
        let lo = _mm256_permutevar8x32_ps(v0, evens);
        let hi = _mm256_permutevar8x32_ps(v1, evens);
        // Columns 0 and 1 of the 8 windows: the even and the odd entries.
        let even = _mm256_permute2f128_ps::<0x20>(lo, hi);
        let odd_entries = _mm256_permute2f128_ps::<0x31>(lo, hi);
        // Column 2: the even entries from 2·o0 + 2, the last one entry 0 of v2.
        let next = _mm256_permutevar8x32_ps(v2, first);
        let third = _mm256_blend_ps::<0x80>(_mm256_permutevar8x32_ps(even, rotate), next);
        // The order of the rule for each window's three columns (max keeps its second
        // operand on ties).
        let a = _mm256_max_ps(third, _mm256_max_ps(odd_entries, even));
        // SAFETY: lanes o0..o0 + 8 of acc (its length is a multiple of 16).
        unsafe { _mm256_storeu_ps(acc.as_mut_ptr().add(o0), a) };
        v0 = v2;
    }
    _mm256_movemask_ps(odd) == 0
}

/// Splits `row` into the `sw` phases of a stride (phase p holds entries p, p + sw, ...), each
/// `dst.len() / sw` long.
#[inline(always)]
fn split_phases(row: &[f32], sw: usize, dst: &mut [f32]) {
    let phase_len = dst.len() / sw;
    for (p, phase) in dst.chunks_exact_mut(phase_len).enumerate() {
        for (d, &v) in phase.iter_mut().zip(row[p..].iter().step_by(sw)) {
            *d = v;
        }
    }
}

/// Per-task buffers.
struct Scratch {
    /// The results of a row's outputs (or a position's channels), whole vectors.
    acc: Vec<f32>,
    arg: Vec<f32>,
    /// Staged input rows (plane path: neutral outside the input's columns), or staged channel
    /// runs (channels-innermost path).
    rows: Vec<f32>,
    /// Staged rows split into the stride's phases (plane path, strides above 2).
    phases: Vec<f32>,
    /// The taps of the batch being folded.
    list: Vec<Tap>,
}

impl Prepared for Pooling {
    fn workspace_size(&self) -> usize {
        0
    }

    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        let mut ptrs = vec![SharedPtr(tensors.ptr(self.x.uid)?)];
        ptrs.push(match &self.y {
            Some(y) => SharedPtr(tensors.ptr(y.uid)?),
            None => SharedPtr(std::ptr::null_mut()),
        });
        if let Some(ix) = &self.index {
            ptrs.push(SharedPtr(tensors.ptr(ix.uid)?));
        }
        // SAFETY: execute's contract.
        unsafe { self.run(&ptrs) };
        Ok(())
    }
}

impl Pooling {
    /// Pools with `ptrs` (x, y or null when there is no y, the index if any).
    ///
    /// # Safety
    /// The pointers address tensors of the plan's layouts that live for the call; no other
    /// thread accesses the outputs.
    unsafe fn run(&self, ptrs: &[SharedPtr]) {
        let (_, ow, sw, _, _) = self.last();
        let planes = if self.channels_inner {
            self.n
        } else {
            self.n * self.c
        };
        let rows = planes * self.rows();
        let width = padded(if self.channels_inner { self.c } else { ow });
        let scratch = || {
            let rows = if self.channels_inner {
                STAGED_FLOATS.max(width)
            } else {
                STAGED_ROWS * self.row_len
            };
            Scratch {
                acc: vec![0.0; width],
                arg: vec![0.0; width],
                rows: vec![self.neutral(); rows],
                phases: if !self.channels_inner && sw > 2 {
                    vec![0.0; STAGED_ROWS * self.row_len]
                } else {
                    Vec::new()
                },
                list: Vec::with_capacity(BATCH),
            }
        };
        // Rows in chunks of about 16 KiB of output each, so that a task is worth its
        // scheduling.
        let per_row = (width * if self.channels_inner { ow } else { 1 }).max(1);
        let chunk = (4096 / per_row).clamp(1, rows.max(1));
        (0..rows.div_ceil(chunk))
            .into_par_iter()
            .for_each_init(scratch, |s, i| {
                let r0 = i * chunk;
                // SAFETY: run's contract; tasks own distinct output rows.
                unsafe { self.pool_rows(ptrs, r0..(r0 + chunk).min(rows), s) }
            });
    }
}

/// The first pass of max pooling's backward from x: each window's first maximum's position
/// (the forward's rules), as f32, into a buffer of the backward's.
pub(super) struct Argmax(Pooling);

impl Argmax {
    /// Max pooling of `x` with `geometry` into dims `output` that writes only the positions,
    /// element `(n, c, o...)` at the offset its `strides` give (elements of f32).
    pub(super) fn new(
        x: &TensorDesc,
        output: &[i64],
        geometry: &ResampleGeometry,
        strides: Vec<isize>,
    ) -> Argmax {
        let positions = Io {
            uid: 0,
            data_type: DataType::F32,
            strides,
        };
        let inner = channels_innermost(x);
        Argmax(Pooling::of(
            ResampleMode::MaxPool,
            x,
            output,
            geometry,
            None,
            Some(positions),
            inner,
        ))
    }

    /// Writes the positions of x's windows into `positions`.
    ///
    /// # Safety
    /// `x` addresses x, `positions` the buffer of the strides given, both for the call; no
    /// other thread accesses the buffer.
    pub(super) unsafe fn run(&self, x: SharedPtr, positions: SharedPtr) {
        let ptrs = [x, SharedPtr(std::ptr::null_mut()), positions];
        // SAFETY: forwarded contract (there is no y).
        unsafe { self.0.run(&ptrs) }
    }
}

/// The pooling of `graph` prepared to fold at `isa` (a level this processor runs), whatever
/// the process's best level: the tests run every level in one process.
#[cfg(test)]
pub(crate) fn prepare_at(graph: &OpGraph, isa: Isa) -> PluginResult<Box<dyn Prepared>> {
    let mut p = Pooling::new(graph)?;
    p.isa = isa;
    Ok(Box::new(p))
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// The AVX2 rows-first fold of 3-column windows at stride 2 gives the rule's bits (the
    /// per-tap fold's) on rows of values with many ties, ±0 and infinities, and declines every
    /// row set holding a NaN or a -0 in what it reads; one set of taps that is not whole rows
    /// of consecutive entries is declined unread.
    #[test]
    fn the_rows_first_max_is_the_rule_bit_for_bit() {
        if !Isa::Avx2.is_available() {
            return;
        }
        let mut rng = StdRng::seed_from_u64(26);
        let (mut taken, mut declined) = (0, 0);
        for case in 0..400 {
            let wide = 16 * (1 + case % 4);
            let rows = 1 + case % 4;
            let len = 2 * wide + 24;
            let specials = [0.0f32, 1.0, -1.0, 2.5, f32::INFINITY, f32::NEG_INFINITY];
            let odd = case % 5 == 0;
            let data: Vec<f32> = (0..rows * len)
                .map(|_| match rng.random_range(0..20) {
                    0 if odd => f32::NAN,
                    1 if odd => -0.0,
                    0..=9 => specials[rng.random_range(0..specials.len())],
                    _ => rng.random_range(-4.0f32..4.0),
                })
                .collect();
            let taps: Vec<Tap> = (0..rows)
                .flat_map(|r| (0..3).map(move |k| (r, k)))
                .map(|(r, k)| (data[r * len + k..].as_ptr(), (3 * r + k) as f32))
                .collect();
            let (mut want, mut arg) = (vec![0.0f32; wide], vec![0.0f32; wide]);
            let mut got = vec![f32::NAN; wide];
            // SAFETY: each tap addresses 2·wide + 16 values inside its row of `data` (len =
            // 2·wide + 24); the processor has AVX2 (checked).
            let ok = unsafe {
                fold_row::<MAX>(Isa::Avx2, &taps, 2, usize::MAX, false, &mut want, &mut arg);
                fold_rows_max_s2_avx2(&taps, &mut got)
            };
            // What the fast fold reads: entries 0 .. 2·wide + 8 of each row.
            let special = (0..rows).any(|r| {
                data[r * len..r * len + 2 * wide + 8]
                    .iter()
                    .any(|v| v.is_nan() || v.to_bits() == (-0.0f32).to_bits())
            });
            assert_eq!(
                ok, !special,
                "case {case}: taken {ok}, NaN or -0 read {special}"
            );
            if ok {
                taken += 1;
                for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        w.to_bits(),
                        "case {case}, output {o}: {g} vs {w}"
                    );
                }
            } else {
                declined += 1;
            }
        }
        assert!(
            taken > 200 && declined > 20,
            "taken {taken}, declined {declined}"
        );
        // Taps that are not three consecutive entries of a row.
        let data = vec![1.0f32; 200];
        let taps: Vec<Tap> = [0usize, 2, 4]
            .iter()
            .map(|&k| (data[k..].as_ptr(), k as f32))
            .collect();
        let mut acc = vec![7.0f32; 16];
        // SAFETY: as above.
        assert!(!unsafe { fold_rows_max_s2_avx2(&taps, &mut acc) });
        assert!(acc.iter().all(|&v| v == 7.0));
    }
}
