//! Speed on the GPU machine: pointwise bandwidth, convolution, matmul and attention throughput,
//! plan load time. Prints one JSON line per measurement; scripts/gpu-bench.py measures the PyTorch peers.
//! Run: `h200-<hash> --bench` (see scripts/gpu-package.sh).

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use kiln::{DataType, Device, DeviceTensor, Graph, HeurMode, PointwiseMode};
use std::time::Instant;

fn time_graph(name: &str, g: &Graph, h: &kiln::Handle, flops: f64, bytes: f64) {
    let og = g.op_graph().expect("graph").clone();
    let plan = g.plan().expect("plan");
    // Random data, never zeros (which can run faster than real data and hide unwritten output).
    let mut mem = Vec::new();
    for t in og.bound_tensors() {
        let host = kiln::HostTensor::random(t, t.uid as u64 + 11).expect("host data");
        mem.push((
            t.uid,
            DeviceTensor::upload(&host, 0).expect("device memory"),
        ));
    }
    let b: Vec<(i64, *mut std::ffi::c_void)> = mem
        .iter()
        .map(|(u, d)| (*u, d.device_ptr() as *mut _))
        .collect();
    let dev = kiln_cuda_driver::DeviceContext::new(0).expect("device");
    let ws = (plan.workspace_size() > 0).then(|| {
        kiln_cuda_driver::DeviceMemory::zeroed(0, plan.workspace_size()).expect("workspace")
    });
    let (wp, wl) = match &ws {
        Some(m) => (m.as_ptr() as *mut std::ffi::c_void, m.len()),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: every pointer addresses device memory sized for its tensor; the workspace (when
    // the plan has one) holds `plan.workspace_size()` bytes on the same device.
    let run = || unsafe { plan.execute(h, &b, wp, wl) }.map_err(|e| e.to_string());
    for _ in 0..3 {
        run().expect("warm-up");
    }
    let iters = 20;
    let ms = kiln_cuda_driver::time_ms(&dev, || {
        for _ in 0..iters {
            run()?;
        }
        Ok(())
    })
    .expect("timing") as f64
        / iters as f64;
    println!(
        "{{\"case\":\"{name}\",\"ms\":{ms:.5},\"tflops\":{:.2},\"tbps\":{:.3}}}",
        flops / ms / 1e9,
        bytes / ms / 1e9
    );
}

/// The engine of a built graph's plan.
fn engine(g: &Graph) -> String {
    g.plan()
        .map(|p| p.engine_name().to_string())
        .unwrap_or_default()
}

/// `y = gelu(a @ b + bias)`, square, bias along N, f32 accumulate, `dt` output.
fn matmul_bias_gelu(dt: DataType, s: i64) -> Graph {
    use kiln::{MatmulAttributes, PointwiseAttributes, TensorAttributes};
    let mut g = Graph::new();
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[1, s, s])
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[1, s, s])
            .data_type(dt),
    );
    let bias = g.tensor(
        TensorAttributes::new()
            .name("bias")
            .dim(&[1, 1, s])
            .data_type(dt),
    );
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    c.set_data_type(DataType::F32);
    let cb = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Gelu));
    y.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// The backward of attention over [b, hq, s, d] (k/v [b, hkv, s, d]), B,S,H,D layout.
fn sdpa_backward_bench_graph(
    dt: DataType,
    b: i64,
    hq: i64,
    hkv: i64,
    s: i64,
    d: i64,
    causal: bool,
) -> Graph {
    let mut g = Graph::new();
    let bshd = |g: &mut Graph, name: &str, h: i64, dt: DataType| {
        g.tensor(
            kiln::TensorAttributes::new()
                .name(name)
                .dim(&[b, h, s, d])
                .stride(&[s * h * d, d, h * d, 1])
                .data_type(dt),
        )
    };
    let q = bshd(&mut g, "q", hq, dt);
    let k = bshd(&mut g, "k", hkv, dt);
    let v = bshd(&mut g, "v", hkv, dt);
    let o = bshd(&mut g, "o", hq, dt);
    let d_o = bshd(&mut g, "do", hq, dt);
    let stats = g.tensor(
        kiln::TensorAttributes::new()
            .name("stats")
            .dim(&[b, hq, s, 1])
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
                .causal_mask(causal),
        )
        .expect("sdpa_backward");
    for t in [&out.dq, &out.dk, &out.dv] {
        t.set_output(true);
    }
    g
}

/// The convolution gradients, bf16 NHWC (names joined with scripts/gpu-bench.py's peers):
/// (N, C, H, K, R, stride), FLOPs those of the forward convolution.
fn bench_conv_grad(h: &kiln::Handle) {
    for &(n, c, hw, k, r, stride) in &[
        (32i64, 64i64, 56i64, 64i64, 3i64, 1i64),
        (32, 128, 28, 128, 3, 1),
        (32, 256, 28, 256, 3, 1),
        (32, 128, 56, 128, 3, 1),
        (32, 256, 14, 256, 3, 1),
        (32, 128, 56, 128, 3, 2),
        (32, 128, 28, 128, 1, 1),
    ] {
        let shape = GradShape {
            n,
            c,
            h: hw,
            w: hw,
            k,
            r,
            pad: r / 2,
            stride,
            dil: 1,
        };
        let (p, q) = shape.pq();
        let flops = 2.0 * (n * k * p * q * c * r * r) as f64;
        for dgrad in [true, false] {
            let mut g = conv_grad_graph(dgrad, DataType::Bf16, shape, true, false);
            g.build(h, &[HeurMode::A]).expect("build conv grad");
            let what = if dgrad { "conv_dgrad" } else { "conv_wgrad" };
            time_graph(
                &format!(
                    "{what} bf16 N{n} C{c} H{hw} K{k} R{r} s{stride} [{}]",
                    engine(&g)
                ),
                &g,
                h,
                flops,
                0.0,
            );
        }
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let h = handle(Device::Cuda(0)).expect("cuda:0");
    bench_conv_grad(&h);
    if std::env::args().any(|a| a == "--conv-grad-only") {
        return;
    }
    let n = 1i64 << 28;
    for mode in [PointwiseMode::Add, PointwiseMode::Relu] {
        let mut g = simple_pointwise(mode, n);
        g.build(&h, &[HeurMode::A]).expect("build");
        let bytes = if mode == PointwiseMode::Add {
            12.0
        } else {
            8.0
        } * n as f64;
        time_graph(&format!("pointwise {mode:?} 2^28 f32"), &g, &h, 0.0, bytes);
    }
    // The convolution cases, (N, C, H, K, R, stride), NHWC, bare and with bias + relu.
    for dt in [DataType::F16, DataType::Bf16] {
        for &(nb, c, hw, k, r, stride) in &[
            (32, 64, 56, 64, 3, 1),
            (32, 256, 14, 256, 3, 1),
            (32, 128, 28, 128, 1, 1),
            (32, 128, 56, 128, 3, 2),
            (64, 512, 7, 512, 3, 1),
        ] {
            for fused in [false, true] {
                let pad = r / 2;
                let mut g = conv_graph(dt, nb, c, hw, hw, k, r, pad, stride, true, fused);
                g.build(&h, &[HeurMode::A]).expect("build conv");
                let out = (hw + 2 * pad - r) / stride + 1;
                let flops = 2.0 * (nb * k * out * out * c * r * r) as f64;
                time_graph(
                    &format!(
                        "conv {dt} N{nb} C{c} H{hw} K{k} R{r} s{stride} bias_relu={fused} [{}]",
                        engine(&g)
                    ),
                    &g,
                    &h,
                    flops,
                    0.0,
                );
            }
        }
    }
    // The matmul cases, M x N x K.
    for dt in [DataType::Bf16, DataType::F16] {
        for &(m, n, k) in &[
            (4096i64, 4096i64, 4096i64),
            (8192, 8192, 8192),
            (4096, 1024, 4096),
            (16384, 4096, 1024),
        ] {
            let mut g = matmul_graph(dt, 1, m, k, n, false);
            g.build(&h, &[HeurMode::A]).expect("build matmul");
            time_graph(
                &format!("matmul {dt} {m}x{n}x{k} [{}]", engine(&g)),
                &g,
                &h,
                2.0 * (m * n * k) as f64,
                0.0,
            );
        }
    }
    let s = 8192i64;
    let mut g = matmul_bias_gelu(DataType::Bf16, s);
    g.build(&h, &[HeurMode::A])
        .expect("build matmul + bias + gelu");
    time_graph(
        &format!("matmul bf16 {s}x{s}x{s} + bias + gelu [{}]", engine(&g)),
        &g,
        &h,
        2.0 * (s * s * s) as f64,
        0.0,
    );
    // Tensor maps: the cost of encoding one per execute against reusing the last encoding, and
    // which 8-byte words of the opaque map an address change touches (the "swap the address"
    // alternative would patch those).
    {
        use kiln_engine_cuda::tensor_map::{encode, Encoded};
        let recipe = kiln_engine_cuda::codegen::TensorMapRecipe {
            uid: 1,
            data_type: DataType::Bf16,
            dims: vec![8192, 8192],
            strides: vec![8192 * 2],
            box_dims: vec![64, 128],
        };
        let reps = 10_000;
        let t = Instant::now();
        for i in 0..reps {
            encode(&recipe, 0x1000_0000 + (i % 2) * 256).expect("encode");
        }
        let encode_us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
        let cached = Encoded::new(recipe.clone()).expect("encoded");
        let t = Instant::now();
        for _ in 0..reps {
            cached.at(0x1000_0000).expect("cached");
        }
        let cached_us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
        let a = encode(&recipe, 0x1000_0000).expect("a");
        let b = encode(&recipe, 0x2000_0100).expect("b");
        let words: Vec<usize> = (0..16).filter(|&i| a.opaque[i] != b.opaque[i]).collect();
        println!(
            "{{\"case\":\"tensor map encode\",\"encode_us\":{encode_us:.3},\"cached_us\":{cached_us:.4},\"address_words\":{words:?}}}"
        );
    }
    // Attention, B,S,H,D layout, batch 4 x 16 heads (zeros: every score equal, nothing masked
    // but the causal triangle). FLOPs as FlashAttention counts them: 4 B H S^2 D forward
    // (halved when causal), 2.5 times that backward.
    for (s, d) in [
        (1024i64, 64i64),
        (1024, 128),
        (4096, 64),
        (4096, 128),
        (16384, 128),
    ] {
        for causal in [false, true] {
            let flops = 4.0 * (4 * 16 * s * s * d) as f64 * if causal { 0.5 } else { 1.0 };
            let mut g = sdpa_graph(DataType::Bf16, 4, 16, 16, s, s, d, causal, false);
            g.build(&h, &[HeurMode::A]).expect("build sdpa");
            time_graph(
                &format!("sdpa fwd bf16 B4 H16 S{s} D{d} causal={causal}"),
                &g,
                &h,
                flops,
                0.0,
            );
            if s <= 4096 {
                let mut g = sdpa_backward_bench_graph(DataType::Bf16, 4, 16, 16, s, d, causal);
                g.build(&h, &[HeurMode::A]).expect("build sdpa_backward");
                time_graph(
                    &format!("sdpa bwd bf16 B4 H16 S{s} D{d} causal={causal}"),
                    &g,
                    &h,
                    2.5 * flops,
                    0.0,
                );
            }
        }
    }
    let mut g = sdpa_graph(DataType::Bf16, 4, 32, 8, 4096, 4096, 128, true, false);
    g.build(&h, &[HeurMode::A]).expect("build sdpa gqa");
    time_graph(
        "sdpa fwd bf16 B4 Hq32 Hkv8 S4096 D128 causal=true",
        &g,
        &h,
        4.0 * (4i64 * 32 * 4096 * 4096 * 128) as f64 * 0.5,
        0.0,
    );
    // Plan load time (module load included), conv plan.
    let mut g = conv_graph(DataType::F16, 32, 64, 56, 56, 64, 3, 1, 1, true, true);
    g.build(&h, &[HeurMode::A]).expect("build");
    let bytes = g.to_compiled_plan_binary().expect("save");
    let mut best = f64::MAX;
    let mut total = 0.0;
    let reps = 200;
    for _ in 0..reps {
        let t = Instant::now();
        let p = kiln::from_compiled_plan_binary(&h, &bytes).expect("load");
        let dt = t.elapsed().as_secs_f64() * 1e3;
        drop(p);
        best = best.min(dt);
        total += dt;
    }
    println!("{{\"case\":\"plan load conv (module load included)\",\"best_ms\":{best:.4},\"mean_ms\":{:.4},\"bytes\":{}}}", total / reps as f64, bytes.len());
}
