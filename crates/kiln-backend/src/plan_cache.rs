//! Saving and restoring plans: the serialized-plan cache of DESIGN.md section 5.
//!
//! - A **built** plan fills its cache on its first save: the plugin's save hook is called once,
//!   under the cache's lock, so concurrent first saves produce one fill and identical bytes. A
//!   failed fill leaves the cache empty, so a retry calls the plugin again.
//! - A **restored** plan's cache is seeded at load with exactly the plan bytes it was loaded from
//!   (the plan part of a container). Its saves never call the plugin: they return those bytes,
//!   with their envelope version and the original provider version inside. A newer kernel only
//!   enters by building the plan again from its graph.
//!
//! Memory: a restored plan holds one copy of its plan bytes (payload and code objects included)
//! for its lifetime; a built plan holds one only after its first save.

use crate::plan::{ExecutionPlan, PlanOrigin};
use crate::Handle;
use kiln_core::{Error, Result};
use kiln_format::PlanEnvelope;
use kiln_plugin_abi::{KilnBytes, KilnExecutionContext};
use std::sync::Arc;

impl ExecutionPlan {
    /// True when this plan's engine declares plan serialization and its plugin exports all
    /// three hooks (restored plans can always be saved: they return their loaded bytes).
    pub fn can_be_saved(&self) -> bool {
        self.origin == PlanOrigin::Restored
            || (self.engine.supports_plan_serialization()
                && self.instance.plugin.has_serialization_hooks())
    }

    /// The plan's saved bytes (a plan blob).
    ///
    /// A restored plan returns exactly the bytes it was loaded from (same envelope version,
    /// engine, payload and provider version) without calling the plugin. A built plan asks its
    /// plugin once, on the first save, and returns the same bytes afterwards. To pick up a newer
    /// kernel, build the plan again from its graph.
    ///
    /// Refuses with `NotSupported` when the engine or plugin cannot save plans, and with
    /// `PluginError` when the plugin's save fails or returns a null or empty payload (the cache
    /// stays empty; a later call retries).
    pub fn serialize(&self) -> Result<Arc<[u8]>> {
        let mut cache = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bytes) = cache.as_ref() {
            return Ok(bytes.clone());
        }
        let plugin = &self.instance.plugin;
        if !self.engine.supports_plan_serialization() {
            return Err(Error::NotSupported(format!(
                "engine {} does not support plan serialization; save the graph and build it again",
                self.engine.name
            )));
        }
        let hooks = plugin.hooks.ok_or_else(|| {
            Error::NotSupported(format!(
                "plugin {} does not export the three plan-serialization hooks; plans of engine {} cannot be saved",
                plugin.name(),
                self.engine.name
            ))
        })?;
        let mut out = KilnBytes::EMPTY;
        // SAFETY: instance and context are live; out is writable.
        let status =
            unsafe { (hooks.save)(self.instance.raw, self.engine.id, self.context, &mut out) };
        let payload = plugin.check(status, "saving a plan").and_then(|()| {
            // SAFETY: on success the plugin returned `len` readable bytes, valid until freed.
            match unsafe { out.as_slice() } {
                Some(p) if !p.is_empty() => Ok(p.to_vec()),
                _ => Err(Error::Plugin(format!(
                    "{} ({}): the save hook of engine {} returned {} payload",
                    plugin.name(),
                    plugin.source(),
                    self.engine.name,
                    if out.ptr.is_null() {
                        "a null"
                    } else {
                        "an empty"
                    }
                ))),
            }
        });
        // The host copied (or refused) the bytes; the plugin always gets them back.
        // SAFETY: `out` is what the plugin's save hook returned (possibly null/empty).
        unsafe { (hooks.free)(self.instance.raw, out) };
        let payload = payload?;
        let envelope = PlanEnvelope {
            version: kiln_format::PLAN_ENVELOPE_VERSION,
            engine_id: self.engine.id,
            engine_name: self.engine.name.clone(),
            plugin_name: plugin.name().to_string(),
            plugin_version: plugin.version().to_string(),
            workspace_size: self.workspace_size as u64,
            tensor_uids: self.tensor_uids.clone(),
            alignments: Some(self.alignments.clone()),
            payload: &payload,
            tensor_layouts: self.tensor_layouts.clone(),
        };
        let bytes: Arc<[u8]> = kiln_format::encode_plan(&envelope).into();
        *cache = Some(bytes.clone());
        Ok(bytes)
    }

    /// True once the plan holds its saved bytes (restored plans always do).
    pub fn is_saved(&self) -> bool {
        self.saved.lock().map(|c| c.is_some()).unwrap_or(false)
    }

    /// Restores a plan from `bytes` (a bare plan blob, or a graph-and-plan container of which
    /// the plan part is used) on `handle`'s device, without recompiling.
    ///
    /// Checks, in order: the blob (preamble, checksum, FlatBuffer, envelope version 1 or 2,
    /// alignments); for a container, that its plan fits its graph (the tensor UIDs and recorded
    /// layouts, as `Graph::deserialize` checks them; `BadParam`); an engine with the envelope's ID and name among the handle's plugins; the
    /// plugin's three hooks; then the plugin restores its context from a view of the payload (no
    /// copy); the tensors the restored context binds match the envelope's UIDs and layouts
    /// (when the plugin reports them); the workspace matches. The plan's saved-bytes cache is seeded with the plan blob. A failure creates no plan
    /// and keeps nothing; the plugin's message is kept in the error.
    pub fn restore(handle: &Handle, bytes: &[u8]) -> Result<ExecutionPlan> {
        let plan_bytes = kiln_format::plan_part(bytes)?;
        let env = kiln_format::decode_plan(plan_bytes)?;
        crate::plan_fit::check_container_plan_fits(bytes, plan_bytes, &env)?;
        let instance =
            handle.instance_for_engine(env.engine_id).ok_or_else(|| {
                Error::NotSupported(format!(
                "the plan needs engine {} ({:#x}) of plugin {} {}, which is not available on {} \
                 (plugins here: {})",
                env.engine_name,
                env.engine_id,
                env.plugin_name,
                env.plugin_version,
                handle.device(),
                handle.plugins().map(|p| p.name()).collect::<Vec<_>>().join(", ")
            ))
            })?;
        let plugin = &instance.plugin;
        let engine = plugin
            .engine(env.engine_id)
            .cloned()
            .ok_or_else(|| Error::Internal("engine vanished from its plugin".into()))?;
        if engine.name != env.engine_name {
            return Err(Error::BadParam(format!(
                "the plan names engine '{}' but its id {:#x} belongs to engine '{}'",
                env.engine_name, env.engine_id, engine.name
            )));
        }
        let hooks = plugin.hooks.ok_or_else(|| {
            Error::NotSupported(format!(
                "plugin {} does not export the three plan-serialization hooks; plans of engine {} cannot be loaded",
                plugin.name(),
                engine.name
            ))
        })?;
        let mut context: KilnExecutionContext = std::ptr::null_mut();
        // SAFETY: the instance is live; the payload view is valid for the call; context is writable.
        let status = unsafe {
            (hooks.restore)(
                instance.raw,
                env.engine_id,
                KilnBytes::from_slice(env.payload),
                &mut context,
            )
        };
        plugin.check(
            status,
            &format!("restoring a plan of engine {}", engine.name),
        )?;
        let alignments = env
            .alignments
            .clone()
            .unwrap_or_else(|| vec![0; env.tensor_uids.len()]);
        let plan = ExecutionPlan::finalize(
            instance.clone(),
            context,
            engine,
            handle.device(),
            (
                env.tensor_uids.clone(),
                alignments,
                env.tensor_layouts.clone(),
            ),
            PlanOrigin::Restored,
            Some(Arc::from(plan_bytes)),
        )?;
        crate::payload_check::check_payload_matches_envelope(&plan)?;
        if plan.workspace_size as u64 != env.workspace_size {
            return Err(Error::BadParam(format!(
                "the plan records a workspace of {} bytes but its engine {} needs {}",
                env.workspace_size, plan.engine.name, plan.workspace_size
            )));
        }
        Ok(plan)
    }

    /// The envelope version of the plan's saved bytes: the loaded version for a restored plan,
    /// the current writer's version for a built one.
    pub fn envelope_version(&self) -> u32 {
        let cache = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        match (self.origin, cache.as_ref()) {
            (PlanOrigin::Restored, Some(b)) => {
                kiln_format::decode_plan(b).map(|e| e.version).unwrap_or(0)
            }
            _ => kiln_format::PLAN_ENVELOPE_VERSION,
        }
    }
}
