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
