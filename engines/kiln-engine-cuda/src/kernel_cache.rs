//! The on-disk compiled-kernel cache.
//!
//! Key: SHA-256 of (source, every kernel header's name and contents, options, NVRTC version,
//! arch), hex, one file per key:
//! `<dir>/<key>.kbin`. Folder: `$KILN_CACHE_DIR/kernels`, else `$XDG_CACHE_HOME/kiln/kernels`,
//! else `$HOME/.cache/kiln/kernels`; `KILN_CUDA_KERNEL_CACHE=off` turns it off. A file holds
//! the SHA-256 of the rest, the cubin length (u64 LE), the cubin, then the PTX (may be empty).
//! Files are written to a unique temporary name and renamed into place, so processes sharing
//! the folder never see a partial file; a file whose digest does not match is ignored and
//! rewritten. The cache is an accelerator only: every failure falls back to compiling.

use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::path::PathBuf;

thread_local! {
    static HITS: Cell<u64> = const { Cell::new(0) };
}

/// Lookups served from the cache on this thread (per thread, like `compile::compile_count`).
pub fn hits() -> u64 {
    HITS.with(Cell::get)
}

/// The cache folder, or `None` when the cache is off or no folder can be named.
pub fn dir() -> Option<PathBuf> {
    if std::env::var("KILN_CUDA_KERNEL_CACHE").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    if let Some(d) = std::env::var_os("KILN_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("kernels"));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("kiln").join("kernels"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("kiln").join("kernels"))
}

/// The key of one compilation: `source` with the `headers` (include name, contents) NVRTC is
/// given beside it, so a changed header gives new keys.
pub fn key(
    source: &str,
    headers: &[(&str, &str)],
    options: &[String],
    nvrtc: (i32, i32),
    arch: u32,
) -> String {
    let mut h = Sha256::new();
    for part in [source.as_bytes(), b"\0"] {
        h.update(part);
    }
    for (name, text) in headers {
        // Lengths first, so no two (name, contents) lists hash the same bytes.
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    for o in options {
        h.update(o.as_bytes());
        h.update(b"\0");
    }
    h.update(format!("nvrtc {}.{} sm_{arch}", nvrtc.0, nvrtc.1).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The cached (cubin, ptx) of `key`, if present and intact.
pub fn get(key: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let bytes = std::fs::read(dir()?.join(format!("{key}.kbin"))).ok()?;
    if bytes.len() < 40 || Sha256::digest(&bytes[32..]).as_slice() != &bytes[..32] {
        return None;
    }
    let n = usize::try_from(u64::from_le_bytes(bytes[32..40].try_into().ok()?)).ok()?;
    let end = 40usize.checked_add(n).filter(|&e| e <= bytes.len())?;
    HITS.with(|h| h.set(h.get() + 1));
    Some((bytes[40..end].to_vec(), bytes[end..].to_vec()))
}

/// Stores (cubin, ptx) under `key`, atomically; failures are ignored (logged nowhere: the cache
/// is optional).
pub fn put(key: &str, cubin: &[u8], ptx: &[u8]) {
    let Some(dir) = dir() else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let mut rest = Vec::with_capacity(8 + cubin.len() + ptx.len());
    rest.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    rest.extend_from_slice(cubin);
    rest.extend_from_slice(ptx);
    let mut file = Sha256::digest(&rest).to_vec();
    file.extend_from_slice(&rest);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{key}.{}.{nanos}.tmp", std::process::id()));
    if std::fs::write(&tmp, &file).is_ok()
        && std::fs::rename(&tmp, dir.join(format!("{key}.kbin"))).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::key;

    fn key_with(headers: &[(&str, &str)]) -> String {
        key("#include \"a.cuh\"", headers, &["-x".into()], (13, 0), 90)
    }

    #[test]
    fn the_key_covers_every_header_name_and_contents() {
        let base = key_with(&[("a.cuh", "int a;"), ("b.cuh", "int b;")]);
        assert_eq!(base, key_with(&[("a.cuh", "int a;"), ("b.cuh", "int b;")]));
        for changed in [
            key_with(&[("a.cuh", "int a; "), ("b.cuh", "int b;")]),
            key_with(&[("a.cuh", "int a;"), ("b.cuh", "int c;")]),
            key_with(&[("a.cuh", "int a;"), ("c.cuh", "int b;")]),
            key_with(&[("a.cuh", "int a;")]),
            // The same bytes split differently between name and contents.
            key_with(&[("a.cuhi", "nt a;"), ("b.cuh", "int b;")]),
        ] {
            assert_ne!(changed, base);
        }
    }

    #[test]
    fn the_key_covers_the_crates_headers() {
        let real = key("x", &crate::codegen::HEADERS, &[], (13, 0), 90);
        let mut edited = crate::codegen::HEADERS;
        let text = format!("{}\n", edited[1].1);
        edited[1].1 = &text;
        assert_ne!(key("x", &edited, &[], (13, 0), 90), real);
    }
}
