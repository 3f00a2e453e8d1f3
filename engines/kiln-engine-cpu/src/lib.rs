//! kiln's embedded CPU engine plugin.
//!
//! One plugin, several engines:
//! - `KILN_CPU_REFERENCE`: every operation, plain loops, f64 accumulation; the test oracle.
//! - optimized engines (see [`fast`]) for fused pointwise chains, convolution and matmul with
//!   fused pointwise epilogues.
//!
//! Built as an rlib (the backend registers it statically, so kiln works with no plugin path) and
//! as a cdylib exporting `kiln_engine_plugin_v1` (so tests prove the C ABI by loading it).

pub mod engine;
pub mod fast;
pub mod payload;
pub mod reference;
pub mod tensor_map;

use engine::{CpuContext, CpuEngine};
use kiln_core::{engine_id, OpGraph};
use kiln_plugin_sdk::{
    export_plugin, Device, EngineDescriptor, EnginePlugin, KilnTensorBinding, KnobSetting,
    PluginError, PluginResult, TensorExtent,
};
use tensor_map::TensorMap;

/// Plugin name, as saved in plan envelopes.
pub const PLUGIN_NAME: &str = "kiln-cpu";
/// Plugin version, as saved in plan envelopes (diagnostic).
pub const PLUGIN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every engine of the plugin, in heuristic order: optimized engines first, the reference last.
pub fn all_engines() -> Vec<&'static dyn CpuEngine> {
    let mut engines = fast::engines();
    engines.push(&reference::ReferenceEngine);
    engines
}

fn find_engine(id: u64) -> PluginResult<&'static dyn CpuEngine> {
    all_engines()
        .into_iter()
        .find(|e| engine_id(e.name()) == id)
        .ok_or_else(|| PluginError::bad_param(format!("{PLUGIN_NAME}: no engine with id {id:#x}")))
}

/// The CPU plugin instance. It holds no state: CPU engines need none per handle.
pub struct CpuPlugin;

impl EnginePlugin for CpuPlugin {
    type Context = CpuContext;
    const NAME: &'static str = PLUGIN_NAME;
    const VERSION: &'static str = PLUGIN_VERSION;
    const SUPPORTS_SERIALIZATION: bool = true;

    fn engines() -> Vec<EngineDescriptor> {
        all_engines()
            .into_iter()
            .map(|e| EngineDescriptor {
                name: e.name(),
                behavior_notes: e.behavior_notes(),
                knobs: e.knobs(),
            })
            .collect()
    }

    fn create(device: Device) -> PluginResult<Self> {
        match device {
            Device::Cpu => Ok(CpuPlugin),
            Device::Cuda(n) => Err(PluginError::not_supported(format!(
                "{PLUGIN_NAME}: runs on the CPU only, not on cuda:{n}"
            ))),
        }
    }

    fn applicable_engines(&self, graph: &OpGraph) -> Vec<u64> {
        all_engines()
            .into_iter()
            .filter(|e| e.supports(graph).is_ok())
            .map(|e| engine_id(e.name()))
            .collect()
    }

    fn create_context(
        &self,
        id: u64,
        knobs: &[KnobSetting],
        graph: &OpGraph,
    ) -> PluginResult<CpuContext> {
        let engine = find_engine(id)?;
        let mut knobs = engine::resolve_knobs(engine, knobs)?;
        // Build path only: a restore keeps the concrete values its payload stores.
        engine.resolve_auto_knobs(graph, &mut knobs);
        prepare_context(engine, knobs, graph.clone())
    }

    fn serialize_context(&self, engine_id: u64, context: &CpuContext) -> PluginResult<Vec<u8>> {
        let engine = find_engine(engine_id)?;
        let knobs: Vec<(i64, i64)> = engine
            .knobs()
            .iter()
            .map(|k| k.id)
            .zip(context.knobs.iter().copied())
            .collect();
        Ok(payload::encode(engine_id, &knobs, &context.graph))
    }

    /// Restores a saved context. Knobs the payload does not set take their defaults (the
    /// engine's behaviour before the knob existed), so plans saved before a knob was added keep
    /// loading; a knob id the engine does not have is `NOT_APPLICABLE`.
    fn restore_context(&self, engine_id: u64, bytes: &[u8]) -> PluginResult<CpuContext> {
        let p = payload::decode(bytes)?;
        if p.engine_id != engine_id {
            return Err(PluginError::invalid_value(format!(
                "kiln-cpu payload damaged: it is for engine {:#x}, the plan envelope says {engine_id:#x}",
                p.engine_id
            )));
        }
        let engine = find_engine(engine_id).map_err(|e| PluginError::not_applicable(e.message))?;
        if let Some(&(id, _)) = p
            .knobs
            .iter()
            .find(|(id, _)| !engine.knobs().iter().any(|k| k.id == *id))
        {
            return Err(PluginError::not_applicable(format!(
                "kiln-cpu payload sets knob id {id}, which engine {} of {PLUGIN_NAME} {PLUGIN_VERSION} \
                 does not have (a plan of a newer kiln?)",
                engine.name()
            )));
        }
        let settings: Vec<KnobSetting> = p
            .knobs
            .iter()
            .map(|&(knob_id, value)| KnobSetting { knob_id, value })
            .collect();
        let knobs = engine::resolve_knobs(engine, &settings)?;
        prepare_context(engine, knobs, p.graph)
    }

    /// Format version, engine, knob values and the stored graph's summary (no device needed).
    fn describe_payload(engine_id: u64, bytes: &[u8]) -> PluginResult<String> {
        payload::describe(bytes, engine_id, |id| find_engine(id).ok())
    }

    /// The bound tensors of the context's graph: for a restored plan, the graph its payload
    /// stores, which the backend checks against the envelope.
    fn context_tensors(&self, context: &CpuContext) -> PluginResult<Vec<TensorExtent>> {
        context
            .graph
            .bound_tensors()
            .map(TensorExtent::of)
            .collect()
    }

    fn workspace_size(&self, context: &CpuContext) -> usize {
        context.prepared.workspace_size()
    }

    unsafe fn execute(
        &self,
        context: &CpuContext,
        bindings: &[KilnTensorBinding],
        workspace: *mut u8,
    ) -> PluginResult<()> {
        // SAFETY: the caller guarantees the pointers match the graph's tensors (trait contract).
        let tensors = unsafe { TensorMap::new(&context.graph, bindings)? };
        // SAFETY: as above, and workspace holds workspace_size() bytes.
        unsafe { context.prepared.execute(&tensors, workspace) }
    }
}

fn prepare_context(
    engine: &dyn CpuEngine,
    knobs: Vec<i64>,
    graph: OpGraph,
) -> PluginResult<CpuContext> {
    engine
        .supports(&graph)
        .map_err(|why| PluginError::not_supported(format!("{}: {why}", engine.name())))?;
    let prepared = engine.prepare(&graph, &knobs)?;
    Ok(CpuContext {
        engine_id: engine_id(engine.name()),
        knobs,
        graph,
        prepared,
    })
}

export_plugin!(CpuPlugin);
