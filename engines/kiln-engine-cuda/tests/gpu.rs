//! Tests on a CUDA GPU (an H200 for the committed report, docs/benchmarks/). Ignored without
//! one: run with `--ignored` on the GPU machine (scripts/gpu-package.sh).

mod common;

use common::*;
use kiln::{DataType, Device, DeviceTensor, Graph, HeurMode, HostTensor, VariantPack, Workspace};

type Case = (&'static str, Box<dyn Fn() -> Graph>, f64, f64);

fn cases() -> Vec<Case> {
    vec![
        (
            "pointwise f32",
            Box::new(|| pointwise_graph(DataType::F32, 257, 1024)),
            1e-6,
            1e-5,
        ),
        (
            "pointwise f16",
            Box::new(|| pointwise_graph(DataType::F16, 64, 1024)),
            1e-3,
            1e-2,
        ),
        (
            "pointwise bf16",
            Box::new(|| pointwise_graph(DataType::Bf16, 64, 1024)),
            1e-2,
            1e-2,
        ),
        (
            "matmul f32",
            Box::new(|| matmul_graph(DataType::F32, 2, 130, 70, 200, true)),
            1e-4,
            1e-4,
        ),
        (
            "matmul f16 relu",
            Box::new(|| matmul_graph(DataType::F16, 3, 200, 96, 136, true)),
            1e-2,
            1e-2,
        ),
        (
            "matmul bf16",
            Box::new(|| matmul_graph(DataType::Bf16, 1, 256, 256, 256, false)),
            3e-2,
            2e-2,
        ),
        (
            "conv f32 nchw s2",
            Box::new(|| conv_graph(DataType::F32, 2, 3, 15, 15, 8, 3, 1, 2, false, true)),
            1e-4,
            1e-4,
        ),
        (
            "conv f16 nhwc bias relu",
            Box::new(|| conv_graph(DataType::F16, 4, 64, 14, 14, 64, 3, 1, 1, true, true)),
            1e-2,
            1e-2,
        ),
        (
            "conv bf16 nhwc 1x1",
            Box::new(|| conv_graph(DataType::Bf16, 4, 128, 7, 7, 128, 1, 0, 1, true, false)),
            3e-2,
            2e-2,
        ),
        (
            "sdpa f16 d64 gqa causal bias",
            Box::new(|| sdpa_graph(DataType::F16, 2, 8, 2, 300, 333, 64, true, true)),
            1e-2,
            1e-2,
        ),
        (
            "sdpa bf16 d128",
            Box::new(|| sdpa_graph(DataType::Bf16, 2, 4, 4, 257, 190, 128, false, false)),
            3e-2,
            2e-2,
        ),
        (
            "sdpa f16 d256 mqa causal",
            Box::new(|| sdpa_graph(DataType::F16, 1, 4, 1, 100, 150, 256, true, false)),
            1e-2,
            1e-2,
        ),
        // Training batchnorm, channels-last: on sm_90 one cooperative kernel (payload minor 3),
        // with more positions than its blocks keep in shared memory.
        (
            "batchnorm training bf16 nhwc",
            Box::new(|| batchnorm_nhwc_graph(true, DataType::Bf16, [64, 256, 19, 21])),
            3e-2,
            2e-2,
        ),
    ]
}

/// Runs `g` (graph with plan) on `device` and returns y.
fn run_graph(
    g: &Graph,
    h: &kiln::Handle,
    ord: u32,
    ins: &[(kiln::Tensor, HostTensor)],
) -> Vec<f64> {
    let og = g.op_graph().expect("graph");
    let mut dev: Vec<(i64, DeviceTensor)> = ins
        .iter()
        .map(|(t, hst)| {
            (
                t.uid().expect("uid"),
                DeviceTensor::upload(hst, ord).expect("upload"),
            )
        })
        .collect();
    let y = g.tensor_by_name("y").expect("y");
    let y_uid = y.uid().expect("uid");
    let mut dy = DeviceTensor::zeros(og.tensor(y_uid).expect("y"), ord).expect("y memory");
    // Bound tensors neither given nor y (a batchnorm's mean and inv_variance): scratch memory.
    let mut scratch: Vec<(i64, DeviceTensor)> = og
        .bound_tensors()
        .filter(|t| t.uid != y_uid && !dev.iter().any(|(u, _)| *u == t.uid))
        .map(|t| (t.uid, DeviceTensor::zeros(t, ord).expect("scratch memory")))
        .collect();
    let mut ws = Workspace::for_graph(g).expect("ws");
    {
        let mut pack = VariantPack::new();
        for (uid, d) in dev.iter_mut().chain(scratch.iter_mut()) {
            pack.insert_device_uid(*uid, d);
        }
        pack.insert_device(&y, &mut dy);
        g.execute(h, &mut pack, &mut ws).expect("execute");
    }
    dy.download().expect("download").to_f64_vec()
}

/// Runs a plan alone with device tensors.
fn run_plan(
    plan: &kiln::ExecutionPlan,
    og: &kiln_core::OpGraph,
    h: &kiln::Handle,
    ord: u32,
    ins: &[(kiln::Tensor, HostTensor)],
    y_uid: i64,
) -> Vec<f64> {
    let dev: Vec<(i64, DeviceTensor)> = ins
        .iter()
        .map(|(t, hst)| {
            (
                t.uid().expect("uid"),
                DeviceTensor::upload(hst, ord).expect("upload"),
            )
        })
        .collect();
    let dy = DeviceTensor::zeros(og.tensor(y_uid).expect("y"), ord).expect("y memory");
    // Bound tensors neither given nor y (a backward's dk and dv beside dq): scratch memory.
    let scratch: Vec<(i64, DeviceTensor)> = og
        .bound_tensors()
        .filter(|t| t.uid != y_uid && !dev.iter().any(|(u, _)| *u == t.uid))
        .map(|t| (t.uid, DeviceTensor::zeros(t, ord).expect("scratch memory")))
        .collect();
    let mut b: Vec<(i64, *mut std::ffi::c_void)> = dev
        .iter()
        .chain(&scratch)
        .map(|(u, d)| (*u, d.device_ptr() as *mut _))
        .collect();
    b.push((y_uid, dy.device_ptr() as *mut _));
    let ws = (plan.workspace_size() > 0).then(|| {
        kiln_cuda_driver::DeviceMemory::zeroed(ord as i32, plan.workspace_size()).expect("ws")
    });
    let (wp, wl) = match &ws {
        Some(m) => (m.as_ptr() as *mut std::ffi::c_void, m.len()),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: every pointer addresses device memory sized for its tensor's layout on `ord`;
    // the workspace (when the plan has one) holds `plan.workspace_size()` bytes on `ord`.
    unsafe { plan.execute(h, &b, wp, wl) }.expect("execute plan");
    dy.download().expect("download").to_f64_vec()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn build_save_load_resave_execute_on_gpu() {
    for (what, make, atol, rtol) in cases() {
        let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
        let mut g = make();
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: build: {e}"));
        let ins = inputs(&g);
        let want = reference(&make, &ins);
        let got = run_graph(&g, &h, 0, &ins);
        let e = worst(&got, &want, atol, rtol);
        assert!(
            e <= 1.0,
            "{what}: built plan differs from the reference (worst {e})"
        );
        let og = g.op_graph().expect("graph").clone();
        let y_uid = g.tensor_by_name("y").expect("y").uid().expect("uid");
        let container = g.to_binary().expect("save");
        let plan_bytes = g.to_compiled_plan_binary().expect("save plan");
        drop(g);
        drop(h);
        // Graph with plan: fresh handle, nothing compiled, byte-identical re-save, twice.
        let (compiles, _) = kiln_engine_cuda::stats();
        let h1 = handle(Device::Cuda(0)).expect("fresh handle");
        let g1 = Graph::from_binary(Some(&h1), &container)
            .unwrap_or_else(|e| panic!("{what}: load: {e}"));
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{what}: load compiled"
        );
        let again = g1.to_binary().expect("re-save");
        assert_eq!(again, container, "{what}: re-saved container differs");
        assert_eq!(
            g1.to_compiled_plan_binary().expect("plan"),
            plan_bytes,
            "{what}: plan bytes differ"
        );
        let h2 = handle(Device::Cuda(0)).expect("fresh handle");
        let g2 = Graph::from_binary(Some(&h2), &again).expect("load the re-saved bytes");
        assert_eq!(
            g2.to_compiled_plan_binary().expect("plan"),
            plan_bytes,
            "{what}: reloaded plan bytes differ"
        );
        for run in 0..2 {
            let got = run_graph(&g2, &h2, 0, &ins);
            let e = worst(&got, &want, atol, rtol);
            assert!(
                e <= 1.0,
                "{what}: loaded graph run {run} differs (worst {e})"
            );
        }
        // Plan alone.
        let h3 = handle(Device::Cuda(0)).expect("fresh handle");
        let p3 = kiln::from_compiled_plan_binary(&h3, &plan_bytes).expect("load plan");
        let re = kiln::to_compiled_plan_binary(&p3).expect("re-save plan");
        assert_eq!(re, plan_bytes, "{what}: re-saved plan differs");
        let h4 = handle(Device::Cuda(0)).expect("fresh handle");
        let p4 = kiln::from_compiled_plan_binary(&h4, &re).expect("load again");
        for run in 0..2 {
            let got = run_plan(&p4, &og, &h4, 0, &ins, y_uid);
            let e = worst(&got, &want, atol, rtol);
            assert!(
                e <= 1.0,
                "{what}: loaded plan run {run} differs (worst {e})"
            );
        }
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{what}: loading compiled"
        );
        eprintln!("ok: {what} ({} plan bytes)", plan_bytes.len());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn foreign_arch_and_flipped_code_object_are_refused_on_gpu() {
    let h80 = handle(Device::CudaTarget(80)).expect("sm_80 target");
    let mut g = pointwise_graph(DataType::F32, 4, 64);
    g.build(&h80, &[HeurMode::A]).expect("build for sm_80");
    let bytes = g.to_compiled_plan_binary().expect("save");
    let h = handle(Device::Cuda(0)).expect("cuda:0");
    let e = kiln::from_compiled_plan_binary(&h, &bytes).expect_err("an sm_80 plan on sm_90");
    let m = e.to_string();
    assert!(
        m.contains("NOT_APPLICABLE") && m.contains("sm_80") && m.contains("sm_90"),
        "{m}"
    );
    // A flipped byte: refused on load (by the envelope checksum or the payload digests).
    let mut g = pointwise_graph(DataType::F32, 4, 64);
    g.build(&h, &[HeurMode::A]).expect("build");
    let mut bytes = g.to_compiled_plan_binary().expect("save");
    let at = bytes.len() - 200;
    bytes[at] ^= 0x10;
    assert!(
        kiln::from_compiled_plan_binary(&h, &bytes).is_err(),
        "a flipped byte must be refused"
    );
}

/// The second device of the two-GPU tests (names starting `two_gpus_`): cuda:1, or the ordinal in
/// `KILN_SECOND_GPU`. Naming 0 there runs their code on one GPU as a dry run, which proves the
/// test, not the cross-device load: a report of such a run must say so.
fn second_gpu() -> u32 {
    std::env::var("KILN_SECOND_GPU")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// A handle on the second device of the two-GPU tests. They run only where two GPUs are
/// (scripts/gpu-package.sh checks): with fewer this fails, so they never pass without running.
fn second_handle() -> (u32, kiln::Handle) {
    let ord = second_gpu();
    let h = handle(Device::Cuda(ord)).unwrap_or_else(|e| {
        panic!("this test needs two CUDA GPUs, and cuda:{ord} cannot be used here: {e}")
    });
    (ord, h)
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_plan_built_on_device_0_runs_on_device_1() {
    let h0 = handle(Device::Cuda(0)).expect("cuda:0");
    let (second, h1) = second_handle();
    let make = || conv_graph(DataType::F16, 2, 32, 14, 14, 32, 3, 1, 1, true, true);
    let mut g = make();
    g.build(&h0, &[HeurMode::A]).expect("build on 0");
    let ins = inputs(&g);
    let want = reference(&make, &ins);
    let bytes = g.to_binary().expect("save");
    let g1 = Graph::from_binary(Some(&h1), &bytes).expect("load on 1");
    let got = run_graph(&g1, &h1, second, &ins);
    assert!(worst(&got, &want, 1e-2, 1e-2) <= 1.0);
    eprintln!("ok: plan from cuda:0 ran on cuda:{second}");
}

/// Issue 15: each plan is built on cuda:0 and saved; its bytes are loaded on a handle of each
/// device, and two threads execute the two loaded plans at once (released together by a barrier,
/// several executes each), every result checked against the reference. The cases are the kernels
/// that bind to their device at load: the Hopper GEMM, convolution and its gradients (TMA tensor
/// maps, persistent grids sized from the device), attention, and the cooperative batchnorm
/// (its grid capped by the load device's multiprocessors).
#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_one_plan_executes_on_two_devices_at_once() {
    const ROUNDS: usize = 8;
    let h0 = handle(Device::Cuda(0)).expect("cuda:0");
    let (second, h1) = second_handle();
    drop(h1);
    let grad = GradShape {
        n: 2,
        c: 64,
        h: 15,
        w: 13,
        k: 72,
        r: 3,
        pad: 1,
        stride: 1,
        dil: 1,
    };
    // From the single-GPU cases: the Hopper convolution, the FA2-style attention (a bias) and
    // the cooperative batchnorm; then the GEMM, the gradients and FA3 (no bias).
    let mut cases: Vec<Case> = cases()
        .into_iter()
        .filter(|(what, ..)| {
            [
                "conv f16 nhwc bias relu",
                "sdpa f16 d64 gqa causal bias",
                "batchnorm training bf16 nhwc",
            ]
            .contains(what)
        })
        .collect();
    assert_eq!(cases.len(), 3, "a case was renamed in cases()");
    cases.push((
        "matmul bf16 relu",
        Box::new(|| matmul_graph(DataType::Bf16, 2, 300, 136, 200, true)),
        3e-2,
        2e-2,
    ));
    for dgrad in [true, false] {
        cases.push((
            if dgrad {
                "conv dgrad bf16 nhwc"
            } else {
                "conv wgrad bf16 nhwc"
            },
            Box::new(move || conv_grad_graph(dgrad, DataType::Bf16, grad, true, false)),
            3e-2,
            2e-2,
        ));
    }
    cases.push((
        "sdpa f16 d64 gqa causal",
        Box::new(|| sdpa_graph(DataType::F16, 2, 8, 2, 300, 333, 64, true, false)),
        1e-2,
        1e-2,
    ));
    for (what, make, atol, rtol) in cases {
        let mut g = make();
        g.build(&h0, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: build on cuda:0: {e}"));
        let engine = g.plan().expect("plan").engine_name().to_string();
        let ins = inputs(&g);
        let want = reference(&make, &ins);
        let bytes = g.to_binary().expect("save");
        drop(g);
        let start = std::sync::Barrier::new(2);
        let results: Vec<(u32, Vec<Vec<f64>>)> = std::thread::scope(|s| {
            let workers: Vec<_> = [0, second]
                .into_iter()
                .map(|ord| {
                    let (bytes, start) = (&bytes, &start);
                    s.spawn(move || {
                        let ready = std::panic::catch_unwind(|| {
                            let h = handle(Device::Cuda(ord))
                                .unwrap_or_else(|e| panic!("{what}: cuda:{ord}: {e}"));
                            let g = Graph::from_binary(Some(&h), bytes)
                                .unwrap_or_else(|e| panic!("{what}: load on cuda:{ord}: {e}"));
                            // The same values as the reference's (seeded by uid), in this graph.
                            let mine = inputs(&g);
                            (h, g, mine)
                        });
                        // Both threads reach the barrier, so a failed load cannot hang the other.
                        start.wait();
                        let (h, g, mine) = ready.unwrap_or_else(|p| std::panic::resume_unwind(p));
                        let got = (0..ROUNDS).map(|_| run_graph(&g, &h, ord, &mine)).collect();
                        (ord, got)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("worker thread"))
                .collect()
        });
        for (ord, runs) in results {
            for (i, got) in runs.iter().enumerate() {
                let e = worst(got, &want, atol, rtol);
                assert!(
                    e <= 1.0,
                    "{what} ({engine}): execute {i} on cuda:{ord} differs from the reference (worst {e})"
                );
            }
        }
        eprintln!(
            "ok: {what} ({engine}) built on cuda:0, executed {ROUNDS} times on cuda:0 and cuda:{second} at once"
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_code_object_the_driver_refuses_fails_the_load() {
    use kiln_engine_cuda::payload;
    use kiln_plugin_sdk::EnginePlugin;
    // Load check 12: the digests are right, the bytes are not a cubin.
    let mut junk = b"\x7fELF".to_vec();
    junk.resize(512, 0xa5);
    let p = payload::Payload {
        engine_name: kiln_engine_cuda::POINTWISE_V1.into(),
        provider_version: "test".into(),
        nvrtc_version: (13, 0),
        workspace: 0,
        tensors: Vec::new(),
        code_objects: vec![payload::CodeObject::new(90, junk, Vec::new())],
        launches: vec![payload::Launch {
            code_object: 0,
            symbol: "kiln_nothing".into(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            args: Vec::new(),
            tensor_maps: Vec::new(),
            persistent: false,
            cooperative: false,
        }],
    };
    let bytes = payload::encode(&p);
    let plugin = kiln_engine_cuda::CudaPlugin::create(kiln_plugin_sdk::Device::Cuda(0))
        .unwrap_or_else(|e| panic!("cuda:0 instance: {}", e.message));
    let id = kiln_core::engine_id(kiln_engine_cuda::POINTWISE_V1);
    let e = plugin
        .restore_context(id, &bytes)
        .err()
        .expect("the driver must refuse the junk code object");
    assert_eq!(
        e.status,
        kiln_plugin_sdk::KilnPluginStatus::NOT_APPLICABLE,
        "{}",
        e.message
    );
    assert!(e.message.contains("driver refused"), "{}", e.message);
    eprintln!("ok: {}", e.message);
}

/// The committed sm_90 plans (built deviceless by earlier providers) load on the GPU and compute
/// the stored reference outputs from the stored inputs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn committed_sm90_plans_compute_their_stored_outputs_on_gpu() {
    for (stem, make, atol, rtol) in plan_fixtures::cases() {
        let (file, io) = plan_fixtures::load(stem, make);
        let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
        let g = Graph::deserialize(Some(&h), &file).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let og = g.op_graph().expect("graph");
        let mut ins = Vec::new();
        for t in g.tensors() {
            let Some(uid) = t.uid() else { continue };
            if io["inputs"].get(uid.to_string()).is_none() {
                continue;
            }
            let mut hst = HostTensor::zeros(og.tensor(uid).expect("tensor")).expect("memory");
            hst.fill_from_f64(&plan_fixtures::values(&io, &uid.to_string()))
                .expect("fill");
            ins.push((t.clone(), hst));
        }
        let y = g.tensor_by_name("y").and_then(|t| t.uid()).expect("y");
        let got = run_plan(g.plan().expect("plan"), og, &h, 0, &ins, y);
        let want = plan_fixtures::values(&io, "y");
        let w = worst(&got, &want, atol, rtol);
        assert!(w <= 1.0, "{stem}: worst error ratio {w}");
    }
}

/// A matmul whose batch dims broadcast: a [2, 1, m, k] and b [1, 3, k, n] give y [2, 3, m, n].
fn matmul_broadcast(dt: DataType, m: i64, k: i64, n: i64) -> Graph {
    use kiln::{MatmulAttributes, TensorAttributes};
    let mut g = Graph::new();
    g.set_name("matmul_broadcast");
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[2, 1, m, k])
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[1, 3, k, n])
            .data_type(dt),
    );
    let y = g.matmul(&a, &b, MatmulAttributes::new());
    y.set_name("y").set_output(true).set_data_type(dt);
    g
}

/// `y = act(a @ b + bias)` with a stored M-major (a transposed by strides) when `a_t`, b
/// K-major when `b_t`, bias broadcast along M, f32 accumulate and `out` as y's type.
#[allow(clippy::too_many_arguments)]
fn matmul_epilogue(
    dt: DataType,
    out: DataType,
    m: i64,
    k: i64,
    n: i64,
    a_t: bool,
    b_t: bool,
    act: kiln::PointwiseMode,
) -> Graph {
    use kiln::{MatmulAttributes, PointwiseAttributes, PointwiseMode, TensorAttributes};
    let mut g = Graph::new();
    g.set_name("matmul_epilogue");
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[1, m, k])
            .stride(&if a_t { [m * k, 1, m] } else { [m * k, k, 1] })
            .data_type(dt),
    );
    let b = g.tensor(
        TensorAttributes::new()
            .name("b")
            .dim(&[1, k, n])
            .stride(&if b_t { [k * n, 1, k] } else { [k * n, n, 1] })
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
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(act));
    y.set_name("y").set_output(true).set_data_type(out);
    g
}

/// Runs `g` with y poisoned (NaN) first, so an element the kernel never writes fails the check.
fn run_poisoned(g: &Graph, h: &kiln::Handle, ins: &[(kiln::Tensor, HostTensor)]) -> Vec<f64> {
    let og = g.op_graph().expect("graph");
    let mut dev: Vec<(i64, DeviceTensor)> = ins
        .iter()
        .map(|(t, hst)| {
            (
                t.uid().expect("uid"),
                DeviceTensor::upload(hst, 0).expect("upload"),
            )
        })
        .collect();
    let y = g.tensor_by_name("y").expect("y");
    let yd = og.tensor(y.uid().expect("uid")).expect("y");
    let mut poison = HostTensor::for_tensor(&y).expect("host y");
    let count = yd.dims.iter().product::<i64>().max(1) as usize;
    let span = poison.to_f64_vec().len().max(count);
    poison.fill_from_f64(&vec![f64::NAN; span]).expect("poison");
    let mut dy = DeviceTensor::upload(&poison, 0).expect("y memory");
    let mut ws = Workspace::for_graph(g).expect("ws");
    {
        let mut pack = VariantPack::new();
        for (uid, d) in dev.iter_mut() {
            pack.insert_device_uid(*uid, d);
        }
        pack.insert_device(&y, &mut dy);
        g.execute(h, &mut pack, &mut ws).expect("execute");
    }
    dy.download().expect("download").to_f64_vec()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_engines_match_the_reference_on_odd_shapes_layouts_and_epilogues() {
    use kiln::PointwiseMode as P;
    use kiln_engine_cuda::{CONV_FPROP_V2, MATMUL_V2};
    let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
    if kiln_cuda_driver::DeviceContext::new(0).map(|d| d.arch) != Ok(90) {
        eprintln!("skipped: the V2 engines run on compute capability 9.0 only");
        return;
    }
    type V2Case = (&'static str, &'static str, Box<dyn Fn() -> Graph>, f64);
    let cases: Vec<V2Case> = vec![
        (
            "mm bf16 batched relu",
            MATMUL_V2,
            Box::new(|| matmul_graph(DataType::Bf16, 2, 333, 200, 520, true)),
            3e-2,
        ),
        (
            "mm f16 broadcast batch",
            MATMUL_V2,
            Box::new(|| matmul_broadcast(DataType::F16, 130, 72, 264)),
            1e-2,
        ),
        (
            "mm f16 a^T b^T bias relu",
            MATMUL_V2,
            Box::new(|| {
                matmul_epilogue(
                    DataType::F16,
                    DataType::F16,
                    304,
                    136,
                    264,
                    true,
                    true,
                    P::Relu,
                )
            }),
            1e-2,
        ),
        (
            "mm bf16 a^T odd K gelu f32 out",
            MATMUL_V2,
            Box::new(|| {
                matmul_epilogue(
                    DataType::Bf16,
                    DataType::F32,
                    200,
                    77,
                    136,
                    true,
                    false,
                    P::Gelu,
                )
            }),
            3e-2,
        ),
        (
            "mm bf16 b^T silu",
            MATMUL_V2,
            Box::new(|| {
                matmul_epilogue(
                    DataType::Bf16,
                    DataType::Bf16,
                    1000,
                    512,
                    1000,
                    false,
                    true,
                    P::Swish,
                )
            }),
            3e-2,
        ),
        (
            "mm f16 small N tanh",
            MATMUL_V2,
            Box::new(|| {
                matmul_epilogue(
                    DataType::F16,
                    DataType::F16,
                    777,
                    64,
                    40,
                    false,
                    false,
                    P::Tanh,
                )
            }),
            1e-2,
        ),
        (
            "conv f16 3x3 bias relu",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::F16, 4, 64, 14, 14, 64, 3, 1, 1, true, true)),
            1e-2,
        ),
        (
            "conv bf16 3x3 s2 K256",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::Bf16, 2, 32, 15, 15, 256, 3, 1, 2, true, false)),
            3e-2,
        ),
        (
            "conv f16 1x1 K128",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::F16, 4, 128, 7, 7, 128, 1, 0, 1, true, false)),
            1e-2,
        ),
        (
            "conv bf16 3x3 C8 K72",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::Bf16, 3, 8, 11, 13, 72, 3, 1, 1, true, true)),
            3e-2,
        ),
        // More tiles than two per block on 132 SMs with the ping-pong tiles, so that both
        // consumers take several tiles (the ring skips, the named-barrier hand-over): K of 3
        // slices, fewer than the stages, and N not a multiple of any tile.
        (
            "mm bf16 many tiles per block gelu",
            MATMUL_V2,
            Box::new(|| {
                matmul_epilogue(
                    DataType::Bf16,
                    DataType::Bf16,
                    4200,
                    136,
                    1096,
                    false,
                    false,
                    P::Gelu,
                )
            }),
            3e-2,
        ),
        // 9 K slices, more than most configurations' stages.
        (
            "conv f16 3x3 C64 K72 many tiles bias relu",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::F16, 16, 64, 40, 40, 72, 3, 1, 1, true, true)),
            1e-2,
        ),
        // B resident (one column tile, K = 360: 6 slices, the last partial) over about three
        // tiles per block, so that later tiles reuse the B loaded for the first.
        (
            "conv bf16 3x3 C40 K56 many tiles resident B",
            CONV_FPROP_V2,
            Box::new(|| conv_graph(DataType::Bf16, 32, 40, 41, 43, 56, 3, 1, 1, true, true)),
            3e-2,
        ),
    ];
    let tiles = kiln_engine_cuda::codegen::hopper::KNOB_MAX;
    let in_ring = kiln_engine_cuda::codegen::hopper::CONFIGS.len() as i64;
    let mut resident_runs = 0;
    // KILN_HOPPER_CASES=text runs only the cases whose name contains it (short GPU calls).
    let only = std::env::var("KILN_HOPPER_CASES").unwrap_or_default();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (what, engine, make, tol) in &cases {
        if !what.contains(only.as_str()) {
            continue;
        }
        ran += 1;
        let mut g = make();
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: build: {e}"));
        let chosen = g.plan().expect("plan").engine_name().to_string();
        assert_eq!(&chosen, engine, "{what}: the heuristics chose {chosen}");
        let ins = inputs(&g);
        let want = reference(make.as_ref(), &ins);
        // Every tile configuration, then the heuristic's choice saved and loaded.
        for tile in 0..=tiles {
            let mut gt = make();
            gt.validate().expect("valid");
            gt.build_operation_graph(&h).expect("lower");
            gt.create_execution_plans(&[HeurMode::A])
                .expect("heuristics");
            gt.set_knob(engine, kiln_engine_cuda::KNOB_TILE, tile);
            gt.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                .unwrap_or_else(|e| panic!("{what} tile {tile}: {e}"));
            let built = gt.plan().expect("plan").engine_name().to_string();
            if &built != engine {
                // A value with B resident where it cannot be: the V2 engine refuses it (and
                // the heuristics fall back), nothing else.
                assert!(tile > in_ring, "{what} tile {tile}: built by {built}");
                eprintln!("{what} tile {tile}: B cannot stay resident, built by {built}");
                continue;
            }
            resident_runs += usize::from(tile > in_ring);
            let got = run_poisoned(&gt, &h, &ins);
            let e = worst(&got, &want, *tol, *tol);
            eprintln!("{what} tile {tile}: worst {e:.3}");
            if e.is_nan() || e > 1.0 {
                failures.push(format!("{what} tile {tile}: worst {e}"));
            }
        }
        let saved = g.to_binary().expect("save");
        let h2 = handle(Device::Cuda(0)).expect("fresh handle");
        let g2 = Graph::from_binary(Some(&h2), &saved).expect("load");
        assert_eq!(
            g2.to_binary().expect("re-save"),
            saved,
            "{what}: re-save differs"
        );
        for run in 0..2 {
            let got = run_poisoned(&g2, &h2, &ins);
            let e = worst(&got, &want, *tol, *tol);
            if e.is_nan() || e > 1.0 {
                failures.push(format!("{what}: loaded run {run}: worst {e}"));
            }
        }
    }
    assert!(ran > 0, "no case matches KILN_HOPPER_CASES={only}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        !only.is_empty() || resident_runs > 0,
        "no configuration with B resident ran"
    );
}

/// One graph of the Hopper attention forward's GPU test.
struct Fa3Case {
    what: &'static str,
    dt: DataType,
    /// batch, query heads, key/value heads, query length, key length, head dim
    shape: (i64, i64, i64, i64, i64, i64),
    /// B,S,H,D storage for q, k, v and o (else B,H,S,D)
    bshd: bool,
    /// (bottom-right alignment, left bound, right bound)
    mask: (bool, Option<i64>, Option<i64>),
    /// per-batch lengths (seq_len_q, seq_len_kv), bound as tensors
    lens: Option<(Vec<f64>, Vec<f64>)>,
    stats: bool,
    scale_tensor: bool,
}

impl Fa3Case {
    fn graph(&self) -> Graph {
        use kiln::{DiagonalAlignment, SdpaAttributes, TensorAttributes};
        let (b, hq, hkv, sq, skv, d) = self.shape;
        let mut g = Graph::new();
        let t = |g: &mut Graph, name: &str, h: i64, s: i64, dt: DataType| {
            let strides = if self.bshd {
                [s * h * d, d, h * d, 1]
            } else {
                [h * s * d, s * d, d, 1]
            };
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(&[b, h, s, d])
                    .stride(&strides)
                    .data_type(dt),
            )
        };
        let q = t(&mut g, "q", hq, sq, self.dt);
        let k = t(&mut g, "k", hkv, skv, self.dt);
        let v = t(&mut g, "v", hkv, skv, self.dt);
        let f32 = |g: &mut Graph, name: &str, dims: &[i64]| {
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(dims)
                    .data_type(DataType::F32),
            )
        };
        let mut attrs = SdpaAttributes::new().generate_stats(self.stats);
        attrs = if self.scale_tensor {
            attrs.attn_scale_tensor(&f32(&mut g, "scale", &[1, 1, 1, 1]))
        } else {
            attrs.attn_scale(1.0 / (d as f64).sqrt())
        };
        let (br, left, right) = self.mask;
        attrs = attrs.diagonal_alignment(if br {
            DiagonalAlignment::BottomRight
        } else {
            DiagonalAlignment::TopLeft
        });
        if let Some(l) = left {
            attrs = attrs.diagonal_band_left_bound(l);
        }
        if let Some(r) = right {
            attrs = attrs.diagonal_band_right_bound(r);
        }
        if self.lens.is_some() {
            attrs = attrs
                .seq_len_q(&f32(&mut g, "seq_len_q", &[b, 1, 1, 1]))
                .seq_len_kv(&f32(&mut g, "seq_len_kv", &[b, 1, 1, 1]));
        }
        let out = g.sdpa(&q, &k, &v, attrs).expect("sdpa");
        out.o.set_name("y").set_output(true).set_data_type(self.dt);
        if let Some(s) = out.stats {
            s.set_name("stats").set_output(true);
        }
        g
    }

    /// Random q, k, v; the scale tensor 1/sqrt(d); the lengths as given.
    fn inputs(&self, g: &Graph) -> Vec<(kiln::Tensor, HostTensor)> {
        let mut ins = inputs(g);
        for (t, hst) in ins.iter_mut() {
            let name = t.name();
            let values = match (name.as_str(), &self.lens) {
                ("scale", _) => vec![1.0 / (self.shape.5 as f64).sqrt()],
                ("seq_len_q", Some((lq, _))) => lq.clone(),
                ("seq_len_kv", Some((_, lkv))) => lkv.clone(),
                _ => continue,
            };
            hst.fill_from_f64(&values).expect("fill");
        }
        ins
    }
}

/// Runs `g` (validated, with a plan for `h`) and returns the named outputs; on a GPU (`ord`)
/// the outputs are poisoned with NaN first, so that an element never written fails the check.
fn run_outputs(
    g: &Graph,
    h: &kiln::Handle,
    ord: Option<u32>,
    ins: &[(kiln::Tensor, HostTensor)],
    outs: &[&str],
) -> Vec<Vec<f64>> {
    let og = g.op_graph().expect("graph");
    let out_tensors: Vec<kiln::Tensor> = outs
        .iter()
        .map(|n| g.tensor_by_name(n).expect("output"))
        .collect();
    let mut poisoned: Vec<HostTensor> = out_tensors
        .iter()
        .map(|t| {
            let mut hst = HostTensor::for_tensor(t).expect("host memory");
            let d = og.tensor(t.uid().expect("uid")).expect("desc");
            let count = d.dims.iter().product::<i64>().max(1) as usize;
            hst.fill_from_f64(&vec![f64::NAN; count]).expect("poison");
            hst
        })
        .collect();
    let mut ws = Workspace::for_graph(g).expect("ws");
    match ord {
        Some(ord) => {
            let mut dev_in: Vec<(i64, DeviceTensor)> = ins
                .iter()
                .map(|(t, hst)| {
                    (
                        t.uid().expect("uid"),
                        DeviceTensor::upload(hst, ord).expect("upload"),
                    )
                })
                .collect();
            let mut dev_out: Vec<DeviceTensor> = poisoned
                .iter()
                .map(|p| DeviceTensor::upload(p, ord).expect("upload"))
                .collect();
            {
                let mut pack = VariantPack::new();
                for (uid, d) in dev_in.iter_mut() {
                    pack.insert_device_uid(*uid, d);
                }
                for (t, d) in out_tensors.iter().zip(dev_out.iter_mut()) {
                    pack.insert_device(t, d);
                }
                g.execute(h, &mut pack, &mut ws).expect("execute");
            }
            dev_out
                .iter()
                .map(|d| d.download().expect("download").to_f64_vec())
                .collect()
        }
        None => {
            let mut host_in: Vec<(i64, HostTensor)> = ins
                .iter()
                .map(|(t, hst)| (t.uid().expect("uid"), hst.clone()))
                .collect();
            {
                let mut pack = VariantPack::new();
                for (uid, hst) in host_in.iter_mut() {
                    pack.insert_uid(*uid, hst);
                }
                for (t, hst) in out_tensors.iter().zip(poisoned.iter_mut()) {
                    pack.insert(t, hst);
                }
                g.execute(h, &mut pack, &mut ws).expect("execute");
            }
            poisoned.iter().map(|p| p.to_f64_vec()).collect()
        }
    }
}

/// The Hopper attention forward (KILN_CUDA_SDPA_FA3_V1) against the CPU reference: odd lengths
/// (no multiples of its 128-row and 64/128-key tiles), every head dim, both types, both
/// layouts, GQA and MQA, causal top-left and bottom-right, sliding windows, padding lengths
/// (with a batch of length 0 and one past the dims), the scale as a tensor, stats; outputs
/// poisoned. Each plan is also saved, loaded on a fresh handle, re-saved byte-identically and
/// run again, giving the same bits.
#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_attention_forward_matches_the_reference() {
    use kiln_engine_cuda::SDPA_FA3_V1;
    let arch = kiln_cuda_driver::DeviceContext::new(0).map(|d| d.arch);
    assert_eq!(
        arch,
        Ok(90),
        "this test needs a GPU of compute capability 9.0 (the engine is sm_90a only)"
    );
    let none = (false, None, None);
    let causal = (false, None, Some(0));
    let causal_br = (true, None, Some(0));
    let cases = vec![
        Fa3Case {
            what: "bf16 d128 bshd causal gqa stats",
            dt: DataType::Bf16,
            shape: (2, 8, 2, 333, 333, 128),
            bshd: true,
            mask: causal,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "f16 d64 bhsd non-causal odd lengths",
            dt: DataType::F16,
            shape: (2, 4, 4, 257, 190, 64),
            bshd: false,
            mask: none,
            lens: None,
            stats: true,
            scale_tensor: true,
        },
        Fa3Case {
            what: "bf16 d64 bshd bottom-right causal, sq < skv",
            dt: DataType::Bf16,
            shape: (1, 4, 2, 130, 515, 64),
            bshd: true,
            mask: causal_br,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "f16 d128 bhsd bottom-right causal, sq > skv (rows with no key)",
            dt: DataType::F16,
            shape: (1, 2, 1, 400, 150, 128),
            bshd: false,
            mask: causal_br,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "bf16 d128 bshd padding lengths causal",
            dt: DataType::Bf16,
            shape: (3, 4, 2, 300, 420, 128),
            bshd: true,
            mask: causal,
            lens: Some((vec![300.0, 0.0, 177.0], vec![131.0, 50.0, 1e9])),
            stats: true,
            scale_tensor: true,
        },
        Fa3Case {
            what: "f16 d64 bshd padding lengths non-causal mqa",
            dt: DataType::F16,
            shape: (2, 4, 1, 200, 333, 64),
            bshd: true,
            mask: none,
            lens: Some((vec![199.0, 61.0], vec![129.0, 1.0])),
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "bf16 d64 bhsd sliding window 100 bottom-right",
            dt: DataType::Bf16,
            shape: (1, 4, 4, 600, 700, 64),
            bshd: false,
            mask: (true, Some(100), Some(0)),
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "f16 d128 bshd band (left 40, right 7) top-left",
            dt: DataType::F16,
            shape: (1, 2, 2, 300, 300, 128),
            bshd: true,
            mask: (false, Some(40), Some(7)),
            lens: None,
            stats: false,
            scale_tensor: false,
        },
        Fa3Case {
            what: "bf16 d256 bshd causal mqa",
            dt: DataType::Bf16,
            shape: (1, 4, 1, 200, 150, 256),
            bshd: true,
            mask: causal,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "f16 d256 bhsd non-causal",
            dt: DataType::F16,
            shape: (2, 2, 2, 65, 257, 256),
            bshd: false,
            mask: none,
            lens: None,
            stats: false,
            scale_tensor: false,
        },
        // More blocks than SMs (18 query blocks x 8 heads = 144 > 132): the persistent
        // variant's CTAs run two blocks each, the ring and Q carried from one to the next;
        // causal, so the longest-first order hands them out.
        Fa3Case {
            what: "bf16 d64 bshd causal, more blocks than SMs",
            dt: DataType::Bf16,
            shape: (1, 8, 8, 2304, 2304, 64),
            bshd: true,
            mask: causal,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
        Fa3Case {
            what: "bf16 d64 one row, one key",
            dt: DataType::Bf16,
            shape: (1, 1, 1, 1, 1, 64),
            bshd: true,
            mask: none,
            lens: None,
            stats: true,
            scale_tensor: false,
        },
    ];
    let cpu = handle(Device::Cpu).expect("cpu handle");
    for c in &cases {
        let what = c.what;
        let outs: Vec<&str> = if c.stats {
            vec!["y", "stats"]
        } else {
            vec!["y"]
        };
        let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
        let mut g = c.graph();
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: build: {e}"));
        assert_eq!(
            g.plan().expect("plan").engine_name(),
            SDPA_FA3_V1,
            "{what}: the heuristics' first choice"
        );
        let ins = c.inputs(&g);
        let mut r = c.graph();
        r.build(&cpu, &[HeurMode::Fallback])
            .unwrap_or_else(|e| panic!("{what}: reference build: {e}"));
        let want = run_outputs(&r, &cpu, None, &ins, &outs);
        let got = run_outputs(&g, &h, Some(0), &ins, &outs);
        let (_, _, _, _, skv, d) = c.shape;
        // bf16/f16 inputs, P rounded to the input type before P V (as FlashAttention does).
        let eps = if c.dt == DataType::Bf16 {
            1.0 / 128.0
        } else {
            1.0 / 1024.0
        };
        let atol = eps * (2.0 + 2.0 * ((skv + d) as f64).sqrt() / 8.0);
        for (i, name) in outs.iter().enumerate() {
            let (a, rt) = if *name == "stats" {
                (1e-3, 1e-3)
            } else {
                (atol, 2.0 * eps)
            };
            let w = worst(&got[i], &want[i], a, rt);
            assert!(
                w <= 1.0,
                "{what}: {name} differs from the reference (worst ratio {w})"
            );
        }
        // The three-consumer variants (192-row blocks at d = 64), the persistent ones and those
        // that store O by the copy engine, at the same tolerance.
        for (v, variant) in kiln_engine_cuda::codegen::sdpa_fa3::VARIANTS
            .iter()
            .enumerate()
        {
            if !(variant.persistent || variant.store_o || variant.three_consumers && d == 64) {
                continue;
            }
            let tile = v as i64 + 1;
            let mut gt = c.graph();
            gt.validate().expect("valid");
            gt.build_operation_graph(&h).expect("lower");
            gt.create_execution_plans(&[HeurMode::A])
                .expect("heuristics");
            gt.set_knob(SDPA_FA3_V1, kiln_engine_cuda::KNOB_TILE, tile);
            gt.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                .unwrap_or_else(|e| panic!("{what} tile {tile}: {e}"));
            let got_t = run_outputs(&gt, &h, Some(0), &ins, &outs);
            for (i, name) in outs.iter().enumerate() {
                let (a, rt) = if *name == "stats" {
                    (1e-3, 1e-3)
                } else {
                    (atol, 2.0 * eps)
                };
                let w = worst(&got_t[i], &want[i], a, rt);
                assert!(
                    w <= 1.0,
                    "{what} tile {tile}: {name} differs from the reference (worst ratio {w})"
                );
            }
        }
        // Save, load on a fresh handle (no compile), re-save identically, run: the same bits.
        let bytes = g.to_binary().expect("save");
        let (compiles, _) = kiln_engine_cuda::stats();
        let h2 = handle(Device::Cuda(0)).expect("fresh handle");
        let g2 = Graph::from_binary(Some(&h2), &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{what}: load compiled"
        );
        assert_eq!(g2.to_binary().expect("re-save"), bytes, "{what}: re-save");
        let again = run_outputs(&g2, &h2, Some(0), &ins, &outs);
        for (i, name) in outs.iter().enumerate() {
            let same = again[i]
                .iter()
                .zip(&got[i])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{what}: the loaded plan's {name} differs from the built plan's"
            );
        }
        eprintln!("ok: {what}");
    }
}

impl Fa3Case {
    /// The backward of this case's attention: inputs q, k, v, o, do, stats (and the scale
    /// and lengths as the forward has them), outputs dq (named y), dk, dv, in q's layout.
    fn backward_graph(&self) -> Graph {
        use kiln::{DiagonalAlignment, SdpaBackwardAttributes, TensorAttributes};
        let (b, hq, hkv, sq, skv, d) = self.shape;
        let mut g = Graph::new();
        let t = |g: &mut Graph, name: &str, h: i64, s: i64| {
            let strides = if self.bshd {
                [s * h * d, d, h * d, 1]
            } else {
                [h * s * d, s * d, d, 1]
            };
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(&[b, h, s, d])
                    .stride(&strides)
                    .data_type(self.dt),
            )
        };
        let q = t(&mut g, "q", hq, sq);
        let k = t(&mut g, "k", hkv, skv);
        let v = t(&mut g, "v", hkv, skv);
        let o = t(&mut g, "o", hq, sq);
        let d_o = t(&mut g, "do", hq, sq);
        let f32 = |g: &mut Graph, name: &str, dims: &[i64]| {
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(dims)
                    .data_type(DataType::F32),
            )
        };
        let stats = f32(&mut g, "stats", &[b, hq, sq, 1]);
        let mut attrs = SdpaBackwardAttributes::new();
        attrs = if self.scale_tensor {
            attrs.attn_scale_tensor(&f32(&mut g, "scale", &[1, 1, 1, 1]))
        } else {
            attrs.attn_scale(1.0 / (d as f64).sqrt())
        };
        let (br, left, right) = self.mask;
        attrs = attrs.diagonal_alignment(if br {
            DiagonalAlignment::BottomRight
        } else {
            DiagonalAlignment::TopLeft
        });
        if let Some(l) = left {
            attrs = attrs.diagonal_band_left_bound(l);
        }
        if let Some(r) = right {
            attrs = attrs.diagonal_band_right_bound(r);
        }
        if self.lens.is_some() {
            attrs = attrs
                .seq_len_q(&f32(&mut g, "seq_len_q", &[b, 1, 1, 1]))
                .seq_len_kv(&f32(&mut g, "seq_len_kv", &[b, 1, 1, 1]));
        }
        let out = g
            .sdpa_backward(&q, &k, &v, &o, &d_o, &stats, attrs)
            .expect("sdpa_backward");
        out.dq.set_name("y").set_output(true);
        out.dk.set_name("dk").set_output(true);
        out.dv.set_name("dv").set_output(true);
        g
    }
}

/// The Hopper attention backward (KILN_CUDA_SDPA_FA3_BACKWARD_V1) against the CPU reference:
/// o and stats from the reference forward of random q, k, v, a random do; lengths that are no
/// multiples of its 64-row and 128-key tiles, both head dims, both types, both layouts, GQA
/// and MQA, causal top-left and bottom-right (rows with no key), sliding windows and a band,
/// padding lengths (a batch of length 0, one past the dims), the scale as a tensor; outputs
/// poisoned. Each plan is also saved, loaded on a fresh handle without compiling, re-saved
/// byte-identically and run again: dk and dv give the same bits (dq's f32 reductions run in
/// no fixed order, so it is compared with the reference again).
#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_attention_backward_matches_the_reference() {
    use kiln_engine_cuda::SDPA_FA3_BWD_V1;
    let arch = kiln_cuda_driver::DeviceContext::new(0).map(|d| d.arch);
    assert_eq!(arch, Ok(90), "this test needs compute capability 9.0");
    let none = (false, None, None);
    let causal = (false, None, Some(0));
    let causal_br = (true, None, Some(0));
    let case = |what, dt, shape, bshd, mask, lens, scale_tensor| Fa3Case {
        what,
        dt,
        shape,
        bshd,
        mask,
        lens,
        stats: true,
        scale_tensor,
    };
    let cases = vec![
        case(
            "bf16 d128 bshd causal gqa",
            DataType::Bf16,
            (2, 8, 2, 333, 333, 128),
            true,
            causal,
            None,
            false,
        ),
        case(
            "f16 d64 bhsd non-causal odd lengths",
            DataType::F16,
            (2, 4, 4, 257, 190, 64),
            false,
            none,
            None,
            true,
        ),
        case(
            "bf16 d64 bshd bottom-right causal, sq < skv",
            DataType::Bf16,
            (1, 4, 2, 130, 515, 64),
            true,
            causal_br,
            None,
            false,
        ),
        case(
            "f16 d128 bhsd bottom-right causal, sq > skv (rows with no key)",
            DataType::F16,
            (1, 2, 1, 400, 150, 128),
            false,
            causal_br,
            None,
            false,
        ),
        case(
            "bf16 d128 bshd padding lengths causal",
            DataType::Bf16,
            (3, 4, 2, 300, 420, 128),
            true,
            causal,
            Some((vec![300.0, 0.0, 177.0], vec![131.0, 50.0, 1e9])),
            true,
        ),
        case(
            "f16 d64 bshd padding lengths non-causal mqa",
            DataType::F16,
            (2, 4, 1, 200, 333, 64),
            true,
            none,
            Some((vec![199.0, 61.0], vec![129.0, 1.0])),
            false,
        ),
        case(
            "bf16 d64 bhsd sliding window 100 bottom-right",
            DataType::Bf16,
            (1, 4, 4, 600, 700, 64),
            false,
            (true, Some(100), Some(0)),
            None,
            false,
        ),
        case(
            "f16 d128 bshd band (left 40, right 7) top-left",
            DataType::F16,
            (1, 2, 2, 300, 300, 128),
            true,
            (false, Some(40), Some(7)),
            None,
            false,
        ),
        case(
            "bf16 d64 one row, one key",
            DataType::Bf16,
            (1, 1, 1, 1, 1, 64),
            true,
            none,
            None,
            false,
        ),
    ];
    let cpu = handle(Device::Cpu).expect("cpu handle");
    let outs = ["y", "dk", "dv"];
    for c in &cases {
        let what = c.what;
        // The forward on the reference: o and stats consistent with q, k, v.
        let mut f = c.graph();
        f.build(&cpu, &[HeurMode::Fallback])
            .unwrap_or_else(|e| panic!("{what}: forward build: {e}"));
        let f_ins = c.inputs(&f);
        let fwd = run_outputs(&f, &cpu, None, &f_ins, &["y", "stats"]);
        let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
        let mut g = c.backward_graph();
        g.build(&h, &[HeurMode::A])
            .unwrap_or_else(|e| panic!("{what}: build: {e}"));
        assert_eq!(
            g.plan().expect("plan").engine_name(),
            SDPA_FA3_BWD_V1,
            "{what}: the heuristics' first choice"
        );
        let mut ins = inputs(&g);
        for (t, hst) in ins.iter_mut() {
            let name = t.name();
            let values = match name.as_str() {
                "o" => fwd[0].clone(),
                "stats" => fwd[1].clone(),
                "do" => continue,
                other => match f_ins.iter().find(|(ft, _)| ft.name() == other) {
                    Some((_, fh)) => fh.to_f64_vec(),
                    None => panic!("{what}: no forward input {other}"),
                },
            };
            hst.fill_from_f64(&values).expect("fill");
        }
        let mut r = c.backward_graph();
        r.build(&cpu, &[HeurMode::Fallback])
            .unwrap_or_else(|e| panic!("{what}: reference build: {e}"));
        let want = run_outputs(&r, &cpu, None, &ins, &outs);
        let got = run_outputs(&g, &h, Some(0), &ins, &outs);
        let (_, _, _, sq, skv, d) = c.shape;
        // bf16/f16 inputs; P and dS rounded to the input type before their products.
        let eps = if c.dt == DataType::Bf16 {
            1.0 / 128.0
        } else {
            1.0 / 1024.0
        };
        let atol = eps * (4.0 + 4.0 * ((sq.max(skv) + d) as f64).sqrt() / 8.0);
        let check = |got: &[Vec<f64>], which: &str| {
            for (i, name) in outs.iter().enumerate() {
                let w = worst(&got[i], &want[i], atol, 4.0 * eps);
                assert!(
                    w <= 1.0,
                    "{what} ({which}): {name} differs from the reference (worst ratio {w})"
                );
            }
        };
        check(&got, "built plan");
        let bytes = g.to_binary().expect("save");
        let (compiles, _) = kiln_engine_cuda::stats();
        let h2 = handle(Device::Cuda(0)).expect("fresh handle");
        let g2 = Graph::from_binary(Some(&h2), &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            kiln_engine_cuda::stats().0,
            compiles,
            "{what}: load compiled"
        );
        assert_eq!(g2.to_binary().expect("re-save"), bytes, "{what}: re-save");
        let again = run_outputs(&g2, &h2, Some(0), &ins, &outs);
        check(&again, "loaded plan");
        for i in [1, 2] {
            let same = again[i]
                .iter()
                .zip(&got[i])
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{what}: the loaded plan's {} differs", outs[i]);
        }
        eprintln!("ok: {what}");
    }
}

/// Runs a plan with y poisoned (NaN) and a device workspace when it has one.
fn run_plan_poisoned(
    plan: &kiln::ExecutionPlan,
    og: &kiln_core::OpGraph,
    h: &kiln::Handle,
    ins: &[(kiln::Tensor, HostTensor)],
    y_uid: i64,
) -> Vec<f64> {
    let dev: Vec<(i64, DeviceTensor)> = ins
        .iter()
        .map(|(t, hst)| {
            (
                t.uid().expect("uid"),
                DeviceTensor::upload(hst, 0).expect("upload"),
            )
        })
        .collect();
    let yd = og.tensor(y_uid).expect("y");
    let mut poison = HostTensor::zeros(yd).expect("host y");
    let span = poison.to_f64_vec().len();
    poison.fill_from_f64(&vec![f64::NAN; span]).expect("poison");
    let dy = DeviceTensor::upload(&poison, 0).expect("y memory");
    let mut b: Vec<(i64, *mut std::ffi::c_void)> = dev
        .iter()
        .map(|(u, d)| (*u, d.device_ptr() as *mut _))
        .collect();
    b.push((y_uid, dy.device_ptr() as *mut _));
    let ws = (plan.workspace_size() > 0)
        .then(|| kiln_cuda_driver::DeviceMemory::zeroed(0, plan.workspace_size()).expect("ws"));
    let (wp, wl) = match &ws {
        Some(m) => (m.as_ptr() as *mut std::ffi::c_void, m.len()),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: every pointer addresses device memory on cuda:0 sized for its tensor's layout;
    // the workspace (when the plan has one) holds `plan.workspace_size()` bytes there.
    unsafe { plan.execute(h, &b, wp, wl) }.expect("execute plan");
    dy.download().expect("download").to_f64_vec()
}

/// The Hopper convolution gradients (`KILN_CUDA_CONV_DGRAD_V2`, `KILN_CUDA_CONV_WGRAD_V2`)
/// against the CPU reference on shapes that fill no tile (C and K multiples of 8 but not of 64,
/// odd spatial dims), strides 1 to 3, padding, dilation, a fused scale + bias, wgrads split over
/// the workspace, stream-K and neither; several with every tile configuration, each after a save and a load on
/// a fresh handle; y poisoned with NaN before every run.
#[test]
#[ignore = "needs a CUDA GPU"]
fn hopper_conv_gradients_match_the_reference_on_odd_shapes_and_every_tile() {
    use kiln_engine_cuda::{CONV_DGRAD_V2, CONV_WGRAD_V2, KNOB_TILE};
    let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
    if kiln_cuda_driver::DeviceContext::new(0).map(|d| d.arch) != Ok(90) {
        eprintln!("skipped: the V2 engines run on compute capability 9.0 only");
        return;
    }
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
    // (dgrad, type, shape, scale + bias, every tile configuration)
    type V2GradCase = (bool, DataType, GradShape, bool, bool);
    let cases: Vec<V2GradCase> = vec![
        (
            true,
            DataType::Bf16,
            s(2, 64, 9, 9, 32, 3, 1, 1, 1),
            false,
            true,
        ),
        (
            true,
            DataType::F16,
            s(3, 72, 13, 11, 136, 3, 1, 2, 1),
            true,
            true,
        ),
        (
            true,
            DataType::Bf16,
            s(2, 136, 7, 7, 24, 1, 0, 1, 1),
            true,
            false,
        ),
        (
            true,
            DataType::F16,
            s(1, 40, 17, 15, 24, 3, 0, 3, 1),
            false,
            false,
        ),
        // Stride phases with different tap counts (5x5 stride 2: 3x3, 3x2, 2x3, 2x2) and
        // phases no tap reaches (1x1 stride 2: dx is the epilogue of zero there).
        (
            true,
            DataType::Bf16,
            s(2, 32, 10, 9, 24, 5, 2, 2, 1),
            false,
            true,
        ),
        (
            true,
            DataType::F16,
            s(2, 48, 9, 11, 40, 1, 0, 2, 1),
            true,
            true,
        ),
        (
            true,
            DataType::Bf16,
            s(1, 32, 12, 12, 48, 3, 2, 1, 2),
            false,
            false,
        ),
        (
            false,
            DataType::Bf16,
            s(2, 16, 9, 9, 24, 3, 1, 1, 1),
            false,
            true,
        ),
        (
            false,
            DataType::Bf16,
            s(8, 48, 30, 30, 40, 3, 1, 1, 1),
            true,
            true,
        ),
        (
            false,
            DataType::F16,
            s(32, 64, 28, 28, 64, 3, 1, 1, 1),
            false,
            false,
        ),
        // Stream-K through the knob (its values past the tiles): 45 tiles of 128 x 64 (1800 x
        // 136), 38 K slices each (2376 positions), so that most tiles are summed from three or
        // four blocks' parts.
        (
            false,
            DataType::Bf16,
            s(24, 200, 11, 9, 136, 3, 1, 1, 1),
            true,
            true,
        ),
        (
            false,
            DataType::F16,
            s(4, 24, 15, 15, 72, 3, 1, 2, 1),
            false,
            false,
        ),
        (
            false,
            DataType::Bf16,
            s(2, 32, 11, 11, 16, 3, 2, 1, 2),
            true,
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (i, &(dgrad, dt, shape, scale_bias, every)) in cases.iter().enumerate() {
        let engine = if dgrad { CONV_DGRAD_V2 } else { CONV_WGRAD_V2 };
        // Every tile, and for wgrad every cooperative tile again with stream-K.
        let tiles = kiln_engine_cuda::codegen::hopper_grad::knob_max(if dgrad {
            kiln_core::ConvDirection::Dgrad
        } else {
            kiln_core::ConvDirection::Wgrad
        });
        let make = move || conv_grad_graph(dgrad, dt, shape, true, scale_bias);
        let mut g = make();
        g.build(&h, &[HeurMode::A]).expect("builds on cuda:0");
        let chosen = g.plan().expect("plan").engine_name().to_string();
        assert_eq!(chosen, engine, "case {i}: the heuristics chose {chosen}");
        let ins = inputs(&g);
        let want = reference(&make, &ins);
        let terms = if dgrad {
            shape.k * shape.r * shape.r
        } else {
            let (p, q) = shape.pq();
            shape.n * p * q
        } as f64;
        let tol = match dt {
            DataType::F16 => 2e-3 * terms.sqrt(),
            _ => 1e-2 * terms.sqrt(),
        };
        let og = g.op_graph().expect("graph").clone();
        let y = g.tensor_by_name("y").and_then(|t| t.uid()).expect("y");
        let mut check = |what: String, got: Vec<f64>| {
            let w = worst(&got, &want, tol, 1e-2);
            eprintln!("case {i} {engine} {dt} {shape:?} {what}: worst {w:.3}");
            if w.is_nan() || w > 1.0 {
                failures.push(format!(
                    "case {i} {engine} {dt} {shape:?} {what}: worst {w}"
                ));
            }
        };
        let ws = g.plan().expect("plan").workspace_size();
        check(
            format!("heuristic (workspace {ws} bytes)"),
            run_plan_poisoned(g.plan().expect("plan"), &og, &h, &ins, y),
        );
        if every {
            for tile in 1..=tiles {
                let mut gt = make();
                gt.validate().expect("valid");
                gt.build_operation_graph(&h).expect("lower");
                gt.create_execution_plans(&[HeurMode::A])
                    .expect("heuristics");
                gt.set_knob(engine, KNOB_TILE, tile);
                gt.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                    .unwrap_or_else(|e| panic!("case {i} tile {tile}: {e}"));
                let got = run_plan_poisoned(gt.plan().expect("plan"), &og, &h, &ins, y);
                check(format!("tile {tile}"), got);
            }
        }
        let saved = g.to_binary().expect("save");
        let h2 = handle(Device::Cuda(0)).expect("fresh handle");
        let g2 = Graph::from_binary(Some(&h2), &saved).expect("load");
        assert_eq!(
            g2.to_binary().expect("re-save"),
            saved,
            "case {i}: re-save differs"
        );
        let og2 = g2.op_graph().expect("graph").clone();
        let got = run_plan_poisoned(g2.plan().expect("plan"), &og2, &h2, &ins, y);
        check("loaded".into(), got);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The CUDA convolution gradients against the CPU reference: odd sizes (no multiple of a tile),
/// strides, padding, dilation, NHWC and NCHW, f32/f16/bf16, fused scale + bias, and a wgrad
/// whose reduction is split over the workspace; y poisoned before execute. Also checks that
/// the frontend's host workspace is refused with a clear message rather than written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn conv_gradients_match_the_reference_on_odd_shapes() {
    use kiln_engine_cuda::{CONV_DGRAD_V1, CONV_DGRAD_V2, CONV_WGRAD_V1, CONV_WGRAD_V2};
    let h = handle(Device::Cuda(0)).expect("cuda:0 handle");
    let hopper = kiln_cuda_driver::DeviceContext::new(0).map(|d| d.arch) == Ok(90);
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
    type GradCase = (bool, DataType, GradShape, bool, bool);
    let cases: Vec<GradCase> = vec![
        (
            true,
            DataType::Bf16,
            s(2, 64, 9, 9, 32, 3, 1, 1, 1),
            true,
            false,
        ),
        (
            true,
            DataType::F16,
            s(3, 33, 13, 11, 129, 3, 1, 2, 1),
            true,
            true,
        ),
        (
            true,
            DataType::F32,
            s(1, 7, 9, 8, 5, 3, 2, 1, 2),
            false,
            false,
        ),
        (
            true,
            DataType::Bf16,
            s(2, 129, 7, 7, 33, 1, 0, 1, 1),
            false,
            true,
        ),
        (
            true,
            DataType::F16,
            s(1, 40, 17, 15, 24, 3, 0, 3, 1),
            true,
            false,
        ),
        (
            false,
            DataType::Bf16,
            s(2, 16, 9, 9, 24, 3, 1, 1, 1),
            true,
            false,
        ),
        (
            false,
            DataType::F16,
            s(2, 7, 13, 11, 9, 3, 1, 2, 1),
            false,
            true,
        ),
        (
            false,
            DataType::F32,
            s(3, 33, 10, 9, 129, 3, 1, 1, 2),
            true,
            false,
        ),
        (
            false,
            DataType::Bf16,
            s(8, 48, 30, 30, 40, 3, 1, 1, 1),
            true,
            true,
        ),
        (
            false,
            DataType::F16,
            s(32, 64, 28, 28, 64, 3, 1, 1, 1),
            true,
            false,
        ),
    ];
    for (i, &(dgrad, dt, shape, nhwc_layout, scale_bias)) in cases.iter().enumerate() {
        let make = move || conv_grad_graph(dgrad, dt, shape, nhwc_layout, scale_bias);
        let mut g = make();
        g.build(&h, &[HeurMode::A]).expect("builds on cuda:0");
        let plan = g.plan().expect("plan");
        // On an H100/H200 the Hopper engines take what they claim; V1 runs the rest.
        let v2 = if dgrad { CONV_DGRAD_V2 } else { CONV_WGRAD_V2 };
        let want_engine =
            if hopper && kiln_engine_cuda::supports(v2, g.op_graph().expect("graph"), 90).is_ok() {
                v2
            } else if dgrad {
                CONV_DGRAD_V1
            } else {
                CONV_WGRAD_V1
            };
        assert_eq!(plan.engine_name(), want_engine, "case {i}");
        let ins = inputs(&g);
        let want = reference(&make, &ins);
        let og = g.op_graph().expect("graph");
        let y = g.tensor_by_name("y").and_then(|t| t.uid()).expect("y");
        let got = run_plan_poisoned(plan, og, &h, &ins, y);
        // Sums of `terms` products of values in [-1, 1): an f16/bf16 result carries its own
        // rounding on top of the f32 accumulation's.
        let terms = if dgrad {
            shape.k * shape.r * shape.r
        } else {
            let (p, q) = shape.pq();
            shape.n * p * q
        } as f64;
        let tol = match dt {
            DataType::F32 => 1e-4 * terms.sqrt(),
            DataType::F16 => 2e-3 * terms.sqrt(),
            _ => 1e-2 * terms.sqrt(),
        };
        let w = worst(&got, &want, tol, 1e-2);
        assert!(
            w <= 1.0,
            "case {i} ({want_engine} {dt} {shape:?} nhwc {nhwc_layout} epilogue {scale_bias}): worst error ratio {w}"
        );
        eprintln!(
            "case {i}: {want_engine} {dt} {shape:?}: worst {w:.3}, workspace {} bytes",
            plan.workspace_size()
        );
        if plan.workspace_size() > 0 {
            // Graph::execute gives a plan with a workspace device memory of its own (the
            // frontend's Workspace is host memory): the output is the same as above.
            let mut dev: Vec<(i64, DeviceTensor)> = ins
                .iter()
                .map(|(t, hst)| {
                    (
                        t.uid().expect("uid"),
                        DeviceTensor::upload(hst, 0).expect("up"),
                    )
                })
                .collect();
            let yt = g.tensor_by_name("y").expect("y");
            let mut dy = DeviceTensor::zeros(og.tensor(y).expect("y"), 0).expect("y memory");
            let mut ws = Workspace::new(0).expect("ws");
            let mut pack = VariantPack::new();
            for (uid, d) in dev.iter_mut() {
                pack.insert_device_uid(*uid, d);
            }
            pack.insert_device(&yt, &mut dy);
            g.execute(&h, &mut pack, &mut ws)
                .expect("Graph::execute runs a plan with a workspace");
            let again: Vec<f64> = dy.download().expect("down").to_f64_vec();
            let w = worst(&again, &want, tol, 1e-2);
            assert!(
                w <= 1.0,
                "case {i}: through Graph::execute, worst error ratio {w}"
            );
        }
    }
}
