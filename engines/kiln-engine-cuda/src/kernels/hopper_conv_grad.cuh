// KILN_CUDA_CONV_DGRAD_V2 and KILN_CUDA_CONV_WGRAD_V2: the gathered A operand of the two 2-D
// convolution gradients as implicit GEMMs on hopper_gemm.cuh's mainloop (which includes this
// header when KILN_H_A_GATHER is 2). The producer warpgroup's 128 threads copy 16-byte chunks
// with cp.async from computed addresses into the stage's 128-byte-swizzled A tile; a chunk that
// lands on no input element (padding, a tap the stride skips, rows or reduction indices past the
// end) is zero-filled by the copy itself. B (the filter for dgrad, dy for wgrad) is loaded by
// the copy engine through the generated kiln_h_tma_b (codegen/hopper_grad.rs).
//
// dgrad (KILN_GRAD_DGRAD 1): dx[N·H·W, C] = dy'[N·H·W, R·S·Kp] * w'[R·S·Kp, C]. The reduction
// runs tap by tap, each tap over the K filters padded to Kp (a multiple of 64), so that a K slice
// of 64 lies in one tap: slice kt is tap kt / (Kp / 64), filters from (kt % (Kp / 64)) · 64. Row
// (n, h, w) meets tap (r, s) at dy's (p, q) = ((h + pad_h − r·dil_h) / stride_h, ...) when both
// divisions are exact and inside dy. A is K-major (dy's filters contiguous, NHWC): thread t
// copies chunk t % 8 (8 filters) of tile rows t / 8 + 16 j.
//   Prologue: KILN_DG_H, _W (dx), _P, _Q (dy), _K (filters), _KP, _S, _STRIDE_H/_W, _PAD_H/_W,
//   _DIL_H/_W, KILN_DG_DY_STRIDE_N/_H/_W (dy's element strides; K is contiguous), KILN_GEMM_A
//   (dy's parameter name).
//
// wgrad (KILN_GRAD_DGRAD 0): dwᵀ[R·S·C, K] = x'[R·S·C, N·P·Q] * dy[N·P·Q, K]. Rows are the
// filter taps (r, s, c), c fastest; the reduction over every output position (n, p, q) is split
// into chunks of KILN_WG_CHUNK (a multiple of 64), chunk b being the mainloop's batch b. A is
// M-major (x's channels contiguous): stored as boxes of 64 reduction rows x 64 taps (128 bytes
// per row), the layout wgmma reads transposed. Thread t copies chunk t % 8 (8 channels) of each
// 64-row box at reduction rows t / 8 + 16 j, so eight threads read one pixel's 64 channels.
//   Prologue: KILN_WG_NPQ, KILN_WG_CHUNK, KILN_WG_H, _W, _C (x), _P, _Q (dy), _S, _STRIDE_H/_W,
//   _PAD_H/_W, _DIL_H/_W, KILN_WG_X_STRIDE_N/_H/_W (x's element strides; C is contiguous),
//   KILN_GEMM_A (x's parameter name).
#if !defined(KILN_GRAD_DGRAD) || !defined(KILN_GEMM_A) || !defined(KILN_H_BM)
#error "hopper_conv_grad.cuh is included by hopper_gemm.cuh, specialised by codegen/hopper_grad.rs"
#endif

#if KILN_GRAD_DGRAD
#if !defined(KILN_DG_KP) || !defined(KILN_DG_DY_STRIDE_W)
#error "the dgrad gather needs its geometry (codegen/hopper_grad.rs)"
#endif
static_assert(KILN_DG_KP % 64 == 0, "each tap's filters are padded to whole K slices");
#define KILN_H_GATHER_ROWS (KILN_H_BM / 16)

#if KILN_DG_PHASED
// A strided dgrad without dilation as stride_h · stride_w phases (the mainloop's batches): phase
// (ph_h, ph_w) = (batch / stride_w, batch % stride_w) holds the dx pixels (n, ph_h + stride_h i,
// ph_w + stride_w j), rows gm = (n, i, j), j fastest; its taps are (r0 + stride_h jh, s0 +
// stride_w jw), r0 = (ph_h + pad_h) mod stride_h, jh < ceil(R / stride_h) (jw alike), each
// meeting the pixel at dy's p = i + (ph_h + pad_h − r0) / stride_h − jh (q alike), with no
// division left to check. Per row: its base in dy and (i + (ph_h + pad_h − r0) / stride_h, ...);
// rows past the phase's pixels get coordinates no tap brings into dy. A phase reduces over its
// own taps only, ceil((R − r0) / stride_h) · ceil((S − s0) / stride_w) of them (none when the
// filter is narrower than the stride there), in slices of 64 filters: KILN_H_K_ITERS_OF.
__device__ __forceinline__ int kiln_dg_taps(int first, int extent, int stride) {
    return first < extent ? (extent - first + stride - 1) / stride : 0;
}
__device__ __forceinline__ int kiln_dg_phase_r0(int batch) {
    return (batch / (int)KILN_DG_STRIDE_W + (int)KILN_DG_PAD_H) % (int)KILN_DG_STRIDE_H;
}
__device__ __forceinline__ int kiln_dg_phase_s0(int batch) {
    return (batch % (int)KILN_DG_STRIDE_W + (int)KILN_DG_PAD_W) % (int)KILN_DG_STRIDE_W;
}
__device__ __forceinline__ int kiln_dg_phase_iters(int batch) {
    return kiln_dg_taps(kiln_dg_phase_r0(batch), (int)KILN_DG_R, (int)KILN_DG_STRIDE_H) *
           kiln_dg_taps(kiln_dg_phase_s0(batch), (int)KILN_DG_S, (int)KILN_DG_STRIDE_W) * ((int)KILN_DG_KP / 64);
}
#define KILN_H_K_ITERS_OF(batch) kiln_dg_phase_iters(batch)
__device__ __forceinline__ void kiln_dg_pixel(kiln_idx gm, int batch, kiln_idx& base, int& h, int& w) {
    const int ph_h = batch / (int)KILN_DG_STRIDE_W, ph_w = batch % (int)KILN_DG_STRIDE_W;
    const kiln_idx j = gm % KILN_DG_WQ, rr = gm / KILN_DG_WQ, i = rr % KILN_DG_HQ, n = rr / KILN_DG_HQ;
    if (gm >= KILN_GEMM_M || ph_h + (int)KILN_DG_STRIDE_H * (int)i >= (int)KILN_DG_H ||
        ph_w + (int)KILN_DG_STRIDE_W * (int)j >= (int)KILN_DG_W) {
        base = 0;
        h = -(1 << 30);
        w = -(1 << 30);
        return;
    }
    base = n * KILN_DG_DY_STRIDE_N;
    h = (int)i + (ph_h + (int)KILN_DG_PAD_H) / (int)KILN_DG_STRIDE_H;
    w = (int)j + (ph_w + (int)KILN_DG_PAD_W) / (int)KILN_DG_STRIDE_W;
}

#define KILN_H_GATHER_TILE_SETUP(m0)                                                   \
    kiln_idx g_base[KILN_H_GATHER_ROWS];                                               \
    int g_h[KILN_H_GATHER_ROWS], g_w[KILN_H_GATHER_ROWS];                              \
    _Pragma("unroll") for (int j = 0; j < KILN_H_GATHER_ROWS; ++j)                     \
        kiln_dg_pixel((kiln_idx)(m0) + t / 8 + 16 * j, batch, g_base[j], g_h[j], g_w[j]); \
    const int g_tw = max(kiln_dg_taps(kiln_dg_phase_s0(batch), (int)KILN_DG_S, (int)KILN_DG_STRIDE_W), 1)

#define kiln_h_gather_a(dst, t, k0) kiln_dg_gather(dst, t, k0, g_base, g_h, g_w, g_tw, KILN_GEMM_A)

__device__ __forceinline__ void kiln_dg_gather(unsigned dst, int t, int k0, const kiln_idx (&base)[KILN_H_GATHER_ROWS],
                                               const int (&h)[KILN_H_GATHER_ROWS], const int (&w)[KILN_H_GATHER_ROWS],
                                               int tw, const elem_t* __restrict__ dy) {
    const int q = t % 8, r0w = t / 8;
    const int tap = k0 / (int)KILN_DG_KP;
    const int kf = k0 - tap * (int)KILN_DG_KP + 8 * q;
    // The phase's taps, tw of them per filter row (every one inside the filter).
    const int jh = tap / tw, jw = tap % tw;
    const bool k_ok = kf < (int)KILN_DG_K;
#pragma unroll
    for (int j = 0; j < KILN_H_GATHER_ROWS; ++j) {
        const int row = r0w + 16 * j;
        const int p = h[j] - jh, pq = w[j] - jw;
        const bool ok = k_ok && p >= 0 && pq >= 0 && p < (int)KILN_DG_P && pq < (int)KILN_DG_Q;
        const elem_t* src = ok ? dy + base[j] + (kiln_idx)p * KILN_DG_DY_STRIDE_H + (kiln_idx)pq * KILN_DG_DY_STRIDE_W + kf : dy;
        kiln_cp_async_16(dst + row * 128 + ((q ^ (row & 7)) << 4), src, ok ? 16u : 0u);
    }
}

#else
// Row gm's image: its base offset in dy (the batch) and (h + pad_h, w + pad_w); rows past M get
// coordinates from which no tap reaches dy.
__device__ __forceinline__ void kiln_dg_pixel(kiln_idx gm, kiln_idx& base, int& h, int& w) {
    if (gm >= KILN_GEMM_M) {
        base = 0;
        h = -(1 << 30);
        w = -(1 << 30);
        return;
    }
    const kiln_idx x = gm % KILN_DG_W, r = gm / KILN_DG_W, y = r % KILN_DG_H, n = r / KILN_DG_H;
    base = n * KILN_DG_DY_STRIDE_N;
    h = (int)y + (int)KILN_DG_PAD_H;
    w = (int)x + (int)KILN_DG_PAD_W;
}

#define KILN_H_GATHER_TILE_SETUP(m0)                                                   \
    kiln_idx g_base[KILN_H_GATHER_ROWS];                                               \
    int g_h[KILN_H_GATHER_ROWS], g_w[KILN_H_GATHER_ROWS];                              \
    _Pragma("unroll") for (int j = 0; j < KILN_H_GATHER_ROWS; ++j)                     \
        kiln_dg_pixel((kiln_idx)(m0) + t / 8 + 16 * j, g_base[j], g_h[j], g_w[j])

#define kiln_h_gather_a(dst, t, k0) kiln_dg_gather(dst, t, k0, g_base, g_h, g_w, KILN_GEMM_A)

__device__ __forceinline__ void kiln_dg_gather(unsigned dst, int t, int k0, const kiln_idx (&base)[KILN_H_GATHER_ROWS],
                                               const int (&h)[KILN_H_GATHER_ROWS], const int (&w)[KILN_H_GATHER_ROWS],
                                               const elem_t* __restrict__ dy) {
    const int q = t % 8, r0 = t / 8;
    const int tap = k0 / (int)KILN_DG_KP;
    const int kf = k0 - tap * (int)KILN_DG_KP + 8 * q;
    const bool k_ok = kf < (int)KILN_DG_K;
    const int dh = (tap / (int)KILN_DG_S) * (int)KILN_DG_DIL_H, dw = (tap % (int)KILN_DG_S) * (int)KILN_DG_DIL_W;
#pragma unroll
    for (int j = 0; j < KILN_H_GATHER_ROWS; ++j) {
        const int row = r0 + 16 * j;
        const int ph = h[j] - dh, pw = w[j] - dw;
        bool ok = k_ok && ph >= 0 && pw >= 0;
#if KILN_DG_STRIDE_H > 1
        ok = ok && ph % (int)KILN_DG_STRIDE_H == 0;
#endif
#if KILN_DG_STRIDE_W > 1
        ok = ok && pw % (int)KILN_DG_STRIDE_W == 0;
#endif
        const int p = ph / (int)KILN_DG_STRIDE_H, pq = pw / (int)KILN_DG_STRIDE_W;
        ok = ok && p < (int)KILN_DG_P && pq < (int)KILN_DG_Q;
        const elem_t* src = ok ? dy + base[j] + (kiln_idx)p * KILN_DG_DY_STRIDE_H + (kiln_idx)pq * KILN_DG_DY_STRIDE_W + kf : dy;
        kiln_cp_async_16(dst + row * 128 + ((q ^ (row & 7)) << 4), src, ok ? 16u : 0u);
    }
}
#endif  // KILN_DG_PHASED

#else  // wgrad
#if !defined(KILN_WG_CHUNK) || !defined(KILN_WG_X_STRIDE_W)
#error "the wgrad gather needs its geometry (codegen/hopper_grad.rs)"
#endif
#define KILN_WG_BOXES (KILN_H_BM / 64)

// Tap column gm's offset in x (its channel and filter reach) and reach (r·dil_h, s·dil_w);
// columns past M get a reach that never lands in the image.
__device__ __forceinline__ void kiln_wg_tap(kiln_idx gm, kiln_idx& off, int& dh, int& dw) {
    if (gm >= KILN_GEMM_M) {
        off = 0;
        dh = 1 << 30;
        dw = 0;
        return;
    }
    const kiln_idx c = gm % KILN_WG_C, rs = gm / KILN_WG_C;
    dh = (int)((rs / KILN_WG_S) * KILN_WG_DIL_H);
    dw = (int)((rs % KILN_WG_S) * KILN_WG_DIL_W);
    off = c + (kiln_idx)dh * KILN_WG_X_STRIDE_H + (kiln_idx)dw * KILN_WG_X_STRIDE_W;
}

// Per tile: the taps of this thread's chunk in each 64-column box, and the first reduction index
// of this tile's chunk (`batch` is the tile's chunk, in scope in the producer's loop).
#define KILN_H_GATHER_TILE_SETUP(m0)                                                   \
    kiln_idx g_off[KILN_WG_BOXES];                                                     \
    int g_dh[KILN_WG_BOXES], g_dw[KILN_WG_BOXES];                                      \
    _Pragma("unroll") for (int b = 0; b < KILN_WG_BOXES; ++b)                          \
        kiln_wg_tap((kiln_idx)(m0) + 64 * b + 8 * (t % 8), g_off[b], g_dh[b], g_dw[b]);   \
    const kiln_idx g_red0 = (kiln_idx)batch * KILN_WG_CHUNK

#define kiln_h_gather_a(dst, t, k0) kiln_wg_gather(dst, t, g_red0 + (k0), g_off, g_dh, g_dw, KILN_GEMM_A)

__device__ __forceinline__ void kiln_wg_gather(unsigned dst, int t, kiln_idx red0, const kiln_idx (&off)[KILN_WG_BOXES],
                                               const int (&dh)[KILN_WG_BOXES], const int (&dw)[KILN_WG_BOXES],
                                               const elem_t* __restrict__ x) {
    const int q = t % 8, r0 = t / 8;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int row = r0 + 16 * j;
        const kiln_idx g = red0 + row;
        const bool g_ok = g < KILN_WG_NPQ;
        const kiln_idx pq = g % KILN_WG_Q, rr = g / KILN_WG_Q, pp = rr % KILN_WG_P, n = rr / KILN_WG_P;
        const int h0 = (int)(pp * KILN_WG_STRIDE_H) - (int)KILN_WG_PAD_H, w0 = (int)(pq * KILN_WG_STRIDE_W) - (int)KILN_WG_PAD_W;
        const kiln_idx base = n * KILN_WG_X_STRIDE_N + (kiln_idx)h0 * KILN_WG_X_STRIDE_H + (kiln_idx)w0 * KILN_WG_X_STRIDE_W;
#pragma unroll
        for (int b = 0; b < KILN_WG_BOXES; ++b) {
            const int hh = h0 + dh[b], ww = w0 + dw[b];
            const bool ok = g_ok && hh >= 0 && hh < (int)KILN_WG_H && ww >= 0 && ww < (int)KILN_WG_W;
            const elem_t* src = ok ? x + base + off[b] : x;
            kiln_cp_async_16(dst + b * 8192 + row * 128 + ((q ^ (row & 7)) << 4), src, ok ? 16u : 0u);
        }
    }
}
#endif
