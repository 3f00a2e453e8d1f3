//! The C API called from Rust through its rlib: refusals the C program does not reach.

use kiln_capi::*;
use std::ffi::CStr;
use std::ptr::{null, null_mut};

fn last_error() -> String {
    // SAFETY: kiln_get_last_error never returns null and the string is NUL-terminated.
    unsafe { CStr::from_ptr(kiln_get_last_error()) }
        .to_string_lossy()
        .into_owned()
}

const ONE_NODE: &str = r#"{"name": "relu", "tensors": [
  {"uid": 1, "name": "x", "dims": [4], "strides": [1], "data_type": "f32"},
  {"uid": 2, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
  "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 1, "out": 2}]}"#;

const OTHER: &str = r#"{"name": "relu", "tensors": [
  {"uid": 7, "name": "x", "dims": [4], "strides": [1], "data_type": "f32"},
  {"uid": 8, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
  "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 7, "out": 8}]}"#;

fn graph(json: &str) -> *mut kiln_graph_t {
    let mut g = null_mut();
    // SAFETY: json is readable for its length; g is writable.
    let st = unsafe { kiln_graph_from_json(json.as_ptr().cast(), json.len(), &mut g) };
    assert_eq!(st, KILN_STATUS_SUCCESS, "{}", last_error());
    g
}

#[test]
fn every_object_argument_is_checked_for_null() {
    let mut size = 0usize;
    let mut info = std::mem::MaybeUninit::<kiln_blob_info_t>::uninit();
    // SAFETY: every pointer is null or writable; null ones are refused before use.
    unsafe {
        assert_eq!(
            kiln_graph_serialize(null(), 0, &mut size, null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert!(last_error().contains("'graph'"));
        assert_eq!(
            kiln_plan_serialize(null(), 0, &mut size, null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_plan_workspace_size(null(), &mut size),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_plan_tensor_uids(null(), null_mut(), 0, &mut size),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_graph_build_plan(null_mut(), null_mut(), null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_plan_deserialize(null_mut(), b"x".as_ptr(), 1, null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_graph_deserialize(null(), 0, null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_probe(null(), 0, info.as_mut_ptr()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert_eq!(
            kiln_probe(b"KILN".as_ptr(), 4, null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
    }
}

#[test]
fn graph_serialize_requires_size_and_probe_refuses_foreign_bytes() {
    let g = graph(ONE_NODE);
    let mut info = std::mem::MaybeUninit::<kiln_blob_info_t>::uninit();
    // SAFETY: g is live; pointers are writable or null.
    unsafe {
        assert_eq!(
            kiln_graph_serialize(g, 0, null_mut(), null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        let foreign = b"PK\x03\x04 this is a zip file, not kiln, and long enough for a preamble";
        assert_eq!(
            kiln_probe(foreign.as_ptr(), foreign.len(), info.as_mut_ptr()),
            KILN_STATUS_BAD_PARAM
        );
        assert!(last_error().contains("kiln_probe"), "{}", last_error());
        let mut size = 0usize;
        assert_eq!(
            kiln_graph_serialize(g, 0, &mut size, null_mut()),
            KILN_STATUS_SUCCESS
        );
        let mut blob = vec![0u8; size];
        assert_eq!(
            kiln_graph_serialize(g, size, &mut size, blob.as_mut_ptr()),
            KILN_STATUS_SUCCESS
        );
        assert_eq!(
            kiln_probe(blob.as_ptr(), blob.len(), info.as_mut_ptr()),
            KILN_STATUS_SUCCESS
        );
        let info = info.assume_init();
        assert_eq!(info.kind, KILN_BLOB_KIND_GRAPH);
        assert_eq!(info.envelope_version, 0);
        assert_eq!(info.graph_nodes, 1);
        assert_eq!(
            CStr::from_ptr(info.graph_name.as_ptr()).to_str().unwrap(),
            "relu"
        );
        // A graph blob is refused by the plan loader.
        let mut h = null_mut();
        assert_eq!(
            kiln_handle_create(&mut h, c"cpu".as_ptr()),
            KILN_STATUS_SUCCESS
        );
        let mut p = null_mut();
        assert_eq!(
            kiln_plan_deserialize(h, blob.as_ptr(), blob.len(), &mut p),
            KILN_STATUS_BAD_PARAM
        );
        assert!(p.is_null());
        kiln_handle_destroy(h);
        kiln_graph_destroy(g);
    }
}

#[test]
fn a_plan_is_not_saved_with_another_graph() {
    let g = graph(ONE_NODE);
    let other = graph(OTHER);
    // SAFETY: objects are live; out pointers writable.
    unsafe {
        let mut h = null_mut();
        assert_eq!(
            kiln_handle_create(&mut h, c"cpu".as_ptr()),
            KILN_STATUS_SUCCESS
        );
        let mut p = null_mut();
        assert_eq!(
            kiln_graph_build_plan(h, g, &mut p),
            KILN_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        let mut size = 0usize;
        assert_eq!(
            kiln_graph_and_plan_serialize(other, p, 0, &mut size, null_mut()),
            KILN_STATUS_BAD_PARAM
        );
        assert!(last_error().contains("another graph"), "{}", last_error());
        assert_eq!(
            kiln_graph_and_plan_serialize(g, p, 0, &mut size, null_mut()),
            KILN_STATUS_SUCCESS
        );
        kiln_plan_destroy(p);
        kiln_graph_destroy(other);
        kiln_graph_destroy(g);
        kiln_handle_destroy(h);
    }
}

/// A huge binding count is refused before anything is allocated for it (it used to abort the
/// process on the allocation), and so is any count other than the plan's.
#[test]
fn plan_execute_refuses_a_count_other_than_the_plans_before_reading_the_arrays() {
    let g = graph(ONE_NODE);
    // SAFETY: objects are live; out pointers writable; the arrays hold two elements and are
    // read only for counts of at most two (larger counts are refused before any read).
    unsafe {
        let mut h = null_mut();
        assert_eq!(
            kiln_handle_create(&mut h, c"cpu".as_ptr()),
            KILN_STATUS_SUCCESS
        );
        let mut p = null_mut();
        assert_eq!(kiln_graph_build_plan(h, g, &mut p), KILN_STATUS_SUCCESS);
        let uids = [1i64, 2];
        let mut x = [0f32; 4];
        let mut y = [0f32; 4];
        let pointers = [x.as_mut_ptr().cast(), y.as_mut_ptr().cast()];
        for count in [usize::MAX, usize::MAX / 2, 1 << 40, 3] {
            assert_eq!(
                kiln_plan_execute(h, p, uids.as_ptr(), pointers.as_ptr(), count, null_mut()),
                KILN_STATUS_BAD_PARAM,
                "count {count}"
            );
            assert!(
                last_error().contains(&format!("count is {count}")),
                "{}",
                last_error()
            );
        }
        // Fewer bindings than the plan's: the missing UID is named.
        assert_eq!(
            kiln_plan_execute(h, p, uids.as_ptr(), pointers.as_ptr(), 1, null_mut()),
            KILN_STATUS_BAD_PARAM
        );
        assert!(
            last_error().contains("tensor uid 2: is not bound"),
            "{}",
            last_error()
        );
        assert_eq!(
            kiln_plan_execute(h, p, uids.as_ptr(), pointers.as_ptr(), 2, null_mut()),
            KILN_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        kiln_plan_destroy(p);
        kiln_graph_destroy(g);
        kiln_handle_destroy(h);
    }
}

#[test]
fn json_that_is_not_utf8_or_not_a_valid_graph_is_bad_param() {
    let mut g = null_mut();
    let bad = b"{\"name\": \"\xff\"}";
    // SAFETY: bad is readable; g writable.
    unsafe {
        assert_eq!(
            kiln_graph_from_json(bad.as_ptr().cast(), bad.len(), &mut g),
            KILN_STATUS_BAD_PARAM
        );
        assert!(last_error().contains("UTF-8"), "{}", last_error());
        let dangling = ONE_NODE.replace("\"out\": 2", "\"out\": 5");
        assert_eq!(
            kiln_graph_from_json(dangling.as_ptr().cast(), dangling.len(), &mut g),
            KILN_STATUS_BAD_PARAM
        );
        assert!(last_error().contains("uid 5"), "{}", last_error());
        assert!(g.is_null());
    }
}

#[test]
fn status_names_are_the_header_names() {
    // SAFETY: kiln_status_name returns static NUL-terminated strings.
    let name = |s| {
        unsafe { CStr::from_ptr(kiln_status_name(s)) }
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(name(KILN_STATUS_SUCCESS), "KILN_STATUS_SUCCESS");
    assert_eq!(
        name(KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT),
        "KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"
    );
    assert_eq!(
        name(KILN_STATUS_INTERNAL_ERROR),
        "KILN_STATUS_INTERNAL_ERROR"
    );
    assert_eq!(name(42), "KILN_STATUS_UNKNOWN");
    for code in 0..=9 {
        assert_eq!(
            kiln_core::Status::from_code(code).map(|s| s.name().to_string()),
            Some(name(code))
        );
    }
}
