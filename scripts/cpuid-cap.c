// cpuid-cap: shows the process it is preloaded into an AVX2 + FMA processor on a machine that
// has AVX-512 and AMX, so that a peer which picks its kernels from `cpuid` (ONNX Runtime's MLAS,
// OpenBLAS, the `gemm` crate, Rust's `is_x86_feature_detected!`) runs its AVX2 kernels, as it
// would on an AVX2-only machine. Used by `scripts/bench_peers.py --cap-isa avx2`.
//
//     cc -O2 -shared -fPIC -o /tmp/cpuid-cap.so scripts/cpuid-cap.c
//     KILN_CPUID_CAP=avx2 LD_PRELOAD=/tmp/cpuid-cap.so python3 ...
//
// `kiln_cpuid_cap_answered()` returns how many cpuid instructions the process ran through it.
//
// How: Linux's `arch_prctl(ARCH_SET_CPUID, 0)` makes every `cpuid` instruction of the thread
// (and of the threads it creates later) fault where the processor supports CPUID faulting
// (`cpuid_fault` in /proc/cpuinfo). The SIGSEGV handler below runs the real `cpuid` with the
// faulting briefly off, clears the AVX-512, AMX and AVX-VNNI/IFMA feature bits of leaf 7, writes
// the result into the interrupted registers and steps over the instruction. Any other SIGSEGV
// restores the default action and returns, so the fault repeats and the process dies as it
// would have. The dynamic loader's own feature probe (glibc's string functions) runs before this
// constructor and still sees the real processor; so does `xgetbv` (it cannot be trapped), which
// no dispatcher trusts without the leaf-7 bits.
//
// A program that installs a SIGSEGV handler of its own after this one (perf does) dies at its
// next cpuid: preload it into the measured program only (`perf record -- env LD_PRELOAD=...`).
// Python, NumPy, ONNX Runtime and kiln leave the handler alone (Rust's runtime installs its
// stack-overflow handler only over the default action).
//
// Without KILN_CPUID_CAP=avx2 the library does nothing. Where CPUID faulting is unavailable it
// says so and exits with status 70: a run that asked for the cap never goes on uncapped.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

// Leaf 7, sub-leaf 0. EBX: AVX512F, DQ, IFMA, PF, ER, CD, BW, VL. ECX: VBMI, VBMI2, VNNI,
// BITALG, VPOPCNTDQ. EDX: 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE,
// AMX-INT8.
static const uint32_t L7S0_EBX = BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) |
                                 BIT(30) | BIT(31);
static const uint32_t L7S0_ECX = BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14);
static const uint32_t L7S0_EDX = BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25);
// Leaf 7, sub-leaf 1, EAX: AVX-VNNI, AVX512-BF16, AMX-FP16, AVX-IFMA (none on an AVX2-only part).
static const uint32_t L7S1_EAX = BIT(4) | BIT(5) | BIT(21) | BIT(23);

// How many cpuid instructions the handler answered (read by bench_peers.py as proof that the
// process's feature probes went through the cap).
static volatile unsigned long answered;

unsigned long kiln_cpuid_cap_answered(void) { return answered; }

static void cpuid_raw(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static long set_cpuid(int enabled) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

static void on_segv(int sig, siginfo_t *info, void *context) {
  (void)sig;
  ucontext_t *uc = context;
  greg_t *g = uc->uc_mcontext.gregs;
  // A faulting cpuid raises a general-protection fault: SI_KERNEL, the instruction at RIP.
  const unsigned char *ip = (const unsigned char *)g[REG_RIP];
  if (info->si_code != SI_KERNEL || ip[0] != 0x0f || ip[1] != 0xa2) {
    signal(SIGSEGV, SIG_DFL);
    return;
  }
  int saved_errno = errno;
  uint32_t leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX], r[4];
  set_cpuid(1);
  cpuid_raw(leaf, sub, r);
  set_cpuid(0);
  if (leaf == 7 && sub == 0) {
    r[1] &= ~L7S0_EBX;
    r[2] &= ~L7S0_ECX;
    r[3] &= ~L7S0_EDX;
  } else if (leaf == 7 && sub == 1) {
    r[0] &= ~L7S1_EAX;
  }
  g[REG_RAX] = r[0];
  g[REG_RBX] = r[1];
  g[REG_RCX] = r[2];
  g[REG_RDX] = r[3];
  g[REG_RIP] += 2;
  answered = answered + 1;
  errno = saved_errno;
}

__attribute__((constructor)) static void cpuid_cap(void) {
  const char *want = getenv("KILN_CPUID_CAP");
  if (want == NULL || *want == '\0') return;
  if (strcmp(want, "avx2") != 0) {
    fprintf(stderr, "cpuid-cap: KILN_CPUID_CAP=%s is not a level this library caps to (avx2)\n",
            want);
    _exit(70);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, NULL) != 0 || set_cpuid(0) != 0) {
    fprintf(stderr,
            "cpuid-cap: cannot make cpuid fault here (%s; needs Linux 4.12+ and `cpuid_fault` in "
            "/proc/cpuinfo): nothing would be capped\n",
            strerror(errno));
    _exit(70);
  }
}
