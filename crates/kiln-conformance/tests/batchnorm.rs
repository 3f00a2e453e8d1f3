//! batchnorm (training forward, with and without running statistics) and batchnorm_inference,
//! per channel (dim 1) in any layout (NHWC included), random shapes and types, both scalar forms,
//! with and without a trailing pointwise node; on every engine that claims them; and the
//! reference checked against a direct computation here.

mod common;

use common::config;
use common::norms::{conform_norm, fixed, norm_spec, reference_is_right, Norm};
use kiln_conformance::{Layout, Session};
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn batchnorm_conforms(spec in norm_spec(Norm::Batchnorm, 5), seed in any::<u64>()) {
        conform_norm(&spec, seed)?;
    }

    #[test]
    fn reference_batchnorm_is_right(spec in norm_spec(Norm::Batchnorm, 5), seed in any::<u64>()) {
        reference_is_right(&spec, seed)?;
    }

    #[test]
    fn batchnorm_inference_conforms(spec in norm_spec(Norm::BatchnormInference, 6), seed in any::<u64>()) {
        conform_norm(&spec, seed)?;
    }

    #[test]
    fn reference_batchnorm_inference_is_right(spec in norm_spec(Norm::BatchnormInference, 6), seed in any::<u64>()) {
        reference_is_right(&spec, seed)?;
    }
}

/// NHWC (channels-last strides), the layout most batchnorm runs in, on every engine.
#[test]
fn nhwc_batchnorm_conforms() {
    for norm in [
        Norm::Batchnorm,
        Norm::BatchnormInference,
        Norm::BatchnormBackward,
    ] {
        let spec = fixed(norm, &[4, 8, 5, 3], Layout::channels_last());
        conform_norm(&spec, 11).unwrap();
        reference_is_right(&spec, 11).unwrap();
    }
}

/// Shapes large enough for the engines to split the walk across threads, in NCHW and NHWC, with
/// odd sizes (tails of every vector loop), the fused relu on the forwards.
#[test]
fn large_channels_conform() {
    for norm in [
        Norm::Batchnorm,
        Norm::BatchnormInference,
        Norm::BatchnormBackward,
    ] {
        for layout in [Layout::packed(), Layout::channels_last()] {
            let mut spec = fixed(norm, &[9, 67, 13, 11], layout);
            if norm != Norm::BatchnormBackward {
                spec.then = Some(kiln::PointwiseMode::Relu);
            }
            conform_norm(&spec, 9).unwrap();
        }
    }
}

/// A known example: one channel holding [1, 3] (N = 2), scale 2, bias 1, epsilon 0, momentum
/// 0.5 from running mean 0 and variance 1: mean 2, variance 1 (unbiased 2).
#[test]
fn a_worked_example() {
    let mut spec = fixed(Norm::Batchnorm, &[2, 1], Layout::packed());
    spec.epsilon = 0.0;
    spec.momentum = 0.5;
    let mut case = spec.case();
    let mut session = Session::open(&mut case, 1).unwrap();
    for (i, v) in [vec![1.0, 3.0], vec![2.0], vec![1.0], vec![0.0], vec![1.0]]
        .iter()
        .enumerate()
    {
        session.set_input_values(i, v).unwrap();
    }
    let outs = session.run(kiln_conformance::REFERENCE).unwrap();
    let got: Vec<Vec<f64>> = outs.iter().map(|t| t.to_f64_vec()).collect();
    assert_eq!(
        got,
        vec![vec![-1.0, 3.0], vec![2.0], vec![1.0], vec![1.0], vec![1.5]]
    );
}
