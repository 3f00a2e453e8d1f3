//! The normalization cases shared by `batchnorm.rs`, `batchnorm_backward.rs`, `layernorm.rs`,
//! `layernorm_backward.rs` and `rmsnorm_backward.rs`: one spec type for every norm, the graph
//! of each, and the direct f64 computations the reference is checked against.
//!
//! The direct computations are written independently of the reference engine: the forwards
//! from their definitions, the backwards as `dx = Jᵀ dy` with the Jacobian of the forward
//! written out element by element (`∂x̂_i/∂x_j = inv (δ_ij - 1/M - x̂_i x̂_j / M)`, rmsnorm
//! without `1/M`), over statistics the test computes itself from `x`.

use super::{data_type, dims, layout};
use kiln::{
    BatchnormAttributes, BatchnormInferenceAttributes, DataType, Graph, LayernormAttributes,
    NormBackwardAttributes, NormPhase, PointwiseAttributes, PointwiseMode,
    RmsnormBackwardAttributes, Tensor,
};
use kiln_conformance::{Case, Domain, Layout, Session, TensorSpec};
use proptest::prelude::*;

/// Which norm a [`NormSpec`] builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    Layernorm,
    LayernormBackward,
    RmsnormBackward,
    Batchnorm,
    BatchnormInference,
    BatchnormBackward,
}

impl Norm {
    /// Statistics per channel (dim 1) rather than per sample (dim 0).
    pub fn per_channel(self) -> bool {
        matches!(
            self,
            Norm::Batchnorm | Norm::BatchnormInference | Norm::BatchnormBackward
        )
    }

    fn is_backward(self) -> bool {
        matches!(
            self,
            Norm::LayernormBackward | Norm::RmsnormBackward | Norm::BatchnormBackward
        )
    }
}

/// The epsilon of every case whose statistics the test computes (the backwards): large enough
/// that two close values of a short row do not make `inv` huge and every gradient a residue of
/// cancellations.
pub const SAVED_EPSILON: f64 = 1e-3;

/// One norm node, optionally followed by a pointwise node on `y` (the fused chain).
#[derive(Debug, Clone)]
pub struct NormSpec {
    pub norm: Norm,
    pub x: TensorSpec,
    pub y_layout: Layout,
    pub epsilon: f64,
    pub epsilon_as_scalar: bool,
    /// Layernorm: training; batchnorm: running statistics; rmsnorm_backward: dbias.
    pub variant: bool,
    pub momentum: f64,
    /// A unary pointwise mode applied to `y` (forwards only).
    pub then: Option<PointwiseMode>,
    /// Saved statistics (the backwards' inputs) in f64 rather than f32: the oracle test, where
    /// f32 rounding of the statistics would move an ill-conditioned gradient away from the
    /// Jacobian of the true statistics (only the reference takes f64).
    pub exact_stats: bool,
}

/// The parameter dims (`scale`, `bias`, `dscale`, ...) for x of dims `x`.
pub fn param_dims(norm: Norm, x: &[i64]) -> Vec<i64> {
    x.iter()
        .enumerate()
        .map(|(i, &d)| match (norm.per_channel(), i) {
            (true, 1) | (false, 1..) => d,
            _ => 1,
        })
        .collect()
}

/// The statistic dims (`mean`, `inv_variance`, `inv_rms`).
pub fn stat_dims(norm: Norm, x: &[i64]) -> Vec<i64> {
    x.iter()
        .enumerate()
        .map(|(i, &d)| match (norm.per_channel(), i) {
            (true, 1) | (false, 0) => d,
            _ => 1,
        })
        .collect()
}

impl NormSpec {
    /// The case. Inputs, in order: forwards `x, scale, bias` (batchnorm_inference `x, mean,
    /// inv_variance, scale, bias`; batchnorm with running statistics adds `prev_mean,
    /// prev_var`); backwards `dy, x, scale, [mean,] inv`. Outputs: in the order of the
    /// operation's ports (the chain's result instead of `y` when there is one).
    pub fn case(&self) -> Case {
        let mut g = Graph::new();
        let dt = self.x.data_type;
        let params = TensorSpec::new(&param_dims(self.norm, &self.x.dims), Layout::packed(), dt);
        let stats_type = if self.exact_stats && self.norm.is_backward() {
            DataType::F64
        } else {
            DataType::F32
        };
        let stats = TensorSpec::new(
            &stat_dims(self.norm, &self.x.dims),
            Layout::packed(),
            stats_type,
        );
        let mut inputs: Vec<(Tensor, Domain)> = Vec::new();
        let mut outputs: Vec<Tensor> = Vec::new();
        let takes_epsilon = matches!(self.norm, Norm::Layernorm | Norm::Batchnorm);
        let eps = (self.epsilon_as_scalar && takes_epsilon).then(|| g.scalar(self.epsilon));
        let mut y = None;
        match self.norm {
            Norm::Layernorm => {
                let x = self.x.add_to(&mut g, "x");
                let scale = params.add_to(&mut g, "scale");
                let bias = params.add_to(&mut g, "bias");
                let mut a = LayernormAttributes::new().name("norm");
                a = match &eps {
                    Some(e) => a.epsilon_tensor(e),
                    None => a.epsilon(self.epsilon),
                };
                if self.variant {
                    a = a.forward_phase(NormPhase::Training);
                }
                let out = g.layernorm(&x, &scale, &bias, a).expect("layernorm node");
                inputs.extend([
                    (x, Domain::WIDE),
                    (scale, Domain::SYMMETRIC),
                    (bias, Domain::SYMMETRIC),
                ]);
                y = Some(out.y);
                outputs.extend(out.mean.into_iter().chain(out.inv_variance));
            }
            Norm::Batchnorm => {
                let x = self.x.add_to(&mut g, "x");
                let scale = params.add_to(&mut g, "scale");
                let bias = params.add_to(&mut g, "bias");
                let mut a = BatchnormAttributes::new().name("norm");
                a = match &eps {
                    Some(e) => a.epsilon_tensor(e),
                    None => a.epsilon(self.epsilon),
                };
                inputs.extend([
                    (x.clone(), Domain::WIDE),
                    (scale.clone(), Domain::SYMMETRIC),
                    (bias.clone(), Domain::SYMMETRIC),
                ]);
                if self.variant {
                    let pm = stats.add_to(&mut g, "prev_mean");
                    let pv = stats.add_to(&mut g, "prev_var");
                    a = if self.epsilon_as_scalar {
                        let m = g.scalar(self.momentum);
                        a.previous_running_stats_tensor(&pm, &pv, &m)
                    } else {
                        a.previous_running_stats(&pm, &pv, self.momentum)
                    };
                    inputs.extend([(pm, Domain::SYMMETRIC), (pv, Domain::POSITIVE)]);
                }
                let out = g.batchnorm(&x, &scale, &bias, a).expect("batchnorm node");
                y = Some(out.y);
                out.mean.set_data_type(DataType::F32);
                out.inv_variance.set_data_type(DataType::F32);
                outputs.extend([out.mean, out.inv_variance]);
                outputs.extend(
                    out.next_running_mean
                        .into_iter()
                        .chain(out.next_running_var),
                );
            }
            Norm::BatchnormInference => {
                let x = self.x.add_to(&mut g, "x");
                let mean = stats.add_to(&mut g, "mean");
                let inv = stats.add_to(&mut g, "inv_variance");
                let scale = params.add_to(&mut g, "scale");
                let bias = params.add_to(&mut g, "bias");
                let a = BatchnormInferenceAttributes::new().name("norm");
                y = Some(
                    g.batchnorm_inference(&x, &mean, &inv, &scale, &bias, a)
                        .expect("batchnorm_inference node"),
                );
                inputs.extend([
                    (x, Domain::WIDE),
                    (mean, Domain::SYMMETRIC),
                    (inv, Domain::POSITIVE),
                    (scale, Domain::SYMMETRIC),
                    (bias, Domain::SYMMETRIC),
                ]);
            }
            Norm::LayernormBackward | Norm::BatchnormBackward | Norm::RmsnormBackward => {
                let dy = self.x.add_to(&mut g, "dy");
                let x =
                    TensorSpec::new(&self.x.dims, self.y_layout.clone(), dt).add_to(&mut g, "x");
                let scale = params.add_to(&mut g, "scale");
                inputs.extend([
                    (dy.clone(), Domain::SYMMETRIC),
                    (x.clone(), Domain::WIDE),
                    (scale.clone(), Domain::SYMMETRIC),
                ]);
                let out = if self.norm == Norm::RmsnormBackward {
                    let inv = stats.add_to(&mut g, "inv_rms");
                    inputs.push((inv.clone(), Domain::POSITIVE));
                    let a = RmsnormBackwardAttributes::new()
                        .name("norm")
                        .has_dbias(self.variant);
                    g.rmsnorm_backward(&dy, &x, &scale, &inv, a)
                } else {
                    let mean = stats.add_to(&mut g, "mean");
                    let inv = stats.add_to(&mut g, "inv_variance");
                    inputs.extend([
                        (mean.clone(), Domain::SYMMETRIC),
                        (inv.clone(), Domain::POSITIVE),
                    ]);
                    let a = NormBackwardAttributes::new()
                        .name("norm")
                        .saved_mean_and_inv_variance(&mean, &inv);
                    if self.norm == Norm::LayernormBackward {
                        g.layernorm_backward(&dy, &x, &scale, a)
                    } else {
                        g.batchnorm_backward(&dy, &x, &scale, a)
                    }
                }
                .expect("backward node");
                out.dx.set_stride(&self.x.layout.strides(&self.x.dims));
                outputs.extend([out.dx, out.dscale]);
                outputs.extend(out.dbias);
            }
        }
        if let Some(y) = y {
            y.set_stride(&self.y_layout.strides(&self.x.dims));
            let last = match self.then {
                Some(mode) => {
                    y.set_data_type(DataType::F32);
                    let z = g.pointwise(&y, None, PointwiseAttributes::new(mode).name("then"));
                    z.set_stride(&self.y_layout.strides(&self.x.dims))
                        .set_data_type(dt);
                    z
                }
                None => y,
            };
            outputs.insert(0, last);
        }
        let mut case = Case::new(format!("{self:?}"), g);
        for (t, d) in &inputs {
            case = case.input(t, *d);
        }
        for t in &outputs {
            case = case.output(t);
        }
        let terms = if self.norm.per_channel() {
            self.x.dims.iter().product::<i64>() / self.x.dims[1]
        } else {
            self.x.dims[1..].iter().product::<i64>().max(self.x.dims[0])
        };
        let depth = if self.norm.is_backward() { 4 } else { 3 };
        let case = case.terms(terms as usize).depth(depth);
        if stats_type == DataType::F64 {
            case
        } else {
            case.expect_engine(kiln_conformance::NORM)
        }
    }

    /// Replaces a backward case's saved statistics by the true statistics of its `x` (so that
    /// the direct Jacobian applies and the cancellations are those of real training).
    pub fn set_saved_stats(&self, session: &mut Session<'_>) -> Result<(), String> {
        if !self.norm.is_backward() {
            return Ok(());
        }
        let x = session.inputs()[1].to_f64_vec();
        let stats = Stats::of(self.norm, &self.x.dims, &x, SAVED_EPSILON);
        if self.norm == Norm::RmsnormBackward {
            session.set_input_values(3, &stats.inv)
        } else {
            session.set_input_values(3, &stats.mean)?;
            session.set_input_values(4, &stats.inv)
        }
    }
}

/// The groups of values sharing one statistic: for each, its (flat index, parameter index)
/// pairs, row-major.
pub fn groups(norm: Norm, dims: &[i64]) -> Vec<Vec<(usize, usize)>> {
    let total: usize = dims.iter().product::<i64>() as usize;
    if norm.per_channel() {
        let c = dims[1] as usize;
        let spatial = total / (dims[0] as usize * c);
        (0..c)
            .map(|ch| {
                (0..total)
                    .filter(|i| (i / spatial) % c == ch)
                    .map(|i| (i, ch))
                    .collect()
            })
            .collect()
    } else {
        let n = dims[0] as usize;
        let inner = total / n;
        (0..n)
            .map(|s| (0..inner).map(|i| (s * inner + i, i)).collect())
            .collect()
    }
}

/// Per-group statistics computed by the test.
pub struct Stats {
    pub mean: Vec<f64>,
    /// Biased variance (rmsnorm: mean of squares).
    pub var: Vec<f64>,
    pub inv: Vec<f64>,
}

impl Stats {
    /// The statistics of `x` for `norm` (rmsnorm_backward: mean 0, mean of squares).
    pub fn of(norm: Norm, dims: &[i64], x: &[f64], eps: f64) -> Stats {
        let gs = groups(norm, dims);
        let rms = norm == Norm::RmsnormBackward;
        let mut s = Stats {
            mean: vec![],
            var: vec![],
            inv: vec![],
        };
        for g in &gs {
            let m = g.len() as f64;
            let mean = if rms {
                0.0
            } else {
                g.iter().map(|&(i, _)| x[i]).sum::<f64>() / m
            };
            let var = g.iter().map(|&(i, _)| (x[i] - mean).powi(2)).sum::<f64>() / m;
            s.mean.push(mean);
            s.var.push(var);
            s.inv.push(1.0 / (var + eps).sqrt());
        }
        s
    }
}

/// `y = (x - mean) * inv * scale + bias` directly, from the given or computed statistics.
pub fn forward(
    norm: Norm,
    dims: &[i64],
    x: &[f64],
    mean: &[f64],
    inv: &[f64],
    scale: &[f64],
    bias: &[f64],
) -> Vec<f64> {
    let mut y = vec![f64::NAN; x.len()];
    for (k, g) in groups(norm, dims).iter().enumerate() {
        for &(i, p) in g {
            y[i] = (x[i] - mean[k]) * inv[k] * scale[p] + bias[p];
        }
    }
    y
}

/// `dx`, `dscale`, `dbias` of a backward case from its inputs, through the Jacobian of the
/// forward over statistics computed here from `x`.
pub fn backward(
    norm: Norm,
    dims: &[i64],
    dy: &[f64],
    x: &[f64],
    scale: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let stats = Stats::of(norm, dims, x, SAVED_EPSILON);
    let rms = norm == Norm::RmsnormBackward;
    let params = scale.len();
    let mut dx = vec![0.0; x.len()];
    let (mut dscale, mut dbias) = (vec![0.0; params], vec![0.0; params]);
    for (k, g) in groups(norm, dims).iter().enumerate() {
        let m = g.len() as f64;
        let xhat = |i: usize| (x[i] - stats.mean[k]) * stats.inv[k];
        for &(j, _) in g {
            let mut sum = 0.0;
            for &(i, p) in g {
                let delta = if i == j { 1.0 } else { 0.0 };
                let centre = if rms { 0.0 } else { 1.0 / m };
                let jac = stats.inv[k] * (delta - centre - xhat(i) * xhat(j) / m);
                sum += dy[i] * scale[p] * jac;
            }
            dx[j] = sum;
        }
        for &(i, p) in g {
            dscale[p] += dy[i] * xhat(i);
            dbias[p] += dy[i];
        }
    }
    (dx, dscale, dbias)
}

/// Forward norms of rank 2 to 4 (dims up to `max`), any layout and type, both epsilon forms,
/// the variant on or off, sometimes a trailing relu/tanh/sigmoid.
pub fn norm_spec(norm: Norm, max: i64) -> impl Strategy<Value = NormSpec> {
    (2usize..=4).prop_flat_map(move |rank| {
        (
            dims(rank, max),
            layout(rank),
            data_type(),
            layout(rank),
            prop_oneof![Just(1e-5), Just(1e-3), Just(0.5)],
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(0.1), Just(0.5), Just(1.0)],
            prop_oneof![
                3 => Just(None),
                1 => Just(Some(PointwiseMode::Relu)),
                1 => Just(Some(PointwiseMode::Tanh)),
                1 => Just(Some(PointwiseMode::Sigmoid)),
            ],
        )
            .prop_map(
                move |(d, l, dt, yl, epsilon, as_scalar, variant, momentum, then)| NormSpec {
                    norm,
                    x: TensorSpec::new(&d, l, dt),
                    y_layout: yl,
                    epsilon,
                    epsilon_as_scalar: as_scalar,
                    variant,
                    momentum,
                    then: then.filter(|_| !norm.is_backward()),
                    exact_stats: false,
                },
            )
            .prop_filter("running statistics need two values per channel", move |s| {
                !(s.norm == Norm::Batchnorm && s.variant)
                    || s.x.dims.iter().product::<i64>() / s.x.dims[1] >= 2
            })
    })
}

fn then_f64(mode: Option<PointwiseMode>, v: f64) -> f64 {
    match mode {
        None => v,
        Some(PointwiseMode::Relu) => v.max(0.0),
        Some(PointwiseMode::Tanh) => v.tanh(),
        Some(PointwiseMode::Sigmoid) => 1.0 / (1.0 + (-v).exp()),
        Some(m) => panic!("the norm cases use relu, tanh and sigmoid only, not {m:?}"),
    }
}

/// Runs the case on every engine that claims it (saved statistics made true first).
pub fn conform_norm(
    spec: &NormSpec,
    seed: u64,
) -> Result<kiln_conformance::Outcome, proptest::test_runner::TestCaseError> {
    use proptest::test_runner::TestCaseError;
    let mut case = spec.case();
    let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
    spec.set_saved_stats(&mut session)
        .map_err(TestCaseError::fail)?;
    kiln_conformance::check_session(&mut session).map_err(TestCaseError::fail)
}

/// The oracle itself: every output of the reference equals the direct computation.
pub fn reference_is_right(
    spec: &NormSpec,
    seed: u64,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use kiln_conformance::compare::compare_values;
    use proptest::test_runner::TestCaseError;
    let spec = &NormSpec {
        exact_stats: true,
        ..spec.clone()
    };
    let mut case = spec.case();
    let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
    spec.set_saved_stats(&mut session)
        .map_err(TestCaseError::fail)?;
    let ins: Vec<Vec<f64>> = session.inputs().iter().map(|t| t.to_f64_vec()).collect();
    let outs = session
        .run(kiln_conformance::REFERENCE)
        .map_err(TestCaseError::fail)?;
    let dims = &spec.x.dims;
    let mut want: Vec<Vec<f64>> = Vec::new();
    let push_y = |y: Vec<f64>, want: &mut Vec<Vec<f64>>| {
        want.push(y.into_iter().map(|v| then_f64(spec.then, v)).collect())
    };
    match spec.norm {
        Norm::Layernorm | Norm::Batchnorm => {
            let s = Stats::of(spec.norm, dims, &ins[0], spec.epsilon);
            push_y(
                forward(spec.norm, dims, &ins[0], &s.mean, &s.inv, &ins[1], &ins[2]),
                &mut want,
            );
            if spec.norm == Norm::Batchnorm || spec.variant {
                want.push(s.mean.clone());
                want.push(s.inv.clone());
            }
            if spec.norm == Norm::Batchnorm && spec.variant {
                let m = (ins[0].len() / s.mean.len()) as f64;
                let mo = spec.momentum;
                let mix = |prev: &[f64], stat: &[f64], f: f64| -> Vec<f64> {
                    prev.iter()
                        .zip(stat)
                        .map(|(p, s)| (1.0 - mo) * p + mo * s * f)
                        .collect()
                };
                want.push(mix(&ins[3], &s.mean, 1.0));
                want.push(mix(&ins[4], &s.var, m / (m - 1.0)));
            }
        }
        Norm::BatchnormInference => push_y(
            forward(spec.norm, dims, &ins[0], &ins[1], &ins[2], &ins[3], &ins[4]),
            &mut want,
        ),
        Norm::LayernormBackward | Norm::BatchnormBackward | Norm::RmsnormBackward => {
            let (dx, dscale, dbias) = backward(spec.norm, dims, &ins[0], &ins[1], &ins[2]);
            want.push(dx);
            want.push(dscale);
            if spec.norm != Norm::RmsnormBackward || spec.variant {
                want.push(dbias);
            }
        }
    }
    prop_assert_eq!(outs.len(), want.len());
    let name = session.case().name().to_string();
    for (got, want) in outs.iter().zip(&want) {
        let tol = session.case().tolerance_for(got.desc().data_type);
        compare_values(
            &format!("reference on '{name}' vs direct"),
            got.desc(),
            &got.to_f64_vec(),
            want,
            tol,
        )
        .map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// A packed f32 spec of `norm` on `dims` (the variant on), for the fixed tests.
pub fn fixed(norm: Norm, dims: &[i64], layout: Layout) -> NormSpec {
    NormSpec {
        norm,
        x: TensorSpec::new(dims, layout, DataType::F32),
        y_layout: Layout::packed(),
        epsilon: 1e-5,
        epsilon_as_scalar: false,
        variant: true,
        momentum: 0.1,
        then: None,
        exact_stats: false,
    }
}
