//! A saved CPU plan loads and runs with another rayon thread count than it was built with (the
//! plan is built once and loads anywhere, DESIGN.md section 5): conv and matmul graphs with f16
//! inputs, so that their workspace paths are used.
//!
//! Rayon's global pool takes its size once per process, so each side runs in a child process of
//! this test binary with `RAYON_NUM_THREADS` set: one builds and saves, another loads, checks the
//! workspace size and runs against the reference engine.

mod common;

use common::{assert_close, built, cpu_handle, reference, run, OUTPUT};
use kiln::{
    ConvAttributes, DataType, Graph, MatmulAttributes, PlanOrigin, PointwiseAttributes,
    PointwiseMode, TensorAttributes,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which side a child process plays: `build` or `run`.
const ROLE: &str = "KILN_PORTABLE_PLANS_ROLE";
/// The folder the children share.
const DIR: &str = "KILN_PORTABLE_PLANS_DIR";

type MakeGraph = fn() -> Graph;

fn f16_tensor(g: &mut Graph, name: &str, dims: &[i64]) -> kiln::Tensor {
    g.tensor(
        TensorAttributes::new()
            .name(name)
            .dim(dims)
            .data_type(DataType::F16),
    )
}

/// `y = relu(conv(x, w) + bias)` over f16 inputs (f32 output): x [3, 16, 23, 21],
/// w [24, 16, 3, 3], padding 1: im2col tiles in the workspace.
fn conv_f16() -> Graph {
    let mut g = Graph::new();
    g.set_name("conv_f16");
    let x = f16_tensor(&mut g, "x", &[3, 16, 23, 21]);
    let w = f16_tensor(&mut g, "w", &[24, 16, 3, 3]);
    let bias = f16_tensor(&mut g, "bias", &[1, 24, 1, 1]);
    let c = g.conv_fprop(&x, &w, ConvAttributes::new().padding(&[1, 1]));
    let cb = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name(OUTPUT)
        .set_output(true)
        .set_data_type(DataType::F32);
    g
}

/// `y = relu(a b + bias)` over f16 inputs (f32 output): a [3, 70, 9], b [3, 9, 65]: operands
/// widened into the workspace, epilogue scratch per worker.
fn matmul_f16() -> Graph {
    let mut g = Graph::new();
    g.set_name("matmul_f16");
    let a = f16_tensor(&mut g, "a", &[3, 70, 9]);
    let b = f16_tensor(&mut g, "b", &[3, 9, 65]);
    let bias = f16_tensor(&mut g, "bias", &[1, 1, 65]);
    let c = g.matmul(&a, &b, MatmulAttributes::new());
    let cb = g.pointwise(
        &c,
        Some(&bias),
        PointwiseAttributes::new(PointwiseMode::Add),
    );
    let y = g.pointwise(&cb, None, PointwiseAttributes::new(PointwiseMode::Relu));
    y.set_name(OUTPUT)
        .set_output(true)
        .set_data_type(DataType::F32);
    g
}

const GRAPHS: [(&str, &str, MakeGraph); 2] = [
    ("conv_f16", "KILN_CPU_CONV_FPROP_GEMM_V1", conv_f16),
    ("matmul_f16", "KILN_CPU_MATMUL_GEMM_V1", matmul_f16),
];

fn plan_file(dir: &Path, what: &str) -> PathBuf {
    dir.join(format!("{what}.kiln"))
}

fn workspace_file(dir: &Path, what: &str) -> PathBuf {
    dir.join(format!("{what}.workspace"))
}

/// Runs the child side `role` of this test binary with `threads` rayon threads on `dir`.
fn child(role: &str, threads: usize, dir: &Path) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args(["--exact", "portable_plan_child", "--ignored", "--nocapture"])
        .env(ROLE, role)
        .env(DIR, dir)
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("the child test process starts");
    assert!(
        out.status.success(),
        "{role} with {threads} threads failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The filter must have matched the child test (libtest exits 0 when it matches nothing).
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// One side of [`plans_built_with_one_thread_count_run_with_another`], in a child process.
#[test]
#[ignore = "a child process of plans_built_with_one_thread_count_run_with_another"]
fn portable_plan_child() {
    let role = std::env::var(ROLE).expect("run by the parent test, which sets the role");
    let dir = PathBuf::from(std::env::var(DIR).expect("and the folder"));
    for (what, engine, make) in GRAPHS {
        if role == "build" {
            let h = cpu_handle();
            let g = built(make, &h);
            assert_eq!(g.plan().expect("a plan").engine_name(), engine, "{what}");
            std::fs::write(plan_file(&dir, what), g.serialize().expect("saves")).expect("write");
            let ws = g.get_workspace_size().expect("workspace size");
            std::fs::write(workspace_file(&dir, what), ws.to_string()).expect("write");
        } else {
            let bytes = std::fs::read(plan_file(&dir, what)).expect("the saved plan");
            let h = cpu_handle();
            let g = Graph::deserialize(Some(&h), &bytes).expect("the saved plan loads");
            let plan = g.plan().expect("the container's plan");
            assert_eq!(plan.origin(), PlanOrigin::Restored, "{what}");
            assert_eq!(plan.engine_name(), engine, "{what}");
            let saved = std::fs::read_to_string(workspace_file(&dir, what)).expect("read");
            assert_eq!(
                g.get_workspace_size().expect("workspace size").to_string(),
                saved,
                "{what}"
            );
            let got = run(&g, &h).expect("the loaded plan runs");
            assert_close(&got, &reference(make), what);
        }
    }
}

#[test]
fn plans_built_with_one_thread_count_run_with_another() {
    let root = std::env::temp_dir().join(format!("kiln-portable-plans-{}", std::process::id()));
    let mut sizes = Vec::new();
    for (build, runs) in [(2, &[7][..]), (7, &[2, 1][..])] {
        let dir = root.join(format!("built-with-{build}"));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        child("build", build, &dir);
        for &threads in runs {
            child("run", threads, &dir);
        }
        let ws: Vec<String> = GRAPHS
            .iter()
            .map(|(what, _, _)| std::fs::read_to_string(workspace_file(&dir, what)).expect("read"))
            .collect();
        sizes.push(ws);
    }
    // The graphs are big enough for the build's thread count to change the workspace, so the
    // runs above really load plans whose workspace differs from what their own machine builds.
    for (i, (what, _, _)) in GRAPHS.iter().enumerate() {
        assert_ne!(sizes[0][i], sizes[1][i], "{what}");
    }
    let _ = std::fs::remove_dir_all(&root);
}
