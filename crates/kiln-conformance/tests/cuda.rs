//! The CUDA engines on the shapes that trip GPU kernels: sizes that are multiples of no tile
//! (1, 7, 33, 129, 257 for M, N, K, channels, spatial dims and element counts), transposed
//! matmul operands given by strides, NCHW and NHWC convolutions, f32, f16 and bf16, with and
//! without fused epilogues. Every case must be claimed by its CUDA engine, so none passes by
//! comparing nothing.
//!
//! Ignored without a GPU; on the GPU machine run with `KILN_CONFORMANCE_DEVICE=cuda:0` and
//! `--include-ignored` (scripts/gpu-package.sh's `conformance` part). With the CPU under test
//! they fail, saying so. Case counts: 32 per test, or `PROPTEST_CASES`.

mod common;

use common::{config_with, data_type, layout, mode_with_params, out_type};
use kiln::{DataType, Device, PointwiseMode};
use kiln_conformance::{
    check_on, device_under_test, Anchor, Case, ChainSpec, ChainStep, ConvSpec, Domain, Layout,
    MatmulSpec, Operand, Other, Outcome, PointwiseSpec, TensorSpec, CUDA_CONV_DGRAD,
    CUDA_CONV_DGRAD_V2, CUDA_CONV_FPROP, CUDA_CONV_WGRAD, CUDA_CONV_WGRAD_V2, CUDA_MATMUL,
    CUDA_POINTWISE, CUDA_RESAMPLE, CUDA_RESAMPLE_BACKWARD, DEVICE_ENV,
};
use kiln_core::{ConvDirection, PointwiseParams};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Cases per test when `PROPTEST_CASES` is unset: each one compiles kernels with NVRTC.
const CUDA_CASES: u32 = 32;

/// Sizes that fill no tile evenly.
const ODD: [i64; 5] = [1, 7, 33, 129, 257];

/// Multiply-adds the reference may spend on one case (it runs in plain f64 loops).
const MAX_MACS: i64 = 1 << 25;

/// Runs `case` with the CUDA device under test, requiring `engine` to claim it.
fn conform_cuda(case: Case, engine: &str, seed: u64) -> Result<Outcome, TestCaseError> {
    let device = match device_under_test() {
        Ok(d @ Device::Cuda(_)) => d,
        Ok(d) => {
            return Err(TestCaseError::fail(format!(
                "these tests check the CUDA engines but the device under test is {d}: set \
                 {DEVICE_ENV}=cuda:N"
            )))
        }
        Err(e) => return Err(TestCaseError::fail(e)),
    };
    let mut case = case.expect_engine(engine);
    let outcome = check_on(&mut case, seed, device).map_err(TestCaseError::fail)?;
    prop_assert!(
        outcome
            .compared
            .iter()
            .any(|(e, runs)| e == engine && *runs >= 1),
        "{engine} was not compared: {outcome:?}"
    );
    Ok(outcome)
}

fn odd() -> impl Strategy<Value = i64> {
    prop::sample::select(ODD.to_vec())
}

/// Row-major or transposed (the operand given by strides), sometimes with padded rows.
fn matrix_layout() -> impl Strategy<Value = Layout> {
    (
        prop_oneof![Just(Layout::packed()), Just(Layout::transposed())],
        prop_oneof![3 => Just(0i64), 1 => 1i64..=5],
    )
        .prop_map(|(l, pad)| if pad > 0 { l.with_padding(&[pad]) } else { l })
}

/// NCHW or NHWC, sometimes with padded rows.
fn image_layout() -> impl Strategy<Value = Layout> {
    (
        prop_oneof![Just(Layout::packed()), Just(Layout::channels_last())],
        prop_oneof![3 => Just(0i64), 1 => 1i64..=3],
    )
        .prop_map(|(l, pad)| if pad > 0 { l.with_padding(&[pad]) } else { l })
}

/// A matmul with M, N and K from [`ODD`], no or one batch dim (broadcast from 1 in a or b at
/// random), operands row-major or transposed, both in one type, the output in it or f32.
fn matmul() -> impl Strategy<Value = MatmulSpec> {
    (
        (odd(), odd(), odd()),
        prop_oneof![
            Just(Vec::<(i64, u8)>::new()),
            (1i64..=3, 0u8..3).prop_map(|b| vec![b])
        ],
        (matrix_layout(), matrix_layout(), matrix_layout()),
        data_type(),
    )
        .prop_flat_map(|(mkn, batch, layouts, dt)| (Just((mkn, batch, layouts, dt)), out_type(dt)))
        .prop_map(|(((m, k, n), batch, (la, lb, lc), dt), ct)| {
            let pick = |side: u8| -> Vec<i64> {
                batch
                    .iter()
                    .map(|&(d, b)| if b == side { 1 } else { d })
                    .collect()
            };
            MatmulSpec {
                batch_a: pick(1),
                batch_b: pick(2),
                m,
                k,
                n,
                a_layout: la,
                b_layout: lb,
                c_layout: lc,
                a_type: dt,
                b_type: dt,
                c_type: ct,
            }
        })
        .prop_filter("the reference's work is bounded", |s| {
            let batch: i64 = s
                .c_dims()
                .map(|d| d[..d.len() - 2].iter().product())
                .unwrap_or(1);
            batch * s.m * s.n * s.k <= MAX_MACS
        })
}

/// A 2-D forward convolution (groups 1: what the CUDA engine runs) with channels from 1, 7, 33
/// and 129, spatial dims from 1, 7 and 33, filters up to 3x3, padding, strides, dilations, NCHW
/// or NHWC per tensor, f32, f16 or bf16.
/// Whether the device under test is of compute capability 9.0 (`KILN_CONFORMANCE_ARCH=90`, which
/// the GPU runner sets from nvidia-smi), where the Hopper engines run.
fn hopper() -> bool {
    std::env::var("KILN_CONFORMANCE_ARCH").is_ok_and(|a| a == "90")
}

/// Gradient convolutions of the shapes the Hopper engines claim: f16/bf16, dy channels-last,
/// the operand read beside it channels-last too (the filter KRSC for dgrad, x NHWC for wgrad),
/// C and K from {8, 24, 72, 136} (multiples of 8, of no tile), spatial dims from {1, 7, 33},
/// filters up to 3 x 3, padding 0-1 (asymmetric), stride 1-2 in both dims, dilation 1-2; the
/// output in any image layout (padded or not) and type.
fn conv_hopper(direction: ConvDirection) -> impl Strategy<Value = ConvSpec> {
    let channels = || prop::sample::select(vec![8i64, 24, 72, 136]);
    let spatial = || prop::sample::select(vec![1i64, 7, 33]);
    (
        (1i64..=2, channels(), channels()),
        (spatial(), spatial(), 1i64..=3, 1i64..=3),
        (0i64..=1, 0i64..=1, 1i64..=2, 1i64..=2),
        image_layout(),
        prop_oneof![Just(DataType::F16), Just(DataType::Bf16)],
    )
        .prop_flat_map(|g| {
            let dt = g.4;
            (Just(g), out_type(dt))
        })
        .prop_map(
            move |(((n, c, k), (h, w, r, s), (ph, pw, stride, dil), lo, dt), ot)| {
                let cl = Layout::channels_last();
                let (x_layout, w_layout) = match direction {
                    ConvDirection::Dgrad => (lo, cl.clone()),
                    _ => (cl.clone(), lo),
                };
                ConvSpec {
                    direction,
                    n,
                    groups: 1,
                    c_per_group: c,
                    k_per_group: k,
                    spatial: vec![h, w],
                    filter: vec![r, s],
                    pre_padding: vec![ph, pw],
                    post_padding: vec![pw, ph],
                    stride: vec![stride, stride],
                    dilation: vec![dil, 1],
                    x_layout,
                    w_layout,
                    y_layout: cl,
                    in_type: dt,
                    out_type: ot,
                }
            },
        )
        .prop_filter("the output must not be empty", |c| c.y_dims().is_some())
        .prop_filter("the reference's work is bounded", |c| {
            let out: i64 = c.y_dims().map(|d| d.iter().product()).unwrap_or(0);
            out * c.terms() as i64 <= MAX_MACS
        })
}

fn conv() -> impl Strategy<Value = ConvSpec> {
    let channels = || prop::sample::select(vec![1i64, 7, 33, 129]);
    let spatial = || prop::sample::select(vec![1i64, 7, 33]);
    (
        (1i64..=2, channels(), channels()),
        (spatial(), spatial(), 1i64..=3, 1i64..=3),
        (0i64..=1, 0i64..=1, 1i64..=2, 1i64..=2),
        (image_layout(), image_layout(), image_layout()),
        data_type(),
    )
        .prop_flat_map(|g| {
            let dt = g.4;
            (Just(g), out_type(dt))
        })
        .prop_map(
            |(((n, c, k), (h, w, r, s), (ph, pw, stride, dil), (lx, lw, ly), dt), ot)| ConvSpec {
                direction: ConvDirection::Fprop,
                n,
                groups: 1,
                c_per_group: c,
                k_per_group: k,
                spatial: vec![h, w],
                filter: vec![r, s],
                pre_padding: vec![ph, pw],
                post_padding: vec![pw, ph],
                stride: vec![stride, 1],
                dilation: vec![1, dil],
                x_layout: lx,
                w_layout: lw,
                y_layout: ly,
                in_type: dt,
                out_type: ot,
            },
        )
        .prop_filter("the output must not be empty", |c| c.y_dims().is_some())
        .prop_filter("the reference's work is bounded", |c| {
            let out: i64 = c.y_dims().map(|d| d.iter().product()).unwrap_or(0);
            out * c.terms() as i64 <= MAX_MACS
        })
}

/// Bias (broadcast along every dim but `keep`) and an activation after a matmul or conv.
fn epilogue(rank: usize, keep: usize) -> impl Strategy<Value = Vec<ChainStep>> {
    let activation = (
        prop::sample::select(vec![
            PointwiseMode::Relu,
            PointwiseMode::Sigmoid,
            PointwiseMode::Tanh,
            PointwiseMode::Gelu,
            PointwiseMode::Swish,
        ]),
        0u8..5,
    );
    (data_type(), activation).prop_map(move |(bias_type, (mode, k))| {
        vec![
            ChainStep {
                mode: PointwiseMode::Add,
                params: PointwiseParams::default(),
                other: Some(Other::Tensor {
                    broadcast: (0..rank).map(|i| i != keep).collect(),
                    layout: Layout::packed(),
                    data_type: bias_type,
                }),
                acc_left: true,
            },
            ChainStep {
                mode,
                params: kiln_conformance::modes::params_variant(mode, k),
                other: None,
                acc_left: true,
            },
        ]
    })
}

/// A tensor of rank 1 to 4 with dims from [`ODD`] (at most 2^20 elements) in any layout.
fn odd_tensor() -> impl Strategy<Value = TensorSpec> {
    (1usize..=4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(odd(), rank),
                layout(rank),
                data_type(),
            )
        })
        .prop_map(|(d, l, t)| TensorSpec::new(&d, l, t))
        .prop_filter("at most 2^20 elements", |t| {
            t.dims.iter().product::<i64>() <= 1 << 20
        })
}

proptest! {
    #![proptest_config(config_with(CUDA_CASES))]

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_matmul_odd_shapes(spec in matmul(), seed in any::<u64>()) {
        conform_cuda(spec.case(), CUDA_MATMUL, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_matmul_bias_activation(
        (mm, steps) in matmul().prop_flat_map(|m| {
            let rank = m.batch_a.len() + 2;
            (Just(m), epilogue(rank, rank - 1))
        }),
        out_layout in matrix_layout(),
        seed in any::<u64>(),
    ) {
        let out_type = mm.c_type;
        let chain = ChainSpec { anchor: Anchor::Matmul(mm), steps, out_layout, out_type };
        conform_cuda(chain.case(), CUDA_MATMUL, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_fprop_odd_shapes(spec in conv(), seed in any::<u64>()) {
        conform_cuda(spec.case(), CUDA_CONV_FPROP, seed)?;
    }

    /// The data gradient of the same convolutions: every stride's skipped taps, padding and
    /// dilation, dx in any layout and type.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_dgrad_odd_shapes(spec in conv(), seed in any::<u64>()) {
        let spec = ConvSpec { direction: ConvDirection::Dgrad, ..spec };
        conform_cuda(spec.case(), CUDA_CONV_DGRAD, seed)?;
    }

    /// The weight gradient of the same convolutions (a long reduction split over the
    /// workspace where the shapes make one).
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_wgrad_odd_shapes(spec in conv(), seed in any::<u64>()) {
        let spec = ConvSpec { direction: ConvDirection::Wgrad, ..spec };
        conform_cuda(spec.case(), CUDA_CONV_WGRAD, seed)?;
    }

    /// The Hopper data gradient (on compute capability 9.0, `KILN_CONFORMANCE_ARCH=90`; V1
    /// elsewhere) on what it claims: channels-last f16/bf16 dy and KRSC filters with C and K
    /// multiples of 8 but of no tile, every stride's skipped taps, padding, dilation, dx in
    /// any layout and type.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_dgrad_hopper_shapes(spec in conv_hopper(ConvDirection::Dgrad), seed in any::<u64>()) {
        let engine = if hopper() { CUDA_CONV_DGRAD_V2 } else { CUDA_CONV_DGRAD };
        conform_cuda(spec.case(), engine, seed)?;
    }

    /// The Hopper weight gradient on what it claims (channels-last x and dy), split over the
    /// workspace where the shapes make it worth it; dw in any layout and type.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_wgrad_hopper_shapes(spec in conv_hopper(ConvDirection::Wgrad), seed in any::<u64>()) {
        let engine = if hopper() { CUDA_CONV_WGRAD_V2 } else { CUDA_CONV_WGRAD };
        conform_cuda(spec.case(), engine, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_conv_bias_activation(
        (conv, steps) in conv().prop_flat_map(|c| (Just(c), epilogue(4, 1))),
        out_layout in image_layout(),
        seed in any::<u64>(),
    ) {
        let out_type = conv.out_type;
        let chain = ChainSpec { anchor: Anchor::Conv(conv), steps, out_layout, out_type };
        conform_cuda(chain.case(), CUDA_CONV_FPROP, seed)?;
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_pointwise_unary_odd_shapes(
        (mode, params) in mode_with_params(PointwiseMode::ALL.into_iter().filter(|m| m.is_unary()).collect()),
        (a, out_layout) in odd_tensor().prop_flat_map(|a| { let r = a.dims.len(); (Just(a), layout(r)) }),
        f32_out in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let out_type = if f32_out { DataType::F32 } else { a.data_type };
        let spec = PointwiseSpec { mode, params, a: Operand::Tensor(a), b: None, c: None, out_layout, out_type };
        conform_cuda(spec.case(), CUDA_POINTWISE, seed)?;
    }

    /// Binary modes against a full, broadcast (1 where the mask says) or scalar operand.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_pointwise_binary_odd_shapes(
        (mode, params) in mode_with_params(PointwiseMode::ALL.into_iter().filter(|m| m.is_binary()).collect()),
        (a, mask, b_layout, out_layout) in odd_tensor().prop_flat_map(|a| {
            let r = a.dims.len();
            (Just(a), prop::collection::vec(any::<bool>(), r), layout(r), layout(r))
        }),
        (b_type, kind, u) in (data_type(), 0u8..3, -1.0f64..1.0),
        seed in any::<u64>(),
    ) {
        let b = match kind {
            0 => Operand::Scalar(u),
            1 => Operand::Tensor(TensorSpec::new(&a.dims, b_layout, b_type)),
            _ => {
                let dims: Vec<i64> =
                    a.dims.iter().zip(&mask).map(|(&d, &m)| if m { 1 } else { d }).collect();
                Operand::Tensor(TensorSpec::new(&dims, b_layout, b_type))
            }
        };
        let out_type = a.data_type;
        let spec = PointwiseSpec { mode, params, a: Operand::Tensor(a), b: Some(b), c: None, out_layout, out_type };
        conform_cuda(spec.case(), CUDA_POINTWISE, seed)?;
    }

    /// binary_select with a bool, i8 or float mask (broadcast where the mask says), values and
    /// output of every type the CUDA pointwise engine takes.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_pointwise_binary_select_and_new_types(
        (a, mask, b_layout, out_layout) in odd_tensor().prop_flat_map(|a| {
            let r = a.dims.len();
            (Just(a), prop::collection::vec(any::<bool>(), r), layout(r), layout(r))
        }),
        b_type in prop::sample::select(NEW_TYPES.to_vec()),
        c_type in prop::sample::select(vec![DataType::Boolean, DataType::I8, DataType::F16]),
        out_type in prop::sample::select(NEW_TYPES.to_vec()),
        seed in any::<u64>(),
    ) {
        let dims: Vec<i64> = a.dims.iter().zip(&mask).map(|(&d, &m)| if m { 1 } else { d }).collect();
        let b = Operand::Tensor(TensorSpec::new(&a.dims, b_layout, b_type));
        let c = Operand::Tensor(TensorSpec::new(&dims, Layout::packed(), c_type));
        let spec = PointwiseSpec {
            mode: PointwiseMode::BinarySelect,
            params: PointwiseParams::default(),
            a: Operand::Tensor(a),
            b: Some(b),
            c: Some(c),
            out_layout,
            out_type,
        };
        conform_cuda(spec.case(), CUDA_POINTWISE, seed)?;
    }

    /// Every mode with the integral (where the mode allows them) and fp8 types as input and
    /// output, gen_index along a random axis.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_pointwise_modes_with_new_types(
        mode in prop::sample::select(PointwiseMode::ALL.to_vec()),
        a in odd_tensor(),
        in_type in prop::sample::select(NEW_TYPES.to_vec()),
        axis in 0i64..4,
        seed in any::<u64>(),
    ) {
        let in_type = if in_type.is_integral() && !mode.allows_integral() { DataType::Fp8E4m3 } else { in_type };
        let a = TensorSpec::new(&a.dims, a.layout.clone(), in_type);
        let rank = a.dims.len() as i64;
        let params = PointwiseParams {
            axis: (mode == PointwiseMode::GenIndex).then_some(axis % rank),
            ..PointwiseParams::default()
        };
        let b = (mode.operand_count() >= 2)
            .then(|| Operand::Tensor(TensorSpec::new(&a.dims, Layout::packed(), DataType::F16)));
        let c = (mode.operand_count() == 3)
            .then(|| Operand::Tensor(TensorSpec::new(&a.dims, Layout::packed(), DataType::Boolean)));
        let out_type = if in_type.is_integral() { in_type } else { DataType::Fp8E5m2 };
        let spec = PointwiseSpec {
            mode,
            params,
            a: Operand::Tensor(a),
            b,
            c,
            out_layout: Layout::packed(),
            out_type,
        };
        conform_cuda(spec.case(), CUDA_POINTWISE, seed)?;
    }
}

/// A pooling case for the CUDA engine: x [n, c, spatial...] in `layout`, `mode`, per spatial
/// dim (window, stride, pre, post) with paddings below the window, an index for max pooling.
fn pooling_case(
    dims: &[i64],
    layout: Layout,
    dt: DataType,
    mode: kiln::ResampleMode,
    geometry: &[(i64, i64, i64, i64)],
) -> Case {
    let mut g = kiln::Graph::new();
    let x = TensorSpec::new(dims, layout, dt).add_to(&mut g, "x");
    let window: Vec<i64> = geometry.iter().map(|t| t.0).collect();
    let attrs = kiln::ResampleAttributes::new(mode, &window)
        .stride(&geometry.iter().map(|t| t.1).collect::<Vec<_>>())
        .pre_padding(&geometry.iter().map(|t| t.2 % t.0).collect::<Vec<_>>())
        .post_padding(&geometry.iter().map(|t| t.3 % t.0).collect::<Vec<_>>())
        .generate_index(mode == kiln::ResampleMode::MaxPool);
    let out = g.resample(&x, attrs).expect("resample");
    let domain = if mode == kiln::ResampleMode::MaxPool {
        Domain::COARSE
    } else {
        Domain::WIDE
    };
    let mut case = Case::new(format!("pool {mode:?} {dims:?} {dt} {geometry:?}"), g)
        .input(&x, domain)
        .output(&out.y)
        .terms(window.iter().product::<i64>() as usize);
    if let Some(i) = &out.index {
        case = case.output(i);
    }
    case
}

/// A pooling backward case for the CUDA engine: dy of the pooling of x [n, c, spatial...] (dx in
/// `layout`, dy packed or channels-last), max pooling through an i32 index (every window
/// position, padded ones included) or through x.
fn pooling_backward_case(
    dims: &[i64],
    layout: Layout,
    dt: DataType,
    mode: kiln::ResampleMode,
    geometry: &[(i64, i64, i64, i64)],
    with_index: bool,
) -> Case {
    let mut g = kiln::Graph::new();
    let window: Vec<i64> = geometry.iter().map(|t| t.0).collect();
    let stride: Vec<i64> = geometry.iter().map(|t| t.1).collect();
    let pre: Vec<i64> = geometry.iter().map(|t| t.2 % t.0).collect();
    let post: Vec<i64> = geometry.iter().map(|t| t.3 % t.0).collect();
    let geo = kiln_core::ops::resample::ResampleGeometry {
        window: window.clone(),
        stride: stride.clone(),
        pre_padding: pre.clone(),
        post_padding: post.clone(),
    };
    let y_dims = geo.output_dims(dims, "case").expect("window fits");
    let dy = TensorSpec::new(&y_dims, layout.clone(), dt).add_to(&mut g, "dy");
    let max = mode == kiln::ResampleMode::MaxPool;
    let index = (max && with_index)
        .then(|| TensorSpec::new(&y_dims, Layout::packed(), DataType::I32).add_to(&mut g, "index"));
    let x =
        (max && !with_index).then(|| TensorSpec::new(dims, layout.clone(), dt).add_to(&mut g, "x"));
    let attrs = kiln::ResampleAttributes::new(mode, &window)
        .stride(&stride)
        .pre_padding(&pre)
        .post_padding(&post);
    let dx = g
        .resample_backward(&dy, index.as_ref(), x.as_ref(), attrs)
        .expect("resample_backward");
    dx.set_dim(dims);
    dx.set_stride(&layout.strides(dims));
    let overlap: i64 = window
        .iter()
        .zip(&stride)
        .map(|(w, s)| (w + s - 1) / s)
        .product();
    let mut case = Case::new(
        format!("pool backward {mode:?} {dims:?} {dt} {geometry:?} index {with_index}"),
        g,
    )
    .input(&dy, Domain::SYMMETRIC);
    if let Some(i) = &index {
        let last = window.iter().product::<i64>() as f64 - 1.0;
        case = case.input(
            i,
            Domain {
                lo: 0.0,
                hi: last,
                step: 1.0,
            },
        );
    }
    if let Some(x) = &x {
        case = case.input(x, Domain::COARSE);
    }
    case.output(&dx).terms(overlap as usize)
}

proptest! {
    #![proptest_config(config_with(CUDA_CASES))]

    /// Pooling backward of every mode over 1 to 3 spatial dims, packed and channels-last
    /// layouts, f32/f16/bf16; max pooling through an index or through x.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_resample_backward_conforms(
        (dims, geometry) in (1usize..=3).prop_flat_map(|s| (
            (1i64..=3, prop::sample::select(ODD.to_vec()), prop::collection::vec(1i64..=40, s)),
            prop::collection::vec((1i64..=4, 1i64..=3, 0i64..4, 0i64..4), s),
        )).prop_map(|((n, c, sp), geo)| {
            let mut d = vec![n, c];
            d.extend(sp.iter().zip(&geo).map(|(&s, g)| s.max(g.0)));
            (d, geo)
        }),
        mode in prop::sample::select(kiln::ResampleMode::ALL.to_vec()),
        nhwc in any::<bool>(),
        with_index in any::<bool>(),
        dt in data_type(),
        seed in any::<u64>(),
    ) {
        let layout = if nhwc { Layout::channels_last() } else { Layout::packed() };
        let case = pooling_backward_case(&dims, layout, dt, mode, &geometry, with_index);
        conform_cuda(case, CUDA_RESAMPLE_BACKWARD, seed)?;
    }

    /// Pooling of every mode over 1 to 3 spatial dims, NCHW-like and channels-last layouts,
    /// f32/f16/bf16 (max pooling with its i32 index).
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn cuda_resample_conforms(
        (dims, geometry) in (1usize..=3).prop_flat_map(|s| (
            (1i64..=3, prop::sample::select(ODD.to_vec()), prop::collection::vec(1i64..=40, s)),
            prop::collection::vec((1i64..=4, 1i64..=3, 0i64..4, 0i64..4), s),
        )).prop_map(|((n, c, sp), geo)| {
            let mut d = vec![n, c];
            d.extend(sp.iter().zip(&geo).map(|(&s, g)| s.max(g.0)));
            (d, geo)
        }),
        mode in prop::sample::select(kiln::ResampleMode::ALL.to_vec()),
        nhwc in any::<bool>(),
        dt in data_type(),
        seed in any::<u64>(),
    ) {
        let layout = if nhwc { Layout::channels_last() } else { Layout::packed() };
        conform_cuda(pooling_case(&dims, layout, dt, mode, &geometry), CUDA_RESAMPLE, seed)?;
    }
}

/// The storage types of graph minor 2.
const NEW_TYPES: [DataType; 5] = [
    DataType::Boolean,
    DataType::I8,
    DataType::I32,
    DataType::Fp8E4m3,
    DataType::Fp8E5m2,
];
