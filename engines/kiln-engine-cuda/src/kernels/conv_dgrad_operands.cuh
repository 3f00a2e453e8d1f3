// KILN_CUDA_CONV_DGRAD_V1: the GEMM operands of a 2-D data-gradient convolution as an implicit
// GEMM, dx[M, N] = dy'[M, K] * w'[K, N] with M = N·H·W input pixels, N = C channels and
// K = R·S·K' (filter taps times filters, the filter index K' fastest, so NHWC gradients load
// contiguously). Row (n, h, w) meets tap (r, s) at the output position
// (p, q) = ((h + pad_h - r·dil_h) / stride_h, (w + pad_w - s·dil_w) / stride_w) when both
// divisions are exact and (p, q) lies inside dy; every other tap contributes zero. The loads
// gemm_mainloop.cuh expects (see there). The generated prologue defines before the include, as
// literals of kiln_idx's width:
//   KILN_DGRAD_H, KILN_DGRAD_W              dx's spatial extents (dx is N, C, H, W by dims);
//   KILN_DGRAD_P, KILN_DGRAD_Q, KILN_DGRAD_K  dy's spatial extents and its channels (filters);
//   KILN_DGRAD_S                            the filter's width;
//   KILN_DGRAD_STRIDE_H/_W, KILN_DGRAD_PAD_H/_W, KILN_DGRAD_DIL_H/_W
//                                           stride, leading padding and dilation;
//   KILN_DGRAD_DY_STRIDE_N/_K/_H/_W         dy's element strides;
//   KILN_DGRAD_FILTER_STRIDE_K/_C/_R/_S     the filter's element strides.
#if !defined(KILN_DGRAD_K) || !defined(KILN_DGRAD_FILTER_STRIDE_S)
#error "conv_dgrad_operands.cuh is included by a generated prologue that specialises it (codegen/conv_grad.rs)"
#endif

// The offset in dy of the output position that tap offsets (th, tw) = (h + pad - r·dil, ...)
// reach, or -1 where they reach none (a stride skips them, or they fall outside dy).
__device__ __forceinline__ kiln_idx kiln_dgrad_offset(kiln_idx th, kiln_idx tw) {
    if (th < 0 || tw < 0) return -1;
    if (KILN_DGRAD_STRIDE_H > 1 && th % KILN_DGRAD_STRIDE_H != 0) return -1;
    if (KILN_DGRAD_STRIDE_W > 1 && tw % KILN_DGRAD_STRIDE_W != 0) return -1;
    const kiln_idx p = th / KILN_DGRAD_STRIDE_H, q = tw / KILN_DGRAD_STRIDE_W;
    if (p >= KILN_DGRAD_P || q >= KILN_DGRAD_Q) return -1;
    return p * KILN_DGRAD_DY_STRIDE_H + q * KILN_DGRAD_DY_STRIDE_W;
}

// Each tile row's pixel, decomposed once per block into a shared-memory table: its batch offset
// in dy and its padded coordinates (h + pad_h, w + pad_w).
#define KILN_GEMM_BLOCK_SETUP()                                                           \
    __shared__ kiln_idx row_base[BM], row_h[BM], row_w[BM];                               \
    if (tid < BM) {                                                                       \
        const kiln_idx gm = m0 + tid < M ? m0 + tid : M - 1;                              \
        const kiln_idx w_ = gm % KILN_DGRAD_W, t_ = gm / KILN_DGRAD_W;                    \
        row_base[tid] = (t_ / KILN_DGRAD_H) * KILN_DGRAD_DY_STRIDE_N;                     \
        row_h[tid] = t_ % KILN_DGRAD_H + KILN_DGRAD_PAD_H;                                \
        row_w[tid] = w_ + KILN_DGRAD_PAD_W;                                               \
    }                                                                                     \
    __syncthreads()

// K = (r, s, k), k fastest: decomposed once per K index of a thread.
#define A_KPREP(gk) const bool ka_ok = (gk) < K; \
    const kiln_idx ka_k = (gk) % KILN_DGRAD_K, ka_rs = (gk) / KILN_DGRAD_K; \
    const kiln_idx ka_h = (ka_rs / KILN_DGRAD_S) * KILN_DGRAD_DIL_H, ka_w = (ka_rs % KILN_DGRAD_S) * KILN_DGRAD_DIL_W; \
    const kiln_idx ka_off = ka_k * KILN_DGRAD_DY_STRIDE_K;
// (The offset is computed twice in one expression; it is pure and inlined, so once in code.)
#define KILN_DGRAD_AT(mm) kiln_dgrad_offset(row_h[mm] - ka_h, row_w[mm] - ka_w)
#define LOAD_A(mm, gm) (KILN_DGRAD_AT(mm) >= 0 ? KILN_GEMM_A[row_base[mm] + ka_off + KILN_DGRAD_AT(mm)] : kiln_st<elem_t>(0.0f))
#define VLOAD_A(mm, gm) (KILN_DGRAD_AT(mm) >= 0 ? *reinterpret_cast<const vec_t*>(KILN_GEMM_A + row_base[mm] + ka_off + KILN_DGRAD_AT(mm)) : kiln_vzero())
#define B_KPREP(gk) const bool kb_ok = (gk) < K; \
    const kiln_idx kb_k = (gk) % KILN_DGRAD_K, kb_rs = (gk) / KILN_DGRAD_K; \
    const kiln_idx kb_off = kb_k * KILN_DGRAD_FILTER_STRIDE_K + (kb_rs / KILN_DGRAD_S) * KILN_DGRAD_FILTER_STRIDE_R + (kb_rs % KILN_DGRAD_S) * KILN_DGRAD_FILTER_STRIDE_S;
#define LOAD_B(gn) (KILN_GEMM_B[(gn) * KILN_DGRAD_FILTER_STRIDE_C + kb_off])
#define VLOAD_B(gn) (*reinterpret_cast<const vec_t*>(KILN_GEMM_B + (gn) * KILN_DGRAD_FILTER_STRIDE_C + kb_off))
