//! rmsnorm (a node with two outputs) over random shapes, layouts and types, with and without
//! bias, epsilon as an attribute or a by-value scalar, in training and inference; on every engine
//! that claims it; and the reference's y and inv_rms checked against a direct computation here.

mod common;

use common::{config, conform, data_type, dims, layout};
use kiln::{Graph, NormPhase, RmsnormAttributes, TensorAttributes};
use kiln_conformance::compare::compare_values;
use kiln_conformance::{Case, Domain, Layout, Session, TensorSpec, NORM, REFERENCE};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// One rmsnorm node.
#[derive(Debug, Clone)]
struct RmsnormSpec {
    x: TensorSpec,
    bias: bool,
    epsilon: f64,
    epsilon_as_scalar: bool,
    training: bool,
    y_layout: Layout,
}

impl RmsnormSpec {
    fn param_dims(&self) -> Vec<i64> {
        let mut d = self.x.dims.clone();
        d[0] = 1;
        d
    }

    /// The case: inputs x, scale (and bias); outputs y (and inv_rms), in that order.
    fn case(&self) -> Case {
        let mut g = Graph::new();
        let x = self.x.add_to(&mut g, "x");
        let param = TensorSpec::new(&self.param_dims(), Layout::packed(), self.x.data_type);
        let scale = param.add_to(&mut g, "scale");
        let bias = self.bias.then(|| param.add_to(&mut g, "bias"));
        let mut attrs = RmsnormAttributes::new().name("norm");
        attrs = if self.epsilon_as_scalar {
            let eps = g.scalar(self.epsilon);
            attrs.epsilon_tensor(&eps)
        } else {
            attrs.epsilon(self.epsilon)
        };
        if let Some(b) = &bias {
            attrs = attrs.bias(b);
        }
        if self.training {
            attrs = attrs.forward_phase(NormPhase::Training);
        }
        let out = g.rmsnorm(&x, &scale, attrs).expect("rmsnorm node");
        out.y.set_stride(&self.y_layout.strides(&self.x.dims));
        let mut case = Case::new(format!("{self:?}"), g)
            .input(&x, Domain::WIDE)
            .input(&scale, Domain::SYMMETRIC);
        if let Some(b) = &bias {
            case = case.input(b, Domain::SYMMETRIC);
        }
        case = case.output(&out.y);
        if let Some(r) = &out.inv_rms {
            case = case.output(r);
        }
        let inner: i64 = self.x.dims[1..].iter().product();
        case.terms(inner as usize).depth(2).expect_engine(NORM)
    }
}

fn rmsnorm() -> impl Strategy<Value = RmsnormSpec> {
    (2usize..=4).prop_flat_map(|rank| {
        (
            dims(rank, 6),
            layout(rank),
            data_type(),
            any::<bool>(),
            prop_oneof![Just(1e-5), Just(1e-3), Just(0.5)],
            any::<bool>(),
            any::<bool>(),
            layout(rank),
        )
            .prop_map(|(d, l, dt, bias, epsilon, as_scalar, training, y_layout)| {
                RmsnormSpec {
                    x: TensorSpec::new(&d, l, dt),
                    bias,
                    epsilon,
                    epsilon_as_scalar: as_scalar,
                    training,
                    y_layout,
                }
            })
    })
}

/// y and inv_rms computed directly from row-major x, scale and bias, in f64.
fn direct(
    spec: &RmsnormSpec,
    x: &[f64],
    scale: &[f64],
    bias: Option<&[f64]>,
) -> (Vec<f64>, Vec<f64>) {
    let n = spec.x.dims[0] as usize;
    let inner = x.len() / n;
    let mut y = vec![0.0; x.len()];
    let mut inv = vec![0.0; n];
    for s in 0..n {
        let mut sum_sq = 0.0;
        for i in 0..inner {
            sum_sq += x[s * inner + i].powi(2);
        }
        inv[s] = (sum_sq / inner as f64 + spec.epsilon).sqrt().recip();
        for i in 0..inner {
            let b = bias.map_or(0.0, |b| b[i]);
            y[s * inner + i] = x[s * inner + i] * inv[s] * scale[i] + b;
        }
    }
    (y, inv)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rmsnorm_conforms(spec in rmsnorm(), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    /// The oracle itself: the reference's y and inv_rms equal a direct computation.
    #[test]
    fn reference_rmsnorm_is_right(spec in rmsnorm(), seed in any::<u64>()) {
        let mut case = spec.case();
        let tol = case.tolerance_for(spec.x.data_type);
        let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
        let inputs: Vec<Vec<f64>> = session.inputs().iter().map(|t| t.to_f64_vec()).collect();
        let outs = session.run(REFERENCE).map_err(TestCaseError::fail)?;
        prop_assert_eq!(outs.len(), if spec.training { 2 } else { 1 });
        let (y, inv) = direct(&spec, &inputs[0], &inputs[1], inputs.get(2).map(|b| &b[..]));
        let name = session.case().name().to_string();
        compare_values(&format!("reference y on '{name}' vs direct"), outs[0].desc(), &outs[0].to_f64_vec(), &y, tol)
            .map_err(TestCaseError::fail)?;
        if spec.training {
            compare_values(&format!("reference inv_rms on '{name}' vs direct"), outs[1].desc(), &outs[1].to_f64_vec(), &inv, tol)
                .map_err(TestCaseError::fail)?;
        }
    }
}

/// The norm engine and the reference claim rmsnorm; the other optimized CPU engines decline it.
#[test]
fn the_norm_engine_claims_rmsnorm() {
    let spec = RmsnormSpec {
        x: TensorSpec::new(&[3, 4, 5], Layout::packed(), kiln::DataType::F32),
        bias: true,
        epsilon: 1e-5,
        epsilon_as_scalar: false,
        training: true,
        y_layout: Layout::packed(),
    };
    let mut case = spec.case();
    let session = Session::open(&mut case, 7).expect("session");
    // The norm engine of the device under test: the CPU's, or the CUDA provider's on a GPU.
    let norm = match kiln_conformance::device_under_test().expect("device") {
        kiln::Device::Cpu => NORM,
        _ => "KILN_CUDA_NORM_V1",
    };
    let mut claimed = session.claimed();
    claimed.sort_unstable();
    let mut want = vec![norm, REFERENCE];
    want.sort_unstable();
    assert_eq!(claimed, want);
}

/// A known example: x = [[3, 4]] (rank 2), scale 1, epsilon 0: rms = sqrt(12.5).
#[test]
fn a_worked_example() {
    let handle = kiln::Handle::cpu().unwrap();
    let mut g = Graph::new();
    let f32 = |n: &str, d: &[i64]| {
        TensorAttributes::new()
            .name(n)
            .dim(d)
            .data_type(kiln::DataType::F32)
    };
    let x = g.tensor(f32("x", &[1, 2]));
    let scale = g.tensor(f32("scale", &[1, 2]));
    let out = g
        .rmsnorm(
            &x,
            &scale,
            RmsnormAttributes::new()
                .epsilon(0.0)
                .forward_phase(NormPhase::Training),
        )
        .unwrap();
    out.y.set_output(true);
    let inv = out.inv_rms.expect("training writes inv_rms");
    inv.set_output(true);
    g.build(&handle, &[kiln::HeurMode::A]).unwrap();
    let mut hx = kiln::HostTensor::from_f32(&x, &[3.0, 4.0]).unwrap();
    let mut hs = kiln::HostTensor::from_f32(&scale, &[1.0, 2.0]).unwrap();
    let mut hy = kiln::HostTensor::for_tensor(&out.y).unwrap();
    let mut hi = kiln::HostTensor::for_tensor(&inv).unwrap();
    let mut ws = kiln::Workspace::for_graph(&g).unwrap();
    let mut pack = kiln::VariantPack::new();
    pack.insert(&x, &mut hx)
        .insert(&scale, &mut hs)
        .insert(&out.y, &mut hy)
        .insert(&inv, &mut hi);
    g.execute(&handle, &mut pack, &mut ws).unwrap();
    drop(pack);
    let r = 12.5f64.sqrt();
    let y = hy.to_f32_vec();
    assert!(
        (f64::from(y[0]) - 3.0 / r).abs() < 1e-6 && (f64::from(y[1]) - 8.0 / r).abs() < 1e-6,
        "{y:?}"
    );
    assert!((f64::from(hi.to_f32_vec()[0]) - 1.0 / r).abs() < 1e-6);
}
