//! Deviceless tests: code generation, NVRTC compilation for sm_90, saving and loading on a
//! `sm_90` target handle, payload checks. They need NVRTC and the CUDA headers (CI installs
//! them with scripts/install-nvrtc.sh) but no GPU. Those that compile are ignored by default, so
//! that a machine without NVRTC reports them ignored, never passed; CI installs NVRTC and runs
//! them with `-- --include-ignored`, where a missing NVRTC fails them.

mod common;

use common::*;
use kiln::{
    DataType, Device, Graph, HeurMode, MatmulAttributes, PointwiseAttributes, PointwiseMode,
    TensorAttributes,
};
use kiln_engine_cuda::payload;
use kiln_plugin_sdk::KilnPluginStatus;

/// Fails the test, saying how to install NVRTC, when NVRTC is missing: an NVRTC test that runs
/// must compile, never pass without compiling.
fn require_nvrtc() {
    if let Some(why) = nvrtc_missing() {
        panic!(
            "this test needs NVRTC, which is not available here: {why}; install it with \
             eval \"$(scripts/install-nvrtc.sh)\""
        );
    }
}

type Maker = (&'static str, Box<dyn Fn() -> Graph>);

/// A pooling of x [2, 16, 9, 10] in `layout` (NHWC or NCHW strides), window 3x2, stride 2,
/// padding 1 before: max pooling with an i32 index, or an average.
fn pooling_graph(dt: DataType, mode: kiln::ResampleMode, nhwc: bool) -> Graph {
    let mut g = Graph::new();
    let dims = [2, 16, 9, 10];
    let strides = if nhwc {
        kiln_core::tensor::channels_last_strides(&dims)
    } else {
        kiln_core::tensor::packed_strides(&dims)
    };
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&dims)
            .stride(&strides)
            .data_type(dt),
    );
    let out = g
        .resample(
            &x,
            kiln::ResampleAttributes::new(mode, &[3, 2])
                .stride(&[2, 2])
                .pre_padding(&[1, 1])
                .generate_index(mode == kiln::ResampleMode::MaxPool),
        )
        .expect("resample");
    out.y.set_name("y").set_output(true);
    if let Some(i) = out.index {
        i.set_name("index").set_output(true);
    }
    g
}

/// The modes and types of graph minor 2 in one chain over [n0, n1]: `gen_index` along dim 1,
/// a comparison into a bool mask, `binary_select` into fp8 e4m3, logical modes into i8, every
/// backward mode, and the other new modes, an fp8 e5m2 input and an i32 output. `broadcast`
/// makes one input a row vector, which keeps the kernel off its wide path.
fn minor2_pointwise_graph(n0: i64, n1: i64, broadcast: bool) -> Graph {
    let mut g = Graph::new();
    let t =
        |name: &str, dims: &[i64], dt| TensorAttributes::new().name(name).dim(dims).data_type(dt);
    let x = g.tensor(t("x", &[n0, n1], DataType::F32));
    let y_dims = if broadcast { [1, n1] } else { [n0, n1] };
    let y = g.tensor(t("y", &y_dims, DataType::Fp8E5m2));
    let pw = PointwiseAttributes::new;
    let idx = g.pointwise(&x, None, pw(PointwiseMode::GenIndex).axis(1));
    idx.set_name("idx")
        .set_output(true)
        .set_data_type(DataType::I32);
    let mask = g.pointwise(&x, Some(&y), pw(PointwiseMode::CmpLt));
    mask.set_data_type(DataType::Boolean);
    let sel = g.pointwise_ternary(&x, &y, &mask, pw(PointwiseMode::BinarySelect));
    sel.set_name("sel")
        .set_output(true)
        .set_data_type(DataType::Fp8E4m3);
    let not = g.pointwise(&mask, None, pw(PointwiseMode::LogicalNot));
    let or = g.pointwise(&not, Some(&mask), pw(PointwiseMode::LogicalOr));
    let and = g.pointwise(&or, Some(&idx), pw(PointwiseMode::LogicalAnd));
    and.set_name("and")
        .set_output(true)
        .set_data_type(DataType::I8);
    let mut v = x.clone();
    for mode in PointwiseMode::ALL.into_iter().filter(|m| m.code() >= 29) {
        if matches!(
            mode,
            PointwiseMode::GenIndex
                | PointwiseMode::BinarySelect
                | PointwiseMode::LogicalAnd
                | PointwiseMode::LogicalOr
                | PointwiseMode::LogicalNot
        ) {
            continue;
        }
        v = if mode.is_binary() {
            g.pointwise(&v, Some(&x), pw(mode))
        } else {
            g.pointwise(&v, None, pw(mode))
        };
    }
    v.set_name("chain")
        .set_output(true)
        .set_data_type(DataType::Bf16);
    g
}

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
            // A is 50000 x 50000: offsets pass 2^31, so the kernel indexes in 64 bits.
            "matmul bf16 64-bit indices",
            Box::new(|| matmul_graph(DataType::Bf16, 1, 50000, 50000, 16, false)),
        ),
        (
            "conv f32 nchw",
            Box::new(|| conv_graph(DataType::F32, 1, 3, 7, 7, 4, 3, 1, 2, false, false)),
        ),
        (
            "sdpa f16 d64 gqa causal bias",
            Box::new(|| sdpa_graph(DataType::F16, 2, 8, 2, 100, 130, 64, true, true)),
        ),
        (
            "sdpa bf16 d128",
            Box::new(|| sdpa_graph(DataType::Bf16, 1, 4, 4, 64, 64, 128, false, false)),
        ),
        (
            "sdpa f16 d256 causal",
            Box::new(|| sdpa_graph(DataType::F16, 1, 2, 1, 33, 45, 256, true, false)),
        ),
        (
            "sdpa bf16 d64 gqa causal (the Hopper forward)",
            Box::new(|| sdpa_graph(DataType::Bf16, 2, 8, 2, 200, 130, 64, true, false)),
        ),
        (
            "sdpa_backward bf16 d64",
            Box::new(|| sdpa_backward_graph(DataType::Bf16, 64)),
        ),
        (
            "sdpa_backward f16 d128",
            Box::new(|| sdpa_backward_graph(DataType::F16, 128)),
        ),
        (
            "sdpa_backward f16 d256",
            Box::new(|| sdpa_backward_graph(DataType::F16, 256)),
        ),
        (
            "maxpool f16 nhwc with index",
            Box::new(|| pooling_graph(DataType::F16, kiln::ResampleMode::MaxPool, true)),
        ),
        (
            "avgpool f32 nchw excluding padding",
            Box::new(|| {
                pooling_graph(
                    DataType::F32,
                    kiln::ResampleMode::AvgPoolExcludePadding,
                    false,
                )
            }),
        ),
        (
            "avgpool fp8 nhwc including padding",
            Box::new(|| {
                pooling_graph(
                    DataType::Fp8E4m3,
                    kiln::ResampleMode::AvgPoolIncludePadding,
                    true,
                )
            }),
        ),
        (
            "maxpool backward f16 nhwc through x",
            Box::new(|| {
                pooling_backward_graph(DataType::F16, kiln::ResampleMode::MaxPool, true, false)
            }),
        ),
        (
            "maxpool backward f32 nchw through an index",
            Box::new(|| {
                pooling_backward_graph(DataType::F32, kiln::ResampleMode::MaxPool, false, true)
            }),
        ),
        (
            "avgpool backward bf16 nhwc excluding padding",
            Box::new(|| {
                pooling_backward_graph(
                    DataType::Bf16,
                    kiln::ResampleMode::AvgPoolExcludePadding,
                    true,
                    false,
                )
            }),
        ),
        (
            "avgpool backward f32 nchw including padding",
            Box::new(|| {
                pooling_backward_graph(
                    DataType::F32,
                    kiln::ResampleMode::AvgPoolIncludePadding,
                    false,
                    false,
                )
            }),
        ),
        (
            "pointwise minor-2 modes and types, wide path",
            Box::new(|| minor2_pointwise_graph(8, 64, false)),
        ),
        (
            "pointwise minor-2 modes and types, broadcast",
            Box::new(|| minor2_pointwise_graph(5, 33, true)),
        ),
    ]
}

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn builds_saves_and_loads_for_sm_90_without_a_device() {
    require_nvrtc();
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
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn execute_on_a_target_handle_is_refused() {
    require_nvrtc();
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

/// The payload of an sm_90 pointwise plan, straight from the provider's parts.
fn payload_of(edit: impl FnOnce(&mut payload::Payload<'static>)) -> Vec<u8> {
    let mut g = pointwise_graph(DataType::F32, 2, 8);
    let h = handle(Device::CudaTarget(90)).expect("target handle");
    g.build(&h, &[HeurMode::A]).expect("build");
    let og = g.op_graph().expect("graph").clone();
    let kernels =
        kiln_engine_cuda::generate(kiln_engine_cuda::POINTWISE_V1, &og).expect("generate");
    let c =
        kiln_engine_cuda::compile::compile(&kernels[0].source, "t.cu", 90, false).expect("compile");
    let mut p = payload::Payload {
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
        code_objects: vec![payload::CodeObject::new(90, c.cubin, Vec::new())],
        launches: vec![payload::Launch {
            code_object: 0,
            symbol: kernels[0].symbol.clone(),
            grid: kernels[0].grid,
            block: kernels[0].block,
            shared_bytes: 0,
            args: kernels[0]
                .args
                .iter()
                .map(|&u| payload::Argument::Tensor(u))
                .collect(),
            tensor_maps: Vec::new(),
            persistent: false,
            cooperative: false,
        }],
    };
    edit(&mut p);
    payload::encode(&p)
}

fn payload_bytes() -> Vec<u8> {
    payload_of(|_| {})
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

/// Where the first code object's cubin starts in `bytes`.
fn cubin_at(bytes: &[u8]) -> (usize, usize) {
    let p = payload::decode(bytes).expect("decode");
    let cubin = &p.code_objects[0].cubin;
    (
        cubin.as_ptr() as usize - bytes.as_ptr() as usize,
        cubin.len(),
    )
}

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn payload_round_trips_with_aligned_code_objects() {
    require_nvrtc();
    let good = payload_bytes();
    let p = payload::decode(&good).expect("decode");
    assert_eq!(payload::encode(&p), good, "re-encoding a decoded payload");
    let (at, len) = cubin_at(&good);
    assert_eq!(at % 16, 0, "cubin at payload offset {at}");
    assert!(len > 0);
    // The code object's digest is the SHA-256 of its cubin.
    use sha2::Digest;
    assert_eq!(
        sha2::Sha256::digest(&p.code_objects[0].cubin).as_slice(),
        p.code_objects[0].sha256
    );
    // In a saved plan the payload starts 16-byte aligned, so the cubin does too.
    let h = handle(Device::CudaTarget(90)).expect("target handle");
    let mut g = conv_graph(DataType::F16, 2, 8, 9, 9, 16, 3, 1, 1, true, true);
    g.build(&h, &[HeurMode::A]).expect("build");
    let blob = g.to_compiled_plan_binary().expect("save");
    let magic = b"\x7fELF";
    let elf = blob
        .windows(4)
        .position(|w| w == magic)
        .expect("a cubin in the plan");
    assert_eq!(elf % 16, 0, "cubin at plan blob offset {elf}");
}

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn load_checks_refuse_damaged_and_foreign_payloads_in_order() {
    require_nvrtc();
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
    // 3 format version: newer major, newer minor, the older major 1 (hand-written body)
    for (at, v, names) in [(4usize, 3u16, "3.0"), (6, 4, "2.4"), (4, 1, "1.0")] {
        let mut b = good.clone();
        b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        let (s, m) = status_of(&b);
        assert_eq!(s, KilnPluginStatus::NOT_APPLICABLE, "{m}");
        assert!(m.contains(names) && m.contains("2.3"), "{m}");
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
    // 6 body digest: one flipped byte in the FlatBuffer tables, and one inside the code object
    let (cubin, len) = cubin_at(&good);
    for at in [HEADER, cubin + len / 2, good.len() - 1] {
        let mut b = good.clone();
        b[at] ^= 0x40;
        let (s, m) = status_of(&b);
        assert_eq!(s, KilnPluginStatus::INVALID_VALUE, "byte {at}: {m}");
        assert!(m.contains("digest of the body"), "byte {at}: {m}");
    }
    // 7 FlatBuffer verification (digest fixed up): a root offset past the end, and a body cut
    // short so that the cubin's length runs past it.
    let mut b = good.clone();
    b[HEADER..HEADER + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    refix_digest(&mut b);
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("FlatBuffer verification"), "{m}");
    let mut b = good[..good.len() - 24].to_vec();
    refix_digest(&mut b);
    let (s, m) = status_of(&b);
    assert_eq!(s, KilnPluginStatus::INVALID_VALUE);
    assert!(m.contains("FlatBuffer verification"), "{m}");
    // 8 values, each from an otherwise valid payload.
    type Edit = Box<dyn Fn(&mut payload::Payload<'static>)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|p| p.launches[0].code_object = 5),
            "code object 5 of 1",
        ),
        (
            Box::new(|p| p.launches[0].grid = [0, 1, 1]),
            "grid [0, 1, 1]",
        ),
        (
            Box::new(|p| p.launches[0].block = [64, 64, 1]),
            "block [64, 64, 1]",
        ),
        (Box::new(|p| p.launches[0].symbol.clear()), "symbol \"\""),
        (
            Box::new(|p| p.launches.clear()),
            "at least one code object and one launch",
        ),
        (Box::new(|p| p.engine_name.clear()), "engine name is empty"),
        (
            Box::new(|p| p.code_objects[0].cubin = Vec::new().into()),
            "empty cubin",
        ),
        (
            Box::new(|p| p.code_objects[0].ptx = b"// no NUL".to_vec().into()),
            "not NUL-terminated",
        ),
        (
            Box::new(|p| {
                let t = p.tensors[0].clone();
                p.tensors.push(t)
            }),
            "listed twice",
        ),
    ];
    for (edit, want) in cases {
        let b = payload_of(edit);
        let (s, m) = status_of(&b);
        assert_eq!(s, KilnPluginStatus::INVALID_VALUE, "{m}");
        assert!(m.contains("damaged") && m.contains(want), "{want}: {m}");
    }
}

const HEADER: usize = payload::HEADER_SIZE;

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn load_checks_of_the_provider_engine_arch_and_signature() {
    require_nvrtc();
    use kiln_plugin_sdk::EnginePlugin;
    let id = kiln_core::engine_id(kiln_engine_cuda::POINTWISE_V1);
    let sm90 = kiln_engine_cuda::CudaPlugin::create_for_target(90).expect("sm_90 instance");
    let good = payload_bytes();
    sm90.restore_context(id, &good)
        .expect("the good payload restores");
    // 9 engine present: an unknown engine name, and an ID other than the envelope's.
    let b = payload_of(|p| p.engine_name = "KILN_CUDA_WINOGRAD_V9".into());
    let e = sm90.restore_context(id, &b).err().expect("unknown engine");
    assert_eq!(e.status, KilnPluginStatus::NOT_APPLICABLE, "{}", e.message);
    assert!(e.message.contains("KILN_CUDA_WINOGRAD_V9"), "{}", e.message);
    let other = kiln_core::engine_id(kiln_engine_cuda::MATMUL_V1);
    let e = sm90.restore_context(other, &good).err().expect("engine id");
    assert_eq!(e.status, KilnPluginStatus::INVALID_VALUE, "{}", e.message);
    // 10 device arch: another arch without PTX; a newer one with PTX is accepted.
    let sm80 = kiln_engine_cuda::CudaPlugin::create_for_target(80).expect("sm_80 instance");
    let e = sm80.restore_context(id, &good).err().expect("arch");
    assert_eq!(e.status, KilnPluginStatus::NOT_APPLICABLE, "{}", e.message);
    assert!(
        e.message.contains("sm_90") && e.message.contains("sm_80"),
        "{}",
        e.message
    );
    let with_ptx = payload_of(|p| {
        p.code_objects[0].arch = 80;
        p.code_objects[0].ptx = b"// PTX\0".to_vec().into();
    });
    sm90.restore_context(id, &with_ptx)
        .expect("sm_80 code with PTX on sm_90");
    // 11 signature: a launch argument naming a tensor the plan does not list.
    let b = payload_of(|p| p.launches[0].args[0] = payload::Argument::Tensor(4242));
    let e = sm90.restore_context(id, &b).err().expect("signature");
    assert_eq!(e.status, KilnPluginStatus::INVALID_VALUE, "{}", e.message);
    assert!(e.message.contains("uid 4242"), "{}", e.message);
    // Scalars pass the signature check and survive a round trip.
    let b = payload_of(|p| {
        p.launches[0].args.push(payload::Argument::Scalar32(7));
        p.launches[0]
            .args
            .push(payload::Argument::Scalar64(1 << 40));
    });
    let p = payload::decode(&b).expect("scalars decode");
    assert_eq!(
        p.launches[0].args[p.launches[0].args.len() - 2..],
        [
            payload::Argument::Scalar32(7),
            payload::Argument::Scalar64(1 << 40)
        ]
    );
}

/// A matmul `y = relu(a @ b + bias)` whose operands are both stored transposed (column-major
/// a [m, k] and b [k, n]), with `bias` broadcast along M: both K-strided load paths and an
/// epilogue chain that reads a graph input.
fn matmul_transposed_bias_relu(dt: DataType, m: i64, k: i64, n: i64) -> Graph {
    let mut g = Graph::new();
    g.set_name("matmul_t");
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[1, m, k])
            .stride(&[m * k, 1, m])
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[1, k, n])
            .stride(&[k * n, 1, k])
            .data_type(dt),
    );
    let bias = g.tensor(
        TensorAttributes::new()
            .name("bias")
            .dim(&[1, 1, n])
            .data_type(dt),
    );
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    c.set_data_type(DataType::F32);
    let cb = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// The generated-source variants that are snapshot-tested and compiled for sm_90: every engine,
/// f32/f16/bf16, with and without epilogue chains, transposed operands, 1x1 and 3x3
/// convolutions in both layouts, and the 64-bit index path of both GEMM engines.
fn source_variants() -> Vec<(&'static str, &'static str, Graph)> {
    use kiln_engine_cuda::{
        CONV_FPROP_V1 as CONV, CONV_FPROP_V2 as CONV2, MATMUL_V1 as MM, MATMUL_V2 as MM2,
        POINTWISE_V1 as PW, SDPA_FA2_V1 as SDPA, SDPA_FA3_V1 as SDPA3,
    };
    vec![
        (
            "pointwise_f32_dense_add",
            PW,
            simple_pointwise(PointwiseMode::Add, 4096),
        ),
        ("pointwise_f16", PW, pointwise_graph(DataType::F16, 4, 128)),
        (
            "pointwise_bf16",
            PW,
            pointwise_graph(DataType::Bf16, 4, 128),
        ),
        (
            "matmul_f32",
            MM,
            matmul_graph(DataType::F32, 1, 33, 17, 65, false),
        ),
        (
            "matmul_f16_batched_wide_loads",
            MM,
            matmul_graph(DataType::F16, 2, 64, 64, 64, false),
        ),
        (
            "matmul_bf16_relu",
            MM,
            matmul_graph(DataType::Bf16, 2, 70, 40, 50, true),
        ),
        (
            "matmul_f16_transposed_bias_relu",
            MM,
            matmul_transposed_bias_relu(DataType::F16, 96, 64, 80),
        ),
        (
            "matmul_f32_transposed_bias_relu",
            MM,
            matmul_transposed_bias_relu(DataType::F32, 33, 20, 17),
        ),
        (
            "matmul_bf16_64bit_indices",
            MM,
            matmul_graph(DataType::Bf16, 1, 50000, 50000, 16, false),
        ),
        (
            "conv_f16_nhwc_3x3_bias_relu",
            CONV,
            conv_graph(DataType::F16, 2, 8, 9, 9, 16, 3, 1, 1, true, true),
        ),
        (
            "conv_f32_nchw_3x3_stride2",
            CONV,
            conv_graph(DataType::F32, 1, 3, 7, 7, 4, 3, 1, 2, false, false),
        ),
        (
            "conv_bf16_nhwc_1x1",
            CONV,
            conv_graph(DataType::Bf16, 2, 32, 14, 14, 64, 1, 0, 1, true, false),
        ),
        (
            "conv_f32_nhwc_1x1_bias_relu",
            CONV,
            conv_graph(DataType::F32, 1, 16, 8, 8, 32, 1, 0, 1, true, true),
        ),
        (
            "conv_f16_nhwc_3x3_64bit_indices",
            CONV,
            conv_graph(DataType::F16, 64, 64, 1024, 1024, 64, 3, 1, 1, true, false),
        ),
        // The Hopper engines (sm_90a): K-major A with N-major B, batched; both operands
        // transposed with a bias + relu epilogue; a convolution's gathered A with a narrow tile.
        (
            "matmul_v2_bf16_batched_relu",
            MM2,
            matmul_graph(DataType::Bf16, 2, 300, 200, 520, true),
        ),
        (
            // Large enough for 64-bit epilogue indices.
            "matmul_v2_bf16_16384x4096x1024",
            MM2,
            matmul_graph(DataType::Bf16, 1, 16384, 1024, 4096, false),
        ),
        (
            "matmul_v2_f16_transposed_bias_relu",
            MM2,
            matmul_transposed_bias_relu(DataType::F16, 96, 64, 80),
        ),
        (
            // An f32 output: stored from the fragments, not staged.
            "matmul_v2_bf16_f32_out",
            MM2,
            {
                let g = matmul_graph(DataType::Bf16, 1, 200, 64, 136, false);
                if let Some(y) = g.tensor_by_name("y") {
                    y.set_data_type(DataType::F32);
                }
                g
            },
        ),
        (
            "conv_v2_f16_nhwc_3x3_bias_relu",
            CONV2,
            conv_graph(DataType::F16, 2, 16, 9, 9, 64, 3, 1, 1, true, true),
        ),
        (
            "conv_v2_bf16_nhwc_3x3_stride2",
            CONV2,
            conv_graph(DataType::Bf16, 2, 32, 15, 15, 256, 3, 1, 2, true, false),
        ),
        (
            // The conv C128 H56 3x3 stride 2 with bias + relu: 256x128 cooperative
            // tiles, whose gathering producer keeps 16 rows' windows in 88 registers (its
            // stream-K knob values compile below, with the launch that zeroes the counters).
            "conv_v2_bf16_nhwc_3x3_stride2_256_rows",
            CONV2,
            conv_graph(DataType::Bf16, 32, 128, 56, 56, 128, 3, 1, 2, true, true),
        ),
        (
            "sdpa_f16_gqa_causal_bias",
            SDPA,
            sdpa_graph(DataType::F16, 2, 8, 2, 100, 130, 64, true, true),
        ),
        // The Hopper attention forward (sm_90a): each head dim's tile configuration, GQA and
        // MQA (broadcast k/v heads), causal and not, lengths that are no multiples of the tiles.
        (
            "sdpa_fa3_bf16_gqa_causal_d128",
            SDPA3,
            sdpa_graph(DataType::Bf16, 2, 8, 2, 1000, 777, 128, true, false),
        ),
        (
            "sdpa_fa3_f16_d64",
            SDPA3,
            sdpa_graph(DataType::F16, 1, 4, 4, 300, 301, 64, false, false),
        ),
        (
            "sdpa_fa3_bf16_mqa_causal_d256",
            SDPA3,
            sdpa_graph(DataType::Bf16, 1, 4, 1, 100, 150, 256, true, false),
        ),
    ]
}

/// The generated kernel of one variant (of a stream-K GEMM, the GEMM after the launch that
/// zeroes its tile counters).
fn generated(kind: &str, mut g: Graph) -> kiln_engine_cuda::codegen::Kernel {
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    let mut k = kiln_engine_cuda::generate(kind, &og).expect("generate");
    if k.len() == 2 {
        assert!(k[0].symbol.contains("_counters_"), "{}", k[0].symbol);
    } else {
        assert_eq!(k.len(), 1, "one kernel");
    }
    k.pop().expect("a kernel")
}

/// A kernel's launch and source, as its snapshot shows them.
fn snapshot_text(k: &kiln_engine_cuda::codegen::Kernel) -> String {
    format!(
        "// launch: grid {:?}, block {:?}, {} bytes of dynamic shared memory, tensor UIDs {:?}\n{}",
        k.grid, k.block, k.shared_bytes, k.args, k.source
    )
}

#[test]
fn generated_sources_are_stable() {
    for (name, kind, g) in source_variants() {
        let k = generated(kind, g);
        insta::assert_snapshot!(name, snapshot_text(&k));
    }
}

#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_snapshot_variant_compiles_for_sm_90() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    for (name, kind, g) in source_variants() {
        let k = generated(kind, g);
        // Uncached, so that NVRTC really compiles this source with today's headers.
        let target = kiln_engine_cuda::compile::Target {
            arch: 90,
            specific: k.arch_specific,
        };
        let c = kiln_engine_cuda::compile::compile_uncached(
            &k.source,
            &format!("{}.cu", k.symbol),
            target,
            false,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
            std::fs::create_dir_all(&dir).expect("dump dir");
            let path = std::path::Path::new(&dir).join(format!("{name}.cubin"));
            std::fs::write(path, &c.cubin).expect("dump cubin");
        }
        assert_eq!(
            c.cubin.get(..4),
            Some(&b"\x7fELF"[..]),
            "{name}: not an ELF cubin"
        );
        let symbol = k.symbol.as_bytes();
        assert!(
            c.cubin.windows(symbol.len()).any(|w| w == symbol),
            "{name}: the cubin has no symbol {}",
            k.symbol
        );
    }
}

/// Every V2 snapshot variant compiles with every tile knob value (cooperative and ping-pong, B in
/// the ring or resident, stream-K); with `KILN_DUMP_CUBINS` the GEMM cubins are written as
/// `<variant>_tile<v>.cubin` for scripts/check-hgmma.sh (HGMMA, no spills).
#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_v2_variant_compiles_with_every_tile_configuration() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    use kiln_engine_cuda::{CONV_FPROP_V2, MATMUL_V2};
    let tiles = kiln_engine_cuda::codegen::hopper::KNOB_MAX;
    let in_ring = kiln_engine_cuda::codegen::hopper::CONFIGS.len() as i64;
    let (mut compiled, mut resident, mut streamed) = (0, 0, 0);
    for (name, kind, mut g) in source_variants() {
        if kind != MATMUL_V2 && kind != CONV_FPROP_V2 {
            continue;
        }
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        for v in 1..=tiles {
            let mut kernels = match kiln_engine_cuda::generate_with(kind, &og, v) {
                Ok(k) => k,
                // B resident where it does not fit: refused.
                Err(e) if v > in_ring && e.contains("cannot stay resident") => continue,
                Err(e) => panic!("{name} tile {v}: {e}"),
            };
            // A stream-K plan zeroes its tile counters first: that kernel compiles too.
            let k = kernels.pop().expect("the GEMM kernel");
            for before in &kernels {
                let target = kiln_engine_cuda::compile::Target {
                    arch: 90,
                    specific: before.arch_specific,
                };
                kiln_engine_cuda::compile::compile_uncached(
                    &before.source,
                    &format!("{}.cu", before.symbol),
                    target,
                    false,
                )
                .unwrap_or_else(|e| panic!("{name} tile {v} {}: {e}", before.symbol));
            }
            let target = kiln_engine_cuda::compile::Target {
                arch: 90,
                specific: k.arch_specific,
            };
            let c = kiln_engine_cuda::compile::compile_uncached(
                &k.source,
                &format!("{}.cu", k.symbol),
                target,
                false,
            )
            .unwrap_or_else(|e| panic!("{name} tile {v}: {e}"));
            if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
                std::fs::create_dir_all(&dir).expect("dump dir");
                let path = std::path::Path::new(&dir).join(format!("{name}_tile{v}.cubin"));
                std::fs::write(path, &c.cubin).expect("dump cubin");
            }
            let symbol = k.symbol.as_bytes();
            assert!(
                c.cubin.windows(symbol.len()).any(|w| w == symbol),
                "{name} tile {v}: the cubin has no symbol {}",
                k.symbol
            );
            if !kernels.is_empty() {
                streamed += 1;
            } else if v > in_ring {
                resident += 1;
            } else {
                compiled += 1;
            }
        }
    }
    assert_eq!(
        compiled,
        7 * in_ring,
        "seven V2 variants, every configuration"
    );
    assert!(resident > 0, "no variant compiled with B resident");
    assert_eq!(
        streamed,
        7 * 4,
        "seven V2 variants, every stream-K configuration"
    );
}

fn gemm_source(conv: bool, make: impl Fn() -> Graph) -> String {
    let mut g = make();
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    let kind = if conv {
        kiln_engine_cuda::CONV_FPROP_V1
    } else {
        kiln_engine_cuda::MATMUL_V1
    };
    let k = kiln_engine_cuda::generate(kind, &og).expect("generate");
    k[0].source.clone()
}

#[test]
fn gemm_index_width_and_wide_loads_follow_the_shapes() {
    // Small matmul: 32-bit indices, 16-byte loads of A along K and of B along N.
    let s = gemm_source(false, || matmul_graph(DataType::Bf16, 2, 64, 64, 64, false));
    assert!(s.contains("typedef int kiln_idx;"), "{s}");
    assert!(s.contains("#define KILN_GEMM_A_VEC 1\n"), "{s}");
    assert!(s.contains("#define KILN_GEMM_B_VEC 1\n#define KILN_GEMM_B_VEC_N 1\n"));
    // K = 50 is no multiple of 8: A stays scalar; N = 40 is, so B loads wide.
    let s = gemm_source(false, || matmul_graph(DataType::Bf16, 1, 70, 50, 40, false));
    assert!(s.contains("#define KILN_GEMM_A_VEC 0\n"), "{s}");
    assert!(s.contains("#define KILN_GEMM_B_VEC 1\n"), "{s}");
    // Offsets past 2^31: 64-bit indices and literals.
    let s = gemm_source(false, || {
        matmul_graph(DataType::Bf16, 1, 50000, 50000, 16, false)
    });
    assert!(s.contains("typedef long long kiln_idx;"));
    assert!(s.contains("#define KILN_GEMM_K 50000LL\n"));
    // NCHW f32 convolution: channels are strided, so both operands load one element at a time.
    let s = gemm_source(true, || {
        conv_graph(DataType::F32, 1, 3, 7, 7, 4, 3, 1, 2, false, false)
    });
    assert!(s.contains("typedef int kiln_idx;"));
    assert!(s.contains("#define KILN_GEMM_A_VEC 0\n"), "{s}");
    assert!(s.contains("#define KILN_GEMM_B_VEC 0\n"), "{s}");
}

/// A CUDA plan whose payload records other tensor sizes than its envelope (every digest and
/// checksum recomputed) is refused at load with BAD_PARAM naming the tensor: its kernels were
/// specialised to the payload's sizes, so running it on buffers sized from the envelope could
/// write past them.
#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn a_payload_recording_other_sizes_than_its_envelope_is_refused_at_load() {
    require_nvrtc();
    let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
    let mut g = pointwise_graph(DataType::F32, 5, 37);
    g.build(&h, &[HeurMode::A]).expect("build");
    let saved = g.to_compiled_plan_binary().expect("save");
    let env = kiln_format::decode_plan(&saved).expect("an envelope");
    let p = payload::decode(env.payload).expect("a CUDA payload");
    let uid = p.tensors[0].uid;
    let mut forged = p.clone();
    forged.tensors[0].storage_bytes *= 1000;
    let forged_payload = payload::encode(&forged);
    let mut forged_env = env.clone();
    forged_env.payload = &forged_payload;
    let forged_plan = kiln_format::encode_plan_as_given(&forged_env);
    let h2 = handle(Device::CudaTarget(90)).expect("another target handle");
    let e = kiln::from_compiled_plan_binary(&h2, &forged_plan).expect_err("must be refused");
    assert_eq!(e.status(), kiln::Status::BadParam, "{e}");
    assert!(
        e.to_string().contains(&format!("tensor uid {uid}")),
        "the error names the tensor: {e}"
    );
    // The same file with the payload untouched (re-encoded the same way) loads.
    let honest_payload = payload::encode(&p);
    let mut honest_env = env.clone();
    honest_env.payload = &honest_payload;
    kiln::from_compiled_plan_binary(&h2, &kiln_format::encode_plan_as_given(&honest_env))
        .expect("the honest re-encoding loads");
}

/// The committed sm_90 plans of earlier providers restore on today's provider (deviceless) and
/// re-save to exactly their bytes; the GPU test runs them.
#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn committed_sm90_plans_restore_and_resave_identically() {
    require_nvrtc();
    for (stem, make, _, _) in plan_fixtures::cases() {
        let (file, io) = plan_fixtures::load(stem, make);
        let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
        let g = Graph::deserialize(Some(&h), &file).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let plan = g.plan().expect("the file carries its plan");
        assert_eq!(io["engine"], plan.engine_name(), "{stem}");
        assert_eq!(
            kiln::serialize_compiled_plan(plan).expect("re-save"),
            kiln_format::plan_part(&file).expect("plan part"),
            "{stem}: the re-save differs"
        );
        assert_eq!(g.serialize().expect("re-save"), file, "{stem}");
    }
}

/// The Hopper attention forward claims the forward cases it covers on sm_90 only, and declines
/// the others with a reason that names what it does not cover and the engine that runs it.
#[test]
fn the_hopper_attention_forward_declines_what_it_does_not_cover_with_reasons() {
    use kiln_engine_cuda::{supports, SDPA_FA2_V1, SDPA_FA3_V1};
    let og = |mut g: Graph| {
        g.validate().expect("valid");
        g.op_graph().expect("graph").clone()
    };
    let plain = og(sdpa_graph(
        DataType::Bf16,
        2,
        8,
        2,
        100,
        130,
        64,
        true,
        false,
    ));
    supports(SDPA_FA3_V1, &plain, 90).expect("a causal GQA bf16 d64 forward is covered");
    let why = supports(SDPA_FA3_V1, &plain, 80).expect_err("sm_80");
    assert!(why.contains("sm_90a") && why.contains("sm_80"), "{why}");
    let bias = og(sdpa_graph(DataType::F16, 2, 8, 2, 100, 130, 64, true, true));
    let why = supports(SDPA_FA3_V1, &bias, 90).expect_err("a bias");
    assert!(why.contains("bias") && why.contains(SDPA_FA2_V1), "{why}");
    supports(SDPA_FA2_V1, &bias, 90).expect("FA2 runs the bias");
    let d96 = og(sdpa_graph(DataType::F16, 1, 2, 2, 50, 50, 96, false, false));
    let why = supports(SDPA_FA3_V1, &d96, 90).expect_err("head dim 96");
    assert!(why.contains("96") && why.contains(SDPA_FA2_V1), "{why}");
    let bwd = og(sdpa_backward_graph(DataType::Bf16, 64));
    let why = supports(SDPA_FA3_V1, &bwd, 90).expect_err("the backward");
    assert!(why.contains("sdpa_backward"), "{why}");
}

/// On an sm_90 target the heuristics build the Hopper forward first; on sm_80 the FA2 engine.
#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn the_heuristics_choose_the_hopper_attention_forward_on_sm_90() {
    require_nvrtc();
    for (arch, want) in [
        (90, kiln_engine_cuda::SDPA_FA3_V1),
        (80, kiln_engine_cuda::SDPA_FA2_V1),
    ] {
        let h = handle(Device::CudaTarget(arch)).expect("target handle");
        let mut g = sdpa_graph(DataType::Bf16, 1, 4, 4, 200, 200, 128, false, false);
        g.build(&h, &[HeurMode::A]).expect("build");
        assert_eq!(g.plan().expect("plan").engine_name(), want, "sm_{arch}");
    }
}

/// The Hopper attention backward: its three kernels (prep, main, convert) compile for sm_90 at
/// both head dims, f16 and bf16, with GQA, a causal band, a sliding window, padding lengths and a
/// scale tensor; the heuristics choose it on sm_90 and the FA2 engine on sm_80, and it declines
/// what it does not cover with the engine that runs it. `KILN_DUMP_CUBINS=dir` keeps the main
/// kernels' cubins for scripts/check-hgmma.sh.
#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn the_hopper_attention_backward_compiles_for_sm_90_and_is_chosen_there() {
    use kiln_engine_cuda::{supports, SDPA_FA2_V1, SDPA_FA3_BWD_V1};
    require_nvrtc();
    for (name, dt, d) in [
        ("sdpa_fa3_bwd_bf16_gqa_d64", DataType::Bf16, 64),
        ("sdpa_fa3_bwd_f16_gqa_d128", DataType::F16, 128),
    ] {
        let mut g = sdpa_backward_graph(dt, d);
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        supports(SDPA_FA3_BWD_V1, &og, 90).expect("covered on sm_90");
        assert!(supports(SDPA_FA3_BWD_V1, &og, 80).is_err(), "sm_80");
        let kernels = kiln_engine_cuda::generate(SDPA_FA3_BWD_V1, &og).expect("generate");
        assert_eq!(kernels.len(), 3, "prep, main, convert");
        for (i, k) in kernels.iter().enumerate() {
            let target = kiln_engine_cuda::compile::Target {
                arch: 90,
                specific: k.arch_specific,
            };
            let c = kiln_engine_cuda::compile::compile_uncached(
                &k.source,
                &format!("{}.cu", k.symbol),
                target,
                false,
            )
            .unwrap_or_else(|e| panic!("{name} kernel {i}: {e}"));
            assert_eq!(
                c.cubin.get(..4),
                Some(&b"\x7fELF"[..]),
                "{name}: not a cubin"
            );
            if let (Some(dir), true) = (std::env::var_os("KILN_DUMP_CUBINS"), k.arch_specific) {
                std::fs::create_dir_all(&dir).expect("dump dir");
                let path = std::path::Path::new(&dir).join(format!("{name}_main.cubin"));
                std::fs::write(path, &c.cubin).expect("dump cubin");
            }
        }
    }
    for (arch, want) in [(90, SDPA_FA3_BWD_V1), (80, SDPA_FA2_V1)] {
        let h = handle(Device::CudaTarget(arch)).expect("target handle");
        let mut g = sdpa_backward_graph(DataType::Bf16, 64);
        g.build(&h, &[HeurMode::A]).expect("build");
        assert_eq!(g.plan().expect("plan").engine_name(), want, "sm_{arch}");
    }
    let og = |mut g: Graph| {
        g.validate().expect("valid");
        g.op_graph().expect("graph").clone()
    };
    let why = supports(
        SDPA_FA3_BWD_V1,
        &og(sdpa_backward_graph(DataType::F16, 256)),
        90,
    )
    .expect_err("head dim 256");
    assert!(why.contains("256") && why.contains(SDPA_FA2_V1), "{why}");
    let why = supports(
        SDPA_FA3_BWD_V1,
        &og(sdpa_graph(
            DataType::Bf16,
            1,
            4,
            4,
            64,
            64,
            64,
            false,
            false,
        )),
        90,
    )
    .expect_err("the forward");
    assert!(why.contains("forward"), "{why}");
}

/// The convolution-gradient variants: dgrad and wgrad, NHWC and NCHW, f32/f16/bf16, strides,
/// padding and dilation, a fused scale + bias, and a wgrad long enough to split its reduction.
fn conv_grad_variants() -> Vec<(&'static str, &'static str, Graph)> {
    use kiln_engine_cuda::{CONV_DGRAD_V1 as DG, CONV_WGRAD_V1 as WG};
    let s = |n, c, h, w, k, r, pad, stride, dil| GradShape {
        n,
        c,
        h,
        w,
        k,
        r,
        pad,
        stride,
        dil,
    };
    vec![
        (
            "conv_dgrad_bf16_nhwc_3x3",
            DG,
            conv_grad_graph(
                true,
                DataType::Bf16,
                s(2, 64, 9, 9, 32, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        (
            "conv_dgrad_f16_nhwc_3x3_stride2_scale_bias",
            DG,
            conv_grad_graph(
                true,
                DataType::F16,
                s(2, 24, 11, 10, 40, 3, 1, 2, 1),
                true,
                true,
            ),
        ),
        (
            "conv_dgrad_f32_nchw_3x3_dilation2",
            DG,
            conv_grad_graph(
                true,
                DataType::F32,
                s(1, 5, 9, 8, 7, 3, 2, 1, 2),
                false,
                false,
            ),
        ),
        (
            "conv_wgrad_bf16_nhwc_3x3",
            WG,
            conv_grad_graph(
                false,
                DataType::Bf16,
                s(2, 16, 9, 9, 24, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        (
            "conv_wgrad_f16_nchw_3x3_stride2_scale_bias",
            WG,
            conv_grad_graph(
                false,
                DataType::F16,
                s(2, 7, 13, 11, 9, 3, 1, 2, 1),
                false,
                true,
            ),
        ),
        (
            "conv_wgrad_bf16_nhwc_3x3_split",
            WG,
            conv_grad_graph(
                false,
                DataType::Bf16,
                s(32, 128, 28, 28, 128, 3, 1, 1, 1),
                true,
                true,
            ),
        ),
    ]
}

/// The Hopper gradient engines' variants (sm_90a): dgrad at stride 1 and 2 with K not a
/// multiple of 64, a fused scale + bias, wgrad unsplit and split over its workspace.
fn conv_grad_v2_variants() -> Vec<(&'static str, &'static str, Graph)> {
    use kiln_engine_cuda::{CONV_DGRAD_V2 as DG2, CONV_WGRAD_V2 as WG2};
    let s = |n, c, h, w, k, r, pad, stride, dil| GradShape {
        n,
        c,
        h,
        w,
        k,
        r,
        pad,
        stride,
        dil,
    };
    vec![
        (
            "conv_dgrad_v2_bf16_nhwc_3x3",
            DG2,
            conv_grad_graph(
                true,
                DataType::Bf16,
                s(2, 64, 9, 9, 32, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        (
            "conv_dgrad_v2_f16_nhwc_3x3_stride2_scale_bias",
            DG2,
            conv_grad_graph(
                true,
                DataType::F16,
                s(2, 24, 11, 10, 40, 3, 1, 2, 1),
                true,
                true,
            ),
        ),
        (
            "conv_wgrad_v2_bf16_nhwc_3x3",
            WG2,
            conv_grad_graph(
                false,
                DataType::Bf16,
                s(2, 16, 9, 9, 24, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        // The benchmark's shapes: a 256 x 64 tile (two MMA tiles per consumer) and 128 x 256.
        (
            "conv_dgrad_v2_bf16_nhwc_3x3_n32_c64",
            DG2,
            conv_grad_graph(
                true,
                DataType::Bf16,
                s(32, 64, 56, 56, 64, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        (
            // A strided dgrad as four phases (dense sub-problems), stored element by element.
            "conv_dgrad_v2_bf16_nhwc_3x3_stride2_n32_c128",
            DG2,
            conv_grad_graph(
                true,
                DataType::Bf16,
                s(32, 128, 56, 56, 128, 3, 1, 2, 1),
                true,
                false,
            ),
        ),
        (
            "conv_wgrad_v2_f16_nhwc_3x3_n64_c512",
            WG2,
            conv_grad_graph(
                false,
                DataType::F16,
                s(64, 512, 7, 7, 512, 3, 1, 1, 1),
                true,
                false,
            ),
        ),
        // An odd shape whose reduction stream-K could take (45 tiles of 128 x 64, 1800 x 136,
        // 38 K slices each: four parts a tile) and the heuristic splits.
        (
            "conv_wgrad_v2_bf16_nhwc_3x3_stream_k_odd",
            WG2,
            conv_grad_graph(
                false,
                DataType::Bf16,
                s(24, 200, 11, 9, 136, 3, 1, 1, 1),
                true,
                true,
            ),
        ),
        (
            "conv_wgrad_v2_bf16_nhwc_3x3_split",
            WG2,
            conv_grad_graph(
                false,
                DataType::Bf16,
                s(32, 128, 28, 28, 128, 3, 1, 1, 1),
                true,
                true,
            ),
        ),
    ]
}

/// All kernels of one gradient variant.
fn generated_all(kind: &str, mut g: Graph) -> Vec<kiln_engine_cuda::codegen::Kernel> {
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    kiln_engine_cuda::generate(kind, &og).expect("generate")
}

#[test]
fn conv_grad_sources_are_stable() {
    for (name, kind, g) in conv_grad_variants()
        .into_iter()
        .chain(conv_grad_v2_variants())
    {
        let ks = generated_all(kind, g);
        let text: Vec<String> = ks.iter().map(snapshot_text).collect();
        insta::assert_snapshot!(name, text.join("\n// ---- next kernel ----\n"));
    }
}

/// A long wgrad splits its reduction over a workspace (two kernels); a short one does not.
#[test]
fn wgrad_splits_long_reductions_over_a_workspace() {
    for (name, kind, mut g) in conv_grad_variants() {
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        let ks = kiln_engine_cuda::generate(kind, &og).expect("generate");
        let ws = kiln_engine_cuda::codegen::conv_grad::workspace_bytes(
            &og,
            if kind == kiln_engine_cuda::CONV_DGRAD_V1 {
                kiln_core::ConvDirection::Dgrad
            } else {
                kiln_core::ConvDirection::Wgrad
            },
        )
        .expect("workspace");
        if name.ends_with("_split") {
            assert_eq!(ks.len(), 2, "{name}");
            assert!(ks[0].grid[2] > 1, "{name}: {:?}", ks[0].grid);
            assert_eq!(ws, u64::from(ks[0].grid[2]) * 128 * 1152 * 4, "{name}");
            assert!(ks.iter().all(
                |k| k.args.last() == Some(&kiln_engine_cuda::codegen::conv_grad::WORKSPACE_ARG)
            ));
        } else {
            assert_eq!((ks.len(), ws), (1, 0), "{name}");
        }
    }
}

#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_conv_grad_variant_compiles_for_sm_90() {
    require_nvrtc();
    for (name, kind, g) in conv_grad_variants()
        .into_iter()
        .chain(conv_grad_v2_variants())
    {
        for (i, k) in generated_all(kind, g).into_iter().enumerate() {
            let target = kiln_engine_cuda::compile::Target {
                arch: 90,
                specific: k.arch_specific,
            };
            let c = kiln_engine_cuda::compile::compile_uncached(
                &k.source,
                &format!("{}.cu", k.symbol),
                target,
                false,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
                std::fs::create_dir_all(&dir).expect("dump dir");
                // The split reduction and the stream-K counters are no Hopper kernels:
                // check-hgmma.sh skips `*_reduce`.
                let file = if k.arch_specific || (i == 0 && !name.contains("_v2_")) {
                    format!("{name}.cubin")
                } else {
                    format!("{name}_{i}_reduce.cubin")
                };
                let path = std::path::Path::new(&dir).join(file);
                std::fs::write(path, &c.cubin).expect("dump cubin");
            }
            let symbol = k.symbol.as_bytes();
            assert!(
                c.cubin.windows(symbol.len()).any(|w| w == symbol),
                "{name}: the cubin has no symbol {}",
                k.symbol
            );
        }
    }
}

/// The C512 7x7 wgrad (72 tiles of 128 x 256, 49 K slices each) runs stream-K: a launch that
/// zeroes the tile counters, then the GEMM over 132 blocks, with a counter per tile and a
/// partial tile per block in the workspace; its tile knob's values past the tiles are the
/// cooperative tiles with stream-K, and dgrad has no such values.
#[test]
fn the_short_wide_wgrad_runs_stream_k() {
    use kiln_core::ConvDirection::{Dgrad, Wgrad};
    use kiln_engine_cuda::codegen::hopper_grad;
    let (_, kind, mut g) = conv_grad_v2_variants()
        .into_iter()
        .find(|v| v.0 == "conv_wgrad_v2_f16_nhwc_3x3_n64_c512")
        .expect("the C512 variant");
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    let ks = kiln_engine_cuda::generate(kind, &og).expect("generate");
    assert_eq!(ks.len(), 2);
    let (counters, gemm) = (&ks[0], &ks[1]);
    assert!(!counters.arch_specific && gemm.arch_specific);
    assert!(gemm.source.contains("#define KILN_H_STREAM_K 1"));
    assert!(gemm.source.contains("#define KILN_H_SK_CTAS 132"));
    assert_eq!(gemm.grid[0], 132);
    let ws = kiln_engine_cuda::codegen::conv_grad::WORKSPACE_ARG;
    assert_eq!(counters.args, vec![ws]);
    assert_eq!(gemm.args.last(), Some(&ws));
    // 72 counters rounded up to 128 floats, then 132 tiles of 128 x 256 f32.
    assert_eq!(
        hopper_grad::workspace_bytes(&og, Wgrad, None).expect("workspace"),
        (128 + 132 * 128 * 256) * 4
    );
    let tiles = hopper_grad::CONFIGS.len() as i64;
    assert_eq!(hopper_grad::knob_max(Dgrad), tiles);
    assert_eq!(hopper_grad::knob_max(Wgrad), tiles + 5);
    for v in 1..=hopper_grad::knob_max(Wgrad) {
        let k = hopper_grad::knob(Wgrad, v)
            .expect("knob")
            .expect("a choice");
        assert_eq!(k.stream_k, v > tiles, "knob {v}");
        assert!(!(k.stream_k && k.tile.pingpong), "knob {v}");
        let ks = kiln_engine_cuda::generate_with(kind, &og, v).expect("generate");
        assert_eq!(ks.len(), if k.stream_k { 2 } else { 1 }, "knob {v}");
    }
    // A tile spread over more than three blocks keeps the split: the odd variant's 45 tiles of
    // 38 slices would be spread over four.
    let (_, kind, mut g) = conv_grad_v2_variants()
        .into_iter()
        .find(|v| v.0 == "conv_wgrad_v2_bf16_nhwc_3x3_stream_k_odd")
        .expect("the odd variant");
    g.validate().expect("valid");
    let og = g.op_graph().expect("graph").clone();
    let ks = kiln_engine_cuda::generate(kind, &og).expect("generate");
    assert!(ks.iter().all(|k| !k.source.contains("KILN_H_STREAM_K 1")));
    let ks = kiln_engine_cuda::generate_with(kind, &og, tiles + 5).expect("generate");
    assert!(ks[1].source.contains("#define KILN_H_STREAM_K 1"));
    assert!(hopper_grad::knob(Dgrad, tiles + 1).is_err());
    assert!(hopper_grad::knob(Wgrad, tiles + 6).is_err());
}

/// A split wgrad plan built for sm_90 with no device records its workspace, saves as payload
/// minor 2 (a workspace argument) and re-saves byte-identically after a load.
#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn split_wgrad_plan_saves_its_workspace_and_resaves_identically() {
    require_nvrtc();
    let (_, _, mut g) = conv_grad_variants().pop().expect("the split variant");
    let h = handle(Device::CudaTarget(90)).expect("an sm_90 target handle");
    g.build(&h, &[HeurMode::A]).expect("builds for sm_90");
    let plan = g.plan().expect("plan");
    // The Hopper engine, which the heuristics prefer on sm_90, splits this reduction too.
    assert_eq!(plan.engine_name(), kiln_engine_cuda::CONV_WGRAD_V2);
    assert!(plan.workspace_size() > 0);
    let bytes = kiln::serialize_compiled_plan(plan).expect("save");
    let loaded = kiln::deserialize_compiled_plan(&h, &bytes).expect("load");
    assert_eq!(loaded.workspace_size(), plan.workspace_size());
    assert_eq!(
        kiln::serialize_compiled_plan(&loaded).expect("re-save"),
        bytes
    );
    let at = bytes
        .windows(4)
        .position(|w| w == payload::MARKER)
        .expect("the plan holds a CUDA payload");
    assert_eq!(&bytes[at + 4..at + 8], &[2, 0, 2, 0], "payload format 2.2");
}

/// Every schedule variant of the Hopper attention forward (its `tile` knob) compiles for sm_90a
/// at each head dim, so that `kiln build --autotune` and the conformance suite's knob sweep can
/// build any of them. `KILN_DUMP_CUBINS=DIR` keeps the cubins (for cuobjdump).
#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn every_fa3_variant_compiles_for_sm_90a() {
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    let kind = kiln_engine_cuda::SDPA_FA3_V1;
    let variants = kiln_engine_cuda::codegen::sdpa_fa3::VARIANTS.len() as i64;
    for d in [64, 128] {
        // Odd variants without a mask, even ones causal (the masked code paths).
        let graphs = [false, true].map(|causal| {
            let mut g = sdpa_graph(DataType::Bf16, 1, 4, 4, 300, 301, d, causal, false);
            g.validate().expect("valid");
            g.op_graph().expect("graph").clone()
        });
        // The last variant (persistent blocks) with both.
        let runs = (1..=variants)
            .map(|tile| (tile, (tile % 2 == 0) as usize))
            .chain([(variants, (variants % 2 == 1) as usize)]);
        for (tile, masked) in runs {
            let og = &graphs[masked];
            let k = kiln_engine_cuda::generate_with(kind, og, tile)
                .unwrap_or_else(|e| panic!("d {d} tile {tile}: {e}"))
                .remove(0);
            assert!(
                k.arch_specific,
                "d {d} tile {tile}: FA3 kernels are sm_90a code"
            );
            let target = kiln_engine_cuda::compile::Target {
                arch: 90,
                specific: true,
            };
            let c = kiln_engine_cuda::compile::compile_uncached(
                &k.source,
                &format!("{}.cu", k.symbol),
                target,
                false,
            )
            .unwrap_or_else(|e| panic!("d {d} tile {tile}: {e}"));
            assert_eq!(c.cubin.get(..4), Some(&b"\x7fELF"[..]), "d {d} tile {tile}");
            if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
                std::fs::create_dir_all(&dir).expect("dump dir");
                let path = std::path::Path::new(&dir)
                    .join(format!("fa3_d{d}_tile{tile}_masked{masked}.cubin"));
                std::fs::write(path, &c.cubin).expect("dump cubin");
            }
        }
    }
}

/// The pooling kernels of small graphs index in 32 bits (no 64-bit type or literal is left in
/// their sources); `KILN_PRINT_SOURCES=1` prints them.
#[test]
fn pooling_kernels_of_small_graphs_index_in_32_bits() {
    use kiln::ResampleMode;
    let cases: Vec<(&str, Graph)> = vec![
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::Bf16, ResampleMode::MaxPool, true),
        ),
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::F32, ResampleMode::AvgPoolExcludePadding, false),
        ),
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::F32, ResampleMode::MaxPool, true),
        ),
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::F16, ResampleMode::MaxPool, false),
        ),
        // NHWC without an index: the channel-vector path too.
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::Bf16, ResampleMode::AvgPoolExcludePadding, true),
        ),
        (
            kiln_engine_cuda::RESAMPLE_V1,
            pooling_graph(DataType::F16, ResampleMode::MaxPool, true),
        ),
        (
            kiln_engine_cuda::RESAMPLE_BACKWARD_V1,
            pooling_backward_graph(DataType::Bf16, ResampleMode::MaxPool, true, false),
        ),
        (
            kiln_engine_cuda::RESAMPLE_BACKWARD_V1,
            pooling_backward_graph(DataType::Bf16, ResampleMode::MaxPool, true, true),
        ),
        (
            kiln_engine_cuda::RESAMPLE_BACKWARD_V1,
            pooling_backward_graph(
                DataType::F16,
                ResampleMode::AvgPoolExcludePadding,
                false,
                false,
            ),
        ),
        // NHWC: the backward's channel-vector path too.
        (
            kiln_engine_cuda::RESAMPLE_BACKWARD_V1,
            pooling_backward_graph(
                DataType::Bf16,
                ResampleMode::AvgPoolExcludePadding,
                true,
                false,
            ),
        ),
    ];
    for (engine, mut g) in cases {
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        let kernels = kiln_engine_cuda::generate_with(engine, &og, 0)
            .unwrap_or_else(|e| panic!("{engine}: {e}"));
        for k in kernels {
            if std::env::var_os("KILN_PRINT_SOURCES").is_some() {
                eprintln!("{}", k.source);
            }
            assert!(
                !k.source.contains("kiln_i64") && !k.source.contains("LL"),
                "{engine}: 64-bit index arithmetic left in\n{}",
                k.source
            );
        }
    }
}

/// Max pooling of 16-bit NHWC x into y of its type takes the packed path (channel pairs compared
/// by `__hmax2_nan` and `__heq2_mask`); f32, averages and NCHW keep the per-channel paths.
#[test]
fn max_pooling_of_16_bit_nhwc_takes_the_packed_path() {
    use kiln::ResampleMode;
    for (dt, mode, nhwc, packed) in [
        (DataType::Bf16, ResampleMode::MaxPool, true, true),
        (DataType::F16, ResampleMode::MaxPool, true, true),
        (DataType::F32, ResampleMode::MaxPool, true, false),
        (
            DataType::Bf16,
            ResampleMode::AvgPoolExcludePadding,
            true,
            false,
        ),
        (DataType::Bf16, ResampleMode::MaxPool, false, false),
    ] {
        let mut g = pooling_graph(dt, mode, nhwc);
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        let kernels = kiln_engine_cuda::generate_with(kiln_engine_cuda::RESAMPLE_V1, &og, 0)
            .unwrap_or_else(|e| panic!("{dt} {mode:?}: {e}"));
        assert_eq!(kernels.len(), 1);
        assert_eq!(
            kernels[0].source.contains("kiln_pair_max<"),
            packed,
            "{dt} {mode:?} nhwc {nhwc}"
        );
    }
}

/// Max pooling's backward through x runs two kernels over the plan's workspace: the forward's
/// argmax (i8 window positions at offset 0, y 256-byte aligned after them), then the index
/// gather reading them; through an index, one kernel and no workspace. A tensor uid in the range
/// reserved for workspace arguments is refused with its name.
#[test]
fn max_pooling_backward_through_x_gathers_through_a_workspace_index() {
    use kiln::ResampleMode;
    let op_graph = |mut g: Graph| {
        g.validate().expect("valid");
        g.op_graph().expect("graph").clone()
    };
    let through_x = op_graph(pooling_backward_graph(
        DataType::Bf16,
        ResampleMode::MaxPool,
        true,
        false,
    ));
    let ks = kiln_engine_cuda::generate_with(kiln_engine_cuda::RESAMPLE_BACKWARD_V1, &through_x, 0)
        .expect("kernels");
    assert_eq!(ks.len(), 2);
    let ws = kiln_engine_cuda::codegen::WORKSPACE_ARG;
    // dy [2, 16, 4, 5]: 640 i8 positions, then 640 bf16 of y from offset 768.
    assert!(ks[0].args.contains(&ws) && ks[0].args.contains(&(ws + 768)));
    assert!(ks[1].args.contains(&ws));
    assert_eq!(
        kiln_engine_cuda::codegen::resample::backward_workspace_bytes(&through_x),
        Ok(768 + 640 * 2)
    );
    let with_index = op_graph(pooling_backward_graph(
        DataType::Bf16,
        ResampleMode::MaxPool,
        true,
        true,
    ));
    let ks =
        kiln_engine_cuda::generate_with(kiln_engine_cuda::RESAMPLE_BACKWARD_V1, &with_index, 0)
            .expect("kernels");
    assert_eq!(ks.len(), 1);
    assert!(!ks[0].args.iter().any(|&a| a < 0));
    assert_eq!(
        kiln_engine_cuda::codegen::resample::backward_workspace_bytes(&with_index),
        Ok(0)
    );

    let mut reserved = through_x.clone();
    reserved.tensors[0].uid = ws + 5;
    let err = kiln_engine_cuda::supports(kiln_engine_cuda::RESAMPLE_BACKWARD_V1, &reserved, 90)
        .expect_err("a reserved uid");
    assert!(
        err.contains("reserved") && err.contains(&(ws + 5).to_string()),
        "{err}"
    );
}

/// The gather knob's value 1 (the phase path) compiles for every pooling mode and index type
/// on the channel-vector path, and only there differs from value 0's kernel; the scalar paths
/// (not channels-last) and value 0 keep the gather over runs.
#[test]
#[ignore = "needs NVRTC and the CUDA headers: eval \"$(scripts/install-nvrtc.sh)\""]
fn pooling_backward_phase_path_compiles_for_every_mode() {
    use kiln::ResampleMode;
    if let Some(why) = nvrtc_missing() {
        panic!("NVRTC is not available here: {why}");
    }
    let cases = [
        (ResampleMode::MaxPool, true, true),
        (ResampleMode::MaxPool, true, false),
        (ResampleMode::AvgPoolExcludePadding, true, false),
        (ResampleMode::AvgPoolIncludePadding, true, false),
        (ResampleMode::AvgPoolIncludePadding, false, false),
    ];
    let marker = "The phase path";
    for (dt, (mode, nhwc, index)) in [DataType::Bf16, DataType::F32]
        .into_iter()
        .flat_map(|dt| cases.into_iter().map(move |c| (dt, c)))
    {
        let mut g = pooling_backward_graph(dt, mode, nhwc, index);
        g.validate().expect("valid");
        let og = g.op_graph().expect("graph").clone();
        let phase =
            kiln_engine_cuda::codegen::resample::generate_backward(&og, true).expect("kernels");
        let runs =
            kiln_engine_cuda::codegen::resample::generate_backward(&og, false).expect("kernels");
        // The common graph's index input is channels-first: that gather stays scalar. Through
        // x, the index is the workspace's, laid out as dy.
        let vector = nhwc && !(mode == ResampleMode::MaxPool && index);
        let gather = phase.last().expect("a gather kernel");
        assert_eq!(
            gather.source.contains(marker),
            vector,
            "{dt:?} {mode:?} {nhwc}"
        );
        assert!(!runs.last().expect("gather").source.contains(marker));
        for k in &phase {
            let c = kiln_engine_cuda::compile::compile_uncached(
                &k.source,
                &format!("{}.cu", k.symbol),
                90,
                false,
            )
            .unwrap_or_else(|e| panic!("{dt:?} {mode:?} nhwc {nhwc}: {e}\n{}", k.source));
            assert_eq!(c.cubin.get(..4), Some(&b"\x7fELF"[..]));
            if let Some(dir) = std::env::var_os("KILN_DUMP_CUBINS") {
                std::fs::create_dir_all(&dir).expect("dump dir");
                let path = std::path::Path::new(&dir).join(format!("{}.cubin", k.symbol));
                std::fs::write(path, &c.cubin).expect("dump cubin");
                std::fs::write(
                    std::path::Path::new(&dir).join(format!("{}.cu", k.symbol)),
                    &k.source,
                )
                .expect("dump source");
            }
        }
    }
}
