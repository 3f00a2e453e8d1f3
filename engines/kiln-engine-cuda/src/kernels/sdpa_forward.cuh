// KILN_CUDA_SDPA_FA2_V1 forward: FlashAttention-2's algorithm on mma.sync tensor cores.
// One block per (64 query rows, query head, batch), four warps of 16 rows each. Q stays in
// registers as A fragments; each key/value tile of KILN_BN rows is staged in shared memory (K
// row-major, V transposed so that its B fragments are single 32-bit reads); S = Q K^T is
// scaled, biased and masked in registers, the online softmax rescales the f32 output
// accumulator, and P (rounded to elem_t) is fed back as the A fragments of P V without leaving
// registers. Only key tiles that some row of the block may see are visited. The grid covers the
// graph's S_q; rows past a batch's length are fully masked and written as zeros (stats -inf).
// The prologue also defines KILN_BN (keys per tile, a multiple of 16).
#include "sdpa_common.cuh"

#define KILN_BM 64

extern "C" __global__ void __launch_bounds__(128) KILN_SDPA_SYMBOL(KILN_SDPA_PARAMS) {
    __shared__ __align__(16) elem_t Ks[KILN_BN][KILN_D_QK + KILN_PAD];
    __shared__ __align__(16) elem_t Vt[KILN_D_V][KILN_BN + KILN_PAD];
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * KILN_BM;
    const int hk = h / KILN_GROUP;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
    const float scale = KILN_SCALE;
    const int rows[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};

    // Q fragments of this warp's 16 rows.
    unsigned qa[KILN_D_QK / 16][4];
#pragma unroll
    for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int i = rows[r & 1], d = ks * 16 + 2 * t + ((r & 2) ? 8 : 0);
            float lo = 0.0f, hi = 0.0f;
            if (i < KILN_SEQ_Q) {
                lo = kiln_ld(KILN_Q[KILN_Q_OFF(b, h, i, d)]);
                hi = kiln_ld(KILN_Q[KILN_Q_OFF(b, h, i, d + 1)]);
            }
            qa[ks][r] = kiln_pack(lo, hi);
        }
    }
    int rlo[2], rhi[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) kiln_keys(rows[r], lq, lkv, rlo[r], rhi[r]);

    float m[2] = {KILN_NEG_INF, KILN_NEG_INF}, l[2] = {0.0f, 0.0f};
    float o[KILN_D_V / 8][4];
#pragma unroll
    for (int dn = 0; dn < KILN_D_V / 8; ++dn)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[dn][e] = 0.0f;

    int span_lo = 0, span_hi = 0;
    if (q0 < lq) {
        const int last = min(q0 + KILN_BM, lq) - 1;
        kiln_span(q0, last, lq, lkv, span_lo, span_hi);
    }
    for (int j0 = span_lo; j0 < span_hi; j0 += KILN_BN) {
        __syncthreads();
        // Keys past the span are zeros: masked anyway, and never NaN from padding memory.
        kiln_stage(KILN_K, KILN_VEC_K, KILN_BN, KILN_D_QK, j0, span_hi,
                   [&](int j, int d) { return KILN_K_OFF(b, hk, j, d); },
                   [&](int r, int d, elem_t x) { Ks[r][d] = x; },
                   [&](int r, int d, const kiln_vec8& x) { *reinterpret_cast<kiln_vec8*>(&Ks[r][d]) = x; });
        kiln_stage(KILN_V, KILN_VEC_V, KILN_BN, KILN_D_V, j0, span_hi,
                   [&](int j, int d) { return KILN_V_OFF(b, hk, j, d); },
                   [&](int r, int d, elem_t x) { Vt[d][r] = x; },
                   [&](int r, int d, const kiln_vec8& x) {
#pragma unroll
                       for (int i = 0; i < 8; ++i) Vt[d + i][r] = x.v[i];
                   });
        __syncthreads();

        float s[KILN_BN / 8][4];
#pragma unroll
        for (int nt = 0; nt < KILN_BN / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) s[nt][e] = 0.0f;
#pragma unroll
            for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
                const unsigned kb[2] = {kiln_ld2(&Ks[nt * 8 + g][ks * 16 + 2 * t]),
                                        kiln_ld2(&Ks[nt * 8 + g][ks * 16 + 2 * t + 8])};
                kiln_mma(s[nt], qa[ks], kb);
            }
        }
        // Scale, bias and mask; each row's max over the tile (a quad holds one row's keys).
        float mx[2] = {KILN_NEG_INF, KILN_NEG_INF};
#pragma unroll
        for (int nt = 0; nt < KILN_BN / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = e >> 1, i = rows[r], j = j0 + nt * 8 + 2 * t + (e & 1);
                const bool ok = i < lq && j >= rlo[r] && j < rhi[r];
                s[nt][e] = ok ? s[nt][e] * scale + KILN_BIAS_AT(b, h, i, j) : KILN_NEG_INF;
                mx[r] = fmaxf(mx[r], s[nt][e]);
            }
        }
        float corr[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffff, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffff, mx[r], 2));
            const float m_new = fmaxf(m[r], mx[r]);
            corr[r] = m_new == KILN_NEG_INF ? 1.0f : __expf(m[r] - m_new);
            m[r] = m_new;
            l[r] *= corr[r];
        }
#pragma unroll
        for (int nt = 0; nt < KILN_BN / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = e >> 1;
                const float p = m[r] == KILN_NEG_INF ? 0.0f : __expf(s[nt][e] - m[r]);
                s[nt][e] = p;
                l[r] += p;
            }
        }
#pragma unroll
        for (int dn = 0; dn < KILN_D_V / 8; ++dn) {
            o[dn][0] *= corr[0];
            o[dn][1] *= corr[0];
            o[dn][2] *= corr[1];
            o[dn][3] *= corr[1];
        }
        // O += P V: the C fragments of two key tiles of 8 are the A fragment of 16 keys.
#pragma unroll
        for (int kk = 0; kk < KILN_BN / 16; ++kk) {
            const unsigned pa[4] = {kiln_pack(s[2 * kk][0], s[2 * kk][1]),
                                    kiln_pack(s[2 * kk][2], s[2 * kk][3]),
                                    kiln_pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                    kiln_pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dn = 0; dn < KILN_D_V / 8; ++dn) {
                const unsigned vb[2] = {kiln_ld2(&Vt[dn * 8 + g][kk * 16 + 2 * t]),
                                        kiln_ld2(&Vt[dn * 8 + g][kk * 16 + 2 * t + 8])};
                kiln_mma(o[dn], pa, vb);
            }
        }
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        l[r] += __shfl_xor_sync(0xffffffff, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffff, l[r], 2);
        const int i = rows[r];
        if (i >= KILN_SEQ_Q) continue;
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#pragma unroll
        for (int dn = 0; dn < KILN_D_V / 8; ++dn) {
            const int d = dn * 8 + 2 * t;
            KILN_O[KILN_O_OFF(b, h, i, d)] = kiln_st<KILN_O_T>(o[dn][2 * r] * inv);
            KILN_O[KILN_O_OFF(b, h, i, d + 1)] = kiln_st<KILN_O_T>(o[dn][2 * r + 1] * inv);
        }
#if KILN_HAS_STATS
        if (t == 0) {
            KILN_STATS[KILN_STATS_OFF(b, h, i, 0)] = l[r] > 0.0f ? m[r] + logf(l[r]) : KILN_NEG_INF;
        }
#endif
    }
}
