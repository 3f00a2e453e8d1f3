// Harness: a one-launch layernorm backward for small row counts (bf16 x, dy, dx, scale, dscale,
// dbias; f32 saved mean and inverse deviation), against a device-to-device copy of the same
// bytes (x + dy read, dx written) and against the same phase 1 followed by a second launch.
// Checks dx (every row) and dscale/dbias against an f64 reference on the host.
//
// Phase 1: one warp per row (rows w, w + W, ... for warp w of W), each lane holding 8 * CH
// columns in registers; the warp's dscale/dbias partials accumulate in its own slice of shared
// memory. The block sums its warps' partials in warp order and writes one partial row.
// Phase 2 (after a grid barrier, or in a second launch): block b sums a slice of the columns
// over every block's partial row in a fixed order. Deterministic: no atomics.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>

namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

#ifndef ROWS
#define ROWS 4096
#endif
#ifndef HID
#define HID 1024
#endif
#ifndef WARPS
#define WARPS 16
#endif
constexpr int CH = HID / 256;  // 16-byte chunks a lane holds per tensor
static_assert(HID % 256 == 0, "hidden a multiple of 256");

__device__ __forceinline__ void unpack(const uint4& v, float f[8]) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) { float2 t = __bfloat1622float2(h[i]); f[2 * i] = t.x; f[2 * i + 1] = t.y; }
}
__device__ __forceinline__ uint4 pack(const float f[8]) {
    uint4 v;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    return v;
}

struct Args {
    const __nv_bfloat16* x; const __nv_bfloat16* dy; const __nv_bfloat16* scale;
    const float* mean; const float* inv;
    __nv_bfloat16* dx; __nv_bfloat16* dscale; __nv_bfloat16* dbias;
    float* ws;  // [gridDim.x][2 * HID]
};

// Phase 1 body: rows of this block's warps, then the block's partial row into ws.
__device__ __forceinline__ void phase1(const Args& a, float* sh) {
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    float* mine = sh + wib * 2 * HID;  // [2][HID]: dscale, dbias partials of this warp
    for (int i = lane * 4; i < 2 * HID; i += 128) *reinterpret_cast<float4*>(mine + i) = make_float4(0.f, 0.f, 0.f, 0.f);
    const long W = (long)gridDim.x * WARPS;
    const long w = (long)blockIdx.x * WARPS + wib;
    float sc[CH][8];
#pragma unroll
    for (int k = 0; k < CH; ++k) unpack(__ldg(reinterpret_cast<const uint4*>(a.scale) + k * 32 + lane), sc[k]);
    uint4 cx[CH], cd[CH];
    long row = w;
    float cmean = 0.f, cinv = 0.f;
    if (row < ROWS) {
        cmean = a.mean[row]; cinv = a.inv[row];
#pragma unroll
        for (int k = 0; k < CH; ++k) {
            cx[k] = __ldcs(reinterpret_cast<const uint4*>(a.x + row * HID) + k * 32 + lane);
            cd[k] = __ldcs(reinterpret_cast<const uint4*>(a.dy + row * HID) + k * 32 + lane);
        }
    }
    for (; row < ROWS; row += W) {
        const float mean = cmean, inv = cinv;
        uint4 nx[CH], nd[CH];
        const long next = row + W;
        if (next < ROWS) {
            cmean = a.mean[next]; cinv = a.inv[next];
#pragma unroll
            for (int k = 0; k < CH; ++k) {
                nx[k] = __ldcs(reinterpret_cast<const uint4*>(a.x + next * HID) + k * 32 + lane);
                nd[k] = __ldcs(reinterpret_cast<const uint4*>(a.dy + next * HID) + k * 32 + lane);
            }
        }
        float sg = 0.f, sgx = 0.f;
#pragma unroll
        for (int k = 0; k < CH; ++k) {
            float xf[8], df[8];
            unpack(cx[k], xf); unpack(cd[k], df);
            float* p = mine + (k * 32 + lane) * 8;
            float4 s0 = *reinterpret_cast<float4*>(p), s1 = *reinterpret_cast<float4*>(p + 4);
            float4 b0 = *reinterpret_cast<float4*>(p + HID), b1 = *reinterpret_cast<float4*>(p + HID + 4);
            float* s = reinterpret_cast<float*>(&s0); float* s_ = reinterpret_cast<float*>(&s1);
            float* b = reinterpret_cast<float*>(&b0); float* b_ = reinterpret_cast<float*>(&b1);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float xh = (xf[e] - mean) * inv;
                const float g = df[e] * sc[k][e];
                sg += g; sgx += g * xh;
                if (e < 4) { s[e] += df[e] * xh; b[e] += df[e]; } else { s_[e - 4] += df[e] * xh; b_[e - 4] += df[e]; }
            }
            *reinterpret_cast<float4*>(p) = s0; *reinterpret_cast<float4*>(p + 4) = s1;
            *reinterpret_cast<float4*>(p + HID) = b0; *reinterpret_cast<float4*>(p + HID + 4) = b1;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) { sg += __shfl_xor_sync(0xffffffffu, sg, o); sgx += __shfl_xor_sync(0xffffffffu, sgx, o); }
        const float mg = sg / HID, mgx = sgx / HID;
#pragma unroll
        for (int k = 0; k < CH; ++k) {
            float xf[8], df[8], o[8];
            unpack(cx[k], xf); unpack(cd[k], df);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float xh = (xf[e] - mean) * inv;
                o[e] = inv * (df[e] * sc[k][e] - mg - xh * mgx);
            }
            __stcs(reinterpret_cast<uint4*>(a.dx + row * HID) + k * 32 + lane, pack(o));
        }
        if (next < ROWS) {
#pragma unroll
            for (int k = 0; k < CH; ++k) { cx[k] = nx[k]; cd[k] = nd[k]; }
        }
    }
    __syncthreads();
    float* out = a.ws + (long)blockIdx.x * 2 * HID;
    for (int i = threadIdx.x * 4; i < 2 * HID; i += WARPS * 128) {
        float4 t = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int q = 0; q < WARPS; ++q) {
            const float4 v = *reinterpret_cast<const float4*>(sh + q * 2 * HID + i);
            t.x += v.x; t.y += v.y; t.z += v.z; t.w += v.w;
        }
        *reinterpret_cast<float4*>(out + i) = t;
    }
}

// Phase 2 body: partial rows 0..parts summed for this block's slice of the 2 * HID columns.
// Team of T = 32 threads a column: thread t sums partials t, t + 32, ... in order, then a fixed
// butterfly across the team.
__device__ __forceinline__ void phase2(const Args& a, int parts, int block, int blocks) {
    const int lane = threadIdx.x & 31, team = threadIdx.x >> 5;
    const int cols = 2 * HID;
    for (int j = block * WARPS + team; j < cols; j += blocks * WARPS) {
        float s = 0.f;
        constexpr int U = 8;
        for (int p0 = lane; p0 < parts; p0 += 32 * U) {
            float v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) { const int p = p0 + 32 * u; v[u] = p < parts ? a.ws[(long)p * cols + j] : 0.f; }
#pragma unroll
            for (int u = 0; u < U; ++u) s += v[u];
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) {
            if (j < HID) a.dscale[j] = __float2bfloat16(s); else a.dbias[j - HID] = __float2bfloat16(s);
        }
    }
}

extern __shared__ float dyn_sh[];

__global__ void __launch_bounds__(WARPS * 32, 1) fused_coop(Args a) {
    phase1(a, dyn_sh);
    cg::this_grid().sync();
    phase2(a, gridDim.x, blockIdx.x, gridDim.x);
}
__global__ void __launch_bounds__(WARPS * 32, 1) first_only(Args a) { phase1(a, dyn_sh); }
__global__ void __launch_bounds__(WARPS * 32) second_only(Args a, int parts) { phase2(a, parts, blockIdx.x, gridDim.x); }


// Floors for any one-launch design: a streaming pass that reads x and dy and writes dx (no row
// sums), alone and followed by its column sums through a grid barrier and phase 2. Each thread
// keeps the same 8 columns on every step (the grid's stride is a multiple of a row's chunks).
constexpr int FT = 1024;
__global__ void __launch_bounds__(FT, 1) stream_pass(Args a, int reduce) {
    extern __shared__ float fsh[];  // [FT / (HID / 8)][2 * HID]
    constexpr int rc = HID / 8;     // 16-byte chunks a row
    const long n16 = (long)ROWS * rc;
    const long stride = (long)gridDim.x * FT;
    float ds[8] = {0, 0, 0, 0, 0, 0, 0, 0}, db[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const uint4* x = reinterpret_cast<const uint4*>(a.x);
    const uint4* dy = reinterpret_cast<const uint4*>(a.dy);
    uint4* dx = reinterpret_cast<uint4*>(a.dx);
    long i = (long)blockIdx.x * FT + threadIdx.x;
    for (; i + stride < n16; i += 2 * stride) {
        const uint4 x0 = __ldcs(x + i), d0 = __ldcs(dy + i), x1 = __ldcs(x + i + stride), d1 = __ldcs(dy + i + stride);
        float xf[8], df[8], o[8];
        unpack(x0, xf); unpack(d0, df);
#pragma unroll
        for (int e = 0; e < 8; ++e) { o[e] = xf[e] * df[e]; ds[e] += o[e]; db[e] += df[e]; }
        __stcs(dx + i, pack(o));
        unpack(x1, xf); unpack(d1, df);
#pragma unroll
        for (int e = 0; e < 8; ++e) { o[e] = xf[e] * df[e]; ds[e] += o[e]; db[e] += df[e]; }
        __stcs(dx + i + stride, pack(o));
    }
    for (; i < n16; i += stride) {
        float xf[8], df[8], o[8];
        unpack(__ldcs(x + i), xf); unpack(__ldcs(dy + i), df);
#pragma unroll
        for (int e = 0; e < 8; ++e) { o[e] = xf[e] * df[e]; ds[e] += o[e]; db[e] += df[e]; }
        __stcs(dx + i, pack(o));
    }
    if (!reduce) return;
    const int slot = threadIdx.x / rc, c = (threadIdx.x % rc) * 8;
#pragma unroll
    for (int e = 0; e < 8; ++e) { fsh[slot * 2 * HID + c + e] = ds[e]; fsh[slot * 2 * HID + HID + c + e] = db[e]; }
    __syncthreads();
    float* out = a.ws + (long)blockIdx.x * 2 * HID;
    for (int j = threadIdx.x; j < 2 * HID; j += FT) {
        float t = 0.f;
        for (int q = 0; q < FT / rc; ++q) t += fsh[q * 2 * HID + j];
        out[j] = t;
    }
    cg::this_grid().sync();
    // phase 2 with teams of 32 over FT / 32 warps
    const int lane = threadIdx.x & 31, team = threadIdx.x >> 5;
    for (int j = blockIdx.x * (FT / 32) + team; j < 2 * HID; j += gridDim.x * (FT / 32)) {
        float s2 = 0.f;
        for (int p = lane; p < (int)gridDim.x; p += 32) s2 += a.ws[(long)p * 2 * HID + j];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s2 += __shfl_xor_sync(0xffffffffu, s2, o);
        if (lane == 0) { if (j < HID) a.dscale[j] = __float2bfloat16(s2); else a.dbias[j - HID] = __float2bfloat16(s2); }
    }
}

__global__ void fill(__nv_bfloat16* p, long n, unsigned seed, float lo, float hi) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ seed * 40503u ^ (unsigned)(i >> 17);
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        p[i] = __float2bfloat16(lo + (hi - lo) * ((h & 0xffffff) / 16777216.0f));
    }
}

static float bf(const __nv_bfloat16 v) { return __bfloat162float(v); }

int main() {
    const long n = (long)ROWS * HID;
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs; rows %d hidden %d, %d warps a block\n", prop.name, prop.multiProcessorCount, ROWS, HID, WARPS);
    __nv_bfloat16 *x, *dy, *dx, *scale, *dscale, *dbias, *cpy;
    float *mean, *inv, *ws;
    CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&dy, n * 2)); CK(cudaMalloc(&dx, n * 2));
    CK(cudaMalloc(&cpy, 3 * n * 2));
    CK(cudaMalloc(&scale, HID * 2)); CK(cudaMalloc(&dscale, HID * 2)); CK(cudaMalloc(&dbias, HID * 2));
    CK(cudaMalloc(&mean, ROWS * 4)); CK(cudaMalloc(&inv, ROWS * 4));
    fill<<<1024, 256>>>(x, n, 1, -2.f, 2.f);
    fill<<<1024, 256>>>(dy, n, 2, -1.f, 1.f);
    fill<<<8, 256>>>(scale, HID, 3, 0.5f, 1.5f);
    CK(cudaDeviceSynchronize());
    // Saved statistics of x, computed on the host from the bf16 values.
    std::vector<__nv_bfloat16> hx(n), hdy(n), hs(HID);
    CK(cudaMemcpy(hx.data(), x, n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hdy.data(), dy, n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hs.data(), scale, HID * 2, cudaMemcpyDeviceToHost));
    std::vector<float> hm(ROWS), hi(ROWS);
    for (long r = 0; r < ROWS; ++r) {
        double s = 0, q = 0;
        for (int c = 0; c < HID; ++c) { double v = bf(hx[r * HID + c]); s += v; q += v * v; }
        const double m = s / HID;
        hm[r] = (float)m; hi[r] = (float)(1.0 / std::sqrt(q / HID - m * m + 1e-5));
    }
    CK(cudaMemcpy(mean, hm.data(), ROWS * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(inv, hi.data(), ROWS * 4, cudaMemcpyHostToDevice));

    const int threads = WARPS * 32;
    const size_t shbytes = (size_t)WARPS * 2 * HID * 4;
    CK(cudaFuncSetAttribute(fused_coop, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shbytes));
    CK(cudaFuncSetAttribute(first_only, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shbytes));
    int per_sm = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_coop, threads, shbytes));
    const int grid = per_sm * prop.multiProcessorCount;
    cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, fused_coop));
    printf("fused: %d blocks a multiprocessor, grid %d, %d registers, %zu local bytes\n", per_sm, grid, fa.numRegs, (size_t)fa.localSizeBytes);
    CK(cudaMalloc(&ws, (size_t)grid * 8 * 2 * HID * 4));  // room for the floor kernels' grid too
    Args args{x, dy, scale, mean, inv, dx, dscale, dbias, ws};

    auto check = [&](const char* what) {
        std::vector<__nv_bfloat16> hdx(n), hds(HID), hdb(HID);
        CK(cudaMemcpy(hdx.data(), dx, n * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hds.data(), dscale, HID * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hdb.data(), dbias, HID * 2, cudaMemcpyDeviceToHost));
        std::vector<double> rs(HID, 0.0), rb(HID, 0.0);
        double worst = 0, worst_c = 0;
        for (long r = 0; r < ROWS; ++r) {
            double sg = 0, sgx = 0;
            std::vector<double> xh(HID), g(HID);
            for (int c = 0; c < HID; ++c) {
                xh[c] = ((double)bf(hx[r * HID + c]) - hm[r]) * hi[r];
                g[c] = (double)bf(hdy[r * HID + c]) * bf(hs[c]);
                sg += g[c]; sgx += g[c] * xh[c];
                rs[c] += bf(hdy[r * HID + c]) * xh[c]; rb[c] += bf(hdy[r * HID + c]);
            }
            for (int c = 0; c < HID; ++c) {
                const double ref = hi[r] * (g[c] - sg / HID - xh[c] * sgx / HID);
                worst = std::max(worst, std::fabs(ref - bf(hdx[r * HID + c])) / (1.0 + std::fabs(ref)));
            }
        }
        for (int c = 0; c < HID; ++c) {
            worst_c = std::max(worst_c, std::fabs(rs[c] - bf(hds[c])) / (1.0 + std::fabs(rs[c])));
            worst_c = std::max(worst_c, std::fabs(rb[c] - bf(hdb[c])) / (1.0 + std::fabs(rb[c])));
        }
        const bool ok = worst < 2e-2 && worst_c < 2e-2;
        printf("%-10s check: dx worst rel %.2e, dscale/dbias worst rel %.2e: %s\n", what, worst, worst_c, ok ? "ok" : "WRONG");
    };
    auto poison = [&]() {
        CK(cudaMemset(dx, 0xff, n * 2)); CK(cudaMemset(dscale, 0xff, HID * 2)); CK(cudaMemset(dbias, 0xff, HID * 2));
    };
    void* kargs[] = {&args};
    auto run_fused = [&]() { CK(cudaLaunchCooperativeKernel((void*)fused_coop, grid, threads, kargs, shbytes, 0)); };
    auto run_two = [&]() {
        first_only<<<grid, threads, shbytes>>>(args);
        second_only<<<(2 * HID + WARPS - 1) / WARPS / 4, threads>>>(args, grid);
    };
    auto run_first = [&]() { first_only<<<grid, threads, shbytes>>>(args); };
    auto run_copy = [&]() { CK(cudaMemcpyAsync(cpy + 3 * n / 2, cpy, (size_t)n * 3, cudaMemcpyDeviceToDevice)); };
    auto run_copy3 = [&]() { CK(cudaMemcpyAsync(cpy + n, x, (size_t)n * 2, cudaMemcpyDeviceToDevice)); CK(cudaMemcpyAsync(cpy, dy, (size_t)n * 2, cudaMemcpyDeviceToDevice)); };
    poison(); run_fused(); CK(cudaDeviceSynchronize()); check("fused");
    poison(); run_two(); CK(cudaDeviceSynchronize()); check("two");
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto time = [&](const char* what, auto f) {
        for (int i = 0; i < 20; ++i) f();
        const int iters = 200;
        CK(cudaEventRecord(e0));
        for (int i = 0; i < iters; ++i) f();
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        printf("%-28s %7.2f us a launch\n", what, 1000.0 * ms / iters);
        return 1000.0 * ms / iters;
    };
    const size_t fbytes = (size_t)(FT / (HID / 8)) * 2 * HID * 4;
    CK(cudaFuncSetAttribute(stream_pass, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fbytes));
    int fper = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fper, stream_pass, FT, fbytes));
    const int fgrid = fper * prop.multiProcessorCount;
    int zero = 0, one = 1;
    void* fa0[] = {&args, &zero};
    void* fa1[] = {&args, &one};
    auto run_stream = [&]() { CK(cudaLaunchCooperativeKernel((void*)stream_pass, fgrid, FT, fa0, fbytes, 0)); };
    auto run_stream_red = [&]() { CK(cudaLaunchCooperativeKernel((void*)stream_pass, fgrid, FT, fa1, fbytes, 0)); };
    printf("floor kernels: grid %d of %d threads, %zu bytes of shared memory\n", fgrid, FT, fbytes);
    for (int rep = 0; rep < 3; ++rep) {
        time("floor: stream x,dy -> dx", run_stream);
        time("floor: stream + grid reduce", run_stream_red);
        const double c = time("copy (x+dy read, 1.5x size)", run_copy);
        const double f = time("fused cooperative", run_fused);
        time("phase 1 alone", run_first);
        const double t = time("phase 1 + second launch", run_two);
        time("copy as two memcpys", run_copy3);
        printf("  fused: %.2f of the copy; two launches: %.2f\n", c / f, c / t);
    }
    return 0;
}
