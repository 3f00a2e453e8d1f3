//! `kiln inspect FILE`: what a saved blob is, without loading it.

use crate::failure::{Failure, EXIT_NOT_LOADABLE};
use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln inspect conv.kiln
  kiln inspect conv.plan --json

Exit status: 0 loadable; 1 the file cannot be read; 3 not loadable (damaged, foreign, newer).")]
pub struct Args {
    /// A file written by kiln (graph, plan, or graph with plan).
    file: PathBuf,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let bytes = crate::files::read(&args.file)?;
    let info = kiln::probe(&bytes).map_err(|e| {
        Failure::new(
            EXIT_NOT_LOADABLE,
            format!("{}: not loadable: {e}", args.file.display()),
        )
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
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
    }
    Ok(if info.loadable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_LOADABLE)
    })
}
