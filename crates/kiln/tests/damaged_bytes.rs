//! Damaged, truncated and foreign bytes (DESIGN.md section 4): every loader answers a mutated blob
//! with an error or a valid result, never a panic; whatever loads saves again to exactly the plan
//! bytes it was loaded from.
//!
//! The mutations are deterministic (a fixed-seed SplitMix64). Most raw mutations stop at the
//! preamble checksum, so part of them recompute the checksums (of the nested blob they hit and of
//! the container) or the CPU payload's SHA-256, to reach the FlatBuffer verifier, the envelope's
//! semantic checks and the plugin's payload decoder.

mod common;

use common::{assert_close, built, conv_graph, cpu_handle, pointwise_graph, reference, run};
use kiln::{Graph, Handle};
use kiln_format::PlanEnvelope;
use sha2::{Digest, Sha256};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// SplitMix64: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn byte(&mut self) -> u8 {
        const SPECIAL: [u8; 6] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE];
        if self.below(4) == 0 {
            SPECIAL[self.below(SPECIAL.len())]
        } else {
            self.next() as u8
        }
    }
}

/// A blob to mutate, with the byte ranges of the complete blobs nested in it (containers).
struct Source {
    name: String,
    bytes: Vec<u8>,
    nested: Vec<(usize, usize)>,
    /// The graph (built through the API, unvalidated) whose plans this source holds.
    make: fn() -> Graph,
}

fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

fn source(name: &str, bytes: Vec<u8>, make: fn() -> Graph) -> Source {
    let nested = match kiln_format::decode_container(&bytes) {
        Ok(c) => std::iter::once(c.graph)
            .chain(c.plan)
            .map(|b| (offset_in(&bytes, b), b.len()))
            .collect(),
        Err(_) => Vec::new(),
    };
    Source {
        name: name.into(),
        bytes,
        nested,
        make,
    }
}

/// Every kind of blob kiln writes, for both test graphs.
fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    for (label, make) in [
        ("pointwise", pointwise_graph as fn() -> Graph),
        ("conv", conv_graph),
    ] {
        let g = built(make, &cpu_handle());
        let graph_blob = kiln_format::encode_graph(g.op_graph().expect("validated"));
        let plan = g.serialize_compiled_plan().expect("saves");
        let v1 = kiln_format::encode_plan_v1(&kiln_format::decode_plan(&plan).expect("decodes"));
        out.push(source(&format!("{label} graph"), graph_blob.clone(), make));
        out.push(source(&format!("{label} plan v2"), plan.clone(), make));
        out.push(source(&format!("{label} plan v1"), v1.clone(), make));
        out.push(source(
            &format!("{label} container"),
            g.serialize().expect("saves"),
            make,
        ));
        out.push(source(
            &format!("{label} container v1"),
            kiln_format::encode_container(&graph_blob, Some(&v1)),
            make,
        ));
        out.push(source(
            &format!("{label} container without plan"),
            kiln_format::encode_container(&graph_blob, None),
            make,
        ));
    }
    out
}

/// Rewrites the CRC-32 of the blob at the start of `blob`, over everything after its preamble.
fn fix_crc(blob: &mut [u8]) {
    if blob.len() >= kiln_format::HEADER_SIZE {
        let crc = crc32fast::hash(&blob[kiln_format::HEADER_SIZE..]);
        blob[12..16].copy_from_slice(&crc.to_le_bytes());
    }
}

/// One mutation of `src`: the bytes and a description that reproduces it.
fn mutate(src: &Source, rng: &mut Rng) -> (Vec<u8>, String) {
    let mut b = src.bytes.clone();
    let len = b.len();
    let op = rng.below(7);
    let what = match op {
        0 | 5 => {
            let flips = 1 + rng.below(3);
            let mut at = Vec::new();
            for _ in 0..flips {
                let (i, bit) = (rng.below(len), rng.below(8));
                b[i] ^= 1 << bit;
                at.push(format!("{i}.{bit}"));
            }
            format!("bit flips at {}", at.join(","))
        }
        1 | 6 => {
            let n = 1 + rng.below(4);
            let mut at = Vec::new();
            for _ in 0..n {
                let (i, v) = (rng.below(len), rng.byte());
                b[i] = v;
                at.push(format!("{i}={v:#04x}"));
            }
            format!("byte overwrites {}", at.join(","))
        }
        2 => {
            let keep = rng.below(len);
            b.truncate(keep);
            format!("truncated to {keep} bytes")
        }
        3 => {
            let (at, n) = (rng.below(len + 1), 1 + rng.below(8));
            let ins: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
            b.splice(at..at, ins.iter().copied());
            format!("inserted {ins:02x?} at {at}")
        }
        _ => {
            let at = rng.below(len);
            let n = (1 + rng.below(8)).min(len - at);
            b.drain(at..at + n);
            format!("deleted {n} bytes at {at}")
        }
    };
    // Operations 5 and 6 change bytes in place and then fix the checksums, so that the damage
    // reaches the parsers behind the preamble.
    if op >= 5 {
        for &(off, n) in &src.nested {
            fix_crc(&mut b[off..off + n]);
        }
        fix_crc(&mut b);
        return (b, format!("{what}, checksums fixed"));
    }
    (b, what)
}

/// The plan blob inside a plan-bearing source.
fn plan_of(src: &Source) -> Option<Vec<u8>> {
    kiln_format::plan_part(&src.bytes).ok().map(<[u8]>::to_vec)
}

/// A valid plan whose envelope fields were changed at random and re-encoded as given.
fn mutate_envelope(plan: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let mut env = kiln_format::decode_plan(plan).expect("the source plan decodes");
    let what = match rng.below(7) {
        0 => {
            env.version = rng.below(5) as u32;
            format!("envelope version {}", env.version)
        }
        1 => {
            env.engine_id = if rng.below(2) == 0 {
                rng.next()
            } else {
                env.engine_id ^ 1
            };
            format!("engine id {:#x}", env.engine_id)
        }
        2 => {
            let i = rng.below(env.tensor_uids.len());
            match rng.below(3) {
                0 => {
                    env.tensor_uids.remove(i);
                }
                1 => env.tensor_uids.push(env.tensor_uids[i]),
                _ => env.tensor_uids[i] = rng.next() as i64,
            }
            format!("tensor uids {:?}", env.tensor_uids)
        }
        3 => {
            let a = env.alignments.get_or_insert_with(Vec::new);
            if a.is_empty() || rng.below(3) == 0 {
                a.push(rng.next() as u32);
            } else {
                let i = rng.below(a.len());
                a[i] = [0, 1, 3, 6, 64, 4096, u32::MAX][rng.below(7)];
            }
            format!("alignments {:?}", env.alignments)
        }
        4 => {
            env.alignments = None;
            "no alignments".into()
        }
        5 => {
            env.workspace_size = rng.next() >> rng.below(64);
            format!("workspace size {}", env.workspace_size)
        }
        _ => {
            env.engine_name = String::from_utf8_lossy(
                &env.engine_name.as_bytes()[..rng.below(env.engine_name.len())],
            )
            .into();
            format!("engine name '{}'", env.engine_name)
        }
    };
    (kiln_format::encode_plan_as_given(&env), what)
}

/// A valid plan whose CPU payload was damaged and given a correct SHA-256 again, so that the
/// plugin's payload decoder (not its digest check) meets the damage.
fn mutate_payload(plan: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let env = kiln_format::decode_plan(plan).expect("the source plan decodes");
    let mut payload = env.payload.to_vec();
    const HEADER: usize = 48;
    let what = match rng.below(4) {
        0 => {
            let i = HEADER + rng.below(payload.len() - HEADER);
            payload[i] ^= 1 << rng.below(8);
            format!("payload body bit flip at {i}")
        }
        1 => {
            let i = HEADER + rng.below(payload.len() - HEADER);
            payload[i] = rng.byte();
            format!("payload body byte {i} = {:#04x}", payload[i])
        }
        2 => {
            let keep = HEADER + rng.below(payload.len() - HEADER);
            payload.truncate(keep);
            format!("payload truncated to {keep} bytes")
        }
        _ => {
            let i = rng.below(HEADER.min(16));
            payload[i] = rng.byte();
            format!("payload header byte {i} = {:#04x}", payload[i])
        }
    };
    if payload.len() >= HEADER {
        let digest = Sha256::digest(&payload[HEADER..]);
        payload[16..HEADER].copy_from_slice(&digest);
    }
    let env = PlanEnvelope {
        payload: &payload,
        ..env
    };
    (kiln_format::encode_plan_as_given(&env), what)
}

/// A valid plan whose CPU payload stores a changed op graph (a dim, a stride, a data type, a
/// UID or a knob value), re-encoded with a correct digest: the payload then contradicts its
/// envelope, the class of forgery that once wrote out of bounds at execute.
fn mutate_payload_graph(plan: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let env = kiln_format::decode_plan(plan).expect("the source plan decodes");
    let mut p = kiln_engine_cpu::payload::decode(env.payload).expect("a CPU payload");
    let t = rng.below(p.graph.tensors.len());
    let tensor = &mut p.graph.tensors[t];
    let what = match rng.below(5) {
        0 => {
            let d = rng.below(tensor.dims.len());
            tensor.dims[d] = [0, 1, 2, 7, 5000, 1 << 20][rng.below(6)];
            format!(
                "payload graph: tensor {} dim {d} = {}",
                tensor.uid, tensor.dims[d]
            )
        }
        1 => {
            let d = rng.below(tensor.strides.len());
            tensor.strides[d] = [0, 1, 3, 64, 1 << 16][rng.below(5)];
            format!(
                "payload graph: tensor {} stride {d} = {}",
                tensor.uid, tensor.strides[d]
            )
        }
        2 => {
            tensor.data_type = kiln_core::DataType::ALL[rng.below(kiln_core::DataType::ALL.len())];
            format!(
                "payload graph: tensor {} type {}",
                tensor.uid, tensor.data_type
            )
        }
        3 => {
            let old = tensor.uid;
            tensor.uid = rng.below(8) as i64;
            format!("payload graph: tensor uid {old} renamed {}", tensor.uid)
        }
        _ if !p.knobs.is_empty() => {
            let k = rng.below(p.knobs.len());
            p.knobs[k].1 = [-1, 0, 1, 2, 16, 1 << 40][rng.below(6)];
            format!("payload knob {k} = {}", p.knobs[k].1)
        }
        _ => {
            tensor.is_virtual = !tensor.is_virtual;
            format!("payload graph: tensor {} virtual flipped", tensor.uid)
        }
    };
    let payload = kiln_engine_cpu::payload::encode(p.engine_id, &p.knobs, &p.graph);
    let env = PlanEnvelope {
        payload: &payload,
        ..env
    };
    (kiln_format::encode_plan_as_given(&env), what)
}

/// What a loader did with one input.
#[derive(Default)]
struct Tally {
    inputs: usize,
    loaded: usize,
    refused: usize,
    /// Loaded plans that were then executed through `Graph::execute`, and how many of those runs
    /// were refused with an error (never a crash).
    executed: usize,
    execute_refused: usize,
    /// Successful loads per loader.
    loaded_by: std::collections::BTreeMap<&'static str, usize>,
}

/// Runs `graph`'s loaded plan through the safe `Graph::execute` on buffers sized from `graph`'s
/// own tensors (as a user would: random inputs, outputs included); an error is a refusal, a crash
/// would end the test.
fn execute_loaded(graph: &Graph, handle: &Handle, executed: &std::cell::Cell<(usize, usize)>) {
    let (Some(og), Some(_)) = (graph.op_graph(), graph.plan()) else {
        return;
    };
    let (runs, refused) = executed.get();
    let ok = (|| -> kiln::Result<()> {
        let mut memory = Vec::new();
        for t in og.bound_tensors() {
            memory.push((t.uid, kiln::HostTensor::random(t, t.uid as u64)?));
        }
        let mut workspace = kiln::Workspace::for_graph(graph)?;
        let mut pack = kiln::VariantPack::new();
        for (uid, m) in memory.iter_mut() {
            pack.insert_uid(*uid, m);
        }
        graph.execute(handle, &mut pack, &mut workspace)
    })()
    .is_ok();
    executed.set((runs + 1, refused + usize::from(!ok)));
}

/// Runs every loader on `bytes`, and executes every plan that loads; returns the failures found
/// (panics, plugin panics, re-saves that differ from the plan bytes loaded).
fn check_loaders(
    bytes: &[u8],
    handle: &Handle,
    target: &mut Graph,
    tally: &mut Tally,
) -> Vec<String> {
    let mut failures = Vec::new();
    let plan_part = kiln_format::plan_part(bytes).ok().map(<[u8]>::to_vec);
    let executed = std::cell::Cell::new((0usize, 0usize));
    let mut note =
        |loader: &'static str,
         outcome: std::thread::Result<Result<Option<Vec<u8>>, kiln::Error>>| {
            match outcome {
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    failures.push(format!("{loader} panicked: {what}"));
                }
                Ok(Err(e)) => {
                    tally.refused += 1;
                    if e.to_string().contains("panicked") {
                        failures.push(format!("{loader}: a plugin panicked: {e}"));
                    }
                }
                Ok(Ok(resaved)) => {
                    tally.loaded += 1;
                    *tally.loaded_by.entry(loader).or_default() += 1;
                    if let Some(resaved) = resaved {
                        if Some(&resaved) != plan_part.as_ref() {
                            failures.push(format!(
                                "{loader}: the loaded plan's re-save differs from its plan bytes"
                            ));
                        }
                    }
                }
            }
        };
    tally.inputs += 1;
    note(
        "kiln::probe",
        catch_unwind(|| kiln::probe(bytes).map(|_| None)),
    );
    note(
        "Graph::deserialize(None)",
        catch_unwind(|| Graph::deserialize(None, bytes).and_then(|g| g.serialize().map(|_| None))),
    );
    note(
        "Graph::deserialize(handle)",
        catch_unwind(AssertUnwindSafe(|| {
            let g = Graph::deserialize(Some(handle), bytes)?;
            execute_loaded(&g, handle, &executed);
            match g.plan() {
                Some(p) => kiln::serialize_compiled_plan(p).map(Some),
                None => g.serialize().map(|_| None),
            }
        })),
    );
    note(
        "kiln::deserialize_compiled_plan",
        catch_unwind(AssertUnwindSafe(|| {
            kiln::deserialize_compiled_plan(handle, bytes)
                .and_then(|p| kiln::serialize_compiled_plan(&p).map(Some))
        })),
    );
    note(
        "Graph::deserialize_compiled_plan",
        catch_unwind(AssertUnwindSafe(|| {
            target.deserialize_compiled_plan(handle, bytes)?;
            execute_loaded(target, handle, &executed);
            target.serialize_compiled_plan().map(Some)
        })),
    );
    let (runs, refused) = executed.get();
    tally.executed += runs;
    tally.execute_refused += refused;
    failures
}

#[test]
fn every_loader_survives_thousands_of_mutated_blobs_of_every_kind() {
    const RAW_PER_SOURCE: usize = 1000;
    const STRUCTURED_PER_PLAN: usize = 200;
    let start = std::time::Instant::now();
    let handle = cpu_handle();
    let mut rng = Rng(0x6B69_6C6E_5F66_757A);
    let mut tally = Tally::default();
    let mut failures: Vec<String> = Vec::new();
    for src in sources() {
        let mut target = (src.make)();
        target.validate().expect("the target graph validates");
        let target_blob = kiln_format::encode_graph(target.op_graph().expect("validated"));
        let mut check = |bytes: &[u8], what: &str, tally: &mut Tally| {
            for f in check_loaders(bytes, &handle, &mut target, tally) {
                failures.push(format!("{} ({what}): {f}", src.name));
            }
        };
        // The unmutated blob itself, and foreign bytes of the same length.
        check(&src.bytes, "unmutated", &mut tally);
        let foreign: Vec<u8> = (0..src.bytes.len()).map(|_| rng.next() as u8).collect();
        check(&foreign, "random bytes", &mut tally);
        for _ in 0..RAW_PER_SOURCE {
            let (bytes, what) = mutate(&src, &mut rng);
            check(&bytes, &what, &mut tally);
        }
        if let (Some(plan), false) = (plan_of(&src), src.name.contains("container")) {
            for _ in 0..STRUCTURED_PER_PLAN {
                let (bytes, what) = mutate_envelope(&plan, &mut rng);
                check(&bytes, &what, &mut tally);
                let (bytes, what) = mutate_payload(&plan, &mut rng);
                check(&bytes, &what, &mut tally);
                let wrapped = kiln_format::encode_container(&target_blob, Some(&bytes));
                check(&wrapped, &format!("{what}, in a container"), &mut tally);
                let (bytes, what) = mutate_payload_graph(&plan, &mut rng);
                check(&bytes, &what, &mut tally);
                let wrapped = kiln_format::encode_container(&target_blob, Some(&bytes));
                check(&wrapped, &format!("{what}, in a container"), &mut tally);
            }
        }
    }
    let elapsed = start.elapsed();
    eprintln!(
        "damaged bytes: {} inputs through 5 loaders, {} loads, {} refusals, {} loaded plans \
         executed ({} of them refused at execute), in {:.2?}; loads by loader: {:?}",
        tally.inputs,
        tally.loaded,
        tally.refused,
        tally.executed,
        tally.execute_refused,
        elapsed,
        tally.loaded_by
    );
    assert!(
        tally.executed > 100,
        "only {} loaded plans were executed",
        tally.executed
    );
    assert!(tally.inputs >= 10_000, "only {} inputs", tally.inputs);
    assert!(
        tally.refused > tally.inputs,
        "the mutations should mostly be refused"
    );
    assert!(
        failures.is_empty(),
        "{} failures, the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Random text for a diagnostic field, sometimes empty, sometimes not ASCII.
fn random_text(rng: &mut Rng) -> String {
    const PIECES: [&str; 8] = [
        "",
        "kiln-cpu",
        "ünïcödé",
        "x",
        "0.0.0-☃",
        "a longer plugin name than usual",
        "\u{7f}",
        "🔥",
    ];
    (0..rng.below(4))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

#[test]
fn plans_whose_diagnostic_fields_changed_load_run_and_resave_as_loaded() {
    let mut rng = Rng(0xD1A6_0057_1C00_0001);
    for make in [pointwise_graph as fn() -> Graph, conv_graph] {
        let want = reference(make);
        let plan = built(make, &cpu_handle())
            .serialize_compiled_plan()
            .expect("saves");
        for i in 0..8 {
            let mut env = kiln_format::decode_plan(&plan).expect("decodes");
            env.plugin_name = random_text(&mut rng);
            env.plugin_version = random_text(&mut rng);
            let bytes = if i % 2 == 0 {
                kiln_format::encode_plan(&env)
            } else {
                kiln_format::encode_plan_v1(&env)
            };
            let what = format!(
                "plugin '{}' version '{}'",
                env.plugin_name, env.plugin_version
            );
            let handle = cpu_handle();
            let mut g = make();
            g.deserialize_compiled_plan(&handle, &bytes)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            if i % 2 == 0 {
                assert_close(&run(&g, &handle).expect("runs"), &want, &what);
            } else {
                // A version-1 plan records no tensor layouts: the safe Graph::execute refuses to
                // vouch for it (it runs through the unsafe ExecutionPlan::execute, tested in
                // kiln-backend's plan_resave).
                let e =
                    run(&g, &handle).expect_err("a version-1 plan is not run by Graph::execute");
                assert_eq!(e.status(), kiln::Status::NotSupported, "{what}: {e}");
            }
            assert_eq!(
                g.serialize_compiled_plan().expect("re-save"),
                bytes,
                "{what}"
            );
            let info = kiln::probe(&bytes).expect("probe");
            assert_eq!(
                info.plugin_name.as_deref(),
                Some(env.plugin_name.as_str()),
                "{what}"
            );
        }
    }
}
