// KILN_CUDA_MATMUL_V1 and KILN_CUDA_CONV_FPROP_V1: a tiled GEMM, C[M,N] = A[M,K] * B[K,N], per
// batch (blockIdx.z). f16/bf16 use tensor cores (wmma 16x16x16, f32 accumulation); f32 uses FMA
// on an 8x8 register tile per thread. This file is the kernel itself: tile loads, the K loop and
// the hand-off to the epilogue. Everything specific to one graph comes from the generated
// prologue that includes it (codegen/gemm.rs), which defines before the include:
//   elem_t, kiln_idx          the operand type; int when every extent and offset fits in 31 bits,
//                             else long long;
//   KILN_GEMM_M, _N, _K       the GEMM extents (literals of kiln_idx's width);
//   KILN_GEMM_BM, _BN         the tile the launch grid was sized with (checked below);
//   KILN_GEMM_TENSOR_CORES    1 for wmma (f16/bf16), 0 for FMA (f32);
//   KILN_GEMM_A_K_FAST        1 when A's K dim is the faster one in memory (B_N_FAST: B's N dim);
//   KILN_GEMM_A_VEC           1 when A can be read VEC consecutive K elements at a time
//                             (B_VEC likewise for B, along N when B_VEC_N, else along K), taken
//                             at run time when the operand pointer is 16-byte aligned;
//   KILN_GEMM_A, KILN_GEMM_B  the operand pointers (kernel parameter names);
//   the operand loads of matmul_operands.cuh or conv_fprop_operands.cuh:
//     KILN_GEMM_BLOCK_SETUP() per-block state of the loads (batch offsets, the row table);
//     A_KPREP(gk)             per-K-index values of A (ka_ok, ka_off, ...), once per K index;
//     LOAD_A(mm, gm)          one element of A at tile row mm (global gm), after A_KPREP;
//     VLOAD_A(mm, gm)         VEC consecutive K elements (vec_t), after A_KPREP;
//     B_KPREP(gk), LOAD_B(gn), VLOAD_B(gn) likewise for B;
//   KILN_GEMM_SYMBOL, KILN_GEMM_PARAMS, KILN_GEMM_ARGS
//                             the kernel's name, its parameter list and the parameters as
//                             arguments;
//   kiln_gemm_epilogue(KILN_GEMM_PARAMS, batch, gm, gn, acc)
//                             the fused epilogue of one output element given its GEMM result,
//                             called by the accumulator walkers of gemm_epilogue.cuh.
#if !defined(KILN_GEMM_M) || !defined(KILN_GEMM_SYMBOL) || !defined(KILN_GEMM_BLOCK_SETUP) || \
    !defined(KILN_GEMM_TENSOR_CORES) || !defined(KILN_GEMM_B_VEC_N)
#error "gemm_mainloop.cuh is included by a generated prologue that specialises it (codegen/gemm.rs)"
#endif
#include <mma.h>

#define BM 128
#define BN 128
#define BK 32
#define PAD 8
// The thread layout below (2 x 4 warps of 64 x 32, or 16 x 16 threads of 8 x 8) covers exactly
// this tile; the host sizes the grid from KILN_GEMM_BM and KILN_GEMM_BN.
static_assert(KILN_GEMM_BM == BM && KILN_GEMM_BN == BN, "grid tile and kernel tile differ");

#define VEC (16 / (int)sizeof(elem_t))
typedef kiln_vec<elem_t, 16 / sizeof(elem_t)> vec_t;

#define KILN_GEMM_A_ALIGNED (((unsigned long long)KILN_GEMM_A % 16ULL) == 0)
#define KILN_GEMM_B_ALIGNED (((unsigned long long)KILN_GEMM_B % 16ULL) == 0)

__device__ __forceinline__ vec_t kiln_vzero() {
    vec_t z;
#pragma unroll
    for (int i = 0; i < VEC; ++i) z.v[i] = kiln_st<elem_t>(0.0f);
    return z;
}

#include "gemm_epilogue.cuh"

extern "C" __global__ void __launch_bounds__(256) KILN_GEMM_SYMBOL(KILN_GEMM_PARAMS) {
    const kiln_idx M = KILN_GEMM_M, N = KILN_GEMM_N, K = KILN_GEMM_K;
    const kiln_i64 batch = blockIdx.z;
    const kiln_idx m0 = (kiln_idx)blockIdx.x * BM, n0 = (kiln_idx)blockIdx.y * BN;
    const int tid = threadIdx.x;
    __shared__ __align__(32) elem_t As[BM][BK + PAD];
    __shared__ __align__(32) elem_t Bs[BK][BN + PAD];
    KILN_GEMM_BLOCK_SETUP();
#if KILN_GEMM_TENSOR_CORES
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
    for (kiln_idx k0 = 0; k0 < K; k0 += BK) {
        // A tile: BM x BK.
#if KILN_GEMM_A_VEC
        if (KILN_GEMM_A_ALIGNED) {
            // VEC consecutive K elements per access; the K index of a thread is the same for
            // every access (256 is a multiple of BK / VEC).
            const int kk = (tid % (BK / VEC)) * VEC;
            const kiln_idx gk = k0 + kk;
            A_KPREP(gk)
#pragma unroll
            for (int t = 0; t < (BM * BK) / (256 * VEC); ++t) {
                const int mm = (t * 256 + tid) / (BK / VEC);
                const kiln_idx gm = m0 + mm;
                *reinterpret_cast<vec_t*>(&As[mm][kk]) = (gm < M && ka_ok) ? VLOAD_A(mm, gm) : kiln_vzero();
            }
        } else
#endif
        {
#if KILN_GEMM_A_K_FAST
            const int kk = tid % BK;
            const kiln_idx gk = k0 + kk;
            A_KPREP(gk)
#pragma unroll
            for (int t = 0; t < (BM * BK) / 256; ++t) {
                const int mm = (t * 256 + tid) / BK;
                const kiln_idx gm = m0 + mm;
                As[mm][kk] = (gm < M && ka_ok) ? LOAD_A(mm, gm) : kiln_st<elem_t>(0.0f);
            }
#else
            const int mm = tid % BM;
            const kiln_idx gm = m0 + mm;
#pragma unroll
            for (int t = 0; t < (BM * BK) / 256; ++t) {
                const int kk = (t * 256 + tid) / BM;
                const kiln_idx gk = k0 + kk;
                A_KPREP(gk)
                As[mm][kk] = (gm < M && ka_ok) ? LOAD_A(mm, gm) : kiln_st<elem_t>(0.0f);
            }
#endif
        }
        // B tile: BK x BN.
#if KILN_GEMM_B_VEC
        if (KILN_GEMM_B_ALIGNED) {
#if KILN_GEMM_B_VEC_N
            // VEC consecutive N elements per access.
            const int nn = (tid % (BN / VEC)) * VEC;
            const kiln_idx gn = n0 + nn;
#pragma unroll
            for (int t = 0; t < (BK * BN) / (256 * VEC); ++t) {
                const int kk = (t * 256 + tid) / (BN / VEC);
                const kiln_idx gk = k0 + kk;
                B_KPREP(gk)
                *reinterpret_cast<vec_t*>(&Bs[kk][nn]) = (gn < N && kb_ok) ? VLOAD_B(gn) : kiln_vzero();
            }
#else
            // VEC consecutive K elements per access, scattered down a column of Bs.
            const int kk = (tid % (BK / VEC)) * VEC;
            const kiln_idx gk = k0 + kk;
            B_KPREP(gk)
#pragma unroll
            for (int t = 0; t < (BK * BN) / (256 * VEC); ++t) {
                const int nn = (t * 256 + tid) / (BK / VEC);
                const kiln_idx gn = n0 + nn;
                const vec_t v = (gn < N && kb_ok) ? VLOAD_B(gn) : kiln_vzero();
#pragma unroll
                for (int i = 0; i < VEC; ++i) Bs[kk + i][nn] = v.v[i];
            }
#endif
        } else
#endif
        {
#if KILN_GEMM_B_N_FAST
            const int nn = tid % BN;
            const kiln_idx gn = n0 + nn;
#pragma unroll
            for (int t = 0; t < (BK * BN) / 256; ++t) {
                const int kk = (t * 256 + tid) / BN;
                const kiln_idx gk = k0 + kk;
                B_KPREP(gk)
                Bs[kk][nn] = (gn < N && kb_ok) ? LOAD_B(gn) : kiln_st<elem_t>(0.0f);
            }
#else
            const int kk = tid % BK;
            const kiln_idx gk = k0 + kk;
            B_KPREP(gk)
#pragma unroll
            for (int t = 0; t < (BK * BN) / 256; ++t) {
                const int nn = (t * 256 + tid) / BK;
                const kiln_idx gn = n0 + nn;
                Bs[kk][nn] = (gn < N && kb_ok) ? LOAD_B(gn) : kiln_st<elem_t>(0.0f);
            }
#endif
        }
        __syncthreads();
#if KILN_GEMM_TENSOR_CORES
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
    const auto epilogue = [&](kiln_idx gm, kiln_idx gn, float acc_) {
        kiln_gemm_epilogue(KILN_GEMM_ARGS, batch, gm, gn, acc_);
    };
#if KILN_GEMM_TENSOR_CORES
    kiln_gemm_store_wmma(acc, stage[warp], lane, m0 + wm * 64, n0 + wn * 32, M, N, epilogue);
#else
    kiln_gemm_store_fma(acc, m0 + ty * 8, n0 + tx * 8, M, N, epilogue);
#endif
}
