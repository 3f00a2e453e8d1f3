//! Runs of tensor elements of any data type read into, and written from, f32 buffers, plus the
//! raw-pointer wrapper the engines share across the threads of a parallel region.

use half::{bf16, f16};
use kiln_core::DataType;

/// A tensor's base address, shareable across worker threads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SharedPtr(pub *mut u8);

// SAFETY: the engines only dereference a SharedPtr inside `Prepared::execute`, whose contract
// keeps the memory valid for the call; workers write disjoint elements, and reads of inputs
// never race with writes because a graph never writes a tensor it reads.
unsafe impl Send for SharedPtr {}
// SAFETY: as above.
unsafe impl Sync for SharedPtr {}

impl SharedPtr {
    /// The address (a method, so that closures capture the whole wrapper).
    #[inline(always)]
    pub fn get(self) -> *mut u8 {
        self.0
    }
}

/// `v` rounded to the nearest integer, ties to even (as `f32::round_ties_even`, which
/// compiles to a library call at the x86-64 baseline): below 2^23 in magnitude, adding 2^23
/// leaves no fraction bits, so the addition rounds (to nearest even); larger values are
/// integers already, and NaN stays NaN.
#[inline(always)]
fn round_even(v: f32) -> f32 {
    const TWO_23: f32 = 8_388_608.0;
    if v.abs() < TWO_23 {
        ((v.abs() + TWO_23) - TWO_23).copysign(v)
    } else {
        v
    }
}

/// Runs of at most this many f32 values are copied inline, not through `memcpy`.
const SHORT_RUN: usize = 256;

/// Copies `n` consecutive f32 values from `src` to `dst` (any alignment). A short run of at
/// least 16 moves as groups of 16 inline, the last group ending at the run's end (overlapping
/// the one before, which writes the same values again): a channels-last tile's rows of a few
/// dozen values, one `memcpy` call each, were 8% of a convolution's profile.
///
/// # Safety
/// `src` addresses `n` readable values, `dst` `n` writable ones that nothing else accesses,
/// and the two do not overlap.
#[inline(always)]
unsafe fn copy_f32(src: *const f32, dst: *mut f32, n: usize) {
    if (16..=SHORT_RUN).contains(&n) {
        let mut at = 0;
        while at < n {
            let first = at.min(n - 16);
            // SAFETY: values first..first + 16 lie inside both runs.
            unsafe {
                let v = src.add(first).cast::<[f32; 16]>().read_unaligned();
                dst.add(first).cast::<[f32; 16]>().write_unaligned(v);
            }
            at = first + 16;
        }
    } else {
        // SAFETY: the caller's contract; as bytes, since the values may be unaligned.
        unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), n * 4) };
    }
}

/// 16-bit elements converted per batch: a strided run is gathered into a buffer of this many,
/// then converted at once.
const BATCH: usize = 64;

/// Widens `out.len()` consecutive 16-bit floats at `src` (bf16 when `brain`, else f16) to f32,
/// eight at a time where the processor has F16C (f16) or AVX2 (bf16). An f16 gets `half`'s bits
/// (which uses the same instruction); a bf16's bits become the top half of the f32's, NaNs as
/// they are.
///
/// # Safety
/// `src` addresses `out.len()` readable `u16`s (any alignment).
#[inline]
unsafe fn widen16(brain: bool, src: *const u16, out: &mut [f32]) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if out.len() >= 8 {
        // SAFETY: the caller's contract; each branch runs where its features were detected.
        done = unsafe {
            if brain && std::arch::is_x86_feature_detected!("avx2") {
                widen_bf16_avx2(src, out)
            } else if !brain && std::arch::is_x86_feature_detected!("f16c") {
                widen_f16_f16c(src, out)
            } else {
                0
            }
        };
    }
    for (i, o) in out.iter_mut().enumerate().skip(done) {
        // SAFETY: i < out.len(), inside the caller's run.
        let bits = unsafe { src.add(i).read_unaligned() };
        *o = if brain {
            f32::from_bits((bits as u32) << 16)
        } else {
            f16::from_bits(bits).to_f32()
        };
    }
}

/// Rounds `src` to 16-bit floats (bf16 when `brain`, else f16; to nearest even, NaN kept a
/// quiet NaN) stored consecutively at `dst`: the same bits as `half`'s conversions.
///
/// # Safety
/// `dst` addresses `src.len()` writable `u16`s (any alignment) that nothing else accesses.
#[inline]
unsafe fn narrow16(brain: bool, src: &[f32], dst: *mut u16) {
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if src.len() >= 8 {
        // SAFETY: the caller's contract; each branch runs where its features were detected.
        done = unsafe {
            if brain && std::arch::is_x86_feature_detected!("avx2") {
                narrow_bf16_avx2(src, dst)
            } else if !brain && std::arch::is_x86_feature_detected!("f16c") {
                narrow_f16_f16c(src, dst)
            } else {
                0
            }
        };
    }
    for (i, &v) in src.iter().enumerate().skip(done) {
        let bits = if brain {
            bf16::from_f32(v).to_bits()
        } else {
            f16::from_f32(v).to_bits()
        };
        // SAFETY: i < src.len(), inside the caller's run.
        unsafe { dst.add(i).write_unaligned(bits) };
    }
}

/// [`widen16`] of f16, whole groups of eight; returns how many it converted.
///
/// # Safety
/// As for [`widen16`]; the processor has F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn widen_f16_f16c(src: *const u16, out: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let whole = out.len() / 8 * 8;
    for i in (0..whole).step_by(8) {
        // SAFETY: values i..i + 8 lie inside the run and the output.
        unsafe {
            let raw = _mm_loadu_si128(src.add(i).cast());
            _mm256_storeu_ps(out.as_mut_ptr().add(i), _mm256_cvtph_ps(raw));
        }
    }
    whole
}

/// [`widen16`] of bf16 (its bits become the top half of an f32's), whole groups of eight;
/// returns how many it converted.
///
/// # Safety
/// As for [`widen16`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn widen_bf16_avx2(src: *const u16, out: &mut [f32]) -> usize {
    use std::arch::x86_64::*;
    let whole = out.len() / 8 * 8;
    for i in (0..whole).step_by(8) {
        // SAFETY: values i..i + 8 lie inside the run and the output.
        unsafe {
            let raw = _mm256_cvtepu16_epi32(_mm_loadu_si128(src.add(i).cast()));
            let bits = _mm256_slli_epi32::<16>(raw);
            _mm256_storeu_ps(out.as_mut_ptr().add(i), _mm256_castsi256_ps(bits));
        }
    }
    whole
}

/// [`narrow16`] to f16 (`vcvtps2ph`, to nearest even), whole groups of eight; returns how many
/// it converted.
///
/// # Safety
/// As for [`narrow16`]; the processor has F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,f16c")]
unsafe fn narrow_f16_f16c(src: &[f32], dst: *mut u16) -> usize {
    use std::arch::x86_64::*;
    let whole = src.len() / 8 * 8;
    for i in (0..whole).step_by(8) {
        // SAFETY: values i..i + 8 lie inside the input and the run.
        unsafe {
            let v = _mm256_loadu_ps(src.as_ptr().add(i));
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
            _mm_storeu_si128(dst.add(i).cast(), h);
        }
    }
    whole
}

/// [`narrow16`] to bf16, whole groups of eight; returns how many it converted. A number rounds
/// to nearest even on its top 16 bits (`(bits + 0x7fff + lowest kept bit) >> 16`, which also
/// keeps infinities and carries the largest finite values to infinity); a NaN keeps its top 16
/// bits with the quiet bit set.
///
/// # Safety
/// As for [`narrow16`]; the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn narrow_bf16_avx2(src: &[f32], dst: *mut u16) -> usize {
    use std::arch::x86_64::*;
    let whole = src.len() / 8 * 8;
    for i in (0..whole).step_by(8) {
        // SAFETY: values i..i + 8 lie inside the input and the run.
        unsafe {
            let v = _mm256_loadu_ps(src.as_ptr().add(i));
            let bits = _mm256_castps_si256(v);
            let top = _mm256_srli_epi32::<16>(bits);
            let lowest = _mm256_and_si256(top, _mm256_set1_epi32(1));
            let bias = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lowest);
            let rounded = _mm256_srli_epi32::<16>(_mm256_add_epi32(bits, bias));
            let quiet = _mm256_or_si256(top, _mm256_set1_epi32(0x40));
            let nan = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
            let out = _mm256_blendv_epi8(rounded, quiet, nan);
            // Every lane is below 2^16: packing without saturation, then the two 128-bit
            // halves' results put in order.
            let packed = _mm256_packus_epi32(out, out);
            let ordered = _mm256_permute4x64_epi64::<0b1000>(packed);
            _mm_storeu_si128(dst.add(i).cast(), _mm256_castsi256_si128(ordered));
        }
    }
    whole
}

/// Reads `out.len()` elements of type `dt`: element `i` at element offset `off + i * stride` from
/// `base` (`stride` may be 0 or negative).
///
/// # Safety
/// Every addressed element lies inside one allocation that `base` points into.
#[inline]
pub(crate) unsafe fn load(
    base: *const u8,
    dt: DataType,
    off: isize,
    stride: isize,
    out: &mut [f32],
) {
    let n = out.len();
    if n == 0 {
        return;
    }
    // SAFETY (all arms): the caller guarantees every offset addresses a valid element; reads
    // are unaligned so any byte address works.
    unsafe {
        match dt {
            DataType::F32 => {
                let p = (base as *const f32).offset(off);
                if stride == 1 {
                    copy_f32(p, out.as_mut_ptr(), n);
                } else if stride == 0 {
                    out.fill(p.read_unaligned());
                } else if stride == 2 && cfg!(target_arch = "x86_64") {
                    every_other_f32(p, out);
                } else {
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = p.offset(i as isize * stride).read_unaligned();
                    }
                }
            }
            DataType::F16 | DataType::Bf16 => {
                let p = (base as *const u16).offset(off);
                let mut raw = [0u16; BATCH];
                for (b, chunk) in out.chunks_mut(BATCH).enumerate() {
                    let first = (b * BATCH) as isize;
                    let src = if stride == 1 {
                        p.offset(first)
                    } else {
                        for (i, r) in raw[..chunk.len()].iter_mut().enumerate() {
                            *r = p.offset((first + i as isize) * stride).read_unaligned();
                        }
                        raw.as_ptr()
                    };
                    widen16(dt == DataType::Bf16, src, chunk);
                }
            }
            DataType::F64 => {
                let p = (base as *const f64).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = p.offset(i as isize * stride).read_unaligned() as f32;
                }
            }
            DataType::I32 => {
                let p = (base as *const i32).offset(off);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = p.offset(i as isize * stride).read_unaligned() as f32;
                }
            }
            DataType::Boolean | DataType::I8 | DataType::Fp8E4m3 | DataType::Fp8E5m2 => {
                let p = base.offset(off);
                let decode = byte_decoder(dt);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = decode[p.offset(i as isize * stride).read() as usize];
                }
            }
        }
    }
}

/// The value of every byte of a one-byte type, so that a load is one table lookup.
fn byte_decoder(dt: DataType) -> &'static [f32; 256] {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<[f32; 256]>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let slot = match dt {
        DataType::Boolean => 0,
        DataType::I8 => 1,
        DataType::Fp8E4m3 => 2,
        _ => 3,
    };
    TABLES[slot]
        .get_or_init(|| std::array::from_fn(|b| dt.read_f64(&[b as u8]).unwrap_or(f64::NAN) as f32))
}

/// Writes `src` as elements of type `dt` (rounded to nearest): element `i` at element offset
/// `off + i * stride` from `base`.
///
/// # Safety
/// Every addressed element lies inside one allocation that `base` points into, and no other
/// thread accesses those elements during the call.
#[inline]
pub(crate) unsafe fn store(base: *mut u8, dt: DataType, off: isize, stride: isize, src: &[f32]) {
    let n = src.len();
    if n == 0 {
        return;
    }
    // SAFETY (all arms): as documented above; writes are unaligned so any address works.
    unsafe {
        match dt {
            DataType::F32 => {
                let p = (base as *mut f32).offset(off);
                if stride == 1 {
                    copy_f32(src.as_ptr(), p, n);
                } else {
                    for (i, &v) in src.iter().enumerate() {
                        p.offset(i as isize * stride).write_unaligned(v);
                    }
                }
            }
            DataType::F16 | DataType::Bf16 => {
                let p = (base as *mut u16).offset(off);
                let mut raw = [0u16; BATCH];
                for (b, chunk) in src.chunks(BATCH).enumerate() {
                    let first = (b * BATCH) as isize;
                    if stride == 1 {
                        narrow16(dt == DataType::Bf16, chunk, p.offset(first));
                    } else {
                        narrow16(dt == DataType::Bf16, chunk, raw.as_mut_ptr());
                        for (i, &r) in raw[..chunk.len()].iter().enumerate() {
                            p.offset((first + i as isize) * stride).write_unaligned(r);
                        }
                    }
                }
            }
            DataType::F64 => {
                let p = (base as *mut f64).offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride).write_unaligned(v as f64);
                }
            }
            // Rounded to nearest even and saturated, NaN as 0: what `DataType::write_f64` does
            // (an f32 widens to f64 exactly and rounds to the same integer), and what Rust's
            // float-to-integer casts do after the rounding.
            DataType::I32 => {
                let p = (base as *mut i32).offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride)
                        .write_unaligned(round_even(v) as i32);
                }
            }
            DataType::I8 => {
                let p = base.offset(off);
                for (i, &v) in src.iter().enumerate() {
                    p.offset(i as isize * stride)
                        .write(round_even(v) as i8 as u8);
                }
            }
            DataType::Boolean | DataType::Fp8E4m3 | DataType::Fp8E5m2 => {
                let p = base.offset(off);
                let mut byte = [0u8; 1];
                for (i, &v) in src.iter().enumerate() {
                    let _ = dt.write_f64(v as f64, &mut byte);
                    p.offset(i as isize * stride).write(byte[0]);
                }
            }
        }
    }
}

/// Reads one element of type `dt` at element offset `off` from `base`.
///
/// # Safety
/// The element lies inside the allocation `base` points into.
#[inline]
pub(crate) unsafe fn load_one(base: *const u8, dt: DataType, off: isize) -> f32 {
    let mut v = [0f32];
    // SAFETY: forwarded contract, one element.
    unsafe { load(base, dt, off, 0, &mut v) };
    v[0]
}

/// `out[i] = p[2i]`: four values at a time from two unaligned SSE loads (the x86-64 baseline)
/// and one shuffle, as long as those loads stay within `p[..2·out.len() - 1]`; the rest one at
/// a time. (A stride of 2 is a stride-2 convolution's im2col and its pooling staging.)
///
/// # Safety
/// `p[2i]` is readable for every `i < out.len()`.
#[inline]
unsafe fn every_other_f32(p: *const f32, out: &mut [f32]) {
    let n = out.len();
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_shuffle_ps, _mm_storeu_ps};
        // Outputs i..i + 4 read p[2i..2i + 8]; the last index read, 2i + 7, is at most
        // 2(n - 1) - 1 while i + 5 <= n.
        while i + 5 <= n {
            // SAFETY: p[2i..2i + 8] lie within p[..2n - 2] (above); out[i..i + 4] exist.
            unsafe {
                let a = _mm_loadu_ps(p.add(2 * i));
                let b = _mm_loadu_ps(p.add(2 * i + 4));
                _mm_storeu_ps(
                    out.as_mut_ptr().add(i),
                    _mm_shuffle_ps::<0b10_00_10_00>(a, b),
                );
            }
            i += 4;
        }
    }
    for (j, o) in out.iter_mut().enumerate().skip(i) {
        // SAFETY: p[2j], j < n (the caller's contract).
        *o = unsafe { p.add(2 * j).read_unaligned() };
    }
}

/// Reads elements at arbitrary element offsets `base_off + offsets[i]`.
///
/// # Safety
/// Every addressed element lies inside the allocation `base` points into.
#[inline]
pub(crate) unsafe fn gather(
    base: *const u8,
    dt: DataType,
    base_off: isize,
    offsets: &[isize],
    out: &mut [f32],
) {
    for (o, &off) in out.iter_mut().zip(offsets) {
        // SAFETY: forwarded contract.
        *o = unsafe { load_one(base, dt, base_off + off) };
    }
}

/// Writes elements at arbitrary element offsets `base_off + offsets[i]`.
///
/// # Safety
/// As for [`store`].
#[inline]
pub(crate) unsafe fn scatter(
    base: *mut u8,
    dt: DataType,
    base_off: isize,
    offsets: &[isize],
    src: &[f32],
) {
    for (&v, &off) in src.iter().zip(offsets) {
        // SAFETY: forwarded contract.
        unsafe { store(base, dt, base_off + off, 0, std::slice::from_ref(&v)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stride_of_two_reads_every_other_value_and_nothing_past_the_last() {
        for n in 0..23usize {
            // Exactly the 2n - 1 values the load may read (a Vec of that length, so that a read
            // past it would be one past the allocation's end).
            let src: Vec<f32> = (0..(2 * n).saturating_sub(1))
                .map(|v| v as f32 * 0.5)
                .collect();
            let mut out = vec![f32::NAN; n];
            // SAFETY: elements 0, 2, ..., 2(n - 1) of src exist.
            unsafe { load(src.as_ptr().cast(), DataType::F32, 0, 2, &mut out) };
            for (i, &v) in out.iter().enumerate() {
                assert_eq!(v, src[2 * i], "n {n}, i {i}");
            }
        }
    }

    #[test]
    fn every_type_round_trips_with_strides() {
        for dt in DataType::ALL {
            let mut buf = vec![0u8; 64 * 8];
            let src = [1.5f32, -2.0, 0.25, 3.0];
            // SAFETY: offsets 1, 4, 7, 10 lie inside 64 elements of any type.
            unsafe {
                store(buf.as_mut_ptr(), dt, 1, 3, &src);
                let want = src.map(|v| dt.round_trip(v as f64) as f32);
                let mut out = [0f32; 4];
                load(buf.as_ptr(), dt, 1, 3, &mut out);
                assert_eq!(out, want, "{dt}");
                assert_eq!(load_one(buf.as_ptr(), dt, 4), want[1]);
                let mut g = [0f32; 2];
                gather(buf.as_ptr(), dt, 1, &[9, 0], &mut g);
                assert_eq!(g, [want[3], want[0]]);
            }
        }
    }

    /// The batched conversions (vector groups of eight and scalar tails, unit and other strides)
    /// give `half`'s bits: every f16 and bf16 widened (a bf16 NaN's bits kept as they are), and f32 values of every kind (NaNs,
    /// infinities, subnormals, ties, the largest finite values) rounded.
    #[test]
    fn sixteen_bit_runs_convert_as_half_does() {
        for dt in [DataType::F16, DataType::Bf16] {
            let widen = |b: u16| match dt {
                DataType::F16 => f16::from_bits(b).to_f32(),
                // A bf16 is the top half of an f32, NaNs included (`half` would quiet them).
                _ => f32::from_bits((b as u32) << 16),
            };
            let all: Vec<u16> = (0..=u16::MAX).collect();
            let mut out = vec![0f32; all.len()];
            // SAFETY: 65536 elements are read with unit stride, 32767 with stride 2.
            unsafe { load(all.as_ptr().cast(), dt, 0, 1, &mut out) };
            for (&b, &v) in all.iter().zip(&out) {
                assert_eq!(v.to_bits(), widen(b).to_bits(), "{dt} {b:#06x}");
            }
            let mut odd = vec![0f32; 32767];
            // SAFETY: as above.
            unsafe { load(all.as_ptr().cast(), dt, 1, 2, &mut odd) };
            for (i, &v) in odd.iter().enumerate() {
                assert_eq!(v.to_bits(), widen(all[1 + 2 * i]).to_bits(), "{dt}");
            }
        }
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut values: Vec<f32> = (0..200_003)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                f32::from_bits(rng as u32)
            })
            .collect();
        values.extend([
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1e-45,
            -0.0,
            65504.0,
            65520.0,
            f32::from_bits(0x3f80_8000),
            f32::from_bits(0x3f81_8000),
            f32::from_bits(0x7f7f_ffff),
            f32::from_bits(0x7f80_0001),
            f32::from_bits(0xffc0_1234),
        ]);
        for dt in [DataType::F16, DataType::Bf16] {
            let narrow = |v: f32| match dt {
                DataType::F16 => f16::from_f32(v).to_bits(),
                _ => bf16::from_f32(v).to_bits(),
            };
            for stride in [1isize, 3] {
                let mut raw = vec![0u16; values.len() * stride as usize];
                // SAFETY: every offset i * stride lies inside `raw`.
                unsafe { store(raw.as_mut_ptr().cast(), dt, 0, stride, &values) };
                for (i, &v) in values.iter().enumerate() {
                    let got = raw[i * stride as usize];
                    assert_eq!(got, narrow(v), "{dt} {:#010x} stride {stride}", v.to_bits());
                }
            }
        }
    }

    /// Integer stores round to nearest even, saturate and store NaN as 0, as
    /// `DataType::write_f64` does.
    #[test]
    fn integer_stores_round_and_saturate_as_write_f64_does() {
        let values = [
            0.5f32,
            1.5,
            2.5,
            -2.5,
            -0.5,
            127.5,
            128.0,
            -129.0,
            3e9,
            -3e9,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            7.0,
            -1e-30,
            2147483520.0,
            8388607.5,
            -8388606.5,
            4194304.5,
            -3.5,
        ];
        for dt in [DataType::I8, DataType::I32] {
            let mut buf = vec![0u8; values.len() * 4];
            // SAFETY: 20 elements of at most 4 bytes fit in the buffer.
            unsafe { store(buf.as_mut_ptr(), dt, 0, 1, &values) };
            for (i, &v) in values.iter().enumerate() {
                let size = dt.size();
                let mut want = [0u8; 4];
                dt.write_f64(v as f64, &mut want).unwrap();
                assert_eq!(buf[i * size..][..size], want[..size], "{dt} {v}");
            }
        }
    }
}
