//! The `kiln` command run as a user runs it: the built binary, real files in a temporary folder,
//! exit codes, one-line error messages, `--json` reports.

use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Asserts exit code `code` and a one-line error on stderr that contains every `needle`.
    fn fails(&self, code: i32, needles: &[&str]) {
        assert_eq!(self.code, code, "exit code; stderr:\n{}", self.stderr);
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("kiln: error:"))
            .collect();
        assert_eq!(lines.len(), 1, "one error line expected:\n{}", self.stderr);
        for n in needles {
            assert!(
                lines[0].contains(n),
                "error line lacks {n:?}:\n{}",
                lines[0]
            );
        }
    }

    fn ok(&self) -> &Self {
        assert_eq!(self.code, 0, "kiln failed:\n{}{}", self.stdout, self.stderr);
        self
    }
}

fn kiln<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out: Output = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .env_remove("KILN_PLUGIN_PATH")
        .env("KILN_LOG", "error")
        .output()
        .expect("run the kiln binary");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh, empty folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("kiln-cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/graphs")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `kiln build EXAMPLE --with-graph -o OUT` on the CPU; asserts that it succeeds.
fn build_with_graph(example_name: &str, out: &Path) {
    kiln([
        "build",
        s(&example(example_name)),
        "--with-graph",
        "-o",
        s(out),
    ])
    .ok();
}

/// The pooling and new-pointwise-modes examples: built with their graph on the engine meant for
/// them, loaded, run and validated; every output compared.
#[test]
fn pooling_and_pointwise_select_examples_run_and_match_the_reference() {
    let dir = scratch("examples_issue_11");
    for (name, engine, outputs) in [
        ("pooling.json", "KILN_CPU_RESAMPLE_V1", 2),
        ("pooling_backward.json", "KILN_CPU_RESAMPLE_BACKWARD_V1", 1),
        ("pointwise_select.json", "KILN_CPU_POINTWISE_V1", 4),
    ] {
        let out = dir.join(name.replace(".json", ".kiln"));
        let report = kiln([
            "build",
            s(&example(name)),
            "--with-graph",
            "-o",
            s(&out),
            "--json",
        ])
        .ok()
        .json();
        assert_eq!(report["engine"], engine, "{report}");
        let ran = kiln(["run", s(&out), "--validate", "--json"]).ok().json();
        assert_eq!(ran["plan"], "loaded", "{ran}");
        assert_eq!(ran["validation"]["matches"], true, "{ran}");
        assert_eq!(ran["outputs"].as_array().unwrap().len(), outputs, "{ran}");
    }
}

#[test]
fn every_example_builds_with_its_graph_runs_and_matches_the_reference() {
    let dir = scratch("examples");
    for name in [
        "pointwise.json",
        "conv_bias_relu.json",
        "matmul.json",
        "attention.json",
        "matmul_bf16.json",
        "conv_nhwc_bf16.json",
        "conv_dgrad.json",
        "conv_wgrad.json",
    ] {
        let out = dir.join(name.replace(".json", ".kiln"));
        let built = kiln([
            "build",
            s(&example(name)),
            "--with-graph",
            "-o",
            s(&out),
            "--json",
        ]);
        let report = built.ok().json();
        assert_eq!(report["kind"], "graph_and_plan");
        assert_eq!(
            report["bytes"].as_u64().unwrap(),
            std::fs::metadata(&out).unwrap().len()
        );
        assert!(
            report["engine"].as_str().unwrap().starts_with("KILN_CPU_"),
            "{report}"
        );

        let inspected = kiln(["inspect", s(&out), "--json"]).ok().json();
        assert_eq!(inspected["kind"], "graph_and_plan");
        assert_eq!(inspected["engine"], report["engine"]);

        let ran = kiln(["run", s(&out), "--validate", "--json"]).ok().json();
        assert_eq!(ran["plan"], "loaded", "{ran}");
        assert_eq!(ran["engine"], report["engine"]);
        assert_eq!(ran["validation"]["reference_engine"], "KILN_CPU_REFERENCE");
        assert_eq!(ran["validation"]["matches"], true);
        let outputs = ran["outputs"].as_array().unwrap();
        assert_eq!(outputs.len(), 1);
        assert!(
            outputs[0]["max_rel_error"].as_f64().unwrap()
                <= outputs[0]["tolerance"].as_f64().unwrap()
        );
        assert!(
            outputs[0]["max"].as_f64().unwrap() > outputs[0]["min"].as_f64().unwrap(),
            "not constant data"
        );
    }
}

/// The norm examples (one per family, several outputs each but layernorm's fused one) build on
/// the norm engine, run from the saved file and match the reference on every output.
#[test]
fn every_norm_example_runs_on_the_norm_engine_and_matches_the_reference() {
    let dir = scratch("norm-examples");
    for (name, outputs) in [
        ("batchnorm.json", 5),
        ("layernorm.json", 1),
        ("rmsnorm.json", 2),
    ] {
        let out = dir.join(name.replace(".json", ".kiln"));
        let built = kiln([
            "build",
            s(&example(name)),
            "--with-graph",
            "-o",
            s(&out),
            "--json",
        ]);
        let report = built.ok().json();
        assert_eq!(report["engine"], "KILN_CPU_NORM_V1", "{name}: {report}");
        let ran = kiln(["run", s(&out), "--validate", "--json"]).ok().json();
        assert_eq!(ran["plan"], "loaded", "{ran}");
        assert_eq!(ran["validation"]["matches"], true, "{name}: {ran}");
        let got = ran["outputs"].as_array().unwrap();
        assert_eq!(got.len(), outputs, "{name}: {ran}");
        for o in got {
            assert!(
                o["max_rel_error"].as_f64().unwrap() <= o["tolerance"].as_f64().unwrap(),
                "{name}: {o}"
            );
            assert!(
                o["max"].as_f64().unwrap() > o["min"].as_f64().unwrap(),
                "{name}: constant output {o}"
            );
        }
    }
}

#[test]
fn a_mismatch_with_the_reference_exits_2() {
    let dir = scratch("mismatch");
    let out = dir.join("conv.kiln");
    build_with_graph("conv_bias_relu.json", &out);
    // The GEMM engine sums in another order than the reference: not bit-equal in f32.
    let r = kiln([
        "run",
        s(&out),
        "--validate",
        "--tolerance",
        "1e-12",
        "--json",
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["validation"]["matches"], false);
    let text = kiln(["run", s(&out), "--validate", "--tolerance", "1e-12"]);
    assert!(text.stdout.contains("DOES NOT MATCH"), "{}", text.stdout);
}

#[test]
fn a_graph_alone_is_built_before_it_runs() {
    let ran = kiln(["run", s(&example("matmul.json")), "--validate", "--json"])
        .ok()
        .json();
    assert_eq!(ran["plan"], "built");
    assert_eq!(ran["kind"], "graph_json");
    assert_eq!(ran["validation"]["matches"], true);
}

#[test]
fn a_plan_alone_needs_its_graph_to_run() {
    let dir = scratch("plan_alone");
    let plan = dir.join("mm.plan");
    let built = kiln([
        "build",
        s(&example("matmul.json")),
        "-o",
        s(&plan),
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(built["kind"], "plan");
    assert_eq!(
        kiln(["inspect", s(&plan), "--json"]).ok().json()["kind"],
        "plan"
    );

    kiln(["run", s(&plan)]).fails(1, &[s(&plan), "without its graph", "--graph"]);
    let ran = kiln([
        "run",
        s(&plan),
        "--graph",
        s(&example("matmul.json")),
        "--validate",
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(ran["plan"], "loaded");
    assert_eq!(ran["validation"]["matches"], true);

    // The plan of another graph is refused, naming both files.
    kiln(["run", s(&plan), "--graph", s(&example("pointwise.json"))])
        .fails(1, &[s(&plan), "pointwise.json", "another graph"]);
}

fn write_f32(path: &Path, values: &[f32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn inputs_and_outputs_are_data_files() {
    let dir = scratch("data_files");
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    let x: Vec<f32> = (0..32).map(|i| (i as f32 - 16.0) * 0.25).collect();
    let b: Vec<f32> = (0..8).map(|i| i as f32 * 0.5 - 1.0).collect();
    write_f32(&inputs.join("x.bin"), &x);
    write_f32(&inputs.join("2.bin"), &b); // by uid: `b` is uid 2
    let outputs = dir.join("out");
    let ran = kiln([
        "run",
        s(&example("pointwise.json")),
        "--inputs",
        s(&inputs),
        "--outputs",
        s(&outputs),
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(
        ran["outputs"][0]["file"].as_str().unwrap(),
        s(&outputs.join("y.bin"))
    );
    let y = read_f32(&outputs.join("y.bin"));
    let want: Vec<f32> = (0..32).map(|i| (x[i] + b[i % 8]).max(0.0)).collect();
    assert_eq!(y, want);

    // A missing or short data file names the file and the tensor.
    std::fs::remove_file(inputs.join("2.bin")).unwrap();
    kiln(["run", s(&example("pointwise.json")), "--inputs", s(&inputs)])
        .fails(1, &["b.bin", "missing", "tensor 'b'"]);
    write_f32(&inputs.join("b.bin"), &b[..7]);
    kiln(["run", s(&example("pointwise.json")), "--inputs", s(&inputs)])
        .fails(1, &["b.bin", "28 bytes", "32 bytes"]);
}

#[test]
fn convert_goes_json_to_binary_and_back() {
    let dir = scratch("convert");
    let (bin, json, bin2) = (
        dir.join("mm.graph"),
        dir.join("mm.json"),
        dir.join("mm2.graph"),
    );
    let to_bin = kiln([
        "convert",
        s(&example("matmul.json")),
        "-o",
        s(&bin),
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(to_bin["output_format"], "binary");
    assert_eq!(
        kiln(["inspect", s(&bin), "--json"]).ok().json()["kind"],
        "graph"
    );
    let to_json = kiln(["convert", s(&bin), "-o", s(&json), "--json"])
        .ok()
        .json();
    assert_eq!(
        (to_json["output_format"].as_str(), to_json["nodes"].as_u64()),
        (Some("json"), Some(1))
    );
    kiln(["convert", s(&json), "-o", s(&bin2)]).ok();
    assert_eq!(
        std::fs::read(&bin).unwrap(),
        std::fs::read(&bin2).unwrap(),
        "binary → JSON → binary changed bytes"
    );
    let original: Value =
        serde_json::from_slice(&std::fs::read(example("matmul.json")).unwrap()).unwrap();
    let back: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(back["tensors"][2]["dims"], original["tensors"][2]["dims"]);
    assert_eq!(back["name"], original["name"]);

    // The graph of a graph-with-plan file converts; its plan is dropped, and the report says so.
    let both = dir.join("mm.kiln");
    build_with_graph("matmul.json", &both);
    let r = kiln([
        "convert",
        s(&both),
        "-o",
        s(&dir.join("from_both.json")),
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(r["plan_dropped"], true);
}

#[test]
fn upgrade_rebuilds_the_plan_and_says_what_changed() {
    let dir = scratch("upgrade");
    let (old, same, other) = (
        dir.join("conv.kiln"),
        dir.join("same.kiln"),
        dir.join("ref.kiln"),
    );
    build_with_graph("conv_bias_relu.json", &old);
    let r = kiln(["upgrade", s(&old), "-o", s(&same), "--json"])
        .ok()
        .json();
    assert_eq!(r["identical"], true, "{r}");
    assert_eq!(r["changed"]["engine"], false);
    assert_eq!(std::fs::read(&old).unwrap(), std::fs::read(&same).unwrap());

    let r = kiln([
        "upgrade",
        s(&old),
        "-o",
        s(&other),
        "--engine",
        "KILN_CPU_REFERENCE",
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(r["new"]["engine"], "KILN_CPU_REFERENCE");
    assert_eq!(r["changed"]["engine"], true);
    assert_eq!(r["changed"]["bytes"], true);
    assert_eq!(r["identical"], false);
    let ran = kiln(["run", s(&other), "--validate", "--json"]).ok().json();
    assert_eq!(ran["engine"], "KILN_CPU_REFERENCE");

    let plan = dir.join("conv.plan");
    kiln(["build", s(&example("conv_bias_relu.json")), "-o", s(&plan)]).ok();
    kiln(["upgrade", s(&plan), "-o", s(&dir.join("x"))]).fails(1, &[s(&plan), "without its graph"]);
    kiln([
        "upgrade",
        s(&example("pointwise.json")),
        "-o",
        s(&dir.join("x")),
    ])
    .fails(1, &["pointwise.json", "nothing to upgrade"]);
}

#[test]
fn a_missing_file_is_named() {
    let dir = scratch("missing");
    let gone = dir.join("gone.kiln");
    let out = dir.join("out");
    for args in [
        vec!["build", s(&gone), "-o", s(&out)],
        vec!["run", s(&gone)],
        vec!["upgrade", s(&gone), "-o", s(&out)],
        vec!["convert", s(&gone), "-o", s(&out)],
        vec!["inspect", s(&gone)],
    ] {
        kiln(&args).fails(1, &[s(&gone), "cannot read the file"]);
    }
    kiln([
        "run",
        s(&example("matmul.plan.missing")),
        "--graph",
        s(&example("matmul.json")),
    ])
    .fails(1, &["matmul.plan.missing", "cannot read"]);
}

#[test]
fn a_damaged_file_is_not_loadable() {
    let dir = scratch("damaged");
    let good = dir.join("conv.kiln");
    build_with_graph("conv_bias_relu.json", &good);
    let mut bytes = std::fs::read(&good).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    let bad = dir.join("damaged.kiln");
    std::fs::write(&bad, &bytes).unwrap();
    kiln(["run", s(&bad)]).fails(3, &[s(&bad), "damaged", "checksum"]);
    kiln(["upgrade", s(&bad), "-o", s(&dir.join("x"))]).fails(3, &[s(&bad), "checksum"]);
    assert_eq!(kiln(["inspect", s(&bad)]).code, 3);

    let truncated = dir.join("truncated.kiln");
    std::fs::write(&truncated, &std::fs::read(&good).unwrap()[..100]).unwrap();
    kiln(["run", s(&truncated)]).fails(3, &[s(&truncated), "damaged"]);

    let bad_json = dir.join("bad.json");
    std::fs::write(&bad_json, "{\"name\": \"x\", \"tensors\": [").unwrap();
    kiln(["build", s(&bad_json), "-o", s(&dir.join("x"))])
        .fails(3, &[s(&bad_json), "graph JSON", "line 1"]);
    let invalid = dir.join("invalid.json");
    let text = std::fs::read_to_string(example("pointwise.json"))
        .unwrap()
        .replace("\"out\": 4", "\"out\": 9");
    std::fs::write(&invalid, text).unwrap();
    kiln(["build", s(&invalid), "-o", s(&dir.join("x"))]).fails(3, &[s(&invalid), "uid 9"]);

    let foreign = dir.join("foreign.bin");
    std::fs::write(
        &foreign,
        b"\x7fELF not kiln at all, but long enough for a preamble",
    )
    .unwrap();
    kiln(["convert", s(&foreign), "-o", s(&dir.join("x"))])
        .fails(3, &[s(&foreign), "neither a kiln file"]);
    kiln(["inspect", s(&foreign)]).fails(3, &[s(&foreign), "not a kiln blob"]);
}

#[test]
fn a_plan_where_a_graph_is_expected_is_refused() {
    let dir = scratch("plan_for_graph");
    let plan = dir.join("pw.plan");
    kiln(["build", s(&example("pointwise.json")), "-o", s(&plan)]).ok();
    kiln(["build", s(&plan), "-o", s(&dir.join("x"))])
        .fails(1, &[s(&plan), "compiled plan", "needs a graph"]);
    kiln(["convert", s(&plan), "-o", s(&dir.join("x"))]).fails(1, &[s(&plan), "compiled plan"]);
    kiln(["run", s(&plan), "--graph", s(&plan)]).fails(1, &[s(&plan), "--graph needs a graph"]);
}

#[test]
fn engines_are_chosen_by_name_and_unknown_ones_refused() {
    let dir = scratch("engines");
    let out = dir.join("ref.plan");
    let r = kiln([
        "build",
        s(&example("conv_bias_relu.json")),
        "--engine",
        "KILN_CPU_REFERENCE",
        "-o",
        s(&out),
        "--json",
    ])
    .ok()
    .json();
    assert_eq!(r["engine"], "KILN_CPU_REFERENCE");
    kiln([
        "build",
        s(&example("pointwise.json")),
        "--engine",
        "KILN_NO_SUCH_ENGINE",
        "-o",
        s(&out),
    ])
    .fails(
        1,
        &[
            "--engine KILN_NO_SUCH_ENGINE",
            "unknown engine",
            "KILN_CPU_REFERENCE",
        ],
    );
    // A real engine that does not do this graph.
    kiln([
        "build",
        s(&example("pointwise.json")),
        "--engine",
        "KILN_CPU_MATMUL_GEMM_V1",
        "-o",
        s(&out),
    ])
    .fails(
        4,
        &[
            "KILN_CPU_MATMUL_GEMM_V1",
            "does not support",
            "pointwise.json",
            // The engine's own reason, not only that it declined.
            "the graph has no matmul",
        ],
    );
    // The pointwise engine on a convolution: its reason names the node it cannot run.
    kiln([
        "build",
        s(&example("conv_bias_relu.json")),
        "--engine",
        "KILN_CPU_POINTWISE_V1",
        "-o",
        s(&out),
    ])
    .fails(
        4,
        &[
            "--engine KILN_CPU_POINTWISE_V1",
            "node 'conv' is conv_fprop",
            "pointwise nodes only",
        ],
    );
}

#[test]
fn devices_and_targets_without_an_engine_are_not_supported() {
    let dir = scratch("devices");
    let out = dir.join("x.kiln");
    let target = kiln([
        "build",
        s(&example("pointwise.json")),
        "--target",
        "sm_90",
        "--with-graph",
        "-o",
        s(&out),
    ]);
    if target.code == 0 {
        // A build with a working CUDA provider (NVRTC present).
        assert_eq!(
            kiln(["inspect", s(&out), "--json"]).ok().json()["kind"],
            "graph_and_plan"
        );
    } else {
        target.fails(4, &["--target sm_90", "CUDA kernel provider"]);
    }
    kiln([
        "build",
        s(&example("pointwise.json")),
        "--target",
        "volta",
        "-o",
        s(&out),
    ])
    .fails(1, &["--target volta", "sm_90"]);
    let gpu = kiln([
        "build",
        s(&example("pointwise.json")),
        "--device",
        "cuda:0",
        "-o",
        s(&out),
    ]);
    if gpu.code != 0 {
        gpu.fails(4, &["--device cuda:0"]);
    }
    kiln([
        "build",
        s(&example("pointwise.json")),
        "--device",
        "tpu",
        "-o",
        s(&out),
    ])
    .fails(1, &["--device tpu"]);
    // With a GPU this runs; without one (or without the provider) it is "not supported", and the
    // message says why (no CUDA driver, or a build without the CUDA provider).
    let run = kiln(["run", s(&example("pointwise.json")), "--device", "cuda:0"]);
    if run.code != 0 {
        run.fails(4, &["--device cuda:0", "CUDA"]);
    }
    kiln(["run", s(&example("pointwise.json")), "--device", "sm_90"])
        .fails(4, &["--device sm_90", "no device to run on"]);
}

#[test]
fn usage_errors_help_and_exit_codes() {
    let r = kiln(["frobnicate"]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        kiln(["build", s(&example("pointwise.json"))]).code,
        64,
        "-o is required"
    );
    let help = kiln(["--help"]);
    assert_eq!(help.ok().code, 0);
    assert!(
        help.stdout.contains("Examples:") && help.stdout.contains("64 bad arguments"),
        "{}",
        help.stdout
    );
    for cmd in [
        "build", "run", "upgrade", "convert", "inspect", "plugins", "bench", "demo",
    ] {
        let h = kiln([cmd, "--help"]);
        assert_eq!(h.code, 0);
        assert!(
            h.stdout.contains("Examples:"),
            "{cmd} --help has no examples:\n{}",
            h.stdout
        );
        assert!(
            h.stdout.contains("Exit status"),
            "{cmd} --help has no exit codes:\n{}",
            h.stdout
        );
    }
}

#[test]
fn demo_json_keys_are_kept() {
    let r = kiln(["demo", "--json"]).ok().json();
    let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let mut want = vec![
        "graph",
        "shape",
        "device",
        "engine",
        "plugin",
        "build_ms",
        "execute_ms",
        "reference_engine",
        "max_rel_error",
        "tolerance",
        "plan_bytes",
        "save_us",
        "load_us",
        "resave_identical",
        "loaded_max_rel_error",
        "validated",
    ];
    let mut have = keys.clone();
    want.sort_unstable();
    have.sort_unstable();
    assert_eq!(have, want);
    assert_eq!(r["validated"], true);
}

/// `plan` re-encoded (envelope version 2) with `edit` applied to its envelope and payload.
fn forged_plan(
    plan: &[u8],
    edit: impl FnOnce(&mut kiln_format::PlanEnvelope<'_>, &mut Vec<u8>),
) -> Vec<u8> {
    let env = kiln_format::decode_plan(plan).expect("a plan");
    let mut payload = env.payload.to_vec();
    let mut edited = env.clone();
    edit(&mut edited, &mut payload);
    kiln_format::encode_plan(&kiln_format::PlanEnvelope {
        payload: &payload,
        ..edited
    })
}

#[test]
fn inspect_describes_the_payload_and_answers_for_a_device() {
    let dir = scratch("inspect_device");
    let with_graph = dir.join("conv.kiln");
    build_with_graph("conv_bias_relu.json", &with_graph);

    // No device: the description, when the file's plugin is registered; no device keys.
    let plain = kiln(["inspect", s(&with_graph)]);
    plain.ok();
    assert!(
        plain
            .stdout
            .contains("payload, as plugin kiln-cpu describes it:")
            && plain.stdout.contains("kiln-cpu payload 1.1")
            && plain.stdout.contains("knobs       conv_algo="),
        "{}",
        plain.stdout
    );
    assert!(!plain.stdout.contains("loadable here"), "{}", plain.stdout);
    let report = kiln(["inspect", s(&with_graph), "--json"]).ok().json();
    assert_eq!(report["description_plugin"], "kiln-cpu");
    let description = report["description"].as_str().expect("a description");
    assert!(
        description.contains(report["engine"].as_str().unwrap()),
        "{description}"
    );
    assert!(report.get("loadable_here").is_none(), "{report}");

    // On the CPU it loads.
    let here = kiln(["inspect", s(&with_graph), "--device", "cpu"]);
    here.ok();
    assert!(
        here.stdout.contains("loadable here   yes (on cpu)"),
        "{}",
        here.stdout
    );
    let r = kiln(["inspect", s(&with_graph), "--device", "cpu", "--json"])
        .ok()
        .json();
    assert_eq!(r["device"], "cpu");
    assert_eq!(r["loadable_here"], true);
    assert_eq!(r["loadable_here_reason"], Value::Null);
    assert!(r["description"].is_string(), "{r}");

    // A CPU plan never loads on a GPU: with a GPU its engine is missing there, without one the
    // device is missing. Either way the answer is no, with the reason.
    let gpu = kiln(["inspect", s(&with_graph), "--device", "cuda:0", "--json"]);
    assert_eq!(gpu.code, 4, "{}{}", gpu.stdout, gpu.stderr);
    let r = gpu.json();
    assert_eq!(r["loadable_here"], false);
    let why = r["loadable_here_reason"].as_str().expect("a reason");
    assert!(
        why.contains("no such device here") || why.contains("not available on cuda:0"),
        "{why}"
    );
    let text = kiln(["inspect", s(&with_graph), "--device", "cuda:0"]);
    assert_eq!(text.code, 4);
    assert!(
        text.stdout.contains("loadable here   no (on cuda:0): "),
        "{}",
        text.stdout
    );

    // A malformed device is a usage error of the option.
    kiln(["inspect", s(&with_graph), "--device", "tpu"]).fails(1, &["--device tpu"]);

    // A graph alone reads on any device the handle opens.
    let graph_only = dir.join("pw.graph");
    kiln([
        "convert",
        s(&example("pointwise.json")),
        "-o",
        s(&graph_only),
    ])
    .ok();
    let r = kiln(["inspect", s(&graph_only), "--device", "cpu", "--json"])
        .ok()
        .json();
    assert_eq!(r["loadable_here"], true);
    assert_eq!(r["description"], Value::Null);
}

#[test]
fn inspect_says_why_a_sound_plan_does_not_load_here() {
    let dir = scratch("inspect_why_not");
    let plan_path = dir.join("pw.plan");
    kiln(["build", s(&example("pointwise.json")), "-o", s(&plan_path)]).ok();
    let plan = std::fs::read(&plan_path).unwrap();

    // A newer payload format (minor 2 of the CPU plugin's major 1): the header digest covers
    // only the body, so the file is sound, and only the plugin can say it cannot read it.
    let newer = dir.join("newer.plan");
    std::fs::write(
        &newer,
        forged_plan(&plan, |_, payload| {
            payload[6..8].copy_from_slice(&2u16.to_le_bytes())
        }),
    )
    .unwrap();
    let r = kiln(["inspect", s(&newer), "--device", "cpu", "--json"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = r.json();
    assert_eq!(r["loadable"], true, "the blob itself is sound");
    assert_eq!(r["loadable_here"], false);
    let why = r["loadable_here_reason"].as_str().unwrap();
    assert!(
        why.contains("format 1.2") && why.contains("1.0 to 1.1"),
        "{why}"
    );
    let unavailable = r["description_unavailable"].as_str().unwrap();
    assert!(unavailable.contains("format 1.2"), "{unavailable}");
    // Without --device, inspect still only reads the file: it loads as far as kiln can tell.
    assert_eq!(kiln(["inspect", s(&newer)]).code, 0);

    // An engine no registered plugin has.
    let gone = dir.join("gone.plan");
    std::fs::write(
        &gone,
        forged_plan(&plan, |env, _| {
            env.engine_name = "KILN_CPU_GONE_V1".into();
            env.engine_id = kiln_core::engine_id("KILN_CPU_GONE_V1");
        }),
    )
    .unwrap();
    let r = kiln(["inspect", s(&gone), "--device", "cpu", "--json"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let r = r.json();
    let why = r["loadable_here_reason"].as_str().unwrap();
    assert!(
        why.contains("KILN_CPU_GONE_V1") && why.contains("not available on cpu"),
        "{why}"
    );
    let unavailable = r["description_unavailable"].as_str().unwrap();
    assert!(
        unavailable.contains("no registered plugin has engine KILN_CPU_GONE_V1"),
        "{unavailable}"
    );

    // A damaged file is not loadable anywhere: exit 3, with --device too.
    let mut damaged = plan.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let damaged_path = dir.join("damaged.plan");
    std::fs::write(&damaged_path, &damaged).unwrap();
    let r = kiln(["inspect", s(&damaged_path), "--device", "cpu", "--json"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json()["loadable_here"], false);
}

const GROUPED_CONV: &str = r#"{
  "name": "grouped conv (2 groups)",
  "tensors": [
    { "uid": 1, "name": "x", "dims": [1, 4, 8, 8], "strides": [256, 64, 8, 1], "data_type": "f32" },
    { "uid": 2, "name": "w", "dims": [4, 2, 3, 3], "strides": [18, 9, 3, 1], "data_type": "f32" },
    { "uid": 3, "name": "y", "dims": [1, 4, 8, 8], "strides": [256, 64, 8, 1], "data_type": "f32" }
  ],
  "nodes": [
    { "name": "conv", "op": "conv", "direction": "fprop", "x": 1, "w": 2, "y": 3,
      "params": { "pre_padding": [1, 1], "post_padding": [1, 1], "stride": [1, 1], "dilation": [1, 1] } }
  ]
}"#;

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn cuda_engines_that_decline_a_grouped_convolution_each_say_why() {
    let dir = scratch("cuda_declines");
    let graph = dir.join("grouped.json");
    std::fs::write(&graph, GROUPED_CONV).unwrap();
    let out = dir.join("x.kiln");
    kiln(["build", s(&graph), "--target", "sm_90", "-o", s(&out)]).fails(
        4,
        &[
            "no engine on sm_90 supports this graph",
            "KILN_CUDA_CONV_FPROP_V1 (kiln-cuda): grouped convolution (2 groups) is not supported",
            "KILN_CUDA_POINTWISE_V1 (kiln-cuda): ",
            "KILN_CUDA_MATMUL_V1 (kiln-cuda): ",
        ],
    );
    kiln([
        "build",
        s(&graph),
        "--target",
        "sm_90",
        "--engine",
        "KILN_CUDA_CONV_FPROP_V1",
        "-o",
        s(&out),
    ])
    .fails(
        4,
        &[
            "--engine KILN_CUDA_CONV_FPROP_V1",
            "grouped convolution (2 groups) is not supported",
        ],
    );
}

#[test]
#[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
fn a_cuda_plan_built_without_a_gpu_shows_its_arch_and_where_it_loads() {
    let dir = scratch("inspect_cuda");
    let sm90 = dir.join("pw_sm90.kiln");
    kiln([
        "build",
        s(&example("pointwise.json")),
        "--target",
        "sm_90",
        "--with-graph",
        "-o",
        s(&sm90),
    ])
    .ok();
    let r = kiln(["inspect", s(&sm90), "--json"]).ok().json();
    assert_eq!(r["description_plugin"], "kiln-cuda");
    let d = r["description"].as_str().expect("described");
    for want in [
        "kiln-cuda payload 2.0",
        "KILN_CUDA_POINTWISE_V1",
        "with NVRTC 13.",
        "code object 0: sm_90 cubin ",
        "sha256 ",
        "loads on    sm_90",
        "launch 0",
    ] {
        assert!(d.contains(want), "lacks {want:?}:\n{d}");
    }
    // The target arch it was built for loads it; another arch says why not; the CPU lacks the
    // engine.
    let r = kiln(["inspect", s(&sm90), "--device", "sm_90", "--json"])
        .ok()
        .json();
    assert_eq!(r["loadable_here"], true, "{r}");
    let other = kiln(["inspect", s(&sm90), "--device", "sm_80", "--json"]);
    assert_eq!(other.code, 4, "{}{}", other.stdout, other.stderr);
    let why = other.json()["loadable_here_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        why.contains("compiled for sm_90") && why.contains("cannot run on"),
        "{why}"
    );
    let cpu = kiln(["inspect", s(&sm90), "--device", "cpu", "--json"]);
    assert_eq!(cpu.code, 4);
    let why = cpu.json()["loadable_here_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        why.contains("KILN_CUDA_POINTWISE_V1") && why.contains("not available on cpu"),
        "{why}"
    );
    // On a real GPU: yes on an sm_90 device, the reason otherwise; without one, no such device.
    let gpu = kiln(["inspect", s(&sm90), "--device", "cuda:0", "--json"]).json();
    if gpu["loadable_here"] == false {
        assert!(gpu["loadable_here_reason"].is_string(), "{gpu}");
    }
}

/// `kiln plugins` says where each CUDA engine runs: the Hopper engines on compute capability 9.0
/// only, the portable ones on any arch; in JSON (`runs_on`) and in text (`runs on ...`).
#[test]
fn plugins_lists_where_each_cuda_engine_runs() {
    let listing = kiln(["plugins", "--json"]).ok().json();
    let cuda = listing["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .find(|p| p["name"] == "kiln-cuda")
        .expect("the CUDA plugin is built in");
    let runs_on = |engine: &str| -> String {
        cuda["engines"]
            .as_array()
            .expect("engines")
            .iter()
            .find(|e| e["name"] == engine)
            .unwrap_or_else(|| panic!("{engine} is listed"))["runs_on"]
            .as_str()
            .unwrap_or_else(|| panic!("{engine} says where it runs"))
            .to_string()
    };
    for v2 in [
        "KILN_CUDA_MATMUL_V2",
        "KILN_CUDA_CONV_FPROP_V2",
        "KILN_CUDA_SDPA_FA3_V1",
    ] {
        assert!(runs_on(v2).contains("9.0 only"), "{v2}: {}", runs_on(v2));
    }
    for v1 in [
        "KILN_CUDA_MATMUL_V1",
        "KILN_CUDA_CONV_FPROP_V1",
        "KILN_CUDA_CONV_DGRAD_V1",
        "KILN_CUDA_CONV_WGRAD_V1",
    ] {
        assert!(
            runs_on(v1).contains("any CUDA arch"),
            "{v1}: {}",
            runs_on(v1)
        );
    }
    // Every CUDA engine says where it runs.
    for e in cuda["engines"].as_array().expect("engines") {
        assert!(e["runs_on"].as_str().is_some(), "{}: no runs_on", e["name"]);
    }
    let text = kiln(["plugins"]).ok().stdout.clone();
    assert!(
        text.contains("runs on CUDA compute capability 9.0 only"),
        "{text}"
    );
}
