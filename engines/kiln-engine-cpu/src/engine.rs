//! The interface every CPU engine implements, and the execution context they share.

use crate::tensor_map::TensorMap;
use kiln_core::OpGraph;
use kiln_plugin_sdk::{KnobDescriptor, KnobSetting, PluginError, PluginResult};

/// One CPU engine.
pub trait CpuEngine: Send + Sync {
    /// Unique, versioned engine name (`KILN_CPU_...`).
    fn name(&self) -> &'static str;
    /// `KILN_BEHAVIOR_*` bits.
    fn behavior_notes(&self) -> u64;
    /// The engine's knobs (empty when it has no real choices).
    fn knobs(&self) -> Vec<KnobDescriptor> {
        Vec::new()
    }
    /// `Ok` when the engine can run `graph` (validated); otherwise why not.
    fn supports(&self, graph: &OpGraph) -> Result<(), String>;
    /// Replaces "auto" values in `knobs` (one per knob, in the order of `knobs()`, already
    /// resolved against the defaults) by the concrete values this build chooses. Called only
    /// when a plan is built, never when one is restored, so a saved plan stores concrete values
    /// and prepares to the same workspace size on any machine. The default changes nothing.
    fn resolve_auto_knobs(&self, _graph: &OpGraph, _knobs: &mut [i64]) {}
    /// Prepares `graph` for execution with every knob resolved (one value per knob, in the
    /// order of `knobs()`). Must be cheap: restoring a saved plan calls it again.
    fn prepare(&self, graph: &OpGraph, knobs: &[i64]) -> PluginResult<Box<dyn Prepared>>;
}

/// A graph prepared by one engine, ready to run any number of times from any thread.
pub trait Prepared: Send + Sync {
    /// Workspace bytes `execute` needs.
    fn workspace_size(&self) -> usize;
    /// Runs the graph on the bound tensors.
    ///
    /// # Safety
    /// Every pointer in `tensors` addresses memory for its tensor's layout; `workspace` addresses
    /// `workspace_size()` bytes (it may be null when that is 0).
    unsafe fn execute(&self, tensors: &TensorMap<'_>, workspace: *mut u8) -> PluginResult<()>;
}

/// What a CPU plan holds: the engine, its knob values, the graph, and the prepared form. The
/// first three are what a saved CPU plan stores; the last is rebuilt from them on load.
pub struct CpuContext {
    pub engine_id: u64,
    pub knobs: Vec<i64>,
    pub graph: OpGraph,
    pub prepared: Box<dyn Prepared>,
}

/// Resolves knob settings against `engine.knobs()`: one value per knob, default where unset.
/// Unknown knobs and out-of-range values are refused with their name.
pub fn resolve_knobs(engine: &dyn CpuEngine, settings: &[KnobSetting]) -> PluginResult<Vec<i64>> {
    let knobs = engine.knobs();
    let mut values: Vec<i64> = knobs.iter().map(|k| k.default).collect();
    for s in settings {
        let i = knobs
            .iter()
            .position(|k| k.id == s.knob_id)
            .ok_or_else(|| {
                PluginError::bad_param(format!("{}: no knob with id {}", engine.name(), s.knob_id))
            })?;
        let k = &knobs[i];
        let in_steps = k.stride <= 1 || (s.value - k.min) % k.stride == 0;
        if s.value < k.min || s.value > k.max || !in_steps {
            return Err(PluginError::bad_param(format!(
                "{}: knob {} = {} is outside {}..={} (step {})",
                engine.name(),
                k.name,
                s.value,
                k.min,
                k.max,
                k.stride
            )));
        }
        values[i] = s.value;
    }
    Ok(values)
}
