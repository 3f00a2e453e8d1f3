//! decode_plan on arbitrary bytes: an error or an envelope that keeps the format's promises.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(env) = kiln_format::decode_plan(data) {
        assert!(env.version == 1 || env.version == 2);
        if let Some(a) = &env.alignments {
            assert_eq!(a.len(), env.tensor_uids.len());
        }
        let at = env.payload.as_ptr() as usize - data.as_ptr() as usize;
        assert_eq!(at % 16, 0, "payload alignment");
    }
});
