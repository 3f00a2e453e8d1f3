// KILN_CUDA_NORM_V1, batchnorm training forward, channels-last path, second kernel: per channel
// c, the NB block sums of the first kernel (workspace) added in a fixed order in f64 (block
// (32 channels) x (32 splits), then the 32 split sums in order), then mean, inv_variance and
// the running statistics are stored, and y's per-channel factors a = inv * scale and
// b = bias - mean * a go to the workspace (after the block sums: a [C], then b [C]).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(1024) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    __shared__ double sa[32][33];
    __shared__ double sb[32][33];
    constexpr kiln_i64 C = {{C}}LL;
    const int x = threadIdx.x & 31;
    const int y = threadIdx.x >> 5;
    const kiln_i64 c = (kiln_i64)blockIdx.x * 32 + x;
    double a = 0.0, b = 0.0;
    if (c < C) {
#pragma unroll 4
        for (kiln_i64 p = y; p < {{NB}}LL; p += 32) {
            a += (double)kiln_ws[p * C + c];
            b += (double)kiln_ws[({{NB}}LL + p) * C + c];
        }
    }
    sa[y][x] = a;
    sb[y][x] = b;
    __syncthreads();
    if (y != 0 || c >= C) { return; }
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
    kiln_ws[2LL * {{NB}}LL * C + C + c] = bi - mean * fa;
}
