// KILN_CUDA_NORM_V1, per sample (layernorm, rmsnorm): one block per row (sample), the row held
// in registers (ITEMS values per thread), so x is read once; mean and variance are two block
// sums over the registers, centred on the row's first value (so that a large mean does not cost
// the deviations their precision); y goes through the fused pointwise chain to its outputs.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}) {
    __shared__ float kiln_sh[64];
    const kiln_i64 row = blockIdx.x;
    const kiln_i64 inner = {{INNER}}LL;
    const float pivot = {{RMS}} ? 0.0f : {{LOAD_PIVOT}};
    float v[{{ITEMS}}];
    float s = 0.0f, unused = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        v[k] = 0.0f;
        if (j < inner) {
{{COORDS}}
            v[k] = {{LOAD_X}} - pivot;
            s += v[k];
        }
    }
    kiln_block_sum2(s, unused, kiln_sh);
    const float dm = {{RMS}} ? 0.0f : s / (float)inner;
    const float mean = pivot + dm;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        if (j < inner) { const float d = v[k] - dm; q += d * d; }
    }
    kiln_block_sum2(q, unused, kiln_sh);
    const float inv = 1.0f / sqrtf(q / (float)inner + {{EPS}});
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        if (j < inner) {
{{COORDS}}
            const float yv = (v[k] - dm) * inv * {{LOAD_SCALE}} + {{LOAD_BIAS}};
{{EPILOGUE}}
        }
    }
    if (threadIdx.x == 0) {
{{STATS}}
    }
}
