//! Optimized CPU engines.

use crate::engine::CpuEngine;

/// The optimized engines, in heuristic order.
pub fn engines() -> Vec<&'static dyn CpuEngine> {
    Vec::new()
}
