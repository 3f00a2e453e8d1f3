// KILN_CUDA_NORM_V1, per sample (layernorm, rmsnorm): one block per row (sample), the row held
// in registers (ITEMS values per thread), so x is read once; mean and variance are two block
// sums over the registers; y goes through the fused pointwise chain to its outputs.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}) {
    __shared__ float kiln_sh[64];
    const kiln_i64 row = blockIdx.x;
    const kiln_i64 inner = {{INNER}}LL;
    float v[{{ITEMS}}];
    float s = 0.0f, unused = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        v[k] = 0.0f;
        if (j < inner) {
{{COORDS}}
            v[k] = {{LOAD_X}};
            s += v[k];
        }
    }
    kiln_block_sum2(s, unused, kiln_sh);
    const float mean = {{RMS}} ? 0.0f : s / (float)inner;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        if (j < inner) { const float d = v[k] - mean; q += d * d; }
    }
    kiln_block_sum2(q, unused, kiln_sh);
    const float inv = 1.0f / sqrtf(q / (float)inner + {{EPS}});
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        if (j < inner) {
{{COORDS}}
            const float yv = (v[k] - mean) * inv * {{LOAD_SCALE}} + {{LOAD_BIAS}};
{{EPILOGUE}}
        }
    }
    if (threadIdx.x == 0) {
{{STATS}}
    }
}
