//! plan_part on arbitrary bytes: an error or a subslice of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(part) = kiln_format::plan_part(data) {
        let at = part.as_ptr() as usize - data.as_ptr() as usize;
        assert!(at + part.len() <= data.len());
    }
});
