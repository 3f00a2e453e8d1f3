// KILN_CUDA_NORM_V1, per-sample backward (layernorm_backward, rmsnorm_backward), wide path with
// several row groups per block, first kernel (knob wide = 2): x, dy, dx and scale packed
// row-major, INNER a multiple of 8, one 8-value vector per thread and row. A block of BLOCK
// threads holds BLOCK / G groups of G threads (a warp, or a power of two up to 1024); group j
// of block b takes rows (b * BLOCK / G + j) + k * GROUPS. Per row, x and dy are read once with
// 16-byte loads, two group sums (a named barrier per group, the warps' sums double-buffered
// by row parity) give mean(g) and mean(g * x_hat), and dx is stored. Each thread sums
// dy * x_hat and dy over its rows for its columns; at the end the block's groups add theirs
// in order in shared memory and the block writes one partial row of each to the workspace
// (two [GRID][INNER] f32 arrays), which norm_columns_reduce.cu sums in a fixed order. Against
// norm_rows_backward_wide.cu this keeps twice the threads resident for the same workspace.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}, 1) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    constexpr int G = {{GROUP}};
    constexpr int PER = {{BLOCK}} / G;     // groups per block
    constexpr int WARPS = G / 32;          // warps per group
    constexpr kiln_i64 inner = {{INNER}}LL;
    constexpr int nvec = {{INNER}} / 8;
    constexpr kiln_i64 groups = (kiln_i64){{GRID}} * PER;
    static_assert(G % 32 == 0 && {{BLOCK}} % G == 0 && (G == 32 || PER <= 15), "group shape");
    __shared__ float sums[2][PER][2][WARPS];
    __shared__ float red[{{BLOCK}} * 8];
    const int lane = threadIdx.x % G;
    const int j = threadIdx.x / G;
    const kiln_i64 group = (kiln_i64)blockIdx.x * PER + j;
    const bool wide = {{ALIGNED}} && ((unsigned long long)kiln_ws % 16ULL) == 0;
    const bool live = lane < nvec;
    float ds[8], db[8], sc[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) { ds[e] = 0.0f; db[e] = 0.0f; sc[e] = 0.0f; }
    if (live) { kiln_ld8({{SCALE}} + lane * 8, wide, sc); }
    int parity = 0;
    for (kiln_i64 row = group; row < {{ROWS}}LL; row += groups) {
        const float mean = {{LOAD_MEAN}};
        const float inv = {{LOAD_INV}};
        float xh[8], g[8];
        float sg = 0.0f, sgx = 0.0f;
        if (live) {
            float dy[8];
            kiln_ld8({{X}} + row * inner + lane * 8, wide, xh);
            kiln_ld8({{DY}} + row * inner + lane * 8, wide, dy);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                xh[e] = (xh[e] - mean) * inv;
                g[e] = dy[e] * sc[e];
                sg += g[e];
                sgx += g[e] * xh[e];
                ds[e] += dy[e] * xh[e];
                db[e] += dy[e];
            }
        }
        sg = kiln_warp_sum(sg);
        sgx = kiln_warp_sum(sgx);
        if (WARPS > 1) {
            if ((threadIdx.x & 31) == 0) {
                sums[parity][j][0][lane / 32] = sg;
                sums[parity][j][1][lane / 32] = sgx;
            }
            asm volatile("bar.sync %0, %1;" ::"r"(j + 1), "r"(G) : "memory");
            sg = 0.0f;
            sgx = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                sg += sums[parity][j][0][w];
                sgx += sums[parity][j][1][w];
            }
            parity ^= 1;
        }
        const float mg = {{RMS}} ? 0.0f : sg / (float)inner;
        const float mgx = sgx / (float)inner;
        if (live) {
            float dx[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) { dx[e] = inv * (g[e] - mg - xh[e] * mgx); }
            kiln_st8({{DX}} + row * inner + lane * 8, wide, dx);
        }
    }
    // The block's partial rows: group 0's threads add the groups' sums in order.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        __syncthreads();
#pragma unroll
        for (int e = 0; e < 8; ++e) { red[threadIdx.x * 8 + e] = half == 0 ? ds[e] : db[e]; }
        __syncthreads();
        if (j == 0 && live) {
            float t[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) { t[e] = 0.0f; }
            for (int k = 0; k < PER; ++k) {
#pragma unroll
                for (int e = 0; e < 8; ++e) { t[e] += red[(k * G + lane) * 8 + e]; }
            }
            kiln_st8(kiln_ws + ((kiln_i64)half * {{GRID}} + blockIdx.x) * inner + lane * 8, wide, t);
        }
    }
}
