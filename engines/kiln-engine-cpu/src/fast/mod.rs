//! Optimized CPU engines: fused pointwise graphs, convolution and matmul through GEMM with
//! fused pointwise epilogues, the convolution gradients through GEMM, the normalizations with
//! fused pointwise epilogues, and tiled attention.

#[cfg(target_arch = "x86_64")]
pub mod amx;
mod claims;
pub mod conv;
#[cfg(target_arch = "x86_64")]
mod dot_bf16;
mod element_io;
mod epilogue;
pub mod isa;
pub mod matmul;
pub mod norm;
pub mod pointwise;
mod pointwise_math;
mod pool;
pub mod resample;
pub mod resample_backward;
pub mod sdpa;
pub mod sgemm;
#[cfg(target_arch = "x86_64")]
mod transpose;

#[cfg(test)]
mod tests;

pub use conv::{ConvDgradEngine, ConvFpropEngine, ConvWgradEngine};
pub use matmul::MatmulEngine;
pub use norm::NormEngine;
pub use pointwise::PointwiseEngine;
pub use resample::ResampleEngine;
pub use resample_backward::ResampleBackwardEngine;
pub use sdpa::SdpaEngine;

use crate::engine::CpuEngine;
use kiln_plugin_sdk::KnobDescriptor;

/// bf16 elements of an AMX-packed operand of `rows`×`cols` (each padded to a multiple of 32;
/// see the `amx` module): what a plan recorded at the `amx` level reserves in its workspace,
/// on any processor.
pub(crate) fn amx_packed_len(rows: usize, cols: usize) -> usize {
    rows.next_multiple_of(32) * cols.next_multiple_of(32)
}

/// Whether level `isa` multiplies packed bf16 operands with bf16 instructions (AMX tiles, or
/// AVX-512 BF16's `vdpbf16ps`; see [`amx::Kernel`]) rather than widening them to f32.
pub(crate) fn multiplies_bf16(isa: isa::Isa) -> bool {
    cfg!(target_arch = "x86_64") && matches!(isa, isa::Isa::Amx | isa::Isa::Avx512Bf16)
}

/// Whether tensors `a` and `b` of `graph` are both bf16 (the operands AMX tiles multiply).
pub(crate) fn both_bf16(graph: &kiln_core::OpGraph, a: i64, b: i64) -> bool {
    let is_bf16 = |uid| graph.tensor(uid).map(|t| t.data_type) == Some(kiln_core::DataType::Bf16);
    is_bf16(a) && is_bf16(b)
}

/// Name of the knob that fixes how many per-worker scratch regions an engine's workspace holds
/// (and so how many of its scratch-using tasks run at once). 0 means "choose at build time".
pub const WORKSPACE_SLOTS_KNOB: &str = "workspace_slots";
/// Most workspace slots a plan may ask for.
pub const WORKSPACE_SLOTS_MAX: i64 = 64;
/// Most workspace slots "auto" resolves to, whatever the build machine's thread count.
pub const AUTO_WORKSPACE_SLOTS_CAP: usize = 16;

/// The `workspace_slots` knob with id `id`: 0 (auto) or 1..=[`WORKSPACE_SLOTS_MAX`].
fn workspace_slots_knob(id: i64) -> KnobDescriptor {
    KnobDescriptor {
        id,
        name: WORKSPACE_SLOTS_KNOB,
        min: 0,
        max: WORKSPACE_SLOTS_MAX,
        stride: 1,
        default: 0,
    }
}

/// What "auto" workspace slots resolve to on this machine, now: rayon's thread count, at least 1
/// and at most [`AUTO_WORKSPACE_SLOTS_CAP`]. Only the build path calls this, so that a saved plan
/// carries a concrete value and restores to the same workspace size on any machine.
fn auto_workspace_slots() -> i64 {
    rayon::current_num_threads().clamp(1, AUTO_WORKSPACE_SLOTS_CAP) as i64
}

/// Replaces an auto (0) value of the knob with id `id` in `knobs` (one value per knob, ids
/// 1, 2, ... in order) by [`auto_workspace_slots`].
fn resolve_workspace_slots(knobs: &mut [i64], id: i64) {
    if let Some(v) = usize::try_from(id - 1).ok().and_then(|i| knobs.get_mut(i)) {
        if *v <= 0 {
            *v = auto_workspace_slots();
        }
    }
}

/// The workspace slots `prepare` plans for: the knob's value, or, for a value of 0 that did not
/// come through the build path (a direct `prepare` call), the auto value of this machine.
fn workspace_slots(knobs: &[i64], id: i64) -> usize {
    let v = usize::try_from(id - 1)
        .ok()
        .and_then(|i| knobs.get(i))
        .copied()
        .unwrap_or(0);
    let v = if v > 0 { v } else { auto_workspace_slots() };
    v.clamp(1, WORKSPACE_SLOTS_MAX) as usize
}

/// The optimized engines, in heuristic order (most specific first): forward convolution and
/// matmul (each with an optional epilogue), the convolution gradients, the normalizations (with
/// an optional epilogue), fused pointwise graphs, then attention (which claims only graphs no
/// other engine does, so its place is free), then pooling.
pub fn engines() -> Vec<&'static dyn CpuEngine> {
    vec![
        &ConvFpropEngine,
        &MatmulEngine,
        &ConvDgradEngine,
        &ConvWgradEngine,
        &NormEngine,
        &PointwiseEngine,
        &SdpaEngine,
        &ResampleEngine,
        &ResampleBackwardEngine,
    ]
}
