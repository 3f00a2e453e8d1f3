//! `kiln demo`: the main job, end to end on the default engine.

use crate::graphs::ConvCase;
use crate::reference::{max_rel_error, run_reference};
use anyhow::Result;
use kiln::{Device, Graph, Handle, HeurMode, HostTensor, Tensor, VariantPack, Workspace};
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln demo
  kiln demo --json
  kiln demo --device cuda:0

Exit status: 0 the built and the loaded plans match the reference and the re-save is
byte-identical; 2 they do not; 1 error.")]
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
    plan_bytes: usize,
    save_us: f64,
    load_us: f64,
    resave_identical: bool,
    loaded_max_rel_error: f64,
    validated: bool,
}

/// Runs `graph` on `handle`'s device with `hosts` as the values of `inputs`; returns the output
/// on the host and the time of the execute call (on a GPU, synchronised by the download).
fn execute_on(
    graph: &Graph,
    handle: &Handle,
    inputs: &[Tensor],
    hosts: &mut [HostTensor],
    output: &Tensor,
) -> kiln::Result<(HostTensor, f64)> {
    let mut out = HostTensor::for_tensor(output)?;
    let mut ws = Workspace::for_graph(graph)?;
    #[cfg(feature = "cuda")]
    if let Device::Cuda(ordinal) = handle.device() {
        use kiln::DeviceTensor;
        let mut dev_in: Vec<DeviceTensor> = hosts
            .iter()
            .map(|h| DeviceTensor::upload(h, ordinal))
            .collect::<kiln::Result<_>>()?;
        let mut dev_out = DeviceTensor::zeros(out.desc(), ordinal)?;
        let start = Instant::now();
        {
            let mut pack = VariantPack::new();
            for (t, m) in inputs.iter().zip(dev_in.iter_mut()) {
                pack.insert_device(t, m);
            }
            pack.insert_device(output, &mut dev_out);
            graph.execute(handle, &mut pack, &mut ws)?;
        }
        dev_out.copy_to(&mut out)?;
        return Ok((out, start.elapsed().as_secs_f64() * 1e3));
    }
    let start = Instant::now();
    {
        let mut pack = VariantPack::new();
        for (t, h) in inputs.iter().zip(hosts.iter_mut()) {
            pack.insert(t, h);
        }
        pack.insert(output, &mut out);
        graph.execute(handle, &mut pack, &mut ws)?;
    }
    Ok((out, start.elapsed().as_secs_f64() * 1e3))
}

pub fn run(args: Args) -> Result<ExitCode> {
    let device = Device::parse(&args.device)?;
    let handle = Handle::new(device)?;
    let case = ConvCase::demo();

    let (mut graph, inputs, y) = case.graph();
    let t0 = Instant::now();
    graph.build(&handle, &[HeurMode::A])?;
    let build_ms = t0.elapsed().as_secs_f64() * 1e3;
    let plan = graph
        .plan()
        .ok_or_else(|| anyhow::anyhow!("no plan was built"))?;
    let (engine, plugin) = (
        plan.engine_name().to_string(),
        plan.plugin_name().to_string(),
    );

    let mut hosts: Vec<HostTensor> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| HostTensor::random(&t.desc()?, 42 + i as u64))
        .collect::<kiln::Result<_>>()?;
    let (out, execute_ms) = execute_on(&graph, &handle, &inputs, &mut hosts, &y)?;

    // Save the plan, load it on a fresh handle, save it again, run the loaded plan.
    let t2 = Instant::now();
    let plan_blob = graph.serialize_compiled_plan()?;
    let save_us = t2.elapsed().as_secs_f64() * 1e6;
    let fresh = Handle::new(device)?;
    let (mut loaded, loaded_inputs, loaded_y) = case.graph();
    loaded.validate()?;
    let t3 = Instant::now();
    loaded.deserialize_compiled_plan(&fresh, &plan_blob)?;
    let load_us = t3.elapsed().as_secs_f64() * 1e6;
    let resave_identical = loaded.serialize_compiled_plan()? == plan_blob;
    let (loaded_out, _) = execute_on(&loaded, &fresh, &loaded_inputs, &mut hosts, &loaded_y)?;

    // The same graph on the reference engine, on the same inputs.
    let ref_handle = Handle::cpu()?;
    let (mut ref_graph, ref_inputs, ref_y) = case.graph();
    ref_graph.validate()?;
    let mut pairs: Vec<_> = ref_inputs.into_iter().zip(hosts).collect();
    let want = run_reference(&ref_handle, &mut ref_graph, &mut pairs, &ref_y)?;
    let reference_engine = ref_graph
        .plan()
        .map(|p| p.engine_name().to_string())
        .unwrap_or_default();
    let err = max_rel_error(&out.to_f64_vec(), &want);
    let loaded_err = max_rel_error(&loaded_out.to_f64_vec(), &want);
    let validated = err <= TOLERANCE && loaded_err <= TOLERANCE && resave_identical;

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
        plan_bytes: plan_blob.len(),
        save_us,
        load_us,
        resave_identical,
        loaded_max_rel_error: loaded_err,
        validated,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "kiln demo: {} {:?} on {}",
            report.graph, report.shape, report.device
        );
        println!(
            "  engine          {} (plugin {})",
            report.engine, report.plugin
        );
        println!("  build           {:.3} ms", report.build_ms);
        println!("  execute         {:.3} ms", report.execute_ms);
        println!("  reference       {}", report.reference_engine);
        println!(
            "  max rel. error  {:.3e} (tolerance {:.0e})",
            report.max_rel_error, report.tolerance
        );
        println!(
            "  saved plan      {} bytes in {:.1} us",
            report.plan_bytes, report.save_us
        );
        println!(
            "  loaded plan     {:.1} us on a fresh handle; re-save byte-identical: {}",
            report.load_us, report.resave_identical
        );
        println!(
            "  loaded result   max rel. error {:.3e}",
            report.loaded_max_rel_error
        );
        println!(
            "  result          {}",
            if validated {
                "matches the reference (built and loaded plans)"
            } else {
                "DOES NOT MATCH"
            }
        );
    }
    Ok(if validated {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
