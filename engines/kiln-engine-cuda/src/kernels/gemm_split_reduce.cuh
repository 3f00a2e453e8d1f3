// KILN_CUDA_CONV_WGRAD_V1 with a split reduction: adds the KILN_SPLIT_COUNT partial results
// of the GEMM kernel (chunk after chunk, so the sum is the same on every run) from the f32
// workspace `kiln_ws` ([split][M][N]) and hands each element to the fused epilogue. The
// generated prologue defines before the include: elem_t, kiln_idx, KILN_GEMM_M, KILN_GEMM_N,
// KILN_SPLIT_COUNT, KILN_SPLIT_SYMBOL, KILN_GEMM_PARAMS (ending with the workspace),
// KILN_GEMM_ARGS and kiln_gemm_epilogue (codegen/conv_grad.rs).
#if !defined(KILN_SPLIT_COUNT) || !defined(KILN_SPLIT_SYMBOL)
#error "gemm_split_reduce.cuh is included by a generated prologue that specialises it (codegen/conv_grad.rs)"
#endif

extern "C" __global__ void __launch_bounds__(256) KILN_SPLIT_SYMBOL(KILN_GEMM_PARAMS) {
    const kiln_i64 mn = (kiln_i64)KILN_GEMM_M * (kiln_i64)KILN_GEMM_N;
    for (kiln_i64 i = (kiln_i64)blockIdx.x * 256 + threadIdx.x; i < mn; i += (kiln_i64)gridDim.x * 256) {
        float acc = 0.0f;
#pragma unroll 4
        for (int s = 0; s < KILN_SPLIT_COUNT; ++s) acc += kiln_ws[s * mn + i];
        kiln_gemm_epilogue(KILN_GEMM_ARGS, 0, (kiln_idx)(i / KILN_GEMM_N), (kiln_idx)(i % KILN_GEMM_N), acc);
    }
}
