//! A FlatBuffer body that fails verification is refused with the byte offset as data.

use kiln_core::{OpGraph, Status};

#[test]
fn a_body_that_does_not_verify_is_refused_with_its_byte_offset() {
    let g: OpGraph = serde_json::from_str(
        r#"{"tensors": [
          {"uid": 1, "name": "x", "dims": [4], "strides": [1], "data_type": "f32"},
          {"uid": 2, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
          "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 1, "out": 2}]}"#,
    )
    .expect("a graph");
    let mut blob = kiln_format::encode_graph(&g);
    let body = kiln_format::HEADER_SIZE;
    // The root table offset now points past the end of the body.
    blob[body..body + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let crc = crc32fast::hash(&blob[body..]);
    blob[12..16].copy_from_slice(&crc.to_le_bytes());
    let e = kiln_format::decode_graph(&blob).expect_err("must not verify");
    assert_eq!(e.status(), Status::BadParam);
    let offset = e.byte_offset().expect("the error carries a byte offset");
    assert!(offset >= body as u64, "{offset}: {e}");
    assert!(e.to_string().contains("does not verify"), "{e}");
}
