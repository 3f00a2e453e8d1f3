//! Deviceless tests of `KILN_CUDA_NORM_V1`: which graphs it claims, its generated sources
//! (snapshots), NVRTC compilation of every norm kernel for sm_90, and plans built on an sm_90
//! target handle that save, load without compiling and re-save byte-identically. The NVRTC
//! tests are ignored by default (CI runs them with `--include-ignored` after
//! scripts/install-nvrtc.sh); execution on the GPU is in the conformance suite
//! (`crates/kiln-conformance/tests/cuda_norms.rs`).

mod common;

use common::{handle, nvrtc_missing};
use kiln::{
    BatchnormAttributes, BatchnormInferenceAttributes, DataType, Device, Graph, HeurMode,
    LayernormAttributes, NormBackwardAttributes, NormPhase, PointwiseAttributes, PointwiseMode,
    RmsnormAttributes, RmsnormBackwardAttributes, Tensor, TensorAttributes,
};
use kiln_engine_cuda::codegen::norm::Path;
use kiln_engine_cuda::NORM_V1;

fn t(g: &mut Graph, name: &str, dims: &[i64], dt: DataType) -> Tensor {
    g.tensor(TensorAttributes::new().name(name).dim(dims).data_type(dt))
}

fn nhwc(dims: &[i64]) -> Vec<i64> {
    let (n, c, h, w) = (dims[0], dims[1], dims[2], dims[3]);
    let _ = n;
    vec![h * w * c, 1, w * c, c]
}

fn per_channel(c: i64) -> Vec<i64> {
    vec![1, c, 1, 1]
}

/// layernorm (training) on bf16 rows with a fused gelu.
fn layernorm_gelu(rows: i64, hidden: i64) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", &[rows, hidden], DataType::Bf16);
    let s = t(&mut g, "scale", &[1, hidden], DataType::Bf16);
    let b = t(&mut g, "bias", &[1, hidden], DataType::Bf16);
    let out = g
        .layernorm(
            &x,
            &s,
            &b,
            LayernormAttributes::new()
                .epsilon(1e-5)
                .forward_phase(NormPhase::Training),
        )
        .unwrap();
    out.mean
        .unwrap()
        .set_output(true)
        .set_data_type(DataType::F32);
    out.inv_variance
        .unwrap()
        .set_output(true)
        .set_data_type(DataType::F32);
    let y = g.pointwise(&out.y, None, PointwiseAttributes::new(PointwiseMode::Gelu));
    y.set_output(true).set_data_type(DataType::Bf16);
    g
}

/// rmsnorm (inference, f16, with bias).
fn rmsnorm(rows: i64, hidden: i64) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", &[rows, hidden], DataType::F16);
    let s = t(&mut g, "scale", &[1, hidden], DataType::F16);
    let b = t(&mut g, "bias", &[1, hidden], DataType::F16);
    let out = g
        .rmsnorm(&x, &s, RmsnormAttributes::new().epsilon(1e-6).bias(&b))
        .unwrap();
    out.y.set_output(true);
    g
}

/// batchnorm (training, NHWC f16) with running statistics.
fn batchnorm_nhwc(dims: [i64; 4]) -> Graph {
    common::batchnorm_nhwc_graph(true, DataType::F16, dims)
}

/// batchnorm_inference + relu, NCHW f32.
fn batchnorm_inference_relu(dims: [i64; 4]) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", &dims, DataType::F32);
    let p = per_channel(dims[1]);
    let ps: Vec<Tensor> = ["mean", "inv_variance", "scale", "bias"]
        .iter()
        .map(|n| t(&mut g, n, &p, DataType::F32))
        .collect();
    let y = g
        .batchnorm_inference(
            &x,
            &ps[0],
            &ps[1],
            &ps[2],
            &ps[3],
            BatchnormInferenceAttributes::new(),
        )
        .unwrap();
    let r = g.pointwise(&y, None, PointwiseAttributes::new(PointwiseMode::Relu));
    r.set_output(true);
    g
}

/// layernorm (training, bf16, no chain): the wide path.
fn layernorm_plain(rows: i64, hidden: i64) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", &[rows, hidden], DataType::Bf16);
    let s = t(&mut g, "scale", &[1, hidden], DataType::Bf16);
    let b = t(&mut g, "bias", &[1, hidden], DataType::F32);
    let out = g
        .layernorm(
            &x,
            &s,
            &b,
            LayernormAttributes::new()
                .epsilon(1e-5)
                .forward_phase(NormPhase::Training),
        )
        .unwrap();
    out.y.set_output(true);
    for o in [out.mean, out.inv_variance].into_iter().flatten() {
        o.set_output(true).set_data_type(DataType::F32);
    }
    g
}

/// batchnorm_inference, NHWC bf16, no chain: the channels-last path.
fn batchnorm_inference_nhwc(dims: [i64; 4]) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", &dims, DataType::Bf16);
    x.set_stride(&nhwc(&dims));
    let p = per_channel(dims[1]);
    let ps: Vec<Tensor> = ["mean", "inv_variance", "scale", "bias"]
        .iter()
        .map(|n| t(&mut g, n, &p, DataType::F32))
        .collect();
    let y = g
        .batchnorm_inference(
            &x,
            &ps[0],
            &ps[1],
            &ps[2],
            &ps[3],
            BatchnormInferenceAttributes::new(),
        )
        .unwrap();
    y.set_output(true).set_stride(&nhwc(&dims));
    g
}

/// A backward of `op` ("layernorm", "rmsnorm", "batchnorm") on bf16 x of `dims`.
fn backward(op: &str, dims: &[i64]) -> Graph {
    backward_typed(op, dims, DataType::Bf16)
}

/// A backward norm whose x, dy and scale (and so dx, dscale, dbias) are `dt`.
fn backward_typed(op: &str, dims: &[i64], dt: DataType) -> Graph {
    let mut g = Graph::new();
    let x = t(&mut g, "x", dims, dt);
    let dy = t(&mut g, "dy", dims, dt);
    let per_ch = op == "batchnorm";
    let param: Vec<i64> = (0..dims.len())
        .map(|i| match (per_ch, i) {
            (true, 1) | (false, 1..) => dims[i],
            _ => 1,
        })
        .collect();
    let stat: Vec<i64> = (0..dims.len())
        .map(|i| match (per_ch, i) {
            (true, 1) | (false, 0) => dims[i],
            _ => 1,
        })
        .collect();
    let s = t(&mut g, "scale", &param, dt);
    let inv = t(&mut g, "inv", &stat, DataType::F32);
    let out = if op == "rmsnorm" {
        g.rmsnorm_backward(
            &dy,
            &x,
            &s,
            &inv,
            RmsnormBackwardAttributes::new().has_dbias(true),
        )
    } else {
        let mean = t(&mut g, "mean", &stat, DataType::F32);
        let a = NormBackwardAttributes::new().saved_mean_and_inv_variance(&mean, &inv);
        if op == "layernorm" {
            g.layernorm_backward(&dy, &x, &s, a)
        } else {
            g.batchnorm_backward(&dy, &x, &s, a)
        }
    }
    .unwrap();
    for o in [out.dx, out.dscale].into_iter().chain(out.dbias) {
        o.set_output(true);
    }
    g
}

fn variants() -> Vec<(&'static str, Graph)> {
    vec![
        ("norm_layernorm_bf16_gelu_training", layernorm_gelu(4, 1000)),
        ("norm_rmsnorm_f16_bias", rmsnorm(3, 4096)),
        (
            "norm_batchnorm_f16_nhwc_running",
            batchnorm_nhwc([2, 16, 5, 7]),
        ),
        (
            "norm_batchnorm_inference_f32_relu",
            batchnorm_inference_relu([2, 8, 9, 9]),
        ),
        (
            "norm_layernorm_backward_bf16",
            backward("layernorm", &[5, 3, 70]),
        ),
        ("norm_rmsnorm_backward_bf16", backward("rmsnorm", &[6, 513])),
        (
            "norm_batchnorm_backward_bf16",
            backward("batchnorm", &[2, 8, 5, 5]),
        ),
        ("norm_layernorm_bf16_wide_warp", layernorm_plain(9, 1024)),
        ("norm_layernorm_bf16_wide_block", layernorm_plain(3, 8192)),
        (
            "norm_batchnorm_inference_bf16_nhwc",
            batchnorm_inference_nhwc([3, 24, 5, 7]),
        ),
        (
            "norm_layernorm_backward_bf16_wide_warp",
            backward("layernorm", &[37, 4, 64]),
        ),
        (
            "norm_rmsnorm_backward_bf16_wide_block",
            backward("rmsnorm", &[21, 4096]),
        ),
    ]
}

fn kernels(mut g: Graph) -> Vec<kiln_engine_cuda::codegen::Kernel> {
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    kiln_engine_cuda::generate(NORM_V1, &og).expect("generate")
}

/// The snapshot text of `kernels`: each launch's shape and arguments, then its source.
fn launches_text(kernels: &[kiln_engine_cuda::codegen::Kernel]) -> String {
    let text: Vec<String> = kernels
        .iter()
        .map(|k| {
            format!(
                "// launch: grid {:?}, block {:?}, {} bytes of dynamic shared memory, tensor \
                 UIDs {:?}\n{}",
                k.grid, k.block, k.shared_bytes, k.args, k.source
            )
        })
        .collect();
    text.join("\n// next kernel\n")
}

/// Compiles `k` for sm_90 (its cubin must hold its symbol); with KILN_DUMP_CUBINS=DIR the cubin
/// is kept there (registers and spills: cuobjdump -res-usage).
fn compile_for_sm_90(name: &str, k: &kiln_engine_cuda::codegen::Kernel) {
    let c = kiln_engine_cuda::compile::compile_uncached(
        &k.source,
        &format!("{}.cu", k.symbol),
        90,
        false,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(c.cubin.get(..4), Some(&b"\x7fELF"[..]), "{name}");
    let symbol = k.symbol.as_bytes();
    assert!(
        c.cubin.windows(symbol.len()).any(|w| w == symbol),
        "{name}: the cubin has no symbol {}",
        k.symbol
    );
    if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
        std::fs::create_dir_all(&dir).expect("dump dir");
        let path = std::path::Path::new(&dir).join(format!("{name}_{}.cubin", k.symbol));
        std::fs::write(path, &c.cubin).expect("dump cubin");
    }
}

#[test]
fn norm_sources_are_stable() {
    for (name, g) in variants() {
        insta::assert_snapshot!(name, launches_text(&kernels(g)));
    }
}

/// Graphs on the sm_90 path (knob `wide` = 2), each with the kernel it takes: per-sample
/// backwards (a warp-sized and block-sized group, bf16 and f32, up to the longest row whose two
/// stages fit) and channels-last batchnorm training forwards (one cooperative kernel).
fn ring_variants() -> Vec<(&'static str, Graph, &'static str)> {
    vec![
        (
            "norm_layernorm_backward_bf16_ring_warp",
            backward("layernorm", &[37, 4, 64]),
            "norm_rows_backward_ring",
        ),
        (
            "norm_rmsnorm_backward_bf16_ring_block",
            backward("rmsnorm", &[21, 4096]),
            "norm_rows_backward_ring",
        ),
        (
            "norm_layernorm_backward_bf16_ring_h8192",
            backward("layernorm", &[40, 8192]),
            "norm_rows_backward_ring",
        ),
        (
            "norm_layernorm_backward_f32_ring_h8192",
            backward_typed("layernorm", &[9, 8192], DataType::F32),
            "norm_rows_backward_ring",
        ),
        (
            "norm_batchnorm_f16_nhwc_running_persistent",
            batchnorm_nhwc([2, 16, 5, 7]),
            "norm_nhwc_persistent",
        ),
        (
            "norm_batchnorm_bf16_nhwc_c256_persistent",
            {
                let mut g = Graph::new();
                let dims = [4, 256, 9, 9];
                let x = t(&mut g, "x", &dims, DataType::Bf16);
                x.set_stride(&nhwc(&dims));
                let p = per_channel(256);
                let s = t(&mut g, "scale", &p, DataType::F32);
                let b = t(&mut g, "bias", &p, DataType::F32);
                let out = g
                    .batchnorm(&x, &s, &b, BatchnormAttributes::new().epsilon(1e-5))
                    .unwrap();
                out.y.set_output(true).set_stride(&nhwc(&dims));
                for o in [out.mean, out.inv_variance] {
                    o.set_output(true).set_data_type(DataType::F32);
                }
                g
            },
            "norm_nhwc_persistent",
        ),
        // Two stages of 32768 f32 values of x and dy do not fit: the register path.
        (
            "norm_rmsnorm_backward_f32_h32768",
            backward_typed("rmsnorm", &[4, 32768], DataType::F32),
            "norm_rows_backward_wide",
        ),
    ]
}

fn ring_kernels(mut g: Graph) -> Vec<kiln_engine_cuda::codegen::Kernel> {
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    kiln_engine_cuda::codegen::norm::generate_with(&og, Path::Ring).expect("generate")
}

#[test]
fn the_ring_path_takes_the_ring_kernel_where_two_stages_fit() {
    for (name, g, first) in ring_variants() {
        let ks = ring_kernels(g);
        assert!(ks[0].symbol.contains(first), "{name}: {}", ks[0].symbol);
        if first == "norm_nhwc_persistent" {
            // One cooperative kernel, x kept in shared memory.
            assert_eq!(ks.len(), 1, "{name}");
            assert!(ks[0].cooperative && !ks[0].persistent, "{name}");
            assert!(
                ks[0].shared_bytes > 0 && ks[0].shared_bytes <= 200 * 1024,
                "{name}"
            );
            continue;
        }
        assert_eq!(ks.len(), 2, "{name}");
        assert!(ks[1].symbol.contains("norm_columns_reduce"), "{name}");
        assert!(!ks[0].cooperative, "{name}");
        if first == "norm_rows_backward_ring" {
            assert!(
                ks[0].shared_bytes > 0 && ks[0].shared_bytes <= 200 * 1024,
                "{name}"
            );
        }
    }
    // Knob value 2 is the ring on sm_90 and newer, the register path before.
    assert_eq!(Path::of_knob(2, 90), Some(Path::Ring));
    assert_eq!(Path::of_knob(2, 80), Some(Path::Wide));
    assert_eq!(Path::of_knob(3, 90), None);
    let (_, g, _) = ring_variants().remove(1);
    insta::assert_snapshot!(
        "norm_rmsnorm_backward_bf16_ring_block",
        launches_text(&ring_kernels(g))
    );
    insta::assert_snapshot!(
        "norm_batchnorm_f16_nhwc_running_persistent",
        launches_text(&ring_kernels(batchnorm_nhwc([2, 16, 5, 7])))
    );
}

#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_ring_kernel_compiles_for_sm_90() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    for (name, g, _) in ring_variants() {
        for k in ring_kernels(g) {
            compile_for_sm_90(name, &k);
        }
    }
}

#[test]
fn backwards_launch_two_kernels_per_sample_and_one_per_channel() {
    assert_eq!(kernels(backward("layernorm", &[5, 70])).len(), 2);
    assert_eq!(kernels(backward("rmsnorm", &[5, 70])).len(), 2);
    assert_eq!(kernels(backward("batchnorm", &[2, 3, 4, 4])).len(), 1);
}

#[test]
fn wide_paths_take_a_workspace_only_where_they_sum_across_blocks() {
    let ws = |mut g: Graph| {
        g.validate().expect("valid");
        kiln_engine_cuda::codegen::norm::workspace_bytes(g.op_graph().unwrap(), Path::Wide)
            .expect("ws")
    };
    assert_eq!(ws(layernorm_plain(9, 1024)), 0);
    assert_eq!(ws(batchnorm_inference_nhwc([3, 24, 5, 7])), 0);
    assert_eq!(ws(layernorm_gelu(4, 1000)), 0);
    // Backward, wide: two f32 partial arrays of [groups][inner]; 21 rows give 2 groups.
    assert_eq!(ws(backward("rmsnorm", &[21, 4096])), 2 * 2 * 4096 * 4);
    // Training batchnorm, channels-last: two [blocks][C] sums and the three [C] factors.
    assert!(ws(batchnorm_nhwc([2, 16, 5, 7])) >= 5 * 16 * 4);
    // Not a multiple of 8: the scalar kernels, no workspace.
    assert_eq!(ws(backward("layernorm", &[5, 3, 70])), 0);
    // Fewer than 8 channels (no 8-channel group): the scalar kernels.
    assert_eq!(ws(batchnorm_nhwc([2, 4, 3, 3])), 0);
    assert_eq!(ws(batchnorm_nhwc([2, 1, 1, 1])), 0);
    assert_eq!(ws(batchnorm_inference_nhwc([2, 2, 1, 1])), 0);
}

#[test]
fn rows_beyond_the_limit_and_foreign_graphs_are_declined_with_a_reason() {
    let mut g = rmsnorm(2, kiln_engine_cuda::codegen::norm::MAX_ROW + 1);
    g.validate().unwrap();
    let why = kiln_engine_cuda::codegen::norm::supports(g.op_graph().unwrap()).unwrap_err();
    assert!(why.contains("values per sample"), "{why}");
    let mut p = common::pointwise_graph(DataType::F32, 2, 8);
    p.validate().unwrap();
    let why = kiln_engine_cuda::codegen::norm::supports(p.op_graph().unwrap()).unwrap_err();
    assert!(why.contains("normalization"), "{why}");
}

#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_norm_kernel_compiles_for_sm_90() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    for (name, g) in variants() {
        for k in kernels(g) {
            compile_for_sm_90(name, &k);
        }
    }
}

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn norm_plans_build_for_sm_90_and_reload_without_compiling() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    for (name, mut g) in variants() {
        let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(g.plan().unwrap().engine_name(), NORM_V1, "{name}");
        let bytes = g.to_compiled_plan_binary().expect("save");
        let (compiles, _) = kiln_engine_cuda::stats();
        let h2 = handle(Device::CudaTarget(90)).expect("another target handle");
        let plan = kiln::from_compiled_plan_binary(&h2, &bytes)
            .unwrap_or_else(|e| panic!("{name}: load: {e}"));
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{name}: load compiled"
        );
        assert_eq!(
            kiln::to_compiled_plan_binary(&plan).expect("re-save"),
            bytes,
            "{name}: re-save differs"
        );
    }
}
