// KILN_CUDA_POINTWISE_V1: a chain of pointwise nodes fused into one kernel.
// Placeholders (double braces) are filled by codegen/pointwise.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    const kiln_i64 n = {{COUNT}}LL;
    const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;
    kiln_i64 first = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x;
{{VECTOR_PATH}}
    for (kiln_i64 i = first; i < n; i += step) {
{{COORDS}}
{{BODY}}
    }
}
