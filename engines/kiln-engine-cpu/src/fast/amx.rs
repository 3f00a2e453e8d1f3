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
//! f16 operands run on the same tiles as their exact bf16 parts, K laid out four times
//! ([`split_f16`], [`F16_PARTS`]).
//!
//! Linux lets a process use the tile registers only after it asks (`arch_prctl`
//! `ARCH_REQ_XCOMP_PERM`); [`available`] asks once and reports whether it was granted.

use half::{bf16, f16};
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

/// The two bf16 parts of an f16 value: `high`, the value rounded to bf16 (to nearest, ties to
/// even), and `low = x - high`.
///
/// An f16 value has 11 significant bits; the high part keeps the top 8 (rounded), and the rest is
/// a multiple of the value's last f16 bit with at most 4 significant bits, so the low part is
/// exact in bf16 too: `high + low == x` for every finite f16 (subnormals included: bf16 has
/// f32's exponent range), and products of parts are exact in f32. (An infinite or NaN value has
/// no such parts; the packers report them.)
pub fn split_f16(x: f16) -> (bf16, bf16) {
    let x = x.to_f32();
    let high = bf16::from_f32(x);
    (high, bf16::from_f32(x - high.to_f32()))
}

/// Splits `src` (at most 32 values) into `high` and `low` parts ([`split_f16`]), zeros past
/// its end; returns whether any value is infinite or NaN.
fn split_run(src: &[f16], high: &mut [bf16; BLOCK], low: &mut [bf16; BLOCK]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if src.len() == BLOCK && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: 32 values; the processor has AVX-512 F (checked just above).
        return unsafe { split32_avx512(src.as_ptr(), high, low) };
    }
    let mut bad = false;
    for (i, (h, l)) in high.iter_mut().zip(low.iter_mut()).enumerate() {
        (*h, *l) = match src.get(i) {
            Some(&x) => {
                bad |= !x.is_finite();
                split_f16(x)
            }
            None => (bf16::ZERO, bf16::ZERO),
        };
    }
    bad
}

/// [`split_run`] of 32 values, 16 at a time: f16 to f32 (`vcvtph2ps`), the high part rounded to
/// nearest even on the f32 bits, the low part the f32 difference (exact, so its top 16 bits are
/// it). The same bits as [`split_f16`] for every finite value.
///
/// # Safety
/// `src` addresses 32 values; the processor has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn split32_avx512(
    src: *const f16,
    high: &mut [bf16; BLOCK],
    low: &mut [bf16; BLOCK],
) -> bool {
    use std::arch::x86_64::*;
    let mut bad = 0;
    for h in 0..2 {
        // SAFETY: values 16·h.. of the 32 (the caller's contract); the outputs hold 32 each.
        unsafe {
            let raw = _mm256_loadu_si256(src.add(16 * h).cast());
            let exponent = _mm256_and_si256(raw, _mm256_set1_epi16(0x7c00));
            bad |= _mm256_movemask_epi8(_mm256_cmpeq_epi16(exponent, _mm256_set1_epi16(0x7c00)));
            let x = _mm512_cvtph_ps(raw);
            let bits = _mm512_castps_si512(x);
            let odd = _mm512_and_si512(_mm512_srli_epi32::<16>(bits), _mm512_set1_epi32(1));
            let rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
            let hi_bits = _mm512_and_si512(rounded, _mm512_set1_epi32(-65536));
            let lo = _mm512_sub_ps(x, _mm512_castsi512_ps(hi_bits));
            let hi16 = _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(hi_bits));
            let lo16 = _mm512_cvtepi32_epi16(_mm512_srli_epi32::<16>(_mm512_castps_si512(lo)));
            _mm256_storeu_si256(high.as_mut_ptr().add(16 * h).cast(), hi16);
            _mm256_storeu_si256(low.as_mut_ptr().add(16 * h).cast(), lo16);
        }
    }
    bad != 0
}

/// Up to 32 values of a row (`cs == 1`: read in place) or column of a matrix at `src`, stride
/// `cs`, gathered into `buf` when strided.
///
/// # Safety
/// `src` addresses `len` values at stride `cs`.
unsafe fn run_at(src: *const f16, len: usize, cs: isize, buf: &mut [f16; BLOCK]) -> &[f16] {
    if cs == 1 {
        // SAFETY: `len` consecutive values (the caller's contract).
        unsafe { std::slice::from_raw_parts(src, len) }
    } else {
        for (p, v) in buf[..len].iter_mut().enumerate() {
            // SAFETY: value p of the run (the caller's contract).
            *v = unsafe { *src.offset(p as isize * cs) };
        }
        &buf[..len]
    }
}

/// How an f16 product runs on bf16 tiles: K is taken [`F16_PARTS`] times (each time padded to
/// whole steps), A's parts in the order high, high, low, low and B's high, low, high, low, so
/// that one GEMM over the longer K sums `ah·bh + ah·bl + al·bh + al·bl`, which is `a·b`
/// exactly, in f32 tiles: the products of the f16 values, summed in f32 as the widened f32
/// path sums them (in another order).
pub const F16_PARTS: usize = 4;

/// The K that packed f16 operands are multiplied over: `F16_PARTS` copies of `k`, each padded to
/// whole steps (pass it to [`gemm`], [`packed_a_len`], [`packed_b_len`] and [`block_len`]).
pub fn f16_split_k(k: usize) -> usize {
    F16_PARTS * padded(k)
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

/// Where row `row` of the `m`×`k` matrix at `a` (strides in elements) has its values `p0..`
/// of one packed step, and how many there are (0 for a padding row, fewer than 32 at K's end).
fn a_run<T>(
    a: *const T,
    m: usize,
    k: usize,
    rs: isize,
    cs: isize,
    row: usize,
    p0: usize,
) -> (*const T, usize) {
    let valid = if row < m {
        BLOCK.min(k.saturating_sub(p0))
    } else {
        0
    };
    (
        a.wrapping_offset(row as isize * rs + p0 as isize * cs),
        valid,
    )
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
                let (src, valid) = a_run(a, m, k, rs, cs, i * BLOCK + r, s * BLOCK);
                if cs == 1 {
                    // SAFETY: `valid` consecutive elements of row i·32 + r of A from step s.
                    let run = unsafe { std::slice::from_raw_parts(src, valid) };
                    for (d, v) in dst[..valid].iter_mut().zip(run) {
                        *d = v.to_bf16();
                    }
                } else {
                    for (p, v) in dst[..valid].iter_mut().enumerate() {
                        // SAFETY: element p of that run of A.
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

/// Packs an `m`×`k` bf16 matrix gathered in runs of 32 values along K (`k` a multiple of 32)
/// into `out` (`packed_a_len(m, k)` elements) as [`pack_a`] lays it out: `row_runs(row, runs)`
/// fills `runs[s]` with where values `32·s..32·s + 32` of row `row` lie, or `None` where they
/// are all zero (a convolution's padding, say).
///
/// # Safety
/// Every pointer `row_runs` gives addresses 32 bf16 values (any alignment).
pub unsafe fn pack_a_runs(
    m: usize,
    k: usize,
    out: &mut [bf16],
    row_runs: impl Fn(usize, &mut [Option<*const bf16>]),
) {
    debug_assert_eq!(k % BLOCK, 0);
    let steps = k / BLOCK;
    let mut runs = vec![None; steps];
    for (i, row_block) in out.chunks_exact_mut(steps * STEP).enumerate() {
        for r in 0..BLOCK {
            let row = i * BLOCK + r;
            if row < m {
                row_runs(row, &mut runs);
            } else {
                runs.fill(None);
            }
            for (s, run) in runs.iter().enumerate() {
                let dst = &mut row_block[s * STEP + r * BLOCK..s * STEP + (r + 1) * BLOCK];
                match run {
                    // SAFETY: 32 bf16 values at src (the caller's contract), 64 bytes read
                    // unaligned; dst holds 32 bf16.
                    Some(src) => unsafe {
                        let v = std::ptr::read_unaligned(src.cast::<[u8; 2 * BLOCK]>());
                        std::ptr::write_unaligned(dst.as_mut_ptr().cast::<[u8; 2 * BLOCK]>(), v);
                    },
                    None => dst.fill(bf16::ZERO),
                }
            }
        }
    }
}

/// Writes the table of runs ([`Left::Runs`]) of an `m`×`k` bf16 matrix gathered as for
/// [`pack_a_runs`] (`k` a multiple of 32) to `table`: `k / 32` pointers for each of
/// `padded(m)` rows, null where `row_runs` gives `None` and for the rows past `m`.
///
/// # Safety
/// `table` addresses `padded(m) · k / 32` pointers (any alignment).
pub unsafe fn table_of_runs(
    m: usize,
    k: usize,
    table: *mut *const bf16,
    row_runs: impl Fn(usize, &mut [Option<*const bf16>]),
) {
    debug_assert_eq!(k % BLOCK, 0);
    let steps = k / BLOCK;
    let mut runs = vec![None; steps];
    for row in 0..padded(m) {
        if row < m {
            row_runs(row, &mut runs);
        } else {
            runs.fill(None);
        }
        for (s, run) in runs.iter().enumerate() {
            // SAFETY: entry (row, s) of the table (the caller's contract).
            unsafe {
                table
                    .add(row * steps + s)
                    .write_unaligned(run.unwrap_or(std::ptr::null()))
            };
        }
    }
}

/// Packs the f16 matrix at `a` (`m`×`k`, strides in elements) for a K of [`f16_split_k`]`(k)`
/// into `out` (`packed_a_len(m, f16_split_k(k))` elements): each block of 32 rows holds the
/// rows' high parts twice, then their low parts twice, each part a whole number of steps.
/// Returns whether any value is infinite or NaN (the split then does not hold: multiply the f16
/// values another way).
///
/// # Safety
/// `a` addresses an `m`×`k` matrix with those strides.
pub unsafe fn pack_a_f16_split(
    a: *const f16,
    m: usize,
    k: usize,
    rs: isize,
    cs: isize,
    out: &mut [bf16],
) -> bool {
    let steps = padded(k) / BLOCK;
    let (mut high, mut low, mut buf) =
        ([bf16::ZERO; BLOCK], [bf16::ZERO; BLOCK], [f16::ZERO; BLOCK]);
    let mut bad = false;
    for (i, row_block) in out.chunks_exact_mut(F16_PARTS * steps * STEP).enumerate() {
        for s in 0..steps {
            for r in 0..BLOCK {
                let (src, valid) = a_run(a, m, k, rs, cs, i * BLOCK + r, s * BLOCK);
                // SAFETY: `valid` values of row i·32 + r of A from step s.
                let run = unsafe { run_at(src, valid, cs, &mut buf) };
                bad |= split_run(run, &mut high, &mut low);
                for (q, part) in [&high, &high, &low, &low].into_iter().enumerate() {
                    let at = ((q * steps + s) * BLOCK + r) * BLOCK;
                    row_block[at..at + BLOCK].copy_from_slice(part);
                }
            }
        }
    }
    bad
}

/// Packs the f16 matrix at `b` (`k`×`n`) for a K of [`f16_split_k`]`(k)` into `out`
/// (`packed_b_len(f16_split_k(k), n)` elements): each block of 32 columns holds the high parts,
/// the low parts, the high parts and the low parts again, each a whole number of steps in the
/// VNNI layout. Returns whether any value is infinite or NaN (see [`pack_a_f16_split`]).
///
/// # Safety
/// `b` addresses a `k`×`n` matrix with those strides.
pub unsafe fn pack_b_f16_split(
    b: *const f16,
    k: usize,
    n: usize,
    rs: isize,
    cs: isize,
    out: &mut [bf16],
) -> bool {
    let steps = padded(k) / BLOCK;
    let mut parts = [[[bf16::ZERO; BLOCK]; 2]; 2];
    let mut buf = [f16::ZERO; BLOCK];
    let mut pairs = [[bf16::ZERO; 2 * BLOCK]; 2];
    let mut bad = false;
    for (j, col_block) in out.chunks_exact_mut(F16_PARTS * steps * STEP).enumerate() {
        let j0 = j * BLOCK;
        let cols = BLOCK.min(n.saturating_sub(j0));
        for s in 0..steps {
            for pair in 0..BLOCK / 2 {
                for (half, [high, low]) in parts.iter_mut().enumerate() {
                    let p = s * BLOCK + 2 * pair + half;
                    let valid = if p < k { cols } else { 0 };
                    let src = b.wrapping_offset(p as isize * rs + j0 as isize * cs);
                    // SAFETY: `valid` values of row p of B from column j0.
                    let run = unsafe { run_at(src, valid, cs, &mut buf) };
                    bad |= split_run(run, high, low);
                }
                // [32 columns][2 rows of the pair], for the high and the low parts.
                for (which, dst) in pairs.iter_mut().enumerate() {
                    for c in 0..BLOCK {
                        dst[2 * c] = parts[0][which][c];
                        dst[2 * c + 1] = parts[1][which][c];
                    }
                }
                for (q, part) in [&pairs[0], &pairs[1], &pairs[0], &pairs[1]]
                    .into_iter()
                    .enumerate()
                {
                    let at = (q * steps + s) * STEP + pair * 2 * BLOCK;
                    col_block[at..at + 2 * BLOCK].copy_from_slice(part);
                }
            }
        }
    }
    bad
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

/// The instructions that multiply the packed blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// AMX tiles (`tdpbf16ps`), at the `amx` level.
    Tiles,
    /// AVX-512 BF16 (`vdpbf16ps`, [`super::dot_bf16`]), at the `avx512bf16` level.
    Dot,
}

impl Kernel {
    /// The kernel that level `isa` multiplies packed bf16 operands with; `None` below
    /// `avx512bf16` (such a level widens them to f32).
    pub fn for_isa(isa: super::isa::Isa) -> Option<Kernel> {
        use super::isa::Isa;
        match isa {
            Isa::Amx => Some(Kernel::Tiles),
            Isa::Avx512Bf16 => Some(Kernel::Dot),
            Isa::Portable | Isa::Avx2 | Isa::Avx512 => None,
        }
    }

    /// Whether this processor (and its OS) runs the kernel.
    pub fn available(self) -> bool {
        match self {
            Kernel::Tiles => available(),
            Kernel::Dot => super::dot_bf16::available(),
        }
    }
}

/// Where [`gemm`]'s left operand comes from.
#[derive(Clone, Copy, Debug)]
pub enum Left {
    /// Packed by [`pack_a`] (or its variants): blocks of 32 rows, step by step.
    Packed(*const bf16),
    /// A table of pointers, `steps` a row (row-major, `padded(k) / 32` steps): each to the
    /// row's 32 values of that step (any alignment), or null for 32 zeros. This is the left
    /// operand of a gathered convolution read where its values lie: the `vdpbf16ps` kernel
    /// broadcasts each row's pairs from there, with nothing packed; AMX tiles get each row
    /// block packed from the table first.
    Runs(*const *const bf16),
}

/// C = A·B for output rows `i0..i0+m` and columns `j0..j0+n` of the operands (`i0` and `j0`
/// multiples of [`BLOCK`]), written to `dst` (pointer to element (i0, j0), row stride,
/// column stride; f32), on the calling thread, with `kernel`'s instructions.
///
/// # Safety
/// `a` was packed by [`pack_a`] for a K of `k`, or is a table of runs for it ([`Left::Runs`]),
/// and `b` was packed by [`pack_b`] for the same K; they hold rows up to `padded(i0 + m)` and
/// columns up to `padded(j0 + n)`; `dst` addresses the `m`×`n` output; `kernel.available()`
/// returned true.
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemm(
    kernel: Kernel,
    a: Left,
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
    if kernel == Kernel::Tiles {
        // SAFETY: loads a valid configuration (palette 1, eight 16×64-byte tiles); the
        // permission to use tile data was granted (`available`).
        unsafe { std::arch::asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack)) };
    }
    // AMX tiles read a table's row block packed into this buffer first.
    let mut staged: Vec<bf16> = Vec::new();
    // The block of output rows bi.. (relative to i0) and the column block at b.
    let mut multiply = |bi: usize, b, c, ldc| match (kernel, a) {
        (Kernel::Tiles, Left::Packed(a)) => {
            let a = a.wrapping_add((i0 + bi) / BLOCK * steps * STEP);
            // SAFETY: the tile configuration is loaded (above); the rest is the caller's
            // contract, forwarded by each call below.
            unsafe { block_32x32(a, b, steps, c, ldc) }
        }
        (Kernel::Dot, Left::Packed(a)) => {
            let a = a.wrapping_add((i0 + bi) / BLOCK * steps * STEP);
            // SAFETY: as above; the processor has AVX-512 BF16 (`kernel.available()`).
            unsafe { super::dot_bf16::block_32x32(a, b, steps, c, ldc) }
        }
        (Kernel::Dot, Left::Runs(table)) => {
            let rows = table.wrapping_add((i0 + bi) * steps);
            // SAFETY: as above; the table's 32 rows of this block (the caller's contract).
            unsafe { super::dot_bf16::block_32x32_runs(rows, b, steps, c, ldc) }
        }
        (Kernel::Tiles, Left::Runs(table)) => {
            staged.resize(steps * STEP, bf16::ZERO);
            for r in 0..BLOCK {
                for s in 0..steps {
                    // SAFETY: entry (bi + r, s) of the table (the caller's contract).
                    let run = unsafe { table.add((i0 + bi + r) * steps + s).read_unaligned() };
                    let dst = &mut staged[s * STEP + r * BLOCK..s * STEP + (r + 1) * BLOCK];
                    if run.is_null() {
                        dst.fill(bf16::ZERO);
                    } else {
                        // SAFETY: 32 values at run (the caller's contract), read unaligned.
                        let v = unsafe { run.cast::<[bf16; BLOCK]>().read_unaligned() };
                        dst.copy_from_slice(&v);
                    }
                }
            }
            // SAFETY: as the first arm, with the block packed into `staged`.
            unsafe { block_32x32(staged.as_ptr(), b, steps, c, ldc) }
        }
    };
    // Row blocks in groups whose A blocks stay in L2 while each column block of B (read from
    // further away) is used by the whole group.
    let group = (GROUP_BYTES / (steps * STEP * 2)).clamp(1, 16) * BLOCK;
    for g0 in (0..m).step_by(group) {
        for bj in (0..n).step_by(BLOCK) {
            let b_block = b.wrapping_add((j0 + bj) / BLOCK * steps * STEP);
            for bi in (g0..m.min(g0 + group)).step_by(BLOCK) {
                let (rows, cols) = (BLOCK.min(m - bi), BLOCK.min(n - bj));
                let out = dst
                    .0
                    .wrapping_offset(bi as isize * dst.1 + bj as isize * dst.2);
                if rows == BLOCK && cols == BLOCK && dst.2 == 1 && dst.1 >= BLOCK as isize {
                    // A full 32×32 block of a row-major output.
                    multiply(bi, b_block, out, dst.1 * 4);
                    continue;
                }
                // The block buffer holds 32×32 f32 (row stride 128 bytes).
                multiply(bi, b_block, block.as_mut_ptr(), 128);
                if rows == BLOCK && cols == BLOCK && dst.1 == 1 {
                    // A column-major output (a channels-first convolution's tile stored
                    // transposed): each column of the block is 32 consecutive floats.
                    // SAFETY: the whole block is inside the output; AVX-512 F (available).
                    unsafe { store_transposed(&block, out, dst.2) };
                    continue;
                }
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
    if kernel == Kernel::Tiles {
        // SAFETY: releases the tile state this function configured.
        unsafe { std::arch::asm!("tilerelease", options(nostack, nomem)) };
    }
}

/// Stores the 32×32 row-major `block` transposed: column `c` of it to the 32 consecutive floats
/// at `dst + c·ld`, a 16×16 quarter at a time through registers.
///
/// # Safety
/// `dst` addresses 32 runs of 32 floats at stride `ld`; the processor has AVX-512 F.
#[target_feature(enable = "avx512f")]
unsafe fn store_transposed(block: &[f32; BLOCK * BLOCK], dst: *mut f32, ld: isize) {
    for (r0, c0) in [(0, 0), (0, 16), (16, 0), (16, 16)] {
        // SAFETY: rows r0..r0 + 16, columns c0..c0 + 16 of the block; columns c0.. of the
        // output, rows r0.. (the caller's contract).
        unsafe {
            super::transpose::transpose16_block(
                block[r0 * BLOCK + c0..].as_ptr(),
                BLOCK as isize,
                dst.offset(c0 as isize * ld + r0 as isize),
                ld,
            )
        };
    }
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

    /// `a_len` and `b_len` random bf16 values in [-1, 1).
    fn bf16_operands(a_len: usize, b_len: usize, seed: &mut u64) -> (Vec<bf16>, Vec<bf16>) {
        let mut rnd = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(7);
            bf16::from_f32(((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        };
        let a = (0..a_len).map(|_| rnd()).collect();
        let b = (0..b_len).map(|_| rnd()).collect();
        (a, b)
    }

    /// The kernels this processor runs, or none (the test then says it is skipped).
    fn kernels_here() -> Vec<Kernel> {
        let here: Vec<Kernel> = [Kernel::Tiles, Kernel::Dot]
            .into_iter()
            .filter(|k| k.available())
            .collect();
        if here.is_empty() {
            eprintln!("skipped: this processor offers neither AMX-BF16 nor AVX-512 BF16");
        }
        here
    }

    /// `gemm` of the packed operands into `dst` (pointer, row stride, column stride) with
    /// `kernel`.
    fn multiply(
        kernel: Kernel,
        pa: &[bf16],
        pb: &[bf16],
        mnk: [usize; 3],
        dst: (&mut [f32], isize, isize),
    ) {
        let [m, n, k] = mnk;
        let (c, rs, cs) = dst;
        let last = (m - 1) as isize * rs + (n - 1) as isize * cs;
        assert!(pa.len() >= packed_a_len(m, k) && pb.len() >= packed_b_len(k, n));
        assert!(rs >= 0 && cs >= 0 && (last as usize) < c.len());
        // SAFETY: the operands hold m rows and n columns packed for k (checked above); the
        // output holds element (m - 1, n - 1) at those strides; the kernel is available.
        unsafe {
            gemm(
                kernel,
                Left::Packed(pa.as_ptr()),
                pb.as_ptr(),
                k,
                0,
                m,
                0,
                n,
                (c.as_mut_ptr(), rs, cs),
            )
        };
    }

    /// A left operand given as a table of runs (null runs read as zeros, rows past m null)
    /// gets the bits of the same matrix packed, with each kernel, into a row-major output and
    /// a column-major one.
    #[test]
    fn a_table_of_runs_multiplies_as_the_packed_matrix() {
        for kernel in kernels_here() {
            let (m, n, k) = (75, 40, 96);
            let steps = k / BLOCK;
            let (a, b) = bf16_operands(m * k, k * n, &mut 5);
            // Runs (row, step) with (row + step) % 7 == 3 lie in the "padding": null.
            let padding = |row: usize, s: usize| (row + s) % 7 == 3;
            let mut zeroed = a.clone();
            for row in 0..m {
                for s in (0..steps).filter(|&s| padding(row, s)) {
                    zeroed[row * k + 32 * s..row * k + 32 * (s + 1)].fill(bf16::ZERO);
                }
            }
            // Filled with a non-null pointer: the rows past m are written null.
            let mut table = vec![a.as_ptr(); padded(m) * steps];
            // SAFETY: the table holds padded(m) rows of `steps` pointers; each run is 32 values
            // of a row of a.
            unsafe {
                table_of_runs(m, k, table.as_mut_ptr(), |row, runs| {
                    for (s, run) in runs.iter_mut().enumerate() {
                        *run = (!padding(row, s)).then(|| a[row * k + 32 * s..].as_ptr());
                    }
                })
            };
            assert!(table[m * steps..].iter().all(|p| p.is_null()));
            let mut pa = vec![bf16::ZERO; packed_a_len(m, k)];
            let mut pb = vec![bf16::ZERO; packed_b_len(k, n)];
            // SAFETY: zeroed is m×k and b is k×n, both row-major.
            unsafe {
                pack_a(zeroed.as_ptr(), m, k, k as isize, 1, &mut pa);
                pack_b(b.as_ptr(), k, n, n as isize, 1, &mut pb);
            }
            let ld = m + 1;
            for (rs, cs, len) in [(n as isize, 1, m * n), (1, ld as isize, ld * n)] {
                let mut want = vec![f32::NAN; len];
                let mut got = vec![f32::NAN; len];
                multiply(kernel, &pa, &pb, [m, n, k], (&mut want, rs, cs));
                // SAFETY: the table holds padded(m) rows of `steps` runs, each null or 32
                // values of a; pb is packed for k; got holds the m×n output at (rs, cs); the
                // kernel is available.
                unsafe {
                    gemm(
                        kernel,
                        Left::Runs(table.as_ptr()),
                        pb.as_ptr(),
                        k,
                        0,
                        m,
                        0,
                        n,
                        (got.as_mut_ptr(), rs, cs),
                    )
                };
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{kernel:?}, strides ({rs}, {cs})");
            }
        }
    }

    #[test]
    fn kernels_match_the_f64_product_of_the_bf16_values() {
        for kernel in kernels_here() {
            let mut seed = 11u64;
            for &(m, n, k) in &[
                (1, 1, 1),
                (33, 47, 70),
                (64, 64, 64),
                (5, 100, 200),
                (96, 40, 33),
            ] {
                let (a, b) = bf16_operands(m * k, k * n, &mut seed);
                let mut pa = vec![bf16::ZERO; packed_a_len(m, k)];
                let mut pb = vec![bf16::ZERO; packed_b_len(k, n)];
                // SAFETY: a is m×k row-major; b is k×n stored column-major (row stride 1).
                unsafe {
                    pack_a(a.as_ptr(), m, k, k as isize, 1, &mut pa);
                    pack_b(b.as_ptr(), k, n, 1, k as isize, &mut pb);
                }
                let mut c = vec![f32::NAN; m * n];
                multiply(kernel, &pa, &pb, [m, n, k], (&mut c, n as isize, 1));
                for i in 0..m {
                    for j in 0..n {
                        let want: f64 = (0..k)
                            .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
                            .sum();
                        let got = c[i * n + j] as f64;
                        assert!(
                            (got - want).abs() < 1e-4 * (k as f64),
                            "{kernel:?} {m}x{n}x{k} ({i},{j}): {got} vs {want}"
                        );
                    }
                }
            }
        }
    }

    /// A column-major output (whole blocks stored through the register transpose, edge blocks
    /// element by element) gets the bits of the row-major one, transposed, and nothing else.
    #[test]
    fn a_column_major_output_is_the_row_major_one_transposed() {
        for kernel in kernels_here() {
            let (m, n, k) = (70, 45, 50);
            let (a, b) = bf16_operands(m * k, k * n, &mut 3);
            let mut pa = vec![bf16::ZERO; packed_a_len(m, k)];
            let mut pb = vec![bf16::ZERO; packed_b_len(k, n)];
            // SAFETY: a is m×k and b is k×n, both row-major.
            unsafe {
                pack_a(a.as_ptr(), m, k, k as isize, 1, &mut pa);
                pack_b(b.as_ptr(), k, n, n as isize, 1, &mut pb);
            }
            let mut rows = vec![f32::NAN; m * n];
            let ld = m + 3;
            let mut cols = vec![-5.0f32; ld * n];
            multiply(kernel, &pa, &pb, [m, n, k], (&mut rows, n as isize, 1));
            multiply(kernel, &pa, &pb, [m, n, k], (&mut cols, 1, ld as isize));
            for j in 0..n {
                for i in 0..ld {
                    let got = cols[j * ld + i];
                    if i < m {
                        assert_eq!(
                            got.to_bits(),
                            rows[i * n + j].to_bits(),
                            "{kernel:?} ({i},{j})"
                        );
                    } else {
                        assert_eq!(got, -5.0, "{kernel:?}: gap ({i},{j}) written");
                    }
                }
            }
        }
    }

    /// Rows gathered in runs of 32 pack as `pack_a` packs the same matrix (rows given as
    /// `None` runs as zeros).
    #[test]
    fn gathered_runs_pack_as_the_matrix_they_gather() {
        let (m, k) = (45, 96);
        let a: Vec<bf16> = (0..m * k)
            .map(|i| bf16::from_f32(i as f32 * 0.5 - 7.0))
            .collect();
        // Rows 3 and 40 are padding: zeros in the matrix, None from the gatherer.
        let mut zeroed = a.clone();
        for row in [3, 40] {
            zeroed[row * k..(row + 1) * k].fill(bf16::ZERO);
        }
        let mut want = vec![bf16::NAN; packed_a_len(m, k)];
        let mut got = vec![bf16::NAN; packed_a_len(m, k)];
        // SAFETY: a is m×k row-major; every run is 32 values of a row (k is a multiple of 32).
        unsafe {
            pack_a(zeroed.as_ptr(), m, k, k as isize, 1, &mut want);
            pack_a_runs(m, k, &mut got, |row, runs| {
                for (s, run) in runs.iter_mut().enumerate() {
                    *run = (row != 3 && row != 40).then(|| a[row * k + 32 * s..].as_ptr());
                }
            });
        }
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    /// Every finite f16 value is the sum of its two bf16 parts, exactly.
    #[test]
    fn every_finite_f16_is_its_high_part_plus_its_low_part() {
        for bits in 0..=u16::MAX {
            let x = f16::from_bits(bits);
            if !x.is_finite() {
                continue;
            }
            let (hi, lo) = split_f16(x);
            assert_eq!(
                hi.to_f32() + lo.to_f32(),
                x.to_f32(),
                "{x} ({bits:#06x}): {hi} + {lo}"
            );
            // The low part was not rounded on its way to bf16.
            assert_eq!(lo.to_f32(), x.to_f32() - hi.to_f32(), "{x} ({bits:#06x})");
        }
    }

    /// Runs of 32 (the vector path where the processor has AVX-512) and shorter runs give each
    /// finite value's parts, zeros past the run, and report the non-finite values.
    #[test]
    fn split_runs_give_each_values_parts_and_report_non_finite_ones() {
        let all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        for len in [BLOCK, 7] {
            for run in all.chunks(len) {
                let (mut high, mut low) = ([bf16::NAN; BLOCK], [bf16::NAN; BLOCK]);
                let bad = split_run(run, &mut high, &mut low);
                assert_eq!(bad, run.iter().any(|x| !x.is_finite()), "{run:?}");
                for (i, &x) in run.iter().enumerate().filter(|(_, x)| x.is_finite()) {
                    let (h, l) = split_f16(x);
                    assert_eq!(
                        (high[i].to_bits(), low[i].to_bits()),
                        (h.to_bits(), l.to_bits()),
                        "{x}"
                    );
                }
                for i in run.len()..BLOCK {
                    assert_eq!((high[i], low[i]), (bf16::ZERO, bf16::ZERO));
                }
            }
        }
    }

    fn f16_operands(m: usize, n: usize, k: usize, seed: &mut u64) -> (Vec<f16>, Vec<f16>) {
        let mut rnd = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(7);
            // Values from about 6e-5 to 2e3, both signs, with every f16 mantissa bit in use.
            let u = (*seed >> 40) as f32 / (1u64 << 24) as f32;
            let scale = [1e-4f32, 1.0, 1.0, 1000.0][(*seed >> 20) as usize % 4];
            f16::from_f32((u * 2.0 - 1.0) * scale)
        };
        let a = (0..m * k).map(|_| rnd()).collect();
        let b = (0..k * n).map(|_| rnd()).collect();
        (a, b)
    }

    /// Random row-major f16 operands (`m`×`k`, `k`×`n`) and their packed bf16 parts.
    fn split_operands(
        m: usize,
        n: usize,
        k: usize,
        seed: &mut u64,
    ) -> (Vec<f16>, Vec<f16>, Vec<bf16>, Vec<bf16>) {
        let (a, b) = f16_operands(m, n, k, seed);
        let kk = f16_split_k(k);
        let mut pa = vec![bf16::NAN; packed_a_len(m, kk)];
        let mut pb = vec![bf16::NAN; packed_b_len(kk, n)];
        // SAFETY: a is m×k and b is k×n, both row-major.
        let bad = unsafe {
            pack_a_f16_split(a.as_ptr(), m, k, k as isize, 1, &mut pa)
                | pack_b_f16_split(b.as_ptr(), k, n, n as isize, 1, &mut pb)
        };
        assert!(!bad, "every value is finite");
        (a, b, pa, pb)
    }

    /// The product of the f16 values as f64 (exact but for the f64 sum's rounding).
    fn f16_product(a: &[f16], b: &[f16], k: usize, i: usize, j: usize, n: usize) -> f64 {
        (0..k)
            .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
            .sum()
    }

    /// The sum of the products' magnitudes (what a sum's rounding error scales with).
    fn f16_product_scale(a: &[f16], b: &[f16], k: usize, i: usize, j: usize, n: usize) -> f64 {
        (0..k)
            .map(|p| (a[i * k + p].to_f64() * b[p * n + j].to_f64()).abs())
            .sum()
    }

    #[test]
    fn split_f16_operands_multiply_to_the_product_of_the_f16_values() {
        let mut seed = 5u64;
        for &(m, n, k) in &[(1, 1, 1), (33, 47, 70), (40, 65, 32), (3, 2, 100)] {
            let (a, b, pa, pb) = split_operands(m, n, k, &mut seed);
            let kk = f16_split_k(k);
            // What the tiles compute, read back from the packed layouts (see the module docs).
            let steps = kk / BLOCK;
            let at = |i: usize, p: usize| {
                pa[((i / BLOCK) * steps + p / BLOCK) * STEP + (i % BLOCK) * BLOCK + p % BLOCK]
            };
            let bt = |p: usize, j: usize| {
                let pair = (p % BLOCK) / 2;
                pb[((j / BLOCK) * steps + p / BLOCK) * STEP
                    + pair * 2 * BLOCK
                    + (j % BLOCK) * 2
                    + p % 2]
            };
            for i in 0..m {
                for j in 0..n {
                    let got: f64 = (0..kk).map(|p| at(i, p).to_f64() * bt(p, j).to_f64()).sum();
                    let want = f16_product(&a, &b, k, i, j, n);
                    // Both are f64 sums of exact products, in other orders.
                    let scale = f16_product_scale(&a, &b, k, i, j, n);
                    assert!(
                        (got - want).abs() <= 1e-13 * scale,
                        "{m}x{n}x{k} ({i},{j}): {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn split_f16_tiles_match_the_f64_product_of_the_f16_values() {
        if !available() {
            eprintln!("skipped: this processor (or OS) offers no AMX-BF16");
            return;
        }
        let mut seed = 9u64;
        for &(m, n, k) in &[(1, 1, 1), (33, 47, 70), (64, 64, 64), (5, 100, 200)] {
            let (a, b, pa, pb) = split_operands(m, n, k, &mut seed);
            let kk = f16_split_k(k);
            let mut c = vec![f32::NAN; m * n];
            // SAFETY: packed for kk; c is m×n row-major; AMX is available.
            unsafe {
                gemm(
                    Kernel::Tiles,
                    Left::Packed(pa.as_ptr()),
                    pb.as_ptr(),
                    kk,
                    0,
                    m,
                    0,
                    n,
                    (c.as_mut_ptr(), n as isize, 1),
                )
            };
            for i in 0..m {
                for j in 0..n {
                    let want = f16_product(&a, &b, k, i, j, n);
                    // What an f32 sum of the k exact products may be off by.
                    let scale = f16_product_scale(&a, &b, k, i, j, n);
                    let got = c[i * n + j] as f64;
                    assert!(
                        (got - want).abs() <= 4.0 * (k as f64) * f32::EPSILON as f64 * scale,
                        "{m}x{n}x{k} ({i},{j}): {got} vs {want}"
                    );
                }
            }
        }
    }
}
