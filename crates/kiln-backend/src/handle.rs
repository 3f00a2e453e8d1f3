//! Handles: a device plus one instance of every plugin that accepts it.

use crate::plugin::{EngineInfo, Instance, Plugin};
use crate::{Device, Registry};
use kiln_core::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// A handle bound to one device. Cheap to clone (clones share the plugin instances).
///
/// Every plugin of the registry is asked for an instance on the device; plugins that refuse it
/// (the CPU plugin on a GPU device, say) are left out of this handle.
#[derive(Clone)]
pub struct Handle {
    inner: Arc<HandleInner>,
}

struct HandleInner {
    device: Device,
    registry: Arc<Registry>,
    instances: Vec<Arc<Instance>>,
}

impl Handle {
    /// A handle on `device` using the process-wide plugin registry.
    pub fn new(device: Device) -> Result<Handle> {
        Handle::with_registry(device, Registry::global())
    }

    /// A CPU handle.
    pub fn cpu() -> Result<Handle> {
        Handle::new(Device::Cpu)
    }

    /// A handle on `device` using the plugins of `registry`.
    ///
    /// Refuses (`NotSupported`) when no plugin accepts the device, listing each plugin's reason.
    pub fn with_registry(device: Device, registry: Arc<Registry>) -> Result<Handle> {
        let mut instances = Vec::new();
        let mut refusals = Vec::new();
        for plugin in registry.plugins() {
            match Instance::create(plugin.clone(), device) {
                Ok(i) => instances.push(Arc::new(i)),
                Err(e) => {
                    tracing::debug!("plugin {} is not used on {device}: {e}", plugin.name());
                    refusals.push(e.to_string());
                }
            }
        }
        if instances.is_empty() {
            return Err(Error::NotSupported(format!(
                "no engine plugin can run on {device}{}",
                if refusals.is_empty() {
                    " (no plugins are registered)".to_string()
                } else {
                    format!(": {}", refusals.join("; "))
                }
            )));
        }
        Ok(Handle {
            inner: Arc::new(HandleInner {
                device,
                registry,
                instances,
            }),
        })
    }

    /// The device this handle is bound to.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// The registry this handle's plugins come from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    /// The plugins active on this handle, in registry order.
    pub fn plugins(&self) -> impl Iterator<Item = &Arc<Plugin>> {
        self.inner.instances.iter().map(|i| &i.plugin)
    }

    /// The engine with `id` among this handle's plugins.
    pub fn engine(&self, id: u64) -> Option<&EngineInfo> {
        self.plugins().find_map(|p| p.engine(id))
    }

    /// Sets the stream that work on this handle is queued on, for every plugin.
    ///
    /// # Safety
    /// `stream` must be null (the default stream) or a live stream of this handle's device (a
    /// `CUstream` for CUDA) that outlives the work queued on it. CPU plugins ignore it.
    pub unsafe fn set_stream(&self, stream: *mut c_void) -> Result<()> {
        for i in &self.inner.instances {
            // SAFETY: the instance belongs to its plugin; the stream contract is the caller's.
            let st = unsafe { (i.plugin.table.set_stream)(i.raw, stream) };
            i.plugin.check(st, "set_stream")?;
        }
        Ok(())
    }

    pub(crate) fn instances(&self) -> &[Arc<Instance>] {
        &self.inner.instances
    }

    pub(crate) fn instance_for_engine(&self, id: u64) -> Option<&Arc<Instance>> {
        self.inner
            .instances
            .iter()
            .find(|i| i.plugin.engine(id).is_some())
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("device", &self.inner.device)
            .field(
                "plugins",
                &self
                    .plugins()
                    .map(|p| p.name().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}
