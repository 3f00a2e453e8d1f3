//! The CPU plugin loaded dynamically from its cdylib (DESIGN.md sections 1 and 3): everything
//! goes through the C ABI, gives the statically linked reference engine's results, and its saved
//! plans load through the static plugin (same plugin, same engine IDs) and back.
//!
//! The cdylib is `libkiln_engine_cpu.so` (platform prefix and suffix), which cargo builds next to
//! this test's executable because `kiln-engine-cpu` (crate types rlib and cdylib) is a
//! dev-dependency of this crate.

mod common;

use common::{assert_close, conv_graph, cpu_handle, pointwise_graph, reference, run};
use kiln::{Device, Graph, Handle, HeurMode, PlanOrigin, Registry};
use kiln_backend::PluginSource;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Where cargo put the CPU plugin's cdylib: next to the test executable (`target/<profile>/deps`)
/// or one folder up (`target/<profile>`).
fn cdylib_path() -> PathBuf {
    let name = format!(
        "{}kiln_engine_cpu{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().expect("the test executable's path");
    let candidates: Vec<PathBuf> = exe
        .ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join(&name))
        .collect();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
            "the CPU plugin's cdylib was not built; looked for {candidates:?}. It is built when \
             kiln-engine-cpu (crate-type rlib + cdylib) is a dependency of the crate under test"
        )
        })
}

/// A registry holding only the dynamically loaded CPU plugin. Kept for the whole process: the
/// library's rayon worker threads run its code, so it must never be unloaded under them.
fn dynamic_registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let path = cdylib_path();
            let plugin =
                Registry::load_library(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(plugin.source(), &PluginSource::Library(path.clone()));
            let mut registry = Registry::empty();
            registry.add(plugin).expect("registers");
            Arc::new(registry)
        })
        .clone()
}

fn dynamic_handle() -> Handle {
    Handle::with_registry(Device::Cpu, dynamic_registry())
        .expect("the dynamic plugin accepts the CPU")
}

#[test]
fn dynamically_loaded_cpu_plugin_is_the_static_one_through_the_c_abi() {
    let handle = dynamic_handle();
    let dynamic = handle.plugins().next().expect("one plugin");
    let stat = cpu_handle();
    let statik = stat.plugins().next().expect("one plugin");
    assert_eq!(dynamic.name(), kiln_engine_cpu::PLUGIN_NAME);
    assert_eq!(dynamic.version(), statik.version());
    assert_eq!(
        dynamic.engines(),
        statik.engines(),
        "same engines, IDs, notes and knobs"
    );
    assert!(dynamic.has_serialization_hooks());
    assert!(matches!(dynamic.source(), PluginSource::Library(_)));
}

#[test]
fn graphs_built_on_the_dynamic_plugin_run_save_and_load_through_the_static_plugin() {
    for (what, make) in [
        ("pointwise", pointwise_graph as fn() -> Graph),
        ("conv+bias+relu", conv_graph),
    ] {
        let want = reference(make);
        let dynamic = dynamic_handle();
        let mut g = make();
        g.build(&dynamic, &[HeurMode::A])
            .expect("builds on the dynamic plugin");
        assert_close(
            &run(&g, &dynamic).expect("runs through the C ABI"),
            &want,
            what,
        );
        let plan_bytes = g
            .serialize_compiled_plan()
            .expect("the dynamic plugin saves");
        let container = g.serialize().expect("saves with the plan");

        // The static plugin builds the same plan to the same bytes.
        let statik = cpu_handle();
        let mut s = make();
        s.build(&statik, &[HeurMode::A])
            .expect("builds on the static plugin");
        assert_eq!(
            s.serialize_compiled_plan().expect("saves"),
            plan_bytes,
            "{what}: static and dynamic plans differ"
        );

        // Dynamic → static.
        let on_static =
            Graph::deserialize(Some(&statik), &container).expect("the static plugin loads it");
        assert_eq!(
            on_static.plan().expect("plan").origin(),
            PlanOrigin::Restored
        );
        assert_eq!(
            on_static.plan().expect("plan").plugin_name(),
            kiln_engine_cpu::PLUGIN_NAME
        );
        assert_close(&run(&on_static, &statik).expect("runs"), &want, what);
        assert_eq!(
            on_static.serialize_compiled_plan().expect("re-save"),
            plan_bytes,
            "{what}"
        );

        // Static → dynamic, from the static plugin's re-save.
        let resaved = on_static.serialize().expect("re-save");
        let fresh_dynamic = dynamic_handle();
        let on_dynamic = Graph::deserialize(Some(&fresh_dynamic), &resaved)
            .expect("the dynamic plugin loads it");
        assert_close(
            &run(&on_dynamic, &fresh_dynamic).expect("runs"),
            &want,
            what,
        );
        assert_eq!(
            on_dynamic.serialize_compiled_plan().expect("re-save"),
            plan_bytes,
            "{what}"
        );
    }
}
