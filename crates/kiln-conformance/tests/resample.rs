//! resample (pooling: max with an optional index, average including or excluding padding) and
//! resample_backward over random shapes (1 to 3 spatial dims), windows, strides, paddings,
//! layouts and types, on every engine that claims them; the reference checked against a direct
//! computation here; worked examples with known values.

mod common;

use common::{config, conform, data_type};
use kiln::{DataType, Graph, ResampleAttributes, ResampleMode, TensorAttributes};
use kiln_conformance::compare::compare_values;
use kiln_conformance::{
    Case, Domain, Layout, Session, TensorSpec, CUDA_RESAMPLE_BACKWARD, REFERENCE, RESAMPLE,
    RESAMPLE_BACKWARD,
};
use kiln_core::ops::resample::ResampleGeometry;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// One pooling node, or its backward.
#[derive(Debug, Clone)]
struct PoolSpec {
    x: TensorSpec,
    mode: ResampleMode,
    geometry: ResampleGeometry,
    /// The index output's type (max pooling forward), or the index input's (backward).
    index: Option<DataType>,
    out_layout: Layout,
}

impl PoolSpec {
    fn y_dims(&self) -> Vec<i64> {
        self.geometry.output_dims(&self.x.dims, "spec").unwrap()
    }

    fn attributes(&self) -> ResampleAttributes {
        let g = &self.geometry;
        ResampleAttributes::new(self.mode, &g.window)
            .name("pool")
            .stride(&g.stride)
            .pre_padding(&g.pre_padding)
            .post_padding(&g.post_padding)
    }

    /// Inputs on a coarse grid for max pooling, so that ties (and the first-maximum rule) occur.
    fn domain(&self) -> Domain {
        match self.mode {
            ResampleMode::MaxPool => Domain::COARSE,
            _ => Domain::WIDE,
        }
    }

    fn case(&self) -> Case {
        let mut g = Graph::new();
        let x = self.x.add_to(&mut g, "x");
        let out = g
            .resample(&x, self.attributes().generate_index(self.index.is_some()))
            .expect("resample node");
        let y_dims = self.y_dims();
        out.y.set_stride(&self.out_layout.strides(&y_dims));
        let mut case = Case::new(format!("{self:?}"), g)
            .input(&x, self.domain())
            .output(&out.y);
        if let Some(i) = &out.index {
            i.set_data_type(self.index.unwrap_or(DataType::I32));
            case = case.output(i);
        }
        let window = self.geometry.window_elements() as usize;
        case = case.terms(window);
        if kiln_conformance::specs::optimized_type(self.x.data_type) {
            case = case.expect_engine(RESAMPLE);
        }
        case
    }

    /// The backward case: dy (and the index or x for max pooling) to dx.
    fn backward_case(&self) -> Case {
        let mut g = Graph::new();
        let y_dims = self.y_dims();
        let dy = TensorSpec::new(&y_dims, self.out_layout.clone(), self.x.data_type)
            .add_to(&mut g, "dy");
        let max = self.mode == ResampleMode::MaxPool;
        let index = (max && self.index.is_some()).then(|| {
            TensorSpec::new(
                &y_dims,
                Layout::packed(),
                self.index.unwrap_or(DataType::I32),
            )
            .add_to(&mut g, "index")
        });
        let x = (max && index.is_none()).then(|| self.x.add_to(&mut g, "x"));
        let dx = g
            .resample_backward(&dy, index.as_ref(), x.as_ref(), self.attributes())
            .expect("resample_backward node");
        dx.set_dim(&self.x.dims);
        dx.set_stride(&self.x.layout.strides(&self.x.dims));
        let mut case = Case::new(format!("backward {self:?}"), g).input(&dy, Domain::SYMMETRIC);
        if let Some(i) = &index {
            let positions = self.geometry.window_elements() as f64;
            case = case.input(
                i,
                Domain {
                    lo: 0.0,
                    hi: positions - 1.0,
                    step: 1.0,
                },
            );
        }
        if let Some(x) = &x {
            case = case.input(x, Domain::COARSE);
        }
        // dx sums the dy of every window covering an element.
        let overlap: i64 = self
            .geometry
            .window
            .iter()
            .zip(&self.geometry.stride)
            .map(|(w, s)| (w + s - 1) / s)
            .product();
        case = case.output(&dx).terms(overlap as usize);
        if kiln_conformance::specs::optimized_type(self.x.data_type) {
            case = case.expect_engine(RESAMPLE_BACKWARD);
        }
        case
    }
}

fn pool() -> impl Strategy<Value = PoolSpec> {
    (1usize..=3).prop_flat_map(|spatial| {
        let geometry = prop::collection::vec((1i64..=4, 1i64..=3, 0i64..4, 0i64..4), spatial);
        (
            1i64..=2,
            // Mostly few channels; 8 and 16 also reach the CUDA kernels' channel-vector paths
            // (16 bytes of f16/bf16 or f32 channels) where the layout is channels-last.
            prop_oneof![4 => 1i64..=5, 1 => Just(8i64), 1 => Just(16i64)],
            prop::collection::vec(1i64..=9, spatial),
            geometry,
            prop::sample::select(ResampleMode::ALL.to_vec()),
            prop_oneof![
                Just(Layout::packed()),
                Just(Layout::channels_last()),
                Just(Layout::transposed())
            ],
            data_type(),
            prop_oneof![
                Just(None),
                Just(Some(DataType::I32)),
                Just(Some(DataType::I8)),
                Just(Some(DataType::F32))
            ],
            prop_oneof![Just(Layout::packed()), Just(Layout::channels_last())],
        )
            .prop_map(|(n, c, sp, geo, mode, layout, dt, index, out_layout)| {
                let geometry = ResampleGeometry {
                    window: geo.iter().map(|g| g.0).collect(),
                    stride: geo.iter().map(|g| g.1).collect(),
                    pre_padding: geo.iter().map(|g| g.2 % g.0).collect(),
                    post_padding: geo.iter().map(|g| g.3 % g.0).collect(),
                };
                let mut dims = vec![n, c];
                // Large enough for one window.
                dims.extend(sp.iter().zip(&geometry.window).map(|(&s, &w)| s.max(w)));
                PoolSpec {
                    x: TensorSpec::new(&dims, layout, dt),
                    mode,
                    geometry,
                    index: if mode == ResampleMode::MaxPool {
                        index
                    } else {
                        None
                    },
                    out_layout,
                }
            })
    })
}

/// y and the first maximum's window position, computed directly from row-major x.
fn direct(spec: &PoolSpec, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let g = &spec.geometry;
    let xd = &spec.x.dims;
    let yd = spec.y_dims();
    let spatial = xd.len() - 2;
    let in_plane: i64 = xd[2..].iter().product();
    let out_plane: i64 = yd[2..].iter().product();
    let window = g.window_elements();
    let (mut y, mut idx) = (Vec::new(), Vec::new());
    for plane in 0..(xd[0] * xd[1]) {
        for o in 0..out_plane {
            // Output coordinates, last spatial dim fastest.
            let mut oc = vec![0i64; spatial];
            let mut r = o;
            for d in (0..spatial).rev() {
                oc[d] = r % yd[d + 2];
                r /= yd[d + 2];
            }
            let (mut best, mut at, mut sum, mut n) = (f64::NEG_INFINITY, -1i64, 0.0, 0i64);
            for w in 0..window {
                let mut wc = vec![0i64; spatial];
                let mut r = w;
                for d in (0..spatial).rev() {
                    wc[d] = r % g.window[d];
                    r /= g.window[d];
                }
                let pos: Vec<i64> = (0..spatial)
                    .map(|d| oc[d] * g.stride[d] - g.pre_padding[d] + wc[d])
                    .collect();
                if (0..spatial).any(|d| pos[d] < 0 || pos[d] >= xd[d + 2]) {
                    continue;
                }
                let flat = pos
                    .iter()
                    .zip(&xd[2..])
                    .fold(0i64, |acc, (&p, &s)| acc * s + p);
                let v = x[(plane * in_plane + flat) as usize];
                sum += v;
                n += 1;
                if at < 0 || (v.is_nan() && !best.is_nan()) || v > best {
                    best = v;
                    at = w;
                }
            }
            match spec.mode {
                ResampleMode::MaxPool => y.push(best),
                ResampleMode::AvgPoolIncludePadding => y.push(sum / window as f64),
                ResampleMode::AvgPoolExcludePadding => y.push(sum / n as f64),
            }
            idx.push(at as f64);
        }
    }
    (y, idx)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn resample_conforms(spec in pool(), seed in any::<u64>()) {
        conform(spec.case(), seed)?;
    }

    #[test]
    fn resample_backward_conforms(spec in pool(), seed in any::<u64>()) {
        conform(spec.backward_case(), seed)?;
    }

    /// The oracle itself: the reference's y and index equal a direct computation.
    #[test]
    fn reference_resample_is_right(spec in pool(), seed in any::<u64>()) {
        let mut case = spec.case();
        let tol = case.tolerance_for(spec.x.data_type);
        let mut session = Session::open(&mut case, seed).map_err(TestCaseError::fail)?;
        let x = session.inputs()[0].to_f64_vec();
        let outs = session.run(REFERENCE).map_err(TestCaseError::fail)?;
        let (y, idx) = direct(&spec, &x);
        let name = session.case().name().to_string();
        compare_values(&format!("reference y on '{name}' vs direct"), outs[0].desc(), &outs[0].to_f64_vec(), &y, tol)
            .map_err(TestCaseError::fail)?;
        if spec.index.is_some() {
            prop_assert_eq!(outs[1].to_f64_vec(), idx, "index on '{}'", name);
        }
    }
}

fn run(
    g: &mut Graph,
    feeds: &mut [(&kiln::Tensor, Vec<f32>)],
    outs: &[&kiln::Tensor],
) -> Vec<Vec<f64>> {
    let handle = kiln::Handle::cpu().unwrap();
    g.build(&handle, &[kiln::HeurMode::A]).unwrap();
    let mut hosts: Vec<kiln::HostTensor> = feeds
        .iter()
        .map(|(t, v)| kiln::HostTensor::from_f32(t, v).unwrap())
        .collect();
    let mut out_hosts: Vec<kiln::HostTensor> = outs
        .iter()
        .map(|t| kiln::HostTensor::for_tensor(t).unwrap())
        .collect();
    let mut ws = kiln::Workspace::for_graph(g).unwrap();
    let mut pack = kiln::VariantPack::new();
    for ((t, _), h) in feeds.iter().zip(hosts.iter_mut()) {
        pack.insert(t, h);
    }
    for (t, h) in outs.iter().zip(out_hosts.iter_mut()) {
        pack.insert(t, h);
    }
    g.execute(&handle, &mut pack, &mut ws).unwrap();
    drop(pack);
    out_hosts.iter().map(|h| h.to_f64_vec()).collect()
}

/// A known example: 1x1x4x4, window 2, stride 2 (max with index, both averages with padding),
/// and max pooling's backward through the index.
#[test]
fn worked_examples() {
    let x_values: Vec<f32> = vec![
        1.0, 5.0, 2.0, 2.0, //
        3.0, 4.0, 8.0, 2.0, //
        0.0, -1.0, 7.0, 7.0, //
        6.0, 6.0, 7.0, 1.0,
    ];
    let f32 = |n: &str, d: &[i64]| {
        TensorAttributes::new()
            .name(n)
            .dim(d)
            .data_type(DataType::F32)
    };
    let mut g = Graph::new();
    let x = g.tensor(f32("x", &[1, 1, 4, 4]));
    let out = g
        .resample(
            &x,
            ResampleAttributes::new(ResampleMode::MaxPool, &[2, 2])
                .stride(&[2, 2])
                .generate_index(true),
        )
        .unwrap();
    out.y.set_output(true);
    let index = out.index.clone().unwrap();
    index.set_output(true);
    let got = run(&mut g, &mut [(&x, x_values.clone())], &[&out.y, &index]);
    assert_eq!(got[0], vec![5.0, 8.0, 6.0, 7.0]);
    // Row-major positions in each 2x2 window; ties take the first (7 at position 0).
    assert_eq!(got[1], vec![1.0, 2.0, 2.0, 0.0]);

    // Average over 3x3 windows with padding 1 around, stride 2: corner windows hold 4 elements.
    for (mode, want_first) in [
        (
            ResampleMode::AvgPoolIncludePadding,
            (1.0 + 5.0 + 3.0 + 4.0) / 9.0,
        ),
        (
            ResampleMode::AvgPoolExcludePadding,
            (1.0 + 5.0 + 3.0 + 4.0) / 4.0,
        ),
    ] {
        let mut g = Graph::new();
        let x = g.tensor(f32("x", &[1, 1, 4, 4]));
        let out = g
            .resample(
                &x,
                ResampleAttributes::new(mode, &[3, 3])
                    .stride(&[2, 2])
                    .pre_padding(&[1, 1])
                    .post_padding(&[1, 1]),
            )
            .unwrap();
        out.y.set_output(true);
        let got = run(&mut g, &mut [(&x, x_values.clone())], &[&out.y]);
        assert_eq!(out.y.dims(), vec![1, 1, 2, 2]);
        assert!(
            (got[0][0] - want_first).abs() < 1e-6,
            "{mode:?}: {:?}",
            got[0]
        );
    }

    // Backward of the max pooling above through its index: dy lands on each maximum.
    let mut g = Graph::new();
    let dy = g.tensor(f32("dy", &[1, 1, 2, 2]));
    let idx = g.tensor(
        TensorAttributes::new()
            .name("index")
            .dim(&[1, 1, 2, 2])
            .data_type(DataType::I32),
    );
    let dx = g
        .resample_backward(
            &dy,
            Some(&idx),
            None,
            ResampleAttributes::new(ResampleMode::MaxPool, &[2, 2]).stride(&[2, 2]),
        )
        .unwrap();
    dx.set_output(true);
    let got = run(
        &mut g,
        &mut [
            (&dy, vec![10.0, 20.0, 30.0, 40.0]),
            (&idx, vec![1.0, 2.0, 2.0, 0.0]),
        ],
        &[&dx],
    );
    assert_eq!(
        dx.dims(),
        vec![1, 1, 4, 4],
        "the smallest input of a 2x2 pooling"
    );
    let mut want = vec![0.0; 16];
    want[1] = 10.0;
    want[6] = 20.0;
    want[12] = 30.0;
    want[10] = 40.0;
    assert_eq!(got[0], want);
}

/// Max pooling backward without an index finds the maxima again from x (through the plan's
/// workspace on the backward engine); the forward pooling engine declines backward graphs.
#[test]
fn backward_from_x_conforms_on_the_backward_engine_and_the_reference() {
    let spec = PoolSpec {
        x: TensorSpec::new(&[2, 3, 7, 6], Layout::channels_last(), DataType::F32),
        mode: ResampleMode::MaxPool,
        geometry: ResampleGeometry {
            window: vec![3, 2],
            stride: vec![2, 1],
            pre_padding: vec![1, 0],
            post_padding: vec![1, 1],
        },
        index: None,
        out_layout: Layout::packed(),
    };
    let mut case = spec.backward_case();
    let session = Session::open(&mut case, 5).expect("session");
    let mut claimed = session.claimed();
    claimed.sort();
    match kiln_conformance::device_under_test().expect("device under test") {
        kiln::Device::Cpu => assert_eq!(claimed, vec![REFERENCE, RESAMPLE_BACKWARD]),
        _ => assert_eq!(claimed, vec![REFERENCE, CUDA_RESAMPLE_BACKWARD]),
    }
    drop(session);
    kiln_conformance::assert_conforms(spec.backward_case(), 5);
}

/// Channels-last tensors with a channel count that is a multiple of 16 bytes: the CUDA kernels'
/// channel-vector paths (the random cases above have at most 5 channels). Every mode, forward
/// and backward, with each index type and without, in each storage type; a 3x3 window of
/// stride 2 with padding, so windows overlap, cross the edges and cover up to four outputs,
/// and a 2x4 window of stride 1 (windows overlapping by three columns). The widths take the
/// kernels' runs of adjacent positions along W past the end: odd and even outputs (5, 12) and
/// odd and even dx widths (13, 10).
#[test]
fn channel_vector_paths_conform() {
    let modes = [
        (ResampleMode::MaxPool, None),
        (ResampleMode::MaxPool, Some(DataType::I32)),
        (ResampleMode::MaxPool, Some(DataType::I8)),
        (ResampleMode::MaxPool, Some(DataType::F32)),
        (ResampleMode::AvgPoolIncludePadding, None),
        (ResampleMode::AvgPoolExcludePadding, None),
    ];
    let shapes = [
        (
            [2, 16, 9, 10],
            ResampleGeometry {
                window: vec![3, 3],
                stride: vec![2, 2],
                pre_padding: vec![1, 1],
                post_padding: vec![1, 0],
            },
        ),
        (
            [1, 8, 7, 13],
            ResampleGeometry {
                window: vec![2, 4],
                stride: vec![1, 1],
                pre_padding: vec![1, 2],
                post_padding: vec![0, 0],
            },
        ),
    ];
    for (dims, geometry) in shapes {
        for dt in [DataType::Bf16, DataType::F16, DataType::F32] {
            for (mode, index) in modes {
                let spec = PoolSpec {
                    x: TensorSpec::new(&dims, Layout::channels_last(), dt),
                    mode,
                    geometry: geometry.clone(),
                    index,
                    out_layout: Layout::channels_last(),
                };
                kiln_conformance::assert_conforms(spec.case(), 11);
                kiln_conformance::assert_conforms(spec.backward_case(), 11);
            }
        }
    }
}

/// Max pooling over NaN, infinities, signed zeros and ties, channels-last with 16 or 32 channels
/// (the CUDA kernels' channel-vector paths, two channels per instruction for 16-bit types) and
/// channels-first (the CPU engine's rows of outputs, whose windows' taps outside x are -inf):
/// windows with no NaN, with one or several (the first NaN is the maximum), with -inf only, and
/// cut by the padding, in each storage type with an i8 and an i32 index.
#[test]
fn max_pooling_special_values_conform() {
    let specials = [
        f64::NAN,
        f64::NEG_INFINITY,
        f64::INFINITY,
        -0.0,
        0.0,
        1.0,
        -1.0,
        0.5,
    ];
    for (channels, dt) in [
        (16, DataType::Bf16),
        (32, DataType::F16),
        (16, DataType::F32),
    ] {
        for (index, layout) in [
            (DataType::I8, Layout::channels_last()),
            (DataType::I32, Layout::channels_last()),
            (DataType::I32, Layout::packed()),
        ] {
            let channels_last = layout == Layout::channels_last();
            let spec = PoolSpec {
                x: TensorSpec::new(&[2, channels, 7, 9], layout.clone(), dt),
                mode: ResampleMode::MaxPool,
                geometry: ResampleGeometry {
                    window: vec![3, 3],
                    stride: vec![2, 2],
                    pre_padding: vec![1, 1],
                    post_padding: vec![1, 1],
                },
                index: Some(index),
                out_layout: layout,
            };
            let mut case = spec.case().allow_non_finite();
            let mut session = Session::open(&mut case, 3).expect("session");
            let n = 2 * channels * 7 * 9;
            // NaN at about one element in eleven, -inf in the second image's first rows, the
            // rest drawn from the specials by a fixed hash (ties among them are common).
            let values: Vec<f64> = (0..n)
                .map(|i| {
                    let h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                    if h.is_multiple_of(11) {
                        f64::NAN
                    } else if i >= n / 2 && i < n / 2 + channels * 20 {
                        f64::NEG_INFINITY
                    } else {
                        specials[1 + (h % 7) as usize]
                    }
                })
                .collect();
            session.set_input_values(0, &values).expect("x values");
            let outcome = kiln_conformance::check_session(&mut session)
                .unwrap_or_else(|e| panic!("{dt} with an {index} index: {e}"));
            // On a GPU a case that no engine of the device claims passes with nothing compared
            // (the channels-first case is there for the CPU engine).
            assert!(
                outcome.claimed_on_device() || !channels_last,
                "{dt} with an {index} index: no engine of the device under test claims it"
            );
        }
    }
}

/// Bad attributes are refused naming the node and the field.
#[test]
fn bad_geometry_is_refused_with_its_field() {
    let mut g = Graph::new();
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&[1, 1, 4, 4])
            .data_type(DataType::F32),
    );
    let out = g.resample(
        &x,
        ResampleAttributes::new(ResampleMode::MaxPool, &[2, 2]).pre_padding(&[2, 0]),
    );
    let e = match out {
        Err(e) => e,
        Ok(o) => {
            o.y.set_output(true);
            g.validate()
                .expect_err("padding as large as the window must be refused")
        }
    };
    assert!(e.to_string().contains("pre_padding 2"), "{e}");
    let mut g = Graph::new();
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(&[1, 1, 4, 4])
            .data_type(DataType::F32),
    );
    let out = g.resample(
        &x,
        ResampleAttributes::new(ResampleMode::AvgPoolIncludePadding, &[2, 2]).generate_index(true),
    );
    let e = match out {
        Err(e) => e,
        Ok(o) => {
            o.y.set_output(true);
            o.index.unwrap().set_output(true);
            g.validate()
                .expect_err("an index of average pooling must be refused")
        }
    };
    assert!(
        e.to_string().contains("only maxpool writes an index"),
        "{e}"
    );
}
