//! Each validation rule of `OpGraph::validate`, with the name of the tensor or node at fault in
//! the error.

use kiln_core::tensor::packed_strides;
use kiln_core::*;

fn t(uid: i64, name: &str, dims: &[i64]) -> TensorDesc {
    TensorDesc {
        uid,
        name: name.into(),
        dims: dims.to_vec(),
        strides: packed_strides(dims),
        data_type: DataType::F32,
        is_virtual: false,
        alignment: 0,
        scalar: None,
    }
}

fn virt(mut d: TensorDesc) -> TensorDesc {
    d.is_virtual = true;
    d
}

fn pw(name: &str, mode: PointwiseMode, a: i64, b: Option<i64>, out: i64) -> Node {
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

fn conv(name: &str, x: i64, w: i64, y: i64, pad: i64) -> Node {
    Node {
        name: name.into(),
        compute_type: DataType::F32,
        op: Op::Conv(ConvOp {
            direction: ConvDirection::Fprop,
            x,
            w,
            y,
            params: ConvParams {
                pre_padding: vec![pad; 2],
                post_padding: vec![pad; 2],
                stride: vec![1; 2],
                dilation: vec![1; 2],
            },
        }),
    }
}

fn check_err(mut g: OpGraph, status: Status, needles: &[&str]) {
    let e = g.validate().expect_err("the graph should be refused");
    assert_eq!(e.status(), status, "{e}");
    for n in needles {
        assert!(e.to_string().contains(n), "'{e}' should mention '{n}'");
    }
}

fn relu_graph() -> OpGraph {
    OpGraph {
        name: "g".into(),
        tensors: vec![t(1, "x", &[2, 3]), t(2, "y", &[2, 3])],
        nodes: vec![pw("relu", PointwiseMode::Relu, 1, None, 2)],
    }
}

#[test]
fn a_valid_graph_passes() {
    relu_graph().validate().unwrap();
}

#[test]
fn empty_graph_is_refused() {
    check_err(OpGraph::default(), Status::BadParam, &["no operations"]);
}

#[test]
fn duplicate_uids_are_refused() {
    let mut g = relu_graph();
    g.tensors[1].uid = 1;
    g.nodes[0] = pw("relu", PointwiseMode::Relu, 1, None, 1);
    check_err(g, Status::BadParam, &["uid 1", "more than one tensor"]);
}

#[test]
fn duplicate_node_names_are_refused() {
    let mut g = relu_graph();
    g.tensors.push(t(3, "z", &[2, 3]));
    g.nodes.push(pw("relu", PointwiseMode::Exp, 2, None, 3));
    check_err(g, Status::BadParam, &["'relu'", "twice"]);
}

#[test]
fn unknown_uid_is_refused_naming_the_node() {
    let mut g = relu_graph();
    g.nodes[0] = pw("relu", PointwiseMode::Relu, 7, None, 2);
    check_err(g, Status::BadParam, &["node 'relu'", "uid 7"]);
}

#[test]
fn inconsistent_strides_are_refused_naming_the_tensor() {
    let mut g = relu_graph();
    g.tensors[0].strides = vec![1];
    check_err(g, Status::BadParam, &["'x'", "2 dims but 1 strides"]);
    let mut g = relu_graph();
    g.tensors[0].strides = vec![1, 1];
    check_err(g, Status::BadParam, &["'x'", "share memory"]);
    let mut g = relu_graph();
    g.tensors[1].dims = vec![2, 0];
    check_err(g, Status::BadParam, &["'y'", "dim 1 is 0"]);
}

#[test]
fn output_shape_mismatch_is_refused() {
    let mut g = relu_graph();
    g.tensors[1] = t(2, "y", &[3, 2]);
    check_err(g, Status::BadParam, &["node 'relu'", "'y'", "[3, 2]"]);
}

#[test]
fn non_f32_compute_type_is_not_supported() {
    let mut g = relu_graph();
    g.nodes[0].compute_type = DataType::F16;
    check_err(
        g,
        Status::NotSupported,
        &["node 'relu'", "compute type f16"],
    );
}

#[test]
fn wrong_operand_count_is_refused() {
    let mut g = relu_graph();
    g.tensors.push(t(3, "b", &[2, 3]));
    g.nodes[0] = pw("relu", PointwiseMode::Relu, 1, Some(3), 2);
    check_err(g, Status::BadParam, &["relu", "1 operand(s) but 2 given"]);
    let mut g = relu_graph();
    g.nodes[0] = pw("add", PointwiseMode::Add, 1, None, 2);
    check_err(g, Status::BadParam, &["add", "2 operand(s) but 1 given"]);
}

#[test]
fn broadcast_mismatch_is_refused() {
    let g = OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2, 3]), t(2, "b", &[3, 3]), t(3, "c", &[2, 3])],
        nodes: vec![pw("add", PointwiseMode::Add, 1, Some(2), 3)],
    };
    check_err(g, Status::BadParam, &["node 'add'", "dim 0"]);
}

#[test]
fn cycles_are_refused() {
    let g = OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2]), virt(t(2, "b", &[2])), t(3, "c", &[2])],
        nodes: vec![
            pw("n1", PointwiseMode::Add, 1, Some(3), 2),
            pw("n2", PointwiseMode::Exp, 2, None, 3),
        ],
    };
    check_err(g, Status::BadParam, &["cycle", "node 'n1'"]);
}

#[test]
fn two_writers_are_refused() {
    let g = OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2]), t(2, "b", &[2])],
        nodes: vec![
            pw("n1", PointwiseMode::Exp, 1, None, 2),
            pw("n2", PointwiseMode::Abs, 1, None, 2),
        ],
    };
    check_err(
        g,
        Status::BadParam,
        &["'b'", "both node 'n1' and node 'n2'"],
    );
}

#[test]
fn disconnected_graphs_are_refused() {
    let g = OpGraph {
        name: String::new(),
        tensors: vec![
            t(1, "a", &[2]),
            t(2, "b", &[2]),
            t(3, "c", &[2]),
            t(4, "d", &[2]),
        ],
        nodes: vec![
            pw("n1", PointwiseMode::Exp, 1, None, 2),
            pw("n2", PointwiseMode::Abs, 3, None, 4),
        ],
    };
    check_err(g, Status::BadParam, &["not connected", "node 'n2'"]);
}

#[test]
fn unused_and_dangling_tensors_are_refused() {
    let mut g = relu_graph();
    g.tensors.push(t(9, "stray", &[2]));
    check_err(g, Status::BadParam, &["'stray'", "not used"]);
    let mut g = relu_graph();
    g.tensors[1].is_virtual = true;
    check_err(
        g,
        Status::BadParam,
        &["'y'", "virtual but no node reads it"],
    );
    let mut g = relu_graph();
    g.tensors[0].is_virtual = true;
    check_err(
        g,
        Status::BadParam,
        &["'x'", "virtual but no node writes it"],
    );
}

#[test]
fn scalars_follow_their_rules() {
    let mut s = t(5, "two", &[1]);
    s.scalar = Some(2.0);
    let g = OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2, 3]), s.clone(), t(2, "b", &[2, 3])],
        nodes: vec![pw("mul", PointwiseMode::Mul, 1, Some(5), 2)],
    };
    {
        let mut g = g.clone();
        g.validate().unwrap();
    }
    let mut g2 = g.clone();
    g2.nodes[0] = pw("mul", PointwiseMode::Exp, 1, None, 5);
    g2.tensors[2].uid = 6;
    check_err(g2, Status::BadParam, &["'two'"]);
    let mut g3 = g;
    g3.tensors[1].dims = vec![2];
    g3.tensors[1].strides = vec![1];
    check_err(g3, Status::BadParam, &["'two'", "all dims 1"]);
}

#[test]
fn conv_geometry_is_checked() {
    let ok = OpGraph {
        name: String::new(),
        tensors: vec![
            t(1, "x", &[1, 4, 8, 8]),
            t(2, "w", &[6, 2, 3, 3]),
            t(3, "y", &[1, 6, 8, 8]),
        ],
        nodes: vec![conv("conv", 1, 2, 3, 1)],
    };
    {
        let mut g = ok.clone();
        g.validate().unwrap();
    }
    let mut bad_groups = ok.clone();
    bad_groups.tensors[1] = t(2, "w", &[6, 3, 3, 3]);
    check_err(
        bad_groups,
        Status::BadParam,
        &["node 'conv'", "not a multiple"],
    );
    let mut bad_y = ok.clone();
    bad_y.tensors[2] = t(3, "y", &[1, 6, 6, 6]);
    check_err(
        bad_y,
        Status::BadParam,
        &["node 'conv'", "'y'", "[1, 6, 8, 8]"],
    );
    let mut bad_stride = ok;
    if let Op::Conv(c) = &mut bad_stride.nodes[0].op {
        c.params.stride = vec![0, 1];
    }
    check_err(bad_stride, Status::BadParam, &["stride[0] is 0"]);
}

#[test]
fn matmul_and_reduction_shapes_are_checked() {
    let mm = |b_dims: &[i64], c_dims: &[i64]| OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2, 4, 5]), t(2, "b", b_dims), t(3, "c", c_dims)],
        nodes: vec![Node {
            name: "mm".into(),
            compute_type: DataType::F32,
            op: Op::Matmul(MatmulOp { a: 1, b: 2, c: 3 }),
        }],
    };
    {
        let mut g = mm(&[1, 5, 6], &[2, 4, 6]);
        g.validate().unwrap();
    }
    check_err(
        mm(&[2, 4, 6], &[2, 4, 6]),
        Status::BadParam,
        &["node 'mm'", "inner dims"],
    );
    let red = |y: &[i64]| OpGraph {
        name: String::new(),
        tensors: vec![t(1, "x", &[2, 3, 4]), t(2, "y", y)],
        nodes: vec![Node {
            name: "sum".into(),
            compute_type: DataType::F32,
            op: Op::Reduction(ReductionOp {
                mode: ReductionMode::Sum,
                x: 1,
                y: 2,
            }),
        }],
    };
    {
        let mut g = red(&[1, 3, 1]);
        g.validate().unwrap();
    }
    check_err(
        red(&[2, 2, 4]),
        Status::BadParam,
        &["node 'sum'", "y dim 1"],
    );
}

#[test]
fn validate_sorts_nodes_topologically() {
    let mut g = OpGraph {
        name: String::new(),
        tensors: vec![t(1, "a", &[2]), virt(t(2, "v", &[2])), t(3, "out", &[2])],
        nodes: vec![
            pw("second", PointwiseMode::Abs, 2, None, 3),
            pw("first", PointwiseMode::Exp, 1, None, 2),
        ],
    };
    g.validate().unwrap();
    assert_eq!(g.nodes[0].name, "first");
    assert_eq!(g.nodes[1].name, "second");
}
