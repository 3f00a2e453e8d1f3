//! Progress shown on stderr during long work, only when stderr is a terminal (never in pipes,
//! logs or tests), so that stdout (reports, `--json`) stays clean.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

fn visible() -> bool {
    std::io::stderr().is_terminal()
}

/// A spinner with `message`, ticking until finished; hidden when stderr is not a terminal.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    if !visible() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner().with_message(message.into());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        pb.set_style(style);
    }
    pb.enable_steady_tick(Duration::from_millis(100));
    pb
}

/// A bar of `len` steps with `message`; hidden when stderr is not a terminal. Print lines
/// through `pb.suspend(|| println!(..))` so that they do not tear the bar.
pub fn bar(len: u64, message: impl Into<String>) -> ProgressBar {
    if !visible() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len).with_message(message.into());
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
