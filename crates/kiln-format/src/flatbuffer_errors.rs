//! Turning planus's verification errors into kiln errors that name the place at fault.

use crate::preamble::HEADER_SIZE;
use kiln_core::Error;

/// A `BadParam` for a FlatBuffer body that failed planus's verification. planus names the
/// table, the field and the byte offset within the body; the message adds where the body starts.
pub(crate) fn invalid_body(what: &str, err: planus::Error) -> Error {
    let offset = (HEADER_SIZE + err.source_location.byte_offset) as u64;
    Error::bytes(
        what,
        offset,
        format!(
            "the FlatBuffer body does not verify: {err} (planus's offsets are relative to the \
             body, which starts at blob offset {HEADER_SIZE})"
        ),
    )
}
