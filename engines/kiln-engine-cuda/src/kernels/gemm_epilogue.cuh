// KILN_CUDA_MATMUL_V1 and KILN_CUDA_CONV_FPROP_V1: the GEMM epilogue. Hands every in-bounds
// element of a thread's accumulators, with its global coordinates (gm, gn), to `epilogue`: in the
// kernel, the generated `kiln_gemm_epilogue` (the main result's store and the fused pointwise
// chain, codegen/gemm.rs). Included by gemm_mainloop.cuh.

// A warp's 4 x 2 wmma accumulators, 64 x 32 elements from (row0, col0), read back through the
// warp's 16 x 16 staging buffer in shared memory.
template <typename Epilogue>
__device__ __forceinline__ void kiln_gemm_store_wmma(
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> (&acc)[4][2], float* stage,
    int lane, kiln_idx row0, kiln_idx col0, kiln_idx M, kiln_idx N, const Epilogue& epilogue) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            nvcuda::wmma::store_matrix_sync(stage, acc[i][j], 16, nvcuda::wmma::mem_row_major);
            __syncwarp();
            // Not unrolled: the epilogue runs once per tile, and unrolling its index arithmetic
            // 64 times more than doubled the cubin (and so the plan and its load time).
#pragma unroll 1
            for (int t = 0; t < 8; ++t) {
                int e = t * 32 + lane;
                kiln_idx gm = row0 + i * 16 + e / 16, gn = col0 + j * 16 + e % 16;
                if (gm < M && gn < N) { epilogue(gm, gn, stage[e]); }
            }
            __syncwarp();
        }
}

// A thread's 8 x 8 FMA register tile from (row0, col0).
template <typename Epilogue>
__device__ __forceinline__ void kiln_gemm_store_fma(const float (&acc)[8][8], kiln_idx row0,
                                                    kiln_idx col0, kiln_idx M, kiln_idx N,
                                                    const Epilogue& epilogue) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            kiln_idx gm = row0 + i, gn = col0 + j;
            if (gm < M && gn < N) { epilogue(gm, gn, acc[i][j]); }
        }
}
