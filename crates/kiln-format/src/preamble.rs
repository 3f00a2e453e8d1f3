//! The fixed 32-byte preamble in front of every blob's FlatBuffer body.
//!
//! Layout (all integers little-endian; see docs/format.md):
//!
//! | offset | size | field            |
//! |-------:|-----:|------------------|
//! |      0 |    4 | magic `b"KILN"`  |
//! |      4 |    2 | kind (u16)       |
//! |      6 |    2 | format version   |
//! |      8 |    4 | header size (32) |
//! |     12 |    4 | CRC-32 of body   |
//! |     16 |    8 | body length      |
//! |     24 |    8 | reserved, zero   |

use kiln_core::{Error, Result};
use serde::Serialize;

/// The four bytes every kiln blob starts with.
pub const MAGIC: [u8; 4] = *b"KILN";
/// The preamble format version this crate writes and the only one it reads.
pub const FORMAT_VERSION: u16 = 1;
/// Size of the preamble in bytes; the body starts right after it, 16-byte aligned.
pub const HEADER_SIZE: usize = 32;
/// Alignment, relative to the start of the outermost blob, of every body, payload and nested blob.
pub const BLOB_ALIGN: usize = 16;

/// What a blob holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlobKind {
    /// An operation graph (kind code 1).
    Graph,
    /// A compiled plan: the plan envelope around a plugin payload (kind code 2).
    Plan,
    /// A graph blob and optionally a plan blob in one container (kind code 3).
    GraphAndPlan,
}

impl BlobKind {
    /// The name used by the CLI and in messages: `graph`, `plan` or `graph_and_plan`.
    pub const fn name(self) -> &'static str {
        match self {
            BlobKind::Graph => "graph",
            BlobKind::Plan => "plan",
            BlobKind::GraphAndPlan => "graph_and_plan",
        }
    }

    /// The kind code stored at offset 4 of the preamble.
    pub const fn code(self) -> u16 {
        match self {
            BlobKind::Graph => 1,
            BlobKind::Plan => 2,
            BlobKind::GraphAndPlan => 3,
        }
    }

    /// The kind of code `code`, or `None` for an unknown code.
    pub const fn from_code(code: u16) -> Option<BlobKind> {
        match code {
            1 => Some(BlobKind::Graph),
            2 => Some(BlobKind::Plan),
            3 => Some(BlobKind::GraphAndPlan),
            _ => None,
        }
    }
}

impl std::fmt::Display for BlobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The decoded fields of a preamble whose fixed-layout checks passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Preamble {
    pub kind: BlobKind,
    pub format_version: u16,
    pub header_size: u32,
    pub body_crc32: u32,
    pub body_len: u64,
}

/// CRC-32 (IEEE 802.3 polynomial, reflected, as zlib's `crc32`) of `body`.
pub(crate) fn checksum(body: &[u8]) -> u32 {
    crc32fast::hash(body)
}

/// Builds a complete blob: the preamble for `kind`, then `body`.
///
/// `body` comes from a planus builder whose alignment requests were at most 16 bytes, so the
/// FlatBuffer's own alignment holds once it starts at offset 32.
pub(crate) fn wrap(kind: BlobKind, body: &[u8]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(HEADER_SIZE + body.len());
    blob.extend_from_slice(&MAGIC);
    blob.extend_from_slice(&kind.code().to_le_bytes());
    blob.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    blob.extend_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
    blob.extend_from_slice(&checksum(body).to_le_bytes());
    blob.extend_from_slice(&(body.len() as u64).to_le_bytes());
    blob.extend_from_slice(&[0u8; 8]);
    blob.extend_from_slice(body);
    blob
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    let mut a = [0u8; 2];
    a.copy_from_slice(&b[at..at + 2]);
    u16::from_le_bytes(a)
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Reads and checks the fixed fields of the preamble at the start of `bytes`: magic, format
/// version, kind, header size, reserved bytes. Does not look at the body or its length.
///
/// Refuses: fewer than 32 bytes, wrong magic, unknown kind, a header size other than 32 or
/// non-zero reserved bytes (`BadParam`); a format version other than 1 (`NotSupported`).
/// `what` names the blob in messages (e.g. "plan blob", "container's plan blob").
pub(crate) fn read_preamble(bytes: &[u8], what: &str) -> Result<Preamble> {
    if bytes.len() < HEADER_SIZE {
        return Err(Error::BadParam(format!(
            "{what}: {} bytes is too short for the {HEADER_SIZE}-byte kiln preamble",
            bytes.len()
        )));
    }
    if bytes[0..4] != MAGIC {
        return Err(Error::BadParam(format!(
            "{what}: not a kiln blob: bytes 0..4 are {:02x?}, expected the magic \"KILN\"",
            &bytes[0..4]
        )));
    }
    let kind_code = le_u16(bytes, 4);
    let format_version = le_u16(bytes, 6);
    if format_version != FORMAT_VERSION {
        return Err(Error::NotSupported(format!(
            "{what}: format version {format_version} (preamble offset 6) is not supported; \
             this reader reads version {FORMAT_VERSION}"
        )));
    }
    let kind = BlobKind::from_code(kind_code).ok_or_else(|| {
        Error::BadParam(format!(
            "{what}: unknown blob kind {kind_code} at preamble offset 4 \
             (1 = graph, 2 = plan, 3 = graph_and_plan)"
        ))
    })?;
    let header_size = le_u32(bytes, 8);
    if header_size as usize != HEADER_SIZE {
        return Err(Error::BadParam(format!(
            "{what}: header size {header_size} at preamble offset 8 must be {HEADER_SIZE} \
             in format version {FORMAT_VERSION}"
        )));
    }
    let reserved = le_u64(bytes, 24);
    if reserved != 0 {
        return Err(Error::BadParam(format!(
            "{what}: reserved preamble bytes 24..32 must be zero, found {reserved:#018x}"
        )));
    }
    Ok(Preamble {
        kind,
        format_version,
        header_size,
        body_crc32: le_u32(bytes, 12),
        body_len: le_u64(bytes, 16),
    })
}

impl Preamble {
    /// The body that the preamble's length field announces, or `BadParam` when `bytes` is
    /// truncated or has trailing bytes.
    pub(crate) fn body<'a>(&self, bytes: &'a [u8], what: &str) -> Result<&'a [u8]> {
        let available = bytes.len().saturating_sub(HEADER_SIZE) as u64;
        if self.body_len > available {
            return Err(Error::BadParam(format!(
                "{what}: truncated: the preamble (offset 16) announces a body of {} bytes \
                 at offset {HEADER_SIZE}, but only {available} bytes follow",
                self.body_len
            )));
        }
        if self.body_len < available {
            return Err(Error::BadParam(format!(
                "{what}: {} unexpected trailing bytes after the {}-byte body ending at offset {}",
                available - self.body_len,
                self.body_len,
                HEADER_SIZE as u64 + self.body_len
            )));
        }
        Ok(bytes.get(HEADER_SIZE..).unwrap_or_default())
    }

    /// True when the CRC-32 of `body` equals the stored one.
    pub(crate) fn checksum_matches(&self, body: &[u8]) -> bool {
        checksum(body) == self.body_crc32
    }
}

/// A blob whose preamble, length and checksum were checked: the body can be parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckedBlob<'a> {
    pub kind: BlobKind,
    /// The whole blob, preamble included.
    pub bytes: &'a [u8],
    /// The FlatBuffer body (the bytes after the preamble).
    pub body: &'a [u8],
}

/// Checks the preamble, the body length and the body checksum of `bytes`.
///
/// Refuses everything [`read_preamble`] refuses, a truncated blob or trailing bytes, and a body
/// whose CRC-32 differs from the one at preamble offset 12 (`BadParam`).
pub(crate) fn check_blob<'a>(bytes: &'a [u8], what: &str) -> Result<CheckedBlob<'a>> {
    let p = read_preamble(bytes, what)?;
    let body = p.body(bytes, what)?;
    if !p.checksum_matches(body) {
        return Err(Error::BadParam(format!(
            "{what}: body checksum mismatch: the preamble (offset 12) stores CRC-32 {:#010x}, \
             the {}-byte body at offset {HEADER_SIZE} has {:#010x}; the blob is damaged",
            p.body_crc32,
            body.len(),
            checksum(body)
        )));
    }
    Ok(CheckedBlob {
        kind: p.kind,
        bytes,
        body,
    })
}
