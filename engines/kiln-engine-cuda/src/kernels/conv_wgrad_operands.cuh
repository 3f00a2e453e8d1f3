// KILN_CUDA_CONV_WGRAD_V1: the GEMM operands of a 2-D weight-gradient convolution as an implicit
// GEMM, dw[M, N] = dy'[M, K] * x'[K, N] with M = K' filters, N = R·S·C (c fastest, so NHWC
// activations load contiguously) and the reduction K = N'·P·Q over every output position (q
// fastest). The reduction is split into KILN_WGRAD_SPLITS chunks of KILN_GEMM_K indices, one
// per blockIdx.z (the mainloop's batch); with more than one, each chunk's partial sums go to
// the workspace and a second kernel adds them in chunk order (codegen/conv_grad.rs). The loads
// gemm_mainloop.cuh expects (see there). The generated prologue defines before the include, as
// literals of kiln_idx's width:
//   KILN_WGRAD_KT                           the whole reduction's extent, N'·P·Q;
//   KILN_WGRAD_H, KILN_WGRAD_W, KILN_WGRAD_C  x's extents (x is N, C, H, W by dims);
//   KILN_WGRAD_P, KILN_WGRAD_Q, KILN_WGRAD_S  dy's spatial extents, the filter's width;
//   KILN_WGRAD_STRIDE_H/_W, KILN_WGRAD_PAD_H/_W, KILN_WGRAD_DIL_H/_W
//                                           stride, leading padding and dilation;
//   KILN_WGRAD_X_STRIDE_N/_C/_H/_W          x's element strides;
//   KILN_WGRAD_DY_STRIDE_N/_K/_H/_W         dy's element strides.
#if !defined(KILN_WGRAD_KT) || !defined(KILN_WGRAD_DY_STRIDE_W)
#error "conv_wgrad_operands.cuh is included by a generated prologue that specialises it (codegen/conv_grad.rs)"
#endif

__device__ __forceinline__ bool kiln_wgrad_in_x(kiln_idx h, kiln_idx w) {
    return h >= 0 && h < KILN_WGRAD_H && w >= 0 && w < KILN_WGRAD_W;
}

// Each tile column's filter tap (r, s, c), decomposed once per block into a shared-memory table:
// its offset in x and its reach (r·dil_h, s·dil_w); and the first reduction index of this
// block's chunk.
#define KILN_GEMM_BLOCK_SETUP()                                                           \
    __shared__ kiln_idx col_off[BN], col_h[BN], col_w[BN];                                \
    if (tid < BN) {                                                                       \
        const kiln_idx gn = n0 + tid < N ? n0 + tid : N - 1;                              \
        const kiln_idx c_ = gn % KILN_WGRAD_C, rs_ = gn / KILN_WGRAD_C;                   \
        col_h[tid] = (rs_ / KILN_WGRAD_S) * KILN_WGRAD_DIL_H;                             \
        col_w[tid] = (rs_ % KILN_WGRAD_S) * KILN_WGRAD_DIL_W;                             \
        col_off[tid] = c_ * KILN_WGRAD_X_STRIDE_C + col_h[tid] * KILN_WGRAD_X_STRIDE_H    \
                     + col_w[tid] * KILN_WGRAD_X_STRIDE_W;                                \
    }                                                                                     \
    const kiln_idx k_base = (kiln_idx)batch * K;                                          \
    __syncthreads()

// The reduction index (n, p, q), q fastest, of chunk-local index gk.
#define KILN_WGRAD_NPQ(pre, gk)                                                           \
    const kiln_idx pre##g = k_base + (gk);                                                \
    const bool pre##ok = (gk) < K && pre##g < KILN_WGRAD_KT;                              \
    const kiln_idx pre##q = pre##g % KILN_WGRAD_Q, pre##t = pre##g / KILN_WGRAD_Q;        \
    const kiln_idx pre##p = pre##t % KILN_WGRAD_P, pre##n = pre##t / KILN_WGRAD_P;

#define A_KPREP(gk) KILN_WGRAD_NPQ(ka_, gk) \
    const kiln_idx ka_off = ka_n * KILN_WGRAD_DY_STRIDE_N + ka_p * KILN_WGRAD_DY_STRIDE_H + ka_q * KILN_WGRAD_DY_STRIDE_W;
#define LOAD_A(mm, gm) (KILN_GEMM_A[ka_off + (gm) * KILN_WGRAD_DY_STRIDE_K])
#define VLOAD_A(mm, gm) (*reinterpret_cast<const vec_t*>(KILN_GEMM_A + ka_off + (gm) * KILN_WGRAD_DY_STRIDE_K))
#define B_KPREP(gk) KILN_WGRAD_NPQ(kb_, gk) \
    const kiln_idx kb_h = kb_p * KILN_WGRAD_STRIDE_H - KILN_WGRAD_PAD_H, kb_w = kb_q * KILN_WGRAD_STRIDE_W - KILN_WGRAD_PAD_W; \
    const kiln_idx kb_base = kb_n * KILN_WGRAD_X_STRIDE_N + kb_h * KILN_WGRAD_X_STRIDE_H + kb_w * KILN_WGRAD_X_STRIDE_W;
#define LOAD_B(gn) (kiln_wgrad_in_x(kb_h + col_h[(gn) - n0], kb_w + col_w[(gn) - n0]) ? KILN_GEMM_B[kb_base + col_off[(gn) - n0]] : kiln_st<elem_t>(0.0f))
#define VLOAD_B(gn) (kiln_wgrad_in_x(kb_h + col_h[(gn) - n0], kb_w + col_w[(gn) - n0]) ? *reinterpret_cast<const vec_t*>(KILN_GEMM_B + kb_base + col_off[(gn) - n0]) : kiln_vzero())
