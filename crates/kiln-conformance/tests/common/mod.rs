//! Proptest strategies shared by the suite's test files.
#![allow(dead_code)]

pub mod norms;

use kiln::{DataType, Device, PointwiseMode};
use kiln_conformance::modes::params_variant;
use kiln_conformance::{check, Case, ConvSpec, Layout, MatmulSpec, Outcome, TensorSpec};
use kiln_core::{ConvDirection, PointwiseParams};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Cases per proptest: enough to cover the axes of each strategy, small enough to keep the whole
/// suite (after its build) within seconds on two cores.
pub const CASES: u32 = 64;

/// The proptest configuration of the suite: [`CASES`] cases, or `PROPTEST_CASES` when set (for
/// longer soak runs).
pub fn config() -> ProptestConfig {
    config_with(CASES)
}

/// The proptest configuration with `default` cases, or `PROPTEST_CASES` when set.
pub fn config_with(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    }
}

/// True when the CPU engine `engine` claimed the case, or when another device is under test
/// (the CPU engines are not under test there; the case's expectations of the device's own
/// engines still apply, and its summary counts what was compared).
pub fn cpu_engine_claimed(outcome: &Outcome, engine: &str) -> bool {
    outcome.device != Device::Cpu || outcome.claimed.iter().any(|e| e == engine)
}

/// True when some engine run was compared, or when the device under test is not the CPU and
/// none of its engines claims the case (listed as not claimed in the run's summary).
pub fn compared_where_claimed(outcome: &Outcome) -> bool {
    outcome.runs >= 1 || !outcome.claimed_on_device()
}

/// Runs a case and turns its failure into a proptest failure.
pub fn conform(mut case: Case, seed: u64) -> Result<kiln_conformance::Outcome, TestCaseError> {
    check(&mut case, seed).map_err(TestCaseError::fail)
}

/// f32 most often, f16 and bf16 regularly.
pub fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![2 => Just(DataType::F32), 1 => Just(DataType::F16), 1 => Just(DataType::Bf16)]
}

/// The output type for inputs of `dt`: usually the same, sometimes f32 (mixed precision).
pub fn out_type(dt: DataType) -> impl Strategy<Value = DataType> {
    prop_oneof![3 => Just(dt), 1 => Just(DataType::F32)]
}

/// Packed, channels-last, transposed, a random permutation, or any of them padded or with
/// spaced innermost elements.
pub fn layout(rank: usize) -> impl Strategy<Value = Layout> {
    let order = Just((0..rank).collect::<Vec<usize>>()).prop_shuffle();
    let base = prop_oneof![
        3 => Just(Layout::packed()),
        2 => Just(Layout::channels_last()),
        1 => Just(Layout::transposed()),
        2 => order.prop_map(|o| Layout::permuted(&o)),
    ];
    (
        base,
        prop::collection::vec(0i64..3, 0..3),
        prop_oneof![4 => Just(1i64), 1 => Just(2i64)],
        0u8..3,
    )
        .prop_map(|(l, pad, step, padded)| match padded {
            0 => l.with_padding(&pad).with_inner_step(step),
            _ => l,
        })
}

/// Dims of rank `rank` with each dim in `1..=max`.
pub fn dims(rank: usize, max: i64) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(1..=max, rank)
}

/// A tensor of rank 1 to 4 (dims up to 5) in any layout and type.
pub fn tensor() -> impl Strategy<Value = TensorSpec> {
    (1usize..=4).prop_flat_map(|rank| {
        (dims(rank, 5), layout(rank), data_type()).prop_map(|(d, l, t)| TensorSpec::new(&d, l, t))
    })
}

/// The modes with one input.
pub fn unary_modes() -> Vec<PointwiseMode> {
    PointwiseMode::ALL
        .into_iter()
        .filter(|m| m.is_unary())
        .collect()
}

/// Modes a random chain of computed values must avoid: gen_index (no value of its input; an
/// epilogue cannot fuse it) and the modes that jump or blow up where a value computed in f32
/// and in f64 can fall on either side (ceil, floor, mod, tan, atan2).
pub fn unfit_for_chains(mode: PointwiseMode) -> bool {
    use PointwiseMode as M;
    matches!(
        mode,
        M::GenIndex | M::Ceil | M::Floor | M::Mod | M::Tan | M::Atan2
    )
}

/// The unary modes a random chain may use.
pub fn chain_unary_modes() -> Vec<PointwiseMode> {
    unary_modes()
        .into_iter()
        .filter(|&m| !unfit_for_chains(m))
        .collect()
}

/// The binary modes a random chain may use.
pub fn chain_binary_modes() -> Vec<PointwiseMode> {
    binary_modes()
        .into_iter()
        .filter(|&m| !unfit_for_chains(m))
        .collect()
}

/// The modes with two inputs.
pub fn binary_modes() -> Vec<PointwiseMode> {
    PointwiseMode::ALL
        .into_iter()
        .filter(|m| m.is_binary())
        .collect()
}

/// A mode from `modes` with one of its parameter variants.
pub fn mode_with_params(
    modes: Vec<PointwiseMode>,
) -> impl Strategy<Value = (PointwiseMode, PointwiseParams)> {
    (prop::sample::select(modes), 0u8..5).prop_map(|(m, k)| (m, params_variant(m, k)))
}

/// A convolution geometry in `direction`: 1 to 3 spatial dims, groups, asymmetric padding,
/// strides, dilations, any layouts and types; only geometries with a non-empty output.
pub fn conv(direction: ConvDirection) -> impl Strategy<Value = ConvSpec> {
    (1usize..=3)
        .prop_flat_map(move |rank| {
            let max_spatial = [9i64, 6, 4][rank - 1];
            let geometry = (
                1i64..=2,
                1i64..=3,
                1i64..=3,
                1i64..=3,
                dims(rank, max_spatial),
                dims(rank, 3),
                prop::collection::vec(0i64..=2, rank),
                prop::collection::vec(0i64..=2, rank),
                prop::collection::vec(1i64..=2, rank),
                prop::collection::vec(1i64..=2, rank),
            );
            let layouts = (layout(rank + 2), layout(rank + 2), layout(rank + 2));
            (geometry, layouts, data_type()).prop_flat_map(move |(g, l, dt)| {
                (Just((g, l, dt)), out_type(dt)).prop_map(move |((g, l, dt), ot)| ConvSpec {
                    direction,
                    n: g.0,
                    groups: g.1,
                    c_per_group: g.2,
                    k_per_group: g.3,
                    spatial: g.4,
                    filter: g.5,
                    pre_padding: g.6,
                    post_padding: g.7,
                    stride: g.8,
                    dilation: g.9,
                    x_layout: l.0,
                    w_layout: l.1,
                    y_layout: l.2,
                    in_type: dt,
                    out_type: ot,
                })
            })
        })
        .prop_filter("the output must not be empty", |c| c.y_dims().is_some())
}

/// A batched matmul: 0 to 2 batch dims (each broadcast from 1 in a or b at random), m, k and n
/// up to 9 (k sometimes up to 40), any layouts and types.
pub fn matmul() -> impl Strategy<Value = MatmulSpec> {
    (0usize..=2)
        .prop_flat_map(|batch_rank| {
            let rank = batch_rank + 2;
            (
                dims(batch_rank, 3),
                prop::collection::vec(0u8..3, batch_rank),
                (
                    1i64..=9,
                    prop_oneof![3 => 1i64..=9, 1 => 10i64..=40],
                    1i64..=9,
                ),
                (layout(rank), layout(rank), layout(rank)),
                (data_type(), data_type()),
            )
        })
        .prop_flat_map(|(batch, bcast, (m, k, n), layouts, (ta, tb))| {
            let batch_a: Vec<i64> = batch
                .iter()
                .zip(&bcast)
                .map(|(&d, &b)| if b == 1 { 1 } else { d })
                .collect();
            let batch_b: Vec<i64> = batch
                .iter()
                .zip(&bcast)
                .map(|(&d, &b)| if b == 2 { 1 } else { d })
                .collect();
            (
                Just((batch_a, batch_b, m, k, n, layouts, ta, tb)),
                out_type(ta),
            )
                .prop_map(|((batch_a, batch_b, m, k, n, (la, lb, lc), ta, tb), tc)| {
                    MatmulSpec {
                        batch_a,
                        batch_b,
                        m,
                        k,
                        n,
                        a_layout: la,
                        b_layout: lb,
                        c_layout: lc,
                        a_type: ta,
                        b_type: tb,
                        c_type: tc,
                    }
                })
        })
}
