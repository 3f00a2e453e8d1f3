//! Plans whose plugin payload contradicts their envelope (issue: forged CPU plans wrote out of
//! bounds). Each forged file below has every checksum and digest recomputed, so it passes the
//! preamble, the FlatBuffer verifier and the payload's SHA-256; the restore-time cross-check of
//! payload and envelope must refuse it with `BAD_PARAM` naming the tensor, before any execute.

mod common;

use common::{cpu_handle, run};
use kiln::{
    DataType, Graph, HeurMode, PointwiseAttributes, PointwiseMode, Status, TensorAttributes,
};
use kiln_core::OpGraph;
use kiln_engine_cpu::payload;

/// `y = relu(x * s + bias)` with x and s of [5, 37] and bias [1, 37]: the graph of the report.
fn chain_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("chain");
    let t = |g: &mut Graph, name: &str, dims: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::F32),
        )
    };
    let x = t(&mut g, "x", &[5, 37]);
    let s = t(&mut g, "s", &[5, 37]);
    let bias = t(&mut g, "bias", &[1, 37]);
    let xs = g.pointwise(&x, Some(&s), PointwiseAttributes::new(PointwiseMode::Mul));
    let xsb = g.pointwise(
        &xs,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&xsb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name(common::OUTPUT).set_output(true);
    g
}

/// The graph-with-plan file of `chain_graph` on the CPU, with the payload's graph changed by
/// `forge` and every digest and checksum recomputed.
fn forged_file(engine: HeurMode, forge: impl FnOnce(&mut OpGraph)) -> Vec<u8> {
    let handle = cpu_handle();
    let mut g = chain_graph();
    g.build(&handle, &[engine]).expect("the chain builds");
    let saved = g.serialize().expect("the chain saves");
    let container = kiln_format::decode_container(&saved).expect("a container");
    let plan = container.plan.expect("with its plan");
    let env = kiln_format::decode_plan(plan).expect("an envelope");
    let mut p = payload::decode(env.payload).expect("a CPU payload");
    forge(&mut p.graph);
    let forged_payload = payload::encode(p.engine_id, &p.knobs, &p.graph);
    let mut forged_env = env.clone();
    forged_env.payload = &forged_payload;
    let forged_plan = kiln_format::encode_plan_as_given(&forged_env);
    kiln_format::encode_container(container.graph, Some(&forged_plan))
}

fn uid_of(g: &OpGraph, name: &str) -> i64 {
    g.tensors
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.uid)
        .expect("the tensor exists")
}

/// Asserts that every loader refuses `file` with BAD_PARAM and a message naming tensor `uid`.
fn assert_refused(file: &[u8], uid: i64, why: &str) {
    let handle = cpu_handle();
    let Err(e) = Graph::deserialize(Some(&handle), file) else {
        panic!("the forged file must not load ({why})");
    };
    assert_eq!(e.status(), Status::BadParam, "{e}");
    assert_eq!(
        e.tensor_uid(),
        Some(uid),
        "the error carries the tensor: {e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("tensor uid {uid}")) && msg.contains(why),
        "the error names tensor uid {uid} and says '{why}': {msg}"
    );
    let e =
        kiln::deserialize_compiled_plan(&handle, file).expect_err("nor through the plan loader");
    assert_eq!(e.status(), Status::BadParam, "{e}");
    assert!(e.to_string().contains(&format!("tensor uid {uid}")), "{e}");
}

/// The committed regression corpus: each file as `forged_file` makes it.
fn fixture(name: &str, file: &[u8]) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/forged")
        .join(name);
    if std::env::var_os("KILN_REGEN_FIXTURES").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create the folder");
        std::fs::write(&path, file).expect("write the fixture");
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_payload_with_a_larger_first_dimension_is_refused_at_load() {
    for (engine, name) in [
        (HeurMode::A, "larger_first_dim.kiln"),
        (HeurMode::Fallback, "larger_first_dim_reference.kiln"),
    ] {
        let mut x_uid = 0;
        let file = forged_file(engine, |g| {
            x_uid = uid_of(g, "x");
            for t in g.tensors.iter_mut().filter(|t| t.dims[0] == 5) {
                t.dims[0] = 5000;
            }
        });
        assert_refused(&file, x_uid, "spans 740000 bytes");
        assert_refused(&fixture(name, &file), x_uid, "spans 740000 bytes");
    }
}

#[test]
fn a_payload_binding_another_tensor_is_refused_at_load() {
    let mut s_uid = 0;
    let file = forged_file(HeurMode::A, |g| {
        s_uid = uid_of(g, "s");
        let renamed = 9_999;
        for t in g.tensors.iter_mut().filter(|t| t.uid == s_uid) {
            t.uid = renamed;
        }
        for n in &mut g.nodes {
            if let kiln_core::Op::Pointwise(p) = &mut n.op {
                if p.b == Some(s_uid) {
                    p.b = Some(renamed);
                }
            }
        }
    });
    assert_refused(&file, 9_999, "the envelope lists only");
    assert_refused(
        &fixture("other_uid.kiln", &file),
        9_999,
        "the envelope lists only",
    );
}

#[test]
fn a_payload_with_another_data_type_is_refused_at_load() {
    let mut bias_uid = 0;
    let file = forged_file(HeurMode::A, |g| {
        bias_uid = uid_of(g, "bias");
        for t in g.tensors.iter_mut().filter(|t| t.uid == bias_uid) {
            t.data_type = DataType::F16;
        }
    });
    assert_refused(&file, bias_uid, "data type");
    assert_refused(
        &fixture("other_data_type.kiln", &file),
        bias_uid,
        "data type",
    );
}

#[test]
fn an_untouched_payload_still_loads_and_runs() {
    let file = forged_file(HeurMode::A, |_| {});
    let handle = cpu_handle();
    let loaded = Graph::deserialize(Some(&handle), &file).expect("an honest file loads");
    let committed = fixture("honest.kiln", &file);
    Graph::deserialize(Some(&handle), &committed).expect("the committed honest file loads");
    let want = {
        let mut g = chain_graph();
        g.build(&handle, &[HeurMode::Fallback]).expect("reference");
        run(&g, &handle).expect("runs")
    };
    common::assert_close(&run(&loaded, &handle).expect("runs"), &want, "loaded chain");
}
