//! The version and kind rules of the formats: which versions are read, which are refused and
//! with which status, and which loader accepts which kind.

mod common;

use common::*;
use kiln_core::Status;
use kiln_format::*;

fn env_with(version: u32, alignments: Option<Vec<u32>>) -> PlanEnvelope<'static> {
    PlanEnvelope {
        version,
        alignments,
        ..fixture_envelope(FIXTURE_PAYLOAD)
    }
}

#[test]
fn envelope_versions_1_and_2_are_read() {
    assert_eq!(
        decode_plan(&encode_plan_v1(&env_with(2, None)))
            .unwrap()
            .version,
        1
    );
    assert_eq!(
        decode_plan(&encode_plan(&env_with(1, None)))
            .unwrap()
            .version,
        2
    );
    assert_eq!(SUPPORTED_PLAN_ENVELOPE_VERSIONS, [1, 2]);
    assert_eq!(PLAN_ENVELOPE_VERSION, 2);
}

#[test]
fn envelope_version_3_is_not_supported() {
    let blob = encode_plan_as_given(&env_with(3, Some(vec![0; 5])));
    let err = decode_plan(&blob).unwrap_err();
    assert_eq!(err.status(), Status::NotSupported, "{err}");
    assert!(err.message().contains("version 3"), "{err}");
}

#[test]
fn other_envelope_versions_are_not_supported() {
    for v in [0, 4, 17, u32::MAX] {
        let blob = encode_plan_as_given(&env_with(v, Some(vec![0; 5])));
        let err = decode_plan(&blob).unwrap_err();
        assert_eq!(err.status(), Status::NotSupported, "version {v}: {err}");
    }
}

#[test]
fn v2_without_alignments_is_bad_param() {
    let blob = encode_plan_as_given(&env_with(2, None));
    let err = decode_plan(&blob).unwrap_err();
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(err.message().contains("no alignments"), "{err}");
}

#[test]
fn v2_with_wrong_length_alignments_is_bad_param() {
    for len in [0, 1, 4, 6, 50] {
        let blob = encode_plan_as_given(&env_with(2, Some(vec![0; len])));
        let err = decode_plan(&blob).unwrap_err();
        assert_eq!(err.status(), Status::BadParam, "{len} alignments: {err}");
        assert!(
            err.message().contains(&format!("{len} alignments for 5")),
            "{err}"
        );
    }
}

#[test]
fn v1_with_alignments_is_bad_param() {
    let blob = encode_plan_as_given(&env_with(1, Some(vec![0; 5])));
    let err = decode_plan(&blob).unwrap_err();
    assert_eq!(err.status(), Status::BadParam, "{err}");
}

#[test]
fn an_alignment_that_is_not_a_power_of_two_names_its_uid() {
    let blob = encode_plan_as_given(&env_with(2, Some(vec![16, 64, 0, 3, 8])));
    let err = decode_plan(&blob).unwrap_err();
    assert_eq!(err.status(), Status::BadParam);
    assert!(err.message().contains("tensor uid 7"), "{err}");
}

#[test]
fn duplicate_tensor_uids_are_bad_param() {
    let mut env = env_with(2, Some(vec![0; 5]));
    env.tensor_uids = vec![1, 2, 3, 2, 5];
    let err = decode_plan(&encode_plan(&env)).unwrap_err();
    assert_eq!(err.status(), Status::BadParam);
    assert!(err.message().contains("uid 2"), "{err}");
}

#[test]
fn graph_loader_given_a_plan_names_the_plan_loader() {
    for blob in [
        encode_plan(&env_with(2, None)),
        encode_plan_v1(&env_with(1, None)),
    ] {
        let err = decode_graph(&blob).unwrap_err();
        assert_eq!(err.status(), Status::BadParam, "{err}");
        assert!(err.message().contains("plan loader"), "{err}");
        assert!(err.message().contains("deserialize_compiled_plan"), "{err}");
    }
}

#[test]
fn plan_loaders_given_a_graph_name_the_graph_loader() {
    let graph = encode_graph(&fixture_graph());
    let graph_only = encode_container(&graph, None);
    for blob in [&graph, &graph_only] {
        for err in [plan_part(blob).unwrap_err(), decode_plan(blob).unwrap_err()] {
            assert_eq!(err.status(), Status::BadParam, "{err}");
            assert!(err.message().contains("graph loader"), "{err}");
        }
    }
}

#[test]
fn container_loader_refuses_bare_blobs() {
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan(&env_with(2, None));
    for (blob, loader) in [(&graph, "graph loader"), (&plan, "plan loader")] {
        let err = decode_container(blob).unwrap_err();
        assert_eq!(err.status(), Status::BadParam, "{err}");
        assert!(err.message().contains(loader), "{err}");
    }
}

#[test]
fn a_container_with_swapped_blobs_is_bad_param() {
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan(&env_with(2, None));
    let swapped = encode_container(&plan, Some(&graph));
    for err in [
        decode_container(&swapped).unwrap_err(),
        decode_graph(&swapped).unwrap_err(),
        plan_part(&swapped).unwrap_err(),
    ] {
        assert_eq!(err.status(), Status::BadParam, "{err}");
        assert!(err.message().contains("expected a graph blob"), "{err}");
    }
    let nested = encode_container(&graph, Some(&encode_container(&graph, None)));
    let err = decode_container(&nested).unwrap_err();
    assert!(err.message().contains("expected a plan blob"), "{err}");
}

#[test]
fn a_newer_preamble_format_version_is_not_supported() {
    let mut blob = encode_graph(&fixture_graph());
    blob[6..8].copy_from_slice(&2u16.to_le_bytes());
    for err in [
        decode_graph(&blob).unwrap_err(),
        decode_plan(&blob).unwrap_err(),
        decode_container(&blob).unwrap_err(),
        plan_part(&blob).unwrap_err(),
        probe(&blob).unwrap_err(),
    ] {
        assert_eq!(err.status(), Status::NotSupported, "{err}");
        assert!(err.message().contains("format version 2"), "{err}");
    }
}

#[test]
fn preamble_faults_are_bad_param_naming_the_offset() {
    let good = encode_graph(&fixture_graph());
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(Damage, &str)> = vec![
        (Box::new(|b| b[0] = b'X'), "magic"),
        (
            Box::new(|b| b[4..6].copy_from_slice(&9u16.to_le_bytes())),
            "offset 4",
        ),
        (
            Box::new(|b| b[8..12].copy_from_slice(&48u32.to_le_bytes())),
            "offset 8",
        ),
        (Box::new(|b| b[20] = 1), "truncated"),
        (Box::new(|b| b[24] = 1), "reserved"),
        (Box::new(|b| b.push(0)), "trailing"),
        (Box::new(|b| b.truncate(40)), "truncated"),
        (Box::new(|b| b.truncate(31)), "too short"),
        (Box::new(|b| b[40] ^= 0x10), "checksum"),
    ];
    for (damage, expect) in cases {
        let mut blob = good.clone();
        damage(&mut blob);
        let err = decode_graph(&blob).unwrap_err();
        assert_eq!(err.status(), Status::BadParam, "{expect}: {err}");
        assert!(
            err.message().contains(expect),
            "expected '{expect}' in: {err}"
        );
    }
}

#[test]
fn blob_kind_names_and_codes() {
    for (k, name, code) in [
        (BlobKind::Graph, "graph", 1),
        (BlobKind::Plan, "plan", 2),
        (BlobKind::GraphAndPlan, "graph_and_plan", 3),
    ] {
        assert_eq!(k.name(), name);
        assert_eq!(k.code(), code);
        assert_eq!(BlobKind::from_code(code), Some(k));
    }
    assert_eq!(BlobKind::from_code(0), None);
    assert_eq!(BlobKind::from_code(4), None);
}
