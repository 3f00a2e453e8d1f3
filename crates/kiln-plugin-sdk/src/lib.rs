//! kiln-plugin-sdk: write a kiln engine plugin in safe Rust.
//!
//! Implement [`EnginePlugin`] and call [`export_plugin!`] once: it produces the C function table
//! (the same table whether the plugin is linked in statically or loaded from a shared library)
//! and the exported entry point `kiln_engine_plugin_v1`. Every entry is wrapped so that a panic
//! becomes `INTERNAL_ERROR` with a per-thread last-error message; keep `panic = "unwind"`.
//!
//! The SDK also enforces one rule of the plan-serialization contract for every plugin: a context
//! restored from saved bytes is never saved again by the plugin (the backend re-saves restored
//! plans from the bytes they were loaded from).

pub mod payload_header;
mod table;

use std::ffi::c_void;

pub use kiln_core::OpGraph;
pub use kiln_plugin_abi as abi;
pub use kiln_plugin_abi::{KilnPluginStatus, KilnTensorBinding};
pub use payload_header::{PayloadFormat, PAYLOAD_HEADER_SIZE};
pub use table::{plugin_table, PluginTableFor};

/// An error a plugin hook returns: a status and a message for the per-thread last error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    pub status: KilnPluginStatus,
    pub message: String,
}

impl PluginError {
    pub fn new(status: KilnPluginStatus, message: impl Into<String>) -> Self {
        PluginError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_param(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::BAD_PARAM, message)
    }
    pub fn not_supported(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::NOT_SUPPORTED, message)
    }
    pub fn invalid_value(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::INVALID_VALUE, message)
    }
    pub fn not_applicable(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::NOT_APPLICABLE, message)
    }
    pub fn execution_failed(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::EXECUTION_FAILED, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(KilnPluginStatus::INTERNAL_ERROR, message)
    }
}

impl From<kiln_core::Error> for PluginError {
    fn from(e: kiln_core::Error) -> Self {
        use kiln_core::Status;
        let status = match e.status() {
            Status::BadParam | Status::BadParamNullPointer | Status::BadParamSizeInsufficient => {
                KilnPluginStatus::BAD_PARAM
            }
            Status::NotSupported => KilnPluginStatus::NOT_SUPPORTED,
            Status::AllocFailed => KilnPluginStatus::ALLOC_FAILED,
            Status::ExecutionFailed => KilnPluginStatus::EXECUTION_FAILED,
            _ => KilnPluginStatus::INTERNAL_ERROR,
        };
        PluginError::new(status, e.message())
    }
}

/// The result of a plugin hook.
pub type PluginResult<T> = Result<T, PluginError>;

/// A knob an engine offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobDescriptor {
    pub id: i64,
    pub name: &'static str,
    pub min: i64,
    pub max: i64,
    pub stride: i64,
    pub default: i64,
}

/// One engine of a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineDescriptor {
    /// Unique, versioned name; the engine ID is `kiln_core::engine_id(name)`.
    pub name: &'static str,
    /// `abi::KILN_BEHAVIOR_*` bits.
    pub behavior_notes: u64,
    pub knobs: Vec<KnobDescriptor>,
}

/// A knob set to a value, as the host passes it.
pub type KnobSetting = kiln_plugin_abi::KilnKnobSetting;

/// The device an instance is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda(i32),
}

/// A kiln engine plugin. One value of the implementing type is a per-handle instance.
pub trait EnginePlugin: Sized + Send + Sync + 'static {
    /// The execution context: everything a built or restored plan needs to run.
    type Context: Send + Sync + 'static;

    /// Plugin name and version (diagnostic; saved in plan envelopes).
    const NAME: &'static str;
    const VERSION: &'static str;
    /// Whether the plan-serialization hooks are exported (all three, or none).
    const SUPPORTS_SERIALIZATION: bool = false;

    /// Every engine of the plugin, in a fixed order. Called once per process.
    fn engines() -> Vec<EngineDescriptor>;

    /// Creates an instance bound to `device`; refuses devices the plugin cannot drive.
    fn create(device: Device) -> PluginResult<Self>;

    /// Creates an instance that builds plans for CUDA architecture `sm_<arch>` with no device
    /// present (deviceless build: plans can be built and saved, not executed). Plugins that
    /// cannot do this keep the default, which refuses with `NOT_SUPPORTED`.
    fn create_for_target(arch: i32) -> PluginResult<Self> {
        Err(PluginError::not_supported(format!(
            "{}: cannot build for the target sm_{arch} without a device",
            Self::NAME
        )))
    }

    /// Sets the stream later work is queued on. CPU plugins ignore it.
    fn set_stream(&self, _stream: *mut c_void) -> PluginResult<()> {
        Ok(())
    }

    /// The engines that can run `graph`, most preferred first.
    fn applicable_engines(&self, graph: &OpGraph) -> Vec<u64>;

    /// Builds a context of engine `engine_id` with `knobs` for `graph` (already validated).
    fn create_context(
        &self,
        engine_id: u64,
        knobs: &[KnobSetting],
        graph: &OpGraph,
    ) -> PluginResult<Self::Context>;

    /// Workspace bytes `context` needs at execute.
    fn workspace_size(&self, context: &Self::Context) -> usize;

    /// Runs `context`.
    ///
    /// # Safety
    /// Each binding's pointer addresses memory on the instance's device large enough for its
    /// tensor's layout and suitably aligned, not aliased by another output; `workspace` addresses
    /// at least `workspace_size(context)` bytes (it may be null when that is 0).
    unsafe fn execute(
        &self,
        context: &Self::Context,
        bindings: &[KilnTensorBinding],
        workspace: *mut u8,
    ) -> PluginResult<()>;

    /// Saves a context this instance built. Never called for restored contexts: the SDK refuses
    /// those itself.
    fn serialize_context(
        &self,
        _engine_id: u64,
        _context: &Self::Context,
    ) -> PluginResult<Vec<u8>> {
        Err(PluginError::not_supported(format!(
            "{}: plans cannot be saved",
            Self::NAME
        )))
    }

    /// Restores a context of `engine_id` from `payload` (valid only during the call).
    fn restore_context(&self, _engine_id: u64, _payload: &[u8]) -> PluginResult<Self::Context> {
        Err(PluginError::not_supported(format!(
            "{}: plans cannot be loaded",
            Self::NAME
        )))
    }

    /// Where engine `name` runs, for people (`kiln plugins`): the devices or architectures, e.g.
    /// "compute capability 9.0 only (sm_90a)". Informative only; the default says nothing.
    fn engine_targets(_name: &str) -> Option<&'static str> {
        None
    }

    /// Describes a saved payload of engine `engine_id` for people (`kiln inspect`), with no
    /// instance and no device: its format version and what it needs to load (code objects and
    /// their target archs, versions, knobs, a summary of what it runs). Exported only with the
    /// plan-serialization hooks (`SUPPORTS_SERIALIZATION`). Check the payload as restore does:
    /// damaged bytes are `INVALID_VALUE`, a format this plugin cannot read `NOT_APPLICABLE`. The
    /// default says the plugin does not describe its payloads (`NOT_SUPPORTED`).
    fn describe_payload(_engine_id: u64, _payload: &[u8]) -> PluginResult<String> {
        Err(PluginError::not_supported(format!(
            "{}: does not describe its saved payloads",
            Self::NAME
        )))
    }

    /// The tensors `context` binds at execute, as its own state (for a restored context: its
    /// payload) describes them. The backend compares them with the plan envelope at every restore
    /// and refuses a plan whose payload contradicts its envelope, so a forged payload cannot make
    /// execute touch memory the caller did not give. Plugins that save plans should implement it;
    /// the default reports nothing (`NOT_SUPPORTED`), and the backend then relies on the plugin's
    /// own payload checks.
    fn context_tensors(&self, _context: &Self::Context) -> PluginResult<Vec<TensorExtent>> {
        Err(PluginError::not_supported(format!(
            "{}: does not report the tensors of its execution contexts",
            Self::NAME
        )))
    }
}

/// What an execution context touches of one bound tensor (see
/// [`EnginePlugin::context_tensors`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorExtent {
    pub uid: i64,
    pub data_type: kiln_core::DataType,
    /// Bytes from the bound pointer the context may read or write.
    pub storage_bytes: u64,
}

impl TensorExtent {
    /// The extent of `desc` (its data type and storage bytes).
    pub fn of(desc: &kiln_core::TensorDesc) -> PluginResult<TensorExtent> {
        let bytes = desc.storage_bytes().ok_or_else(|| {
            PluginError::bad_param(format!("{}: its storage size overflows", desc.label()))
        })?;
        Ok(TensorExtent {
            uid: desc.uid,
            data_type: desc.data_type,
            storage_bytes: bytes as u64,
        })
    }
}

/// The message the SDK's save hook gives for a context that was restored from saved bytes.
pub const RESTORED_CONTEXT_SAVE_REFUSAL: &str = "this execution context was restored from saved \
plan bytes; the kiln backend saves restored plans from the bytes they were loaded from and never \
asks the plugin to save them again";

/// Exports `$plugin` (a type implementing [`EnginePlugin`]) as a kiln plugin: defines
/// `pub fn plugin_table() -> &'static KilnPluginTable` in the calling module and the C entry point
/// `kiln_engine_plugin_v1`.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// This plugin's C function table (what the entry point returns).
        pub fn plugin_table() -> &'static $crate::abi::KilnPluginTable {
            $crate::plugin_table::<$plugin>()
        }

        /// The plugin entry point: the table for ABI major 1, or null for another major.
        ///
        /// # Safety
        /// Callable from any thread; takes no pointers.
        #[no_mangle]
        pub unsafe extern "C" fn kiln_engine_plugin_v1(
            host_abi_major: u32,
        ) -> *const $crate::abi::KilnPluginTable {
            if host_abi_major != $crate::abi::KILN_PLUGIN_ABI_MAJOR {
                return ::std::ptr::null();
            }
            plugin_table() as *const _
        }
    };
}
