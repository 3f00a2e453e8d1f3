//! `kiln build GRAPH -o OUT`: build a plan from a graph and save it (alone, or with its graph).

use crate::failure::Failure;
use crate::files;
use crate::plan_build::{build_saveable_plan, handle_for, handle_for_target};
use anyhow::Result;
use kiln::Graph;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln build examples/graphs/conv_bias_relu.json -o conv.plan
  kiln build examples/graphs/matmul.json --with-graph -o matmul.kiln
  kiln build graph.json --engine KILN_CPU_REFERENCE -o ref.plan --json
  kiln build graph.json --target sm_90 -o conv_sm90.kiln --with-graph   (needs the CUDA provider)
  kiln build matmul.json --device cuda:0 --autotune -o mm.kiln   (times every tile configuration)

Exit status: 0 saved; 1 error (missing file, a plan given as the graph, unknown engine);
3 the graph file is damaged; 4 no engine here supports the graph, device or target.")]
pub struct Args {
    /// The graph: JSON (see docs/cli.md), a graph file, or a graph-with-plan file (its graph is used).
    graph: PathBuf,
    /// Where to write the plan (or the graph with its plan, with --with-graph).
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Device to build for: "cpu" or "cuda:N".
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Build for a CUDA arch without a GPU (e.g. sm_90); needs the CUDA kernel provider.
    #[arg(long, conflicts_with = "device")]
    target: Option<String>,
    /// Use this engine only (see `kiln plugins` for names); default: the heuristics' first choice.
    #[arg(long)]
    engine: Option<String>,
    /// Time every knob setting of the candidate engines on the device (ITERS runs each, median)
    /// and keep the fastest; the plan records the choice, so loading it never tunes again.
    #[arg(long, value_name = "ITERS", num_args = 0..=1, default_missing_value = "20")]
    autotune: Option<usize>,
    /// Save the graph together with its plan (a graph-with-plan file `kiln run` can execute directly).
    #[arg(long)]
    with_graph: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    graph: String,
    output: String,
    kind: &'static str,
    bytes: usize,
    device: String,
    engine: String,
    plugin: String,
    plugin_version: String,
    workspace_size: usize,
    tensor_uids: Vec<i64>,
    build_ms: f64,
    /// With --autotune: each setting tried (engine, knobs, median ms or why it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    autotune: Option<Vec<Trial>>,
}

#[derive(Serialize)]
struct Trial {
    engine: String,
    knobs: Vec<(i64, i64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    median_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let input = files::open(&args.graph)?;
    let what = args.graph.display().to_string();
    let op_graph = files::graph_of(&args.graph, &input, "`kiln build`")?;
    let handle = match &args.target {
        Some(target) => handle_for_target(target)?,
        None => handle_for(&args.device)?,
    };
    let mut graph = Graph::from_op_graph(op_graph).map_err(|e| Failure::kiln(&what, e))?;
    let mut build_ms = build_saveable_plan(&mut graph, &handle, args.engine.as_deref(), &what)?;
    let autotune = match args.autotune {
        Some(iters) => {
            let start = std::time::Instant::now();
            let report = graph
                .autotune(iters)
                .map_err(|e| Failure::kiln(format!("{what}: autotune"), e))?;
            build_ms += start.elapsed().as_secs_f64() * 1e3;
            Some(
                report
                    .trials
                    .into_iter()
                    .map(|t| Trial {
                        engine: t.engine,
                        knobs: t.knobs,
                        median_ms: t.result.as_ref().ok().copied(),
                        error: t.result.err(),
                    })
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let plan = graph
        .plan()
        .ok_or_else(|| Failure::error(format!("{what}: no plan was built")))?;
    let bytes = if args.with_graph {
        graph.serialize()
    } else {
        graph.serialize_compiled_plan()
    }
    .map_err(|e| {
        Failure::kiln(
            format!("{what}: saving the plan of engine {}", plan.engine_name()),
            e,
        )
    })?;
    files::write(&args.output, &bytes)?;
    let report = Report {
        graph: what,
        output: args.output.display().to_string(),
        kind: if args.with_graph {
            "graph_and_plan"
        } else {
            "plan"
        },
        bytes: bytes.len(),
        device: handle.device().to_string(),
        engine: plan.engine_name().to_string(),
        plugin: plan.plugin_name().to_string(),
        plugin_version: plan.plugin_version().to_string(),
        workspace_size: plan.workspace_size(),
        tensor_uids: plan.tensor_uids().to_vec(),
        build_ms,
        autotune,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{}: {} ({} bytes) built from {} on {} in {:.1} ms",
            report.output,
            if args.with_graph {
                "graph with plan"
            } else {
                "plan"
            },
            report.bytes,
            report.graph,
            report.device,
            report.build_ms
        );
        println!(
            "  engine     {} (plugin {} {})",
            report.engine, report.plugin, report.plugin_version
        );
        println!(
            "  workspace  {} bytes; binds tensor uids {:?}",
            report.workspace_size, report.tensor_uids
        );
        for t in report.autotune.iter().flatten() {
            match (&t.median_ms, &t.error) {
                (Some(ms), _) => {
                    println!("  autotune   {} knobs {:?}: {ms:.4} ms", t.engine, t.knobs)
                }
                (None, e) => println!(
                    "  autotune   {} knobs {:?}: {}",
                    t.engine,
                    t.knobs,
                    e.as_deref().unwrap_or("failed")
                ),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
