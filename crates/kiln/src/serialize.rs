//! Saving and loading graphs and compiled plans.
//!
//! What a re-save returns: a plan loaded from bytes saves again to exactly those bytes (same
//! engine, same payload and kernel, same envelope and provider versions), without calling its
//! plugin. To pick up a newer kernel, build the plan again from the graph
//! ([`Graph::build`]) and save that.

use crate::graph::Graph;
use kiln_backend::{check_plan_fits_graph, ExecutionPlan, Handle};
use kiln_core::{Error, Result};
use kiln_format::BlobKind;

impl Graph {
    /// Saves the graph and, when its selected plan can be saved, the plan with it.
    ///
    /// - a selected plan whose engine can be saved → a graph-and-plan container;
    /// - no plan, or a plan whose engine cannot be saved → the graph alone (the latter with a
    ///   warning in the log);
    /// - a plan that should save but whose save fails → that error (never a silent fallback).
    ///
    /// The plan part of a loaded graph is the plan bytes it was loaded with: a re-save gives the
    /// original kernel and versions. Build again to get a newer kernel.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        // A graph that was validated but never lowered for a handle has no blob yet.
        let encoded;
        let graph_blob = match (self.graph_blob(), self.op_graph()) {
            (Some(blob), _) => blob,
            (None, Some(g)) => {
                encoded = kiln_format::encode_graph(g);
                &encoded[..]
            }
            (None, None) => {
                return Err(Error::NotInitialized(
                    "validate the graph (or build it) before saving it".into(),
                ))
            }
        };
        match self.plan() {
            Some(plan) if plan.can_be_saved() => {
                let plan_bytes = plan.serialize()?;
                Ok(kiln_format::encode_container(graph_blob, Some(&plan_bytes)))
            }
            Some(plan) => {
                tracing::warn!(
                    "engine {} cannot save its plans: saving the graph without its plan",
                    plan.engine_name()
                );
                Ok(graph_blob.to_vec())
            }
            None => Ok(graph_blob.to_vec()),
        }
    }

    /// Same as [`Graph::serialize`] (cuDNN frontend's other name).
    pub fn to_binary(&self) -> Result<Vec<u8>> {
        self.serialize()
    }

    /// Loads a graph blob or a graph-and-plan container. With `handle`, a plan in the container is
    /// restored on the handle's device (no recompiling) and selected; without, only the graph is
    /// loaded.
    ///
    /// Refuses a bare plan blob with `BadParam` (load it with [`deserialize_compiled_plan`] or
    /// [`Graph::deserialize_compiled_plan`]), damaged or foreign bytes with `BadParam`, and (with
    /// or without `handle`) a container whose plan does not fit its graph (other tensor UIDs, or
    /// other recorded layouts) with `BadParam`.
    pub fn deserialize(handle: Option<&Handle>, bytes: &[u8]) -> Result<Graph> {
        let info = kiln_format::probe(bytes)?;
        let graph = kiln_format::decode_graph(bytes)?;
        let plan = match (handle, info.kind) {
            (Some(h), BlobKind::GraphAndPlan) if info.plan_blob_bytes.is_some() => {
                let plan = ExecutionPlan::restore(h, bytes)?;
                check_plan_fits(&graph, &plan)?;
                Some(plan)
            }
            (None, BlobKind::GraphAndPlan) if info.plan_blob_bytes.is_some() => {
                // Not restored without a handle, but a container whose plan was built for
                // another graph is damaged or forged, whoever loads it: refused as with a handle.
                let env = kiln_format::decode_plan(bytes)?;
                check_plan_fits_graph(&graph, &env.tensor_uids, env.tensor_layouts.as_deref())?;
                None
            }
            _ => None,
        };
        Graph::from_loaded(graph, handle, plan)
    }

    /// Same as [`Graph::deserialize`].
    pub fn from_binary(handle: Option<&Handle>, bytes: &[u8]) -> Result<Graph> {
        Graph::deserialize(handle, bytes)
    }

    /// The selected plan's saved bytes (a bare plan blob). A loaded plan returns the exact bytes
    /// it was loaded from; build again from the graph for a newer kernel.
    pub fn serialize_compiled_plan(&self) -> Result<Vec<u8>> {
        let plan = self
            .plan()
            .ok_or_else(|| Error::NotInitialized("no plan: build or load one first".into()))?;
        Ok(plan.serialize()?.to_vec())
    }

    /// Same as [`Graph::serialize_compiled_plan`].
    pub fn to_compiled_plan_binary(&self) -> Result<Vec<u8>> {
        self.serialize_compiled_plan()
    }

    /// Restores a plan from `bytes` (a bare plan or a container, of which the plan part is used)
    /// and attaches it to this graph as the selected plan.
    ///
    /// Refuses a plan whose tensor UIDs are not exactly this graph's bound tensors.
    pub fn deserialize_compiled_plan(&mut self, handle: &Handle, bytes: &[u8]) -> Result<()> {
        if self.op_graph().is_none() {
            self.validate()?;
        }
        let g = self
            .op_graph()
            .ok_or_else(|| Error::Internal("no graph after validate".into()))?;
        let plan = ExecutionPlan::restore(handle, bytes)?;
        check_plan_fits(g, &plan)?;
        self.attach_plan(handle, plan);
        Ok(())
    }

    /// Same as [`Graph::deserialize_compiled_plan`].
    pub fn from_compiled_plan_binary(&mut self, handle: &Handle, bytes: &[u8]) -> Result<()> {
        self.deserialize_compiled_plan(handle, bytes)
    }
}

/// Refuses (`BadParam`) a plan that does not fit `g`: its tensor UIDs must be exactly the bound
/// tensors of `g` and, when the plan records its tensor layouts (version-2 files and built plans),
/// each layout must equal the graph's tensor (data type, dims, strides).
pub(crate) fn check_plan_fits(g: &kiln_core::OpGraph, plan: &ExecutionPlan) -> Result<()> {
    check_plan_fits_graph(g, plan.tensor_uids(), plan.tensor_layouts())
}

/// Restores a plan alone from `bytes` (a bare plan blob, or a graph-and-plan container of which
/// the plan part is kept) on `handle`'s device, without recompiling. Its re-save
/// ([`serialize_compiled_plan`]) returns exactly the plan bytes it was loaded from.
///
/// A graph-only blob is refused with `BadParam` (load it with [`Graph::deserialize`]), and so is
/// a container whose plan does not fit the container's own graph.
pub fn deserialize_compiled_plan(handle: &Handle, bytes: &[u8]) -> Result<ExecutionPlan> {
    ExecutionPlan::restore(handle, bytes)
}

/// Same as [`deserialize_compiled_plan`].
pub fn from_compiled_plan_binary(handle: &Handle, bytes: &[u8]) -> Result<ExecutionPlan> {
    deserialize_compiled_plan(handle, bytes)
}

/// A plan's saved bytes: exactly the loaded bytes for a restored plan; for a built plan, what its
/// plugin saved on the first call.
pub fn serialize_compiled_plan(plan: &ExecutionPlan) -> Result<Vec<u8>> {
    Ok(plan.serialize()?.to_vec())
}

/// Same as [`serialize_compiled_plan`].
pub fn to_compiled_plan_binary(plan: &ExecutionPlan) -> Result<Vec<u8>> {
    serialize_compiled_plan(plan)
}

/// What a blob is, without a handle or plugin (see `kiln_format::probe`).
pub fn probe(bytes: &[u8]) -> Result<kiln_format::BlobInfo> {
    kiln_format::probe(bytes)
}
