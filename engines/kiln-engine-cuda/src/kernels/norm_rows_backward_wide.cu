// KILN_CUDA_NORM_V1, per-sample backward (layernorm_backward, rmsnorm_backward), wide path,
// first kernel: x, dy, dx and scale packed row-major, INNER a multiple of 8. GROUPS groups of
// GROUP threads (a warp or the whole block) walk the rows (group g takes rows g, g + GROUPS,
// ...); per row, x and dy are read once with 16-byte loads and held in registers, two group
// sums give mean(g) and mean(g * x_hat) (g = dy * scale), and dx is stored. Each thread also
// sums dy * x_hat and dy over its rows for its own columns; the group's sums go to the
// workspace (two [GROUPS][INNER] f32 arrays), which norm_columns_reduce.cu sums in a fixed
// order (deterministic).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    __shared__ float kiln_sh[64];
    constexpr int G = {{GROUP}};
    constexpr int VPT = {{VPT}};
    constexpr kiln_i64 inner = {{INNER}}LL;
    constexpr int nvec = {{INNER}} / 8;
    const int lane = threadIdx.x % G;
    const kiln_i64 group = (kiln_i64)blockIdx.x * ({{BLOCK}} / G) + threadIdx.x / G;
    if (group >= {{GROUPS}}LL) { return; }  // whole groups only
    const bool wide = {{ALIGNED}} && ((unsigned long long)kiln_ws % 16ULL) == 0;
    float ds[VPT][8], db[VPT][8];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
        for (int e = 0; e < 8; ++e) { ds[k][e] = 0.0f; db[k][e] = 0.0f; }
    }
    for (kiln_i64 row = group; row < {{ROWS}}LL; row += {{GROUPS}}LL) {
        const float mean = {{LOAD_MEAN}};
        const float inv = {{LOAD_INV}};
        float xh[VPT][8], g[VPT][8];
        float sg = 0.0f, sgx = 0.0f;
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int c = lane + k * G;
            if (c < nvec) {
                float dy[8], sc[8];
                kiln_ld8({{X}} + row * inner + c * 8, wide, xh[k]);
                kiln_ld8({{DY}} + row * inner + c * 8, wide, dy);
                kiln_ld8({{SCALE}} + c * 8, wide, sc);
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    xh[k][e] = (xh[k][e] - mean) * inv;
                    g[k][e] = dy[e] * sc[e];
                    sg += g[k][e];
                    sgx += g[k][e] * xh[k][e];
                    ds[k][e] += dy[e] * xh[k][e];
                    db[k][e] += dy[e];
                }
            } else {
#pragma unroll
                for (int e = 0; e < 8; ++e) { xh[k][e] = 0.0f; g[k][e] = 0.0f; }
            }
        }
        kiln_group_sum2<G>(sg, sgx, kiln_sh);
        const float mg = {{RMS}} ? 0.0f : sg / (float)inner;
        const float mgx = sgx / (float)inner;
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int c = lane + k * G;
            if (c < nvec) {
                float dx[8];
#pragma unroll
                for (int e = 0; e < 8; ++e) { dx[e] = inv * (g[k][e] - mg - xh[k][e] * mgx); }
                kiln_st8({{DX}} + row * inner + c * 8, wide, dx);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + k * G;
        if (c < nvec) {
            kiln_st8(kiln_ws + group * inner + c * 8, wide, ds[k]);
            kiln_st8(kiln_ws + ({{GROUPS}}LL + group) * inner + c * 8, wide, db[k]);
        }
    }
}
