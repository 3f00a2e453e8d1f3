//! Building a plan that can be saved, as `build` and `upgrade` do: default heuristics, engines
//! that can save their plans, optionally one engine by name; and making handles with messages
//! that say what is missing.

use crate::failure::{Failure, EXIT_NOT_SUPPORTED};
use crate::progress;
use kiln::{BehaviorNote, BuildPlanPolicy, Device, Graph, Handle, HeurMode, Registry};
use std::time::Instant;

/// A handle on `device` (the text of `--device`); exit code 1 for a malformed device, 4 when no
/// engine runs on it (a CUDA device without a CUDA engine).
pub fn handle_for(device: &str) -> Result<Handle, Failure> {
    let d = Device::parse(device)
        .map_err(|e| Failure::error(format!("--device {device}: {}", e.message())))?;
    Handle::new(d).map_err(|e| {
        Failure::new(
            EXIT_NOT_SUPPORTED,
            format!(
                "--device {device}: no engine of this build runs on {d} (see `kiln plugins`): {}",
                e.message()
            ),
        )
    })
}

/// A handle for building without a GPU for CUDA arch `target` (`sm_XX`); exit code 1 for another
/// form, 4 when no CUDA kernel provider is available in this build.
pub fn handle_for_target(target: &str) -> Result<Handle, Failure> {
    // `sm_90a` names the same chip as `sm_90`: the Hopper engines compile for sm_90a on their own.
    // Only an `sm_` name loses its `a`: anything else is refused as it was written.
    let target = match target.strip_suffix('a') {
        Some(chip) if chip.starts_with("sm_") => chip,
        _ => target,
    };
    let digits = target.strip_prefix("sm_").unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Failure::error(format!(
            "--target {target}: expected a CUDA arch such as sm_90"
        )));
    }
    let cuda_plugins: Vec<String> = Registry::global()
        .plugins()
        .iter()
        .filter(|p| p.engines().iter().any(|e| e.name.starts_with("KILN_CUDA_")))
        .map(|p| p.name().to_string())
        .collect();
    let missing = |why: &str| {
        let message = if cuda_plugins.is_empty() {
            format!(
                "--target {target}: building for a GPU arch needs the CUDA kernel provider \
                 (kiln-engine-cuda), which this build of kiln does not have (build kiln-cli with \
                 `--features cuda`, or put the provider's library on KILN_PLUGIN_PATH): {why}"
            )
        } else {
            format!(
                "--target {target}: the CUDA kernel provider ({}) cannot build for {target} here \
                 (it needs NVRTC from a CUDA toolkit, not a GPU): {why}",
                cuda_plugins.join(", ")
            )
        };
        Failure::new(EXIT_NOT_SUPPORTED, message)
    };
    let device = Device::parse(target).map_err(|e| missing(e.message()))?;
    Handle::new(device).map_err(|e| missing(e.message()))
}

/// Names of every engine of the handle's registry, in registry order.
fn known_engines(handle: &Handle) -> Vec<String> {
    handle
        .registry()
        .plugins()
        .iter()
        .flat_map(|p| p.engines().iter().map(|e| e.name.clone()))
        .collect()
}

/// Why engine `name` declined `graph` on `handle`, in its plugin's words.
fn decline_reason(graph: &Graph, handle: &Handle, name: &str) -> String {
    let Some(g) = graph.op_graph() else {
        return "the graph is not validated".to_string();
    };
    let blob = kiln_format::encode_graph(g);
    match kiln_backend::heuristics::declined_engines(handle, &blob)
        .into_iter()
        .find(|d| d.engine_name == name)
    {
        Some(d) => d.reason,
        // Known to the registry but on no plugin of this handle: its plugin refused the device.
        None => format!("its plugin does not run on {}", handle.device()),
    }
}

/// Builds `graph`'s plan on `handle` with the default heuristics (`HeurMode::A`), keeping only
/// engines that can save their plans, and only `engine` when given. `what` names the graph's file
/// in messages. Unknown engine → exit code 1; an engine that does not support the graph, or no
/// engine at all → 4. Returns the build time in milliseconds.
pub fn build_saveable_plan(
    graph: &mut Graph,
    handle: &Handle,
    engine: Option<&str>,
    what: &str,
) -> Result<f64, Failure> {
    graph
        .build_operation_graph(handle)
        .map_err(|e| Failure::kiln(what, e))?;
    graph
        .create_execution_plans(&[HeurMode::A])
        .map_err(|e| Failure::kiln(what, e))?;
    if let Some(name) = engine {
        let known = known_engines(handle);
        if !known.iter().any(|k| k == name) {
            return Err(Failure::error(format!(
                "--engine {name}: unknown engine; the engines of this build are {} (see `kiln plugins`)",
                known.join(", ")
            )));
        }
        let applicable: Vec<String> = graph
            .candidate_configs()
            .iter()
            .map(|c| c.engine_name.clone())
            .collect();
        if !applicable.iter().any(|a| a == name) {
            return Err(Failure::new(
                EXIT_NOT_SUPPORTED,
                format!(
                    "--engine {name}: the engine does not support the graph of {what} on {}: {}; engines that do: {}",
                    handle.device(),
                    decline_reason(graph, handle, name),
                    if applicable.is_empty() { "none".to_string() } else { applicable.join(", ") }
                ),
            ));
        }
        let others: Vec<&str> = applicable
            .iter()
            .map(String::as_str)
            .filter(|a| *a != name)
            .collect();
        graph.deselect_engines(&others);
    }
    graph.select_behavior_notes(&[BehaviorNote::SupportsPlanSerialization]);
    graph.check_support().map_err(|e| Failure::kiln(what, e))?;
    let pb = progress::spinner(format!(
        "building the plan of {what} on {}",
        handle.device()
    ));
    let start = Instant::now();
    let built = graph.build_plans(BuildPlanPolicy::HeuristicsChoice);
    pb.finish_and_clear();
    built.map_err(|e| Failure::kiln(what, e))?;
    Ok(start.elapsed().as_secs_f64() * 1e3)
}
