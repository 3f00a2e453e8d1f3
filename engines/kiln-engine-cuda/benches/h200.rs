//! Speed on the GPU machine: pointwise bandwidth, convolution and matmul throughput, plan load
//! time. Prints one JSON line per measurement; scripts/gpu-bench.py measures the PyTorch peers.
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
