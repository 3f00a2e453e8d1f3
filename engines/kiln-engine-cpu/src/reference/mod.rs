//! `KILN_CPU_REFERENCE`: every operation, plain loops, f64 accumulation. The test oracle.
//!
//! Every other engine is checked against this one, so it favours obviously-correct code over
//! speed:
//! - Execution gathers each bound input (any layout, any data type) into a packed row-major f64
//!   buffer, evaluates the graph node by node in f64, and scatters each non-virtual output back
//!   to its layout, rounding once from f64 to its data type.
//! - Virtual tensors are f64 buffers in memory. A non-virtual output that a later node also
//!   reads is read as its **unrounded f64 value**, not as what was stored in its data type:
//!   the reference computes the mathematical graph, and engines that fuse through such a tensor
//!   agree with it to their tolerance rather than bit for bit.
//! - Sums (convolution, matmul, reductions) accumulate in f64. Transcendental pointwise modes use
//!   numerically stable forms of their definitions; gelu uses an erf/erfc written here, accurate
//!   to about 1e-15 relative.
//! - NaN propagates through every mode, including pointwise and reduction max/min.
//! - Workspace: none.
//!
//! [`evaluate`] and [`pointwise_f64`] are public so that tests and other engines can use the
//! oracle directly on host buffers.

mod batchnorm;
mod batchnorm_inference;
mod broadcast;
mod conv;
mod graph_eval;
mod layernorm;
mod matmul;
mod norm_backward;
mod norm_layout;
mod pointwise;
mod reduction;
pub(crate) mod resample;
mod rmsnorm;
pub(crate) mod sdpa;
#[cfg(test)]
mod tests;

use crate::engine::{CpuEngine, Prepared};
use crate::tensor_map::TensorMap;
use kiln_core::{GenericOp, Op, OpGraph, TensorDesc};
use kiln_plugin_abi::{
    KILN_BEHAVIOR_DETERMINISTIC, KILN_BEHAVIOR_REFERENCE, KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION,
};
use kiln_plugin_sdk::PluginResult;
use std::collections::HashMap;

pub use graph_eval::evaluate;
pub use pointwise::{erf, erfc, pointwise_f64};

/// The engine's unique name; its engine ID is `kiln_core::engine_id(NAME)`.
pub const NAME: &str = "KILN_CPU_REFERENCE";

/// The reference engine. It supports every valid graph, has no knobs and needs no workspace.
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

    fn supports(&self, graph: &OpGraph) -> Result<(), String> {
        for n in &graph.nodes {
            if let Op::Generic(g) = &n.op {
                if generic_kernel(&g.op).is_none() {
                    return Err(format!(
                        "node '{}': the reference engine has no kernel for operation '{}'",
                        n.name, g.op
                    ));
                }
            }
        }
        Ok(())
    }

    /// Keeps a copy of the graph; all the work happens at execute.
    fn prepare(&self, graph: &OpGraph, _knobs: &[i64]) -> PluginResult<Box<dyn Prepared>> {
        Ok(Box::new(ReferencePrepared {
            graph: graph.clone(),
        }))
    }
}

/// What the reference kernel of a generic operation gets besides its node.
pub(crate) struct GenericInputs<'a> {
    /// The graph, for by-value scalars and tensor descriptions.
    pub graph: &'a OpGraph,
    /// The node's name.
    pub node: &'a str,
    /// The node's name and operation, for messages.
    pub what: &'a str,
    /// An operand as a packed row-major f64 buffer (by-value scalars refused).
    #[allow(clippy::type_complexity)]
    pub read: &'a dyn Fn(i64) -> PluginResult<(&'a TensorDesc, &'a [f64])>,
}

/// A generic operation's reference kernel: the `(uid, values)` of each output it writes.
pub(crate) type GenericKernel =
    fn(&GenericOp, &GenericInputs<'_>) -> PluginResult<Vec<(i64, Vec<f64>)>>;

/// The reference kernel of each operation registered in `kiln_core::ops::SPECS`, by name.
pub(crate) fn generic_kernel(op: &str) -> Option<GenericKernel> {
    match op {
        "rmsnorm" => Some(rmsnorm::run),
        "sdpa" => Some(sdpa::run),
        "sdpa_backward" => Some(sdpa::run_backward),
        "resample" => Some(resample::run),
        "resample_backward" => Some(resample::run_backward),
        "rmsnorm_backward" => Some(norm_backward::rmsnorm),
        "layernorm" => Some(layernorm::run),
        "layernorm_backward" => Some(norm_backward::layernorm),
        "batchnorm" => Some(batchnorm::run),
        "batchnorm_inference" => Some(batchnorm_inference::run),
        "batchnorm_backward" => Some(norm_backward::batchnorm),
        _ => None,
    }
}

/// A graph prepared by the reference engine: the graph itself.
struct ReferencePrepared {
    graph: OpGraph,
}

impl Prepared for ReferencePrepared {
    fn workspace_size(&self) -> usize {
        0
    }

    /// Gathers the bound inputs to f64, calls [`evaluate`], and scatters every non-virtual
    /// output rounded to its data type. The workspace is not touched.
    unsafe fn execute(&self, tensors: &TensorMap<'_>, _workspace: *mut u8) -> PluginResult<()> {
        let graph = &self.graph;
        let mut inputs = HashMap::new();
        for t in graph.bound_tensors() {
            if graph.producer(t.uid).is_none() {
                inputs.insert(t.uid, tensors.gather_f64(t.uid)?);
            }
        }
        let outputs = evaluate(graph, &inputs)?;
        for (uid, values) in &outputs {
            tensors.scatter_f64(*uid, values)?;
        }
        Ok(())
    }
}
