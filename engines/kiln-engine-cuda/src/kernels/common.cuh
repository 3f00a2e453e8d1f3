// kiln CUDA kernel provider: helpers shared by every generated kernel.
// Compute is f32; tensors are f32, f16 or bf16 (more storage types in pointwise_math.cuh).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef long long kiln_i64;

__device__ __forceinline__ float kiln_ld(float x) { return x; }
__device__ __forceinline__ float kiln_ld(__half x) { return __half2float(x); }
__device__ __forceinline__ float kiln_ld(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T kiln_st(float x);
template <> __device__ __forceinline__ float kiln_st<float>(float x) { return x; }
template <> __device__ __forceinline__ __half kiln_st<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 kiln_st<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// N elements of T read or written as one wide access (16 or 32 bytes).
template <typename T, int N> struct __align__(sizeof(T) * N) kiln_vec { T v[N]; };

// max/min that propagate NaN (IEEE 754-2019 maximum/minimum), as the reference engine does.
__device__ __forceinline__ float kiln_max(float a, float b) { return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }
__device__ __forceinline__ float kiln_min(float a, float b) { return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fminf(a, b); }
__device__ __forceinline__ float kiln_sigmoid(float x) {
    if (x >= 0.0f) { return 1.0f / (1.0f + expf(-x)); }
    float e = expf(x);
    return e / (1.0f + e);
}
// The reference engine's relu (cuDNN's clip order): the lower clip and its slope first, then
// the upper clip on the result. NaN stays NaN; below the lower clip with slope 0 the result is
// exactly the lower clip, also for -inf (where lower + 0 * (x - lower) would be NaN).
// NaN passes through. Written as selects, with no early return, so that a fused epilogue
// over many elements compiles without a branch per element.
__device__ __forceinline__ float kiln_relu(float a, float lower, float upper, float slope) {
    const float below = a >= lower ? a : (slope == 0.0f ? lower : lower + slope * (a - lower));
    const float clipped = kiln_min(below, upper);
    return isnan(a) ? a : clipped;
}
__device__ __forceinline__ float kiln_softplus(float a, float beta) {
    float z = beta * a;
    float sp = z > 0.0f ? z + log1pf(expf(-z)) : log1pf(expf(z));
    return sp / beta;
}
__device__ __forceinline__ float kiln_gelu_tanh(float a) {
    float u = 0.7978845608028654f * (a + 0.044715f * a * a * a);
    return a * kiln_sigmoid(2.0f * u);
}

#include "pointwise_math.cuh"
