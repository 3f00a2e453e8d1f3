//! The optimized convolution engines (kiln-core's `conv` operation, every direction): forward
//! by im2col + GEMM or Winograd F(2x2,3x3), data and weight gradients by GEMM, with the geometry
//! helpers they share.

mod band;
mod broadcast;
mod depthwise;
#[cfg(target_arch = "x86_64")]
mod depthwise_lanes;
mod direct;
pub mod fprop;
mod geometry;
pub mod grad;
mod winograd;

pub use fprop::ConvFpropEngine;
pub use grad::{ConvDgradEngine, ConvWgradEngine};
