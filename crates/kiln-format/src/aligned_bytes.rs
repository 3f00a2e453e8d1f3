//! Byte vectors whose first data byte is 16-byte aligned inside a FlatBuffer.
//!
//! planus writes `[ubyte]` vectors 4-byte aligned. A plan payload and the blobs nested in a
//! container must instead start 16-byte aligned relative to the blob start, so that plugins and
//! loaders can read them in place. planus builds buffers back to front and aligns every write
//! relative to the end of the finished buffer, whose length it pads to the largest alignment
//! requested. Writing the data bytes with a 16-byte request, then the 4-byte length prefix right
//! in front of them (a 16-byte aligned position is 4-byte aligned, so no padding is inserted
//! between the two), puts the data at a multiple of 16 from the start of the FlatBuffer. The
//! FlatBuffer starts at offset 32 of the blob, so the data is 16-byte aligned in the blob too.
//! Readers see an ordinary `[ubyte]` vector and check the alignment again.

use crate::preamble::BLOB_ALIGN;
use planus::{Builder, Offset};
use std::mem::MaybeUninit;

/// Writes `data` as a `[ubyte]` vector whose first data byte is 16-byte aligned relative to the
/// start of the finished FlatBuffer, and returns its offset for a table field.
///
/// FlatBuffers use 32-bit offsets, so a blob is limited to 2 GiB. The length prefix is a u32:
/// data longer than `u32::MAX - 16` bytes is cut to that length rather than written with a
/// wrapped length; either way such a blob is beyond the format's limit and readers refuse it.
pub(crate) fn create_aligned_bytes(builder: &mut Builder, data: &[u8]) -> Offset<[u8]> {
    let max = (u32::MAX as usize) - BLOB_ALIGN;
    let data = &data[..data.len().min(max)];
    let len = data.len() as u32;
    // SAFETY: `write_with` requires the closure to initialize every byte of the `size`-byte
    // slice it is given; the slice has exactly `data.len()` bytes and is filled completely from
    // `data`.
    unsafe {
        builder.write_with(data.len(), BLOB_ALIGN - 1, |_, out| {
            for (dst, &src) in out.iter_mut().zip(data) {
                *dst = MaybeUninit::new(src);
            }
        });
    }
    // SAFETY: as above: the 4-byte slice is filled completely with the little-endian length.
    unsafe {
        builder.write_with(4, 3, |_, out| {
            for (dst, src) in out.iter_mut().zip(len.to_le_bytes()) {
                *dst = MaybeUninit::new(src);
            }
        });
    }
    builder.current_offset()
}
