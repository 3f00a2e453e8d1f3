//! `kiln plugins`: what was found, from where, with which engines.

use anyhow::Result;
use kiln::Registry;
use serde::Serialize;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  kiln plugins
  KILN_PLUGIN_PATH=/opt/kiln/plugins kiln plugins --json

Plugins are found in this order: built-in engines, the folders or files of KILN_PLUGIN_PATH
(separated by ':'), then kiln-plugins/ next to the kiln executable. Exit status: 0.")]
pub struct Args {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct EngineRow {
    name: String,
    id: String,
    behavior_notes: Vec<&'static str>,
    knobs: Vec<String>,
    /// Where the engine runs, as its plugin says (null when it does not).
    runs_on: Option<String>,
}

#[derive(Serialize)]
struct PluginRow {
    name: String,
    version: String,
    source: String,
    abi: String,
    plan_serialization: bool,
    engines: Vec<EngineRow>,
}

#[derive(Serialize)]
struct Listing {
    plugins: Vec<PluginRow>,
    skipped: Vec<(String, String)>,
}

fn notes(bits: u64) -> Vec<&'static str> {
    use kiln::BehaviorNote::*;
    [
        (SupportsPlanSerialization, "supports_plan_serialization"),
        (Deterministic, "deterministic"),
        (Reference, "reference"),
    ]
    .into_iter()
    .filter(|(n, _)| bits & n.bit() != 0)
    .map(|(_, s)| s)
    .collect()
}

pub fn run(args: Args) -> Result<ExitCode> {
    let registry = Registry::global();
    let listing = Listing {
        plugins: registry
            .plugins()
            .iter()
            .map(|p| PluginRow {
                name: p.name().to_string(),
                version: p.version().to_string(),
                source: p.source().to_string(),
                abi: format!("{}.{}", p.abi_version().0, p.abi_version().1),
                plan_serialization: p.has_serialization_hooks(),
                engines: p
                    .engines()
                    .iter()
                    .map(|e| EngineRow {
                        name: e.name.clone(),
                        id: format!("{:#018x}", e.id),
                        behavior_notes: notes(e.behavior_notes),
                        knobs: e
                            .knobs
                            .iter()
                            .map(|k| format!("{}={} ({}..={})", k.name, k.default, k.min, k.max))
                            .collect(),
                        runs_on: e.targets.clone(),
                    })
                    .collect(),
            })
            .collect(),
        skipped: registry
            .skipped()
            .iter()
            .map(|s| (s.path.display().to_string(), s.reason.clone()))
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(ExitCode::SUCCESS);
    }
    for p in &listing.plugins {
        println!(
            "{} {} ({}; ABI {}; plan serialization: {})",
            p.name,
            p.version,
            p.source,
            p.abi,
            if p.plan_serialization { "yes" } else { "no" }
        );
        for e in &p.engines {
            println!(
                "  {:<32} {}  [{}]",
                e.name,
                e.id,
                e.behavior_notes.join(", ")
            );
            if let Some(t) = &e.runs_on {
                println!("      runs on {t}");
            }
            for k in &e.knobs {
                println!("      knob {k}");
            }
        }
    }
    for (path, why) in &listing.skipped {
        println!("skipped {path}: {why}");
    }
    Ok(ExitCode::SUCCESS)
}
