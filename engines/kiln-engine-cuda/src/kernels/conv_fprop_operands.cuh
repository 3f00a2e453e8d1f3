// KILN_CUDA_CONV_FPROP_V1: the GEMM operands of a 2-D forward convolution as an implicit GEMM,
// M = N·P·Q output pixels, N = K filters, K = R·S·C with C fastest (so NHWC activations and KRSC
// filters load contiguously). The loads gemm_mainloop.cuh expects (see there). The generated
// prologue defines before the include, as literals of kiln_idx's width:
//   KILN_CONV_H, KILN_CONV_W, KILN_CONV_C    the input's extents (x is N, C, H, W by dims);
//   KILN_CONV_P, KILN_CONV_Q, KILN_CONV_S    the output's spatial extents, the filter's width;
//   KILN_CONV_STRIDE_H/_W, KILN_CONV_PAD_H/_W, KILN_CONV_DIL_H/_W
//                                            stride, leading padding and dilation;
//   KILN_CONV_X_STRIDE_N/_C/_H/_W            x's element strides;
//   KILN_CONV_FILTER_STRIDE_K/_C/_R/_S       the filter's element strides.
#if !defined(KILN_CONV_C) || !defined(KILN_CONV_FILTER_STRIDE_S)
#error "conv_fprop_operands.cuh is included by a generated prologue that specialises it (codegen/gemm.rs)"
#endif

// The input window of output pixel gm (a GEMM row): its base offset in x and its top-left corner
// (h, w), which may lie in the padding.
__device__ __forceinline__ void kiln_conv_window(kiln_idx gm, kiln_idx& base, kiln_idx& h, kiln_idx& w) {
    const kiln_idx q = gm % KILN_CONV_Q, t = gm / KILN_CONV_Q, p = t % KILN_CONV_P, n = t / KILN_CONV_P;
    const kiln_idx hh = p * KILN_CONV_STRIDE_H - KILN_CONV_PAD_H, ww = q * KILN_CONV_STRIDE_W - KILN_CONV_PAD_W;
    base = n * KILN_CONV_X_STRIDE_N + hh * KILN_CONV_X_STRIDE_H + ww * KILN_CONV_X_STRIDE_W;
    h = hh;
    w = ww;
}

__device__ __forceinline__ bool kiln_in_window(kiln_idx h, kiln_idx w) {
    return h >= 0 && h < KILN_CONV_H && w >= 0 && w < KILN_CONV_W;
}

// Each tile row's input window, decomposed once per block into a shared-memory table, so no
// load divides by P or Q.
#define KILN_GEMM_BLOCK_SETUP()                                                  \
    __shared__ kiln_idx row_base[BM], row_h[BM], row_w[BM];                      \
    if (tid < BM) {                                                              \
        const kiln_idx gm = m0 + tid < M ? m0 + tid : M - 1;                     \
        kiln_conv_window(gm, row_base[tid], row_h[tid], row_w[tid]);             \
    }                                                                            \
    __syncthreads()

// K = (r, s, c), c fastest: decomposed once per K index of a thread.
#define A_KPREP(gk) const bool ka_ok = (gk) < K; \
    const kiln_idx ka_c = (gk) % KILN_CONV_C, ka_rs = (gk) / KILN_CONV_C; \
    const kiln_idx ka_h = (ka_rs / KILN_CONV_S) * KILN_CONV_DIL_H, ka_w = (ka_rs % KILN_CONV_S) * KILN_CONV_DIL_W; \
    const kiln_idx ka_off = ka_c * KILN_CONV_X_STRIDE_C + ka_h * KILN_CONV_X_STRIDE_H + ka_w * KILN_CONV_X_STRIDE_W;
#define LOAD_A(mm, gm) (kiln_in_window(row_h[mm] + ka_h, row_w[mm] + ka_w) ? KILN_GEMM_A[row_base[mm] + ka_off] : kiln_st<elem_t>(0.0f))
#define VLOAD_A(mm, gm) (kiln_in_window(row_h[mm] + ka_h, row_w[mm] + ka_w) ? *reinterpret_cast<const vec_t*>(KILN_GEMM_A + row_base[mm] + ka_off) : kiln_vzero())
#define B_KPREP(gk) const bool kb_ok = (gk) < K; \
    const kiln_idx kb_c = (gk) % KILN_CONV_C, kb_rs = (gk) / KILN_CONV_C; \
    const kiln_idx kb_off = kb_c * KILN_CONV_FILTER_STRIDE_C + (kb_rs / KILN_CONV_S) * KILN_CONV_FILTER_STRIDE_R + (kb_rs % KILN_CONV_S) * KILN_CONV_FILTER_STRIDE_S;
#define LOAD_B(gn) (KILN_GEMM_B[(gn) * KILN_CONV_FILTER_STRIDE_K + kb_off])
#define VLOAD_B(gn) (*reinterpret_cast<const vec_t*>(KILN_GEMM_B + (gn) * KILN_CONV_FILTER_STRIDE_K + kb_off))
