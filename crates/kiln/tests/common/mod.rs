//! Shared helpers of the frontend's save/load tests: graphs built through the API, handles on the
//! built-in CPU plugin only, running a graph and comparing with the reference engine.

#![allow(dead_code)]

use kiln::{
    ConvAttributes, DataType, Graph, Handle, HeurMode, HostTensor, PointwiseAttributes,
    PointwiseMode, Registry, TensorAttributes, VariantPack, Workspace,
};
use std::sync::Arc;

/// The registry of the built-in plugins only, so that `KILN_PLUGIN_PATH` cannot change what the
/// tests see.
pub fn cpu_registry() -> Arc<Registry> {
    Arc::new(Registry::with_builtins(&Registry::builtin_tables()))
}

/// A fresh CPU handle on the built-in plugins only.
pub fn cpu_handle() -> Handle {
    Handle::with_registry(kiln::Device::Cpu, cpu_registry()).expect("a CPU handle")
}

/// The name of every test graph's output tensor.
pub const OUTPUT: &str = "y";

fn f32_tensor(g: &mut Graph, name: &str, dims: &[i64]) -> kiln::Tensor {
    g.tensor(
        TensorAttributes::new()
            .name(name)
            .dim(dims)
            .data_type(DataType::F32),
    )
}

/// `y = relu(x * s + b)` on [2, 3, 5], not yet validated.
pub fn pointwise_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("pointwise");
    let d = [2, 3, 5];
    let x = f32_tensor(&mut g, "x", &d);
    let s = f32_tensor(&mut g, "s", &d);
    let b = f32_tensor(&mut g, "b", &d);
    let xs = g.pointwise(&x, Some(&s), PointwiseAttributes::new(PointwiseMode::Mul));
    let xsb = g.pointwise(&xs, Some(&b), PointwiseAttributes::new(PointwiseMode::Add));
    let y = g.pointwise(&xsb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name(OUTPUT).set_output(true);
    g
}

/// `y = relu(conv(x, w) + bias)`: x [2, 3, 7, 7], w [4, 3, 3, 3], padding 1, stride 2.
pub fn conv_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("conv_bias_relu");
    let x = f32_tensor(&mut g, "x", &[2, 3, 7, 7]);
    let w = f32_tensor(&mut g, "w", &[4, 3, 3, 3]);
    let bias = f32_tensor(&mut g, "bias", &[1, 4, 1, 1]);
    let c = g.conv_fprop(
        &x,
        &w,
        ConvAttributes::new().padding(&[1, 1]).stride(&[2, 2]),
    );
    let cb = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name(OUTPUT).set_output(true);
    g
}

/// Attention with GQA, a broadcast bias and a causal mask: q [2, 4, 6, 8], k/v [2, 2, 9, 8];
/// `y` is o.
pub fn sdpa_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("sdpa");
    let q = f32_tensor(&mut g, "q", &[2, 4, 6, 8]);
    let k = f32_tensor(&mut g, "k", &[2, 2, 9, 8]);
    let v = f32_tensor(&mut g, "v", &[2, 2, 9, 8]);
    let bias = f32_tensor(&mut g, "bias", &[1, 4, 6, 9]);
    let out = g
        .sdpa(
            &q,
            &k,
            &v,
            kiln::SdpaAttributes::new()
                .attn_scale(0.3)
                .bias(&bias)
                .causal_mask(true),
        )
        .expect("sdpa");
    out.o.set_name(OUTPUT).set_output(true);
    g
}

/// The gradients of [`sdpa_graph`]'s attention with a sliding window; `y` is dq (dk and dv are
/// outputs too).
pub fn sdpa_backward_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("sdpa_backward");
    let q = f32_tensor(&mut g, "q", &[2, 4, 6, 8]);
    let k = f32_tensor(&mut g, "k", &[2, 2, 9, 8]);
    let v = f32_tensor(&mut g, "v", &[2, 2, 9, 8]);
    let o = f32_tensor(&mut g, "o", &[2, 4, 6, 8]);
    let d_o = f32_tensor(&mut g, "do", &[2, 4, 6, 8]);
    let stats = f32_tensor(&mut g, "stats", &[2, 4, 6, 1]);
    let out = g
        .sdpa_backward(
            &q,
            &k,
            &v,
            &o,
            &d_o,
            &stats,
            kiln::SdpaBackwardAttributes::new()
                .attn_scale(0.3)
                .causal_mask_bottom_right(true)
                .sliding_window_length(4),
        )
        .expect("sdpa_backward");
    out.dq.set_name(OUTPUT).set_output(true);
    out.dk.set_name("dk").set_output(true);
    out.dv.set_name("dv").set_output(true);
    g
}

/// A built graph: `make()` built on `handle` with the optimized engines first.
pub fn built(make: fn() -> Graph, handle: &Handle) -> Graph {
    let mut g = make();
    g.build(handle, &[HeurMode::A])
        .expect("the test graph builds");
    g
}

/// A seed from a tensor's name, so that a graph and its loaded copy get the same inputs.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Runs `graph`'s selected plan on `handle` with reproducible inputs; returns the output `y`.
pub fn run(graph: &Graph, handle: &Handle) -> kiln::Result<Vec<f32>> {
    let og = graph.op_graph().expect("the graph is validated");
    let out = graph
        .tensor_by_name(OUTPUT)
        .and_then(|t| t.uid())
        .expect("an output named y");
    let mut memory = Vec::new();
    for t in og.bound_tensors() {
        let m = if t.uid == out {
            HostTensor::zeros(t)?
        } else {
            HostTensor::random(t, seed(&t.name))?
        };
        memory.push((t.uid, m));
    }
    let mut workspace = Workspace::for_graph(graph)?;
    let mut pack = VariantPack::new();
    for (uid, m) in memory.iter_mut() {
        pack.insert_uid(*uid, m);
    }
    graph.execute(handle, &mut pack, &mut workspace)?;
    drop(pack);
    let y = memory
        .iter()
        .find(|(u, _)| *u == out)
        .map(|(_, m)| m.to_f32_vec());
    Ok(y.unwrap_or_default())
}

/// The reference engine's output for the graph `make()` builds, on a fresh handle.
pub fn reference(make: fn() -> Graph) -> Vec<f32> {
    let handle = cpu_handle();
    let mut g = make();
    g.build(&handle, &[HeurMode::Fallback])
        .expect("the reference engine builds");
    assert!(g.plan().expect("a plan").engine().is_reference());
    run(&g, &handle).expect("the reference engine runs")
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
