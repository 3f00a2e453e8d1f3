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
    /// holds `cg · rows · row_len` values, `row_len` at least `pad[2] + iw` rounded up to 32;
    /// the processor runs `isa`.
    pub unsafe fn copy(&self, isa: Isa, channels: Range<usize>, band: &mut [f32]) {
        let s = self.s;
        let (pw, iw, row_len) = (s.pad[2] as usize, s.input[2], self.row_len);
        let span = self.rows * row_len;
        let ahead = channels.end;
        for c in channels {
            if c + FETCH_AHEAD < ahead {
                self.fetch(c + FETCH_AHEAD);
            }
            let rows = band[c * span..(c + 1) * span].chunks_exact_mut(row_len);
            for (h, row) in rows.enumerate() {
                let ih = self.first + h as isize;
                if !self.in_input().contains(&ih) {
                    row.fill(0.0);
                    continue;
                }
                // Zeros where split_row writes nothing: the left padding and past the row.
                row[..pw].fill(0.0);
                row[(pw + iw).min(row_len)..].fill(0.0);
                let src = self.row_at(c, ih);
                if !src.is_aligned() {
                    for (j, v) in row[pw..pw + iw].iter_mut().enumerate() {
                        // SAFETY: value j of the row (the caller's contract), read unaligned.
                        *v = unsafe { src.add(j).read_unaligned() };
                    }
                    continue;
                }
                // SAFETY: input row ih of the channel: iw consecutive f32 values (the caller's
                // contract), aligned (checked); the row holds pw + iw rounded up to 32 values
                // (enough for split_row at stride 1), its padding zero.
                unsafe {
                    let src = std::slice::from_raw_parts(src, iw);
                    crate::fast::resample::split_row(isa, src, pw, 1, 0.0, row);
                }
            }
        }
    }
}
