// kiln CUDA kernel provider: block-wide sums for the normalization kernels.
// Every thread of the block must call these (they synchronise); `sh` holds 64 floats.
#pragma once

__device__ __forceinline__ float kiln_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) { v += __shfl_xor_sync(0xffffffffu, v, o); }
    return v;
}

// The sums of a and b over the block, returned to every thread.
__device__ __forceinline__ void kiln_block_sum2(float& a, float& b, float* sh) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    a = kiln_warp_sum(a);
    b = kiln_warp_sum(b);
    __syncthreads();
    if (lane == 0) { sh[warp] = a; sh[32 + warp] = b; }
    __syncthreads();
    if (warp == 0) {
        float x = lane < warps ? sh[lane] : 0.0f;
        float y = lane < warps ? sh[32 + lane] : 0.0f;
        x = kiln_warp_sum(x);
        y = kiln_warp_sum(y);
        if (lane == 0) { sh[0] = x; sh[32] = y; }
    }
    __syncthreads();
    a = sh[0];
    b = sh[32];
}
