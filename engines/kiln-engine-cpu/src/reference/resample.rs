//! Pooling and its backward in f64 (see `kiln_core::ops::resample` for the definitions).
//!
//! Buffers are packed row-major [N, C, spatial...]; windows are walked in row-major order, so
//! the first maximum found is the one cuDNN's index names.

use super::GenericInputs;
use kiln_core::ops::resample::{ResampleGeometry, ResampleMode, ResampleOp};
use kiln_core::GenericOp;
use kiln_plugin_sdk::{PluginError, PluginResult};

/// The geometry of one node over concrete dims: `[N * C]` planes of `input` spatial dims pooled
/// to `output` spatial dims.
pub(crate) struct Windows<'a> {
    pub geometry: &'a ResampleGeometry,
    pub input: &'a [i64],
    pub output: &'a [i64],
}

impl Windows<'_> {
    fn count(dims: &[i64]) -> usize {
        dims.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Elements per input plane.
    pub fn in_plane(&self) -> usize {
        Self::count(self.input)
    }

    /// Elements per output plane.
    pub fn out_plane(&self) -> usize {
        Self::count(self.output)
    }

    /// Calls `f(window position, input offset in the plane or None for padding)` for every
    /// position of the window of output element `o` (row-major offset in the output plane),
    /// in row-major window order.
    pub fn for_each(&self, o: usize, mut f: impl FnMut(usize, Option<usize>)) {
        let g = self.geometry;
        let rank = self.output.len();
        let mut out_coord = [0i64; 3];
        let mut rest = o as i64;
        for d in (0..rank).rev() {
            out_coord[d] = rest % self.output[d];
            rest /= self.output[d];
        }
        let total = g.window_elements().max(0) as usize;
        for w in 0..total {
            let mut rest = w as i64;
            let mut offset = 0i64;
            let mut inside = true;
            let mut tap = [0i64; 3];
            for d in (0..rank).rev() {
                tap[d] = rest % g.window[d];
                rest /= g.window[d];
            }
            for d in 0..rank {
                let pos = out_coord[d] * g.stride[d] - g.pre_padding[d] + tap[d];
                if pos < 0 || pos >= self.input[d] {
                    inside = false;
                }
                offset = offset * self.input[d] + pos;
            }
            f(w, inside.then_some(offset as usize));
        }
    }

    /// The first maximum of the window of output element `o` over `plane` (NaN the largest):
    /// its value and window position. Every window holds an element of the input (validation
    /// keeps padding smaller than the window).
    pub fn argmax(&self, plane: &[f64], o: usize) -> (f64, usize) {
        let mut best = (f64::NEG_INFINITY, usize::MAX);
        self.for_each(o, |w, at| {
            let Some(at) = at else { return };
            let v = plane.get(at).copied().unwrap_or(f64::NAN);
            let better = best.1 == usize::MAX
                || (v.is_nan() && !best.0.is_nan())
                || (!best.0.is_nan() && v > best.0);
            if better {
                best = (v, w);
            }
        });
        best
    }
}

fn planes(dims: &[i64]) -> usize {
    dims[..2].iter().map(|&d| d.max(0) as usize).product()
}

/// Evaluates a resample node: `y` and, when bound, `index`.
pub(super) fn run(op: &GenericOp, io: &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let x_uid = op.inputs.get("x").copied().unwrap_or_default();
    let (tx, x) = (io.read)(x_uid)?;
    if tx.dims.len() < 3 {
        return Err(PluginError::bad_param(format!(
            "{}: x has no spatial dims",
            io.what
        )));
    }
    let r = ResampleOp::from_generic(op, tx.dims.len() - 2, io.what)?;
    let y_dims = r.geometry.output_dims(&tx.dims, io.what)?;
    let win = Windows {
        geometry: &r.geometry,
        input: &tx.dims[2..],
        output: &y_dims[2..],
    };
    let (ip, op_) = (win.in_plane(), win.out_plane());
    if x.len() != planes(&tx.dims) * ip {
        return Err(PluginError::bad_param(format!(
            "{}: x holds {} values, not {}",
            io.what,
            x.len(),
            planes(&tx.dims) * ip
        )));
    }
    let full = r.geometry.window_elements() as f64;
    let mut y = Vec::with_capacity(planes(&tx.dims) * op_);
    let mut index = Vec::new();
    for plane in x.chunks(ip.max(1)) {
        for o in 0..op_ {
            match r.mode {
                ResampleMode::MaxPool => {
                    let (v, w) = win.argmax(plane, o);
                    y.push(v);
                    index.push(w as f64);
                }
                ResampleMode::AvgPoolIncludePadding | ResampleMode::AvgPoolExcludePadding => {
                    let (mut sum, mut n) = (0.0, 0usize);
                    win.for_each(o, |_, at| {
                        if let Some(at) = at {
                            sum += plane.get(at).copied().unwrap_or(f64::NAN);
                            n += 1;
                        }
                    });
                    let divisor = if r.mode == ResampleMode::AvgPoolIncludePadding {
                        full
                    } else {
                        n.max(1) as f64
                    };
                    y.push(sum / divisor);
                }
            }
        }
    }
    let mut out = vec![(r.y, y)];
    if let Some(i) = r.index {
        out.push((i, index));
    }
    Ok(out)
}

/// Evaluates a resample_backward node: `dx`.
pub(super) fn run_backward(
    op: &GenericOp,
    io: &GenericInputs<'_>,
) -> PluginResult<Vec<(i64, Vec<f64>)>> {
    let dy_uid = op.inputs.get("dy").copied().unwrap_or_default();
    let (tdy, dy) = (io.read)(dy_uid)?;
    if tdy.dims.len() < 3 {
        return Err(PluginError::bad_param(format!(
            "{}: dy has no spatial dims",
            io.what
        )));
    }
    let r = ResampleOp::from_generic(op, tdy.dims.len() - 2, io.what)?;
    let dx_uid = r.dx.unwrap_or_default();
    let tdx = io.graph.tensor_for(dx_uid, io.node)?;
    let win = Windows {
        geometry: &r.geometry,
        input: &tdx.dims[2..],
        output: &tdy.dims[2..],
    };
    let (ip, op_) = (win.in_plane(), win.out_plane());
    let count = planes(&tdx.dims);
    if dy.len() != count * op_ {
        return Err(PluginError::bad_param(format!(
            "{}: dy holds {} values, not {}",
            io.what,
            dy.len(),
            count * op_
        )));
    }
    let index = r.index.map(|i| (io.read)(i)).transpose()?;
    let x = r.x.map(|u| (io.read)(u)).transpose()?;
    let full = r.geometry.window_elements();
    let mut dx = vec![0.0; count * ip];
    for p in 0..count {
        let plane_dx = &mut dx[p * ip..(p + 1) * ip];
        for o in 0..op_ {
            let g = dy[p * op_ + o];
            match r.mode {
                ResampleMode::MaxPool => {
                    let w = match (&index, &x) {
                        (Some((_, idx)), _) => {
                            let v = idx.get(p * op_ + o).copied().unwrap_or(-1.0);
                            // A value outside the window, or not whole, routes nothing.
                            if v >= 0.0 && v < full as f64 && v.fract() == 0.0 {
                                v as usize
                            } else {
                                continue;
                            }
                        }
                        (None, Some((_, xs))) => win.argmax(&xs[p * ip..(p + 1) * ip], o).1,
                        (None, None) => continue,
                    };
                    win.for_each(o, |pos, at| {
                        if let (true, Some(at)) = (pos == w, at) {
                            plane_dx[at] += g;
                        }
                    });
                }
                ResampleMode::AvgPoolIncludePadding | ResampleMode::AvgPoolExcludePadding => {
                    let mut n = 0usize;
                    win.for_each(o, |_, at| n += usize::from(at.is_some()));
                    let divisor = if r.mode == ResampleMode::AvgPoolIncludePadding {
                        full as f64
                    } else {
                        n.max(1) as f64
                    };
                    win.for_each(o, |_, at| {
                        if let Some(at) = at {
                            plane_dx[at] += g / divisor;
                        }
                    });
                }
            }
        }
    }
    Ok(vec![(dx_uid, dx)])
}
