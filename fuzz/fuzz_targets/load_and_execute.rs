//! Loads a plan through the safe frontend and executes whatever loads, on buffers sized from the
//! graph the user holds: the path a forged file takes to memory.
//!
//! The first input byte picks the mode; the rest is a file, given to `Graph::deserialize` with a
//! CPU handle:
//! - mode 0: as it is;
//! - mode 1: with its checksums and digest recomputed first (the container's CRC-32, its plan's
//!   CRC-32 and the CPU payload's SHA-256), so that a mutation of a real file reaches the payload
//!   decoder, the restore cross-check and execute instead of stopping at a checksum. Seed it with
//!   real files (`scripts/fuzz.sh` uses `crates/kiln/tests/fixtures/forged/`).
//!
//! A panic, an abort or a sanitizer report is a bug; errors are the expected answer.
#![no_main]

use kiln::{Graph, Handle, HostTensor, VariantPack, Workspace};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// Rewrites the CRC-32 of the blob at the start of `blob` over its body.
fn fix_crc(blob: &mut [u8]) {
    if blob.len() >= kiln_format::HEADER_SIZE {
        let crc = crc32fast::hash(&blob[kiln_format::HEADER_SIZE..]);
        blob[12..16].copy_from_slice(&crc.to_le_bytes());
    }
}

/// Offset and length of `inner` inside `outer`.
fn span(outer: &[u8], inner: &[u8]) -> (usize, usize) {
    (inner.as_ptr() as usize - outer.as_ptr() as usize, inner.len())
}

/// Recomputes, in place, every checksum and digest that lies between a mutation and the deep
/// checks: the outer blob's CRC, a container's nested plan CRC, the payload's SHA-256, and the
/// CRCs again over the changed bytes.
fn fix_checksums(file: &mut [u8]) {
    const HEADER: usize = kiln_plugin_sdk::PAYLOAD_HEADER_SIZE;
    fix_crc(file);
    let plan = match kiln_format::decode_container(file) {
        Ok(c) => match c.plan {
            Some(p) => span(file, p),
            None => return,
        },
        Err(_) => (0, file.len()),
    };
    let (at, len) = plan;
    fix_crc(&mut file[at..at + len]);
    let payload = match kiln_format::decode_plan(&file[at..at + len]) {
        Ok(env) => span(file, env.payload),
        Err(_) => return,
    };
    let (p, n) = payload;
    if n >= HEADER {
        let digest = Sha256::digest(&file[p + HEADER..p + n]);
        file[p + 16..p + HEADER].copy_from_slice(&digest);
    }
    fix_crc(&mut file[at..at + len]);
    if at != 0 {
        fix_crc(file);
    }
}

/// Executes `g`'s plan on random inputs sized from `g`'s own tensors.
fn execute(g: &Graph, handle: &Handle) {
    let Some(og) = g.op_graph() else { return };
    let mut memory: Vec<(i64, HostTensor)> = Vec::new();
    for t in og.bound_tensors() {
        match HostTensor::random(t, t.uid as u64) {
            Ok(m) => memory.push((t.uid, m)),
            Err(_) => return,
        }
    }
    let Ok(mut workspace) = Workspace::for_graph(g) else { return };
    let mut pack = VariantPack::new();
    for (uid, m) in memory.iter_mut() {
        pack.insert_uid(*uid, m);
    }
    let _ = g.execute(handle, &mut pack, &mut workspace);
}

fuzz_target!(|data: &[u8]| {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    let handle = HANDLE.get_or_init(|| Handle::cpu().expect("a CPU handle"));
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut file = rest.to_vec();
    if mode % 2 == 1 {
        fix_checksums(&mut file);
    }
    if let Ok(g) = Graph::deserialize(Some(handle), &file) {
        if g.plan().is_some() {
            execute(&g, handle);
        }
    }
});
