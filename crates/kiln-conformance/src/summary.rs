//! The run's summary: one line per checked case appended to the file named by [`SUMMARY_ENV`],
//! so that a whole run (several test binaries, many threads) can be counted afterwards:
//! cases run, runs compared per engine, cases no engine of the device claims, failures.
//!
//! Each line is tab-separated: `status`, `device`, `seed`, `engines`, `case`, `detail`, where
//! `status` is `pass`, `not-claimed` (no engine of a non-CPU device claims the case, so nothing
//! was compared) or `fail`; `engines` lists `NAME:RUNS` pairs separated by commas (`-` when
//! none); `detail` is the failure message on one line (empty otherwise).

use kiln::Device;
use std::io::Write;

/// Set this environment variable to a file path to have every checked case appended to it as
/// one summary line (see the module documentation for the format).
pub const SUMMARY_ENV: &str = "KILN_CONFORMANCE_SUMMARY";

/// What became of one case.
pub(crate) enum Status<'a> {
    /// Compared: (engine, runs) for every engine under test.
    Pass(&'a [(String, usize)]),
    /// No engine of the (non-CPU) device under test claims it.
    NotClaimed,
    /// Failed with this message.
    Fail(&'a str),
}

fn one_line(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// Appends the line of one case when [`SUMMARY_ENV`] is set. A summary that cannot be written
/// is reported on stderr and otherwise ignored: it must not change the case's result.
pub(crate) fn record(device: Device, seed: u64, case: &str, status: Status<'_>) {
    let Some(path) = std::env::var_os(SUMMARY_ENV) else {
        return;
    };
    let (word, engines, detail) = match status {
        Status::Pass(compared) => {
            let engines: Vec<String> = compared.iter().map(|(e, n)| format!("{e}:{n}")).collect();
            let engines = if engines.is_empty() {
                "-".to_string()
            } else {
                engines.join(",")
            };
            ("pass", engines, String::new())
        }
        Status::NotClaimed => ("not-claimed", "-".to_string(), String::new()),
        Status::Fail(e) => ("fail", "-".to_string(), one_line(e)),
    };
    let line = format!(
        "{word}\t{device}\t{seed}\t{engines}\t{}\t{detail}\n",
        one_line(case)
    );
    // One write per line on a file opened for appending: lines of concurrent tests and test
    // binaries do not interleave.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "conformance: cannot append to the summary {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}
