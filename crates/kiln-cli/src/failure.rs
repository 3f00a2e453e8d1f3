//! Exit codes and the error that carries one.
//!
//! | code | meaning |
//! |---:|---|
//! | 0 | success |
//! | 1 | error: a missing or unwritable file, a file of the wrong kind (a plan where a graph is expected), an unknown engine, a build or execute failure |
//! | 2 | validation mismatch: `demo`, `run --validate` disagree with the reference engine |
//! | 3 | not loadable: a damaged, truncated or foreign file, or a newer format (`inspect` too) |
//! | 4 | not supported here: no engine for the device or graph, `--target` without the CUDA provider, a device `run` cannot feed |
//! | 64 | usage: unknown option, missing argument (clap) |

use std::fmt;

/// Success.
pub const EXIT_OK: u8 = 0;
/// Any other error.
pub const EXIT_ERROR: u8 = 1;
/// Results differ from the reference engine.
pub const EXIT_MISMATCH: u8 = 2;
/// The file cannot be loaded: damaged, truncated, foreign or newer.
pub const EXIT_NOT_LOADABLE: u8 = 3;
/// Not possible with the engines, devices or features of this build.
pub const EXIT_NOT_SUPPORTED: u8 = 4;
/// Bad command-line arguments.
pub const EXIT_USAGE: u8 = 64;

/// An error with its exit code and a one-line message that names the file or option at fault.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// A failure with exit code `code`.
    pub fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// Exit code 1.
    pub fn error(message: impl Into<String>) -> Failure {
        Failure::new(EXIT_ERROR, message)
    }

    /// A kiln error about `what` (a file or option), with the exit code its status implies:
    /// not supported → 4, everything else → 1.
    pub fn kiln(what: impl fmt::Display, e: kiln::Error) -> Failure {
        let code = match e.status() {
            kiln::Status::NotSupported => EXIT_NOT_SUPPORTED,
            _ => EXIT_ERROR,
        };
        Failure::new(code, format!("{what}: {e}"))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// The exit code for an error that reached `main`: its own for a [`Failure`], 4 for a kiln
/// `NotSupported` error, else 1.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    if let Some(f) = e.downcast_ref::<Failure>() {
        return f.code;
    }
    match e.chain().find_map(|c| c.downcast_ref::<kiln::Error>()) {
        Some(k) if k.status() == kiln::Status::NotSupported => EXIT_NOT_SUPPORTED,
        _ => EXIT_ERROR,
    }
}
