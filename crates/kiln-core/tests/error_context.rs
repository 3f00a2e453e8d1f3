//! Errors about one tensor or one node carry it as data, so callers match on fields.

use kiln_core::{Error, OpGraph, Status};

fn graph(json: &str) -> OpGraph {
    serde_json::from_str(json).expect("a graph")
}

#[test]
fn a_bad_tensor_is_named_by_uid_and_name_in_fields() {
    let mut g = graph(
        r#"{"tensors": [
          {"uid": 1, "name": "x", "dims": [4, 0], "strides": [1, 1], "data_type": "f32"},
          {"uid": 2, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
          "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 1, "out": 2}]}"#,
    );
    let e = g.validate().expect_err("a dim of 0");
    assert_eq!(e.status(), Status::BadParam);
    assert!(
        matches!(&e, Error::Tensor { uid: 1, name, .. } if name == "x"),
        "{e:?}"
    );
    assert_eq!(e.message(), "dim 1 is 0, must be at least 1");
}

#[test]
fn a_bad_node_is_named_in_a_field() {
    let mut g = graph(
        r#"{"tensors": [
          {"uid": 1, "name": "x", "dims": [4], "strides": [1], "data_type": "f32"},
          {"uid": 2, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
          "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 1, "out": 9}]}"#,
    );
    let e = g.validate().expect_err("an unknown uid");
    assert_eq!(e.node_name(), Some("relu"), "{e}");
    assert!(e.message().contains("tensor uid 9"), "{e}");
}

/// Shape arithmetic on dims and geometry from a file never overflows (debug builds would panic):
/// a huge dilated filter over a huge input is an error, not a crash.
#[test]
fn huge_convolution_geometry_is_an_error_not_an_overflow() {
    let big = 1i64 << 40;
    let mut g = graph(&format!(
        r#"{{"tensors": [
          {{"uid": 1, "name": "x", "dims": [1, 1, {big}], "strides": [{big}, {big}, 1], "data_type": "f32"}},
          {{"uid": 2, "name": "w", "dims": [1, 1, {big}], "strides": [{big}, {big}, 1], "data_type": "f32"}},
          {{"uid": 3, "name": "y", "dims": [1, 1, 1], "strides": [1, 1, 1], "data_type": "f32"}}],
          "nodes": [{{"name": "conv", "op": "conv", "direction": "fprop", "x": 1, "w": 2, "y": 3,
            "params": {{"pre_padding": [1073741824], "post_padding": [1073741824],
                        "stride": [1], "dilation": [1073741824]}}}}]}}"#
    ));
    let e = g.validate().expect_err("the output would be empty");
    assert_eq!(e.status(), Status::BadParam, "{e}");
    assert!(e.to_string().contains("the output would be empty"), "{e}");
}
