// kiln CUDA kernel provider: the storage types beyond f32/f16/bf16 and the pointwise modes of
// graph minor 2, included by common.cuh. Definitions follow the reference engine
// (engines/kiln-engine-cpu/src/reference/pointwise.rs); compute stays f32.
#include <cuda_fp8.h>

// bool tensors: one byte, 0 false, anything else true; written as 0 or 1.
struct kiln_bool { unsigned char v; };
__device__ __forceinline__ float kiln_ld(kiln_bool x) { return x.v != 0 ? 1.0f : 0.0f; }
__device__ __forceinline__ float kiln_ld(signed char x) { return (float)x; }
__device__ __forceinline__ float kiln_ld(int x) { return (float)x; }
__device__ __forceinline__ float kiln_ld(__nv_fp8_e4m3 x) { return (float)x; }
__device__ __forceinline__ float kiln_ld(__nv_fp8_e5m2 x) { return (float)x; }

template <> __device__ __forceinline__ kiln_bool kiln_st<kiln_bool>(float x) {
    kiln_bool r; r.v = x != 0.0f ? 1 : 0; return r;
}
// Integers round to nearest even and saturate; NaN is 0 (PTX cvt.rni.sat semantics).
template <> __device__ __forceinline__ signed char kiln_st<signed char>(float x) {
    return isnan(x) ? (signed char)0 : (signed char)fminf(fmaxf(rintf(x), -128.0f), 127.0f);
}
template <> __device__ __forceinline__ int kiln_st<int>(float x) { return __float2int_rn(x); }
// FP8 rounds to nearest even and saturates to the largest finite value (infinities included);
// NaN stays NaN: kiln_core::fp8's rule.
template <> __device__ __forceinline__ __nv_fp8_e4m3 kiln_st<__nv_fp8_e4m3>(float x) {
    __nv_fp8_e4m3 r; r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); return r;
}
template <> __device__ __forceinline__ __nv_fp8_e5m2 kiln_st<__nv_fp8_e5m2>(float x) {
    __nv_fp8_e5m2 r; r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); return r;
}

// The derivative of kiln_relu at x: 0 where the upper clip holds the output, 1 above the lower
// clip, the slope at or below it.
__device__ __forceinline__ float kiln_relu_slope(float x, float lower, float upper, float slope) {
    if (isnan(x)) { return x; }
    if (isfinite(upper) && kiln_relu(x, lower, upper, slope) >= upper) { return 0.0f; }
    return x > lower ? 1.0f : slope;
}
__device__ __forceinline__ float kiln_elu_bwd(float dy, float x, float alpha) {
    if (x > 0.0f) { return dy; }
    if (isnan(x)) { return x; }
    return dy * alpha * expf(x);
}
// Phi(x) + x phi(x) cancels for negative x: evaluated in double, like the CPU engines.
__device__ __forceinline__ float kiln_gelu_bwd(float dy, float xf) {
    double x = (double)xf;
    double cdf = 0.5 * erfc(-x * 0.70710678118654752);
    double pdf = exp(-0.5 * x * x) * 0.3989422804014327;
    return (float)((double)dy * (cdf + x * pdf));
}
__device__ __forceinline__ float kiln_gelu_tanh_bwd(float dy, float xf) {
    const double k = 0.7978845608028654, c = 0.044715;
    double x = (double)xf;
    double u = k * (x + c * x * x * x);
    double s = 1.0 / (1.0 + exp(-2.0 * u));
    return (float)((double)dy * (s + x * 2.0 * s * (1.0 - s) * k * (1.0 + 3.0 * c * x * x)));
}
// s (1 - s) = e / (1 + e)^2 and 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-|x|), exp(-2|x|):
// accurate in the tails, where 1 - s and 1 - t^2 cancel.
__device__ __forceinline__ float kiln_sigmoid_bwd(float dy, float x) {
    float e = expf(-fabsf(x));
    return dy * e / ((1.0f + e) * (1.0f + e));
}
__device__ __forceinline__ float kiln_swish_bwd(float dy, float x, float beta) {
    float s = kiln_sigmoid(beta * x);
    return dy * (s + beta * x * s * (1.0f - s));
}
__device__ __forceinline__ float kiln_tanh_bwd(float dy, float x) {
    float e = expf(-2.0f * fabsf(x));
    return dy * 4.0f * e / ((1.0f + e) * (1.0f + e));
}
