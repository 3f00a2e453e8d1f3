// KILN_CUDA_SDPA_FA2_V1 backward, dk and dv: one block per (64 keys, key/value head, batch),
// four warps of 16 keys. K and V stay in registers as A fragments; the block walks every query
// head of its GQA group and every tile of KILN_BMQ query rows that may see its keys, staging Q
// and dO in shared memory both row-major and transposed (the B fragments of K Q^T and V dO^T,
// and of P^T dO and dS^T Q), with each row's stats and D = rowsum(dO * O). P^T and dS^T never
// leave registers. No atomics: each block owns its keys. The prologue also defines KILN_BMQ.
#include "sdpa_common.cuh"

#define KILN_BK 64

extern "C" __global__ void __launch_bounds__(128) KILN_SDPA_SYMBOL(KILN_SDPA_PARAMS) {
    __shared__ __align__(16) elem_t Qs[KILN_BMQ][KILN_D_QK + KILN_PAD];
    __shared__ __align__(16) elem_t Qt[KILN_D_QK][KILN_BMQ + KILN_PAD];
    __shared__ __align__(16) elem_t Ds[KILN_BMQ][KILN_D_V + KILN_PAD];
    __shared__ __align__(16) elem_t Dt[KILN_D_V][KILN_BMQ + KILN_PAD];
    __shared__ float lse_s[KILN_BMQ], delta_s[KILN_BMQ];
    const int b = blockIdx.z, hk = blockIdx.y, k0 = blockIdx.x * KILN_BK;
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
    const float scale = KILN_SCALE;
    const int keys[2] = {k0 + warp * 16 + g, k0 + warp * 16 + g + 8};

    unsigned ka[KILN_D_QK / 16][4], va[KILN_D_V / 16][4];
#pragma unroll
    for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int j = keys[r & 1], d = ks * 16 + 2 * t + ((r & 2) ? 8 : 0);
            float lo = 0.0f, hi = 0.0f;
            if (j < lkv) {
                lo = kiln_ld(KILN_K[KILN_K_OFF(b, hk, j, d)]);
                hi = kiln_ld(KILN_K[KILN_K_OFF(b, hk, j, d + 1)]);
            }
            ka[ks][r] = kiln_pack(lo, hi);
        }
    }
#pragma unroll
    for (int ks = 0; ks < KILN_D_V / 16; ++ks) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int j = keys[r & 1], d = ks * 16 + 2 * t + ((r & 2) ? 8 : 0);
            float lo = 0.0f, hi = 0.0f;
            if (j < lkv) {
                lo = kiln_ld(KILN_V[KILN_V_OFF(b, hk, j, d)]);
                hi = kiln_ld(KILN_V[KILN_V_OFF(b, hk, j, d + 1)]);
            }
            va[ks][r] = kiln_pack(lo, hi);
        }
    }
    float dk[KILN_D_QK / 8][4], dv[KILN_D_V / 8][4];
#pragma unroll
    for (int dn = 0; dn < KILN_D_QK / 8; ++dn)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[dn][e] = 0.0f;
#pragma unroll
    for (int dn = 0; dn < KILN_D_V / 8; ++dn)
#pragma unroll
        for (int e = 0; e < 4; ++e) dv[dn][e] = 0.0f;

    const int kend = min(k0 + KILN_BK, lkv);
    for (int h = hk * KILN_GROUP; h < (hk + 1) * KILN_GROUP; ++h) {
        for (int i0 = 0; i0 < lq && k0 < kend; i0 += KILN_BMQ) {
            int lo, hi;
            kiln_span(i0, min(i0 + KILN_BMQ, lq) - 1, lq, lkv, lo, hi);
            if (hi <= k0 || lo >= kend) continue;
            __syncthreads();
            kiln_stage(KILN_Q, KILN_VEC_Q, KILN_BMQ, KILN_D_QK, i0, lq,
                       [&](int i, int d) { return KILN_Q_OFF(b, h, i, d); },
                       [&](int r, int d, elem_t x) { Qs[r][d] = x; Qt[d][r] = x; },
                       [&](int r, int d, const kiln_vec8& x) {
                           *reinterpret_cast<kiln_vec8*>(&Qs[r][d]) = x;
#pragma unroll
                           for (int i = 0; i < 8; ++i) Qt[d + i][r] = x.v[i];
                       });
            kiln_stage(KILN_DO, KILN_VEC_DO, KILN_BMQ, KILN_D_V, i0, lq,
                       [&](int i, int d) { return KILN_DO_OFF(b, h, i, d); },
                       [&](int r, int d, elem_t x) { Ds[r][d] = x; Dt[d][r] = x; },
                       [&](int r, int d, const kiln_vec8& x) {
                           *reinterpret_cast<kiln_vec8*>(&Ds[r][d]) = x;
#pragma unroll
                           for (int i = 0; i < 8; ++i) Dt[d + i][r] = x.v[i];
                       });
            // Each warp reduces D for a quarter of the rows, its lanes across the head dim.
            for (int r = warp; r < KILN_BMQ; r += 4) {
                const int i = i0 + r;
                float acc = 0.0f;
                if (i < lq) {
                    for (int d = lane; d < KILN_D_V; d += 32) {
                        acc += kiln_ld(KILN_DO[KILN_DO_OFF(b, h, i, d)]) * kiln_ld(KILN_O[KILN_O_OFF(b, h, i, d)]);
                    }
                }
#pragma unroll
                for (int x = 16; x > 0; x >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, x);
                if (lane == 0) {
                    delta_s[r] = acc;
                    lse_s[r] = i < lq ? KILN_STATS[KILN_STATS_OFF(b, h, i, 0)] : KILN_NEG_INF;
                }
            }
            __syncthreads();

            float p[KILN_BMQ / 8][4], ds[KILN_BMQ / 8][4];
#pragma unroll
            for (int nt = 0; nt < KILN_BMQ / 8; ++nt) {
#pragma unroll
                for (int e = 0; e < 4; ++e) p[nt][e] = ds[nt][e] = 0.0f;
#pragma unroll
                for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
                    const unsigned qb[2] = {kiln_ld2(&Qs[nt * 8 + g][ks * 16 + 2 * t]),
                                            kiln_ld2(&Qs[nt * 8 + g][ks * 16 + 2 * t + 8])};
                    kiln_mma(p[nt], ka[ks], qb);
                }
#pragma unroll
                for (int ks = 0; ks < KILN_D_V / 16; ++ks) {
                    const unsigned db[2] = {kiln_ld2(&Ds[nt * 8 + g][ks * 16 + 2 * t]),
                                            kiln_ld2(&Ds[nt * 8 + g][ks * 16 + 2 * t + 8])};
                    kiln_mma(ds[nt], va[ks], db);
                }
            }
            // Element (key keys[e >> 1], query i): P^T and dS^T = P^T (dP^T - D).
#pragma unroll
            for (int nt = 0; nt < KILN_BMQ / 8; ++nt) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int j = keys[e >> 1], r = nt * 8 + 2 * t + (e & 1), i = i0 + r;
                    const float ls = lse_s[r];
                    const bool ok = j < kend && kiln_visible(i, j, lq, lkv) && ls != KILN_NEG_INF;
                    const float pv = ok ? __expf(p[nt][e] * scale + KILN_BIAS_AT(b, h, i, j) - ls) : 0.0f;
                    p[nt][e] = pv;
                    ds[nt][e] = pv * (ds[nt][e] - delta_s[r]);
                }
            }
#pragma unroll
            for (int kk = 0; kk < KILN_BMQ / 16; ++kk) {
                const unsigned pa[4] = {kiln_pack(p[2 * kk][0], p[2 * kk][1]),
                                        kiln_pack(p[2 * kk][2], p[2 * kk][3]),
                                        kiln_pack(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                                        kiln_pack(p[2 * kk + 1][2], p[2 * kk + 1][3])};
                const unsigned sa[4] = {kiln_pack(ds[2 * kk][0], ds[2 * kk][1]),
                                        kiln_pack(ds[2 * kk][2], ds[2 * kk][3]),
                                        kiln_pack(ds[2 * kk + 1][0], ds[2 * kk + 1][1]),
                                        kiln_pack(ds[2 * kk + 1][2], ds[2 * kk + 1][3])};
#pragma unroll
                for (int dn = 0; dn < KILN_D_V / 8; ++dn) {
                    const unsigned db[2] = {kiln_ld2(&Dt[dn * 8 + g][kk * 16 + 2 * t]),
                                            kiln_ld2(&Dt[dn * 8 + g][kk * 16 + 2 * t + 8])};
                    kiln_mma(dv[dn], pa, db);
                }
#pragma unroll
                for (int dn = 0; dn < KILN_D_QK / 8; ++dn) {
                    const unsigned qb[2] = {kiln_ld2(&Qt[dn * 8 + g][kk * 16 + 2 * t]),
                                            kiln_ld2(&Qt[dn * 8 + g][kk * 16 + 2 * t + 8])};
                    kiln_mma(dk[dn], sa, qb);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int j = keys[r];
        if (j >= KILN_SEQ_KV) continue;
#pragma unroll
        for (int dn = 0; dn < KILN_D_QK / 8; ++dn) {
            const int d = dn * 8 + 2 * t;
            KILN_DK[KILN_DK_OFF(b, hk, j, d)] = kiln_st<KILN_DK_T>(dk[dn][2 * r] * scale);
            KILN_DK[KILN_DK_OFF(b, hk, j, d + 1)] = kiln_st<KILN_DK_T>(dk[dn][2 * r + 1] * scale);
        }
#pragma unroll
        for (int dn = 0; dn < KILN_D_V / 8; ++dn) {
            const int d = dn * 8 + 2 * t;
            KILN_DV[KILN_DV_OFF(b, hk, j, d)] = kiln_st<KILN_DV_T>(dv[dn][2 * r]);
            KILN_DV[KILN_DV_OFF(b, hk, j, d + 1)] = kiln_st<KILN_DV_T>(dv[dn][2 * r + 1]);
        }
    }
}
