//! `include/kiln_plugin.h` is generated from this crate by cbindgen and committed; this test
//! fails when the committed header differs from what the Rust definitions generate.
//! `KILN_REGEN_HEADERS=1 cargo test -p kiln-plugin-abi --test header` rewrites it.

use std::path::PathBuf;

#[test]
fn committed_header_matches_the_abi() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../../include/kiln_plugin.h");
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    if std::env::var_os("KILN_REGEN_HEADERS").is_some() {
        std::fs::write(&header, &generated).expect("write include/kiln_plugin.h");
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/kiln_plugin.h is stale: run KILN_REGEN_HEADERS=1 cargo test -p kiln-plugin-abi --test header"
    );
}
