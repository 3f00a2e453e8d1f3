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
    let mut mem = Vec::new();
    for t in og.bound_tensors() {
        mem.push((t.uid, DeviceTensor::zeros(t, 0).expect("device memory")));
    }
    let b: Vec<(i64, *mut std::ffi::c_void)> = mem
        .iter()
        .map(|(u, d)| (*u, d.device_ptr() as *mut _))
        .collect();
    let dev = kiln_cuda_driver::DeviceContext::new(0).expect("device");
    // SAFETY: every pointer addresses device memory sized for its tensor.
    let run = || unsafe { plan.execute(h, &b, std::ptr::null_mut(), 0) }.map_err(|e| e.to_string());
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

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let h = handle(Device::Cuda(0)).expect("cuda:0");
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
    for dt in [DataType::F16, DataType::Bf16] {
        for &(nb, c, hw, k, r, pad) in &[
            (32, 64, 56, 64, 3, 1),
            (32, 256, 14, 256, 3, 1),
            (32, 128, 28, 128, 1, 0),
        ] {
            for fused in [false, true] {
                let mut g = conv_graph(dt, nb, c, hw, hw, k, r, pad, 1, true, fused);
                g.build(&h, &[HeurMode::A]).expect("build conv");
                let flops = 2.0 * (nb * k * hw * hw * c * r * r) as f64;
                time_graph(
                    &format!("conv {dt} N{nb} C{c} H{hw} K{k} R{r} pad{pad} bias_relu={fused}"),
                    &g,
                    &h,
                    flops,
                    0.0,
                );
            }
        }
    }
    for s in [4096i64, 8192] {
        let mut g = matmul_graph(DataType::Bf16, 1, s, s, s, false);
        g.build(&h, &[HeurMode::A]).expect("build matmul");
        time_graph(
            &format!("matmul bf16 {s}^3"),
            &g,
            &h,
            2.0 * (s * s * s) as f64,
            0.0,
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
