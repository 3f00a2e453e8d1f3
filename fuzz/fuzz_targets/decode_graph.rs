//! decode_graph on arbitrary bytes: an error or a graph that validates and re-encodes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(graph) = kiln_format::decode_graph(data) {
        let again = kiln_format::decode_graph(&kiln_format::encode_graph(&graph));
        assert!(
            again.is_ok(),
            "a decoded graph must re-encode to a loadable blob"
        );
    }
});
