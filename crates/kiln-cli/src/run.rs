//! `kiln run FILE`: load (or build) a plan and execute it on host memory, optionally checking the
//! results against the reference engine.

use crate::failure::{Failure, EXIT_MISMATCH, EXIT_NOT_SUPPORTED};
use crate::files::{self, Input};
use crate::plan_build::handle_for;
use crate::reference::max_rel_error;
use crate::{progress, tensor_files};
use anyhow::Result;
use kiln::{
    DataType, Device, Graph, Handle, HeurMode, HostTensor, OpGraph, TensorDesc, VariantPack,
    Workspace,
};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln run conv.kiln --validate                       (a graph-with-plan file)
  kiln run conv.plan --graph examples/graphs/conv_bias_relu.json
  kiln run examples/graphs/matmul.json --validate     (a graph alone: built first)
  kiln run conv.kiln --inputs data/ --outputs out/ --json
  kiln run conv.kiln --device cuda:1 --validate         (a plan built on cuda:0 runs on cuda:1)

Input files (--inputs DIR) and output files (--outputs DIR) hold one tensor each, named
<tensor name>.bin (or <uid>.bin): its values in its data type, logical row-major order, no header.

Exit status: 0 ran (and matched); 1 error (missing file, a plan without --graph, a plan of another
graph); 2 results differ from the reference engine; 3 the file is damaged; 4 not supported here.")]
pub struct Args {
    /// A graph-with-plan file, a plan file (with --graph), or a graph (JSON or file; built first).
    file: PathBuf,
    /// Device to run on: "cpu" or "cuda:N" (inputs are uploaded, outputs downloaded).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Input data: "random" (reproducible values in [-1, 1)) or a folder of data files.
    #[arg(long, default_value = "random")]
    inputs: String,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The graph a plan-only FILE was built from (JSON or a graph file).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Write each output tensor's data file to this folder.
    #[arg(long)]
    outputs: Option<PathBuf>,
    /// Compare every output with the reference engine (KILN_CPU_REFERENCE) on the same inputs.
    #[arg(long)]
    validate: bool,
    /// Largest accepted relative error with --validate (default: 1e-3 for f32 and f64 outputs,
    /// 5e-3 for f16, 2e-2 for bf16).
    #[arg(long)]
    tolerance: Option<f64>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct OutputReport {
    name: String,
    uid: i64,
    dims: Vec<i64>,
    data_type: &'static str,
    min: f64,
    max: f64,
    mean: f64,
    file: Option<String>,
    max_rel_error: Option<f64>,
    tolerance: Option<f64>,
}

#[derive(Serialize)]
struct Validation {
    reference_engine: String,
    matches: bool,
}

#[derive(Serialize)]
struct Report {
    file: String,
    kind: &'static str,
    /// "loaded" (the file's plan, restored) or "built" (the file has no plan).
    plan: &'static str,
    device: String,
    engine: String,
    plugin: String,
    plugin_version: String,
    workspace_size: usize,
    inputs: String,
    execute_ms: f64,
    outputs: Vec<OutputReport>,
    validation: Option<Validation>,
}

fn default_tolerance(dt: DataType) -> f64 {
    match dt {
        DataType::F32 | DataType::F64 => 1e-3,
        DataType::F16 => 5e-3,
        DataType::Bf16 => 2e-2,
        // Whole numbers: an engine stores exactly the reference's.
        DataType::Boolean | DataType::I8 | DataType::I32 => 0.0,
        // One ulp of 3 and 2 mantissa bits.
        DataType::Fp8E4m3 => 0.125,
        DataType::Fp8E5m2 => 0.25,
    }
}

/// The graph with its plan: restored from the file when it has one, else built.
fn load(args: &Args, handle: &Handle, input: &Input) -> Result<(Graph, &'static str), Failure> {
    let what = args.file.display().to_string();
    match input {
        Input::Blob { bytes, info } if info.kind == kiln::BlobKind::Plan => {
            let Some(graph_path) = &args.graph else {
                return Err(Failure::error(format!(
                    "{what}: is a compiled plan without its graph (engine {}); kiln cannot allocate its \
                     tensors safely without their shapes and types: give the graph it was built from with \
                     --graph GRAPH.json, or save graph and plan together with `kiln build --with-graph`",
                    info.engine_name.as_deref().unwrap_or("unknown")
                )));
            };
            let graph_input = files::open(graph_path)?;
            let g = files::graph_of(graph_path, &graph_input, "--graph")?;
            let gname = graph_path.display().to_string();
            let mut graph = Graph::from_op_graph(g).map_err(|e| Failure::kiln(&gname, e))?;
            graph
                .deserialize_compiled_plan(handle, bytes)
                .map_err(|e| Failure::kiln(format!("{what} with --graph {gname}"), e))?;
            Ok((graph, "loaded"))
        }
        Input::Blob { bytes, .. } if files::has_plan(input) => {
            let graph =
                Graph::deserialize(Some(handle), bytes).map_err(|e| Failure::kiln(&what, e))?;
            Ok((graph, "loaded"))
        }
        _ => {
            let g = files::graph_of(&args.file, input, "`kiln run`")?;
            let mut graph = Graph::from_op_graph(g).map_err(|e| Failure::kiln(&what, e))?;
            let pb = progress::spinner(format!("building the plan of {what}"));
            let built = graph.build(handle, &[HeurMode::A]);
            pb.finish_and_clear();
            built.map_err(|e| Failure::kiln(&what, e))?;
            Ok((graph, "built"))
        }
    }
}

/// Runs `graph`'s selected plan on `inputs`; returns the outputs' memory and the time taken.
fn execute(
    graph: &Graph,
    handle: &Handle,
    inputs: &[(TensorDesc, HostTensor)],
    outputs: &[TensorDesc],
    what: &str,
) -> Result<(Vec<HostTensor>, f64), Failure> {
    let fail = |e: kiln::Error| Failure::kiln(what, e);
    let mut ins: Vec<HostTensor> = inputs.iter().map(|(_, h)| h.clone()).collect();
    let mut outs: Vec<HostTensor> = outputs
        .iter()
        .map(HostTensor::zeros)
        .collect::<kiln::Result<_>>()
        .map_err(fail)?;
    let mut workspace = Workspace::for_graph(graph).map_err(fail)?;
    #[cfg(feature = "cuda")]
    if let Device::Cuda(ordinal) = handle.device() {
        return execute_on_gpu(
            graph,
            handle,
            ordinal,
            (inputs, &ins),
            &mut outs,
            &mut workspace,
        )
        .map(|ms| (outs, ms))
        .map_err(fail);
    }
    let start = Instant::now();
    {
        let mut pack = VariantPack::new();
        for ((d, _), h) in inputs.iter().zip(ins.iter_mut()) {
            pack.insert_uid(d.uid, h);
        }
        for (d, h) in outputs.iter().zip(outs.iter_mut()) {
            pack.insert_uid(d.uid, h);
        }
        graph
            .execute(handle, &mut pack, &mut workspace)
            .map_err(fail)?;
    }
    Ok((outs, start.elapsed().as_secs_f64() * 1e3))
}

/// Uploads the inputs to GPU `ordinal`, runs the plan there and downloads the outputs into
/// `outs`; returns the time of the execute call alone (synchronised by the download).
#[cfg(feature = "cuda")]
fn execute_on_gpu(
    graph: &Graph,
    handle: &Handle,
    ordinal: u32,
    (inputs, hosts): (&[(TensorDesc, HostTensor)], &[HostTensor]),
    outs: &mut [HostTensor],
    workspace: &mut Workspace,
) -> kiln::Result<f64> {
    use kiln::DeviceTensor;
    let mut dev_in: Vec<DeviceTensor> = hosts
        .iter()
        .map(|h| DeviceTensor::upload(h, ordinal))
        .collect::<kiln::Result<_>>()?;
    let mut dev_out: Vec<DeviceTensor> = outs
        .iter()
        .map(|h| DeviceTensor::zeros(h.desc(), ordinal))
        .collect::<kiln::Result<_>>()?;
    let start = Instant::now();
    {
        let mut pack = VariantPack::new();
        for ((d, _), m) in inputs.iter().zip(dev_in.iter_mut()) {
            pack.insert_device_uid(d.uid, m);
        }
        for (h, m) in outs.iter().zip(dev_out.iter_mut()) {
            pack.insert_device_uid(h.desc().uid, m);
        }
        graph.execute(handle, &mut pack, workspace)?;
    }
    for (h, m) in outs.iter_mut().zip(&dev_out) {
        m.copy_to(h)?;
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

fn summary(desc: &TensorDesc, host: &HostTensor) -> OutputReport {
    let v = host.to_f64_vec();
    let n = v.len().max(1) as f64;
    OutputReport {
        name: desc.name.clone(),
        uid: desc.uid,
        dims: desc.dims.clone(),
        data_type: desc.data_type.name(),
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean: v.iter().sum::<f64>() / n,
        file: None,
        max_rel_error: None,
        tolerance: None,
    }
}

fn input_data(args: &Args, g: &OpGraph) -> Result<Vec<(TensorDesc, HostTensor)>, Failure> {
    let wanted: Vec<&TensorDesc> = g
        .bound_tensors()
        .filter(|t| g.producer(t.uid).is_none())
        .collect();
    if args.inputs == "random" {
        return wanted
            .into_iter()
            .map(|d| {
                let h = HostTensor::random(d, args.seed.wrapping_add(d.uid as u64))
                    .map_err(|e| Failure::kiln(format!("random data for {}", d.label()), e))?;
                Ok((d.clone(), h))
            })
            .collect();
    }
    let dir = Path::new(&args.inputs);
    if !dir.is_dir() {
        return Err(Failure::error(format!(
            "--inputs {}: not a folder (give \"random\" or a folder of <tensor name>.bin files)",
            args.inputs
        )));
    }
    wanted
        .into_iter()
        .map(|d| Ok((d.clone(), tensor_files::read_input(dir, d)?)))
        .collect()
}

pub fn run(args: Args) -> Result<ExitCode> {
    let what = args.file.display().to_string();
    let input = files::open(&args.file)?;
    let device = Device::parse(&args.device)
        .map_err(|e| Failure::error(format!("--device {}: {}", args.device, e.message())))?;
    if !matches!(device, Device::Cpu) && !cfg!(feature = "cuda") {
        return Err(Failure::new(
            EXIT_NOT_SUPPORTED,
            format!(
                "--device {device}: this kiln was built without the CUDA provider (cargo feature \
                 `cuda`), so it has no device memory for {device}"
            ),
        )
        .into());
    }
    if let Device::CudaTarget(_) = device {
        return Err(Failure::new(
            EXIT_NOT_SUPPORTED,
            format!(
                "--device {device}: a target architecture has no device to run on; give cuda:N \
                 (use sm_XX with `kiln build --target`)"
            ),
        )
        .into());
    }
    let handle = handle_for(&args.device)?;
    let (graph, plan_source) = load(&args, &handle, &input)?;
    let g = graph
        .op_graph()
        .ok_or_else(|| Failure::error(format!("{what}: the graph was not validated")))?
        .clone();
    let plan = graph
        .plan()
        .ok_or_else(|| Failure::error(format!("{what}: no plan")))?;
    let inputs = input_data(&args, &g)?;
    let outputs: Vec<TensorDesc> = g
        .bound_tensors()
        .filter(|t| g.producer(t.uid).is_some())
        .cloned()
        .collect();
    let (results, execute_ms) = execute(&graph, &handle, &inputs, &outputs, &what)?;

    let mut reports: Vec<OutputReport> = outputs
        .iter()
        .zip(&results)
        .map(|(d, h)| summary(d, h))
        .collect();
    if let Some(dir) = &args.outputs {
        for ((d, h), r) in outputs.iter().zip(&results).zip(reports.iter_mut()) {
            r.file = Some(tensor_files::write_output(dir, d, h)?.display().to_string());
        }
    }
    let mut validation = None;
    if args.validate {
        let pb = progress::spinner("running the reference engine");
        let reference = reference_outputs(&g, &inputs, &outputs, &what);
        pb.finish_and_clear();
        let (engine, want) = reference?;
        let mut matches = true;
        for ((r, h), w) in reports.iter_mut().zip(&results).zip(&want) {
            let d = outputs
                .iter()
                .find(|d| d.uid == r.uid)
                .map(|d| d.data_type)
                .unwrap_or(DataType::F32);
            let tol = args.tolerance.unwrap_or_else(|| default_tolerance(d));
            let err = max_rel_error(&h.to_f64_vec(), &w.to_f64_vec());
            matches &= err <= tol;
            r.max_rel_error = Some(err);
            r.tolerance = Some(tol);
        }
        validation = Some(Validation {
            reference_engine: engine,
            matches,
        });
    }

    let report = Report {
        file: what,
        kind: input.kind_name(),
        plan: plan_source,
        device: handle.device().to_string(),
        engine: plan.engine_name().to_string(),
        plugin: plan.plugin_name().to_string(),
        plugin_version: plan.plugin_version().to_string(),
        workspace_size: plan.workspace_size(),
        inputs: if args.inputs == "random" {
            format!("random (seed {})", args.seed)
        } else {
            args.inputs.clone()
        },
        execute_ms,
        outputs: reports,
        validation,
    };
    let matched = report.validation.as_ref().is_none_or(|v| v.matches);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(if matched {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_MISMATCH)
    })
}

/// The outputs of the reference engine on the same inputs, and its name.
fn reference_outputs(
    g: &OpGraph,
    inputs: &[(TensorDesc, HostTensor)],
    outputs: &[TensorDesc],
    what: &str,
) -> Result<(String, Vec<HostTensor>), Failure> {
    let fail = |e: kiln::Error| Failure::kiln(format!("{what}: the reference engine"), e);
    let handle = Handle::cpu().map_err(fail)?;
    let mut graph = Graph::from_op_graph(g.clone()).map_err(fail)?;
    graph.build(&handle, &[HeurMode::Fallback]).map_err(fail)?;
    let engine = graph
        .plan()
        .map(|p| p.engine_name().to_string())
        .unwrap_or_default();
    let (outs, _) = execute(&graph, &handle, inputs, outputs, what)?;
    Ok((engine, outs))
}

fn print_report(r: &Report) {
    println!("{}: {} ({} plan) on {}", r.file, r.kind, r.plan, r.device);
    println!(
        "  engine     {} (plugin {} {})",
        r.engine, r.plugin, r.plugin_version
    );
    println!("  inputs     {}", r.inputs);
    println!(
        "  execute    {:.3} ms (workspace {} bytes)",
        r.execute_ms, r.workspace_size
    );
    for o in &r.outputs {
        let label = if o.name.is_empty() {
            format!("uid {}", o.uid)
        } else {
            format!("'{}' (uid {})", o.name, o.uid)
        };
        print!(
            "  output     {label} {:?} {}: min {:.4} max {:.4} mean {:.4}",
            o.dims, o.data_type, o.min, o.max, o.mean
        );
        if let (Some(e), Some(t)) = (o.max_rel_error, o.tolerance) {
            print!("; max rel. error {e:.3e} (tolerance {t:.0e})");
        }
        if let Some(f) = &o.file {
            print!("; written to {f}");
        }
        println!();
    }
    if let Some(v) = &r.validation {
        println!(
            "  result     {} the reference engine {}",
            if v.matches {
                "matches"
            } else {
                "DOES NOT MATCH"
            },
            v.reference_engine
        );
    }
}
