//! Running a graph on the reference engine and comparing results.

use anyhow::Result;
use kiln::{Graph, Handle, HeurMode, HostTensor, Tensor, VariantPack, Workspace};

/// Builds `graph` on `handle` with the fallback (reference) heuristics, runs it on `inputs` and
/// returns the output's values.
pub fn run_reference(
    handle: &Handle,
    graph: &mut Graph,
    inputs: &mut [(Tensor, HostTensor)],
    output: &Tensor,
) -> Result<Vec<f64>> {
    graph.build(handle, &[HeurMode::Fallback])?;
    let mut out = HostTensor::for_tensor(output)?;
    let mut ws = Workspace::for_graph(graph)?;
    {
        let mut pack = VariantPack::new();
        for (t, h) in inputs.iter_mut() {
            pack.insert(t, h);
        }
        pack.insert(output, &mut out);
        graph.execute(handle, &mut pack, &mut ws)?;
    }
    Ok(out.to_f64_vec())
}

/// Largest `|got - want| / max(|want|, rms(want))`: the relative error of each element, with
/// the root mean square of the reference as the floor so that elements near zero (where f32
/// rounding of a long sum dominates) are measured against the data's scale.
pub fn max_rel_error(got: &[f64], want: &[f64]) -> f64 {
    if got.len() != want.len() || want.is_empty() {
        return f64::INFINITY;
    }
    let floor = (want.iter().map(|w| w * w).sum::<f64>() / want.len() as f64)
        .sqrt()
        .max(f64::MIN_POSITIVE);
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let e = (g - w).abs() / w.abs().max(floor);
            if e.is_nan() {
                f64::INFINITY
            } else {
                e
            }
        })
        .fold(0.0, f64::max)
}
