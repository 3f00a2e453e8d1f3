//! The optimized engines against the reference engine on random data.

use super::{ConvDgradEngine, ConvFpropEngine, ConvWgradEngine, MatmulEngine, PointwiseEngine};
use crate::engine::CpuEngine;
use crate::reference;
use crate::tensor_map::{for_each_offset, TensorMap};
use crate::CpuPlugin;
use kiln_core::tensor::{channels_last_strides, packed_strides};
use kiln_core::{
    ConvDirection, ConvOp, ConvParams, DataType, MatmulOp, Node, Op, OpGraph, PointwiseMode,
    PointwiseOp, PointwiseParams, TensorDesc,
};
use kiln_plugin_sdk::{EnginePlugin, KilnTensorBinding, KnobSetting};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;

fn tensor(uid: i64, dims: &[i64], strides: &[i64], dt: DataType) -> TensorDesc {
    TensorDesc {
        uid,
        name: format!("t{uid}"),
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        data_type: dt,
        is_virtual: false,
        alignment: 0,
        scalar: None,
    }
}

fn virt(uid: i64, dims: &[i64], dt: DataType) -> TensorDesc {
    TensorDesc {
        is_virtual: true,
        ..tensor(uid, dims, &packed_strides(dims), dt)
    }
}

fn scalar(uid: i64, v: f64) -> TensorDesc {
    TensorDesc {
        scalar: Some(v),
        ..tensor(uid, &[1], &[1], DataType::F32)
    }
}

/// Strides with every dim padded by one extra element of storage ("odd" strides).
fn padded_strides(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * (dims[i + 1] + 1);
    }
    strides
}

fn pw(name: &str, mode: PointwiseMode, a: i64, b: Option<i64>, out: i64) -> Node {
    pw_params(name, mode, a, b, out, PointwiseParams::default())
}

fn pw_params(
    name: &str,
    mode: PointwiseMode,
    a: i64,
    b: Option<i64>,
    out: i64,
    params: PointwiseParams,
) -> Node {
    Node {
        name: name.into(),
        compute_type: DataType::F32,
        op: Op::Pointwise(PointwiseOp {
            mode,
            a,
            b,
            c: None,
            out,
            params,
        }),
    }
}

/// Host storage of one bound tensor and its logical values (as stored, in f64).
struct Host {
    bytes: Vec<u64>,
    values: Vec<f64>,
}

fn offsets(t: &TensorDesc) -> Vec<usize> {
    let mut v = Vec::new();
    for_each_offset(&t.dims, &t.strides, |o| v.push(o));
    v
}

fn host_random(t: &TensorDesc, rng: &mut StdRng) -> Host {
    let size = t.data_type.size();
    let words = (t.storage_bytes().unwrap_or(0) + 16) / 8 + 1;
    // Fill the gaps between elements with garbage so a read of the wrong element shows.
    let mut bytes: Vec<u64> = (0..words).map(|_| rng.random()).collect();
    let mut values = Vec::new();
    // SAFETY: a u64 buffer viewed as bytes.
    let raw = unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut u8, words * 8) };
    for o in offsets(t) {
        // Magnitudes in [0.25, 2) with either sign: away from the poles of log, 1/x, rsqrt.
        let m: f64 = rng.random_range(0.25..2.0);
        let v = if rng.random_bool(0.5) { m } else { -m };
        let v = t.data_type.round_trip(v);
        t.data_type.write_f64(v, &mut raw[o * size..]).unwrap();
        values.push(v);
    }
    Host { bytes, values }
}

fn host_read(t: &TensorDesc, h: &Host) -> Vec<f64> {
    let size = t.data_type.size();
    // SAFETY: a u64 buffer viewed as bytes.
    let raw =
        unsafe { std::slice::from_raw_parts(h.bytes.as_ptr() as *const u8, h.bytes.len() * 8) };
    offsets(t)
        .into_iter()
        .map(|o| t.data_type.read_f64(&raw[o * size..]).unwrap())
        .collect()
}

/// Runs `engine` on random inputs and compares every output with the reference engine:
/// |got - want| <= tol * (|want| + scale), with `scale` the expected magnitude of the values.
fn check(engine: &dyn CpuEngine, graph: OpGraph, knobs: &[i64], tol: f64, scale: f64, seed: u64) {
    let mut all_knobs: Vec<i64> = engine.knobs().iter().map(|k| k.default).collect();
    all_knobs[..knobs.len()].copy_from_slice(knobs);
    check_run(engine, graph, tol, scale, seed, |graph, bindings| {
        let prepared = engine.prepare(graph, &all_knobs).unwrap();
        // Poisoned (every f32 of it a NaN): an engine owes nothing to the workspace's content.
        let mut workspace = vec![0xFFu8; prepared.workspace_size() + 1];
        // SAFETY: every binding points at storage for its tensor's layout; the workspace holds
        // workspace_size() bytes (offset by one so that its alignment is exercised).
        unsafe {
            let map = TensorMap::new(graph, bindings).unwrap();
            prepared
                .execute(&map, workspace.as_mut_ptr().add(1))
                .unwrap();
        }
    });
}

/// Binds random inputs for `graph`, calls `run` with the bindings (which must execute the graph
/// into them) and compares every output with the reference engine, as [`check`] describes.
fn check_run(
    engine: &dyn CpuEngine,
    mut graph: OpGraph,
    tol: f64,
    scale: f64,
    seed: u64,
    run: impl FnOnce(&OpGraph, &[KilnTensorBinding]),
) {
    graph.validate().unwrap();
    engine.supports(&graph).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut hosts: HashMap<i64, Host> = HashMap::new();
    let mut inputs = HashMap::new();
    for t in graph.bound_tensors() {
        let h = host_random(t, &mut rng);
        if graph.producer(t.uid).is_none() {
            inputs.insert(t.uid, h.values.clone());
        }
        hosts.insert(t.uid, h);
    }
    let want = reference::evaluate(&graph, &inputs).unwrap();
    let bindings: Vec<KilnTensorBinding> = hosts
        .iter_mut()
        .map(|(&uid, h)| KilnTensorBinding {
            uid,
            ptr: h.bytes.as_mut_ptr() as *mut _,
        })
        .collect();
    run(&graph, &bindings);
    assert!(!want.is_empty());
    for (uid, want) in &want {
        let t = graph.tensor(*uid).unwrap();
        let got = host_read(t, &hosts[uid]);
        let tol = tol.max(t.data_type.epsilon() * 4.0);
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let ok =
                (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol * (w.abs() + scale);
            assert!(
                ok,
                "{}: {} element {i}: got {g}, want {w} (tol {tol}, graph {})",
                engine.name(),
                t.label(),
                graph.name
            );
        }
    }
}

fn tol_of(dt: DataType) -> f64 {
    match dt {
        DataType::F32 => 1e-5,
        DataType::F16 => 2e-3,
        _ => 1.6e-2,
    }
}

// ---------------------------------------------------------------- pointwise

#[test]
fn pointwise_every_mode_broadcast_and_scalar() {
    let dt = DataType::F32;
    // binary_select has its own test below.
    let modes = PointwiseMode::ALL
        .into_iter()
        .filter(|m| *m != PointwiseMode::BinarySelect);
    for (i, mode) in modes.enumerate() {
        let mut tensors = vec![tensor(1, &[3, 5, 7], &packed_strides(&[3, 5, 7]), dt)];
        let mut nodes = Vec::new();
        if mode.is_binary() {
            tensors.push(tensor(2, &[1, 5, 1], &[5, 1, 1], dt));
            tensors.push(tensor(3, &[3, 5, 7], &padded_strides(&[3, 5, 7]), dt));
            tensors.push(scalar(4, 0.75));
            tensors.push(tensor(5, &[3, 5, 7], &packed_strides(&[3, 5, 7]), dt));
            nodes.push(pw("n1", mode, 1, Some(2), 3));
            nodes.push(pw("n2", mode, 4, Some(1), 5));
        } else {
            tensors.push(tensor(3, &[3, 5, 7], &padded_strides(&[3, 5, 7]), dt));
            nodes.push(pw_params(
                "n1",
                mode,
                1,
                None,
                3,
                PointwiseParams {
                    relu_lower_clip: Some(-0.5),
                    relu_upper_clip: Some(1.5),
                    relu_lower_clip_slope: Some(0.1),
                    elu_alpha: Some(0.7),
                    softplus_beta: Some(2.0),
                    swish_beta: Some(1.5),
                    axis: (mode == PointwiseMode::GenIndex).then_some(1),
                },
            ));
        }
        let graph = OpGraph {
            name: mode.name().into(),
            tensors,
            nodes,
        };
        check(&PointwiseEngine, graph, &[], 2e-6, 1e-6, i as u64);
    }
}

/// gen_index along each axis (one of them broadcast further), comparisons into bool and i8,
/// logical modes, binary_select with a bool mask into fp8, integer arithmetic: against the
/// reference, packed and strided.
#[test]
fn pointwise_gen_index_select_logical_and_integral_types() {
    for (i, strided) in [false, true].into_iter().enumerate() {
        let d = [3i64, 37, 70];
        let st = |dims: &[i64]| {
            if strided {
                padded_strides(dims)
            } else {
                packed_strides(dims)
            }
        };
        let axis = |a| PointwiseParams {
            axis: Some(a),
            ..PointwiseParams::default()
        };
        let pw3 = |name: &str, a, b, c, out| Node {
            name: name.into(),
            compute_type: DataType::F32,
            op: Op::Pointwise(PointwiseOp {
                mode: PointwiseMode::BinarySelect,
                a,
                b: Some(b),
                c: Some(c),
                out,
                params: PointwiseParams::default(),
            }),
        };
        let graph = OpGraph {
            name: format!("integral strided={strided}"),
            tensors: vec![
                tensor(1, &d, &st(&d), DataType::F32),
                tensor(2, &[1, 37, 1], &st(&[1, 37, 1]), DataType::F16),
                tensor(3, &d, &st(&d), DataType::I32),
                tensor(4, &d, &st(&d), DataType::I32),
                tensor(5, &[3, 1, 70], &st(&[3, 1, 70]), DataType::I32),
                tensor(6, &d, &st(&d), DataType::Boolean),
                tensor(7, &d, &st(&d), DataType::I8),
                tensor(8, &d, &st(&d), DataType::Fp8E4m3),
                tensor(9, &[3, 1, 70], &st(&[3, 1, 70]), DataType::I32),
                tensor(10, &d, &st(&d), DataType::Fp8E5m2),
                virt(11, &d, DataType::F32),
                tensor(12, &d, &st(&d), DataType::I8),
            ],
            nodes: vec![
                pw_params("rows", PointwiseMode::GenIndex, 1, None, 3, axis(1)),
                pw_params("cols", PointwiseMode::GenIndex, 1, None, 4, axis(2)),
                pw_params("planes", PointwiseMode::GenIndex, 5, None, 9, axis(0)),
                pw("lt", PointwiseMode::CmpLt, 1, Some(2), 6),
                pw("not", PointwiseMode::LogicalNot, 6, None, 7),
                pw3("select", 1, 2, 6, 8),
                pw("mod", PointwiseMode::Mod, 4, Some(9), 10),
                pw("and", PointwiseMode::LogicalAnd, 3, Some(4), 11),
                pw("or", PointwiseMode::LogicalOr, 11, Some(7), 12),
            ],
        };
        check(&PointwiseEngine, graph, &[], 1e-6, 1.0, 40 + i as u64);
    }
}

/// a*b feeds relu (an output) and an add with a row vector; a second output is smaller than
/// the iteration space (it broadcasts), and the space spans several blocks.
fn pointwise_dag(dt: DataType, strided: bool) -> OpGraph {
    let d = [4i64, 33, 65];
    let st = |dims: &[i64]| {
        if strided {
            padded_strides(dims)
        } else {
            packed_strides(dims)
        }
    };
    OpGraph {
        name: format!("dag {dt} strided={strided}"),
        tensors: vec![
            tensor(1, &d, &st(&d), dt),
            tensor(2, &d, &channels_last_strides(&d), dt),
            tensor(3, &[1, 1, 65], &[65, 65, 1], dt),
            virt(4, &d, dt),
            tensor(5, &d, &st(&d), dt),
            tensor(6, &d, &st(&d), dt),
            tensor(7, &[4, 1, 65], &st(&[4, 1, 65]), dt),
            scalar(8, -0.25),
            tensor(9, &[4, 1, 65], &st(&[4, 1, 65]), dt),
            virt(10, &d, dt),
            tensor(11, &d, &st(&d), dt),
            tensor(12, &[4, 33, 1], &st(&[4, 33, 1]), dt),
            tensor(13, &[4, 33, 1], &st(&[4, 33, 1]), dt),
            tensor(14, &d, &st(&d), dt),
        ],
        nodes: vec![
            pw("mul", PointwiseMode::Mul, 1, Some(2), 4),
            pw("relu", PointwiseMode::Relu, 4, None, 5),
            pw("add", PointwiseMode::Add, 4, Some(3), 6),
            pw("small", PointwiseMode::Mul, 8, Some(7), 9),
            pw("big", PointwiseMode::Sub, 9, Some(5), 10),
            pw("tanh", PointwiseMode::Tanh, 10, None, 11),
            // An output broadcast along the innermost dim of the space.
            pw("column", PointwiseMode::Mul, 12, Some(8), 13),
            pw("wide", PointwiseMode::Add, 13, Some(1), 14),
        ],
    }
}

#[test]
fn pointwise_dag_every_type_and_layout() {
    for (i, dt) in [DataType::F32, DataType::F16, DataType::Bf16]
        .into_iter()
        .enumerate()
    {
        for strided in [false, true] {
            check(
                &PointwiseEngine,
                pointwise_dag(dt, strided),
                &[],
                tol_of(dt),
                1.0,
                i as u64,
            );
        }
    }
}

#[test]
fn pointwise_refuses_other_ops_and_f64() {
    let mut g = pointwise_dag(DataType::F32, false);
    g.tensors[0].data_type = DataType::F64;
    let why = PointwiseEngine.supports(&g).unwrap_err();
    assert!(why.contains("t1") && why.contains("f64"), "{why}");
    let why = PointwiseEngine
        .supports(&conv_graph(&ConvCase::basic(), &[], DataType::F32))
        .unwrap_err();
    assert!(why.contains("conv_fprop"), "{why}");
}

// ---------------------------------------------------------------- convolution

#[derive(Clone, Debug)]
struct ConvCase {
    n: i64,
    c: i64,
    k: i64,
    input: Vec<i64>,
    filter: Vec<i64>,
    pad: (Vec<i64>, Vec<i64>),
    stride: Vec<i64>,
    dilation: Vec<i64>,
    groups: i64,
    layout: Layout,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    Nchw,
    Nhwc,
    Odd,
}

impl ConvCase {
    /// A 2-D NCHW case of `n` images of `c` channels and `input` rows × columns, `k` filters of
    /// `filter` in `groups` groups, padded by `pad` (before, after), stride and dilation 1.
    fn plane(
        (n, c, k): (i64, i64, i64),
        input: [i64; 2],
        filter: [i64; 2],
        pad: ([i64; 2], [i64; 2]),
        groups: i64,
    ) -> ConvCase {
        ConvCase {
            n,
            c,
            k,
            input: input.to_vec(),
            filter: filter.to_vec(),
            pad: (pad.0.to_vec(), pad.1.to_vec()),
            groups,
            ..ConvCase::basic()
        }
    }

    /// This case with `stride` and `dilation`.
    fn strided(self, stride: [i64; 2], dilation: [i64; 2]) -> ConvCase {
        ConvCase {
            stride: stride.to_vec(),
            dilation: dilation.to_vec(),
            ..self
        }
    }

    fn basic() -> ConvCase {
        ConvCase {
            n: 2,
            c: 3,
            k: 4,
            input: vec![7, 6],
            filter: vec![3, 3],
            pad: (vec![1, 1], vec![1, 1]),
            stride: vec![1, 1],
            dilation: vec![1, 1],
            groups: 1,
            layout: Layout::Nchw,
        }
    }
}

/// Epilogue steps: (mode, other operand).
#[derive(Clone, Copy, Debug)]
enum Other {
    None,
    Bias,
    Full,
    Scalar(f64),
    ScalarLeft(f64),
    BiasLeft,
    Acc,
}

fn layout_strides(dims: &[i64], layout: Layout) -> Vec<i64> {
    match layout {
        Layout::Nchw => packed_strides(dims),
        Layout::Nhwc => channels_last_strides(dims),
        Layout::Odd => {
            // Channels outermost-but-one with padded rows: neither NCHW nor NHWC.
            let mut order: Vec<usize> = vec![1, 0];
            order.extend(2..dims.len());
            let mut strides = vec![0i64; dims.len()];
            let mut acc = 1i64;
            for &axis in order.iter().rev() {
                strides[axis] = acc;
                acc *= dims[axis] + 1;
            }
            strides
        }
    }
}

/// A conv graph with uids x=1, w=2, y=3 and an epilogue of `steps` over dtype `dt`.
fn conv_graph(case: &ConvCase, steps: &[(PointwiseMode, Other)], dt: DataType) -> OpGraph {
    let mut xd = vec![case.n, case.c];
    xd.extend(&case.input);
    let mut wd = vec![case.k, case.c / case.groups];
    wd.extend(&case.filter);
    let params = ConvParams {
        pre_padding: case.pad.0.clone(),
        post_padding: case.pad.1.clone(),
        stride: case.stride.clone(),
        dilation: case.dilation.clone(),
    };
    let yd = kiln_core::shape::conv_output_dims(&xd, &wd, &params, "test").unwrap();
    let mut tensors = vec![
        tensor(1, &xd, &layout_strides(&xd, case.layout), dt),
        tensor(2, &wd, &layout_strides(&wd, case.layout), dt),
    ];
    let mut nodes = vec![Node {
        name: "conv".into(),
        compute_type: DataType::F32,
        op: Op::Conv(ConvOp {
            direction: ConvDirection::Fprop,
            x: 1,
            w: 2,
            y: 3,
            params,
        }),
    }];
    append_epilogue(&mut tensors, &mut nodes, &yd, steps, dt, case.layout);
    OpGraph {
        name: format!("{case:?} {steps:?} {dt}"),
        tensors,
        nodes,
    }
}

/// Appends the anchor output (uid 3) and an epilogue chain after it.
fn append_epilogue(
    tensors: &mut Vec<TensorDesc>,
    nodes: &mut Vec<Node>,
    yd: &[i64],
    steps: &[(PointwiseMode, Other)],
    dt: DataType,
    layout: Layout,
) {
    let out_strides = layout_strides(yd, layout);
    let mut cur = 3i64;
    tensors.push(if steps.is_empty() {
        tensor(3, yd, &out_strides, dt)
    } else {
        virt(3, yd, dt)
    });
    for (i, &(mode, other)) in steps.iter().enumerate() {
        // Step i writes uid 100 + 10 i and reads its operand from uid 105 + 10 i.
        let out = 100 + 10 * i as i64;
        let last = i + 1 == steps.len();
        tensors.push(if last {
            tensor(out, yd, &out_strides, dt)
        } else {
            virt(out, yd, dt)
        });
        let mut bias_dims = vec![1i64; yd.len()];
        bias_dims[1] = yd[1];
        if yd.len() == 2 {
            // Matmul outputs: a row vector over the columns.
            bias_dims = vec![1, yd[1]];
        }
        let mut operand = |dims: &[i64], scalar_value: Option<f64>| {
            let uid = out + 5;
            tensors.push(match scalar_value {
                Some(v) => scalar(uid, v),
                None => tensor(uid, dims, &layout_strides(dims, layout), dt),
            });
            uid
        };
        let (a, b) = match other {
            Other::None => (cur, None),
            Other::Bias => (cur, Some(operand(&bias_dims, None))),
            Other::BiasLeft => (operand(&bias_dims, None), Some(cur)),
            Other::Full => (cur, Some(operand(yd, None))),
            Other::Scalar(v) => (cur, Some(operand(&[1], Some(v)))),
            Other::ScalarLeft(v) => (operand(&[1], Some(v)), Some(cur)),
            Other::Acc => (cur, Some(cur)),
        };
        nodes.push(pw(&format!("ep{i}"), mode, a, b, out));
        cur = out;
    }
}

fn epilogues() -> Vec<Vec<(PointwiseMode, Other)>> {
    use PointwiseMode as M;
    vec![
        vec![],
        vec![(M::Add, Other::Bias), (M::Relu, Other::None)],
        vec![
            (M::Mul, Other::Scalar(0.5)),
            (M::Sub, Other::BiasLeft),
            (M::Add, Other::Full),
            (M::Gelu, Other::None),
        ],
        vec![
            (M::Mul, Other::Acc),
            (M::Sub, Other::ScalarLeft(2.0)),
            (M::Div, Other::Scalar(4.0)),
            (M::Max, Other::Bias),
        ],
    ]
}

fn conv_cases() -> Vec<ConvCase> {
    let b = ConvCase::basic();
    vec![
        b.clone(),
        ConvCase {
            layout: Layout::Nhwc,
            c: 8,
            k: 6,
            ..b.clone()
        },
        ConvCase {
            layout: Layout::Odd,
            ..b.clone()
        },
        // Stride, dilation and uneven padding.
        ConvCase {
            input: vec![11, 9],
            pad: (vec![2, 0], vec![1, 3]),
            stride: vec![2, 3],
            dilation: vec![2, 1],
            ..b.clone()
        },
        ConvCase {
            input: vec![11, 9],
            pad: (vec![2, 0], vec![1, 3]),
            stride: vec![2, 1],
            dilation: vec![1, 2],
            layout: Layout::Nhwc,
            ..b.clone()
        },
        // Groups, and depthwise.
        ConvCase {
            c: 6,
            k: 9,
            groups: 3,
            ..b.clone()
        },
        ConvCase {
            c: 4,
            k: 4,
            groups: 4,
            layout: Layout::Nhwc,
            ..b.clone()
        },
        // 1x1 (the direct path), NCHW and NHWC, and strided 1x1.
        ConvCase {
            c: 5,
            k: 7,
            filter: vec![1, 1],
            pad: (vec![0, 0], vec![0, 0]),
            ..b.clone()
        },
        ConvCase {
            c: 5,
            k: 7,
            filter: vec![1, 1],
            pad: (vec![0, 0], vec![0, 0]),
            layout: Layout::Nhwc,
            ..b.clone()
        },
        ConvCase {
            filter: vec![1, 1],
            pad: (vec![0, 0], vec![0, 0]),
            stride: vec![2, 2],
            ..b.clone()
        },
        // 1-d and 3-d.
        ConvCase {
            input: vec![13],
            filter: vec![4],
            pad: (vec![2], vec![1]),
            stride: vec![2],
            dilation: vec![1],
            ..b.clone()
        },
        ConvCase {
            input: vec![5, 4, 6],
            filter: vec![3, 2, 3],
            pad: (vec![1, 0, 1], vec![1, 1, 0]),
            stride: vec![1, 2, 1],
            dilation: vec![1, 1, 2],
            ..b.clone()
        },
        ConvCase {
            input: vec![5, 4, 6],
            filter: vec![3, 2, 3],
            pad: (vec![1, 0, 1], vec![1, 1, 0]),
            stride: vec![1, 1, 1],
            dilation: vec![1, 1, 1],
            layout: Layout::Nhwc,
            ..b.clone()
        },
    ]
}

#[test]
fn conv_fprop_matches_reference_f32() {
    for (i, case) in conv_cases().iter().enumerate() {
        for (j, steps) in epilogues().iter().enumerate() {
            let reduction = (case.c / case.groups * case.filter.iter().product::<i64>()) as f64;
            let g = conv_graph(case, steps, DataType::F32);
            let seed = (i * 10 + j) as u64;
            check(
                &ConvFpropEngine,
                g.clone(),
                &[],
                1e-5,
                reduction.sqrt(),
                seed,
            );
            // Always im2col, and small tiles that split rows of output positions.
            check(&ConvFpropEngine, g, &[1, 16], 1e-5, reduction.sqrt(), seed);
        }
    }
}

#[test]
fn conv_fprop_matches_reference_f16_bf16() {
    for dt in [DataType::F16, DataType::Bf16] {
        for (i, case) in conv_cases().iter().enumerate().step_by(2) {
            let reduction = (case.c / case.groups * case.filter.iter().product::<i64>()) as f64;
            let steps = &epilogues()[i % 4];
            let g = conv_graph(case, steps, dt);
            check(
                &ConvFpropEngine,
                g,
                &[],
                tol_of(dt),
                reduction.sqrt(),
                i as u64,
            );
        }
    }
}

#[test]
fn conv_fprop_random_geometries() {
    let mut rng = StdRng::seed_from_u64(42);
    for i in 0..40 {
        let rank = rng.random_range(1..=3usize);
        let groups = [1i64, 1, 2, 3][rng.random_range(0..4)];
        let filter: Vec<i64> = (0..rank).map(|_| rng.random_range(1..=3)).collect();
        let dilation: Vec<i64> = (0..rank).map(|_| rng.random_range(1..=2)).collect();
        let pre: Vec<i64> = (0..rank).map(|_| rng.random_range(0..=2)).collect();
        let post: Vec<i64> = (0..rank).map(|_| rng.random_range(0..=2)).collect();
        let input: Vec<i64> = (0..rank)
            .map(|d| (filter[d] - 1) * dilation[d] + 1 + rng.random_range(0..6))
            .collect();
        let case = ConvCase {
            n: rng.random_range(1..=2),
            c: groups * rng.random_range(1..=4),
            k: groups * rng.random_range(1..=4),
            input,
            filter,
            pad: (pre, post),
            stride: (0..rank).map(|_| rng.random_range(1..=2)).collect(),
            dilation,
            groups,
            layout: [Layout::Nchw, Layout::Nhwc, Layout::Odd][rng.random_range(0..3)],
        };
        let dt = [DataType::F32, DataType::F16, DataType::Bf16][rng.random_range(0..3)];
        let steps = &epilogues()[rng.random_range(0..4)];
        let reduction = (case.c / case.groups * case.filter.iter().product::<i64>()) as f64;
        let tile = [0, 16, 32][rng.random_range(0..3)];
        let g = conv_graph(&case, steps, dt);
        check(
            &ConvFpropEngine,
            g,
            &[0, tile],
            tol_of(dt),
            reduction.sqrt(),
            i,
        );
    }
}

/// Depthwise convolutions (one channel in and out per group) on the direct path: whole planes
/// at stride 1 (blocks of outputs in registers and a tail), row segments at other strides, in
/// tiles of a few positions (the tile knob) and in batches of planes, every layout, with and
/// without an epilogue, checked against the reference engine at every available level.
#[test]
fn depthwise_convolutions_match_reference() {
    let mut rng = StdRng::seed_from_u64(17);
    // Fixed first: whole planes of several register blocks with a dilation along each axis.
    for (i, dilation) in [vec![1, 2], vec![2, 1], vec![1, 1]].into_iter().enumerate() {
        let case = ConvCase {
            n: 2,
            c: 4,
            k: 4,
            input: vec![20, 27],
            filter: vec![3, 3],
            pad: (vec![1, 2], vec![2, 1]),
            stride: vec![1, 1],
            dilation,
            groups: 4,
            layout: Layout::Nchw,
        };
        for isa in super::isa::Isa::ALL
            .into_iter()
            .filter(|l| l.is_available())
        {
            let g = conv_graph(&case, &[], DataType::F32);
            check(
                &ConvFpropEngine,
                g,
                &[0, 0, 0, isa as i64],
                tol_of(DataType::F32),
                3.0,
                i as u64,
            );
        }
    }
    for i in 0..60 {
        let rank = [2usize, 2, 2, 1, 3][rng.random_range(0..5)];
        let groups = rng.random_range(2..=9i64);
        let filter: Vec<i64> = (0..rank).map(|_| rng.random_range(1..=5)).collect();
        if filter.iter().product::<i64>() == 1 {
            continue;
        }
        let dilation: Vec<i64> = (0..rank).map(|_| rng.random_range(1..=2)).collect();
        let pre: Vec<i64> = (0..rank).map(|_| rng.random_range(0..=2)).collect();
        let post: Vec<i64> = (0..rank).map(|_| rng.random_range(0..=2)).collect();
        let stride: Vec<i64> = (0..rank)
            .map(|_| [1, 1, 2, 3][rng.random_range(0..4)])
            .collect();
        let input: Vec<i64> = (0..rank)
            .map(|d| (filter[d] - 1) * dilation[d] + 1 + rng.random_range(0..30))
            .collect();
        let case = ConvCase {
            n: rng.random_range(1..=2),
            c: groups,
            k: groups,
            input,
            filter,
            pad: (pre, post),
            stride,
            dilation,
            groups,
            layout: [Layout::Nchw, Layout::Nhwc, Layout::Odd][rng.random_range(0..3)],
        };
        let steps = &epilogues()[rng.random_range(0..4)];
        let taps = case.filter.iter().product::<i64>() as f64;
        let tile = [0, 0, 16][rng.random_range(0..3)];
        // 16-bit inputs are widened as the kernels read them.
        let dt =
            [DataType::F32, DataType::F32, DataType::F16, DataType::Bf16][rng.random_range(0..4)];
        for isa in super::isa::Isa::ALL
            .into_iter()
            .filter(|l| l.is_available())
        {
            let g = conv_graph(&case, steps, dt);
            check(
                &ConvFpropEngine,
                g,
                &[0, tile, 0, isa as i64],
                tol_of(dt),
                taps.sqrt(),
                i,
            );
        }
    }
}

/// Depthwise convolutions with the channels in the vector lanes (`conv/depthwise_lanes.rs`):
/// channel counts that fill several blocks of 8 and 16 and leave a partial one, planes narrower
/// than a vector (in rows and flattened) and planes tall or wide enough to be cut into stripes,
/// channels-first and channels-last, strides 1-3, dilation, padding
/// wider than the filter's reach, with each epilogue (the bias + relu ones are written by the
/// kernel, the others through the epilogue), against the reference engine at every level.
#[test]
fn depthwise_channel_blocks_match_reference() {
    // (channels, input, filter, pre and post padding, stride, dilation)
    type Geometry = (
        i64,
        [i64; 2],
        [i64; 2],
        ([i64; 2], [i64; 2]),
        [i64; 2],
        [i64; 2],
    );
    let cases: [Geometry; 9] = [
        // Narrow planes summed flattened across the rows (with 8 lanes the first only).
        (16, [3, 3], [3, 3], ([1, 1], [1, 1]), [1, 1], [1, 1]),
        (18, [6, 5], [3, 3], ([2, 2], [2, 2]), [1, 1], [2, 2]),
        (17, [700, 4], [3, 3], ([1, 1], [1, 1]), [1, 1], [1, 1]),
        (37, [9, 23], [3, 3], ([1, 1], [1, 1]), [1, 1], [1, 1]),
        (16, [40, 300], [3, 3], ([1, 1], [1, 1]), [2, 2], [1, 2]),
        (24, [7, 7], [5, 5], ([2, 2], [2, 2]), [1, 1], [1, 1]),
        (20, [13, 17], [2, 4], ([0, 3], [1, 0]), [3, 3], [1, 1]),
        (9, [5, 6], [3, 3], ([3, 3], [3, 3]), [1, 2], [1, 1]),
        (33, [70, 61], [7, 7], ([3, 3], [3, 3]), [1, 1], [1, 1]),
    ];
    let layouts = [Layout::Nchw, Layout::Nhwc];
    for (i, (c, input, filter, (pre, post), stride, dilation)) in cases.into_iter().enumerate() {
        let case = ConvCase {
            layout: layouts[i % 2],
            ..ConvCase::plane((2, c, c), input, filter, (pre, post), c).strided(stride, dilation)
        };
        let taps = (filter[0] * filter[1]) as f64;
        check_channel_blocks(&case, i, taps.sqrt(), i as u64);
    }
}

/// Runs `case` (case `i`) with each epilogue at every level against the reference, after
/// asserting that the plan puts its channel blocks in the vector lanes exactly at the vector
/// levels under no chain or a bias + relu (the first two of [`epilogues`]).
fn check_channel_blocks(case: &ConvCase, i: usize, reduction: f64, seed: u64) {
    for (j, steps) in epilogues().into_iter().enumerate() {
        for isa in super::isa::Isa::ALL
            .into_iter()
            .filter(|l| l.is_available())
        {
            let g = conv_graph(case, &steps, DataType::F32);
            #[cfg(target_arch = "x86_64")]
            assert_eq!(
                super::conv::fprop::plans_depthwise_lanes(&g, &[0, 0, 0, isa as i64]),
                isa != super::isa::Isa::Portable && j < 2,
                "case {i}, chain {j} at {isa:?}"
            );
            check(
                &ConvFpropEngine,
                g,
                &[0, 0, 0, isa as i64],
                tol_of(DataType::F32),
                reduction,
                seed,
            );
        }
    }
}

/// Grouped convolutions of 2, 4 and 8 channels a group with the channels in the vector lanes
/// (`conv/depthwise_lanes.rs`, one staged copy of the rows a channel of the group): blocks
/// that end in a partial one (20 and 24 channels), narrow planes summed flattened, planes cut
/// into stripes, strides 1-3, dilation, asymmetric padding, channels-first and channels-last,
/// each epilogue (the path runs under none and bias + relu, the others go through im2col),
/// against the reference engine at every level.
#[test]
fn grouped_channel_blocks_match_reference() {
    // (groups, channels a group, input, filter, pre and post padding, stride, dilation,
    // layout)
    type Geometry = (
        i64,
        i64,
        [i64; 2],
        [i64; 2],
        ([i64; 2], [i64; 2]),
        [i64; 2],
        [i64; 2],
        Layout,
    );
    let one = [1, 1];
    let cases: [Geometry; 9] = [
        (5, 4, [9, 11], [3, 3], (one, one), one, one, Layout::Nchw),
        (4, 2, [3, 3], [3, 3], (one, one), one, one, Layout::Nchw),
        (
            3,
            8,
            [14, 14],
            [3, 3],
            (one, one),
            [2, 2],
            one,
            Layout::Nchw,
        ),
        (
            6,
            4,
            [7, 7],
            [3, 3],
            ([2, 2], [2, 2]),
            one,
            [2, 2],
            Layout::Nchw,
        ),
        (
            2,
            8,
            [60, 33],
            [5, 5],
            ([2, 2], [2, 2]),
            one,
            one,
            Layout::Nchw,
        ),
        (
            8,
            2,
            [13, 17],
            [2, 4],
            ([0, 3], [1, 0]),
            [3, 3],
            one,
            Layout::Nchw,
        ),
        (4, 4, [9, 10], [3, 3], (one, one), one, one, Layout::Nhwc),
        (
            3,
            8,
            [11, 12],
            [3, 3],
            (one, one),
            [2, 2],
            one,
            Layout::Nhwc,
        ),
        (
            9,
            2,
            [6, 20],
            [3, 5],
            ([1, 2], [0, 2]),
            one,
            [1, 2],
            Layout::Nhwc,
        ),
    ];
    for (i, (groups, per, input, filter, (pre, post), stride, dilation, layout)) in
        cases.into_iter().enumerate()
    {
        let c = groups * per;
        let case = ConvCase {
            layout,
            ..ConvCase::plane((2, c, c), input, filter, (pre, post), groups)
                .strided(stride, dilation)
        };
        let reduction = ((per * filter[0] * filter[1]) as f64).sqrt();
        check_channel_blocks(&case, i, reduction, (40 + i) as u64);
    }
}

/// A depthwise convolution whose rows are too wide to stage in channel blocks (one stripe
/// row would take more than 8 MiB of workspace) runs on the plane path, and matches the
/// reference.
#[test]
fn depthwise_rows_too_wide_for_channel_blocks_take_the_planes() {
    let one = [1, 1];
    let case = ConvCase::plane((1, 16, 16), [2, 100_000], [3, 3], (one, one), 16);
    for isa in super::isa::Isa::ALL
        .into_iter()
        .filter(|l| l.is_available())
    {
        let g = conv_graph(&case, &epilogues()[1], DataType::F32);
        #[cfg(target_arch = "x86_64")]
        assert!(!super::conv::fprop::plans_depthwise_lanes(
            &g,
            &[0, 0, 0, isa as i64]
        ));
        check(
            &ConvFpropEngine,
            g,
            &[0, 0, 0, isa as i64],
            tol_of(DataType::F32),
            3.0,
            5,
        );
    }
}

/// A 3-D convolution of one input slice of depth whose one output slice is read through the
/// depth padding (a stride of 2 skips the slice): every output is the epilogue of 0. The 2-D
/// paths (the depthwise planes, the filters in the lanes) took such a case for a 2-D one and
/// read the slice; found by the conformance suite's fused test (its regression file).
#[test]
fn conv_reading_only_depth_padding_matches_the_reference() {
    for (pre, groups, algo) in [(1, 1, 3), (1, 3, 0), (1, 1, 0), (0, 1, 3), (0, 3, 0)] {
        let case = ConvCase {
            n: 2,
            c: 3,
            k: 3,
            input: vec![1, 6, 7],
            filter: vec![1, 3, 3],
            pad: (vec![pre, 1, 1], vec![1 - pre, 1, 1]),
            stride: vec![2, 1, 1],
            dilation: vec![1, 1, 1],
            groups,
            layout: Layout::Nchw,
        };
        for isa in super::isa::Isa::ALL
            .into_iter()
            .filter(|l| l.is_available())
        {
            let g = conv_graph(&case, &epilogues()[2], DataType::F32);
            check(
                &ConvFpropEngine,
                g,
                &[algo, 0, 0, isa as i64],
                tol_of(DataType::F32),
                3.0,
                7,
            );
        }
    }
}

#[test]
fn conv_dgrad_and_wgrad_match_reference() {
    let mut cases = conv_cases();
    cases.push(ConvCase {
        n: 3,
        c: 16,
        k: 24,
        input: vec![23, 21],
        ..ConvCase::basic()
    });
    for (i, case) in cases.iter().enumerate() {
        for dt in [DataType::F32, DataType::Bf16] {
            for direction in [ConvDirection::Dgrad, ConvDirection::Wgrad] {
                let mut g = conv_graph(case, &[], dt);
                if let Op::Conv(c) = &mut g.nodes[0].op {
                    c.direction = direction;
                }
                g.name = format!("{direction:?} {}", g.name);
                let (engine, reduction): (&dyn CpuEngine, i64) = match direction {
                    ConvDirection::Dgrad => (
                        &ConvDgradEngine,
                        case.k / case.groups * case.filter.iter().product::<i64>(),
                    ),
                    _ => (
                        &ConvWgradEngine,
                        case.n * g.tensor(3).unwrap().dims[2..].iter().product::<i64>(),
                    ),
                };
                check(
                    engine,
                    g,
                    &[],
                    tol_of(dt),
                    (reduction as f64).sqrt(),
                    i as u64,
                );
            }
        }
    }
}

#[test]
fn conv_gradients_refuse_other_graphs() {
    let g = conv_graph(&ConvCase::basic(), &epilogues()[1], DataType::F32);
    let why = ConvDgradEngine.supports(&g).unwrap_err();
    assert!(why.contains("3 nodes"), "{why}");
    let g = conv_graph(&ConvCase::basic(), &[], DataType::F32);
    let why = ConvWgradEngine.supports(&g).unwrap_err();
    assert!(
        why.contains("conv_fprop") && why.contains("conv_wgrad"),
        "{why}"
    );
}

#[test]
fn conv_fprop_larger_case_spans_many_tiles() {
    let case = ConvCase {
        n: 3,
        c: 16,
        k: 24,
        input: vec![23, 21],
        ..ConvCase::basic()
    };
    let steps = &epilogues()[1];
    for layout in [Layout::Nchw, Layout::Nhwc] {
        let g = conv_graph(
            &ConvCase {
                layout,
                ..case.clone()
            },
            steps,
            DataType::F32,
        );
        check(&ConvFpropEngine, g.clone(), &[], 1e-5, 12.0, 7);
        check(&ConvFpropEngine, g, &[0, 48], 1e-5, 12.0, 7);
    }
}

/// Winograd F(2x2, 3x3) (`conv_algo = 2`) on the shapes it applies to: odd sizes, padding 0 to
/// 2 on either side, several images, channel counts that fill no tile evenly, every layout,
/// f16/bf16 and every epilogue, with default and small blocks, at every instruction-set level.
#[test]
fn conv_fprop_winograd_matches_reference() {
    let b = ConvCase::basic();
    let mut cases = vec![
        b.clone(),
        ConvCase {
            layout: Layout::Nhwc,
            c: 8,
            k: 6,
            ..b.clone()
        },
        ConvCase {
            layout: Layout::Odd,
            ..b.clone()
        },
        ConvCase {
            pad: (vec![0, 0], vec![0, 0]),
            input: vec![3, 3],
            ..b.clone()
        },
        ConvCase {
            n: 3,
            c: 19,
            k: 21,
            input: vec![13, 11],
            pad: (vec![2, 0], vec![1, 2]),
            ..b.clone()
        },
        ConvCase {
            n: 1,
            c: 5,
            k: 3,
            input: vec![4, 9],
            pad: (vec![0, 2], vec![2, 1]),
            layout: Layout::Nhwc,
            ..b.clone()
        },
        ConvCase {
            n: 3,
            c: 16,
            k: 24,
            input: vec![23, 21],
            ..b.clone()
        },
        // Channels-last rows staged 16 channels at a time (the last group of 5), and output
        // channels transposed into the tile in groups of 16 (the last of 3); small images, so
        // that blocks start several images.
        ConvCase {
            n: 5,
            c: 37,
            k: 35,
            input: vec![5, 6],
            pad: (vec![1, 0], vec![1, 2]),
            layout: Layout::Nhwc,
            ..b.clone()
        },
        // One small image: a block or two, its output channels split into parts (48 + 22;
        // 48 + 48 + 4), each part transforming the input itself.
        ConvCase {
            n: 1,
            c: 20,
            k: 70,
            input: vec![9, 11],
            layout: Layout::Nhwc,
            ..b.clone()
        },
        ConvCase {
            n: 1,
            c: 12,
            k: 100,
            input: vec![7, 7],
            ..b.clone()
        },
        ConvCase {
            n: 1,
            c: 9,
            k: 67,
            input: vec![10, 6],
            pad: (vec![0, 2], vec![1, 0]),
            layout: Layout::Odd,
            ..b.clone()
        },
        // Two rows of 24 tiles: one block of 48, the wide kernel's columns at the AVX-512
        // levels (winograd::tests::the_wide_kernel_runs_where_it_fills_its_columns).
        ConvCase {
            n: 1,
            c: 8,
            k: 66,
            input: vec![4, 48],
            ..b.clone()
        },
    ];
    let mut rng = StdRng::seed_from_u64(2024);
    for _ in 0..24 {
        cases.push(ConvCase {
            n: rng.random_range(1..=3),
            c: rng.random_range(1..=20),
            k: rng.random_range(1..=20),
            input: vec![rng.random_range(1..=12), rng.random_range(1..=12)],
            pad: (
                vec![rng.random_range(0..=2), rng.random_range(0..=2)],
                vec![rng.random_range(0..=2), rng.random_range(0..=2)],
            ),
            layout: [Layout::Nchw, Layout::Nhwc, Layout::Odd][rng.random_range(0..3)],
            ..b.clone()
        });
    }
    // Every instruction-set level this processor runs, in turn.
    let levels: Vec<i64> = super::isa::Isa::ALL
        .into_iter()
        .filter(|l| l.is_available())
        .map(|l| l as i64)
        .collect();
    let mut runs = 0;
    for (i, case) in cases.iter().enumerate() {
        // Inputs smaller than the filter need padding to make an output at all.
        let out_h = case.input[0] + case.pad.0[0] + case.pad.1[0] - 2;
        let out_w = case.input[1] + case.pad.0[1] + case.pad.1[1] - 2;
        if out_h < 1 || out_w < 1 {
            continue;
        }
        let reduction = (case.c * 9) as f64;
        for (j, steps) in epilogues().iter().enumerate() {
            let dt = [DataType::F32, DataType::F32, DataType::F16, DataType::Bf16][(i + j) % 4];
            let g = conv_graph(case, steps, dt);
            let seed = (100 * i + j) as u64;
            let winograd = ConvFpropEngine.prepare(&g, &[2, 0]).unwrap();
            let im2col = ConvFpropEngine.prepare(&g, &[1, 0]).unwrap();
            assert_ne!(
                winograd.workspace_size(),
                im2col.workspace_size(),
                "conv_algo = 2 did not choose Winograd for {}",
                g.name
            );
            let tile = [0, 16, 64][(i + j) % 3];
            // Each level lays U and V out in its own kernel's slivers; the workspace is the
            // same at every level (a plan restored on another processor keeps its size).
            // Level 4 (amx) is left out: with bf16 tensors it asks for the AMX path instead.
            let sizes: Vec<usize> = (1..=3)
                .map(|isa| {
                    let plan = ConvFpropEngine.prepare(&g, &[2, tile, 0, isa]).unwrap();
                    plan.workspace_size()
                })
                .collect();
            assert!(
                sizes.windows(2).all(|w| w[0] == w[1]),
                "{}: workspace by level {sizes:?}",
                g.name
            );
            let isa = levels[(i + j) % levels.len()];
            check(
                &ConvFpropEngine,
                g,
                &[2, tile, 0, isa],
                tol_of(dt),
                reduction.sqrt(),
                seed,
            );
            runs += 1;
        }
    }
    assert!(runs >= 80, "only {runs} Winograd cases ran");
}

/// Channels-last Winograd with rows wide enough for the AVX-512 staging and the tile's
/// transposes, 16 columns or positions at a time (padding at both ends, a last block
/// overlapping the one before), in groups of 16 channels besides the short last ones: f32, f16
/// and bf16 inputs (widened in registers) at every level below AMX this processor runs.
#[test]
fn conv_fprop_winograd_channels_last_wide_rows_match_the_reference_in_every_type() {
    let case = ConvCase {
        n: 2,
        c: 20,
        k: 18,
        input: vec![9, 37],
        pad: (vec![1, 2], vec![0, 1]),
        layout: Layout::Nhwc,
        ..ConvCase::basic()
    };
    let steps = [
        (PointwiseMode::Add, Other::Bias),
        (PointwiseMode::Relu, Other::None),
    ];
    let mut runs = 0;
    for (i, dt) in [DataType::F32, DataType::F16, DataType::Bf16]
        .into_iter()
        .enumerate()
    {
        for isa in [super::isa::Isa::Avx2, super::isa::Isa::Avx512] {
            if !isa.is_available() {
                continue;
            }
            let g = conv_graph(&case, &steps, dt);
            let knobs = [2, 0, 0, isa as i64];
            check(
                &ConvFpropEngine,
                g,
                &knobs,
                tol_of(dt),
                (20.0f64 * 9.0).sqrt(),
                70 + i as u64,
            );
            runs += 1;
        }
    }
    if runs == 0 {
        eprintln!("skipped: this processor has neither AVX2 nor AVX-512");
    }
}

/// Winograd on rows of many tiles (runs longer than 16 tiles, crossing the 32-tile slivers of
/// the AVX-512 kernel, with padding on either side; even output widths, whose channels-first
/// rows the AVX-512 output transform writes 16 tiles at a time, and odd output heights)
/// matches the reference at every instruction-set level this processor has (the AVX-512 level
/// transforms in registers, the others through staged rows).
#[test]
fn conv_fprop_winograd_wide_rows_match_the_reference_at_every_level() {
    let b = ConvCase::basic();
    let cases = [
        ConvCase {
            n: 2,
            c: 5,
            k: 7,
            input: vec![7, 74],
            ..b.clone()
        },
        ConvCase {
            n: 1,
            c: 3,
            k: 9,
            input: vec![6, 40],
            pad: (vec![0, 0], vec![2, 2]),
            ..b.clone()
        },
        ConvCase {
            n: 3,
            c: 4,
            k: 5,
            input: vec![5, 67],
            pad: (vec![2, 1], vec![0, 2]),
            layout: Layout::Nhwc,
            ..b.clone()
        },
    ];
    let mut runs = 0;
    for level in super::isa::Isa::ALL[..3]
        .iter()
        .filter(|l| l.is_available())
    {
        for (i, case) in cases.iter().enumerate() {
            let g = conv_graph(case, &epilogues()[1], DataType::F32);
            check(
                &ConvFpropEngine,
                g,
                &[2, 0, 0, *level as i64],
                tol_of(DataType::F32),
                ((case.c * 9) as f64).sqrt(),
                77 + i as u64,
            );
            runs += 1;
        }
    }
    assert!(runs >= 3);
}

/// The direct 1x1 path on every level this processor has (at the AVX2 and AVX-512 levels:
/// kiln's strided-input kernels with the epilogue in registers): blocks of 16 and 64 positions
/// with every kind of tail, channel counts past one 128-channel block (partial sums carried
/// between blocks), filter counts that leave the last 6-row sliver with 1 to 5 filters, groups,
/// tiles that cut the positions short, and epilogues the kernel fuses (none, bias + relu, bias,
/// relu) and ones it hands to the generic pass. (At the auto tile size, short tiles run the
/// GEMM instead: the tiles of 48 and 17 positions keep these cases on the direct kernels.)
#[test]
fn conv_fprop_direct_1x1_matches_the_reference_at_every_level() {
    use PointwiseMode as M;
    let b = ConvCase::basic();
    let one = |n: i64, c: i64, k: i64, input: Vec<i64>, groups: i64| ConvCase {
        n,
        c,
        k,
        input,
        filter: vec![1, 1],
        pad: (vec![0, 0], vec![0, 0]),
        groups,
        ..b.clone()
    };
    let cases = [
        one(2, 5, 7, vec![7, 11], 1),
        one(1, 130, 13, vec![9, 15], 1),
        one(2, 300, 6, vec![4, 8], 1),
        one(1, 18, 14, vec![3, 47], 2),
        one(3, 129, 1, vec![1, 1], 1),
        // Last slivers of 1 to 7 filters (the kernels multiply only a sliver's rows: slivers
        // of 8 filters at the AVX-512 levels, of 6 at AVX2).
        one(1, 20, 8, vec![5, 13], 1),
        one(1, 11, 12, vec![4, 7], 1),
        one(1, 6, 11, vec![3, 5], 1),
        one(2, 9, 3, vec![3, 22], 1),
        one(1, 33, 10, vec![6, 11], 1),
        one(1, 12, 34, vec![2, 9], 2),
        // Long enough tiles for the auto tile size to keep the direct kernels (with fewer
        // than 128 positions a tile, or fewer tiles than workers, auto runs the GEMM).
        one(2, 20, 13, vec![12, 13], 1),
    ];
    let chains: [Vec<(M, Other)>; 5] = [
        vec![],
        vec![(M::Add, Other::Bias), (M::Relu, Other::None)],
        vec![(M::Add, Other::BiasLeft)],
        vec![(M::Relu, Other::None)],
        epilogues()[2].clone(),
    ];
    let mut runs = 0;
    for level in super::isa::Isa::ALL.iter().filter(|l| l.is_available()) {
        for (i, case) in cases.iter().enumerate() {
            let reduction = ((case.c / case.groups) as f64).sqrt();
            for (j, chain) in chains.iter().enumerate() {
                let g = conv_graph(case, chain, DataType::F32);
                for tile in [0, 48, 17] {
                    check(
                        &ConvFpropEngine,
                        g.clone(),
                        &[0, tile, 0, *level as i64],
                        tol_of(DataType::F32),
                        reduction,
                        (100 + 10 * i + j) as u64,
                    );
                    runs += 1;
                }
            }
        }
    }
    assert!(runs >= 75, "only {runs} direct cases ran");
}

/// Stride-1 convolutions that are neither 1x1 nor Winograd's run at the AVX2 and AVX-512
/// levels from padded bands of the input rows (`fprop::Banded`): filters of 1x5 to 7x7, pads
/// from none to more than the filter's half on either side, output rows of 14 to 61 positions
/// (blocks of 48 and a shorter last one), patches longer than a block of 128 channels' rows
/// (partial sums carried), filter counts that leave short last slivers, groups, dilations,
/// and each epilogue (bias + relu in registers, or the general chain on each block); at every level,
/// the reference's values. The plan is checked to take the path at the vector levels (and
/// not where the knob asks for im2col).
#[test]
fn conv_fprop_banded_matches_the_reference_at_every_level() {
    use PointwiseMode as M;
    let case = |n, c, k, input, filter, pad, groups| {
        ConvCase::plane((n, c, k), input, filter, pad, groups)
    };
    let cases = [
        case(2, 3, 8, [9, 20], [5, 5], ([2, 2], [2, 2]), 1),
        case(1, 30, 13, [12, 29], [5, 5], ([1, 3], [2, 0]), 1),
        case(2, 7, 12, [11, 16], [7, 7], ([3, 3], [3, 3]), 1),
        case(1, 4, 11, [8, 61], [1, 5], ([0, 2], [0, 2]), 1),
        case(1, 12, 10, [10, 18], [3, 4], ([0, 0], [0, 0]), 2),
        case(2, 40, 5, [5, 30], [3, 3], ([4, 1], [0, 5]), 1),
        // Rows of 32 values (no whole vector of zeros staged past them) and more padding
        // after them than before.
        case(2, 3, 9, [7, 32], [5, 3], ([2, 0], [2, 6]), 1),
        // Dilated filters: the band's rows and each tap's offset spread out.
        ConvCase {
            dilation: vec![2, 3],
            ..case(2, 6, 12, [13, 40], [3, 3], ([2, 3], [2, 3]), 1)
        },
        ConvCase {
            dilation: vec![3, 1],
            ..case(1, 5, 7, [16, 23], [3, 5], ([1, 0], [4, 4]), 1)
        },
    ];
    let chains: [Vec<(M, Other)>; 3] = [
        vec![],
        vec![(M::Add, Other::Bias), (M::Relu, Other::None)],
        epilogues()[2].clone(),
    ];
    let mut runs = 0;
    for level in super::isa::Isa::ALL.iter().filter(|l| l.is_available()) {
        let vector = *level != super::isa::Isa::Portable;
        for (i, case) in cases.iter().enumerate() {
            let reduction =
                ((case.c / case.groups * case.filter.iter().product::<i64>()) as f64).sqrt();
            for (j, chain) in chains.iter().enumerate() {
                let g = conv_graph(case, chain, DataType::F32);
                // Two workspace slots (the auto count is the machine's threads): the path is
                // taken where each slot gets a tile.
                let knobs = [0, 0, 2, *level as i64];
                assert_eq!(
                    super::conv::fprop::plans_banded(&g, &knobs),
                    vector,
                    "case {i} at {level:?}"
                );
                assert!(!super::conv::fprop::plans_banded(
                    &g,
                    &[1, 0, 0, *level as i64]
                ));
                check(
                    &ConvFpropEngine,
                    g,
                    &knobs,
                    tol_of(DataType::F32),
                    reduction,
                    (700 + 10 * i + j) as u64,
                );
                runs += 1;
            }
        }
    }
    assert!(runs >= 21, "only {runs} banded cases ran");
}

/// The path with the filters in the lanes (`conv::broadcast`, knob value 3) matches the
/// reference at every level: strides 1 to 3, dilation, groups, asymmetric and large padding,
/// filter counts that fill no block (5, 13, 70, 130), more channels than a kernel call takes,
/// rows narrower than a kernel's positions, filter blocks split among items, channels-first
/// inputs with padded rows, an input that is not 4-byte aligned, filters that read no padding
/// (read from x in place), channels-last tensors, and three epilogues. Auto
/// takes it for a strided 3x3 convolution with enough positions and filters, not under the
/// "im2col" value nor for a 1x1 one.
#[test]
fn conv_fprop_broadcast_matches_the_reference_at_every_level() {
    use PointwiseMode as M;
    let case = |n, c, k, input, filter, pad, groups| {
        ConvCase::plane((n, c, k), input, filter, pad, groups)
    };
    let (one, two) = ([1, 1], [2, 2]);
    let nhwc = |c: ConvCase| ConvCase {
        layout: Layout::Nhwc,
        ..c
    };
    let cases = [
        case(2, 3, 70, [23, 21], [7, 7], ([3, 3], [3, 3]), 1).strided(two, one),
        case(1, 40, 13, [15, 17], [3, 3], ([1, 1], [1, 1]), 1).strided(two, one),
        case(2, 12, 130, [9, 10], [3, 2], ([2, 0], [0, 3]), 2).strided([3, 2], one),
        ConvCase {
            layout: Layout::Odd,
            ..case(1, 9, 5, [11, 12], [3, 3], ([2, 2], [2, 2]), 1).strided([1, 2], two)
        },
        case(3, 20, 33, [8, 30], [5, 5], ([2, 2], [2, 2]), 1),
        case(2, 16, 24, [6, 6], [3, 3], ([1, 1], [1, 1]), 1),
        case(1, 8, 256, [7, 5], [3, 3], ([1, 1], [1, 1]), 1).strided([2, 1], one),
        case(2, 24, 40, [13, 14], [1, 1], ([0, 0], [0, 0]), 1).strided(two, one),
        // 1x1 filters: read from x in place (odd strides too), and from a band where the
        // output reaches into post-padding.
        ConvCase {
            layout: Layout::Odd,
            ..case(1, 33, 70, [5, 9], [1, 1], ([0, 0], [0, 0]), 1)
        },
        case(1, 20, 17, [7, 7], [1, 1], ([0, 0], [1, 2]), 1),
        // Larger filters that read no padding, also read from x in place: the last tap of
        // the last position on the input's last row and column, short of them, dilated, and
        // through rows a few values apart.
        case(2, 10, 21, [15, 15], [3, 3], ([0, 0], [0, 0]), 1).strided(two, one),
        case(1, 6, 18, [12, 16], [3, 3], ([0, 0], [0, 0]), 1).strided(two, two),
        ConvCase {
            layout: Layout::Odd,
            ..case(1, 7, 20, [9, 13], [1, 7], ([0, 0], [0, 0]), 1)
        },
        // Channels-last input and output: bands of positions, read in place where no
        // padding is read, grouped, 1x1, and 128 channels a group (the band's columns a line
        // apart more than the channels).
        nhwc(case(2, 12, 70, [11, 13], [3, 3], ([1, 1], [1, 1]), 1).strided(two, one)),
        nhwc(case(1, 5, 20, [9, 8], [5, 5], ([2, 1], [2, 3]), 1).strided(one, [2, 1])),
        nhwc(case(2, 10, 21, [15, 15], [3, 3], ([0, 0], [0, 0]), 1).strided(two, one)),
        nhwc(case(1, 64, 32, [7, 7], [3, 3], ([1, 1], [1, 1]), 2)),
        nhwc(case(1, 33, 70, [5, 9], [1, 1], ([0, 0], [0, 0]), 1)),
        nhwc(case(2, 256, 24, [6, 7], [3, 3], ([1, 1], [1, 1]), 2).strided(two, one)),
    ];
    let chains: [Vec<(M, Other)>; 3] = [
        vec![],
        vec![(M::Add, Other::Bias), (M::Relu, Other::None)],
        epilogues()[2].clone(),
    ];
    let mut runs = 0;
    for level in super::isa::Isa::ALL.iter().filter(|l| l.is_available()) {
        for (i, case) in cases.iter().enumerate() {
            let reduction =
                ((case.c / case.groups * case.filter.iter().product::<i64>()) as f64).sqrt();
            for (j, chain) in chains.iter().enumerate() {
                let g = conv_graph(case, chain, DataType::F32);
                let knobs = [3, 0, 2, *level as i64];
                assert!(
                    super::conv::fprop::plans_broadcast(&g, &knobs),
                    "case {i} at {level:?}"
                );
                let seed = (900 + 10 * i + j) as u64;
                if (i + j) % 3 == 1 {
                    // x moved one byte off its alignment.
                    let mut all: Vec<i64> =
                        ConvFpropEngine.knobs().iter().map(|k| k.default).collect();
                    all[..knobs.len()].copy_from_slice(&knobs);
                    check_run(
                        &ConvFpropEngine,
                        g,
                        tol_of(DataType::F32),
                        reduction,
                        seed,
                        |graph, bindings| {
                            let x = graph.tensor(1).unwrap();
                            let bytes = x.storage_bytes().unwrap();
                            let mut moved = vec![0u8; bytes + 1];
                            let mut bindings = bindings.to_vec();
                            let bx = bindings.iter_mut().find(|b| b.uid == 1).unwrap();
                            // SAFETY: x's binding holds `bytes` bytes; `moved` one more.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    bx.ptr as *const u8,
                                    moved.as_mut_ptr().add(1),
                                    bytes,
                                );
                                bx.ptr = moved.as_mut_ptr().add(1).cast();
                            }
                            let prepared = ConvFpropEngine.prepare(graph, &all).unwrap();
                            let mut workspace = vec![0xFFu8; prepared.workspace_size()];
                            // SAFETY: every binding points at storage for its tensor's
                            // layout; the workspace holds workspace_size() bytes.
                            unsafe {
                                let map = TensorMap::new(graph, &bindings).unwrap();
                                prepared.execute(&map, workspace.as_mut_ptr()).unwrap();
                            }
                        },
                    );
                } else {
                    check(
                        &ConvFpropEngine,
                        g,
                        &knobs,
                        tol_of(DataType::F32),
                        reduction,
                        seed,
                    );
                }
                runs += 1;
            }
        }
    }
    assert!(runs >= 24, "only {runs} broadcast cases ran");
    // An output of 4 MB, which the fused store writes around the caches.
    let large = case(2, 3, 64, [90, 90], [5, 5], ([2, 2], [2, 2]), 1);
    for level in super::isa::Isa::ALL.iter().filter(|l| l.is_available()) {
        let g = conv_graph(&large, &chains[1], DataType::F32);
        let knobs = [0, 0, 2, *level as i64];
        assert!(super::conv::fprop::plans_broadcast(&g, &knobs));
        check(
            &ConvFpropEngine,
            g,
            &knobs,
            tol_of(DataType::F32),
            (3.0f64 * 25.0).sqrt(),
            990,
        );
    }
    // The default choice.
    let strided = case(8, 16, 32, [16, 16], [3, 3], ([1, 1], [1, 1]), 1).strided(two, one);
    let g = conv_graph(&strided, &[], DataType::F32);
    assert!(super::conv::fprop::plans_broadcast(&g, &[0, 0, 2]));
    assert!(!super::conv::fprop::plans_broadcast(&g, &[1, 0, 2]));
    // A grouped stride-1 3x3 with 16 filters a group at every level; with 8, not.
    let grouped = |k| case(2, 64, k, [14, 14], [3, 3], ([1, 1], [1, 1]), 4);
    for level in super::isa::Isa::ALL {
        let knobs = [0, 0, 2, level as i64];
        let g = conv_graph(&grouped(64), &[], DataType::F32);
        assert!(super::conv::fprop::plans_broadcast(&g, &knobs), "{level:?}");
        let g = conv_graph(&grouped(32), &[], DataType::F32);
        assert!(
            !super::conv::fprop::plans_broadcast(&g, &knobs),
            "{level:?}"
        );
    }
    let one = ConvCase {
        filter: vec![1, 1],
        pad: (vec![0, 0], vec![0, 0]),
        ..strided
    };
    // A 1x1 filter over few positions (512 here): at a plan's recorded AVX-512 levels, not
    // at AVX2 (whatever the processor: the path follows the recorded level), nor with padding
    // read or many positions.
    use super::isa::Isa;
    let at = |l: Isa| [0, 0, 2, l as i64];
    let g = conv_graph(&one, &[], DataType::F32);
    for level in [Isa::Avx512, Isa::Avx512Bf16, Isa::Amx] {
        assert!(
            super::conv::fprop::plans_broadcast(&g, &at(level)),
            "{level:?}"
        );
    }
    for level in [Isa::Avx2, Isa::Portable] {
        assert!(
            !super::conv::fprop::plans_broadcast(&g, &at(level)),
            "{level:?}"
        );
    }
    let padded = ConvCase {
        pad: (vec![1, 1], vec![1, 1]),
        ..one.clone()
    };
    let g = conv_graph(&padded, &[], DataType::F32);
    assert!(!super::conv::fprop::plans_broadcast(&g, &at(Isa::Avx512)));
    let many = ConvCase {
        input: vec![40, 40],
        ..one
    };
    let g = conv_graph(&many, &[], DataType::F32);
    assert!(!super::conv::fprop::plans_broadcast(&g, &at(Isa::Avx512)));
}

/// Winograd's f32 error on long sums (C = 64 and 256, 3x3) stays within the conformance
/// suite's bound for a sum of `terms` products: 4 eps32 (terms + depth) absolute plus
/// 8 eps32 depth relative, here with inputs of magnitude up to 2 rather than 1.
#[test]
fn conv_fprop_winograd_long_sums_stay_within_conformance_tolerance() {
    let eps = f32::EPSILON as f64;
    for (i, (c, k, hw, layout)) in [
        (64, 24, 16, Layout::Nchw),
        (256, 16, 8, Layout::Nchw),
        (96, 20, 9, Layout::Nhwc),
    ]
    .into_iter()
    .enumerate()
    {
        let case = ConvCase {
            n: 2,
            c,
            k,
            input: vec![hw, hw + 1],
            layout,
            ..ConvCase::basic()
        };
        for (j, steps) in [&epilogues()[0], &epilogues()[1]].into_iter().enumerate() {
            let depth = 1.0 + steps.len() as f64;
            let terms = (c * 9) as f64;
            // tol * (|want| + scale) = 8 eps depth |want| + 4 eps (terms + depth).
            let tol = 8.0 * eps * depth;
            let scale = 4.0 * eps * (terms + depth) / tol;
            let g = conv_graph(&case, steps, DataType::F32);
            check(
                &ConvFpropEngine,
                g,
                &[2, 0],
                tol,
                scale,
                (10 * i + j) as u64,
            );
        }
    }
}

/// Auto takes Winograd for small images in a batch of 64 tiles or more (7x7 outputs are 16
/// tiles each: 4 images), not for one or two (those take the filters in the lanes: narrow
/// rows); and the batch still matches the reference.
#[test]
fn conv_fprop_auto_takes_winograd_for_batches_of_small_images() {
    let case = |n: i64| ConvCase {
        n,
        c: 16,
        k: 20,
        input: vec![7, 7],
        ..ConvCase::basic()
    };
    for (n, winograd) in [(1, false), (2, false), (4, true), (8, true)] {
        let g = conv_graph(&case(n), &[], DataType::F32);
        let size = |algo: i64| {
            ConvFpropEngine
                .prepare(&g, &[algo, 0])
                .unwrap()
                .workspace_size()
        };
        assert_eq!(
            size(0) == size(2),
            winograd,
            "N{n}: auto should take Winograd: {winograd}"
        );
        assert_eq!(
            super::conv::fprop::plans_broadcast(&g, &[0, 0]),
            !winograd,
            "N{n}"
        );
    }
    let g = conv_graph(&case(4), &epilogues()[1], DataType::F32);
    check(
        &ConvFpropEngine,
        g,
        &[0, 0],
        1e-5,
        (16.0f64 * 9.0).sqrt(),
        77,
    );
}

/// `conv_algo = 2` on shapes Winograd does not apply to (stride, dilation, groups, other
/// filters, 1-d and 3-d) falls back to im2col and still matches the reference.
#[test]
fn conv_fprop_winograd_knob_falls_back_elsewhere() {
    for (i, case) in conv_cases().iter().enumerate() {
        let reduction = (case.c / case.groups * case.filter.iter().product::<i64>()) as f64;
        let g = conv_graph(case, &epilogues()[1], DataType::F32);
        check(
            &ConvFpropEngine,
            g,
            &[2, 0],
            1e-5,
            reduction.sqrt(),
            i as u64,
        );
    }
}

#[test]
fn conv_fprop_refusals_say_why() {
    let case = ConvCase::basic();
    let mut g = conv_graph(&case, &[], DataType::F32);
    if let Op::Conv(c) = &mut g.nodes[0].op {
        c.direction = ConvDirection::Dgrad;
    }
    let why = ConvFpropEngine.supports(&g).unwrap_err();
    assert!(why.contains("conv_dgrad"), "{why}");

    // The conv result feeds two nodes: not a chain.
    let mut g = conv_graph(&case, &epilogues()[1], DataType::F32);
    let yd = g.tensor(3).unwrap().dims.clone();
    g.tensors
        .push(tensor(50, &yd, &packed_strides(&yd), DataType::F32));
    g.nodes.push(pw("extra", PointwiseMode::Neg, 3, None, 50));
    g.validate().unwrap();
    let why = ConvFpropEngine.supports(&g).unwrap_err();
    assert!(why.contains("read by 2 nodes"), "{why}");

    let g = pointwise_dag(DataType::F32, false);
    assert!(ConvFpropEngine
        .supports(&g)
        .unwrap_err()
        .contains("no convolution"));
    let mut g = conv_graph(&case, &[], DataType::F32);
    g.tensors[0].data_type = DataType::F64;
    assert!(ConvFpropEngine.supports(&g).unwrap_err().contains("f64"));
}

// ---------------------------------------------------------------- matmul

fn matmul_graph(
    a_dims: &[i64],
    b_dims: &[i64],
    b_transposed: bool,
    steps: &[(PointwiseMode, Other)],
    dt: DataType,
) -> OpGraph {
    let cd = kiln_core::shape::matmul_output_dims(a_dims, b_dims, "test").unwrap();
    let r = b_dims.len();
    let b_strides = if b_transposed {
        let mut order: Vec<usize> = (0..r - 2).collect();
        order.extend([r - 1, r - 2]);
        kiln_core::tensor::packed_strides_in_order(b_dims, &order)
    } else {
        padded_strides(b_dims)
    };
    let mut tensors = vec![
        tensor(1, a_dims, &packed_strides(a_dims), dt),
        tensor(2, b_dims, &b_strides, dt),
    ];
    let mut nodes = vec![Node {
        name: "matmul".into(),
        compute_type: DataType::F32,
        op: Op::Matmul(MatmulOp { a: 1, b: 2, c: 3 }),
    }];
    // Bias over the output columns: [1, .., 1, N].
    let mut steps_tensors = Vec::new();
    append_epilogue(&mut steps_tensors, &mut nodes, &cd, steps, dt, Layout::Nchw);
    for t in &mut steps_tensors {
        if t.dims.len() == cd.len() && t.dims != cd && t.scalar.is_none() {
            let mut d = vec![1i64; cd.len()];
            d[cd.len() - 1] = cd[cd.len() - 1];
            t.strides = packed_strides(&d);
            t.dims = d;
        }
    }
    tensors.extend(steps_tensors);
    OpGraph {
        name: format!("matmul {a_dims:?} x {b_dims:?} t={b_transposed} {steps:?} {dt}"),
        tensors,
        nodes,
    }
}

#[test]
fn matmul_matches_reference() {
    let shapes: [(&[i64], &[i64]); 5] = [
        (&[5, 7], &[7, 3]),
        (&[2, 1, 33, 17], &[1, 3, 17, 40]),
        (&[3, 70, 9], &[3, 9, 65]),
        (&[1, 1], &[1, 1]),
        (&[130, 64], &[64, 20]),
    ];
    for (i, (a, b)) in shapes.iter().enumerate() {
        for (j, steps) in epilogues().iter().enumerate() {
            for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
                let k = a[a.len() - 1] as f64;
                for (split, transposed) in [(0, false), (1, true), (2, false)] {
                    let g = matmul_graph(a, b, transposed, steps, dt);
                    let seed = (i * 100 + j * 10) as u64 + split as u64;
                    check(&MatmulEngine, g, &[split], tol_of(dt), k.sqrt(), seed);
                }
            }
        }
    }
}

/// f16 operands on AMX tiles are split into exact bf16 parts, which infinite and NaN values do
/// not have: a call with one multiplies the widened values instead, as the reference does.
#[test]
fn f16_matmul_with_infinite_or_nan_values_matches_the_reference() {
    let g = matmul_graph(&[40, 70], &[70, 33], false, &[], DataType::F16);
    let mut knobs: Vec<i64> = MatmulEngine.knobs().iter().map(|k| k.default).collect();
    let at = MatmulEngine
        .knobs()
        .iter()
        .position(|k| k.id == super::matmul::KNOB_ISA)
        .unwrap();
    // The AMX level where this processor has it, else the best it has (the widened path).
    knobs[at] = super::isa::Isa::Amx as i64;
    for (row, bad) in [(0, f64::INFINITY), (3, f64::NAN), (39, f64::NEG_INFINITY)] {
        let mut rng = StdRng::seed_from_u64(row as u64);
        let mut hosts: Vec<Host> = (1..=3)
            .map(|uid| host_random(g.tensor(uid).unwrap(), &mut rng))
            .collect();
        // Element (row, 5) of A: the whole output row is infinite or NaN.
        let a = g.tensor(1).unwrap();
        let o = offsets(a)[row * 70 + 5];
        // SAFETY: a u64 buffer viewed as bytes.
        let raw = unsafe {
            std::slice::from_raw_parts_mut(
                hosts[0].bytes.as_mut_ptr() as *mut u8,
                hosts[0].bytes.len() * 8,
            )
        };
        a.data_type.write_f64(bad, &mut raw[o * 2..]).unwrap();
        hosts[0].values[row * 70 + 5] = bad;
        let inputs: HashMap<i64, Vec<f64>> =
            [(1, hosts[0].values.clone()), (2, hosts[1].values.clone())].into();
        let want = reference::evaluate(&g, &inputs).unwrap();
        let bindings: Vec<KilnTensorBinding> = hosts
            .iter_mut()
            .enumerate()
            .map(|(i, h)| KilnTensorBinding {
                uid: i as i64 + 1,
                ptr: h.bytes.as_mut_ptr() as *mut _,
            })
            .collect();
        let prepared = MatmulEngine.prepare(&g, &knobs).unwrap();
        let mut workspace = vec![0u8; prepared.workspace_size()];
        // SAFETY: every binding points at storage for its tensor's layout; the workspace holds
        // workspace_size() bytes.
        unsafe {
            let map = TensorMap::new(&g, &bindings).unwrap();
            prepared.execute(&map, workspace.as_mut_ptr()).unwrap();
        }
        let got = host_read(g.tensor(3).unwrap(), &hosts[2]);
        for (i, (g, w)) in got.iter().zip(&want[&3]).enumerate() {
            let ok =
                (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 2e-3 * (w.abs() + 9.0);
            assert!(ok, "{bad} at row {row}: element {i}: got {g}, want {w}");
        }
        assert!(got[row * 33..(row + 1) * 33].iter().all(|v| !v.is_finite()));
    }
}

#[test]
fn matmul_refuses_non_matmul_graphs() {
    let why = MatmulEngine
        .supports(&pointwise_dag(DataType::F32, false))
        .unwrap_err();
    assert!(why.contains("no matmul"), "{why}");
    let mut g = conv_graph(&ConvCase::basic(), &[], DataType::F32);
    g.validate().unwrap();
    assert!(MatmulEngine.supports(&g).unwrap_err().contains("no matmul"));
}

#[test]
fn norm_refuses_graphs_without_a_norm_with_a_reason() {
    let why = super::NormEngine
        .supports(&pointwise_dag(DataType::F32, false))
        .unwrap_err();
    assert!(why.contains("one normalization node"), "{why}");
}

#[test]
fn engines_are_listed_most_specific_first() {
    let names: Vec<&str> = super::engines().iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        [
            "KILN_CPU_CONV_FPROP_GEMM_V1",
            "KILN_CPU_MATMUL_GEMM_V1",
            "KILN_CPU_CONV_DGRAD_GEMM_V1",
            "KILN_CPU_CONV_WGRAD_GEMM_V1",
            "KILN_CPU_NORM_V1",
            "KILN_CPU_POINTWISE_V1",
            "KILN_CPU_SDPA_FLASH_V1",
            "KILN_CPU_RESAMPLE_V1",
            "KILN_CPU_RESAMPLE_BACKWARD_V1"
        ]
    );
}

// ---------------------------------------------------------------- portable plans

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Builds a plan of `engine` for `graph` through the plugin inside a pool of `build_threads`
/// (knob ids and values `knobs`, the rest default), saves it, and returns the payload and the
/// built plan's workspace size.
fn build_and_save(
    engine: &dyn CpuEngine,
    graph: &OpGraph,
    knobs: &[(i64, i64)],
    build_threads: usize,
) -> (Vec<u8>, usize) {
    let id = kiln_core::engine_id(engine.name());
    let settings: Vec<KnobSetting> = knobs
        .iter()
        .map(|&(knob_id, value)| KnobSetting { knob_id, value })
        .collect();
    pool(build_threads).install(|| {
        let ctx = CpuPlugin.create_context(id, &settings, graph).unwrap();
        let bytes = CpuPlugin.serialize_context(id, &ctx).unwrap();
        (bytes, CpuPlugin.workspace_size(&ctx))
    })
}

/// A plan built with `build_threads` rayon threads, saved, then restored and executed with
/// `run_threads`: the restored plan needs the same workspace and matches the reference. Returns
/// the workspace size.
#[allow(clippy::too_many_arguments)]
fn check_portable(
    engine: &dyn CpuEngine,
    graph: OpGraph,
    knobs: &[(i64, i64)],
    tol: f64,
    scale: f64,
    seed: u64,
    build_threads: usize,
    run_threads: usize,
) -> usize {
    let id = kiln_core::engine_id(engine.name());
    let mut checked = graph.clone();
    checked.validate().unwrap();
    let (bytes, built) = build_and_save(engine, &checked, knobs, build_threads);
    // The payload stores a concrete slot count, never "auto".
    let saved = crate::payload::decode(&bytes).unwrap();
    let slots_at = engine
        .knobs()
        .iter()
        .position(|k| k.name == super::WORKSPACE_SLOTS_KNOB)
        .unwrap();
    let want_slots = knobs
        .iter()
        .find(|&&(k, _)| k == engine.knobs()[slots_at].id)
        .map(|&(_, v)| v)
        .unwrap_or(build_threads.min(super::AUTO_WORKSPACE_SLOTS_CAP) as i64);
    assert_eq!(
        saved.knobs[slots_at],
        (engine.knobs()[slots_at].id, want_slots),
        "{}",
        graph.name
    );
    check_run(engine, graph, tol, scale, seed, |graph, bindings| {
        // Raw pointers are not Send: carry addresses into the pool.
        let addresses: Vec<(i64, usize)> =
            bindings.iter().map(|b| (b.uid, b.ptr as usize)).collect();
        pool(run_threads).install(|| {
            let bindings: Vec<KilnTensorBinding> = addresses
                .iter()
                .map(|&(uid, at)| KilnTensorBinding {
                    uid,
                    ptr: at as *mut _,
                })
                .collect();
            let ctx = CpuPlugin.restore_context(id, &bytes).unwrap();
            assert_eq!(
                CpuPlugin.workspace_size(&ctx),
                built,
                "{}: built with {build_threads} threads, restored with {run_threads}",
                graph.name
            );
            let mut workspace = vec![0u8; built + 1];
            // SAFETY: every binding points at storage for its tensor's layout; the workspace
            // holds workspace_size() bytes (offset by one so that its alignment is exercised).
            unsafe {
                CpuPlugin
                    .execute(&ctx, &bindings, workspace.as_mut_ptr().add(1))
                    .unwrap()
            };
        })
    });
    built
}

/// Each scratch-using engine and path: the workspace depends on the build's slot count only, so a
/// plan built on 2 threads runs on 7 and one built on 7 runs on 2 and on 1.
#[test]
fn plans_keep_their_workspace_across_thread_counts() {
    let conv = ConvCase {
        n: 3,
        c: 16,
        k: 24,
        input: vec![23, 21],
        ..ConvCase::basic()
    };
    let steps = &epilogues()[1];
    let grad = |direction: ConvDirection, dt: DataType| {
        let mut g = conv_graph(&conv, &[], dt);
        if let Op::Conv(c) = &mut g.nodes[0].op {
            c.direction = direction;
        }
        g.name = format!("{direction:?} {}", g.name);
        g
    };
    type Case = (&'static dyn CpuEngine, OpGraph, Vec<(i64, i64)>, f64);
    let cases: Vec<Case> = vec![
        // im2col tiles (f16 input: no in-place GEMM).
        (
            &ConvFpropEngine,
            conv_graph(&conv, steps, DataType::F16),
            vec![],
            12.0,
        ),
        // Winograd blocks.
        (
            &ConvFpropEngine,
            conv_graph(&conv, steps, DataType::F32),
            vec![(super::conv::fprop::KNOB_ALGO, 2)],
            12.0,
        ),
        (
            &ConvDgradEngine,
            grad(ConvDirection::Dgrad, DataType::F16),
            vec![],
            15.0,
        ),
        (
            &ConvWgradEngine,
            grad(ConvDirection::Wgrad, DataType::F16),
            vec![],
            40.0,
        ),
        // Output-row tiles (f16 output), and the epilogue pass after a direct f32 GEMM.
        (
            &MatmulEngine,
            matmul_graph(&[3, 70, 9], &[3, 9, 65], false, steps, DataType::F16),
            vec![],
            3.0,
        ),
        (
            &MatmulEngine,
            matmul_graph(&[3, 70, 9], &[3, 9, 65], false, steps, DataType::F32),
            vec![],
            3.0,
        ),
    ];
    for (i, (engine, graph, knobs, scale)) in cases.into_iter().enumerate() {
        let dt = graph.tensor(1).unwrap().data_type;
        let tol = tol_of(dt);
        let seed = 500 + i as u64;
        let small = check_portable(engine, graph.clone(), &knobs, tol, scale, seed, 2, 7);
        let large = check_portable(engine, graph.clone(), &knobs, tol, scale, seed, 7, 2);
        assert_eq!(
            check_portable(engine, graph.clone(), &knobs, tol, scale, seed, 7, 1),
            large
        );
        // The cases are big enough for the slot count to matter, so the test can fail.
        assert!(large > small, "{}: {large} <= {small}", graph.name);
    }
}

/// A plan saved before `workspace_slots` existed (payload format 1.0 with the two knob values of
/// then) still restores: the knob it does not set takes its default, the engine's behaviour
/// before the knob existed. A knob id the engine does not have (a newer kiln's plan) is refused
/// as not applicable.
#[test]
fn plans_saved_before_a_knob_existed_restore_and_unknown_knobs_are_not_applicable() {
    let mut g = conv_graph(&ConvCase::basic(), &[], DataType::F32);
    g.validate().unwrap();
    let id = kiln_core::engine_id(ConvFpropEngine.name());
    let old = crate::payload::tests::encode_1_0(id, &[1, 0], &g);
    let ctx = CpuPlugin
        .restore_context(id, &old)
        .expect("a pre-workspace_slots plan restores");
    assert_eq!(ctx.knobs[..2], [1, 0]);
    let newer = crate::payload::encode(id, &[(1, 0), (99, 1)], &g);
    let e = CpuPlugin
        .restore_context(id, &newer)
        .err()
        .expect("an unknown knob id");
    assert_eq!(e.status, kiln_plugin_sdk::KilnPluginStatus::NOT_APPLICABLE);
    assert!(e.message.contains("knob id 99"), "{}", e.message);
}

/// An explicit `workspace_slots` is kept as given, and the knob's range is refused outside it.
#[test]
fn workspace_slots_knob_is_kept_and_checked() {
    let g = conv_graph(&ConvCase::basic(), &[], DataType::F16);
    let slots = super::conv::fprop::KNOB_WORKSPACE_SLOTS;
    let (bytes, _) = build_and_save(&ConvFpropEngine, &g, &[(slots, 3)], 7);
    assert_eq!(
        crate::payload::decode(&bytes).unwrap().knobs,
        vec![
            (1, 0),
            (2, 0),
            (slots, 3),
            (
                super::conv::fprop::KNOB_ISA,
                // A convolution has no bf16 GEMM, so auto stops below AMX.
                super::isa::best_available().min(super::isa::Isa::Avx512) as i64
            )
        ]
    );
    let id = kiln_core::engine_id(ConvFpropEngine.name());
    let too_many = KnobSetting {
        knob_id: slots,
        value: super::WORKSPACE_SLOTS_MAX + 1,
    };
    let err = CpuPlugin.create_context(id, &[too_many], &g).err().unwrap();
    assert!(err.message.contains("workspace_slots"), "{}", err.message);
    // Knob ids of the existing knobs did not move.
    let ids: Vec<(i64, &str)> = ConvFpropEngine
        .knobs()
        .iter()
        .map(|k| (k.id, k.name))
        .collect();
    assert_eq!(
        ids,
        [
            (1, "conv_algo"),
            (2, "tile_positions"),
            (3, "workspace_slots"),
            (4, "isa")
        ]
    );
    let ids: Vec<(i64, &str)> = MatmulEngine
        .knobs()
        .iter()
        .map(|k| (k.id, k.name))
        .collect();
    assert_eq!(
        ids,
        [(1, "parallel_split"), (2, "workspace_slots"), (3, "isa")]
    );
}

/// Every GEMM path (im2col, Winograd, the direct 1x1 GEMM, dgrad, wgrad, matmul in place and in
/// tiles) forced to each instruction-set level this processor has: the payload records the
/// level, and the plan restored from it matches the reference.
#[test]
fn every_gemm_path_matches_the_reference_at_every_available_isa() {
    use super::isa::Isa;
    let conv = ConvCase {
        n: 2,
        c: 19,
        k: 21,
        input: vec![13, 11],
        ..ConvCase::basic()
    };
    let one_by_one = ConvCase {
        n: 2,
        c: 37,
        k: 29,
        input: vec![9, 7],
        filter: vec![1, 1],
        pad: (vec![0, 0], vec![0, 0]),
        ..ConvCase::basic()
    };
    let steps = &epilogues()[1];
    let grad = |direction: ConvDirection| {
        let mut g = conv_graph(&conv, &[], DataType::F32);
        if let Op::Conv(c) = &mut g.nodes[0].op {
            c.direction = direction;
        }
        g.name = format!("{direction:?} {}", g.name);
        g
    };
    use super::conv::{fprop, grad as conv_grad};
    type Case = (&'static dyn CpuEngine, OpGraph, Vec<(i64, i64)>, i64, f64);
    // A bf16 convolution at auto algorithm: on AMX tiles where the processor has them.
    let bf16_conv = |case: ConvCase| -> Case {
        (
            &ConvFpropEngine,
            conv_graph(&case, steps, DataType::Bf16),
            vec![],
            fprop::KNOB_ISA,
            12.0,
        )
    };
    let cases: Vec<Case> = vec![
        (
            &ConvFpropEngine,
            conv_graph(&conv, steps, DataType::F32),
            vec![(fprop::KNOB_ALGO, 1)],
            fprop::KNOB_ISA,
            12.0,
        ),
        (
            &ConvFpropEngine,
            conv_graph(&conv, steps, DataType::F32),
            vec![(fprop::KNOB_ALGO, 2)],
            fprop::KNOB_ISA,
            12.0,
        ),
        (
            &ConvFpropEngine,
            conv_graph(&one_by_one, steps, DataType::F32),
            vec![],
            fprop::KNOB_ISA,
            12.0,
        ),
        (
            &ConvFpropEngine,
            conv_graph(&conv, steps, DataType::Bf16),
            vec![(fprop::KNOB_ALGO, 1)],
            fprop::KNOB_ISA,
            12.0,
        ),
        // bf16 on AMX tiles where the processor has them: channels-last, two groups, stride 2,
        // more channels than one 32-block, auto algorithm (AMX takes the im2col path).
        bf16_conv(ConvCase {
            n: 3,
            c: 70,
            k: 38,
            input: vec![9, 11],
            stride: vec![2, 1],
            groups: 2,
            layout: Layout::Nhwc,
            ..ConvCase::basic()
        }),
        // The same with 32 channels a group: the AMX path gathers each tile's patches from x
        // straight into the packed layout (dilated, unevenly padded, a partial row block).
        bf16_conv(ConvCase {
            n: 3,
            c: 64,
            k: 40,
            input: vec![9, 11],
            pad: (vec![1, 2], vec![0, 1]),
            stride: vec![2, 1],
            dilation: vec![1, 2],
            groups: 2,
            layout: Layout::Nhwc,
            ..ConvCase::basic()
        }),
        // And from an NCHW input, which the AMX path first copies channels-last into the
        // workspace; the tiles are stored transposed into the NCHW output.
        bf16_conv(ConvCase {
            n: 2,
            c: 64,
            k: 38,
            input: vec![7, 37],
            pad: (vec![1, 0], vec![2, 1]),
            stride: vec![1, 2],
            dilation: vec![2, 1],
            groups: 2,
            layout: Layout::Nchw,
            ..ConvCase::basic()
        }),
        // Channels outermost and padded rows: the copy reads any strides.
        bf16_conv(ConvCase {
            n: 3,
            c: 32,
            k: 20,
            input: vec![5, 9],
            layout: Layout::Odd,
            ..ConvCase::basic()
        }),
        // Output rows longer than a block of 32 positions, NHWC.
        bf16_conv(ConvCase {
            n: 2,
            c: 32,
            k: 40,
            input: vec![5, 70],
            layout: Layout::Nhwc,
            ..ConvCase::basic()
        }),
        // Tiles of 48 positions, which start inside output rows of 45, NCHW.
        (
            &ConvFpropEngine,
            conv_graph(
                &ConvCase {
                    n: 2,
                    c: 64,
                    k: 36,
                    input: vec![4, 45],
                    groups: 2,
                    ..ConvCase::basic()
                },
                steps,
                DataType::Bf16,
            ),
            vec![(fprop::KNOB_TILE_POSITIONS, 48)],
            fprop::KNOB_ISA,
            12.0,
        ),
        (
            &ConvDgradEngine,
            grad(ConvDirection::Dgrad),
            vec![],
            conv_grad::KNOB_ISA,
            15.0,
        ),
        (
            &ConvWgradEngine,
            grad(ConvDirection::Wgrad),
            vec![],
            conv_grad::KNOB_ISA,
            40.0,
        ),
        (
            &MatmulEngine,
            matmul_graph(&[3, 70, 19], &[3, 19, 65], true, &[], DataType::F32),
            vec![],
            super::matmul::KNOB_ISA,
            3.0,
        ),
        (
            &MatmulEngine,
            matmul_graph(&[3, 70, 19], &[3, 19, 65], false, steps, DataType::F16),
            vec![],
            super::matmul::KNOB_ISA,
            3.0,
        ),
        // bf16: the packed path where the processor has AMX or AVX-512 BF16 (tiles of 32 rows,
        // broadcast batch).
        (
            &MatmulEngine,
            matmul_graph(
                &[2, 1, 45, 70],
                &[1, 3, 70, 37],
                true,
                steps,
                DataType::Bf16,
            ),
            vec![],
            super::matmul::KNOB_ISA,
            3.0,
        ),
        (
            &MatmulEngine,
            matmul_graph(&[300, 33], &[33, 290], false, &[], DataType::Bf16),
            vec![],
            super::matmul::KNOB_ISA,
            3.0,
        ),
    ];
    let mut ran = 0;
    for (i, (engine, graph, knobs, isa_knob, scale)) in cases.into_iter().enumerate() {
        let dt = graph.tensor(1).unwrap().data_type;
        for isa in Isa::ALL.into_iter().filter(|l| l.is_available()) {
            let mut knobs = knobs.clone();
            knobs.push((isa_knob, isa as i64));
            let mut checked = graph.clone();
            checked.validate().unwrap();
            let (bytes, workspace) = build_and_save(engine, &checked, &knobs, 2);
            let packs = match isa {
                Isa::Amx => matches!(dt, DataType::Bf16 | DataType::F16),
                Isa::Avx512Bf16 => dt == DataType::Bf16,
                _ => false,
            };
            if packs {
                // The packed bf16 layout holds packed operands (f16 ones, at the AMX level, as
                // their bf16 parts): the plan took it.
                let mut below = knobs.clone();
                below.pop();
                below.push((isa_knob, Isa::Avx512 as i64));
                let (_, plain) = build_and_save(engine, &checked, &below, 2);
                assert!(workspace > plain, "{}: {workspace} <= {plain}", graph.name);
            }
            let saved = crate::payload::decode(&bytes).unwrap();
            assert!(
                saved.knobs.contains(&(isa_knob, isa as i64)),
                "{}: {:?}",
                graph.name,
                saved.knobs
            );
            check_portable(
                engine,
                graph.clone(),
                &knobs,
                tol_of(dt),
                scale,
                900 + i as u64,
                2,
                2,
            );
            ran += 1;
        }
    }
    // The portable level runs everywhere, so every case ran at least once.
    assert!(ran >= 11);
}

// ---------------------------------------------------------------- resample

/// A pooling graph: x [dims] in `strides`, y (and an index of `index_type`) in x's layout order.
fn pooling(
    dims: &[i64],
    strides_of: fn(&[i64]) -> Vec<i64>,
    dt: DataType,
    mode: kiln_core::ops::resample::ResampleMode,
    geometry: &kiln_core::ops::resample::ResampleGeometry,
    index_type: Option<DataType>,
) -> OpGraph {
    use kiln_core::ops::resample::ResampleOp;
    let out = geometry.output_dims(dims, "test").unwrap();
    let mut tensors = vec![
        tensor(1, dims, &strides_of(dims), dt),
        tensor(2, &out, &strides_of(&out), dt),
    ];
    if let Some(it) = index_type {
        tensors.push(tensor(3, &out, &strides_of(&out), it));
    }
    let op = ResampleOp {
        mode,
        geometry: geometry.clone(),
        x: Some(1),
        y: 2,
        index: index_type.map(|_| 3),
        dx: None,
    };
    OpGraph {
        name: format!("{} {dims:?} {dt}", mode.name()),
        tensors,
        nodes: vec![Node {
            name: "pool".into(),
            compute_type: DataType::F32,
            op: Op::Generic(op.to_generic()),
        }],
    }
}

#[test]
fn resample_every_mode_layout_rank_and_type_matches_the_reference() {
    use kiln_core::ops::resample::{ResampleGeometry, ResampleMode};
    let cases: [(&[i64], ResampleGeometry); 3] = [
        (
            &[2, 5, 9, 8],
            ResampleGeometry {
                window: vec![3, 2],
                stride: vec![2, 2],
                pre_padding: vec![1, 0],
                post_padding: vec![1, 1],
            },
        ),
        (
            &[1, 3, 11],
            ResampleGeometry {
                window: vec![4],
                stride: vec![3],
                pre_padding: vec![2],
                post_padding: vec![0],
            },
        ),
        (
            &[2, 4, 5, 4, 6],
            ResampleGeometry {
                window: vec![2, 3, 2],
                stride: vec![1, 2, 2],
                pre_padding: vec![0, 1, 1],
                post_padding: vec![1, 2, 0],
            },
        ),
    ];
    let mut seed = 60;
    for (dims, geometry) in &cases {
        for mode in ResampleMode::ALL {
            for layout in [
                packed_strides as fn(&[i64]) -> Vec<i64>,
                channels_last_strides,
            ] {
                for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
                    let index = (mode == ResampleMode::MaxPool).then_some(if dt == DataType::F16 {
                        DataType::I8
                    } else {
                        DataType::I32
                    });
                    let g = pooling(dims, layout, dt, mode, geometry, index);
                    seed += 1;
                    check(&super::ResampleEngine, g, &[], tol_of(dt), 1.0, seed);
                }
            }
        }
    }
}

/// Pooling at every instruction-set level this processor runs, on shapes that take each path
/// of the vector folds: strides 1, 2 (deinterleaved) and 3 (split into phases), windows with
/// more rows than are staged at once and more taps than a batch (the results carried between
/// batches), channels-last runs that end inside a vector (read in place, masked) or that are
/// staged in several batches (bf16, thousands of channels), in every mode.
#[test]
fn resample_every_level_stride_and_batch_matches_the_reference() {
    use kiln_core::ops::resample::{ResampleGeometry, ResampleMode};
    let geometry = |window: &[i64], stride: &[i64], pre: &[i64], post: &[i64]| ResampleGeometry {
        window: window.to_vec(),
        stride: stride.to_vec(),
        pre_padding: pre.to_vec(),
        post_padding: post.to_vec(),
    };
    type Strides = fn(&[i64]) -> Vec<i64>;
    let cases: [(&[i64], Strides, DataType, ResampleGeometry); 7] = [
        (
            &[2, 3, 9, 37],
            packed_strides,
            DataType::F32,
            geometry(&[3, 3], &[1, 1], &[1, 2], &[2, 1]),
        ),
        (
            &[1, 2, 11, 70],
            packed_strides,
            DataType::F16,
            geometry(&[3, 4], &[2, 2], &[1, 3], &[0, 1]),
        ),
        (
            &[1, 2, 24, 41],
            packed_strides,
            DataType::F32,
            geometry(&[18, 5], &[1, 3], &[2, 1], &[0, 4]),
        ),
        (
            &[1, 2, 330],
            packed_strides,
            DataType::Bf16,
            geometry(&[300], &[2], &[10], &[7]),
        ),
        (
            &[1, 20, 18, 18],
            channels_last_strides,
            DataType::F32,
            geometry(&[17, 17], &[1, 1], &[8, 3], &[2, 5]),
        ),
        (
            &[2, 37, 7, 6],
            channels_last_strides,
            DataType::F16,
            geometry(&[3, 2], &[2, 1], &[1, 1], &[1, 0]),
        ),
        (
            &[1, 8000, 4, 4],
            channels_last_strides,
            DataType::Bf16,
            geometry(&[3, 3], &[1, 1], &[1, 1], &[1, 1]),
        ),
    ];
    let levels: Vec<super::isa::Isa> = super::isa::Isa::ALL
        .into_iter()
        .filter(|l| l.is_available())
        .collect();
    let mut runs = 0;
    for (i, (dims, layout, dt, geometry)) in cases.iter().enumerate() {
        for mode in ResampleMode::ALL {
            let index = (mode == ResampleMode::MaxPool).then_some(DataType::I32);
            let g = pooling(dims, *layout, *dt, mode, geometry, index);
            for &level in &levels {
                let seed = 300 + 10 * i as u64 + level as u64;
                check_run(
                    &super::ResampleEngine,
                    g.clone(),
                    tol_of(*dt),
                    1.0,
                    seed,
                    |graph, bindings| {
                        let prepared = super::resample::prepare_at(graph, level).unwrap();
                        // SAFETY: every binding points at storage for its tensor's layout; the
                        // engine needs no workspace.
                        unsafe {
                            let map = TensorMap::new(graph, bindings).unwrap();
                            prepared.execute(&map, std::ptr::null_mut()).unwrap();
                        }
                    },
                );
                runs += 1;
            }
        }
    }
    assert!(runs >= 7 * 3, "only {runs} runs");
    // The backward on the same shapes: max through an index (random values, most of which
    // route nothing) and through x, and both averages.
    let mut runs = 0;
    for (i, (dims, layout, dt, geometry)) in cases.iter().enumerate() {
        for (mode, maxima) in [
            (ResampleMode::MaxPool, Some(DataType::I32)),
            (ResampleMode::MaxPool, None),
            (ResampleMode::AvgPoolIncludePadding, None),
            (ResampleMode::AvgPoolExcludePadding, None),
        ] {
            let g = pooling_backward(dims, *layout, *dt, mode, geometry, maxima);
            let reduction = geometry.window.iter().product::<i64>() as f64;
            check(
                &super::ResampleBackwardEngine,
                g,
                &[],
                tol_of(*dt),
                reduction.sqrt(),
                400 + i as u64,
            );
            runs += 1;
        }
    }
    assert!(runs >= 7 * 4, "only {runs} backward runs");
}

/// Pooling without an index on planes (the ring of staged rows in the stride's phases, the
/// NaN tests skipped for rows without NaN, several vectors folded at once, the first rows
/// written with whole vectors of the neutral value past their end): every level gives the
/// portable level's bits on rows full of ties, ±0, infinities and, in some cases, NaN, for
/// random windows, strides, paddings and widths (some windows taller than the ring), in f32
/// and f16; and the portable level's maxima are the reference's, its averages within
/// rounding of them. Outputs are poisoned before each run.
#[test]
fn resample_planes_give_the_portable_bits_at_every_level() {
    use kiln_core::ops::resample::{ResampleGeometry, ResampleMode};
    let mut rng = StdRng::seed_from_u64(2028);
    let levels: Vec<super::isa::Isa> = super::isa::Isa::ALL
        .into_iter()
        .filter(|l| l.is_available())
        .collect();
    assert_eq!(levels[0], super::isa::Isa::Portable);
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let (mut nan_cases, mut vector_runs) = (0, 0);
    for case in 0..72usize {
        let kh = 1 + rng.random_range(0..if case % 12 == 11 { 19 } else { 4 });
        let kw = 1 + rng.random_range(0..5);
        let (sh, sw) = (1 + rng.random_range(0..3), 1 + rng.random_range(0..3));
        let (ph, pw) = (rng.random_range(0..kh), rng.random_range(0..kw));
        let (qh, qw) = (rng.random_range(0..kh), rng.random_range(0..kw));
        let dims = [
            1 + case as i64 % 2,
            1 + rng.random_range(0..3),
            (kh + rng.random_range(0..10)) as i64,
            (kw + rng.random_range(0..72)) as i64,
        ];
        let geometry = ResampleGeometry {
            window: vec![kh as i64, kw as i64],
            stride: vec![sh as i64, sw as i64],
            pre_padding: vec![ph as i64, pw as i64],
            post_padding: vec![qh as i64, qw as i64],
        };
        let mode = ResampleMode::ALL[case % 3];
        let dt = if case % 4 == 3 {
            DataType::F16
        } else {
            DataType::F32
        };
        let with_nan = case % 5 == 1;
        nan_cases += with_nan as usize;
        let g = pooling(&dims, packed_strides, dt, mode, &geometry, None);
        let y = g.tensor(2).unwrap().clone();
        let count = dims.iter().product::<i64>() as usize;
        let values: Vec<f64> = (0..count)
            .map(|_| match rng.random_range(0..24) {
                0 if with_nan => f64::NAN,
                0..=9 => specials[rng.random_range(0..specials.len())] as f64,
                // Quarters, exact in f16 too, many of them equal.
                _ => rng.random_range(-16i32..16) as f64 / 4.0,
            })
            .collect();
        let mut x_bytes = vec![0u8; count * dt.size()];
        for (v, b) in values.iter().zip(x_bytes.chunks_exact_mut(dt.size())) {
            dt.write_f64(*v, b).unwrap();
        }
        let y_len = y.storage_bytes().unwrap();
        // Each level's y, read back as f64 (exact for f32 and f16).
        let mut outputs: Vec<Vec<f64>> = Vec::new();
        for &level in &levels {
            let mut y_bytes = vec![0xA5u8; y_len];
            let bindings = [
                KilnTensorBinding {
                    uid: 1,
                    ptr: x_bytes.as_mut_ptr() as *mut _,
                },
                KilnTensorBinding {
                    uid: 2,
                    ptr: y_bytes.as_mut_ptr() as *mut _,
                },
            ];
            let prepared = super::resample::prepare_at(&g, level).unwrap();
            // SAFETY: the bindings point at storage for x's and y's layouts; the engine needs
            // no workspace.
            unsafe {
                let map = TensorMap::new(&g, &bindings).unwrap();
                prepared.execute(&map, std::ptr::null_mut()).unwrap();
            }
            outputs.push(
                offsets(&y)
                    .into_iter()
                    .map(|o| dt.read_f64(&y_bytes[o * dt.size()..]).unwrap())
                    .collect(),
            );
        }
        let same = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
        for (level, out) in levels.iter().zip(&outputs).skip(1) {
            vector_runs += 1;
            let differs = out.iter().zip(&outputs[0]).position(|(&a, &b)| !same(a, b));
            assert!(
                differs.is_none(),
                "case {case} ({}, {geometry:?}): {level:?} differs from portable at y[{}]",
                g.name,
                differs.unwrap_or(0)
            );
        }
        let inputs = HashMap::from([(1, values)]);
        let want = &reference::evaluate(&g, &inputs).unwrap()[&2];
        for (i, (&got, &w)) in outputs[0].iter().zip(want).enumerate() {
            let ok = if mode == ResampleMode::MaxPool {
                same(got, w)
            } else {
                same(got, w) || (got - w).abs() <= 4e-3 * (w.abs() + 1.0)
            };
            assert!(
                ok,
                "case {case} ({}): y[{i}] = {got}, the reference {w}",
                g.name
            );
        }
    }
    assert!(nan_cases > 10, "{nan_cases} cases with NaN");
    assert!(
        vector_runs >= 72 || levels.len() == 1,
        "{vector_runs} vector-level runs"
    );
}

/// A pooling backward graph: dy [out dims] and dx [dims] in `strides`; max pooling reads an
/// index of `index_type` (dy's dims) or, without one, x [dims].
fn pooling_backward(
    dims: &[i64],
    strides_of: fn(&[i64]) -> Vec<i64>,
    dt: DataType,
    mode: kiln_core::ops::resample::ResampleMode,
    geometry: &kiln_core::ops::resample::ResampleGeometry,
    index_type: Option<DataType>,
) -> OpGraph {
    use kiln_core::ops::resample::{ResampleMode, ResampleOp};
    let out = geometry.output_dims(dims, "test").unwrap();
    let mut tensors = vec![
        tensor(1, &out, &strides_of(&out), dt),
        tensor(2, dims, &strides_of(dims), dt),
    ];
    let (mut x, mut index) = (None, None);
    match (mode, index_type) {
        (ResampleMode::MaxPool, Some(it)) => {
            tensors.push(tensor(3, &out, &strides_of(&out), it));
            index = Some(3);
        }
        (ResampleMode::MaxPool, None) => {
            tensors.push(tensor(3, dims, &strides_of(dims), dt));
            x = Some(3);
        }
        _ => {}
    }
    let op = ResampleOp {
        mode,
        geometry: geometry.clone(),
        x,
        y: 1,
        index,
        dx: Some(2),
    };
    OpGraph {
        name: format!("{} backward {dims:?} {dt}", mode.name()),
        tensors,
        nodes: vec![Node {
            name: "pool_backward".into(),
            compute_type: DataType::F32,
            op: Op::Generic(op.to_generic()),
        }],
    }
}

#[test]
fn resample_engine_declines_other_graphs_with_a_reason() {
    use kiln_core::ops::resample::{ResampleGeometry, ResampleMode};
    let geometry = ResampleGeometry {
        window: vec![2, 2],
        stride: vec![2, 2],
        pre_padding: vec![0, 0],
        post_padding: vec![0, 0],
    };
    let mut g = pooling(
        &[1, 2, 4, 4],
        packed_strides,
        DataType::F64,
        ResampleMode::MaxPool,
        &geometry,
        None,
    );
    g.validate().unwrap();
    let why = super::ResampleEngine.supports(&g).unwrap_err();
    assert!(why.contains("f64"), "{why}");
    let dag = pointwise_dag(DataType::F32, false);
    let why = super::ResampleEngine.supports(&dag).unwrap_err();
    assert!(why.contains("resample"), "{why}");
}
