//! Scaled dot-product attention, forward and backward, over random shapes (GQA/MQA included),
//! layouts (B,H,S,D, B,S,H,D and random permutations), types, scales (value, by-value scalar,
//! tensor), biases (full and broadcast), padding lengths and masks (causal top-left and
//! bottom-right, sliding windows, diagonal bands); on every engine that claims it. The reference
//! itself is checked against a naive softmax(q k^T) v written here with its own mask predicate,
//! and its backward against central finite differences of that naive forward.

mod common;

use common::{config, config_with, conform, data_type, layout};
use kiln::{
    DataType, DiagonalAlignment, Graph, SdpaAttributes, SdpaBackwardAttributes, Tensor,
    TensorAttributes,
};
use kiln_conformance::compare::compare_values;
use kiln_conformance::{
    device_under_test, Case, Domain, Layout, Session, TensorSpec, Tolerance, CUDA_SDPA,
    CUDA_SDPA_FA3, CUDA_SDPA_FA3_BWD, REFERENCE, SDPA,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// How the scale reaches the node.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Value,
    Scalar,
    Tensor,
}

/// Which bias, if any: full dims or broadcast over some of batch, heads and rows.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bias {
    None,
    Full,
    PerHead,
    PerBatchKey,
}

/// The diagonal band.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mask {
    alignment: DiagonalAlignment,
    left: Option<i64>,
    right: Option<i64>,
}

/// One attention node (forward, or backward with its forward's operands as inputs).
#[derive(Debug, Clone)]
struct SdpaSpec {
    batch: usize,
    heads_kv: usize,
    group: usize,
    seq_q: usize,
    seq_kv: usize,
    dim: usize,
    dim_v: usize,
    dt: DataType,
    layouts: [Layout; 4],
    scale: Scale,
    scale_value: f64,
    bias: Bias,
    padding: bool,
    mask: Mask,
    stats: bool,
}

impl SdpaSpec {
    fn heads_q(&self) -> usize {
        self.heads_kv * self.group
    }
    fn q_dims(&self) -> Vec<i64> {
        dims4(self.batch, self.heads_q(), self.seq_q, self.dim)
    }
    fn k_dims(&self) -> Vec<i64> {
        dims4(self.batch, self.heads_kv, self.seq_kv, self.dim)
    }
    fn v_dims(&self) -> Vec<i64> {
        dims4(self.batch, self.heads_kv, self.seq_kv, self.dim_v)
    }
    fn o_dims(&self) -> Vec<i64> {
        dims4(self.batch, self.heads_q(), self.seq_q, self.dim_v)
    }
    fn bias_dims(&self) -> Option<Vec<i64>> {
        let (b, h, s, k) = (self.batch, self.heads_q(), self.seq_q, self.seq_kv);
        match self.bias {
            Bias::None => None,
            Bias::Full => Some(dims4(b, h, s, k)),
            Bias::PerHead => Some(dims4(1, h, s, k)),
            Bias::PerBatchKey => Some(dims4(b, 1, 1, k)),
        }
    }

    fn tensor(&self, g: &mut Graph, name: &str, dims: &[i64], layout: &Layout) -> Tensor {
        TensorSpec::new(dims, layout.clone(), self.dt).add_to(g, name)
    }

    /// The extra inputs (scale tensor, bias, lengths), declared on `case` in this order, and the
    /// attributes' shared part applied through `apply`.
    fn extras(&self, g: &mut Graph) -> Extras {
        let f32 = |g: &mut Graph, name: &str, dims: &[i64]| {
            g.tensor(
                TensorAttributes::new()
                    .name(name)
                    .dim(dims)
                    .data_type(DataType::F32),
            )
        };
        let scale = match self.scale {
            Scale::Value => None,
            Scale::Scalar => Some((g.scalar(self.scale_value), false)),
            Scale::Tensor => Some((f32(g, "attn_scale", &[1, 1, 1, 1]), true)),
        };
        let bias = self
            .bias_dims()
            .map(|d| self.tensor(g, "bias", &d, &Layout::packed()));
        let lens = self.padding.then(|| {
            let d = dims4(self.batch, 1, 1, 1);
            (f32(g, "seq_len_q", &d), f32(g, "seq_len_kv", &d))
        });
        Extras { scale, bias, lens }
    }

    /// Whether the CUDA engine must claim the case: when a CUDA device is under test, for
    /// f16/bf16 with head dims that are multiples of 16 up to 256.
    fn cuda_claims(&self) -> bool {
        matches!(device_under_test(), Ok(kiln::Device::Cuda(_)))
            && self.dt != DataType::F32
            && [self.dim, self.dim_v]
                .iter()
                .all(|&d| d % 16 == 0 && d <= 256)
    }

    /// Whether the Hopper forward engine must claim the forward case: on a CUDA device of
    /// compute capability 9.0 (`KILN_CONFORMANCE_ARCH=90`, which the GPU runner sets from
    /// nvidia-smi), for f16/bf16 without a bias, equal head dims of 64, 128 or 256, and q, k, v
    /// whose head dim is contiguous and whose other strides are multiples of 8 elements.
    fn fa3_claims(&self) -> bool {
        let hopper = std::env::var("KILN_CONFORMANCE_ARCH").is_ok_and(|a| a == "90");
        let tma = |dims: &[i64], layout: &Layout| {
            let st = layout.strides(dims);
            st[3] == 1 && (0..3).all(|i| dims[i] == 1 || (st[i] > 0 && st[i] % 8 == 0))
        };
        hopper
            && self.cuda_claims()
            && self.bias == Bias::None
            && self.dim == self.dim_v
            && [64, 128, 256].contains(&self.dim)
            && tma(&self.q_dims(), &self.layouts[0])
            && tma(&self.k_dims(), &self.layouts[1])
            && tma(&self.v_dims(), &self.layouts[2])
    }

    /// Whether the Hopper backward engine must claim the backward case: the forward's rule
    /// with head dims 64 or 128, and do (o's layout) laid out for the copy engine too.
    fn fa3_backward_claims(&self) -> bool {
        let st = self.layouts[3].strides(&self.o_dims());
        let dims = self.o_dims();
        self.fa3_claims()
            && [64, 128].contains(&self.dim)
            && st[3] == 1
            && (0..3).all(|i| dims[i] == 1 || (st[i] > 0 && st[i] % 8 == 0))
    }

    fn expectations(&self, case: Case) -> Case {
        let case = case.expect_engine(SDPA);
        if self.cuda_claims() {
            case.expect_engine(CUDA_SDPA)
        } else {
            case
        }
    }

    fn tolerance(&self, backward: bool) -> Tolerance {
        let d = self.dim.max(self.dim_v);
        let (terms, depth, extra) = if backward {
            let t = self.seq_q * self.group + self.seq_kv + d;
            (t, 3, 4.0 * (t as f64).sqrt())
        } else {
            (self.seq_kv + d, 2, 2.0 * (self.seq_kv as f64).sqrt())
        };
        let mut tol = Tolerance::for_output(self.dt, terms, depth);
        // Engines may round P (and dS) to the input type before their second product, as
        // FlashAttention does on tensor cores.
        if self.dt != DataType::F32 {
            tol.atol += extra * self.dt.epsilon();
        }
        tol
    }

    /// The forward case: inputs q, k, v, then the extras; outputs o (and stats).
    fn forward_case(&self) -> Case {
        let mut g = Graph::new();
        let q = self.tensor(&mut g, "q", &self.q_dims(), &self.layouts[0]);
        let k = self.tensor(&mut g, "k", &self.k_dims(), &self.layouts[1]);
        let v = self.tensor(&mut g, "v", &self.v_dims(), &self.layouts[2]);
        let x = self.extras(&mut g);
        let attrs = x.apply_forward(self, SdpaAttributes::new().name("attention"));
        let out = g
            .sdpa(&q, &k, &v, attrs.generate_stats(self.stats))
            .expect("sdpa node");
        out.o.set_stride(&self.layouts[3].strides(&self.o_dims()));
        let mut case = Case::new(format!("{self:?}"), g)
            .input(&q, Domain::SYMMETRIC)
            .input(&k, Domain::SYMMETRIC)
            .input(&v, Domain::SYMMETRIC);
        case = x.declare(self, case);
        case = case.output(&out.o);
        if let Some(s) = &out.stats {
            case = case.output(s).allow_non_finite();
        }
        let case = self.expectations(case.tolerance(self.tolerance(false)));
        if self.fa3_claims() {
            case.expect_engine(CUDA_SDPA_FA3)
        } else {
            case
        }
    }

    /// The backward case: inputs q, k, v, o, do, stats, then the extras; outputs dq, dk, dv.
    fn backward_case(&self) -> Case {
        let mut g = Graph::new();
        let q = self.tensor(&mut g, "q", &self.q_dims(), &self.layouts[0]);
        let k = self.tensor(&mut g, "k", &self.k_dims(), &self.layouts[1]);
        let v = self.tensor(&mut g, "v", &self.v_dims(), &self.layouts[2]);
        let o = self.tensor(&mut g, "o", &self.o_dims(), &self.layouts[3]);
        let d_o = self.tensor(&mut g, "do", &self.o_dims(), &self.layouts[3]);
        let stats_dims = dims4(self.batch, self.heads_q(), self.seq_q, 1);
        let stats = g.tensor(
            TensorAttributes::new()
                .name("stats")
                .dim(&stats_dims)
                .data_type(DataType::F32),
        );
        let x = self.extras(&mut g);
        let attrs = x.apply_backward(self, SdpaBackwardAttributes::new().name("attention_bwd"));
        let out = g
            .sdpa_backward(&q, &k, &v, &o, &d_o, &stats, attrs)
            .expect("sdpa_backward node");
        let mut case = Case::new(format!("backward {self:?}"), g)
            .input(&q, Domain::SYMMETRIC)
            .input(&k, Domain::SYMMETRIC)
            .input(&v, Domain::SYMMETRIC)
            .input(&o, Domain::SYMMETRIC.scaled(0.5))
            .input(&d_o, Domain::SYMMETRIC)
            // Log-sum-exps of rows of about seq_kv scores of magnitude below 1.
            .input(&stats, Domain::new(0.0, 1.0 + (self.seq_kv as f64).ln()));
        case = x.declare(self, case);
        let case = case
            .output(&out.dq)
            .output(&out.dk)
            .output(&out.dv)
            .tolerance(self.tolerance(true));
        let case = self.expectations(case);
        if self.fa3_backward_claims() {
            case.expect_engine(CUDA_SDPA_FA3_BWD)
        } else {
            case
        }
    }
}

fn dims4(a: usize, b: usize, c: usize, d: usize) -> Vec<i64> {
    vec![a as i64, b as i64, c as i64, d as i64]
}

/// The optional operands of a case's graph.
struct Extras {
    /// The scale tensor and whether it is bound (false for a by-value scalar).
    scale: Option<(Tensor, bool)>,
    bias: Option<Tensor>,
    lens: Option<(Tensor, Tensor)>,
}

macro_rules! apply_common {
    ($self:ident, $spec:ident, $attrs:ident) => {{
        let mut a = $attrs;
        a = match &$self.scale {
            None => a.attn_scale($spec.scale_value),
            Some((t, _)) => a.attn_scale_tensor(t),
        };
        if let Some(b) = &$self.bias {
            a = a.bias(b);
        }
        if let Some((lq, lkv)) = &$self.lens {
            a = a.seq_len_q(lq).seq_len_kv(lkv);
        }
        a = a.diagonal_alignment($spec.mask.alignment);
        if let Some(l) = $spec.mask.left {
            a = a.diagonal_band_left_bound(l);
        }
        if let Some(r) = $spec.mask.right {
            a = a.diagonal_band_right_bound(r);
        }
        a
    }};
}

impl Extras {
    fn apply_forward(&self, spec: &SdpaSpec, attrs: SdpaAttributes) -> SdpaAttributes {
        apply_common!(self, spec, attrs)
    }

    fn apply_backward(
        &self,
        spec: &SdpaSpec,
        attrs: SdpaBackwardAttributes,
    ) -> SdpaBackwardAttributes {
        apply_common!(self, spec, attrs)
    }

    fn declare(&self, spec: &SdpaSpec, mut case: Case) -> Case {
        if let Some((t, true)) = &self.scale {
            let s = spec.scale_value;
            case = case.input(t, Domain::new(s, s));
        }
        if let Some(b) = &self.bias {
            case = case.input(b, Domain::SYMMETRIC);
        }
        if let Some((lq, lkv)) = &self.lens {
            // Whole numbers 0..=S+1: empty batches and lengths past the tensor (clamped) too.
            let lens = |s: usize| Domain {
                lo: 0.0,
                hi: s as f64 + 1.0,
                step: 1.0,
            };
            case = case
                .input(lq, lens(spec.seq_q))
                .input(lkv, lens(spec.seq_kv));
        }
        case
    }
}

fn mask() -> impl Strategy<Value = Mask> {
    let alignment = prop_oneof![
        Just(DiagonalAlignment::TopLeft),
        Just(DiagonalAlignment::BottomRight)
    ];
    (
        alignment,
        prop_oneof![3 => Just(None), 1 => (1i64..6).prop_map(Some)],
        prop_oneof![2 => Just(None), 2 => Just(Some(0)), 1 => (1i64..4).prop_map(Some)],
    )
        .prop_map(|(alignment, left, right)| Mask {
            alignment,
            left,
            right,
        })
}

/// B,H,S,D packed, B,S,H,D, or any layout of the suite.
fn attention_layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        2 => Just(Layout::packed()),
        2 => Just(Layout::permuted(&[0, 2, 1, 3])),
        1 => layout(4),
    ]
}

fn sdpa_spec(max_seq: usize, dims: Vec<usize>) -> impl Strategy<Value = SdpaSpec> {
    let shape = (
        1usize..=2,
        1usize..=2,
        prop_oneof![Just(1usize), Just(2), Just(3)],
        1..=max_seq,
        1..=max_seq,
        prop::sample::select(dims.clone()),
        prop_oneof![4 => Just(None), 1 => prop::sample::select(dims).prop_map(Some)],
    );
    let layouts = [
        attention_layout(),
        attention_layout(),
        attention_layout(),
        attention_layout(),
    ];
    let scale = prop_oneof![
        2 => Just(Scale::Value),
        1 => Just(Scale::Scalar),
        1 => Just(Scale::Tensor)
    ];
    let bias = prop_oneof![
        3 => Just(Bias::None),
        1 => Just(Bias::Full),
        1 => Just(Bias::PerHead),
        1 => Just(Bias::PerBatchKey)
    ];
    (
        shape,
        layouts,
        data_type(),
        (scale, bias, any::<bool>(), mask(), any::<bool>()),
    )
        .prop_map(
            |(
                (b, hkv, group, sq, skv, d, dv),
                layouts,
                dt,
                (scale, bias, padding, mask, stats),
            )| {
                SdpaSpec {
                    batch: b,
                    heads_kv: hkv,
                    group,
                    seq_q: sq,
                    seq_kv: skv,
                    dim: d,
                    dim_v: dv.unwrap_or(d),
                    dt,
                    layouts,
                    scale,
                    scale_value: 1.0 / (d as f64).sqrt(),
                    bias,
                    padding,
                    mask,
                    stats,
                }
            },
        )
}

/// Small head dims for the suite on the CPU, plus those the GPU kernels take.
fn suite_spec() -> impl Strategy<Value = SdpaSpec> {
    sdpa_spec(40, vec![8, 16, 24, 64, 128])
}

/// The operands of a case as f64, logical row-major, read back from a session's inputs.
struct Values {
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    scale: f64,
    bias: Option<Vec<f64>>,
    len_q: Vec<usize>,
    len_kv: Vec<usize>,
}

impl Values {
    /// From inputs declared in the order of the forward case (`first_extra` = 3) or the
    /// backward case (6).
    fn read(spec: &SdpaSpec, inputs: &[Vec<f64>], first_extra: usize) -> Values {
        let mut next = first_extra;
        let mut take = || {
            next += 1;
            inputs[next - 1].clone()
        };
        let scale = match spec.scale {
            Scale::Tensor => take()[0],
            _ => spec.scale_value,
        };
        let bias = (spec.bias != Bias::None).then(&mut take);
        let (len_q, len_kv) = if spec.padding {
            let clamp = |v: Vec<f64>, s: usize| -> Vec<usize> {
                v.iter().map(|&x| (x.max(0.0) as usize).min(s)).collect()
            };
            (clamp(take(), spec.seq_q), clamp(take(), spec.seq_kv))
        } else {
            (vec![spec.seq_q; spec.batch], vec![spec.seq_kv; spec.batch])
        };
        Values {
            q: inputs[0].clone(),
            k: inputs[1].clone(),
            v: inputs[2].clone(),
            scale,
            bias,
            len_q,
            len_kv,
        }
    }

    /// Whether query `i` of batch `b` may see key `j`, written from the definition.
    fn visible(&self, spec: &SdpaSpec, b: usize, i: usize, j: usize) -> bool {
        let (lq, lkv) = (self.len_q[b] as i64, self.len_kv[b] as i64);
        let (i, j) = (i as i64, j as i64);
        if i >= lq || j >= lkv {
            return false;
        }
        let diagonal = match spec.mask.alignment {
            DiagonalAlignment::TopLeft => i,
            DiagonalAlignment::BottomRight => i + lkv - lq,
        };
        spec.mask.right.is_none_or(|r| j <= diagonal + r)
            && spec.mask.left.is_none_or(|l| j > diagonal - l)
    }

    /// Naive attention: o, and the log-sum-exp of each row.
    fn forward(&self, spec: &SdpaSpec) -> (Vec<f64>, Vec<f64>) {
        let (hq, sq, skv, d, dv) = (
            spec.heads_q(),
            spec.seq_q,
            spec.seq_kv,
            spec.dim,
            spec.dim_v,
        );
        let mut o = vec![0.0; spec.batch * hq * sq * dv];
        let mut lse = vec![f64::NEG_INFINITY; spec.batch * hq * sq];
        let bias_dims = spec.bias_dims();
        for b in 0..spec.batch {
            for h in 0..hq {
                let hk = h / spec.group;
                for i in 0..sq {
                    let mut s = vec![f64::NEG_INFINITY; skv];
                    for (j, sj) in s.iter_mut().enumerate() {
                        if !self.visible(spec, b, i, j) {
                            continue;
                        }
                        let mut dot = 0.0;
                        for x in 0..d {
                            dot += self.q[((b * hq + h) * sq + i) * d + x]
                                * self.k[((b * spec.heads_kv + hk) * skv + j) * d + x];
                        }
                        let bias = match (&self.bias, &bias_dims) {
                            (Some(vals), Some(bd)) => {
                                let pick = |x: usize, n: i64| if n == 1 { 0 } else { x };
                                let (b0, b1, b2) = (bd[1] as usize, bd[2] as usize, bd[3] as usize);
                                vals[((pick(b, bd[0]) * b0 + pick(h, bd[1])) * b1 + pick(i, bd[2]))
                                    * b2
                                    + j]
                            }
                            _ => 0.0,
                        };
                        *sj = self.scale * dot + bias;
                    }
                    let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    if m == f64::NEG_INFINITY {
                        continue;
                    }
                    let e: Vec<f64> = s.iter().map(|&x| (x - m).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    let row = (b * hq + h) * sq + i;
                    lse[row] = m + sum.ln();
                    for (j, p) in e.iter().enumerate() {
                        for x in 0..dv {
                            o[row * dv + x] +=
                                p / sum * self.v[((b * spec.heads_kv + hk) * skv + j) * dv + x];
                        }
                    }
                }
            }
        }
        (o, lse)
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sdpa_conforms(spec in suite_spec(), seed in any::<u64>()) {
        conform(spec.forward_case(), seed)?;
    }

    #[test]
    fn sdpa_backward_conforms(spec in suite_spec(), seed in any::<u64>()) {
        conform(spec.backward_case(), seed)?;
    }

    /// The oracle itself: the reference's o and stats equal a naive computation here.
    #[test]
    fn reference_sdpa_is_right(spec in sdpa_spec(12, vec![4, 8, 16]), seed in any::<u64>()) {
        let mut case = spec.forward_case();
        let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
        let inputs: Vec<Vec<f64>> = session.inputs().iter().map(|t| t.to_f64_vec()).collect();
        let outs = session.run(REFERENCE).map_err(TestCaseError::fail)?;
        let (o, lse) = Values::read(&spec, &inputs, 3).forward(&spec);
        let name = session.case().name().to_string();
        let tol = Tolerance::for_output(spec.dt, 1, 1);
        compare_values(&format!("reference o on '{name}' vs naive"), outs[0].desc(), &outs[0].to_f64_vec(), &o, tol)
            .map_err(TestCaseError::fail)?;
        if spec.stats {
            compare_values(&format!("reference stats on '{name}' vs naive"), outs[1].desc(), &outs[1].to_f64_vec(), &lse, Tolerance::for_output(DataType::F32, 1, 1))
                .map_err(TestCaseError::fail)?;
        }
    }
}

proptest! {
    #![proptest_config(config_with(24))]

    /// The reference's backward against central differences of the naive forward, for
    /// L = sum(o * do), with o and stats as the naive forward computes them.
    #[test]
    fn reference_sdpa_backward_matches_finite_differences(
        spec in sdpa_spec(5, vec![2, 4]).prop_map(|mut s| { s.dt = DataType::F32; s.batch = 1; s }),
        seed in any::<u64>(),
    ) {
        let mut case = spec.backward_case();
        let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
        let inputs: Vec<Vec<f64>> = session.inputs().iter().map(|t| t.to_f64_vec()).collect();
        let values = Values::read(&spec, &inputs, 6);
        let (o, lse) = values.forward(&spec);
        session.set_input_values(3, &o).map_err(TestCaseError::fail)?;
        session.set_input_values(5, &lse).map_err(TestCaseError::fail)?;
        let d_o = &inputs[4];
        let outs = session.run(REFERENCE).map_err(TestCaseError::fail)?;
        let loss = |x: &Values| -> f64 {
            x.forward(&spec).0.iter().zip(d_o).map(|(a, b)| a * b).sum()
        };
        let h = 1e-6;
        let name = session.case().name().to_string();
        let tol = Tolerance { atol: 1e-5, rtol: 1e-4 };
        for (which, out) in outs.iter().enumerate() {
            let n = [values.q.len(), values.k.len(), values.v.len()][which];
            let mut fd = vec![0.0; n];
            for (e, slot) in fd.iter_mut().enumerate() {
                let at = |delta: f64| {
                    let mut x = Values { bias: values.bias.clone(), len_q: values.len_q.clone(), len_kv: values.len_kv.clone(), q: values.q.clone(), k: values.k.clone(), v: values.v.clone(), scale: values.scale };
                    [&mut x.q, &mut x.k, &mut x.v][which][e] += delta;
                    loss(&x)
                };
                *slot = (at(h) - at(-h)) / (2.0 * h);
            }
            compare_values(&format!("reference {} on '{name}' vs finite differences", ["dq", "dk", "dv"][which]), out.desc(), &out.to_f64_vec(), &fd, tol)
                .map_err(TestCaseError::fail)?;
        }
    }
}

proptest! {
    #![proptest_config(config_with(16))]

    /// GPU-sized cases: lengths across several tiles (up to 300), head dims 64, 128 and 256,
    /// f16 and bf16, so that the CUDA kernels' tile edges, spans and GQA loops are crossed.
    /// Ignored without a GPU (the reference takes seconds per case on a CPU).
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn sdpa_conforms_on_gpu_sized_cases(
        spec in sdpa_spec(300, vec![64, 128, 256]).prop_map(|mut s| {
            if s.dt == DataType::F32 { s.dt = DataType::Bf16; }
            s
        }),
        seed in any::<u64>(),
    ) {
        conform(spec.forward_case(), seed)?;
        conform(spec.backward_case(), seed)?;
    }

    /// The Hopper forward's cases: no bias, B,H,S,D or B,S,H,D q/k/v (any o layout), equal head
    /// dims of 64, 128 or 256, lengths across several of its 128-row and 64/128-key tiles (not
    /// multiples of them), every mask, padding, GQA, stats. Ignored without a GPU.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn sdpa_fa3_conforms_on_gpu_sized_cases(
        spec in (sdpa_spec(520, vec![64, 128, 256]), prop::array::uniform3(any::<bool>())).prop_map(|(mut s, bshd)| {
            if s.dt == DataType::F32 { s.dt = DataType::Bf16; }
            s.bias = Bias::None;
            s.dim_v = s.dim;
            for (l, t) in s.layouts.iter_mut().zip(bshd) {
                *l = if t { Layout::permuted(&[0, 2, 1, 3]) } else { Layout::packed() };
            }
            s
        }),
        seed in any::<u64>(),
    ) {
        conform(spec.forward_case(), seed)?;
    }

    /// The Hopper backward's cases: the forward's rules (no bias, B,H,S,D or B,S,H,D q/k/v and
    /// o/do) at head dims 64 and 128, lengths across several of its 64-row and 128-key tiles
    /// (not multiples of them), every mask, padding, GQA. Ignored without a GPU.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn sdpa_fa3_backward_conforms_on_gpu_sized_cases(
        spec in (sdpa_spec(400, vec![64, 128]), prop::array::uniform4(any::<bool>())).prop_map(|(mut s, bshd)| {
            if s.dt == DataType::F32 { s.dt = DataType::Bf16; }
            s.bias = Bias::None;
            s.dim_v = s.dim;
            for (l, t) in s.layouts.iter_mut().zip(bshd) {
                *l = if t { Layout::permuted(&[0, 2, 1, 3]) } else { Layout::packed() };
            }
            s
        }),
        seed in any::<u64>(),
    ) {
        conform(spec.backward_case(), seed)?;
    }
}

/// A fully masked row writes zeros and a stats value of -inf, never NaN, on every engine.
#[test]
fn fully_masked_rows_give_zeros_and_minus_infinity() {
    // More queries than keys with a bottom-right causal mask: the first rows see no key.
    let spec = SdpaSpec {
        batch: 1,
        heads_kv: 1,
        group: 2,
        seq_q: 6,
        seq_kv: 3,
        dim: 8,
        dim_v: 8,
        dt: DataType::F32,
        layouts: std::array::from_fn(|_| Layout::packed()),
        scale: Scale::Value,
        scale_value: 0.5,
        bias: Bias::None,
        padding: false,
        mask: Mask {
            alignment: DiagonalAlignment::BottomRight,
            left: None,
            right: Some(0),
        },
        stats: true,
    };
    let mut case = spec.forward_case();
    let mut session = Session::open(&mut case, 3).expect("session");
    let outs = session.run(REFERENCE).expect("reference runs");
    let (o, stats) = (outs[0].to_f64_vec(), outs[1].to_f64_vec());
    for h in 0..2 {
        for i in 0..3 {
            let row = h * 6 + i;
            assert_eq!(stats[row], f64::NEG_INFINITY, "row {row}");
            assert!(
                o[row * 8..row * 8 + 8].iter().all(|&v| v == 0.0),
                "row {row}"
            );
        }
        assert!(stats[h * 6 + 3].is_finite());
    }
    drop(session);
    conform(spec.forward_case(), 3).expect("every engine agrees");
}

/// A worked example: one query, two keys with scores 0 and ln 3 give weights 1/4 and 3/4.
#[test]
fn a_worked_example() {
    let handle = kiln::Handle::cpu().unwrap();
    let mut g = Graph::new();
    let f32 = |n: &str, d: &[i64]| {
        TensorAttributes::new()
            .name(n)
            .dim(d)
            .data_type(DataType::F32)
    };
    let q = g.tensor(f32("q", &[1, 1, 1, 1]));
    let k = g.tensor(f32("k", &[1, 1, 2, 1]));
    let v = g.tensor(f32("v", &[1, 1, 2, 2]));
    let out = g
        .sdpa(&q, &k, &v, SdpaAttributes::new().generate_stats(true))
        .unwrap();
    out.o.set_output(true);
    let stats = out.stats.expect("generate_stats writes stats");
    stats.set_output(true);
    g.build(&handle, &[kiln::HeurMode::A]).unwrap();
    let ln3 = 3f32.ln();
    let mut hq = kiln::HostTensor::from_f32(&q, &[1.0]).unwrap();
    let mut hk = kiln::HostTensor::from_f32(&k, &[0.0, ln3]).unwrap();
    let mut hv = kiln::HostTensor::from_f32(&v, &[4.0, 0.0, 0.0, 8.0]).unwrap();
    let mut ho = kiln::HostTensor::for_tensor(&out.o).unwrap();
    let mut hs = kiln::HostTensor::for_tensor(&stats).unwrap();
    let mut ws = kiln::Workspace::for_graph(&g).unwrap();
    let mut pack = kiln::VariantPack::new();
    pack.insert(&q, &mut hq)
        .insert(&k, &mut hk)
        .insert(&v, &mut hv)
        .insert(&out.o, &mut ho)
        .insert(&stats, &mut hs);
    g.execute(&handle, &mut pack, &mut ws).unwrap();
    drop(pack);
    let o = ho.to_f32_vec();
    assert!(
        (o[0] - 1.0).abs() < 1e-5 && (o[1] - 6.0).abs() < 1e-5,
        "{o:?}"
    );
    assert!((hs.to_f32_vec()[0] - 4f32.ln()).abs() < 1e-5);
}

/// Bad operands are refused at validate with a message naming the node and the operand.
#[test]
fn bad_operands_are_refused_naming_them() {
    let f = |n: &str, d: &[i64], dt: DataType| TensorAttributes::new().name(n).dim(d).data_type(dt);
    // Query heads not a multiple of the key/value heads.
    let mut g = Graph::new();
    let q = g.tensor(f("q", &[1, 3, 4, 8], DataType::F16));
    let k = g.tensor(f("k", &[1, 2, 4, 8], DataType::F16));
    let v = g.tensor(f("v", &[1, 2, 4, 8], DataType::F16));
    let out = g
        .sdpa(&q, &k, &v, SdpaAttributes::new().name("att"))
        .unwrap();
    out.o.set_output(true);
    let e = g.validate().unwrap_err().to_string();
    assert!(e.contains("att") && e.contains("multiple"), "{e}");
    // k of another data type.
    let mut g = Graph::new();
    let q = g.tensor(f("q", &[1, 2, 4, 8], DataType::F16));
    let k = g.tensor(f("k", &[1, 2, 4, 8], DataType::Bf16));
    let v = g.tensor(f("v", &[1, 2, 4, 8], DataType::F16));
    let out = g.sdpa(&q, &k, &v, SdpaAttributes::new()).unwrap();
    out.o.set_output(true);
    let e = g.validate().unwrap_err().to_string();
    assert!(e.contains("'k'") && e.contains("data type"), "{e}");
    // A bias of the wrong key length, and a sliding window of 0.
    let mut g = Graph::new();
    let q = g.tensor(f("q", &[1, 2, 4, 8], DataType::F32));
    let k = g.tensor(f("k", &[1, 2, 5, 8], DataType::F32));
    let v = g.tensor(f("v", &[1, 2, 5, 8], DataType::F32));
    let bias = g.tensor(f("bias", &[1, 1, 4, 4], DataType::F32));
    let out = g
        .sdpa(&q, &k, &v, SdpaAttributes::new().bias(&bias))
        .unwrap();
    out.o.set_output(true);
    let e = g.validate().unwrap_err().to_string();
    assert!(e.contains("bias"), "{e}");
    let mut g = Graph::new();
    let q = g.tensor(f("q", &[1, 2, 4, 8], DataType::F32));
    let k = g.tensor(f("k", &[1, 2, 5, 8], DataType::F32));
    let v = g.tensor(f("v", &[1, 2, 5, 8], DataType::F32));
    let out = g
        .sdpa(&q, &k, &v, SdpaAttributes::new().sliding_window_length(0))
        .unwrap();
    out.o.set_output(true);
    let e = g.validate().unwrap_err().to_string();
    assert!(e.contains("diagonal_band_left_bound"), "{e}");
}
