// KILN_CUDA_MATMUL_V1: the GEMM operands of a strided, batched matmul, A[b.., M, K] and
// B[b.., K, N], one batch per blockIdx.z. The loads gemm_mainloop.cuh expects (see there). The
// generated prologue defines before the include:
//   KILN_MATMUL_A_STRIDE_M, KILN_MATMUL_A_STRIDE_K, KILN_MATMUL_B_STRIDE_K, KILN_MATMUL_B_STRIDE_N
//       the operands' element strides along M, K and N (literals of kiln_idx's width);
//   kiln_matmul_batch_offsets(batch, off_a, off_b)
//       each operand's element offset in batch `batch` (size-1 batch dims broadcast).
#if !defined(KILN_MATMUL_A_STRIDE_K) || !defined(KILN_MATMUL_B_STRIDE_N)
#error "matmul_operands.cuh is included by a generated prologue that specialises it (codegen/gemm.rs)"
#endif

#define KILN_GEMM_BLOCK_SETUP() \
    kiln_idx off_a, off_b;      \
    kiln_matmul_batch_offsets(batch, off_a, off_b)

#define A_KPREP(gk) const bool ka_ok = (gk) < K; const kiln_idx ka_off = off_a + (gk) * KILN_MATMUL_A_STRIDE_K;
#define LOAD_A(mm, gm) (KILN_GEMM_A[ka_off + (gm) * KILN_MATMUL_A_STRIDE_M])
#define VLOAD_A(mm, gm) (*reinterpret_cast<const vec_t*>(KILN_GEMM_A + ka_off + (gm) * KILN_MATMUL_A_STRIDE_M))
#define B_KPREP(gk) const bool kb_ok = (gk) < K; const kiln_idx kb_off = off_b + (gk) * KILN_MATMUL_B_STRIDE_K;
#define LOAD_B(gn) (KILN_GEMM_B[kb_off + (gn) * KILN_MATMUL_B_STRIDE_N])
#define VLOAD_B(gn) (*reinterpret_cast<const vec_t*>(KILN_GEMM_B + kb_off + (gn) * KILN_MATMUL_B_STRIDE_N))
