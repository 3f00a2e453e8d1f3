//! `kiln convert IN -o OUT`: graph JSON to a binary graph file and back.

use crate::failure::Failure;
use crate::files::{self, Input};
use anyhow::Result;
use kiln::BlobKind;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// The JSON mirror of a graph (docs/cli.md).
    Json,
    /// A binary graph blob (docs/format.md).
    Binary,
}

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln convert examples/graphs/matmul.json -o matmul.graph      (JSON to binary)
  kiln convert matmul.graph -o matmul.json                      (binary to JSON)
  kiln convert conv.kiln -o conv.json                           (the graph of a graph-with-plan file)

Exit status: 0 written; 1 error (missing file, a plan without its graph); 3 the input is damaged
or does not validate.")]
pub struct Args {
    /// A graph: JSON, a graph file, or a graph-with-plan file (its plan is not kept).
    input: PathBuf,
    /// Where to write the converted graph.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Output format; default: the other one (JSON in gives binary out, binary in gives JSON out).
    #[arg(long, value_enum)]
    to: Option<Format>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    input: String,
    input_kind: &'static str,
    output: String,
    output_format: &'static str,
    bytes: usize,
    tensors: usize,
    nodes: usize,
    /// True when the input held a plan, which a graph file does not keep.
    plan_dropped: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let input = files::open(&args.input)?;
    let graph = files::graph_of(&args.input, &input, "`kiln convert`")?;
    let to = args.to.unwrap_or(match input {
        Input::Json(_) => Format::Binary,
        Input::Blob { .. } => Format::Json,
    });
    let bytes = match to {
        Format::Json => {
            let mut text = kiln_format::graph_to_json(&graph);
            text.push('\n');
            text.into_bytes()
        }
        Format::Binary => kiln_format::encode_graph(&graph),
    };
    // A check that the written bytes read back: a graph the writer cannot round-trip is a bug.
    let back = match to {
        Format::Json => std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|t| kiln_format::graph_from_json(t).map_err(|e| e.to_string())),
        Format::Binary => kiln_format::decode_graph(&bytes).map_err(|e| e.to_string()),
    };
    if let Err(e) = back {
        return Err(Failure::error(format!(
            "{}: the converted graph does not read back: {e}",
            args.input.display()
        ))
        .into());
    }
    files::write(&args.output, &bytes)?;
    let report = Report {
        input: args.input.display().to_string(),
        input_kind: input.kind_name(),
        output: args.output.display().to_string(),
        output_format: match to {
            Format::Json => "json",
            Format::Binary => "binary",
        },
        bytes: bytes.len(),
        tensors: graph.tensors.len(),
        nodes: graph.nodes.len(),
        plan_dropped: matches!(&input, Input::Blob { info, .. } if info.kind == BlobKind::GraphAndPlan && info.plan_blob_bytes.is_some()),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} ({}) -> {} ({}, {} bytes): {} tensors, {} nodes{}",
            report.input,
            report.input_kind,
            report.output,
            report.output_format,
            report.bytes,
            report.tensors,
            report.nodes,
            if report.plan_dropped {
                "; the plan was not kept (a graph file holds no plan)"
            } else {
                ""
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
