// KILN_CUDA_NORM_V1, batchnorm_inference: y = (x - mean[c]) * inv_variance[c] * scale[c] +
// bias[c] element by element (grid-stride), through the fused pointwise chain.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    const kiln_i64 n = {{COUNT}}LL;
    const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;
    for (kiln_i64 i = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
{{COORDS}}
        const float yv = ({{LOAD_X}} - {{LOAD_MEAN}}) * {{LOAD_INV}} * {{LOAD_SCALE}} + {{LOAD_BIAS}};
{{EPILOGUE}}
    }
}
