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

/// Largest `|got - want| / max(|want|, floor)`, with `floor` guarding values near zero.
pub fn max_rel_error(got: &[f64], want: &[f64], floor: f64) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let e = (g - w).abs() / w.abs().max(floor);
            if e.is_nan() { f64::INFINITY } else { e }
        })
        .fold(0.0, f64::max)
}
