// Session 17 harness (not part of the build): kiln's generated cooperative batchnorm kernel for
// N32 C256 H56 W56 bf16 channels-last (dumped from codegen/norm.rs, symbol renamed bn_kernel),
// with compile-time switches for the variants timed in norms-notes.md, "Session 17". Build and
// run on the H200 with run.sh (nvcc, one binary a line of variants.txt).
// KILN_CUDA_NORM_V1, batchnorm training forward, channels-last, one cooperative kernel (sm_90):
// x and y packed channels-last ([positions][C], C a multiple of 8). Block b of the grid (at
// most one per multiprocessor, all resident: the launch is cooperative) takes positions
// [qa, qb) = [b * chunk, (b + 1) * chunk); the first KEEP of them are copied into its shared
// memory by the bulk copy engine and stay there, the rest are read from global memory twice
// (the second time mostly from L2). Thread (lane pl, channel group cg) handles the 8 channels
// cg*8.. of positions pl, pl + LANES, ... of each part.
//  1. per-channel sums of x - pivot and its square (the pivot, x at position 0, keeps a large
//     mean from cancelling), the block's sums to the workspace: s1 [NB][C], then s2 [NB][C];
//  2. grid barrier; each channel's NB block sums added in a fixed order in f64 by one warp of
//     block c % gridDim.x (deterministic), mean, inv_variance and the running statistics
//     stored, y's factors to the workspace (a = inv * scale [C], the mean [C], the bias [C]);
//  3. grid barrier; y = (x - mean) * a + bias, the streamed positions first (still in L2),
//     then those in shared memory.
// So x is read from memory about once: 0.55x the bytes of the three-kernel path.
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "hopper_ptx.cuh"
#include "norm_wide.cuh"
#include <cooperative_groups.h>
#ifndef U_S
#define U_S 4
#endif
#ifndef BLOCKSZ
#define BLOCKSZ 512
#endif
#ifndef KEEP_POS
#define KEEP_POS 400
#endif
#ifndef IL
#define IL 0
#endif
#ifndef PF
#define PF 0
#endif
#ifndef GS
#define GS 0
#endif
__device__ unsigned int bn_bar_count;
__device__ unsigned int bn_bar_gen;
// A grid barrier of one counter and a generation (all blocks resident).
__device__ __forceinline__ void bn_grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned gen;
        asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(gen) : "l"(&bn_bar_gen) : "memory");
        __threadfence();
        if (atomicAdd(&bn_bar_count, 1u) == gridDim.x - 1) {
            bn_bar_count = 0;
            __threadfence();
            atomicAdd(&bn_bar_gen, 1u);
        } else {
            unsigned now;
            do {
                asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(&bn_bar_gen) : "memory");
            } while (now == gen);
        }
        __threadfence();
    }
    __syncthreads();
}
#if GS
#define GRID_SYNC() bn_grid_sync()
#else
#define GRID_SYNC() grid.sync()
#endif
#ifndef KP
#define KP 0
#endif
#ifndef CS
#define CS 0
#endif
// y's 8 values: streaming (evict-first) 16-byte store with CS.
template <typename T>
__device__ __forceinline__ void bn_st8(T* p, bool wide, const float (&v)[8]) {
#if CS
    if (wide && sizeof(T) == 2) {
        kiln_vec<T, 8> w;
#pragma unroll
        for (int e = 0; e < 8; ++e) { w.v[e] = kiln_st<T>(v[e]); }
        __stcs(reinterpret_cast<uint4*>(p), *reinterpret_cast<uint4*>(&w));
        return;
    }
#endif
    kiln_st8(p, wide, v);
}
#ifndef DYN
#define DYN 0
#endif
#ifndef BULK_Y
#define BULK_Y 0
#endif
__device__ unsigned long long bn_dbg[1024 * 8];
#ifdef TIMING
#define TS(i) do { if (threadIdx.x == 0) { unsigned long long t_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_)); bn_dbg[blockIdx.x * 8 + (i)] = t_; } } while (0)
#else
#define TS(i) do {} while (0)
#endif

extern "C" __global__ void __launch_bounds__(BLOCKSZ, 1) bn_kernel(const __nv_bfloat16* __restrict__ p0, const float* __restrict__ p1, const float* __restrict__ p2, const float* __restrict__ p3, const float* __restrict__ p4, __nv_bfloat16* __restrict__ p5, float* __restrict__ p6, float* __restrict__ p7, float* __restrict__ p8, float* __restrict__ p9, float* __restrict__ kiln_ws) {
    typedef __nv_bfloat16 TX;
    constexpr int CG = 32;
    constexpr int BLOCK = BLOCKSZ;
    constexpr int LANES = BLOCK / CG;
    constexpr kiln_i64 C = 256LL;
    constexpr kiln_i64 P = 100352LL;
    constexpr kiln_i64 KEEP = KEEP_POS;
    constexpr kiln_i64 NB = 1024LL;  // the grid's upper bound (workspace rows)
    constexpr int U = U_S;                // streamed positions a thread loads before it adds
    extern __shared__ __align__(128) unsigned char kiln_dyn[];
    TX* kept = reinterpret_cast<TX*>(kiln_dyn);  // [KEEP][C]
    __shared__ float red[LANES][CG * 8];
    __shared__ __align__(8) unsigned long long bar;
    __shared__ __align__(8) unsigned long long pbars[8];
    constexpr unsigned long long PIECE_B = 32768;
    constexpr int PPOS = (int)(PIECE_B / (C * sizeof(TX)));
    auto grid = cooperative_groups::this_grid();
    const int cg = threadIdx.x % CG;
    const int pl = threadIdx.x / CG;
    const bool wide = (((unsigned long long)p0 | (unsigned long long)p5) % 16ULL) == 0 && ((unsigned long long)kiln_ws % 16ULL) == 0;
    const kiln_i64 nb = gridDim.x;
    const kiln_i64 chunk = (P + nb - 1) / nb;
    const kiln_i64 qa = (kiln_i64)blockIdx.x * chunk < P ? (kiln_i64)blockIdx.x * chunk : P;
    const kiln_i64 qb = qa + chunk < P ? qa + chunk : P;
    const kiln_i64 nkept = qb - qa < KEEP ? qb - qa : KEEP;
    const kiln_i64 qs = qa + nkept;  // the streamed positions: [qs, qb)
    // This thread's vectors of the streamed positions q0, q0 + LANES, ... (U of them, all loads
    // issued before any use).
    auto load_streamed = [&](kiln_i64 q0, float (&v)[U][8]) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const kiln_i64 q = q0 + u * LANES;
            if (q < qb) { kiln_ld8(p0 + q * C + cg * 8, wide, v[u]); }
        }
    };
#if KP == 1
    // Each thread copies the kept slots it reads (16 bytes each) with cp.async: no barrier.
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        kiln_cp_async_16(kiln_smem(kept + k * C + cg * 8), p0 + (qa + k) * C + cg * 8, 16);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
#elif IL
    if (wide && threadIdx.x == 0) {
        for (int i = 0; i < 8; ++i) kiln_mbar_init(kiln_smem(&pbars[i]), 1);
        kiln_mbar_init_fence();
        if (nkept > 0) {
            const unsigned long long total = (unsigned long long)(nkept * C) * sizeof(TX);
            int i = 0;
            for (unsigned long long at = 0; at < total; at += PIECE_B, ++i) {
                const unsigned n = (unsigned)(total - at < PIECE_B ? total - at : PIECE_B);
                kiln_mbar_arrive_expect_tx(kiln_smem(&pbars[i]), n);
                kiln_bulk_load(kiln_smem(kiln_dyn + at),
                               reinterpret_cast<const unsigned char*>(p0 + qa * C) + at, n,
                               kiln_smem(&pbars[i]));
            }
        }
    }
#else
    if (wide && threadIdx.x == 0) {
        kiln_mbar_init(kiln_smem(&bar), 1);
        kiln_mbar_init_fence();
        if (nkept > 0) {
            const unsigned long long total = (unsigned long long)(nkept * C) * sizeof(TX);
            kiln_mbar_arrive_expect_tx(kiln_smem(&bar), (unsigned)total);
            constexpr unsigned long long PIECE = KP == 2 ? 4096 : 32768;
            for (unsigned long long at = 0; at < total; at += PIECE) {
                const unsigned n = (unsigned)(total - at < PIECE ? total - at : PIECE);
                kiln_bulk_load(kiln_smem(kiln_dyn + at),
                               reinterpret_cast<const unsigned char*>(p0 + qa * C) + at, n,
                               kiln_smem(&bar));
            }
        }
    }
#endif
    TS(0);
    float pivot[8], s1[8], s2[8];
    kiln_ld8(p0 + cg * 8, wide, pivot);
#pragma unroll
    for (int e = 0; e < 8; ++e) { s1[e] = 0.0f; s2[e] = 0.0f; }
    __syncthreads();  // the barrier's initialisation, before any thread waits on it
#if IL
    const int npieces = (int)((nkept + PPOS - 1) / PPOS);
    int piece = 0;
    auto sum_piece = [&](int i) {
        kiln_mbar_wait(kiln_smem(&pbars[i]), 0);
        const kiln_i64 end = (kiln_i64)(i + 1) * PPOS < nkept ? (kiln_i64)(i + 1) * PPOS : nkept;
        for (kiln_i64 k = (kiln_i64)i * PPOS + pl; k < end; k += LANES) {
            float v[8];
            kiln_ld8(kept + k * C + cg * 8, true, v);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float d = v[e] - pivot[e];
                s1[e] += d;
                s2[e] += d * d;
            }
        }
    };
    for (kiln_i64 q0 = qs + pl; q0 < qb; q0 += U * LANES) {
        float v[U][8];
        load_streamed(q0, v);
        if (piece < npieces) { sum_piece(piece++); }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (q0 + u * LANES >= qb) { continue; }
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float d = v[u][e] - pivot[e];
                s1[e] += d;
                s2[e] += d * d;
            }
        }
    }
    TS(1);
    while (piece < npieces) { sum_piece(piece++); }
    TS(2);
#else
    // 1a. The streamed positions, U loads in flight a thread.
    for (kiln_i64 q0 = qs + pl; q0 < qb; q0 += U * LANES) {
        float v[U][8];
        load_streamed(q0, v);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (q0 + u * LANES >= qb) { continue; }
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float d = v[u][e] - pivot[e];
                s1[e] += d;
                s2[e] += d * d;
            }
        }
    }
    TS(1);
    // 1b. The kept positions, from shared memory. Without the bulk copy (unaligned pointers)
    // each thread copies the vectors it reads, here and in step 3, so no barrier is needed.
#if KP == 1
    asm volatile("cp.async.wait_all;" ::: "memory");
#else
    if (wide && nkept > 0) { kiln_mbar_wait(kiln_smem(&bar), 0); }
#endif
    TS(2);
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        TX* slot = kept + k * C + cg * 8;
        if (!wide) {
#pragma unroll
            for (int e = 0; e < 8; ++e) { slot[e] = p0[(qa + k) * C + cg * 8 + e]; }
        }
        float v[8];
        kiln_ld8(slot, true, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const float d = v[e] - pivot[e];
            s1[e] += d;
            s2[e] += d * d;
        }
    }
#endif
    // The block's sums: s1 through `red`, then s2.
    float* ws1 = kiln_ws + (kiln_i64)blockIdx.x * C;
    float* ws2 = kiln_ws + (NB + blockIdx.x) * C;
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
        for (int e = 0; e < 8; ++e) { red[pl][cg * 8 + e] = pass == 0 ? s1[e] : s2[e]; }
        __syncthreads();
        for (int c = threadIdx.x; c < CG * 8; c += BLOCK) {
            float a = 0.0f;
            for (int l = 0; l < LANES; ++l) { a += red[l][c]; }
            (pass == 0 ? ws1 : ws2)[c] = a;
        }
        __syncthreads();
    }
#if PF
    float pf_pivot = 0.0f, pf_sc = 0.0f, pf_bi = 0.0f, pf_pm = 0.0f, pf_pv = 0.0f;
    {
        const kiln_i64 c = blockIdx.x + (kiln_i64)(threadIdx.x / 32) * nb;
        if ((threadIdx.x & 31) == 0 && c < C) {
            pf_pivot = kiln_ld(p0[c]);
            pf_sc = p1[c]; pf_bi = p2[c]; pf_pm = p3[c]; pf_pv = p4[c];
        }
    }
#endif
    TS(3);
    GRID_SYNC();
    TS(4);
    // 2. Each channel's statistics, one warp a channel.
    {
        constexpr int WARPS = BLOCK / 32;
        const int lane = threadIdx.x & 31;
        for (kiln_i64 c = blockIdx.x + (kiln_i64)(threadIdx.x / 32) * nb; c < C && threadIdx.x / 32 < WARPS;
             c += (kiln_i64)WARPS * nb) {
            double a = 0.0, b = 0.0;
            for (kiln_i64 j = lane; j < nb; j += 32) {
                a += (double)kiln_ws[j * C + c];
                b += (double)kiln_ws[(NB + j) * C + c];
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                a += __shfl_xor_sync(0xffffffffu, a, o);
                b += __shfl_xor_sync(0xffffffffu, b, o);
            }
            if (lane == 0) {
                const kiln_i64 count = 100352LL;
                #if PF
                const float pivot = pf_pivot;
#else
                const float pivot = kiln_ld(p0[(0) * 802816LL + (c) + (0) * 14336LL + (0) * 256LL]);
#endif
                const double dmd = a / (double)count;
                const float dm = (float)dmd;
                const float mean = pivot + dm;
                const float var = (float)fmax(b / (double)count - dmd * dmd, 0.0);
                const float inv = 1.0f / sqrtf(var + 1e-5f);
#if PF
                const float sc = pf_sc, bi = pf_bi, pm = pf_pm, pv = pf_pv;
#else
                const float sc = kiln_ld(p1[(c)]);
                const float bi = kiln_ld(p2[(c)]);
                const float pm = p3[c], pv = p4[c];
#endif
                p6[(c)] = kiln_st<float>(mean);
                p7[(c)] = kiln_st<float>(inv);
                p8[(c)] = kiln_st<float>((1.0f - 1e-1f) * pm + 1e-1f * mean);
                p9[(c)] = kiln_st<float>((1.0f - 1e-1f) * pv + 1e-1f * var * 1.00001e0f);
                kiln_ws[2LL * NB * C + c] = inv * sc;
                kiln_ws[2LL * NB * C + C + c] = mean;
                kiln_ws[2LL * NB * C + 2LL * C + c] = bi;
            }
        }
    }
#if DYN
    if (blockIdx.x == 0 && threadIdx.x == 0) { reinterpret_cast<unsigned int*>(kiln_ws + 2LL * NB * C + 3LL * C)[0] = 0u; }
#endif
    GRID_SYNC();
    TS(5);
    // 3. y, the streamed positions first.
    float fa[8], fm[8], fb[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        fa[e] = kiln_ws[2LL * NB * C + cg * 8 + e];
        fm[e] = kiln_ws[2LL * NB * C + C + cg * 8 + e];
        fb[e] = kiln_ws[2LL * NB * C + 2LL * C + cg * 8 + e];
    }
#if DYN
    // Kept positions first (this block's), then streamed chunks of 64 positions claimed from a
    // counter by any block.
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        float v[8], y[8];
        kiln_ld8(kept + k * C + cg * 8, true, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) { y[e] = (v[e] - fm[e]) * fa[e] + fb[e]; }
        bn_st8(p5 + (qa + k) * C + cg * 8, wide, y);
    }
    TS(6);
    {
        unsigned int* ctr = reinterpret_cast<unsigned int*>(kiln_ws + 2LL * NB * C + 3LL * C);
        __shared__ int claim[2];
        const kiln_i64 ns = chunk - (KEEP < chunk ? KEEP : chunk);   // streamed positions of a full block
        constexpr int CH = U * LANES;
        const int cpb = (int)((ns + CH - 1) / CH);
        const int nchunks = cpb * (int)nb;
        if (threadIdx.x == 0) { claim[0] = (int)atomicAdd(ctr, 1u); }
        __syncthreads();
        int cur = claim[0];
        int it = 0;
        while (cur < nchunks) {
            if (threadIdx.x == 0) { claim[(it + 1) & 1] = (int)atomicAdd(ctr, 1u); }
            const kiln_i64 b = cur / cpb;
            const kiln_i64 bqa = b * chunk < P ? b * chunk : P;
            const kiln_i64 bqb = bqa + chunk < P ? bqa + chunk : P;
            const kiln_i64 bqs = bqa + (bqb - bqa < KEEP ? bqb - bqa : KEEP);
            const kiln_i64 q0 = bqs + (kiln_i64)(cur % cpb) * CH + pl;
            float v[U][8];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const kiln_i64 q = q0 + u * LANES;
                if (q < bqb) { kiln_ld8(p0 + q * C + cg * 8, wide, v[u]); }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const kiln_i64 q = q0 + u * LANES;
                if (q >= bqb) { continue; }
                float y[8];
#pragma unroll
                for (int e = 0; e < 8; ++e) { y[e] = (v[u][e] - fm[e]) * fa[e] + fb[e]; }
                bn_st8(p5 + q * C + cg * 8, wide, y);
            }
            __syncthreads();
            cur = claim[(it + 1) & 1];
            ++it;
        }
    }
    TS(7);
}
#else
#if BULK_Y
    // The kept positions' y in place in shared memory, then bulk stores by thread 0.
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        float v[8], y[8];
        kiln_ld8(kept + k * C + cg * 8, true, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) { y[e] = (v[e] - fm[e]) * fa[e] + fb[e]; }
        kiln_st8(kept + k * C + cg * 8, true, y);
    }
    kiln_fence_proxy_async();
    __syncthreads();
    if (wide && threadIdx.x == 0 && nkept > 0) {
        const unsigned long long total = (unsigned long long)(nkept * C) * sizeof(TX);
        constexpr unsigned long long PIECE = 16384;
        for (unsigned long long at = 0; at < total; at += PIECE) {
            const unsigned n = (unsigned)(total - at < PIECE ? total - at : PIECE);
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                         :: "l"(reinterpret_cast<unsigned char*>(p5 + qa * C) + at), "r"(kiln_smem(kiln_dyn + at)), "r"(n) : "memory");
        }
        kiln_bulk_commit();
    }
#endif
    for (kiln_i64 q0 = qs + pl; q0 < qb; q0 += U * LANES) {
        float v[U][8];
        load_streamed(q0, v);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const kiln_i64 q = q0 + u * LANES;
            if (q >= qb) { continue; }
            float y[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) { y[e] = (v[u][e] - fm[e]) * fa[e] + fb[e]; }
            bn_st8(p5 + q * C + cg * 8, wide, y);
        }
    }
    TS(6);
#if BULK_Y
    if (wide && threadIdx.x == 0) { kiln_bulk_wait_read<0>(); }
    if (!wide) {
#endif
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        float v[8], y[8];
        kiln_ld8(kept + k * C + cg * 8, true, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) { y[e] = (v[e] - fm[e]) * fa[e] + fb[e]; }
        bn_st8(p5 + (qa + k) * C + cg * 8, wide, y);
    }
#if BULK_Y
    }
#endif
    TS(7);
}
#endif
