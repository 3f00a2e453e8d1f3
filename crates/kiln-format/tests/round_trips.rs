//! Encode then decode gives back what was encoded, for every op kind, every pointwise parameter,
//! both plan envelope versions and both container shapes; writers are deterministic.

mod common;

use common::*;
use kiln_core::{DataType, Op, OpGraph, PointwiseParams};
use kiln_format::*;

#[test]
fn every_graph_round_trips_through_the_binary_format() {
    for g in all_graphs() {
        let blob = encode_graph(&g);
        let back = decode_graph(&blob).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(back, g, "graph '{}'", g.name);
        assert_eq!(
            encode_graph(&back),
            blob,
            "re-encoding '{}' changed bytes",
            g.name
        );
    }
}

#[test]
fn every_pointwise_mode_and_parameter_survives() {
    let g = every_pointwise_mode_graph();
    let back = decode_graph(&encode_graph(&g)).unwrap();
    let mut modes = Vec::new();
    for n in &back.nodes {
        let Op::Pointwise(p) = &n.op else {
            panic!("node {} is not pointwise", n.name)
        };
        let want = kiln_core::PointwiseParams {
            axis: (p.mode == kiln_core::PointwiseMode::GenIndex).then_some(1),
            ..all_params()
        };
        assert_eq!(p.params, want, "node {}", n.name);
        modes.push(p.mode);
    }
    assert_eq!(modes, kiln_core::PointwiseMode::ALL.to_vec());
}

#[test]
fn each_pointwise_parameter_alone_round_trips_including_infinities() {
    let base = every_pointwise_mode_graph();
    let values = [
        0.0,
        -0.0,
        1e-300,
        -7.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
    ];
    for field in 0..6 {
        for &v in &values {
            let mut p = PointwiseParams::default();
            let slot = match field {
                0 => &mut p.relu_lower_clip,
                1 => &mut p.relu_upper_clip,
                2 => &mut p.relu_lower_clip_slope,
                3 => &mut p.elu_alpha,
                4 => &mut p.softplus_beta,
                _ => &mut p.swish_beta,
            };
            *slot = Some(v);
            let mut g = base.clone();
            for n in &mut g.nodes {
                if let Op::Pointwise(op) = &mut n.op {
                    op.params = p;
                }
            }
            let back = decode_graph(&encode_graph(&g)).unwrap();
            let Op::Pointwise(op) = &back.nodes[0].op else {
                panic!("not pointwise")
            };
            let got = [
                op.params.relu_lower_clip,
                op.params.relu_upper_clip,
                op.params.relu_lower_clip_slope,
                op.params.elu_alpha,
                op.params.softplus_beta,
                op.params.swish_beta,
            ];
            for (i, g) in got.iter().enumerate() {
                if i == field {
                    assert_eq!(
                        g.map(f64::to_bits),
                        Some(v.to_bits()),
                        "field {i} value {v}"
                    );
                } else {
                    assert_eq!(*g, None, "field {i} should stay absent");
                }
            }
        }
    }
}

#[test]
fn tensor_attributes_round_trip_bit_exactly() {
    let mut g = fixture_graph();
    let t = g.tensors.iter_mut().find(|t| t.uid == 4).unwrap();
    t.scalar = Some(f64::NAN);
    t.name = "скаляр ✓".into();
    let x = g.tensors.iter_mut().find(|t| t.uid == 1).unwrap();
    x.alignment = 256;
    let back = decode_graph(&encode_graph(&g)).unwrap();
    let s = back.tensors.iter().find(|t| t.uid == 4).unwrap();
    assert_eq!(s.scalar.map(f64::to_bits), Some(f64::NAN.to_bits()));
    assert_eq!(s.name, "скаляр ✓");
    let x = back.tensors.iter().find(|t| t.uid == 1).unwrap();
    assert_eq!(x.alignment, 256);
    assert_eq!(
        x.strides,
        kiln_core::tensor::channels_last_strides(&[1, 2, 5, 5])
    );
    assert_eq!(x.data_type, DataType::F16);
    let types: Vec<_> = back.tensors.iter().map(|t| t.data_type).collect();
    for dt in DataType::FLOATS {
        assert!(types.contains(&dt), "fixture graph lacks {dt}");
    }
    let minor2 = decode_graph(&encode_graph(&fixture_minor2_graph())).unwrap();
    let types: Vec<_> = minor2.tensors.iter().map(|t| t.data_type).collect();
    for dt in DataType::ALL
        .into_iter()
        .filter(|d| !DataType::FLOATS.contains(d))
    {
        assert!(types.contains(&dt), "minor-2 fixture graph lacks {dt}");
    }
}

#[test]
fn graphs_are_written_in_topological_order_whatever_order_they_hold() {
    let sorted = fixture_graph();
    let mut shuffled = sorted.clone();
    shuffled.nodes.reverse();
    assert_eq!(encode_graph(&shuffled), encode_graph(&sorted));
}

#[test]
fn an_invalid_graph_is_written_but_refused_on_read() {
    let mut g = fixture_graph();
    g.nodes.retain(|n| n.name != "matmul");
    let blob = encode_graph(&g);
    let err = decode_graph(&blob).unwrap_err();
    assert_eq!(err.status(), kiln_core::Status::BadParam, "{err}");
}

#[test]
fn plan_v2_round_trips_with_alignments() {
    let env = fixture_envelope(FIXTURE_PAYLOAD);
    let blob = encode_plan(&env);
    let back = decode_plan(&blob).unwrap();
    assert_eq!(back, env);
    assert_eq!(back.version, 2);
    assert_eq!(encode_plan(&back), blob);
}

#[test]
fn plan_v1_round_trips_without_alignments() {
    let env = fixture_envelope(FIXTURE_PAYLOAD);
    let blob = encode_plan_v1(&env);
    let back = decode_plan(&blob).unwrap();
    assert_eq!(back.version, 1);
    assert_eq!(back.alignments, None);
    assert_eq!(
        PlanEnvelope {
            version: 2,
            alignments: env.alignments.clone(),
            ..back.clone()
        },
        env
    );
    assert_eq!(encode_plan_v1(&back), blob);
    assert_eq!(
        encode_plan_as_given(&back),
        blob,
        "as-given of a v1 envelope is v1"
    );
}

#[test]
fn encode_plan_writes_one_alignment_per_uid() {
    let mut env = fixture_envelope(FIXTURE_PAYLOAD);
    env.alignments = None;
    assert_eq!(
        decode_plan(&encode_plan(&env)).unwrap().alignments,
        Some(vec![0; 5])
    );
    env.alignments = Some(vec![32]);
    assert_eq!(
        decode_plan(&encode_plan(&env)).unwrap().alignments,
        Some(vec![32, 0, 0, 0, 0])
    );
    env.alignments = Some(vec![1; 9]);
    assert_eq!(
        decode_plan(&encode_plan(&env)).unwrap().alignments,
        Some(vec![1; 5])
    );
}

#[test]
fn the_payload_is_borrowed_and_16_byte_aligned_for_every_length() {
    let data: Vec<u8> = (0..200u8).collect();
    for len in 0..=data.len() {
        let payload = &data[..len];
        for blob in [
            encode_plan(&fixture_envelope(payload)),
            encode_plan_v1(&fixture_envelope(payload)),
        ] {
            let env = decode_plan(&blob).unwrap();
            assert_eq!(env.payload, payload);
            let at = env.payload.as_ptr() as usize - blob.as_ptr() as usize;
            assert!(at + len <= blob.len());
            assert_eq!(at % 16, 0, "payload of {len} bytes at offset {at}");
        }
    }
}

#[test]
fn containers_round_trip_with_and_without_plan() {
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));

    let both = encode_container(&graph, Some(&plan));
    let c = decode_container(&both).unwrap();
    assert_eq!(c.graph, graph.as_slice());
    assert_eq!(c.plan, Some(plan.as_slice()));
    assert_eq!(decode_graph(&both).unwrap(), fixture_graph());
    assert_eq!(plan_part(&both).unwrap(), plan.as_slice());
    assert_eq!(
        decode_plan(&both).unwrap(),
        fixture_envelope(FIXTURE_PAYLOAD)
    );
    for nested in [c.graph, c.plan.unwrap()] {
        assert_eq!((nested.as_ptr() as usize - both.as_ptr() as usize) % 16, 0);
    }

    let graph_only = encode_container(&graph, None);
    let c = decode_container(&graph_only).unwrap();
    assert_eq!(c.graph, graph.as_slice());
    assert_eq!(c.plan, None);
    assert_eq!(decode_graph(&graph_only).unwrap(), fixture_graph());
}

#[test]
fn a_plan_taken_from_a_container_is_the_bare_plan_byte_for_byte() {
    let plan = encode_plan_v1(&fixture_envelope(FIXTURE_PAYLOAD));
    let both = encode_container(&encode_graph(&fixture_graph()), Some(&plan));
    let part = plan_part(&both).unwrap();
    assert_eq!(part, plan.as_slice());
    assert_eq!(plan_part(&plan).unwrap(), plan.as_slice());
    assert_eq!(decode_plan(part).unwrap().version, 1);
}

#[test]
fn nested_blobs_are_aligned_for_every_graph_and_plan_size() {
    let data = [0xA5u8; 40];
    for g in all_graphs() {
        let graph = encode_graph(&g);
        for len in 0..data.len() {
            let mut env = fixture_envelope(&data[..len]);
            env.engine_name = "e".repeat(len);
            let plan = encode_plan(&env);
            let blob = encode_container(&graph, Some(&plan));
            let c = decode_container(&blob).unwrap();
            for nested in [c.graph, c.plan.unwrap()] {
                let at = nested.as_ptr() as usize - blob.as_ptr() as usize;
                assert_eq!(at % 16, 0, "nested blob at offset {at}");
            }
            assert_eq!(c.plan, Some(plan.as_slice()));
            let back = decode_plan(&blob).unwrap();
            let at = back.payload.as_ptr() as usize - blob.as_ptr() as usize;
            assert_eq!(at % 16, 0, "payload at container offset {at}");
        }
    }
}

#[test]
fn writers_are_deterministic() {
    for g in all_graphs() {
        let copy: OpGraph = g.clone();
        assert_eq!(encode_graph(&g), encode_graph(&copy));
    }
    let env = fixture_envelope(FIXTURE_PAYLOAD);
    assert_eq!(encode_plan(&env), encode_plan(&env.clone()));
    let g = encode_graph(&fixture_graph());
    let p = encode_plan(&env);
    assert_eq!(
        encode_container(&g, Some(&p)),
        encode_container(&g, Some(&p))
    );
}
