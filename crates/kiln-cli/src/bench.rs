//! `kiln bench`: timings of the CPU engine on the standard cases.
//!
//! Each case is built once on the default heuristics, run once to warm up, then timed; the
//! median of the runs is reported. `scripts/bench_peers.py` runs the same cases on ONNX Runtime
//! and numpy and reports ratios.

use crate::graphs::{ConvCase, MatmulCase, NormCase, NormKind};
use crate::progress;
use anyhow::Result;
use kiln::{Graph, Handle, HeurMode, HostTensor, Tensor, VariantPack, Workspace};
use serde::Serialize;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln bench
  kiln bench --filter matmul --runs 5 --json > bench.json

A progress bar shows on stderr when it is a terminal. Exit status: 0; 1 error.")]
pub struct Args {
    /// Print the results as a JSON array.
    #[arg(long)]
    json: bool,
    /// Only cases whose op (conv_fprop, matmul, layernorm, batchnorm_inference, plan_save,
    /// plan_load) contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Most timed runs per case (fewer when a case is slow: about 3 s per case at most).
    #[arg(long, default_value_t = 15)]
    runs: usize,
}

#[derive(Serialize)]
struct CaseResult {
    op: &'static str,
    shape: Vec<i64>,
    dtype: &'static str,
    fused: bool,
    engine: String,
    median_ms: f64,
    min_ms: f64,
    runs: usize,
    gflops: f64,
}

fn time_graph(
    handle: &Handle,
    graph: &mut Graph,
    inputs: &[Tensor],
    output: &Tensor,
    runs: usize,
) -> Result<(String, Vec<f64>)> {
    graph.build(handle, &[HeurMode::A])?;
    let engine = graph
        .plan()
        .map(|p| p.engine_name().to_string())
        .unwrap_or_default();
    let mut hosts: Vec<HostTensor> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| HostTensor::random(&t.desc()?, 7 + i as u64))
        .collect::<kiln::Result<_>>()?;
    let mut out = HostTensor::for_tensor(output)?;
    let mut ws = Workspace::for_graph(graph)?;
    let mut times = Vec::new();
    let budget = Duration::from_secs(3);
    let start = Instant::now();
    for i in 0..=runs {
        let mut pack = VariantPack::new();
        for (t, h) in inputs.iter().zip(hosts.iter_mut()) {
            pack.insert(t, h);
        }
        pack.insert(output, &mut out);
        let t = Instant::now();
        graph.execute(handle, &mut pack, &mut ws)?;
        if i > 0 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        if i >= 3 && start.elapsed() > budget {
            break;
        }
    }
    Ok((engine, times))
}

impl CaseResult {
    /// A row from the run times (ms) of one case; `flops` of 0 means "not a compute case".
    fn from_times(
        op: &'static str,
        shape: Vec<i64>,
        fused: bool,
        engine: String,
        times: &mut [f64],
        flops: f64,
    ) -> CaseResult {
        let med = median(times);
        CaseResult {
            op,
            shape,
            dtype: "f32",
            fused,
            engine,
            median_ms: med,
            // median() sorted the times.
            min_ms: times.first().copied().unwrap_or(f64::NAN),
            runs: times.len(),
            gflops: if flops > 0.0 {
                flops / (med * 1e6)
            } else {
                0.0
            },
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    let handle = Handle::cpu()?;
    let convs = [
        ConvCase {
            n: 1,
            c: 64,
            h: 56,
            w: 56,
            k: 64,
            r: 3,
            s: 3,
            pad: 1,
            fused: false,
        },
        ConvCase {
            n: 8,
            c: 64,
            h: 56,
            w: 56,
            k: 64,
            r: 3,
            s: 3,
            pad: 1,
            fused: true,
        },
        ConvCase {
            n: 8,
            c: 256,
            h: 14,
            w: 14,
            k: 256,
            r: 3,
            s: 3,
            pad: 1,
            fused: true,
        },
        ConvCase {
            n: 8,
            c: 128,
            h: 28,
            w: 28,
            k: 128,
            r: 1,
            s: 1,
            pad: 0,
            fused: true,
        },
    ];
    let matmuls = [
        MatmulCase {
            m: 1024,
            n: 1024,
            k: 1024,
        },
        MatmulCase {
            m: 2048,
            n: 2048,
            k: 2048,
        },
    ];
    let norms = [
        NormCase {
            kind: NormKind::Layernorm,
            shape: vec![4096, 1024],
        },
        NormCase {
            kind: NormKind::BatchnormInference,
            shape: vec![8, 64, 56, 56],
        },
    ];
    let wanted = |op: &str| args.filter.as_deref().is_none_or(|f| op.contains(f));
    let steps = convs.iter().filter(|_| wanted("conv_fprop")).count()
        + matmuls.iter().filter(|_| wanted("matmul")).count()
        + norms.iter().filter(|n| wanted(n.op())).count()
        + usize::from(wanted("plan_save") || wanted("plan_load"));
    let pb = progress::bar(steps as u64, "kiln bench");
    let mut results = Vec::new();
    for case in convs.iter().filter(|_| wanted("conv_fprop")) {
        let (mut g, inputs, y) = case.graph();
        let (engine, mut times) = time_graph(&handle, &mut g, &inputs, &y, args.runs)?;
        results.push(CaseResult::from_times(
            "conv_fprop",
            case.shape(),
            case.fused,
            engine,
            &mut times,
            case.flops(),
        ));
        if !args.json {
            pb.suspend(|| print_row(results.last()));
        }
        pb.inc(1);
    }
    for case in matmuls.iter().filter(|_| wanted("matmul")) {
        let (mut g, inputs, c) = case.graph();
        let (engine, mut times) = time_graph(&handle, &mut g, &inputs, &c, args.runs)?;
        results.push(CaseResult::from_times(
            "matmul",
            vec![case.m, case.n, case.k],
            false,
            engine,
            &mut times,
            case.flops(),
        ));
        if !args.json {
            pb.suspend(|| print_row(results.last()));
        }
        pb.inc(1);
    }
    for case in norms.iter().filter(|n| wanted(n.op())) {
        let (mut g, inputs, y) = case.graph()?;
        let (engine, mut times) = time_graph(&handle, &mut g, &inputs, &y, args.runs)?;
        results.push(CaseResult::from_times(
            case.op(),
            case.shape.clone(),
            false,
            engine,
            &mut times,
            0.0,
        ));
        if !args.json {
            pb.suspend(|| print_row(results.last()));
        }
        pb.inc(1);
    }
    if wanted("plan_save") || wanted("plan_load") {
        for r in bench_save_load(&handle, args.runs.max(50))? {
            if wanted(r.op) {
                if !args.json {
                    pb.suspend(|| print_row(Some(&r)));
                }
                results.push(r);
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// First save of a freshly built demo plan, and load of its bytes on a fresh handle (the
/// plugin restores its context; nothing is compiled).
fn bench_save_load(handle: &Handle, runs: usize) -> Result<Vec<CaseResult>> {
    let case = ConvCase::demo();
    let (mut g, _, _) = case.graph();
    g.build(handle, &[HeurMode::A])?;
    let engine = g
        .plan()
        .map(|p| p.engine_name().to_string())
        .unwrap_or_default();
    let mut save = Vec::with_capacity(runs);
    let mut bytes = Vec::new();
    for _ in 0..runs {
        g.build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)?;
        let t = Instant::now();
        bytes = g.serialize_compiled_plan()?;
        save.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let fresh = Handle::new(handle.device())?;
    let mut load = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let plan = kiln::deserialize_compiled_plan(&fresh, &bytes)?;
        load.push(t.elapsed().as_secs_f64() * 1e3);
        drop(plan);
    }
    let row = |op: &'static str, mut times: Vec<f64>| {
        CaseResult::from_times(op, case.shape(), true, engine.clone(), &mut times, 0.0)
    };
    Ok(vec![row("plan_save", save), row("plan_load", load)])
}

fn print_row(r: Option<&CaseResult>) {
    let Some(r) = r else { return };
    let speed = if r.gflops > 0.0 {
        format!("{:>9.3} ms  {:>7.1} GFLOP/s", r.median_ms, r.gflops)
    } else {
        format!("{:>9.1} us", r.median_ms * 1e3)
    };
    println!(
        "{:<11} {:<34} {} fused={:<5} {speed}  ({}, {} runs)",
        r.op,
        format!("{:?}", r.shape),
        r.dtype,
        r.fused,
        r.engine,
        r.runs
    );
}
