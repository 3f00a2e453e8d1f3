//! The JSON mirror of graph blobs, for people and the CLI.

use crate::graph_blob::topologically_sorted;
use kiln_core::{ConvOp, Error, MatmulOp, OpGraph, PointwiseOp, ReductionOp, Result};
use serde::de::DeserializeOwned;

/// Pretty-printed JSON of `graph`, in kiln-core's serde form (the form [`graph_from_json`]
/// reads). Nodes are written in topological order, as in [`crate::encode_graph`].
///
/// JSON has no NaN or infinity: such a by-value scalar or pointwise parameter is written as
/// `null`, which reads back as "absent" (for a parameter: its documented default). Refuses nothing.
pub fn graph_to_json(graph: &OpGraph) -> String {
    let graph = topologically_sorted(graph);
    // kiln-core's types serialize without maps or fallible impls, so this cannot fail; an empty
    // string would be refused by graph_from_json should it ever happen.
    serde_json::to_string_pretty(&*graph).unwrap_or_default()
}

/// Parses a graph from JSON (the form [`graph_to_json`] writes) and validates it.
///
/// Refuses with `BadParam`: text that is not JSON of a graph (the message gives line and
/// column), and a graph that does not validate (the message names the tensor or node).
pub fn graph_from_json(text: &str) -> Result<OpGraph> {
    let mut graph: OpGraph = serde_json::from_str(text)
        .map_err(|e| Error::BadParam(format!("graph JSON: {}", typed_node_error(text, e))))?;
    graph
        .validate()
        .map_err(|e| Error::from_status(e.status(), format!("graph JSON: {}", e.message())))?;
    Ok(graph)
}

/// The error to report for JSON that did not parse as a graph. A typed node (`pointwise`, `conv`,
/// `matmul`, `reduction`) with a bad field also fails as a generic node, and serde then reports
/// only "did not match any variant"; this finds that node and gives its own error, naming it.
fn typed_node_error(text: &str, e: serde_json::Error) -> String {
    fn field_error<T: DeserializeOwned>(node: &serde_json::Value) -> Option<String> {
        serde_json::from_value::<T>(node.clone())
            .err()
            .map(|e| e.to_string())
    }
    let fallback = e.to_string();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return fallback;
    };
    let nodes = value.get("nodes").and_then(|n| n.as_array());
    for (i, node) in nodes.into_iter().flatten().enumerate() {
        let found = match node.get("op").and_then(|o| o.as_str()) {
            Some("pointwise") => field_error::<PointwiseOp>(node),
            Some("conv") => field_error::<ConvOp>(node),
            Some("matmul") => field_error::<MatmulOp>(node),
            Some("reduction") => field_error::<ReductionOp>(node),
            _ => None,
        };
        if let Some(msg) = found {
            let name = node.get("name").and_then(|n| n.as_str()).unwrap_or("");
            return format!("node {i} '{name}': {msg} ({fallback})");
        }
    }
    fallback
}
