//! The suite checks itself: its tolerances are tight enough to catch small errors, and its
//! failure messages say what is needed to reproduce them.

use kiln::{DataType, HostTensor};
use kiln_conformance::{Layout, MatmulSpec, Session, MATMUL, REFERENCE};

fn perturbed(t: &HostTensor, at: usize, relative: f64) -> HostTensor {
    let mut v = t.to_f64_vec();
    v[at] *= 1.0 + relative;
    let mut out = t.clone();
    out.fill_from_f64(&v).unwrap_or_else(|e| panic!("{e}"));
    out
}

/// A matmul with k = 64 in each type: the optimized engine's result passes, and the same result
/// with one element off by a little more than the type's precision fails, naming the engine,
/// the case, the element and both values.
#[test]
fn small_errors_are_caught() {
    for (dt, relative) in [
        (DataType::F32, 1e-4),
        (DataType::F16, 1e-2),
        (DataType::Bf16, 5e-2),
    ] {
        let spec = MatmulSpec {
            batch_a: vec![2],
            batch_b: vec![2],
            m: 4,
            k: 64,
            n: 5,
            a_layout: Layout::packed(),
            b_layout: Layout::transposed(),
            c_layout: Layout::packed(),
            a_type: dt,
            b_type: dt,
            c_type: dt,
        };
        let mut case = spec.case();
        let mut session = Session::open(&mut case, 42).unwrap_or_else(|e| panic!("{e}"));
        let want = session.run(REFERENCE).unwrap_or_else(|e| panic!("{e}"));
        let got = session.run(MATMUL).unwrap_or_else(|e| panic!("{e}"));
        session
            .compare("engine under test", &got, &want)
            .unwrap_or_else(|e| panic!("{e}"));
        // The element of largest magnitude, so that the perturbation is not lost in atol.
        let values = got[0].to_f64_vec();
        let at = (0..values.len())
            .max_by(|&i, &j| values[i].abs().total_cmp(&values[j].abs()))
            .unwrap_or(0);
        let bad = vec![perturbed(&got[0], at, relative)];
        let err = session
            .compare("engine under test", &bad, &want)
            .expect_err("a perturbed result must fail");
        assert!(
            err.contains("engine under test") && err.contains("1 of 40") && err.contains("got"),
            "{err}"
        );
    }
}

/// Causal GQA attention in f16 with head dim 16, which the CPU and CUDA attention engines claim.
fn attention_case() -> kiln_conformance::Case {
    use kiln::{Graph, SdpaAttributes, TensorAttributes};
    use kiln_conformance::{Case, Domain, Tolerance};
    let mut g = Graph::new();
    let f16 = |g: &mut Graph, name: &str, dims: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::F16),
        )
    };
    let q = f16(&mut g, "q", &[1, 2, 5, 16]);
    let k = f16(&mut g, "k", &[1, 1, 7, 16]);
    let v = f16(&mut g, "v", &[1, 1, 7, 16]);
    let out = g
        .sdpa(
            &q,
            &k,
            &v,
            SdpaAttributes::new().attn_scale(0.25).causal_mask(true),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut tol = Tolerance::for_output(DataType::F16, 23, 2);
    // Engines may round P to f16 before P v (docs/attention.md).
    tol.atol += 8.0 * DataType::F16.epsilon();
    Case::new("canonical causal GQA attention, f16, head dim 16", g)
        .input(&q, Domain::SYMMETRIC)
        .input(&k, Domain::SYMMETRIC)
        .input(&v, Domain::SYMMETRIC)
        .output(&out.o)
        .tolerance(tol)
}

/// Causal GQA attention in bf16 with head dim 64 and lengths across two 128-key tiles: the
/// shape the Hopper attention forward (`KILN_CUDA_SDPA_FA3_V1`, sm_90) claims, and the others.
fn hopper_attention_case() -> kiln_conformance::Case {
    use kiln::{Graph, SdpaAttributes, TensorAttributes};
    use kiln_conformance::{Case, Domain, Tolerance};
    let mut g = Graph::new();
    let bf16 = |g: &mut Graph, name: &str, dims: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::Bf16),
        )
    };
    let q = bf16(&mut g, "q", &[1, 4, 130, 64]);
    let k = bf16(&mut g, "k", &[1, 2, 150, 64]);
    let v = bf16(&mut g, "v", &[1, 2, 150, 64]);
    let out = g
        .sdpa(
            &q,
            &k,
            &v,
            SdpaAttributes::new()
                .attn_scale(0.125)
                .causal_mask_bottom_right(true)
                .generate_stats(true),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut tol = Tolerance::for_output(DataType::Bf16, 150 + 64, 2);
    // Engines may round P to bf16 before P v (docs/attention.md).
    tol.atol += 2.0 * (150f64).sqrt() * DataType::Bf16.epsilon();
    let stats = out.stats.expect("stats");
    Case::new("canonical causal GQA attention, bf16, head dim 64", g)
        .input(&q, Domain::SYMMETRIC)
        .input(&k, Domain::SYMMETRIC)
        .input(&v, Domain::SYMMETRIC)
        .output(&out.o)
        .output(&stats)
        .tolerance(tol)
}

/// The backward of causal GQA attention in bf16 with head dim 64 and lengths across two
/// 128-key blocks: the shape the Hopper attention backward (`KILN_CUDA_SDPA_FA3_BACKWARD_V1`,
/// sm_90) claims, and the others.
fn hopper_attention_backward_case() -> kiln_conformance::Case {
    use kiln::{Graph, SdpaBackwardAttributes, TensorAttributes};
    use kiln_conformance::{Case, Domain, Tolerance};
    let mut g = Graph::new();
    let t = |g: &mut Graph, name: &str, dims: &[i64], dt: DataType| {
        g.tensor(TensorAttributes::new().name(name).dim(dims).data_type(dt))
    };
    let q = t(&mut g, "q", &[1, 4, 130, 64], DataType::Bf16);
    let k = t(&mut g, "k", &[1, 2, 150, 64], DataType::Bf16);
    let v = t(&mut g, "v", &[1, 2, 150, 64], DataType::Bf16);
    let o = t(&mut g, "o", &[1, 4, 130, 64], DataType::Bf16);
    let d_o = t(&mut g, "do", &[1, 4, 130, 64], DataType::Bf16);
    let stats = t(&mut g, "stats", &[1, 4, 130, 1], DataType::F32);
    let out = g
        .sdpa_backward(
            &q,
            &k,
            &v,
            &o,
            &d_o,
            &stats,
            SdpaBackwardAttributes::new()
                .attn_scale(0.125)
                .causal_mask_bottom_right(true),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let terms = 130 * 2 + 150 + 64;
    let mut tol = Tolerance::for_output(DataType::Bf16, terms, 3);
    // Engines may round P and dS to bf16 before their products (docs/attention.md).
    tol.atol += 4.0 * (terms as f64).sqrt() * DataType::Bf16.epsilon();
    Case::new(
        "canonical causal GQA attention backward, bf16, head dim 64",
        g,
    )
    .input(&q, Domain::SYMMETRIC)
    .input(&k, Domain::SYMMETRIC)
    .input(&v, Domain::SYMMETRIC)
    .input(&o, Domain::SYMMETRIC.scaled(0.5))
    .input(&d_o, Domain::SYMMETRIC)
    .input(&stats, Domain::new(0.0, 1.0 + (150f64).ln()))
    .output(&out.dq)
    .output(&out.dk)
    .output(&out.dv)
    .tolerance(tol)
}

/// Every engine of the device under test (the CPU by default) claims at least one canonical
/// case of the suite, so a new engine cannot pass by never being run: add cases for it when
/// this fails.
#[test]
fn every_engine_is_exercised() {
    use kiln::{Handle, ReductionMode};
    use kiln_conformance::{check, ConvSpec, Operand, PointwiseSpec, ReductionSpec, TensorSpec};
    use kiln_core::{ConvDirection, PointwiseParams};

    let conv = |direction| ConvSpec {
        direction,
        n: 1,
        groups: 1,
        c_per_group: 2,
        k_per_group: 3,
        spatial: vec![5, 4],
        filter: vec![3, 3],
        pre_padding: vec![1, 1],
        post_padding: vec![1, 1],
        stride: vec![1, 1],
        dilation: vec![1, 1],
        x_layout: Layout::packed(),
        w_layout: Layout::packed(),
        y_layout: Layout::packed(),
        in_type: DataType::F32,
        out_type: DataType::F32,
    };
    let x = TensorSpec::new(&[2, 3], Layout::packed(), DataType::F32);
    let mut cases = vec![
        PointwiseSpec {
            mode: kiln::PointwiseMode::Tanh,
            params: PointwiseParams::default(),
            a: Operand::Tensor(x.clone()),
            b: None,
            c: None,
            out_layout: Layout::packed(),
            out_type: DataType::F32,
        }
        .case(),
        conv(ConvDirection::Fprop).case(),
        conv(ConvDirection::Dgrad).case(),
        conv(ConvDirection::Wgrad).case(),
        MatmulSpec {
            batch_a: vec![],
            batch_b: vec![],
            m: 3,
            k: 4,
            n: 5,
            a_layout: Layout::packed(),
            b_layout: Layout::packed(),
            c_layout: Layout::packed(),
            a_type: DataType::F32,
            b_type: DataType::F32,
            c_type: DataType::F32,
        }
        .case(),
        ReductionSpec {
            mode: ReductionMode::Sum,
            x,
            reduce: vec![false, true],
            y_layout: Layout::packed(),
            y_type: DataType::F32,
        }
        .case(),
        // bf16 with 16-byte rows: what the Hopper GEMM engines (V2) take.
        MatmulSpec {
            batch_a: vec![],
            batch_b: vec![],
            m: 64,
            k: 64,
            n: 64,
            a_layout: Layout::packed(),
            b_layout: Layout::packed(),
            c_layout: Layout::packed(),
            a_type: DataType::Bf16,
            b_type: DataType::Bf16,
            c_type: DataType::Bf16,
        }
        .case(),
        attention_case(),
        hopper_attention_case(),
        hopper_attention_backward_case(),
        pooling_case(),
        pooling_backward_case(),
    ];
    // bf16 NHWC with 16 channels and filters, in each direction: the Hopper conv engines (V2).
    for direction in [
        ConvDirection::Fprop,
        ConvDirection::Dgrad,
        ConvDirection::Wgrad,
    ] {
        cases.push(
            ConvSpec {
                c_per_group: 16,
                k_per_group: 16,
                x_layout: Layout::channels_last(),
                w_layout: Layout::channels_last(),
                y_layout: Layout::channels_last(),
                in_type: DataType::Bf16,
                out_type: DataType::Bf16,
                ..conv(direction)
            }
            .case(),
        );
    }
    // A layernorm: the norm engines.
    let mut g = kiln::Graph::new();
    let f32 = |g: &mut kiln::Graph, name: &str, dims: &[i64]| {
        g.tensor(
            kiln::TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::F32),
        )
    };
    let lx = f32(&mut g, "x", &[2, 3]);
    let ls = f32(&mut g, "scale", &[1, 3]);
    let lb = f32(&mut g, "bias", &[1, 3]);
    let norm = g
        .layernorm(
            &lx,
            &ls,
            &lb,
            kiln::LayernormAttributes::new().epsilon(1e-5),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    cases.push(
        kiln_conformance::Case::new("canonical layernorm", g)
            .input(&lx, kiln_conformance::Domain::WIDE)
            .input(&ls, kiln_conformance::Domain::SYMMETRIC)
            .input(&lb, kiln_conformance::Domain::SYMMETRIC)
            .output(&norm.y)
            .terms(3)
            .depth(3),
    );
    let mut claimed: Vec<String> = Vec::new();
    for case in &mut cases {
        let outcome = check(case, 1).unwrap_or_else(|e| panic!("{e}"));
        claimed.extend(outcome.claimed);
    }
    let device = kiln_conformance::device_under_test().unwrap_or_else(|e| panic!("{e}"));
    let handle = Handle::new(device).unwrap_or_else(|e| panic!("{e}"));
    let engines: Vec<String> = handle
        .plugins()
        .flat_map(|p| p.engines().iter().map(|e| e.name.clone()))
        .collect();
    assert!(
        engines.iter().any(|e| e != REFERENCE),
        "no engine but the reference is registered on {device}: {engines:?}"
    );
    for engine in &engines {
        assert!(
            claimed.contains(engine),
            "engine {engine} claims none of the suite's canonical cases; add cases for it (claimed: {claimed:?})"
        );
    }
}

/// A max pooling with its index (the pooling engines' canonical case).
fn pooling_case() -> kiln_conformance::Case {
    let mut g = kiln::Graph::new();
    let x =
        kiln_conformance::TensorSpec::new(&[2, 3, 6, 5], Layout::channels_last(), DataType::F32)
            .add_to(&mut g, "x");
    let out = g
        .resample(
            &x,
            kiln::ResampleAttributes::new(kiln::ResampleMode::MaxPool, &[2, 2])
                .stride(&[2, 2])
                .generate_index(true),
        )
        .expect("resample");
    let index = out.index.expect("an index");
    kiln_conformance::Case::new("pooling", g)
        .input(&x, kiln_conformance::Domain::COARSE)
        .output(&out.y)
        .output(&index)
}

/// Max pooling's backward, its maxima found again in x (the pooling backward engines' canonical
/// case).
fn pooling_backward_case() -> kiln_conformance::Case {
    let mut g = kiln::Graph::new();
    let x =
        kiln_conformance::TensorSpec::new(&[2, 3, 6, 5], Layout::channels_last(), DataType::F32)
            .add_to(&mut g, "x");
    let dy =
        kiln_conformance::TensorSpec::new(&[2, 3, 3, 2], Layout::channels_last(), DataType::F32)
            .add_to(&mut g, "dy");
    let dx = g
        .resample_backward(
            &dy,
            None,
            Some(&x),
            kiln::ResampleAttributes::new(kiln::ResampleMode::MaxPool, &[2, 2]).stride(&[2, 2]),
        )
        .expect("resample_backward");
    dx.set_stride(&Layout::channels_last().strides(&[2, 3, 6, 5]));
    kiln_conformance::Case::new("pooling backward", g)
        .input(&dy, kiln_conformance::Domain::SYMMETRIC)
        .input(&x, kiln_conformance::Domain::COARSE)
        .output(&dx)
}
