// Harness (not part of the build; session 37, measured as committed in 83a9c8d, since refactored
// without a change to any kernel): the fastest any training batchnorm forward of N32 C256 H56 W56
// bf16 can be on this card. Every y depends on every x (through the batch mean and variance), so
// all of x must be read before any y is written. The "floor" kernels keep that order and do nothing
// else: phase 1 reads x with 16-byte loads, a grid barrier, phase 2 writes y. No statistics, no
// arithmetic beyond an XOR that keeps the loads alive. A real kernel does at least this much, so
// its time is at least the floor's; the copy of the same bytes (x read once, y written once) is
// the yardstick of issue 11 ("at least 0.85 of the copy").
//
// Kernels timed in one process, 200 back-to-back launches (events), three rounds:
//   copy        cudaMemcpyAsync of x into y (51.4 MB read, 51.4 MB written)
//   read, write one pass each, as separate launches (their sum is what two phases cost unjoined)
//   floor       one cooperative launch: read all x, grid barrier, write all y
//   floor_rr    the same, phase 2 re-reading x (last-read first, mostly from L2) into y = x ^ v:
//               what a kernel that keeps nothing on chip must do
//   floor2      floor with a second grid barrier before the writes
//   floor_fin   floor whose blocks each add up every block's 512-word partial row after the barrier
//   two         the read kernel then the write kernel (the launch boundary is the barrier)
// for several grids (blocks of 512 or 1024 threads, 1 to 4 blocks a multiprocessor) and loads in
// flight a thread (U = 4, 8).
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void fill(uint4* x, long n16) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n16; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ 0x9e3779b9u;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
        x[i] = make_uint4(h, h * 3u + 1u, h ^ 0x5bd1e995u, h + 7u);
    }
}

// A 16-byte load the compiler may not move: U of them are issued before the first is used.
__device__ __forceinline__ uint4 load16(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// Keeps a loaded vector live to this point, so that all U loads are in flight together.
__device__ __forceinline__ void hold(const uint4& v) { asm volatile("" ::"r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)); }

template <int U>
__device__ __forceinline__ unsigned read_all(const uint4* __restrict__ x, long n16) {
    unsigned acc = 0;
    const long stride = (long)gridDim.x * blockDim.x;
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n16; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = load16(x + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) hold(v[u]);
#pragma unroll
        for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n16; i += stride) { uint4 a = __ldg(x + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }
    return acc;
}

__device__ __forceinline__ void write_all(uint4* __restrict__ y, long n16, unsigned v) {
    const long stride = (long)gridDim.x * blockDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n16; i += stride)
        y[i] = make_uint4(v, (unsigned)i, v ^ 1u, 3u);
}

// Phase 2 of floor_rr: y = x ^ v, walking the tensor from its end (the lines read last are the
// likeliest to be in L2 still).
template <int U>
__device__ __forceinline__ void reread_all(const uint4* __restrict__ x, uint4* __restrict__ y, long n16, unsigned v) {
    const long stride = (long)gridDim.x * blockDim.x;
    long i = n16 - 1 - (blockIdx.x * (long)blockDim.x + threadIdx.x);
    for (; i - (U - 1) * stride >= 0; i -= U * stride) {
        uint4 a[U];
#pragma unroll
        for (int u = 0; u < U; ++u) a[u] = load16(x + i - u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) hold(a[u]);
#pragma unroll
        for (int u = 0; u < U; ++u) y[i - u * stride] = make_uint4(a[u].x ^ v, a[u].y, a[u].z ^ v, a[u].w);
    }
    for (; i >= 0; i -= stride) { uint4 a = __ldg(x + i); y[i] = make_uint4(a.x ^ v, a.y, a.z ^ v, a.w); }
}

// Stores the OR of the block's threads' values as the block's word of part.
__device__ __forceinline__ void publish(unsigned acc, unsigned* part) {
    __shared__ unsigned s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    atomicOr(&s, acc);
    __syncthreads();
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// Each block's XOR of what it read, published before the barrier; phase 2 uses the next block's,
// so its stores depend on another block's loads (as a real kernel's depend on everyone's).
__device__ __forceinline__ unsigned publish_and_sync(unsigned acc, unsigned* part) {
    publish(acc, part);
    cooperative_groups::this_grid().sync();
    return *(volatile unsigned*)&part[(blockIdx.x + 1) % gridDim.x] | 1u;
}

template <int U>
__global__ void floor_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, long n16, unsigned* part) {
    unsigned v = publish_and_sync(read_all<U>(x, n16), part);
    write_all(y, n16, v);
}

// floor2: a second grid barrier, as a kernel needs whose blocks each finalize some channels and
// then all read every channel's result.
template <int U>
__global__ void floor2_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, long n16, unsigned* part) {
    unsigned v = publish_and_sync(read_all<U>(x, n16), part);
    if (threadIdx.x == 0) part[2048 + blockIdx.x] = v;
    cooperative_groups::this_grid().sync();
    write_all(y, n16, *(volatile unsigned*)&part[2048 + (blockIdx.x + 3) % gridDim.x] | 1u);
}

// floor_fin: one barrier, after which every block adds up all blocks' partial rows of 512 words
// (a C256 batchnorm's sums and sums of squares) itself, in a fixed order: the one-barrier way to
// give every block every channel's statistics.
template <int U>
__global__ void floor_fin_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, long n16, unsigned* part) {
    unsigned v = publish_and_sync(read_all<U>(x, n16), part);
    unsigned* rows = part + 4096;
    (void)v;
    __shared__ unsigned s2;
    if (threadIdx.x == 0) s2 = 0;
    __syncthreads();
    unsigned acc = 0;
    if (threadIdx.x < 512) {
        // rows were written by the previous launch's blocks (all launches write the same values).
#pragma unroll 8
        for (int b = 0; b < (int)gridDim.x; ++b) acc += __ldcg(&rows[b * 512 + threadIdx.x]);
        atomicOr(&s2, acc);
    }
    __syncthreads();
    const unsigned w = s2 | 1u;
    if (threadIdx.x < 512) rows[blockIdx.x * 512 + threadIdx.x] = v & 0xffu;
    write_all(y, n16, w);
}

template <int U>
__global__ void floor_rr_kernel(const uint4* __restrict__ x, uint4* __restrict__ y, long n16, unsigned* part) {
    unsigned v = publish_and_sync(read_all<U>(x, n16), part);
    reread_all<U>(x, y, n16, v);
}

template <int U>
__global__ void read_kernel(const uint4* __restrict__ x, long n16, unsigned* part) {
    publish(read_all<U>(x, n16), part);
}

__global__ void write_kernel(uint4* __restrict__ y, long n16, const unsigned* part) {
    write_all(y, n16, part[(blockIdx.x + 1) % gridDim.x] | 1u);
}

int main() {
    const long P = 100352; const int C = 256; const long bytes = P * C * 2; const long n16 = bytes / 16;
    uint4 *x, *y; unsigned* part;
    CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes)); CK(cudaMalloc(&part, (4096 + 2048 * 512) * 4)); CK(cudaMemset(part, 0, (4096 + 2048 * 512) * 4));
    fill<<<1024, 256>>>(x, n16); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device %s, %d SMs, L2 %d MB, tensor %.1f MB\n", prop.name, sms, prop.l2CacheSize >> 20, bytes / 1e6);
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    auto timeit = [&](auto f) {
        for (int i = 0; i < 20; ++i) f();
        CK(cudaGetLastError());
        CK(cudaEventRecord(a)); for (int i = 0; i < 200; ++i) f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); return ms * 1000 / 200;
    };
    auto copy = [&]() { CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice)); };
    // Correctness of the floors: every y written, with the value its definition gives.
    auto check = [&](const char* what, bool reread) {
        std::vector<uint4> hx(n16), hy(n16);
        CK(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
        long bad = 0;
        for (long i = 0; i < n16; ++i) {
            const uint4 q = hy[i];
            bool ok = reread ? (q.y == hx[i].y && q.w == hx[i].w && (q.x ^ hx[i].x) == (q.z ^ hx[i].z) && (q.x ^ hx[i].x) != 0)
                             : (q.y == (unsigned)i && q.w == 3u && (q.x ^ q.z) == 1u);
            bad += !ok;
        }
        printf("check %s: %ld of %ld vectors wrong -> %s\n", what, bad, n16, bad ? "FAIL" : "OK");
    };
    struct Cfg { int blocks_per_sm, threads, u; };
    const Cfg cfgs[] = {{1, 1024, 4}, {1, 1024, 8}, {2, 1024, 4}, {2, 512, 8}, {4, 512, 4}, {4, 512, 8}};
    std::vector<float> copies;
    printf("%-22s %7s %7s %7s %7s %7s %7s %7s %7s | copy over floor, floor2, floor_fin, floor_rr, two\n", "config (round)", "copy", "read", "write", "floor",
           "floor2", "fl_fin", "fl_rr", "two");
    for (int round = 0; round < 3; ++round) {
        for (const Cfg& c : cfgs) {
            const int grid = c.blocks_per_sm * sms;
            void (*fk)(const uint4*, uint4*, long, unsigned*) = c.u == 4 ? floor_kernel<4> : floor_kernel<8>;
            void (*rk)(const uint4*, uint4*, long, unsigned*) = c.u == 4 ? floor_rr_kernel<4> : floor_rr_kernel<8>;
            void (*rd)(const uint4*, long, unsigned*) = c.u == 4 ? read_kernel<4> : read_kernel<8>;
            void (*f2)(const uint4*, uint4*, long, unsigned*) = c.u == 4 ? floor2_kernel<4> : floor2_kernel<8>;
            void (*ff)(const uint4*, uint4*, long, unsigned*) = c.u == 4 ? floor_fin_kernel<4> : floor_fin_kernel<8>;
            int occ = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, rk, c.threads, 0));
            if (occ < c.blocks_per_sm) { printf("%d x %d: only %d resident a multiprocessor, skipped\n", grid, c.threads, occ); continue; }
            void* args[] = {&x, &y, (void*)&n16, &part};
            auto floor_launch = [&]() { CK(cudaLaunchCooperativeKernel((void*)fk, grid, c.threads, args, 0, 0)); };
            auto rr_launch = [&]() { CK(cudaLaunchCooperativeKernel((void*)rk, grid, c.threads, args, 0, 0)); };
            auto f2_launch = [&]() { CK(cudaLaunchCooperativeKernel((void*)f2, grid, c.threads, args, 0, 0)); };
            auto ff_launch = [&]() { CK(cudaLaunchCooperativeKernel((void*)ff, grid, c.threads, args, 0, 0)); };
            auto read_launch = [&]() { rd<<<grid, c.threads>>>(x, n16, part); };
            auto write_launch = [&]() { write_kernel<<<grid, c.threads>>>(y, n16, part); };
            if (round == 0) {
                CK(cudaMemset(y, 0xff, bytes)); floor_launch(); CK(cudaDeviceSynchronize()); check("floor", false);
                CK(cudaMemset(y, 0xff, bytes)); rr_launch(); CK(cudaDeviceSynchronize()); check("floor_rr", true);
            }
            const float tc = timeit(copy), tr = timeit(read_launch), tw = timeit(write_launch), tf = timeit(floor_launch),
                        trr = timeit(rr_launch), t2 = timeit([&]() { read_launch(); write_launch(); }), tf2 = timeit(f2_launch),
                        tff = timeit(ff_launch);
            copies.push_back(tc);
            char name[64]; snprintf(name, 64, "%dx%d U%d (%d)", grid, c.threads, c.u, round);
            printf("%-22s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f | %.3f %.3f %.3f %.3f %.3f\n", name, tc, tr, tw, tf, tf2, tff, trr, t2,
                   tc / tf, tc / tf2, tc / tff, tc / trr, tc / t2);
        }
    }
    {
        // The issue's yardstick: a large copy (1 GiB read + 1 GiB written), bytes read + written a second.
        const long big = 1l << 30; void *bx, *by; CK(cudaMalloc(&bx, big)); CK(cudaMalloc(&by, big));
        fill<<<1024, 256>>>((uint4*)bx, big / 16); CK(cudaGetLastError());
        for (int i = 0; i < 3; ++i) CK(cudaMemcpyAsync(by, bx, big, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(a)); for (int i = 0; i < 20; ++i) CK(cudaMemcpyAsync(by, bx, big, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        const double tbs = 2.0 * big * 20 / (ms * 1e-3) / 1e12;
        printf("large copy 1 GiB: %.1f us, %.2f TB/s read + written; the case's %.1f MB at that rate: %.2f us, 0.85 of it: %.2f us\n", ms * 1000 / 20, tbs,
               2 * bytes / 1e6, 2 * bytes / (tbs * 1e6), 2 * bytes / (tbs * 1e6) / 0.85);
        CK(cudaFree(bx)); CK(cudaFree(by));
    }
    std::sort(copies.begin(), copies.end());
    printf("copy median over all rows %.2f us (%.2f TB/s read + written)\n", copies[copies.size() / 2], 2 * bytes / 1e6 / copies[copies.size() / 2]);
    return 0;
}
