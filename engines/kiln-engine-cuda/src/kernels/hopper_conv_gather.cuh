// KILN_CUDA_CONV_FPROP_V2: the A operand of a 2-D forward convolution as an implicit GEMM
// (M = N·P·Q output pixels, K = R·S·C with C fastest), gathered by the producer warpgroup's 128
// threads with 16-byte cp.async from computed addresses into hopper_gemm.cuh's K-major,
// 128-byte-swizzled A tile. Padding and rows past M are zero-filled by the copy itself. Thread
// t copies the 16-byte chunk t % 8 (8 channels) of tile rows t / 8, t / 8 + 16, ...: eight
// threads read one pixel's 64 channels, 128 contiguous bytes of an NHWC tensor.
//
// The generated prologue defines before the include (literals of kiln_idx's width):
//   KILN_CONV_H, _W, _C, _P, _Q, _S, KILN_CONV_STRIDE_H/_W, KILN_CONV_PAD_H/_W, KILN_CONV_DIL_H/_W,
//   KILN_CONV_X_STRIDE_N/_H/_W (x's element strides; C is contiguous), KILN_GEMM_A (x's
//   parameter name, read inside the kernel).
#if !defined(KILN_CONV_C) || !defined(KILN_CONV_X_STRIDE_W) || !defined(KILN_GEMM_A)
#error "hopper_conv_gather.cuh is included by a generated prologue that specialises it (codegen/hopper.rs)"
#endif

#define KILN_H_GATHER_ROWS (KILN_H_BM / 16)

// Output pixel gm's input window: its base offset in x and top-left corner (h, w), which may
// lie in the padding; rows past M get a corner that no filter tap brings into the image.
__device__ __forceinline__ void kiln_h_conv_window(kiln_idx gm, kiln_idx& base, int& h, int& w) {
    if (gm >= KILN_GEMM_M) {
        base = 0;
        h = -(1 << 30);
        w = -(1 << 30);
        return;
    }
    const kiln_idx q = gm % KILN_CONV_Q, r = gm / KILN_CONV_Q, p = r % KILN_CONV_P, n = r / KILN_CONV_P;
    const kiln_idx hh = p * KILN_CONV_STRIDE_H - KILN_CONV_PAD_H, ww = q * KILN_CONV_STRIDE_W - KILN_CONV_PAD_W;
    base = n * KILN_CONV_X_STRIDE_N + hh * KILN_CONV_X_STRIDE_H + ww * KILN_CONV_X_STRIDE_W;
    h = (int)hh;
    w = (int)ww;
}

// Per tile: the windows of this thread's rows.
#define KILN_H_GATHER_TILE_SETUP(m0)                                                   \
    kiln_idx g_base[KILN_H_GATHER_ROWS];                                               \
    int g_h[KILN_H_GATHER_ROWS], g_w[KILN_H_GATHER_ROWS];                              \
    _Pragma("unroll") for (int j = 0; j < KILN_H_GATHER_ROWS; ++j)                     \
        kiln_h_conv_window((kiln_idx)(m0) + t / 8 + 16 * j, g_base[j], g_h[j], g_w[j])

// One K slice [k0, k0 + 64) of this thread's rows into the stage's A tile at `dst`.
#define kiln_h_gather_a(dst, t, k0) kiln_h_conv_gather(dst, t, k0, g_base, g_h, g_w, KILN_GEMM_A)

__device__ __forceinline__ void kiln_h_conv_gather(unsigned dst, int t, int k0, const kiln_idx (&base)[KILN_H_GATHER_ROWS],
                                                   const int (&h)[KILN_H_GATHER_ROWS], const int (&w)[KILN_H_GATHER_ROWS],
                                                   const elem_t* __restrict__ x) {
    const int q = t % 8, r0 = t / 8;
    const kiln_idx k = (kiln_idx)k0 + 8 * q;
    const bool k_ok = k < KILN_GEMM_K;
    const kiln_idx c = k % KILN_CONV_C, rs = k / KILN_CONV_C;
    const int dh = (int)((rs / KILN_CONV_S) * KILN_CONV_DIL_H), dw = (int)((rs % KILN_CONV_S) * KILN_CONV_DIL_W);
    const kiln_idx off = c + dh * KILN_CONV_X_STRIDE_H + dw * KILN_CONV_X_STRIDE_W;
#pragma unroll
    for (int j = 0; j < KILN_H_GATHER_ROWS; ++j) {
        const int row = r0 + 16 * j;
        const int hh = h[j] + dh, ww = w[j] + dw;
        const bool ok = k_ok && hh >= 0 && hh < KILN_CONV_H && ww >= 0 && ww < KILN_CONV_W;
        const elem_t* src = ok ? x + base[j] + off : x;
        kiln_cp_async_16(dst + row * 128 + ((q ^ (row & 7)) << 4), src, ok ? 16u : 0u);
    }
}
