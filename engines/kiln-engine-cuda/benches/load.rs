//! Plan load time, split into its parts. Without a GPU (here, or in CI with NVRTC) it times the
//! host part of a restore on an `sm_90` target handle: SHA-256 of the payload body, the payload
//! decode (header, digest, FlatBuffer verification, values), and the whole
//! `from_compiled_plan_binary` (envelope checks included, no module load). With `--device` it
//! also times, on cuda:0, `cuModuleLoadData` of the cubin alone and the whole load. The same
//! for an attention plan (the Hopper forward, bf16 B4 H16 S1024 D128, B,S,H,D), with its warm
//! build: `Graph::build` of a new graph whose kernel is already in the process's cache.
//! Prints one JSON line per measurement. Run: `cargo bench -p kiln-engine-cuda --bench load`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use kiln::{DataType, Device, HeurMode};
use kiln_engine_cuda::payload;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// Best and mean milliseconds of `f` over `reps` runs (after 5 warm-ups).
fn time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..5 {
        f();
    }
    let (mut best, mut total) = (f64::MAX, 0.0);
    for _ in 0..reps {
        let t = Instant::now();
        f();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        best = best.min(ms);
        total += ms;
    }
    (best, total / reps as f64)
}

fn report(case: &str, (best, mean): (f64, f64), bytes: usize) {
    println!(
        "{{\"case\":\"{case}\",\"best_ms\":{best:.4},\"mean_ms\":{mean:.4},\"bytes\":{bytes}}}"
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    if let Some(why) = nvrtc_missing() {
        // A bench that cannot measure fails, so that its run never reads as measured.
        eprintln!("the load bench needs NVRTC, which is not available here: {why}");
        std::process::exit(1);
    }
    let device = std::env::args().any(|a| a == "--device");
    let reps = 500;
    // The conv plan of the H200 report: f16 NHWC 3x3, N32 C64 H56 K64, bias + relu.
    let make = || conv_graph(DataType::F16, 32, 64, 56, 56, 64, 3, 1, 1, true, true);
    let target = handle(Device::CudaTarget(90)).expect("sm_90 target handle");
    let mut g = make();
    g.build(&target, &[HeurMode::A]).expect("build for sm_90");
    let blob = g.to_compiled_plan_binary().expect("save");
    // The payload inside the plan blob: it starts with the provider's marker.
    let at = blob
        .windows(4)
        .position(|w| w == payload::MARKER)
        .expect("payload in the plan");
    let decoded = payload::decode(&blob[at..]).expect("decode");
    let body_len = blob.len() - at - payload::HEADER_SIZE;
    let payload_len = payload::encode(&decoded).len();
    let body = &blob[at + payload::HEADER_SIZE..at + payload::HEADER_SIZE + body_len];
    let cubin = decoded.code_objects[0].cubin.to_vec();
    eprintln!(
        "plan {} bytes, payload {payload_len}, cubin {} bytes",
        blob.len(),
        cubin.len()
    );
    let payload_bytes = &blob[at..at + payload_len];
    report(
        "sha256 of the payload body",
        time(reps, || {
            std::hint::black_box(Sha256::digest(std::hint::black_box(body)));
        }),
        body.len(),
    );
    report(
        "payload decode (header, body digest, FlatBuffer verification, values)",
        time(reps, || {
            std::hint::black_box(payload::decode(payload_bytes).expect("decode"));
        }),
        payload_len,
    );
    report(
        "plan load on an sm_90 target handle (envelope + payload checks, no module load)",
        time(reps, || {
            drop(kiln::from_compiled_plan_binary(&target, &blob).expect("load"));
        }),
        blob.len(),
    );
    // The attention plan: host load, and the warm build (validation, lowering, heuristics,
    // codegen, the kernel cache's lookup; no compile).
    let make_sdpa = || sdpa_graph(DataType::Bf16, 4, 16, 16, 1024, 1024, 128, false, false);
    let mut gs = make_sdpa();
    gs.build(&target, &[HeurMode::A])
        .expect("build sdpa for sm_90");
    assert_eq!(
        gs.plan().expect("plan").engine_name(),
        kiln_engine_cuda::SDPA_FA3_V1,
        "the attention plan is the Hopper forward's"
    );
    let sdpa_blob = gs.to_compiled_plan_binary().expect("save sdpa");
    report(
        "warm build sdpa fwd bf16 B4 H16 S1024 D128 on an sm_90 target handle (kernel cached)",
        time(50, || {
            let mut g = make_sdpa();
            g.build(&target, &[HeurMode::A]).expect("warm build");
            std::hint::black_box(g);
        }),
        sdpa_blob.len(),
    );
    report(
        "plan load sdpa on an sm_90 target handle (envelope + payload checks, no module load)",
        time(reps, || {
            drop(kiln::from_compiled_plan_binary(&target, &sdpa_blob).expect("load sdpa"));
        }),
        sdpa_blob.len(),
    );
    if !device {
        return;
    }
    let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
    let dev = kiln_cuda_driver::DeviceContext::new(0).expect("cuda:0");
    let symbol = decoded.launches[0].symbol.clone();
    report(
        "cuModuleLoadData + cuModuleGetFunction of the cubin alone (cuda:0)",
        time(reps, || {
            drop(
                kiln_cuda_driver::Module::load(&dev, &cubin, &[symbol.as_str()])
                    .expect("module load"),
            );
        }),
        cubin.len(),
    );
    report(
        "plan load conv (module load included, cuda:0)",
        time(reps, || {
            drop(kiln::from_compiled_plan_binary(&h, &blob).expect("load"));
        }),
        blob.len(),
    );
    report(
        "plan load sdpa (module load included, cuda:0)",
        time(reps, || {
            drop(kiln::from_compiled_plan_binary(&h, &sdpa_blob).expect("load sdpa"));
        }),
        sdpa_blob.len(),
    );
    report(
        "warm build sdpa fwd bf16 B4 H16 S1024 D128 (cuda:0, kernel cached)",
        time(50, || {
            let mut g = make_sdpa();
            g.build(&h, &[HeurMode::A]).expect("warm build on cuda:0");
            std::hint::black_box(g);
        }),
        sdpa_blob.len(),
    );
}
