//! Pointwise nodes: every mode (with its parameters), every type, layouts, broadcasting and
//! by-value scalars, on every engine that claims them.

mod common;

use common::{
    binary_modes, config, conform, data_type, layout, mode_with_params, out_type, tensor,
    unary_modes,
};
use kiln::{DataType, Graph, PointwiseMode, TensorAttributes};
use kiln_conformance::modes::{self, params_variant};
use kiln_conformance::{
    assert_conforms, check_session, Case, Domain, Layout, Operand, PointwiseSpec, Session,
    TensorSpec, POINTWISE,
};
use kiln_core::PointwiseParams;
use proptest::prelude::*;

/// Every mode, each parameter variant, each type, on a padded non-contiguous layout: the
/// deterministic floor of coverage under the random cases below.
#[test]
fn every_mode_every_type() {
    let mut runs = 0;
    for mode in PointwiseMode::ALL {
        for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
            for k in 0..5u8 {
                let params = params_variant(mode, k);
                if k > 0 && params == PointwiseParams::default() {
                    continue;
                }
                let a = TensorSpec::new(
                    &[2, 3, 5],
                    Layout::channels_last().with_padding(&[1, 2]),
                    dt,
                );
                let b = mode
                    .is_binary()
                    .then(|| Operand::Tensor(TensorSpec::new(&[2, 1, 5], Layout::packed(), dt)));
                let spec = PointwiseSpec {
                    mode,
                    params,
                    a: Operand::Tensor(a),
                    b,
                    out_layout: Layout::packed().with_inner_step(2),
                    out_type: dt,
                };
                let outcome = assert_conforms(spec.case(), 7 + k as u64);
                assert!(
                    common::cpu_engine_claimed(&outcome, POINTWISE),
                    "{outcome:?}"
                );
                runs += outcome.runs;
            }
        }
    }
    assert!(
        runs >= PointwiseMode::ALL.len() * 3,
        "only {runs} engine runs were compared"
    );
}

/// A binary operand against `a`: the same dims, broadcast (1 where `mask`), or a scalar.
fn other_operand(a: TensorSpec) -> impl Strategy<Value = (TensorSpec, Operand, bool)> {
    let rank = a.dims.len();
    (
        prop::collection::vec(any::<bool>(), rank),
        layout(rank),
        data_type(),
        0u8..4,
        -1.0f64..1.0,
        any::<bool>(),
    )
        .prop_map(move |(mask, l, dt, kind, u, swap)| {
            let dims: Vec<i64> = a
                .dims
                .iter()
                .zip(&mask)
                .map(|(&d, &m)| if m { 1 } else { d })
                .collect();
            let other = match kind {
                0 => Operand::Scalar(u),
                1 => Operand::Tensor(TensorSpec::new(&a.dims, l, dt)),
                _ => Operand::Tensor(TensorSpec::new(&dims, l, dt)),
            };
            (a.clone(), other, swap)
        })
}

proptest! {
    #![proptest_config(config())]

    /// Unary modes on random shapes, layouts and types; the output in its own layout and type.
    #[test]
    fn unary_modes_conform(
        (mode, params) in mode_with_params(unary_modes()),
        a in tensor(),
        out_layout in layout(4),
        f32_out in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let out_type = if f32_out { DataType::F32 } else { a.data_type };
        let spec = PointwiseSpec { mode, params, a: Operand::Tensor(a), b: None, out_layout, out_type };
        conform(spec.case(), seed)?;
    }

    /// Binary modes with broadcasting either way and by-value scalars on either side.
    #[test]
    fn binary_modes_conform(
        (mode, params) in mode_with_params(binary_modes()),
        (a, other, swap) in tensor().prop_flat_map(other_operand),
        out_layout in layout(4),
        seed in any::<u64>(),
    ) {
        let out = a.data_type;
        let (a, b) = if swap {
            (other, Operand::Tensor(a))
        } else {
            (Operand::Tensor(a), other)
        };
        let spec = PointwiseSpec { mode, params, a, b: Some(b), out_layout, out_type: out };
        conform(spec.case(), seed)?;
    }

    /// Mixed input types: each operand its own type, the output a third.
    #[test]
    fn mixed_types_conform(
        mode in prop::sample::select(vec![PointwiseMode::Add, PointwiseMode::Mul, PointwiseMode::Sub, PointwiseMode::Max]),
        dims in common::dims(3, 4),
        (ta, tb) in (data_type(), data_type()),
        tc in data_type().prop_flat_map(out_type),
        seed in any::<u64>(),
    ) {
        let a = TensorSpec::new(&dims, Layout::packed(), ta);
        let b = TensorSpec::new(&dims, Layout::channels_last(), tb);
        let spec = PointwiseSpec {
            mode,
            params: PointwiseParams::default(),
            a: Operand::Tensor(a),
            b: Some(Operand::Tensor(b)),
            out_layout: Layout::transposed(),
            out_type: tc,
        };
        conform(spec.case(), seed)?;
    }
}

/// Runs `mode` on every pair of special values (NaN, infinities, signed zeros, ordinary
/// values) in f32, f16 and bf16; returns the failures.
fn special_values(mode: PointwiseMode, params: PointwiseParams) -> Vec<String> {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        1.0,
        -1.0,
        0.5,
    ];
    let n = specials.len() as i64;
    let mut failures = Vec::new();
    for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
        let mut g = Graph::new();
        let a = g.tensor(TensorAttributes::new().name("a").dim(&[n, n]).data_type(dt));
        let b = mode
            .is_binary()
            .then(|| g.tensor(TensorAttributes::new().name("b").dim(&[n, n]).data_type(dt)));
        let y = g.pointwise(&a, b.as_ref(), modes::attributes(mode, &params));
        y.set_name("y");
        let mut case = Case::new(
            format!("special values {} {dt}", modes::describe(mode, &params)),
            g,
        )
        .input(&a, Domain::SYMMETRIC)
        .output(&y)
        .allow_non_finite()
        .expect_engine(POINTWISE);
        if let Some(b) = &b {
            case = case.input(b, Domain::SYMMETRIC);
        }
        let mut session = match Session::open(&mut case, 1) {
            Ok(s) => s,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        // Every pair (a, b) of special values appears once.
        let av: Vec<f64> = (0..n * n).map(|i| specials[(i / n) as usize]).collect();
        let bv: Vec<f64> = (0..n * n).map(|i| specials[(i % n) as usize]).collect();
        let mut result = session.set_input_values(0, &av);
        if b.is_some() && result.is_ok() {
            result = session.set_input_values(1, &bv);
        }
        if let Err(e) = result.and_then(|_| check_session(&mut session).map(|_| ())) {
            failures.push(e);
        }
    }
    failures
}

/// NaN, infinities and signed zeros through the modes where IEEE semantics decide the result:
/// every engine must agree with the reference (NaN propagates through max and min).
#[test]
fn special_values_propagate() {
    let modes = [
        PointwiseMode::Max,
        PointwiseMode::Min,
        PointwiseMode::Abs,
        PointwiseMode::Neg,
        PointwiseMode::Identity,
        PointwiseMode::Add,
        PointwiseMode::Sub,
        PointwiseMode::Mul,
        PointwiseMode::CmpEq,
        PointwiseMode::CmpNe,
        PointwiseMode::CmpLt,
        PointwiseMode::CmpGe,
        PointwiseMode::Sigmoid,
        PointwiseMode::Tanh,
    ];
    let failures: Vec<String> = modes
        .into_iter()
        .flat_map(|m| special_values(m, PointwiseParams::default()))
        .collect();
    assert!(
        failures.is_empty(),
        "{} special-value cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Relu on special values, with its default parameters (the engines' fast path) and with a
/// leaky slope.
#[test]
fn relu_special_values() {
    let mut failures = special_values(PointwiseMode::Relu, PointwiseParams::default());
    failures.extend(special_values(
        PointwiseMode::Relu,
        params_variant(PointwiseMode::Relu, 1),
    ));
    assert!(
        failures.is_empty(),
        "{} special-value cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Inputs drawn from a domain really reach it, so that log, sqrt and friends see positive
/// values (a test of the suite itself).
#[test]
fn domains_shape_the_inputs() {
    let mut g = Graph::new();
    let a = g.tensor(
        TensorAttributes::new()
            .name("a")
            .dim(&[64])
            .data_type(DataType::F32),
    );
    let y = g.pointwise(&a, None, kiln::PointwiseAttributes::new(PointwiseMode::Log));
    let mut case = Case::new("domain", g)
        .input(&a, Domain::POSITIVE)
        .output(&y);
    let session = Session::open(&mut case, 3).unwrap_or_else(|e| panic!("{e}"));
    let v = session.inputs()[0].to_f64_vec();
    assert!(v.iter().all(|&x| (0.5..2.0).contains(&x)), "{v:?}");
    assert!(v.iter().any(|&x| x != v[0]), "inputs must not be constant");
}
