//! A graph with a multi-output node (rmsnorm: y and inv_rms, then relu of inv_rms) round-trips
//! through JSON, the graph blob and a saved plan: graph-with-plan save, load on a fresh CPU
//! handle, re-save byte-identical, execute, same results.

use kiln::{
    Graph, Handle, HeurMode, HostTensor, NormPhase, PlanOrigin, PointwiseAttributes, PointwiseMode,
    RmsnormAttributes, TensorAttributes, VariantPack, Workspace,
};

fn f32(name: &str, dims: &[i64]) -> TensorAttributes {
    TensorAttributes::new()
        .name(name)
        .dim(dims)
        .data_type(kiln::DataType::F32)
}

/// rmsnorm in training (epsilon a by-value scalar, with bias), y and relu(inv_rms) as outputs.
fn norm_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("rmsnorm round trip");
    let x = g.tensor(f32("x", &[3, 4, 5]));
    let scale = g.tensor(f32("scale", &[1, 4, 5]));
    let bias = g.tensor(f32("bias", &[1, 4, 5]));
    let eps = g.scalar(1e-3);
    let out = g
        .rmsnorm(
            &x,
            &scale,
            RmsnormAttributes::new()
                .name("norm")
                .bias(&bias)
                .epsilon_tensor(&eps)
                .forward_phase(NormPhase::Training),
        )
        .expect("rmsnorm");
    out.y.set_output(true).set_name("y");
    let inv = out.inv_rms.expect("training writes inv_rms");
    assert_eq!(
        inv.dims(),
        Vec::<i64>::new(),
        "dims are inferred at validate"
    );
    let r = g.pointwise(&inv, None, PointwiseAttributes::new(PointwiseMode::Relu));
    r.set_output(true).set_name("relu_inv_rms");
    g
}

/// Runs `g` on fixed inputs; returns y and relu_inv_rms.
fn run(g: &Graph, h: &Handle) -> (Vec<f32>, Vec<f32>) {
    let t = |n: &str| g.tensor_by_name(n).unwrap_or_else(|| panic!("tensor {n}"));
    let (x, scale, bias, y, r) = (t("x"), t("scale"), t("bias"), t("y"), t("relu_inv_rms"));
    let mut hx = HostTensor::random(&x.desc().unwrap(), 1).unwrap();
    let mut hs = HostTensor::random(&scale.desc().unwrap(), 2).unwrap();
    let mut hb = HostTensor::random(&bias.desc().unwrap(), 3).unwrap();
    let mut hy = HostTensor::for_tensor(&y).unwrap();
    let mut hr = HostTensor::for_tensor(&r).unwrap();
    let mut ws = Workspace::for_graph(g).unwrap();
    let mut pack = VariantPack::new();
    pack.insert(&x, &mut hx)
        .insert(&scale, &mut hs)
        .insert(&bias, &mut hb)
        .insert(&y, &mut hy)
        .insert(&r, &mut hr);
    g.execute(h, &mut pack, &mut ws).expect("execute");
    drop(pack);
    (hy.to_f32_vec(), hr.to_f32_vec())
}

#[test]
fn the_frontend_returns_each_output_and_optional_ones_only_when_asked() {
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[2, 3]));
    let scale = g.tensor(f32("scale", &[1, 3]));
    let out = g
        .rmsnorm(&x, &scale, RmsnormAttributes::new().epsilon(1e-5))
        .unwrap();
    assert!(out.inv_rms.is_none(), "inference writes y only");
    out.y.set_output(true);
    g.validate().unwrap();
    assert_eq!(out.y.dims(), vec![2, 3]);
    let e = Graph::new()
        .rmsnorm(&x, &scale, RmsnormAttributes::new())
        .unwrap_err();
    assert!(e.to_string().contains("epsilon"), "{e}");

    let mut g = norm_graph();
    g.validate().unwrap();
    let inv = g.tensor_by_uid(g.op_graph().unwrap().nodes[0].op.outputs()[1]);
    assert_eq!(inv.unwrap().dims(), vec![3, 1, 1]);
}

#[test]
fn a_multi_output_graph_round_trips_through_json_the_blob_and_a_saved_plan() {
    let h0 = Handle::cpu().unwrap();
    let mut original = norm_graph();
    original.build(&h0, &[HeurMode::A]).expect("builds");
    assert_eq!(original.plan().unwrap().engine_name(), "KILN_CPU_REFERENCE");
    let want = run(&original, &h0);
    assert!(want.0.iter().chain(&want.1).all(|v| v.is_finite()));
    let ir = original.op_graph().unwrap().clone();

    // JSON and the graph blob give the same IR back.
    let json = kiln_format::graph_to_json(&ir);
    assert!(json.contains("\"inv_rms\""), "{json}");
    assert_eq!(kiln_format::graph_from_json(&json).unwrap(), ir);
    let blob = kiln_format::encode_graph(&ir);
    assert_eq!(kiln_format::decode_graph(&blob).unwrap(), ir);
    assert_eq!(kiln::probe(&blob).unwrap().graph_minor_version, Some(1));

    // Graph with plan: save, load on a fresh handle, re-save byte-identical, run.
    let saved = original.serialize().expect("saves with its plan");
    let h1 = Handle::cpu().unwrap();
    let loaded = Graph::deserialize(Some(&h1), &saved).expect("loads");
    assert_eq!(loaded.plan().unwrap().origin(), PlanOrigin::Restored);
    assert_eq!(
        loaded.serialize().unwrap(),
        saved,
        "re-save is byte-identical"
    );
    assert_eq!(
        loaded.serialize_compiled_plan().unwrap(),
        original.serialize_compiled_plan().unwrap()
    );
    assert_eq!(
        run(&loaded, &h1),
        want,
        "the loaded plan gives the same results"
    );

    // And from JSON, rebuilt.
    let mut from_json = Graph::from_op_graph(kiln_format::graph_from_json(&json).unwrap()).unwrap();
    from_json.build(&h1, &[HeurMode::A]).unwrap();
    assert_eq!(run(&from_json, &h1), want);
}
