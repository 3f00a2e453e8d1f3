//! Convolution (cross-correlation) in all three directions, 1 to 3 spatial dims, with groups,
//! asymmetric padding, stride and dilation.
//!
//! All three directions walk the same set of (input element, filter element, output element)
//! triples that the forward convolution multiplies together:
//! `y[n, k, o] += x[n, g*Cg + c, o*stride - pre_padding + r*dilation] * w[k, c, r]`, with
//! `g = k / Kg`. Fprop accumulates `x*w` into `y`, dgrad `dy*w` into `dx`, wgrad `x*dy` into `dw`:
//! each is exactly the adjoint of the others, and padding contributes nothing.

use kiln_core::{ConvDirection, ConvParams};
use kiln_plugin_sdk::{PluginError, PluginResult};

/// The geometry of one convolution with its spatial dims widened to three (leading dims of 1).
#[derive(Debug, Clone)]
pub(super) struct ConvGeometry {
    batch: usize,
    channels: usize,
    out_channels: usize,
    groups: usize,
    input: [usize; 3],
    filter: [usize; 3],
    output: [usize; 3],
    pre_padding: [i64; 3],
    stride: [i64; 3],
    dilation: [i64; 3],
}

impl ConvGeometry {
    /// The geometry of x `x_dims`, w `w_dims`, y `y_dims` under `params`.
    ///
    /// Refuses what shape inference refuses (wrong ranks, channels not divisible into groups,
    /// bad geometry) and `y_dims` other than the inferred output dims; `what` names the node.
    pub(super) fn new(
        x_dims: &[i64],
        w_dims: &[i64],
        y_dims: &[i64],
        params: &ConvParams,
        what: &str,
    ) -> PluginResult<Self> {
        let want = kiln_core::shape::conv_output_dims(x_dims, w_dims, params, what)?;
        if want != y_dims {
            return Err(PluginError::bad_param(format!(
                "{what}: y has dims {y_dims:?} but x {x_dims:?} and w {w_dims:?} give {want:?}"
            )));
        }
        let n = params.spatial_rank();
        let pad = 3 - n;
        let mut geometry = ConvGeometry {
            batch: x_dims[0] as usize,
            channels: x_dims[1] as usize,
            out_channels: w_dims[0] as usize,
            groups: (x_dims[1] / w_dims[1]) as usize,
            input: [1; 3],
            filter: [1; 3],
            output: [1; 3],
            pre_padding: [0; 3],
            stride: [1; 3],
            dilation: [1; 3],
        };
        for i in 0..n {
            geometry.input[pad + i] = x_dims[2 + i] as usize;
            geometry.filter[pad + i] = w_dims[2 + i] as usize;
            geometry.output[pad + i] = y_dims[2 + i] as usize;
            geometry.pre_padding[pad + i] = params.pre_padding[i];
            geometry.stride[pad + i] = params.stride[i];
            geometry.dilation[pad + i] = params.dilation[i];
        }
        Ok(geometry)
    }

    fn x_len(&self) -> usize {
        self.batch * self.channels * self.input.iter().product::<usize>()
    }

    fn w_len(&self) -> usize {
        self.out_channels * (self.channels / self.groups) * self.filter.iter().product::<usize>()
    }

    fn y_len(&self) -> usize {
        self.batch * self.out_channels * self.output.iter().product::<usize>()
    }

    /// Calls `f(x_offset, w_offset, y_offset)` (packed row-major offsets) for every product the
    /// forward convolution sums, skipping the ones that fall into padding.
    fn visit(&self, mut f: impl FnMut(usize, usize, usize)) {
        let cg = self.channels / self.groups;
        let kg = self.out_channels / self.groups;
        let [i0, i1, i2] = self.input;
        let [r0, r1, r2] = self.filter;
        let [o0, o1, o2] = self.output;
        let in_spatial = i0 * i1 * i2;
        let filter_spatial = r0 * r1 * r2;
        // Input coordinate of output o and filter tap r along axis a, if inside the input.
        let coord = |a: usize, o: usize, r: usize| -> Option<usize> {
            let i = o as i64 * self.stride[a] - self.pre_padding[a] + r as i64 * self.dilation[a];
            (i >= 0 && (i as usize) < self.input[a]).then_some(i as usize)
        };
        let mut y_off = 0usize;
        for n in 0..self.batch {
            for k in 0..self.out_channels {
                let g = k / kg;
                for p0 in 0..o0 {
                    for p1 in 0..o1 {
                        for p2 in 0..o2 {
                            for c in 0..cg {
                                let x_plane = (n * self.channels + g * cg + c) * in_spatial;
                                let w_plane = (k * cg + c) * filter_spatial;
                                for q0 in 0..r0 {
                                    let Some(a0) = coord(0, p0, q0) else { continue };
                                    for q1 in 0..r1 {
                                        let Some(a1) = coord(1, p1, q1) else { continue };
                                        for q2 in 0..r2 {
                                            let Some(a2) = coord(2, p2, q2) else { continue };
                                            let x_off = x_plane + (a0 * i1 + a1) * i2 + a2;
                                            let w_off = w_plane + (q0 * r1 + q1) * r2 + q2;
                                            f(x_off, w_off, y_off);
                                        }
                                    }
                                }
                            }
                            y_off += 1;
                        }
                    }
                }
            }
        }
    }

    /// Runs the convolution in `direction` on its two inputs (packed row-major, in
    /// `ConvOp::inputs` order: fprop x, w; dgrad dy, w; wgrad x, dy) and returns its output.
    ///
    /// Refuses inputs whose lengths do not match the geometry; `what` names the node.
    pub(super) fn run(
        &self,
        direction: ConvDirection,
        first: &[f64],
        second: &[f64],
        what: &str,
    ) -> PluginResult<Vec<f64>> {
        let (x_len, w_len, y_len) = (self.x_len(), self.w_len(), self.y_len());
        let (first_len, second_len, out_len) = match direction {
            ConvDirection::Fprop => (x_len, w_len, y_len),
            ConvDirection::Dgrad => (y_len, w_len, x_len),
            ConvDirection::Wgrad => (x_len, y_len, w_len),
        };
        if first.len() != first_len || second.len() != second_len {
            return Err(PluginError::internal(format!(
                "{what}: operands hold {} and {} values but the geometry needs {first_len} and \
                 {second_len}",
                first.len(),
                second.len()
            )));
        }
        let mut out = vec![0.0f64; out_len];
        // The offsets `visit` yields lie inside the lengths checked above, so indexing holds.
        match direction {
            ConvDirection::Fprop => {
                let (x, w) = (first, second);
                self.visit(|xo, wo, yo| out[yo] += x[xo] * w[wo]);
            }
            ConvDirection::Dgrad => {
                let (dy, w) = (first, second);
                self.visit(|xo, wo, yo| out[xo] += dy[yo] * w[wo]);
            }
            ConvDirection::Wgrad => {
                let (x, dy) = (first, second);
                self.visit(|xo, wo, yo| out[wo] += x[xo] * dy[yo]);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pre: &[i64], post: &[i64], stride: &[i64], dilation: &[i64]) -> ConvParams {
        ConvParams {
            pre_padding: pre.to_vec(),
            post_padding: post.to_vec(),
            stride: stride.to_vec(),
            dilation: dilation.to_vec(),
        }
    }

    #[test]
    fn geometry_refuses_mismatched_output_dims() {
        let p = params(&[0], &[0], &[1], &[1]);
        assert!(ConvGeometry::new(&[1, 1, 4], &[1, 1, 2], &[1, 1, 3], &p, "c").is_ok());
        let err =
            ConvGeometry::new(&[1, 1, 4], &[1, 1, 2], &[1, 1, 2], &p, "node 'c'").unwrap_err();
        assert!(err.message.contains("node 'c'"), "{}", err.message);
        assert!(ConvGeometry::new(&[1, 3, 4], &[2, 2, 2], &[1, 2, 3], &p, "c").is_err());
    }

    #[test]
    fn run_refuses_wrong_lengths() {
        let p = params(&[0], &[0], &[1], &[1]);
        let g = ConvGeometry::new(&[1, 1, 4], &[1, 1, 2], &[1, 1, 3], &p, "c").unwrap();
        assert!(g
            .run(ConvDirection::Fprop, &[0.0; 4], &[0.0; 2], "c")
            .is_ok());
        assert!(g
            .run(ConvDirection::Fprop, &[0.0; 3], &[0.0; 2], "c")
            .is_err());
        assert!(g
            .run(ConvDirection::Dgrad, &[0.0; 4], &[0.0; 2], "c")
            .is_err());
    }
}
