//! The AVX-512 BF16 kernel of the packed bf16 GEMM: one 32×32 f32 block of the operands that
//! [`super::amx`] packs, multiplied with `vdpbf16ps` (each f32 lane adds the products of one
//! pair of bf16 values) instead of AMX tiles, for processors that have the instruction and no
//! AMX (AMD Zen 4 and later). One `vdpbf16ps` on 512 bits does 32 multiply-adds, twice what an
//! f32 FMA does: on a Zen 4 core the two measured 231 and 117 GFLOP/s.
//!
//! The packed layouts line up with the instruction: a step of B holds, for each pair of K rows,
//! the 32 columns' pairs side by side (two vectors of 16 pairs), and a step of A holds each
//! row's 32 K values in order, so a pair of one row is one 32-bit value to broadcast. The block
//! is done as four bands of 8 rows × 32 columns, 16 accumulators each; per pair of K a band
//! loads B's two vectors, broadcasts each row's pair and issues 16 `vdpbf16ps`.
//!
//! Like AMX, `vdpbf16ps` reads subnormal bf16 values as zero and flushes subnormal results, and
//! its sums run in its own order: the result equals an f32 GEMM of the widened operands up to
//! those.

use half::bf16;
use std::arch::x86_64::*;

/// Rows of one band of the block: its accumulators are 8 rows × 2 vectors.
const BAND: usize = 8;
/// Rows and columns of the block, and K values per packed step (as in [`super::amx`]).
const BLOCK: usize = super::amx::BLOCK;

/// Whether this processor runs the kernel (AVX-512 F and BF16).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bf16")
}

/// The 512 bits of `v` as 32 bf16 values.
#[inline(always)]
fn as_bf16(v: __m512i) -> __m512bh {
    // SAFETY: both are 512 bits of plain data; every bit pattern is a valid value of each.
    unsafe { std::mem::transmute::<__m512i, __m512bh>(v) }
}

/// One 32×32 block over `steps` packed steps of `a` (a row block) and `b` (a column block),
/// stored to `c` with a row stride of `ldc` bytes: the same contract as the AMX kernel.
///
/// # Safety
/// `a` and `b` address `steps` packed steps (1024 bf16 values each) of a row block and a column
/// block; `c` addresses 32 rows of 32 floats at stride `ldc` bytes; the processor has AVX-512 F
/// and BF16 ([`available`]).
#[target_feature(enable = "avx512f,avx512bf16")]
pub unsafe fn block_32x32(a: *const bf16, b: *const bf16, steps: usize, c: *mut f32, ldc: isize) {
    // Row r of the band at row `first` in step s: 32 consecutive values of the packed step.
    let band_rows = |first: usize, s: usize| {
        std::array::from_fn(|r| a.wrapping_add(s * BLOCK * BLOCK + (first + r) * BLOCK))
    };
    // SAFETY: every pointer addresses its row's 32 values of the step (the caller's contract).
    unsafe { block(band_rows, b, steps, c, ldc) }
}

/// 32 zero bf16 values: the run of a row's step that lies in a convolution's padding.
static ZEROS: [bf16; BLOCK] = [bf16::ZERO; BLOCK];

/// [`block_32x32`] with the block's left operand read where it lies: `rows` is the block's 32
/// rows of a table of runs ([`super::amx::Left::Runs`]: `steps` pointers a row, each to the
/// row's 32 values of that step, or null for zeros). Each band takes its 8 rows' pointers for
/// a step and broadcasts their pairs from there; nothing is packed.
///
/// # Safety
/// `rows` addresses 32 rows of `steps` pointers (any alignment), each null or addressing 32
/// bf16 values (any alignment); otherwise as [`block_32x32`].
#[target_feature(enable = "avx512f,avx512bf16")]
pub unsafe fn block_32x32_runs(
    rows: *const *const bf16,
    b: *const bf16,
    steps: usize,
    c: *mut f32,
    ldc: isize,
) {
    let band_rows = |first: usize, s: usize| {
        std::array::from_fn(|r| {
            // SAFETY: entry (first + r, s) of the table (the caller's contract).
            let p = unsafe { rows.add((first + r) * steps + s).read_unaligned() };
            if p.is_null() {
                ZEROS.as_ptr()
            } else {
                p
            }
        })
    };
    // SAFETY: every pointer addresses 32 values (the caller's contract, or ZEROS).
    unsafe { block(band_rows, b, steps, c, ldc) }
}

/// The body of both kernels: `band_rows(first, s)` gives where the 8 rows of the band at row
/// `first` have their 32 values of step s.
///
/// # Safety
/// Every pointer `band_rows` gives addresses 32 bf16 values (any alignment); otherwise as
/// [`block_32x32`].
#[target_feature(enable = "avx512f,avx512bf16")]
#[inline]
unsafe fn block(
    band_rows: impl Fn(usize, usize) -> [*const bf16; BAND],
    b: *const bf16,
    steps: usize,
    c: *mut f32,
    ldc: isize,
) {
    for band in 0..BLOCK / BAND {
        let mut acc = [[_mm512_setzero_ps(); 2]; BAND];
        for s in 0..steps {
            let b_step = b.wrapping_add(s * BLOCK * BLOCK);
            let runs = band_rows(band * BAND, s);
            for pair in 0..BLOCK / 2 {
                // SAFETY: pair `pair` of step s of B (64 bf16 values: 32 columns × 2) and the
                // pair's value of each row's run (the caller's contract).
                unsafe {
                    let b_pairs = b_step.add(pair * 2 * BLOCK);
                    let low = as_bf16(_mm512_loadu_si512(b_pairs.cast()));
                    let high = as_bf16(_mm512_loadu_si512(b_pairs.add(BLOCK).cast()));
                    for (run, row) in runs.iter().zip(acc.iter_mut()) {
                        let at = run.add(2 * pair).cast::<i32>();
                        let x = as_bf16(_mm512_set1_epi32(at.read_unaligned()));
                        row[0] = _mm512_dpbf16_ps(row[0], x, low);
                        row[1] = _mm512_dpbf16_ps(row[1], x, high);
                    }
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let out = c.wrapping_byte_offset((band * BAND + r) as isize * ldc);
            // SAFETY: row band·8 + r of the block: 32 floats (the caller's contract).
            unsafe {
                _mm512_storeu_ps(out, row[0]);
                _mm512_storeu_ps(out.add(16), row[1]);
            }
        }
    }
}
