// KILN_CUDA_NORM_V1, per sample (layernorm, rmsnorm), wide path: x, y, scale and bias packed
// row-major, INNER a multiple of 8. A group of GROUP threads per row (a warp, several rows per
// block, or the whole block), each holding VPT vectors of 8 values of the row in registers: x is
// read once with 16-byte loads, the mean and then the squared deviations are two group sums
// over the registers, and y = (x - mean) * inv * scale + bias is stored with 16-byte stores.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}) {
    __shared__ float kiln_sh[64];
    constexpr int G = {{GROUP}};
    constexpr int VPT = {{VPT}};
    constexpr kiln_i64 inner = {{INNER}}LL;
    constexpr int nvec = {{INNER}} / 8;
    const int lane = threadIdx.x % G;
    const kiln_i64 row = (kiln_i64)blockIdx.x * ({{BLOCK}} / G) + threadIdx.x / G;
    if (row >= {{ROWS}}LL) { return; }  // whole groups only: the last block's idle warps
    const bool wide = {{ALIGNED}};
    float v[VPT][8];
    float s = 0.0f, unused = 0.0f;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + k * G;
        if (c < nvec) {
            kiln_ld8({{X}} + row * inner + c * 8, wide, v[k]);
#pragma unroll
            for (int e = 0; e < 8; ++e) { s += v[k][e]; }
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) { v[k][e] = 0.0f; }
        }
    }
    kiln_group_sum2<G>(s, unused, kiln_sh);
    const float mean = {{RMS}} ? 0.0f : s / (float)inner;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        if (lane + k * G < nvec) {
#pragma unroll
            for (int e = 0; e < 8; ++e) { const float d = v[k][e] - mean; q += d * d; }
        }
    }
    kiln_group_sum2<G>(q, unused, kiln_sh);
    const float inv = 1.0f / sqrtf(q / (float)inner + {{EPS}});
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int c = lane + k * G;
        if (c < nvec) {
            float sc[8], bi[8], y[8];
            kiln_ld8({{SCALE}} + c * 8, wide, sc);
{{LOAD_BIAS}}
#pragma unroll
            for (int e = 0; e < 8; ++e) { y[e] = (v[k][e] - mean) * inv * sc[e] + bi[e]; }
            kiln_st8({{Y}} + row * inner + c * 8, wide, y);
        }
    }
    if (lane == 0) {
{{STATS}}
    }
}
