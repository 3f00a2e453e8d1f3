// KILN_CUDA_MATMUL_V1 and KILN_CUDA_CONV_FPROP_V1: a tiled GEMM, C[M,N] = A[M,K] * B[K,N], per
// batch (blockIdx.z), with generated operand loads (strided matmul operands or the implicit-GEMM
// view of a convolution) and a generated pointwise epilogue. f16/bf16 use tensor cores (wmma
// 16x16x16, f32 accumulation); f32 uses FMA on an 8x8 register tile per thread.
// Placeholders (double braces) are filled by codegen/gemm.rs.
#include <mma.h>

#define BM 128
#define BN 128
#define BK 32
#define PAD 8

typedef {{ELEM}} elem_t;

{{HELPERS}}

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    const kiln_i64 M = {{M}}LL, N = {{N}}LL, K = {{K}}LL;
    const kiln_i64 batch = blockIdx.z;
    const kiln_i64 m0 = (kiln_i64)blockIdx.x * BM, n0 = (kiln_i64)blockIdx.y * BN;
    const int tid = threadIdx.x;
{{BATCH_SETUP}}
    __shared__ __align__(32) elem_t As[BM][BK + PAD];
    __shared__ __align__(32) elem_t Bs[BK][BN + PAD];
#if {{TENSOR_CORES}}
    using namespace nvcuda;
    __shared__ __align__(32) float stage[8][16 * 16];
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / 4, wn = warp % 4;   // 2 x 4 warps, each 64 x 32
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
#else
    const int ty = tid / 16, tx = tid % 16;   // 16 x 16 threads, each 8 x 8
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
#endif
    for (kiln_i64 k0 = 0; k0 < K; k0 += BK) {
        // A tile: BM x BK, 16 elements per thread.
#pragma unroll
        for (int t = 0; t < (BM * BK) / 256; ++t) {
            int e = t * 256 + tid;
#if {{A_K_FAST}}
            int mm = e / BK, kk = e % BK;
#else
            int mm = e % BM, kk = e / BM;
#endif
            kiln_i64 gm = m0 + mm, gk = k0 + kk;
            As[mm][kk] = (gm < M && gk < K) ? LOAD_A(gm, gk) : kiln_st<elem_t>(0.0f);
        }
        // B tile: BK x BN, 16 elements per thread.
#pragma unroll
        for (int t = 0; t < (BK * BN) / 256; ++t) {
            int e = t * 256 + tid;
#if {{B_N_FAST}}
            int kk = e / BN, nn = e % BN;
#else
            int kk = e % BK, nn = e / BK;
#endif
            kiln_i64 gk = k0 + kk, gn = n0 + nn;
            Bs[kk][nn] = (gk < K && gn < N) ? LOAD_B(gk, gn) : kiln_st<elem_t>(0.0f);
        }
        __syncthreads();
#if {{TENSOR_CORES}}
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, elem_t, wmma::row_major> fa[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, elem_t, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(fa[i], &As[wm * 64 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
#else
#pragma unroll 4
        for (int kk = 0; kk < BK; ++kk) {
            float a[8], b[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) a[i] = kiln_ld(As[ty * 8 + i][kk]);
#pragma unroll
            for (int j = 0; j < 8; ++j) b[j] = kiln_ld(Bs[kk][tx * 8 + j]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
#endif
        __syncthreads();
    }
#if {{TENSOR_CORES}}
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            wmma::store_matrix_sync(stage[warp], acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            // Not unrolled: the epilogue runs once per tile, and unrolling its 64-bit index
            // arithmetic 64 times more than doubled the cubin (and so the plan and its load time).
#pragma unroll 1
            for (int t = 0; t < 8; ++t) {
                int e = t * 32 + lane;
                kiln_i64 gm = m0 + wm * 64 + i * 16 + e / 16, gn = n0 + wn * 32 + j * 16 + e % 16;
                if (gm < M && gn < N) { EPILOGUE(gm, gn, stage[warp][e]); }
            }
            __syncwarp();
        }
#else
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            kiln_i64 gm = m0 + ty * 8 + i, gn = n0 + tx * 8 + j;
            if (gm < M && gn < N) { EPILOGUE(gm, gn, acc[i][j]); }
        }
#endif
}
