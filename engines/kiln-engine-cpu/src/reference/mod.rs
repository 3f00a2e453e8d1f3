//! `KILN_CPU_REFERENCE`: every operation, plain loops, f64 accumulation. The test oracle.

use crate::engine::{CpuEngine, Prepared};
use kiln_core::OpGraph;
use kiln_plugin_abi::{
    KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_REFERENCE, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION,
};
use kiln_plugin_sdk::{PluginError, PluginResult};

pub const NAME: &str = "KILN_CPU_REFERENCE";

/// The reference engine.
pub struct ReferenceEngine;

impl CpuEngine for ReferenceEngine {
    fn name(&self) -> &'static str {
        NAME
    }
    fn behavior_notes(&self) -> u64 {
        KILN_BEHAVIOR_REFERENCE
            | KILN_BEHAVIOR_DETERMINISTIC
            | KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
    }
    fn supports(&self, _graph: &OpGraph) -> Result<(), String> {
        Ok(())
    }
    fn prepare(&self, _graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        Err(PluginError::not_supported(
            "reference engine: not written yet",
        ))
    }
}
