//! graph_from_json on arbitrary text: an error or a validated graph whose JSON reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(graph) = kiln_format::graph_from_json(text) {
            let _ = kiln_format::graph_from_json(&kiln_format::graph_to_json(&graph));
        }
    }
});
