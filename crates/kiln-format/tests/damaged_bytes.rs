//! A deterministic mutation test: thousands of damaged and truncated blobs of every kind go
//! through every loader and `probe`; each call returns an error or a valid result, never panics.
//!
//! Mutations are bit flips, byte sets, insertions, deletions and truncations, drawn from a
//! fixed-seed SplitMix64. Half of the mutated blobs get their CRC-32 fixed afterwards, so that
//! the damage reaches the FlatBuffer verifier and the semantic checks instead of stopping at the
//! checksum. Nested blobs of containers are damaged on their own (checksum fixed) and then
//! wrapped in a fresh container.

mod common;

use common::*;
use kiln_core::{Error, Status};
use kiln_format::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

const MUTATIONS_PER_SEED_BLOB: usize = 2500;

fn seed_blobs() -> Vec<(&'static str, Vec<u8>)> {
    let graph = encode_graph(&fixture_graph());
    let plan_v2 = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));
    let plan_v1 = encode_plan_v1(&fixture_envelope(FIXTURE_PAYLOAD));
    vec![
        ("graph", graph.clone()),
        ("plan_v1", plan_v1),
        ("plan_v2", plan_v2.clone()),
        ("container", encode_container(&graph, Some(&plan_v2))),
        ("graph_only_container", encode_container(&graph, None)),
        (
            "conv_graph",
            encode_graph(&conv_graph(kiln_core::ConvDirection::Wgrad)),
        ),
    ]
}

fn mutate(rng: &mut SplitMix, blob: &[u8]) -> Vec<u8> {
    let mut b = blob.to_vec();
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        if b.is_empty() {
            b.push(rng.next_u64() as u8);
            continue;
        }
        // Most edits hit the body, where the FlatBuffer lives.
        let at = if b.len() > 32 && rng.below(8) != 0 {
            32 + rng.below(b.len() - 32)
        } else {
            rng.below(b.len())
        };
        match rng.below(6) {
            0 | 1 => b[at] ^= 1 << rng.below(8),
            2 => {
                b[at] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0x10][rng.below(6)];
            }
            3 => b[at] = rng.next_u64() as u8,
            4 => {
                let n = 1 + rng.below(8);
                for _ in 0..n {
                    b.insert(at, rng.next_u64() as u8);
                }
            }
            _ => {
                let n = (1 + rng.below(8)).min(b.len() - at);
                b.drain(at..at + n);
            }
        }
    }
    if rng.below(2) == 0 {
        fix_length_and_checksum(&mut b);
    }
    b
}

/// Makes the preamble's length and CRC-32 agree with the (damaged) body.
fn fix_length_and_checksum(b: &mut [u8]) {
    if b.len() >= 32 {
        let body_len = (b.len() - 32) as u64;
        b[16..24].copy_from_slice(&body_len.to_le_bytes());
        fix_checksum(b);
    }
}

fn expect_error_status(e: &Error, call: &str, case: &str) {
    assert!(
        matches!(e.status(), Status::BadParam | Status::NotSupported),
        "{case}: {call} returned an unexpected status: {e}"
    );
    assert!(
        !e.message().is_empty(),
        "{case}: {call} error without message"
    );
}

/// Runs every loader and probe on `bytes`; panics (with `case`) on a panic inside the crate, an
/// error of the wrong status, or an Ok result that breaks the format's promises.
fn check_all_loaders(bytes: &[u8], case: &str) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        match decode_graph(bytes) {
            Ok(g) => {
                let again = decode_graph(&encode_graph(&g)).expect("a decoded graph re-encodes");
                assert_eq!(again, g);
            }
            Err(e) => expect_error_status(&e, "decode_graph", case),
        }
        match decode_plan(bytes) {
            Ok(env) => {
                assert!(env.version == 1 || env.version == 2);
                match &env.alignments {
                    None => assert_eq!(env.version, 1),
                    Some(a) => assert_eq!(a.len(), env.tensor_uids.len()),
                }
                let at = env.payload.as_ptr() as usize - bytes.as_ptr() as usize;
                assert_eq!(at % 16, 0, "payload alignment");
            }
            Err(e) => expect_error_status(&e, "decode_plan", case),
        }
        match decode_container(bytes) {
            Ok(c) => {
                assert!(decode_graph(c.graph).is_ok() || decode_graph(c.graph).is_err());
                for nested in std::iter::once(c.graph).chain(c.plan) {
                    let at = nested.as_ptr() as usize - bytes.as_ptr() as usize;
                    assert_eq!(at % 16, 0, "nested blob alignment");
                }
            }
            Err(e) => expect_error_status(&e, "decode_container", case),
        }
        match plan_part(bytes) {
            Ok(p) => {
                let at = p.as_ptr() as usize - bytes.as_ptr() as usize;
                assert!(at + p.len() <= bytes.len());
            }
            Err(e) => expect_error_status(&e, "plan_part", case),
        }
        match probe(bytes) {
            Ok(info) => {
                assert_eq!(info.total_bytes, bytes.len() as u64);
                assert_eq!(info.loadable, info.problems.is_empty());
                let _ = serde_json::to_string(&info).expect("BlobInfo serializes");
            }
            Err(e) => expect_error_status(&e, "probe", case),
        }
    }));
    if outcome.is_err() {
        panic!(
            "{case}: a loader panicked on these {} bytes: {bytes:02x?}",
            bytes.len()
        );
    }
}

#[test]
fn mutated_blobs_of_every_kind_never_panic() {
    let mut rng = SplitMix(0x6B69_6C6E_666D_7401);
    let mut accepted = 0usize;
    let mut total = 0usize;
    for (name, blob) in seed_blobs() {
        for i in 0..MUTATIONS_PER_SEED_BLOB {
            let bad = mutate(&mut rng, &blob);
            check_all_loaders(&bad, &format!("{name} mutation {i}"));
            accepted += usize::from(probe(&bad).is_ok_and(|p| p.loadable));
            total += 1;
        }
    }
    // The test must reach past the checksum: some mutations should still parse to a valid blob
    // of some kind (e.g. a changed string), many must be refused.
    assert!(
        accepted > 0 && accepted < total,
        "{accepted} of {total} accepted"
    );
}

#[test]
fn damaged_nested_blobs_inside_fresh_containers_never_panic() {
    let mut rng = SplitMix(0x6E65_7374_6564_0002);
    let graph = encode_graph(&fixture_graph());
    let plan = encode_plan(&fixture_envelope(FIXTURE_PAYLOAD));
    for i in 0..MUTATIONS_PER_SEED_BLOB {
        let mut bad_graph = mutate(&mut rng, &graph);
        fix_length_and_checksum(&mut bad_graph);
        let mut bad_plan = mutate(&mut rng, &plan);
        fix_length_and_checksum(&mut bad_plan);
        let case = format!("nested mutation {i}");
        check_all_loaders(&encode_container(&bad_graph, Some(&bad_plan)), &case);
        check_all_loaders(&encode_container(&graph, Some(&bad_plan)), &case);
        check_all_loaders(&encode_container(&bad_graph, None), &case);
        check_all_loaders(&encode_container(&bad_plan, Some(&bad_graph)), &case);
    }
}

#[test]
fn every_truncation_of_every_blob_is_refused_without_panic() {
    for (name, blob) in seed_blobs() {
        for len in 0..blob.len() {
            let cut = &blob[..len];
            check_all_loaders(cut, &format!("{name} cut to {len}"));
            assert!(decode_graph(cut).is_err() && decode_plan(cut).is_err());
            // Truncation with a preamble made consistent again still must not panic.
            let mut fixed = cut.to_vec();
            fix_length_and_checksum(&mut fixed);
            check_all_loaders(&fixed, &format!("{name} cut to {len}, length fixed"));
        }
    }
}

#[test]
fn foreign_bytes_are_refused_without_panic() {
    let mut rng = SplitMix(42);
    for len in [0, 1, 4, 31, 32, 33, 64, 100, 1000] {
        for _ in 0..50 {
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            check_all_loaders(&bytes, &format!("{len} random bytes"));
            if len >= 32 {
                // A plausible preamble in front of random bytes.
                bytes[0..4].copy_from_slice(b"KILN");
                bytes[4..6].copy_from_slice(&(1 + rng.below(3) as u16).to_le_bytes());
                bytes[6..8].copy_from_slice(&1u16.to_le_bytes());
                bytes[8..12].copy_from_slice(&32u32.to_le_bytes());
                bytes[24..32].fill(0);
                fix_length_and_checksum(&mut bytes);
                check_all_loaders(&bytes, &format!("{len} random bytes behind a preamble"));
            }
        }
    }
    let json = br#"{"name":"x","tensors":[],"nodes":[]}"#;
    check_all_loaders(json, "JSON text");
    assert!(graph_from_json("{").is_err());
}
