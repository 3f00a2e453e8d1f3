//! Plugin discovery and the engine registry.
//!
//! Order: built-in plugins, then every library in the folders of `KILN_PLUGIN_PATH` (separated
//! by `:`; files in a folder in name order; a path may also name one library file), then the
//! default folder `kiln-plugins/` next to the running executable. A plugin that fails to load,
//! or whose name or an engine ID repeats one already registered, is logged and skipped.
//!
//! This crate links no engine. The crates at the top (`kiln`, `kiln-capi`) declare the engines
//! they link with [`builtin_plugins!`](crate::builtin_plugins); the process-wide registry
//! ([`Registry::global`]) registers every table declared anywhere in the program. A registry of
//! chosen tables is [`Registry::with_builtins`] or [`RegistryOptions::builtins`].

use crate::plugin::{Plugin, PluginSource};
use kiln_core::{Error, Result};
use kiln_plugin_abi::{EntryPointFn, KilnPluginTable, ENTRY_POINT_SYMBOL, KILN_PLUGIN_ABI_MAJOR};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The environment variable listing plugin folders or files.
pub const PLUGIN_PATH_ENV: &str = "KILN_PLUGIN_PATH";
/// The default plugin folder's name, next to the executable.
pub const DEFAULT_PLUGIN_DIR: &str = "kiln-plugins";

/// A plugin linked into the program, declared with [`builtin_plugins!`](crate::builtin_plugins).
#[derive(Debug)]
pub struct BuiltinPlugin {
    /// Registration order among the built-ins: lower first. kiln's own engines use
    /// [`BuiltinPlugin::ORDER_CPU`] and [`BuiltinPlugin::ORDER_CUDA`].
    pub order: u32,
    /// The plugin's table: the same table its shared library's entry point returns.
    pub table: fn() -> &'static KilnPluginTable,
}

impl BuiltinPlugin {
    /// The embedded CPU engine's place: first, so that it is the default engine.
    pub const ORDER_CPU: u32 = 0;
    /// The CUDA kernel provider's place: after the CPU engine.
    pub const ORDER_CUDA: u32 = 10;
}

/// Every built-in plugin declared in the program, gathered by the linker (so declaring one needs
/// no call at run time, and `Handle::cpu()` finds the CPU engine with no setup).
#[doc(hidden)]
#[linkme::distributed_slice]
pub static BUILTIN_PLUGINS: [BuiltinPlugin];

#[doc(hidden)]
pub use linkme;

/// Declares plugin tables linked into this program as built-ins, registered by
/// [`Registry::global`] and [`RegistryOptions::default`] before any plugin path is searched.
///
/// ```
/// # mod my_engine { pub use kiln_test_plugin::cpu_plugin_table as plugin_table; }
/// use kiln_backend::{BuiltinPlugin, Registry};
///
/// kiln_backend::builtin_plugins! {
///     MY_ENGINE = (BuiltinPlugin::ORDER_CPU, my_engine::plugin_table);
/// }
///
/// let table = my_engine::plugin_table();
/// assert!(Registry::builtin_tables().iter().any(|t| std::ptr::eq(*t, table)));
/// ```
///
/// Each name is the name of a private static; the order is a [`BuiltinPlugin::order`]. A table
/// declared by several crates of one program (the same `&'static` table) is registered once.
#[macro_export]
macro_rules! builtin_plugins {
    ($($name:ident = ($order:expr, $table:path);)+) => {
        $(
            #[$crate::registry::linkme::distributed_slice($crate::registry::BUILTIN_PLUGINS)]
            #[linkme(crate = $crate::registry::linkme)]
            static $name: $crate::registry::BuiltinPlugin = $crate::registry::BuiltinPlugin {
                order: $order,
                table: $table,
            };
        )+
    };
}

/// What discovery looks at.
#[derive(Clone)]
pub struct RegistryOptions {
    /// The plugin tables linked into this program to register first, in this order. The default
    /// is [`Registry::builtin_tables`]: every table declared with
    /// [`builtin_plugins!`](crate::builtin_plugins).
    pub builtins: Vec<&'static KilnPluginTable>,
    /// Read `KILN_PLUGIN_PATH`.
    pub env_path: bool,
    /// Look in `kiln-plugins/` next to the executable.
    pub default_dir: bool,
    /// More folders or library files, searched after the environment's.
    pub extra_paths: Vec<PathBuf>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            builtins: Registry::builtin_tables(),
            env_path: true,
            default_dir: true,
            extra_paths: Vec::new(),
        }
    }
}

impl std::fmt::Debug for RegistryOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A table is C function pointers: its address is all there is to show without calling in.
        let builtins: Vec<*const KilnPluginTable> =
            self.builtins.iter().map(|t| *t as *const _).collect();
        f.debug_struct("RegistryOptions")
            .field("builtins", &builtins)
            .field("env_path", &self.env_path)
            .field("default_dir", &self.default_dir)
            .field("extra_paths", &self.extra_paths)
            .finish()
    }
}

/// A plugin that was found but not registered, and why.
#[derive(Debug, Clone)]
pub struct SkippedPlugin {
    pub path: PathBuf,
    pub reason: String,
}

/// The plugins available to handles.
#[derive(Debug, Default)]
pub struct Registry {
    plugins: Vec<Arc<Plugin>>,
    skipped: Vec<SkippedPlugin>,
}

fn is_library(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("so") | Some("dylib") | Some("dll")
    )
}

impl Registry {
    /// The process-wide registry, discovered with default options on first use: the built-in
    /// plugins of [`Registry::builtin_tables`], then the plugin paths.
    pub fn global() -> Arc<Registry> {
        static GLOBAL: OnceLock<Arc<Registry>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Arc::new(Registry::discover(&RegistryOptions::default())))
            .clone()
    }

    /// A registry with no plugins.
    pub fn empty() -> Registry {
        Registry::default()
    }

    /// The plugin tables declared with [`builtin_plugins!`](crate::builtin_plugins) anywhere in
    /// this program, by [`BuiltinPlugin::order`] (then by declaration site, which the linker
    /// orders), each table once. Empty in a program that links no engine.
    pub fn builtin_tables() -> Vec<&'static KilnPluginTable> {
        let mut declared: Vec<&BuiltinPlugin> = BUILTIN_PLUGINS.iter().collect();
        declared.sort_by_key(|b| b.order);
        let mut tables: Vec<&'static KilnPluginTable> = Vec::new();
        for b in declared {
            let table = (b.table)();
            if !tables.iter().any(|t| std::ptr::eq(*t, table)) {
                tables.push(table);
            }
        }
        tables
    }

    /// A registry of exactly `tables`, in order, registered first as built-ins are (no plugin
    /// path is searched). A table declared with [`builtin_plugins!`](crate::builtin_plugins) is
    /// labelled [`PluginSource::BuiltIn`], any other [`PluginSource::InProcess`]. A table that is
    /// refused is logged and listed in [`Registry::skipped`].
    pub fn with_builtins(tables: &[&'static KilnPluginTable]) -> Registry {
        Registry::discover(&RegistryOptions {
            builtins: tables.to_vec(),
            env_path: false,
            default_dir: false,
            extra_paths: Vec::new(),
        })
    }

    /// Discovers plugins as `options` say. Never fails: problems are logged and listed in
    /// [`Registry::skipped`].
    pub fn discover(options: &RegistryOptions) -> Registry {
        let mut r = Registry::empty();
        let declared = Registry::builtin_tables();
        for &table in &options.builtins {
            // Messages name a plugin by its origin: only the tables the program declared with
            // `builtin_plugins!` are built-ins; any other table was handed over by the program.
            let (source, label) = if declared.iter().any(|d| std::ptr::eq(*d, table)) {
                (PluginSource::BuiltIn, "<built-in>")
            } else {
                (PluginSource::InProcess, "<in-process>")
            };
            // SAFETY: these tables are 'static and their functions are linked in.
            let result = unsafe { Plugin::from_table(table, source, None) }.and_then(|p| r.add(p));
            r.note(result, Path::new(label));
        }
        let mut paths: Vec<PathBuf> = Vec::new();
        if options.env_path {
            if let Some(v) = std::env::var_os(PLUGIN_PATH_ENV) {
                paths.extend(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()));
            }
        }
        paths.extend(options.extra_paths.iter().cloned());
        if options.default_dir {
            if let Some(dir) = std::env::current_exe()
                .ok()
                .and_then(|e| e.parent().map(Path::to_path_buf))
            {
                paths.push(dir.join(DEFAULT_PLUGIN_DIR));
            }
        }
        for path in paths {
            r.add_path(&path);
        }
        r
    }

    fn note(&mut self, result: Result<()>, path: &Path) {
        if let Err(e) = result {
            tracing::warn!("skipping plugin {}: {e}", path.display());
            self.skipped.push(SkippedPlugin {
                path: path.to_path_buf(),
                reason: e.to_string(),
            });
        }
    }

    /// Loads one library file, or every library in a folder (in name order). Failures are
    /// logged and recorded as skipped; a missing folder is silently ignored.
    pub fn add_path(&mut self, path: &Path) {
        if path.is_dir() {
            let mut files: Vec<PathBuf> = match std::fs::read_dir(path) {
                Ok(d) => d
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| is_library(p))
                    .collect(),
                Err(e) => {
                    self.note(
                        Err(Error::Plugin(format!("cannot read the folder: {e}"))),
                        path,
                    );
                    return;
                }
            };
            files.sort();
            for f in files {
                let r = Registry::load_library(&f).and_then(|p| self.add(p));
                self.note(r, &f);
            }
        } else if path.is_file() {
            let r = Registry::load_library(path).and_then(|p| self.add(p));
            self.note(r, path);
        }
    }

    /// Loads the plugin in the shared library at `path` through its `kiln_engine_plugin_v1`
    /// entry point. Refuses a file that cannot be loaded, lacks the entry point, or whose table
    /// is refused by [`Plugin::from_table`].
    pub fn load_library(path: &Path) -> Result<Plugin> {
        let fail = |why: String| Error::Plugin(format!("plugin at {}: {why}", path.display()));
        // SAFETY: loading a library runs its initialisers; kiln trusts the plugins it is pointed
        // at (docs/plugin-development.md, trust model).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| fail(e.to_string()))?;
        // SAFETY: the symbol, when present, has the documented EntryPointFn type.
        let entry: EntryPointFn = unsafe { lib.get::<EntryPointFn>(ENTRY_POINT_SYMBOL) }
            .map(|s| *s)
            .map_err(|_| fail("no kiln_engine_plugin_v1 entry point".into()))?;
        // SAFETY: calling the entry point with our ABI major is its documented use.
        let table = unsafe { entry(KILN_PLUGIN_ABI_MAJOR) };
        // SAFETY: the table lives as long as the library, which the Plugin keeps loaded.
        unsafe { Plugin::from_table(table, PluginSource::Library(path.to_path_buf()), Some(lib)) }
    }

    /// Registers `plugin`; refuses a plugin whose name or an engine ID is already registered.
    pub fn add(&mut self, plugin: Plugin) -> Result<()> {
        if let Some(p) = self.plugins.iter().find(|p| p.name() == plugin.name()) {
            return Err(Error::Plugin(format!(
                "a plugin named '{}' is already registered from {}",
                plugin.name(),
                p.source()
            )));
        }
        for e in plugin.engines() {
            if let Some(p) = self.plugins.iter().find(|p| p.engine(e.id).is_some()) {
                return Err(Error::Plugin(format!(
                    "plugin '{}': engine '{}' (id {:#x}) is already provided by plugin '{}'",
                    plugin.name(),
                    e.name,
                    e.id,
                    p.name()
                )));
            }
        }
        self.plugins.push(Arc::new(plugin));
        Ok(())
    }

    /// The registered plugins, in discovery order.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// Plugins that were found but skipped, with the reason.
    pub fn skipped(&self) -> &[SkippedPlugin] {
        &self.skipped
    }
}
