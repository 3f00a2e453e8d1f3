//! Fused graphs: convolution + bias + activation, matmul + bias + activation, and random chains
//! (and small DAGs) of 1 to 4 pointwise nodes after an input, a convolution or a matmul.

mod common;

use common::{
    chain_binary_modes, chain_unary_modes, config, conform, conv, data_type, layout, matmul,
    mode_with_params, tensor,
};
use kiln::{DataType, PointwiseMode};
use kiln_conformance::modes::params_variant;
use kiln_conformance::{
    assert_conforms, check, Anchor, ChainSpec, ChainStep, ConvSpec, Layout, MatmulSpec, Other,
    CONV_FPROP, MATMUL, POINTWISE,
};
use kiln_core::{ConvDirection, PointwiseParams};
use proptest::prelude::*;

const ACTIVATIONS: [PointwiseMode; 8] = [
    PointwiseMode::Relu,
    PointwiseMode::Sigmoid,
    PointwiseMode::Tanh,
    PointwiseMode::Gelu,
    PointwiseMode::GeluApproxTanh,
    PointwiseMode::Swish,
    PointwiseMode::Elu,
    PointwiseMode::Softplus,
];

fn bias_step(rank: usize, channel_axis: usize, data_type: DataType) -> ChainStep {
    ChainStep {
        mode: PointwiseMode::Add,
        params: PointwiseParams::default(),
        other: Some(Other::Tensor {
            broadcast: (0..rank).map(|i| i != channel_axis).collect(),
            layout: Layout::packed(),
            data_type,
        }),
        acc_left: true,
    }
}

fn activation() -> impl Strategy<Value = ChainStep> {
    (prop::sample::select(ACTIVATIONS.to_vec()), 0u8..5).prop_map(|(mode, k)| ChainStep {
        mode,
        params: params_variant(mode, k),
        other: None,
        acc_left: true,
    })
}

/// A step of a random chain: a unary mode, or a binary one against a fresh tensor (broadcast
/// or not), a scalar or an earlier result.
fn step(rank: usize) -> impl Strategy<Value = ChainStep> {
    let other = prop_oneof![
        2 => (prop::collection::vec(any::<bool>(), rank), layout(rank), data_type())
            .prop_map(|(broadcast, layout, data_type)| Other::Tensor { broadcast, layout, data_type }),
        1 => (-1.0f64..1.0).prop_map(Other::Scalar),
        1 => (0usize..4).prop_map(Other::Earlier),
    ];
    prop_oneof![
        (mode_with_params(chain_unary_modes())).prop_map(|(mode, params)| ChainStep {
            mode,
            params,
            other: None,
            acc_left: true
        }),
        (mode_with_params(chain_binary_modes()), other, any::<bool>()).prop_map(
            |((mode, params), other, acc_left)| ChainStep {
                mode,
                params,
                other: Some(other),
                acc_left
            }
        ),
    ]
}

fn steps(rank: usize, max: usize) -> impl Strategy<Value = Vec<ChainStep>> {
    prop::collection::vec(step(rank), 1..=max)
}

proptest! {
    #![proptest_config(config())]

    /// conv_fprop + bias [1, K, 1, ...] + activation: claimed by the convolution engine.
    #[test]
    fn conv_bias_activation(
        conv in conv(ConvDirection::Fprop),
        act in activation(),
        bias_type in data_type(),
        out_layout in layout(5),
        seed in any::<u64>(),
    ) {
        let rank = conv.spatial.len() + 2;
        let out_type = conv.out_type;
        let chain = ChainSpec {
            steps: vec![bias_step(rank, 1, bias_type), act],
            anchor: Anchor::Conv(conv),
            out_layout,
            out_type,
        };
        let outcome = conform(chain.case(), seed)?;
        prop_assert!(common::cpu_engine_claimed(&outcome, CONV_FPROP), "{:?}", outcome);
    }

    /// matmul + bias [.., 1, N] + activation: claimed by the matmul engine.
    #[test]
    fn matmul_bias_activation(
        mm in matmul(),
        act in activation(),
        bias_type in data_type(),
        out_layout in layout(4),
        seed in any::<u64>(),
    ) {
        let rank = mm.batch_a.len() + 2;
        let out_type = mm.c_type;
        let chain = ChainSpec {
            steps: vec![bias_step(rank, rank - 1, bias_type), act],
            anchor: Anchor::Matmul(mm),
            out_layout,
            out_type,
        };
        let outcome = conform(chain.case(), seed)?;
        prop_assert!(common::cpu_engine_claimed(&outcome, MATMUL), "{:?}", outcome);
    }

    /// 1 to 4 pointwise nodes over an input (chains and small DAGs).
    #[test]
    fn pointwise_chains(
        (x, steps) in tensor().prop_flat_map(|x| { let r = x.dims.len(); (Just(x), steps(r, 4)) }),
        out_type in data_type(),
        out_layout in layout(4),
        seed in any::<u64>(),
    ) {
        let chain = ChainSpec { anchor: Anchor::Input(x), steps, out_layout, out_type };
        conform(chain.case(), seed)?;
    }

    /// 1 to 3 pointwise nodes after a convolution.
    #[test]
    fn conv_chains(
        (conv, steps) in conv(ConvDirection::Fprop).prop_flat_map(|c| { let r = c.spatial.len() + 2; (Just(c), steps(r, 3)) }),
        out_layout in layout(5),
        seed in any::<u64>(),
    ) {
        let out_type = conv.out_type;
        let chain = ChainSpec { anchor: Anchor::Conv(conv), steps, out_layout, out_type };
        conform(chain.case(), seed)?;
    }

    /// 1 to 3 pointwise nodes after a matmul.
    #[test]
    fn matmul_chains(
        (mm, steps) in matmul().prop_flat_map(|m| { let r = m.batch_a.len() + 2; (Just(m), steps(r, 3)) }),
        out_layout in layout(4),
        seed in any::<u64>(),
    ) {
        let out_type = mm.c_type;
        let chain = ChainSpec { anchor: Anchor::Matmul(mm), steps, out_layout, out_type };
        conform(chain.case(), seed)?;
    }
}

/// The fixed shapes a user would write first: each is claimed by its optimized engine.
#[test]
fn canonical_fusions_use_optimized_engines() {
    for act in ACTIVATIONS {
        for dt in [DataType::F32, DataType::F16, DataType::Bf16] {
            let conv = ConvSpec {
                direction: ConvDirection::Fprop,
                n: 2,
                groups: 1,
                c_per_group: 3,
                k_per_group: 4,
                spatial: vec![6, 5],
                filter: vec![3, 3],
                pre_padding: vec![1, 1],
                post_padding: vec![1, 1],
                stride: vec![1, 1],
                dilation: vec![1, 1],
                x_layout: Layout::packed(),
                w_layout: Layout::packed(),
                y_layout: Layout::packed(),
                in_type: dt,
                out_type: dt,
            };
            let act_step = ChainStep {
                mode: act,
                params: PointwiseParams::default(),
                other: None,
                acc_left: true,
            };
            let chain = ChainSpec {
                anchor: Anchor::Conv(conv),
                steps: vec![bias_step(4, 1, dt), act_step.clone()],
                out_layout: Layout::packed(),
                out_type: dt,
            };
            let o = assert_conforms(chain.case(), 1);
            assert!(common::cpu_engine_claimed(&o, CONV_FPROP), "{o:?}");

            let mm = MatmulSpec {
                batch_a: vec![2],
                batch_b: vec![1],
                m: 5,
                k: 7,
                n: 6,
                a_layout: Layout::packed(),
                b_layout: Layout::packed(),
                c_layout: Layout::packed(),
                a_type: dt,
                b_type: dt,
                c_type: dt,
            };
            let chain = ChainSpec {
                anchor: Anchor::Matmul(mm),
                steps: vec![bias_step(3, 2, dt), act_step.clone()],
                out_layout: Layout::packed(),
                out_type: dt,
            };
            let o = assert_conforms(chain.case(), 2);
            assert!(common::cpu_engine_claimed(&o, MATMUL), "{o:?}");

            let x = kiln_conformance::TensorSpec::new(&[2, 3, 4], Layout::packed(), dt);
            let chain = ChainSpec {
                anchor: Anchor::Input(x),
                steps: vec![bias_step(3, 1, dt), act_step],
                out_layout: Layout::packed(),
                out_type: dt,
            };
            let o = assert_conforms(chain.case(), 3);
            assert!(common::cpu_engine_claimed(&o, POINTWISE), "{o:?}");
        }
    }
}

/// The suite can fail: a case expecting an engine that does not exist is refused, naming it.
#[test]
fn missing_expected_engine_fails() {
    let x = kiln_conformance::TensorSpec::new(&[4], Layout::packed(), DataType::F32);
    let chain = ChainSpec {
        anchor: Anchor::Input(x),
        steps: vec![ChainStep {
            mode: PointwiseMode::Relu,
            params: PointwiseParams::default(),
            other: None,
            acc_left: true,
        }],
        out_layout: Layout::packed(),
        out_type: DataType::F32,
    };
    let mut case = chain.case().expect_engine("KILN_NO_SUCH_ENGINE_V1");
    let err = check(&mut case, 0).expect_err("an expected engine is missing");
    assert!(err.contains("KILN_NO_SUCH_ENGINE_V1"), "{err}");
}
