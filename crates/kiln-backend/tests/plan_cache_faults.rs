//! The serialized-plan cache and the optional plugin hooks (DESIGN.md sections 3 and 5), proven
//! through a test plugin whose faults each test chooses (the `kiln-test-plugin` crate).

mod common;

use common::{assert_close, build_plan, conv_graph, cpu_handle, pointwise_graph, reference, run};
use kiln_backend::{Device, ExecutionPlan, HeurMode, PlanOrigin};
use kiln_core::Status;
use kiln_test_plugin::{
    FaultPlugin, Faults, RestoreFault, SaveFault, FAULT_PLUGIN_NAME, INJECTED_RESTORE_FAILURE,
    INJECTED_SAVE_FAILURE,
};
use std::sync::{Arc, Barrier};

/// A plan saved by the CPU plugin (whose engine IDs the fault plugin shares).
fn cpu_plan_bytes(tg: &common::TestGraph) -> Vec<u8> {
    build_plan(&cpu_handle(), tg, HeurMode::A)
        .serialize()
        .expect("saves")
        .to_vec()
}

#[test]
fn fault_plugin_forwards_to_the_cpu_engines_under_its_own_name() {
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    assert_eq!(
        handle
            .plugins()
            .map(|p| p.name().to_string())
            .collect::<Vec<_>>(),
        [FAULT_PLUGIN_NAME]
    );
    let tg = conv_graph();
    let plan = build_plan(&handle, &tg, HeurMode::A);
    assert_eq!(plan.plugin_name(), FAULT_PLUGIN_NAME);
    assert_close(
        &run(&plan, &handle, &tg).expect("runs"),
        &reference(&tg),
        "fault plugin",
    );
    assert_eq!(fp.live_contexts(), 1);
    drop(plan);
    assert_eq!(fp.live_contexts(), 0);
    assert_eq!((fp.saves(), fp.frees(), fp.restores()), (0, 0, 0));
}

#[test]
fn restored_plan_save_never_calls_the_plugin() {
    // The save hook would fail if it were called: the re-save must not need it.
    let fp = FaultPlugin::new(Faults::all_hooks().save(SaveFault::Fail));
    let handle = fp.handle();
    let tg = pointwise_graph();
    let bytes = cpu_plan_bytes(&tg);
    let plan =
        ExecutionPlan::restore(&handle, &bytes).expect("the fault plugin restores CPU plans");
    assert_eq!(fp.restores(), 1);
    assert_eq!(plan.origin(), PlanOrigin::Restored);
    for _ in 0..3 {
        assert_eq!(&plan.serialize().expect("re-save")[..], &bytes[..]);
    }
    assert_eq!(fp.saves(), 0, "a restored plan's save called the plugin");
    assert_eq!(fp.frees(), 0);
    assert_close(
        &run(&plan, &handle, &tg).expect("runs"),
        &reference(&tg),
        "restored",
    );
}

#[test]
fn first_save_of_a_built_plan_calls_the_plugin_once_and_later_saves_reuse_the_bytes() {
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    let tg = conv_graph();
    let plan = build_plan(&handle, &tg, HeurMode::A);
    assert!(
        !plan.is_saved(),
        "a built plan holds no bytes before its first save"
    );
    assert_eq!(fp.saves(), 0);
    let first = plan.serialize().expect("first save");
    assert_eq!(
        (fp.saves(), fp.frees()),
        (1, 1),
        "one save call, and its bytes given back"
    );
    assert!(plan.is_saved());
    let second = plan.serialize().expect("second save");
    assert_eq!(
        (fp.saves(), fp.frees()),
        (1, 1),
        "the second save called the plugin"
    );
    assert_eq!(first, second);
    let env = kiln_format::decode_plan(&first).expect("decodes");
    assert_eq!(env.plugin_name, FAULT_PLUGIN_NAME);
    assert_eq!(env.version, 2);

    // Engine IDs are what matters: the CPU plugin loads the fault plugin's plan.
    let cpu = cpu_handle();
    let on_cpu = ExecutionPlan::restore(&cpu, &first).expect("the CPU plugin loads it");
    assert_eq!(on_cpu.plugin_name(), kiln_test_plugin::CPU_PLUGIN_NAME);
    assert_eq!(
        &on_cpu.serialize().expect("re-save")[..],
        &first[..],
        "the diagnostic plugin name is kept"
    );
    assert_close(
        &run(&on_cpu, &cpu, &tg).expect("runs"),
        &reference(&tg),
        "cross-plugin load",
    );
}

#[test]
fn concurrent_first_saves_fill_once_and_get_identical_bytes() {
    const THREADS: usize = 8;
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    let tg = conv_graph();
    let plan = Arc::new(build_plan(&handle, &tg, HeurMode::A));
    let barrier = Arc::new(Barrier::new(THREADS));
    let saves: Vec<Vec<u8>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let (plan, barrier) = (plan.clone(), barrier.clone());
                s.spawn(move || {
                    barrier.wait();
                    plan.serialize().expect("a concurrent first save").to_vec()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("no thread panicked"))
            .collect()
    });
    assert_eq!(
        fp.saves(),
        1,
        "concurrent first saves called the plugin more than once"
    );
    assert_eq!(fp.frees(), 1);
    assert!(
        saves.iter().all(|b| *b == saves[0]),
        "concurrent saves returned different bytes"
    );
    assert_eq!(&plan.serialize().expect("later save")[..], &saves[0][..]);
}

#[test]
fn failed_first_fill_leaves_the_cache_empty_and_a_retry_succeeds() {
    let fp = FaultPlugin::new(Faults::all_hooks().save(SaveFault::FailFirstCall));
    let handle = fp.handle();
    let tg = pointwise_graph();
    let plan = build_plan(&handle, &tg, HeurMode::A);
    let err = plan.serialize().expect_err("the first save fails");
    assert_eq!(err.status(), Status::PluginError, "{err}");
    assert!(
        err.to_string().contains(INJECTED_SAVE_FAILURE),
        "the plugin's text is kept: {err}"
    );
    assert!(!plan.is_saved(), "a failed fill must leave the cache empty");
    assert_eq!(
        (fp.saves(), fp.frees()),
        (1, 1),
        "the host gives back even a failed save's bytes"
    );

    let bytes = plan.serialize().expect("the retry succeeds");
    assert_eq!(
        (fp.saves(), fp.frees()),
        (2, 2),
        "the retry called the plugin again"
    );
    assert!(plan.is_saved());
    assert_eq!(plan.serialize().expect("third save"), bytes);
    assert_eq!(fp.saves(), 2);
    let loaded = ExecutionPlan::restore(&fp.handle(), &bytes).expect("the retried bytes load");
    assert_close(
        &run(&loaded, &handle, &tg).expect("runs"),
        &reference(&tg),
        "after retry",
    );
}

#[test]
fn failed_restore_leaves_no_plan_and_carries_the_plugins_message() {
    let fp = FaultPlugin::new(Faults::all_hooks().restore(RestoreFault::Fail));
    let handle = fp.handle();
    let tg = pointwise_graph();
    let bytes = cpu_plan_bytes(&tg);
    let container = kiln_format::encode_container(&tg.blob, Some(&bytes));
    for input in [&bytes, &container] {
        let err = ExecutionPlan::restore(&handle, input).expect_err("the restore fails");
        assert_eq!(err.status(), Status::PluginError, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(INJECTED_RESTORE_FAILURE),
            "the plugin's message reaches the user: {msg}"
        );
        assert!(
            msg.contains("INVALID_VALUE"),
            "the plugin's status is named: {msg}"
        );
    }
    assert_eq!(fp.restores(), 2);
    assert_eq!(
        fp.live_contexts(),
        0,
        "a failed restore left a context behind"
    );
    assert_eq!(fp.saves(), 0);
}

#[test]
fn restore_refused_after_the_plugin_restored_destroys_the_context() {
    // The envelope's workspace size disagrees with the engine: refused after the plugin made
    // the context, which must then be destroyed.
    let fp = FaultPlugin::new(Faults::all_hooks());
    let handle = fp.handle();
    let bytes = cpu_plan_bytes(&pointwise_graph());
    let mut env = kiln_format::decode_plan(&bytes).expect("decodes");
    env.workspace_size += 64;
    let bad = kiln_format::encode_plan(&env);
    let err = ExecutionPlan::restore(&handle, &bad).expect_err("refused");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert_eq!(fp.restores(), 1);
    assert_eq!(fp.live_contexts(), 0, "the refused plan's context leaked");
}

#[test]
fn missing_or_partial_hooks_give_not_supported_for_save_and_for_load() {
    let tg = pointwise_graph();
    let cpu_bytes = cpu_plan_bytes(&tg);
    for (save, free, restore) in [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (false, false, true),
        (true, true, false),
        (true, false, true),
        (false, true, true),
    ] {
        let what = format!("hooks save={save} free={free} restore={restore}");
        let fp = FaultPlugin::new(Faults::hooks(save, free, restore));
        let handle = fp.handle();
        assert!(
            !handle
                .plugins()
                .next()
                .expect("one plugin")
                .has_serialization_hooks(),
            "{what}"
        );

        let plan = build_plan(&handle, &tg, HeurMode::A);
        assert!(!plan.can_be_saved(), "{what}");
        let err = plan.serialize().expect_err("save is refused");
        assert_eq!(err.status(), Status::NotSupported, "{what}: {err}");
        assert!(
            err.to_string().contains(FAULT_PLUGIN_NAME),
            "{what}: the plugin is named: {err}"
        );

        let err = ExecutionPlan::restore(&handle, &cpu_bytes).expect_err("load is refused");
        assert_eq!(err.status(), Status::NotSupported, "{what}: {err}");
        assert!(err.to_string().contains("hooks"), "{what}: {err}");

        assert_eq!(
            (fp.saves(), fp.frees(), fp.restores()),
            (0, 0, 0),
            "{what}: a lone hook was called"
        );
        // The plan still runs: only saving is off.
        assert_close(
            &run(&plan, &handle, &tg).expect("runs"),
            &reference(&tg),
            &what,
        );
    }
}

#[test]
fn null_or_empty_payloads_are_plugin_errors_and_are_still_given_back() {
    for fault in [
        SaveFault::NullPayload,
        SaveFault::NullPointerWithLength,
        SaveFault::EmptyPayload,
    ] {
        let fp = FaultPlugin::new(Faults::all_hooks().save(fault));
        let handle = fp.handle();
        let plan = build_plan(&handle, &pointwise_graph(), HeurMode::A);
        let err = plan
            .serialize()
            .expect_err("a null or empty payload is refused");
        assert_eq!(err.status(), Status::PluginError, "{fault:?}: {err}");
        let word = if fault == SaveFault::EmptyPayload {
            "returned an empty payload"
        } else {
            "returned a null payload"
        };
        assert!(
            err.to_string().contains(word),
            "{fault:?}: the error says '{word}': {err}"
        );
        assert_eq!(
            (fp.saves(), fp.frees()),
            (1, 1),
            "{fault:?}: the free hook must still be called"
        );
        assert!(!plan.is_saved(), "{fault:?}");
        // Not cached: the next save asks again.
        assert!(plan.serialize().is_err());
        assert_eq!((fp.saves(), fp.frees()), (2, 2), "{fault:?}");
    }
}

#[test]
fn failing_save_is_a_plugin_error_with_the_plugins_text() {
    let fp = FaultPlugin::new(Faults::all_hooks().save(SaveFault::Fail));
    let handle = fp.handle();
    let plan = build_plan(&handle, &conv_graph(), HeurMode::A);
    let err = plan.serialize().expect_err("fails");
    assert_eq!(err.status(), Status::PluginError, "{err}");
    assert!(err.to_string().contains(INJECTED_SAVE_FAILURE), "{err}");
    assert_eq!((fp.saves(), fp.frees()), (1, 1));
    assert!(!plan.is_saved());
}

#[test]
fn restored_plan_executes_on_its_handle_and_is_refused_on_another_device() {
    let fp = FaultPlugin::new(Faults::all_hooks().pretend_cuda());
    let cuda = fp
        .handle_on(Device::Cuda(0))
        .expect("the fault plugin pretends to drive cuda:0");
    let cpu = fp.handle();
    assert_eq!(cuda.device(), Device::Cuda(0));
    let tg = conv_graph();
    let want = reference(&tg);
    let bytes = cpu_plan_bytes(&tg);

    let on_cuda = ExecutionPlan::restore(&cuda, &bytes).expect("loads on the cuda handle");
    assert_eq!(
        on_cuda.device(),
        Device::Cuda(0),
        "a restored plan is bound to its handle's device"
    );
    assert_close(
        &run(&on_cuda, &cuda, &tg).expect("runs on its own handle"),
        &want,
        "cuda handle",
    );
    let err = run(&on_cuda, &cpu, &tg).expect_err("another device's handle is refused");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("cuda:0") && msg.contains("cpu"),
        "both devices are named: {msg}"
    );

    // The same bytes, loaded with the other device's handle, run there.
    let on_cpu = ExecutionPlan::restore(&cpu, &bytes).expect("loads on the cpu handle");
    assert_eq!(on_cpu.device(), Device::Cpu);
    assert_close(&run(&on_cpu, &cpu, &tg).expect("runs"), &want, "cpu handle");
    assert!(
        run(&on_cpu, &cuda, &tg).is_err(),
        "a CPU plan is refused on a cuda handle"
    );
    assert_eq!(
        &on_cuda.serialize().expect("save")[..],
        &on_cpu.serialize().expect("save")[..]
    );
}

#[test]
fn a_plugin_that_refuses_the_device_leaves_no_handle() {
    let fp = FaultPlugin::new(Faults::all_hooks());
    let err = fp
        .handle_on(Device::Cuda(0))
        .expect_err("the CPU engines refuse cuda:0");
    assert_eq!(err.status(), Status::NotSupported, "{err}");
    assert!(err.to_string().contains("cuda:0"), "{err}");
}

#[test]
fn a_plugin_the_program_registered_itself_is_named_in_process_not_built_in() {
    let fp = FaultPlugin::new(Faults::all_hooks().save(SaveFault::Fail));
    let plugin = &fp.registry().plugins()[0];
    assert_eq!(plugin.source(), &kiln_backend::PluginSource::InProcess);
    let handle = fp.handle();
    let plan = build_plan(&handle, &pointwise_graph(), HeurMode::A);
    let err = plan.serialize().expect_err("the injected save failure");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "{FAULT_PLUGIN_NAME} (in-process, registered by the program)"
        )),
        "{text}"
    );
    assert!(!text.contains("built-in"), "{text}");
    // A table handed to the registry that no `builtin_plugins!` of this program declares is
    // in-process too: this test binary declares none.
    let registry = kiln_backend::Registry::with_builtins(&[kiln_test_plugin::cpu_plugin_table()]);
    assert_eq!(
        registry.plugins()[0].source(),
        &kiln_backend::PluginSource::InProcess
    );
}
