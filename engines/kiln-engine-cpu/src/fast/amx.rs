//! bf16 GEMM on Intel AMX tiles (`tdpbf16ps`): products of bf16 pairs summed into f32 tiles.
//!
//! Both operands are packed in blocks of 32 rows (A) or 32 columns (B), each block step by
//! step along K (32 values a step), so that every tile load reads 1 KiB of consecutive bytes:
//! - A: `[M/32][K/32][32 rows][32 k]`;
//! - B in the VNNI layout AMX reads, pairs of K rows side by side: `[N/32][K/32][16 pairs][32
//!   columns][2]`;
//!
//! with M, N and K padded to multiples of 32 with zeros. One block of work is a 32×32 f32
//! output held in four tiles; each step loads two 16×32 tiles of A and two 16×(16 pairs) tiles
//! of B and issues four tile products. Full blocks of a row-major f32 output are stored from the
//! tiles directly. The result equals an f32 GEMM of the widened operands up to the order of the
//! f32 sums.
//!
//! Linux lets a process use the tile registers only after it asks (`arch_prctl`
//! `ARCH_REQ_XCOMP_PERM`); [`available`] asks once and reports whether it was granted.

use half::bf16;
use std::sync::OnceLock;

/// Rows and columns of one output block, and K values per step.
pub const BLOCK: usize = 32;
/// bf16 values of one packed step of one block (32 × 32).
const STEP: usize = BLOCK * BLOCK;
/// Bytes of A row blocks that one pass over B's column blocks works on (half of a 2 MiB L2).
const GROUP_BYTES: usize = 1 << 20;

/// Whether this processor has AMX with bf16 and the OS lets this process use it (asked once).
pub fn available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        use std::arch::x86_64::__cpuid_count;
        // Leaf 7 is read only where the processor reports it.
        let has_amx = __cpuid_count(0, 0).eax >= 7 && {
            let edx = __cpuid_count(7, 0).edx;
            // AMX-BF16 is bit 22, AMX-TILE bit 24.
            edx & (1 << 22) != 0 && edx & (1 << 24) != 0
        };
        has_amx && std::arch::is_x86_feature_detected!("avx512f") && request_permission()
    })
}

#[cfg(target_os = "linux")]
fn request_permission() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with these arguments only changes which state components the kernel
    // lets this process use; it reads and writes no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn request_permission() -> bool {
    false
}

/// An element type the packers read: bf16 as it is, f32 rounded to bf16 (exact for values that
/// were bf16, such as a convolution's bf16 input widened by im2col).
pub trait Bf16Source: Copy {
    fn to_bf16(self) -> bf16;
}

impl Bf16Source for bf16 {
    #[inline(always)]
    fn to_bf16(self) -> bf16 {
        self
    }
}

impl Bf16Source for f32 {
    #[inline(always)]
    fn to_bf16(self) -> bf16 {
        bf16::from_f32(self)
    }
}

/// `x` rounded up to a multiple of [`BLOCK`] (the packed sizes of M, N and K).
pub fn padded(x: usize) -> usize {
    x.next_multiple_of(BLOCK)
}

/// bf16 elements of one packed block (32 rows of A or 32 columns of B) for a K of `k`.
pub fn block_len(k: usize) -> usize {
    padded(k) * BLOCK
}

/// bf16 elements of a packed left operand of `m`×`k`.
pub fn packed_a_len(m: usize, k: usize) -> usize {
    super::amx_packed_len(m, k)
}

/// bf16 elements of a packed right operand of `k`×`n`.
pub fn packed_b_len(k: usize, n: usize) -> usize {
    super::amx_packed_len(k, n)
}

/// Packs the matrix at `a` (`m`×`k`, row stride `rs`, column stride `cs`, in elements) into
/// `out` (`packed_a_len(m, k)` elements), zero padded.
///
/// # Safety
/// `a` addresses an `m`×`k` matrix with those strides.
pub unsafe fn pack_a<T: Bf16Source>(
    a: *const T,
    m: usize,
    k: usize,
    rs: isize,
    cs: isize,
    out: &mut [bf16],
) {
    let steps = padded(k) / BLOCK;
    for (i, row_block) in out.chunks_exact_mut(steps * STEP).enumerate() {
        for (s, step) in row_block.chunks_exact_mut(STEP).enumerate() {
            for (r, dst) in step.chunks_exact_mut(BLOCK).enumerate() {
                let row = i * BLOCK + r;
                let p0 = s * BLOCK;
                let valid = if row < m {
                    BLOCK.min(k.saturating_sub(p0))
                } else {
                    0
                };
                let src = a.wrapping_offset(row as isize * rs + p0 as isize * cs);
                if cs == 1 {
                    // SAFETY: `valid` consecutive elements of row `row` of A from p0.
                    let run = unsafe { std::slice::from_raw_parts(src, valid) };
                    for (d, v) in dst[..valid].iter_mut().zip(run) {
                        *d = v.to_bf16();
                    }
                } else {
                    for (p, v) in dst[..valid].iter_mut().enumerate() {
                        // SAFETY: element (row, p0 + p) of A.
                        *v = unsafe { *src.offset(p as isize * cs) }.to_bf16();
                    }
                }
                dst[valid..].fill(bf16::ZERO);
            }
        }
    }
}

/// Packs the matrix at `b` (`k`×`n`, strides in elements) into `out` (`packed_b_len(k, n)`
/// elements) in the blocked VNNI layout, zero padded.
///
/// # Safety
/// `b` addresses a `k`×`n` matrix with those strides.
pub unsafe fn pack_b<T: Bf16Source>(
    b: *const T,
    k: usize,
    n: usize,
    rs: isize,
    cs: isize,
    out: &mut [bf16],
) {
    let steps = padded(k) / BLOCK;
    for (j, col_block) in out.chunks_exact_mut(steps * STEP).enumerate() {
        let j0 = j * BLOCK;
        let cols = BLOCK.min(n.saturating_sub(j0));
        for (s, step) in col_block.chunks_exact_mut(STEP).enumerate() {
            // step: [16 pairs][32 columns][2]
            for (pair, dst) in step.chunks_exact_mut(2 * BLOCK).enumerate() {
                let p = s * BLOCK + 2 * pair;
                if cs == 1 && cols == BLOCK && p + 1 < k {
                    let src = b.wrapping_offset(p as isize * rs + j0 as isize);
                    // SAFETY: 32 consecutive elements of rows p and p + 1 of B from j0.
                    let (r0, r1) = unsafe {
                        (
                            std::slice::from_raw_parts(src, BLOCK),
                            std::slice::from_raw_parts(src.offset(rs), BLOCK),
                        )
                    };
                    for ((d, &x), &y) in dst.chunks_exact_mut(2).zip(r0).zip(r1) {
                        d[0] = x.to_bf16();
                        d[1] = y.to_bf16();
                    }
                    continue;
                }
                for half_row in 0..2 {
                    let p = s * BLOCK + 2 * pair + half_row;
                    let src = b.wrapping_offset(p as isize * rs + j0 as isize * cs);
                    for c in 0..BLOCK {
                        dst[2 * c + half_row] = if p < k && c < cols {
                            // SAFETY: element (p, j0 + c) of B.
                            unsafe { *src.offset(c as isize * cs) }.to_bf16()
                        } else {
                            bf16::ZERO
                        };
                    }
                }
            }
        }
    }
}

/// The tile configuration every block uses: palette 1, eight tiles of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

fn tile_config() -> TileConfig {
    let mut c = [0u8; 64];
    c[0] = 1;
    for t in 0..8 {
        c[16 + 2 * t..18 + 2 * t].copy_from_slice(&64u16.to_le_bytes());
        c[48 + t] = 16;
    }
    TileConfig(c)
}

/// C = A·B for output rows `i0..i0+m` and columns `j0..j0+n` of the packed operands (`i0` and
/// `j0` multiples of [`BLOCK`]), written to `dst` (pointer to element (i0, j0), row stride,
/// column stride; f32), on the calling thread.
///
/// # Safety
/// `a` and `b` were packed by [`pack_a`] / [`pack_b`] for a K of `k` and hold rows up to
/// `padded(i0 + m)` and columns up to `padded(j0 + n)`; `dst` addresses the `m`×`n` output;
/// [`available`] returned true.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm(
    a: *const bf16,
    b: *const bf16,
    k: usize,
    i0: usize,
    m: usize,
    j0: usize,
    n: usize,
    dst: (*mut f32, isize, isize),
) {
    let steps = padded(k) / BLOCK;
    let cfg = tile_config();
    let mut block = [0.0f32; BLOCK * BLOCK];
    // SAFETY: loads a valid configuration (palette 1, eight 16×64-byte tiles); the permission
    // to use tile data was granted (`available`).
    unsafe { std::arch::asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack)) };
    // Row blocks in groups whose A blocks stay in L2 while each column block of B (read from
    // further away) is used by the whole group.
    let group = (GROUP_BYTES / (steps * STEP * 2)).clamp(1, 16) * BLOCK;
    for g0 in (0..m).step_by(group) {
        for bj in (0..n).step_by(BLOCK) {
            let b_block = b.wrapping_add((j0 + bj) / BLOCK * steps * STEP);
            for bi in (g0..m.min(g0 + group)).step_by(BLOCK) {
                let a_block = a.wrapping_add((i0 + bi) / BLOCK * steps * STEP);
                let (rows, cols) = (BLOCK.min(m - bi), BLOCK.min(n - bj));
                let out = dst
                    .0
                    .wrapping_offset(bi as isize * dst.1 + bj as isize * dst.2);
                if rows == BLOCK && cols == BLOCK && dst.2 == 1 && dst.1 >= BLOCK as isize {
                    // SAFETY: a full 32×32 block of a row-major output.
                    unsafe { block_32x32(a_block, b_block, steps, out, dst.1 * 4) };
                    continue;
                }
                // SAFETY: the block buffer holds 32×32 f32 (row stride 128 bytes).
                unsafe { block_32x32(a_block, b_block, steps, block.as_mut_ptr(), 128) };
                for r in 0..rows {
                    let row = out.wrapping_offset(r as isize * dst.1);
                    for c in 0..cols {
                        // SAFETY: element (bi + r, bj + c) of the output.
                        unsafe { *row.offset(c as isize * dst.2) = block[r * BLOCK + c] };
                    }
                }
            }
        }
    }
    // SAFETY: releases the tile state this function configured.
    unsafe { std::arch::asm!("tilerelease", options(nostack, nomem)) };
}

/// One 32×32 block over `steps` packed steps of `a` (a row block) and `b` (a column block),
/// stored to `c` with a row stride of `ldc` bytes.
///
/// # Safety
/// As [`gemm`]; the tile configuration of [`tile_config`] is loaded; `c` addresses 32 rows of
/// 128 bytes at stride `ldc`.
unsafe fn block_32x32(a: *const bf16, b: *const bf16, steps: usize, c: *mut f32, ldc: isize) {
    let c_high = c.wrapping_byte_offset(16 * ldc);
    // SAFETY: each step reads 2 KiB of A and 2 KiB of B inside their blocks (tiles 4 and 5:
    // rows 0-15 and 16-31 of A's step, 64-byte rows; tiles 6 and 7: the pairs of columns 0-15
    // and 16-31 of B's step, 128-byte rows); the stores write the 32×32 block. Tiles 0-3
    // accumulate.
    unsafe {
        std::arch::asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            "2:",
            "tileloadd tmm4, [{a} + {s64}*1]",
            "tileloadd tmm5, [{a} + {s64}*1 + 1024]",
            "tileloadd tmm6, [{b} + {s128}*1]",
            "tileloadd tmm7, [{b} + {s128}*1 + 64]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            "add {a}, 2048",
            "add {b}, 2048",
            "dec {steps}",
            "jnz 2b",
            "tilestored [{cl} + {ldc}*1], tmm0",
            "tilestored [{cl} + {ldc}*1 + 64], tmm1",
            "tilestored [{ch} + {ldc}*1], tmm2",
            "tilestored [{ch} + {ldc}*1 + 64], tmm3",
            a = inout(reg) a => _,
            b = inout(reg) b => _,
            steps = inout(reg) steps => _,
            s64 = in(reg) 64isize,
            s128 = in(reg) 128isize,
            cl = in(reg) c,
            ch = in(reg) c_high,
            ldc = in(reg) ldc,
            options(nostack)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_match_the_f64_product_of_the_bf16_values() {
        if !available() {
            eprintln!("skipped: this processor (or OS) offers no AMX-BF16");
            return;
        }
        let mut seed = 11u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(7);
            bf16::from_f32(((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        };
        for &(m, n, k) in &[(1, 1, 1), (33, 47, 70), (64, 64, 64), (5, 100, 200)] {
            let a: Vec<bf16> = (0..m * k).map(|_| rnd()).collect();
            let b: Vec<bf16> = (0..k * n).map(|_| rnd()).collect();
            let mut pa = vec![bf16::ZERO; packed_a_len(m, k)];
            let mut pb = vec![bf16::ZERO; packed_b_len(k, n)];
            // SAFETY: a is m×k row-major; b is k×n stored column-major (row stride 1).
            unsafe {
                pack_a(a.as_ptr(), m, k, k as isize, 1, &mut pa);
                pack_b(b.as_ptr(), k, n, 1, k as isize, &mut pb);
            }
            let mut c = vec![f32::NAN; m * n];
            // SAFETY: packed for this k; c is m×n row-major; AMX is available.
            unsafe {
                gemm(
                    pa.as_ptr(),
                    pb.as_ptr(),
                    k,
                    0,
                    m,
                    0,
                    n,
                    (c.as_mut_ptr(), n as isize, 1),
                )
            };
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
                        .sum();
                    let got = c[i * n + j] as f64;
                    assert!(
                        (got - want).abs() < 1e-4 * (k as f64),
                        "{m}x{n}x{k} ({i},{j}): {got} vs {want}"
                    );
                }
            }
        }
    }
}
