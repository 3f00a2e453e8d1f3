//! kiln-backend: everything between the frontend graph and the engine plugins.
//!
//! - [`Registry`]: plugin discovery (built-ins declared by the crates above with
//!   [`builtin_plugins!`], `KILN_PLUGIN_PATH`, a default folder) and loading
//!   through the C ABI; a plugin that fails to load is logged and skipped.
//! - [`Handle`]: bound to one device; holds one plugin instance per plugin that accepts it.
//! - [`heuristics`]: which engine configurations to try, in which order.
//! - [`ExecutionPlan`]: a built or restored plan, immutable once made, executable from several
//!   threads; saving and loading plans.

pub mod device;
pub mod handle;
pub mod heuristics;
mod payload_check;
pub mod plan;
mod plan_cache;
pub mod plan_fit;
pub mod plugin;
pub mod registry;

pub use device::Device;
pub use handle::Handle;
pub use heuristics::{BehaviorNote, DeclinedEngine, EngineConfig, HeurMode};
pub use plan::{ExecutionPlan, PlanOrigin};
pub use plan_fit::check_plan_fits_graph;
pub use plugin::{EngineInfo, KnobInfo, Plugin, PluginSource};
pub use registry::{BuiltinPlugin, Registry, RegistryOptions};
