//! Save, load and re-save through the frontend (DESIGN.md sections 2, 4 and 5): graphs with their
//! plans and plans alone, in fresh handles, compared with the reference engine and byte for byte.

mod common;

use common::{
    assert_close, built, conv_graph, cpu_handle, pointwise_graph, reference, run,
    sdpa_backward_graph, sdpa_graph,
};
use kiln::{BehaviorNote, BlobKind, BuildPlanPolicy, Graph, HeurMode, PlanOrigin, Status};
use kiln_test_plugin::{FaultPlugin, Faults, SaveFault, INJECTED_SAVE_FAILURE};

/// Makes a test graph through the API.
type MakeGraph = fn() -> Graph;

const GRAPHS: [(&str, MakeGraph); 4] = [
    ("pointwise", pointwise_graph),
    ("conv+bias+relu", conv_graph),
    ("sdpa", sdpa_graph),
    ("sdpa_backward", sdpa_backward_graph),
];

#[test]
fn graph_with_plan_saved_loaded_resaved_and_reloaded_in_fresh_handles_runs_and_keeps_the_plan_bytes(
) {
    for (what, make) in GRAPHS {
        let want = reference(make);
        let h0 = cpu_handle();
        let original = built(make, &h0);
        let plan_bytes = original
            .serialize_compiled_plan()
            .expect("the built plan saves");
        let saved = original.serialize().expect("the graph saves");
        assert_eq!(
            kiln::probe(&saved).expect("probe").kind,
            BlobKind::GraphAndPlan,
            "{what}"
        );
        assert_eq!(
            kiln_format::plan_part(&saved).expect("plan part"),
            &plan_bytes[..],
            "{what}"
        );
        assert_eq!(
            original.to_binary().expect("to_binary"),
            saved,
            "{what}: to_binary is serialize"
        );

        let h1 = cpu_handle();
        let loaded = Graph::deserialize(Some(&h1), &saved).expect("loads with its plan");
        let plan = loaded.plan().expect("the container's plan is selected");
        assert_eq!(
            plan.origin(),
            PlanOrigin::Restored,
            "{what}: loading must not rebuild"
        );
        assert_close(
            &run(&loaded, &h1).expect("the loaded graph runs"),
            &want,
            what,
        );
        assert_eq!(
            loaded.serialize_compiled_plan().expect("re-save"),
            plan_bytes,
            "{what}: loaded plan bytes"
        );
        let resaved = loaded.serialize().expect("the loaded graph saves");
        assert_eq!(
            kiln::probe(&resaved).expect("probe").kind,
            BlobKind::GraphAndPlan
        );
        assert_eq!(
            kiln_format::plan_part(&resaved).expect("plan part"),
            &plan_bytes[..],
            "{what}"
        );

        let h2 = cpu_handle();
        let reloaded = Graph::from_binary(Some(&h2), &resaved).expect("the re-save loads");
        assert_eq!(
            reloaded.plan().expect("plan").origin(),
            PlanOrigin::Restored
        );
        assert_close(
            &run(&reloaded, &h2).expect("the reloaded graph runs"),
            &want,
            what,
        );
        assert_eq!(
            reloaded.to_compiled_plan_binary().expect("re-save"),
            plan_bytes,
            "{what}: reloaded plan bytes"
        );
        let again = reloaded.serialize().expect("saves");
        assert_eq!(
            kiln_format::plan_part(&again).expect("plan part"),
            &plan_bytes[..],
            "{what}"
        );
        assert_eq!(
            reloaded.op_graph().expect("graph"),
            original.op_graph().expect("graph"),
            "{what}: the graph survives two round trips"
        );
    }
}

#[test]
fn plan_alone_saved_loaded_resaved_and_reloaded_in_fresh_handles_runs_and_keeps_its_bytes() {
    for (what, make) in GRAPHS {
        let want = reference(make);
        let original = built(make, &cpu_handle());
        let plan_bytes = original.serialize_compiled_plan().expect("saves");
        assert_eq!(
            kiln::probe(&plan_bytes).expect("probe").kind,
            BlobKind::Plan
        );
        assert_eq!(
            kiln::serialize_compiled_plan(original.plan().expect("plan")).expect("saves"),
            plan_bytes
        );

        // The free functions: plan only, no graph.
        let h1 = cpu_handle();
        let p1 = kiln::deserialize_compiled_plan(&h1, &plan_bytes).expect("the plan loads");
        assert_eq!(p1.origin(), PlanOrigin::Restored);
        let p1_bytes = kiln::serialize_compiled_plan(&p1).expect("re-save");
        assert_eq!(p1_bytes, plan_bytes, "{what}: the loaded plan's re-save");
        let p2 =
            kiln::from_compiled_plan_binary(&cpu_handle(), &p1_bytes).expect("the re-save loads");
        assert_eq!(
            kiln::to_compiled_plan_binary(&p2).expect("re-save"),
            plan_bytes,
            "{what}"
        );

        // Attached to a graph described again through the API, in fresh handles.
        let h2 = cpu_handle();
        let mut g1 = make();
        g1.validate().expect("validates");
        g1.deserialize_compiled_plan(&h2, &plan_bytes)
            .expect("the plan attaches");
        assert_close(&run(&g1, &h2).expect("runs"), &want, what);
        let g1_bytes = g1.serialize_compiled_plan().expect("re-save");
        assert_eq!(g1_bytes, plan_bytes, "{what}: the attached plan's re-save");

        let h3 = cpu_handle();
        let mut g2 = make();
        g2.from_compiled_plan_binary(&h3, &g1_bytes)
            .expect("the re-save attaches");
        assert_eq!(g2.plan().expect("plan").origin(), PlanOrigin::Restored);
        assert_close(&run(&g2, &h3).expect("runs"), &want, what);
        assert_eq!(
            g2.serialize_compiled_plan().expect("re-save"),
            plan_bytes,
            "{what}"
        );
    }
}

#[test]
fn graph_with_a_loaded_plan_attached_saves_as_a_container() {
    let plan_bytes = built(conv_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let handle = cpu_handle();
    let mut g = conv_graph();
    g.validate().expect("validates");
    g.deserialize_compiled_plan(&handle, &plan_bytes)
        .expect("attaches");
    let saved = g
        .serialize()
        .expect("a validated graph with a loaded plan saves");
    assert_eq!(
        kiln::probe(&saved).expect("probe").kind,
        BlobKind::GraphAndPlan
    );
    assert_eq!(
        kiln_format::plan_part(&saved).expect("plan part"),
        &plan_bytes[..]
    );
}

#[test]
fn plan_loaders_given_a_container_keep_only_its_plan_part() {
    let h0 = cpu_handle();
    let original = built(conv_graph, &h0);
    let plan_bytes = original.serialize_compiled_plan().expect("saves");
    let container = original.serialize().expect("saves");

    let plan =
        kiln::deserialize_compiled_plan(&cpu_handle(), &container).expect("loads the plan part");
    assert_eq!(
        kiln::serialize_compiled_plan(&plan).expect("re-save"),
        plan_bytes
    );

    let handle = cpu_handle();
    let mut g = conv_graph();
    g.deserialize_compiled_plan(&handle, &container)
        .expect("attaches the plan part");
    assert_eq!(g.serialize_compiled_plan().expect("re-save"), plan_bytes);
    assert_close(
        &run(&g, &handle).expect("runs"),
        &reference(conv_graph),
        "container plan",
    );
}

#[test]
fn graph_loaded_without_a_handle_has_no_plan_and_builds_again() {
    let saved = built(pointwise_graph, &cpu_handle())
        .serialize()
        .expect("saves");
    let mut g = Graph::deserialize(None, &saved).expect("the graph part loads without a handle");
    assert!(g.plan().is_none());
    assert_eq!(
        kiln::probe(&g.serialize().expect("saves the graph"))
            .expect("probe")
            .kind,
        BlobKind::Graph
    );
    let handle = cpu_handle();
    g.build(&handle, &[HeurMode::A])
        .expect("the loaded graph builds");
    assert_close(
        &run(&g, &handle).expect("runs"),
        &reference(pointwise_graph),
        "rebuilt",
    );
}

#[test]
fn graph_loader_rejects_a_bare_plan_and_points_to_the_plan_loader() {
    let plan_bytes = built(pointwise_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let handle = cpu_handle();
    for h in [None, Some(&handle)] {
        let err = Graph::deserialize(h, &plan_bytes)
            .err()
            .expect("a bare plan is not a graph");
        assert_eq!(err.status(), Status::BadParam, "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("plan loader"),
            "the error points to the plan loader: {msg}"
        );
        assert!(
            msg.contains("deserialize_compiled_plan"),
            "the error names the loader to use: {msg}"
        );
    }
}

#[test]
fn plan_loader_rejects_a_graph_only_blob() {
    let handle = cpu_handle();
    let g = built(pointwise_graph, &handle);
    let graph_only = Graph::deserialize(None, &g.serialize().expect("saves"))
        .expect("loads")
        .serialize()
        .expect("saves the graph alone");
    assert_eq!(
        kiln::probe(&graph_only).expect("probe").kind,
        BlobKind::Graph
    );
    let container_without_plan = kiln_format::encode_container(&graph_only, None);
    assert_eq!(
        kiln_format::decode_container(&container_without_plan)
            .expect("a container")
            .plan,
        None
    );

    for (what, bytes) in [
        ("graph blob", &graph_only),
        ("container without plan", &container_without_plan),
    ] {
        let err = kiln::deserialize_compiled_plan(&handle, bytes).expect_err(what);
        assert_eq!(err.status(), Status::BadParam, "{what}: {err}");
        assert!(
            err.to_string().contains("graph loader"),
            "{what}: points to the graph loader: {err}"
        );
        let mut target = pointwise_graph();
        let err = target
            .deserialize_compiled_plan(&handle, bytes)
            .expect_err(what);
        assert_eq!(err.status(), Status::BadParam, "{what}: {err}");
        assert!(target.plan().is_none());
    }
}

#[test]
fn plan_of_another_graph_with_the_same_uids_is_refused_by_the_graph_plan_loader() {
    let conv_plan = built(conv_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let handle = cpu_handle();
    let mut g = pointwise_graph();
    let err = g
        .deserialize_compiled_plan(&handle, &conv_plan)
        .expect_err("built for another graph");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(err.to_string().contains("another graph"), "{err}");
    assert!(g.plan().is_none());
}

/// The pointwise graph with one more input and output, so that its bound UIDs differ.
fn extended_pointwise_graph() -> Graph {
    let mut g = pointwise_graph();
    let extra = g.tensor(
        kiln::TensorAttributes::new()
            .name("extra")
            .dim(&[2, 3, 5])
            .data_type(kiln::DataType::F32),
    );
    let y = g.tensor_by_name(common::OUTPUT).expect("y");
    let z = g.pointwise(
        &y,
        Some(&extra),
        kiln::PointwiseAttributes::new(kiln::PointwiseMode::Add),
    );
    z.set_name("z").set_output(true);
    g
}

#[test]
fn plan_with_other_tensor_uids_is_refused_by_the_graph_plan_loader() {
    let conv_plan = built(conv_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let handle = cpu_handle();
    let mut g = extended_pointwise_graph();
    let err = g
        .deserialize_compiled_plan(&handle, &conv_plan)
        .expect_err("other uids");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(err.to_string().contains("another graph"), "{err}");
    assert!(g.plan().is_none());
}

#[test]
fn container_whose_plan_binds_other_tensor_uids_than_its_graph_is_refused() {
    let plan = built(extended_pointwise_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let mut graph = pointwise_graph();
    graph.validate().expect("validates");
    let graph_blob = graph.serialize().expect("the graph alone saves");
    let forged = kiln_format::encode_container(&graph_blob, Some(&plan));
    let err = Graph::deserialize(Some(&cpu_handle()), &forged)
        .err()
        .expect("the parts do not match");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(err.to_string().contains("another graph"), "{err}");
    // Without a handle the plan is not restored, but the container is refused the same way: its
    // parts contradict each other, whoever loads it.
    let err = Graph::deserialize(None, &forged)
        .err()
        .expect("refused without a handle too");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(err.to_string().contains("another graph"), "{err}");
    // The plan loader, given the container, checks the container's own graph as well.
    let err = kiln::deserialize_compiled_plan(&cpu_handle(), &forged)
        .expect_err("the plan loader refuses it");
    assert_eq!(err.status(), Status::BadParam, "{err}");
    assert!(
        err.to_string().contains("container's graph") && err.to_string().contains("another graph"),
        "{err}"
    );
}

#[test]
fn container_whose_plan_has_the_same_uids_but_other_layouts_is_refused_by_every_loader() {
    // conv+bias+relu and pointwise bind the same UIDs with other shapes: only the recorded
    // layouts tell them apart.
    let conv_plan = built(conv_graph, &cpu_handle())
        .serialize_compiled_plan()
        .expect("saves");
    let mut graph = pointwise_graph();
    graph.validate().expect("validates");
    let graph_blob = graph.serialize().expect("the graph alone saves");
    let forged = kiln_format::encode_container(&graph_blob, Some(&conv_plan));
    for (what, result) in [
        (
            "graph loader without a handle",
            Graph::deserialize(None, &forged).map(drop),
        ),
        (
            "graph loader with a handle",
            Graph::deserialize(Some(&cpu_handle()), &forged).map(drop),
        ),
        (
            "plan loader",
            kiln::deserialize_compiled_plan(&cpu_handle(), &forged).map(drop),
        ),
    ] {
        let err = result.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(err.status(), Status::BadParam, "{what}: {err}");
        assert!(err.to_string().contains("another graph"), "{what}: {err}");
    }
    // The honest container of the same plan still loads everywhere.
    let honest = built(conv_graph, &cpu_handle()).serialize().expect("saves");
    Graph::deserialize(None, &honest).expect("graph loader without a handle");
    kiln::deserialize_compiled_plan(&cpu_handle(), &honest).expect("plan loader");
}

#[test]
fn plan_serialization_filter_leaves_no_candidate_on_a_plugin_without_hooks() {
    let fp = FaultPlugin::new(Faults::no_hooks());
    let handle = fp.handle();
    let mut g = pointwise_graph();
    g.validate().expect("validates");
    g.build_operation_graph(&handle).expect("lowers");
    g.create_execution_plans(&[HeurMode::A])
        .expect("heuristics answer");
    assert!(
        !g.candidate_configs().is_empty(),
        "the engines apply before filtering"
    );
    g.select_behavior_notes(&[BehaviorNote::SupportsPlanSerialization]);
    assert!(
        g.candidate_configs().is_empty(),
        "an engine without hooks passed the filter"
    );
    let err = g.check_support().expect_err("no candidate is left");
    assert_eq!(err.status(), Status::NotSupported, "{err}");
    assert_eq!(
        g.build_plans(BuildPlanPolicy::All)
            .expect_err("nothing to build")
            .status(),
        Status::NotSupported
    );

    let cpu = cpu_handle();
    let mut g = pointwise_graph();
    g.validate().expect("validates");
    g.build_operation_graph(&cpu).expect("lowers");
    g.create_execution_plans(&[HeurMode::A])
        .expect("heuristics answer");
    g.select_behavior_notes(&[BehaviorNote::SupportsPlanSerialization]);
    assert!(
        !g.candidate_configs().is_empty(),
        "the CPU engines save their plans"
    );
    g.check_support().expect("candidates are left");
    g.build_plans(BuildPlanPolicy::HeuristicsChoice)
        .expect("builds");
    assert!(g.plan().expect("plan").can_be_saved());
}

#[test]
fn graph_whose_plan_cannot_be_saved_serializes_as_the_graph_alone() {
    let fp = FaultPlugin::new(Faults::no_hooks());
    let handle = fp.handle();
    let g = built(conv_graph, &handle);
    assert!(!g.plan().expect("plan").can_be_saved());
    let saved = g.serialize().expect("the graph saves without its plan");
    assert_eq!(kiln::probe(&saved).expect("probe").kind, BlobKind::Graph);
    assert_eq!(
        g.serialize_compiled_plan()
            .expect_err("no plan bytes")
            .status(),
        Status::NotSupported
    );
    assert_eq!((fp.saves(), fp.frees()), (0, 0));

    let cpu = cpu_handle();
    let mut loaded = Graph::deserialize(Some(&cpu), &saved).expect("the graph alone loads");
    assert!(loaded.plan().is_none(), "no plan was saved");
    assert_eq!(loaded.op_graph(), g.op_graph());
    loaded.build(&cpu, &[HeurMode::A]).expect("builds again");
    assert_close(
        &run(&loaded, &cpu).expect("runs"),
        &reference(conv_graph),
        "rebuilt",
    );
}

#[test]
fn graph_whose_engine_should_save_but_fails_is_an_error() {
    let fp = FaultPlugin::new(Faults::all_hooks().save(SaveFault::Fail));
    let handle = fp.handle();
    let g = built(pointwise_graph, &handle);
    assert!(g.plan().expect("plan").can_be_saved());
    let err = g
        .serialize()
        .expect_err("a failed save is never silently dropped");
    assert_eq!(err.status(), Status::PluginError, "{err}");
    assert!(err.to_string().contains(INJECTED_SAVE_FAILURE), "{err}");
    assert_eq!((fp.saves(), fp.frees()), (1, 1));
}
