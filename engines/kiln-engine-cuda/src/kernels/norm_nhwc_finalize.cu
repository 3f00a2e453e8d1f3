// KILN_CUDA_NORM_V1, batchnorm training forward, channels-last path, second kernel: per channel
// c, the NB block sums of the first kernel (workspace) added in a fixed order in f64 (blocks of
// 8 channels x 128 splits, each split's loads issued together), then mean, inv_variance and
// the running statistics are stored, and y's per-channel factors go to the workspace (after
// the block sums: a = inv * scale [C], the mean [C], the bias [C]).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(1024) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    // Thread (x, y): channel blockIdx.x * 8 + x, split y of 128 (block sums y, y + 128, ...).
    __shared__ double sa[32][8];
    __shared__ double sb[32][8];
    constexpr kiln_i64 C = {{C}}LL;
    const int x = threadIdx.x & 7;
    const int y = threadIdx.x >> 3;
    const kiln_i64 c = (kiln_i64)blockIdx.x * 8 + x;
    double a = 0.0, b = 0.0;
    if (c < C) {
#pragma unroll 4
        for (kiln_i64 p = y; p < {{NB}}LL; p += 128) {
            a += (double)kiln_ws[p * C + c];
            b += (double)kiln_ws[({{NB}}LL + p) * C + c];
        }
    }
    // The warp's four splits of each channel (lanes x, x + 8, x + 16, x + 24), then the 32
    // warps' sums in order: a fixed order, so the result is deterministic.
    a += __shfl_xor_sync(0xffffffffu, a, 8);
    b += __shfl_xor_sync(0xffffffffu, b, 8);
    a += __shfl_xor_sync(0xffffffffu, a, 16);
    b += __shfl_xor_sync(0xffffffffu, b, 16);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) < 8) { sa[warp][x] = a; sb[warp][x] = b; }
    __syncthreads();
    if (threadIdx.x >= 8 || c >= C) { return; }
    double s1 = 0.0, s2 = 0.0;
    for (int k = 0; k < 32; ++k) { s1 += sa[k][x]; s2 += sb[k][x]; }
    const kiln_i64 count = {{COUNT}}LL;
    const float pivot = {{LOAD_PIVOT}};
    const double dmd = s1 / (double)count;
    const float dm = (float)dmd;
    const float mean = pivot + dm;
    const float var = (float)fmax(s2 / (double)count - dmd * dmd, 0.0);
    const float inv = 1.0f / sqrtf(var + {{EPS}});
    const float sc = {{LOAD_SCALE}};
    const float bi = {{LOAD_BIAS}};
{{STATS}}
    const float fa = inv * sc;
    kiln_ws[2LL * {{NB}}LL * C + c] = fa;
    kiln_ws[2LL * {{NB}}LL * C + C + c] = mean;
    kiln_ws[2LL * {{NB}}LL * C + 2LL * C + c] = bi;
}
