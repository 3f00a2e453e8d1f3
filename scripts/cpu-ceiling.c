// The single-core f32 ceilings of an AVX-512 machine that the CPU benchmark ratios are read
// against (docs/benchmarks.md): a loop of independent FMAs with no loads (the FMA peak), and
// register-blocked GEMM micro-kernels of several shapes whose operands stay in L1 (the most a
// GEMM or a direct convolution can reach, before any packing, cache miss or thread). Not part of
// the test suite. Build and run on one core:
//
//   gcc -O3 -march=native scripts/cpu-ceiling.c -o /tmp/cpu-ceiling && /tmp/cpu-ceiling
//
// Each figure is the best of three rounds, in GFLOP/s (2 per FMA lane).
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// Twelve independent FMA chains, so that latency never limits the two FMA ports.
static double fma_peak(void) {
    __m512 acc[12];
    const __m512 a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.999999f);
    for (int i = 0; i < 12; i++) acc[i] = _mm512_set1_ps((float)i);
    const long iters = 100000000;
    double t = seconds();
    for (long i = 0; i < iters; i++) {
        for (int j = 0; j < 12; j++) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
        __asm__ volatile("" ::"v"(acc[0]), "v"(acc[6]), "v"(acc[11]));
    }
    t = seconds() - t;
    float sink = 0;
    for (int j = 0; j < 12; j++) sink += _mm512_reduce_add_ps(acc[j]);
    if (sink == 1234.5f) puts("");
    return 2.0 * 16 * 12 * iters / t / 1e9;
}

// An MR x (16 NV) tile of C over KC steps: NV vector loads of B and MR broadcasts of A a step.
#define KERNEL(NAME, MR, NV)                                                                  \
    __attribute__((noipa)) static void NAME(const float *a, const float *b, float *c,        \
                                            int kc) {                                         \
        __m512 acc[MR][NV];                                                                   \
        for (int r = 0; r < MR; r++)                                                          \
            for (int h = 0; h < NV; h++) acc[r][h] = _mm512_setzero_ps();                     \
        for (int k = 0; k < kc; k++) {                                                        \
            __m512 bv[NV];                                                                    \
            for (int h = 0; h < NV; h++) bv[h] = _mm512_loadu_ps(b + 16 * h);                 \
            for (int r = 0; r < MR; r++) {                                                    \
                const __m512 x = _mm512_set1_ps(a[r]);                                        \
                for (int h = 0; h < NV; h++) acc[r][h] = _mm512_fmadd_ps(x, bv[h], acc[r][h]); \
            }                                                                                 \
            a += MR;                                                                          \
            b += 16 * NV;                                                                     \
        }                                                                                     \
        for (int r = 0; r < MR; r++)                                                          \
            for (int h = 0; h < NV; h++) _mm512_storeu_ps(c + r * 16 * NV + 16 * h, acc[r][h]); \
    }

KERNEL(k6x64, 6, 4)
KERNEL(k8x32, 8, 2)
KERNEL(k8x48, 8, 3)
KERNEL(k12x32, 12, 2)
KERNEL(k14x32, 14, 2)

typedef void (*kernel_fn)(const float *, const float *, float *, int);

static double kernel_rate(kernel_fn f, int mr, int nv, int kc, const float *a, const float *b,
                          float *c) {
    const long calls = 300000;
    double t = seconds();
    // Eight left slivers in turn (all in L1 with the right one).
    for (long i = 0; i < calls; i++) f(a + (i % 8) * mr * kc, b, c, kc);
    t = seconds() - t;
    return 2.0 * mr * 16 * nv * kc * calls / t / 1e9;
}

int main(void) {
    float *a = aligned_alloc(64, 8 * 14 * 128 * sizeof(float));
    float *b = aligned_alloc(64, 128 * 64 * sizeof(float));
    float *c = aligned_alloc(64, 14 * 64 * sizeof(float));
    for (int i = 0; i < 8 * 14 * 128; i++) a[i] = 1e-3f * (float)(i % 7);
    for (int i = 0; i < 128 * 64; i++) b[i] = 1e-3f * (float)(i % 5);
    struct {
        const char *name;
        kernel_fn f;
        int mr, nv;
    } kernels[] = {{"6x64", k6x64, 6, 4},
                   {"8x32", k8x32, 8, 2},
                   {"8x48", k8x48, 8, 3},
                   {"12x32", k12x32, 12, 2},
                   {"14x32", k14x32, 14, 2}};
    double peak = 0;
    for (int round = 0; round < 3; round++) {
        const double p = fma_peak();
        if (p > peak) peak = p;
    }
    printf("FMA peak (one core): %.1f GFLOP/s\n", peak);
    for (int kc = 64; kc <= 128; kc += 64) {
        for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
            double best = 0;
            for (int round = 0; round < 3; round++) {
                const double r =
                    kernel_rate(kernels[k].f, kernels[k].mr, kernels[k].nv, kc, a, b, c);
                if (r > best) best = r;
            }
            printf("kernel %-5s KC %3d, operands in L1: %.1f GFLOP/s (%.0f%% of the peak)\n",
                   kernels[k].name, kc, best, 100.0 * best / peak);
        }
    }
    free(a);
    free(b);
    free(c);
    return 0;
}
