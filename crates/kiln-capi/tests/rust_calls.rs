//! The C API called from Rust through its rlib: refusals the C program does not reach.

use kiln_capi::*;
use std::ffi::{c_void, CStr};
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

/// A live handle, graph (of `ONE_NODE`) and plan, and what the calls below write to.
struct Live {
    h: *mut kiln_handle_t,
    g: *mut kiln_graph_t,
    p: *mut kiln_plan_t,
}

impl Live {
    fn new() -> Live {
        let g = graph(ONE_NODE);
        let (mut h, mut p) = (null_mut(), null_mut());
        // SAFETY: the out pointers are writable; g is live.
        unsafe {
            assert_eq!(
                kiln_handle_create(&mut h, c"cpu".as_ptr()),
                KILN_STATUS_SUCCESS
            );
            assert_eq!(kiln_graph_build_plan(h, g, &mut p), KILN_STATUS_SUCCESS);
        }
        Live { h, g, p }
    }

    /// Checks the three objects still work (a refused destroy must not have touched them).
    fn check_usable(&self) {
        let mut x = [-1f32, 2.0, -3.0, 4.0];
        let mut y = [f32::NAN; 4];
        let uids = [1i64, 2];
        let pointers = [x.as_mut_ptr().cast(), y.as_mut_ptr().cast()];
        let mut size = 0usize;
        // SAFETY: the objects are live; x and y hold the 4 f32 of the graph.
        unsafe {
            assert_eq!(
                kiln_graph_serialize(self.g, 0, &mut size, null_mut()),
                KILN_STATUS_SUCCESS
            );
            assert_eq!(
                kiln_plan_execute(
                    self.h,
                    self.p,
                    uids.as_ptr(),
                    pointers.as_ptr(),
                    2,
                    null_mut()
                ),
                KILN_STATUS_SUCCESS,
                "{}",
                last_error()
            );
        }
        assert_eq!(y, [0.0, 2.0, 0.0, 4.0]);
    }

    /// Every entry point that takes an object, once per object argument: the call's name, the
    /// type that argument expects, and the call with a given pointer there (live objects in the
    /// other positions). Out arguments are checked to stay unwritten (or be nulled).
    #[allow(clippy::type_complexity)]
    fn positions(
        &self,
    ) -> Vec<(
        &'static str,
        &'static str,
        Box<dyn Fn(*mut c_void) -> kiln_status_t>,
    )> {
        let Live { h, g, p } = *self;
        let (handle, graph, plan) = ("kiln_handle_t", "kiln_graph_t", "kiln_plan_t");
        let untouched = |size: usize, what: &str| assert_eq!(size, 12345, "{what} was written");
        // SAFETY (every closure): the live objects are live, every out pointer is writable,
        // every buffer holds what its length says, and the bad pointer is null, an object of
        // this API or aligned memory of 64 readable bytes, which the checks read at most 8 of.
        vec![
            (
                "kiln_handle_set_stream",
                handle,
                Box::new(|b| unsafe { kiln_handle_set_stream(b.cast(), null_mut()) }),
            ),
            (
                "kiln_handle_destroy",
                handle,
                Box::new(|b| unsafe { kiln_handle_destroy(b.cast()) }),
            ),
            (
                "kiln_graph_serialize",
                graph,
                Box::new(move |b| unsafe {
                    let mut size = 12345;
                    let mut buf = [0u8; 8];
                    let st = kiln_graph_serialize(b.cast(), 8, &mut size, buf.as_mut_ptr());
                    untouched(size, "size");
                    st
                }),
            ),
            (
                "kiln_graph_destroy",
                graph,
                Box::new(|b| unsafe { kiln_graph_destroy(b.cast()) }),
            ),
            (
                "kiln_graph_build_plan(handle)",
                handle,
                Box::new(move |b| unsafe {
                    let mut out = p;
                    let st = kiln_graph_build_plan(b.cast(), g, &mut out);
                    assert!(out.is_null());
                    st
                }),
            ),
            (
                "kiln_graph_build_plan(graph)",
                graph,
                Box::new(move |b| unsafe {
                    let mut out = p;
                    let st = kiln_graph_build_plan(h, b.cast(), &mut out);
                    assert!(out.is_null());
                    st
                }),
            ),
            (
                "kiln_plan_deserialize",
                handle,
                Box::new(move |b| unsafe {
                    let mut out = p;
                    let st = kiln_plan_deserialize(b.cast(), b"bytes".as_ptr(), 5, &mut out);
                    assert!(out.is_null());
                    st
                }),
            ),
            (
                "kiln_plan_serialize",
                plan,
                Box::new(move |b| unsafe {
                    let mut size = 12345;
                    let st = kiln_plan_serialize(b.cast(), 0, &mut size, null_mut());
                    untouched(size, "size");
                    st
                }),
            ),
            (
                "kiln_graph_and_plan_serialize(graph)",
                graph,
                Box::new(move |b| unsafe {
                    let mut size = 12345;
                    let st = kiln_graph_and_plan_serialize(b.cast(), p, 0, &mut size, null_mut());
                    untouched(size, "size");
                    st
                }),
            ),
            (
                "kiln_graph_and_plan_serialize(plan)",
                plan,
                Box::new(move |b| unsafe {
                    let mut size = 12345;
                    let st = kiln_graph_and_plan_serialize(g, b.cast(), 0, &mut size, null_mut());
                    untouched(size, "size");
                    st
                }),
            ),
            (
                "kiln_plan_workspace_size",
                plan,
                Box::new(move |b| unsafe {
                    let mut size = 12345;
                    let st = kiln_plan_workspace_size(b.cast(), &mut size);
                    untouched(size, "the workspace size");
                    st
                }),
            ),
            (
                "kiln_plan_tensor_uids",
                plan,
                Box::new(move |b| unsafe {
                    let mut count = 12345;
                    let mut uids = [0i64; 4];
                    let st = kiln_plan_tensor_uids(b.cast(), uids.as_mut_ptr(), 4, &mut count);
                    untouched(count, "count");
                    st
                }),
            ),
            (
                "kiln_plan_execute(handle)",
                handle,
                Box::new(move |b| unsafe {
                    kiln_plan_execute(b.cast(), p, null(), null(), 0, null_mut())
                }),
            ),
            (
                "kiln_plan_execute(plan)",
                plan,
                Box::new(move |b| unsafe {
                    kiln_plan_execute(h, b.cast(), null(), null(), 0, null_mut())
                }),
            ),
            (
                "kiln_plan_destroy",
                plan,
                Box::new(|b| unsafe { kiln_plan_destroy(b.cast()) }),
            ),
        ]
    }

    fn destroy(self) {
        // SAFETY: live objects, destroyed once.
        unsafe {
            assert_eq!(kiln_plan_destroy(self.p), KILN_STATUS_SUCCESS);
            assert_eq!(kiln_graph_destroy(self.g), KILN_STATUS_SUCCESS);
            assert_eq!(kiln_handle_destroy(self.h), KILN_STATUS_SUCCESS);
        }
    }
}

/// Calls every position with `bad` and checks each refusal: `BAD_PARAM` naming the expected
/// type and `found`.
fn refused_everywhere(live: &Live, bad: *mut c_void, found: &str) {
    for (name, expected, call) in live.positions() {
        assert_eq!(call(bad), KILN_STATUS_BAD_PARAM, "{name}: {}", last_error());
        let e = last_error();
        assert!(e.contains(expected) && e.contains(found), "{name}: {e}");
    }
}

#[test]
fn every_entry_point_refuses_an_object_of_another_kind() {
    let live = Live::new();
    let objects: [(*mut c_void, &str); 3] = [
        (live.h.cast(), "kiln_handle_t"),
        (live.g.cast(), "kiln_graph_t"),
        (live.p.cast(), "kiln_plan_t"),
    ];
    let mut refusals = 0;
    for (bad, kind) in objects {
        for (name, expected, call) in live.positions() {
            if expected == kind {
                continue;
            }
            assert_eq!(call(bad), KILN_STATUS_BAD_PARAM, "{name} given a {kind}");
            let e = last_error();
            assert!(
                e.contains(&format!("expected a {expected}, found a {kind}")),
                "{name}: {e}"
            );
            assert!(e.starts_with(name.split('(').next().unwrap()), "{e}");
            refusals += 1;
        }
    }
    // 15 positions (6 handle, 4 graph, 5 plan), each given the two other kinds.
    assert_eq!(refusals, 30);
    live.check_usable();
    live.destroy();
}

#[test]
fn zeroed_foreign_and_misaligned_memory_is_refused_everywhere() {
    let live = Live::new();
    let mut zeroed = [0u64; 8];
    refused_everywhere(&live, zeroed.as_mut_ptr().cast(), "found zeroed memory");
    let mut foreign = [0x5a5a_5a5a_5a5a_5a5au64; 8];
    refused_everywhere(
        &live,
        foreign.as_mut_ptr().cast(),
        "found memory that is not a kiln object (its first 8 bytes are 0x5a5a5a5a5a5a5a5a)",
    );
    let misaligned = zeroed.as_mut_ptr().cast::<u8>().wrapping_add(4);
    refused_everywhere(&live, misaligned.cast(), "misaligned address");
    assert_eq!(zeroed, [0; 8], "a check wrote to the caller's memory");
    live.check_usable();
    live.destroy();
}

#[test]
fn destroyed_objects_are_refused_everywhere_and_a_double_destroy_is_bad_param() {
    let dead = Live::new();
    let (h, g, p) = (dead.h, dead.g, dead.p);
    dead.destroy();
    // SAFETY: destroyed objects of this API: their headers stay readable.
    unsafe {
        assert_eq!(kiln_plan_destroy(p), KILN_STATUS_BAD_PARAM);
        assert!(
            last_error().contains("this kiln_plan_t was destroyed before (a double destroy)"),
            "{}",
            last_error()
        );
        assert_eq!(kiln_graph_destroy(g), KILN_STATUS_BAD_PARAM);
        assert!(last_error().contains("kiln_graph_t was destroyed before"));
        assert_eq!(kiln_handle_destroy(h), KILN_STATUS_BAD_PARAM);
        assert!(last_error().contains("kiln_handle_t was destroyed before"));
    }
    let live = Live::new();
    for (bad, kind) in [
        (h.cast::<c_void>(), "kiln_handle_t"),
        (g.cast(), "kiln_graph_t"),
        (p.cast(), "kiln_plan_t"),
    ] {
        for (name, expected, call) in live.positions() {
            assert_eq!(
                call(bad),
                KILN_STATUS_BAD_PARAM,
                "{name} given a dead {kind}"
            );
            let e = last_error();
            let want = if expected != kind {
                // The kind is checked before the state.
                format!("expected a {expected}, found a {kind}")
            } else if name.ends_with("_destroy") {
                format!("this {kind} was destroyed before (a double destroy)")
            } else {
                format!("expected a live {kind}, found a destroyed {kind}")
            };
            assert!(e.contains(&want), "{name}: {e}");
        }
    }
    live.check_usable();
    live.destroy();
}

#[test]
fn a_plan_outlives_the_handle_and_graph_it_was_built_from() {
    let live = Live::new();
    let mut h2 = null_mut();
    // SAFETY: the objects are live; out pointers writable.
    unsafe {
        assert_eq!(
            kiln_handle_create(&mut h2, c"cpu".as_ptr()),
            KILN_STATUS_SUCCESS
        );
        assert_eq!(kiln_graph_destroy(live.g), KILN_STATUS_SUCCESS);
        assert_eq!(kiln_handle_destroy(live.h), KILN_STATUS_SUCCESS);
        let mut x = [1f32, -2.0, 3.0, -4.0];
        let mut y = [f32::NAN; 4];
        let pointers = [x.as_mut_ptr().cast(), y.as_mut_ptr().cast()];
        assert_eq!(
            kiln_plan_execute(
                h2,
                live.p,
                [1i64, 2].as_ptr(),
                pointers.as_ptr(),
                2,
                null_mut()
            ),
            KILN_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        assert_eq!(y, [1.0, 0.0, 3.0, 0.0]);
        assert_eq!(kiln_plan_destroy(live.p), KILN_STATUS_SUCCESS);
        assert_eq!(kiln_handle_destroy(h2), KILN_STATUS_SUCCESS);
    }
}

#[test]
fn set_stream_on_a_cpu_handle_is_accepted_and_ignored() {
    let live = Live::new();
    let mut not_a_stream = 0u64;
    // SAFETY: a live CPU handle, which ignores the stream.
    unsafe {
        assert_eq!(
            kiln_handle_set_stream(live.h, null_mut()),
            KILN_STATUS_SUCCESS
        );
        assert_eq!(
            kiln_handle_set_stream(live.h, (&raw mut not_a_stream).cast()),
            KILN_STATUS_SUCCESS
        );
        assert_eq!(
            kiln_handle_set_stream(null_mut(), null_mut()),
            KILN_STATUS_BAD_PARAM_NULL_POINTER
        );
        assert!(
            last_error().contains("argument 'handle' is null (expected a kiln_handle_t)"),
            "{}",
            last_error()
        );
    }
    live.check_usable();
    live.destroy();
}
