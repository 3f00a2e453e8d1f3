//! `kiln demo`: the main job, end to end on the default engine.

use crate::graphs::ConvCase;
use crate::reference::{max_rel_error, run_reference};
use anyhow::Result;
use kiln::{Device, Handle, HeurMode, HostTensor, VariantPack, Workspace};
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Device to run on ("cpu" or "cuda:N").
    #[arg(long, default_value = "cpu")]
    device: String,
}

/// Largest relative error accepted against the reference engine (f32 compute).
const TOLERANCE: f64 = 1e-3;

#[derive(Serialize)]
struct Report {
    graph: &'static str,
    shape: Vec<i64>,
    device: String,
    engine: String,
    plugin: String,
    build_ms: f64,
    execute_ms: f64,
    reference_engine: String,
    max_rel_error: f64,
    tolerance: f64,
    validated: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let device = Device::parse(&args.device)?;
    let handle = Handle::new(device)?;
    let case = ConvCase { n: 2, c: 32, h: 28, w: 28, k: 64, r: 3, s: 3, pad: 1, fused: true };

    let (mut graph, inputs, y) = case.graph();
    let t0 = Instant::now();
    graph.build(&handle, &[HeurMode::A])?;
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let plan = graph.plan().ok_or_else(|| anyhow::anyhow!("no plan was built"))?;
    let (engine, plugin) = (plan.engine_name().to_string(), plan.plugin_name().to_string());

    let mut hosts: Vec<HostTensor> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| HostTensor::random(&t.desc()?, 42 + i as u64))
        .collect::<kiln::Result<_>>()?;
    let mut out = HostTensor::for_tensor(&y)?;
    let mut ws = Workspace::for_graph(&graph)?;
    let t1 = Instant::now();
    {
        let mut pack = VariantPack::new();
        for (t, h) in inputs.iter().zip(hosts.iter_mut()) {
            pack.insert(t, h);
        }
        pack.insert(&y, &mut out);
        graph.execute(&handle, &mut pack, &mut ws)?;
    }
    let execute_ms = t1.elapsed().as_secs_f64() * 1e3;

    // The same graph on the reference engine, on the same inputs.
    let ref_handle = Handle::cpu()?;
    let (mut ref_graph, ref_inputs, ref_y) = case.graph();
    ref_graph.validate()?;
    let mut pairs: Vec<_> = ref_inputs.into_iter().zip(hosts).collect();
    let want = run_reference(&ref_handle, &mut ref_graph, &mut pairs, &ref_y)?;
    let reference_engine = ref_graph.plan().map(|p| p.engine_name().to_string()).unwrap_or_default();
    let err = max_rel_error(&out.to_f64_vec(), &want, 1e-3);
    let validated = err <= TOLERANCE;

    let report = Report {
        graph: "conv_fprop + bias + relu (NCHW, f32)",
        shape: case.shape(),
        device: device.to_string(),
        engine,
        plugin,
        build_ms,
        execute_ms,
        reference_engine,
        max_rel_error: err,
        tolerance: TOLERANCE,
        validated,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("kiln demo: {} {:?} on {}", report.graph, report.shape, report.device);
        println!("  engine          {} (plugin {})", report.engine, report.plugin);
        println!("  build           {:.3} ms", report.build_ms);
        println!("  execute         {:.3} ms", report.execute_ms);
        println!("  reference       {}", report.reference_engine);
        println!("  max rel. error  {:.3e} (tolerance {:.0e})", report.max_rel_error, report.tolerance);
        println!("  result          {}", if validated { "matches the reference" } else { "DOES NOT MATCH the reference" });
    }
    Ok(if validated { ExitCode::SUCCESS } else { ExitCode::from(2) })
}
