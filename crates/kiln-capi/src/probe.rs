//! `kiln_probe`: what saved bytes are, without a handle or plugin.

use crate::boundary::{bytes_arg, guard, kiln_status_t, null, write_out};
use kiln_format::{BlobInfo, BlobKind};
use std::ffi::c_char;

/// `kiln_blob_info_t.kind` of a graph blob.
pub const KILN_BLOB_KIND_GRAPH: i32 = 1;
/// `kiln_blob_info_t.kind` of a bare plan blob.
pub const KILN_BLOB_KIND_PLAN: i32 = 2;
/// `kiln_blob_info_t.kind` of a graph-and-plan container.
pub const KILN_BLOB_KIND_GRAPH_AND_PLAN: i32 = 3;
/// Room for a name in `kiln_blob_info_t`, the terminating NUL included.
pub const KILN_NAME_CAPACITY: usize = 128;
/// Room for the first problem in `kiln_blob_info_t`, the terminating NUL included.
pub const KILN_PROBLEM_CAPACITY: usize = 512;

/// What `kiln_probe` found out about a blob. Numbers that the blob's kind does not have are 0;
/// strings it does not have are empty. Strings are NUL-terminated and cut (at a character
/// boundary) when longer than their array.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct kiln_blob_info_t {
    /// `KILN_BLOB_KIND_GRAPH`, `KILN_BLOB_KIND_PLAN` or `KILN_BLOB_KIND_GRAPH_AND_PLAN`.
    pub kind: i32,
    /// The preamble's format version.
    pub format_version: u32,
    /// The plan envelope's version (1 or 2); 0 when the blob holds no plan.
    pub envelope_version: u32,
    /// 1 when the matching loader accepts the bytes, else 0 (`problem` says why).
    pub loadable: i32,
    /// 1 when every body has the CRC-32 its preamble stores, else 0.
    pub checksum_ok: i32,
    /// The body CRC-32 stored in the preamble.
    pub checksum: u32,
    /// The plan's engine ID.
    pub engine_id: u64,
    /// Workspace bytes the plan needs.
    pub workspace_size: u64,
    /// Number of tensor UIDs the plan binds.
    pub tensor_uid_count: u64,
    /// Size of the plugin payload.
    pub payload_bytes: u64,
    /// Number of tensors of the graph.
    pub graph_tensors: u64,
    /// Number of nodes of the graph.
    pub graph_nodes: u64,
    /// Size of the nested plan blob of a container.
    pub plan_blob_bytes: u64,
    /// Length of the bytes probed.
    pub total_bytes: u64,
    /// The plan's engine name.
    pub engine_name: [c_char; KILN_NAME_CAPACITY],
    /// The plugin's name (diagnostic).
    pub plugin_name: [c_char; KILN_NAME_CAPACITY],
    /// The plugin's version (diagnostic).
    pub plugin_version: [c_char; KILN_NAME_CAPACITY],
    /// The graph's name.
    pub graph_name: [c_char; KILN_NAME_CAPACITY],
    /// The first problem that keeps the blob from loading; empty when `loadable` is 1.
    pub problem: [c_char; KILN_PROBLEM_CAPACITY],
}

/// Copies `text` into `out` as a NUL-terminated string, cut at a character boundary to fit.
fn put<const N: usize>(out: &mut [c_char; N], text: &str) {
    let mut end = text.len().min(N.saturating_sub(1));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    out.fill(0);
    for (o, &b) in out.iter_mut().zip(&text.as_bytes()[..end]) {
        *o = b as c_char;
    }
}

fn fill(info: &BlobInfo) -> kiln_blob_info_t {
    let mut out = kiln_blob_info_t {
        kind: match info.kind {
            BlobKind::Graph => KILN_BLOB_KIND_GRAPH,
            BlobKind::Plan => KILN_BLOB_KIND_PLAN,
            BlobKind::GraphAndPlan => KILN_BLOB_KIND_GRAPH_AND_PLAN,
        },
        format_version: info.format_version,
        envelope_version: info.envelope_version.unwrap_or(0),
        loadable: i32::from(info.loadable),
        checksum_ok: i32::from(info.checksum_ok),
        checksum: info.checksum,
        engine_id: info.engine_id.unwrap_or(0),
        workspace_size: info.workspace_size.unwrap_or(0),
        tensor_uid_count: info.tensor_uids.as_ref().map_or(0, |u| u.len() as u64),
        payload_bytes: info.payload_bytes.unwrap_or(0),
        graph_tensors: info.graph_tensors.unwrap_or(0),
        graph_nodes: info.graph_nodes.unwrap_or(0),
        plan_blob_bytes: info.plan_blob_bytes.unwrap_or(0),
        total_bytes: info.total_bytes,
        engine_name: [0; KILN_NAME_CAPACITY],
        plugin_name: [0; KILN_NAME_CAPACITY],
        plugin_version: [0; KILN_NAME_CAPACITY],
        graph_name: [0; KILN_NAME_CAPACITY],
        problem: [0; KILN_PROBLEM_CAPACITY],
    };
    put(
        &mut out.engine_name,
        info.engine_name.as_deref().unwrap_or(""),
    );
    put(
        &mut out.plugin_name,
        info.plugin_name.as_deref().unwrap_or(""),
    );
    put(
        &mut out.plugin_version,
        info.plugin_version.as_deref().unwrap_or(""),
    );
    put(
        &mut out.graph_name,
        info.graph_name.as_deref().unwrap_or(""),
    );
    put(
        &mut out.problem,
        info.problems.first().map(String::as_str).unwrap_or(""),
    );
    out
}

/// Says what `len` bytes are without a handle or plugin: kind, format and envelope versions,
/// engine and plugin names, sizes, graph counts and checksum state, and whether the matching
/// loader would accept them (`loadable`, with the first `problem`).
///
/// Damaged bytes with a readable preamble are `KILN_STATUS_SUCCESS` with `loadable` 0. Returns
/// `KILN_STATUS_BAD_PARAM_NULL_POINTER` when `bytes` or `out` is null; `KILN_STATUS_BAD_PARAM`
/// for bytes that are not a kiln blob (too short, wrong magic, unknown kind), and
/// `KILN_STATUS_NOT_SUPPORTED` for a newer format version; `*out` is then left unchanged.
///
/// # Safety
/// `bytes` must address `len` readable bytes; `out` must be writable.
#[no_mangle]
pub unsafe extern "C" fn kiln_probe(
    bytes: *const u8,
    len: usize,
    out: *mut kiln_blob_info_t,
) -> kiln_status_t {
    guard("kiln_probe", || {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: `len` readable bytes per the contract.
        let bytes = unsafe { bytes_arg(bytes, len, "bytes") }?;
        let info = kiln_format::probe(bytes)?;
        // SAFETY: checked non-null; writable per the contract.
        unsafe { write_out(out, fill(&info)) };
        Ok(())
    })
}
