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

/// Strides of an NCHW-ordered `dims` laid out channels-last (NHWC), as cuDNN users lay out
/// half-precision activations and filters.
fn channels_last(dims: &[i64; 4]) -> [i64; 4] {
    let [_, c, h, w] = *dims;
    [h * w * c, 1, w * c, c]
}

/// A matmul `c[1, M, N] = a[1, M, K] · b[1, K, N]` in f16 or bf16 (f32 accumulation, output in
/// the input type), optionally followed by a bias along N and gelu: the GPU matmul cases.
pub struct HalfMatmulCase {
    pub dt: DataType,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub bias_gelu: bool,
}

impl HalfMatmulCase {
    /// The case's name, as `scripts/gpu-bench.py` names its PyTorch peer.
    pub fn name(&self) -> String {
        let epilogue = if self.bias_gelu { " + bias + gelu" } else { "" };
        format!(
            "matmul {} {}x{}x{}{epilogue}",
            self.dt.name(),
            self.m,
            self.n,
            self.k
        )
    }

    /// The graph; its bound tensors are `a`, `b`, (`bias`,) `y`.
    pub fn graph(&self) -> Graph {
        let mut g = Graph::new();
        g.set_name(self.name());
        let t = |name: &str, dims: &[i64]| {
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(self.dt)
        };
        let a = g.tensor(t("a", &[1, self.m, self.k]));
        let b = g.tensor(t("b", &[1, self.k, self.n]));
        let c = g.matmul(&a, &b, MatmulAttributes::new().name("matmul"));
        let y = if self.bias_gelu {
            c.set_data_type(DataType::F32);
            let bias = g.tensor(t("bias", &[1, 1, self.n]));
            let biased = g.pointwise(
                &c,
                Some(&bias),
                PointwiseAttributes::new(PointwiseMode::Add).name("bias"),
            );
            g.pointwise(
                &biased,
                None,
                PointwiseAttributes::new(PointwiseMode::Gelu).name("gelu"),
            )
        } else {
            c
        };
        y.set_output(true).set_name("y").set_data_type(self.dt);
        g
    }
}

/// A forward convolution in f16 or bf16, NHWC (x, w and y channels-last), square images and
/// filters, padding `r / 2`, followed by bias + relu (f32 accumulation, output in the input
/// type): the GPU convolution cases, given as (N, C, H, K, R, stride).
pub struct NhwcConvCase {
    pub dt: DataType,
    pub n: i64,
    pub c: i64,
    pub h: i64,
    pub k: i64,
    pub r: i64,
    pub stride: i64,
}

impl NhwcConvCase {
    /// The case's name, as `scripts/gpu-bench.py` names its PyTorch peer.
    pub fn name(&self) -> String {
        format!(
            "conv {} N{} C{} H{} K{} R{} s{} bias_relu=true",
            self.dt.name(),
            self.n,
            self.c,
            self.h,
            self.k,
            self.r,
            self.stride
        )
    }

    fn out_hw(&self) -> i64 {
        (self.h + 2 * (self.r / 2) - self.r) / self.stride + 1
    }

    /// (N, C, H, K, R, stride).
    pub fn shape(&self) -> Vec<i64> {
        vec![self.n, self.c, self.h, self.k, self.r, self.stride]
    }

    /// The graph; its bound tensors are `x`, `w`, `bias`, `y`.
    pub fn graph(&self) -> Graph {
        let mut g = Graph::new();
        g.set_name(self.name());
        let t = |name: &str, dims: [i64; 4], channels_last_layout: bool| {
            let a = TensorAttributes::new()
                .name(name)
                .dim(&dims)
                .data_type(self.dt);
            if channels_last_layout {
                a.stride(&channels_last(&dims))
            } else {
                a
            }
        };
        let x = g.tensor(t("x", [self.n, self.c, self.h, self.h], true));
        let w = g.tensor(t("w", [self.k, self.c, self.r, self.r], true));
        let bias = g.tensor(t("bias", [1, self.k, 1, 1], false));
        let pad = self.r / 2;
        let conv = g.conv_fprop(
            &x,
            &w,
            ConvFpropAttributes::new()
                .name("conv")
                .padding(&[pad, pad])
                .stride(&[self.stride, self.stride])
                .dilation(&[1, 1]),
        );
        conv.set_data_type(DataType::F32);
        let biased = g.pointwise(
            &conv,
            Some(&bias),
            PointwiseAttributes::new(PointwiseMode::Add).name("bias"),
        );
        let y = g.pointwise(
            &biased,
            None,
            PointwiseAttributes::new(PointwiseMode::Relu).name("relu"),
        );
        let p = self.out_hw();
        let yd = [self.n, self.k, p, p];
        y.set_output(true)
            .set_name("y")
            .set_data_type(self.dt)
            .set_dim(&yd)
            .set_stride(&channels_last(&yd));
        g
    }
}
