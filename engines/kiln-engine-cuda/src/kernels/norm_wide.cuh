// kiln CUDA kernel provider: 8-value accesses for the wide normalization kernels. With `wide`
// (every pointer of the kernel 16-byte aligned, checked once at run time) the 8 values of T
// are one or two 16-byte accesses; otherwise 8 element accesses, so an unaligned binding still
// runs correctly, only slower. `wide` is uniform over the grid, so the branch never diverges.
#pragma once

#include "norm_reduce.cuh"

template <typename T>
__device__ __forceinline__ void kiln_ld8(const T* __restrict__ p, bool wide, float (&o)[8]) {
    if (wide) {
        constexpr int W = 16 / sizeof(T);
#pragma unroll
        for (int c = 0; c < 8 / W; ++c) {
            const kiln_vec<T, W> r = *reinterpret_cast<const kiln_vec<T, W>*>(p + c * W);
#pragma unroll
            for (int e = 0; e < W; ++e) { o[c * W + e] = kiln_ld(r.v[e]); }
        }
    } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) { o[e] = kiln_ld(p[e]); }
    }
}

template <typename T>
__device__ __forceinline__ void kiln_st8(T* __restrict__ p, bool wide, const float (&v)[8]) {
    if (wide) {
        constexpr int W = 16 / sizeof(T);
#pragma unroll
        for (int c = 0; c < 8 / W; ++c) {
            kiln_vec<T, W> w;
#pragma unroll
            for (int e = 0; e < W; ++e) { w.v[e] = kiln_st<T>(v[c * W + e]); }
            *reinterpret_cast<kiln_vec<T, W>*>(p + c * W) = w;
        }
    } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) { p[e] = kiln_st<T>(v[e]); }
    }
}

// The sums of a and b over a group of G threads: a warp (G = 32) or the whole block (G =
// blockDim.x, every thread calling).
template <int G>
__device__ __forceinline__ void kiln_group_sum2(float& a, float& b, float* sh) {
    if (G == 32) {
        a = kiln_warp_sum(a);
        b = kiln_warp_sum(b);
    } else {
        kiln_block_sum2(a, b, sh);
    }
}
