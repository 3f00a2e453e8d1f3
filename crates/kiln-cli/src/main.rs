//! The `kiln` command.

mod bench;
mod demo;
mod graphs;
mod inspect;
mod plugins;
mod reference;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "kiln", version, about = "kiln: build a tensor-operation plan once, run it anywhere")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a convolution + bias + relu plan on the default engine, run it on random data and
    /// check it against the reference engine. Exit status 0 only when the result matches.
    Demo(demo::Args),
    /// List the plugins found, where from, their versions and engines.
    Plugins(plugins::Args),
    /// Benchmark the CPU engine on the standard convolution and matmul cases, and plan save/load.
    Bench(bench::Args),
    /// Say what a saved file is (graph, plan, graph with plan), without loading it.
    Inspect(inspect::Args),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KILN_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Plugins(a) => plugins::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Inspect(a) => inspect::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kiln: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
