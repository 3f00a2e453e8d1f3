//! The `kiln` command.

mod bench;
mod build;
mod convert;
mod demo;
mod failure;
mod files;
mod graphs;
mod inspect;
mod plan_build;
mod plugins;
mod progress;
mod reference;
mod run;
mod tensor_files;
mod timing;
mod upgrade;

use clap::{Parser, Subcommand};
use failure::{EXIT_OK, EXIT_USAGE};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kiln",
    version,
    about = "kiln: build a tensor-operation plan once, run it anywhere",
    after_help = "\
Examples:
  kiln demo                                                  the main job, end to end
  kiln build examples/graphs/conv_bias_relu.json --with-graph -o conv.kiln
  kiln run conv.kiln --validate
  kiln inspect conv.kiln
  kiln upgrade conv.kiln -o conv.new.kiln
  kiln convert examples/graphs/matmul.json -o matmul.graph

Exit status: 0 ok; 1 error; 2 results differ from the reference engine; 3 a file is not loadable
(damaged, foreign, newer); 4 not supported here (device, engine, target); 64 bad arguments.
Every command that reports takes --json. See docs/cli.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a convolution + bias + relu plan on the default engine, run it on random data and
    /// check it against the reference engine. Exit status 0 only when the result matches.
    Demo(demo::Args),
    /// Build a plan from a graph (JSON or a graph file) and save it, alone or with its graph.
    Build(build::Args),
    /// Execute a graph-with-plan file (or a plan with --graph, or a graph) on random or given
    /// inputs; --validate compares with the reference engine.
    Run(run::Args),
    /// Rebuild the plan of a graph-with-plan file with today's engines and say what changed.
    Upgrade(upgrade::Args),
    /// Convert a graph between JSON and the binary graph file.
    Convert(convert::Args),
    /// Say what a saved file is (graph, plan, graph with plan), without loading it.
    Inspect(inspect::Args),
    /// List the plugins found, where from, their versions and engines.
    Plugins(plugins::Args),
    /// Build (or load) and time a graph's plan, or the standard cases, on the CPU or a GPU
    /// (trtexec-like), and plan save/load.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KILN_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; real usage errors get their own code, so
            // that 2 stays "results differ from the reference".
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Demo(a) => demo::run(a),
        Command::Build(a) => build::run(a),
        Command::Run(a) => run::run(a),
        Command::Upgrade(a) => upgrade::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Plugins(a) => plugins::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("kiln: error: {message}");
            ExitCode::from(failure::exit_code(&e))
        }
    }
}
