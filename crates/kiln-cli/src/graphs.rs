//! The graphs the demo and the benchmarks build.

use kiln::{
    ConvFpropAttributes, DataType, Graph, MatmulAttributes, PointwiseAttributes, PointwiseMode,
    Tensor, TensorAttributes,
};

/// A forward convolution, NCHW f32, optionally followed by bias + relu.
pub struct ConvCase {
    pub n: i64,
    pub c: i64,
    pub h: i64,
    pub w: i64,
    pub k: i64,
    pub r: i64,
    pub s: i64,
    pub pad: i64,
    pub fused: bool,
}

impl ConvCase {
    /// The demo's case: a small conv + bias + relu that the reference engine checks quickly.
    pub fn demo() -> ConvCase {
        ConvCase {
            n: 2,
            c: 32,
            h: 28,
            w: 28,
            k: 64,
            r: 3,
            s: 3,
            pad: 1,
            fused: true,
        }
    }

    /// Multiply-adds times two.
    pub fn flops(&self) -> f64 {
        let oh = self.h + 2 * self.pad - self.r + 1;
        let ow = self.w + 2 * self.pad - self.s + 1;
        2.0 * (self.n * self.k * oh * ow * self.c * self.r * self.s) as f64
    }

    pub fn shape(&self) -> Vec<i64> {
        vec![
            self.n, self.c, self.h, self.w, self.k, self.r, self.s, self.pad,
        ]
    }

    /// The graph and its tensors: inputs (x, w[, bias]) and the output.
    pub fn graph(&self) -> (Graph, Vec<Tensor>, Tensor) {
        let mut g = Graph::new();
        g.set_name("conv_bias_relu");
        let f32t = |name: &str, dims: &[i64]| {
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::F32)
        };
        let x = g.tensor(f32t("x", &[self.n, self.c, self.h, self.w]));
        let w = g.tensor(f32t("w", &[self.k, self.c, self.r, self.s]));
        let conv = g.conv_fprop(
            &x,
            &w,
            ConvFpropAttributes::new()
                .name("conv")
                .padding(&[self.pad, self.pad])
                .stride(&[1, 1])
                .dilation(&[1, 1]),
        );
        if !self.fused {
            conv.set_output(true).set_name("y");
            return (g, vec![x, w], conv);
        }
        let b = g.tensor(f32t("bias", &[1, self.k, 1, 1]));
        let biased = g.pointwise(
            &conv,
            Some(&b),
            PointwiseAttributes::new(PointwiseMode::Add).name("bias"),
        );
        let y = g.pointwise(
            &biased,
            None,
            PointwiseAttributes::new(PointwiseMode::Relu).name("relu"),
        );
        y.set_output(true).set_name("y");
        (g, vec![x, w, b], y)
    }
}

/// A square f32 matmul.
pub struct MatmulCase {
    pub m: i64,
    pub n: i64,
    pub k: i64,
}

impl MatmulCase {
    pub fn flops(&self) -> f64 {
        2.0 * (self.m * self.n * self.k) as f64
    }

    pub fn graph(&self) -> (Graph, Vec<Tensor>, Tensor) {
        let mut g = Graph::new();
        let a = g.tensor(
            TensorAttributes::new()
                .name("a")
                .dim(&[1, self.m, self.k])
                .data_type(DataType::F32),
        );
        let b = g.tensor(
            TensorAttributes::new()
                .name("b")
                .dim(&[1, self.k, self.n])
                .data_type(DataType::F32),
        );
        let c = g.matmul(&a, &b, MatmulAttributes::new().name("matmul"));
        c.set_output(true).set_name("c");
        (g, vec![a, b], c)
    }
}

/// The norm of a [`NormCase`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormKind {
    /// layernorm in inference, x [rows, hidden].
    Layernorm,
    /// batchnorm_inference, x [N, C, H, W] (NCHW).
    BatchnormInference,
}

/// A normalization bench case, f32.
pub struct NormCase {
    pub kind: NormKind,
    pub shape: Vec<i64>,
}

impl NormCase {
    /// The op name in `kiln bench`'s rows.
    pub fn op(&self) -> &'static str {
        match self.kind {
            NormKind::Layernorm => "layernorm",
            NormKind::BatchnormInference => "batchnorm_inference",
        }
    }

    /// The graph, its inputs and its output `y`.
    pub fn graph(&self) -> anyhow::Result<(Graph, Vec<Tensor>, Tensor)> {
        let mut g = Graph::new();
        let f32 = |g: &mut Graph, name: &str, dims: &[i64]| {
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(dims)
                    .data_type(DataType::F32),
            )
        };
        let x = f32(&mut g, "x", &self.shape);
        let (inputs, y) = match self.kind {
            NormKind::Layernorm => {
                let mut p = self.shape.clone();
                p[0] = 1;
                let scale = f32(&mut g, "scale", &p);
                let bias = f32(&mut g, "bias", &p);
                let out = g.layernorm(
                    &x,
                    &scale,
                    &bias,
                    kiln::LayernormAttributes::new().epsilon(1e-5),
                )?;
                (vec![x, scale, bias], out.y)
            }
            NormKind::BatchnormInference => {
                let p: Vec<i64> = (0..self.shape.len())
                    .map(|i| if i == 1 { self.shape[1] } else { 1 })
                    .collect();
                let ts: Vec<Tensor> = ["mean", "inv_variance", "scale", "bias"]
                    .iter()
                    .map(|n| f32(&mut g, n, &p))
                    .collect();
                let y = g.batchnorm_inference(
                    &x,
                    &ts[0],
                    &ts[1],
                    &ts[2],
                    &ts[3],
                    kiln::BatchnormInferenceAttributes::new(),
                )?;
                (std::iter::once(x).chain(ts).collect(), y)
            }
        };
        y.set_output(true).set_name("y");
        Ok((g, inputs, y))
    }
}
