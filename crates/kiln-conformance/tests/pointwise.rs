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
                let b = (mode.operand_count() >= 2)
                    .then(|| Operand::Tensor(TensorSpec::new(&[2, 1, 5], Layout::packed(), dt)));
                let c = (mode.operand_count() == 3).then(|| {
                    Operand::Tensor(TensorSpec::new(
                        &[1, 3, 5],
                        Layout::packed(),
                        DataType::Boolean,
                    ))
                });
                let spec = PointwiseSpec {
                    mode,
                    params,
                    a: Operand::Tensor(a),
                    b,
                    c,
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

/// The types a mode's operands may take beyond f32/f16/bf16: bool, i8, i32 where the mode
/// allows them (cuDNN's list), and the fp8 storage types everywhere.
const NEW_TYPES: [DataType; 5] = [
    DataType::Boolean,
    DataType::I8,
    DataType::I32,
    DataType::Fp8E4m3,
    DataType::Fp8E5m2,
];

/// Every mode with every new type as its input and as its output, where the mode allows it.
#[test]
fn every_mode_with_the_integral_and_fp8_types() {
    let mut runs = 0;
    for mode in PointwiseMode::ALL {
        for (i, dt) in NEW_TYPES.into_iter().enumerate() {
            if dt.is_integral() && !mode.allows_integral() {
                continue;
            }
            let a = TensorSpec::new(&[3, 4, 5], Layout::packed().with_padding(&[0, 1]), dt);
            let b = (mode.operand_count() >= 2).then(|| {
                Operand::Tensor(TensorSpec::new(&[3, 1, 5], Layout::packed(), DataType::F16))
            });
            let c = (mode.operand_count() == 3)
                .then(|| Operand::Tensor(TensorSpec::new(&[3, 4, 1], Layout::packed(), dt)));
            // A comparison or logical result stored as bool or an integer, else a float.
            let out_type = if dt.is_integral() && mode.allows_integral() {
                dt
            } else {
                DataType::Bf16
            };
            let spec = PointwiseSpec {
                mode,
                params: params_variant(mode, i as u8),
                a: Operand::Tensor(a),
                b,
                c,
                out_layout: Layout::channels_last(),
                out_type,
            };
            let outcome = assert_conforms(spec.case(), 11 + i as u64);
            assert!(
                common::cpu_engine_claimed(&outcome, POINTWISE),
                "{outcome:?}"
            );
            runs += outcome.runs;
        }
    }
    assert!(
        runs >= PointwiseMode::ALL.len() * 2,
        "only {runs} engine runs were compared"
    );
}

/// A mode that refuses integral tensors names the tensor and the mode.
#[test]
fn transcendental_modes_refuse_integral_tensors() {
    let mut g = Graph::new();
    let a = g.tensor(
        TensorAttributes::new()
            .name("ints")
            .dim(&[4])
            .data_type(DataType::I32),
    );
    let y = g.pointwise(
        &a,
        None,
        kiln::PointwiseAttributes::new(PointwiseMode::Sigmoid),
    );
    y.set_output(true).set_data_type(DataType::F32);
    let e = g.validate().expect_err("sigmoid of i32 must be refused");
    let msg = e.to_string();
    assert!(msg.contains("'ints'") && msg.contains("sigmoid"), "{msg}");
}

/// ONNX `test_clip_min_greater_than_max`: x = [-2, 0, 6], min 2, max 1 gives [1, 1, 1]. kiln's
/// relu follows cuDNN: the upper clip applies after the lower one.
#[test]
fn relu_with_the_lower_clip_above_the_upper_clip_is_onnx_clip() {
    let handle = kiln::Handle::cpu().unwrap();
    for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
        let mut g = Graph::new();
        let x = g.tensor(TensorAttributes::new().name("x").dim(&[3]).data_type(dt));
        let y = g.pointwise(
            &x,
            None,
            kiln::PointwiseAttributes::new(PointwiseMode::Relu)
                .relu_lower_clip(2.0)
                .relu_upper_clip(1.0),
        );
        y.set_output(true).set_data_type(dt);
        g.build(&handle, &[kiln::HeurMode::A]).unwrap();
        let mut hx = kiln::HostTensor::from_f32(&x, &[-2.0, 0.0, 6.0]).unwrap();
        let mut hy = kiln::HostTensor::for_tensor(&y).unwrap();
        let mut ws = kiln::Workspace::for_graph(&g).unwrap();
        let mut pack = kiln::VariantPack::new();
        pack.insert(&x, &mut hx).insert(&y, &mut hy);
        g.execute(&handle, &mut pack, &mut ws).unwrap();
        assert_eq!(hy.to_f64_vec(), vec![1.0, 1.0, 1.0], "{dt}");
        // The same case through the suite: every engine against the reference.
        let mut g = Graph::new();
        let x = g.tensor(TensorAttributes::new().name("x").dim(&[64]).data_type(dt));
        let y = g.pointwise(
            &x,
            None,
            kiln::PointwiseAttributes::new(PointwiseMode::Relu)
                .relu_lower_clip(2.0)
                .relu_upper_clip(1.0),
        );
        y.set_name("y");
        let case = Case::new(format!("relu lower 2 > upper 1 {dt}"), g)
            .input(&x, Domain::new(-4.0, 8.0))
            .output(&y)
            .expect_engine(POINTWISE);
        assert_conforms(case, 3);
    }
}

/// gen_index along every axis of ranks 1 to 4, into i32, f32 and bf16.
#[test]
fn gen_index_along_every_axis() {
    for rank in 1..=4usize {
        let dims: Vec<i64> = [5, 3, 7, 2][..rank].to_vec();
        for axis in 0..rank as i64 {
            for out_type in [DataType::I32, DataType::F32, DataType::Bf16] {
                let spec = PointwiseSpec {
                    mode: PointwiseMode::GenIndex,
                    params: PointwiseParams {
                        axis: Some(axis),
                        ..PointwiseParams::default()
                    },
                    a: Operand::Tensor(TensorSpec::new(&dims, Layout::transposed(), DataType::F16)),
                    b: None,
                    c: None,
                    out_layout: Layout::packed(),
                    out_type,
                };
                assert_conforms(spec.case(), axis as u64);
            }
        }
    }
}

/// A third operand against `a`: a bool, integer or float mask of the same dims or broadcast.
fn mask_operand(dims: Vec<i64>) -> impl Strategy<Value = Operand> {
    let rank = dims.len();
    (
        prop::collection::vec(any::<bool>(), rank),
        layout(rank),
        prop::sample::select(vec![
            DataType::Boolean,
            DataType::I8,
            DataType::F32,
            DataType::F16,
        ]),
    )
        .prop_map(move |(mask, l, dt)| {
            let d: Vec<i64> = dims
                .iter()
                .zip(&mask)
                .map(|(&d, &m)| if m { 1 } else { d })
                .collect();
            Operand::Tensor(TensorSpec::new(&d, l, dt))
        })
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
        let spec = PointwiseSpec { mode, params, a: Operand::Tensor(a), b: None, c: None, out_layout, out_type };
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
        let spec = PointwiseSpec { mode, params, a, b: Some(b), c: None, out_layout, out_type: out };
        conform(spec.case(), seed)?;
    }

    /// binary_select with a mask of any type and shape, values of any type, scalars on either
    /// value side.
    #[test]
    fn binary_select_conforms(
        ((a, other, swap), c) in tensor()
            .prop_flat_map(other_operand)
            .prop_flat_map(|(a, o, s)| { let d = a.dims.clone(); (Just((a, o, s)), mask_operand(d)) }),
        out_type in prop::sample::select(vec![DataType::F32, DataType::Bf16, DataType::Fp8E4m3, DataType::I32]),
        out_layout in layout(4),
        seed in any::<u64>(),
    ) {
        let (a, b) = if swap { (other, Operand::Tensor(a)) } else { (Operand::Tensor(a), other) };
        let spec = PointwiseSpec {
            mode: PointwiseMode::BinarySelect,
            params: PointwiseParams::default(),
            a,
            b: Some(b),
            c: Some(c),
            out_layout,
            out_type,
        };
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
            c: None,
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
