//! probe on arbitrary bytes: an error or a report consistent with itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(info) = kiln_format::probe(data) {
        assert_eq!(info.total_bytes, data.len() as u64);
        assert_eq!(info.loadable, info.problems.is_empty());
    }
});
