//! Execution plans: built from an engine config and a graph, or restored from saved bytes;
//! immutable afterwards and executable from several threads at once.

use crate::plugin::{EngineInfo, Instance};
use crate::{Device, EngineConfig, Handle};
use kiln_core::{Error, OpGraph, Result};
use kiln_format::TensorLayout;
use kiln_plugin_abi::{
    KilnBytes, KilnEngineConfig, KilnExecutionContext, KilnKnobSetting, KilnTensorBinding,
};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// How a plan came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanOrigin {
    /// Built from a graph by its engine.
    Built,
    /// Restored from saved plan bytes.
    Restored,
}

/// A compiled plan: one engine's execution context for one graph, bound to one device.
pub struct ExecutionPlan {
    pub(crate) instance: Arc<Instance>,
    pub(crate) context: KilnExecutionContext,
    pub(crate) engine: EngineInfo,
    pub(crate) device: Device,
    pub(crate) workspace_size: usize,
    pub(crate) tensor_uids: Vec<i64>,
    /// One required byte alignment per tensor UID (0 = no check).
    pub(crate) alignments: Vec<u32>,
    /// The layout of each bound tensor the plan was built for (absent in version-1 plans).
    pub(crate) tensor_layouts: Option<Vec<TensorLayout>>,
    pub(crate) origin: PlanOrigin,
    /// The plan's saved bytes: seeded at restore, filled on a built plan's first save.
    pub(crate) saved: Mutex<Option<Arc<[u8]>>>,
}

// SAFETY: the context is owned by this plan and destroyed once in Drop; plugins make contexts
// safe to execute from several threads (docs/plugin-development.md), and the plan never mutates
// it after construction.
unsafe impl Send for ExecutionPlan {}
unsafe impl Sync for ExecutionPlan {}

impl ExecutionPlan {
    /// Builds a plan of `config`'s engine for `graph` (validated) whose blob is `graph_blob`.
    ///
    /// Refuses an engine that no plugin on `handle` provides; the plugin's own refusal (graph not
    /// supported, bad knob) is returned with its message.
    pub fn build(
        handle: &Handle,
        config: &EngineConfig,
        graph: &OpGraph,
        graph_blob: &[u8],
    ) -> Result<ExecutionPlan> {
        let instance = handle
            .instance_for_engine(config.engine_id)
            .ok_or_else(|| {
                Error::NotSupported(format!(
                    "engine '{}' ({:#x}) is not available on {}",
                    config.engine_name,
                    config.engine_id,
                    handle.device()
                ))
            })?;
        let plugin = &instance.plugin;
        let engine = plugin
            .engine(config.engine_id)
            .cloned()
            .ok_or_else(|| Error::Internal("engine vanished from its plugin".into()))?;
        let knobs: Vec<KilnKnobSetting> = config
            .knobs
            .iter()
            .map(|&(knob_id, value)| KilnKnobSetting { knob_id, value })
            .collect();
        let cfg = KilnEngineConfig {
            engine_id: config.engine_id,
            knobs: if knobs.is_empty() {
                std::ptr::null()
            } else {
                knobs.as_ptr()
            },
            num_knobs: knobs.len(),
        };
        let mut context: KilnExecutionContext = std::ptr::null_mut();
        // SAFETY: instance is live, cfg/knobs/graph_blob outlive the call, context is writable.
        let st = unsafe {
            (plugin.table.create_execution_context)(
                instance.raw,
                &cfg,
                KilnBytes::from_slice(graph_blob),
                &mut context,
            )
        };
        plugin.check(st, &format!("building a plan with engine {}", engine.name))?;
        let bound: Vec<_> = graph.bound_tensors().collect();
        let uids = bound.iter().map(|t| t.uid).collect();
        let alignments = bound
            .iter()
            .map(|t| t.alignment.max(t.data_type.size() as u32))
            .collect();
        let layouts = bound.iter().map(|t| TensorLayout::of(t)).collect();
        ExecutionPlan::finalize(
            instance.clone(),
            context,
            engine,
            handle.device(),
            (uids, alignments, Some(layouts)),
            PlanOrigin::Built,
            None,
        )
    }

    /// Adopts a fresh context: reads its workspace size. On failure the context is destroyed.
    pub(crate) fn finalize(
        instance: Arc<Instance>,
        context: KilnExecutionContext,
        engine: EngineInfo,
        device: Device,
        (tensor_uids, alignments, tensor_layouts): (Vec<i64>, Vec<u32>, Option<Vec<TensorLayout>>),
        origin: PlanOrigin,
        saved: Option<Arc<[u8]>>,
    ) -> Result<ExecutionPlan> {
        if context.is_null() {
            return Err(instance.plugin.error(format!(
                "engine {} returned a null execution context",
                engine.name
            )));
        }
        let mut plan = ExecutionPlan {
            instance,
            context,
            engine,
            device,
            workspace_size: 0,
            tensor_uids,
            alignments,
            tensor_layouts,
            origin,
            saved: Mutex::new(saved),
        };
        let mut ws = 0usize;
        let plugin = &plan.instance.plugin;
        // SAFETY: instance and context are live; ws is writable.
        let st =
            unsafe { (plugin.table.get_workspace_size)(plan.instance.raw, plan.context, &mut ws) };
        plugin.check(st, "get_workspace_size")?; // Drop destroys the context on this path.
        plan.workspace_size = ws;
        Ok(plan)
    }

    /// The engine that runs this plan.
    pub fn engine(&self) -> &EngineInfo {
        &self.engine
    }
    /// The engine's name.
    pub fn engine_name(&self) -> &str {
        &self.engine.name
    }
    /// The plugin that provides the engine.
    pub fn plugin_name(&self) -> &str {
        self.instance.plugin.name()
    }
    /// The plugin's version.
    pub fn plugin_version(&self) -> &str {
        self.instance.plugin.version()
    }
    /// Workspace bytes `execute` needs.
    pub fn workspace_size(&self) -> usize {
        self.workspace_size
    }
    /// UIDs of the tensors bound at execute.
    pub fn tensor_uids(&self) -> &[i64] {
        &self.tensor_uids
    }
    /// Required pointer alignment in bytes for each of [`Self::tensor_uids`] (0 = no check).
    pub fn alignments(&self) -> &[u32] {
        &self.alignments
    }
    /// The layout of each bound tensor the plan was built for, in [`Self::tensor_uids`] order;
    /// `None` for plans loaded from files that do not record it (version-1 envelopes).
    pub fn tensor_layouts(&self) -> Option<&[TensorLayout]> {
        self.tensor_layouts.as_deref()
    }
    /// The device the plan is bound to.
    pub fn device(&self) -> Device {
        self.device
    }
    /// Built or restored.
    pub fn origin(&self) -> PlanOrigin {
        self.origin
    }

    /// Runs the plan on `bindings` (tensor UID, pointer) with `workspace`.
    ///
    /// Checked here, each with an error naming the UID: the handle is on the plan's device;
    /// every plan UID is bound exactly once and no other UID is; no pointer is null; each pointer
    /// meets its UID's alignment; the workspace is non-null and at least `workspace_size()` when
    /// that is not 0.
    ///
    /// # Safety
    /// Each pointer must address device memory large enough for its tensor's layout and data type
    /// and stay valid during the call; outputs must not overlap other bound memory; the workspace
    /// must hold `workspace_len` bytes.
    pub unsafe fn execute(
        &self,
        handle: &Handle,
        bindings: &[(i64, *mut c_void)],
        workspace: *mut c_void,
        workspace_len: usize,
    ) -> Result<()> {
        if handle.device() != self.device {
            return Err(Error::BadParam(format!(
                "the plan is bound to {} but the handle is on {}; load the plan with a handle for {}",
                self.device,
                handle.device(),
                handle.device()
            )));
        }
        let mut abi = Vec::with_capacity(bindings.len());
        for (i, &(uid, ptr)) in bindings.iter().enumerate() {
            let Some(k) = self.tensor_uids.iter().position(|&u| u == uid) else {
                return Err(Error::tensor(
                    uid,
                    "",
                    format!(
                        "is bound, but the plan has no such tensor (its uids: {:?})",
                        self.tensor_uids
                    ),
                ));
            };
            if bindings[..i].iter().any(|&(u, _)| u == uid) {
                return Err(Error::tensor(uid, "", "is bound twice"));
            }
            if ptr.is_null() {
                return Err(Error::NullPointer(format!(
                    "tensor uid {uid} is bound to a null pointer"
                )));
            }
            let align = self.alignments[k];
            if align > 1 && !(ptr as usize).is_multiple_of(align as usize) {
                return Err(Error::tensor(
                    uid,
                    "",
                    format!(
                        "pointer {ptr:p} is not aligned to the {align} bytes the plan requires"
                    ),
                ));
            }
            abi.push(KilnTensorBinding { uid, ptr });
        }
        if let Some(missing) = self
            .tensor_uids
            .iter()
            .find(|u| !bindings.iter().any(|b| b.0 == **u))
        {
            return Err(Error::tensor(*missing, "", "is not bound"));
        }
        if self.workspace_size > 0 {
            if workspace.is_null() {
                return Err(Error::NullPointer(format!(
                    "the plan needs a workspace of {} bytes but none was given",
                    self.workspace_size
                )));
            }
            if workspace_len < self.workspace_size {
                return Err(Error::SizeInsufficient(format!(
                    "the workspace has {workspace_len} bytes; the plan needs {}",
                    self.workspace_size
                )));
            }
        }
        let plugin = &self.instance.plugin;
        // SAFETY: the context is live; bindings were checked above and their memory is the
        // caller's contract.
        let st = unsafe {
            (plugin.table.execute)(
                self.instance.raw,
                self.context,
                abi.as_ptr(),
                abi.len(),
                workspace,
            )
        };
        plugin.check(
            st,
            &format!("executing a plan of engine {}", self.engine.name),
        )
    }
}

impl Drop for ExecutionPlan {
    fn drop(&mut self) {
        let plugin = &self.instance.plugin;
        // SAFETY: the context came from this plugin instance and is destroyed once.
        let st =
            unsafe { (plugin.table.destroy_execution_context)(self.instance.raw, self.context) };
        if let Err(e) = plugin.check(st, "destroying an execution context") {
            tracing::warn!("{e}");
        }
    }
}

impl std::fmt::Debug for ExecutionPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionPlan")
            .field("engine", &self.engine.name)
            .field("plugin", &self.plugin_name())
            .field("device", &self.device)
            .field("workspace_size", &self.workspace_size)
            .field("tensor_uids", &self.tensor_uids)
            .field("origin", &self.origin)
            .finish()
    }
}
