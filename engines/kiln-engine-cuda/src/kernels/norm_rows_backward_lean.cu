// KILN_CUDA_NORM_V1, per-sample backward, wide path, first kernel, knob wide = 2 or 3 (to
// measure against norm_rows_backward_wide.cu): the same walk and sums, but each thread keeps
// its dscale/dbias sums in its own slots of shared memory instead of registers (float4 slots,
// consecutive threads on consecutive 16 bytes), so that it holds about half the registers and
// MIN_BLOCKS blocks fit a multiprocessor (24 or 32 warps against 16).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}, {{MIN_BLOCKS}}) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    __shared__ float kiln_sh[64];
    constexpr int G = {{GROUP}};
    constexpr int VPT = {{VPT}};
    constexpr kiln_i64 inner = {{INNER}}LL;
    constexpr int nvec = {{INNER}} / 8;
    // Vector k's sums of thread t: ds halves at slots (k * 4 + 0, 1), db halves at (k * 4 + 2, 3).
    __shared__ float4 acc[VPT * 4 * {{BLOCK}}];
    const int lane = threadIdx.x % G;
    const kiln_i64 group = (kiln_i64)blockIdx.x * ({{BLOCK}} / G) + threadIdx.x / G;
    if (group >= {{GROUPS}}LL) { return; }  // whole groups only
    const bool wide = {{ALIGNED}} && ((unsigned long long)kiln_ws % 16ULL) == 0;
    auto slot = [&](int k, int q) -> float4& { return acc[(k * 4 + q) * {{BLOCK}} + threadIdx.x]; };
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
        for (int q = 0; q < 4; ++q) { slot(k, q) = make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
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
                float s[4][4];
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const float4 v = slot(k, q);
                    s[q][0] = v.x; s[q][1] = v.y; s[q][2] = v.z; s[q][3] = v.w;
                }
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    xh[k][e] = (xh[k][e] - mean) * inv;
                    g[k][e] = dy[e] * sc[e];
                    sg += g[k][e];
                    sgx += g[k][e] * xh[k][e];
                    s[e / 4][e % 4] += dy[e] * xh[k][e];
                    s[2 + e / 4][e % 4] += dy[e];
                }
#pragma unroll
                for (int q = 0; q < 4; ++q) { slot(k, q) = make_float4(s[q][0], s[q][1], s[q][2], s[q][3]); }
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
            float ds[8], db[8];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 a = slot(k, h), b = slot(k, 2 + h);
                ds[h * 4] = a.x; ds[h * 4 + 1] = a.y; ds[h * 4 + 2] = a.z; ds[h * 4 + 3] = a.w;
                db[h * 4] = b.x; db[h * 4 + 1] = b.y; db[h * 4 + 2] = b.z; db[h * 4 + 3] = b.w;
            }
            kiln_st8(kiln_ws + group * inner + c * 8, wide, ds);
            kiln_st8(kiln_ws + ({{GROUPS}}LL + group) * inner + c * 8, wide, db);
        }
    }
}
