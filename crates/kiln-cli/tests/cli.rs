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

#[test]
fn every_example_builds_with_its_graph_runs_and_matches_the_reference() {
    let dir = scratch("examples");
    for name in ["pointwise.json", "conv_bias_relu.json", "matmul.json"] {
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

#[test]
fn a_mismatch_with_the_reference_exits_2() {
    let dir = scratch("mismatch");
    let out = dir.join("conv.kiln");
    kiln([
        "build",
        s(&example("conv_bias_relu.json")),
        "--with-graph",
        "-o",
        s(&out),
    ])
    .ok();
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
    kiln([
        "build",
        s(&example("matmul.json")),
        "--with-graph",
        "-o",
        s(&both),
    ])
    .ok();
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
    kiln([
        "build",
        s(&example("conv_bias_relu.json")),
        "--with-graph",
        "-o",
        s(&old),
    ])
    .ok();
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
    kiln([
        "build",
        s(&example("conv_bias_relu.json")),
        "--with-graph",
        "-o",
        s(&good),
    ])
    .ok();
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
