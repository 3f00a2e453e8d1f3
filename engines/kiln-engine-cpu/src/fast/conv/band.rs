//! Bands of padded input rows: the rows of a channels-first 2-D input that a tile of output
//! rows reads, copied with zeros for the padding so that every tap of every position of the
//! tile is one load (the stride-1 banded path of `fprop` and the `broadcast` path).

use super::geometry::Shape;
use crate::fast::element_io::SharedPtr;
use crate::fast::isa::Isa;
use std::ops::Range;

/// Channels ahead whose input rows [`Band::copy`] fetches into cache while it copies one.
const FETCH_AHEAD: usize = 2;

/// The band of image `n`, group `g` from padded row `first`: `rows` rows of `row_len` values
/// for each of the group's channels, channel `c`'s row `h` at `(c · rows + h) · row_len`.
/// Row `h` is input row `first + h` (zeros where that is outside the input) after `pad[2]`
/// zeros, then zeros.
pub(super) struct Band<'a> {
    s: &'a Shape,
    x: SharedPtr,
    n: usize,
    g: usize,
    first: isize,
    rows: usize,
    row_len: usize,
}

impl<'a> Band<'a> {
    pub fn new(
        s: &'a Shape,
        x: SharedPtr,
        (n, g): (usize, usize),
        first: isize,
        rows: usize,
        row_len: usize,
    ) -> Self {
        Band {
            s,
            x,
            n,
            g,
            first,
            rows,
            row_len,
        }
    }

    /// The input rows of the band that lie in the input.
    fn in_input(&self) -> Range<isize> {
        let ih = self.s.input[1] as isize;
        self.first.clamp(0, ih)..(self.first + self.rows as isize).clamp(0, ih)
    }

    /// Where input row `ih` of the group's channel `c` starts.
    fn row_at(&self, c: usize, ih: isize) -> *const f32 {
        let s = self.s;
        (self.x.get() as *const f32).wrapping_offset(
            self.n as isize * s.xs.0 + (self.g * s.cg + c) as isize * s.xs.1 + ih * s.xs.2[1],
        )
    }

    /// Fetches the input rows of the group's channel `c` that the band reads into cache (the
    /// copy of one channel's few rows at a time, from a new place each, otherwise waits on
    /// memory: a sixth of a 3x3 stride-2 convolution's time went to it).
    fn fetch(&self, c: usize) {
        for ih in self.in_input() {
            let at = self.row_at(c, ih);
            for line in (0..self.s.input[2]).step_by(16) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a prefetch never faults.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        at.wrapping_add(line).cast(),
                    )
                };
                #[cfg(not(target_arch = "x86_64"))]
                let _ = at;
            }
        }
    }

    /// Writes the rows of `channels` into `band`, fetching the rows of the channel
    /// [`FETCH_AHEAD`] on while it copies each.
    ///
    /// # Safety
    /// `x` is the bound f32 input of the shape's layout (rows of consecutive values); `band`
    /// holds `cg · rows · row_len` values; the processor runs `isa`. `row_len` is a multiple
    /// of 16 and at least `pad[2] + iw` (asserted).
    pub unsafe fn copy(&self, isa: Isa, channels: Range<usize>, band: &mut [f32]) {
        let s = self.s;
        let (pw, iw, row_len) = (s.pad[2] as usize, s.input[2], self.row_len);
        assert!(row_len.is_multiple_of(16) && pw + iw <= row_len);
        let span = self.rows * row_len;
        let ahead = channels.end;
        let inside = self.in_input();
        for c in channels {
            if c + FETCH_AHEAD < ahead {
                self.fetch(c + FETCH_AHEAD);
            }
            let rows = band[c * span..(c + 1) * span].chunks_exact_mut(row_len);
            #[cfg(target_arch = "x86_64")]
            if matches!(isa, Isa::Avx2 | Isa::Avx512 | Isa::Avx512Bf16 | Isa::Amx) {
                for (h, row) in rows.enumerate() {
                    let ih = self.first + h as isize;
                    let src = inside.contains(&ih).then(|| self.row_at(c, ih));
                    // SAFETY: src is input row ih of the channel, iw f32 values (the caller's
                    // contract; any alignment); the row holds whole vectors (asserted), the
                    // input values at pw..pw + iw among them; the plan's level runs here.
                    unsafe {
                        if matches!(isa, Isa::Avx2) {
                            vector::row_avx2(src, pw, iw, row)
                        } else {
                            vector::row_avx512(src, pw, iw, row)
                        }
                    }
                }
                continue;
            }
            for (h, row) in rows.enumerate() {
                let ih = self.first + h as isize;
                row.fill(0.0);
                if inside.contains(&ih) {
                    let src = self.row_at(c, ih);
                    // SAFETY: input row ih of the channel: iw f32 values (the caller's
                    // contract), copied as bytes (any alignment) into pw..pw + iw of the row,
                    // which holds at least pw + iw values (asserted above).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            src.cast::<u8>(),
                            row[pw..pw + iw].as_mut_ptr().cast::<u8>(),
                            iw * 4,
                        )
                    };
                }
            }
        }
    }

    /// Writes the band of a channels-last input (its channels adjacent) as positions of the
    /// group's channels, `column` values apart (at least cg): band row `h`, column `c` (input
    /// column `c - pad[2]`), the group's channel `ch` at `(h · row_len + c) · column + ch`,
    /// zeros for the padding, past the row and between the columns.
    ///
    /// # Safety
    /// `x` is the bound f32 input of the shape's layout, its channel stride 1 (any alignment);
    /// `band` holds `column · rows · row_len` values; `row_len` is at least `pad[2] + iw`
    /// (asserted).
    pub unsafe fn copy_positions(&self, column: usize, band: &mut [f32]) {
        let s = self.s;
        let (pw, iw, cg, row_len) = (s.pad[2] as usize, s.input[2], s.cg, self.row_len);
        assert!(pw + iw <= row_len && s.xs.1 == 1 && column >= cg);
        let inside = self.in_input();
        let rows = band[..self.rows * row_len * column].chunks_exact_mut(row_len * column);
        for (h, row) in rows.enumerate() {
            let ih = self.first + h as isize;
            if !inside.contains(&ih) {
                row.fill(0.0);
                continue;
            }
            row[..pw * column].fill(0.0);
            row[(pw + iw) * column..].fill(0.0);
            // The group's first channel at input position (ih, 0).
            let src = self.row_at(0, ih);
            let values = &mut row[pw * column..(pw + iw) * column];
            if column == cg && s.xs.2[2] == cg as isize {
                // One group (or positions that hold only the group's channels), columns as
                // wide as the channels: the row's positions are one run.
                // SAFETY: iw · cg consecutive values of the input row, inside x (the caller's
                // contract), copied as bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.cast::<u8>(),
                        values.as_mut_ptr().cast::<u8>(),
                        iw * cg * 4,
                    )
                };
                continue;
            }
            for (ix, dst) in values.chunks_exact_mut(column).enumerate() {
                let (dst, gap) = dst.split_at_mut(cg);
                gap.fill(0.0);
                // SAFETY: the group's cg adjacent channels of input position (ih, ix), inside x
                // (the caller's contract), copied as bytes (any alignment).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.wrapping_offset(ix as isize * s.xs.2[2]).cast::<u8>(),
                        dst.as_mut_ptr().cast::<u8>(),
                        cg * 4,
                    )
                }
            }
        }
    }
}

/// The band's rows at the vector levels: each whole vector of a row stored once, the input's
/// values in its lanes at pw..pw + iw read by a masked load (no lane outside the input row
/// is read), zeros in the others.
#[cfg(target_arch = "x86_64")]
mod vector {
    use crate::fast::isa::masks::{ymm_lanes, zmm_lanes};
    use std::arch::x86_64::*;

    /// The lanes of the vector at `at` that hold input values, as a range of lanes.
    fn lanes(at: usize, width: usize, pw: usize, iw: usize) -> (usize, usize) {
        (
            pw.saturating_sub(at).min(width),
            (pw + iw).saturating_sub(at).min(width),
        )
    }

    /// # Safety
    /// `src`, where given, points at `iw` readable f32 values; `row.len()` is a multiple of
    /// 16 and at least `pw + iw`; the processor has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn row_avx512(
        src: Option<*const f32>,
        pw: usize,
        iw: usize,
        row: &mut [f32],
    ) {
        for at in (0..row.len()).step_by(16) {
            let v = match src {
                Some(src) => {
                    let (lo, hi) = lanes(at, 16, pw, iw);
                    let mask = zmm_lanes(hi) & !zmm_lanes(lo);
                    // SAFETY: lane l is read only where pw <= at + l < pw + iw, value
                    // at + l - pw of the row (masked lanes are not read and cannot fault).
                    unsafe { _mm512_maskz_loadu_ps(mask, src.wrapping_add(at).wrapping_sub(pw)) }
                }
                None => _mm512_setzero_ps(),
            };
            // SAFETY: at + 16 <= row.len() (a multiple of 16).
            unsafe { _mm512_storeu_ps(row.as_mut_ptr().add(at), v) };
        }
    }

    /// As [`row_avx512`] in vectors of 8, with AVX2.
    ///
    /// # Safety
    /// As for [`row_avx512`], the processor having AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn row_avx2(src: Option<*const f32>, pw: usize, iw: usize, row: &mut [f32]) {
        for at in (0..row.len()).step_by(8) {
            let v = match src {
                Some(src) => {
                    let (lo, hi) = lanes(at, 8, pw, iw);
                    let mask = _mm256_andnot_si256(ymm_lanes(lo), ymm_lanes(hi));
                    // SAFETY: as in row_avx512: only the lanes of input values are read.
                    unsafe { _mm256_maskload_ps(src.wrapping_add(at).wrapping_sub(pw), mask) }
                }
                None => _mm256_setzero_ps(),
            };
            // SAFETY: at + 8 <= row.len() (a multiple of 16).
            unsafe { _mm256_storeu_ps(row.as_mut_ptr().add(at), v) };
        }
    }
}
