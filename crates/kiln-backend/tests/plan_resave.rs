//! Save, load and re-save of plans on the embedded CPU plugin (DESIGN.md sections 4 and 5): a
//! restored plan saves again to exactly the plan bytes it was loaded from, whatever their
//! envelope version and wrapping.

mod common;

use common::{
    assert_close, build_plan, conv_graph, cpu_handle, pointwise_graph, reference, run, TestGraph,
};
use kiln_backend::{ExecutionPlan, HeurMode, PlanOrigin};
use kiln_core::Status;
use kiln_format::PlanEnvelope;
use kiln_plugin_abi::{KilnBytes, KilnDevice, KilnPluginStatus, KILN_DEVICE_CPU};
use std::ffi::{c_void, CStr};

fn saved_plan(tg: &TestGraph) -> Vec<u8> {
    let handle = cpu_handle();
    let plan = build_plan(&handle, tg, HeurMode::A);
    assert_eq!(plan.origin(), PlanOrigin::Built);
    plan.serialize().expect("a CPU plan saves").to_vec()
}

#[test]
fn resave_of_a_loaded_bare_plan_is_byte_identical() {
    for tg in [pointwise_graph(), conv_graph()] {
        let want = reference(&tg);
        let original = saved_plan(&tg);

        let h1 = cpu_handle();
        let loaded = ExecutionPlan::restore(&h1, &original).expect("the saved plan loads");
        assert_eq!(loaded.origin(), PlanOrigin::Restored);
        assert!(
            loaded.is_saved(),
            "a restored plan holds its bytes from the start"
        );
        assert!(loaded.can_be_saved());
        let resaved = loaded.serialize().expect("a restored plan saves");
        assert_eq!(
            &resaved[..],
            &original[..],
            "{}: the re-save differs from the loaded bytes",
            tg.graph.name
        );
        assert_close(
            &run(&loaded, &h1, &tg).expect("the loaded plan runs"),
            &want,
            &tg.graph.name,
        );

        // The re-saved bytes load again, on another fresh handle, and save to the same bytes.
        let h2 = cpu_handle();
        let reloaded = ExecutionPlan::restore(&h2, &resaved).expect("the re-saved plan loads");
        assert_eq!(&reloaded.serialize().expect("re-save")[..], &original[..]);
        assert_eq!(reloaded.engine_name(), loaded.engine_name());
        assert_eq!(reloaded.tensor_uids(), loaded.tensor_uids());
        assert_eq!(reloaded.alignments(), loaded.alignments());
        assert_eq!(reloaded.workspace_size(), loaded.workspace_size());
        assert_close(
            &run(&reloaded, &h2, &tg).expect("the reloaded plan runs"),
            &want,
            &tg.graph.name,
        );
    }
}

#[test]
fn plan_loaded_from_a_container_resaves_as_the_containers_plan_part() {
    let tg = conv_graph();
    let plan_bytes = saved_plan(&tg);
    let container = kiln_format::encode_container(&tg.blob, Some(&plan_bytes));
    assert_eq!(
        kiln_format::plan_part(&container).expect("plan part"),
        &plan_bytes[..]
    );

    let handle = cpu_handle();
    let loaded = ExecutionPlan::restore(&handle, &container).expect("a container's plan loads");
    let resaved = loaded.serialize().expect("re-save");
    assert_eq!(
        &resaved[..],
        &plan_bytes[..],
        "the re-save is the plan part, not the container"
    );
    assert_eq!(
        kiln_format::probe(&resaved).expect("probe").kind,
        kiln_format::BlobKind::Plan
    );
    assert_close(
        &run(&loaded, &handle, &tg).expect("runs"),
        &reference(&tg),
        "container plan",
    );
}

#[test]
fn version_1_plan_loads_runs_and_resaves_as_the_same_version_1_bytes() {
    for tg in [pointwise_graph(), conv_graph()] {
        let v2 = saved_plan(&tg);
        let env = kiln_format::decode_plan(&v2).expect("decodes");
        assert_eq!(env.version, 2, "writers write version 2");
        let v1 = kiln_format::encode_plan_v1(&env);
        let v1_env = kiln_format::decode_plan(&v1).expect("a version-1 plan decodes");
        assert_eq!(v1_env.version, 1);
        assert_eq!(v1_env.alignments, None);
        assert_eq!(
            kiln_format::probe(&v1).expect("probe").envelope_version,
            Some(1)
        );

        let handle = cpu_handle();
        let loaded = ExecutionPlan::restore(&handle, &v1).expect("a version-1 plan loads");
        assert_eq!(loaded.envelope_version(), 1);
        assert!(
            loaded.alignments().iter().all(|&a| a == 0),
            "version 1 has no alignments to enforce"
        );
        assert_close(
            &run(&loaded, &handle, &tg).expect("runs"),
            &reference(&tg),
            &tg.graph.name,
        );
        let resaved = loaded.serialize().expect("re-save");
        assert_eq!(
            &resaved[..],
            &v1[..],
            "{}: a version-1 plan stays version 1",
            tg.graph.name
        );

        let again = ExecutionPlan::restore(&cpu_handle(), &resaved).expect("the re-save loads");
        assert_eq!(again.envelope_version(), 1);
    }
}

#[test]
fn built_plan_reports_the_writers_envelope_version() {
    let tg = pointwise_graph();
    let plan = build_plan(&cpu_handle(), &tg, HeurMode::A);
    assert_eq!(plan.envelope_version(), kiln_format::PLAN_ENVELOPE_VERSION);
    let bytes = plan.serialize().expect("saves");
    assert_eq!(
        kiln_format::decode_plan(&bytes).expect("decodes").version,
        2
    );
}

#[test]
fn misaligned_pointer_on_a_version_2_plan_is_refused_naming_the_uid_and_alignment() {
    let tg = pointwise_graph();
    let handle = cpu_handle();
    let plan = ExecutionPlan::restore(&handle, &saved_plan(&tg)).expect("loads");
    assert_eq!(plan.envelope_version(), 2);
    let x_uid = 1;
    let k = plan
        .tensor_uids()
        .iter()
        .position(|&u| u == x_uid)
        .expect("x is bound");
    assert_eq!(
        plan.alignments()[k],
        4,
        "an f32 tensor needs 4-byte alignment"
    );

    let mut inputs = tg.inputs.clone();
    let mut out = vec![0f32; tg.output.1];
    // One element more, so that the shifted view stays inside the buffer.
    let mut x = inputs
        .iter()
        .find(|(u, _)| *u == x_uid)
        .expect("x")
        .1
        .clone();
    x.push(0.0);
    let mut bindings: Vec<(i64, *mut c_void)> = inputs
        .iter_mut()
        .filter(|(u, _)| *u != x_uid)
        .map(|(u, v)| (*u, v.as_mut_ptr() as *mut c_void))
        .collect();
    // SAFETY: one byte into a buffer of more than one element.
    let shifted = unsafe { (x.as_mut_ptr() as *mut u8).add(1) } as *mut c_void;
    bindings.push((x_uid, shifted));
    bindings.push((tg.output.0, out.as_mut_ptr() as *mut c_void));
    // SAFETY: the plan refuses before touching memory; the buffers are valid anyway.
    let err = unsafe { plan.execute(&handle, &bindings, std::ptr::null_mut(), 0) }
        .expect_err("a misaligned pointer is refused");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("tensor uid {x_uid}")),
        "the error names the uid: {msg}"
    );
    assert!(
        msg.contains("4 bytes"),
        "the error names the alignment: {msg}"
    );
    assert!(out.iter().all(|&v| v == 0.0), "nothing ran");
}

#[test]
fn cpu_save_hook_called_directly_on_a_restored_context_refuses_naming_the_backend_behaviour() {
    let tg = pointwise_graph();
    let bytes = saved_plan(&tg);
    let env = kiln_format::decode_plan(&bytes).expect("decodes");
    let table = kiln_test_plugin::cpu_plugin_table();
    let (save, free, restore) = (
        table
            .serialize_execution_context
            .expect("the CPU plugin exports save"),
        table
            .destroy_serialized_execution_context
            .expect("the CPU plugin exports free"),
        table
            .create_execution_context_from_serialized
            .expect("the CPU plugin exports restore"),
    );
    let mut instance = std::ptr::null_mut();
    // SAFETY: calling the CPU plugin's table as its ABI documents, with valid out pointers.
    unsafe {
        let st = (table.create_instance)(
            KilnDevice {
                kind: KILN_DEVICE_CPU,
                ordinal: 0,
            },
            &mut instance,
        );
        assert_eq!(st, KilnPluginStatus::SUCCESS);
        let mut ctx = std::ptr::null_mut();
        let st = restore(
            instance,
            env.engine_id,
            KilnBytes::from_slice(env.payload),
            &mut ctx,
        );
        assert_eq!(st, KilnPluginStatus::SUCCESS, "the payload restores");
        let mut out = KilnBytes::EMPTY;
        let st = save(instance, env.engine_id, ctx, &mut out);
        let text = CStr::from_ptr((table.get_last_error)())
            .to_string_lossy()
            .into_owned();
        assert_eq!(st, KilnPluginStatus::NOT_SUPPORTED, "{text}");
        assert!(
            out.ptr.is_null() && out.len == 0,
            "no bytes come back from a refusal"
        );
        assert!(
            text.contains("saves restored plans from the bytes they were loaded from"),
            "the refusal names the backend behaviour: {text}"
        );
        assert_eq!(text, kiln_plugin_sdk::RESTORED_CONTEXT_SAVE_REFUSAL);
        free(instance, out);

        // A context the plugin built itself saves through the same hook.
        let config = kiln_plugin_abi::KilnEngineConfig {
            engine_id: env.engine_id,
            knobs: std::ptr::null(),
            num_knobs: 0,
        };
        let mut built = std::ptr::null_mut();
        let st = (table.create_execution_context)(
            instance,
            &config,
            KilnBytes::from_slice(&tg.blob),
            &mut built,
        );
        assert_eq!(st, KilnPluginStatus::SUCCESS);
        let mut out = KilnBytes::EMPTY;
        assert_eq!(
            save(instance, env.engine_id, built, &mut out),
            KilnPluginStatus::SUCCESS
        );
        assert_eq!(
            out.as_slice(),
            Some(env.payload),
            "a built context saves the same payload"
        );
        free(instance, out);

        assert_eq!(
            (table.destroy_execution_context)(instance, built),
            KilnPluginStatus::SUCCESS
        );
        assert_eq!(
            (table.destroy_execution_context)(instance, ctx),
            KilnPluginStatus::SUCCESS
        );
        assert_eq!(
            (table.destroy_instance)(instance),
            KilnPluginStatus::SUCCESS
        );
    }
}

fn reencoded(bytes: &[u8], edit: impl FnOnce(&mut PlanEnvelope<'_>)) -> Vec<u8> {
    let mut env = kiln_format::decode_plan(bytes).expect("decodes");
    edit(&mut env);
    kiln_format::encode_plan_as_given(&env)
}

#[test]
fn restore_refuses_unknown_engines_versions_and_alignments_without_a_plan() {
    let tg = pointwise_graph();
    let bytes = saved_plan(&tg);
    let handle = cpu_handle();
    let cases: Vec<(&str, Vec<u8>, Status, &str)> = vec![
        (
            "unknown engine",
            reencoded(&bytes, |e| {
                e.engine_name = "KILN_NO_SUCH_ENGINE".into();
                e.engine_id = kiln_core::engine_id("KILN_NO_SUCH_ENGINE");
            }),
            Status::NotSupported,
            "KILN_NO_SUCH_ENGINE",
        ),
        (
            "name and id disagree",
            reencoded(&bytes, |e| e.engine_name = "KILN_SOME_OTHER_NAME".into()),
            Status::BadParam,
            "KILN_SOME_OTHER_NAME",
        ),
        (
            "version 3",
            reencoded(&bytes, |e| e.version = 3),
            Status::NotSupported,
            "version 3",
        ),
        (
            "version 2 without alignments",
            reencoded(&bytes, |e| e.alignments = None),
            Status::BadParam,
            "alignments",
        ),
        (
            "version 2 with one alignment too few",
            reencoded(&bytes, |e| {
                if let Some(a) = e.alignments.as_mut() {
                    a.pop();
                }
            }),
            Status::BadParam,
            "alignments",
        ),
        (
            "a workspace size the engine does not need",
            reencoded(&bytes, |e| e.workspace_size += 4096),
            Status::BadParam,
            "workspace",
        ),
    ];
    for (what, blob, status, needle) in cases {
        let err = ExecutionPlan::restore(&handle, &blob).expect_err(what);
        assert_eq!(err.status(), status, "{what}: {err}");
        assert!(
            err.to_string().contains(needle),
            "{what}: the error should name '{needle}': {err}"
        );
    }
}
