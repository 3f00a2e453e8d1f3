// KILN_CUDA_NORM_V1, batchnorm_inference and the training forward's last kernel, channels-last
// path: x and y packed channels-last ([positions][C], C a multiple of 8), y = (x - m[c]) * a[c] +
// b[c] (m the mean, a = inv_variance * scale, b the bias: x * a + (b - m * a) would lose y's
// low bits to cancellation where a is large, e.g. a variance of 0).
// The block first computes the C factors into shared memory (consecutive threads on
// consecutive channels, so the parameter loads are coalesced). Then the block takes 4 * BLOCK
// consecutive 8-channel vectors of x (16 KiB of bf16), thread t the vectors t, t + BLOCK, ...;
// BLOCK is a multiple of C / 8, so a thread's channels are the same in each and its factors
// stay in registers. The training forward takes the blocks last to first, so that its first
// reads find the end of x, which the statistics kernel read last, still in L2.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}{{WS_PARAM}}) {
    constexpr int CG = {{GROUPS_C}};
    constexpr kiln_i64 C = {{C}}LL;
    constexpr kiln_i64 P = {{POSITIONS}}LL;
    const int cg = threadIdx.x % CG;
    const bool wide = {{ALIGNED}};
    __shared__ float sfa[C], sfm[C], sfb[C];
    constexpr kiln_i64 nvec = P * CG;
    const kiln_i64 b = {{REVERSE}} ? (kiln_i64)gridDim.x - 1 - blockIdx.x : (kiln_i64)blockIdx.x;
    const kiln_i64 first = b * (4 * {{BLOCK}}) + threadIdx.x;
    float v[4][8];
    // x's loads are issued before the factors are computed, so that the factors' own loads
    // and the barrier wait behind them rather than in front (4% faster on an H200).
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const kiln_i64 i = first + u * {{BLOCK}};
        if (i < nvec) { kiln_ld8({{X}} + i * 8, wide, v[u]); }
    }
    for (kiln_i64 c = threadIdx.x; c < C; c += {{BLOCK}}) {
{{FACTORS}}
    }
    __syncthreads();
    float fa[8], fm[8], fb[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) { fa[e] = sfa[cg * 8 + e]; fm[e] = sfm[cg * 8 + e]; fb[e] = sfb[cg * 8 + e]; }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
        const kiln_i64 i = first + u * {{BLOCK}};
        if (i < nvec) {
            float y[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) { y[e] = (v[u][e] - fm[e]) * fa[e] + fb[e]; }
            kiln_st8({{Y}} + i * 8, wide, y);
        }
    }
}
