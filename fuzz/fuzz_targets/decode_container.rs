//! decode_container on arbitrary bytes: an error or two aligned nested blobs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = kiln_format::decode_container(data) {
        for nested in std::iter::once(c.graph).chain(c.plan) {
            let at = nested.as_ptr() as usize - data.as_ptr() as usize;
            assert_eq!(at % 16, 0, "nested blob alignment");
        }
        let _ = kiln_format::decode_graph(c.graph);
        if let Some(plan) = c.plan {
            let _ = kiln_format::decode_plan(plan);
        }
    }
});
