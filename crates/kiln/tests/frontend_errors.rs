//! The frontend's own errors: what it cannot infer, what is out of order, what does not fit.

use kiln::*;

fn f32(name: &str, dims: &[i64]) -> TensorAttributes {
    TensorAttributes::new()
        .name(name)
        .dim(dims)
        .data_type(DataType::F32)
}

#[test]
fn dgrad_output_dims_must_be_set() {
    let mut g = Graph::new();
    let dy = g.tensor(f32("dy", &[1, 4, 6, 6]));
    let w = g.tensor(f32("w", &[4, 3, 3, 3]));
    let dx = g.conv_dgrad(&dy, &w, ConvDgradAttributes::new().name("dgrad"));
    dx.set_output(true).set_name("dx");
    let e = g.validate().unwrap_err();
    assert_eq!(e.status(), Status::BadParam);
    assert!(
        e.to_string().contains("node 'dgrad'") && e.to_string().contains("'dx'"),
        "{e}"
    );
    dx.set_dim(&[1, 3, 8, 8]);
    g.validate().unwrap();
}

#[test]
fn execute_before_build_is_not_initialized() {
    let handle = Handle::cpu().unwrap();
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[4]));
    let y = g.pointwise(&x, None, PointwiseAttributes::new(PointwiseMode::Exp));
    y.set_output(true);
    g.validate().unwrap();
    let mut ws = Workspace::new(0).unwrap();
    let e = g
        .execute(&handle, &mut VariantPack::new(), &mut ws)
        .unwrap_err();
    assert_eq!(e.status(), Status::NotInitialized, "{e}");
    let e = g.create_execution_plans(&[HeurMode::A]).unwrap_err();
    assert_eq!(e.status(), Status::NotInitialized, "{e}");
}

#[test]
fn bindings_are_checked_against_the_graph() {
    let handle = Handle::cpu().unwrap();
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[2, 3]));
    let y = g.pointwise(&x, None, PointwiseAttributes::new(PointwiseMode::Abs));
    y.set_output(true).set_name("y");
    g.build(&handle, &[HeurMode::A]).unwrap();
    let mut ws = Workspace::for_graph(&g).unwrap();

    // Missing output binding.
    let mut hx = HostTensor::for_tensor(&x).unwrap();
    let e = {
        let mut pack = VariantPack::new();
        pack.insert(&x, &mut hx);
        g.execute(&handle, &mut pack, &mut ws).unwrap_err()
    };
    assert!(e.to_string().contains("is not bound"), "{e}");
    assert_eq!(
        e.tensor_uid(),
        y.uid(),
        "the error carries the tensor's uid"
    );

    // Memory of another data type.
    let half = TensorDesc {
        data_type: DataType::F16,
        ..y.desc().unwrap()
    };
    let mut wrong = HostTensor::zeros(&half).unwrap();
    let e = {
        let mut pack = VariantPack::new();
        pack.insert(&x, &mut hx).insert(&y, &mut wrong);
        g.execute(&handle, &mut pack, &mut ws).unwrap_err()
    };
    assert!(
        e.to_string().contains("'y'") && e.to_string().contains("f16"),
        "{e}"
    );

    // Memory too small for the layout.
    let small = TensorDesc {
        dims: vec![1, 3],
        strides: vec![3, 1],
        ..y.desc().unwrap()
    };
    let mut short = HostTensor::zeros(&small).unwrap();
    let e = {
        let mut pack = VariantPack::new();
        pack.insert(&x, &mut hx).insert(&y, &mut short);
        g.execute(&handle, &mut pack, &mut ws).unwrap_err()
    };
    assert_eq!(e.status(), Status::BadParamSizeInsufficient, "{e}");

    // A uid the graph does not have.
    let mut extra = HostTensor::for_tensor(&x).unwrap();
    let mut hy = HostTensor::for_tensor(&y).unwrap();
    let e = {
        let mut pack = VariantPack::new();
        pack.insert(&x, &mut hx)
            .insert(&y, &mut hy)
            .insert_uid(999, &mut extra);
        g.execute(&handle, &mut pack, &mut ws).unwrap_err()
    };
    assert!(e.to_string().contains("999"), "{e}");
}

#[test]
fn outputs_inherit_the_input_layout_and_type() {
    let mut g = Graph::new();
    let nhwc = kiln_core::tensor::channels_last_strides(&[2, 8, 5, 5]);
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&[2, 8, 5, 5])
            .stride(&nhwc)
            .data_type(DataType::Bf16),
    );
    let w = g.tensor(
        TensorAttributes::new()
            .name("w")
            .dim(&[4, 8, 3, 3])
            .data_type(DataType::Bf16),
    );
    let y = g.conv_fprop(&x, &w, ConvFpropAttributes::new().padding(&[1, 1]));
    y.set_output(true);
    g.validate().unwrap();
    assert_eq!(y.dims(), vec![2, 4, 5, 5]);
    assert_eq!(
        y.strides(),
        kiln_core::tensor::channels_last_strides(&[2, 4, 5, 5])
    );
    assert_eq!(y.data_type(), Some(DataType::Bf16));
    assert!(x.uid().is_some() && w.uid().is_some() && y.uid().is_some());
}

#[test]
fn user_uids_are_kept_and_others_assigned_after_them() {
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[3]).uid(40));
    let y = g.pointwise(&x, None, PointwiseAttributes::new(PointwiseMode::Neg));
    y.set_output(true);
    g.validate().unwrap();
    assert_eq!(x.uid(), Some(40));
    assert_eq!(y.uid(), Some(41));
}

#[test]
fn a_plugin_free_handle_is_refused_clearly() {
    let e = Handle::with_registry(Device::Cpu, std::sync::Arc::new(Registry::empty())).unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    assert!(e.to_string().contains("no plugins"), "{e}");
}

#[test]
fn engines_that_decline_a_graph_say_why_when_no_candidate_is_left() {
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[2, 8]));
    let s = g.tensor(f32("s", &[2, 8]));
    let y = g.pointwise(&x, Some(&s), PointwiseAttributes::new(PointwiseMode::Mul));
    y.set_output(true).set_name("y");
    let handle = Handle::cpu().expect("a CPU handle");
    g.validate().expect("validates");
    g.build_operation_graph(&handle).expect("lowers");
    g.create_execution_plans(&[HeurMode::A])
        .expect("heuristics");
    // Leave out the engines that do run it: what is left must say why it declined.
    g.deselect_engines(&["KILN_CPU_POINTWISE_V1", "KILN_CPU_REFERENCE"]);
    let e = g.check_support().unwrap_err();
    assert_eq!(e.status(), Status::NotSupported);
    let text = e.to_string();
    assert!(text.contains("declined"), "{text}");
    for (engine, why) in [
        ("KILN_CPU_MATMUL_GEMM_V1 (kiln-cpu): ", "matmul"),
        ("KILN_CPU_CONV_FPROP_GEMM_V1 (kiln-cpu): ", "convolution"),
    ] {
        let at = text
            .find(engine)
            .unwrap_or_else(|| panic!("{engine} is not named: {text}"));
        let reason = &text[at + engine.len()..];
        let reason = &reason[..reason.find(';').unwrap_or(reason.len())];
        assert!(reason.contains(why), "{engine}{reason}");
    }
    // The engines that do apply are candidates, not decliners.
    assert!(!text.contains("KILN_CPU_POINTWISE_V1 (kiln-cpu)"), "{text}");
}
