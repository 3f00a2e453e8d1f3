//! Speed on the GPU machine: pointwise bandwidth, convolution, matmul and attention throughput,
//! plan load time. Prints one JSON line per measurement; scripts/gpu-bench.py measures the PyTorch peers.
//! Run: `h200-<hash> --bench` (see scripts/gpu-package.sh).

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use kiln::{DataType, Device, DeviceTensor, Graph, HeurMode, PointwiseMode};
use std::time::Instant;

/// Timed runs per case: 20, or `KILN_BENCH_ITERS` (fewer, e.g. under a profiler).
fn bench_iters() -> usize {
    std::env::var("KILN_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn time_graph(name: &str, g: &Graph, h: &kiln::Handle, flops: f64, bytes: f64) {
    time_graph_filled(name, g, h, flops, bytes, &|_| None);
}

/// `time_graph` with the values `fill(tensor name)` gives (e.g. per-batch lengths) instead of
/// random data where it gives any.
fn time_graph_filled(
    name: &str,
    g: &Graph,
    h: &kiln::Handle,
    flops: f64,
    bytes: f64,
    fill: &dyn Fn(&str) -> Option<Vec<f64>>,
) {
    let og = g.op_graph().expect("graph").clone();
    let plan = g.plan().expect("plan");
    // Random data, never zeros (which can run faster than real data and hide unwritten output).
    let mut mem = Vec::new();
    for t in og.bound_tensors() {
        let mut host = kiln::HostTensor::random(t, t.uid as u64 + 11).expect("host data");
        if let Some(v) = fill(&t.name) {
            host.fill_from_f64(&v).expect("fill");
        }
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
    let iters = bench_iters();
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

/// Attention over [b, h, s, d] in B,S,H,D layout with per-batch lengths (seq_len_q = seq_len_kv
/// tensors bound at execute): one plan for every ragged batch up to length s.
fn sdpa_ragged_graph(b: i64, h: i64, s: i64, d: i64, causal: bool) -> Graph {
    let mut g = Graph::new();
    let bshd = |g: &mut Graph, name: &str| {
        g.tensor(
            kiln::TensorAttributes::new()
                .name(name)
                .dim(&[b, h, s, d])
                .stride(&[s * h * d, d, h * d, 1])
                .data_type(DataType::Bf16),
        )
    };
    let (q, k, v) = (bshd(&mut g, "q"), bshd(&mut g, "k"), bshd(&mut g, "v"));
    let len = |g: &mut Graph, name: &str| {
        g.tensor(
            kiln::TensorAttributes::new()
                .name(name)
                .dim(&[b, 1, 1, 1])
                .data_type(DataType::F32),
        )
    };
    let (lq, lkv) = (len(&mut g, "seq_len_q"), len(&mut g, "seq_len_kv"));
    let attrs = kiln::SdpaAttributes::new()
        .attn_scale(1.0 / (d as f64).sqrt())
        .causal_mask(causal)
        .seq_len_q(&lq)
        .seq_len_kv(&lkv);
    let out = g.sdpa(&q, &k, &v, attrs).expect("sdpa ragged");
    out.o
        .set_name("y")
        .set_output(true)
        .set_data_type(DataType::Bf16);
    g
}

/// Pooling of bf16 NHWC x [32, 64, 112, 112], window 3x3, stride 2, padding 1 (y [32, 64, 56,
/// 56]): the forward (max with an i8 index) when `backward` is `None`, else the backward of
/// `mode`, max through an i8 index (`Some(true)`) or through x (`Some(false)`).
fn pooling_bench_graph(mode: kiln::ResampleMode, backward: Option<bool>) -> Graph {
    use kiln::{ResampleAttributes, ResampleMode, TensorAttributes};
    let (xd, yd) = ([32i64, 64, 112, 112], [32i64, 64, 56, 56]);
    let nhwc = kiln_core::tensor::channels_last_strides;
    let attrs = || {
        ResampleAttributes::new(mode, &[3, 3])
            .stride(&[2, 2])
            .pre_padding(&[1, 1])
            .post_padding(&[1, 1])
    };
    let mut g = Graph::new();
    let t = |g: &mut Graph, name: &str, dims: &[i64], dt: DataType| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .stride(&nhwc(dims))
                .data_type(dt),
        )
    };
    let Some(with_index) = backward else {
        let x = t(&mut g, "x", &xd, DataType::Bf16);
        let out = g
            .resample(&x, attrs().generate_index(mode == ResampleMode::MaxPool))
            .expect("resample");
        out.y.set_output(true).set_data_type(DataType::Bf16);
        if let Some(i) = out.index {
            i.set_output(true)
                .set_stride(&nhwc(&yd))
                .set_data_type(DataType::I8);
        }
        return g;
    };
    let dy = t(&mut g, "dy", &yd, DataType::Bf16);
    let max = mode == ResampleMode::MaxPool;
    let index = (max && with_index).then(|| t(&mut g, "index", &yd, DataType::I8));
    let x = (max && !with_index).then(|| t(&mut g, "x", &xd, DataType::Bf16));
    let dx = g
        .resample_backward(&dy, index.as_ref(), x.as_ref(), attrs())
        .expect("resample_backward");
    dx.set_output(true)
        .set_dim(&xd)
        .set_stride(&nhwc(&xd))
        .set_data_type(DataType::Bf16);
    g
}

/// The pooling cases (names as scripts/gpu-bench.py's, bytes the fewest read + written).
fn pooling_benches(h: &kiln::Handle) {
    use kiln::ResampleMode;
    let (x, y) = (32.0 * 64.0 * 112.0 * 112.0, 32.0 * 64.0 * 56.0 * 56.0);
    let cases = [
        (
            "maxpool fwd",
            ResampleMode::MaxPool,
            None,
            2.0 * x + 3.0 * y,
        ),
        (
            "avgpool bwd",
            ResampleMode::AvgPoolExcludePadding,
            Some(false),
            2.0 * (x + y),
        ),
        (
            "maxpool bwd index",
            ResampleMode::MaxPool,
            Some(true),
            2.0 * x + 3.0 * y,
        ),
        (
            "maxpool bwd x",
            ResampleMode::MaxPool,
            Some(false),
            4.0 * x + 2.0 * y,
        ),
    ];
    for (what, mode, backward, bytes) in cases {
        let name = format!("{what} bf16 NHWC N32 C64 H112 3x3 s2");
        if backward.is_none() {
            let mut g = pooling_bench_graph(mode, backward);
            g.build(h, &[HeurMode::A]).expect("build pooling");
            time_graph(&format!("{name} [{}]", engine(&g)), &g, h, 0.0, bytes);
            continue;
        }
        // The backward with each value of its gather knob, on the same tensors.
        let build = |gather: i64| {
            let mut g = pooling_bench_graph(mode, backward);
            build_with_knob(
                &mut g,
                h,
                kiln_engine_cuda::RESAMPLE_BACKWARD_V1,
                kiln_engine_cuda::KNOB_GATHER,
                gather,
            );
            g
        };
        let (phase, runs) = (build(1), build(0));
        time_same_tensors(
            h,
            &[
                (format!("{name} [{} gather1]", engine(&phase)), &phase),
                (format!("{name} [{} gather0]", engine(&runs)), &runs),
            ],
            bytes,
        );
    }
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
    sdpa_backward_bench_graph_lens(dt, b, hq, hkv, s, d, causal, false)
}

/// `sdpa_backward_bench_graph`, with per-batch lengths (seq_len_q = seq_len_kv tensors) when
/// `lens`.
#[allow(clippy::too_many_arguments)]
fn sdpa_backward_bench_graph_lens(
    dt: DataType,
    b: i64,
    hq: i64,
    hkv: i64,
    s: i64,
    d: i64,
    causal: bool,
    lens: bool,
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
    let mut attrs = kiln::SdpaBackwardAttributes::new()
        .attn_scale(1.0 / (d as f64).sqrt())
        .causal_mask(causal);
    if lens {
        for name in ["seq_len_q", "seq_len_kv"] {
            let t = g.tensor(
                kiln::TensorAttributes::new()
                    .name(name)
                    .dim(&[b, 1, 1, 1])
                    .data_type(DataType::F32),
            );
            attrs = if name == "seq_len_q" {
                attrs.seq_len_q(&t)
            } else {
                attrs.seq_len_kv(&t)
            };
        }
    }
    let out = g
        .sdpa_backward(&q, &k, &v, &o, &d_o, &stats, attrs)
        .expect("sdpa_backward");
    for t in [&out.dq, &out.dk, &out.dv] {
        t.set_output(true);
    }
    g
}

/// layernorm or rmsnorm (`op`), inference, bf16 x [rows, hidden] and parameters.
fn norm_rows_graph(op: &str, rows: i64, hidden: i64) -> Graph {
    use kiln::{LayernormAttributes, RmsnormAttributes, TensorAttributes};
    let mut g = Graph::new();
    let t = |g: &mut Graph, name: &str, dims: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::Bf16),
        )
    };
    let x = t(&mut g, "x", &[rows, hidden]);
    let s = t(&mut g, "scale", &[1, hidden]);
    let y = if op == "rmsnorm" {
        g.rmsnorm(&x, &s, RmsnormAttributes::new().epsilon(1e-5))
            .expect("rmsnorm")
            .y
    } else {
        let b = t(&mut g, "bias", &[1, hidden]);
        g.layernorm(&x, &s, &b, LayernormAttributes::new().epsilon(1e-5))
            .expect("layernorm")
            .y
    };
    y.set_output(true);
    g
}

/// The backward of `op` (layernorm: dx, dscale, dbias; rmsnorm: dx, dscale), bf16 [rows,
/// hidden], f32 saved statistics.
fn norm_rows_backward_graph(op: &str, rows: i64, hidden: i64) -> Graph {
    use kiln::{NormBackwardAttributes, RmsnormBackwardAttributes, TensorAttributes};
    let mut g = Graph::new();
    let t = |g: &mut Graph, name: &str, dims: &[i64], dt: DataType| {
        g.tensor(TensorAttributes::new().name(name).dim(dims).data_type(dt))
    };
    let x = t(&mut g, "x", &[rows, hidden], DataType::Bf16);
    let dy = t(&mut g, "dy", &[rows, hidden], DataType::Bf16);
    let s = t(&mut g, "scale", &[1, hidden], DataType::Bf16);
    let inv = t(&mut g, "inv", &[rows, 1], DataType::F32);
    let out = if op == "rmsnorm" {
        g.rmsnorm_backward(&dy, &x, &s, &inv, RmsnormBackwardAttributes::new())
    } else {
        let mean = t(&mut g, "mean", &[rows, 1], DataType::F32);
        g.layernorm_backward(
            &dy,
            &x,
            &s,
            NormBackwardAttributes::new().saved_mean_and_inv_variance(&mean, &inv),
        )
    }
    .expect("norm backward");
    for o in [out.dx, out.dscale].into_iter().chain(out.dbias) {
        o.set_output(true);
    }
    g
}

/// Times the plans of `graphs` (graphs of the same tensors, e.g. one graph built with different
/// knobs) on one set of device memory: random inputs, zeroed outputs (every output element is
/// written by the plan). One JSON line per graph, as `time_graph` prints.
fn time_same_tensors(h: &kiln::Handle, graphs: &[(String, &Graph)], bytes: f64) {
    let og = graphs[0].1.op_graph().expect("graph").clone();
    let mut mem = Vec::new();
    for t in og.bound_tensors() {
        let d = if og.producer(t.uid).is_some() {
            DeviceTensor::zeros(t, 0)
        } else {
            DeviceTensor::upload(
                &kiln::HostTensor::random(t, t.uid as u64 + 11).expect("host data"),
                0,
            )
        };
        mem.push((t.uid, d.expect("device memory")));
    }
    let b: Vec<(i64, *mut std::ffi::c_void)> = mem
        .iter()
        .map(|(u, d)| (*u, d.device_ptr() as *mut _))
        .collect();
    let dev = kiln_cuda_driver::DeviceContext::new(0).expect("device");
    for (name, g) in graphs {
        assert_eq!(g.op_graph().expect("graph").tensors, og.tensors, "{name}");
        let plan = g.plan().expect("plan");
        let ws_bytes = plan.workspace_size();
        let ws = (ws_bytes > 0).then(|| {
            let desc = kiln_core::TensorDesc {
                uid: 0,
                name: "workspace".into(),
                dims: vec![ws_bytes.div_ceil(4) as i64],
                strides: vec![1],
                data_type: DataType::F32,
                is_virtual: false,
                alignment: 0,
                scalar: None,
            };
            DeviceTensor::zeros(&desc, 0).expect("workspace")
        });
        let ws_ptr = ws.as_ref().map_or(std::ptr::null_mut(), |w| {
            w.device_ptr() as *mut std::ffi::c_void
        });
        // SAFETY: every pointer addresses device memory sized for its tensor; the workspace
        // holds the plan's workspace size.
        let run = || unsafe { plan.execute(h, &b, ws_ptr, ws_bytes) }.map_err(|e| e.to_string());
        for _ in 0..3 {
            run().expect("warm-up");
        }
        let iters = bench_iters();
        let ms = kiln_cuda_driver::time_ms(&dev, || {
            for _ in 0..iters {
                run()?;
            }
            Ok(())
        })
        .expect("timing") as f64
            / iters as f64;
        println!(
            "{{\"case\":\"{name}\",\"ms\":{ms:.5},\"tflops\":0.00,\"tbps\":{:.3},\"workspace\":{ws_bytes}}}",
            bytes / ms / 1e9
        );
    }
}

/// Builds `g` with knob `knob` of engine `engine` set to `value`.
fn build_with_knob(g: &mut Graph, h: &kiln::Handle, engine: &str, knob: i64, value: i64) {
    g.validate().expect("valid");
    g.build_operation_graph(h).expect("operation graph");
    g.create_execution_plans(&[HeurMode::A]).expect("plans");
    g.set_knob(engine, knob, value);
    g.check_support().expect("support");
    g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
        .unwrap_or_else(|e| panic!("build with {engine} knob {knob} = {value}: {e}"));
}

/// Builds `g` with the norm engine's `wide` knob (2: the wide kernels with the backward's ring,
/// 1: the wide kernels, 0: the scalar ones).
fn build_norm(g: &mut Graph, h: &kiln::Handle, wide: i64) {
    build_with_knob(
        g,
        h,
        kiln_engine_cuda::NORM_V1,
        kiln_engine_cuda::KNOB_NORM_WIDE,
        wide,
    );
}

/// The normalization cases (issue 11), each with the engine's default knob (on an H200 the wide
/// kernels, the per-sample backwards through the shared-memory ring) and the scalar kernels
/// (` scalar` after the case name), the per-sample backwards and the batchnorm training forward
/// also with knob `wide` = 1 (` wide=1`: the backward's register path, batchnorm's three kernels):
/// bytes are the fewest the operation moves (each input read once, each output written once), so
/// `tbps` compares with the copy bandwidth.
fn norm_benches(h: &kiln::Handle) {
    let variants = |make: &dyn Fn() -> Graph, name: &str, bytes: f64, ring: bool| {
        let mut knobs = vec![(kiln_engine_cuda::NORM_WIDE_DEFAULT, ""), (0, " scalar")];
        if ring {
            knobs.push((1, " wide=1"));
        }
        let graphs: Vec<(Graph, &str)> = knobs
            .into_iter()
            .map(|(v, tag)| {
                let mut g = make();
                build_norm(&mut g, h, v);
                (g, tag)
            })
            .collect();
        let named: Vec<(String, &Graph)> = graphs
            .iter()
            .map(|(g, tag)| (format!("{name} [{}{tag}]", engine(g)), g))
            .collect();
        time_same_tensors(h, &named, bytes);
    };
    let both =
        |make: &dyn Fn() -> Graph, name: &str, bytes: f64| variants(make, name, bytes, false);
    // `--batchnorm`: the batchnorm cases alone.
    // KILN_BENCH_NORM_ROWS=RxH,...: these rows cases only (e.g. under a profiler).
    let only: Option<Vec<(i64, i64)>> = std::env::var("KILN_BENCH_NORM_ROWS").ok().map(|v| {
        v.split(',')
            .filter_map(|c| {
                let (r, h) = c.split_once('x')?;
                Some((r.parse().ok()?, h.parse().ok()?))
            })
            .collect()
    });
    let rows_cases: &[(i64, i64)] = if std::env::args().any(|a| a == "--batchnorm") {
        &[]
    } else {
        &[(4096, 1024), (16384, 4096), (65536, 1024), (8192, 8192)]
    };
    for &(rows, hidden) in rows_cases {
        if only.as_ref().is_some_and(|o| !o.contains(&(rows, hidden))) {
            continue;
        }
        let elems = (rows * hidden) as f64;
        for op in ["layernorm", "rmsnorm"] {
            both(
                &|| norm_rows_graph(op, rows, hidden),
                &format!("{op} fwd bf16 R{rows} H{hidden}"),
                4.0 * elems,
            );
            variants(
                &|| norm_rows_backward_graph(op, rows, hidden),
                &format!("{op} bwd bf16 R{rows} H{hidden}"),
                6.0 * elems,
                true,
            );
        }
    }
    let (n, c, hw) = (32i64, 256i64, 56i64);
    let elems = (n * c * hw * hw) as f64;
    for training in [false, true] {
        let what = if training {
            "batchnorm training"
        } else {
            "batchnorm inference"
        };
        variants(
            &|| batchnorm_nhwc_graph(training, DataType::Bf16, [n, c, hw, hw]),
            &format!("{what} bf16 NHWC N{n} C{c} H{hw} W{hw}"),
            4.0 * elems,
            training,
        );
    }
}

/// The convolution gradients, f16 and bf16 NHWC, on the convolution cases (names joined
/// with scripts/gpu-bench.py's peers): (N, C, H, K, R, stride), FLOPs those of the forward
/// convolution. The heuristics' engine (`KILN_CUDA_CONV_*GRAD_V2` on an H200) is in the name.
fn bench_conv_grad(h: &kiln::Handle) {
    for (dt, ty) in [(DataType::Bf16, "bf16"), (DataType::F16, "f16")] {
        for &(n, c, hw, k, r, stride) in &[
            (32i64, 64i64, 56i64, 64i64, 3i64, 1i64),
            (32, 256, 14, 256, 3, 1),
            (32, 128, 28, 128, 1, 1),
            (32, 128, 56, 128, 3, 2),
            (64, 512, 7, 512, 3, 1),
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
                let mut g = conv_grad_graph(dgrad, dt, shape, true, false);
                g.build(h, &[HeurMode::A]).expect("build conv grad");
                let what = if dgrad { "conv_dgrad" } else { "conv_wgrad" };
                time_graph(
                    &format!(
                        "{what} {ty} N{n} C{c} H{hw} K{k} R{r} s{stride} [{}]",
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
}

/// `--conv-grad-tiles`: the heuristic's choice and every tile knob value of the Hopper gradient
/// engines (for wgrad also each cooperative tile with stream-K) on the dgrads closest to the
/// issue's target (strided, the 7 x 7 C512 pair and the 14 x 14 C256) and on the five wgrad
/// shapes, to see what the tile and reduction choice is worth there (`--wgrad`: those alone).
fn bench_conv_grad_tiles(h: &kiln::Handle) {
    for &(dt, n, c, hw, k, r, stride, dgrad) in &[
        (
            DataType::Bf16,
            32i64,
            128i64,
            56i64,
            128i64,
            3i64,
            2i64,
            true,
        ),
        (DataType::Bf16, 64, 512, 7, 512, 3, 1, true),
        (DataType::F16, 64, 512, 7, 512, 3, 1, true),
        (DataType::Bf16, 32, 256, 14, 256, 3, 1, true),
        (DataType::Bf16, 64, 512, 7, 512, 3, 1, false),
        (DataType::Bf16, 32, 64, 56, 64, 3, 1, false),
        (DataType::Bf16, 32, 256, 14, 256, 3, 1, false),
        (DataType::Bf16, 32, 128, 28, 128, 1, 1, false),
        (DataType::Bf16, 32, 128, 56, 128, 3, 2, false),
    ] {
        // `--wgrad`: the weight gradients alone.
        if dgrad && std::env::args().any(|a| a == "--wgrad") {
            continue;
        }
        let tiles = kiln_engine_cuda::codegen::hopper_grad::knob_max(if dgrad {
            kiln_core::ConvDirection::Dgrad
        } else {
            kiln_core::ConvDirection::Wgrad
        });
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
        let (what, engine_name) = if dgrad {
            ("conv_dgrad", kiln_engine_cuda::CONV_DGRAD_V2)
        } else {
            ("conv_wgrad", kiln_engine_cuda::CONV_WGRAD_V2)
        };
        // 0: the heuristic's choice; for wgrad the values past the tiles are stream-K.
        for tile in 0..=tiles {
            let mut g = conv_grad_graph(dgrad, dt, shape, true, false);
            g.validate().expect("valid");
            g.build_operation_graph(h).expect("lower");
            g.create_execution_plans(&[HeurMode::A])
                .expect("heuristics");
            g.set_knob(engine_name, kiln_engine_cuda::KNOB_TILE, tile);
            g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                .expect("build conv grad tile");
            time_graph(
                &format!(
                    "{what} {dt} N{n} C{c} H{hw} K{k} R{r} s{stride} [{} tile {tile}]",
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
    let arg_after = |flag: &str| {
        let args: Vec<String> = std::env::args().collect();
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    // `--gemm-write-plans DIR` runs without a GPU (deviceless builds for sm_90).
    if let Some(dir) = arg_after("--gemm-write-plans") {
        gemm_write_plans(&dir);
        return;
    }
    let h = handle(Device::Cuda(0)).expect("cuda:0");
    // `--gemm-plans DIR`: the V2 GEMM cases with every tile knob value, from saved plans.
    if let Some(dir) = arg_after("--gemm-plans") {
        gemm_time_plans(&h, &dir);
        return;
    }
    // `--pooling`: the pooling cases alone.
    if std::env::args().any(|a| a == "--pooling") {
        pooling_benches(&h);
        return;
    }
    // `--norms`: the normalization cases alone.
    if std::env::args().any(|a| a == "--norms") {
        norm_benches(&h);
        return;
    }
    // `--conv-grad-only`: the convolution gradients alone.
    if std::env::args().any(|a| a == "--conv-grad-only") {
        bench_conv_grad(&h);
        return;
    }
    if std::env::args().any(|a| a == "--conv-grad-tiles") {
        bench_conv_grad_tiles(&h);
        return;
    }
    // `--sdpa-bwd-only`: the attention backward cases alone.
    if std::env::args().any(|a| a == "--sdpa-bwd-only") {
        attention_backward_cases(&h);
        return;
    }
    // `--sdpa-only`: the attention forward cases alone (short GPU calls while tuning them).
    let sdpa_only = std::env::args().any(|a| a == "--sdpa-only");
    if !sdpa_only {
        bench_conv_grad(&h);
        other_cases(&h);
    }
    attention_cases(&h, sdpa_only);
}

/// The V2 GEMM cases of the issue (every matmul, bf16 8192³ + bias + gelu, every conv bare and
/// with bias + relu): (case name as scripts/gpu-bench.py's, builder, FLOPs, M, N).
type GemmCase = (String, Box<dyn Fn() -> Graph + Send + Sync>, f64);

fn gemm_cases() -> Vec<GemmCase> {
    let mut cases: Vec<GemmCase> = Vec::new();
    for dt in [DataType::F16, DataType::Bf16] {
        for &(nb, c, hw, k, r, stride) in &[
            (32i64, 64i64, 56i64, 64i64, 3i64, 1i64),
            (32, 256, 14, 256, 3, 1),
            (32, 128, 28, 128, 1, 1),
            (32, 128, 56, 128, 3, 2),
            (64, 512, 7, 512, 3, 1),
        ] {
            for fused in [false, true] {
                let pad = r / 2;
                let out = (hw + 2 * pad - r) / stride + 1;
                cases.push((
                    format!("conv {dt} N{nb} C{c} H{hw} K{k} R{r} s{stride} bias_relu={fused}"),
                    Box::new(move || conv_graph(dt, nb, c, hw, hw, k, r, pad, stride, true, fused)),
                    2.0 * (nb * k * out * out * c * r * r) as f64,
                ));
            }
        }
    }
    for dt in [DataType::Bf16, DataType::F16] {
        for &(m, n, k) in &[
            (4096i64, 4096i64, 4096i64),
            (8192, 8192, 8192),
            (4096, 1024, 4096),
            (16384, 4096, 1024),
        ] {
            cases.push((
                format!("matmul {dt} {m}x{n}x{k}"),
                Box::new(move || matmul_graph(dt, 1, m, k, n, false)),
                2.0 * (m * n * k) as f64,
            ));
        }
    }
    let s = 8192i64;
    cases.push((
        format!("matmul bf16 {s}x{s}x{s} + bias + gelu"),
        Box::new(move || matmul_bias_gelu(DataType::Bf16, s)),
        2.0 * (s * s * s) as f64,
    ));
    cases
}

/// `--gemm-write-plans DIR` (no GPU: deviceless sm_90 builds, two threads): every case of
/// `gemm_cases` with every value of the V2 tile knob (0, the heuristic's, included; a value
/// that keeps B resident where it cannot be is skipped), saved as bare plans
/// `DIR/<case>-<v>.plan` with `DIR/index.tsv` (file, case, knob, FLOPs). `--gemm-plans DIR` (on
/// the GPU) loads and times them, so the GPU call compiles nothing.
fn gemm_write_plans(dir: &str) {
    let cases = gemm_cases();
    let tiles = kiln_engine_cuda::codegen::hopper::KNOB_MAX;
    let in_ring = kiln_engine_cuda::codegen::hopper::CONFIGS.len() as i64;
    std::fs::create_dir_all(dir).expect("plan folder");
    let jobs: Vec<(usize, i64)> = (0..cases.len())
        .flat_map(|i| (0..=tiles).map(move |v| (i, v)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lines = std::sync::Mutex::new(Vec::new());
    let threads: usize = std::env::var("KILN_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                let h = handle(Device::CudaTarget(90)).expect("sm_90 target");
                loop {
                    let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(i, v)) = jobs.get(j) else { break };
                    let (name, make, flops) = &cases[i];
                    let mut g = make();
                    g.validate().expect("valid");
                    g.build_operation_graph(&h).expect("lower");
                    g.create_execution_plans(&[HeurMode::A]).expect("configs");
                    for eng in [kiln_engine_cuda::MATMUL_V2, kiln_engine_cuda::CONV_FPROP_V2] {
                        g.set_knob(eng, kiln_engine_cuda::KNOB_TILE, v);
                    }
                    g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                        .unwrap_or_else(|e| panic!("{name} tile={v}: {e}"));
                    // A value the V2 engine refuses (B resident where it cannot be) leaves the
                    // plan to the V1 engine: not a tile of the V2 engine, so not timed.
                    if !engine(&g).ends_with("_V2") {
                        assert!(v > in_ring, "{name} tile={v}: built by {}", engine(&g));
                        eprintln!("skipped {name} tile={v}: B does not fit");
                        continue;
                    }
                    let file = format!("{i:02}-{v}.plan");
                    std::fs::write(
                        format!("{dir}/{file}"),
                        g.serialize_compiled_plan().expect("save"),
                    )
                    .expect("write plan");
                    eprintln!("built {name} tile={v}");
                    lines
                        .lock()
                        .expect("lines")
                        .push(format!("{file}\t{i}\t{v}\t{flops}\n"));
                }
            });
        }
    });
    let mut lines = lines.into_inner().expect("lines");
    lines.sort();
    std::fs::write(format!("{dir}/index.tsv"), lines.concat()).expect("index");
}

fn gemm_time_plans(h: &kiln::Handle, dir: &str) {
    let cases = gemm_cases();
    let index = std::fs::read_to_string(format!("{dir}/index.tsv")).expect("index.tsv");
    let mut by_case: Vec<Vec<(i64, String)>> = vec![Vec::new(); cases.len()];
    for line in index.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (i, v): (usize, i64) = (f[1].parse().expect("case"), f[2].parse().expect("knob"));
        by_case[i].push((v, f[0].to_string()));
    }
    let dev = kiln_cuda_driver::DeviceContext::new(0).expect("device");
    for (i, plans) in by_case.iter().enumerate() {
        let Some(first) = plans.first() else { continue };
        let (name, make, flops) = &cases[i];
        let load = |file: &str| {
            let bytes = std::fs::read(format!("{dir}/{file}")).expect("plan");
            let mut g = make();
            g.validate().expect("valid");
            g.build_operation_graph(h).expect("lower");
            g.deserialize_compiled_plan(h, &bytes)
                .unwrap_or_else(|e| panic!("{name} {file}: load: {e}"));
            g
        };
        // One set of random inputs per case (never zeros), shared by its tile configurations.
        let g0 = load(&first.1);
        let og = g0.op_graph().expect("graph").clone();
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
        for (v, file) in plans {
            let g = load(file);
            let plan = g.plan().expect("plan");
            // A stream-K plan's tile counters and partial tiles.
            let ws_bytes = plan.workspace_size();
            let ws = (ws_bytes > 0)
                .then(|| kiln_cuda_driver::DeviceMemory::zeroed(0, ws_bytes).expect("workspace"));
            let ws_ptr = ws.as_ref().map_or(std::ptr::null_mut(), |w| {
                w.as_ptr() as *mut std::ffi::c_void
            });
            // SAFETY: every pointer addresses device memory sized for its tensor (the same
            // graph's bound tensors); the workspace, when there is one, holds ws_bytes.
            let run =
                || unsafe { plan.execute(h, &b, ws_ptr, ws_bytes) }.map_err(|e| e.to_string());
            for _ in 0..3 {
                run().expect("warm-up");
            }
            let iters = bench_iters();
            let ms = kiln_cuda_driver::time_ms(&dev, || {
                for _ in 0..iters {
                    run()?;
                }
                Ok(())
            })
            .expect("timing") as f64
                / iters as f64;
            let star = if *v == 0 { " heuristic" } else { "" };
            println!(
                "{{\"case\":\"{name} [{} tile={v}{star}]\",\"ms\":{ms:.5},\"tflops\":{:.2},\"tbps\":0.000}}",
                engine(&g),
                flops / ms / 1e9
            );
        }
    }
}

fn other_cases(h: &kiln::Handle) {
    let n = 1i64 << 28;
    for mode in [PointwiseMode::Add, PointwiseMode::Relu] {
        let mut g = simple_pointwise(mode, n);
        g.build(h, &[HeurMode::A]).expect("build");
        let bytes = if mode == PointwiseMode::Add {
            12.0
        } else {
            8.0
        } * n as f64;
        time_graph(&format!("pointwise {mode:?} 2^28 f32"), &g, h, 0.0, bytes);
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
                g.build(h, &[HeurMode::A]).expect("build conv");
                let out = (hw + 2 * pad - r) / stride + 1;
                let flops = 2.0 * (nb * k * out * out * c * r * r) as f64;
                time_graph(
                    &format!(
                        "conv {dt} N{nb} C{c} H{hw} K{k} R{r} s{stride} bias_relu={fused} [{}]",
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
    // The matmul cases, M x N x K.
    for dt in [DataType::Bf16, DataType::F16] {
        for &(m, n, k) in &[
            (4096i64, 4096i64, 4096i64),
            (8192, 8192, 8192),
            (4096, 1024, 4096),
            (16384, 4096, 1024),
        ] {
            let mut g = matmul_graph(dt, 1, m, k, n, false);
            g.build(h, &[HeurMode::A]).expect("build matmul");
            time_graph(
                &format!("matmul {dt} {m}x{n}x{k} [{}]", engine(&g)),
                &g,
                h,
                2.0 * (m * n * k) as f64,
                0.0,
            );
        }
    }
    let s = 8192i64;
    let mut g = matmul_bias_gelu(DataType::Bf16, s);
    g.build(h, &[HeurMode::A])
        .expect("build matmul + bias + gelu");
    time_graph(
        &format!("matmul bf16 {s}x{s}x{s} + bias + gelu [{}]", engine(&g)),
        &g,
        h,
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
}

/// The attention backward, bf16, B,S,H,D, random data (o, do and stats too): the heuristics'
/// engine (the Hopper backward on sm_90) and the FA2 engine in one run; GQA (32 query heads over
/// 8); a ragged batch (lengths 4096, 3072, 2048, 1024 from seq_len tensors). FLOPs: 2.5 times
/// the forward's 4 B H S^2 D (halved when causal; per batch its own lengths when ragged).
/// KILN_BENCH_SDPA_CASES=S:D,... limits the square cases; --heuristic-only drops FA2.
fn attention_backward_cases(h: &kiln::Handle) {
    let only: Option<Vec<(i64, i64)>> = std::env::var("KILN_BENCH_SDPA_CASES").ok().map(|v| {
        v.split(',')
            .filter_map(|c| c.split_once(':'))
            .filter_map(|(s, d)| Some((s.parse().ok()?, d.parse().ok()?)))
            .collect()
    });
    let heuristic_only = std::env::args().any(|a| a == "--heuristic-only");
    let half = |causal: bool| if causal { 0.5 } else { 1.0 };
    for (s, d) in [
        (1024i64, 64i64),
        (1024, 128),
        (4096, 64),
        (4096, 128),
        (16384, 64),
        (16384, 128),
    ] {
        if only.as_ref().is_some_and(|o| !o.contains(&(s, d))) {
            continue;
        }
        for causal in [false, true] {
            let flops = 2.5 * 4.0 * (4 * 16 * s * s * d) as f64 * half(causal);
            let mut g = sdpa_backward_bench_graph(DataType::Bf16, 4, 16, 16, s, d, causal);
            g.build(h, &[HeurMode::A]).expect("build sdpa_backward");
            let name = |g: &Graph| {
                format!(
                    "sdpa bwd bf16 B4 H16 S{s} D{d} causal={causal} [{}]",
                    engine(g)
                )
            };
            time_graph(&name(&g), &g, h, flops, 0.0);
            if engine(&g) != kiln_engine_cuda::SDPA_FA2_V1 && !heuristic_only && s <= 4096 {
                let mut g = sdpa_backward_bench_graph(DataType::Bf16, 4, 16, 16, s, d, causal);
                g.deselect_engines(&[kiln_engine_cuda::SDPA_FA3_BWD_V1]);
                g.build(h, &[HeurMode::A]).expect("build sdpa_backward fa2");
                time_graph(&name(&g), &g, h, flops, 0.0);
            }
        }
    }
    for causal in [false, true] {
        let mut g = sdpa_backward_bench_graph(DataType::Bf16, 4, 32, 8, 4096, 128, causal);
        g.build(h, &[HeurMode::A]).expect("build sdpa_backward gqa");
        time_graph(
            &format!(
                "sdpa bwd bf16 B4 Hq32 Hkv8 S4096 D128 causal={causal} [{}]",
                engine(&g)
            ),
            &g,
            h,
            2.5 * 4.0 * (4i64 * 32 * 4096 * 4096 * 128) as f64 * half(causal),
            0.0,
        );
    }
    let lens = [4096.0f64, 3072.0, 2048.0, 1024.0];
    for causal in [false, true] {
        let mut g =
            sdpa_backward_bench_graph_lens(DataType::Bf16, 4, 16, 16, 4096, 128, causal, true);
        g.build(h, &[HeurMode::A])
            .expect("build sdpa_backward ragged");
        let flops: f64 = lens
            .iter()
            .map(|l| 2.5 * 4.0 * 16.0 * l * l * 128.0 * half(causal))
            .sum();
        time_graph_filled(
            &format!(
                "sdpa bwd bf16 ragged 4096,3072,2048,1024 H16 D128 causal={causal} [{}]",
                engine(&g)
            ),
            &g,
            h,
            flops,
            0.0,
            &|name| matches!(name, "seq_len_q" | "seq_len_kv").then(|| lens.to_vec()),
        );
    }
}

/// The Hopper attention variants (tile knob values) listed in KILN_BENCH_FA3_VARIANTS.
fn fa3_variants_from_env() -> Option<Vec<i64>> {
    std::env::var("KILN_BENCH_FA3_VARIANTS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
}

/// " tile=v" for a variant other than the heuristics' choice (0).
fn variant_label(v: i64) -> String {
    if v == 0 {
        String::new()
    } else {
        format!(" tile={v}")
    }
}

/// Builds `g` with the heuristics' choice, with the Hopper attention engine's tile knob set to
/// `v` when `v` is not 0.
fn build_fa3_variant(g: &mut Graph, h: &kiln::Handle, v: i64) {
    if v == 0 {
        g.build(h, &[HeurMode::A]).expect("build sdpa");
        return;
    }
    g.validate().expect("valid");
    g.build_operation_graph(h).expect("lower");
    g.create_execution_plans(&[HeurMode::A]).expect("configs");
    g.set_knob(
        kiln_engine_cuda::SDPA_FA3_V1,
        kiln_engine_cuda::KNOB_TILE,
        v,
    );
    g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
        .expect("build sdpa variant");
}

fn attention_cases(h: &kiln::Handle, sdpa_only: bool) {
    // Attention, B,S,H,D layout, batch 4 x 16 heads, random data. FLOPs as FlashAttention counts
    // them: 4 B H S^2 D forward (halved when causal), 2.5 times that backward. The forward runs
    // on the heuristics' choice (the Hopper engine on sm_90) and on the FA2 engine, in one run.
    // KILN_BENCH_SDPA_CASES=S:D,S:D,... limits the cases, and --heuristic-only times the
    // heuristics' choice alone (no FA2 peer, no variants): short GPU calls.
    let only: Option<Vec<(i64, i64)>> = std::env::var("KILN_BENCH_SDPA_CASES").ok().map(|v| {
        v.split(',')
            .filter_map(|c| c.split_once(':'))
            .filter_map(|(s, d)| Some((s.parse().ok()?, d.parse().ok()?)))
            .collect()
    });
    let heuristic_only = std::env::args().any(|a| a == "--heuristic-only");
    for (s, d) in [
        (1024i64, 64i64),
        (1024, 128),
        (4096, 64),
        (4096, 128),
        (16384, 64),
        (16384, 128),
    ] {
        if only.as_ref().is_some_and(|o| !o.contains(&(s, d))) {
            continue;
        }
        for causal in [false, true] {
            let flops = 4.0 * (4 * 16 * s * s * d) as f64 * if causal { 0.5 } else { 1.0 };
            let mut g = sdpa_graph(DataType::Bf16, 4, 16, 16, s, s, d, causal, false);
            g.build(h, &[HeurMode::A]).expect("build sdpa");
            time_graph(
                &format!(
                    "sdpa fwd bf16 B4 H16 S{s} D{d} causal={causal} [{}]",
                    engine(&g)
                ),
                &g,
                h,
                flops,
                0.0,
            );
            // The Hopper engine's schedule variants (its tile knob; the default above is one of
            // them), same case, at 4k (each variant compiles on the GPU machine).
            // At 1k the persistent variants alone (their gain is per block, so largest there),
            // also with --heuristic-only.
            // KILN_BENCH_FA3_VARIANTS=v,v,... times those variants instead, at every size.
            let variants = &kiln_engine_cuda::codegen::sdpa_fa3::VARIANTS;
            let timed: Vec<i64> = fa3_variants_from_env().unwrap_or_else(|| {
                (1..=variants.len() as i64)
                    .filter(|&v| match s {
                        4096 => !heuristic_only || variants[v as usize - 1].persistent,
                        1024 => variants[v as usize - 1].persistent,
                        _ => false,
                    })
                    .collect()
            });
            if engine(&g) == kiln_engine_cuda::SDPA_FA3_V1 {
                for v in timed {
                    let mut g = sdpa_graph(DataType::Bf16, 4, 16, 16, s, s, d, causal, false);
                    g.validate().expect("valid");
                    g.build_operation_graph(h).expect("lower");
                    g.create_execution_plans(&[HeurMode::A]).expect("configs");
                    g.set_knob(
                        kiln_engine_cuda::SDPA_FA3_V1,
                        kiln_engine_cuda::KNOB_TILE,
                        v,
                    );
                    g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                        .expect("build sdpa variant");
                    time_graph(
                        &format!(
                            "sdpa fwd bf16 B4 H16 S{s} D{d} causal={causal} [{} tile={v}]",
                            engine(&g)
                        ),
                        &g,
                        h,
                        flops,
                        0.0,
                    );
                }
            }
            if engine(&g) != kiln_engine_cuda::SDPA_FA2_V1 && !heuristic_only {
                let mut g = sdpa_graph(DataType::Bf16, 4, 16, 16, s, s, d, causal, false);
                g.deselect_engines(&[kiln_engine_cuda::SDPA_FA3_V1]);
                g.build(h, &[HeurMode::A]).expect("build sdpa fa2");
                time_graph(
                    &format!(
                        "sdpa fwd bf16 B4 H16 S{s} D{d} causal={causal} [{}]",
                        engine(&g)
                    ),
                    &g,
                    h,
                    flops,
                    0.0,
                );
            }
            if s <= 4096 && !sdpa_only {
                let mut g = sdpa_backward_bench_graph(DataType::Bf16, 4, 16, 16, s, d, causal);
                g.build(h, &[HeurMode::A]).expect("build sdpa_backward");
                time_graph(
                    &format!("sdpa bwd bf16 B4 H16 S{s} D{d} causal={causal}"),
                    &g,
                    h,
                    2.5 * flops,
                    0.0,
                );
            }
        }
    }
    for v in std::iter::once(0).chain(fa3_variants_from_env().unwrap_or_default()) {
        let mut g = sdpa_graph(DataType::Bf16, 4, 32, 8, 4096, 4096, 128, true, false);
        build_fa3_variant(&mut g, h, v);
        time_graph(
            &format!(
                "sdpa fwd bf16 B4 Hq32 Hkv8 S4096 D128 causal=true [{}{}]",
                engine(&g),
                variant_label(v)
            ),
            &g,
            h,
            4.0 * (4i64 * 32 * 4096 * 4096 * 128) as f64 * 0.5,
            0.0,
        );
    }
    // A ragged batch: lengths 4096, 3072, 2048, 1024 from seq_len tensors, H16 D128 (the
    // backward's ragged case); FLOPs per batch at its own length.
    let lens = [4096.0f64, 3072.0, 2048.0, 1024.0];
    for (causal, v) in [false, true].into_iter().flat_map(|c| {
        std::iter::once(0)
            .chain(fa3_variants_from_env().unwrap_or_default())
            .map(move |v| (c, v))
    }) {
        let mut g = sdpa_ragged_graph(4, 16, 4096, 128, causal);
        build_fa3_variant(&mut g, h, v);
        let flops: f64 = lens
            .iter()
            .map(|l| 4.0 * 16.0 * l * l * 128.0 * if causal { 0.5 } else { 1.0 })
            .sum();
        time_graph_filled(
            &format!(
                "sdpa fwd bf16 ragged 4096,3072,2048,1024 H16 D128 causal={causal} [{}{}]",
                engine(&g),
                variant_label(v)
            ),
            &g,
            h,
            flops,
            0.0,
            &|name| matches!(name, "seq_len_q" | "seq_len_kv").then(|| lens.to_vec()),
        );
    }
    if sdpa_only {
        return;
    }
    // Plan load time (module load included), conv plan.
    let mut g = conv_graph(DataType::F16, 32, 64, 56, 56, 64, 3, 1, 1, true, true);
    g.build(h, &[HeurMode::A]).expect("build");
    let bytes = g.to_compiled_plan_binary().expect("save");
    let mut best = f64::MAX;
    let mut total = 0.0;
    let reps = 200;
    for _ in 0..reps {
        let t = Instant::now();
        let p = kiln::from_compiled_plan_binary(h, &bytes).expect("load");
        let dt = t.elapsed().as_secs_f64() * 1e3;
        drop(p);
        best = best.min(dt);
        total += dt;
    }
    norm_benches(h);
    pooling_benches(h);
    println!("{{\"case\":\"plan load conv (module load included)\",\"best_ms\":{best:.4},\"mean_ms\":{:.4},\"bytes\":{}}}", total / reps as f64, bytes.len());
}
