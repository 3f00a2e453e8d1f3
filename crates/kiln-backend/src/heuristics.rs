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
    KilnBytes, KilnEngineConfig, KilnExecutionContext, KilnPluginStatus,
    KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_REFERENCE,
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

/// An engine on a handle that declined a graph, and its plugin's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclinedEngine {
    pub engine_name: String,
    pub plugin_name: String,
    /// The plugin's own words (its refusal to build a plan of the engine for the graph).
    pub reason: String,
}

impl std::fmt::Display for DeclinedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.engine_name, self.plugin_name, self.reason
        )
    }
}

/// Every engine of `handle`'s plugins that is not applicable to `graph_blob` (a validated graph's
/// blob), with the reason its plugin gives, in registry and plugin order.
///
/// `get_applicable_engine_ids` returns IDs only, so the reason is asked for the way a build
/// would: each declined engine's plugin is asked to create an execution context for the graph
/// with the engine's default knobs, and its refusal text is the reason. A plugin checks support
/// before it compiles anything, so the refusals are cheap; in the odd case where a plugin builds
/// an engine it did not list, the context is destroyed at once and the reason says so. A plugin
/// that cannot answer `get_applicable_engine_ids` gives that failure as the reason of each of its
/// engines. Meant for error messages: call it when no engine (or not the one asked for) is left.
pub fn declined_engines(handle: &Handle, graph_blob: &[u8]) -> Vec<DeclinedEngine> {
    let mut declined = Vec::new();
    for (i, inst) in handle.instances().iter().enumerate() {
        let plugin = &inst.plugin;
        let applicable_ids = applicable(handle, i, graph_blob);
        for engine in plugin.engines() {
            let reason = match &applicable_ids {
                Ok(ids) if ids.contains(&engine.id) => continue,
                Ok(_) => refusal(inst, engine, graph_blob),
                Err(e) => format!("its plugin did not say which engines apply: {e}"),
            };
            declined.push(DeclinedEngine {
                engine_name: engine.name.clone(),
                plugin_name: plugin.name().to_string(),
                reason,
            });
        }
    }
    declined
}

/// Why `engine` of `inst`'s plugin does not build a plan for the graph: the plugin's refusal.
fn refusal(
    inst: &crate::plugin::Instance,
    engine: &crate::EngineInfo,
    graph_blob: &[u8],
) -> String {
    let plugin = &inst.plugin;
    let cfg = KilnEngineConfig {
        engine_id: engine.id,
        knobs: std::ptr::null(),
        num_knobs: 0,
    };
    let mut context: KilnExecutionContext = std::ptr::null_mut();
    // SAFETY: the instance is live; cfg (no knobs) and graph_blob outlive the call; context is
    // writable.
    let st = unsafe {
        (plugin.table.create_execution_context)(
            inst.raw,
            &cfg,
            KilnBytes::from_slice(graph_blob),
            &mut context,
        )
    };
    if st == KilnPluginStatus::SUCCESS {
        if !context.is_null() {
            // SAFETY: the context was just created by this instance and is destroyed once.
            let st = unsafe { (plugin.table.destroy_execution_context)(inst.raw, context) };
            if let Err(e) = plugin.check(st, "destroying an execution context") {
                tracing::warn!("{e}");
            }
        }
        return "its plugin does not list it for this graph, although it builds a plan of it"
            .to_string();
    }
    let text = plugin.last_error_text();
    // Plugins often start their message with the engine's name, which the caller shows already.
    let text = text
        .strip_prefix(&format!("{}: ", engine.name))
        .unwrap_or(&text)
        .trim()
        .to_string();
    if text.is_empty() {
        format!("{} (no message)", st.name())
    } else {
        text
    }
}
