// KILN_CUDA_NORM_V1, per-sample backward, wide path, second kernel: dscale and dbias, the sums
// of the first kernel's GROUPS partial rows (workspace, two [GROUPS][INNER] f32 arrays). Block
// (32 columns) x (32 splits): split y sums partials y, y + 32, ... of its column (eight of them
// loaded at a time before they are added, in that order), then the 32 split sums are added in
// order (the result does not depend on timing).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(1024) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    __shared__ float sa[32][33];
    __shared__ float sb[32][33];
    const int x = threadIdx.x & 31;
    const int y = threadIdx.x >> 5;
    const kiln_i64 j = (kiln_i64)blockIdx.x * 32 + x;
    float a = 0.0f, b = 0.0f;
    if (j < {{INNER}}LL) {
        // CH partials of each array loaded before any is added (the adds keep their order).
        constexpr int CH = 8;
        for (kiln_i64 p0 = y; p0 < {{GROUPS}}LL; p0 += 32 * CH) {
            float va[CH], vb[CH];
#pragma unroll
            for (int i = 0; i < CH; ++i) {
                const kiln_i64 p = p0 + 32 * i;
                va[i] = p < {{GROUPS}}LL ? kiln_ws[p * {{INNER}}LL + j] : 0.0f;
                vb[i] = p < {{GROUPS}}LL ? kiln_ws[({{GROUPS}}LL + p) * {{INNER}}LL + j] : 0.0f;
            }
#pragma unroll
            for (int i = 0; i < CH; ++i) {
                if (p0 + 32 * i < {{GROUPS}}LL) {
                    a += va[i];
                    b += vb[i];
                }
            }
        }
    }
    sa[y][x] = a;
    sb[y][x] = b;
    __syncthreads();
    if (y == 0 && j < {{INNER}}LL) {
        float ds = 0.0f, db = 0.0f;
        for (int k = 0; k < 32; ++k) { ds += sa[k][x]; db += sb[k][x]; }
        const kiln_i64 row = 0;
{{COORDS}}
{{STORE_PARAMS}}
    }
}
