//! Graph-and-plan containers (kind 3): the preamble, then a `kiln.fb.container.Container`
//! FlatBuffer holding a complete graph blob and optionally a complete plan blob.

use crate::aligned_bytes::create_aligned_bytes;
use crate::flatbuffer_errors::invalid_body;
use crate::generated::fb_container as fb;
use crate::graph_blob::expect_kind;
use crate::preamble::{check_blob, wrap, BlobKind, CheckedBlob, BLOB_ALIGN};
use kiln_core::{Error, Result};
use planus::{Builder, ReadAsRoot};

/// The two blobs of a graph-and-plan container, borrowed from the container's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Container<'a> {
    /// A complete graph blob (preamble and body), 16-byte aligned relative to the container start.
    pub graph: &'a [u8],
    /// A complete plan blob, when the plan was saved with its graph; 16-byte aligned too.
    pub plan: Option<&'a [u8]>,
}

/// Builds a graph-and-plan container around a complete graph blob and an optional complete plan
/// blob. Each nested blob starts 16-byte aligned relative to the container's first byte, so it
/// can be read in place.
///
/// The nested blobs are copied as they are and not checked here (pass what [`crate::encode_graph`]
/// and [`crate::encode_plan`] returned); [`decode_container`] checks them. Deterministic; refuses
/// nothing.
pub fn encode_container(graph_blob: &[u8], plan_blob: Option<&[u8]>) -> Vec<u8> {
    let mut builder = Builder::new();
    let plan = plan_blob.map(|p| create_aligned_bytes(&mut builder, p));
    let graph = create_aligned_bytes(&mut builder, graph_blob);
    let root = fb::Container::create(&mut builder, graph, plan);
    let body = builder.finish(root, None);
    wrap(BlobKind::GraphAndPlan, body)
}

/// Offset of `inner` from the start of `outer`; `inner` is a subslice of `outer`.
pub(crate) fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    (inner.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize)
}

/// The nested blobs of a container, each with its preamble and checksum checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckedContainer<'a> {
    pub graph: CheckedBlob<'a>,
    pub plan: Option<CheckedBlob<'a>>,
}

/// Checks one nested blob: alignment relative to the container, preamble, checksum and kind.
fn check_nested<'a>(
    container: &'a [u8],
    nested: &'a [u8],
    slot: &str,
    kind: BlobKind,
) -> Result<CheckedBlob<'a>> {
    let at = offset_in(container, nested);
    let label = format!("container's {slot} blob at offset {at}");
    if at & (BLOB_ALIGN - 1) != 0 {
        return Err(Error::BadParam(format!(
            "{label}: is not {BLOB_ALIGN}-byte aligned relative to the container start"
        )));
    }
    let checked = check_blob(nested, &label)?;
    expect_kind(&checked, kind, &label)?;
    Ok(checked)
}

/// Reads the container table of a blob whose preamble and checksum were checked and whose kind is
/// `GraphAndPlan`, and checks the nested blobs' alignment, preambles, checksums and kinds.
pub(crate) fn decode_checked_container<'a>(blob: CheckedBlob<'a>) -> Result<CheckedContainer<'a>> {
    let what = "graph-and-plan container";
    let root = fb::ContainerRef::read_as_root(blob.body).map_err(|e| invalid_body(what, e))?;
    let graph = root.graph().map_err(|e| invalid_body(what, e))?;
    let plan = root.plan().map_err(|e| invalid_body(what, e))?;
    Ok(CheckedContainer {
        graph: check_nested(blob.bytes, graph, "graph", BlobKind::Graph)?,
        plan: match plan {
            Some(p) => Some(check_nested(blob.bytes, p, "plan", BlobKind::Plan)?),
            None => None,
        },
    })
}

/// Decodes a graph-and-plan container into its nested graph blob and optional plan blob (both
/// borrowed from `bytes`, no copy).
///
/// Checks the container's preamble and checksum, its FlatBuffer, and for each nested blob its
/// 16-byte alignment, preamble, checksum and kind. The nested bodies themselves are decoded by
/// [`crate::decode_graph`] and [`crate::decode_plan`].
///
/// Refuses with `BadParam`: damaged, truncated or foreign bytes, a bare graph or plan blob (not a
/// container), a nested blob that is misaligned, damaged or of the wrong kind. A newer preamble
/// format version is `NotSupported`.
pub fn decode_container(bytes: &[u8]) -> Result<Container<'_>> {
    let blob = check_blob(bytes, "container loader")?;
    match blob.kind {
        BlobKind::GraphAndPlan => {
            let c = decode_checked_container(blob)?;
            Ok(Container {
                graph: c.graph.bytes,
                plan: c.plan.map(|p| p.bytes),
            })
        }
        other => Err(Error::BadParam(format!(
            "container loader: these bytes are a bare {other} blob, not a graph-and-plan \
             container; load them with the {} loader",
            if other == BlobKind::Plan {
                "plan"
            } else {
                "graph"
            }
        ))),
    }
}
