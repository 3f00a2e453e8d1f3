//! `kiln bench`: build (or load) and time plans, trtexec-like, on the CPU or a GPU.
//!
//! Given a graph file, it builds that graph's plan (or loads the plan of a graph-with-plan file)
//! and times it; without one, it times the standard cases of the device. Each case gets a
//! warm-up, then timed runs on random inputs; the median is reported. `scripts/bench_peers.py`
//! runs the CPU cases on ONNX Runtime and numpy, `scripts/gpu-bench.py` the GPU cases on
//! PyTorch (under the same case names), and both report ratios.

use crate::failure::Failure;
use crate::files::{self, Input};
use crate::graphs::{ConvCase, HalfMatmulCase, MatmulCase, NhwcConvCase};
use crate::plan_build::{build_saveable_plan, handle_for};
use crate::progress;
use crate::timing::{Timer, Timing};
use anyhow::Result;
use kiln::{BlobKind, DataType, Device, Graph, Handle, OpGraph};
use kiln_core::{ConvDirection, Op};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln bench                                          the CPU cases
  kiln bench --filter matmul --runs 5 --json > bench.json
  kiln bench examples/graphs/conv_bias_relu.json      one graph, built and timed
  kiln bench conv.kiln --device cuda:0                the plan of a graph-with-plan file, loaded
  kiln bench --device cuda:0 --filter bf16 --json     the GPU cases (device events)
  kiln bench mm.json --device cuda:0 --autotune=50    tune first (50 runs per setting), then time

A progress bar shows on stderr when it is a terminal. Exit status: 0 timed; 1 error (missing
file, a plan without its graph, unknown engine, a build or execute failure); 3 the file is
damaged; 4 not supported here (no CUDA driver for cuda:N, no engine for the graph, each with
its reason).")]
pub struct Args {
    /// A graph to time: graph JSON, a graph file, or a graph-with-plan file (its plan is loaded
    /// and timed as saved; --engine or --autotune build its graph again instead). Without it,
    /// the standard cases of the device.
    graph: Option<PathBuf>,
    /// Device to time on: "cpu" or "cuda:N".
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Use this engine only (see `kiln plugins` for names); default: the heuristics' first choice.
    #[arg(long)]
    engine: Option<String>,
    /// Before timing, time every knob setting of the candidate engines (ITERS runs each, median)
    /// and keep the fastest, as `kiln build --autotune` does.
    #[arg(
        long,
        value_name = "ITERS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "20"
    )]
    autotune: Option<usize>,
    /// Print the results as a JSON array, one object per case.
    #[arg(long)]
    json: bool,
    /// Only standard cases whose op (conv_fprop, matmul, layernorm, batchnorm_inference,
    /// maxpool, avgpool, plan_save, plan_load) or name
    /// (e.g. "bf16", "8192x8192") contains this text.
    #[arg(long, conflicts_with = "graph")]
    filter: Option<String>,
    /// Most timed runs per case (fewer when a case is slow: about 3 s per case at most).
    #[arg(long, default_value_t = 15)]
    runs: usize,
}

/// Speed in the unit of the device: GFLOP/s on the CPU, TFLOP/s on a GPU; null for a case
/// without matmul or convolution work (pointwise graphs, plan save and load).
#[derive(Serialize)]
#[serde(untagged)]
enum Speed {
    Cpu { gflops: Option<f64> },
    Gpu { tflops: Option<f64> },
}

/// One row of the report (docs/cli.md, `kiln bench`).
#[derive(Serialize)]
struct CaseResult {
    case: String,
    op: String,
    shape: Vec<i64>,
    dtype: &'static str,
    fused: bool,
    device: String,
    engine: String,
    /// "built" (this run built the plan) or "loaded" (restored from saved bytes).
    plan: &'static str,
    median_ms: f64,
    min_ms: f64,
    runs: usize,
    /// Executes per timed run (device events around a batch on a GPU; 1 on the CPU).
    batch: usize,
    #[serde(flatten)]
    speed: Speed,
    /// Time to build the plan (autotuning included); null for a loaded plan.
    build_ms: Option<f64>,
    /// Size of the saved plan.
    plan_bytes: Option<usize>,
    /// Time to load the plan, when it was loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    load_ms: Option<f64>,
    /// With --autotune: how many settings were tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    autotune_trials: Option<usize>,
    /// The instruction set the plan's CPU kernels run with here (`amx`, `avx512bf16`, `avx512`,
    /// `avx2`, `portable`), for engines that choose one; null otherwise.
    isa: Option<String>,
}

/// The instruction set a saved plan's kernels run with on this machine, as its plugin's
/// description of the payload says ("isa=3 (avx512; runs here as avx512)").
fn kernel_isa(plan: &[u8]) -> Option<String> {
    let info = kiln::probe(plan).ok()?;
    let text = crate::inspect::describe(plan, &info)?.text?;
    let (_, rest) = text.split_once("runs here as ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!name.is_empty()).then_some(name)
}

/// How a standard case describes itself; a graph file's case is described from its graph.
struct Label {
    name: String,
    op: &'static str,
    shape: Vec<i64>,
    dtype: &'static str,
    fused: bool,
}

/// A case to time: a graph to build, or saved bytes to load.
struct Case {
    label: Option<Label>,
    /// Names the graph (its file, or the case) in messages.
    what: String,
    source: Source,
}

impl Case {
    /// A standard case of an unfused f32 graph, built and timed as `name`.
    fn f32(name: String, op: &'static str, shape: Vec<i64>, graph: Graph) -> Case {
        Case {
            what: name.clone(),
            label: Some(Label {
                name,
                op,
                shape,
                dtype: "f32",
                fused: false,
            }),
            source: Source::Build(Box::new(graph)),
        }
    }
}

enum Source {
    Build(Box<Graph>),
    /// A graph-with-plan file.
    Load(Vec<u8>),
}

/// What every case is timed with.
struct Bench<'a> {
    handle: &'a Handle,
    timer: &'a Timer,
    engine: Option<&'a str>,
    autotune: Option<usize>,
    runs: usize,
}

impl Bench<'_> {
    fn gpu(&self) -> bool {
        matches!(self.handle.device(), Device::Cuda(_))
    }

    fn speed(&self, flops: f64, median_ms: f64) -> Speed {
        let per_s = (flops > 0.0 && median_ms > 0.0).then(|| flops / (median_ms * 1e-3));
        if self.gpu() {
            Speed::Gpu {
                tflops: per_s.map(|f| f / 1e12),
            }
        } else {
            Speed::Cpu {
                gflops: per_s.map(|f| f / 1e9),
            }
        }
    }

    /// Builds `graph`'s plan as `kiln build` would (saveable engines, `--engine`), autotuned
    /// with `--autotune`; returns the build time and the number of settings tuned.
    fn build(&self, graph: &mut Graph, what: &str) -> Result<(f64, Option<usize>), Failure> {
        let mut build_ms = build_saveable_plan(graph, self.handle, self.engine, what)?;
        let mut trials = None;
        if let Some(iters) = self.autotune {
            let start = Instant::now();
            let report = graph
                .autotune(iters)
                .map_err(|e| Failure::kiln(format!("{what}: autotune"), e))?;
            build_ms += start.elapsed().as_secs_f64() * 1e3;
            trials = Some(report.trials.len());
        }
        Ok((build_ms, trials))
    }

    /// Builds or loads the case's plan, saves it (for its size) and times it.
    fn run(&self, case: Case) -> Result<CaseResult, Failure> {
        let what = case.what;
        let (graph, plan, build_ms, load_ms, autotune_trials) = match case.source {
            Source::Build(mut graph) => {
                let (ms, trials) = self.build(&mut graph, &what)?;
                (*graph, "built", Some(ms), None, trials)
            }
            Source::Load(bytes) => {
                let start = Instant::now();
                let graph = Graph::deserialize(Some(self.handle), &bytes)
                    .map_err(|e| Failure::kiln(&what, e))?;
                let ms = start.elapsed().as_secs_f64() * 1e3;
                (graph, "loaded", None, Some(ms), None)
            }
        };
        let g = graph
            .op_graph()
            .ok_or_else(|| Failure::error(format!("{what}: the graph was not validated")))?;
        let engine = graph
            .plan()
            .map(|p| p.engine_name().to_string())
            .ok_or_else(|| Failure::error(format!("{what}: no plan")))?;
        let saved = graph
            .serialize_compiled_plan()
            .map_err(|e| Failure::kiln(format!("{what}: saving the plan of engine {engine}"), e))?;
        let isa = kernel_isa(&saved);
        let plan_bytes = saved.len();
        let Timing {
            mut times_ms,
            batch,
        } = self
            .timer
            .time(&graph, self.handle, self.runs)
            .map_err(|e| Failure::kiln(format!("{what}: timing engine {engine}"), e))?;
        let label = case.label.unwrap_or_else(|| describe(g, &what));
        let median_ms = median(&mut times_ms);
        Ok(CaseResult {
            case: label.name,
            op: label.op.to_string(),
            shape: label.shape,
            dtype: label.dtype,
            fused: label.fused,
            device: self.handle.device().to_string(),
            engine,
            plan,
            median_ms,
            // median() sorted the times.
            min_ms: times_ms.first().copied().unwrap_or(f64::NAN),
            runs: times_ms.len(),
            batch,
            speed: self.speed(flops(g), median_ms),
            build_ms,
            plan_bytes: Some(plan_bytes),
            load_ms,
            autotune_trials,
            isa,
        })
    }

    /// First save of a freshly built plan of `graph`, and load of its bytes on a fresh handle
    /// (the plugin restores its context; nothing is compiled): two rows.
    fn save_load(
        &self,
        mut graph: Graph,
        label: Label,
        runs: usize,
    ) -> Result<Vec<CaseResult>, Failure> {
        let what = label.name.clone();
        let (build_ms, _) = self.build(&mut graph, &what)?;
        let engine = graph
            .plan()
            .map(|p| p.engine_name().to_string())
            .unwrap_or_default();
        let fail = |e: kiln::Error| Failure::kiln(&what, e);
        let mut save = Vec::with_capacity(runs);
        let mut bytes = Vec::new();
        for _ in 0..runs {
            graph
                .build_plans(kiln::BuildPlanPolicy::HeuristicsChoice)
                .map_err(fail)?;
            let t = Instant::now();
            bytes = graph.serialize_compiled_plan().map_err(fail)?;
            save.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let fresh = Handle::new(self.handle.device()).map_err(fail)?;
        let mut load = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            let plan = kiln::deserialize_compiled_plan(&fresh, &bytes).map_err(fail)?;
            load.push(t.elapsed().as_secs_f64() * 1e3);
            drop(plan);
        }
        let row = |op: &'static str, mut times: Vec<f64>| {
            let median_ms = median(&mut times);
            CaseResult {
                case: format!("{op} {}", label.name),
                op: op.to_string(),
                shape: label.shape.clone(),
                dtype: label.dtype,
                fused: label.fused,
                device: self.handle.device().to_string(),
                engine: engine.clone(),
                plan: if op == "plan_load" { "loaded" } else { "built" },
                median_ms,
                min_ms: times.first().copied().unwrap_or(f64::NAN),
                runs: times.len(),
                batch: 1,
                speed: self.speed(0.0, median_ms),
                build_ms: Some(build_ms),
                plan_bytes: Some(bytes.len()),
                load_ms: (op == "plan_load").then_some(median_ms),
                autotune_trials: None,
                isa: kernel_isa(&bytes),
            }
        };
        Ok(vec![row("plan_save", save), row("plan_load", load)])
    }
}

/// Matmul and convolution FLOPs of `g` (multiply-adds times two; pointwise work not counted):
/// a matmul `2·|c|·K`, a convolution of any direction `2·|y|·(C/groups)·R·S...`.
fn flops(g: &OpGraph) -> f64 {
    let count = |uid: i64| {
        g.tensor(uid)
            .map_or(0.0, |t| t.dims.iter().map(|&d| d as f64).product::<f64>())
    };
    g.nodes
        .iter()
        .map(|n| match &n.op {
            Op::Matmul(m) => {
                let k = g
                    .tensor(m.a)
                    .and_then(|a| a.dims.last().copied())
                    .unwrap_or(0);
                2.0 * count(m.c) * k as f64
            }
            Op::Conv(c) => {
                let out_channels = g
                    .tensor(c.w)
                    .and_then(|w| w.dims.first().copied())
                    .unwrap_or(0);
                if out_channels > 0 {
                    2.0 * count(c.y) * count(c.w) / out_channels as f64
                } else {
                    0.0
                }
            }
            _ => 0.0,
        })
        .sum()
}

/// A graph file's label: its path as the case; op and shape of its first node that is not
/// pointwise (its first node otherwise), that node's output dims; the data type of its first
/// input; fused when it has several nodes.
fn describe(g: &OpGraph, what: &str) -> Label {
    let main = g
        .nodes
        .iter()
        .find(|n| !matches!(n.op, Op::Pointwise(_)))
        .or_else(|| g.nodes.first());
    let op = match main.map(|n| &n.op) {
        Some(Op::Conv(c)) => match c.direction {
            ConvDirection::Fprop => "conv_fprop",
            ConvDirection::Dgrad => "conv_dgrad",
            ConvDirection::Wgrad => "conv_wgrad",
        },
        Some(Op::Matmul(_)) => "matmul",
        Some(Op::Pointwise(_)) => "pointwise",
        Some(Op::Reduction(_)) => "reduction",
        Some(Op::Generic(_)) => "generic",
        None => "none",
    };
    let shape = main
        .and_then(|n| n.op.outputs().first().copied())
        .and_then(|uid| g.tensor(uid))
        .map(|t| t.dims.clone())
        .unwrap_or_default();
    let dtype = g
        .bound_tensors()
        .find(|t| g.producer(t.uid).is_none())
        .map_or(DataType::F32, |t| t.data_type)
        .name();
    Label {
        name: what.to_string(),
        op,
        shape,
        dtype,
        fused: g.nodes.len() > 1,
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

/// The case of the GRAPH argument: its graph to build, or (a graph-with-plan file, without
/// --engine or --autotune) its bytes to load. A bare plan is refused: it has no graph to
/// allocate inputs for.
fn file_case(args: &Args, path: &std::path::Path) -> Result<Case, Failure> {
    let what = path.display().to_string();
    let input = files::open(path)?;
    let op_graph = files::graph_of(path, &input, "`kiln bench`")?;
    let source = match input {
        Input::Blob { bytes, info }
            if info.kind == BlobKind::GraphAndPlan
                && info.plan_blob_bytes.is_some()
                && args.engine.is_none()
                && args.autotune.is_none() =>
        {
            Source::Load(bytes)
        }
        _ => Source::Build(Box::new(
            Graph::from_op_graph(op_graph).map_err(|e| Failure::kiln(&what, e))?,
        )),
    };
    Ok(Case {
        label: None,
        what,
        source,
    })
}

fn cpu_cases() -> Vec<Case> {
    let conv = |n, c, hw, k, r, pad, fused| ConvCase {
        n,
        c,
        h: hw,
        w: hw,
        k,
        r,
        s: r,
        pad,
        fused,
    };
    let convs = [
        conv(1, 64, 56, 64, 3, 1, false),
        conv(8, 64, 56, 64, 3, 1, true),
        conv(8, 256, 14, 256, 3, 1, true),
        conv(8, 128, 28, 128, 1, 0, true),
    ];
    let mut cases: Vec<Case> = convs
        .iter()
        .map(|c| {
            let name = format!(
                "conv_fprop f32 N{} C{} H{} W{} K{} R{} S{} pad{}{}",
                c.n,
                c.c,
                c.h,
                c.w,
                c.k,
                c.r,
                c.s,
                c.pad,
                if c.fused { " + bias + relu" } else { "" }
            );
            Case {
                what: name.clone(),
                label: Some(Label {
                    name,
                    op: "conv_fprop",
                    shape: c.shape(),
                    dtype: "f32",
                    fused: c.fused,
                }),
                source: Source::Build(Box::new(c.graph().0)),
            }
        })
        .collect();
    for s in [1024, 2048] {
        let m = MatmulCase { m: s, n: s, k: s };
        let name = format!("matmul f32 {s}x{s}x{s}");
        cases.push(Case::f32(name, "matmul", vec![m.m, m.n, m.k], m.graph().0));
    }
    // The f32 normalizations that scripts/bench_peers.py times against ONNX Runtime
    // (LayerNormalization over the last dim, BatchNormalization in inference mode, NCHW).
    for (op, shape) in [
        ("layernorm", vec![4096, 1024]),
        ("batchnorm_inference", vec![8, 64, 56, 56]),
    ] {
        let graph = norm_graph(op, &shape);
        cases.push(Case::f32(format!("{op} f32 {shape:?}"), op, shape, graph));
    }
    // Pooling as scripts/bench_peers.py times ONNX Runtime's MaxPool and AveragePool (NCHW,
    // 3x3 window, stride 2, padding 1 on every side: the ResNet stem's; the average leaves
    // the padding out, as AveragePool does by default).
    for op in ["maxpool", "avgpool"] {
        let shape = vec![8, 64, 112, 112];
        let (name, graph) = (
            format!("{op} f32 {shape:?} 3x3 stride 2 pad 1"),
            pool_graph(op, &shape),
        );
        cases.push(Case::f32(name, op, shape, graph));
    }
    // bf16 operands: AMX tiles where the processor has them (the printed kernels say).
    for (n, c, h, k) in [(8, 64, 56, 64), (8, 256, 14, 256)] {
        let conv = NhwcConvCase {
            dt: DataType::Bf16,
            n,
            c,
            h,
            k,
            r: 3,
            stride: 1,
        };
        cases.push(Case {
            what: conv.name(),
            label: Some(Label {
                name: conv.name(),
                op: "conv_fprop",
                shape: conv.shape(),
                dtype: "bf16",
                fused: true,
            }),
            source: Source::Build(Box::new(conv.graph())),
        });
    }
    // f16 operands: AMX tiles as their exact bf16 parts where the processor has them.
    for (dt, s, bias_gelu) in [
        (DataType::Bf16, 1024, false),
        (DataType::Bf16, 2048, false),
        (DataType::Bf16, 2048, true),
        (DataType::F16, 1024, false),
    ] {
        let mm = HalfMatmulCase {
            dt,
            m: s,
            n: s,
            k: s,
            bias_gelu,
        };
        cases.push(Case {
            what: mm.name(),
            label: Some(Label {
                name: mm.name(),
                op: "matmul",
                shape: vec![mm.m, mm.n, mm.k],
                dtype: mm.dt.name(),
                fused: bias_gelu,
            }),
            source: Source::Build(Box::new(mm.graph())),
        });
    }
    cases
}

/// An f32 max pooling (`op` "maxpool") or average pooling with the padding left out of each
/// window's count ("avgpool") of NCHW `shape`: 3x3 window, stride 2, padding 1.
fn pool_graph(op: &str, shape: &[i64]) -> Graph {
    use kiln::{ResampleAttributes, ResampleMode, TensorAttributes};
    let mut g = Graph::new();
    let x = g.tensor(
        TensorAttributes::new()
            .name("x")
            .dim(shape)
            .data_type(DataType::F32),
    );
    let mode = if op == "maxpool" {
        ResampleMode::MaxPool
    } else {
        ResampleMode::AvgPoolExcludePadding
    };
    let attrs = ResampleAttributes::new(mode, &[3, 3])
        .stride(&[2, 2])
        .pre_padding(&[1, 1])
        .post_padding(&[1, 1]);
    // Fixed, valid dims: the node always builds.
    g.resample(&x, attrs)
        .expect("a standard pooling case")
        .y
        .set_name("y")
        .set_output(true);
    g
}

/// An f32 layernorm over the last dim of `shape` (inference) or a batchnorm_inference per
/// channel of NCHW `shape`, with random-valued parameters bound at run time.
fn norm_graph(op: &str, shape: &[i64]) -> Graph {
    use kiln::{BatchnormInferenceAttributes, LayernormAttributes, TensorAttributes};
    let mut g = Graph::new();
    let f32_tensor = |g: &mut Graph, name: &str, dims: &[i64]| {
        g.tensor(
            TensorAttributes::new()
                .name(name)
                .dim(dims)
                .data_type(DataType::F32),
        )
    };
    let x = f32_tensor(&mut g, "x", shape);
    let y = if op == "layernorm" {
        let mut p = vec![1; shape.len()];
        p[1..].copy_from_slice(&shape[1..]);
        let s = f32_tensor(&mut g, "scale", &p);
        let b = f32_tensor(&mut g, "bias", &p);
        g.layernorm(&x, &s, &b, LayernormAttributes::new().epsilon(1e-5))
            .map(|o| o.y)
    } else {
        let mut p = vec![1; shape.len()];
        p[1] = shape[1];
        let ps: Vec<_> = ["mean", "inv_variance", "scale", "bias"]
            .iter()
            .map(|n| f32_tensor(&mut g, n, &p))
            .collect();
        g.batchnorm_inference(
            &x,
            &ps[0],
            &ps[1],
            &ps[2],
            &ps[3],
            BatchnormInferenceAttributes::new(),
        )
    };
    // Fixed, valid dims: the node always builds.
    y.expect("a standard norm case")
        .set_name("y")
        .set_output(true);
    g
}

/// The GPU cases of issue 10: f16/bf16 NHWC conv + bias + relu, f16/bf16 matmul, bf16 matmul +
/// bias + gelu.
fn gpu_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for dt in [DataType::F16, DataType::Bf16] {
        for (n, c, h, k, r, stride) in [
            (32, 64, 56, 64, 3, 1),
            (32, 256, 14, 256, 3, 1),
            (32, 128, 28, 128, 1, 1),
            (32, 128, 56, 128, 3, 2),
            (64, 512, 7, 512, 3, 1),
        ] {
            let conv = NhwcConvCase {
                dt,
                n,
                c,
                h,
                k,
                r,
                stride,
            };
            cases.push(Case {
                what: conv.name(),
                label: Some(Label {
                    name: conv.name(),
                    op: "conv_fprop",
                    shape: conv.shape(),
                    dtype: dt.name(),
                    fused: true,
                }),
                source: Source::Build(Box::new(conv.graph())),
            });
        }
    }
    let matmul = |dt, m, n, k, bias_gelu| HalfMatmulCase {
        dt,
        m,
        n,
        k,
        bias_gelu,
    };
    let mut matmuls = Vec::new();
    for dt in [DataType::Bf16, DataType::F16] {
        for (m, n, k) in [
            (4096, 4096, 4096),
            (8192, 8192, 8192),
            (4096, 1024, 4096),
            (16384, 4096, 1024),
        ] {
            matmuls.push(matmul(dt, m, n, k, false));
        }
    }
    matmuls.push(matmul(DataType::Bf16, 8192, 8192, 8192, true));
    for mm in matmuls {
        cases.push(Case {
            what: mm.name(),
            label: Some(Label {
                name: mm.name(),
                op: "matmul",
                shape: vec![mm.m, mm.n, mm.k],
                dtype: mm.dt.name(),
                fused: mm.bias_gelu,
            }),
            source: Source::Build(Box::new(mm.graph())),
        });
    }
    cases
}

/// The graph whose plan the save/load rows time, with its label: the demo's conv on the CPU,
/// the first f16 GPU conv case on a GPU.
fn save_load_case(gpu: bool) -> (Graph, Label) {
    if gpu {
        let conv = NhwcConvCase {
            dt: DataType::F16,
            n: 32,
            c: 64,
            h: 56,
            k: 64,
            r: 3,
            stride: 1,
        };
        let label = Label {
            name: conv.name(),
            op: "conv_fprop",
            shape: conv.shape(),
            dtype: "f16",
            fused: true,
        };
        return (conv.graph(), label);
    }
    let case = ConvCase::demo();
    let label = Label {
        name: format!(
            "conv_fprop f32 N{} C{} H{} W{} K{} R{} S{} pad{} + bias + relu",
            case.n, case.c, case.h, case.w, case.k, case.r, case.s, case.pad
        ),
        op: "conv_fprop",
        shape: case.shape(),
        dtype: "f32",
        fused: true,
    };
    (case.graph().0, label)
}

pub fn run(args: Args) -> Result<ExitCode> {
    let device = Device::parse(&args.device)
        .map_err(|e| Failure::error(format!("--device {}: {}", args.device, e.message())))?;
    // Before the handle, so that a missing driver is named as such.
    let timer = Timer::new(device, &args.device)?;
    let handle = handle_for(&args.device)?;
    let bench = Bench {
        handle: &handle,
        timer: &timer,
        engine: args.engine.as_deref(),
        autotune: args.autotune,
        runs: args.runs,
    };
    let gpu = bench.gpu();
    let wanted = |op: &str, name: &str| {
        args.filter
            .as_deref()
            .is_none_or(|f| op.contains(f) || name.contains(f))
    };
    let (cases, save_load) = match &args.graph {
        Some(path) => (vec![file_case(&args, path)?], None),
        None => {
            let all = if gpu { gpu_cases() } else { cpu_cases() };
            let cases: Vec<Case> = all
                .into_iter()
                .filter(|c| c.label.as_ref().is_some_and(|l| wanted(l.op, &l.name)))
                .collect();
            let (g, label) = save_load_case(gpu);
            let keep = wanted("plan_save", &label.name) || wanted("plan_load", &label.name);
            (cases, keep.then_some((g, label)))
        }
    };
    if !args.json {
        println!("kiln bench on {}", timer.describe());
    }
    let pb = progress::bar(
        (cases.len() + usize::from(save_load.is_some())) as u64,
        "kiln bench",
    );
    let mut results = Vec::new();
    for case in cases {
        let r = bench.run(case)?;
        if !args.json {
            pb.suspend(|| print_row(&r));
        }
        results.push(r);
        pb.inc(1);
    }
    if let Some((g, label)) = save_load {
        for r in bench.save_load(g, label, args.runs.max(50))? {
            if wanted(&r.op, &r.case) {
                if !args.json {
                    pb.suspend(|| print_row(&r));
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

fn print_row(r: &CaseResult) {
    let speed = match r.speed {
        Speed::Cpu { gflops: Some(g) } => format!("{g:>8.1} GFLOP/s"),
        Speed::Gpu { tflops: Some(t) } => format!("{t:>8.1} TFLOP/s"),
        _ => String::new(),
    };
    let time = if r.op.starts_with("plan_") {
        format!("{:>9.1} us", r.median_ms * 1e3)
    } else {
        format!("{:>9.3} ms (min {:.3})", r.median_ms, r.min_ms)
    };
    let batch = if r.batch > 1 {
        format!(" x {}", r.batch)
    } else {
        String::new()
    };
    let mut how = format!("{} plan", r.plan);
    if let Some(b) = r.build_ms {
        how += &format!(", build {b:.1} ms");
    }
    if let Some(l) = r.load_ms.filter(|_| r.op != "plan_load") {
        how += &format!(", load {:.1} us", l * 1e3);
    }
    if let Some(n) = r.plan_bytes {
        how += &format!(", {n} bytes");
    }
    if let Some(isa) = &r.isa {
        how += &format!(", {isa} kernels");
    }
    println!(
        "{:<52} {time} {speed}  ({}, {} runs{batch}, {how})",
        r.case, r.engine, r.runs
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validated(case: Case) -> (Label, OpGraph) {
        let Source::Build(mut g) = case.source else {
            panic!("{}: a standard case is built", case.what)
        };
        g.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", case.what));
        (
            case.label.expect("a standard case has a label"),
            g.op_graph().expect("validated").clone(),
        )
    }

    #[test]
    fn the_gpu_cases_are_issue_10s_with_their_layouts_and_flops() {
        let cases: Vec<(Label, OpGraph)> = gpu_cases().into_iter().map(validated).collect();
        let names: Vec<&str> = cases.iter().map(|(l, _)| l.name.as_str()).collect();
        assert_eq!(cases.len(), 2 * 5 + 2 * 4 + 1, "{names:?}");
        for want in [
            "conv f16 N32 C64 H56 K64 R3 s1 bias_relu=true",
            "conv bf16 N32 C128 H56 K128 R3 s2 bias_relu=true",
            "conv bf16 N64 C512 H7 K512 R3 s1 bias_relu=true",
            "matmul bf16 4096x4096x4096",
            "matmul f16 16384x4096x1024",
            "matmul bf16 8192x8192x8192 + bias + gelu",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for (label, g) in &cases {
            let s = &label.shape;
            let want = if label.op == "conv_fprop" {
                let (n, c, h, k, r, stride) = (s[0], s[1], s[2], s[3], s[4], s[5]);
                let p = (h + 2 * (r / 2) - r) / stride + 1;
                let y = g.tensors.iter().find(|t| t.name == "y").unwrap();
                assert_eq!(y.dims, [n, k, p, p], "{}", label.name);
                assert_eq!(y.strides, [p * p * k, 1, p * k, k], "{}: NHWC", label.name);
                let x = g.tensors.iter().find(|t| t.name == "x").unwrap();
                assert_eq!(x.strides, [h * h * c, 1, h * c, c], "{}: NHWC", label.name);
                2.0 * (n * k * p * p * c * r * r) as f64
            } else {
                2.0 * (s[0] * s[1] * s[2]) as f64
            };
            assert_eq!(flops(g), want, "{}", label.name);
            let dt = g.tensors.iter().find(|t| t.name == "y").unwrap().data_type;
            assert_eq!(
                dt.name(),
                label.dtype,
                "{}: output in the input type",
                label.name
            );
        }
    }

    #[test]
    fn a_graph_file_is_described_by_its_main_node() {
        let (_, g) = validated(cpu_cases().remove(1));
        let label = describe(&g, "conv.json");
        assert_eq!(label.op, "conv_fprop");
        assert_eq!(label.shape, [8, 64, 56, 56]);
        assert_eq!(label.dtype, "f32");
        assert!(label.fused);
        assert_eq!(flops(&g), 2.0 * (8 * 64 * 56 * 56 * 64 * 9) as f64);
    }

    #[test]
    #[ignore = "needs NVRTC: eval \"$(scripts/install-nvrtc.sh)\""]
    fn the_gpu_cases_build_for_sm_90_without_a_gpu() {
        let handle = Handle::new(Device::CudaTarget(90)).expect("a handle for sm_90");
        for case in gpu_cases() {
            let Source::Build(mut g) = case.source else {
                unreachable!()
            };
            build_saveable_plan(&mut g, &handle, None, &case.what)
                .unwrap_or_else(|e| panic!("{}: {e}", case.what));
            let engine = g.plan().unwrap().engine_name().to_string();
            assert!(engine.starts_with("KILN_CUDA_"), "{}: {engine}", case.what);
            eprintln!("{}: {engine}", case.what);
        }
    }
}
