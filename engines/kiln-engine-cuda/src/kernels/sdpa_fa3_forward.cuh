// KILN_CUDA_SDPA_FA3_V1 (Hopper, sm_90a): attention forward in FlashAttention-3's structure.
//
// One block per (128 query rows, query head, batch), three warpgroups. Warpgroup 0 produces:
// one thread loads the block's Q tile once and then, tile after tile, the K and V tiles of
// KILN_FA3_BN keys into a ring of KILN_FA3_STAGES stages by the bulk tensor copy engine (TMA);
// K and V of a stage complete on separate mbarriers, so that S = Q K^T can start before V has
// landed. Warpgroups 1 and 2 consume, 64 query rows each, sharing every K/V tile:
//   S = Q K^T      wgmma, both operands from shared memory (K-major, 128-byte swizzle);
//   softmax        online, f32, in the exp2 domain, in registers; masks only on tiles that cross
//                  a boundary (the diagonal band, the lengths); tiles every row of the block
//                  masks are never loaded;
//   O += P V       wgmma with A = P from registers (the S accumulator's layout is the A
//                  fragment's, so P never touches shared memory) and V from shared memory.
// Within a warpgroup, the next tile's S = Q K^T and the current P V are issued together and the
// softmax of the next tile runs while P V is still in flight (FlashAttention-3's intra-warpgroup
// overlap). Across the two warpgroups, named barriers make them issue their GEMMs in turn
// (ping-pong, KILN_FA3_PINGPONG), so that one warpgroup's softmax overlaps the other's GEMMs.
// setmaxnreg moves registers from the producer to the consumers. Blocks run the query tiles in
// reverse order, so that the long rows of a causal mask start first.
//
// Shared-memory layouts (the copy engine's and wgmma's common 128-byte swizzle): Q and K as
// D / 64 column chunks, each rows x 64 elements (128-byte rows); V as BN / 64 key slices, each
// D_V / 64 boxes of 64 keys x 64 elements, which wgmma reads transposed (N-major B).
//
// Padding past a batch's lengths: the copy engine fills rows past the graph's dims with zeros;
// rows inside the dims but masked for the whole block (past seq_len_kv or the band) are real
// memory, possibly never written. Their scores are replaced (not multiplied) by -inf, and the
// last tile's V rows past the block's keys are zeroed in shared memory before P V, since
// 0 * NaN would poison the output.
//
// The generated prologue (codegen/sdpa_fa3.rs) defines, beyond sdpa_common.cuh's list:
//   KILN_FA3_BN, KILN_FA3_STAGES                  keys per tile; ring depth;
//   KILN_FA3_PRODUCER_REGS, KILN_FA3_CONSUMER_REGS  setmaxnreg targets;
//   KILN_FA3_PINGPONG                             1 to order the consumers' GEMMs;
//   KILN_FA3_CONSUMERS                            consumer warpgroups (2, or 3 at d = 64):
//                                                 64 query rows each;
//   KILN_FA3_MAP_PARAMS                           the tensor-map parameters map_q, map_k, map_v;
//   kiln_fa3_tma_{q,k,v}(dst, map, bar, d, s, h, b)  one box at (head-dim column d, row s,
//                                                 head h, batch b);
//   kiln_fa3_mma_qk(s, desc_q, desc_k, scale_d)   m64 x BN x k16, both operands in shared memory;
//   kiln_fa3_mma_pv(o, a, desc_v, scale_d)        m64 x D_V x k16, A from registers, V N-major;
//   KILN_O_PAIR                                   1 when two consecutive head-dim elements of O
//                                                 may be stored as one access (taken when the
//                                                 pointer is aligned for it).
//   KILN_FA3_PERSISTENT                           1 for a grid of at most one CTA per SM that runs
//                                                 blocks one after another;
//   KILN_FA3_SNAKE                                1 to hand persistent CTAs their blocks in a
//                                                 snake order (see kiln_fa3_linear);
//   KILN_FA3_EARLY_Q                              1 (persistent only): a consumer releases Q as
//                                                 soon as its block's last S = Q K^T has retired
//                                                 (not after the block's last softmax);
//   KILN_FA3_QBUFS                                Q buffers (2, with KILN_FA3_EARLY_Q: the next
//                                                 block's Q loads while this block's last tiles
//                                                 run).
//   KILN_FA3_STORE_O                              1 to write O by the copy engine (map_o among
//                                                 the map parameters, kiln_fa3_tma_store_o(src,
//                                                 map, d, s, h, b)): see the epilogue.
#include "sdpa_common.cuh"
#include "hopper_ptx.cuh"

#if !defined(KILN_FA3_BN) || !defined(KILN_FA3_STAGES) || !defined(KILN_FA3_MAP_PARAMS)
#error "sdpa_fa3_forward.cuh is included by a generated prologue (codegen/sdpa_fa3.rs)"
#endif

#if !defined(KILN_FA3_CONSUMERS) || KILN_FA3_CONSUMERS < 2 || KILN_FA3_CONSUMERS > 3
#error "KILN_FA3_CONSUMERS is 2 or 3"
#endif
#ifndef KILN_FA3_SNAKE
#define KILN_FA3_SNAKE 0
#endif
#ifndef KILN_FA3_EARLY_Q
#define KILN_FA3_EARLY_Q 0
#endif
#ifndef KILN_FA3_QBUFS
#define KILN_FA3_QBUFS 1
#endif
#ifndef KILN_FA3_STORE_O
#define KILN_FA3_STORE_O 0
#endif
#if KILN_FA3_EARLY_Q && !KILN_FA3_PERSISTENT
#error "KILN_FA3_EARLY_Q needs KILN_FA3_PERSISTENT"
#endif
#if KILN_FA3_QBUFS < 1 || KILN_FA3_QBUFS > 2 || (KILN_FA3_QBUFS == 2 && !KILN_FA3_EARLY_Q)
#error "KILN_FA3_QBUFS is 1, or 2 with KILN_FA3_EARLY_Q"
#endif
#define KILN_FA3_BM (64 * KILN_FA3_CONSUMERS)
#define KILN_FA3_THREADS (128 * (1 + KILN_FA3_CONSUMERS))
#define KILN_FA3_Q_BYTES (KILN_FA3_BM * KILN_D_QK * 2)
#define KILN_FA3_K_BYTES (KILN_FA3_BN * KILN_D_QK * 2)
#define KILN_FA3_V_BYTES (KILN_FA3_BN * KILN_D_V * 2)
#define KILN_FA3_STAGE_BYTES (KILN_FA3_K_BYTES + KILN_FA3_V_BYTES)
static_assert(KILN_D_QK % 64 == 0 && KILN_D_V % 64 == 0 && KILN_D_V <= 256, "head dims are multiples of 64, D_V at most 256");
static_assert(KILN_FA3_BN % 64 == 0 && KILN_FA3_BN <= 256, "key tiles are multiples of 64");
static_assert(sizeof(elem_t) == 2, "wgmma operands are 16-bit");
static_assert(!KILN_FA3_STORE_O || (KILN_FA3_BM * KILN_D_V * 2 <= KILN_FA3_STAGE_BYTES && KILN_D_V == KILN_D_QK),
              "O is staged in one ring stage");

// Named barriers (0 is __syncthreads): each consumer's turn, the consumers together, and each
// consumer's staged O.
#define KILN_FA3_BAR_TURN 1
#define KILN_FA3_BAR_CONSUMERS (1 + KILN_FA3_CONSUMERS)
#define KILN_FA3_BAR_STAGED (2 + KILN_FA3_CONSUMERS)

// S = Q K^T for this consumer's 64 rows (c: consumer index) over one K tile.
__device__ __forceinline__ void kiln_fa3_qk(float (&s)[KILN_FA3_BN / 2], unsigned q_st, unsigned k_st, int c) {
    kiln_wgmma_hold(s);
    kiln_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < KILN_D_QK / 16; ++ks) {
        const int chunk = ks / 4, kk = ks % 4;
        const unsigned long long dq = kiln_wgmma_desc(q_st + chunk * (KILN_FA3_BM * 128) + c * (64 * 128) + kk * 32, 16, 1024);
        const unsigned long long dk = kiln_wgmma_desc(k_st + chunk * (KILN_FA3_BN * 128) + kk * 32, 16, 1024);
        kiln_fa3_mma_qk(s, dq, dk, ks > 0 ? 1 : 0);
    }
    kiln_wgmma_commit();
}

// O += P V over one V tile (O = P V when !accumulate).
__device__ __forceinline__ void kiln_fa3_pv(float (&o)[KILN_D_V / 2], unsigned (&p)[KILN_FA3_BN / 16][4], unsigned v_st, bool accumulate) {
    kiln_wgmma_hold(o);
    kiln_sdpa_hold_a(p);
    kiln_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KILN_FA3_BN / 16; ++kk) {
        const int slice = kk / 4, within = kk % 4;
        const unsigned long long dv = kiln_wgmma_desc(v_st + slice * ((KILN_D_V / 64) * 8192) + within * 2048, 8192, 1024);
        kiln_fa3_mma_pv(o, p[kk], dv, (accumulate || kk > 0) ? 1 : 0);
    }
    kiln_wgmma_commit();
}

// One tile's online softmax. On entry s holds Q K^T of keys j0.. (accumulator layout: s[4 j + e]
// is row g + 8 (e / 2), key j0 + 8 j + 2 tq + e % 2); on exit s holds exp2(s * scale_log2 - m),
// m the rows' running maxima (log2 units), l their partial sums (this thread's columns,
// rescaled) and corr the factor the output accumulator must be scaled by.
//
// POSITIVE (a scale > 0, the usual case): the maximum is taken over the raw scores and the scale
// folded into the exponent's one FFMA, exp2(s * scale_log2 - m); otherwise every score is
// scaled first (a negative scale turns the maximum into a minimum).
template <bool MASK, bool POSITIVE>
__device__ __forceinline__ void kiln_fa3_softmax(float (&s)[KILN_FA3_BN / 2], float (&m)[2], float (&l)[2],
                                                 float (&corr)[2], float scale_log2, int j0,
                                                 const int (&rlo)[2], const int (&rhi)[2], int tq) {
    float mx[2] = {KILN_NEG_INF, KILN_NEG_INF};
#pragma unroll
    for (int j = 0; j < KILN_FA3_BN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = e >> 1;
            float x = POSITIVE ? s[4 * j + e] : s[4 * j + e] * scale_log2;
            if (MASK) {
                const int key = j0 + 8 * j + 2 * tq + (e & 1);
                if (key < rlo[r] || key >= rhi[r]) x = KILN_NEG_INF;
            }
            s[4 * j + e] = x;
            mx[r] = fmaxf(mx[r], x);
        }
    }
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffff, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffff, mx[r], 2));
        if (POSITIVE) mx[r] *= scale_log2;   // -inf stays -inf
        const float m_new = fmaxf(m[r], mx[r]);
        // A row that has seen no key keeps m = -inf: its corr is 1 and its p are exp2(-inf) = 0.
        corr[r] = m_new == KILN_NEG_INF ? 1.0f : kiln_sdpa_exp2(m[r] - m_new);
        base[r] = m_new == KILN_NEG_INF ? 0.0f : m_new;
        m[r] = m_new;
        l[r] *= corr[r];
    }
#pragma unroll
    for (int i = 0; i < KILN_FA3_BN / 2; ++i) {
        s[i] = kiln_sdpa_exp2(POSITIVE ? fmaf(s[i], scale_log2, -base[(i >> 1) & 1]) : s[i] - base[(i >> 1) & 1]);
        l[(i >> 1) & 1] += s[i];
    }
}

// The softmax of one tile, masked only when `masked`, with the positive-scale fast path.
__device__ __forceinline__ void kiln_fa3_softmax_tile(bool masked, float (&s)[KILN_FA3_BN / 2], float (&m)[2], float (&l)[2],
                                                      float (&corr)[2], float scale_log2, int j0,
                                                      const int (&rlo)[2], const int (&rhi)[2], int tq) {
    if (scale_log2 > 0.0f) {
        if (masked) kiln_fa3_softmax<true, true>(s, m, l, corr, scale_log2, j0, rlo, rhi, tq);
        else kiln_fa3_softmax<false, true>(s, m, l, corr, scale_log2, j0, rlo, rhi, tq);
    } else {
        if (masked) kiln_fa3_softmax<true, false>(s, m, l, corr, scale_log2, j0, rlo, rhi, tq);
        else kiln_fa3_softmax<false, false>(s, m, l, corr, scale_log2, j0, rlo, rhi, tq);
    }
}

// P (s rounded to elem_t) as the A fragments of P V: for keys 16 kk.., (row g, keys 2tq..),
// (row g + 8, ..), then the same 8 keys further. The S accumulator's layout is the A fragment's.
__device__ __forceinline__ void kiln_fa3_pack_p(const float (&s)[KILN_FA3_BN / 2], unsigned (&p)[KILN_FA3_BN / 16][4]) {
#pragma unroll
    for (int kk = 0; kk < KILN_FA3_BN / 16; ++kk)
#pragma unroll
        for (int e = 0; e < 4; ++e) p[kk][e] = kiln_sdpa_pack2(s[8 * kk + 2 * e], s[8 * kk + 2 * e + 1]);
}

// O *= corr per row.
__device__ __forceinline__ void kiln_fa3_rescale(float (&o)[KILN_D_V / 2], const float (&corr)[2]) {
#pragma unroll
    for (int j = 0; j < KILN_D_V / 8; ++j) {
        o[4 * j] *= corr[0];
        o[4 * j + 1] *= corr[0];
        o[4 * j + 2] *= corr[1];
        o[4 * j + 3] *= corr[1];
    }
}

// The block's batch, query head and first query row. The grid is (query blocks, heads,
// batches), and the hardware starts blocks in linear order (x fastest). Without a right bound
// every block sees the same keys: each head's blocks run together (last query block first),
// sharing its K and V tiles in L2. Under a right bound (causal, band) the last query blocks see
// the most keys, and a head-by-head order leaves long blocks for the last wave (at 1k, B4 H16:
// up to 8 key tiles in a wave whose mean is under 6). There, while the keys and values of every
// head fit in KILN_FA3_LONGEST_FIRST_BYTES (about the H200's 50 MB L2 plus what two blocks of
// one head reading it in step share), blocks are handed out query block by query block across
// every (batch, head), longest first; adjacent heads are adjacent blocks, so a GQA group's
// query heads still read one K/V head together.
#ifndef KILN_FA3_LONGEST_FIRST_BYTES
#define KILN_FA3_LONGEST_FIRST_BYTES (96ll << 20)
#endif
// The blocks a CTA runs, by linear index (query block fastest, then head, then batch): its own
// one, or, with KILN_FA3_PERSISTENT (a grid of at most one CTA per SM, set at load), every
// gridDim.x-th from blockIdx.x on, so that the next block's Q and first K/V tiles load while
// this one's last tiles and epilogue run.
#if KILN_FA3_PERSISTENT
#define KILN_FA3_NQ ((unsigned long long)KILN_FA3_QBLOCKS)
#define KILN_FA3_NH ((unsigned long long)KILN_HEADS_Q)
#define KILN_FA3_NB ((unsigned long long)KILN_BATCH)
#define KILN_FA3_FIRST ((unsigned long long)blockIdx.x)
#define KILN_FA3_STEP ((unsigned long long)gridDim.x)
#else
#define KILN_FA3_NQ ((unsigned long long)gridDim.x)
#define KILN_FA3_NH ((unsigned long long)gridDim.y)
#define KILN_FA3_NB ((unsigned long long)gridDim.z)
#define KILN_FA3_FIRST (blockIdx.x + KILN_FA3_NQ * (blockIdx.y + KILN_FA3_NH * blockIdx.z))
#define KILN_FA3_STEP (KILN_FA3_NQ * KILN_FA3_NH * KILN_FA3_NB)
#endif
#define KILN_FA3_TOTAL (KILN_FA3_NQ * KILN_FA3_NH * KILN_FA3_NB)

// The linear index of the k-th block of this CTA (KILN_FA3_TOTAL or more: none). Persistent CTAs
// take every gridDim.x-th block; with KILN_FA3_SNAKE the odd rounds go backwards, so that the CTA
// that took a round's first (longest, in the longest-first order) block takes the next round's
// last one. Run round-robin, the blocks of a causal or ragged batch, sorted longest first, give
// the first CTAs 6-10% more work than the mean; in a snake, under 2% (a list schedule).
__device__ __forceinline__ unsigned long long kiln_fa3_linear(unsigned k) {
#if KILN_FA3_PERSISTENT
    const unsigned long long i = (KILN_FA3_SNAKE && (k & 1u)) ? gridDim.x - 1u - blockIdx.x : blockIdx.x;
    return (unsigned long long)k * KILN_FA3_STEP + i;
#else
    return k == 0 ? KILN_FA3_FIRST : KILN_FA3_TOTAL;
#endif
}

// Block `linear`'s batch, query head and first query row (see the order above).
__device__ __forceinline__ void kiln_fa3_block(unsigned long long linear, int& b, int& h, int& q0) {
    constexpr long long kv_bytes = (long long)KILN_BATCH * KILN_HEADS_KV * KILN_SEQ_KV * (KILN_D_QK + KILN_D_V) * 2;
    unsigned long long qb, hb;
    if (KILN_MASK_HAS_RIGHT && kv_bytes <= KILN_FA3_LONGEST_FIRST_BYTES) {
        const unsigned long long pairs = KILN_FA3_NH * KILN_FA3_NB;
        hb = linear % pairs;
        qb = linear / pairs;
    } else {
        qb = linear % KILN_FA3_NQ;
        hb = linear / KILN_FA3_NQ;
    }
    b = (int)(hb / KILN_FA3_NH);
    h = (int)(hb % KILN_FA3_NH);
    q0 = (int)(KILN_FA3_NQ - 1 - qb) * KILN_FA3_BM;
}

#if KILN_FA3_STORE_O
// Returns the stage `pending` (a block's staged O, -1 for none) to the producer once the copy
// engine has read it; thread 0 of each consumer issued the stores and waits for them.
#define KILN_FA3_RELEASE_O(pending, t)                                       \
    do {                                                                     \
        if ((pending) >= 0) {                                                \
            if ((t) == 0) {                                                  \
                kiln_bulk_wait_read<0>();                                    \
                kiln_mbar_arrive(KILN_FA3_EMPTY(pending));                   \
            }                                                                \
            (pending) = -1;                                                  \
        }                                                                    \
    } while (0)
#endif

extern "C" __global__ void __launch_bounds__(KILN_FA3_THREADS, 1) KILN_SDPA_SYMBOL(KILN_FA3_MAP_PARAMS, KILN_SDPA_PARAMS) {
    extern __shared__ unsigned char kiln_smem_raw[];
    // Swizzle atoms need 1024-byte alignment; the launch asks for 1 KiB of slack.
    unsigned char* smem = (unsigned char*)(((unsigned long long)kiln_smem_raw + 1023ull) & ~1023ull);
    const unsigned q_st = kiln_smem(smem);
    const unsigned ring = q_st + KILN_FA3_QBUFS * KILN_FA3_Q_BYTES;
    const unsigned bars = ring + KILN_FA3_STAGES * KILN_FA3_STAGE_BYTES;
#define KILN_FA3_Q_FULL (bars)
// Q buffer i (i < KILN_FA3_QBUFS) at q_st + i Q_BYTES, its barriers (buffer 0's are Q_FULL and
// Q_EMPTY).
#define KILN_FA3_Q_FULL_AT(i) (bars + (unsigned)(i) * 8u * (2u + 3u * KILN_FA3_STAGES))
#define KILN_FA3_Q_EMPTY_AT(i) (bars + 8u * (1u + 3u * KILN_FA3_STAGES) + 16u * (unsigned)(i))
#define KILN_FA3_K_FULL(s) (bars + 8u * (1u + (unsigned)(s)))
#define KILN_FA3_V_FULL(s) (bars + 8u * (1u + KILN_FA3_STAGES + (unsigned)(s)))
#define KILN_FA3_EMPTY(s) (bars + 8u * (1u + 2u * KILN_FA3_STAGES + (unsigned)(s)))
// Persistent: the consumers are done with Q (their last S = Q K^T has retired).
#define KILN_FA3_Q_EMPTY (bars + 8u * (1u + 3u * KILN_FA3_STAGES))
#define KILN_FA3_K_ST(s) (ring + (unsigned)(s) * KILN_FA3_STAGE_BYTES)
#define KILN_FA3_V_ST(s) (KILN_FA3_K_ST(s) + KILN_FA3_K_BYTES)
    if (threadIdx.x == 0) {
        kiln_mbar_init(KILN_FA3_Q_FULL, 1u);
#pragma unroll 1
        for (int s = 0; s < KILN_FA3_STAGES; ++s) {
            kiln_mbar_init(KILN_FA3_K_FULL(s), 1u);
            kiln_mbar_init(KILN_FA3_V_FULL(s), 1u);
            kiln_mbar_init(KILN_FA3_EMPTY(s), (unsigned)KILN_FA3_CONSUMERS);
        }
#if KILN_FA3_PERSISTENT
        kiln_mbar_init(KILN_FA3_Q_EMPTY, (unsigned)KILN_FA3_CONSUMERS);
#endif
#if KILN_FA3_QBUFS == 2
        kiln_mbar_init(KILN_FA3_Q_FULL_AT(1), 1u);
        kiln_mbar_init(KILN_FA3_Q_EMPTY_AT(1), (unsigned)KILN_FA3_CONSUMERS);
#endif
        kiln_mbar_init_fence();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    if (wg == 0) {
        kiln_setmaxnreg_dec<KILN_FA3_PRODUCER_REGS>();
        if (t != 0) return;
        kiln_tma_prefetch_map(&map_q);
        kiln_tma_prefetch_map(&map_k);
        kiln_tma_prefetch_map(&map_v);
#if KILN_FA3_STORE_O
        kiln_tma_prefetch_map(&map_o);
#endif
        // The ring position continues from block to block.
        int s = 0;
        unsigned phase = 0, q_loads = 0;
#pragma unroll 1
        for (unsigned k = 0;; ++k) {
            const unsigned long long linear = kiln_fa3_linear(k);
            if (linear >= KILN_FA3_TOTAL) break;
            // The block's coordinates and the keys any of its rows may see (tiles of BN from
            // span_lo on), computed after setmaxnreg: a value live across it would be spilled.
            int b, h, q0;
            kiln_fa3_block(linear, b, h, q0);
            const int hk = h / KILN_GROUP;
            const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
            int span_lo = 0, span_hi = 0;
            if (q0 < lq) kiln_span(q0, min(q0 + KILN_FA3_BM, lq) - 1, lq, lkv, span_lo, span_hi);
            const int tiles = span_hi > span_lo ? (span_hi - span_lo + KILN_FA3_BN - 1) / KILN_FA3_BN : 0;
            if (tiles == 0) continue;
            // Q of the block into buffer qb (the blocks take the buffers in turn).
            const unsigned qb = q_loads % KILN_FA3_QBUFS;
#if KILN_FA3_PERSISTENT
            if (q_loads >= KILN_FA3_QBUFS) kiln_mbar_wait(KILN_FA3_Q_EMPTY_AT(qb), (q_loads / KILN_FA3_QBUFS - 1u) & 1u);
#endif
            kiln_mbar_arrive_expect_tx(KILN_FA3_Q_FULL_AT(qb), KILN_FA3_Q_BYTES);
#pragma unroll
            for (int c = 0; c < KILN_D_QK / 64; ++c)
                kiln_fa3_tma_q(q_st + qb * KILN_FA3_Q_BYTES + c * (KILN_FA3_BM * 128), &map_q, KILN_FA3_Q_FULL_AT(qb), 64 * c, q0, h, b);
#pragma unroll 1
            for (int n = 0; n < tiles; ++n) {
                const int j0 = span_lo + n * KILN_FA3_BN;
                kiln_mbar_wait(KILN_FA3_EMPTY(s), phase ^ 1u);
                kiln_mbar_arrive_expect_tx(KILN_FA3_K_FULL(s), KILN_FA3_K_BYTES);
#pragma unroll
                for (int c = 0; c < KILN_D_QK / 64; ++c)
                    kiln_fa3_tma_k(KILN_FA3_K_ST(s) + c * (KILN_FA3_BN * 128), &map_k, KILN_FA3_K_FULL(s), 64 * c, j0, hk, b);
                kiln_mbar_arrive_expect_tx(KILN_FA3_V_FULL(s), KILN_FA3_V_BYTES);
#pragma unroll
                for (int kb = 0; kb < KILN_FA3_BN / 64; ++kb)
#pragma unroll
                    for (int dc = 0; dc < KILN_D_V / 64; ++dc)
                        kiln_fa3_tma_v(KILN_FA3_V_ST(s) + (kb * (KILN_D_V / 64) + dc) * 8192, &map_v, KILN_FA3_V_FULL(s), 64 * dc, j0 + 64 * kb, hk, b);
                if (++s == KILN_FA3_STAGES) { s = 0; phase ^= 1u; }
            }
            ++q_loads;
        }
        return;
    }

    kiln_setmaxnreg_inc<KILN_FA3_CONSUMER_REGS>();
    // The ring position and the Q loads used continue from block to block.
    int ring_st = 0;
    unsigned ring_phase = 0, q_uses = 0;
    // KILN_FA3_STORE_O: the stage that holds the previous block's staged O until the copy engine
    // has read it (-1: none); o_stage is this block's last stage.
    int o_pending = -1, o_stage = 0;
    (void)o_stage;
#pragma unroll 1
    for (unsigned k = 0;; ++k) {
        const unsigned long long linear = kiln_fa3_linear(k);
        if (linear >= KILN_FA3_TOTAL) break;
        // The block's coordinates and the keys any of its rows may see (tiles of BN from
        // span_lo on), computed after setmaxnreg: a value live across it would be spilled.
        int b, h, q0;
        kiln_fa3_block(linear, b, h, q0);
        const int lq = KILN_LEN_Q(b), lkv = KILN_LEN_KV(b);
        int span_lo = 0, span_hi = 0;
        if (q0 < lq) kiln_span(q0, min(q0 + KILN_FA3_BM, lq) - 1, lq, lkv, span_lo, span_hi);
        const int tiles = span_hi > span_lo ? (span_hi - span_lo + KILN_FA3_BN - 1) / KILN_FA3_BN : 0;
        const int c = wg - 1;   // consumer index: query rows q0 + 64 c ..
        const int warp = t / 32, lane = t % 32, g = lane / 4, tq = lane % 4;
        const int r_first = q0 + 64 * c;
        const int rows[2] = {r_first + 16 * warp + g, r_first + 16 * warp + g + 8};
        int rlo[2], rhi[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            kiln_keys(rows[r], lq, lkv, rlo[r], rhi[r]);
            if (rows[r] >= lq) rlo[r] = rhi[r] = 0;
        }
        // A tile [j0, j0 + BN) needs no mask when every row of this warpgroup exists and sees all
        // of it: the band's ends never decrease with the row, so the last row's start and the first
        // row's end bound it.
        int wg_lo, wg_hi, ignored;
        kiln_keys(r_first + 63, lq, lkv, wg_lo, ignored);
        kiln_keys(r_first, lq, lkv, ignored, wg_hi);
        const bool wg_rows = r_first + 63 < lq;
        const float scale_log2 = (KILN_SCALE) * 1.4426950408889634f;

        float m[2] = {KILN_NEG_INF, KILN_NEG_INF}, l[2] = {0.0f, 0.0f};
        float o[KILN_D_V / 2];
#pragma unroll
        for (int i = 0; i < KILN_D_V / 2; ++i) o[i] = 0.0f;
        float s[KILN_FA3_BN / 2];
#pragma unroll
        for (int i = 0; i < KILN_FA3_BN / 2; ++i) s[i] = 0.0f;
        unsigned p[KILN_FA3_BN / 16][4];
        float corr[2];
        if (tiles > 0) {
            // The blocks take the Q buffers in turn.
            const unsigned qb = q_uses % KILN_FA3_QBUFS, q_buf = q_st + qb * KILN_FA3_Q_BYTES;
            kiln_mbar_wait(KILN_FA3_Q_FULL_AT(qb), (q_uses / KILN_FA3_QBUFS) & 1u);
            kiln_mbar_wait(KILN_FA3_K_FULL(ring_st), ring_phase);
            kiln_fa3_qk(s, q_buf, KILN_FA3_K_ST(ring_st), c);
#if KILN_FA3_STORE_O
            // While S runs: the previous block's O has left its stage, which the producer may
            // now refill.
            KILN_FA3_RELEASE_O(o_pending, t);
#endif
            kiln_wgmma_wait<0>();
            kiln_wgmma_hold(s);
#if KILN_FA3_EARLY_Q
            // The block's last S = Q K^T has retired: the producer may load Q into this buffer.
            if (tiles == 1 && t == 0) kiln_mbar_arrive(KILN_FA3_Q_EMPTY_AT(qb));
#endif
            kiln_fa3_softmax_tile(!(wg_rows && span_lo >= wg_lo && span_lo + KILN_FA3_BN <= wg_hi), s, m, l, corr,
                                  scale_log2, span_lo, rlo, rhi, tq);
            kiln_fa3_pack_p(s, p);
#if KILN_FA3_PINGPONG
            // The first consumer issues first: the last one hands it its first turn.
            if (c == KILN_FA3_CONSUMERS - 1 && tiles > 1) kiln_sdpa_bar_arrive(KILN_FA3_BAR_TURN, 256);
#endif
            int prev = ring_st, st = ring_st;
            unsigned prev_phase = ring_phase, phase = ring_phase;
            // Iteration n: S of tile n and P V of tile n - 1 on the tensor cores together; the
            // softmax of tile n while P V runs; P of tile n packed once P V has retired (its
            // registers are P V's operands until then).
#pragma unroll 1
            for (int n = 1; n < tiles; ++n) {
                if (++st == KILN_FA3_STAGES) { st = 0; phase ^= 1u; }
                const int j0 = span_lo + n * KILN_FA3_BN;
                kiln_mbar_wait(KILN_FA3_K_FULL(st), phase);
                kiln_mbar_wait(KILN_FA3_V_FULL(prev), prev_phase);
#if KILN_FA3_PINGPONG
                kiln_sdpa_bar_sync(KILN_FA3_BAR_TURN + c, 256);
#endif
                kiln_fa3_qk(s, q_buf, KILN_FA3_K_ST(st), c);
                // O to tile n - 1's maxima (tile 0: O is zero), then O += P V.
                kiln_fa3_rescale(o, corr);
                kiln_fa3_pv(o, p, KILN_FA3_V_ST(prev), true);
#if KILN_FA3_PINGPONG
                // The next consumer's turn, in a ring; the last one's last turn is answered by none.
                if (c < KILN_FA3_CONSUMERS - 1 || n + 1 < tiles)
                    kiln_sdpa_bar_arrive(KILN_FA3_BAR_TURN + (c + 1) % KILN_FA3_CONSUMERS, 256);
#endif
                kiln_wgmma_wait<1>();
                kiln_wgmma_hold(s);
#if KILN_FA3_EARLY_Q
                if (n == tiles - 1 && t == 0) kiln_mbar_arrive(KILN_FA3_Q_EMPTY_AT(qb));
#endif
                kiln_fa3_softmax_tile(!(wg_rows && j0 >= wg_lo && j0 + KILN_FA3_BN <= wg_hi), s, m, l, corr, scale_log2,
                                      j0, rlo, rhi, tq);
                kiln_wgmma_wait<0>();
                kiln_wgmma_hold(o);
                if (t == 0) kiln_mbar_arrive(KILN_FA3_EMPTY(prev));
                kiln_fa3_pack_p(s, p);
                prev = st;
                prev_phase = phase;
            }
#if KILN_FA3_PERSISTENT && !KILN_FA3_EARLY_Q
            // Every S = Q K^T of this consumer has retired: the producer may load the next Q.
            if (t == 0) kiln_mbar_arrive(KILN_FA3_Q_EMPTY);
#endif
            kiln_mbar_wait(KILN_FA3_V_FULL(prev), prev_phase);
            // The last tile's V rows past the block's keys but inside the tensor are real memory
            // (padding, or keys the band hides): zeros, so that their p = 0 cannot meet a NaN.
            const int j_last = span_lo + (tiles - 1) * KILN_FA3_BN;
            const int zero_from = span_hi - j_last, zero_to = min(KILN_FA3_BN, KILN_SEQ_KV - j_last);
            if (zero_to > zero_from) {
                const int pieces = (zero_to - zero_from) * (KILN_D_V / 64) * 8;   // 16-byte pieces
                for (int i = c * 128 + t; i < pieces; i += 128 * KILN_FA3_CONSUMERS) {
                    const int r = zero_from + i / ((KILN_D_V / 64) * 8), rest = i % ((KILN_D_V / 64) * 8);
                    const int dc = rest / 8, piece = rest % 8;
                    // A whole 128-byte row: the swizzle only permutes 16-byte pieces inside it.
                    const unsigned a = KILN_FA3_V_ST(prev) + ((r / 64) * (KILN_D_V / 64) + dc) * 8192 + (r % 64) * 128 + piece * 16;
                    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};" ::"r"(a), "r"(0u) : "memory");
                }
                kiln_fence_proxy_async();
                kiln_sdpa_bar_sync(KILN_FA3_BAR_CONSUMERS, 128 * KILN_FA3_CONSUMERS);
            }
            kiln_fa3_rescale(o, corr);
            kiln_fa3_pv(o, p, KILN_FA3_V_ST(prev), true);
            kiln_wgmma_wait<0>();
            kiln_wgmma_hold(o);
#if KILN_FA3_STORE_O
            // The stage is released once O, staged in it, has been read out (KILN_FA3_RELEASE_O).
            o_stage = prev;
#else
            if (t == 0) kiln_mbar_arrive(KILN_FA3_EMPTY(prev));
#endif
            // The next block's first tile is the ring's next stage.
            ring_st = st + 1 == KILN_FA3_STAGES ? 0 : st + 1;
            ring_phase = st + 1 == KILN_FA3_STAGES ? phase ^ 1u : phase;
            ++q_uses;
        }

        // Epilogue: O / l per row, stats = ln(sum exp(scores)) = m ln 2 + ln(l).
        float inv[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            l[r] += __shfl_xor_sync(0xffffffff, l[r], 1);
            l[r] += __shfl_xor_sync(0xffffffff, l[r], 2);
            inv[r] = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        }
#if KILN_FA3_STORE_O
        // A block of no tiles comes here with the previous block's O still in its stage.
        KILN_FA3_RELEASE_O(o_pending, t);
        if (tiles > 0) {
            // O through shared memory and the copy engine: the consumers' stores from registers
            // (two 4-byte pieces of each 16 bytes a row, scattered over 64 rows a warpgroup) kept
            // the load-store unit's queue full for about a tenth of a block at 1k keys. Every
            // consumer's last P V has retired, so the block's last stage is free: consumer c
            // stages its 64 rows there as D_V / 64 boxes of 64 rows x 128 bytes in the 128-byte
            // swizzle (the 16-byte piece u of row r at u ^ (r % 8): conflict-free, 8 rows x 4
            // threads a warp store), and one thread hands them to the copy engine, which clips
            // them at the tensor's extents. The stage returns to the producer once they are read.
            kiln_sdpa_bar_sync(KILN_FA3_BAR_CONSUMERS, 128 * KILN_FA3_CONSUMERS);
            const unsigned staged = KILN_FA3_K_ST(o_stage) + (unsigned)c * (64u * KILN_D_V * 2u);
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int row = 16 * warp + g + 8 * r;
#pragma unroll
                for (int j = 0; j < KILN_D_V / 8; ++j) {
                    const unsigned a = staged + (j / 8) * 8192 + row * 128 + (((j % 8) ^ g) << 4) + tq * 4;
                    const unsigned two = kiln_sdpa_pack2(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
                    asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(two) : "memory");
                }
            }
            kiln_fence_proxy_async();
            kiln_sdpa_bar_sync(KILN_FA3_BAR_STAGED + c, 128);
            if (t == 0) {
#pragma unroll
                for (int dc = 0; dc < KILN_D_V / 64; ++dc) kiln_fa3_tma_store_o(staged + dc * 8192, &map_o, 64 * dc, r_first, h, b);
                kiln_bulk_commit();
            }
            o_pending = o_stage;
        } else
#endif
        {
#if KILN_O_PAIR
            const bool pair = ((unsigned long long)KILN_O % (2 * sizeof(KILN_O_T))) == 0;
#endif
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const int i = rows[r];
                if (i >= KILN_SEQ_Q) continue;
#pragma unroll
                for (int j = 0; j < KILN_D_V / 8; ++j) {
                    const int d = 8 * j + 2 * tq;
                    const float v0 = o[4 * j + 2 * r] * inv[r], v1 = o[4 * j + 2 * r + 1] * inv[r];
#if KILN_O_PAIR
                    if (pair) {
                        kiln_vec<KILN_O_T, 2> two;
                        two.v[0] = kiln_st<KILN_O_T>(v0);
                        two.v[1] = kiln_st<KILN_O_T>(v1);
                        *reinterpret_cast<kiln_vec<KILN_O_T, 2>*>(&KILN_O[KILN_O_OFF(b, h, i, d)]) = two;
                        continue;
                    }
#endif
                    KILN_O[KILN_O_OFF(b, h, i, d)] = kiln_st<KILN_O_T>(v0);
                    KILN_O[KILN_O_OFF(b, h, i, d + 1)] = kiln_st<KILN_O_T>(v1);
                }
            }
        }
#if KILN_HAS_STATS
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const int i = rows[r];
            if (tq == 0 && i < KILN_SEQ_Q) {
                KILN_STATS[KILN_STATS_OFF(b, h, i, 0)] = l[r] > 0.0f ? m[r] * 0.6931471805599453f + logf(l[r]) : KILN_NEG_INF;
            }
        }
#endif
    }
#if KILN_FA3_STORE_O
    // The shared memory must outlive the copy engine's reads of the last staged O.
    if (t == 0 && o_pending >= 0) kiln_bulk_wait<0>();
#endif
#undef KILN_FA3_Q_FULL
#if KILN_FA3_STORE_O
#undef KILN_FA3_RELEASE_O
#endif
#undef KILN_FA3_Q_FULL_AT
#undef KILN_FA3_Q_EMPTY_AT
#undef KILN_FA3_K_FULL
#undef KILN_FA3_V_FULL
#undef KILN_FA3_EMPTY
#undef KILN_FA3_Q_EMPTY
#undef KILN_FA3_K_ST
#undef KILN_FA3_V_ST
}
