// KILN_CUDA_MATMUL_V2 and KILN_CUDA_CONV_FPROP_V2 (Hopper, sm_90a): a persistent,
// warp-specialised GEMM, C[M, N] = A[M, K] * B[K, N] per batch, f16/bf16 in, f32 accumulate.
//
// A block is three warpgroups. Warpgroup 0 produces: it fills a ring of KILN_H_STAGES
// shared-memory stages, each one K slice (BK = 64) of an A tile (BM x 64) and a B tile (64 x BN),
// by the bulk tensor copy engine (TMA) or, for a convolution's activations, by cp.async from
// computed addresses, and each stage completes on its `full` mbarrier. Warpgroups 1 and 2 consume:
// each owns BM / 2 rows of the tile, issues wgmma.mma_async from the stage's descriptors into
// f32 accumulators in registers, and frees the stage on its `empty` mbarrier once the MMAs that
// read it have retired. setmaxnreg moves registers from the producer to the consumers. Blocks
// are persistent: the grid is sized from the device's SM count at load, and block b takes tiles
// b, b + gridDim.x, ... in an order that keeps KILN_H_GROUP_M row tiles together (L2 reuse).
// The epilogue (the generated kiln_gemm_epilogue: the main result's store and the fused
// pointwise chain) runs on the accumulators in registers while the producer already loads the
// next tile.
//
// Two consumer schedules (KILN_H_PINGPONG):
// - cooperative (0): both consumers work on one tile of 128 WM rows, 64 WM rows each, and run
//   its epilogue together, the tensor cores idle meanwhile;
// - ping-pong (1): each consumer owns whole tiles of 64 WM rows, consumer c the tiles
//   c, c + 2, ... of the block's sequence. The producer fills the ring in tile order, so the
//   consumers' mainloops alternate, and one's epilogue runs while the other's MMAs do; two named
//   barriers hand the tensor cores from one consumer to the other at the end of each mainloop.
//
// Shared-memory layouts (128-byte swizzle, the copy engine's and wgmma's common format): a
// K-major operand (K contiguous in memory) is stored as rows of 64 K elements (128 bytes); an
// M- or N-major one as boxes of 64 K rows x 64 M/N elements. wgmma reads the latter transposed.
//
// The generated prologue (codegen/hopper.rs) defines before the include:
//   elem_t, kiln_idx                       operand type; index type of the epilogue;
//   KILN_GEMM_M, _N, _K                    the GEMM extents;
//   KILN_H_BN, KILN_H_WM                   tile N; 64-row MMA tiles per consumer;
//   KILN_H_PINGPONG                        the consumer schedule (optional, default 0):
//                                          0 cooperative (BM = 128 WM), 1 ping-pong
//                                          (BM = 64 WM, one tile per consumer);
//   KILN_H_STAGES, KILN_H_GROUP_M          ring depth; row tiles per scheduling group;
//   KILN_H_A_KMAJOR, KILN_H_B_KMAJOR       1 when the operand is K-contiguous;
//   KILN_H_BATCHES                         batches (matmul batch dims, flattened);
//   KILN_H_A_GATHER                        1 when A is gathered by cp.async
//                                          (hopper_conv_gather.cuh), 2 for the conv
//                                          gradients' gathers (hopper_conv_grad.cuh), 0 for TMA;
//   KILN_H_MAP_PARAMS                      the tensor-map parameters: map_a (unless
//                                          gathered) and map_b;
//   KILN_H_PRODUCER_REGS, _CONSUMER_REGS   setmaxnreg targets;
//   kiln_h_tma_a(dst, map, bar, c0, c1, batch), kiln_h_tma_b(...)
//                                          one box of the operand at (c0 innermost, c1) in
//                                          batch `batch`;
//   kiln_wgmma(acc, desc_a, desc_b, scale_d)
//                                          one m64 x BN x k16 MMA with the operand transposes;
//   KILN_GEMM_SYMBOL, KILN_GEMM_PARAMS, KILN_GEMM_ARGS, kiln_gemm_epilogue as for V1;
//   KILN_H_STAGED                          1 when the epilogue writes one 16-bit tensor whose
//                                          element (gm, gn) sits at KILN_H_OUT + out offset +
//                                          gm * KILN_H_OUT_LD + gn (N contiguous, rows 16-byte
//                                          aligned); then also out_t, KILN_H_OUT,
//                                          KILN_H_OUT_LD, kiln_h_out_offset(batch) and
//                                          kiln_gemm_epilogue_value(params, batch, gm, gn, acc),
//                                          the epilogue's value without its store;
//                                          optionally KILN_H_OUT_ROW(batch, gm), row gm's
//                                          element offset (default gm * KILN_H_OUT_LD;
//                                          negative: a row with no output, not stored);
//   KILN_H_K_ITERS_OF(batch)               optional (a header included below may define it):
//                                          the K slices of batch `batch`, at most
//                                          KILN_H_K_ITERS, default all of them; a batch of
//                                          none has zero accumulators;
//   KILN_H_STREAM_K                        optional, default 0; 1: stream-K (cooperative
//                                          schedule, every tile KILN_H_K_ITERS slices), with
//                                          KILN_H_SK_CTAS (the most blocks that take work)
//                                          and KILN_H_SK_WS (a float* to the workspace: a
//                                          u32 counter per tile, zeroed before the launch,
//                                          then KILN_H_SK_CTAS partial tiles at float
//                                          KILN_H_SK_FLAGS);
//   KILN_H_B_RESIDENT                      optional, default 0; 1: B stays in shared memory
//                                          (one N tile, one batch, no stream-K; below).
//
// Resident B: where the whole of B (K x BN) fits beside the ring, the producer loads it once per
// block, one K slice per mbarrier, and the stages hold A alone. A tile then costs its A slices
// only: for a convolution with 64 filters (B = 9 slices of 8 KB) that is a third of the bytes
// each tile would otherwise read from L2.
//
// Stream-K: the tiles' K slices, tile after tile, are one sequence of tiles * K_ITERS units,
// and block b of G = min(gridDim.x, KILN_H_SK_CTAS) takes units [b U / G, (b + 1) U / G): every
// block the same work to within one slice, however few tiles there are. A block's range is at
// most the end of one tile, whole tiles, and the start of another (or a middle part of one);
// it walks its items last first. An item that does not end its tile (a head or a middle) is
// written, f32, to the block's partial slot and counted on its tile's counter; the item that
// ends a tile waits until the tile's earlier items (blocks below it, which wrote them as their
// first item, before waiting on anything) are counted, adds their partial sums to its own in
// block order (the same order on every run) and runs the epilogue.
#if !defined(KILN_H_BN) || !defined(KILN_H_STAGES) || !defined(KILN_GEMM_SYMBOL) || !defined(KILN_H_A_GATHER) || !defined(KILN_H_STAGED)
#error "hopper_gemm.cuh is included by a generated prologue that specialises it (codegen/hopper.rs)"
#endif
#include "hopper_ptx.cuh"
// The cooperative schedule unless the prologue asks for ping-pong (the prologues of the
// cooperative configurations predate the choice and do not define it).
#ifndef KILN_H_PINGPONG
#define KILN_H_PINGPONG 0
#endif

#define KILN_H_BK 64
#if KILN_H_PINGPONG
#define KILN_H_BM (64 * KILN_H_WM)
#else
#define KILN_H_BM (128 * KILN_H_WM)
#endif
#define KILN_H_A_BYTES (KILN_H_BM * KILN_H_BK * 2)
#define KILN_H_B_BYTES (KILN_H_BN * KILN_H_BK * 2)
#ifndef KILN_H_B_RESIDENT
#define KILN_H_B_RESIDENT 0
#endif
#if KILN_H_B_RESIDENT
#define KILN_H_STAGE_BYTES KILN_H_A_BYTES
#define KILN_H_BRES_BYTES (KILN_H_K_ITERS * KILN_H_B_BYTES)
#else
#define KILN_H_STAGE_BYTES (KILN_H_A_BYTES + KILN_H_B_BYTES)
#define KILN_H_BRES_BYTES 0
#endif
// Staged stores: each consumer's 64 WM x BN output tile in shared memory, rows padded by 16
// bytes so that the fragment writes (8 rows x 16 bytes per warp) hit 32 distinct banks.
#if KILN_H_STAGED
#define KILN_H_C_PITCH (KILN_H_BN * 2 + 16)
#define KILN_H_C_BYTES (64 * KILN_H_WM * KILN_H_C_PITCH)
#else
#define KILN_H_C_BYTES 0
#endif
// Tile counts as int (the generator keeps M, N and K below 2^31 - 512 and the tile count below
// 2^31), whatever kiln_idx is.
#define KILN_H_TILES_M ((int)((KILN_GEMM_M + KILN_H_BM - 1) / KILN_H_BM))
#define KILN_H_TILES_N ((int)((KILN_GEMM_N + KILN_H_BN - 1) / KILN_H_BN))
#define KILN_H_K_ITERS ((int)((KILN_GEMM_K + KILN_H_BK - 1) / KILN_H_BK))
static_assert(KILN_H_BN % 64 == 0 && KILN_H_BN <= 256, "tile N is a multiple of 64, at most 256");
static_assert(sizeof(elem_t) == 2, "wgmma operands are 16-bit here");
#if KILN_H_B_RESIDENT
static_assert(KILN_H_TILES_N == 1 && KILN_H_BATCHES == 1, "a resident B is the one B tile of the GEMM");
#if defined(KILN_H_STREAM_K) && KILN_H_STREAM_K
#error "a resident B runs without stream-K"
#endif
#endif
#if KILN_H_A_GATHER == 2
#include "hopper_conv_grad.cuh"
#elif KILN_H_A_GATHER
#include "hopper_conv_gather.cuh"
#endif
#ifndef KILN_H_K_ITERS_OF
#define KILN_H_K_ITERS_OF(batch) KILN_H_K_ITERS
#endif
#ifndef KILN_H_STREAM_K
#define KILN_H_STREAM_K 0
#endif
#if KILN_H_STREAM_K
#if KILN_H_PINGPONG || !defined(KILN_H_SK_CTAS) || !defined(KILN_H_SK_WS)
#error "stream-K runs the cooperative schedule and needs KILN_H_SK_CTAS and KILN_H_SK_WS"
#endif
// The partial tiles start after the tile counters, at a 256-byte boundary.
#define KILN_H_SK_FLAGS ((((long long)KILN_H_TILES_M * KILN_H_TILES_N * KILN_H_BATCHES + 63) / 64) * 64)

// Block `b`'s stream-K items, last first: next() gives the tile and its K slices [k0, k1).
struct kiln_h_sk_items {
    long long u, begin;
    __device__ __forceinline__ kiln_h_sk_items(long long units, int b) {
        const int g = min((int)gridDim.x, KILN_H_SK_CTAS);
        begin = b < g ? (long long)b * units / g : 0;
        u = b < g ? (long long)(b + 1) * units / g : 0;
    }
    __device__ __forceinline__ bool next(long long& tile, int& k0, int& k1) {
        if (u <= begin) return false;
        tile = (u - 1) / KILN_H_K_ITERS;
        const long long first = tile * KILN_H_K_ITERS;
        const long long from = first > begin ? first : begin;
        k0 = (int)(from - first);
        k1 = (int)(u - first);
        u = from;
        return true;
    }
};

// The block whose range holds unit `u` (of `units`, over G blocks): the largest b with
// b U / G <= u.
__device__ __forceinline__ int kiln_h_sk_block_of(long long u, long long units) {
    const long long g = min((int)gridDim.x, KILN_H_SK_CTAS);
    return (int)(((u + 1) * g - 1) / units);
}
#endif
#if KILN_H_STAGED && !defined(KILN_H_OUT_ROW)
#define KILN_H_OUT_ROW(batch, gm) ((kiln_i64)(gm) * KILN_H_OUT_LD)
#endif

// Tile `tile` of the persistent order: batch-major, then groups of KILN_H_GROUP_M row tiles
// swept column by column.
__device__ __forceinline__ void kiln_h_tile(long long tile, int& batch, int& tm, int& tn) {
    const long long per_batch = (long long)KILN_H_TILES_M * KILN_H_TILES_N;
    batch = (int)(tile / per_batch);
    const int r = (int)(tile % per_batch);
    const int group = r / (KILN_H_GROUP_M * KILN_H_TILES_N);
    const int first_m = group * KILN_H_GROUP_M;
    const int rows = min(KILN_H_TILES_M - first_m, KILN_H_GROUP_M);
    const int in_group = r % (KILN_H_GROUP_M * KILN_H_TILES_N);
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// K slice `kt` of B's column tile `tn` in batch `batch` into shared memory at `dst` (B_BYTES),
// completing on `bar`.
__device__ __forceinline__ void kiln_h_load_b(unsigned dst, const kiln_tensor_map* map_b, unsigned bar, int kt, int tn, int batch) {
#if KILN_H_B_KMAJOR
    kiln_h_tma_b(dst, map_b, bar, kt * KILN_H_BK, tn * KILN_H_BN, batch);
#else
#pragma unroll
    for (int j = 0; j < KILN_H_BN / 64; ++j)
        kiln_h_tma_b(dst + j * 8192, map_b, bar, tn * KILN_H_BN + 64 * j, kt * KILN_H_BK, batch);
#endif
}

#if KILN_H_PINGPONG
// The K slices of tile `tile` (which a ping-pong consumer skips in the ring for the other's).
__device__ __forceinline__ int kiln_h_tile_k_iters(long long tile) {
    int batch, tm, tn;
    kiln_h_tile(tile, batch, tm, tn);
    return KILN_H_K_ITERS_OF(batch);
}
#endif

extern "C" __global__ void __launch_bounds__(384, 1)
KILN_GEMM_SYMBOL(KILN_H_MAP_PARAMS, KILN_GEMM_PARAMS) {
    extern __shared__ unsigned char kiln_smem_raw[];
    // Swizzle atoms need 1024-byte alignment; the launch asks for 1 KiB of slack.
    // (An offset from the __shared__ array, not an integer cast, so that the compiler knows the
    // staged tile below is shared memory: 4-byte STS, no generic stores it cannot reorder
    // the epilogue's global loads across.)
    unsigned char* smem = kiln_smem_raw + ((1024u - (kiln_smem(kiln_smem_raw) & 1023u)) & 1023u);
    const unsigned tiles_base = kiln_smem(smem);
    // The ring, the consumers' output tiles, the resident B (if any), the barriers.
    const unsigned b_res = tiles_base + KILN_H_STAGES * KILN_H_STAGE_BYTES + 2 * KILN_H_C_BYTES;
    const unsigned bars = b_res + KILN_H_BRES_BYTES;
    (void)b_res;
    // full[s] at bars + 8 s, empty[s] at bars + 8 (STAGES + s), the resident B's slice kt at
    // bars + 8 (2 STAGES + kt).
#define KILN_H_FULL(s) (bars + 8u * (unsigned)(s))
#define KILN_H_EMPTY(s) (bars + 8u * (unsigned)(KILN_H_STAGES + (s)))
#define KILN_H_BFULL(kt) (bars + 8u * (unsigned)(2 * KILN_H_STAGES + (kt)))
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const long long tiles = (long long)KILN_H_TILES_M * KILN_H_TILES_N * KILN_H_BATCHES;
    if (threadIdx.x == 0) {
#pragma unroll 1
        for (int s = 0; s < KILN_H_STAGES; ++s) {
            // A gathered A tile completes with one arrival per producer thread plus the TMA
            // thread's expect_tx arrival for B (none when B is resident); a TMA-only stage with
            // the latter alone.
            kiln_mbar_init(KILN_H_FULL(s), KILN_H_A_GATHER ? (KILN_H_B_RESIDENT ? 128u : 129u) : 1u);
            // Freed by each consumer that reads the stage: both (cooperative) or its tile's one.
            kiln_mbar_init(KILN_H_EMPTY(s), KILN_H_PINGPONG ? 1u : 2u);
        }
#if KILN_H_B_RESIDENT
#pragma unroll 1
        for (int kt = 0; kt < KILN_H_K_ITERS; ++kt) kiln_mbar_init(KILN_H_BFULL(kt), 1u);
#endif
        kiln_mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        kiln_setmaxnreg_dec<KILN_H_PRODUCER_REGS>();
#if KILN_H_B_RESIDENT
        // The whole of B, once, slice by slice (the first tile's MMAs start on the first).
        if (t == 0) {
#pragma unroll 1
            for (int kt = 0; kt < KILN_H_K_ITERS; ++kt) {
                kiln_mbar_arrive_expect_tx(KILN_H_BFULL(kt), KILN_H_B_BYTES);
                kiln_h_load_b(b_res + kt * KILN_H_B_BYTES, &map_b, KILN_H_BFULL(kt), kt, 0, 0);
            }
        }
#endif
#if KILN_H_A_GATHER
        // All 128 producer threads gather A; thread 0 also issues B's TMA.
        int s = 0;
        unsigned phase = 0;
#if KILN_H_STREAM_K
        kiln_h_sk_items items(tiles * KILN_H_K_ITERS, blockIdx.x);
        long long tile;
        int k_first, k_end;
#pragma unroll 1
        while (items.next(tile, k_first, k_end)) {
            int batch, tm, tn;
            kiln_h_tile(tile, batch, tm, tn);
#else
#pragma unroll 1
        for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int batch, tm, tn;
            kiln_h_tile(tile, batch, tm, tn);
            const int k_first = 0, k_end = KILN_H_K_ITERS_OF(batch);
#endif
            KILN_H_GATHER_TILE_SETUP(tm * KILN_H_BM);
#pragma unroll 1
            for (int kt = k_first; kt < k_end; ++kt) {
                kiln_mbar_wait(KILN_H_EMPTY(s), phase ^ 1u);
                const unsigned a_dst = tiles_base + s * KILN_H_STAGE_BYTES;
#if !KILN_H_B_RESIDENT
                if (t == 0) {
                    kiln_mbar_arrive_expect_tx(KILN_H_FULL(s), KILN_H_B_BYTES);
                    kiln_h_load_b(a_dst + KILN_H_A_BYTES, &map_b, KILN_H_FULL(s), kt, tn, batch);
                }
#endif
                kiln_h_gather_a(a_dst, t, kt * KILN_H_BK);
                kiln_cp_async_arrive(KILN_H_FULL(s));
                if (++s == KILN_H_STAGES) { s = 0; phase ^= 1u; }
            }
        }
#else
        if (t == 0) {
            kiln_tma_prefetch_map(&map_a);
            kiln_tma_prefetch_map(&map_b);
            int s = 0;
            unsigned phase = 0;
#if KILN_H_STREAM_K
            kiln_h_sk_items items(tiles * KILN_H_K_ITERS, blockIdx.x);
            long long tile;
            int k_first, k_end;
#pragma unroll 1
            while (items.next(tile, k_first, k_end)) {
                int batch, tm, tn;
                kiln_h_tile(tile, batch, tm, tn);
#else
#pragma unroll 1
            for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int batch, tm, tn;
                kiln_h_tile(tile, batch, tm, tn);
                const int k_first = 0, k_end = KILN_H_K_ITERS_OF(batch);
#endif
#pragma unroll 1
                for (int kt = k_first; kt < k_end; ++kt) {
                    kiln_mbar_wait(KILN_H_EMPTY(s), phase ^ 1u);
                    const unsigned a_dst = tiles_base + s * KILN_H_STAGE_BYTES;
                    const unsigned full = KILN_H_FULL(s);
                    kiln_mbar_arrive_expect_tx(full, KILN_H_STAGE_BYTES);
                    const int k0 = kt * KILN_H_BK;
#if KILN_H_A_KMAJOR
                    kiln_h_tma_a(a_dst, &map_a, full, k0, tm * KILN_H_BM, batch);
#else
#pragma unroll
                    for (int j = 0; j < KILN_H_BM / 64; ++j)
                        kiln_h_tma_a(a_dst + j * 8192, &map_a, full, tm * KILN_H_BM + 64 * j, k0, batch);
#endif
#if !KILN_H_B_RESIDENT
                    kiln_h_load_b(a_dst + KILN_H_A_BYTES, &map_b, full, kt, tn, batch);
#endif
                    if (++s == KILN_H_STAGES) { s = 0; phase ^= 1u; }
                }
            }
        }
#endif
    } else {
        kiln_setmaxnreg_inc<KILN_H_CONSUMER_REGS>();
        // Consumer index. Cooperative: rows [c * BM / 2, (c + 1) * BM / 2) of every tile;
        // ping-pong: every row of every other tile.
        const int c = wg - 1;
        const int warp = t / 32, lane = t % 32;
        float acc[KILN_H_WM][KILN_H_BN / 2];
        int s = 0;
        unsigned phase = 0;
#if KILN_H_PINGPONG
        // First row of this consumer's MMA tiles within its tile.
        constexpr int crow = 0;
        // The ring position of this consumer's first tile: after the other's first when c = 1.
        long long tile = blockIdx.x + (long long)c * gridDim.x;
        const long long step = 2ll * gridDim.x;
        if (c == 1) {
            const int first = kiln_h_tile_k_iters(blockIdx.x);
            s = first % KILN_H_STAGES;
            phase = (unsigned)(first / KILN_H_STAGES) & 1u;
        }
#elif KILN_H_STREAM_K
        const int crow = c * KILN_H_WM * 64;
        kiln_h_sk_items items(tiles * KILN_H_K_ITERS, blockIdx.x);
        long long tile;
        int k_first, k_end;
#else
        const int crow = c * KILN_H_WM * 64;
        long long tile = blockIdx.x;
        const long long step = gridDim.x;
#endif
#if KILN_H_STREAM_K
#pragma unroll 1
        while (items.next(tile, k_first, k_end)) {
            int batch, tm, tn;
            kiln_h_tile(tile, batch, tm, tn);
#else
#pragma unroll 1
        for (; tile < tiles; tile += step) {
            int batch, tm, tn;
            kiln_h_tile(tile, batch, tm, tn);
            const int k_first = 0, k_end = KILN_H_K_ITERS_OF(batch);
#endif
#if KILN_H_PINGPONG
            // The tensor cores' turn: consumer 1 waits for consumer 0's mainloop of the tile
            // before, consumer 0 for consumer 1's (none before its first tile). Named barriers
            // 3 and 4 (1 and 2 are the consumers' own), 256 threads: one consumer arrives, the
            // other syncs.
            if (c == 1 || tile != blockIdx.x) asm volatile("bar.sync %0, 256;" ::"r"(3 + c) : "memory");
#endif
            int prev = -1;
#pragma unroll 1
            for (int kt = k_first; kt < k_end; ++kt) {
                kiln_mbar_wait(KILN_H_FULL(s), phase);
#if KILN_H_A_GATHER
                kiln_fence_proxy_async();
#endif
                const unsigned a_st = tiles_base + s * KILN_H_STAGE_BYTES;
#if KILN_H_B_RESIDENT
                const unsigned b_st = b_res + kt * KILN_H_B_BYTES;
                kiln_mbar_wait(KILN_H_BFULL(kt), 0u);
#else
                const unsigned b_st = a_st + KILN_H_A_BYTES;
#endif
                kiln_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < KILN_H_BK / 16; ++kk) {
#if KILN_H_B_KMAJOR
                    const unsigned long long db = kiln_wgmma_desc(b_st + kk * 32, 16, 1024);
#else
                    const unsigned long long db = kiln_wgmma_desc(b_st + kk * 2048, 8192, 1024);
#endif
#pragma unroll
                    for (int i = 0; i < KILN_H_WM; ++i) {
                        const int rows = crow + i * 64;   // first row of this MMA tile
#if KILN_H_A_KMAJOR
                        const unsigned long long da = kiln_wgmma_desc(a_st + rows * 128 + kk * 32, 16, 1024);
#else
                        const unsigned long long da = kiln_wgmma_desc(a_st + (rows / 64) * 8192 + kk * 2048, 8192, 1024);
#endif
                        kiln_wgmma(acc[i], da, db, (kt > k_first || kk > 0) ? 1 : 0);
                    }
                }
                kiln_wgmma_commit();
                // The MMAs of the previous stage have retired once at most this stage's group is
                // pending: free that stage.
                kiln_wgmma_wait<1>();
                if (prev >= 0 && t == 0) kiln_mbar_arrive(KILN_H_EMPTY(prev));
                prev = s;
                if (++s == KILN_H_STAGES) { s = 0; phase ^= 1u; }
            }
#if KILN_H_PINGPONG
            // Every MMA of this tile is issued: the other consumer's turn, when it has a tile
            // after this one (so that every arrival has its sync).
            if (tile + gridDim.x < tiles) asm volatile("bar.arrive %0, 256;" ::"r"(4 - c) : "memory");
#endif
            kiln_wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < KILN_H_WM; ++i) kiln_wgmma_hold(acc[i]);
            if (k_end == k_first) {
                // No K slice (a stride phase no filter tap reaches): the product is zero.
#pragma unroll
                for (int i = 0; i < KILN_H_WM; ++i)
#pragma unroll
                    for (int e = 0; e < KILN_H_BN / 2; ++e) acc[i][e] = 0.0f;
            }
            if (prev >= 0 && t == 0) kiln_mbar_arrive(KILN_H_EMPTY(prev));
#if KILN_H_STREAM_K
            {
                // Both consumers' 256 threads; thread ct holds float4 q of the tile at
                // (q * 256 + ct) in a partial slot, so that each warp's accesses are whole lines.
                const int ct = c * 128 + t;
                constexpr int quads = KILN_H_WM * KILN_H_BN / 8;
                unsigned* counters = reinterpret_cast<unsigned*>(KILN_H_SK_WS);
                if (k_end < KILN_H_K_ITERS) {
                    // A head or middle item: its partial sum for the tile's last item.
                    float4* slot = reinterpret_cast<float4*>(KILN_H_SK_WS + KILN_H_SK_FLAGS) + (long long)blockIdx.x * (quads * 256);
#pragma unroll
                    for (int i = 0; i < KILN_H_WM; ++i)
#pragma unroll
                        for (int q = 0; q < KILN_H_BN / 8; ++q)
                            __stcg(slot + (i * (KILN_H_BN / 8) + q) * 256 + ct, make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]));
                    __threadfence();
                    asm volatile("bar.sync 5, 256;" ::: "memory");
                    if (ct == 0) {
                        __threadfence();
                        atomicAdd(counters + tile, 1u);
                    }
                    continue;
                }
                if (k_first > 0) {
                    // The tile's last item: wait for the earlier ones, then add them in block
                    // order.
                    const long long units = tiles * KILN_H_K_ITERS;
                    const int b0 = kiln_h_sk_block_of(tile * KILN_H_K_ITERS, units);
                    if (ct == 0) {
                        const unsigned want = (unsigned)(blockIdx.x - b0);
                        unsigned seen;
                        do {
                            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counters + tile) : "memory");
                        } while (seen < want);
                        __threadfence();
                    }
                    asm volatile("bar.sync 5, 256;" ::: "memory");
#pragma unroll 1
                    for (int b = b0; b < (int)blockIdx.x; ++b) {
                        const float4* slot = reinterpret_cast<const float4*>(KILN_H_SK_WS + KILN_H_SK_FLAGS) + (long long)b * (quads * 256);
#pragma unroll
                        for (int i = 0; i < KILN_H_WM; ++i)
#pragma unroll
                            for (int q = 0; q < KILN_H_BN / 8; ++q) {
                                const float4 v = __ldcg(slot + (i * (KILN_H_BN / 8) + q) * 256 + ct);
                                acc[i][4 * q] += v.x;
                                acc[i][4 * q + 1] += v.y;
                                acc[i][4 * q + 2] += v.z;
                                acc[i][4 * q + 3] += v.w;
                            }
                    }
                }
            }
#endif
#if KILN_H_PINGPONG
            // Skip the other consumer's tile in the ring (its K slices' stages; past the
            // last tile the count is never used).
            {
                const int ahead = s + kiln_h_tile_k_iters(tile + gridDim.x);
                s = ahead % KILN_H_STAGES;
                phase ^= (unsigned)(ahead / KILN_H_STAGES) & 1u;
            }
#endif

            // Accumulator layout of m64nNk16 (f32): per 8 columns j, warp w holds rows
            // 16 w + lane / 4 (+ 8), columns 8 j + 2 (lane % 4) (+ 1).
#if KILN_H_STAGED
            // First every value of the epilogue, in place, at coordinates clamped into the
            // output (a value outside it is computed and never stored): no branch and no store
            // between the epilogue's global loads, so they issue together instead of one
            // round trip per element. Then the values into this consumer's shared tile (two
            // columns per 4-byte write), and out in 16-byte row-contiguous stores: a warp
            // writes whole rows instead of 8 partial ones per instruction.
            unsigned char* ctile = smem + KILN_H_STAGES * KILN_H_STAGE_BYTES + c * KILN_H_C_BYTES;
            const kiln_idx row0 = (kiln_idx)tm * KILN_H_BM + crow;
            const kiln_idx col0 = (kiln_idx)tn * KILN_H_BN;
#pragma unroll
            for (int i = 0; i < KILN_H_WM; ++i) {
#pragma unroll
                for (int j = 0; j < KILN_H_BN / 8; ++j) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int r = i * 64 + warp * 16 + lane / 4 + 8 * (e / 2), cc = 8 * j + 2 * (lane % 4) + e % 2;
                        const kiln_idx gm = min(row0 + r, (kiln_idx)(KILN_GEMM_M - 1));
                        const kiln_idx gn = min(col0 + cc, (kiln_idx)(KILN_GEMM_N - 1));
                        acc[i][4 * j + e] = kiln_gemm_epilogue_value(KILN_GEMM_ARGS, (kiln_i64)batch, gm, gn, acc[i][4 * j + e]);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < KILN_H_WM; ++i) {
#pragma unroll
                for (int j = 0; j < KILN_H_BN / 8; ++j) {
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = i * 64 + warp * 16 + lane / 4 + 8 * h, cc = 8 * j + 2 * (lane % 4);
                        kiln_vec<out_t, 2> pair;
                        pair.v[0] = kiln_st<out_t>(acc[i][4 * j + 2 * h]);
                        pair.v[1] = kiln_st<out_t>(acc[i][4 * j + 2 * h + 1]);
                        *reinterpret_cast<kiln_vec<out_t, 2>*>(ctile + r * KILN_H_C_PITCH + cc * 2) = pair;
                    }
                }
            }
            asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
            {
                out_t* out = KILN_H_OUT + kiln_h_out_offset((kiln_i64)batch);
                const bool aligned = ((unsigned long long)out % 16ull) == 0;
                constexpr int chunks = KILN_H_BN / 8;   // 16-byte chunks per tile row
#pragma unroll 4
                for (int q = t; q < 64 * KILN_H_WM * chunks; q += 128) {
                    const int r = q / chunks, cc = (q % chunks) * 8;
                    const kiln_idx gm = row0 + r, gn = col0 + cc;
                    if (gm >= KILN_GEMM_M || gn >= KILN_GEMM_N) continue;
                    const kiln_i64 row = KILN_H_OUT_ROW(batch, gm);
                    if (row < 0) continue;
                    const kiln_vec<out_t, 8> v = *reinterpret_cast<const kiln_vec<out_t, 8>*>(ctile + r * KILN_H_C_PITCH + cc * 2);
                    out_t* dst = out + row + gn;
                    if (aligned && gn + 8 <= KILN_GEMM_N) {
                        *reinterpret_cast<kiln_vec<out_t, 8>*>(dst) = v;
                    } else {
#pragma unroll
                        for (int e = 0; e < 8; ++e)
                            if (gn + e < KILN_GEMM_N) dst[e] = v.v[e];
                    }
                }
            }
            // The tile is read out before the next one is written.
            asm volatile("bar.sync %0, 128;" ::"r"(1 + c) : "memory");
#else
#pragma unroll
            for (int i = 0; i < KILN_H_WM; ++i) {
                const kiln_idx row = (kiln_idx)tm * KILN_H_BM + crow + i * 64 + warp * 16 + lane / 4;
                const kiln_idx col = (kiln_idx)tn * KILN_H_BN + 2 * (lane % 4);
#pragma unroll
                for (int j = 0; j < KILN_H_BN / 8; ++j) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const kiln_idx gm = row + (e / 2) * 8, gn = col + 8 * j + (e % 2);
                        if (gm < KILN_GEMM_M && gn < KILN_GEMM_N)
                            kiln_gemm_epilogue(KILN_GEMM_ARGS, (kiln_i64)batch, gm, gn, acc[i][4 * j + e]);
                    }
                }
            }
#endif
        }
    }
#undef KILN_H_FULL
#undef KILN_H_EMPTY
#undef KILN_H_BFULL
}
