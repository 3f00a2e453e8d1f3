//! `probe`: what a blob is, without a handle, a plugin or a full load.

use crate::container::offset_in;
use crate::generated::fb_container;
use crate::graph_blob::{decode_graph_body, read_graph_table};
use crate::plan_envelope::{check_envelope, read_envelope};
use crate::preamble::{read_preamble, BlobKind, Preamble, BLOB_ALIGN};
use kiln_core::Result;
use planus::ReadAsRoot;
use serde::Serialize;

/// The checksum algorithm of the preamble, as [`BlobInfo::checksum_algorithm`] names it.
pub const CHECKSUM_ALGORITHM: &str = "crc32";

/// What [`probe`] found out about a blob. Fields that the blob's kind does not have, or that
/// could not be read, are `None`; `problems` says why.
///
/// Serialized (for the CLI) with the keys `kind` (`graph` | `plan` | `graph_and_plan`),
/// `version` (the preamble format version), `envelope_version`, `engine` (engine name),
/// `engine_id`, `plugin` (plugin name), `plugin_version`, and the other field names as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlobInfo {
    /// What the blob holds.
    pub kind: BlobKind,
    /// Preamble format version (offset 6).
    #[serde(rename = "version")]
    pub format_version: u32,
    /// Plan envelope version (plans and containers with a plan).
    pub envelope_version: Option<u32>,
    /// Engine name from the plan envelope.
    #[serde(rename = "engine")]
    pub engine_name: Option<String>,
    /// Engine ID from the plan envelope.
    pub engine_id: Option<u64>,
    /// Plugin name from the plan envelope (diagnostic).
    #[serde(rename = "plugin")]
    pub plugin_name: Option<String>,
    /// Plugin version from the plan envelope (diagnostic).
    pub plugin_version: Option<String>,
    /// Workspace bytes the plan needs.
    pub workspace_size: Option<u64>,
    /// Tensor UIDs bound at execute, from the plan envelope.
    pub tensor_uids: Option<Vec<i64>>,
    /// Required alignment per tensor UID (version-2 envelopes).
    pub alignments: Option<Vec<u32>>,
    /// Size of the plugin payload in bytes.
    pub payload_bytes: Option<u64>,
    /// Name of the graph (graph blobs and containers).
    pub graph_name: Option<String>,
    /// Number of tensors in the graph.
    pub graph_tensors: Option<u64>,
    /// Number of nodes in the graph.
    pub graph_nodes: Option<u64>,
    /// The graph body's minor version (`Graph.minor_version`): 0 without generic nodes, 1 with.
    pub graph_minor_version: Option<u32>,
    /// Size of the nested graph blob (containers).
    pub graph_blob_bytes: Option<u64>,
    /// Size of the nested plan blob (containers that hold a plan).
    pub plan_blob_bytes: Option<u64>,
    /// Length of the bytes probed.
    pub total_bytes: u64,
    /// Preamble size (offset 8).
    pub header_bytes: u64,
    /// Body length announced by the preamble (offset 16).
    pub body_bytes: u64,
    /// Always [`CHECKSUM_ALGORITHM`].
    pub checksum_algorithm: String,
    /// The body CRC-32 stored in the preamble (offset 12).
    pub checksum: u32,
    /// True when the body (and, in a container, every nested blob's body) has the CRC-32 its
    /// preamble stores; false on a mismatch or when a body is truncated.
    pub checksum_ok: bool,
    /// True when `problems` is empty: the matching loader accepts these bytes.
    pub loadable: bool,
    /// Everything that keeps the blob from loading, in the order found.
    pub problems: Vec<String>,
}

impl BlobInfo {
    fn from_preamble(p: &Preamble, total: usize) -> BlobInfo {
        BlobInfo {
            kind: p.kind,
            format_version: u32::from(p.format_version),
            envelope_version: None,
            engine_name: None,
            engine_id: None,
            plugin_name: None,
            plugin_version: None,
            workspace_size: None,
            tensor_uids: None,
            alignments: None,
            payload_bytes: None,
            graph_name: None,
            graph_tensors: None,
            graph_nodes: None,
            graph_minor_version: None,
            graph_blob_bytes: None,
            plan_blob_bytes: None,
            total_bytes: total as u64,
            header_bytes: u64::from(p.header_size),
            body_bytes: p.body_len,
            checksum_algorithm: CHECKSUM_ALGORITHM.to_owned(),
            checksum: p.body_crc32,
            checksum_ok: true,
            loadable: true,
            problems: Vec::new(),
        }
    }
}

/// The checked body of `bytes`, or `None` after recording why not.
fn checked_body<'a>(
    info: &mut BlobInfo,
    p: &Preamble,
    bytes: &'a [u8],
    what: &str,
) -> Option<&'a [u8]> {
    match p.body(bytes, what) {
        Err(e) => {
            info.checksum_ok = false;
            info.problems.push(e.message().to_owned());
            None
        }
        Ok(body) if !p.checksum_matches(body) => {
            info.checksum_ok = false;
            info.problems.push(format!(
                "{what}: body checksum mismatch (stored CRC-32 {:#010x}); body fields not read",
                p.body_crc32
            ));
            None
        }
        Ok(body) => Some(body),
    }
}

fn probe_graph(info: &mut BlobInfo, body: &[u8], what: &str) {
    match read_graph_table(body, what) {
        Err(e) => info.problems.push(e.message().to_owned()),
        Ok(table) => {
            info.graph_name = Some(table.name.clone().unwrap_or_default());
            info.graph_tensors = Some(table.tensors.len() as u64);
            info.graph_nodes = Some(table.nodes.len() as u64);
            info.graph_minor_version = Some(table.minor_version);
            if let Err(e) = decode_graph_body(body, what) {
                info.problems.push(e.message().to_owned());
            }
        }
    }
}

fn probe_plan(info: &mut BlobInfo, blob: &[u8], body: &[u8], what: &str) {
    match read_envelope(body, what) {
        Err(e) => info.problems.push(e.message().to_owned()),
        Ok(raw) => {
            info.envelope_version = Some(raw.version);
            info.engine_name = Some(raw.engine_name.to_owned());
            info.engine_id = Some(raw.engine_id);
            info.plugin_name = Some(raw.plugin_name.to_owned());
            info.plugin_version = Some(raw.plugin_version.to_owned());
            info.workspace_size = Some(raw.workspace_size);
            info.tensor_uids = Some(raw.tensor_uids.clone());
            info.alignments = raw.alignments.clone();
            info.payload_bytes = raw.payload.map(|p| p.len() as u64);
            if let Err(e) = check_envelope(raw, blob, what) {
                info.problems.push(e.message().to_owned());
            }
        }
    }
}

fn probe_nested(info: &mut BlobInfo, container: &[u8], nested: &[u8], slot: &str, want: BlobKind) {
    let at = offset_in(container, nested);
    let what = format!("container's {slot} blob at offset {at}");
    if at & (BLOB_ALIGN - 1) != 0 {
        info.problems.push(format!(
            "{what}: is not {BLOB_ALIGN}-byte aligned relative to the container start"
        ));
    }
    let p = match read_preamble(nested, &what) {
        Ok(p) => p,
        Err(e) => {
            info.problems.push(e.message().to_owned());
            return;
        }
    };
    if p.kind != want {
        info.problems.push(format!(
            "{what}: is a {} blob, expected a {want} blob",
            p.kind
        ));
        return;
    }
    let Some(body) = checked_body(info, &p, nested, &what) else {
        return;
    };
    match want {
        BlobKind::Graph => probe_graph(info, body, &what),
        _ => probe_plan(info, nested, body, &what),
    }
}

fn probe_container(info: &mut BlobInfo, bytes: &[u8], body: &[u8]) {
    let what = "graph-and-plan container";
    let root = match fb_container::ContainerRef::read_as_root(body) {
        Ok(r) => r,
        Err(e) => {
            let e = crate::flatbuffer_errors::invalid_body(what, e);
            info.problems.push(e.message().to_owned());
            return;
        }
    };
    match root.graph() {
        Ok(graph) => {
            info.graph_blob_bytes = Some(graph.len() as u64);
            probe_nested(info, bytes, graph, "graph", BlobKind::Graph);
        }
        Err(e) => info.problems.push(
            crate::flatbuffer_errors::invalid_body(what, e)
                .message()
                .to_owned(),
        ),
    }
    match root.plan() {
        Ok(Some(plan)) => {
            info.plan_blob_bytes = Some(plan.len() as u64);
            probe_nested(info, bytes, plan, "plan", BlobKind::Plan);
        }
        Ok(None) => {}
        Err(e) => info.problems.push(
            crate::flatbuffer_errors::invalid_body(what, e)
                .message()
                .to_owned(),
        ),
    }
}

/// Tells what `bytes` are without a handle or plugin: kind, preamble format version, envelope
/// version, engine name and ID, plugin name and version, workspace size, payload and body sizes,
/// graph name and counts, and the checksum state. It also checks whatever the matching loader
/// would (FlatBuffer verification, envelope rules, graph validation) and lists what fails in
/// [`BlobInfo::problems`].
///
/// Damaged bytes are reported as far as they can be read: after a checksum mismatch or a
/// truncated body, only the preamble's fields are reported. Refuses: fewer than 32 bytes, a
/// wrong magic, an unknown kind, a bad header size or non-zero reserved bytes (`BadParam`); a
/// newer preamble format version (`NotSupported`). Never panics.
pub fn probe(bytes: &[u8]) -> Result<BlobInfo> {
    let p = read_preamble(bytes, "probe")?;
    let mut info = BlobInfo::from_preamble(&p, bytes.len());
    let what = format!("{} blob", p.kind);
    if let Some(body) = checked_body(&mut info, &p, bytes, &what) {
        match p.kind {
            BlobKind::Graph => probe_graph(&mut info, body, &what),
            BlobKind::Plan => probe_plan(&mut info, bytes, body, &what),
            BlobKind::GraphAndPlan => probe_container(&mut info, bytes, body),
        }
    }
    info.loadable = info.problems.is_empty();
    Ok(info)
}
