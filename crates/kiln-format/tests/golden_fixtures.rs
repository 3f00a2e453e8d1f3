//! Golden files of every format and version under `tests/fixtures/`. Each is decoded and its
//! fields checked, and today's writers must reproduce it byte for byte, so any change of the
//! format shows up here.
//!
//! Regenerate (only for a deliberate format change, then document it in docs/format.md):
//!     KILN_REGEN_FIXTURES=1 cargo test -p kiln-format --test golden_fixtures

mod common;

use common::*;
use kiln_format::*;
use std::path::PathBuf;

fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The fixture called `name` as today's writer makes it, compared with (or, with
/// KILN_REGEN_FIXTURES=1, written to) the committed file. Returns the committed bytes.
fn golden(name: &str, fresh: Vec<u8>) -> Vec<u8> {
    let path = fixture_path(name);
    if std::env::var_os("KILN_REGEN_FIXTURES").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // Tests run in parallel and some write the same file: write whole files atomically.
        let tmp = path.with_extension(format!("tmp{:?}", std::thread::current().id()));
        std::fs::write(&tmp, &fresh).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        eprintln!("wrote {}", path.display());
    }
    let committed = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run KILN_REGEN_FIXTURES=1 cargo test -p kiln-format --test golden_fixtures",
            path.display()
        )
    });
    assert!(
        committed == fresh,
        "{name}: today's writer no longer reproduces the golden file byte for byte \
         ({} bytes committed, {} written now; first difference at offset {:?}). A format change \
         needs a new version, documentation in docs/format.md and new fixtures.",
        committed.len(),
        fresh.len(),
        committed.iter().zip(&fresh).position(|(a, b)| a != b)
    );
    committed
}

fn preamble_fields(blob: &[u8]) -> (u16, u16, u32, u32, u64) {
    let u16_at = |o: usize| u16::from_le_bytes([blob[o], blob[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(blob[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(blob[o..o + 8].try_into().unwrap());
    assert_eq!(&blob[0..4], b"KILN");
    assert_eq!(u64_at(24), 0, "reserved bytes");
    assert_eq!(blob.len() as u64, 32 + u64_at(16), "length = header + body");
    assert_eq!(crc32(&blob[32..]), u32_at(12), "CRC-32 of the body");
    (u16_at(4), u16_at(6), u32_at(8), u32_at(12), u64_at(16))
}

fn check_fixture_envelope(env: &PlanEnvelope<'_>, version: u32) {
    let want = fixture_envelope(FIXTURE_PAYLOAD);
    assert_eq!(env.version, version);
    assert_eq!(
        env.engine_id,
        kiln_core::engine_id("KILN_FIXTURE_ENGINE_V1")
    );
    assert_eq!(env.engine_name, "KILN_FIXTURE_ENGINE_V1");
    assert_eq!(env.plugin_name, "kiln-format-fixtures");
    assert_eq!(env.plugin_version, "1.0.0");
    assert_eq!(env.workspace_size, 4096);
    assert_eq!(env.tensor_uids, vec![1, 2, 6, 7, 9]);
    assert_eq!(env.payload, FIXTURE_PAYLOAD);
    match version {
        1 => assert_eq!(env.alignments, None),
        _ => assert_eq!(env.alignments, want.alignments),
    }
}

#[test]
fn golden_graph_blob_decodes_and_is_reproduced() {
    let blob = golden("graph.kiln", encode_graph(&fixture_graph()));
    let (kind, version, header, _, _) = preamble_fields(&blob);
    assert_eq!((kind, version, header), (1, 1, 32));
    let g = decode_graph(&blob).unwrap();
    assert_eq!(g, fixture_graph());
    assert_eq!(g.name, "fixture: conv, bias, relu, matmul, reduction");
    let order: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(order, ["conv", "bias", "relu", "matmul", "reduce"]);
    assert_eq!(g.tensors.len(), 9);
    assert_eq!(g.tensor(4).unwrap().scalar, Some(0.25));
    assert_eq!(g.tensor(2).unwrap().alignment, 64);
}

#[test]
fn golden_graph_json_is_reproduced_and_reads_back() {
    let text = golden("graph.json", graph_to_json(&fixture_graph()).into_bytes());
    let text = String::from_utf8(text).unwrap();
    assert_eq!(graph_from_json(&text).unwrap(), fixture_graph());
}

#[test]
fn golden_graph_minor2_with_new_types_and_modes_decodes_and_is_reproduced() {
    let g = fixture_minor2_graph();
    let blob = golden("graph_minor2.kiln", encode_graph(&g));
    let back = decode_graph(&blob).unwrap();
    assert_eq!(back, g);
    let select = back.nodes.iter().find(|n| n.name == "select").unwrap();
    assert_eq!(select.op.inputs(), vec![1, 2, 3]);
    let info = probe(&blob).unwrap();
    assert_eq!(info.graph_minor_version, Some(2));
    assert!(info.loadable, "{:?}", info.problems);
    assert_eq!(
        probe(&encode_graph(&fixture_multi_output_graph()))
            .unwrap()
            .graph_minor_version,
        Some(1),
        "a graph of minor-1 features stays minor 1"
    );
    let text = golden("graph_minor2.json", graph_to_json(&g).into_bytes());
    assert_eq!(
        graph_from_json(&String::from_utf8(text).unwrap()).unwrap(),
        g
    );
}

#[test]
fn golden_graph_minor1_with_a_multi_output_node_decodes_and_is_reproduced() {
    let g = fixture_multi_output_graph();
    let blob = golden("graph_minor1.kiln", encode_graph(&g));
    let (kind, version, header, _, _) = preamble_fields(&blob);
    assert_eq!((kind, version, header), (1, 1, 32));
    let back = decode_graph(&blob).unwrap();
    assert_eq!(back, g);
    let norm = back.nodes.iter().find(|n| n.name == "norm").unwrap();
    assert_eq!(norm.op.outputs(), vec![5, 6]);
    assert_eq!(
        back.producer(6),
        back.nodes.iter().position(|n| n.name == "norm")
    );
    let info = probe(&blob).unwrap();
    assert_eq!(info.graph_minor_version, Some(1));
    assert!(info.loadable, "{:?}", info.problems);
    assert_eq!(
        probe(&encode_graph(&fixture_graph()))
            .unwrap()
            .graph_minor_version,
        Some(0),
        "a graph of typed nodes stays minor 0"
    );
    let text = golden("graph_minor1.json", graph_to_json(&g).into_bytes());
    assert_eq!(
        graph_from_json(&String::from_utf8(text).unwrap()).unwrap(),
        g
    );
}

#[test]
fn golden_plan_v1_decodes_and_is_reproduced() {
    let blob = golden(
        "plan_v1.kiln",
        encode_plan_v1(&fixture_envelope(FIXTURE_PAYLOAD)),
    );
    let (kind, version, header, _, _) = preamble_fields(&blob);
    assert_eq!((kind, version, header), (2, 1, 32));
    let env = decode_plan(&blob).unwrap();
    check_fixture_envelope(&env, 1);
    let at = env.payload.as_ptr() as usize - blob.as_ptr() as usize;
    assert_eq!(at % 16, 0);
    // A loaded v1 plan re-saves as v1, byte for byte.
    assert_eq!(encode_plan_as_given(&env), blob);
}

#[test]
fn golden_plan_v2_decodes_and_is_reproduced() {
    let blob = golden(
        "plan_v2.kiln",
        encode_plan(&fixture_envelope(FIXTURE_PAYLOAD)),
    );
    let (kind, version, header, _, _) = preamble_fields(&blob);
    assert_eq!((kind, version, header), (2, 1, 32));
    let env = decode_plan(&blob).unwrap();
    check_fixture_envelope(&env, 2);
    assert_eq!(encode_plan_as_given(&env), blob);
    assert_eq!(encode_plan(&env), blob);
}

#[test]
fn golden_container_with_plan_decodes_and_is_reproduced() {
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));
    let blob = golden("graph_and_plan.kiln", encode_container(&graph, Some(&plan)));
    let (kind, version, header, _, _) = preamble_fields(&blob);
    assert_eq!((kind, version, header), (3, 1, 32));
    let c = decode_container(&blob).unwrap();
    assert_eq!(c.graph, golden("graph.kiln", graph.clone()));
    assert_eq!(c.plan.unwrap(), golden("plan_v2.kiln", plan.clone()));
    assert_eq!(decode_graph(&blob).unwrap(), fixture_graph());
    check_fixture_envelope(&decode_plan(&blob).unwrap(), 2);
}

#[test]
fn golden_container_without_plan_decodes_and_is_reproduced() {
    let graph = encode_graph(&fixture_graph());
    let blob = golden("graph_only_container.kiln", encode_container(&graph, None));
    let (kind, _, _, _, _) = preamble_fields(&blob);
    assert_eq!(kind, 3);
    let c = decode_container(&blob).unwrap();
    assert_eq!(c.graph, golden("graph.kiln", graph.clone()));
    assert_eq!(c.plan, None);
    assert_eq!(decode_graph(&blob).unwrap(), fixture_graph());
    assert!(plan_part(&blob).is_err());
}

#[test]
fn golden_files_probe_as_documented() {
    let env = fixture_envelope(FIXTURE_PAYLOAD);
    let graph_blob = golden("graph.kiln", encode_graph(&fixture_graph()));
    let graph = probe(&graph_blob).unwrap();
    assert_eq!(graph.kind, BlobKind::Graph);
    assert_eq!(graph.graph_nodes, Some(5));
    assert!(graph.loadable, "{:?}", graph.problems);

    let v1 = probe(&golden("plan_v1.kiln", encode_plan_v1(&env))).unwrap();
    assert_eq!(v1.envelope_version, Some(1));
    assert_eq!(v1.payload_bytes, Some(FIXTURE_PAYLOAD.len() as u64));
    let v2_blob = golden("plan_v2.kiln", encode_plan(&env));
    let v2 = probe(&v2_blob).unwrap();
    assert_eq!(v2.envelope_version, Some(2));
    assert_eq!(v2.engine_name.as_deref(), Some("KILN_FIXTURE_ENGINE_V1"));

    let both_blob = encode_container(&graph_blob, Some(&v2_blob));
    let both = probe(&golden("graph_and_plan.kiln", both_blob)).unwrap();
    assert_eq!(both.kind, BlobKind::GraphAndPlan);
    assert_eq!(both.envelope_version, Some(2));
    assert_eq!(both.graph_nodes, Some(5));
    assert!(both.checksum_ok && both.loadable, "{:?}", both.problems);
}
