// KILN_CUDA_NORM_V1, batchnorm training forward, channels-last path, first kernel: x packed
// channels-last ([positions][C], C a multiple of 8). Thread (lane pl, channel group cg) of a
// block of BLOCK = LANES * GROUPS_C threads reads the 8 channels cg*8.. of positions pl, pl +
// LANES, ... of the block's share with 16-byte loads and sums x - pivot and its square (the
// pivot, x at position 0, keeps a large mean from cancelling); the block's per-channel sums go
// to the workspace: s1 [NB][C], then s2 [NB][C] (f32).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}, {{MIN_BLOCKS}}) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    constexpr int CG = {{GROUPS_C}};
    constexpr int LANES = {{BLOCK}} / CG;
    constexpr kiln_i64 C = {{C}}LL;
    constexpr kiln_i64 P = {{POSITIONS}}LL;
    __shared__ float sh[2][LANES][CG * 8];
    const int cg = threadIdx.x % CG;
    const int pl = threadIdx.x / CG;
    const bool wide = {{ALIGNED}};
    typedef {{TX}} TX;
    constexpr int U = {{UNROLL}};          // positions a thread loads before it adds
    constexpr int W = 16 / sizeof(TX);     // values per 16-byte chunk
    static_assert(W >= 4 && 8 % W == 0, "x is f32, f16 or bf16");
    float pivot[8], s1[8], s2[8];
    kiln_ld8({{X}} + cg * 8, wide, pivot);
#pragma unroll
    for (int e = 0; e < 8; ++e) { s1[e] = 0.0f; s2[e] = 0.0f; }
    const kiln_i64 step = (kiln_i64)gridDim.x * LANES;
    for (kiln_i64 q0 = (kiln_i64)blockIdx.x * LANES + pl; q0 < P; q0 += U * step) {
        // U positions' raw vectors first (U * 16 bytes of bf16 in flight), then their sums.
        kiln_vec<TX, W> raw[U][8 / W];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const kiln_i64 q = q0 + u * step < P ? q0 + u * step : 0;
            const TX* src = {{X}} + q * C + cg * 8;
#pragma unroll
            for (int c = 0; c < 8 / W; ++c) {
                if (wide) {
                    raw[u][c] = *reinterpret_cast<const kiln_vec<TX, W>*>(src + c * W);
                } else {
#pragma unroll
                    for (int e = 0; e < W; ++e) { raw[u][c].v[e] = src[c * W + e]; }
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (q0 + u * step >= P) { continue; }
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float d = kiln_ld(raw[u][e / W].v[e % W]) - pivot[e];
                s1[e] += d;
                s2[e] += d * d;
            }
        }
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) { sh[0][pl][cg * 8 + e] = s1[e]; sh[1][pl][cg * 8 + e] = s2[e]; }
    __syncthreads();
    for (int c = threadIdx.x; c < CG * 8; c += {{BLOCK}}) {
        float a = 0.0f, b = 0.0f;
        for (int l = 0; l < LANES; ++l) { a += sh[0][l][c]; b += sh[1][l][c]; }
        kiln_ws[(kiln_i64)blockIdx.x * C + c] = a;
        kiln_ws[((kiln_i64){{NB}} + blockIdx.x) * C + c] = b;
    }
}
