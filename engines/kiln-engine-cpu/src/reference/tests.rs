//! Graph-level tests of the reference engine: hand-checked cases for each op family, the
//! convolution adjoint identities on random data, brute-force checks, and execution through
//! `Prepared::execute` on strided host buffers of several data types.

use super::*;
use crate::tensor_map::for_each_offset;
use half::{bf16, f16};
use kiln_core::tensor::{channels_last_strides, packed_strides};
use kiln_core::{
    ConvDirection, ConvOp, ConvParams, DataType, MatmulOp, Node, Op, PointwiseMode, PointwiseOp,
    PointwiseParams, ReductionMode, ReductionOp, TensorDesc,
};
use kiln_plugin_sdk::KilnTensorBinding;
use rand::{Rng, SeedableRng};
use std::ffi::c_void;

fn tensor(uid: i64, dims: &[i64]) -> TensorDesc {
    TensorDesc {
        uid,
        name: format!("t{uid}"),
        dims: dims.to_vec(),
        strides: packed_strides(dims),
        data_type: DataType::F32,
        is_virtual: false,
        alignment: 0,
        scalar: None,
    }
}

fn virt(uid: i64, dims: &[i64]) -> TensorDesc {
    TensorDesc {
        is_virtual: true,
        ..tensor(uid, dims)
    }
}

fn scalar(uid: i64, value: f64, rank: usize) -> TensorDesc {
    TensorDesc {
        scalar: Some(value),
        ..tensor(uid, &vec![1; rank])
    }
}

fn node(name: &str, op: Op) -> Node {
    Node {
        name: name.into(),
        compute_type: DataType::F32,
        op,
    }
}

fn pw(mode: PointwiseMode, a: i64, b: Option<i64>, out: i64) -> Op {
    Op::Pointwise(PointwiseOp {
        mode,
        a,
        b,
        c: None,
        out,
        params: PointwiseParams::default(),
    })
}

fn validated(tensors: Vec<TensorDesc>, nodes: Vec<Node>) -> OpGraph {
    let mut g = OpGraph {
        name: "test".into(),
        tensors,
        nodes,
    };
    g.validate().expect("test graph validates");
    g
}

fn run(graph: &OpGraph, inputs: Vec<(i64, Vec<f64>)>) -> HashMap<i64, Vec<f64>> {
    evaluate(graph, &inputs.into_iter().collect()).expect("evaluate")
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn count(dims: &[i64]) -> usize {
    dims.iter().map(|&d| d as usize).product()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "element {i}: got {g}, want {w}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Convolution

fn cp(pre: &[i64], post: &[i64], stride: &[i64], dilation: &[i64]) -> ConvParams {
    ConvParams {
        pre_padding: pre.to_vec(),
        post_padding: post.to_vec(),
        stride: stride.to_vec(),
        dilation: dilation.to_vec(),
    }
}

/// A one-node convolution graph: x uid 1, w uid 2, y uid 3.
fn conv_graph(direction: ConvDirection, x: &[i64], w: &[i64], p: &ConvParams) -> OpGraph {
    let y = kiln_core::shape::conv_output_dims(x, w, p, "test").expect("geometry");
    let op = Op::Conv(ConvOp {
        direction,
        x: 1,
        w: 2,
        y: 3,
        params: p.clone(),
    });
    validated(
        vec![tensor(1, x), tensor(2, w), tensor(3, &y)],
        vec![node("conv", op)],
    )
}

fn fprop(x_dims: &[i64], w_dims: &[i64], p: &ConvParams, x: &[f64], w: &[f64]) -> Vec<f64> {
    let g = conv_graph(ConvDirection::Fprop, x_dims, w_dims, p);
    run(&g, vec![(1, x.to_vec()), (2, w.to_vec())])
        .remove(&3)
        .unwrap()
}

fn dgrad(x_dims: &[i64], w_dims: &[i64], p: &ConvParams, dy: &[f64], w: &[f64]) -> Vec<f64> {
    let g = conv_graph(ConvDirection::Dgrad, x_dims, w_dims, p);
    run(&g, vec![(3, dy.to_vec()), (2, w.to_vec())])
        .remove(&1)
        .unwrap()
}

fn wgrad(x_dims: &[i64], w_dims: &[i64], p: &ConvParams, x: &[f64], dy: &[f64]) -> Vec<f64> {
    let g = conv_graph(ConvDirection::Wgrad, x_dims, w_dims, p);
    run(&g, vec![(1, x.to_vec()), (3, dy.to_vec())])
        .remove(&2)
        .unwrap()
}

#[test]
fn conv_1d_with_padding_by_hand() {
    // y[o] = x[o-1] - x[o+1] with zero padding of 1 on both sides.
    let p = cp(&[1], &[1], &[1], &[1]);
    let y = fprop(
        &[1, 1, 4],
        &[1, 1, 3],
        &p,
        &[1.0, 2.0, 3.0, 4.0],
        &[1.0, 0.0, -1.0],
    );
    assert_eq!(y, vec![-2.0, -2.0, -2.0, 3.0]);
}

#[test]
fn conv_asymmetric_padding_and_stride_by_hand() {
    // Padded input [0, 0, 1, 2, 3], box filter of 2.
    let p = cp(&[2], &[0], &[1], &[1]);
    let y = fprop(&[1, 1, 3], &[1, 1, 2], &p, &[1.0, 2.0, 3.0], &[1.0, 1.0]);
    assert_eq!(y, vec![0.0, 1.0, 3.0, 5.0]);
    // Stride 2 over [1..5]: windows [1,2] and [3,4].
    let p = cp(&[0], &[0], &[2], &[1]);
    let y = fprop(
        &[1, 1, 5],
        &[1, 1, 2],
        &p,
        &[1.0, 2.0, 3.0, 4.0, 5.0],
        &[1.0, 1.0],
    );
    assert_eq!(y, vec![3.0, 7.0]);
    // Post padding only: padded [1, 2, 3, 0].
    let p = cp(&[0], &[1], &[1], &[1]);
    let y = fprop(&[1, 1, 3], &[1, 1, 2], &p, &[1.0, 2.0, 3.0], &[1.0, 10.0]);
    assert_eq!(y, vec![21.0, 32.0, 3.0]);
}

#[test]
fn conv_2d_dilation_by_hand() {
    // x is 0..16 in a 4x4 plane; a 2x2 box filter dilated by 2 sums the corners of 3x3 windows.
    let x: Vec<f64> = (0..16).map(f64::from).collect();
    let p = cp(&[0, 0], &[0, 0], &[1, 1], &[2, 2]);
    let y = fprop(&[1, 1, 4, 4], &[1, 1, 2, 2], &p, &x, &[1.0; 4]);
    assert_eq!(y, vec![20.0, 24.0, 36.0, 40.0]);
}

#[test]
fn conv_groups_by_hand() {
    // Two groups of one channel each: channel k sees only input channel k.
    let p = cp(&[0, 0], &[0, 0], &[1, 1], &[1, 1]);
    let y = fprop(&[1, 2, 1, 1], &[2, 1, 1, 1], &p, &[3.0, 5.0], &[2.0, 10.0]);
    assert_eq!(y, vec![6.0, 50.0]);
    // One group: both output channels see both input channels.
    let y = fprop(
        &[1, 2, 1, 1],
        &[2, 2, 1, 1],
        &p,
        &[3.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0],
    );
    assert_eq!(y, vec![13.0, 29.0]);
}

#[test]
fn conv_dgrad_and_wgrad_by_hand() {
    // Forward: y[o] = x[o] + 2 x[o+1] over x of length 3.
    let p = cp(&[0], &[0], &[1], &[1]);
    let dx = dgrad(&[1, 1, 3], &[1, 1, 2], &p, &[1.0, 10.0], &[1.0, 2.0]);
    assert_eq!(dx, vec![1.0, 12.0, 20.0]);
    let dw = wgrad(&[1, 1, 3], &[1, 1, 2], &p, &[1.0, 2.0, 3.0], &[1.0, 10.0]);
    assert_eq!(dw, vec![21.0, 32.0]);
}

#[test]
fn conv_3d_by_hand() {
    // A 1x1x1 filter over a 2x2x2 volume with stride 2 picks the first voxel only.
    let x: Vec<f64> = (1..=8).map(f64::from).collect();
    let p = cp(&[0, 0, 0], &[0, 0, 0], &[2, 2, 2], &[1, 1, 1]);
    let y = fprop(&[1, 1, 2, 2, 2], &[1, 1, 1, 1, 1], &p, &x, &[3.0]);
    assert_eq!(y, vec![3.0]);
    // A 2x2x2 box filter sums the whole volume.
    let p = cp(&[0, 0, 0], &[0, 0, 0], &[1, 1, 1], &[1, 1, 1]);
    let y = fprop(&[1, 1, 2, 2, 2], &[1, 1, 2, 2, 2], &p, &x, &[1.0; 8]);
    assert_eq!(y, vec![36.0]);
}

/// Geometries for the random tests: (x dims, w dims, params).
fn geometries() -> Vec<(Vec<i64>, Vec<i64>, ConvParams)> {
    vec![
        // 2-d, 2 groups, asymmetric padding, stride and dilation differing per axis.
        (
            vec![2, 4, 7, 6],
            vec![6, 2, 3, 2],
            cp(&[1, 0], &[2, 1], &[2, 1], &[1, 2]),
        ),
        // 1-d with stride 3 and dilation 2.
        (vec![3, 3, 11], vec![4, 3, 3], cp(&[2], &[0], &[3], &[2])),
        // 3-d.
        (
            vec![1, 2, 5, 4, 6],
            vec![3, 2, 2, 3, 2],
            cp(&[1, 0, 1], &[0, 1, 1], &[1, 2, 2], &[2, 1, 1]),
        ),
        // Depthwise with a channel multiplier of 2.
        (
            vec![2, 3, 6, 6],
            vec![6, 1, 3, 3],
            cp(&[1, 1], &[1, 1], &[2, 2], &[1, 1]),
        ),
        // Stride larger than the filter: some inputs are never read.
        (vec![1, 2, 9], vec![2, 2, 2], cp(&[0], &[0], &[3], &[1])),
    ]
}

#[test]
fn conv_adjoint_identities_hold_on_random_data() {
    for (i, (xd, wd, p)) in geometries().into_iter().enumerate() {
        let yd = kiln_core::shape::conv_output_dims(&xd, &wd, &p, "t").unwrap();
        let seed = 100 * i as u64;
        let x = random(count(&xd), seed);
        let w = random(count(&wd), seed + 1);
        let dy = random(count(&yd), seed + 2);
        let y = fprop(&xd, &wd, &p, &x, &w);
        let dx = dgrad(&xd, &wd, &p, &dy, &w);
        let dw = wgrad(&xd, &wd, &p, &x, &dy);
        let (a, b, c) = (dot(&y, &dy), dot(&x, &dx), dot(&w, &dw));
        let scale = a.abs().max(1.0);
        assert!(
            (a - b).abs() <= 1e-9 * scale,
            "geometry {i}: <y,dy> {a} <x,dx> {b}"
        );
        assert!(
            (a - c).abs() <= 1e-9 * scale,
            "geometry {i}: <y,dy> {a} <w,dw> {c}"
        );
        assert!(y.iter().any(|&v| v != 0.0), "geometry {i}: y is all zero");
    }
}

/// An independent, direct-formula 2-d grouped convolution to check `visit`'s indexing.
fn naive_fprop_2d(xd: &[i64], wd: &[i64], p: &ConvParams, x: &[f64], w: &[f64]) -> Vec<f64> {
    let yd = kiln_core::shape::conv_output_dims(xd, wd, p, "t").unwrap();
    let (n, c, h, wi) = (xd[0], xd[1], xd[2], xd[3]);
    let (k, cg, r, s) = (wd[0], wd[1], wd[2], wd[3]);
    let (oh, ow) = (yd[2], yd[3]);
    let kg = k / (c / cg);
    let mut y = vec![0.0; count(&yd)];
    for b in 0..n {
        for kk in 0..k {
            let g = kk / kg;
            for i in 0..oh {
                for j in 0..ow {
                    let mut sum = 0.0;
                    for cc in 0..cg {
                        for u in 0..r {
                            for v in 0..s {
                                let hi = i * p.stride[0] - p.pre_padding[0] + u * p.dilation[0];
                                let wj = j * p.stride[1] - p.pre_padding[1] + v * p.dilation[1];
                                if hi < 0 || hi >= h || wj < 0 || wj >= wi {
                                    continue;
                                }
                                let ch = g * cg + cc;
                                let xv = x[(((b * c + ch) * h + hi) * wi + wj) as usize];
                                let wv = w[(((kk * cg + cc) * r + u) * s + v) as usize];
                                sum += xv * wv;
                            }
                        }
                    }
                    y[(((b * k + kk) * oh + i) * ow + j) as usize] = sum;
                }
            }
        }
    }
    y
}

#[test]
fn conv_fprop_matches_a_direct_formula() {
    for (xd, wd, p) in geometries().into_iter().filter(|g| g.0.len() == 4) {
        let x = random(count(&xd), 7);
        let w = random(count(&wd), 8);
        let got = fprop(&xd, &wd, &p, &x, &w);
        let want = naive_fprop_2d(&xd, &wd, &p, &x, &w);
        assert_close(&got, &want, 1e-13);
    }
}

// ---------------------------------------------------------------------------------------------
// Pointwise

#[test]
fn pointwise_broadcasts_through_size_one_dims() {
    let g = validated(
        vec![
            tensor(1, &[2, 1, 3]),
            tensor(2, &[1, 4, 1]),
            tensor(3, &[2, 4, 3]),
        ],
        vec![node("add", pw(PointwiseMode::Mul, 1, Some(2), 3))],
    );
    let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = vec![1.0, 10.0, 100.0, 1000.0];
    let y = run(&g, vec![(1, a.clone()), (2, b.clone())])
        .remove(&3)
        .unwrap();
    let mut want = Vec::new();
    for i in 0..2 {
        for bj in &b {
            for k in 0..3 {
                want.push(a[i * 3 + k] * bj);
            }
        }
    }
    assert_eq!(y, want);
}

#[test]
fn pointwise_scalar_operands_broadcast_in_either_position() {
    // out = 10 - x (scalar first), then out2 = out / 4 (scalar second, different rank).
    let g = validated(
        vec![
            tensor(1, &[2, 3]),
            scalar(2, 10.0, 1),
            virt(3, &[2, 3]),
            scalar(4, 4.0, 4),
            tensor(5, &[2, 3]),
        ],
        vec![
            node("sub", pw(PointwiseMode::Sub, 2, Some(1), 3)),
            node("div", pw(PointwiseMode::Div, 3, Some(4), 5)),
        ],
    );
    let x = vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
    let out = run(&g, vec![(1, x.clone())]);
    assert_eq!(out.len(), 1, "virtual tensors are not returned");
    let want: Vec<f64> = x.iter().map(|v| (10.0 - v) / 4.0).collect();
    assert_eq!(out[&5], want);
}

#[test]
fn pointwise_modes_in_a_graph_use_their_params() {
    let mut op = PointwiseOp {
        mode: PointwiseMode::Relu,
        a: 1,
        b: None,
        c: None,
        out: 2,
        params: PointwiseParams {
            relu_lower_clip_slope: Some(0.1),
            relu_upper_clip: Some(2.0),
            ..Default::default()
        },
    };
    let g = validated(
        vec![tensor(1, &[4]), tensor(2, &[4])],
        vec![node("relu", Op::Pointwise(op.clone()))],
    );
    let y = run(&g, vec![(1, vec![-10.0, 0.5, 1.5, 3.0])])
        .remove(&2)
        .unwrap();
    assert_eq!(y, vec![-1.0, 0.5, 1.5, 2.0]);
    op.mode = PointwiseMode::Gelu;
    op.params = PointwiseParams::default();
    let g = validated(
        vec![tensor(1, &[2]), tensor(2, &[2])],
        vec![node("gelu", Op::Pointwise(op))],
    );
    let y = run(&g, vec![(1, vec![1.0, -1.0])]).remove(&2).unwrap();
    assert_close(&y, &[0.8413447460685429, -0.15865525393145707], 1e-15);
}

// ---------------------------------------------------------------------------------------------
// Matmul

#[test]
fn matmul_broadcasts_batch_dims() {
    let (ad, bd, cd) = ([2i64, 1, 2, 3], [1i64, 3, 3, 2], [2i64, 3, 2, 2]);
    let g = validated(
        vec![tensor(1, &ad), tensor(2, &bd), tensor(3, &cd)],
        vec![node("mm", Op::Matmul(MatmulOp { a: 1, b: 2, c: 3 }))],
    );
    let a = random(count(&ad), 1);
    let b = random(count(&bd), 2);
    let c = run(&g, vec![(1, a.clone()), (2, b.clone())])
        .remove(&3)
        .unwrap();
    let mut want = Vec::new();
    for i in 0..2 {
        for j in 0..3 {
            let am = &a[i * 6..i * 6 + 6];
            let bm = &b[j * 6..j * 6 + 6];
            for r in 0..2 {
                for col in 0..2 {
                    want.push((0..3).map(|p| am[r * 3 + p] * bm[p * 2 + col]).sum::<f64>());
                }
            }
        }
    }
    assert_close(&c, &want, 1e-15);
}

// ---------------------------------------------------------------------------------------------
// Reduction

/// A brute-force reduction by multi-indices, for comparison.
fn naive_reduce(mode: ReductionMode, x: &[f64], xd: &[i64], yd: &[i64]) -> Vec<f64> {
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); count(yd)];
    for (flat, &v) in x.iter().enumerate() {
        let mut rem = flat;
        let mut idx = vec![0usize; xd.len()];
        for a in (0..xd.len()).rev() {
            idx[a] = rem % xd[a] as usize;
            rem /= xd[a] as usize;
        }
        let mut yflat = 0usize;
        for a in 0..xd.len() {
            let i = if yd[a] == 1 { 0 } else { idx[a] };
            yflat = yflat * yd[a] as usize + i;
        }
        groups[yflat].push(v);
    }
    groups
        .iter()
        .map(|g| match mode {
            ReductionMode::Sum => g.iter().sum(),
            ReductionMode::Mean => g.iter().sum::<f64>() / g.len() as f64,
            ReductionMode::Max => g.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            ReductionMode::Min => g.iter().cloned().fold(f64::INFINITY, f64::min),
            ReductionMode::Amax => g.iter().map(|v| v.abs()).fold(0.0, f64::max),
            ReductionMode::Norm1 => g.iter().map(|v| v.abs()).sum(),
            ReductionMode::Norm2 => g.iter().map(|v| v * v).sum::<f64>().sqrt(),
        })
        .collect()
}

#[test]
fn reductions_over_several_dim_sets() {
    let xd = [3i64, 4, 5, 2];
    let x = random(count(&xd), 42);
    let sets: [[i64; 4]; 6] = [
        [1, 4, 5, 2],
        [3, 1, 5, 1],
        [3, 4, 1, 2],
        [1, 1, 1, 1],
        [3, 4, 5, 2],
        [1, 4, 1, 1],
    ];
    for yd in sets {
        for mode in ReductionMode::ALL {
            let g = validated(
                vec![tensor(1, &xd), tensor(2, &yd)],
                vec![node("r", Op::Reduction(ReductionOp { mode, x: 1, y: 2 }))],
            );
            let y = run(&g, vec![(1, x.clone())]).remove(&2).unwrap();
            let want = naive_reduce(mode, &x, &xd, &yd);
            assert_close(&y, &want, 1e-14);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Whole graphs and errors

#[test]
fn a_fused_chain_keeps_virtual_intermediates_in_f64() {
    // conv -> relu (virtual) -> sum over spatial dims (output) and the conv output also real.
    let p = cp(&[1, 1], &[1, 1], &[1, 1], &[1, 1]);
    let op = Op::Conv(ConvOp {
        direction: ConvDirection::Fprop,
        x: 1,
        w: 2,
        y: 3,
        params: p.clone(),
    });
    let g = validated(
        vec![
            tensor(1, &[1, 2, 3, 3]),
            tensor(2, &[2, 2, 3, 3]),
            tensor(3, &[1, 2, 3, 3]),
            virt(4, &[1, 2, 3, 3]),
            tensor(5, &[1, 2, 1, 1]),
        ],
        vec![
            node(
                "sum",
                Op::Reduction(ReductionOp {
                    mode: ReductionMode::Sum,
                    x: 4,
                    y: 5,
                }),
            ),
            node("relu", pw(PointwiseMode::Relu, 3, None, 4)),
            node("conv", op),
        ],
    );
    let x = random(18, 3);
    let w = random(36, 4);
    let out = run(&g, vec![(1, x.clone()), (2, w.clone())]);
    let y = fprop(&[1, 2, 3, 3], &[2, 2, 3, 3], &p, &x, &w);
    assert_eq!(out[&3], y);
    let s0: f64 = y[..9].iter().map(|v| v.max(0.0)).sum();
    let s1: f64 = y[9..].iter().map(|v| v.max(0.0)).sum();
    assert_close(&out[&5], &[s0, s1], 1e-15);
    assert!(!out.contains_key(&4));
}

#[test]
fn evaluate_refuses_bad_inputs_with_named_errors() {
    let g = validated(
        vec![tensor(1, &[2, 2]), tensor(2, &[2, 2]), tensor(3, &[2, 2])],
        vec![node("add", pw(PointwiseMode::Add, 1, Some(2), 3))],
    );
    let ok = |v: f64| vec![v; 4];
    let err = |inputs: Vec<(i64, Vec<f64>)>| {
        evaluate(&g, &inputs.into_iter().collect())
            .unwrap_err()
            .message
    };
    let m = err(vec![(1, ok(1.0))]);
    assert!(m.contains("'t2'") && m.contains("no input values"), "{m}");
    let m = err(vec![(1, ok(1.0)), (2, vec![1.0; 3])]);
    assert!(m.contains("'t2'") && m.contains("3 values"), "{m}");
    let m = err(vec![(1, ok(1.0)), (2, ok(1.0)), (9, ok(1.0))]);
    assert!(m.contains("uid 9"), "{m}");
    let m = err(vec![(1, ok(1.0)), (2, ok(1.0)), (3, ok(1.0))]);
    assert!(
        m.contains("'t3'") && m.contains("node 'add' writes it"),
        "{m}"
    );
    assert_eq!(run(&g, vec![(1, ok(1.0)), (2, ok(2.0))])[&3], vec![3.0; 4]);
}

#[test]
fn evaluate_refuses_unvalidated_graphs_without_panicking() {
    // Nodes out of order: the reader comes first.
    let g = OpGraph {
        name: "raw".into(),
        tensors: vec![tensor(1, &[2]), virt(2, &[2]), tensor(3, &[2])],
        nodes: vec![
            node("second", pw(PointwiseMode::Neg, 2, None, 3)),
            node("first", pw(PointwiseMode::Abs, 1, None, 2)),
        ],
    };
    let m = evaluate(&g, &[(1, vec![1.0, 2.0])].into_iter().collect())
        .unwrap_err()
        .message;
    assert!(
        m.contains("node 'second'") && m.contains("topological"),
        "{m}"
    );
    // Output dims that do not match the operation.
    let g = OpGraph {
        name: "raw".into(),
        tensors: vec![tensor(1, &[2, 3]), tensor(2, &[3, 4]), tensor(3, &[2, 5])],
        nodes: vec![node("mm", Op::Matmul(MatmulOp { a: 1, b: 2, c: 3 }))],
    };
    let inputs = [(1, vec![0.0; 6]), (2, vec![0.0; 12])]
        .into_iter()
        .collect();
    let m = evaluate(&g, &inputs).unwrap_err().message;
    assert!(m.contains("node 'mm'"), "{m}");
}

// ---------------------------------------------------------------------------------------------
// Prepared::execute on host buffers

/// Storage of `n` elements of type T holding `values` (logical row-major) at `strides`.
fn to_storage<T: Copy>(
    values: &[f64],
    dims: &[i64],
    strides: &[i64],
    fill: T,
    conv: impl Fn(f64) -> T,
) -> Vec<T> {
    let desc = TensorDesc {
        strides: strides.to_vec(),
        ..tensor(0, dims)
    };
    let mut storage = vec![fill; desc.storage_elements().unwrap()];
    let mut i = 0;
    for_each_offset(dims, strides, |o| {
        storage[o] = conv(values[i]);
        i += 1;
    });
    storage
}

/// The logical row-major values of strided `storage`.
fn from_storage<T: Copy>(
    storage: &[T],
    dims: &[i64],
    strides: &[i64],
    conv: impl Fn(T) -> f64,
) -> Vec<f64> {
    let mut out = Vec::new();
    for_each_offset(dims, strides, |o| out.push(conv(storage[o])));
    out
}

fn bind<T>(uid: i64, v: &mut [T]) -> KilnTensorBinding {
    KilnTensorBinding {
        uid,
        ptr: v.as_mut_ptr() as *mut c_void,
    }
}

fn execute(graph: &OpGraph, bindings: &[KilnTensorBinding]) {
    let prepared = ReferenceEngine.prepare(graph, &[]).expect("prepare");
    assert_eq!(prepared.workspace_size(), 0);
    // SAFETY: every binding points at a live Vec sized for its tensor's layout.
    let map = unsafe { TensorMap::new(graph, bindings) }.expect("bindings");
    // SAFETY: as above; the workspace size is 0.
    unsafe { prepared.execute(&map, std::ptr::null_mut()) }.expect("execute");
}

#[test]
fn execute_conv_on_nhwc_buffers_matches_evaluate() {
    let (xd, wd) = ([2i64, 3, 5, 4], [4i64, 3, 3, 3]);
    let p = cp(&[1, 0], &[1, 2], &[2, 1], &[1, 1]);
    let yd = kiln_core::shape::conv_output_dims(&xd, &wd, &p, "t").unwrap();
    let (xs, ws, ys) = (
        channels_last_strides(&xd),
        channels_last_strides(&wd),
        channels_last_strides(&yd),
    );
    let mut g = conv_graph(ConvDirection::Fprop, &xd, &wd, &p);
    g.tensors[0].strides = xs.clone();
    g.tensors[1].strides = ws.clone();
    g.tensors[2].strides = ys.clone();
    g.validate().unwrap();
    // Values exactly representable in f32, so gather loses nothing.
    let x: Vec<f64> = random(count(&xd), 5)
        .iter()
        .map(|&v| v as f32 as f64)
        .collect();
    let w: Vec<f64> = random(count(&wd), 6)
        .iter()
        .map(|&v| v as f32 as f64)
        .collect();
    let mut xb = to_storage(&x, &xd, &xs, 0f32, |v| v as f32);
    let mut wb = to_storage(&w, &wd, &ws, 0f32, |v| v as f32);
    let mut yb = vec![f32::NAN; count(&yd)];
    execute(&g, &[bind(1, &mut xb), bind(2, &mut wb), bind(3, &mut yb)]);
    let got = from_storage(&yb, &yd, &ys, |v| v as f64);
    let want: Vec<f64> = fprop(&xd, &wd, &p, &x, &w)
        .iter()
        .map(|&v| v as f32 as f64)
        .collect();
    assert_eq!(got, want);
}

#[test]
fn execute_rounds_outputs_once_and_reads_outputs_back_unrounded() {
    // x (f32, rows padded to a pitch of 5) -> y16 = x / 3 (f16 output)
    //   -> z = y16 * 3 (f64 output, reads y16 unrounded) and yb = x / 3 (bf16 output).
    let dims = [2i64, 3];
    let pitched = [5i64, 1];
    let mut g = validated(
        vec![
            TensorDesc {
                strides: pitched.to_vec(),
                ..tensor(1, &dims)
            },
            scalar(2, 3.0, 2),
            TensorDesc {
                data_type: DataType::F16,
                strides: vec![1, 2],
                ..tensor(3, &dims)
            },
            TensorDesc {
                data_type: DataType::F64,
                ..tensor(4, &dims)
            },
            TensorDesc {
                data_type: DataType::Bf16,
                ..tensor(5, &dims)
            },
        ],
        vec![
            node("div", pw(PointwiseMode::Div, 1, Some(2), 3)),
            node("mul", pw(PointwiseMode::Mul, 3, Some(2), 4)),
            node("div_bf16", pw(PointwiseMode::Div, 1, Some(2), 5)),
        ],
    );
    g.validate().unwrap();
    let x = [1.0, 2.0, 5.0, -7.0, 0.1f32 as f64, 1000.0];
    let mut xb = to_storage(&x, &dims, &pitched, f32::NAN, |v| v as f32);
    let mut y16 = vec![f16::NAN; 6];
    let mut z = vec![f64::NAN; 6];
    let mut yb = vec![bf16::NAN; 6];
    execute(
        &g,
        &[
            bind(1, &mut xb),
            bind(3, &mut y16),
            bind(4, &mut z),
            bind(5, &mut yb),
        ],
    );
    let y16 = from_storage(&y16, &dims, &[1, 2], |v| v.to_f64());
    let yb: Vec<f64> = yb.iter().map(|v| v.to_f64()).collect();
    for i in 0..6 {
        let exact = x[i] / 3.0;
        assert_eq!(y16[i], f16::from_f64(exact).to_f64(), "f16 element {i}");
        assert_eq!(yb[i], bf16::from_f64(exact).to_f64(), "bf16 element {i}");
        // z reads y16 as its f64 value, not as the stored f16.
        assert_eq!(z[i], exact * 3.0, "f64 element {i}");
    }
    assert!(y16[0] != 1.0 / 3.0, "f16 rounding was observable");
}

#[test]
fn execute_refuses_a_missing_binding() {
    let g = validated(
        vec![tensor(1, &[2]), tensor(2, &[2])],
        vec![node("neg", pw(PointwiseMode::Neg, 1, None, 2))],
    );
    let mut x = vec![1.0f32, 2.0];
    // SAFETY: the one binding points at a live Vec of 2 f32.
    let res = unsafe { TensorMap::new(&g, &[bind(1, &mut x)]) };
    assert!(res.is_err());
}
