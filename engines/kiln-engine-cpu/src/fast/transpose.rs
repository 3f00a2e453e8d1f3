//! Transposes in vector registers: 16 × 16 f32 in AVX-512 registers and 8 × 8 f32 in AVX ones
//! (the channels-last Winograd path's staging and stores, the AMX GEMM's column-major output
//! blocks), and 16 × 16 of 16-bit values in AVX2 registers (the channels-last copy of a bf16
//! input for the AMX convolution).

use std::arch::x86_64::*;

/// The transpose of the 16 × 16 matrix whose row `i` is `r[i]`: lane `j` of result `i` is lane
/// `i` of `r[j]`. Pairs of rows are interleaved, then pairs of pairs (after which vector
/// `4q + m` holds, in its 128-bit lane `l`, column `4l + m` of rows `4q..4q + 4`), then the
/// 128-bit lanes are gathered across vectors.
#[target_feature(enable = "avx512f")]
#[inline]
pub fn transpose16(r: [__m512; 16]) -> [__m512; 16] {
    let t: [__m512; 16] = std::array::from_fn(|i| {
        let (a, b) = (r[i & !1], r[i | 1]);
        if i % 2 == 0 {
            _mm512_unpacklo_ps(a, b)
        } else {
            _mm512_unpackhi_ps(a, b)
        }
    });
    let u: [__m512; 16] = std::array::from_fn(|i| {
        let (q, m) = (i / 4, i % 4);
        let (a, b) = (
            _mm512_castps_pd(t[4 * q + m / 2]),
            _mm512_castps_pd(t[4 * q + 2 + m / 2]),
        );
        _mm512_castpd_ps(if m % 2 == 0 {
            _mm512_unpacklo_pd(a, b)
        } else {
            _mm512_unpackhi_pd(a, b)
        })
    });
    let mut out = [_mm512_setzero_ps(); 16];
    for m in 0..4 {
        let p0 = _mm512_shuffle_f32x4::<0x44>(u[m], u[4 + m]);
        let p1 = _mm512_shuffle_f32x4::<0xee>(u[m], u[4 + m]);
        let q0 = _mm512_shuffle_f32x4::<0x44>(u[8 + m], u[12 + m]);
        let q1 = _mm512_shuffle_f32x4::<0xee>(u[8 + m], u[12 + m]);
        out[m] = _mm512_shuffle_f32x4::<0x88>(p0, q0);
        out[4 + m] = _mm512_shuffle_f32x4::<0xdd>(p0, q0);
        out[8 + m] = _mm512_shuffle_f32x4::<0x88>(p1, q1);
        out[12 + m] = _mm512_shuffle_f32x4::<0xdd>(p1, q1);
    }
    out
}

/// The transpose of the 8 × 8 matrix whose row `i` is `r[i]` (lane `j` of result `i` is lane
/// `i` of `r[j]`): pairs of rows interleaved, then pairs of pairs (after which vector `4q + m`
/// holds, in its 128-bit lane `l`, column `4l + m` of rows `4q..4q + 4`), then the halves
/// joined.
#[target_feature(enable = "avx")]
#[inline]
pub fn transpose8(r: [__m256; 8]) -> [__m256; 8] {
    let t: [__m256; 8] = std::array::from_fn(|i| {
        let (a, b) = (r[i & !1], r[i | 1]);
        if i % 2 == 0 {
            _mm256_unpacklo_ps(a, b)
        } else {
            _mm256_unpackhi_ps(a, b)
        }
    });
    let u: [__m256; 8] = std::array::from_fn(|i| {
        let (q, m) = (i / 4, i % 4);
        let (a, b) = (t[4 * q + m / 2], t[4 * q + 2 + m / 2]);
        if m % 2 == 0 {
            _mm256_shuffle_ps::<0x44>(a, b)
        } else {
            _mm256_shuffle_ps::<0xee>(a, b)
        }
    });
    std::array::from_fn(|c| {
        let m = c % 4;
        if c < 4 {
            _mm256_permute2f128_ps::<0x20>(u[m], u[4 + m])
        } else {
            _mm256_permute2f128_ps::<0x31>(u[m], u[4 + m])
        }
    })
}

/// Transposes the 16 × 16 block at `src` (row stride `src_ld`) into `dst` (row stride
/// `dst_ld`): `dst[j·dst_ld + i] = src[i·src_ld + j]`.
///
/// # Safety
/// Both blocks lie inside their buffers; the processor has AVX-512 F.
#[target_feature(enable = "avx512f")]
#[inline]
pub unsafe fn transpose16_block(src: *const f32, src_ld: isize, dst: *mut f32, dst_ld: isize) {
    // SAFETY: row i of the source block (the caller's contract).
    let rows = std::array::from_fn(|i| unsafe { _mm512_loadu_ps(src.offset(i as isize * src_ld)) });
    for (j, v) in transpose16(rows).into_iter().enumerate() {
        // SAFETY: row j of the destination block (the caller's contract).
        unsafe { _mm512_storeu_ps(dst.offset(j as isize * dst_ld), v) };
    }
}

/// Transposes 16 rows of 16 two-byte values (row `r` at `src + r·src_rs`) into 16 rows of 16
/// at `dst` (row stride `dst_rs`): `dst[j][r] = src[r][j]`, in four rounds of interleaves.
///
/// # Safety
/// Both blocks are inside their buffers; the processor has AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn transpose16_u16_block(src: *const u16, src_rs: isize, dst: *mut u16, dst_rs: usize) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract: 16 rows of 32 bytes on each side.
    unsafe {
        let mut v: [__m256i; 16] =
            std::array::from_fn(|r| _mm256_loadu_si256(src.offset(r as isize * src_rs).cast()));
        // Rounds 1-3 interleave 16-, 32- and 64-bit pieces of row pairs 1, 2 and 4 apart
        // (within each 128-bit half); round 4 joins the halves.
        let mut t = [_mm256_setzero_si256(); 16];
        for i in 0..8 {
            t[2 * i] = _mm256_unpacklo_epi16(v[2 * i], v[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_epi16(v[2 * i], v[2 * i + 1]);
        }
        for i in 0..4 {
            for h in 0..2 {
                v[4 * i + 2 * h] = _mm256_unpacklo_epi32(t[4 * i + h], t[4 * i + 2 + h]);
                v[4 * i + 2 * h + 1] = _mm256_unpackhi_epi32(t[4 * i + h], t[4 * i + 2 + h]);
            }
        }
        for i in 0..2 {
            for q in 0..4 {
                t[8 * i + 2 * q] = _mm256_unpacklo_epi64(v[8 * i + q], v[8 * i + 4 + q]);
                t[8 * i + 2 * q + 1] = _mm256_unpackhi_epi64(v[8 * i + q], v[8 * i + 4 + q]);
            }
        }
        for j in 0..8 {
            let lo = _mm256_permute2x128_si256::<0x20>(t[j], t[8 + j]);
            let hi = _mm256_permute2x128_si256::<0x31>(t[j], t[8 + j]);
            _mm256_storeu_si256(dst.add(j * dst_rs).cast(), lo);
            _mm256_storeu_si256(dst.add((j + 8) * dst_rs).cast(), hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_transpose_moves_every_element_to_its_mirror() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("skipped: this processor has no AVX-512 F");
            return;
        }
        let src: Vec<f32> = (0..20 * 16).map(|i| i as f32).collect();
        let mut dst = vec![-1.0f32; 16 * 18];
        // SAFETY: 16 rows of 16 at stride 20 in src and 18 in dst; AVX-512 F checked.
        unsafe { transpose16_block(src.as_ptr(), 20, dst.as_mut_ptr(), 18) };
        for j in 0..16 {
            for i in 0..18 {
                let want = if i < 16 { src[i * 20 + j] } else { -1.0 };
                assert_eq!(dst[j * 18 + i], want, "({j}, {i})");
            }
        }
    }

    #[test]
    fn the_8_by_8_transpose_moves_every_element_to_its_mirror() {
        if !std::arch::is_x86_feature_detected!("avx") {
            eprintln!("skipped: this processor has no AVX");
            return;
        }
        let src: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let mut dst = [0f32; 64];
        // SAFETY: 8 rows of 8 floats on each side; AVX checked.
        unsafe {
            let rows = std::array::from_fn(|i| _mm256_loadu_ps(src[8 * i..].as_ptr()));
            for (j, v) in transpose8(rows).into_iter().enumerate() {
                _mm256_storeu_ps(dst[8 * j..].as_mut_ptr(), v);
            }
        }
        for j in 0..8 {
            for i in 0..8 {
                assert_eq!(dst[8 * j + i], src[8 * i + j], "({j}, {i})");
            }
        }
    }

    #[test]
    fn the_16_bit_block_transpose_moves_every_element_to_its_mirror() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this processor has no AVX2");
            return;
        }
        let src: Vec<u16> = (0..21 * 16).map(|i| i as u16).collect();
        let mut dst = vec![u16::MAX; 16 * 17];
        // SAFETY: 16 rows of 16 at stride 21 in src and 17 in dst; AVX2 checked.
        unsafe { transpose16_u16_block(src.as_ptr(), 21, dst.as_mut_ptr(), 17) };
        for j in 0..16 {
            for i in 0..17 {
                let want = if i < 16 { src[i * 21 + j] } else { u16::MAX };
                assert_eq!(dst[j * 17 + i], want, "({j}, {i})");
            }
        }
    }
}
