//! Deviceless tests: code generation, NVRTC compilation for sm_90, saving and loading on a
//! `sm_90` target handle, payload checks. They need NVRTC and the CUDA headers (CI installs
//! them with scripts/install-nvrtc.sh) but no GPU; without NVRTC they say so and return.

mod common;

use common::*;
use kiln::{DataType, Device, Graph, HeurMode};
use kiln_engine_cuda::payload;
use kiln_plugin_sdk::KilnPluginStatus;

fn skip() -> bool {
    if let Some(why) = nvrtc_missing() {
        eprintln!("SKIPPED: NVRTC is not available here: {why}");
        return true;
    }
    false
}

type Maker = (&'static str, Box<dyn Fn() -> Graph>);

fn graphs() -> Vec<Maker> {
    vec![
        (
            "pointwise f32",
            Box::new(|| pointwise_graph(DataType::F32, 33, 64)),
        ),
        (
            "pointwise f16",
            Box::new(|| pointwise_graph(DataType::F16, 4, 128)),
        ),
        (
            "pointwise bf16",
            Box::new(|| pointwise_graph(DataType::Bf16, 4, 128)),
        ),
        (
            "matmul bf16 relu",
            Box::new(|| matmul_graph(DataType::Bf16, 2, 70, 40, 50, true)),
        ),
        (
            "matmul f32",
            Box::new(|| matmul_graph(DataType::F32, 1, 33, 17, 65, false)),
        ),
        (
            "conv f16 nhwc bias relu",
            Box::new(|| conv_graph(DataType::F16, 2, 8, 9, 9, 16, 3, 1, 1, true, true)),
        ),
        (
            "conv f32 nchw",
            Box::new(|| conv_graph(DataType::F32, 1, 3, 7, 7, 4, 3, 1, 2, false, false)),
        ),
    ]
}

#[test]
fn builds_saves_and_loads_for_sm_90_without_a_device() {
    if skip() {
        return;
    }
    for (what, make) in graphs() {
        let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
        let mut g = make();
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let engine = g.plan().expect("plan").engine_name().to_string();
        assert!(engine.starts_with("KILN_CUDA_"), "{what}: engine {engine}");
        let bytes = g.to_compiled_plan_binary().expect("save");
        let container = g.to_binary().expect("save graph and plan");
        drop(g);
        let (compiles, _) = kiln_engine_cuda::stats();
        let h2 = handle(Device::CudaTarget(90)).expect("another target handle");
        let plan = kiln::from_compiled_plan_binary(&h2, &bytes)
            .unwrap_or_else(|e| panic!("{what}: load: {e}"));
        let g2 = Graph::from_binary(Some(&h2), &container)
            .unwrap_or_else(|e| panic!("{what}: load: {e}"));
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{what}: loading compiled something"
        );
        assert_eq!(
            kiln::to_compiled_plan_binary(&plan).expect("re-save"),
            bytes,
            "{what}: re-save differs"
        );
        assert_eq!(
            g2.to_binary().expect("re-save"),
            container,
            "{what}: container re-save differs"
        );
        // Another architecture refuses the plan as not applicable, naming both sides.
        let h80 = handle(Device::CudaTarget(80)).expect("sm_80 target handle");
        let e = kiln::from_compiled_plan_binary(&h80, &bytes)
            .expect_err("sm_80 must refuse an sm_90 plan");
        let msg = e.to_string();
        assert!(
            msg.contains("sm_90") && msg.contains("sm_80") && msg.contains("NOT_APPLICABLE"),
            "{what}: {msg}"
        );
    }
}

#[test]
fn execute_on_a_target_handle_is_refused() {
    if skip() {
        return;
    }
    let h = handle(Device::CudaTarget(90)).expect("target handle");
    let mut g = pointwise_graph(DataType::F32, 2, 8);
    g.build(&h, &[HeurMode::A]).expect("build");
    let plan = g.plan().expect("plan");
    // SAFETY: no pointer is dereferenced: the provider refuses before launching.
    let e = unsafe { plan.execute(&h, &[], std::ptr::null_mut(), 0) }.expect_err("no device");
    assert!(
        e.to_string().contains("no device") || e.to_string().contains("bound"),
        "{e}"
    );
}

/// The payload of an sm_90 pointwise plan, straight from the provider.
fn payload_bytes() -> Vec<u8> {
    let mut g = pointwise_graph(DataType::F32, 2, 8);
    let h = handle(Device::CudaTarget(90)).expect("target handle");
    g.build(&h, &[HeurMode::A]).expect("build");
    let og = g.op_graph().expect("graph").clone();
    let kernels =
        kiln_engine_cuda::generate(kiln_engine_cuda::POINTWISE_V1, &og).expect("generate");
    let c =
        kiln_engine_cuda::compile::compile(&kernels[0].source, "t.cu", 90, false).expect("compile");
    use sha2::Digest;
    let p = payload::Payload {
        engine_name: kiln_engine_cuda::POINTWISE_V1.into(),
        provider_version: "test".into(),
        nvrtc_version: (13, 0),
        workspace: 0,
        tensors: og
            .bound_tensors()
            .map(|t| payload::TensorSig {
                uid: t.uid,
                data_type: t.data_type,
                storage_bytes: 64,
            })
            .collect(),
        code_objects: vec![payload::CodeObject {
            arch: 90,
            sha256: sha2::Sha256::digest(&c.cubin).into(),
            cubin: c.cubin,
            ptx: Vec::new(),
        }],
        launches: vec![payload::Launch {
            code_object: 0,
            symbol: kernels[0].symbol.clone(),
            grid: kernels[0].grid,
            block: kernels[0].block,
            shared_bytes: 0,
            args: kernels[0].args.clone(),
        }],
    };
    payload::encode(&p)
}

fn refix_digest(b: &mut [u8]) {
    use sha2::Digest;
    let d = sha2::Sha256::digest(&b[48..]);
    b[16..48].copy_from_slice(&d);
}

fn status_of(bytes: &[u8]) -> (KilnPluginStatus, String) {
    let e = payload::decode(bytes).expect_err("must be refused");
    (e.status, e.message)
}

#[test]
fn load_checks_refuse_damaged_and_foreign_payloads_in_order() {
    if skip() {
        return;
    }
    let good = payload_bytes();
    payload::decode(&good).expect("the good payload decodes");
    // 1 header length
    let (s, m) = status_of(&good[..20]);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE, "{m}");
    assert!(m.contains("damaged") && m.contains("header"), "{m}");
    // 2 marker
    let mut b = good.clone();
    b[0] = b'X';
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("marker"), "{m}");
    // 3 format version: newer major, newer minor
    for (at, v) in [(4usize, 2u16), (6, 1)] {
        let mut b = good.clone();
        b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let (s, m) = status_of(&b);
        assert_eq!(s, KilnPluginStatus::NOT_APPLICABLE, "{m}");
        assert!(
            m.contains("1.0") && (m.contains("2.0") || m.contains("1.1")),
            "{m}"
        );
    }
    // 4 kind
    let mut b = good.clone();
    b[8] = 9;
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::NOT_APPLICABLE);
    assert!(m.contains("kind 9"), "{m}");
    // 5 header size
    let mut b = good.clone();
    b[10] = 40;
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("header size"), "{m}");
    // 6 body digest: one flipped byte anywhere in the body
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("digest of the body"), "{m}");
    // 7 structure: truncated body with a fixed-up digest
    let mut b = good[..good.len() - 5].to_vec();
    refix_digest(&mut b);
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("damaged"), "{m}");
    // 8 values: a flipped byte inside the code object, body digest fixed up: the code object's
    // own digest refuses it.
    let p = payload::decode(&good).expect("decode");
    let cubin = &p.code_objects[0].cubin;
    let at = good
        .windows(cubin.len())
        .position(|w| w == cubin.as_slice())
        .expect("cubin in payload")
        + cubin.len() / 2;
    let mut b = good.clone();
    b[at] ^= 0x40;
    refix_digest(&mut b);
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("code object 0") && m.contains("SHA-256"), "{m}");
}

#[test]
fn generated_sources_are_stable() {
    let g = {
        let mut g = pointwise_graph(DataType::F16, 4, 128);
        g.validate().expect("valid");
        g.op_graph().expect("graph").clone()
    };
    let k = kiln_engine_cuda::generate(kiln_engine_cuda::POINTWISE_V1, &g).expect("generate");
    insta::assert_snapshot!(
        "pointwise_f16",
        k[0].source
            .split_once("// KILN_CUDA")
            .map(|(_, s)| s)
            .unwrap_or("")
    );
    let g = {
        let mut g = conv_graph(DataType::F16, 2, 8, 9, 9, 16, 3, 1, 1, true, true);
        g.validate().expect("valid");
        g.op_graph().expect("graph").clone()
    };
    let k = kiln_engine_cuda::generate(kiln_engine_cuda::CONV_FPROP_V1, &g).expect("generate");
    insta::assert_snapshot!(
        "conv_f16_nhwc_bias_relu",
        k[0].source
            .split_once("// KILN_CUDA")
            .map(|(_, s)| s)
            .unwrap_or("")
    );
}
