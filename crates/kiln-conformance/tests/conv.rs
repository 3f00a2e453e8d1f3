//! Convolutions: fprop, dgrad and wgrad in 1-d, 2-d and 3-d with asymmetric padding, strides,
//! dilations and groups, in any layout and type, on every engine that claims them; and the
//! gradients checked independently of the reference through the adjoint identities
//! `<fprop(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)>`.

mod common;

use common::{config, conform, conv};
use kiln::{DataType, HostTensor};
use kiln_conformance::{
    assert_conforms, ConvSpec, Layout, Session, Tolerance, CONV_FPROP, REFERENCE,
};
use kiln_core::ConvDirection;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn conv_fprop_conforms(spec in conv(ConvDirection::Fprop), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    #[test]
    fn conv_dgrad_conforms(spec in conv(ConvDirection::Dgrad), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    #[test]
    fn conv_wgrad_conforms(spec in conv(ConvDirection::Wgrad), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    /// Every engine claiming dgrad or wgrad satisfies the adjoint identities with the forward
    /// convolution, which checks the reference's gradients too.
    #[test]
    fn gradients_are_adjoint_to_fprop(spec in conv(ConvDirection::Fprop), seed in any::<u64>()) {
        let spec = ConvSpec { in_type: DataType::F32, out_type: DataType::F32, ..spec };
        adjoint(&spec, seed).map_err(TestCaseError::fail)?;
    }
}

fn dot(a: &HostTensor, b: &HostTensor) -> (f64, f64) {
    let (a, b) = (a.to_f64_vec(), b.to_f64_vec());
    a.iter()
        .zip(&b)
        .fold((0.0, 0.0), |(s, m), (x, y)| (s + x * y, m + (x * y).abs()))
}

fn adjoint(spec: &ConvSpec, seed: u64) -> Result<(), String> {
    let mut fcase = ConvSpec {
        direction: ConvDirection::Fprop,
        ..spec.clone()
    }
    .case();
    let mut dcase = ConvSpec {
        direction: ConvDirection::Dgrad,
        ..spec.clone()
    }
    .case();
    let mut wcase = ConvSpec {
        direction: ConvDirection::Wgrad,
        ..spec.clone()
    }
    .case();
    let mut fprop = Session::open(&mut fcase, seed)?;
    let y = fprop.run(REFERENCE)?.remove(0);
    let (x, w) = (fprop.inputs()[0].clone(), fprop.inputs()[1].clone());
    let mut dgrad = Session::open(&mut dcase, seed.wrapping_add(1))?;
    dgrad.set_input_values(1, &w.to_f64_vec())?;
    let dy = dgrad.inputs()[0].clone();
    let mut wgrad = Session::open(&mut wcase, seed.wrapping_add(2))?;
    wgrad.set_input_values(0, &dy.to_f64_vec())?;
    wgrad.set_input_values(1, &x.to_f64_vec())?;
    let (lhs, lhs_mag) = dot(&y, &dy);
    let tol = Tolerance::for_output(DataType::F32, spec.terms().max(64), 2);
    let check = |what: &str, engine: &str, rhs: f64, rhs_mag: f64| {
        let allowed = tol.rtol * 8.0 * (lhs_mag + rhs_mag) + tol.atol;
        if (lhs - rhs).abs() > allowed {
            Err(format!(
                "engine {engine} on {}: {what} breaks the adjoint identity: <fprop(x, w), dy> = {lhs:e} but got {rhs:e} \
                 (|diff| {:.3e} > allowed {allowed:.3e})",
                spec.describe(),
                (lhs - rhs).abs()
            ))
        } else {
            Ok(())
        }
    };
    for engine in dgrad
        .claimed()
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    {
        let dx = dgrad.run(&engine)?.remove(0);
        let (rhs, mag) = dot(&x, &dx);
        check("<x, dgrad(dy, w)>", &engine, rhs, mag)?;
    }
    for engine in wgrad
        .claimed()
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    {
        let dw = wgrad.run(&engine)?.remove(0);
        let (rhs, mag) = dot(&w, &dw);
        check("<w, wgrad(x, dy)>", &engine, rhs, mag)?;
    }
    Ok(())
}

/// A typical 2-d convolution in NCHW and NHWC f32 is claimed by the GEMM engine, and long sums
/// (C = 64, 3x3) stay within the scaled tolerance.
#[test]
fn common_shapes_use_the_gemm_engine() {
    for layout in [Layout::packed(), Layout::channels_last()] {
        for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
            let spec = ConvSpec {
                direction: ConvDirection::Fprop,
                n: 2,
                groups: 1,
                c_per_group: 64,
                k_per_group: 8,
                spatial: vec![7, 6],
                filter: vec![3, 3],
                pre_padding: vec![1, 0],
                post_padding: vec![1, 2],
                stride: vec![1, 2],
                dilation: vec![1, 1],
                x_layout: layout.clone(),
                w_layout: layout.clone(),
                y_layout: layout.clone(),
                in_type: dt,
                out_type: dt,
            };
            let outcome = assert_conforms(spec.case(), 11);
            assert!(
                common::cpu_engine_claimed(&outcome, CONV_FPROP),
                "{outcome:?}"
            );
        }
    }
}

/// Shapes large enough that the GEMM engines cut the output into several tiles (more than
/// 1024 output positions) in every direction, with their default knobs.
#[test]
fn large_shapes_span_several_tiles() {
    for direction in [
        ConvDirection::Fprop,
        ConvDirection::Dgrad,
        ConvDirection::Wgrad,
    ] {
        for (layout, dt) in [
            (Layout::packed(), DataType::F32),
            (Layout::channels_last(), DataType::F16),
            (Layout::packed().with_padding(&[1]), DataType::Bf16),
        ] {
            let spec = ConvSpec {
                direction,
                n: 2,
                groups: 2,
                c_per_group: 4,
                k_per_group: 3,
                spatial: vec![26, 25],
                filter: vec![3, 2],
                pre_padding: vec![1, 0],
                post_padding: vec![0, 1],
                stride: vec![1, 1],
                dilation: vec![1, 2],
                x_layout: layout.clone(),
                w_layout: layout.clone(),
                y_layout: layout.clone(),
                in_type: dt,
                out_type: dt,
            };
            let outcome = assert_conforms(spec.case(), 3);
            assert!(common::compared_where_claimed(&outcome), "{outcome:?}");
        }
    }
}
