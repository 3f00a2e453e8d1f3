//! Golden files of real CPU plans: graph-with-plan files saved by the engines of the day, with
//! inputs and the outputs they gave, under `tests/fixtures/plans/`. Today's plugins must restore
//! each one, re-save it byte-identically and compute the stored outputs from the stored inputs:
//! a payload stays loadable for the life of its engine name. `KILN_REGEN_FIXTURES=1` writes new
//! files for cases that have none; existing files are never rewritten (a fixture records what an
//! older kiln wrote, so changing it would defeat the test).
//!
//! | file | made by | what it proves |
//! |---|---|---|
//! | `cpu_conv_bias_relu_1_0` | CPU payload format 1.0, positional knobs | conv + fused epilogue |
//! | `cpu_matmul_bias_1_0` | CPU payload format 1.0 | matmul + fused bias |
//! | `cpu_pointwise_chain_1_0` | CPU payload format 1.0 | fused pointwise chain |
//! | `cpu_reference_conv_1_0` | CPU payload format 1.0 | the reference engine |
//! | `cpu_conv_envelope_v1` | envelope version 1 around a real CPU payload | v1 plans of real engines |
//! | `cpu_sdpa_gqa_causal_1_1` | CPU payload format 1.1 | tiled attention (GQA, B,S,H,D, bias, causal) |
//! | `cpu_layernorm_relu_1_1` | CPU payload format 1.1 | layernorm + fused relu on the norm engine |
//! | `cpu_maxpool_backward_from_x_1_1` | CPU payload format 1.1 | pooling backward (maxima found again in x, a workspace), NHWC |

mod common;

use common::cpu_handle;
use kiln::{
    ConvAttributes, DataType, Graph, HeurMode, HostTensor, LayernormAttributes, MatmulAttributes,
    PointwiseAttributes, PointwiseMode, ResampleAttributes, ResampleMode, SdpaAttributes,
    TensorAttributes,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn f32_tensor(g: &mut Graph, name: &str, dims: &[i64]) -> kiln::Tensor {
    g.tensor(
        TensorAttributes::new()
            .name(name)
            .dim(dims)
            .data_type(DataType::F32),
    )
}

fn conv_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("conv_bias_relu");
    let x = f32_tensor(&mut g, "x", &[1, 3, 9, 7]);
    let w = f32_tensor(&mut g, "w", &[4, 3, 3, 3]);
    let b = f32_tensor(&mut g, "b", &[1, 4, 1, 1]);
    let c = g.conv_fprop(&x, &w, ConvAttributes::new().padding(&[1, 1]));
    let cb = g.pointwise(&c, Some(&b), PointwiseAttributes::new(PointwiseMode::Add));
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name("y").set_output(true);
    g
}

fn matmul_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("matmul_bias");
    let a = f32_tensor(&mut g, "a", &[2, 5, 7]);
    let b = f32_tensor(&mut g, "b", &[2, 7, 3]);
    let bias = f32_tensor(&mut g, "bias", &[1, 1, 3]);
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    let y = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    y.set_name("y").set_output(true);
    g
}

fn pointwise_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("pointwise_chain");
    let x = f32_tensor(&mut g, "x", &[3, 11]);
    let s = f32_tensor(&mut g, "s", &[3, 11]);
    let b = f32_tensor(&mut g, "b", &[1, 11]);
    let xs = g.pointwise(&x, Some(&s), PointwiseAttributes::new(PointwiseMode::Mul));
    let xsb = g.pointwise(&xs, Some(&b), PointwiseAttributes::new(PointwiseMode::Add));
    let y = g.pointwise(&xsb, None, PointwiseAttributes::new(PointwiseMode::Tanh));
    y.set_name("y").set_output(true);
    g
}

fn sdpa_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("sdpa_gqa_causal");
    let bshd = |g: &mut Graph, name: &str, (b, h, s, d): (i64, i64, i64, i64)| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&[b, h, s, d])
                .stride(&[s * h * d, d, h * d, 1])
                .data_type(DataType::F32),
        )
    };
    let q = bshd(&mut g, "q", (1, 4, 5, 8));
    let k = bshd(&mut g, "k", (1, 2, 7, 8));
    let v = bshd(&mut g, "v", (1, 2, 7, 8));
    let bias = f32_tensor(&mut g, "bias", &[1, 4, 5, 7]);
    let out = g
        .sdpa(
            &q,
            &k,
            &v,
            SdpaAttributes::new()
                .attn_scale(0.35)
                .bias(&bias)
                .causal_mask_bottom_right(true),
        )
        .expect("sdpa");
    out.o.set_name("y").set_output(true);
    g
}

fn layernorm_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("layernorm_relu");
    let x = f32_tensor(&mut g, "x", &[3, 2, 7]);
    let scale = f32_tensor(&mut g, "scale", &[1, 2, 7]);
    let bias = f32_tensor(&mut g, "bias", &[1, 2, 7]);
    let out = g
        .layernorm(&x, &scale, &bias, LayernormAttributes::new().epsilon(1e-5))
        .expect("layernorm");
    let y = g.pointwise(&out.y, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name("y").set_output(true);
    g
}

/// Max pooling's backward from x (no index): x [2, 3, 7, 6] NHWC, window 3x2, stride 2,
/// padding 1 before the rows and 1 after both dims.
fn maxpool_backward_graph() -> Graph {
    let mut g = Graph::new();
    g.set_name("maxpool_backward_from_x");
    let nhwc = |d: [i64; 4]| [d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]];
    let tensor = |g: &mut Graph, name: &str, d: [i64; 4]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(&d)
                .stride(&nhwc(d))
                .data_type(DataType::F32),
        )
    };
    let x = tensor(&mut g, "x", [2, 3, 7, 6]);
    let dy = tensor(&mut g, "dy", [2, 3, 4, 3]);
    let dx = g
        .resample_backward(
            &dy,
            None,
            Some(&x),
            ResampleAttributes::new(ResampleMode::MaxPool, &[3, 2])
                .stride(&[2, 2])
                .pre_padding(&[1, 0])
                .post_padding(&[1, 1]),
        )
        .expect("resample_backward");
    dx.set_name("y")
        .set_output(true)
        .set_stride(&nhwc([2, 3, 7, 6]));
    g
}

struct Case {
    file: &'static str,
    make: fn() -> Graph,
    mode: HeurMode,
    envelope_v1: bool,
    engine: &'static str,
}

const CASES: [Case; 8] = [
    Case {
        file: "cpu_conv_bias_relu_1_0",
        make: conv_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_CONV_FPROP",
    },
    Case {
        file: "cpu_matmul_bias_1_0",
        make: matmul_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_MATMUL",
    },
    Case {
        file: "cpu_pointwise_chain_1_0",
        make: pointwise_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_POINTWISE",
    },
    Case {
        file: "cpu_reference_conv_1_0",
        make: conv_graph,
        mode: HeurMode::Fallback,
        envelope_v1: false,
        engine: "KILN_CPU_REFERENCE",
    },
    Case {
        file: "cpu_conv_envelope_v1",
        make: conv_graph,
        mode: HeurMode::A,
        envelope_v1: true,
        engine: "KILN_CPU_CONV_FPROP",
    },
    Case {
        file: "cpu_sdpa_gqa_causal_1_1",
        make: sdpa_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_SDPA_FLASH",
    },
    Case {
        file: "cpu_layernorm_relu_1_1",
        make: layernorm_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_NORM",
    },
    Case {
        file: "cpu_maxpool_backward_from_x_1_1",
        make: maxpool_backward_graph,
        mode: HeurMode::A,
        envelope_v1: false,
        engine: "KILN_CPU_RESAMPLE_BACKWARD",
    },
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plans")
}

/// Runs `plan` (of `graph`'s tensors) on `inputs` (uid → values); returns uid → output values.
fn execute(graph: &Graph, plan: &kiln::ExecutionPlan, inputs: &Value) -> Vec<(i64, Vec<f64>)> {
    let handle = cpu_handle();
    let og = graph.op_graph().expect("validated");
    let mut memory = Vec::new();
    for t in og.bound_tensors() {
        let mut m = HostTensor::zeros(t).expect("memory");
        match inputs.get(t.uid.to_string()) {
            Some(v) => {
                let values: Vec<f64> = v
                    .as_array()
                    .expect("an array")
                    .iter()
                    .map(|x| x.as_f64().expect("a number"))
                    .collect();
                m.fill_from_f64(&values).expect("fill");
            }
            None => m
                .fill_from_f64(&vec![f64::NAN; m.to_f64_vec().len()])
                .expect("poison"),
        }
        memory.push((t.uid, m));
    }
    let mut workspace = vec![0u8; plan.workspace_size()];
    let bindings: Vec<(i64, *mut std::ffi::c_void)> = memory
        .iter_mut()
        .map(|(uid, m)| (*uid, m.as_mut_ptr()))
        .collect();
    // SAFETY: each binding is a host buffer made for its tensor's layout from the same graph the
    // plan fits (checked by the caller through check_plan_fits or by construction), and the
    // workspace has the plan's size.
    unsafe {
        plan.execute(
            &handle,
            &bindings,
            workspace.as_mut_ptr().cast(),
            workspace.len(),
        )
    }
    .expect("the fixture's plan runs");
    memory
        .into_iter()
        .filter(|(uid, _)| inputs.get(uid.to_string()).is_none())
        .map(|(uid, m)| (uid, m.to_f64_vec()))
        .collect()
}

/// Writes the fixture of `case` (graph-with-plan file, inputs and outputs).
fn write_fixture(case: &Case, kiln_path: &Path, io_path: &Path) {
    let handle = cpu_handle();
    let mut g = (case.make)();
    g.build(&handle, &[case.mode]).expect("builds");
    let mut file = g.serialize().expect("saves");
    if case.envelope_v1 {
        let c = kiln_format::decode_container(&file).expect("container");
        let env = kiln_format::decode_plan(c.plan.expect("plan")).expect("envelope");
        let v1 = kiln_format::encode_plan_v1(&env);
        file = kiln_format::encode_container(c.graph, Some(&v1));
    }
    let og = g.op_graph().expect("validated");
    let out = g.tensor_by_name("y").and_then(|t| t.uid()).expect("y");
    let mut inputs = serde_json::Map::new();
    for t in og.bound_tensors().filter(|t| t.uid != out) {
        let h = HostTensor::random(t, 7 + t.uid as u64).expect("random");
        inputs.insert(t.uid.to_string(), json!(h.to_f64_vec()));
    }
    let inputs = Value::Object(inputs);
    let outputs: serde_json::Map<String, Value> = execute(&g, g.plan().expect("plan"), &inputs)
        .into_iter()
        .map(|(uid, v)| (uid.to_string(), json!(v)))
        .collect();
    std::fs::create_dir_all(dir()).expect("fixture folder");
    std::fs::write(kiln_path, &file).expect("write the plan");
    let io = json!({"engine": g.plan().expect("plan").engine_name(), "inputs": inputs, "outputs": outputs});
    std::fs::write(io_path, serde_json::to_string_pretty(&io).expect("json")).expect("write io");
}

#[test]
fn every_committed_plan_restores_resaves_identically_and_computes_its_outputs() {
    for case in &CASES {
        let kiln_path = dir().join(format!("{}.kiln", case.file));
        let io_path = dir().join(format!("{}.json", case.file));
        if !kiln_path.exists() && std::env::var_os("KILN_REGEN_FIXTURES").is_some() {
            write_fixture(case, &kiln_path, &io_path);
        }
        let file =
            std::fs::read(&kiln_path).unwrap_or_else(|e| panic!("{}: {e}", kiln_path.display()));
        let io: Value = serde_json::from_slice(
            &std::fs::read(&io_path).unwrap_or_else(|e| panic!("{}: {e}", io_path.display())),
        )
        .expect("the io file is JSON");
        let handle = cpu_handle();
        let graph = Graph::deserialize(Some(&handle), &file)
            .unwrap_or_else(|e| panic!("{}: today's plugins must restore it: {e}", case.file));
        let plan = graph.plan().expect("the file carries its plan");
        assert!(
            plan.engine_name().starts_with(case.engine),
            "{}: engine {}",
            case.file,
            plan.engine_name()
        );
        assert_eq!(io["engine"], plan.engine_name(), "{}", case.file);
        let plan_part = kiln_format::plan_part(&file).expect("a plan part");
        assert_eq!(
            kiln::serialize_compiled_plan(plan).expect("re-save"),
            plan_part,
            "{}: the re-save differs from the loaded plan bytes",
            case.file
        );
        assert_eq!(
            graph.serialize().expect("re-save the file"),
            file,
            "{}: the re-saved file differs",
            case.file
        );
        if case.envelope_v1 {
            assert_eq!(plan.tensor_layouts(), None, "{}: a v1 plan", case.file);
        } else {
            kiln_format::decode_plan(plan_part)
                .map(|e| assert_eq!(e.version, 2, "{}", case.file))
                .expect("envelope");
        }
        let got = execute(&graph, plan, &io["inputs"]);
        assert!(!got.is_empty(), "{}: no outputs", case.file);
        for (uid, values) in got {
            let want: Vec<f64> = io["outputs"][uid.to_string()]
                .as_array()
                .unwrap_or_else(|| panic!("{}: no stored output {uid}", case.file))
                .iter()
                .map(|x| x.as_f64().expect("a number"))
                .collect();
            assert_eq!(values.len(), want.len(), "{}: output {uid}", case.file);
            for (i, (g, w)) in values.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-5 + 1e-5 * w.abs(),
                    "{}: output {uid}[{i}] is {g}, the fixture says {w}",
                    case.file
                );
            }
            assert!(
                want.iter().any(|&v| v != 0.0),
                "{}: an all-zero output",
                case.file
            );
        }
    }
}
