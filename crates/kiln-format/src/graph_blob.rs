//! Graph blobs. TRANSITIONAL JSON encoding, replaced by the FlatBuffers graph format.

use kiln_core::{Error, OpGraph, Result};

/// Encodes `graph` to a graph blob.
pub fn encode_graph(graph: &OpGraph) -> Vec<u8> {
    serde_json::to_vec(graph).unwrap_or_default()
}

/// Decodes a graph blob and validates the graph.
pub fn decode_graph(bytes: &[u8]) -> Result<OpGraph> {
    let mut g: OpGraph =
        serde_json::from_slice(bytes).map_err(|e| Error::BadParam(format!("graph blob: {e}")))?;
    g.validate()?;
    Ok(g)
}
