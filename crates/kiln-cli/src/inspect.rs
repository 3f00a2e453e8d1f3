//! `kiln inspect FILE [--device D]`: what a saved blob is, without loading it; what its plan's
//! payload holds, as the plan's plugin describes it; and with `--device`, whether it loads on
//! that device, found out by loading it there.

use crate::failure::{Failure, EXIT_NOT_LOADABLE, EXIT_NOT_SUPPORTED};
use anyhow::Result;
use kiln::{BlobInfo, BlobKind, Device, Graph, Handle, Registry};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln inspect conv.kiln
  kiln inspect conv.plan --json
  kiln inspect conv_sm90.kiln --device cuda:0     does it load on this GPU? if not, why

Exit status: 0 loadable (with --device: loadable on that device); 1 the file cannot be read or
--device is malformed; 3 not loadable (damaged, foreign, newer); 4 with --device: a sound file
that does not load on that device (other arch, newer payload format, engine missing, no such
device).")]
pub struct Args {
    /// A file written by kiln (graph, plan, or graph with plan).
    file: PathBuf,
    /// Also say whether the file loads on this device ("cpu", "cuda:N", "sm_NN"), by loading it
    /// on a handle of that device (the loaded plan is dropped at once).
    #[arg(long)]
    device: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

/// The `--json` report: the probe's keys as they were, then the description and, with
/// `--device`, the answer for that device (keys absent without `--device`).
#[derive(Serialize)]
struct JsonReport<'a> {
    #[serde(flatten)]
    info: &'a BlobInfo,
    description: Option<&'a str>,
    description_plugin: Option<&'a str>,
    description_unavailable: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loadable_here: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    loadable_here_reason: Option<String>,
}

/// What the plan's plugin says of its payload.
pub(crate) struct Description {
    /// The plugin that described it.
    plugin: Option<String>,
    pub(crate) text: Option<String>,
    /// Why there is no description.
    unavailable: Option<String>,
}

/// The plugin's description of the plan in `bytes`, when the file has a plan and the plan's
/// engine belongs to a registered plugin that describes its payloads.
pub(crate) fn describe(bytes: &[u8], info: &BlobInfo) -> Option<Description> {
    let has_plan = info.kind == BlobKind::Plan
        || (info.kind == BlobKind::GraphAndPlan && info.plan_blob_bytes.is_some());
    if !has_plan || !info.loadable {
        return None;
    }
    let env = match kiln_format::decode_plan(bytes) {
        Ok(env) => env,
        Err(e) => {
            return Some(Description {
                plugin: None,
                text: None,
                unavailable: Some(format!("the plan envelope cannot be read: {e}")),
            })
        }
    };
    let registry = Registry::global();
    let Some(plugin) = registry
        .plugins()
        .iter()
        .find(|p| p.engine(env.engine_id).is_some())
    else {
        return Some(Description {
            plugin: None,
            text: None,
            unavailable: Some(format!(
                "no registered plugin has engine {} (the plan was made by plugin {} {}; see `kiln plugins`)",
                env.engine_name, env.plugin_name, env.plugin_version
            )),
        });
    };
    let (text, unavailable) = match plugin.describe_payload(env.engine_id, env.payload) {
        Ok(Some(text)) => (Some(text), None),
        Ok(None) => (
            None,
            Some(format!(
                "plugin {} does not describe its payloads",
                plugin.name()
            )),
        ),
        Err(e) => (None, Some(e.to_string())),
    };
    Some(Description {
        plugin: Some(plugin.name().to_string()),
        text,
        unavailable,
    })
}

/// Whether the file loads on `device`: `Ok(())`, or the reason it does not.
fn load_here(bytes: &[u8], info: &BlobInfo, device: Device) -> std::result::Result<(), String> {
    if !info.loadable {
        return Err(format!(
            "the file is not loadable anywhere: {}",
            info.problems
                .first()
                .map(String::as_str)
                .unwrap_or("unknown problem")
        ));
    }
    let handle =
        Handle::new(device).map_err(|e| format!("no such device here: {}", e.message()))?;
    let loaded = match info.kind {
        BlobKind::Plan => kiln::deserialize_compiled_plan(&handle, bytes).map(drop),
        BlobKind::Graph | BlobKind::GraphAndPlan => {
            Graph::deserialize(Some(&handle), bytes).map(drop)
        }
    };
    loaded.map_err(|e| e.to_string())
}

pub fn run(args: Args) -> Result<ExitCode> {
    let bytes = crate::files::read(&args.file)?;
    let device = match &args.device {
        Some(d) => Some(
            Device::parse(d)
                .map_err(|e| Failure::error(format!("--device {d}: {}", e.message())))?,
        ),
        None => None,
    };
    let info = kiln::probe(&bytes).map_err(|e| {
        Failure::new(
            EXIT_NOT_LOADABLE,
            format!("{}: not loadable: {e}", args.file.display()),
        )
    })?;
    let description = describe(&bytes, &info);
    let here = device.map(|d| (d, load_here(&bytes, &info, d)));
    if args.json {
        let d = description.as_ref();
        let report = JsonReport {
            info: &info,
            description: d.and_then(|d| d.text.as_deref()),
            description_plugin: d.and_then(|d| d.plugin.as_deref()),
            description_unavailable: d.and_then(|d| d.unavailable.as_deref()),
            device: here.as_ref().map(|(d, _)| d.to_string()),
            loadable_here: here.as_ref().map(|(_, r)| r.is_ok()),
            loadable_here_reason: here.as_ref().and_then(|(_, r)| r.as_ref().err().cloned()),
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&args, &info, description.as_ref(), here.as_ref());
    }
    Ok(match (&here, info.loadable) {
        (_, false) => ExitCode::from(EXIT_NOT_LOADABLE),
        (Some((_, Err(_))), true) => ExitCode::from(EXIT_NOT_SUPPORTED),
        _ => ExitCode::SUCCESS,
    })
}

fn print_text(
    args: &Args,
    info: &BlobInfo,
    description: Option<&Description>,
    here: Option<&(Device, std::result::Result<(), String>)>,
) {
    println!(
        "{}: kiln {} blob, format version {}",
        args.file.display(),
        info.kind.name(),
        info.format_version
    );
    println!(
        "  size            {} bytes (header {}, body {})",
        info.total_bytes, info.header_bytes, info.body_bytes
    );
    println!(
        "  checksum        {} {:#010x} ({})",
        info.checksum_algorithm,
        info.checksum,
        if info.checksum_ok { "ok" } else { "MISMATCH" }
    );
    if let Some(n) = &info.graph_name {
        println!(
            "  graph           '{}': {} tensors, {} nodes",
            n,
            info.graph_tensors.unwrap_or(0),
            info.graph_nodes.unwrap_or(0)
        );
    }
    if let Some(v) = info.envelope_version {
        println!("  plan envelope   version {v}");
    }
    if let (Some(e), Some(id)) = (&info.engine_name, info.engine_id) {
        println!("  engine          {e} ({id:#018x})");
    }
    if let Some(p) = &info.plugin_name {
        println!(
            "  plugin          {p} {}",
            info.plugin_version.as_deref().unwrap_or("")
        );
    }
    if let Some(w) = info.workspace_size {
        println!("  workspace       {w} bytes");
    }
    if let Some(u) = &info.tensor_uids {
        println!("  tensor uids     {u:?}");
    }
    if let Some(a) = &info.alignments {
        println!("  alignments      {a:?}");
    }
    if let Some(p) = info.payload_bytes {
        println!("  payload         {p} bytes");
    }
    for p in &info.problems {
        println!("  problem         {p}");
    }
    println!(
        "  loadable        {}",
        if info.loadable { "yes" } else { "no" }
    );
    if let Some(d) = description {
        match (&d.text, &d.unavailable) {
            (Some(text), _) => {
                println!(
                    "  payload, as plugin {} describes it:",
                    d.plugin.as_deref().unwrap_or("?")
                );
                for line in text.lines() {
                    println!("    {line}");
                }
            }
            (None, Some(why)) => println!("  description     none: {why}"),
            (None, None) => {}
        }
    }
    if let Some((device, result)) = here {
        match result {
            Ok(()) => println!("  loadable here   yes (on {device})"),
            Err(why) => println!("  loadable here   no (on {device}): {why}"),
        }
    }
}
