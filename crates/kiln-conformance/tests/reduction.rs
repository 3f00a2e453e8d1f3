//! Reductions of every mode over various dim sets, layouts and types, on every engine that
//! claims them; and the reference's results checked against a direct computation here.

mod common;

use common::{config, conform, data_type, layout, tensor};
use kiln::{DataType, ReductionMode};
use kiln_conformance::compare::compare_values;
use kiln_conformance::{assert_conforms, Layout, ReductionSpec, Session, TensorSpec, REFERENCE};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn reduction() -> impl Strategy<Value = ReductionSpec> {
    (prop::sample::select(ReductionMode::ALL.to_vec()), tensor()).prop_flat_map(|(mode, x)| {
        let rank = x.dims.len();
        (
            Just(mode),
            Just(x),
            prop::collection::vec(any::<bool>(), rank),
            layout(rank),
            data_type(),
        )
            .prop_map(|(mode, x, reduce, y_layout, y_type)| ReductionSpec {
                mode,
                x,
                reduce,
                y_layout,
                y_type,
            })
    })
}

/// The reduction computed directly from the input values (row-major), in f64.
fn direct(spec: &ReductionSpec, x: &[f64]) -> Vec<f64> {
    let y_dims = spec.y_dims();
    let count: usize = y_dims.iter().map(|&d| d as usize).product();
    let mut acc = vec![
        match spec.mode {
            ReductionMode::Max => f64::NEG_INFINITY,
            ReductionMode::Min => f64::INFINITY,
            _ => 0.0,
        };
        count
    ];
    let dims = &spec.x.dims;
    for (flat, &v) in x.iter().enumerate() {
        let idx = kiln_conformance::compare::unravel(flat, dims);
        let out = idx.iter().zip(&y_dims).fold(0usize, |o, (&i, &d)| {
            o * d as usize + if d == 1 { 0 } else { i }
        });
        let a = &mut acc[out];
        match spec.mode {
            ReductionMode::Sum | ReductionMode::Mean => *a += v,
            ReductionMode::Max => *a = a.max(v),
            ReductionMode::Min => *a = a.min(v),
            ReductionMode::Amax => *a = a.max(v.abs()),
            ReductionMode::Norm1 => *a += v.abs(),
            ReductionMode::Norm2 => *a += v * v,
        }
    }
    let terms = spec.terms() as f64;
    acc.into_iter()
        .map(|a| match spec.mode {
            ReductionMode::Mean => a / terms,
            ReductionMode::Norm2 => a.sqrt(),
            _ => a,
        })
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reductions_conform(spec in reduction(), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    /// The oracle itself: the reference's reductions equal a direct computation.
    #[test]
    fn reference_reductions_are_right(spec in reduction(), seed in any::<u64>()) {
        let mut case = spec.case();
        let tol = case.tolerance_for(spec.y_type);
        let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
        let x = session.inputs()[0].to_f64_vec();
        let y = session.run(REFERENCE).map_err(TestCaseError::fail)?.remove(0);
        let want = direct(&spec, &x);
        compare_values(&format!("reference on '{}' vs direct computation", session.case().name()), y.desc(), &y.to_f64_vec(), &want, tol)
            .map_err(TestCaseError::fail)?;
    }
}

/// Each mode over every single dim and over all dims at once, in f32, f16 and bf16.
#[test]
fn every_mode_over_each_dim() {
    for mode in ReductionMode::ALL {
        for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
            for reduce in [
                vec![true, false, false],
                vec![false, true, false],
                vec![false, false, true],
                vec![true, true, true],
                vec![false, true, true],
            ] {
                let spec = ReductionSpec {
                    mode,
                    x: TensorSpec::new(&[3, 4, 5], Layout::channels_last().with_padding(&[1]), dt),
                    reduce,
                    y_layout: Layout::packed(),
                    y_type: dt,
                };
                assert_conforms(spec.case(), 9);
            }
        }
    }
}
