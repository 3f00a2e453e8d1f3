//! kiln's conformance suite: every operation, on every engine that claims it, compared with the
//! reference engine.
//!
//! Like burn's shared backend tests and tract's per-op suites, one suite serves every engine: a
//! new engine proves itself by passing it, and a new operation is added to it once. The library
//! holds the machinery; the tests (`tests/*.rs`, one file per operation family) generate cases
//! with proptest.
//!
//! A case ([`Case`]) is a frontend [`kiln::Graph`] whose bound tensors are declared as inputs
//! (each with the [`Domain`] its random values come from) or outputs. [`check`] then:
//! 1. validates the graph, lowers it for a CPU handle (where the reference runs) and for the
//!    device under test ([`DEVICE_ENV`]: `cpu` by default, or `cuda:N`), and asks the
//!    heuristics (mode A) which engines claim it on each; the reference must claim it, and so
//!    must every engine of the device the case expects (the optimized engine that should
//!    apply), so the suite cannot pass by testing the reference alone;
//! 2. draws the inputs with [`kiln::HostTensor::random`] mapped onto their domains;
//! 3. runs the reference (`KILN_CPU_REFERENCE`, always on the CPU), then every other engine
//!    claiming the case on the device under test through the frontend (`deselect_engines` of
//!    the others, `build_plans`, `execute`; on a GPU with `kiln::DeviceTensor`s: inputs
//!    copied up, outputs poisoned with NaN on the device, both copied back), and again with
//!    each non-default knob value through the backend's plan directly;
//! 4. compares each output element with the reference's under a [`Tolerance`] derived from the
//!    output type, the length of the sums behind it and the number of nodes, and fails with a
//!    message naming the engine, the case, the output and the worst element (got vs want).
//!
//! It also checks that engines leave inputs and the padding of strided outputs untouched, write
//! every output element (on the CPU outputs start filled with stale values, on a GPU with NaN),
//! and that engines declaring themselves deterministic write identical bytes on a second run
//! (which starts from stale values). On a GPU, a case none of its engines claims compares
//! nothing; with [`SUMMARY_ENV`] set, every case is appended to a summary file as passed, not
//! claimed on the device, or failed (with its seed), so that a run can be counted.

mod case;
pub mod compare;
mod device;
#[cfg(feature = "cuda")]
mod device_memory;
mod layout;
pub mod modes;
mod runner;
pub mod specs;
mod summary;
mod tolerance;

pub use case::{Case, Domain};
pub use device::{device_under_test, DEVICE_ENV};
pub use layout::Layout;
pub use runner::{check, check_on, check_session, random_tensor, Outcome, Session, VERBOSE_ENV};
pub use specs::{
    Anchor, ChainSpec, ChainStep, ConvSpec, MatmulSpec, Operand, Other, PointwiseSpec,
    ReductionSpec, TensorSpec,
};
pub use summary::SUMMARY_ENV;
pub use tolerance::Tolerance;

/// The reference engine: the oracle every other engine is compared with.
pub const REFERENCE: &str = "KILN_CPU_REFERENCE";
/// The optimized engine for graphs of pointwise nodes.
pub const POINTWISE: &str = "KILN_CPU_POINTWISE_V1";
/// The optimized forward convolution engine (with fused pointwise epilogues).
pub const CONV_FPROP: &str = "KILN_CPU_CONV_FPROP_GEMM_V1";
/// The optimized data-gradient convolution engine.
pub const CONV_DGRAD: &str = "KILN_CPU_CONV_DGRAD_GEMM_V1";
/// The optimized weight-gradient convolution engine.
pub const CONV_WGRAD: &str = "KILN_CPU_CONV_WGRAD_GEMM_V1";
/// The optimized matmul engine (with fused pointwise epilogues).
pub const MATMUL: &str = "KILN_CPU_MATMUL_GEMM_V1";
/// The optimized attention engine (sdpa and sdpa_backward, tiled with an online softmax).
pub const SDPA: &str = "KILN_CPU_SDPA_FLASH_V1";
/// The optimized pooling engine (resample forward).
pub const RESAMPLE: &str = "KILN_CPU_RESAMPLE_V1";
/// The optimized pooling backward engine (resample_backward, gathered per dx element).
pub const RESAMPLE_BACKWARD: &str = "KILN_CPU_RESAMPLE_BACKWARD_V1";
/// The optimized normalization engine (with fused pointwise epilogues).
pub const NORM: &str = "KILN_CPU_NORM_V1";

/// The CUDA engine for graphs of pointwise nodes (a device engine: under test with
/// `KILN_CONFORMANCE_DEVICE=cuda:N`).
pub const CUDA_POINTWISE: &str = "KILN_CUDA_POINTWISE_V1";
/// The CUDA matmul engine (with fused pointwise epilogues).
pub const CUDA_MATMUL: &str = "KILN_CUDA_MATMUL_V1";
/// The CUDA forward convolution engine (2-D, implicit GEMM, fused pointwise epilogues).
pub const CUDA_CONV_FPROP: &str = "KILN_CUDA_CONV_FPROP_V1";
/// The CUDA data-gradient convolution engine (2-D, implicit GEMM, fused pointwise epilogues).
pub const CUDA_CONV_DGRAD: &str = "KILN_CUDA_CONV_DGRAD_V1";
/// The CUDA weight-gradient convolution engine (2-D, implicit GEMM with a split reduction).
pub const CUDA_CONV_WGRAD: &str = "KILN_CUDA_CONV_WGRAD_V1";
/// The Hopper data-gradient convolution engine (sm_90a only; NHWC f16/bf16, C and K multiples of 8).
pub const CUDA_CONV_DGRAD_V2: &str = "KILN_CUDA_CONV_DGRAD_V2";
/// The Hopper weight-gradient convolution engine (sm_90a only; split reduction over the workspace).
pub const CUDA_CONV_WGRAD_V2: &str = "KILN_CUDA_CONV_WGRAD_V2";
/// The CUDA attention engine (sdpa and sdpa_backward, FlashAttention-2 style on tensor cores).
pub const CUDA_SDPA: &str = "KILN_CUDA_SDPA_FA2_V1";
/// The Hopper attention forward (FlashAttention-3 structure, sm_90a only).
pub const CUDA_SDPA_FA3: &str = "KILN_CUDA_SDPA_FA3_V1";
/// The Hopper attention backward (FlashAttention-3 structure, sm_90a only).
pub const CUDA_SDPA_FA3_BWD: &str = "KILN_CUDA_SDPA_FA3_BACKWARD_V1";
/// The CUDA pooling engine (resample forward).
pub const CUDA_RESAMPLE: &str = "KILN_CUDA_RESAMPLE_V1";
/// The CUDA pooling backward engine (resample_backward, gathered per dx element: no atomics).
pub const CUDA_RESAMPLE_BACKWARD: &str = "KILN_CUDA_RESAMPLE_BACKWARD_V1";

/// Runs [`check`] and panics with its message on failure; for tests outside proptest.
pub fn assert_conforms(mut case: Case, seed: u64) -> Outcome {
    match check(&mut case, seed) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    }
}
