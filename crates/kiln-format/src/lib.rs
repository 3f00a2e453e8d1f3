//! kiln-format: the bytes kiln writes and reads.
//!
//! TRANSITIONAL: the graph blob is JSON until the FlatBuffers formats land (issue 3).

pub mod graph_blob;

pub use graph_blob::{decode_graph, encode_graph};
