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

extern "C" __global__ void __launch_bounds__({{BLOCK}}, 1) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    typedef {{TX}} TX;
    constexpr int CG = {{GROUPS_C}};
    constexpr int BLOCK = {{BLOCK}};
    constexpr int LANES = BLOCK / CG;
    constexpr kiln_i64 C = {{C}}LL;
    constexpr kiln_i64 P = {{POSITIONS}}LL;
    constexpr kiln_i64 KEEP = {{KEEP}}LL;
    constexpr kiln_i64 NB = {{NB}}LL;  // the grid's upper bound (workspace rows)
    constexpr int U = 4;                // streamed positions a thread loads before it adds
    extern __shared__ __align__(128) unsigned char kiln_dyn[];
    TX* kept = reinterpret_cast<TX*>(kiln_dyn);  // [KEEP][C]
    __shared__ float red[LANES][CG * 8];
    __shared__ __align__(8) unsigned long long bar;
    auto grid = cooperative_groups::this_grid();
    const int cg = threadIdx.x % CG;
    const int pl = threadIdx.x / CG;
    const bool wide = {{ALIGNED}} && ((unsigned long long)kiln_ws % 16ULL) == 0;
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
            if (q < qb) { kiln_ld8({{X}} + q * C + cg * 8, wide, v[u]); }
        }
    };
    if (wide && threadIdx.x == 0) {
        kiln_mbar_init(kiln_smem(&bar), 1);
        kiln_mbar_init_fence();
        if (nkept > 0) {
            const unsigned long long total = (unsigned long long)(nkept * C) * sizeof(TX);
            kiln_mbar_arrive_expect_tx(kiln_smem(&bar), (unsigned)total);
            constexpr unsigned long long PIECE = 32768;
            for (unsigned long long at = 0; at < total; at += PIECE) {
                const unsigned n = (unsigned)(total - at < PIECE ? total - at : PIECE);
                kiln_bulk_load(kiln_smem(kiln_dyn + at),
                               reinterpret_cast<const unsigned char*>({{X}} + qa * C) + at, n,
                               kiln_smem(&bar));
            }
        }
    }
    float pivot[8], s1[8], s2[8];
    kiln_ld8({{X}} + cg * 8, wide, pivot);
#pragma unroll
    for (int e = 0; e < 8; ++e) { s1[e] = 0.0f; s2[e] = 0.0f; }
    __syncthreads();  // the barrier's initialisation, before any thread waits on it
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
    // 1b. The kept positions, from shared memory. Without the bulk copy (unaligned pointers)
    // each thread copies the vectors it reads, here and in step 3, so no barrier is needed.
    if (wide && nkept > 0) { kiln_mbar_wait(kiln_smem(&bar), 0); }
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        TX* slot = kept + k * C + cg * 8;
        if (!wide) {
#pragma unroll
            for (int e = 0; e < 8; ++e) { slot[e] = {{X}}[(qa + k) * C + cg * 8 + e]; }
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
    grid.sync();
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
                const kiln_i64 count = {{COUNT}}LL;
                const float pivot = {{LOAD_PIVOT}};
                const double dmd = a / (double)count;
                const float dm = (float)dmd;
                const float mean = pivot + dm;
                const float var = (float)fmax(b / (double)count - dmd * dmd, 0.0);
                const float inv = 1.0f / sqrtf(var + {{EPS}});
                const float sc = {{LOAD_SCALE}};
                const float bi = {{LOAD_BIAS}};
{{STATS}}
                kiln_ws[2LL * NB * C + c] = inv * sc;
                kiln_ws[2LL * NB * C + C + c] = mean;
                kiln_ws[2LL * NB * C + 2LL * C + c] = bi;
            }
        }
    }
    grid.sync();
    // 3. y, the streamed positions first.
    float fa[8], fm[8], fb[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        fa[e] = kiln_ws[2LL * NB * C + cg * 8 + e];
        fm[e] = kiln_ws[2LL * NB * C + C + cg * 8 + e];
        fb[e] = kiln_ws[2LL * NB * C + 2LL * C + cg * 8 + e];
    }
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
            kiln_st8({{Y}} + q * C + cg * 8, wide, y);
        }
    }
    for (kiln_i64 k = pl; k < nkept; k += LANES) {
        float v[8], y[8];
        kiln_ld8(kept + k * C + cg * 8, true, v);
#pragma unroll
        for (int e = 0; e < 8; ++e) { y[e] = (v[e] - fm[e]) * fa[e] + fb[e]; }
        kiln_st8({{Y}} + (qa + k) * C + cg * 8, wide, y);
    }
}
