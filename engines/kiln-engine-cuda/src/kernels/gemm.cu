// KILN_CUDA_MATMUL_V1 and KILN_CUDA_CONV_FPROP_V1: a tiled GEMM, C[M,N] = A[M,K] * B[K,N], per
// batch (blockIdx.z), with generated operand loads (strided matmul operands or the implicit-GEMM
// view of a convolution) and a generated pointwise epilogue. f16/bf16 use tensor cores (wmma
// 16x16x16, f32 accumulation); f32 uses FMA on an 8x8 register tile per thread.
// Placeholders (double braces) are filled by codegen/gemm.rs, which also defines:
//   kiln_idx            int when every extent and offset fits in 31 bits, else long long;
//   A_KPREP(gk)         per-K-index values of A (ka_ok, ka_off, ...), computed once per K index;
//   LOAD_A(mm, gm)      one element of A at tile row mm (global gm), after A_KPREP;
//   VLOAD_A(mm, gm)     VEC consecutive K elements (kiln_vec) when A_VEC, after A_KPREP;
//   B_KPREP(gk), LOAD_B(gn), VLOAD_B(gn) likewise for B (VLOAD_B runs along N or K: B_VEC_N);
//   ROW_SETUP           per-tile row table (the convolution's output pixel of each tile row).
#include <mma.h>

#define BM 128
#define BN 128
#define BK 32
#define PAD 8

typedef {{ELEM}} elem_t;
typedef {{IDX}} kiln_idx;
#define VEC (16 / (int)sizeof(elem_t))
typedef kiln_vec<elem_t, 16 / sizeof(elem_t)> vec_t;

__device__ __forceinline__ vec_t kiln_vzero() {
    vec_t z;
#pragma unroll
    for (int i = 0; i < VEC; ++i) z.v[i] = kiln_st<elem_t>(0.0f);
    return z;
}

{{HELPERS}}

extern "C" __global__ void __launch_bounds__(256) {{SYMBOL}}({{PARAMS}}) {
    const kiln_idx M = {{M}}, N = {{N}}, K = {{K}};
    const kiln_i64 batch = blockIdx.z;
    const kiln_idx m0 = (kiln_idx)blockIdx.x * BM, n0 = (kiln_idx)blockIdx.y * BN;
    const int tid = threadIdx.x;
{{BATCH_SETUP}}
    __shared__ __align__(32) elem_t As[BM][BK + PAD];
    __shared__ __align__(32) elem_t Bs[BK][BN + PAD];
{{ROW_SETUP}}
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
    for (kiln_idx k0 = 0; k0 < K; k0 += BK) {
        // A tile: BM x BK.
#if {{A_VEC}}
        if ({{A_ALIGNED}}) {
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
#if {{A_K_FAST}}
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
#if {{B_VEC}}
        if ({{B_ALIGNED}}) {
#if {{B_VEC_N}}
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
#if {{B_N_FAST}}
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
            // Not unrolled: the epilogue runs once per tile, and unrolling its index arithmetic
            // 64 times more than doubled the cubin (and so the plan and its load time).
#pragma unroll 1
            for (int t = 0; t < 8; ++t) {
                int e = t * 32 + lane;
                kiln_idx gm = m0 + wm * 64 + i * 16 + e / 16, gn = n0 + wn * 32 + j * 16 + e % 16;
                if (gm < M && gn < N) { EPILOGUE(gm, gn, stage[warp][e]); }
            }
            __syncwarp();
        }
#else
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            kiln_idx gm = m0 + ty * 8 + i, gn = n0 + tx * 8 + j;
            if (gm < M && gn < N) { EPILOGUE(gm, gn, acc[i][j]); }
        }
#endif
}
