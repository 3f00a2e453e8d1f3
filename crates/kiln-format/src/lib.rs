//! kiln-format: every byte kiln saves.
//!
//! Each blob is a fixed 32-byte little-endian preamble (magic `KILN`, kind, format version,
//! header size, CRC-32 of the body, body length) followed by a FlatBuffer body whose schema is in
//! `schemas/*.fbs` and whose Rust code planus-cli generates into `src/generated/`. Three kinds
//! exist:
//!
//! - **graph** ([`encode_graph`], [`decode_graph`]): tensors and topologically sorted nodes, with
//!   a JSON mirror ([`graph_to_json`], [`graph_from_json`]);
//! - **plan** ([`encode_plan`], [`decode_plan`]): the plan envelope (engine, plugin, workspace,
//!   tensor UIDs, alignments in version 2) around the plugin's opaque, 16-byte aligned payload;
//! - **graph_and_plan** ([`encode_container`], [`decode_container`], [`plan_part`]): a complete
//!   graph blob and an optional complete plan blob, each 16-byte aligned.
//!
//! Readers check the preamble and checksum, then verify the FlatBuffer, then the semantics;
//! damaged or foreign bytes give `Error::BadParam` naming the field or offset, never a panic.
//! [`probe`] says what a blob is without loading it. `docs/format.md` documents every byte.

mod aligned_bytes;
mod container;
mod flatbuffer_errors;
mod generated;
mod graph_blob;
mod graph_json;
mod plan_envelope;
mod preamble;
mod probe;

pub use container::{decode_container, encode_container, Container};
pub use graph_blob::{decode_graph, encode_graph, needs_minor_2, GRAPH_MINOR_VERSION};
pub use graph_json::{graph_from_json, graph_to_json};
pub use plan_envelope::{
    decode_plan, encode_plan, encode_plan_as_given, encode_plan_v1, plan_part, PlanEnvelope,
    TensorLayout, PLAN_ENVELOPE_VERSION, SUPPORTED_PLAN_ENVELOPE_VERSIONS,
};
pub use preamble::{BlobKind, BLOB_ALIGN, FORMAT_VERSION, HEADER_SIZE, MAGIC};
pub use probe::{probe, BlobInfo, CHECKSUM_ALGORITHM};
