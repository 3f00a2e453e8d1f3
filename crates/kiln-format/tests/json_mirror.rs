//! The JSON mirror of graphs: it round-trips, validates what it reads and names what is wrong.

mod common;

use common::*;
use kiln_core::Status;
use kiln_format::*;

#[test]
fn every_graph_round_trips_through_json() {
    for g in all_graphs() {
        let text = graph_to_json(&g);
        assert_eq!(graph_from_json(&text).unwrap(), g, "graph '{}'", g.name);
        assert!(text.contains('\n'), "pretty-printed");
    }
}

#[test]
fn json_and_binary_agree() {
    for g in all_graphs() {
        let from_json = graph_from_json(&graph_to_json(&g)).unwrap();
        assert_eq!(encode_graph(&from_json), encode_graph(&g));
    }
}

#[test]
fn json_is_validated_and_errors_name_the_place() {
    let err = graph_from_json("{ not json").unwrap_err();
    assert_eq!(err.status(), Status::BadParam);
    assert!(err.message().contains("line 1"), "{err}");

    let mut g = fixture_graph();
    g.tensors.retain(|t| t.uid != 7);
    let err = graph_from_json(&serde_json::to_string(&g).unwrap()).unwrap_err();
    assert_eq!(err.status(), Status::BadParam);
    assert!(err.message().contains("uid 7"), "{err}");
}

#[test]
fn json_nodes_are_written_in_topological_order() {
    let mut g = fixture_graph();
    g.nodes.reverse();
    assert_eq!(graph_to_json(&g), graph_to_json(&fixture_graph()));
}

#[test]
fn a_typed_node_with_a_bad_field_is_refused_with_its_own_error_not_read_as_generic() {
    let json = r#"{"tensors": [], "nodes": [{"name": "r", "op": "pointwise", "mode": "nope", "a": 1, "out": 2}]}"#;
    let e = graph_from_json(json).unwrap_err();
    assert_eq!(e.status(), kiln_core::Status::BadParam);
    assert!(e.to_string().contains("node 0 'r'"), "{e}");
    assert!(e.to_string().contains("unknown variant `nope`"), "{e}");
}
