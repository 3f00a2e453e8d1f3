// KILN_CUDA_RESAMPLE_BACKWARD_V1: pooling's backward, gathered: one thread per dx element sums
// the dy of every window that covers it, in row-major order of the windows, so no two threads
// write one element, no atomics are needed and results are deterministic. Consecutive threads
// take consecutive elements of dx's memory order (coalesced stores). Max pooling adds dy where
// the window's maximum is this element: the index names it (a value equal to the element's
// window position): the node's index input, or, for max pooling through x, the index that the
// forward kernel (resample.cu) wrote into the plan's workspace first.
// Averages add dy divided by the window's size (including padding) or by its elements inside x.
// With channels innermost and contiguous in every tensor (NHWC), a thread takes 16 bytes of
// dx's channels at four adjacent dx positions along W at once where the pointers are aligned
// for it (the first loop: the coordinate and window arithmetic then serves them all, each
// covering window's dy and index is loaded once for the four, in 16-byte loads and stores).
// Definitions: kiln_core::ops::resample. Placeholders (double braces) are filled by
// codegen/resample.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
{{VECTOR}}
    const kiln_i64 count = {{COUNT}}LL;
    const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;
    for (kiln_i64 i = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
{{COORDS}}
        float acc = 0.0f;
{{GATHER}}
{{STORE}}
    }
}
