//! Nodes with several outputs: a generic rmsnorm node through validation, topological order and
//! the JSON form, and the errors for unknown operations, ports and attributes.

use kiln_core::ops::rmsnorm::{Epsilon, NormPhase, RmsnormOp};
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

fn rmsnorm(training: bool) -> RmsnormOp {
    RmsnormOp {
        x: 1,
        scale: 2,
        bias: None,
        epsilon: Epsilon::Value(1e-5),
        phase: if training {
            NormPhase::Training
        } else {
            NormPhase::Inference
        },
        y: 3,
        inv_rms: training.then_some(4),
    }
}

/// rmsnorm (x, scale → y, inv_rms), then relu of inv_rms, listed consumer first.
fn graph(op: GenericOp) -> OpGraph {
    OpGraph {
        name: "norm".into(),
        tensors: vec![
            t(1, "x", &[2, 3, 4]),
            t(2, "scale", &[1, 3, 4]),
            t(3, "y", &[2, 3, 4]),
            TensorDesc {
                is_virtual: true,
                ..t(4, "inv_rms", &[2, 1, 1])
            },
            t(5, "relu_out", &[2, 1, 1]),
        ],
        nodes: vec![
            Node {
                name: "relu".into(),
                compute_type: DataType::F32,
                op: Op::Pointwise(PointwiseOp {
                    mode: PointwiseMode::Relu,
                    a: 4,
                    b: None,
                    c: None,
                    out: 5,
                    params: PointwiseParams::default(),
                }),
            },
            Node {
                name: "norm".into(),
                compute_type: DataType::F32,
                op: Op::Generic(op),
            },
        ],
    }
}

fn refused(op: GenericOp, needles: &[&str]) {
    let e = graph(op).validate().expect_err("should be refused");
    assert_eq!(e.status(), Status::BadParam, "{e}");
    for n in needles {
        assert!(e.to_string().contains(n), "'{e}' should mention '{n}'");
    }
}

#[test]
fn a_multi_output_node_validates_and_sorts_before_its_consumer() {
    let mut g = graph(rmsnorm(true).to_generic());
    g.validate().unwrap();
    assert_eq!(g.nodes[0].name, "norm");
    assert_eq!(g.nodes[0].op.outputs(), vec![3, 4]);
    assert_eq!(g.nodes[0].op.inputs(), vec![1, 2]);
    assert_eq!(g.producer(4), Some(0));
    assert!(g.nodes[0].op.has_several_outputs());
    let back = RmsnormOp::from_generic(
        match &g.nodes[0].op {
            Op::Generic(op) => op,
            other => panic!("not generic: {other:?}"),
        },
        "n",
    )
    .unwrap();
    assert_eq!(back, rmsnorm(true));
}

#[test]
fn json_keeps_generic_and_typed_nodes_apart() {
    let mut g = graph(rmsnorm(true).to_generic());
    g.validate().unwrap();
    let json = serde_json::to_string_pretty(&g).unwrap();
    assert!(json.contains("\"op\": \"rmsnorm\""), "{json}");
    assert!(json.contains("\"inv_rms\": 4"), "{json}");
    assert!(json.contains("\"float\": 0.00001"), "{json}");
    let back: OpGraph = serde_json::from_str(&json).unwrap();
    assert_eq!(back, g);
    assert!(matches!(back.nodes[1].op, Op::Pointwise(_)));
}

/// kiln-core alone (no kiln-format) only says that the node matched no form; kiln-format's
/// `graph_from_json` names the bad field (tested there).
fn kiln_format_free_parse(json: &str) -> String {
    serde_json::from_str::<OpGraph>(json)
        .expect_err("a typed node with a bad field must not pass as a generic node")
        .to_string()
}

#[test]
fn a_typed_node_with_a_bad_field_keeps_a_clear_json_error() {
    let json = r#"{"tensors": [], "nodes": [{"name": "r", "op": "pointwise", "mode": "nope", "a": 1, "out": 2}]}"#;
    let e = kiln_format_free_parse(json);
    assert!(e.contains("did not match"), "{e}");
}

#[test]
fn an_unknown_operation_is_refused_naming_the_node() {
    let mut op = rmsnorm(true).to_generic();
    op.op = "layernorm_v9".into();
    refused(op, &["node 'norm'", "unknown operation 'layernorm_v9'"]);
}

#[test]
fn a_missing_required_port_is_refused_naming_the_node_and_port() {
    let mut op = rmsnorm(true).to_generic();
    op.inputs.remove("scale");
    refused(op, &["node 'norm'", "'scale'", "missing"]);
}

#[test]
fn unknown_ports_and_attributes_and_wrong_types_are_refused() {
    let op = rmsnorm(true).to_generic().input("gamma", 2);
    refused(op, &["node 'norm'", "no input port 'gamma'"]);
    let op = rmsnorm(true)
        .to_generic()
        .attribute("momentum", AttrValue::Float(0.1));
    refused(op, &["no attribute 'momentum'"]);
    let op = rmsnorm(true)
        .to_generic()
        .attribute("epsilon", AttrValue::Int(1));
    refused(op, &["'epsilon' is a int", "takes a float"]);
}

#[test]
fn rmsnorm_rules_are_checked() {
    let mut op = rmsnorm(true).to_generic();
    op.outputs.remove("inv_rms");
    let mut g = graph(op);
    g.nodes.remove(0);
    g.tensors.truncate(3);
    let e = g.validate().unwrap_err();
    assert!(e.to_string().contains("'inv_rms' is not bound"), "{e}");
    let op = rmsnorm(false).to_generic().output("inv_rms", 4);
    refused(op, &["forward_phase is inference"]);
    let mut op = rmsnorm(true).to_generic();
    op.attributes.remove("epsilon");
    refused(op, &["needs epsilon"]);
    let op = rmsnorm(true)
        .to_generic()
        .attribute("epsilon", AttrValue::Float(-1.0));
    refused(op, &["epsilon is -1"]);
    let mut g = graph(rmsnorm(true).to_generic());
    g.tensors[1].dims = vec![2, 3, 4];
    g.tensors[1].strides = packed_strides(&[2, 3, 4]);
    let e = g.validate().unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
    let mut g = graph(rmsnorm(true).to_generic());
    g.tensors[3].dims = vec![2, 3, 1];
    g.tensors[3].strides = packed_strides(&[2, 3, 1]);
    g.tensors[4].dims = vec![2, 3, 1];
    g.tensors[4].strides = packed_strides(&[2, 3, 1]);
    let e = g.validate().unwrap_err();
    assert!(e.to_string().contains("inv_rms"), "{e}");
}

#[test]
fn epsilon_may_be_a_by_value_scalar_input() {
    let mut op = rmsnorm(true);
    op.epsilon = Epsilon::Tensor(6);
    let mut g = graph(op.to_generic());
    g.tensors.push(TensorDesc {
        scalar: Some(1e-3),
        ..t(6, "eps", &[1])
    });
    g.validate().unwrap();
    let both = op.to_generic().attribute("epsilon", AttrValue::Float(1.0));
    let mut g = graph(both);
    g.tensors.push(TensorDesc {
        scalar: Some(1e-3),
        ..t(6, "eps", &[1])
    });
    let e = g.validate().unwrap_err();
    assert!(e.to_string().contains("both"), "{e}");
}

#[test]
fn a_multi_output_node_writing_a_tensor_another_node_writes_is_refused() {
    let mut g = graph(rmsnorm(true).to_generic());
    if let Op::Pointwise(p) = &mut g.nodes[0].op {
        p.a = 1;
        p.out = 4;
    }
    let e = g.validate().unwrap_err();
    assert!(e.to_string().contains("written by both"), "{e}");
}
