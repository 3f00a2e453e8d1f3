// KILN_CUDA_SDPA_FA3_BACKWARD_V1 (Hopper, sm_90a for the main kernel): the attention backward in
// FlashAttention-3's structure. Three kernels, picked by KILN_FA3B_PART:
//
//   0  prep     one warp per row of [B, H_q, SQP] (SQP: S_q rounded up to the query tile): the
//               row's D = rowsum(dO * O), its log-sum-exp in log2 units (+inf for a row past
//               its batch's length or with no key, so that exp2(s - lse) is exactly 0), and the
//               row of the f32 dq accumulator zeroed. All three live in the plan's workspace.
//   1  main     one block per (KILN_FA3B_BN keys, key/value head, batch), three warpgroups.
//               Warpgroup 0 produces: one thread loads the block's K and V once by TMA, then,
//               for every query head of the GQA group and every tile of 64 query rows that may
//               see the block's keys, Q, dO (TMA, 128-byte swizzle) and the tile's lse and D
//               (bulk copies from the workspace) into a ring of KILN_FA3B_STAGES stages.
//               Warpgroups 1 and 2 consume, 64 keys each, sharing every stage:
//                 S^T  = K Q^T        wgmma, both operands in shared memory;
//                 dP^T = V dO^T       wgmma, both operands in shared memory;
//                 P^T  = exp2(S^T * scale log2 e - lse), dS^T = P^T (dP^T - D), in registers,
//                        masked only on tiles that cross a boundary; tiles this warpgroup's
//                        keys cannot see are skipped;
//                 dV  += P^T dO       wgmma, A = P^T from registers (the accumulator's layout is
//                                     the A fragment's), dO from shared memory (MN-major);
//                 dK  += dS^T Q       the same with dS^T and Q;
//                 dQ_c = dS K_c       wgmma, dS^T staged in shared memory (MN-major A), K from
//                                     shared memory (MN-major B), 64 head-dim columns at a
//                                     time, added to the workspace's f32 accumulator with
//                                     vector reductions (red.global.add.v2.f32).
//               dK and dV stay in registers across the GQA group's heads (the block owns its
//               keys: no race, no atomics) and are stored once, dK scaled.
//   2  convert  dq = scale * accumulator, in dq's type and layout (zeros past a batch's length).
//
// dQ's accumulation is therefore not deterministic (the order of the f32 reductions varies from
// run to run; each partial sum is exact to f32 rounding): docs/attention.md.
//
// Shared memory (128-byte swizzle everywhere, atoms 1024-byte aligned): K and V as D / 64
// column chunks of BN rows x 64 elements; per stage, Q and dO as D / 64 chunks of 64 rows, then
// lse and D (64 floats each); per consumer, dS^T as 64 key rows x 64 queries. A chunk layout
// serves both ways: K-major (rows along N/M, 128-byte rows) for S and dP, and MN-major (rows
// along K, LBO = the chunk stride) for dV, dK and dQ.
//
// Rows inside the tensors but past a batch's lengths are real memory, possibly never written:
// the last query tile's Q and dO rows past seq_len_q and the block's K rows past seq_len_kv are
// zeroed in shared memory before use (0 * NaN would poison dK, dV or dQ); their scores are
// replaced, not multiplied, by a mask. The copy engine zero-fills rows past the dims.
//
// The generated prologue (codegen/sdpa_fa3_bwd.rs) defines, beyond sdpa_common.cuh's list:
//   KILN_FA3B_PART                      which kernel;
//   KILN_FA3B_SQP                       S_q rounded up to 64;
//   KILN_FA3B_WS_DQ, _WS_LSE, _WS_DLT   float offsets of the accumulator [B, H_q, SQP, D_QK],
//                                       the log2 lse and D [B, H_q, SQP] in the workspace;
//   and for the main kernel: KILN_FA3B_BN, KILN_FA3B_STAGES, KILN_FA3B_PRODUCER_REGS,
//   KILN_FA3B_CONSUMER_REGS, KILN_FA3B_MAP_PARAMS (map_q, map_k, map_v, map_do),
//   kiln_fa3_tma_{q,k,v,do}(dst, map, bar, d, s, h, b), and the wgmma wrappers
//   kiln_fa3b_mma_ss (m64n64k16, A and B K-major in shared memory),
//   kiln_fa3b_mma_rs (m64 x D x k16, A from registers, B MN-major),
//   kiln_fa3b_mma_tt (m64n64k16, A and B MN-major in shared memory).
#include "sdpa_common.cuh"

#if !defined(KILN_FA3B_PART) || !defined(KILN_FA3B_SQP)
#error "sdpa_fa3_backward.cuh is included by a generated prologue (codegen/sdpa_fa3_bwd.rs)"
#endif

#define KILN_FA3B_BM 64
#define KILN_FA3B_LOG2E 1.4426950408889634f
#define KILN_POS_INF __int_as_float(0x7f800000)

#if KILN_FA3B_PART == 0

extern "C" __global__ void __launch_bounds__(256) KILN_SDPA_SYMBOL(KILN_SDPA_PARAMS, float* __restrict__ kiln_ws) {
    const long long row = (long long)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= (long long)KILN_BATCH * KILN_HEADS_Q * KILN_FA3B_SQP) return;
    const int i = (int)(row % KILN_FA3B_SQP);
    const int bh = (int)(row / KILN_FA3B_SQP), h = bh % KILN_HEADS_Q, b = bh / KILN_HEADS_Q;
    const int lq = KILN_LEN_Q(b);
    float acc = 0.0f;
    if (i < lq) {
        for (int d = lane; d < KILN_D_V; d += 32)
            acc += kiln_ld(KILN_DO[KILN_DO_OFF(b, h, i, d)]) * kiln_ld(KILN_O[KILN_O_OFF(b, h, i, d)]);
    }
#pragma unroll
    for (int x = 16; x > 0; x >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, x);
    float4* dq = reinterpret_cast<float4*>(kiln_ws + KILN_FA3B_WS_DQ + row * KILN_D_QK);
    for (int d = lane; d < KILN_D_QK / 4; d += 32) dq[d] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (lane == 0) {
        const float lse = i < lq ? KILN_STATS[KILN_STATS_OFF(b, h, i, 0)] : KILN_NEG_INF;
        kiln_ws[KILN_FA3B_WS_LSE + row] = lse > KILN_NEG_INF ? lse * KILN_FA3B_LOG2E : KILN_POS_INF;
        kiln_ws[KILN_FA3B_WS_DLT + row] = i < lq ? acc : 0.0f;
    }
}

#elif KILN_FA3B_PART == 2

extern "C" __global__ void __launch_bounds__(256) KILN_SDPA_SYMBOL(KILN_SDPA_PARAMS, float* __restrict__ kiln_ws) {
    const long long e = (long long)blockIdx.x * 256 + threadIdx.x;
    if (e >= (long long)KILN_BATCH * KILN_HEADS_Q * KILN_SEQ_Q * KILN_D_QK) return;
    const int d = (int)(e % KILN_D_QK);
    const long long r = e / KILN_D_QK;
    const int i = (int)(r % KILN_SEQ_Q), bh = (int)(r / KILN_SEQ_Q);
    const int h = bh % KILN_HEADS_Q, b = bh / KILN_HEADS_Q;
    const float acc = kiln_ws[KILN_FA3B_WS_DQ + ((long long)bh * KILN_FA3B_SQP + i) * KILN_D_QK + d];
    KILN_DQ[KILN_DQ_OFF(b, h, i, d)] = kiln_st<KILN_DQ_T>(i < KILN_LEN_Q(b) ? acc * (KILN_SCALE) : 0.0f);
}

#else

#include "hopper_ptx.cuh"

#if !defined(KILN_FA3B_BN) || !defined(KILN_FA3B_STAGES) || !defined(KILN_FA3B_MAP_PARAMS)
#error "the main kernel of sdpa_fa3_backward.cuh needs its tile configuration"
#endif
static_assert(KILN_D_QK == KILN_D_V && (KILN_D_QK == 64 || KILN_D_QK == 128), "head dims 64 or 128");
static_assert(KILN_FA3B_BN == 128, "two consumers of 64 keys");
static_assert(sizeof(elem_t) == 2, "wgmma operands are 16-bit");

#define KILN_FA3B_D KILN_D_QK
#define KILN_FA3B_K_BYTES (KILN_FA3B_BN * KILN_FA3B_D * 2)
#define KILN_FA3B_Q_BYTES (KILN_FA3B_BM * KILN_FA3B_D * 2)
// Q, dO, then lse and D (256 bytes each), padded so that every stage starts 1024-byte aligned.
#define KILN_FA3B_STAGE_BYTES (2 * KILN_FA3B_Q_BYTES + 1024)
#define KILN_FA3B_DS_BYTES (64 * 64 * 2)

// Named barriers (0 is __syncthreads): the consumers together (once, before the first tile),
// each consumer alone (2, 3), and the consumers together on stage s (4 + s): a consumer may run
// up to STAGES - 1 tiles ahead of the other, never a whole ring, so a per-stage barrier pairs
// the two on the same tile.
#define KILN_FA3B_BAR_CONSUMERS 1
#define KILN_FA3B_BAR_WG 2
#define KILN_FA3B_BAR_STAGE 4
static_assert(KILN_FA3B_STAGES <= 12, "named barriers 4 + s stay below 16");

// One bulk copy of `bytes` contiguous bytes from global memory, completing on `bar`.
__device__ __forceinline__ void kiln_fa3b_bulk(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ float kiln_fa3b_lds(unsigned a) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
    return v;
}

__device__ __forceinline__ void kiln_fa3b_red2(float* p, float a, float b) {
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
}

// Zeroes rows [from, to) of a chunked tile (chunks of `rows` rows x 128 bytes, `chunks` of them)
// with the 256 consumer threads (index t256); whole 128-byte rows, so the swizzle is irrelevant.
__device__ __forceinline__ void kiln_fa3b_zero_rows(unsigned base, int rows, int chunks, int from, int to, int t256) {
    const int pieces = (to - from) * chunks * 8;
    for (int i = t256; i < pieces; i += 256) {
        const int r = from + i / (chunks * 8), rest = i % (chunks * 8);
        const unsigned a = base + (rest / 8) * (rows * 128) + r * 128 + (rest % 8) * 16;
        asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(a), "r"(0u) : "memory");
    }
}

// The query rows that may see any key of [k0, kend), [lo, hi), for lengths lq, lkv: the inverse
// of kiln_keys (both band ends never decrease with the row).
__device__ __forceinline__ void kiln_fa3b_rows(int k0, int kend, int lq, int lkv, int& lo, int& hi) {
    const long long off = KILN_MASK_BR ? (long long)lkv - lq : 0;
    long long l = KILN_MASK_HAS_RIGHT ? (long long)k0 - KILN_MASK_RIGHT - off : 0;
    long long h = KILN_MASK_HAS_LEFT ? (long long)kend - 1 + KILN_MASK_LEFT - off : lq;
    lo = (int)(l < 0 ? 0 : (l > lq ? lq : l));
    hi = (int)(h < 0 ? 0 : (h > lq ? lq : h));
}

extern "C" __global__ void __launch_bounds__(384, 1) KILN_SDPA_SYMBOL(KILN_FA3B_MAP_PARAMS, KILN_SDPA_PARAMS, float* __restrict__ kiln_ws) {
    extern __shared__ unsigned char kiln_smem_raw[];
    unsigned char* smem = (unsigned char*)(((unsigned long long)kiln_smem_raw + 1023ull) & ~1023ull);
    const unsigned k_st = kiln_smem(smem);
    const unsigned v_st = k_st + KILN_FA3B_K_BYTES;
    const unsigned ring = v_st + KILN_FA3B_K_BYTES;
    const unsigned ds_base = ring + KILN_FA3B_STAGES * KILN_FA3B_STAGE_BYTES;
    const unsigned bars = ds_base + 2 * KILN_FA3B_DS_BYTES;
#define KILN_FA3B_KV_FULL (bars)
#define KILN_FA3B_FULL(s) (bars + 8u * (1u + (unsigned)(s)))
#define KILN_FA3B_EMPTY(s) (bars + 8u * (1u + KILN_FA3B_STAGES + (unsigned)(s)))
#define KILN_FA3B_Q_ST(s) (ring + (unsigned)(s) * KILN_FA3B_STAGE_BYTES)
#define KILN_FA3B_DO_ST(s) (KILN_FA3B_Q_ST(s) + KILN_FA3B_Q_BYTES)
#define KILN_FA3B_LSE_ST(s) (KILN_FA3B_DO_ST(s) + KILN_FA3B_Q_BYTES)
#define KILN_FA3B_DLT_ST(s) (KILN_FA3B_LSE_ST(s) + 256u)
    if (threadIdx.x == 0) {
        kiln_mbar_init(KILN_FA3B_KV_FULL, 1u);
#pragma unroll 1
        for (int s = 0; s < KILN_FA3B_STAGES; ++s) {
            kiln_mbar_init(KILN_FA3B_FULL(s), 1u);
            kiln_mbar_init(KILN_FA3B_EMPTY(s), 2u);
        }
        kiln_mbar_init_fence();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    if (wg == 0) {
        kiln_setmaxnreg_dec<KILN_FA3B_PRODUCER_REGS>();
        const int b = blockIdx.z, hk = blockIdx.y, k0 = blockIdx.x * KILN_FA3B_BN;
        const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
        int r_lo = 0, r_hi = 0;
        if (k0 < lkv) kiln_fa3b_rows(k0, min(k0 + KILN_FA3B_BN, lkv), lq, lkv, r_lo, r_hi);
        const int t0 = r_lo / KILN_FA3B_BM;
        const int tiles = r_hi > r_lo ? (r_hi + KILN_FA3B_BM - 1) / KILN_FA3B_BM - t0 : 0;
        if (t == 0 && tiles > 0) {
            kiln_tma_prefetch_map(&map_q);
            kiln_tma_prefetch_map(&map_k);
            kiln_tma_prefetch_map(&map_v);
            kiln_tma_prefetch_map(&map_do);
            kiln_mbar_arrive_expect_tx(KILN_FA3B_KV_FULL, 2 * KILN_FA3B_K_BYTES);
#pragma unroll
            for (int c = 0; c < KILN_FA3B_D / 64; ++c) {
                kiln_fa3_tma_k(k_st + c * (KILN_FA3B_BN * 128), &map_k, KILN_FA3B_KV_FULL, 64 * c, k0, hk, b);
                kiln_fa3_tma_v(v_st + c * (KILN_FA3B_BN * 128), &map_v, KILN_FA3B_KV_FULL, 64 * c, k0, hk, b);
            }
            int s = 0;
            unsigned phase = 0;
#pragma unroll 1
            for (int h = hk * KILN_GROUP; h < (hk + 1) * KILN_GROUP; ++h) {
                const float* lse_row = kiln_ws + KILN_FA3B_WS_LSE + ((long long)b * KILN_HEADS_Q + h) * KILN_FA3B_SQP;
                const float* dlt_row = kiln_ws + KILN_FA3B_WS_DLT + ((long long)b * KILN_HEADS_Q + h) * KILN_FA3B_SQP;
#pragma unroll 1
                for (int n = 0; n < tiles; ++n) {
                    const int q0 = (t0 + n) * KILN_FA3B_BM;
                    kiln_mbar_wait(KILN_FA3B_EMPTY(s), phase ^ 1u);
                    kiln_mbar_arrive_expect_tx(KILN_FA3B_FULL(s), 2 * KILN_FA3B_Q_BYTES + 512);
#pragma unroll
                    for (int c = 0; c < KILN_FA3B_D / 64; ++c) {
                        kiln_fa3_tma_q(KILN_FA3B_Q_ST(s) + c * (KILN_FA3B_BM * 128), &map_q, KILN_FA3B_FULL(s), 64 * c, q0, h, b);
                        kiln_fa3_tma_do(KILN_FA3B_DO_ST(s) + c * (KILN_FA3B_BM * 128), &map_do, KILN_FA3B_FULL(s), 64 * c, q0, h, b);
                    }
                    kiln_fa3b_bulk(KILN_FA3B_LSE_ST(s), lse_row + q0, 256, KILN_FA3B_FULL(s));
                    kiln_fa3b_bulk(KILN_FA3B_DLT_ST(s), dlt_row + q0, 256, KILN_FA3B_FULL(s));
                    if (++s == KILN_FA3B_STAGES) { s = 0; phase ^= 1u; }
                }
            }
        }
        return;
    }

    kiln_setmaxnreg_inc<KILN_FA3B_CONSUMER_REGS>();
    const int b = blockIdx.z, hk = blockIdx.y, k0 = blockIdx.x * KILN_FA3B_BN;
    const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
    int r_lo = 0, r_hi = 0;
    if (k0 < lkv) kiln_fa3b_rows(k0, min(k0 + KILN_FA3B_BN, lkv), lq, lkv, r_lo, r_hi);
    const int t0 = r_lo / KILN_FA3B_BM;
    const int tiles = r_hi > r_lo ? (r_hi + KILN_FA3B_BM - 1) / KILN_FA3B_BM - t0 : 0;
    const int c = wg - 1;   // consumer index: keys k0 + 64 c ..
    const int warp = t / 32, lane = t % 32, g = lane / 4, tq = lane % 4;
    const int j0c = k0 + 64 * c;
    const unsigned ds_st = ds_base + c * KILN_FA3B_DS_BYTES;
    const float scale_log2 = (KILN_SCALE) * KILN_FA3B_LOG2E;

    float dv[KILN_FA3B_D / 2], dk[KILN_FA3B_D / 2];
#pragma unroll
    for (int i = 0; i < KILN_FA3B_D / 2; ++i) dv[i] = dk[i] = 0.0f;

    if (tiles > 0) {
        kiln_mbar_wait(KILN_FA3B_KV_FULL, 0u);
        // K rows past seq_len_kv but inside the tensor: zeros (dQ = dS K reads them).
        const int kz_from = lkv - k0, kz_to = min(KILN_FA3B_BN, KILN_SEQ_KV - k0);
        if (kz_to > kz_from) {
            kiln_fa3b_zero_rows(k_st, KILN_FA3B_BN, KILN_FA3B_D / 64, kz_from, kz_to, (int)threadIdx.x - 128);
            kiln_fence_proxy_async();
            kiln_sdpa_bar_sync(KILN_FA3B_BAR_CONSUMERS, 256);
        }
        int st = 0;
        unsigned phase = 0;
#pragma unroll 1
        for (int h = hk * KILN_GROUP; h < (hk + 1) * KILN_GROUP; ++h) {
#pragma unroll 1
            for (int n = 0; n < tiles; ++n) {
                const int q0 = (t0 + n) * KILN_FA3B_BM;
                const unsigned q_st = KILN_FA3B_Q_ST(st), do_st = KILN_FA3B_DO_ST(st);
                const unsigned lse_st = KILN_FA3B_LSE_ST(st), dlt_st = KILN_FA3B_DLT_ST(st);
                kiln_mbar_wait(KILN_FA3B_FULL(st), phase);
                // Q and dO rows past seq_len_q but inside the tensor: zeros (dK = dS^T Q and
                // dV = P^T dO read them).
                const int qz_from = lq - q0, qz_to = min(KILN_FA3B_BM, KILN_SEQ_Q - q0);
                if (qz_to > qz_from) {
                    // The thread index read again here (a volatile read): values derived from
                    // it ahead of the loop would stay live across it and spill at d = 128.
                    unsigned tid;
                    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
                    kiln_fa3b_zero_rows(q_st, KILN_FA3B_BM, KILN_FA3B_D / 64, qz_from, qz_to, (int)tid - 128);
                    kiln_fa3b_zero_rows(do_st, KILN_FA3B_BM, KILN_FA3B_D / 64, qz_from, qz_to, (int)tid - 128);
                    kiln_fence_proxy_async();
                    kiln_sdpa_bar_sync(KILN_FA3B_BAR_STAGE + st, 256);
                }
                // Whether this consumer's keys meet the tile at all, and whether every pair is
                // visible (no mask): the band's ends never decrease with the row.
                const int q_last = min(q0 + KILN_FA3B_BM, lq) - 1;
                int first_lo, first_hi, last_lo, last_hi;
                kiln_keys(q0, lq, lkv, first_lo, first_hi);
                kiln_keys(q_last, lq, lkv, last_lo, last_hi);
                const bool meets = j0c < lkv && last_hi > j0c && first_lo < j0c + 64;
                const bool whole = q0 + KILN_FA3B_BM <= lq && j0c + 64 <= lkv && last_lo <= j0c && first_hi >= j0c + 64;
                if (meets) {
                    float s[32], dp[32];
#pragma unroll
                    for (int i = 0; i < 32; ++i) s[i] = dp[i] = 0.0f;
                    kiln_wgmma_hold(s);
                    kiln_wgmma_hold(dp);
                    kiln_wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < KILN_FA3B_D / 16; ++ks) {
                        const int ch = ks / 4, kk = ks % 4;
                        kiln_fa3b_mma_ss(s, kiln_wgmma_desc(k_st + ch * (KILN_FA3B_BN * 128) + c * (64 * 128) + kk * 32, 16, 1024),
                                         kiln_wgmma_desc(q_st + ch * (KILN_FA3B_BM * 128) + kk * 32, 16, 1024), ks > 0 ? 1 : 0);
                    }
                    kiln_wgmma_commit();
#pragma unroll
                    for (int ks = 0; ks < KILN_FA3B_D / 16; ++ks) {
                        const int ch = ks / 4, kk = ks % 4;
                        kiln_fa3b_mma_ss(dp, kiln_wgmma_desc(v_st + ch * (KILN_FA3B_BN * 128) + c * (64 * 128) + kk * 32, 16, 1024),
                                         kiln_wgmma_desc(do_st + ch * (KILN_FA3B_BM * 128) + kk * 32, 16, 1024), ks > 0 ? 1 : 0);
                    }
                    kiln_wgmma_commit();
                    kiln_wgmma_wait<1>();
                    kiln_wgmma_hold(s);
                    // s[4 j + e]: key row 16 warp + g + 8 (e / 2) of this consumer, query
                    // column 8 j + 2 tq + e % 2 of the tile.
                    // Each query column's lse (and below D) read once from shared memory, for
                    // both of its key rows: s[4 j + h2] and s[4 j + 2 + h2].
                    if (whole) {
#pragma unroll
                        for (int j = 0; j < 8; ++j)
#pragma unroll
                            for (int h2 = 0; h2 < 2; ++h2) {
                                const float l = kiln_fa3b_lds(lse_st + 4 * (8 * j + 2 * tq + h2));
                                s[4 * j + h2] = kiln_sdpa_exp2(fmaf(s[4 * j + h2], scale_log2, -l));
                                s[4 * j + 2 + h2] = kiln_sdpa_exp2(fmaf(s[4 * j + 2 + h2], scale_log2, -l));
                            }
                    } else {
                        const int key = j0c + 16 * warp + g;
#pragma unroll
                        for (int j = 0; j < 8; ++j)
#pragma unroll
                            for (int h2 = 0; h2 < 2; ++h2) {
                                const int col = 8 * j + 2 * tq + h2;
                                const float l = kiln_fa3b_lds(lse_st + 4 * col);
                                const float p0 = kiln_sdpa_exp2(fmaf(s[4 * j + h2], scale_log2, -l));
                                const float p1 = kiln_sdpa_exp2(fmaf(s[4 * j + 2 + h2], scale_log2, -l));
                                s[4 * j + h2] = kiln_visible(q0 + col, key, lq, lkv) ? p0 : 0.0f;
                                s[4 * j + 2 + h2] = kiln_visible(q0 + col, key + 8, lq, lkv) ? p1 : 0.0f;
                            }
                    }
                    kiln_wgmma_wait<0>();
                    kiln_wgmma_hold(dp);
                    // dS = P (dP - D); s is 0 where masked, and dP may be anything there (rows
                    // past the lengths): selected, not multiplied.
#pragma unroll
                    for (int j = 0; j < 8; ++j)
#pragma unroll
                        for (int h2 = 0; h2 < 2; ++h2) {
                            const float dl = kiln_fa3b_lds(dlt_st + 4 * (8 * j + 2 * tq + h2));
#pragma unroll
                            for (int r = 0; r < 4; r += 2) {
                                const int i = 4 * j + r + h2;
                                const float ds = s[i] * (dp[i] - dl);
                                dp[i] = s[i] != 0.0f ? ds : 0.0f;
                            }
                        }
                    // P^T and dS^T as A fragments (rounded to elem_t): the accumulator's layout.
                    unsigned pa[4][4], sa[4][4];
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            pa[kk][e] = kiln_sdpa_pack2(s[8 * kk + 2 * e], s[8 * kk + 2 * e + 1]);
                            sa[kk][e] = kiln_sdpa_pack2(dp[8 * kk + 2 * e], dp[8 * kk + 2 * e + 1]);
                        }
                    // dV += P^T dO and dK += dS^T Q, one group.
                    kiln_wgmma_hold(dv);
                    kiln_wgmma_hold(dk);
                    kiln_sdpa_hold_a(pa);
                    kiln_sdpa_hold_a(sa);
                    kiln_wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
                        kiln_fa3b_mma_rs(dv, pa[kk], kiln_wgmma_desc(do_st + kk * 2048, KILN_FA3B_BM * 128, 1024), 1);
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
                        kiln_fa3b_mma_rs(dk, sa[kk], kiln_wgmma_desc(q_st + kk * 2048, KILN_FA3B_BM * 128, 1024), 1);
                    kiln_wgmma_commit();
                    // dS^T to shared memory for dQ while they run: sa[kk][e] holds key row
                    // 16 warp + g + 8 (e & 1), queries 16 kk + 8 (e >> 1) + 2 tq and the next.
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            const int r = 16 * warp + g + 8 * (e & 1), col = 16 * kk + 8 * (e >> 1) + 2 * tq;
                            const unsigned a = ds_st + r * 128 + (((col / 8) ^ (r & 7)) * 16) + (col % 8) * 2;
                            asm volatile("st.shared.u32 [%0], %1;" ::"r"(a), "r"(sa[kk][e]) : "memory");
                        }
                    kiln_fence_proxy_async();
                    kiln_sdpa_bar_sync(KILN_FA3B_BAR_WG + c, 128);
                    // dQ (this consumer's 64 keys) = dS K, 64 head-dim columns at a time.
#pragma unroll
                    for (int ch = 0; ch < KILN_FA3B_D / 64; ++ch) {
                        float dq[32];
#pragma unroll
                        for (int i = 0; i < 32; ++i) dq[i] = 0.0f;
                        kiln_wgmma_hold(dq);
                        kiln_wgmma_fence();
#pragma unroll
                        for (int kk = 0; kk < 4; ++kk)
                            kiln_fa3b_mma_tt(dq, kiln_wgmma_desc(ds_st + kk * 2048, 8192, 1024),
                                             kiln_wgmma_desc(k_st + ch * (KILN_FA3B_BN * 128) + c * (64 * 128) + kk * 2048, KILN_FA3B_BN * 128, 1024),
                                             kk > 0 ? 1 : 0);
                        kiln_wgmma_commit();
                        kiln_wgmma_wait<0>();
                        kiln_wgmma_hold(dq);
                        if (ch == 0) {
                            kiln_wgmma_hold(dv);
                            kiln_wgmma_hold(dk);
                            // dV and dK have retired: the stage is free.
                            if (t == 0) kiln_mbar_arrive(KILN_FA3B_EMPTY(st));
                        }
                        // dq[4 j + e]: query row 16 warp + g + 8 (e / 2), head-dim column
                        // 64 ch + 8 j + 2 tq + e % 2.
#pragma unroll
                        for (int r = 0; r < 2; ++r) {
                            const int i = q0 + 16 * warp + g + 8 * r;
                            if (i >= lq) continue;
                            // Computed here rather than per head: a pointer live across the
                            // tile loop is spilled at d = 128.
                            float* row = kiln_ws + KILN_FA3B_WS_DQ + (((long long)b * KILN_HEADS_Q + h) * KILN_FA3B_SQP + i) * KILN_FA3B_D + 64 * ch + 2 * tq;
#pragma unroll
                            for (int j = 0; j < 8; ++j) kiln_fa3b_red2(row + 8 * j, dq[4 * j + 2 * r], dq[4 * j + 2 * r + 1]);
                        }
                    }
                    // The next tile's dS^T overwrites this one's: every warp's dQ has retired.
                    kiln_sdpa_bar_sync(KILN_FA3B_BAR_WG + c, 128);
                } else if (t == 0) {
                    kiln_mbar_arrive(KILN_FA3B_EMPTY(st));
                }
                if (++st == KILN_FA3B_STAGES) { st = 0; phase ^= 1u; }
            }
        }
    }

    // Epilogue: dK (scaled) and dV of this consumer's keys; zeros past seq_len_kv.
    const float scale = KILN_SCALE;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int j = j0c + 16 * warp + g + 8 * r;
        if (j >= KILN_SEQ_KV) continue;
        const bool live = j < lkv;
#pragma unroll
        for (int jj = 0; jj < KILN_FA3B_D / 8; ++jj) {
            const int d = 8 * jj + 2 * tq;
            KILN_DK[KILN_DK_OFF(b, hk, j, d)] = kiln_st<KILN_DK_T>(live ? dk[4 * jj + 2 * r] * scale : 0.0f);
            KILN_DK[KILN_DK_OFF(b, hk, j, d + 1)] = kiln_st<KILN_DK_T>(live ? dk[4 * jj + 2 * r + 1] * scale : 0.0f);
            KILN_DV[KILN_DV_OFF(b, hk, j, d)] = kiln_st<KILN_DV_T>(live ? dv[4 * jj + 2 * r] : 0.0f);
            KILN_DV[KILN_DV_OFF(b, hk, j, d + 1)] = kiln_st<KILN_DV_T>(live ? dv[4 * jj + 2 * r + 1] : 0.0f);
        }
    }
#undef KILN_FA3B_KV_FULL
#undef KILN_FA3B_FULL
#undef KILN_FA3B_EMPTY
#undef KILN_FA3B_Q_ST
#undef KILN_FA3B_DO_ST
#undef KILN_FA3B_LSE_ST
#undef KILN_FA3B_DLT_ST
}

#endif
