//! Plugin discovery: `KILN_PLUGIN_PATH` folders and files, a broken library skipped with its
//! reason while the others load, duplicates of a registered plugin skipped.

use kiln::{Registry, RegistryOptions};
use std::path::PathBuf;

fn cdylib_path() -> PathBuf {
    let name = format!(
        "{}kiln_engine_cpu{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().expect("the test executable's path");
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join(&name))
        .find(|p| p.is_file())
        .expect(
            "the CPU plugin's cdylib is built next to the tests (kiln-engine-cpu is a dependency)",
        )
}

/// A fresh folder under the target directory, removed first if it exists.
fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let dir = exe
        .parent()
        .expect("deps folder")
        .join(format!("plugin-discovery-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The registries below are leaked: a loaded plugin's rayon threads run its code, so its library
/// must stay mapped for the life of the process.
fn keep(r: Registry) -> &'static Registry {
    Box::leak(Box::new(r))
}

#[test]
fn a_broken_library_is_skipped_and_the_good_one_loads() {
    let dir = scratch("broken");
    std::fs::copy(cdylib_path(), dir.join("libgood_plugin.so")).expect("copy the plugin");
    std::fs::write(dir.join("libbroken_plugin.so"), b"this is not an ELF file").unwrap();
    std::fs::write(dir.join("notes.txt"), b"not a library: not even tried").unwrap();
    let r = keep(Registry::discover(&RegistryOptions {
        builtins: Vec::new(),
        env_path: false,
        default_dir: false,
        extra_paths: vec![dir.clone()],
    }));
    let names: Vec<&str> = r.plugins().iter().map(|p| p.name()).collect();
    assert_eq!(names, ["kiln-cpu"]);
    assert_eq!(r.skipped().len(), 1, "{:?}", r.skipped());
    assert!(r.skipped()[0].path.ends_with("libbroken_plugin.so"));
    assert!(!r.skipped()[0].reason.is_empty());
}

/// The C math library: a shared library without `kiln_engine_plugin_v1`, found where this
/// process mapped it or at the usual places. Fails the test when there is none, so that the test
/// never passes without checking.
fn libm() -> PathBuf {
    let mapped = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let from_maps = mapped
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libm.so"))
        });
    let usual = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
        "/usr/lib/aarch64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/usr/lib/libm.so.6",
    ];
    from_maps
        .into_iter()
        .chain(usual.into_iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "this test needs libm.so.6, a shared library without the plugin entry point: \
                 not mapped in this process nor at {usual:?}"
            )
        })
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "uses the C math library as found on Linux (libm.so.6)"
)]
fn a_library_without_the_entry_point_is_skipped_with_a_clear_reason() {
    let libm = libm();
    let dir = scratch("no-entry");
    std::fs::copy(&libm, dir.join("libm_copy.so")).expect("copy libm");
    let r = keep(Registry::discover(&RegistryOptions {
        builtins: Vec::new(),
        env_path: false,
        default_dir: false,
        extra_paths: vec![dir],
    }));
    assert!(r.plugins().is_empty());
    assert_eq!(r.skipped().len(), 1);
    assert!(
        r.skipped()[0].reason.contains("kiln_engine_plugin_v1"),
        "{}",
        r.skipped()[0].reason
    );
}

#[test]
fn kiln_plugin_path_is_read_and_a_duplicate_of_a_builtin_is_skipped() {
    let dir = scratch("env");
    std::fs::copy(cdylib_path(), dir.join("libkiln_cpu_again.so")).expect("copy the plugin");
    // This test binary's only test that touches the variable, and discovery reads it at once.
    std::env::set_var("KILN_PLUGIN_PATH", &dir);
    let r = keep(Registry::discover(&RegistryOptions {
        builtins: Registry::builtin_tables(),
        env_path: true,
        default_dir: false,
        extra_paths: Vec::new(),
    }));
    std::env::remove_var("KILN_PLUGIN_PATH");
    // The built-in CPU plugin is registered first; the same plugin found on the path is a
    // duplicate and is skipped, naming the first one.
    assert_eq!(r.plugins()[0].name(), "kiln-cpu");
    assert_eq!(r.plugins()[0].source(), &kiln_backend_source_builtin());
    let dup = r
        .skipped()
        .iter()
        .find(|s| s.path.ends_with("libkiln_cpu_again.so"))
        .expect("the copy on KILN_PLUGIN_PATH was found and skipped");
    assert!(dup.reason.contains("already registered"), "{}", dup.reason);
}

fn kiln_backend_source_builtin() -> kiln_backend::PluginSource {
    kiln_backend::PluginSource::BuiltIn
}
