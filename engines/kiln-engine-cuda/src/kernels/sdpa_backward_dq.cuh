// KILN_CUDA_SDPA_FA2_V1 backward, dq: one block per (64 query rows, query head, batch), four
// warps of 16 rows. Q and dO stay in registers as A fragments; D = rowsum(dO * O) is reduced
// from them; each key/value tile of KILN_BN rows is staged in shared memory (K row-major for
// S = Q K^T, K transposed for dq += dS K, V row-major for dP = dO V^T). P = exp(S - stats) and
// dS = P (dP - D) never leave registers. dk and dv are the other kernel's (no atomics, no
// workspace). The prologue also defines KILN_BN.
#include "sdpa_common.cuh"

#define KILN_BM 64

extern "C" __global__ void __launch_bounds__(128) KILN_SDPA_SYMBOL(KILN_SDPA_PARAMS) {
    __shared__ __align__(16) elem_t Ks[KILN_BN][KILN_D_QK + KILN_PAD];
    __shared__ __align__(16) elem_t Kt[KILN_D_QK][KILN_BN + KILN_PAD];
    __shared__ __align__(16) elem_t Vs[KILN_BN][KILN_D_V + KILN_PAD];
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * KILN_BM;
    const int hk = h / KILN_GROUP;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
    const float scale = KILN_SCALE;
    const int rows[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};

    unsigned qa[KILN_D_QK / 16][4], da[KILN_D_V / 16][4];
    float delta[2] = {0.0f, 0.0f}, lse[2];
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
#pragma unroll
    for (int ks = 0; ks < KILN_D_V / 16; ++ks) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int i = rows[r & 1], d = ks * 16 + 2 * t + ((r & 2) ? 8 : 0);
            float lo = 0.0f, hi = 0.0f;
            if (i < KILN_SEQ_Q) {
                lo = kiln_ld(KILN_DO[KILN_DO_OFF(b, h, i, d)]);
                hi = kiln_ld(KILN_DO[KILN_DO_OFF(b, h, i, d + 1)]);
                delta[r & 1] += lo * kiln_ld(KILN_O[KILN_O_OFF(b, h, i, d)]) +
                                hi * kiln_ld(KILN_O[KILN_O_OFF(b, h, i, d + 1)]);
            }
            da[ks][r] = kiln_pack(lo, hi);
        }
    }
    int rlo[2], rhi[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        delta[r] += __shfl_xor_sync(0xffffffff, delta[r], 1);
        delta[r] += __shfl_xor_sync(0xffffffff, delta[r], 2);
        lse[r] = rows[r] < KILN_SEQ_Q ? KILN_STATS[KILN_STATS_OFF(b, h, rows[r], 0)] : KILN_NEG_INF;
        kiln_keys(rows[r], lq, lkv, rlo[r], rhi[r]);
    }
    float dq[KILN_D_QK / 8][4];
#pragma unroll
    for (int dn = 0; dn < KILN_D_QK / 8; ++dn)
#pragma unroll
        for (int e = 0; e < 4; ++e) dq[dn][e] = 0.0f;

    int span_lo = 0, span_hi = 0;
    if (q0 < lq) kiln_span(q0, min(q0 + KILN_BM, lq) - 1, lq, lkv, span_lo, span_hi);
    for (int j0 = span_lo; j0 < span_hi; j0 += KILN_BN) {
        __syncthreads();
        kiln_stage(KILN_K, KILN_VEC_K, KILN_BN, KILN_D_QK, j0, span_hi,
                   [&](int j, int d) { return KILN_K_OFF(b, hk, j, d); },
                   [&](int r, int d, elem_t x) { Ks[r][d] = x; Kt[d][r] = x; },
                   [&](int r, int d, const kiln_vec8& x) {
                       *reinterpret_cast<kiln_vec8*>(&Ks[r][d]) = x;
#pragma unroll
                       for (int i = 0; i < 8; ++i) Kt[d + i][r] = x.v[i];
                   });
        kiln_stage(KILN_V, KILN_VEC_V, KILN_BN, KILN_D_V, j0, span_hi,
                   [&](int j, int d) { return KILN_V_OFF(b, hk, j, d); },
                   [&](int r, int d, elem_t x) { Vs[r][d] = x; },
                   [&](int r, int d, const kiln_vec8& x) { *reinterpret_cast<kiln_vec8*>(&Vs[r][d]) = x; });
        __syncthreads();

        float s[KILN_BN / 8][4], dp[KILN_BN / 8][4];
#pragma unroll
        for (int nt = 0; nt < KILN_BN / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) s[nt][e] = dp[nt][e] = 0.0f;
#pragma unroll
            for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
                const unsigned kb[2] = {kiln_ld2(&Ks[nt * 8 + g][ks * 16 + 2 * t]),
                                        kiln_ld2(&Ks[nt * 8 + g][ks * 16 + 2 * t + 8])};
                kiln_mma(s[nt], qa[ks], kb);
            }
#pragma unroll
            for (int ks = 0; ks < KILN_D_V / 16; ++ks) {
                const unsigned vb[2] = {kiln_ld2(&Vs[nt * 8 + g][ks * 16 + 2 * t]),
                                        kiln_ld2(&Vs[nt * 8 + g][ks * 16 + 2 * t + 8])};
                kiln_mma(dp[nt], da[ks], vb);
            }
        }
#pragma unroll
        for (int nt = 0; nt < KILN_BN / 8; ++nt) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int r = e >> 1, i = rows[r], j = j0 + nt * 8 + 2 * t + (e & 1);
                const bool ok = i < lq && j >= rlo[r] && j < rhi[r] && lse[r] != KILN_NEG_INF;
                const float p = ok ? __expf(s[nt][e] * scale + KILN_BIAS_AT(b, h, i, j) - lse[r]) : 0.0f;
                s[nt][e] = p * (dp[nt][e] - delta[r]);
            }
        }
        // dq += dS K (scaled at the end).
#pragma unroll
        for (int kk = 0; kk < KILN_BN / 16; ++kk) {
            const unsigned sa[4] = {kiln_pack(s[2 * kk][0], s[2 * kk][1]),
                                    kiln_pack(s[2 * kk][2], s[2 * kk][3]),
                                    kiln_pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                    kiln_pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int dn = 0; dn < KILN_D_QK / 8; ++dn) {
                const unsigned kb[2] = {kiln_ld2(&Kt[dn * 8 + g][kk * 16 + 2 * t]),
                                        kiln_ld2(&Kt[dn * 8 + g][kk * 16 + 2 * t + 8])};
                kiln_mma(dq[dn], sa, kb);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int i = rows[r];
        if (i >= KILN_SEQ_Q) continue;
#pragma unroll
        for (int dn = 0; dn < KILN_D_QK / 8; ++dn) {
            const int d = dn * 8 + 2 * t;
            KILN_DQ[KILN_DQ_OFF(b, h, i, d)] = kiln_st<KILN_DQ_T>(dq[dn][2 * r] * scale);
            KILN_DQ[KILN_DQ_OFF(b, h, i, d + 1)] = kiln_st<KILN_DQ_T>(dq[dn][2 * r + 1] * scale);
        }
    }
}
