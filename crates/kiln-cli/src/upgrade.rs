//! `kiln upgrade IN -o OUT`: rebuild the plan of a graph-with-plan file with today's engines.
//!
//! A loaded plan re-saves to exactly the bytes it was loaded from (the original kernel and
//! provider version); the way to pick up a newer kernel is to build the plan again from its
//! graph. This command does that and says what changed: engine, plugin version, bytes.

use crate::failure::Failure;
use crate::files::{self, Input};
use crate::plan_build::{build_saveable_plan, handle_for};
use anyhow::Result;
use kiln::{BlobKind, Graph};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln upgrade conv.kiln -o conv.new.kiln
  kiln upgrade conv.kiln -o conv.new.kiln --engine KILN_CPU_REFERENCE --json

Exit status: 0 written (whether or not anything changed); 1 error (missing file, a plan without
its graph, a file without a plan, unknown engine); 3 the file is damaged; 4 no engine here
supports the graph.")]
pub struct Args {
    /// A graph-with-plan file (`kiln build --with-graph`, `Graph::serialize`).
    input: PathBuf,
    /// Where to write the graph with its rebuilt plan.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Device to build for: "cpu" or "cuda:N" (the device the plan is meant for).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Use this engine only; default: the heuristics' first choice today.
    #[arg(long)]
    engine: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize, PartialEq)]
struct PlanSide {
    engine: String,
    plugin: String,
    plugin_version: String,
    envelope_version: u32,
    plan_bytes: usize,
}

#[derive(Serialize)]
struct Changes {
    engine: bool,
    plugin_version: bool,
    envelope_version: bool,
    bytes: bool,
}

#[derive(Serialize)]
struct Report {
    input: String,
    output: String,
    device: String,
    old: PlanSide,
    new: PlanSide,
    changed: Changes,
    /// True when the rebuilt plan's bytes equal the old plan's.
    identical: bool,
    build_ms: f64,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let what = args.input.display().to_string();
    let input = files::open(&args.input)?;
    let (bytes, info) = match &input {
        Input::Blob { bytes, info } if info.kind == BlobKind::GraphAndPlan && info.plan_blob_bytes.is_some() => {
            (bytes, info)
        }
        Input::Blob { info, .. } if info.kind == BlobKind::Plan => {
            return Err(Failure::error(format!(
                "{what}: is a compiled plan without its graph (engine {}); upgrade rebuilds a plan from its \
                 graph: rebuild it with `kiln build GRAPH.json --with-graph` instead",
                info.engine_name.as_deref().unwrap_or("unknown")
            ))
            .into())
        }
        _ => {
            return Err(Failure::error(format!(
                "{what}: holds a graph without a plan ({}); there is nothing to upgrade: build its plan \
                 with `kiln build {what} --with-graph -o OUT`",
                input.kind_name()
            ))
            .into())
        }
    };
    let old_plan = kiln_format::plan_part(bytes).map_err(|e| Failure::kiln(&what, e))?;
    let old = PlanSide {
        engine: info.engine_name.clone().unwrap_or_default(),
        plugin: info.plugin_name.clone().unwrap_or_default(),
        plugin_version: info.plugin_version.clone().unwrap_or_default(),
        envelope_version: info.envelope_version.unwrap_or(0),
        plan_bytes: old_plan.len(),
    };
    let handle = handle_for(&args.device)?;
    let mut graph = Graph::deserialize(None, bytes).map_err(|e| Failure::kiln(&what, e))?;
    let build_ms = build_saveable_plan(&mut graph, &handle, args.engine.as_deref(), &what)?;
    let plan = graph
        .plan()
        .ok_or_else(|| Failure::error(format!("{what}: no plan was built")))?;
    let new_plan = graph
        .serialize_compiled_plan()
        .map_err(|e| Failure::kiln(&what, e))?;
    let container = graph.serialize().map_err(|e| Failure::kiln(&what, e))?;
    files::write(&args.output, &container)?;
    let new = PlanSide {
        engine: plan.engine_name().to_string(),
        plugin: plan.plugin_name().to_string(),
        plugin_version: plan.plugin_version().to_string(),
        envelope_version: kiln_format::PLAN_ENVELOPE_VERSION,
        plan_bytes: new_plan.len(),
    };
    let report = Report {
        input: what,
        output: args.output.display().to_string(),
        device: handle.device().to_string(),
        changed: Changes {
            engine: old.engine != new.engine,
            plugin_version: old.plugin != new.plugin || old.plugin_version != new.plugin_version,
            envelope_version: old.envelope_version != new.envelope_version,
            bytes: old_plan != new_plan.as_slice(),
        },
        identical: old_plan == new_plan.as_slice(),
        old,
        new,
        build_ms,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(r: &Report) {
    let mark = |changed: bool| if changed { "changed" } else { "same" };
    println!(
        "{} -> {}: plan rebuilt on {} in {:.1} ms",
        r.input, r.output, r.device, r.build_ms
    );
    println!(
        "  engine            {} -> {} ({})",
        r.old.engine,
        r.new.engine,
        mark(r.changed.engine)
    );
    println!(
        "  plugin            {} {} -> {} {} ({})",
        r.old.plugin,
        r.old.plugin_version,
        r.new.plugin,
        r.new.plugin_version,
        mark(r.changed.plugin_version)
    );
    println!(
        "  envelope version  {} -> {} ({})",
        r.old.envelope_version,
        r.new.envelope_version,
        mark(r.changed.envelope_version)
    );
    println!(
        "  plan bytes        {} -> {} ({})",
        r.old.plan_bytes,
        r.new.plan_bytes,
        if r.identical {
            "identical"
        } else {
            "different"
        }
    );
}
