//! Heuristics: which engine configurations to try for a graph, in which order.
//!
//! The ordering is static and documented (docs/heuristics.md):
//! - [`HeurMode::A`]: every applicable engine of every plugin on the handle. Plugins are taken in
//!   registry order and each plugin's own preference order is kept, except that reference engines
//!   (behaviour note `REFERENCE`) come after all others. The optimized engines are tried first.
//! - [`HeurMode::Fallback`]: only the reference engines: slow, always correct, the oracle.
//!
//! Several modes give the union, in the order of the modes, without repeats. Each engine gets its
//! knobs' default values.

use crate::{Handle, Plugin};
use kiln_core::Result;
use kiln_plugin_abi::{
    KilnBytes, KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_REFERENCE,
    KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION,
};

/// Heuristic modes, named after cuDNN's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HeurMode {
    /// Optimized engines first, then reference engines.
    A,
    /// Reference engines only.
    Fallback,
}

/// Behaviour notes an engine may declare, used to filter engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BehaviorNote {
    /// The engine's plans can be saved and loaded (its plugin exports the three hooks too).
    SupportsPlanSerialization,
    /// The engine gives bitwise identical results run to run.
    Deterministic,
    /// A numerical reference engine.
    Reference,
}

impl BehaviorNote {
    /// The `KILN_BEHAVIOR_*` bit.
    pub fn bit(self) -> u64 {
        match self {
            BehaviorNote::SupportsPlanSerialization => KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION,
            BehaviorNote::Deterministic => KILN_BEHAVIOR_DETERMINISTIC,
            BehaviorNote::Reference => KILN_BEHAVIOR_REFERENCE,
        }
    }
}

/// One engine and its knob values: what a plan is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    pub engine_id: u64,
    pub engine_name: String,
    pub plugin_name: String,
    pub behavior_notes: u64,
    /// (knob id, value) pairs; unset knobs take their defaults.
    pub knobs: Vec<(i64, i64)>,
}

impl EngineConfig {
    /// True when the engine declares `note`. For plan serialization, the plugin must also export
    /// the hooks, which [`engine_configs`] folds into the notes.
    pub fn has_note(&self, note: BehaviorNote) -> bool {
        self.behavior_notes & note.bit() != 0
    }
}

fn applicable(handle: &Handle, plugin_index: usize, graph_blob: &[u8]) -> Result<Vec<u64>> {
    let inst = &handle.instances()[plugin_index];
    let p: &Plugin = &inst.plugin;
    p.read_ids(|out, cap, count| {
        // SAFETY: the instance is live; graph_blob outlives the call; out/count are valid.
        unsafe {
            (p.table.get_applicable_engine_ids)(
                inst.raw,
                KilnBytes::from_slice(graph_blob),
                out,
                cap,
                count,
            )
        }
    })
}

/// The engine configurations for `graph_blob` (a validated graph's blob) on `handle`, per
/// `modes`. A plugin that fails to answer is logged and left out.
pub fn engine_configs(
    handle: &Handle,
    graph_blob: &[u8],
    modes: &[HeurMode],
) -> Result<Vec<EngineConfig>> {
    let mut optimized = Vec::new();
    let mut reference = Vec::new();
    for (i, inst) in handle.instances().iter().enumerate() {
        let plugin = &inst.plugin;
        let ids = match applicable(handle, i, graph_blob) {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!(
                    "plugin {} gave no engines for the graph: {e}",
                    plugin.name()
                );
                continue;
            }
        };
        for id in ids {
            let Some(engine) = plugin.engine(id) else {
                tracing::warn!("plugin {} named unknown engine {id:#x}", plugin.name());
                continue;
            };
            let mut notes = engine.behavior_notes;
            if !plugin.has_serialization_hooks() {
                notes &= !KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION;
            }
            let cfg = EngineConfig {
                engine_id: id,
                engine_name: engine.name.clone(),
                plugin_name: plugin.name().to_string(),
                behavior_notes: notes,
                knobs: Vec::new(),
            };
            if engine.is_reference() {
                reference.push(cfg);
            } else {
                optimized.push(cfg);
            }
        }
    }
    let mut out: Vec<EngineConfig> = Vec::new();
    for mode in modes {
        let take: Vec<&EngineConfig> = match mode {
            HeurMode::A => optimized.iter().chain(&reference).collect(),
            HeurMode::Fallback => reference.iter().collect(),
        };
        for c in take {
            if !out.iter().any(|o| o.engine_id == c.engine_id) {
                out.push(c.clone());
            }
        }
    }
    Ok(out)
}
