//! The CPU plugin's saved-plan payload.
//!
//! A CPU plan is cheap to prepare, so its payload stores what preparing needs and nothing
//! compiled: the engine ID, the resolved knob values and the op graph (a kiln graph blob).
//! Restoring re-runs `prepare`, which does no heavy work (no weight packing).
//!
//! Layout, little-endian (documented in docs/engines/cpu.md):
//!
//! | offset | size | field                                                   |
//! |--------|------|---------------------------------------------------------|
//! | 0      | 4    | marker `KCPU`                                           |
//! | 4      | 2    | format major (1)                                        |
//! | 6      | 2    | format minor (0)                                        |
//! | 8      | 2    | kind (1 = execution context)                            |
//! | 10     | 2    | header size (48)                                        |
//! | 12     | 4    | reserved, 0                                             |
//! | 16     | 32   | SHA-256 of the body (everything after the header)       |
//! | 48     | 8    | body: engine ID                                         |
//! | 56     | 4    | body: knob count `k`                                    |
//! | 60     | 8·k  | body: knob values, i64, in the engine's knob order      |
//! | ..     | 8    | body: graph blob length `g`                             |
//! | ..     | g    | body: the kiln graph blob                               |
//!
//! A reader accepts major 1 and any minor up to its own (a minor only appends optional fields
//! after the graph blob, which older readers skip). Damaged bytes are `INVALID_VALUE`
//! ("damaged: ..."); a valid payload this reader cannot use (another major, a newer minor, another
//! kind) is `NOT_APPLICABLE`, naming both sides.

use kiln_core::OpGraph;
use kiln_plugin_sdk::{PayloadFormat, PluginError, PluginResult};

pub const MARKER: [u8; 4] = *b"KCPU";
pub const FORMAT_MAJOR: u16 = 1;
pub const FORMAT_MINOR: u16 = 0;
pub const KIND_EXECUTION_CONTEXT: u16 = 1;
pub const HEADER_SIZE: usize = kiln_plugin_sdk::PAYLOAD_HEADER_SIZE;

/// The header this plugin writes and accepts (the SDK checks it).
const FORMAT: PayloadFormat = PayloadFormat {
    owner: "kiln-cpu",
    marker: MARKER,
    major: FORMAT_MAJOR,
    minor: FORMAT_MINOR,
    kind: KIND_EXECUTION_CONTEXT,
};
/// Most knobs a payload may list (a guard against absurd counts in damaged bytes).
const MAX_KNOBS: u32 = 64;

/// What a CPU payload holds.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuPayload {
    pub engine_id: u64,
    pub knobs: Vec<i64>,
    pub graph: OpGraph,
}

/// Encodes a payload (deterministic).
pub fn encode(engine_id: u64, knobs: &[i64], graph: &OpGraph) -> Vec<u8> {
    let blob = kiln_format::encode_graph(graph);
    let mut body = Vec::with_capacity(24 + 8 * knobs.len() + blob.len());
    body.extend_from_slice(&engine_id.to_le_bytes());
    body.extend_from_slice(&(knobs.len() as u32).to_le_bytes());
    for k in knobs {
        body.extend_from_slice(&k.to_le_bytes());
    }
    body.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    body.extend_from_slice(&blob);
    FORMAT.wrap(&body)
}

fn damaged(what: String) -> PluginError {
    FORMAT.damaged(what)
}

/// A cursor over the body that refuses to read past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> PluginResult<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                damaged(format!(
                    "{what} needs {n} bytes at body offset {} but the body has {}",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u64(&mut self, what: &str) -> PluginResult<u64> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(
            b.try_into().map_err(|_| damaged(what.into()))?,
        ))
    }
    fn u32(&mut self, what: &str) -> PluginResult<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(
            b.try_into().map_err(|_| damaged(what.into()))?,
        ))
    }
}

/// Decodes and checks a payload: the header (marker, versions, kind, header size, body digest;
/// `kiln_plugin_sdk::PayloadFormat`), then the body's fields and its graph (decoded and
/// validated).
pub fn decode(bytes: &[u8]) -> PluginResult<CpuPayload> {
    let body = FORMAT.unwrap(bytes)?;
    let mut r = Reader { bytes: body, at: 0 };
    let engine_id = r.u64("engine id")?;
    let count = r.u32("knob count")?;
    if count > MAX_KNOBS {
        return Err(damaged(format!("{count} knobs (at most {MAX_KNOBS})")));
    }
    let mut knobs = Vec::with_capacity(count as usize);
    for i in 0..count {
        knobs.push(r.u64(&format!("knob {i}"))? as i64);
    }
    let len = r.u64("graph length")?;
    let len = usize::try_from(len).map_err(|_| damaged(format!("graph length {len}")))?;
    let blob = r.take(len, "graph blob")?;
    let graph = kiln_format::decode_graph(blob).map_err(|e| damaged(format!("graph: {e}")))?;
    Ok(CpuPayload {
        engine_id,
        knobs,
        graph,
    })
}
