//! `probe` tells what a blob is without loading it, reports damage instead of failing where it
//! can, and serializes with the keys the CLI prints.

mod common;

use common::*;
use kiln_core::Status;
use kiln_format::*;

#[test]
fn probe_of_a_plan_reports_the_envelope() {
    let env = fixture_envelope(FIXTURE_PAYLOAD);
    let blob = encode_plan(&env);
    let info = probe(&blob).unwrap();
    assert_eq!(info.kind, BlobKind::Plan);
    assert_eq!(info.format_version, 1);
    assert_eq!(info.envelope_version, Some(2));
    assert_eq!(info.engine_name.as_deref(), Some("KILN_FIXTURE_ENGINE_V1"));
    assert_eq!(info.engine_id, Some(env.engine_id));
    assert_eq!(info.plugin_name.as_deref(), Some("kiln-format-fixtures"));
    assert_eq!(info.plugin_version.as_deref(), Some("1.0.0"));
    assert_eq!(info.workspace_size, Some(4096));
    assert_eq!(info.tensor_uids, Some(env.tensor_uids.clone()));
    assert_eq!(info.alignments, env.alignments);
    assert_eq!(info.payload_bytes, Some(FIXTURE_PAYLOAD.len() as u64));
    assert_eq!(info.total_bytes, blob.len() as u64);
    assert_eq!(info.header_bytes, 32);
    assert_eq!(info.body_bytes, blob.len() as u64 - 32);
    assert_eq!(info.checksum_algorithm, "crc32");
    assert_eq!(info.checksum, crc32(&blob[32..]));
    assert!(info.checksum_ok && info.loadable && info.problems.is_empty());
    assert_eq!(info.graph_nodes, None);
}

#[test]
fn probe_of_a_graph_reports_its_counts() {
    let info = probe(&encode_graph(&every_pointwise_mode_graph())).unwrap();
    assert_eq!(info.kind, BlobKind::Graph);
    assert_eq!(info.graph_name.as_deref(), Some("every pointwise mode"));
    assert_eq!(info.graph_nodes, Some(51));
    assert_eq!(info.graph_tensors, Some(53));
    assert_eq!(info.envelope_version, None);
    assert_eq!(info.engine_name, None);
}

#[test]
fn probe_of_a_container_reports_both_parts() {
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan_v1(&fixture_envelope(FIXTURE_PAYLOAD));
    let info = probe(&encode_container(&graph, Some(&plan))).unwrap();
    assert_eq!(info.kind, BlobKind::GraphAndPlan);
    assert_eq!(info.envelope_version, Some(1));
    assert_eq!(info.alignments, None);
    assert_eq!(info.graph_nodes, Some(5));
    assert_eq!(info.graph_blob_bytes, Some(graph.len() as u64));
    assert_eq!(info.plan_blob_bytes, Some(plan.len() as u64));
    assert!(info.loadable, "{:?}", info.problems);

    let info = probe(&encode_container(&graph, None)).unwrap();
    assert_eq!(info.plan_blob_bytes, None);
    assert_eq!(info.envelope_version, None);
    assert!(info.loadable);
}

#[test]
fn probe_reports_a_checksum_mismatch_instead_of_failing() {
    let mut blob = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));
    let last = blob.len() - 1;
    blob[last] ^= 0xFF;
    let info = probe(&blob).unwrap();
    assert_eq!(info.kind, BlobKind::Plan);
    assert!(!info.checksum_ok && !info.loadable);
    assert!(
        info.problems[0].contains("checksum mismatch"),
        "{:?}",
        info.problems
    );
    assert_eq!(
        info.engine_name, None,
        "body fields are not read from a damaged body"
    );
}

#[test]
fn probe_reports_a_damaged_nested_plan() {
    let graph = encode_graph(&fixture_graph());
    let mut plan = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));
    let last = plan.len() - 1;
    plan[last] ^= 1;
    let info = probe(&encode_container(&graph, Some(&plan))).unwrap();
    assert!(!info.checksum_ok);
    assert_eq!(
        info.graph_nodes,
        Some(5),
        "the intact graph part is still reported"
    );
    assert!(
        info.problems.iter().any(|p| p.contains("plan blob")),
        "{:?}",
        info.problems
    );
}

#[test]
fn probe_reports_a_truncated_body() {
    let blob = encode_graph(&fixture_graph());
    let info = probe(&blob[..100]).unwrap();
    assert_eq!(info.kind, BlobKind::Graph);
    assert!(!info.checksum_ok);
    assert!(
        info.problems[0].contains("truncated"),
        "{:?}",
        info.problems
    );
}

#[test]
fn probe_reports_unsupported_envelope_versions() {
    let env = PlanEnvelope {
        version: 3,
        ..fixture_envelope(FIXTURE_PAYLOAD)
    };
    let info = probe(&encode_plan_as_given(&env)).unwrap();
    assert_eq!(info.envelope_version, Some(3));
    assert!(info.checksum_ok && !info.loadable);
    assert!(
        info.problems[0].contains("not supported"),
        "{:?}",
        info.problems
    );
}

#[test]
fn probe_refuses_what_is_not_a_kiln_blob() {
    for bytes in [
        &b""[..],
        b"KILN",
        &[0u8; 64],
        b"{\"name\": \"a json graph, not a blob\"}",
    ] {
        let err = probe(bytes).unwrap_err();
        assert_eq!(err.status(), Status::BadParam, "{err}");
    }
}

#[test]
fn probe_json_uses_the_cli_keys() {
    let info = probe(&encode_plan(&fixture_envelope(FIXTURE_PAYLOAD))).unwrap();
    let v: serde_json::Value = serde_json::to_value(&info).unwrap();
    assert_eq!(v["kind"], "plan");
    assert_eq!(v["version"], 1);
    assert_eq!(v["envelope_version"], 2);
    assert_eq!(v["engine"], "KILN_FIXTURE_ENGINE_V1");
    assert_eq!(v["plugin"], "kiln-format-fixtures");
    assert_eq!(v["plugin_version"], "1.0.0");
    assert_eq!(v["checksum_ok"], true);
    let v = serde_json::to_value(
        probe(&encode_container(&encode_graph(&fixture_graph()), None)).unwrap(),
    )
    .unwrap();
    assert_eq!(v["kind"], "graph_and_plan");
}
