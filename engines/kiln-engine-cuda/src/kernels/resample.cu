// KILN_CUDA_RESAMPLE_V1: pooling (max with an optional index, average including or excluding
// padding), one thread per output element; consecutive threads take consecutive elements of y's
// memory order, so stores are coalesced. Definitions follow kiln_core::ops::resample: padding is
// never a maximum and counts as zero in averages, NaN propagates, the index is the row-major
// window position of the first maximum. Placeholders (double braces) are filled by
// codegen/resample.rs, which also narrows the index arithmetic to 32 bits when every offset fits.
// With channels innermost and contiguous in every tensor (NHWC), a thread takes 16 bytes of
// x's channels at once where the pointers are aligned for it (the first loop: the coordinate
// and window arithmetic then serves several channels, and x is loaded 16 bytes at a time); for
// max pooling of 16-bit x into y of the same type that path compares channel pairs and moves
// their bits (the kiln_pair_* helpers below, codegen/resample.rs::packed_max_forward).
#include "common.cuh"

// Two 16-bit floats (P: __half2 or __nv_bfloat162) held as one 32-bit word: the max pooling of
// 16-bit x and y compares two channels per instruction and moves values by their bits.
template <typename P> __device__ __forceinline__ P kiln_pair_of(unsigned u) { return *reinterpret_cast<const P*>(&u); }
// The larger of each half, NaN if either is (IEEE 754-2019 maximum).
template <typename P> __device__ __forceinline__ unsigned kiln_pair_max(unsigned a, unsigned b) {
    const P r = __hmax2_nan(kiln_pair_of<P>(a), kiln_pair_of<P>(b));
    return *reinterpret_cast<const unsigned*>(&r);
}
// 0xffff in each half where a == b (ordered: NaN equals nothing), else 0.
template <typename P> __device__ __forceinline__ unsigned kiln_pair_eq(unsigned a, unsigned b) { return __heq2_mask(kiln_pair_of<P>(a), kiln_pair_of<P>(b)); }
// 0xffff in each half that is NaN, else 0.
template <typename P> __device__ __forceinline__ unsigned kiln_pair_nan(unsigned a) { return __hneu2_mask(kiln_pair_of<P>(a), kiln_pair_of<P>(a)); }

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
{{VECTOR}}
    const kiln_i64 count = {{COUNT}}LL;
    const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;
    for (kiln_i64 i = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
{{COORDS}}
        float acc = {{INIT}};
        int arg = -1;
        int inside = 0;
#pragma unroll{{TAP_FACTOR}}
        for (int w = 0; w < {{WINDOW}}; ++w) {
{{TAP}}
            const float v = kiln_ld(p0[x_off]);
            ++inside;
{{COMBINE}}
        }
{{FINISH}}
    }
}
