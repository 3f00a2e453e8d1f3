//! Shared helpers of the backend's save/load tests: two graphs with inputs, handles on the
//! CPU plugin only, building, running and comparing plans.

#![allow(dead_code)]

use kiln_backend::{heuristics, ExecutionPlan, Handle, HeurMode, Registry};
use kiln_core::{
    ConvDirection, ConvOp, ConvParams, DataType, Node, Op, OpGraph, PointwiseMode, PointwiseOp,
    PointwiseParams, TensorDesc,
};
use std::ffi::c_void;
use std::sync::Arc;

/// A registry with the CPU plugin only, as a built-in (no `KILN_PLUGIN_PATH`, no default
/// folder), so the environment cannot change what the tests see.
pub fn cpu_registry() -> Arc<Registry> {
    Arc::new(Registry::with_builtins(&[
        kiln_test_plugin::cpu_plugin_table(),
    ]))
}

/// A fresh CPU handle on the built-in plugin only.
pub fn cpu_handle() -> Handle {
    Handle::with_registry(kiln_backend::Device::Cpu, cpu_registry()).expect("a CPU handle")
}

/// A validated graph, its blob, input values per UID and its output UID.
pub struct TestGraph {
    pub graph: OpGraph,
    pub blob: Vec<u8>,
    pub inputs: Vec<(i64, Vec<f32>)>,
    pub output: (i64, usize),
}

fn packed(dims: &[i64]) -> Vec<i64> {
    kiln_core::tensor::packed_strides(dims)
}

fn tensor(uid: i64, name: &str, dims: &[i64], is_virtual: bool) -> TensorDesc {
    TensorDesc {
        uid,
        name: name.into(),
        dims: dims.to_vec(),
        strides: packed(dims),
        data_type: DataType::F32,
        is_virtual,
        alignment: 0,
        scalar: None,
    }
}

fn pointwise(name: &str, mode: PointwiseMode, a: i64, b: Option<i64>, out: i64) -> Node {
    Node {
        name: name.into(),
        compute_type: DataType::F32,
        op: Op::Pointwise(PointwiseOp {
            mode,
            a,
            b,
            c: None,
            out,
            params: PointwiseParams::default(),
        }),
    }
}

/// Reproducible values in [-1, 1) (splitmix64), never all zeros.
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn finish(mut graph: OpGraph, output: (i64, usize)) -> TestGraph {
    graph.validate().expect("the test graph is valid");
    let blob = kiln_format::encode_graph(&graph);
    let inputs = graph
        .bound_tensors()
        .filter(|t| t.uid != output.0)
        .map(|t| (t.uid, values(t.element_count().unwrap_or(0), t.uid as u64)))
        .collect();
    TestGraph {
        graph,
        blob,
        inputs,
        output,
    }
}

/// `y = relu(x * s + b)` on [2, 3, 5], with the intermediates virtual.
pub fn pointwise_graph() -> TestGraph {
    let d = [2, 3, 5];
    let graph = OpGraph {
        name: "pointwise".into(),
        tensors: vec![
            tensor(1, "x", &d, false),
            tensor(2, "s", &d, false),
            tensor(3, "b", &d, false),
            tensor(4, "xs", &d, true),
            tensor(5, "xsb", &d, true),
            tensor(6, "y", &d, false),
        ],
        nodes: vec![
            pointwise("mul", PointwiseMode::Mul, 1, Some(2), 4),
            pointwise("add", PointwiseMode::Add, 4, Some(3), 5),
            pointwise("relu", PointwiseMode::Relu, 5, None, 6),
        ],
    };
    finish(graph, (6, 30))
}

/// `y = relu(conv(x, w) + bias)`: x [2, 3, 6, 6], w [4, 3, 3, 3], padding 1, bias [1, 4, 1, 1].
pub fn conv_graph() -> TestGraph {
    let out = [2, 4, 6, 6];
    let graph = OpGraph {
        name: "conv_bias_relu".into(),
        tensors: vec![
            tensor(10, "x", &[2, 3, 6, 6], false),
            tensor(11, "w", &[4, 3, 3, 3], false),
            tensor(12, "bias", &[1, 4, 1, 1], false),
            tensor(13, "conv", &out, true),
            tensor(14, "biased", &out, true),
            tensor(15, "y", &out, false),
        ],
        nodes: vec![
            Node {
                name: "conv".into(),
                compute_type: DataType::F32,
                op: Op::Conv(ConvOp {
                    direction: ConvDirection::Fprop,
                    x: 10,
                    w: 11,
                    y: 13,
                    params: ConvParams {
                        pre_padding: vec![1, 1],
                        post_padding: vec![1, 1],
                        stride: vec![1, 1],
                        dilation: vec![1, 1],
                    },
                }),
            },
            pointwise("bias", PointwiseMode::Add, 13, Some(12), 14),
            pointwise("relu", PointwiseMode::Relu, 14, None, 15),
        ],
    };
    finish(graph, (15, 2 * 4 * 6 * 6))
}

/// Builds the first plan the heuristics offer for `tg` on `handle` in `mode`.
pub fn build_plan(handle: &Handle, tg: &TestGraph, mode: HeurMode) -> ExecutionPlan {
    let configs = heuristics::engine_configs(handle, &tg.blob, &[mode]).expect("engine configs");
    let config = configs.first().expect("an engine for the test graph");
    ExecutionPlan::build(handle, config, &tg.graph, &tg.blob).expect("the plan builds")
}

/// Runs `plan` on `handle` with `tg`'s inputs; returns the output.
pub fn run(plan: &ExecutionPlan, handle: &Handle, tg: &TestGraph) -> kiln_core::Result<Vec<f32>> {
    let mut inputs: Vec<(i64, Vec<f32>)> = tg.inputs.clone();
    let mut out = vec![f32::NAN; tg.output.1];
    let mut bindings: Vec<(i64, *mut c_void)> = inputs
        .iter_mut()
        .map(|(uid, v)| (*uid, v.as_mut_ptr() as *mut c_void))
        .collect();
    bindings.push((tg.output.0, out.as_mut_ptr() as *mut c_void));
    let mut workspace = vec![0u64; plan.workspace_size().div_ceil(8)];
    let ws = if workspace.is_empty() {
        std::ptr::null_mut()
    } else {
        workspace.as_mut_ptr() as *mut c_void
    };
    // SAFETY: every buffer holds its packed tensor's elements as f32 and outlives the call; the
    // workspace holds at least workspace_size() bytes.
    unsafe { plan.execute(handle, &bindings, ws, workspace.len() * 8) }?;
    Ok(out)
}

/// The reference engine's output for `tg`, on a fresh handle.
pub fn reference(tg: &TestGraph) -> Vec<f32> {
    let handle = cpu_handle();
    let plan = build_plan(&handle, tg, HeurMode::Fallback);
    assert!(
        plan.engine().is_reference(),
        "fallback mode picked {}",
        plan.engine_name()
    );
    run(&plan, &handle, tg).expect("the reference engine runs")
}

/// Asserts that `got` matches the reference `want` element by element.
pub fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 + 1e-4 * w.abs();
        assert!(
            (g - w).abs() <= tol,
            "{what}: element {i} is {g}, the reference says {w}"
        );
    }
    assert!(
        want.iter().any(|&v| v != 0.0),
        "{what}: the reference output is all zeros"
    );
}
