// KILN_CUDA_NORM_V1, per channel (batchnorm training forward, batchnorm_backward): one block per
// channel c, its M values walked as (sample, spatial) with neighbouring threads on neighbouring
// spatial positions. The first pass sums (forward: x - pivot and its square, the pivot one value
// of the channel, so that a large mean does not cancel; backward: dy and dy * x_hat), a block
// sum, then the second pass writes y through the fused chain, or dx.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "norm_reduce.cuh"

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    __shared__ float kiln_sh[64];
    const kiln_i64 c = blockIdx.x;
    const kiln_i64 count = {{COUNT}}LL;
{{SETUP}}
    float s1 = 0.0f, s2 = 0.0f;
    for (kiln_i64 m = threadIdx.x; m < count; m += blockDim.x) {
{{COORDS}}
{{PASS1}}
    }
    kiln_block_sum2(s1, s2, kiln_sh);
{{MIDDLE}}
    for (kiln_i64 m = threadIdx.x; m < count; m += blockDim.x) {
{{COORDS}}
{{PASS2}}
    }
}
