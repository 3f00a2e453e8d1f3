//! Whether a plan fits a graph: the check every loader runs when it has both, so that a
//! graph-and-plan container whose plan was built for another graph is refused wherever it is
//! loaded (with or without a handle, by the graph loader or the plan loader).

use kiln_core::{Error, OpGraph, Result};
use kiln_format::TensorLayout;

/// Refuses (`BadParam`) a plan binding `tensor_uids` (with `layouts`, when the plan records
/// them) that does not fit `g`: the UIDs must be exactly the bound tensors of `g` and each
/// recorded layout must equal the graph's tensor (data type, dims, strides).
pub fn check_plan_fits_graph(
    g: &OpGraph,
    tensor_uids: &[i64],
    layouts: Option<&[TensorLayout]>,
) -> Result<()> {
    let mut want: Vec<i64> = g.bound_tensors().map(|t| t.uid).collect();
    let mut have = tensor_uids.to_vec();
    want.sort_unstable();
    have.sort_unstable();
    if want != have {
        return Err(Error::BadParam(format!(
            "the plan binds tensor uids {have:?} but this graph binds {want:?}: it was built for another graph"
        )));
    }
    for layout in layouts.unwrap_or_default() {
        let Some(t) = g.tensor(layout.uid) else {
            continue;
        };
        if !layout.matches(t) {
            return Err(Error::BadParam(format!(
                "the plan was built for tensor uid {} as {} {:?} with strides {:?}, but this graph's {} is {} {:?} with strides {:?}: it was built for another graph",
                layout.uid,
                layout.data_type,
                layout.dims,
                layout.strides,
                t.label(),
                t.data_type,
                t.dims,
                t.strides
            )));
        }
    }
    Ok(())
}

/// For a graph-and-plan container, refuses a plan that does not fit the container's own graph
/// (the message says so); a bare plan blob passes. `plan_bytes` is what
/// `kiln_format::plan_part(bytes)` returned: `bytes` itself for a bare plan.
pub(crate) fn check_container_plan_fits(
    bytes: &[u8],
    plan_bytes: &[u8],
    env: &kiln_format::PlanEnvelope<'_>,
) -> Result<()> {
    if std::ptr::eq(bytes, plan_bytes) {
        return Ok(());
    }
    let graph = kiln_format::decode_graph(bytes)?;
    check_plan_fits_graph(&graph, &env.tensor_uids, env.tensor_layouts.as_deref()).map_err(|e| {
        Error::BadParam(format!(
            "the container's plan does not fit the container's graph '{}': {}",
            graph.name,
            e.message()
        ))
    })
}
