//! Graph builders and helpers shared by the CUDA provider's tests and benchmarks.
#![allow(dead_code)]

use kiln::{
    ConvAttributes, DataType, Device, Graph, Handle, HeurMode, HostTensor, MatmulAttributes,
    PointwiseAttributes, PointwiseMode, Registry, TensorAttributes, VariantPack, Workspace,
};
use std::sync::Arc;

/// The built-in plugins only (CPU and CUDA).
pub fn registry() -> Arc<Registry> {
    Arc::new(Registry::with_builtins(&Registry::builtin_tables()))
}

pub fn handle(device: Device) -> kiln::Result<Handle> {
    Handle::with_registry(device, registry())
}

/// Why NVRTC cannot be used here; `None` when it can.
pub fn nvrtc_missing() -> Option<String> {
    kiln_engine_cuda::availability::nvrtc().err()
}

fn nhwc(d: &[i64]) -> Vec<i64> {
    kiln_core::tensor::channels_last_strides(d)
}

/// `y = relu(x * s + b)` with `b` broadcast along dim 0: [n0, n1].
pub fn pointwise_graph(dt: DataType, n0: i64, n1: i64) -> Graph {
    let mut g = Graph::new();
    g.set_name("pointwise");
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&[n0, n1])
            .data_type(dt),
    );
    let s = g.tensor(
        TensorAttributes::new()
            .name("s")
            .dim(&[n0, n1])
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[1, n1])
            .data_type(dt),
    );
    let xs = g.pointwise(&x, Some(&s), PointwiseAttributes::new(PointwiseMode::Mul));
    let xsb = g.pointwise(&xs, Some(&b), PointwiseAttributes::new(PointwiseMode::Add));
    let y = g.pointwise(&xsb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// One binary or unary op on n f32 elements (for the bandwidth bench).
pub fn simple_pointwise(mode: PointwiseMode, n: i64) -> Graph {
    let mut g = Graph::new();
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&[n])
            .data_type(DataType::F32),
    );
    let y = if mode == PointwiseMode::Add {
        let z = g.tensor(
            TensorAttributes::new()
                .name("z")
                .dim(&[n])
                .data_type(DataType::F32),
        );
        g.pointwise(&x, Some(&z), PointwiseAttributes::new(mode))
    } else {
        g.pointwise(&x, None, PointwiseAttributes::new(mode))
    };
    y.set_name("y")
        .set_output(true)
        .set_data_type(DataType::F32);
    g
}

/// Conv fprop (N,C,H,W,K,R,S,pad, stride 1) in NHWC (or NCHW) with optional fused bias+relu.
#[allow(clippy::too_many_arguments)]
pub fn conv_graph(
    dt: DataType,
    n: i64,
    c: i64,
    h: i64,
    w: i64,
    k: i64,
    r: i64,
    pad: i64,
    stride: i64,
    nhwc_layout: bool,
    bias_relu: bool,
) -> Graph {
    let mut g = Graph::new();
    g.set_name("conv");
    let xd = [n, c, h, w];
    let wd = [k, c, r, r];
    let (xs, ws) = if nhwc_layout {
        (nhwc(&xd), nhwc(&wd))
    } else {
        (
            kiln_core::tensor::packed_strides(&xd),
            kiln_core::tensor::packed_strides(&wd),
        )
    };
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&xd)
            .stride(&xs)
            .data_type(dt),
    );
    let wt = g.tensor(
        TensorAttributes::new()
            .name("w")
            .dim(&wd)
            .stride(&ws)
            .data_type(dt),
    );
    let y = g.conv_fprop(
        &x,
        &wt,
        ConvAttributes::new()
            .padding(&[pad, pad])
            .stride(&[stride, stride]),
    );
    let p = (h + 2 * pad - r) / stride + 1;
    let q = (w + 2 * pad - r) / stride + 1;
    let yd = [n, k, p, q];
    let ys = if nhwc_layout {
        nhwc(&yd)
    } else {
        kiln_core::tensor::packed_strides(&yd)
    };
    let out = if bias_relu {
        y.set_data_type(DataType::F32);
        let bias = g.tensor(
            TensorAttributes::new()
                .name("bias")
                .dim(&[1, k, 1, 1])
                .data_type(dt),
        );
        let yb = g.pointwise(
            &y,
            Some(&bias),
            PointwiseAttributes::new(PointwiseMode::Add),
        );
        g.pointwise(&yb, None, PointwiseAttributes::new(PointwiseMode::Relu))
    } else {
        y
    };
    out.set_name("y")
        .set_output(true)
        .set_data_type(dt)
        .set_dim(&yd)
        .set_stride(&ys);
    g
}

/// `y = relu(a @ b)`: a [batch, m, k], b [batch, k, n].
pub fn matmul_graph(dt: DataType, batch: i64, m: i64, k: i64, n: i64, relu: bool) -> Graph {
    let mut g = Graph::new();
    g.set_name("matmul");
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[batch, m, k])
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[batch, k, n])
            .data_type(dt),
    );
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    let out = if relu {
        c.set_data_type(DataType::F32);
        g.pointwise(&c, None, PointwiseAttributes::new(PointwiseMode::Relu))
    } else {
        c
    };
    out.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// Random inputs for every non-output bound tensor of a validated graph, keyed by name.
pub fn inputs(g: &Graph) -> Vec<(kiln::Tensor, HostTensor)> {
    let og = g.op_graph().expect("validated");
    g.tensors()
        .iter()
        .filter_map(|t| {
            let uid = t.uid()?;
            let d = og.tensor(uid)?;
            if d.is_virtual || d.scalar.is_some() || og.producer(uid).is_some() {
                return None;
            }
            Some((
                t.clone(),
                HostTensor::random(d, uid as u64 + 7).expect("host tensor"),
            ))
        })
        .collect()
}

/// The reference result on the CPU for `make()` with `inputs`.
pub fn reference(make: &dyn Fn() -> Graph, ins: &[(kiln::Tensor, HostTensor)]) -> Vec<f64> {
    let cpu = handle(Device::Cpu).expect("cpu handle");
    let mut g = make();
    g.build(&cpu, &[HeurMode::Fallback])
        .expect("reference build");
    let y = g.tensor_by_name("y").expect("y");
    let mut hy = HostTensor::for_tensor(&y).expect("y memory");
    let mut ins: Vec<(i64, HostTensor)> = ins
        .iter()
        .map(|(t, h)| (t.uid().expect("uid"), h.clone()))
        .collect();
    let mut pack = VariantPack::new();
    for (uid, h) in ins.iter_mut() {
        pack.insert_uid(*uid, h);
    }
    pack.insert(&y, &mut hy);
    // Other outputs (a backward's dk and dv beside dq, named y): bound to scratch memory.
    let og = g.op_graph().expect("validated").clone();
    let mut others: Vec<(kiln::Tensor, HostTensor)> = g
        .tensors()
        .iter()
        .filter(|t| {
            t.uid().is_some_and(|u| {
                u != y.uid().expect("uid")
                    && og.producer(u).is_some()
                    && og.tensor(u).is_some_and(|d| !d.is_virtual)
            })
        })
        .map(|t| (t.clone(), HostTensor::for_tensor(t).expect("output memory")))
        .collect();
    for (t, h) in others.iter_mut() {
        pack.insert(t, h);
    }
    let mut ws = Workspace::for_graph(&g).expect("workspace");
    g.execute(&cpu, &mut pack, &mut ws).expect("reference run");
    drop(pack);
    hy.to_f64_vec()
}

/// Largest |a - b| / (atol + rtol |b|) over the elements; <= 1 passes. Equal values (equal
/// infinities too, such as a fully masked row's stats) and NaN where the reference has NaN
/// match; a NaN anywhere else (an element the kernel never wrote keeps its NaN poison) or a
/// mismatched infinity counts as infinitely wrong, which `f64::max` alone would skip.
pub fn worst(got: &[f64], want: &[f64], atol: f64, rtol: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            if g == w || (g.is_nan() && w.is_nan()) {
                0.0
            } else if g.is_nan() || w.is_nan() || g.is_infinite() || w.is_infinite() {
                f64::INFINITY
            } else {
                (g - w).abs() / (atol + rtol * w.abs())
            }
        })
        .fold(0.0, f64::max)
}

/// Pooling's backward: dy of the pooling of x [2, 16, 9, 10] (window 3x2, stride 2, padding 1
/// before) to dx (named `y`), NHWC or NCHW; max pooling through an i32 index or through x.
pub fn pooling_backward_graph(
    dt: DataType,
    mode: kiln::ResampleMode,
    nhwc_layout: bool,
    with_index: bool,
) -> Graph {
    let mut g = Graph::new();
    g.set_name("pooling_backward");
    let (xd, yd) = ([2, 16, 9, 10], [2, 16, 4, 5]);
    let strides = |d: &[i64]| {
        if nhwc_layout {
            nhwc(d)
        } else {
            kiln_core::tensor::packed_strides(d)
        }
    };
    let dy = g.tensor(
        TensorAttributes::new()
            .name("dy")
            .dim(&yd)
            .stride(&strides(&yd))
            .data_type(dt),
    );
    let max = mode == kiln::ResampleMode::MaxPool;
    let index = (max && with_index).then(|| {
        g.tensor(
            TensorAttributes::new()
                .name("index")
                .dim(&yd)
                .data_type(DataType::I32),
        )
    });
    let x = (max && !with_index).then(|| {
        g.tensor(
            TensorAttributes::new()
                .name("x")
                .dim(&xd)
                .stride(&strides(&xd))
                .data_type(dt),
        )
    });
    let dx = g
        .resample_backward(
            &dy,
            index.as_ref(),
            x.as_ref(),
            kiln::ResampleAttributes::new(mode, &[3, 2])
                .stride(&[2, 2])
                .pre_padding(&[1, 1]),
        )
        .expect("resample_backward");
    dx.set_name("y")
        .set_output(true)
        .set_dim(&xd)
        .set_stride(&strides(&xd))
        .set_data_type(dt);
    g
}

/// Golden CUDA plans: graph-with-plan files built deviceless for sm_90 by the provider of the day,
/// with the inputs and the CPU reference's outputs, under `tests/fixtures/plans/`. Deviceless tests
/// restore and re-save them; the GPU test executes them against the stored outputs.
pub mod plan_fixtures {
    use super::*;
    use std::path::{Path, PathBuf};

    /// (file stem, graph builder, atol, rtol)
    pub type FixtureCase = (&'static str, fn() -> Graph, f64, f64);

    pub fn cases() -> Vec<FixtureCase> {
        vec![
            (
                "cuda_pointwise_f16_sm90",
                || pointwise_graph(DataType::F16, 4, 128),
                2e-3,
                2e-3,
            ),
            (
                "cuda_matmul_bf16_relu_sm90",
                || matmul_graph(DataType::Bf16, 2, 70, 40, 50, true),
                2e-2,
                2e-2,
            ),
            (
                "cuda_conv_f16_nhwc_bias_relu_sm90",
                || conv_graph(DataType::F16, 2, 8, 9, 9, 16, 3, 1, 1, true, true),
                1e-2,
                1e-2,
            ),
            (
                "cuda_conv_dgrad_f16_nhwc_stride2_scale_bias_sm90",
                || {
                    let s = GradShape {
                        n: 2,
                        c: 16,
                        h: 9,
                        w: 8,
                        k: 8,
                        r: 3,
                        pad: 1,
                        stride: 2,
                        dil: 1,
                    };
                    conv_grad_graph(true, DataType::F16, s, true, true)
                },
                1e-2,
                1e-2,
            ),
            (
                // A reduction split in two over the workspace (payload minor 2).
                "cuda_conv_wgrad_bf16_nhwc_split_sm90",
                || {
                    let s = GradShape {
                        n: 4,
                        c: 8,
                        h: 16,
                        w: 16,
                        k: 8,
                        r: 3,
                        pad: 1,
                        stride: 1,
                        dil: 1,
                    };
                    conv_grad_graph(false, DataType::Bf16, s, true, false)
                },
                5e-2,
                2e-2,
            ),
            // The same two gradient graphs built by today's heuristics, which take the Hopper
            // engines (KILN_CUDA_CONV_DGRAD_V2 / WGRAD_V2, sm_90a) for them on sm_90; the
            // wgrad's reduction is split over the workspace.
            (
                "cuda_conv_dgrad_v2_f16_nhwc_stride2_scale_bias_sm90",
                || {
                    let s = GradShape {
                        n: 2,
                        c: 16,
                        h: 9,
                        w: 8,
                        k: 8,
                        r: 3,
                        pad: 1,
                        stride: 2,
                        dil: 1,
                    };
                    conv_grad_graph(true, DataType::F16, s, true, true)
                },
                1e-2,
                1e-2,
            ),
            (
                "cuda_conv_wgrad_v2_bf16_nhwc_split_sm90",
                || {
                    let s = GradShape {
                        n: 4,
                        c: 8,
                        h: 16,
                        w: 16,
                        k: 8,
                        r: 3,
                        pad: 1,
                        stride: 1,
                        dil: 1,
                    };
                    conv_grad_graph(false, DataType::Bf16, s, true, false)
                },
                5e-2,
                2e-2,
            ),
            (
                "cuda_sdpa_f16_gqa_causal_bias_sm90",
                || sdpa_graph(DataType::F16, 1, 2, 1, 37, 45, 16, true, true),
                1e-2,
                1e-2,
            ),
            // KILN_CUDA_MATMUL_V2 (sm_90a) as the cooperative schedule saved it (tile knob 0,
            // staged stores): batched, relu, M and N not multiples of the tile.
            (
                "cuda_matmul_v2_bf16_relu_sm90",
                || matmul_graph(DataType::Bf16, 2, 130, 72, 96, true),
                2e-2,
                2e-2,
            ),
            // KILN_CUDA_CONV_FPROP_V2 (sm_90a), NHWC 3x3 with bias + relu, before ping-pong.
            (
                "cuda_conv_v2_f16_nhwc_bias_relu_sm90",
                || conv_graph(DataType::F16, 2, 16, 9, 9, 32, 3, 1, 1, true, true),
                1e-2,
                1e-2,
            ),
            // KILN_CUDA_RESAMPLE_BACKWARD_V1: max pooling's maxima found again in x, NHWC.
            (
                "cuda_maxpool_backward_bf16_nhwc_sm90",
                || pooling_backward_graph(DataType::Bf16, kiln::ResampleMode::MaxPool, true, false),
                2e-2,
                2e-2,
            ),
            // KILN_CUDA_SDPA_FA3_V1 (sm_90a): lengths across two key tiles, GQA, causal.
            (
                "cuda_sdpa_fa3_bf16_gqa_causal_sm90",
                || sdpa_graph(DataType::Bf16, 1, 2, 1, 150, 201, 64, true, false),
                2e-2,
                2e-2,
            ),
            // KILN_CUDA_SDPA_FA3_BACKWARD_V1 (prep, sm_90a main kernel, convert; a workspace):
            // lengths across two key blocks and three query tiles, GQA, causal; y is dq (dk
            // and dv are bound to scratch memory). The stored o and stats are random, not the
            // forward's, so P reaches e^2 and dq 46: dS rounded to bf16 before dS K (as the
            // kernel does) alone gives a worst ratio of 1.41 at 3e-2 / 3e-2 (a NumPy model of
            // that rounding matches the H200's 1.4140 to four digits), so the tolerance is the
            // GPU test's for 201 keys: bf16 eps (1/128) x (4 + sqrt(265) / 2) and 4 eps.
            (
                "cuda_sdpa_fa3_bwd_bf16_gqa_causal_sm90",
                || sdpa_backward_plain_graph(DataType::Bf16, 1, 2, 1, 150, 201, 64),
                0.095,
                0.031,
            ),
        ]
    }

    pub fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans")
    }

    /// Writes the fixture `stem` when it is missing and `KILN_REGEN_FIXTURES` is set (never
    /// rewrites one: it records what an older provider wrote); returns (file, io JSON).
    pub fn load(stem: &str, make: fn() -> Graph) -> (Vec<u8>, serde_json::Value) {
        let kiln_path = dir().join(format!("{stem}.kiln"));
        let io_path = dir().join(format!("{stem}.json"));
        if !kiln_path.exists() && std::env::var_os("KILN_REGEN_FIXTURES").is_some() {
            let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
            let mut g = make();
            g.build(&h, &[HeurMode::A]).expect("builds for sm_90");
            let ins = inputs(&g);
            let want = reference(&|| make(), &ins);
            let inputs: serde_json::Map<String, serde_json::Value> = ins
                .iter()
                .map(|(t, h)| {
                    (
                        t.uid().expect("uid").to_string(),
                        serde_json::json!(h.to_f64_vec()),
                    )
                })
                .collect();
            let io = serde_json::json!({
                "engine": g.plan().expect("plan").engine_name(),
                "inputs": inputs,
                "y": want,
            });
            std::fs::create_dir_all(dir()).expect("fixture folder");
            std::fs::write(&kiln_path, g.serialize().expect("saves")).expect("write plan");
            std::fs::write(&io_path, serde_json::to_string(&io).expect("json")).expect("write io");
        }
        let file =
            std::fs::read(&kiln_path).unwrap_or_else(|e| panic!("{}: {e}", kiln_path.display()));
        let io = serde_json::from_slice(
            &std::fs::read(&io_path).unwrap_or_else(|e| panic!("{}: {e}", io_path.display())),
        )
        .expect("io JSON");
        (file, io)
    }

    /// The stored values of `key` (an input uid, or "y") as f64.
    pub fn values(io: &serde_json::Value, key: &str) -> Vec<f64> {
        let v = if key == "y" {
            &io["y"]
        } else {
            &io["inputs"][key]
        };
        v.as_array()
            .unwrap_or_else(|| panic!("no stored values for {key}"))
            .iter()
            .map(|x| x.as_f64().expect("a number"))
            .collect()
    }
}

/// Attention `y = sdpa(q, k, v)` in B,S,H,D layout: q [b, hq, sq, d], k/v [b, hkv, skv, d],
/// scale 1/sqrt(d), optionally causal (bottom-right) and with a bias broadcast over the batch.
#[allow(clippy::too_many_arguments)]
pub fn sdpa_graph(
    dt: DataType,
    b: i64,
    hq: i64,
    hkv: i64,
    sq: i64,
    skv: i64,
    d: i64,
    causal: bool,
    bias: bool,
) -> Graph {
    let mut g = Graph::new();
    let bshd = |g: &mut Graph, name: &str, h: i64, s: i64| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&[b, h, s, d])
                .stride(&[s * h * d, d, h * d, 1])
                .data_type(dt),
        )
    };
    let q = bshd(&mut g, "q", hq, sq);
    let k = bshd(&mut g, "k", hkv, skv);
    let v = bshd(&mut g, "v", hkv, skv);
    let mut attrs = kiln::SdpaAttributes::new()
        .attn_scale(1.0 / (d as f64).sqrt())
        .causal_mask_bottom_right(causal);
    if bias {
        let t = g.tensor(
            TensorAttributes::new()
                .name("bias")
                .dim(&[1, hq, sq, skv])
                .data_type(DataType::F32),
        );
        attrs = attrs.bias(&t);
    }
    let out = g.sdpa(&q, &k, &v, attrs).expect("sdpa");
    out.o.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// The gradients of a bottom-right causal attention in B,S,H,D layout, scale 1/sqrt(d), with no
/// lengths or scale tensor (so that random inputs exercise every row): q [b, hq, sq, d], k/v
/// [b, hkv, skv, d]; outputs dq (named y), dk, dv.
pub fn sdpa_backward_plain_graph(
    dt: DataType,
    b: i64,
    hq: i64,
    hkv: i64,
    sq: i64,
    skv: i64,
    d: i64,
) -> Graph {
    let mut g = Graph::new();
    let bshd = |g: &mut Graph, name: &str, h: i64, s: i64| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&[b, h, s, d])
                .stride(&[s * h * d, d, h * d, 1])
                .data_type(dt),
        )
    };
    let q = bshd(&mut g, "q", hq, sq);
    let k = bshd(&mut g, "k", hkv, skv);
    let v = bshd(&mut g, "v", hkv, skv);
    let o = bshd(&mut g, "o", hq, sq);
    let d_o = bshd(&mut g, "do", hq, sq);
    let stats = g.tensor(
        TensorAttributes::new()
            .name("stats")
            .dim(&[b, hq, sq, 1])
            .data_type(DataType::F32),
    );
    let out = g
        .sdpa_backward(
            &q,
            &k,
            &v,
            &o,
            &d_o,
            &stats,
            kiln::SdpaBackwardAttributes::new()
                .attn_scale(1.0 / (d as f64).sqrt())
                .causal_mask_bottom_right(true),
        )
        .expect("sdpa_backward");
    out.dq.set_name("y").set_output(true);
    out.dk.set_name("dk").set_output(true);
    out.dv.set_name("dv").set_output(true);
    g
}

/// The gradients of attention (GQA, causal, padding lengths, scale tensor): inputs q, k, v, o,
/// do, stats; outputs dq (named y), dk, dv.
pub fn sdpa_backward_graph(dt: DataType, d: i64) -> Graph {
    let mut g = Graph::new();
    let t = |g: &mut Graph, name: &str, dims: &[i64], dt: DataType| {
        g.tensor(TensorAttributes::new().name(name).dim(dims).data_type(dt))
    };
    let q = t(&mut g, "q", &[2, 4, 77, d], dt);
    let k = t(&mut g, "k", &[2, 2, 93, d], dt);
    let v = t(&mut g, "v", &[2, 2, 93, d], dt);
    let o = t(&mut g, "o", &[2, 4, 77, d], dt);
    let d_o = t(&mut g, "do", &[2, 4, 77, d], dt);
    let stats = t(&mut g, "stats", &[2, 4, 77, 1], DataType::F32);
    let scale = t(&mut g, "scale", &[1, 1, 1, 1], DataType::F32);
    let lq = t(&mut g, "seq_len_q", &[2, 1, 1, 1], DataType::F32);
    let lkv = t(&mut g, "seq_len_kv", &[2, 1, 1, 1], DataType::F32);
    let out = g
        .sdpa_backward(
            &q,
            &k,
            &v,
            &o,
            &d_o,
            &stats,
            kiln::SdpaBackwardAttributes::new()
                .attn_scale_tensor(&scale)
                .seq_len_q(&lq)
                .seq_len_kv(&lkv)
                .causal_mask(true)
                .sliding_window_length(40),
        )
        .expect("sdpa_backward");
    out.dq.set_name("y").set_output(true);
    out.dk.set_name("dk").set_output(true);
    out.dv.set_name("dv").set_output(true);
    g
}

/// The geometry of a 2-D convolution gradient graph: x [n, c, h, w], w [k, c, r, r], padding,
/// stride and dilation on both spatial dims.
#[derive(Clone, Copy, Debug)]
pub struct GradShape {
    pub n: i64,
    pub c: i64,
    pub h: i64,
    pub w: i64,
    pub k: i64,
    pub r: i64,
    pub pad: i64,
    pub stride: i64,
    pub dil: i64,
}

impl GradShape {
    /// The output's spatial extents (p, q).
    pub fn pq(&self) -> (i64, i64) {
        let reach = self.dil * (self.r - 1) + 1;
        (
            (self.h + 2 * self.pad - reach) / self.stride + 1,
            (self.w + 2 * self.pad - reach) / self.stride + 1,
        )
    }
}

/// A convolution gradient: dgrad (dy, w → dx) or wgrad (dy, x → dw) of `shape`, every tensor in
/// NHWC/KRSC (or NCHW/KCRS) strides, inputs in `dt`, the result (named `y`) in `dt`; with
/// `scale_bias`, the gradient is f32, then multiplied by a `scale` [1, 1, 1, 1] and added to a
/// bias broadcast along dim 1 before the store.
pub fn conv_grad_graph(
    dgrad: bool,
    dt: DataType,
    s: GradShape,
    nhwc_layout: bool,
    scale_bias: bool,
) -> Graph {
    let mut g = Graph::new();
    g.set_name(if dgrad { "conv_dgrad" } else { "conv_wgrad" });
    let (p, q) = s.pq();
    let xd = [s.n, s.c, s.h, s.w];
    let wd = [s.k, s.c, s.r, s.r];
    let yd = [s.n, s.k, p, q];
    let strides = |d: &[i64]| {
        if nhwc_layout {
            nhwc(d)
        } else {
            kiln_core::tensor::packed_strides(d)
        }
    };
    let t = |g: &mut Graph, name: &str, d: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(d)
                .stride(&strides(d))
                .data_type(dt),
        )
    };
    let dy = t(&mut g, "dy", &yd);
    let attrs = ConvAttributes::new()
        .padding(&[s.pad, s.pad])
        .stride(&[s.stride, s.stride])
        .dilation(&[s.dil, s.dil]);
    let (out, od) = if dgrad {
        let wt = t(&mut g, "w", &wd);
        (g.conv_dgrad(&dy, &wt, attrs), xd)
    } else {
        let xt = t(&mut g, "x", &xd);
        (g.conv_wgrad(&dy, &xt, attrs), wd)
    };
    out.set_dim(&od).set_stride(&strides(&od));
    let out = if scale_bias {
        out.set_data_type(DataType::F32);
        let scale = g.tensor(
            TensorAttributes::new()
                .name("scale")
                .dim(&[1, 1, 1, 1])
                .data_type(DataType::F32),
        );
        let scaled = g.pointwise(
            &out,
            Some(&scale),
            PointwiseAttributes::new(PointwiseMode::Mul),
        );
        scaled.set_dim(&od).set_stride(&strides(&od));
        let bias = g.tensor(
            TensorAttributes::new()
                .name("bias")
                .dim(&[1, od[1], 1, 1])
                .data_type(dt),
        );
        g.pointwise(
            &scaled,
            Some(&bias),
            PointwiseAttributes::new(PointwiseMode::Add),
        )
    } else {
        out
    };
    out.set_name("y")
        .set_output(true)
        .set_data_type(dt)
        .set_dim(&od)
        .set_stride(&strides(&od));
    g
}

/// batchnorm (training, with running statistics) or batchnorm_inference over channels-last x of
/// `dims` (NCHW order) of type `dt`, y ("y") channels-last too, f32 per-channel tensors.
pub fn batchnorm_nhwc_graph(training: bool, dt: DataType, dims: [i64; 4]) -> Graph {
    use kiln::{BatchnormAttributes, BatchnormInferenceAttributes};
    let (c, h, w) = (dims[1], dims[2], dims[3]);
    let nhwc = [h * w * c, 1, w * c, c];
    let mut g = Graph::new();
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&dims)
            .stride(&nhwc)
            .data_type(dt),
    );
    let p = |g: &mut Graph, name: &str| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&[1, c, 1, 1])
                .data_type(DataType::F32),
        )
    };
    let (s, b) = (p(&mut g, "scale"), p(&mut g, "bias"));
    let y = if training {
        let (pm, pv) = (p(&mut g, "prev_mean"), p(&mut g, "prev_var"));
        let out = g
            .batchnorm(
                &x,
                &s,
                &b,
                BatchnormAttributes::new()
                    .epsilon(1e-5)
                    .previous_running_stats(&pm, &pv, 0.1),
            )
            .expect("batchnorm");
        for o in [out.mean, out.inv_variance]
            .into_iter()
            .chain(out.next_running_mean)
            .chain(out.next_running_var)
        {
            o.set_output(true).set_data_type(DataType::F32);
        }
        out.y
    } else {
        let (m, v) = (p(&mut g, "mean"), p(&mut g, "inv_variance"));
        g.batchnorm_inference(&x, &m, &v, &s, &b, BatchnormInferenceAttributes::new())
            .expect("batchnorm_inference")
    };
    y.set_name("y")
        .set_output(true)
        .set_data_type(dt)
        .set_stride(&nhwc);
    g
}
