//! Graphs, envelopes and a seeded RNG shared by kiln-format's integration tests.
#![allow(dead_code)]

use kiln_core::tensor::{channels_last_strides, packed_strides};
use kiln_core::{
    ConvDirection, ConvOp, ConvParams, DataType, MatmulOp, Node, Op, OpGraph, PointwiseMode,
    PointwiseOp, PointwiseParams, ReductionMode, ReductionOp, TensorDesc,
};
use kiln_format::PlanEnvelope;

/// A packed tensor.
pub fn tensor(uid: i64, name: &str, dims: &[i64], dt: DataType, is_virtual: bool) -> TensorDesc {
    TensorDesc {
        uid,
        name: name.into(),
        dims: dims.to_vec(),
        strides: packed_strides(dims),
        data_type: dt,
        is_virtual,
        alignment: 0,
        scalar: None,
    }
}

/// A by-value scalar of rank `rank`.
pub fn scalar(uid: i64, name: &str, rank: usize, value: f64) -> TensorDesc {
    TensorDesc {
        scalar: Some(value),
        ..tensor(uid, name, &vec![1; rank], DataType::F32, false)
    }
}

pub fn node(name: &str, op: Op) -> Node {
    Node {
        name: name.into(),
        compute_type: DataType::F32,
        op,
    }
}

/// Every pointwise parameter set to a distinct non-default value.
pub fn all_params() -> PointwiseParams {
    PointwiseParams {
        relu_lower_clip: Some(-0.5),
        relu_upper_clip: Some(6.0),
        relu_lower_clip_slope: Some(0.01),
        elu_alpha: Some(1.25),
        softplus_beta: Some(2.5),
        swish_beta: Some(0.75),
        axis: None,
    }
}

/// The golden fixture of graph body minor 2: the data types, pointwise modes and fields it
/// added. `mask = cmp_gt(x, y)` (a bool tensor), `idx = gen_index(x)` along axis 1 (i32),
/// `sel = binary_select(x, y, mask)` (fp8 e4m3), `g = gelu_bwd(dy, x)` (fp8 e5m2 dy, i8 not
/// involved), `n = logical_not(mask)` (i8). Validated, so its nodes are in topological order.
pub fn fixture_minor2_graph() -> OpGraph {
    let pw = |mode, a, b, c, out, params| {
        Op::Pointwise(PointwiseOp {
            mode,
            a,
            b,
            c,
            out,
            params,
        })
    };
    let none = PointwiseParams::default();
    let mut g = OpGraph {
        name: "fixture: new types and pointwise modes (graph minor 2)".into(),
        tensors: vec![
            tensor(1, "x", &[2, 3], DataType::F32, false),
            tensor(2, "y", &[1, 3], DataType::F16, false),
            tensor(3, "mask", &[2, 3], DataType::Boolean, true),
            tensor(4, "idx", &[2, 3], DataType::I32, false),
            tensor(5, "sel", &[2, 3], DataType::Fp8E4m3, false),
            tensor(6, "dy", &[2, 3], DataType::Fp8E5m2, false),
            tensor(7, "g", &[2, 3], DataType::Bf16, false),
            tensor(8, "n", &[2, 3], DataType::I8, false),
        ],
        nodes: vec![
            node("not", pw(PointwiseMode::LogicalNot, 3, None, None, 8, none)),
            node("gt", pw(PointwiseMode::CmpGt, 1, Some(2), None, 3, none)),
            node(
                "index",
                pw(
                    PointwiseMode::GenIndex,
                    1,
                    None,
                    None,
                    4,
                    PointwiseParams {
                        axis: Some(1),
                        ..none
                    },
                ),
            ),
            node(
                "select",
                pw(PointwiseMode::BinarySelect, 1, Some(2), Some(3), 5, none),
            ),
            node(
                "gelu_bwd",
                pw(PointwiseMode::GeluBwd, 6, Some(1), None, 7, none),
            ),
        ],
    };
    g.validate().expect("the minor-2 fixture graph is valid");
    g
}

/// The golden fixture of graph body minor 1: an rmsnorm node (x channels-last-like f16, scale,
/// bias, epsilon as a by-value scalar; outputs y and, in training, inv_rms) and a relu of
/// inv_rms. Validated, so its nodes are in topological order.
pub fn fixture_multi_output_graph() -> OpGraph {
    use kiln_core::ops::rmsnorm::{Epsilon, NormPhase, RmsnormOp};
    let norm = RmsnormOp {
        x: 1,
        scale: 2,
        bias: Some(3),
        epsilon: Epsilon::Tensor(4),
        phase: NormPhase::Training,
        y: 5,
        inv_rms: Some(6),
    };
    let mut x = tensor(1, "x", &[2, 3, 4], DataType::F16, false);
    x.strides = vec![1, 2, 6];
    let mut g = OpGraph {
        name: "fixture: rmsnorm with two outputs (graph minor 1)".into(),
        tensors: vec![
            x,
            tensor(2, "scale", &[1, 3, 4], DataType::F32, false),
            tensor(3, "bias", &[1, 3, 4], DataType::F32, false),
            scalar(4, "epsilon", 1, 1e-5),
            tensor(5, "y", &[2, 3, 4], DataType::Bf16, false),
            tensor(6, "inv_rms", &[2, 1, 1], DataType::F32, true),
            tensor(7, "relu_inv_rms", &[2, 1, 1], DataType::F32, false),
        ],
        nodes: vec![
            node(
                "relu",
                Op::Pointwise(PointwiseOp {
                    mode: PointwiseMode::Relu,
                    a: 6,
                    b: None,
                    c: None,
                    out: 7,
                    params: PointwiseParams::default(),
                }),
            ),
            node("norm", Op::Generic(norm.to_generic())),
        ],
    };
    g.validate().expect("the minor-1 fixture graph is valid");
    g
}

/// The golden fixture graph: conv fprop (channels-last f16 input, padded, strided), a binary
/// pointwise with a by-value scalar, a relu with clip parameters, a matmul and a reduction.
/// Nodes are listed out of order on purpose; validation sorts them.
pub fn fixture_graph() -> OpGraph {
    let mut x = tensor(1, "x", &[1, 2, 5, 5], DataType::F16, false);
    x.strides = channels_last_strides(&x.dims);
    let mut w = tensor(2, "w", &[3, 2, 3, 3], DataType::F32, false);
    w.alignment = 64;
    let mut g = OpGraph {
        name: "fixture: conv, bias, relu, matmul, reduction".into(),
        tensors: vec![
            x,
            w,
            tensor(3, "conv_y", &[1, 3, 3, 3], DataType::F32, true),
            scalar(4, "bias", 4, 0.25),
            tensor(5, "biased", &[1, 3, 3, 3], DataType::F32, true),
            tensor(6, "relu_out", &[1, 3, 3, 3], DataType::Bf16, false),
            tensor(7, "m", &[1, 3, 3, 2], DataType::F32, false),
            tensor(8, "mm_out", &[1, 3, 3, 2], DataType::F32, true),
            tensor(9, "mean", &[1, 3, 1, 1], DataType::F64, false),
        ],
        nodes: vec![
            node(
                "reduce",
                Op::Reduction(ReductionOp {
                    mode: ReductionMode::Mean,
                    x: 8,
                    y: 9,
                }),
            ),
            node(
                "conv",
                Op::Conv(ConvOp {
                    direction: ConvDirection::Fprop,
                    x: 1,
                    w: 2,
                    y: 3,
                    params: ConvParams {
                        pre_padding: vec![1, 1],
                        post_padding: vec![1, 1],
                        stride: vec![2, 2],
                        dilation: vec![1, 1],
                    },
                }),
            ),
            node(
                "bias",
                Op::Pointwise(PointwiseOp {
                    mode: PointwiseMode::Add,
                    a: 3,
                    b: Some(4),
                    c: None,
                    out: 5,
                    params: PointwiseParams::default(),
                }),
            ),
            node(
                "relu",
                Op::Pointwise(PointwiseOp {
                    mode: PointwiseMode::Relu,
                    a: 5,
                    b: None,
                    c: None,
                    out: 6,
                    params: PointwiseParams {
                        relu_lower_clip: Some(0.0),
                        relu_upper_clip: Some(6.0),
                        relu_lower_clip_slope: Some(0.01),
                        ..PointwiseParams::default()
                    },
                }),
            ),
            node("matmul", Op::Matmul(MatmulOp { a: 6, b: 7, c: 8 })),
        ],
    };
    g.validate().expect("the fixture graph validates");
    g
}

/// A chain through every pointwise mode; every node carries every pointwise parameter.
pub fn every_pointwise_mode_graph() -> OpGraph {
    let dims = [2, 3];
    let mut tensors = vec![
        tensor(1, "in", &dims, DataType::F32, false),
        tensor(2, "other", &[1, 3], DataType::F16, false),
    ];
    let mut nodes = Vec::new();
    let mut prev = 1;
    let count = PointwiseMode::ALL.len();
    for (i, mode) in PointwiseMode::ALL.into_iter().enumerate() {
        let out = 100 + i as i64;
        let last = i + 1 == count;
        tensors.push(tensor(
            out,
            &format!("t_{}", mode.name()),
            &dims,
            DataType::F32,
            !last,
        ));
        nodes.push(node(
            mode.name(),
            Op::Pointwise(PointwiseOp {
                mode,
                a: prev,
                b: (mode.operand_count() >= 2).then_some(2),
                c: (mode.operand_count() == 3).then_some(1),
                out,
                params: PointwiseParams {
                    axis: (mode == PointwiseMode::GenIndex).then_some(1),
                    ..all_params()
                },
            }),
        ));
        prev = out;
    }
    let mut g = OpGraph {
        name: "every pointwise mode".into(),
        tensors,
        nodes,
    };
    g.validate().expect("the pointwise chain validates");
    g
}

/// One convolution of `direction` with 2 groups, dilation and asymmetric padding.
pub fn conv_graph(direction: ConvDirection) -> OpGraph {
    let x = tensor(
        1,
        "x",
        &[2, 4, 9, 7],
        DataType::F32,
        direction == ConvDirection::Dgrad,
    );
    let w = tensor(
        2,
        "w",
        &[6, 2, 3, 2],
        DataType::F32,
        direction == ConvDirection::Wgrad,
    );
    // out = (9 + 2 + 0 - (2*2+1)) / 1 + 1 = 7 ; (7 + 0 + 1 - 2) / 2 + 1 = 4
    let y = tensor(
        3,
        "y",
        &[2, 6, 7, 4],
        DataType::F32,
        direction == ConvDirection::Fprop,
    );
    let (x, w, y) = (
        TensorDesc {
            is_virtual: false,
            ..x
        },
        TensorDesc {
            is_virtual: false,
            ..w
        },
        TensorDesc {
            is_virtual: false,
            ..y
        },
    );
    let mut g = OpGraph {
        name: format!("conv {direction:?}"),
        tensors: vec![x, w, y],
        nodes: vec![node(
            "conv",
            Op::Conv(ConvOp {
                direction,
                x: 1,
                w: 2,
                y: 3,
                params: ConvParams {
                    pre_padding: vec![2, 0],
                    post_padding: vec![0, 1],
                    stride: vec![1, 2],
                    dilation: vec![2, 1],
                },
            }),
        )],
    };
    g.validate().expect("the conv graph validates");
    g
}

/// A batched, broadcast matmul followed by every reduction mode (one output each).
pub fn matmul_reduction_graph() -> OpGraph {
    let mut tensors = vec![
        tensor(1, "a", &[3, 4, 5], DataType::F32, false),
        tensor(2, "b", &[1, 5, 6], DataType::Bf16, false),
        tensor(3, "c", &[3, 4, 6], DataType::F32, false),
    ];
    let mut nodes = vec![node("mm", Op::Matmul(MatmulOp { a: 1, b: 2, c: 3 }))];
    for (i, mode) in ReductionMode::ALL.into_iter().enumerate() {
        let y = 10 + i as i64;
        tensors.push(tensor(
            y,
            &format!("r_{}", mode.name()),
            &[3, 1, 6],
            DataType::F32,
            false,
        ));
        nodes.push(node(
            &format!("reduce_{}", mode.name()),
            Op::Reduction(ReductionOp { mode, x: 3, y }),
        ));
    }
    let mut g = OpGraph {
        name: String::new(),
        tensors,
        nodes,
    };
    g.validate().expect("the matmul graph validates");
    g
}

/// Every test graph.
pub fn all_graphs() -> Vec<OpGraph> {
    vec![
        fixture_graph(),
        every_pointwise_mode_graph(),
        conv_graph(ConvDirection::Fprop),
        conv_graph(ConvDirection::Dgrad),
        conv_graph(ConvDirection::Wgrad),
        matmul_reduction_graph(),
    ]
}

/// The opaque payload of the golden plan fixtures: 42 bytes, so that nothing after it is aligned
/// by accident.
pub const FIXTURE_PAYLOAD: &[u8] = b"kiln-format fixture payload \x00\x01\x02\x03\xfe\xff opaque!";

/// The envelope of the golden plan fixtures.
pub fn fixture_envelope(payload: &[u8]) -> PlanEnvelope<'_> {
    PlanEnvelope {
        version: 2,
        engine_id: kiln_core::engine_id("KILN_FIXTURE_ENGINE_V1"),
        engine_name: "KILN_FIXTURE_ENGINE_V1".into(),
        plugin_name: "kiln-format-fixtures".into(),
        plugin_version: "1.0.0".into(),
        workspace_size: 4096,
        tensor_uids: vec![1, 2, 6, 7, 9],
        alignments: Some(vec![16, 64, 0, 4, 8]),
        payload,
        tensor_layouts: None,
    }
}

/// SplitMix64: a tiny deterministic generator, so mutation tests are reproducible everywhere.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Rewrites the body CRC-32 at preamble offset 12, so a mutation reaches the FlatBuffer
/// verifier and the semantic checks instead of stopping at the checksum.
pub fn fix_checksum(blob: &mut [u8]) {
    if blob.len() >= 32 {
        let crc = crc32(&blob[32..]);
        blob[12..16].copy_from_slice(&crc.to_le_bytes());
    }
}

/// CRC-32 (IEEE, reflected), written out here so the tests do not share the crate's code.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
