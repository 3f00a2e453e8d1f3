// KILN_CUDA_NORM_V1, per-sample backward (layernorm_backward, rmsnorm_backward), first kernel:
// one block per row, x and dy held in registers (read once), the two block sums of
// g = dy * scale and g * x_hat, then dx = inv * (g - mean(g) - x_hat * mean(g * x_hat)).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}) {
    __shared__ float kiln_sh[64];
    const kiln_i64 row = blockIdx.x;
    const kiln_i64 inner = {{INNER}}LL;
    const float mean = {{LOAD_MEAN}};
    const float inv = {{LOAD_INV}};
    float xh[{{ITEMS}}], g[{{ITEMS}}];
    float sg = 0.0f, sgx = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        xh[k] = 0.0f;
        g[k] = 0.0f;
        if (j < inner) {
{{COORDS}}
            xh[k] = ({{LOAD_X}} - mean) * inv;
            g[k] = {{LOAD_DY}} * {{LOAD_SCALE}};
            sg += g[k];
            sgx += g[k] * xh[k];
        }
    }
    kiln_block_sum2(sg, sgx, kiln_sh);
    const float mg = {{RMS}} ? 0.0f : sg / (float)inner;
    const float mgx = sgx / (float)inner;
#pragma unroll
    for (int k = 0; k < {{ITEMS}}; ++k) {
        const kiln_i64 j = threadIdx.x + (kiln_i64)k * {{BLOCK}};
        if (j < inner) {
{{COORDS}}
            {{STORE_DX}}
        }
    }
}
