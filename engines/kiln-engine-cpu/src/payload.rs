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
//! | 6      | 2    | format minor (1; 0 is still read)                       |
//! | 8      | 2    | kind (1 = execution context)                            |
//! | 10     | 2    | header size (48)                                        |
//! | 12     | 4    | reserved, 0                                             |
//! | 16     | 32   | SHA-256 of the body (everything after the header)       |
//! | 48     | 8    | body: engine ID                                         |
//! | 56     | 4    | body: knob count `k`                                    |
//! | 60     | 16·k | body: k pairs (knob id i64, value i64), in id order     |
//! | ..     | 8    | body: graph blob length `g`                             |
//! | ..     | g    | body: the kiln graph blob                               |
//!
//! Format 1.0 (the first) stored `8·k` bytes of knob values, i64, in the engine's knob order, and
//! nothing else changed. Every CPU engine numbers its knobs 1, 2, ... in that order, so value `i`
//! of a 1.0 payload is knob `i + 1`. Storing ids (1.1) lets an engine add a knob without making
//! its older plans unloadable: a knob a payload does not set takes its default, which is always
//! the behaviour the engine had before the knob existed. A payload setting a knob the engine does
//! not have (a plan of a newer kiln) is `NOT_APPLICABLE`.
//!
//! A reader accepts major 1 and any minor up to its own. Damaged bytes are `INVALID_VALUE`
//! ("damaged: ..."); a valid payload this reader cannot use (another major, a newer minor, another
//! kind) is `NOT_APPLICABLE`, naming both sides.

use kiln_core::OpGraph;
use kiln_plugin_sdk::{PayloadFormat, PluginError, PluginResult};

pub const MARKER: [u8; 4] = *b"KCPU";
pub const FORMAT_MAJOR: u16 = 1;
pub const FORMAT_MINOR: u16 = 1;
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
    /// (knob id, value) pairs, ids distinct; knobs not listed take their defaults.
    pub knobs: Vec<(i64, i64)>,
    pub graph: OpGraph,
}

/// Encodes a payload in the current format (deterministic).
pub fn encode(engine_id: u64, knobs: &[(i64, i64)], graph: &OpGraph) -> Vec<u8> {
    let blob = kiln_format::encode_graph(graph);
    let mut body = Vec::with_capacity(24 + 16 * knobs.len() + blob.len());
    body.extend_from_slice(&engine_id.to_le_bytes());
    body.extend_from_slice(&(knobs.len() as u32).to_le_bytes());
    for (id, value) in knobs {
        body.extend_from_slice(&id.to_le_bytes());
        body.extend_from_slice(&value.to_le_bytes());
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
    // The header is checked: its minor (bytes 6..8) is 0 or 1.
    let minor = u16::from_le_bytes([bytes[6], bytes[7]]);
    let mut r = Reader { bytes: body, at: 0 };
    let engine_id = r.u64("engine id")?;
    let count = r.u32("knob count")?;
    if count > MAX_KNOBS {
        return Err(damaged(format!("{count} knobs (at most {MAX_KNOBS})")));
    }
    let mut knobs: Vec<(i64, i64)> = Vec::with_capacity(count as usize);
    for i in 0..count {
        let id = if minor == 0 {
            i as i64 + 1
        } else {
            r.u64(&format!("knob {i} id"))? as i64
        };
        let value = r.u64(&format!("knob {i} value"))? as i64;
        if knobs.iter().any(|&(k, _)| k == id) {
            return Err(damaged(format!("knob id {id} is set twice")));
        }
        knobs.push((id, value));
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

/// A description of a payload for people (`kiln inspect`): its format version, engine, knob
/// values (a knob the payload does not set shows its default) and a summary of its graph. Checks
/// the payload as [`decode`] does, so damaged bytes are `INVALID_VALUE` and a newer format
/// `NOT_APPLICABLE`. `find_engine` gives the plugin's engine of an ID, if it has one;
/// `envelope_engine_id` is the engine the plan envelope names.
pub fn describe(
    bytes: &[u8],
    envelope_engine_id: u64,
    find_engine: impl Fn(u64) -> Option<&'static dyn crate::engine::CpuEngine>,
) -> PluginResult<String> {
    let p = decode(bytes)?;
    let engine = find_engine(p.engine_id);
    // decode checked the header, so its minor (bytes 6..8) is there.
    let minor = u16::from_le_bytes([bytes[6], bytes[7]]);
    let mut lines = vec![format!(
        "format      {} payload {FORMAT_MAJOR}.{minor} (this plugin reads {FORMAT_MAJOR}.0 to \
         {FORMAT_MAJOR}.{FORMAT_MINOR}), {} bytes",
        FORMAT.owner,
        bytes.len()
    )];
    lines.push(match engine {
        Some(e) => format!("engine      {} ({:#018x})", e.name(), p.engine_id),
        None => format!(
            "engine      {:#018x}, which this plugin does not have (it cannot restore the plan)",
            p.engine_id
        ),
    });
    if p.engine_id != envelope_engine_id {
        lines.push(format!(
            "mismatch    the plan envelope names engine {envelope_engine_id:#018x}: restore \
             refuses the payload as damaged"
        ));
    }
    let mut knobs: Vec<String> = Vec::new();
    if let Some(e) = engine {
        for k in e.knobs() {
            let value = p.knobs.iter().find(|(id, _)| *id == k.id).map(|(_, v)| *v);
            let mut text = match value {
                Some(v) => format!("{}={v}", k.name),
                None => format!("{}={} (default; not in the payload)", k.name, k.default),
            };
            if k.name == crate::fast::isa::ISA_KNOB {
                text += &crate::fast::isa::describe_knob(value.unwrap_or(k.default));
            }
            knobs.push(text);
        }
    }
    for (id, v) in &p.knobs {
        if !engine.is_some_and(|e| e.knobs().iter().any(|k| k.id == *id)) {
            knobs.push(format!("knob id {id}={v} (not a knob of this engine)"));
        }
    }
    lines.push(format!(
        "knobs       {}",
        if knobs.is_empty() {
            "none".to_string()
        } else {
            knobs.join(", ")
        }
    ));
    let g = &p.graph;
    let ops: Vec<String> = g.nodes.iter().map(|n| n.op.describe()).collect();
    lines.push(format!(
        "graph       {}{} tensors, {} nodes ({})",
        if g.name.is_empty() {
            String::new()
        } else {
            format!("'{}': ", g.name)
        },
        g.tensors.len(),
        g.nodes.len(),
        ops.join(", ")
    ));
    for t in g.bound_tensors() {
        lines.push(format!(
            "bound       {} {} {:?} strides {:?}",
            t.label(),
            t.data_type,
            t.dims,
            t.strides
        ));
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn graph() -> OpGraph {
        let json = r#"{"tensors": [
          {"uid": 1, "name": "x", "dims": [4], "strides": [1], "data_type": "f32"},
          {"uid": 2, "name": "y", "dims": [4], "strides": [1], "data_type": "f32"}],
          "nodes": [{"name": "relu", "op": "pointwise", "mode": "relu", "a": 1, "out": 2}]}"#;
        kiln_format::graph_from_json(json).expect("a graph")
    }

    /// A format-1.0 payload: positional knob values.
    pub(crate) fn encode_1_0(engine_id: u64, values: &[i64], graph: &OpGraph) -> Vec<u8> {
        let blob = kiln_format::encode_graph(graph);
        let mut body = Vec::new();
        body.extend_from_slice(&engine_id.to_le_bytes());
        body.extend_from_slice(&(values.len() as u32).to_le_bytes());
        for v in values {
            body.extend_from_slice(&v.to_le_bytes());
        }
        body.extend_from_slice(&(blob.len() as u64).to_le_bytes());
        body.extend_from_slice(&blob);
        PayloadFormat { minor: 0, ..FORMAT }.wrap(&body)
    }

    #[test]
    fn describe_names_the_format_engine_knobs_and_graph() {
        let conv = crate::all_engines()
            .into_iter()
            .find(|e| e.name() == crate::fast::conv::fprop::NAME)
            .expect("the conv engine");
        let id = kiln_core::engine_id(conv.name());
        let find = |i: u64| {
            crate::all_engines()
                .into_iter()
                .find(|e| kiln_core::engine_id(e.name()) == i)
        };
        // Knob 1 set, knobs 2 and 3 left to their defaults.
        let bytes = encode(id, &[(1, 2)], &graph());
        let text = describe(&bytes, id, find).expect("described");
        assert!(
            text.contains("kiln-cpu payload 1.1 (this plugin reads 1.0 to 1.1)"),
            "{text}"
        );
        assert!(text.contains(conv.name()), "{text}");
        assert!(text.contains("conv_algo=2"), "{text}");
        assert!(
            text.contains("tile_positions=0 (default; not in the payload)"),
            "{text}"
        );
        assert!(text.contains("1 nodes (pointwise relu)"), "{text}");
        assert!(text.contains("tensor 'x' (uid 1) f32 [4]"), "{text}");
        assert!(!text.contains("mismatch"), "{text}");
        // A 1.0 payload says so; an envelope naming another engine is pointed out.
        let old = encode_1_0(id, &[0, 16], &graph());
        let text = describe(&old, id ^ 1, find).expect("described");
        assert!(text.contains("payload 1.0"), "{text}");
        assert!(text.contains("mismatch"), "{text}");
        // An engine this plugin lacks, and a knob its engine lacks, are named as such.
        let text = describe(&encode(7, &[(9, 1)], &graph()), 7, find).expect("described");
        assert!(text.contains("does not have"), "{text}");
        assert!(text.contains("knob id 9=1"), "{text}");
        // Damaged and newer payloads are refused as restore refuses them.
        let mut damaged = bytes.clone();
        *damaged.last_mut().unwrap() ^= 1;
        let e = describe(&damaged, id, find).unwrap_err();
        assert_eq!(e.status, kiln_plugin_sdk::KilnPluginStatus::INVALID_VALUE);
        let newer = PayloadFormat { minor: 2, ..FORMAT }.wrap(&bytes[HEADER_SIZE..]);
        let e = describe(&newer, id, find).unwrap_err();
        assert_eq!(e.status, kiln_plugin_sdk::KilnPluginStatus::NOT_APPLICABLE);
        assert!(e.message.contains("1.2"), "{}", e.message);
    }

    #[test]
    fn format_1_0_values_are_knobs_1_2_3_in_order() {
        let p = decode(&encode_1_0(7, &[5, 0], &graph())).expect("a 1.0 payload reads");
        assert_eq!(p.knobs, vec![(1, 5), (2, 0)]);
        assert_eq!(p.engine_id, 7);
    }

    #[test]
    fn format_1_1_round_trips_and_refuses_a_knob_set_twice() {
        let g = graph();
        let bytes = encode(9, &[(1, 2), (3, 4)], &g);
        assert_eq!(u16::from_le_bytes([bytes[6], bytes[7]]), 1);
        let p = decode(&bytes).expect("reads");
        assert_eq!(
            (p.engine_id, p.knobs, p.graph),
            (9, vec![(1, 2), (3, 4)], g.clone())
        );
        let twice = encode(9, &[(1, 2), (1, 4)], &g);
        let e = decode(&twice).expect_err("a knob set twice");
        assert!(
            e.message.contains("knob id 1 is set twice"),
            "{}",
            e.message
        );
    }
}
