// KILN_CUDA_*_V2 (Hopper, sm_90a): thin wrappers over the PTX of the bulk tensor copy engine
// (TMA loads and stores), mbarriers, cp.async with zero fill, warpgroup MMA (wgmma) and
// setmaxnreg. Each wrapper is one instruction or a short fixed sequence; the kernels in
// hopper_gemm.cuh compose them.
// Shared-memory operands are 32-bit shared-window addresses (kiln_smem).
#pragma once

// A CUtensorMap: 128 opaque bytes, 64-byte aligned, encoded by the host on the load device and
// passed by value as a __grid_constant__ kernel parameter.
struct __align__(64) kiln_tensor_map { unsigned long long opaque[16]; };

__device__ __forceinline__ unsigned kiln_smem(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// --- mbarriers -------------------------------------------------------------------------------
__device__ __forceinline__ void kiln_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes barrier initialisation visible to the async proxy (the copy engine completes on them).
__device__ __forceinline__ void kiln_mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrives once and adds `bytes` to the transactions the current phase waits for.
__device__ __forceinline__ void kiln_mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void kiln_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` has completed (a fresh barrier counts its preceding
// phase, parity 1, as complete).
__device__ __forceinline__ void kiln_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    }
}

// --- the bulk tensor copy engine -----------------------------------------------------------
// One box of `map` at coordinates (c0 innermost, ...) into shared memory at `dst`; completes
// `bytes` transactions on `bar`.
__device__ __forceinline__ void kiln_tma_load_2d(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
        ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}
__device__ __forceinline__ void kiln_tma_load_3d(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
        ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}
__device__ __forceinline__ void kiln_tma_load_4d(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];"
        ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}
__device__ __forceinline__ void kiln_tma_load_5d(unsigned dst, const kiln_tensor_map* map, unsigned bar, int c0, int c1, int c2, int c3, int c4) {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];"
        ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
        : "memory");
}
// One box of `map` at coordinates (c0 innermost, ...) from shared memory at `src` (laid out
// as the map's swizzle has it) to global memory, in the issuing thread's current bulk group;
// the copy engine clips the box at the map's extents.
__device__ __forceinline__ void kiln_tma_store_2d(unsigned src, const kiln_tensor_map* map, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void kiln_tma_store_3d(unsigned src, const kiln_tensor_map* map, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void kiln_tma_store_4d(unsigned src, const kiln_tensor_map* map, int c0, int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
__device__ __forceinline__ void kiln_tma_store_5d(unsigned src, const kiln_tensor_map* map, int c0, int c1, int c2, int c3, int c4) {
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];"
                 ::"l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
}
// Closes the issuing thread's current bulk group of stores.
__device__ __forceinline__ void kiln_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's bulk groups still read their shared-memory source
// (the source may then be overwritten) ...
template <int N> __device__ __forceinline__ void kiln_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// ... or are still incomplete (their global writes not yet done).
template <int N> __device__ __forceinline__ void kiln_bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void kiln_tma_prefetch_map(const kiln_tensor_map* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// --- the bulk copy engine without a tensor map --------------------------------------------
// `bytes` contiguous bytes from global `src` into shared memory at `dst` (both 16-byte aligned,
// `bytes` a multiple of 16); completes `bytes` transactions on `bar`. Plain sm_90.
__device__ __forceinline__ void kiln_bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// --- cp.async (16 bytes, zero-filled past `src_bytes`), completing on an mbarrier ------------
__device__ __forceinline__ void kiln_cp_async_16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// The barrier's pending count drops by one when this thread's earlier cp.asyncs have landed.
__device__ __forceinline__ void kiln_cp_async_arrive(unsigned bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}
// Orders generic-proxy shared-memory writes (cp.async, st.shared) before async-proxy reads
// (wgmma operands).
__device__ __forceinline__ void kiln_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// --- warpgroup MMA -------------------------------------------------------------------------
__device__ __forceinline__ void kiln_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void kiln_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void kiln_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across an asynchronous MMA.
template <int N> __device__ __forceinline__ void kiln_wgmma_hold(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A shared-memory matrix descriptor with 128-byte swizzling: start address, leading and stride
// byte offsets (PTX ISA, "Matrix Descriptor Format"). The tile's swizzle atoms (8 rows of 128
// bytes) start 1024-byte aligned, so the base offset field stays 0.
__device__ __forceinline__ unsigned long long kiln_wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// --- register reallocation between warpgroups -----------------------------------------------
template <int R> __device__ __forceinline__ void kiln_setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R)); }
template <int R> __device__ __forceinline__ void kiln_setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R)); }
