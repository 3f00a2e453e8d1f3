// KILN_CUDA_NORM_V1, per-sample backward (layernorm_backward, rmsnorm_backward), ring path
// (sm_90), first kernel: x, dy, dx and scale packed row-major, INNER a multiple of 8. Each block
// is one row group (group g takes rows g, g + GROUPS, ...). The bulk copy engine brings each
// row's x and dy into a ring of STAGES shared-memory stages, up to STAGES - 1 rows ahead of the
// one in use, so that a block always has rows in flight while it sums and stores (the register path,
// norm_rows_backward_wide.cu, has one row in flight and none during its sums). Per row: a pass
// over the stage for the two row sums and the thread's dscale/dbias terms, one block barrier
// (each warp's sums in a slot of a double-buffered array, every thread adding the slots), then
// dx from x_hat and g held in registers. After that barrier every thread is done with the previous
// row's stage, so thread 0 refills it with the row STAGES further on. Without 16-byte aligned
// pointers each thread copies its own columns into its stage with element loads (slower, same
// results). The dscale/dbias partial rows go to the workspace as in the register path, and
// norm_columns_reduce.cu sums them in a fixed order (deterministic).
// Placeholders (double braces) are filled by codegen/norm.rs.
#include "common.cuh"
#include "hopper_ptx.cuh"
#include "norm_reduce.cuh"
#include "norm_wide.cuh"

extern "C" __global__ void __launch_bounds__({{BLOCK}}) {{SYMBOL}}({{PARAMS}}, float* __restrict__ kiln_ws) {
    typedef {{TX}} TX;
    typedef {{TDY}} TDY;
    constexpr int T = {{BLOCK}};
    constexpr int WARPS = T / 32;
    constexpr int S = {{STAGES}};
    constexpr int VPT = {{VPT}};
    constexpr kiln_i64 inner = {{INNER}}LL;
    constexpr int nvec = {{INNER}} / 8;
    extern __shared__ __align__(128) unsigned char kiln_dyn[];
    __shared__ __align__(8) unsigned long long bars[S];
    __shared__ float2 part[2][WARPS];
    TX* sx = reinterpret_cast<TX*>(kiln_dyn);
    TDY* sdy = reinterpret_cast<TDY*>(kiln_dyn + S * inner * sizeof(TX));
    const int tid = threadIdx.x;
    const kiln_i64 group = blockIdx.x;
    const int nrows = (int)(({{ROWS}}LL - 1 - group) / {{GROUPS}}LL) + 1;
    const bool wide = {{ALIGNED}} && ((unsigned long long)kiln_ws % 16ULL) == 0;
    const unsigned xbytes = (unsigned)(inner * sizeof(TX));
    const unsigned dybytes = (unsigned)(inner * sizeof(TDY));
    // Thread 0 starts the copy of row i (the group's i-th) into its stage.
    auto fetch = [&](int i) {
        const int s = i % S;
        const kiln_i64 row = group + (kiln_i64)i * {{GROUPS}}LL;
        const unsigned bar = kiln_smem(&bars[s]);
        kiln_mbar_arrive_expect_tx(bar, xbytes + dybytes);
        kiln_bulk_load(kiln_smem(sx + s * inner), {{X}} + row * inner, xbytes, bar);
        kiln_bulk_load(kiln_smem(sdy + s * inner), {{DY}} + row * inner, dybytes, bar);
    };
    if (wide && tid == 0) {
#pragma unroll
        for (int s = 0; s < S; ++s) { kiln_mbar_init(kiln_smem(&bars[s]), 1); }
        kiln_mbar_init_fence();
        for (int i = 0; i < S && i < nrows; ++i) { fetch(i); }
    }
    // This thread's scale, read once.
    float sc[VPT][8];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int c = tid + k * T;
        if (c < nvec) {
            kiln_ld8({{SCALE}} + c * 8, wide, sc[k]);
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) { sc[k][e] = 0.0f; }
        }
    }
    float ds[VPT][8], db[VPT][8];
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
#pragma unroll
        for (int e = 0; e < 8; ++e) { ds[k][e] = 0.0f; db[k][e] = 0.0f; }
    }
    __syncthreads();  // the barriers' initialisation, before any thread waits on them
    kiln_i64 row = group;
    float mean = {{LOAD_MEAN}};
    float inv = {{LOAD_INV}};
    for (int i = 0; i < nrows; ++i) {
        const int s = i % S;
        // Next row's statistics, loaded now and used one row later.
        const kiln_i64 next = row + {{GROUPS}}LL;
        float mean_next = 0.0f, inv_next = 0.0f;
        if (i + 1 < nrows) {
            const kiln_i64 row = next;
            mean_next = {{LOAD_MEAN}};
            inv_next = {{LOAD_INV}};
        }
        const TX* rx = sx + s * inner;
        const TDY* rdy = sdy + s * inner;
        if (wide) {
            kiln_mbar_wait(kiln_smem(&bars[s]), (unsigned)((i / S) & 1));
        } else {
            // Each thread copies the columns it reads, so no barrier is needed.
#pragma unroll
            for (int k = 0; k < VPT; ++k) {
                const int c = tid + k * T;
                if (c < nvec) {
#pragma unroll
                    for (int e = 0; e < 8; ++e) {
                        sx[s * inner + c * 8 + e] = {{X}}[row * inner + c * 8 + e];
                        sdy[s * inner + c * 8 + e] = {{DY}}[row * inner + c * 8 + e];
                    }
                }
            }
        }
        float sg = 0.0f, sgx = 0.0f;
        // x_hat and g of this thread's columns, held across the barrier.
        float hxh[VPT][8], hg[VPT][8];
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int c = tid + k * T;
            if (c < nvec) {
                float x[8], dy[8];
                kiln_ld8(rx + c * 8, true, x);
                kiln_ld8(rdy + c * 8, true, dy);
#pragma unroll
                for (int e = 0; e < 8; ++e) {
                    const float xh = (x[e] - mean) * inv;
                    const float g = dy[e] * sc[k][e];
                    sg += g;
                    sgx += g * xh;
                    ds[k][e] += dy[e] * xh;
                    db[k][e] += dy[e];
                    hxh[k][e] = xh;
                    hg[k][e] = g;
                }
            }
        }
        sg = kiln_warp_sum(sg);
        sgx = kiln_warp_sum(sgx);
        if ((tid & 31) == 0) { part[i & 1][tid >> 5] = make_float2(sg, sgx); }
        __syncthreads();
        // Every thread is past the previous row's second pass: its stage takes row i - 1 + S.
        if (wide && tid == 0 && i >= 1 && i - 1 + S < nrows) { fetch(i - 1 + S); }
        sg = 0.0f;
        sgx = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const float2 p = part[i & 1][w];
            sg += p.x;
            sgx += p.y;
        }
        const float mg = {{RMS}} ? 0.0f : sg / (float)inner;
        const float mgx = sgx / (float)inner;
        // dx = inv * (g - mg - x_hat * mgx), as g * inv + (x_hat * cx + c0).
        const float c0 = -mg * inv;
        const float cx = -mgx * inv;
#pragma unroll
        for (int k = 0; k < VPT; ++k) {
            const int c = tid + k * T;
            if (c < nvec) {
                float dx[8];
#pragma unroll
                for (int e = 0; e < 8; ++e) { dx[e] = fmaf(hg[k][e], inv, fmaf(hxh[k][e], cx, c0)); }
                kiln_st8({{DX}} + row * inner + c * 8, wide, dx);
            }
        }
        row = next;
        mean = mean_next;
        inv = inv_next;
    }
#pragma unroll
    for (int k = 0; k < VPT; ++k) {
        const int c = tid + k * T;
        if (c < nvec) {
            kiln_st8(kiln_ws + group * inner + c * 8, wide, ds[k]);
            kiln_st8(kiln_ws + ({{GROUPS}}LL + group) * inner + c * 8, wide, db[k]);
        }
    }
}
