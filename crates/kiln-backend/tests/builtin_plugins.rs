//! Built-in plugins declared with `builtin_plugins!` by the program (here, this test binary):
//! the backend links no engine, and the process-wide registry finds what the program declared.

use kiln_backend::{BuiltinPlugin, Device, Handle, PluginSource, Registry, RegistryOptions};
use kiln_test_plugin::{cpu_plugin_table, CPU_PLUGIN_NAME};

// Declared twice, as when both the frontend and the C API are linked into one program.
kiln_backend::builtin_plugins! {
    CPU_FROM_ONE_CRATE = (BuiltinPlugin::ORDER_CPU, kiln_test_plugin::cpu_plugin_table);
    CPU_FROM_ANOTHER_CRATE = (BuiltinPlugin::ORDER_CUDA, kiln_test_plugin::cpu_plugin_table);
}

#[test]
fn a_table_declared_twice_is_one_builtin() {
    let tables = Registry::builtin_tables();
    assert_eq!(tables.len(), 1);
    assert!(std::ptr::eq(tables[0], cpu_plugin_table()));
}

#[test]
fn the_global_registry_and_cpu_handles_use_the_declared_builtins() {
    let global = Registry::global();
    let cpu = global
        .plugins()
        .iter()
        .find(|p| p.name() == CPU_PLUGIN_NAME)
        .expect("the declared CPU plugin is registered");
    assert_eq!(cpu.source(), &PluginSource::BuiltIn);
    // Handed to a registry explicitly, a declared table is still a built-in.
    let chosen = Registry::with_builtins(&[cpu_plugin_table()]);
    assert_eq!(chosen.plugins()[0].source(), &PluginSource::BuiltIn);
    let handle = Handle::cpu().expect("a CPU handle with no setup");
    assert!(handle.plugins().any(|p| p.name() == CPU_PLUGIN_NAME));
    assert_eq!(handle.device(), Device::Cpu);
}

#[test]
fn options_without_builtins_register_none() {
    let r = Registry::discover(&RegistryOptions {
        builtins: Vec::new(),
        env_path: false,
        default_dir: false,
        extra_paths: Vec::new(),
    });
    assert!(r.plugins().is_empty());
    let e = Handle::with_registry(Device::Cpu, std::sync::Arc::new(r)).unwrap_err();
    assert!(e.to_string().contains("no plugins are registered"), "{e}");
}

#[test]
fn with_builtins_registers_exactly_the_tables_given() {
    let r = Registry::with_builtins(&[cpu_plugin_table()]);
    let names: Vec<&str> = r.plugins().iter().map(|p| p.name()).collect();
    assert_eq!(names, [CPU_PLUGIN_NAME]);
    assert!(r.skipped().is_empty());
}
