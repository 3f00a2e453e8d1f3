//! layernorm over random shapes, layouts and types, both epsilon forms, training and inference,
//! with and without a trailing pointwise node; on every engine that claims it; and the
//! reference checked against a direct computation here.

mod common;

use common::config;
use common::norms::{conform_norm, fixed, norm_spec, reference_is_right, Norm};
use kiln_conformance::{Layout, Session};
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn layernorm_conforms(spec in norm_spec(Norm::Layernorm, 6), seed in any::<u64>()) {
        conform_norm(&spec, seed)?;
    }

    #[test]
    fn reference_layernorm_is_right(spec in norm_spec(Norm::Layernorm, 6), seed in any::<u64>()) {
        reference_is_right(&spec, seed)?;
    }
}

/// A known example: x = [[1, 2, 3, 4]], scale 1, bias 0, epsilon 0: mean 2.5, variance 1.25.
#[test]
fn a_worked_example() {
    let mut spec = fixed(Norm::Layernorm, &[1, 4], Layout::packed());
    spec.epsilon = 0.0;
    let mut case = spec.case();
    let mut session = Session::open(&mut case, 1).unwrap();
    session.set_input_values(0, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    session.set_input_values(1, &[1.0; 4]).unwrap();
    session.set_input_values(2, &[0.0; 4]).unwrap();
    let outs = session.run(kiln_conformance::REFERENCE).unwrap();
    let inv = 1.0 / 1.25f64.sqrt();
    let y = outs[0].to_f64_vec();
    for (got, x) in y.iter().zip([1.0, 2.0, 3.0, 4.0]) {
        assert!((got - (x - 2.5) * inv).abs() < 1e-6, "{y:?}");
    }
    assert!((outs[1].to_f64_vec()[0] - 2.5).abs() < 1e-6);
    assert!((outs[2].to_f64_vec()[0] - inv).abs() < 1e-6);
}

/// Shapes large enough for the engines to split rows across threads, every norm per sample,
/// with odd lengths (tails of every vector loop) and a strided layout.
#[test]
fn large_rows_conform() {
    for (norm, dims) in [
        (Norm::Layernorm, vec![48, 1027]),
        (Norm::Layernorm, vec![7, 3, 5, 301]),
        (Norm::LayernormBackward, vec![40, 1029]),
        (Norm::RmsnormBackward, vec![33, 517]),
    ] {
        for layout in [Layout::packed(), Layout::transposed()] {
            let mut spec = fixed(norm, &dims, layout);
            spec.then = (norm == Norm::Layernorm).then_some(kiln::PointwiseMode::Relu);
            conform_norm(&spec, 5).unwrap();
        }
    }
}

/// layernorm, then `* s + b` with a tensor and a scalar operand, then gelu: one fused plan on
/// the norm engine, equal to the reference.
#[test]
fn a_chain_with_tensor_operands_fuses() {
    use kiln::{DataType, Graph, LayernormAttributes, PointwiseAttributes, PointwiseMode};
    use kiln_conformance::{Case, Domain, TensorSpec};
    let mut g = Graph::new();
    let x = TensorSpec::new(&[6, 4, 33], Layout::channels_last(), DataType::Bf16);
    let p = TensorSpec::new(&[1, 4, 33], Layout::packed(), DataType::Bf16);
    let gate = TensorSpec::new(&[6, 1, 33], Layout::packed(), DataType::F32);
    let (xt, scale, bias) = (
        x.add_to(&mut g, "x"),
        p.add_to(&mut g, "s"),
        p.add_to(&mut g, "b"),
    );
    let gt = gate.add_to(&mut g, "gate");
    let out = g
        .layernorm(&xt, &scale, &bias, LayernormAttributes::new().epsilon(1e-5))
        .unwrap();
    let two = g.scalar(2.0);
    let m = g.pointwise(
        &out.y,
        Some(&gt),
        PointwiseAttributes::new(PointwiseMode::Mul),
    );
    let a = g.pointwise(&two, Some(&m), PointwiseAttributes::new(PointwiseMode::Add));
    let y = g.pointwise(&a, None, PointwiseAttributes::new(PointwiseMode::Gelu));
    y.set_data_type(DataType::Bf16);
    let case = Case::new("layernorm * gate + 2, gelu", g)
        .input(&xt, Domain::WIDE)
        .input(&scale, Domain::SYMMETRIC)
        .input(&bias, Domain::SYMMETRIC)
        .input(&gt, Domain::SYMMETRIC)
        .output(&y)
        .terms(132)
        .depth(5)
        .expect_engine(kiln_conformance::NORM);
    kiln_conformance::assert_conforms(case, 3);
}
