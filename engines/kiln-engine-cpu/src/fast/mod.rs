//! Optimized CPU engines: fused pointwise graphs, convolution and matmul through GEMM with
//! fused pointwise epilogues, and the convolution gradients through GEMM.

pub mod conv_fprop;
mod conv_geometry;
pub mod conv_grad;
mod conv_winograd;
mod element_io;
mod epilogue;
pub mod matmul;
pub mod pointwise;
mod pointwise_math;

#[cfg(test)]
mod tests;

pub use conv_fprop::ConvFpropEngine;
pub use conv_grad::{ConvDgradEngine, ConvWgradEngine};
pub use matmul::MatmulEngine;
pub use pointwise::PointwiseEngine;

use crate::engine::CpuEngine;

/// The optimized engines, in heuristic order (most specific first): forward convolution and
/// matmul (each with an optional epilogue), the convolution gradients, then fused pointwise
/// graphs.
pub fn engines() -> Vec<&'static dyn CpuEngine> {
    vec![
        &ConvFpropEngine,
        &MatmulEngine,
        &ConvDgradEngine,
        &ConvWgradEngine,
        &PointwiseEngine,
    ]
}
