//! Reading and writing the files the commands take: graph JSON and kiln blobs (graph, plan,
//! graph with plan). Every error names the file and what is wrong with it.

use crate::failure::{Failure, EXIT_ERROR, EXIT_NOT_LOADABLE};
use kiln::{BlobInfo, BlobKind, OpGraph};
use std::path::Path;

/// What a file on the command line holds.
pub enum Input {
    /// Graph JSON text.
    Json(String),
    /// A kiln blob that `probe` found loadable.
    Blob { bytes: Vec<u8>, info: Box<BlobInfo> },
}

impl Input {
    /// A short description for messages and reports: `graph JSON`, `graph`, `plan`,
    /// `graph_and_plan`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Input::Json(_) => "graph_json",
            Input::Blob { info, .. } => info.kind.name(),
        }
    }
}

/// The bytes of `path`, or exit code 1 naming the file and the system's reason.
pub fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path)
        .map_err(|e| Failure::error(format!("{}: cannot read the file: {e}", path.display())))
}

/// Writes `bytes` to `path`, or exit code 1 naming the file.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::error(format!("{}: cannot write the file: {e}", path.display())))
}

/// Reads `path` and tells what it is. A kiln blob must pass `probe` (else exit code 3 with the
/// first problem); anything else must look like JSON (else exit code 3).
pub fn open(path: &Path) -> Result<Input, Failure> {
    let bytes = read(path)?;
    if bytes.starts_with(&kiln_format::MAGIC) {
        let info = kiln::probe(&bytes).map_err(|e| {
            Failure::new(
                EXIT_NOT_LOADABLE,
                format!("{}: not loadable: {e}", path.display()),
            )
        })?;
        if !info.loadable {
            let problem = info
                .problems
                .first()
                .map(String::as_str)
                .unwrap_or("unknown problem");
            return Err(Failure::new(
                EXIT_NOT_LOADABLE,
                format!(
                    "{}: damaged {} file: {problem}",
                    path.display(),
                    info.kind.name()
                ),
            ));
        }
        return Ok(Input::Blob {
            bytes,
            info: Box::new(info),
        });
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(Failure::new(
            EXIT_NOT_LOADABLE,
            format!(
                "{}: neither a kiln file (it does not start with the KILN magic) nor graph JSON (it does not start with '{{')",
                path.display()
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::new(
            EXIT_NOT_LOADABLE,
            format!(
                "{}: graph JSON is not UTF-8 at byte offset {}",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok(Input::Json(text))
}

/// The refusal for a plan-only file where a graph is needed, saying what to do for `purpose`.
pub fn plan_is_not_a_graph(path: &Path, info: &BlobInfo, purpose: &str) -> Failure {
    Failure::new(
        EXIT_ERROR,
        format!(
            "{}: is a compiled plan (engine {}) without its graph, but {purpose} needs a graph: give \
             the graph JSON, a graph file, or a graph-with-plan file (`kiln build --with-graph`)",
            path.display(),
            info.engine_name.as_deref().unwrap_or("unknown")
        ),
    )
}

/// The graph of `input` (JSON, a graph blob, or the graph part of a container), validated.
/// A bare plan is refused with [`plan_is_not_a_graph`]; JSON or a blob that does not decode is
/// exit code 3 naming the file.
pub fn graph_of(path: &Path, input: &Input, purpose: &str) -> Result<OpGraph, Failure> {
    let not_loadable =
        |e: kiln::Error| Failure::new(EXIT_NOT_LOADABLE, format!("{}: {e}", path.display()));
    match input {
        Input::Json(text) => kiln_format::graph_from_json(text).map_err(not_loadable),
        Input::Blob { info, .. } if info.kind == BlobKind::Plan => {
            Err(plan_is_not_a_graph(path, info, purpose))
        }
        Input::Blob { bytes, .. } => kiln_format::decode_graph(bytes).map_err(not_loadable),
    }
}

/// True when `input` is a container that holds a plan.
pub fn has_plan(input: &Input) -> bool {
    matches!(input, Input::Blob { info, .. }
        if info.kind == BlobKind::Plan || (info.kind == BlobKind::GraphAndPlan && info.plan_blob_bytes.is_some()))
}
