// KILN_CUDA_SDPA_FA2_V1: what the attention kernels share (tensor-core tiles, masks, lengths).
// The generated prologue (codegen/sdpa.rs) defines, before including a kernel file:
//   elem_t, KILN_SDPA_BF16      the q/k/v type (__half or __nv_bfloat16) and which one;
//   KILN_BATCH, KILN_HEADS_Q, KILN_HEADS_KV, KILN_GROUP, KILN_SEQ_Q, KILN_SEQ_KV,
//   KILN_D_QK, KILN_D_V         the graph's sizes (sequence lengths are maxima: the per-batch
//                               lengths come from the seq_len tensors at run time);
//   KILN_<T>_OFF(b, h, s, d)    the element offset of each bound tensor T (Q, K, V, O, STATS,
//                               BIAS, DO, DQ, DK, DV) as a 64-bit expression, broadcast dims
//                               contributing nothing; KILN_<T> its kernel parameter;
//   KILN_LEN_Q(b), KILN_LEN_KV(b)  the batch's clamped lengths (the dims without seq_len tensors);
//   KILN_SCALE                  the scale (a literal, or a read of the scale tensor);
//   KILN_HAS_BIAS, KILN_MASK_BR, KILN_MASK_HAS_LEFT, KILN_MASK_LEFT, KILN_MASK_HAS_RIGHT,
//   KILN_MASK_RIGHT             the bias and the diagonal band (kiln_core::ops::sdpa::SdpaMask);
//   KILN_VEC_<T>                1 when tensor T (Q, K, V, DO) may be read 8 elements at a time
//                               along the head dim (its type is elem_t, the head dim is
//                               contiguous and every other stride a multiple of 8), taken at run
//                               time when its pointer is 16-byte aligned;
//   KILN_SDPA_SYMBOL, KILN_SDPA_PARAMS  the kernel's name and parameter list;
//   and the tile sizes its kernel file names.
#if !defined(KILN_SDPA_SYMBOL) || !defined(KILN_D_QK) || !defined(KILN_MASK_BR)
#error "sdpa kernels are included by a generated prologue (codegen/sdpa.rs)"
#endif

#define KILN_NEG_INF __int_as_float(0xff800000)
// Padding of shared-memory rows (elements): rows of D + 8 halves start 4 banks apart, so the
// eight rows a quad of lanes reads hit distinct banks.
#define KILN_PAD 8

static_assert(KILN_D_QK % 16 == 0 && KILN_D_V % 16 == 0, "head dims are multiples of 16");

// D += A * B on one m16n8k16 tensor-core tile, f32 accumulation. Fragment layouts (lane = 4 g
// + t): A row-major 16 x 16 in a[0..4] = (row g, k 2t..2t+1), (row g+8, k 2t..), (row g,
// k 2t+8..), (row g+8, k 2t+8..); B "col" 16 x 8 in b[0..2] = (k 2t..2t+1, col g), (k 2t+8..,
// col g); C 16 x 8 in c[0..4] = (row g, cols 2t, 2t+1), (row g+8, cols 2t, 2t+1).
__device__ __forceinline__ void kiln_mma(float c[4], const unsigned a[4], const unsigned b[2]) {
#if KILN_SDPA_BF16
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#endif
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two f32 values rounded to elem_t and packed into one 32-bit register (low half first).
__device__ __forceinline__ unsigned kiln_pack(float lo, float hi) {
    union { elem_t e[2]; unsigned u; } p;
    p.e[0] = kiln_st<elem_t>(lo);
    p.e[1] = kiln_st<elem_t>(hi);
    return p.u;
}

// Two consecutive elements of shared memory as one register (the address is 4-byte aligned:
// every column index read this way is even and every row starts at an even offset).
__device__ __forceinline__ unsigned kiln_ld2(const elem_t* p) {
    return *reinterpret_cast<const unsigned*>(p);
}

// A per-batch length from a seq_len tensor: rounded down, clamped to 0..max, NaN as 0 (the
// reference engine's rule: lengths are data read at run time, bounded rather than trusted).
__device__ __forceinline__ int kiln_len(float v, int max) {
    if (!(v > 0.0f)) return 0;
    if (v >= (float)max) return max;
    return (int)floorf(v);
}

// The keys query row i may see, [lo, hi), for actual lengths lq and lkv, before the row check
// (i < lq) and clamped to 0..lkv. Both ends never decrease with i, so the keys of rows i0..i1
// lie in [lo(i0), hi(i1)).
__device__ __forceinline__ void kiln_keys(int i, int lq, int lkv, int& lo, int& hi) {
    long long c = (long long)i + (KILN_MASK_BR ? (long long)lkv - lq : 0);
    long long l = KILN_MASK_HAS_LEFT ? c - KILN_MASK_LEFT + 1 : 0;
    long long h = KILN_MASK_HAS_RIGHT ? c + KILN_MASK_RIGHT + 1 : lkv;
    lo = (int)(l < 0 ? 0 : (l > lkv ? lkv : l));
    hi = (int)(h < 0 ? 0 : (h > lkv ? lkv : h));
}

// Whether row i sees key j.
__device__ __forceinline__ bool kiln_visible(int i, int j, int lq, int lkv) {
    int lo, hi;
    kiln_keys(i, lq, lkv, lo, hi);
    return i < lq && j >= lo && j < hi;
}

// The keys any of rows i0..i1 (inclusive; i1 < lq) may see.
__device__ __forceinline__ void kiln_span(int i0, int i1, int lq, int lkv, int& lo, int& hi) {
    int ignored;
    kiln_keys(i0, lq, lkv, lo, ignored);
    kiln_keys(i1, lq, lkv, ignored, hi);
}

// The bias of (row i, key j) of batch b, query head h: 0 without one.
#if KILN_HAS_BIAS
#define KILN_BIAS_AT(b, h, i, j) kiln_ld(KILN_BIAS[KILN_BIAS_OFF(b, h, i, j)])
#else
#define KILN_BIAS_AT(b, h, i, j) 0.0f
#endif

// Eight elements as one 16-byte access.
typedef kiln_vec<elem_t, 8> kiln_vec8;
#define KILN_ALIGNED16(p) ((((unsigned long long)(p)) & 15ULL) == 0)

// Stages `rows` rows from s0 of a tensor at `p` into shared memory, `cols` elements each (the
// head dim), rows at or past `end` as zeros: `off(s, c)` is the element offset of (row s,
// column c), `put(r, c, x)` stores one element and `put8(r, c, v)` eight consecutive ones.
// 16-byte reads when `vec` (the prologue's KILN_VEC_<T>) holds and `p` is aligned, else one
// element at a time (still coalesced along the head dim).
template <typename Src, typename Off, typename Put, typename Put8>
__device__ __forceinline__ void kiln_stage(const Src* p, bool vec, int rows, int cols, int s0,
                                           int end, Off off, Put put, Put8 put8) {
    if (vec && KILN_ALIGNED16(p)) {
        for (int e = threadIdx.x; e < rows * cols / 8; e += blockDim.x) {
            const int r = e / (cols / 8), c = (e % (cols / 8)) * 8, s = s0 + r;
            kiln_vec8 x;
            if (s < end) {
                x = *reinterpret_cast<const kiln_vec8*>(p + off(s, c));
            } else {
#pragma unroll
                for (int i = 0; i < 8; ++i) x.v[i] = kiln_st<elem_t>(0.0f);
            }
            put8(r, c, x);
        }
    } else {
        for (int e = threadIdx.x; e < rows * cols; e += blockDim.x) {
            const int r = e / cols, c = e % cols, s = s0 + r;
            put(r, c, kiln_st<elem_t>(s < end ? kiln_ld(p[off(s, c)]) : 0.0f));
        }
    }
}

// Helpers of the Hopper attention kernels (sdpa_fa3_forward.cuh, sdpa_fa3_backward.cuh).

__device__ __forceinline__ float kiln_sdpa_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Two f32 values rounded to elem_t, packed low half first, in one conversion.
__device__ __forceinline__ unsigned kiln_sdpa_pack2(float lo, float hi) {
#if KILN_SDPA_BF16
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
#else
    __half2 v = __floats2half2_rn(lo, hi);
#endif
    return *reinterpret_cast<unsigned*>(&v);
}

// Named barriers: wait until `threads` threads have reached barrier `id` / count this thread in.
__device__ __forceinline__ void kiln_sdpa_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void kiln_sdpa_bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Pins the definitions of a wgmma's register A fragments before its fence: ptxas serialises
// every wgmma of a pipeline stage in which another instruction writes one of its input
// registers.
template <int N> __device__ __forceinline__ void kiln_sdpa_hold_a(unsigned (&a)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[i][e])::"memory");
}
