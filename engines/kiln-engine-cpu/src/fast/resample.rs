//! `KILN_CPU_RESAMPLE_V1`: pooling (a graph of one `resample` node) in f32, on the engine's
//! thread pool.
//!
//! The outputs are folded 16 at a time in vector registers (AVX-512, two AVX2 registers, or
//! plain loops), each vector folding every tap of its window before it is stored once. Two
//! loop orders, both for any strides, and tasks of whole output rows:
//! - channels not innermost (NCHW, NCDHW, other orders): a vector is 16 outputs of a row. Each
//!   input row a window reads is staged as f32 between neutral values (-inf for max, 0 for
//!   averages: the padding, and the columns past the row that whole vectors read), split into
//!   the stride's phases, so that a column tap of 16 outputs is 16 consecutive values of one
//!   phase at any stride. With two spatial dims and no index, a task's rows of one plane share
//!   a ring of staged rows, each input row staged once ([`Pooling::plane_rows`]);
//! - channels innermost (NHWC, NDHWC): a vector is 16 channels of one output, and each tap is a
//!   run of channels, read where it lies when x is f32 with unit channel stride (the last
//!   vector masked), else staged as f32.
//!
//! The arithmetic is the reference's (`kiln_core::ops::resample`), in its order of taps:
//! padding is never a maximum and counts as zeros in averages, NaN propagates, the index is the
//! first maximum's row-major window position. Every level gives the same bits (but for the sign
//! of a NaN that an average makes, such as inf + -inf: docs/pooling.md). The buffers a task
//! needs are bounded whatever the window: taps fold in batches of at most [`BATCH`], the
//! results carried from one batch to the next.

use super::element_io::{load, store, SharedPtr};
use super::epilogue::check_data_type;
use super::isa::Isa;
use super::pool;
use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::ops::resample::{ResampleGeometry, ResampleMode, ResampleOp};
use kiln_core::{DataType, OpGraph, TensorDesc};
use kiln_plugin_abi::{KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION};
use kiln_plugin_sdk::{PluginError, PluginResult};

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
    /// row (entry k / stride of phase k % stride).
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
    /// Pools rows of a plane at once ([`Pooling::plane_rows`]): 2-D, channels not innermost,
    /// a window of at most [`STAGED_ROWS`] rows and [`BATCH`] taps.
    ring: bool,
    /// x is f32 with consecutive values along its last dim (read in place, never converted).
    x_rows_f32: bool,
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
        // The last dim's column taps, for the plane path. A staged row is the row padded by
        // pw neutral values on the left (entry j holds input column j - pw), split into the
        // stride's phases of `phase_len` values: phase p holds entries p, p + sw, p + 2·sw, ...
        // (at stride 1, the padded row itself). Tap k of output o is entry o·sw + k, phase
        // k % sw at k / sw + o, so the taps of consecutive outputs are consecutive values, and
        // a vector of 16 outputs past any output's first tap lies inside its phase.
        let last = g.window.len() - 1;
        let (iw, ow) = (x.dims[last + 2] as usize, output[last + 2] as usize);
        let (sw, pw, kw) = (
            g.stride[last] as usize,
            g.pre_padding[last] as usize,
            g.window[last] as usize,
        );
        // Each phase also holds the whole vectors the vector levels stage (see split_row).
        let phase_len = (pw + iw.next_multiple_of(32))
            .div_ceil(sw)
            .max(padded(ow) + kw / sw + 1);
        let columns = (0..kw).map(|k| (k % sw) * phase_len + k / sw).collect();
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
            x_rows_f32: x.data_type == DataType::F32 && x.strides[x.strides.len() - 1] == 1,
            ring: !channels_inner
                && g.window.len() == 2
                && g.window[0] as usize <= STAGED_ROWS
                && g.window.iter().product::<i64>() as usize <= BATCH,
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
    #[inline(always)]
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
        let (_, ow, _, _, kw) = self.last();
        let out = self.row_coords(r);
        let plane = n as isize * self.x.strides[0] + c as isize * self.x.strides[1];
        let (dims, base) = self.outer_ranges(&out);
        let rows_inside = ((dims[0].1 - dims[0].0) * (dims[1].1 - dims[1].0)) as f32;
        let first_row = (dims[0].0 * dims[1].2 + dims[1].0) * kw;
        let wide = padded(ow);
        if F == MAX_INDEXED {
            for (f, &k) in s.arg[..wide].iter_mut().zip(&self.first_column) {
                *f = first_row as f32 + k;
            }
        }
        let len = self.row_len;
        let mut carry = false;
        let mut staged = 0;
        // No NaN in the batch's staged rows: its fold skips the NaN tests.
        let mut clean = true;
        s.list.clear();
        for a in dims[0].0..dims[0].1 {
            for b in dims[1].0..dims[1].1 {
                if staged == STAGED_ROWS || s.list.len() + kw > BATCH.max(kw) {
                    // SAFETY: the taps address staged rows, which are not written until
                    // the fold returns; forwarded contract.
                    unsafe { self.fold::<F>(carry, clean, wide, s) };
                    (carry, staged, clean) = (true, 0, true);
                }
                let off = plane + base + a as isize * dims[0].3 + b as isize * dims[1].3;
                let slot = staged * len;
                staged += 1;
                // SAFETY: the iw columns of an input row, inside x.
                clean &= unsafe { self.stage(ptrs[0].get(), off, slot, s) };
                let row = s.rows[slot..].as_ptr();
                let t = (a * dims[1].2 + b) * kw;
                for (k, &entry) in self.columns.iter().enumerate() {
                    s.list.push((row.wrapping_add(entry), (t + k) as f32));
                }
            }
        }
        // SAFETY: as above.
        unsafe { self.fold::<F>(carry, clean, wide, s) };
        // SAFETY: forwarded contract.
        unsafe { self.finish_row::<F>(ptrs, n, c, &out, rows_inside, s) };
    }

    /// Output rows `rows` of plane (n, c) of a 2-D pooling (channels not innermost, no
    /// index): as [`Pooling::pool_row`] each, but each input row is staged once, into a ring
    /// of one slot per window row (input row h in slot h % kh), and stays there for every
    /// output row whose window holds it.
    ///
    /// # Safety
    /// As for [`Pooling::pool_row`], for each of the rows; the window is at most
    /// [`STAGED_ROWS`] rows and [`BATCH`] taps.
    #[inline(always)]
    unsafe fn plane_rows<const F: u8>(
        &self,
        ptrs: &[SharedPtr],
        n: usize,
        c: usize,
        rows: std::ops::Range<usize>,
        s: &mut Scratch,
    ) {
        let (kh, sh, ph, ih) = (
            self.window[0] as usize,
            self.stride[0] as usize,
            self.pre[0] as usize,
            self.input[0] as usize,
        );
        let (_, ow, _, _, kw) = self.last();
        let (wide, len, xs) = (padded(ow), self.row_len, self.x.strides[2]);
        let plane = n as isize * self.x.strides[0] + c as isize * self.x.strides[1];
        // y's row 0 of the plane and its row stride, where its rows are f32 values in order.
        let y_rows = match &self.y {
            Some(y) if y.data_type == DataType::F32 && y.strides[3] == 1 => Some((
                (ptrs[1].get() as *mut f32)
                    .wrapping_offset(n as isize * y.strides[0] + c as isize * y.strides[1]),
                y.strides[2],
            )),
            _ => None,
        };
        // Window rows start..start + kh of output row r; those inside x, lo..hi.
        let window = |r: usize| {
            let start = (r * sh) as isize - ph as isize;
            let lo = start.max(0) as usize;
            let hi = (start + kh as isize).clamp(lo as isize, ih as isize) as usize;
            (start, lo, hi)
        };
        // The first input row not staged yet.
        let mut next = 0;
        for r in rows {
            let (start, lo, hi) = window(r);
            for h in next.max(lo)..hi {
                let slot = h % kh;
                let off = plane + h as isize * xs;
                // SAFETY: input row h of the plane, inside x.
                s.clean[slot] = unsafe { self.stage(ptrs[0].get(), off, slot * len, s) };
            }
            next = next.max(hi);
            let clean = (lo..hi).all(|h| s.clean[h % kh]);
            if clean && y_rows.is_some() {
                // The window's staged rows, in order.
                let mut staged = [std::ptr::null::<f32>(); STAGED_ROWS];
                for (at, h) in staged.iter_mut().zip(lo..hi) {
                    *at = s.rows[(h % kh) * len..].as_ptr();
                }
                let taps = (&staged[..hi - lo], &self.columns[..]);
                let rows_inside = (hi - lo) as f32;
                let to = y_rows.map_or(std::ptr::null_mut(), |(y, ys)| {
                    y.wrapping_offset(r as isize * ys)
                });
                // SAFETY: the taps address staged rows (`wide` values each); this task owns
                // the row's ow outputs at `to`; the level is one this processor runs.
                unsafe {
                    #[cfg(target_arch = "x86_64")]
                    match self.isa {
                        Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx => {
                            self.clean_row::<F, Zmm>(taps, rows_inside, to);
                            continue;
                        }
                        Isa::Avx2 => {
                            self.clean_row::<F, Ymm>(taps, rows_inside, to);
                            continue;
                        }
                        Isa::Portable => {}
                    }
                }
                #[cfg(not(target_arch = "x86_64"))]
                let _ = (taps, rows_inside, to);
            }
            s.list.clear();
            for h in lo..hi {
                let row = s.rows[(h % kh) * len..].as_ptr();
                let t = (h as isize - start) as usize * kw;
                for (k, &entry) in self.columns.iter().enumerate() {
                    s.list.push((row.wrapping_add(entry), (t + k) as f32));
                }
            }
            // SAFETY: the taps address staged rows; forwarded contract.
            unsafe { self.fold::<F>(false, clean, wide, s) };
            // SAFETY: forwarded contract.
            unsafe { self.finish_row::<F>(ptrs, n, c, &[r as i64, 0, 0], (hi - lo) as f32, s) };
        }
    }

    /// One row of outputs from staged rows that hold no NaN, in `L`'s vectors, four at a time:
    /// `taps` are the window's staged rows inside x (in order) and the column taps, each
    /// output's tap order the reference's; sums are divided as [`Pooling::finish_row`] does;
    /// the row's ow outputs are stored at `to`.
    ///
    /// # Safety
    /// Every staged row holds `padded(ow) + columns` readable values and no NaN; `to`
    /// addresses ow writable f32 values; the processor runs `L`'s instructions.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn clean_row<const F: u8, L: Lanes>(
        &self,
        taps: (&[*const f32], &[usize]),
        rows_inside: f32,
        to: *mut f32,
    ) {
        let ow = self.last().1;
        let wide = padded(ow);
        let mut o0 = 0;
        while o0 < wide {
            let vectors = (wide - o0) / L::N;
            // SAFETY (both arms): forwarded contract; lanes o0.. lie in whole vectors.
            unsafe {
                if vectors >= 4 {
                    self.clean_vectors::<F, L, 4>(taps, rows_inside, to, o0);
                    o0 += 4 * L::N;
                } else {
                    self.clean_vectors::<F, L, 1>(taps, rows_inside, to, o0);
                    o0 += L::N;
                }
            }
        }
    }

    /// [`Pooling::clean_row`] for `U` vectors of lanes from `o0`.
    ///
    /// # Safety
    /// As for [`Pooling::clean_row`]; lanes `o0..o0 + U·L::N` lie within `padded(ow)`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn clean_vectors<const F: u8, L: Lanes, const U: usize>(
        &self,
        (rows, columns): (&[*const f32], &[usize]),
        rows_inside: f32,
        to: *mut f32,
        o0: usize,
    ) {
        // SAFETY: the caller's contract: lanes o0..o0 + U·N of each tap, and of the row's
        // outputs those below ow.
        unsafe {
            let mut a = [L::splat(if F == SUM { 0.0 } else { f32::NEG_INFINITY }); U];
            for &row in rows {
                for &k in columns {
                    let p = row.add(k + o0);
                    for (u, a) in a.iter_mut().enumerate() {
                        let x = L::load(p.add(u * L::N));
                        *a = if F == SUM {
                            L::add(*a, x)
                        } else {
                            L::max(x, *a)
                        };
                    }
                }
            }
            let ow = self.last().1;
            for (u, &a) in a.iter().enumerate() {
                let o = o0 + u * L::N;
                let a = if F == SUM {
                    // The divisor of finish_row, lane by lane.
                    let by = if self.mode == ResampleMode::AvgPoolIncludePadding {
                        L::splat(self.taps)
                    } else {
                        let inside = L::load(self.inside_columns[o..].as_ptr());
                        L::max(L::mul(L::splat(rows_inside), inside), L::splat(1.0))
                    };
                    L::div(a, by)
                } else {
                    a
                };
                L::store(to.add(o), a, ow.saturating_sub(o).min(L::N));
            }
        }
    }

    /// Divides a row's sums (`SUM`; `rows_inside` window rows lie inside x) and stores the
    /// row's outputs: output row `out` of plane (n, c).
    ///
    /// # Safety
    /// `ptrs` are this execute call's; the task owns the row's outputs.
    #[inline(always)]
    unsafe fn finish_row<const F: u8>(
        &self,
        ptrs: &[SharedPtr],
        n: usize,
        c: usize,
        out: &[i64; 3],
        rows_inside: f32,
        s: &mut Scratch,
    ) {
        let ow = self.last().1;
        let wide = padded(ow);
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
        if let (Some(y), None) = (&self.y, &self.index) {
            if y.data_type == DataType::F32 && y.strides[rank + 1] == 1 {
                // SAFETY: this task owns the row's ow consecutive outputs.
                let to = unsafe { (ptrs[1].get() as *mut f32).offset(plane_of(y)) };
                for (o, chunk) in s.acc[..ow].chunks(LANES).enumerate() {
                    // SAFETY: as above; chunk o's values.
                    unsafe {
                        let to = to.add(o * LANES);
                        if let Ok(whole) = <&[f32; LANES]>::try_from(chunk) {
                            to.cast::<[f32; LANES]>().write_unaligned(*whole);
                        } else {
                            for (j, &v) in chunk.iter().enumerate() {
                                to.add(j).write(v);
                            }
                        }
                    }
                }
                return;
            }
        }
        // SAFETY: this task owns the row's outputs.
        unsafe { self.store_outputs(ptrs, plane_of, rank + 1, &s.acc[..ow], &s.arg[..ow]) };
    }

    /// Folds the taps in `s.list` into `s.acc` and `s.arg` (a row of `wide` lanes; `carry`:
    /// on from their values, else from the start; `clean`: no tap reads a NaN), then clears
    /// the list.
    ///
    /// # Safety
    /// Every tap addresses `wide` readable values (the staged rows).
    #[inline(always)]
    unsafe fn fold<const F: u8>(&self, carry: bool, clean: bool, wide: usize, s: &mut Scratch) {
        let (acc, arg) = (&mut s.acc[..wide], &mut s.arg[..wide]);
        // SAFETY: forwarded contract; the lanes stay inside the row.
        unsafe { fold_row::<F>(self.isa, &s.list, usize::MAX, carry, clean, acc, arg) };
        s.list.clear();
    }

    /// Stages the input row at x offset `off` (its iw columns) in slot `slot` of `s.rows`, in
    /// the stride's phases (see [`Pooling::of`]). Only the input's values, and past the row's
    /// end the neutral value (see [`split_row`]), are written: the neutral values of the
    /// padding were written when the scratch was made. Returns whether the row holds no NaN.
    ///
    /// # Safety
    /// `x` is x's address, `off` the offset of a row whose iw columns lie inside it; `slot` is
    /// one of the scratch's staged rows.
    #[inline(always)]
    unsafe fn stage(&self, x: *const u8, off: isize, slot: usize, s: &mut Scratch) -> bool {
        let (iw, _, sw, pw, _) = self.last();
        let row = &mut s.rows[slot..slot + self.row_len];
        let x_last = self.x.strides[self.x.strides.len() - 1];
        let dt = self.x.data_type;
        let in_place = self.x_rows_f32;
        if sw == 1 && !in_place {
            let columns = &mut row[pw..pw + iw];
            // SAFETY: forwarded contract.
            unsafe { load(x, dt, off, x_last, columns) };
            return !has_nan(columns);
        }
        let src: &[f32] = if in_place {
            // SAFETY: the row's iw consecutive f32 values (forwarded contract); x is not
            // written during the execute.
            unsafe { std::slice::from_raw_parts((x as *const f32).offset(off), iw) }
        } else {
            // SAFETY: forwarded contract.
            unsafe { load(x, dt, off, x_last, &mut s.line[..iw]) };
            &s.line[..iw]
        };
        // SAFETY: the plan's level is one this processor runs.
        unsafe { split_row(self.isa, src, pw, sw, self.neutral(), row) }
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
        unsafe { fold_row::<F>(self.isa, &s.list, self.c, carry, false, acc, arg) };
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
        if F != MAX_INDEXED && self.ring {
            // Each plane's run of rows at once.
            let mut task = rows.start;
            while task < rows.end {
                let (plane, r) = (task / per_plane, task % per_plane);
                let end = (task - r + per_plane).min(rows.end);
                // SAFETY: forwarded contract (`ring` checked the window).
                unsafe {
                    self.plane_rows::<F>(ptrs, plane / self.c, plane % self.c, r..r + end - task, s)
                };
                task = end;
            }
            return;
        }
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
/// `o`'s value of a tap is at `tap + o`; lanes from `valid` on are not read (their results are
/// stale). The lanes start at -inf (sums at 0) with the positions already in `arg` (each
/// lane's first tap inside x), or with `carry` at `acc`'s and `arg`'s values. `clean` says
/// that no tap's value is a NaN (`arg` is read and written only by `MAX_INDEXED`).
///
/// `MAX`: a value replaces the maximum when it is larger or a NaN meets a number;
/// `MAX_INDEXED` also takes its position. This is the reference's rule, which takes the first
/// tap inside x and then applies the same test: from -inf, a first tap that is larger or NaN
/// is taken here too, and one of -inf leaves the maximum at -inf and the position at the first
/// tap's, where the lanes start. A tap outside x brings -inf, which is never taken. `SUM` adds
/// (a tap outside x brings 0). The vector levels fold maxima with `max` and a strict compare
/// first (one short dependency chain a tap), which is the rule for every value but NaN, and
/// unless `clean`, test each tap for NaN and fold a vector again with the whole rule when one
/// of its taps held a NaN.
///
/// # Safety
/// Every tap addresses `min(valid, acc.len())` readable f32 values; `acc` and `arg` have the
/// same length, a multiple of 16; the processor runs `isa`; with `clean`, no tap's value is
/// a NaN.
#[inline(always)]
unsafe fn fold_row<const F: u8>(
    isa: Isa,
    taps: &[Tap],
    valid: usize,
    carry: bool,
    clean: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    match (isa, clean) {
        // SAFETY (every arm): forwarded contract; the processor runs the level.
        (Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx, true) => {
            return unsafe { fold_row_avx512::<F, false>(taps, valid, carry, acc, arg) }
        }
        (Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx, false) => {
            return unsafe { fold_row_avx512::<F, true>(taps, valid, carry, acc, arg) }
        }
        (Isa::Avx2, true) => {
            return unsafe { fold_row_avx2::<F, false>(taps, valid, carry, acc, arg) }
        }
        (Isa::Avx2, false) => {
            return unsafe { fold_row_avx2::<F, true>(taps, valid, carry, acc, arg) }
        }
        (Isa::Portable, _) => {}
    }
    let _ = (isa, clean);
    let start = if F == SUM { 0.0 } else { f32::NEG_INFINITY };
    for (o, (a, i)) in acc.iter_mut().zip(arg.iter_mut()).enumerate().take(valid) {
        if !carry {
            *a = start;
        }
        for &(p, w) in taps {
            // SAFETY: lane o's value of the tap (the caller's contract).
            let x = unsafe { p.add(o).read_unaligned() };
            if F == SUM {
                *a += x;
            } else if (x > *a || x.is_nan()) && !a.is_nan() {
                *a = x;
                *i = w;
            }
        }
    }
}

/// [`fold_row`] in AVX-512 registers (a mask per test); `CHECK`: test the taps for NaN.
///
/// # Safety
/// As for [`fold_row`]; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn fold_row_avx512<const F: u8, const CHECK: bool>(
    taps: &[Tap],
    valid: usize,
    carry: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    use std::arch::x86_64::*;
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
            let first_index = || {
                if F == MAX_INDEXED {
                    _mm512_loadu_ps(pi)
                } else {
                    _mm512_setzero_ps()
                }
            };
            let fetch = |p: *const f32| _mm512_maskz_loadu_ps(mask, p.add(o0));
            let (mut a, mut i) = (start, first_index());
            let mut nan: __mmask16 = 0;
            // The fast pass: sums, or maxima as `vmaxps` keeps them (x only when larger, so the
            // first of equal values stays), which is the rule for every value but NaN.
            for &(p, w) in taps {
                let x = fetch(p);
                if F == SUM {
                    a = _mm512_add_ps(a, x);
                } else {
                    if CHECK {
                        nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
                    }
                    if F == MAX_INDEXED {
                        let take = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, a);
                        i = _mm512_mask_mov_ps(i, take, _mm512_set1_ps(w));
                    }
                    a = _mm512_max_ps(x, a);
                }
            }
            if CHECK && nan != 0 {
                // A NaN among the taps: again with the whole rule.
                (a, i) = (start, first_index());
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
            if F == MAX_INDEXED {
                _mm512_storeu_ps(pi, i);
            }
        }
    }
}

/// [`fold_row`] in AVX registers, 8 lanes at a time; `CHECK`: test the taps for NaN.
///
/// # Safety
/// As for [`fold_row`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_row_avx2<const F: u8, const CHECK: bool>(
    taps: &[Tap],
    valid: usize,
    carry: bool,
    acc: &mut [f32],
    arg: &mut [f32],
) {
    use std::arch::x86_64::*;
    for o0 in (0..acc.len()).step_by(8) {
        let lanes = valid.saturating_sub(o0).min(8);
        let mask = lanes_below(lanes);
        // SAFETY: lanes o0..o0 + 8 of acc and arg (whole vectors), and each tap's values for
        // them (the caller's contract; lanes past `valid` masked off).
        unsafe {
            let (pa, pi) = (acc.as_mut_ptr().add(o0), arg.as_mut_ptr().add(o0));
            let start = if carry {
                _mm256_loadu_ps(pa)
            } else {
                _mm256_set1_ps(if F == SUM { 0.0 } else { f32::NEG_INFINITY })
            };
            let first_index = || {
                if F == MAX_INDEXED {
                    _mm256_loadu_ps(pi)
                } else {
                    _mm256_setzero_ps()
                }
            };
            let fetch = |p: *const f32| {
                if lanes == 8 {
                    _mm256_loadu_ps(p.add(o0))
                } else {
                    _mm256_maskload_ps(p.add(o0), mask)
                }
            };
            let (mut a, mut i) = (start, first_index());
            let mut nan = _mm256_setzero_ps();
            // The fast pass, as in fold_row_avx512.
            for &(p, w) in taps {
                let x = fetch(p);
                if F == SUM {
                    a = _mm256_add_ps(a, x);
                } else {
                    if CHECK {
                        nan = _mm256_or_ps(nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
                    }
                    if F == MAX_INDEXED {
                        let take = _mm256_cmp_ps::<_CMP_GT_OQ>(x, a);
                        i = _mm256_blendv_ps(i, _mm256_set1_ps(w), take);
                    }
                    a = _mm256_max_ps(x, a);
                }
            }
            if CHECK && _mm256_movemask_ps(nan) != 0 {
                (a, i) = (start, first_index());
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
            if F == MAX_INDEXED {
                _mm256_storeu_ps(pi, i);
            }
        }
    }
}

/// The AVX2 mask of lanes `0..n` (all 8 from n = 8 on).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lanes_below(n: usize) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // SAFETY: AVX2 is enabled in every caller (the intrinsics inline into them).
    unsafe {
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(n.min(8) as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        )
    }
}

/// The vector operations of [`Pooling::clean_row`] and [`split_row`] at one level (the
/// functions inline into callers compiled for it).
#[cfg(target_arch = "x86_64")]
trait Lanes {
    type V: Copy;
    /// Lanes of a vector.
    const N: usize;
    /// # Safety
    /// The processor runs the level (for this and every function below).
    unsafe fn splat(v: f32) -> Self::V;
    /// # Safety
    /// `p` addresses `N` readable values.
    unsafe fn load(p: *const f32) -> Self::V;
    /// The larger lane by lane; `a`'s lane where they are equal (`x` is never NaN here).
    unsafe fn max(x: Self::V, a: Self::V) -> Self::V;
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn div(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// `p` addresses `lanes` (at most `N`) writable values; only those are written.
    unsafe fn store(p: *mut f32, v: Self::V, lanes: usize);
    /// `lanes` (fewer than `N`) values from `p`, `fill` in the other lanes (not read).
    ///
    /// # Safety
    /// `p` addresses `lanes` readable values.
    unsafe fn load_part(p: *const f32, lanes: usize, fill: Self::V) -> Self::V;
    /// Whether a lane of `a` or of `b` is a NaN.
    unsafe fn any_nan(a: Self::V, b: Self::V) -> bool;
    /// The even and the odd lanes of `lo` followed by `hi`.
    unsafe fn deinterleave(lo: Self::V, hi: Self::V) -> (Self::V, Self::V);
}

/// A [`Lanes`] implementation from the level's intrinsics, and the bodies of its
/// level-specific functions (their arguments named as given).
macro_rules! lanes_impl {
    ($(#[$doc:meta])* $name:ident, $vec:ident, $n:literal,
     $set1:ident, $load:ident, $max:ident, $add:ident, $mul:ident, $div:ident,
     store |$p:ident, $v:ident, $lanes:ident| $store:block
     load_part |$lp:ident, $ll:ident, $lf:ident| $load_part:block
     any_nan |$na:ident, $nb:ident| $any_nan:block
     deinterleave |$dlo:ident, $dhi:ident| $deinterleave:block) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        struct $name;

        #[cfg(target_arch = "x86_64")]
        impl Lanes for $name {
            type V = std::arch::x86_64::$vec;
            const N: usize = $n;
            // SAFETY (every function): the caller's contract.
            #[inline(always)]
            unsafe fn splat(v: f32) -> Self::V {
                unsafe { std::arch::x86_64::$set1(v) }
            }
            #[inline(always)]
            unsafe fn load(p: *const f32) -> Self::V {
                unsafe { std::arch::x86_64::$load(p) }
            }
            #[inline(always)]
            unsafe fn max(x: Self::V, a: Self::V) -> Self::V {
                unsafe { std::arch::x86_64::$max(x, a) }
            }
            #[inline(always)]
            unsafe fn add(a: Self::V, b: Self::V) -> Self::V {
                unsafe { std::arch::x86_64::$add(a, b) }
            }
            #[inline(always)]
            unsafe fn mul(a: Self::V, b: Self::V) -> Self::V {
                unsafe { std::arch::x86_64::$mul(a, b) }
            }
            #[inline(always)]
            unsafe fn div(a: Self::V, b: Self::V) -> Self::V {
                unsafe { std::arch::x86_64::$div(a, b) }
            }
            #[inline(always)]
            unsafe fn store($p: *mut f32, $v: Self::V, $lanes: usize) {
                use std::arch::x86_64::*;
                unsafe { $store }
            }
            #[inline(always)]
            unsafe fn load_part($lp: *const f32, $ll: usize, $lf: Self::V) -> Self::V {
                use std::arch::x86_64::*;
                unsafe { $load_part }
            }
            #[inline(always)]
            unsafe fn any_nan($na: Self::V, $nb: Self::V) -> bool {
                use std::arch::x86_64::*;
                unsafe { $any_nan }
            }
            #[inline(always)]
            unsafe fn deinterleave($dlo: Self::V, $dhi: Self::V) -> (Self::V, Self::V) {
                use std::arch::x86_64::*;
                unsafe { $deinterleave }
            }
        }
    };
}

lanes_impl!(
    /// [`Lanes`] of AVX-512 F.
    Zmm, __m512, 16,
    _mm512_set1_ps, _mm512_loadu_ps, _mm512_max_ps, _mm512_add_ps, _mm512_mul_ps, _mm512_div_ps,
    store |p, v, lanes| {
        if lanes == 16 {
            _mm512_storeu_ps(p, v)
        } else {
            _mm512_mask_storeu_ps(p, ((1u32 << lanes) - 1) as __mmask16, v)
        }
    }
    load_part |p, lanes, fill| { _mm512_mask_loadu_ps(fill, ((1u32 << lanes) - 1) as __mmask16, p) }
    any_nan |a, b| { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, b) != 0 }
    deinterleave |lo, hi| {
        let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        (_mm512_permutex2var_ps(lo, evens, hi), _mm512_permutex2var_ps(lo, odds, hi))
    }
);

lanes_impl!(
    /// [`Lanes`] of AVX2.
    Ymm, __m256, 8,
    _mm256_set1_ps, _mm256_loadu_ps, _mm256_max_ps, _mm256_add_ps, _mm256_mul_ps, _mm256_div_ps,
    store |p, v, lanes| {
        if lanes == 8 {
            _mm256_storeu_ps(p, v)
        } else if lanes > 0 {
            _mm256_maskstore_ps(p, lanes_below(lanes), v)
        }
    }
    load_part |p, lanes, fill| {
        let m = lanes_below(lanes);
        _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m))
    }
    any_nan |a, b| { _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(a, b)) != 0 }
    deinterleave |lo, hi| {
        // Entries 0, 2, 4, 6, then 1, 3, 5, 7 of each, then the halves recombined.
        let pick = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let (lo, hi) = (_mm256_permutevar8x32_ps(lo, pick), _mm256_permutevar8x32_ps(hi, pick));
        (_mm256_permute2f128_ps::<0x20>(lo, hi), _mm256_permute2f128_ps::<0x31>(lo, hi))
    }
);

/// Whether any of `v` is a NaN (a loop the compiler vectorises: no early exit).
#[inline(always)]
fn has_nan(v: &[f32]) -> bool {
    v.iter().fold(false, |any, x| any | x.is_nan())
}

/// Writes the `src.len()` input columns of a row into `row` as the stride's phases of a row
/// padded by `pw` values on the left (see [`Pooling::of`]; column j is entry j + pw, phase
/// (j + pw) % sw at (j + pw) / sw). The vector levels (strides 1 and 2) write whole vectors:
/// past the last column, up to the next multiple of 32 columns, they write `neutral`; every
/// other value of `row` stays as it was. Returns whether `src` holds no NaN.
///
/// # Safety
/// Each of the `sw` phases of `row` holds at least `(pw + src.len().next_multiple_of(32))
/// .div_ceil(sw)` values, and the values past the row's last column are `neutral`; the
/// processor runs `isa`.
#[inline(always)]
pub(crate) unsafe fn split_row(
    isa: Isa,
    src: &[f32],
    pw: usize,
    sw: usize,
    neutral: f32,
    row: &mut [f32],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    match isa {
        // SAFETY (both arms): forwarded contract; the processor runs the level.
        Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx if sw <= 2 => {
            return unsafe { split_row_avx512(src, pw, sw, neutral, row) }
        }
        Isa::Avx2 if sw <= 2 => return unsafe { split_row_avx2(src, pw, sw, neutral, row) },
        _ => {}
    }
    let _ = (isa, neutral);
    if sw == 1 {
        row[pw..pw + src.len()].copy_from_slice(src);
    } else {
        let phase_len = row.len() / sw;
        for (j, &v) in src.iter().enumerate() {
            let e = j + pw;
            row[(e % sw) * phase_len + e / sw] = v;
        }
    }
    !has_nan(src)
}

/// [`split_row`] at strides 1 and 2 in `L`'s vectors: a vector of columns at a time, or two
/// split into their even and odd columns.
///
/// # Safety
/// As for [`split_row`]; `sw` is 1 or 2; the processor runs `L`'s instructions.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn split_row_in<L: Lanes>(
    src: &[f32],
    pw: usize,
    sw: usize,
    neutral: f32,
    row: &mut [f32],
) -> bool {
    let (iw, x, n) = (src.len(), src.as_ptr(), L::N);
    // SAFETY (every block below): the caller's contract: the level's instructions, the
    // columns below iw of src, and the row's length (whole vectors fit in each phase).
    let fill = unsafe { L::splat(neutral) };
    // Columns j.. of the row, `neutral` from iw on (those lanes are not read). A function,
    // not a closure: a closure would be compiled without the caller's target features, and
    // the intrinsics would not inline into it.
    #[inline(always)]
    unsafe fn load<L: Lanes>(x: *const f32, iw: usize, j: usize, fill: L::V) -> L::V {
        let left = iw.saturating_sub(j);
        // SAFETY: the caller's contract: the columns below iw.
        unsafe {
            if left >= L::N {
                L::load(x.add(j))
            } else {
                L::load_part(x.wrapping_add(j), left, fill)
            }
        }
    }
    let mut nan = false;
    if sw == 1 {
        let to = row[pw..].as_mut_ptr();
        for j0 in (0..iw).step_by(n) {
            unsafe {
                let v = load::<L>(x, iw, j0, fill);
                nan |= L::any_nan(v, v);
                L::store(to.add(j0), v, n);
            }
        }
        return !nan;
    }
    // Column 2t is entry 2t + pw: phase pw % 2 at t + pw / 2. Column 2t + 1 is entry
    // 2t + 1 + pw: the other phase at t + (pw + 1) / 2.
    let phase_len = row.len() / 2;
    let (e, o) = (
        (pw % 2) * phase_len + pw / 2,
        (1 - pw % 2) * phase_len + pw.div_ceil(2),
    );
    let (to_even, to_odd) = (row[e..].as_mut_ptr(), row[o..].as_mut_ptr());
    for j0 in (0..iw).step_by(2 * n) {
        unsafe {
            let (lo, hi) = (load::<L>(x, iw, j0, fill), load::<L>(x, iw, j0 + n, fill));
            nan |= L::any_nan(lo, hi);
            let (even, odd) = L::deinterleave(lo, hi);
            L::store(to_even.add(j0 / 2), even, n);
            L::store(to_odd.add(j0 / 2), odd, n);
        }
    }
    !nan
}

/// [`split_row_in`] compiled for AVX-512 F.
///
/// # Safety
/// As for [`split_row`]; `sw` is 1 or 2; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn split_row_avx512(
    src: &[f32],
    pw: usize,
    sw: usize,
    neutral: f32,
    row: &mut [f32],
) -> bool {
    // SAFETY: forwarded contract.
    unsafe { split_row_in::<Zmm>(src, pw, sw, neutral, row) }
}

/// [`split_row_in`] compiled for AVX2.
///
/// # Safety
/// As for [`split_row`]; `sw` is 1 or 2; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn split_row_avx2(src: &[f32], pw: usize, sw: usize, neutral: f32, row: &mut [f32]) -> bool {
    // SAFETY: forwarded contract.
    unsafe { split_row_in::<Ymm>(src, pw, sw, neutral, row) }
}

/// Per-task buffers.
struct Scratch {
    /// The results of a row's outputs (or a position's channels), whole vectors.
    acc: Vec<f32>,
    arg: Vec<f32>,
    /// Staged input rows (plane path: in the stride's phases, neutral outside the input's
    /// columns), or staged channel runs (channels-innermost path).
    rows: Vec<f32>,
    /// One input row as f32 (plane path, where x's rows are not consecutive f32 values and
    /// the stride is above 1).
    line: Vec<f32>,
    /// The taps of the batch being folded.
    list: Vec<Tap>,
    /// Per staged row of the ring ([`Pooling::plane_rows`]): no NaN in it.
    clean: [bool; STAGED_ROWS],
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
        let (iw, ow, sw, _, _) = self.last();
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
                line: if !self.channels_inner && sw > 1 {
                    vec![0.0; iw]
                } else {
                    Vec::new()
                },
                list: Vec::with_capacity(BATCH),
                clean: [false; STAGED_ROWS],
            }
        };
        // Rows in chunks of about 16 KiB of output each, so that a task is worth its
        // scheduling.
        let per_row = (width * if self.channels_inner { ow } else { 1 }).max(1);
        let chunk = (4096 / per_row).clamp(1, rows.max(1));
        pool::for_each_init(rows.div_ceil(chunk), 1, scratch, |s, i| {
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
