//! Plan blobs (kind 2): the preamble, then a `kiln.fb.plan.PlanEnvelope` FlatBuffer around the
//! plugin's opaque payload.

use crate::aligned_bytes::create_aligned_bytes;
use crate::container::{decode_checked_container, offset_in};
use crate::flatbuffer_errors::invalid_body;
use crate::generated::fb_plan as fb;
use crate::preamble::{check_blob, wrap, BlobKind, CheckedBlob, BLOB_ALIGN};
use kiln_core::{DataType, Error, Result, TensorDesc};
use planus::{Builder, ReadAsRoot};
use std::collections::HashSet;

/// The envelope version [`encode_plan`] writes.
pub const PLAN_ENVELOPE_VERSION: u32 = 2;

/// The envelope versions [`decode_plan`] reads.
pub const SUPPORTED_PLAN_ENVELOPE_VERSIONS: [u32; 2] = [1, 2];

/// What a plan blob holds around the plugin's payload.
///
/// `payload` borrows the bytes it was decoded from (no copy) and starts 16-byte aligned relative
/// to the start of its plan blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEnvelope<'a> {
    /// Envelope version: 1 (no alignments) or 2 (one alignment per tensor UID).
    pub version: u32,
    /// The engine's ID: the 64-bit FNV-1a hash of its unique name.
    pub engine_id: u64,
    /// The engine's unique name.
    pub engine_name: String,
    /// Name of the plugin that made the payload (diagnostic).
    pub plugin_name: String,
    /// Version of that plugin (diagnostic).
    pub plugin_version: String,
    /// Workspace bytes the plan needs at execute.
    pub workspace_size: u64,
    /// UIDs of the tensors bound at execute.
    pub tensor_uids: Vec<i64>,
    /// Version 2: required device-pointer alignment in bytes per entry of `tensor_uids`, same
    /// order, 0 = no check. `None` only in version 1.
    pub alignments: Option<Vec<u32>>,
    /// The plugin's opaque payload.
    pub payload: &'a [u8],
    /// Version 2, optional: the layout each bound tensor had when the plan was built, one per
    /// entry of `tensor_uids`, same order. Lets a loader check that a plan fits a graph. `None`
    /// in version 1 and in plans from writers that did not record it.
    pub tensor_layouts: Option<Vec<TensorLayout>>,
}

/// The layout of one tensor bound at execute, as a plan records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorLayout {
    pub uid: i64,
    pub data_type: DataType,
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
}

impl TensorLayout {
    /// The layout of `desc`.
    pub fn of(desc: &TensorDesc) -> TensorLayout {
        TensorLayout {
            uid: desc.uid,
            data_type: desc.data_type,
            dims: desc.dims.clone(),
            strides: desc.strides.clone(),
        }
    }

    /// Bytes of storage the layout spans; `None` on overflow or a negative dim or stride.
    pub fn storage_bytes(&self) -> Option<usize> {
        kiln_core::tensor::storage_elements(&self.dims, &self.strides)?
            .checked_mul(self.data_type.size())
    }

    /// True when `desc` has exactly this uid, data type, dims and strides.
    pub fn matches(&self, desc: &TensorDesc) -> bool {
        self.uid == desc.uid
            && self.data_type == desc.data_type
            && self.dims == desc.dims
            && self.strides == desc.strides
    }
}

fn write_envelope(
    env: &PlanEnvelope<'_>,
    version: u32,
    alignments: Option<&[u32]>,
    layouts: Option<&[TensorLayout]>,
) -> Vec<u8> {
    let mut builder = Builder::new();
    // The payload is written first, so it sits at the end of the body.
    let payload = create_aligned_bytes(&mut builder, env.payload);
    let engine_name = builder.create_string(env.engine_name.as_str());
    let plugin_name = builder.create_string(env.plugin_name.as_str());
    let plugin_version = builder.create_string(env.plugin_version.as_str());
    let tensor_uids = builder.create_vector(env.tensor_uids.as_slice());
    let alignments = alignments.map(|a| builder.create_vector(a));
    let layouts = layouts.map(|ls| {
        let tables: Vec<_> = ls
            .iter()
            .map(|l| {
                let dims = builder.create_vector(l.dims.as_slice());
                let strides = builder.create_vector(l.strides.as_slice());
                fb::TensorLayout::create(&mut builder, l.uid, l.data_type.code(), dims, strides)
            })
            .collect();
        builder.create_vector(tables.as_slice())
    });
    let root = fb::PlanEnvelope::create(
        &mut builder,
        version,
        env.engine_id,
        engine_name,
        plugin_name,
        plugin_version,
        env.workspace_size,
        tensor_uids,
        payload,
        alignments,
        layouts,
    );
    let body = builder.finish(root, None);
    wrap(BlobKind::Plan, body)
}

/// Encodes a plan blob with envelope version 2 (what writers write): the 32-byte preamble
/// (kind 2), then a `kiln.fb.plan.PlanEnvelope` FlatBuffer whose payload starts 16-byte aligned
/// relative to the blob start.
///
/// `env.version` is ignored. `env.alignments` is written with exactly one entry per tensor UID:
/// `None` writes 0 (no check) for every UID, a shorter list is completed with 0 and a longer one
/// is cut. Deterministic; refuses nothing. Blobs are limited to 2 GiB by FlatBuffers' 32-bit
/// offsets: a larger payload is outside the format (see `docs/format.md`).
pub fn encode_plan(env: &PlanEnvelope<'_>) -> Vec<u8> {
    let mut alignments = env.alignments.clone().unwrap_or_default();
    alignments.resize(env.tensor_uids.len(), 0);
    // Layouts are written only when they describe exactly the UIDs, in order.
    let layouts = env.tensor_layouts.as_deref().filter(|ls| {
        ls.len() == env.tensor_uids.len()
            && ls.iter().zip(&env.tensor_uids).all(|(l, &u)| l.uid == u)
    });
    write_envelope(env, PLAN_ENVELOPE_VERSION, Some(&alignments), layouts)
}

/// Encodes a plan blob with envelope version 1 (no alignments), for tests and golden fixtures of
/// the older version. `env.version`, `env.alignments` and `env.tensor_layouts` are ignored. Not
/// the default: use [`encode_plan`].
pub fn encode_plan_v1(env: &PlanEnvelope<'_>) -> Vec<u8> {
    write_envelope(env, 1, None, None)
}

/// Encodes a plan blob with exactly `env.version` and `env.alignments` as given, without the
/// normalisation [`encode_plan`] applies. For tests of the version rules: the result may be a
/// blob that [`decode_plan`] refuses (version 3, a version 2 without alignments, ...).
pub fn encode_plan_as_given(env: &PlanEnvelope<'_>) -> Vec<u8> {
    write_envelope(
        env,
        env.version,
        env.alignments.as_deref(),
        env.tensor_layouts.as_deref(),
    )
}

/// The envelope's fields as stored, before the semantic checks.
#[derive(Debug, Clone)]
pub(crate) struct RawEnvelope<'a> {
    pub version: u32,
    pub engine_id: u64,
    pub engine_name: &'a str,
    pub plugin_name: &'a str,
    pub plugin_version: &'a str,
    pub workspace_size: u64,
    pub tensor_uids: Vec<i64>,
    pub alignments: Option<Vec<u32>>,
    pub payload: Option<&'a [u8]>,
    pub tensor_layouts: Option<Vec<RawLayout>>,
}

/// A tensor layout as stored, before the semantic checks.
#[derive(Debug, Clone)]
pub(crate) struct RawLayout {
    pub uid: i64,
    pub data_type: u8,
    pub dims: Vec<i64>,
    pub strides: Vec<i64>,
}

/// Reads the envelope table of a checked plan blob's body, verifying every offset it follows.
pub(crate) fn read_envelope<'a>(body: &'a [u8], what: &str) -> Result<RawEnvelope<'a>> {
    let bad = |e| invalid_body(what, e);
    let root = fb::PlanEnvelopeRef::read_as_root(body).map_err(bad)?;
    let tensor_uids = match root.tensor_uids().map_err(bad)? {
        Some(v) => v.iter().collect(),
        None => Vec::new(),
    };
    let alignments = root
        .alignments()
        .map_err(bad)?
        .map(|v| v.iter().collect::<Vec<u32>>());
    let tensor_layouts = match root.tensor_layouts().map_err(bad)? {
        None => None,
        Some(v) => {
            let mut out = Vec::with_capacity(v.len());
            for l in v.iter() {
                let l = l.map_err(bad)?;
                out.push(RawLayout {
                    uid: l.uid().map_err(bad)?,
                    data_type: l.data_type().map_err(bad)?,
                    dims: l
                        .dims()
                        .map_err(bad)?
                        .map(|d| d.iter().collect())
                        .unwrap_or_default(),
                    strides: l
                        .strides()
                        .map_err(bad)?
                        .map(|d| d.iter().collect())
                        .unwrap_or_default(),
                });
            }
            Some(out)
        }
    };
    Ok(RawEnvelope {
        version: root.version().map_err(bad)?,
        engine_id: root.engine_id().map_err(bad)?,
        engine_name: root.engine_name().map_err(bad)?.unwrap_or(""),
        plugin_name: root.plugin_name().map_err(bad)?.unwrap_or(""),
        plugin_version: root.plugin_version().map_err(bad)?.unwrap_or(""),
        workspace_size: root.workspace_size().map_err(bad)?,
        tensor_uids,
        alignments,
        payload: root.payload().map_err(bad)?,
        tensor_layouts,
    })
}

/// The semantic checks of an envelope read from the plan blob `blob_bytes`.
///
/// Refuses: a version other than 1 or 2 (`NotSupported`); with `BadParam`: a missing payload, a
/// payload not 16-byte aligned relative to the blob start, duplicate tensor UIDs, alignments in
/// a version-1 envelope, a version-2 envelope whose alignments are missing or of another length
/// than the UIDs, an alignment that is neither 0 nor a power of two.
pub(crate) fn check_envelope<'a>(
    raw: RawEnvelope<'a>,
    blob_bytes: &'a [u8],
    what: &str,
) -> Result<PlanEnvelope<'a>> {
    if !SUPPORTED_PLAN_ENVELOPE_VERSIONS.contains(&raw.version) {
        return Err(Error::NotSupported(format!(
            "{what}: plan envelope version {} is not supported; this reader reads versions 1 \
             and 2 (PlanEnvelope.version, field 0)",
            raw.version
        )));
    }
    let payload = raw.payload.ok_or_else(|| {
        Error::BadParam(format!(
            "{what}: the plan envelope has no payload (PlanEnvelope.payload, field 7)"
        ))
    })?;
    let at = offset_in(blob_bytes, payload);
    if at & (BLOB_ALIGN - 1) != 0 {
        return Err(Error::BadParam(format!(
            "{what}: the payload starts at blob offset {at}, which is not {BLOB_ALIGN}-byte \
             aligned"
        )));
    }
    let mut seen = HashSet::new();
    if let Some(dup) = raw.tensor_uids.iter().find(|&&u| !seen.insert(u)) {
        return Err(Error::BadParam(format!(
            "{what}: tensor uid {dup} appears more than once in PlanEnvelope.tensor_uids"
        )));
    }
    match (raw.version, &raw.alignments) {
        (1, Some(_)) => {
            return Err(Error::BadParam(format!(
                "{what}: a version-1 plan envelope carries alignments (field 8), which only \
                 version 2 has"
            )))
        }
        (2, None) => {
            return Err(Error::BadParam(format!(
                "{what}: the version-2 plan envelope has no alignments (PlanEnvelope.alignments, \
                 field 8); it needs one per tensor UID ({} UIDs)",
                raw.tensor_uids.len()
            )))
        }
        (2, Some(a)) if a.len() != raw.tensor_uids.len() => {
            return Err(Error::BadParam(format!(
                "{what}: the version-2 plan envelope has {} alignments for {} tensor UIDs; it \
                 needs exactly one per UID",
                a.len(),
                raw.tensor_uids.len()
            )))
        }
        _ => {}
    }
    if let Some(a) = &raw.alignments {
        for (&uid, &align) in raw.tensor_uids.iter().zip(a) {
            if align != 0 && !align.is_power_of_two() {
                return Err(Error::BadParam(format!(
                    "{what}: the alignment {align} required for tensor uid {uid} is neither 0 \
                     nor a power of two"
                )));
            }
        }
    }
    let tensor_layouts = match raw.tensor_layouts {
        None => None,
        Some(_) if raw.version == 1 => {
            return Err(Error::BadParam(format!(
                "{what}: a version-1 plan envelope carries tensor layouts (field 9), which only \
                 version 2 has"
            )))
        }
        Some(ls) => Some(check_layouts(ls, &raw.tensor_uids, what)?),
    };
    Ok(PlanEnvelope {
        version: raw.version,
        engine_id: raw.engine_id,
        engine_name: raw.engine_name.to_owned(),
        plugin_name: raw.plugin_name.to_owned(),
        plugin_version: raw.plugin_version.to_owned(),
        workspace_size: raw.workspace_size,
        tensor_uids: raw.tensor_uids,
        alignments: raw.alignments,
        payload,
        tensor_layouts,
    })
}

/// Checks stored layouts: one per UID in the same order, a known data type, and a well-formed
/// layout (the rules of `TensorDesc::validate`).
fn check_layouts(raw: Vec<RawLayout>, uids: &[i64], what: &str) -> Result<Vec<TensorLayout>> {
    if raw.len() != uids.len() {
        return Err(Error::BadParam(format!(
            "{what}: the plan envelope has {} tensor layouts for {} tensor UIDs",
            raw.len(),
            uids.len()
        )));
    }
    raw.into_iter()
        .zip(uids)
        .enumerate()
        .map(|(i, (l, &uid))| {
            if l.uid != uid {
                return Err(Error::BadParam(format!(
                    "{what}: tensor layout {i} is for uid {} but tensor_uids[{i}] is {uid}",
                    l.uid
                )));
            }
            let data_type = DataType::from_code(l.data_type).ok_or_else(|| {
                Error::BadParam(format!(
                    "{what}: tensor layout of uid {uid} has unknown data type code {}",
                    l.data_type
                ))
            })?;
            let desc = TensorDesc {
                uid,
                name: String::new(),
                dims: l.dims,
                strides: l.strides,
                data_type,
                is_virtual: false,
                alignment: 0,
                scalar: None,
            };
            desc.validate()
                .map_err(|e| Error::BadParam(format!("{what}: tensor layout: {}", e.message())))?;
            Ok(TensorLayout::of(&desc))
        })
        .collect()
}

/// The checked plan blob inside `bytes`: `bytes` itself when it is a plan blob, or the plan part
/// of a graph-and-plan container.
fn locate_plan<'a>(bytes: &'a [u8]) -> Result<CheckedBlob<'a>> {
    let blob = check_blob(bytes, "plan loader")?;
    match blob.kind {
        BlobKind::Plan => Ok(blob),
        BlobKind::Graph => Err(Error::BadParam(
            "plan loader: these bytes are a graph blob without a plan; load them with the \
             graph loader (deserialize, kiln_format::decode_graph)"
                .into(),
        )),
        BlobKind::GraphAndPlan => decode_checked_container(blob)?.plan.ok_or_else(|| {
            Error::BadParam(
                "plan loader: this graph-and-plan container holds no plan; load its graph \
                     with the graph loader (deserialize, kiln_format::decode_graph)"
                    .into(),
            )
        }),
    }
}

/// Given a bare plan blob or a graph-and-plan container, the plan blob's bytes: `bytes` itself or
/// a subslice of it (no copy).
///
/// Checks the preambles, lengths and checksums on the way, not the envelope's contents (that is
/// [`decode_plan`]'s job). Refuses with `BadParam`: damaged or foreign bytes, a graph-only blob,
/// and a container without plan (both: use the graph loader). A newer preamble format version is
/// `NotSupported`.
pub fn plan_part(bytes: &[u8]) -> Result<&[u8]> {
    locate_plan(bytes).map(|blob| blob.bytes)
}

/// Decodes a plan blob, or the plan part of a graph-and-plan container. The payload borrows
/// `bytes`.
///
/// Checks, in order: the preamble, the body length and CRC-32, the FlatBuffer (planus verifies
/// every offset it follows), then the envelope: version, payload presence and 16-byte alignment,
/// unique tensor UIDs, alignments.
///
/// Refuses: an envelope version other than 1 or 2 and a newer preamble format version
/// (`NotSupported`); with `BadParam`: damaged, truncated or foreign bytes, a graph-only blob or
/// a container without plan (use the graph loader), a version-2 envelope whose alignments are
/// missing or of another length than the tensor UIDs, a version-1 envelope with alignments, an
/// alignment that is neither 0 nor a power of two, duplicate tensor UIDs, a missing or misaligned
/// payload.
pub fn decode_plan(bytes: &[u8]) -> Result<PlanEnvelope<'_>> {
    let blob = locate_plan(bytes)?;
    let raw = read_envelope(blob.body, "plan blob")?;
    check_envelope(raw, blob.bytes, "plan blob")
}
