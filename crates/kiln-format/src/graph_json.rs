//! The JSON mirror of graph blobs, for people and the CLI.

use crate::graph_blob::topologically_sorted;
use kiln_core::{Error, OpGraph, Result};

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
    let mut graph: OpGraph =
        serde_json::from_str(text).map_err(|e| Error::BadParam(format!("graph JSON: {e}")))?;
    graph
        .validate()
        .map_err(|e| Error::from_status(e.status(), format!("graph JSON: {}", e.message())))?;
    Ok(graph)
}
