//! A loaded plugin: its C table behind safe calls, its engines, where it came from.

use kiln_core::{Error, Result};
use kiln_plugin_abi::*;
use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;

/// Where a plugin came from, as messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// Linked into this program and declared with
    /// [`builtin_plugins!`](crate::builtin_plugins) (the embedded CPU engine, the CUDA kernel
    /// provider): one of [`Registry::builtin_tables`](crate::Registry::builtin_tables).
    BuiltIn,
    /// A table the program handed the registry itself ([`Registry::with_builtins`] or
    /// [`RegistryOptions::builtins`](crate::RegistryOptions::builtins) with a table no
    /// `builtin_plugins!` declares, or [`Plugin::from_table`] then [`Registry::add`]), such as a
    /// test's plugin.
    ///
    /// [`Registry::with_builtins`]: crate::Registry::with_builtins
    /// [`Registry::add`]: crate::Registry::add
    InProcess,
    /// Loaded from a shared library.
    Library(PathBuf),
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginSource::BuiltIn => f.write_str("built-in"),
            PluginSource::InProcess => f.write_str("in-process, registered by the program"),
            PluginSource::Library(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A knob an engine offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobInfo {
    pub id: i64,
    pub name: String,
    pub min: i64,
    pub max: i64,
    pub stride: i64,
    pub default: i64,
}

/// One engine of a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    pub id: u64,
    pub name: String,
    pub behavior_notes: u64,
    pub knobs: Vec<KnobInfo>,
    /// Where the engine runs, as its plugin says (ABI minor 3, `get_engine_targets`); `None`
    /// when the plugin does not say. Informative only.
    pub targets: Option<String>,
}

impl EngineInfo {
    /// True when the engine says its plans can be saved.
    pub fn supports_plan_serialization(&self) -> bool {
        self.behavior_notes & KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION != 0
    }
    /// True for a numerical reference engine.
    pub fn is_reference(&self) -> bool {
        self.behavior_notes & KILN_BEHAVIOR_REFERENCE != 0
    }
}

/// The optional plan-serialization hooks, present only when the plugin exports all three.
#[derive(Clone, Copy)]
pub(crate) struct SerializationHooks {
    pub save: unsafe extern "C" fn(
        KilnPluginInstance,
        u64,
        KilnExecutionContext,
        *mut KilnBytes,
    ) -> KilnPluginStatus,
    pub free: unsafe extern "C" fn(KilnPluginInstance, KilnBytes),
    pub restore: unsafe extern "C" fn(
        KilnPluginInstance,
        u64,
        KilnBytes,
        *mut KilnExecutionContext,
    ) -> KilnPluginStatus,
}

/// A plugin whose table has been checked. Lives as long as the registry that loaded it; a
/// plugin loaded from a library keeps the library mapped.
pub struct Plugin {
    pub(crate) table: KilnPluginTable,
    pub(crate) hooks: Option<SerializationHooks>,
    name: String,
    version: String,
    source: PluginSource,
    engines: Vec<EngineInfo>,
    abi: (u32, u32),
    // Kept mapped for the life of the process (see `Drop`).
    _library: Option<libloading::Library>,
}

// SAFETY: plugins promise thread-safe hooks (docs/plugin-development.md); the table is plain
// function pointers and the rest is owned data.
unsafe impl Send for Plugin {}
unsafe impl Sync for Plugin {}

/// Reads a NUL-terminated string a plugin returned; `None` for null or non-UTF-8.
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string that stays valid during the call.
pub(crate) unsafe fn read_cstr(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated per the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .ok()
        .map(str::to_owned)
}

impl Plugin {
    /// Checks and adopts `table`, reading the plugin's name, version and engines.
    ///
    /// Refuses a null table, another ABI major, a table smaller than the required hooks, and a
    /// plugin whose name or engines cannot be read.
    ///
    /// # Safety
    /// `table` must be null or point to a plugin table that stays valid (with every function it
    /// points to) for as long as `library` is loaded, or forever when `library` is `None`.
    pub unsafe fn from_table(
        table: *const KilnPluginTable,
        source: PluginSource,
        library: Option<libloading::Library>,
    ) -> Result<Plugin> {
        let bad = |why: String| Error::Plugin(format!("plugin at {source}: {why}"));
        if table.is_null() {
            return Err(bad(
                "the entry point returned no table (refused ABI major 1)".into(),
            ));
        }
        // SAFETY: non-null; the first three fields exist in every table version.
        let (size, major, minor) =
            unsafe { ((*table).struct_size, (*table).abi_major, (*table).abi_minor) };
        if major != KILN_PLUGIN_ABI_MAJOR {
            return Err(bad(format!(
                "ABI major {major} is not supported (this kiln speaks major {KILN_PLUGIN_ABI_MAJOR})"
            )));
        }
        if size < KILN_PLUGIN_TABLE_MIN_SIZE {
            return Err(bad(format!(
                "its table is {size} bytes, smaller than the {KILN_PLUGIN_TABLE_MIN_SIZE} bytes of \
                 the required hooks"
            )));
        }
        let copy = size.min(std::mem::size_of::<KilnPluginTable>());
        let mut owned = std::mem::MaybeUninit::<KilnPluginTable>::zeroed();
        // SAFETY: the plugin's table has `size` readable bytes; we copy at most our table's size.
        // Fields past `copy` stay zeroed, and only `Option<fn>` fields can lie there (the required
        // hooks all fit in KILN_PLUGIN_TABLE_MIN_SIZE), for which all-zero is `None`.
        let table = unsafe {
            std::ptr::copy_nonoverlapping(table as *const u8, owned.as_mut_ptr() as *mut u8, copy);
            owned.assume_init()
        };
        let hooks = match (
            table.serialize_execution_context,
            table.destroy_serialized_execution_context,
            table.create_execution_context_from_serialized,
        ) {
            (Some(save), Some(free), Some(restore)) => Some(SerializationHooks {
                save,
                free,
                restore,
            }),
            (None, None, None) => None,
            _ => {
                tracing::warn!(
                    "plugin at {source} exports only some plan-serialization hooks; \
                     treating it as exporting none"
                );
                None
            }
        };
        // SAFETY: the table's functions are valid (caller's contract) and return static strings.
        let name = unsafe { read_cstr((table.plugin_name)()) }
            .filter(|n| !n.is_empty())
            .ok_or_else(|| bad("its name is null, empty or not UTF-8".into()))?;
        // SAFETY: as above.
        let version = unsafe { read_cstr((table.plugin_version)()) }.unwrap_or_default();
        let mut plugin = Plugin {
            table,
            hooks,
            name,
            version,
            source,
            engines: Vec::new(),
            abi: (major, minor),
            _library: library,
        };
        plugin.engines = plugin.read_engines()?;
        Ok(plugin)
    }

    fn read_engines(&self) -> Result<Vec<EngineInfo>> {
        let ids = self.read_ids(|out, cap, count| {
            // SAFETY: out has room for cap ids (or is null), count is a valid pointer.
            unsafe { (self.table.get_engine_ids)(out, cap, count) }
        })?;
        let mut engines = Vec::with_capacity(ids.len());
        for id in ids {
            let mut d = std::mem::MaybeUninit::<KilnEngineDetails>::zeroed();
            // SAFETY: d is writable storage for one details struct.
            let st = unsafe { (self.table.get_engine_details)(id, d.as_mut_ptr()) };
            self.check(st, &format!("engine details of {id:#x}"))?;
            // SAFETY: the plugin filled d on success (a zeroed struct is also a valid value).
            let d = unsafe { d.assume_init() };
            // SAFETY: the plugin's strings live while it is loaded.
            let name = unsafe { read_cstr(d.name) }
                .ok_or_else(|| self.error(format!("engine {id:#x} has no readable name")))?;
            if kiln_core::engine_id(&name) != id {
                return Err(self.error(format!(
                    "engine '{name}' has id {id:#x}, not the FNV-1a hash of its name"
                )));
            }
            let knobs = if d.num_knobs == 0 || d.knobs.is_null() {
                Vec::new()
            } else {
                // SAFETY: the plugin gives num_knobs entries that live while it is loaded.
                unsafe { std::slice::from_raw_parts(d.knobs, d.num_knobs) }
                    .iter()
                    .map(|k| KnobInfo {
                        id: k.knob_id,
                        // SAFETY: as above.
                        name: unsafe { read_cstr(k.name) }.unwrap_or_default(),
                        min: k.min_value,
                        max: k.max_value,
                        stride: k.stride,
                        default: k.default_value,
                    })
                    .collect()
            };
            let targets = self.table.get_engine_targets.and_then(|f| {
                // SAFETY: the hook returns null or a NUL-terminated string the plugin keeps
                // alive while it is loaded.
                unsafe { read_cstr(f(id)) }.filter(|t| !t.is_empty())
            });
            engines.push(EngineInfo {
                id,
                name,
                behavior_notes: d.behavior_notes,
                knobs,
                targets,
            });
        }
        Ok(engines)
    }

    /// Calls a two-call id-list hook: first for the count, then for the ids.
    pub(crate) fn read_ids(
        &self,
        call: impl Fn(*mut u64, usize, *mut usize) -> KilnPluginStatus,
    ) -> Result<Vec<u64>> {
        let mut count = 0usize;
        self.check(call(std::ptr::null_mut(), 0, &mut count), "engine id count")?;
        if count > 1 << 16 {
            return Err(self.error(format!("reports {count} engines")));
        }
        let mut ids = vec![0u64; count];
        let mut written = 0usize;
        self.check(call(ids.as_mut_ptr(), count, &mut written), "engine ids")?;
        ids.truncate(written.min(count));
        Ok(ids)
    }

    /// Maps a plugin status to kiln's error, with the plugin's last-error text.
    pub(crate) fn check(&self, status: KilnPluginStatus, what: &str) -> Result<()> {
        if status == KilnPluginStatus::SUCCESS {
            return Ok(());
        }
        let text = self.last_error_text();
        let msg = format!(
            "{} ({}) failed in {what}: {}: {text}",
            self.name,
            self.source,
            status.name()
        );
        Err(match status {
            KilnPluginStatus::NOT_SUPPORTED => Error::NotSupported(msg),
            KilnPluginStatus::ALLOC_FAILED => Error::AllocFailed(msg),
            KilnPluginStatus::EXECUTION_FAILED => Error::ExecutionFailed(msg),
            _ => Error::Plugin(msg),
        })
    }

    /// The calling thread's last error message of this plugin ("" if none).
    pub(crate) fn last_error_text(&self) -> String {
        // SAFETY: get_last_error returns the calling thread's message, valid until its next call.
        unsafe { read_cstr((self.table.get_last_error)()) }.unwrap_or_default()
    }

    pub(crate) fn error(&self, why: String) -> Error {
        Error::Plugin(format!("plugin {} ({}): {why}", self.name, self.source))
    }

    /// Plugin name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Plugin version (diagnostic).
    pub fn version(&self) -> &str {
        &self.version
    }
    /// Where the plugin came from.
    pub fn source(&self) -> &PluginSource {
        &self.source
    }
    /// The plugin's engines.
    pub fn engines(&self) -> &[EngineInfo] {
        &self.engines
    }
    /// The plugin's ABI version (major, minor).
    pub fn abi_version(&self) -> (u32, u32) {
        self.abi
    }
    /// True when the plugin exports all three plan-serialization hooks.
    pub fn has_serialization_hooks(&self) -> bool {
        self.hooks.is_some()
    }
    /// The engine with `id`, if this plugin has it.
    pub fn engine(&self, id: u64) -> Option<&EngineInfo> {
        self.engines.iter().find(|e| e.id == id)
    }

    /// True when the plugin can describe its saved payloads: it exports
    /// `describe_serialized_execution_context` (ABI minor 2) and the three plan-serialization
    /// hooks, whose free hook gives the description back.
    pub fn can_describe_payloads(&self) -> bool {
        self.hooks.is_some() && self.table.describe_serialized_execution_context.is_some()
    }

    /// The plugin's description of `payload`, a saved execution context of engine `engine_id`
    /// (the payload of a plan envelope), made without an instance or a device.
    ///
    /// `Ok(None)` when the plugin does not describe payloads (no hook, or `NOT_SUPPORTED`).
    /// Refuses with the plugin's message when it cannot read the payload (damaged bytes, a newer
    /// format), and when the text is over 1 MiB or not UTF-8. The plugin's text is copied and
    /// always given back to its free hook.
    pub fn describe_payload(&self, engine_id: u64, payload: &[u8]) -> Result<Option<String>> {
        const MAX_DESCRIPTION: usize = 1 << 20;
        let (Some(hooks), Some(describe)) =
            (self.hooks, self.table.describe_serialized_execution_context)
        else {
            return Ok(None);
        };
        let mut out = KilnBytes::EMPTY;
        // SAFETY: the payload view outlives the call; out is writable.
        let status = unsafe { describe(engine_id, KilnBytes::from_slice(payload), &mut out) };
        if status == KilnPluginStatus::NOT_SUPPORTED {
            // SAFETY: `out` is what the hook left (EMPTY unless it wrote one); freeing a null or
            // empty slice is part of the free hook's contract.
            unsafe { (hooks.free)(std::ptr::null_mut(), out) };
            return Ok(None);
        }
        let text = self
            .check(status, "describing a saved payload")
            .and_then(|()| {
                // SAFETY: on success the plugin returned `len` readable bytes, valid until freed.
                let bytes = unsafe { out.as_slice() }.ok_or_else(|| {
                    self.error("the describe hook returned a null pointer with a length".into())
                })?;
                if bytes.len() > MAX_DESCRIPTION {
                    return Err(self.error(format!(
                        "the describe hook returned {} bytes of text (at most {MAX_DESCRIPTION})",
                        bytes.len()
                    )));
                }
                String::from_utf8(bytes.to_vec()).map_err(|_| {
                    self.error("the describe hook returned text that is not UTF-8".into())
                })
            });
        // The host copied (or refused) the text; the plugin always gets it back, with no
        // instance, as the ABI documents for description text.
        // SAFETY: `out` is what the plugin's describe hook returned (possibly null/empty).
        unsafe { (hooks.free)(std::ptr::null_mut(), out) };
        text.map(Some)
    }
}

impl Drop for Plugin {
    /// A plugin's library is never unloaded: threads it started (a rayon pool, a driver's
    /// callbacks) may still run its code after the last plan is gone, and unmapping it under
    /// them would be undefined behaviour. The mapping lives until the process ends.
    fn drop(&mut self) {
        if let Some(library) = self._library.take() {
            std::mem::forget(library);
        }
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("source", &self.source)
            .field("engines", &self.engines)
            .finish()
    }
}

/// A plugin instance bound to a device; destroyed when the last handle or plan using it goes.
pub(crate) struct Instance {
    pub plugin: std::sync::Arc<Plugin>,
    pub raw: KilnPluginInstance,
}

// SAFETY: plugin instances are thread-safe by contract (docs/plugin-development.md).
unsafe impl Send for Instance {}
unsafe impl Sync for Instance {}

impl Instance {
    pub fn create(plugin: std::sync::Arc<Plugin>, device: crate::Device) -> Result<Instance> {
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: raw is writable; the device is a plain struct.
        let st = unsafe { (plugin.table.create_instance)(device.to_abi(), &mut raw) };
        plugin.check(st, &format!("creating an instance for {device}"))?;
        if raw.is_null() {
            return Err(plugin.error("create_instance succeeded but returned null".into()));
        }
        Ok(Instance { plugin, raw })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: raw came from create_instance of this plugin and is destroyed once.
        let st = unsafe { (self.plugin.table.destroy_instance)(self.raw) };
        if let Err(e) = self.plugin.check(st, "destroying an instance") {
            tracing::warn!("{e}");
        }
    }
}
