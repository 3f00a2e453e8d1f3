//! The restore-time cross-check of a plugin's payload against its plan envelope.
//!
//! The envelope says which tensors a plan binds and (version 2) their layouts; `Graph::execute`
//! checks the user's graph and buffers against the envelope only. The payload is the plugin's and
//! may describe other tensors: a forged file with every checksum and digest recomputed can claim
//! [5, 37] in its envelope and [5000, 37] in its payload. So every restore asks the plugin what
//! the restored context touches (`get_execution_context_tensors`) and refuses a plan whose answer
//! contradicts the envelope, naming the tensor.

use crate::plan::ExecutionPlan;
use kiln_core::{DataType, Error, Result};
use kiln_plugin_abi::{KilnPluginStatus, KilnTensorExtent};

/// Most tensors a context may report (a guard against absurd counts).
const MAX_TENSORS: usize = 1 << 16;

/// The tensors `plan`'s context reports, or `None` when its plugin does not report them.
fn reported_tensors(plan: &ExecutionPlan) -> Result<Option<Vec<KilnTensorExtent>>> {
    let plugin = &plan.instance.plugin;
    let Some(hook) = plugin.table.get_execution_context_tensors else {
        return Ok(None);
    };
    let mut count = 0usize;
    // SAFETY: instance and context are live; a null `out` asks for the count only.
    let st = unsafe {
        hook(
            plan.instance.raw,
            plan.context,
            std::ptr::null_mut(),
            0,
            &mut count,
        )
    };
    if st == KilnPluginStatus::NOT_SUPPORTED {
        return Ok(None);
    }
    plugin.check(st, "get_execution_context_tensors (count)")?;
    if count > MAX_TENSORS {
        return Err(plugin.error(format!(
            "reports {count} tensors for one execution context (at most {MAX_TENSORS})"
        )));
    }
    let empty = KilnTensorExtent {
        uid: 0,
        data_type: 0,
        reserved: 0,
        storage_bytes: 0,
    };
    let mut out = vec![empty; count];
    let mut written = 0usize;
    // SAFETY: `out` has room for `count` extents; written is a valid pointer.
    let st = unsafe {
        hook(
            plan.instance.raw,
            plan.context,
            out.as_mut_ptr(),
            count,
            &mut written,
        )
    };
    plugin.check(st, "get_execution_context_tensors")?;
    if written != count {
        return Err(plugin.error(format!(
            "reported {count} tensors, then {written}, for the same execution context"
        )));
    }
    Ok(Some(out))
}

/// Refuses a restored plan whose payload contradicts its envelope: the context binds a tensor
/// the envelope does not list, or not one it lists, or (when the envelope records layouts) one
/// of another data type or storage size. Plans whose plugin reports nothing pass unchecked.
pub(crate) fn check_payload_matches_envelope(plan: &ExecutionPlan) -> Result<()> {
    let Some(reported) = reported_tensors(plan)? else {
        tracing::debug!(
            "plugin {} does not report its contexts' tensors; the payload of this {} plan is not \
             cross-checked",
            plan.plugin_name(),
            plan.engine_name()
        );
        return Ok(());
    };
    let contradiction = |uid: i64, why: String| {
        Error::tensor(
            uid,
            "",
            format!(
                "the plan's payload contradicts its envelope: {why}; the file is damaged or \
                 forged (engine {})",
                plan.engine_name()
            ),
        )
    };
    for (i, r) in reported.iter().enumerate() {
        if reported[..i].iter().any(|o| o.uid == r.uid) {
            return Err(contradiction(r.uid, "the payload lists it twice".into()));
        }
        let Some(k) = plan.tensor_uids.iter().position(|&u| u == r.uid) else {
            return Err(contradiction(
                r.uid,
                format!(
                    "the payload binds it but the envelope lists only uids {:?}",
                    plan.tensor_uids
                ),
            ));
        };
        let Some(layout) = plan.tensor_layouts.as_ref().and_then(|l| l.get(k)) else {
            continue; // a version-1 envelope records no layouts
        };
        let data_type = u8::try_from(r.data_type).ok().and_then(DataType::from_code);
        if data_type != Some(layout.data_type) {
            return Err(contradiction(
                r.uid,
                format!(
                    "the payload says data type code {} but the envelope says {}",
                    r.data_type, layout.data_type
                ),
            ));
        }
        let envelope_bytes = layout
            .storage_bytes()
            .ok_or_else(|| contradiction(r.uid, "the envelope's layout overflows".into()))?;
        if r.storage_bytes != envelope_bytes as u64 {
            return Err(contradiction(
                r.uid,
                format!(
                    "the payload spans {} bytes of it but the envelope's layout (dims {:?}, \
                     strides {:?}, {}) spans {envelope_bytes}",
                    r.storage_bytes, layout.dims, layout.strides, layout.data_type
                ),
            ));
        }
    }
    if let Some(missing) = plan
        .tensor_uids
        .iter()
        .find(|u| !reported.iter().any(|r| r.uid == **u))
    {
        return Err(contradiction(
            *missing,
            "the envelope lists it but the payload does not bind it".into(),
        ));
    }
    Ok(())
}
