//! `kiln bench` run as a user runs it: graph files built or loaded and timed, the standard cases,
//! the JSON rows, and the refusals (no CUDA driver, a plan without its graph, engines).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn ok(&self) -> &Self {
        assert_eq!(self.code, 0, "kiln failed:\n{}{}", self.stdout, self.stderr);
        self
    }

    /// The rows of `--json`: an array of objects.
    fn rows(&self) -> Vec<Value> {
        let v: Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout));
        v.as_array()
            .unwrap_or_else(|| panic!("not an array: {v}"))
            .clone()
    }

    /// Asserts exit code `code` and one error line on stderr containing every `needle`.
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
}

fn kiln(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
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

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("kiln-cli-bench")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/graphs")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn num(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {row}"))
}

/// The keys every row has, with sane timings.
fn check_timings(row: &Value, device: &str) {
    for key in [
        "case",
        "op",
        "shape",
        "dtype",
        "fused",
        "device",
        "engine",
        "plan",
        "median_ms",
        "min_ms",
        "runs",
        "batch",
        "build_ms",
        "plan_bytes",
    ] {
        assert!(row.get(key).is_some(), "no {key}: {row}");
    }
    assert_eq!(row["device"], device);
    let (median, min) = (num(row, "median_ms"), num(row, "min_ms"));
    assert!(median > 0.0 && min > 0.0 && min <= median, "{row}");
    assert!(num(row, "runs") >= 1.0 && num(row, "batch") >= 1.0, "{row}");
    assert!(num(row, "plan_bytes") > 0.0, "{row}");
    let (speed, other) = if device == "cpu" {
        ("gflops", "tflops")
    } else {
        ("tflops", "gflops")
    };
    assert!(row.get(speed).is_some(), "no {speed}: {row}");
    assert!(row.get(other).is_none(), "{other} on {device}: {row}");
}

#[test]
fn a_graph_file_is_built_and_timed_in_one_row() {
    let graph = example("matmul.json");
    let rows = kiln(&["bench", &graph, "--runs", "3", "--json"])
        .ok()
        .rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    check_timings(r, "cpu");
    assert_eq!(r["case"], graph.as_str());
    assert_eq!(r["op"], "matmul");
    assert_eq!(r["shape"], serde_json::json!([2, 16, 8]));
    assert_eq!(r["dtype"], "f32");
    assert_eq!(r["fused"], false);
    assert_eq!(r["plan"], "built");
    assert_eq!(r["batch"], 1);
    assert!(num(r, "runs") <= 3.0, "{r}");
    assert!(
        r["engine"].as_str().unwrap().starts_with("KILN_CPU_"),
        "{r}"
    );
    assert!(num(r, "build_ms") >= 0.0);
    assert!(r.get("load_ms").is_none(), "nothing was loaded: {r}");
    // 2 x (batch 2 x 16 x 8 outputs x depth 32) FLOPs in the median time.
    let flops = num(r, "gflops") * 1e9 * num(r, "median_ms") * 1e-3;
    assert!((flops / 16384.0 - 1.0).abs() < 1e-6, "{flops} FLOPs: {r}");

    let text = kiln(&["bench", &graph, "--runs", "2"]);
    text.ok();
    assert!(
        text.stdout.starts_with("kiln bench on cpu"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(&graph) && text.stdout.contains("GFLOP/s"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_graph_with_plan_file_is_loaded_not_rebuilt() {
    let dir = scratch("loaded");
    let file = dir.join("conv.kiln");
    let file = file.to_str().unwrap();
    let built = kiln(&[
        "build",
        &example("conv_bias_relu.json"),
        "--with-graph",
        "-o",
        file,
        "--json",
    ]);
    let built: Value = serde_json::from_str(&built.ok().stdout).unwrap();
    let rows = kiln(&["bench", file, "--runs", "2", "--json"]).ok().rows();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    check_timings(r, "cpu");
    assert_eq!(r["plan"], "loaded");
    assert_eq!(r["engine"], built["engine"]);
    assert_eq!(r["op"], "conv_fprop");
    assert_eq!(r["fused"], true);
    assert!(r["build_ms"].is_null(), "nothing was built: {r}");
    assert!(num(r, "load_ms") > 0.0, "{r}");
    assert!(num(r, "gflops") > 0.0, "{r}");
    assert!(
        num(r, "plan_bytes") < built["bytes"].as_f64().unwrap(),
        "{r}"
    );

    // An engine asks for a build of the file's graph.
    let rows = kiln(&[
        "bench",
        file,
        "--engine",
        "KILN_CPU_REFERENCE",
        "--runs",
        "1",
        "--json",
    ])
    .ok()
    .rows();
    assert_eq!(rows[0]["plan"], "built");
    assert_eq!(rows[0]["engine"], "KILN_CPU_REFERENCE");
    assert!(rows[0].get("load_ms").is_none());
}

#[test]
fn autotune_tries_settings_before_timing() {
    let rows = kiln(&[
        "bench",
        &example("matmul.json"),
        "--autotune=2",
        "--runs",
        "2",
        "--json",
    ])
    .ok()
    .rows();
    check_timings(&rows[0], "cpu");
    assert!(num(&rows[0], "autotune_trials") >= 1.0, "{}", rows[0]);
    // `--autotune` without a value takes the default and leaves the graph positional.
    let rows = kiln(&[
        "bench",
        "--autotune",
        &example("pointwise.json"),
        "--runs",
        "1",
        "--json",
    ])
    .ok()
    .rows();
    assert_eq!(rows[0]["op"], "pointwise");
    assert!(
        rows[0]["gflops"].is_null(),
        "no matmul or conv work: {}",
        rows[0]
    );
}

#[test]
fn the_standard_cpu_cases_keep_their_names_and_shapes() {
    let rows = kiln(&["bench", "--filter", "matmul f32", "--runs", "1", "--json"])
        .ok()
        .rows();
    let names: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["matmul f32 1024x1024x1024", "matmul f32 2048x2048x2048"]
    );
    for (r, s) in rows.iter().zip([1024, 2048]) {
        check_timings(r, "cpu");
        assert_eq!(r["op"], "matmul");
        assert_eq!(r["shape"], serde_json::json!([s, s, s]));
        assert!(num(r, "gflops") > 0.0);
        // The instruction set the GEMM kernels ran with on this processor.
        let isa = r["isa"].as_str().unwrap_or_else(|| panic!("no isa: {r}"));
        assert!(
            ["portable", "avx2", "avx512"].contains(&isa),
            "an f32 matmul runs below the AMX level: {r}"
        );
    }
    let rows = kiln(&["bench", "--filter", "plan_", "--json"]).ok().rows();
    let ops: Vec<&str> = rows.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["plan_save", "plan_load"]);
    for r in &rows {
        check_timings(r, "cpu");
        assert!(r["gflops"].is_null(), "{r}");
        assert!(num(r, "runs") >= 50.0, "{r}");
    }
    assert!(num(&rows[1], "load_ms") > 0.0);
    assert_eq!(rows[0]["plan_bytes"], rows[1]["plan_bytes"]);
}

#[test]
fn a_gpu_without_a_driver_is_not_supported_and_says_why() {
    let graph = example("matmul.json");
    let gpu = kiln(&[
        "bench", &graph, "--device", "cuda:0", "--runs", "2", "--json",
    ]);
    if gpu.code == 0 {
        // A machine with a GPU: device events, TFLOP/s.
        let rows = gpu.rows();
        check_timings(&rows[0], "cuda:0");
        assert!(rows[0]["engine"]
            .as_str()
            .unwrap()
            .starts_with("KILN_CUDA_"));
    } else {
        // No driver ("no usable CUDA driver on this machine: ... libcuda ...") or a kiln built
        // without the provider: both name the device and CUDA.
        gpu.fails(4, &["--device cuda:0", "CUDA"]);
        assert!(
            gpu.stderr.contains("CUDA driver") || gpu.stderr.contains("without the CUDA provider"),
            "{}",
            gpu.stderr
        );
    }
    kiln(&["bench", "--device", "sm_90"]).fails(4, &["--device sm_90", "no device to time"]);
    kiln(&["bench", "--device", "tpu"]).fails(1, &["--device tpu"]);
}

#[test]
fn bad_files_engines_and_arguments_are_refused() {
    let dir = scratch("refused");
    let plan = dir.join("pw.plan");
    let plan = plan.to_str().unwrap();
    kiln(&["build", &example("pointwise.json"), "-o", plan]).ok();
    kiln(&["bench", plan]).fails(1, &[plan, "compiled plan", "`kiln bench` needs a graph"]);
    let damaged = dir.join("damaged.kiln");
    let mut bytes = std::fs::read(plan).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&damaged, &bytes).unwrap();
    kiln(&["bench", damaged.to_str().unwrap()]).fails(3, &["damaged.kiln"]);
    kiln(&["bench", "/no/such/graph.json"]).fails(1, &["/no/such/graph.json"]);

    let graph = example("pointwise.json");
    kiln(&["bench", &graph, "--engine", "KILN_NO_SUCH_ENGINE"])
        .fails(1, &["--engine KILN_NO_SUCH_ENGINE", "unknown engine"]);
    // A real engine that does not do this graph gives its own reason.
    kiln(&["bench", &graph, "--engine", "KILN_CPU_MATMUL_GEMM_V1"]).fails(
        4,
        &[
            "--engine KILN_CPU_MATMUL_GEMM_V1",
            "does not support the graph",
            "the graph has no matmul",
        ],
    );
    // --filter picks standard cases; with a graph file it is a usage error.
    assert_eq!(kiln(&["bench", &graph, "--filter", "matmul"]).code, 64);
}
