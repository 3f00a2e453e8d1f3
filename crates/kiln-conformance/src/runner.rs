//! Running a case on every engine that claims it and comparing with the reference engine.

use crate::compare::{check_padding_untouched, compare_values};
use crate::{Case, Domain, REFERENCE};
use kiln::{
    BehaviorNote, BuildPlanPolicy, EngineConfig, ExecutionPlan, Handle, HeurMode, HostTensor,
    VariantPack, Workspace,
};
use std::ffi::c_void;

/// What [`check`] did for a case that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The engines that claimed the case, in heuristic order.
    pub claimed: Vec<String>,
    /// Engine runs compared with the reference (each engine's default configuration, plus one
    /// per non-default knob value).
    pub runs: usize,
}

/// Where an output's memory comes from before an engine writes it: finite values far from
/// anything an engine computes here, so that an element an engine forgets to write shows up.
const STALE_OUTPUT: Domain = Domain {
    lo: 1000.0,
    hi: 2000.0,
    step: 0.0,
};

/// A case prepared for running: graph validated and lowered, engines discovered, inputs drawn.
pub struct Session<'c> {
    case: &'c mut Case,
    handle: Handle,
    configs: Vec<EngineConfig>,
    inputs: Vec<HostTensor>,
    seed: u64,
}

fn fail(case: &Case, what: &str, e: impl std::fmt::Display) -> String {
    format!("case '{}': {what}: {e}", case.name)
}

fn mix(seed: u64, i: usize) -> u64 {
    seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
        .wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Memory for `desc` with values drawn from `domain`.
pub fn random_tensor(
    desc: &kiln_core::TensorDesc,
    domain: Domain,
    seed: u64,
) -> Result<HostTensor, String> {
    let mut h = HostTensor::random(desc, seed).map_err(|e| e.to_string())?;
    let values: Vec<f64> = h.to_f64_vec().into_iter().map(|v| domain.map(v)).collect();
    h.fill_from_f64(&values).map_err(|e| e.to_string())?;
    Ok(h)
}

impl<'c> Session<'c> {
    /// Validates `case`'s graph, lowers it for a CPU handle, asks the heuristics (mode A) for
    /// every engine that claims it, and draws the inputs from `seed`.
    ///
    /// Refuses a case whose bound tensors are not exactly its declared inputs and outputs.
    pub fn open(case: &'c mut Case, seed: u64) -> Result<Session<'c>, String> {
        let handle = Handle::cpu().map_err(|e| fail(case, "no CPU handle", e))?;
        case.graph
            .validate()
            .map_err(|e| fail(case, "the graph does not validate", e))?;
        case.graph
            .build_operation_graph(&handle)
            .map_err(|e| fail(case, "build_operation_graph", e))?;
        case.graph
            .create_execution_plans(&[HeurMode::A])
            .map_err(|e| fail(case, "create_execution_plans", e))?;
        case.graph.deselect_engines(&[]);
        let configs: Vec<EngineConfig> = case
            .graph
            .candidate_configs()
            .into_iter()
            .cloned()
            .collect();
        let g = case
            .graph
            .op_graph()
            .ok_or_else(|| fail(case, "validate", "no op graph"))?;
        let mut declared: Vec<i64> = Vec::new();
        for t in case.inputs.iter().map(|(t, _)| t).chain(&case.outputs) {
            let uid = t.uid().ok_or_else(|| {
                fail(
                    case,
                    "validate",
                    format!("tensor '{}' has no uid", t.name()),
                )
            })?;
            declared.push(uid);
        }
        for t in g.bound_tensors() {
            if !declared.contains(&t.uid) {
                return Err(fail(
                    case,
                    "case definition",
                    format!(
                        "{} is bound but neither an input nor an output of the case",
                        t.label()
                    ),
                ));
            }
        }
        let mut inputs = Vec::with_capacity(case.inputs.len());
        for (i, (t, domain)) in case.inputs.iter().enumerate() {
            let desc = t.desc().map_err(|e| fail(case, "input", e))?;
            inputs.push(
                random_tensor(&desc, *domain, mix(seed, i)).map_err(|e| fail(case, "input", e))?,
            );
        }
        Ok(Session {
            case,
            handle,
            configs,
            inputs,
            seed,
        })
    }

    /// The engines that claim the case, in heuristic order.
    pub fn claimed(&self) -> Vec<&str> {
        self.configs
            .iter()
            .map(|c| c.engine_name.as_str())
            .collect()
    }

    /// The input memory, in the order the case declared its inputs.
    pub fn inputs(&self) -> &[HostTensor] {
        &self.inputs
    }

    /// Replaces input `i`'s values (logical row-major order, rounded to its data type).
    pub fn set_input_values(&mut self, i: usize, values: &[f64]) -> Result<(), String> {
        let name = self.case.name.clone();
        let h = self
            .inputs
            .get_mut(i)
            .ok_or_else(|| format!("case '{name}': no input {i}"))?;
        h.fill_from_f64(values)
            .map_err(|e| format!("case '{name}': input {i}: {e}"))
    }

    /// The case.
    pub fn case(&self) -> &Case {
        self.case
    }

    fn fresh_outputs(&self) -> Result<Vec<HostTensor>, String> {
        self.case
            .outputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let desc = t.desc().map_err(|e| fail(self.case, "output", e))?;
                random_tensor(&desc, STALE_OUTPUT, mix(!self.seed, i))
                    .map_err(|e| fail(self.case, "output", e))
            })
            .collect()
    }

    fn check_inputs_kept(&self, who: &str, after: &[HostTensor]) -> Result<(), String> {
        for (before, after) in self.inputs.iter().zip(after) {
            if before.bytes() != after.bytes() {
                return Err(format!(
                    "{who}: changed the memory of input {}",
                    before.desc().label()
                ));
            }
        }
        Ok(())
    }

    fn label(&self, engine: &str, knobs: &[(i64, i64)]) -> String {
        if knobs.is_empty() {
            format!("engine {engine} on case '{}'", self.case.name)
        } else {
            format!(
                "engine {engine} with knobs {knobs:?} on case '{}'",
                self.case.name
            )
        }
    }

    /// Runs the case on `engine` through the frontend (`deselect_engines` of every other
    /// engine, `build_plans`, `execute`) and returns its outputs, in declaration order.
    ///
    /// Besides the engine's own errors, fails when it changed an input or wrote into the
    /// padding of an output.
    pub fn run(&mut self, engine: &str) -> Result<Vec<HostTensor>, String> {
        let who = self.label(engine, &[]);
        let others: Vec<String> = self
            .configs
            .iter()
            .map(|c| c.engine_name.clone())
            .filter(|n| n != engine)
            .collect();
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
        let mut inputs = self.inputs.clone();
        let mut outputs = self.fresh_outputs()?;
        let graph = &mut self.case.graph;
        graph.deselect_engines(&others);
        let built = graph.build_plans(BuildPlanPolicy::HeuristicsChoice);
        graph.deselect_engines(&[]);
        built.map_err(|e| format!("{who}: claimed the case but its plan did not build: {e}"))?;
        let chosen = graph
            .plan()
            .map(|p| p.engine_name().to_string())
            .unwrap_or_default();
        if chosen != engine {
            return Err(format!(
                "{who}: build_plans selected engine '{chosen}' instead"
            ));
        }
        let mut workspace =
            Workspace::for_graph(graph).map_err(|e| format!("{who}: workspace: {e}"))?;
        {
            let mut pack = VariantPack::new();
            for ((t, _), h) in self.case.inputs.iter().zip(inputs.iter_mut()) {
                pack.insert(t, h);
            }
            for (t, h) in self.case.outputs.iter().zip(outputs.iter_mut()) {
                pack.insert(t, h);
            }
            graph
                .execute(&self.handle, &mut pack, &mut workspace)
                .map_err(|e| format!("{who}: execute failed: {e}"))?;
        }
        self.check_inputs_kept(&who, &inputs)?;
        for h in &outputs {
            check_padding_untouched(&who, h)?;
        }
        Ok(outputs)
    }

    /// Runs the case on engine configuration `config` (knobs included) through the backend's
    /// `ExecutionPlan` directly, since the frontend builds every engine with default knobs.
    pub fn run_config(&self, config: &EngineConfig) -> Result<Vec<HostTensor>, String> {
        let who = self.label(&config.engine_name, &config.knobs);
        let g = self
            .case
            .graph
            .op_graph()
            .ok_or_else(|| format!("{who}: the graph is not validated"))?;
        let blob = kiln_format::encode_graph(g);
        let plan = ExecutionPlan::build(&self.handle, config, g, &blob)
            .map_err(|e| format!("{who}: plan did not build: {e}"))?;
        let mut inputs = self.inputs.clone();
        let mut outputs = self.fresh_outputs()?;
        let mut workspace = Scratch::new(plan.workspace_size());
        let bindings: Vec<(i64, *mut c_void)> = inputs
            .iter_mut()
            .chain(outputs.iter_mut())
            .map(|h| (h.desc().uid, h.as_mut_ptr()))
            .collect();
        // SAFETY: every HostTensor was made for the graph's own TensorDesc of its uid, so it spans
        // that tensor's layout in its data type; inputs and outputs are distinct allocations that
        // live until after the call; the workspace holds `plan.workspace_size()` bytes.
        unsafe {
            plan.execute(
                &self.handle,
                &bindings,
                workspace.as_mut_ptr(),
                workspace.len(),
            )
        }
        .map_err(|e| format!("{who}: execute failed: {e}"))?;
        self.check_inputs_kept(&who, &inputs)?;
        for h in &outputs {
            check_padding_untouched(&who, h)?;
        }
        Ok(outputs)
    }

    /// One configuration per non-default value tried for each knob of `config`'s engine (one
    /// knob changed at a time): the minimum, the smallest step above it, and the maximum.
    pub fn knob_variants(&self, config: &EngineConfig) -> Vec<EngineConfig> {
        let Some(info) = self.handle.engine(config.engine_id) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for k in &info.knobs {
            let step = k.stride.max(1);
            let mut values = vec![k.min, k.min.saturating_add(step), k.max];
            values.dedup();
            for v in values {
                if v != k.default && v >= k.min && v <= k.max {
                    let mut c = config.clone();
                    c.knobs = vec![(k.id, v)];
                    out.push(c);
                }
            }
        }
        out
    }

    /// Compares `got` (outputs of `who`) with `want` (the reference's), output by output.
    pub fn compare(
        &self,
        who: &str,
        got: &[HostTensor],
        want: &[HostTensor],
    ) -> Result<(), String> {
        for (g, w) in got.iter().zip(want) {
            let tol = self.case.tolerance_for(w.desc().data_type);
            compare_values(who, w.desc(), &g.to_f64_vec(), &w.to_f64_vec(), tol)?;
        }
        Ok(())
    }
}

/// 64-byte aligned scratch memory for a plan's workspace.
struct Scratch {
    chunks: Vec<[u128; 4]>,
    len: usize,
}

impl Scratch {
    fn new(len: usize) -> Scratch {
        Scratch {
            chunks: vec![[0u128; 4]; len.div_ceil(64)],
            len,
        }
    }
    fn as_mut_ptr(&mut self) -> *mut c_void {
        if self.len == 0 {
            std::ptr::null_mut()
        } else {
            self.chunks.as_mut_ptr() as *mut c_void
        }
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// Runs `case` on every engine that claims it and compares each output with the reference
/// engine's, on inputs drawn from `seed`.
///
/// Fails (with a message naming the engine, the case, the output and its worst element) when:
/// no engine or not the reference claims the case; an expected engine does not claim it; a
/// claimed engine does not build or run; an output differs beyond the case's tolerance (each
/// engine's default configuration and each non-default knob value); an engine that declares
/// itself deterministic gives different bytes on a second run; an engine changes an input or
/// writes into the padding of an output; the reference produces a non-finite value where the
/// case does not allow it.
pub fn check(case: &mut Case, seed: u64) -> Result<Outcome, String> {
    let mut session = Session::open(case, seed)?;
    check_session(&mut session)
}

/// [`check`] on an opened session, whose inputs the caller may have replaced (special values,
/// inputs shared with another case).
pub fn check_session(session: &mut Session<'_>) -> Result<Outcome, String> {
    let claimed: Vec<String> = session.claimed().into_iter().map(String::from).collect();
    let name = session.case().name.clone();
    if claimed.is_empty() {
        return Err(format!("case '{name}': no engine claims it"));
    }
    if !claimed.iter().any(|c| c == REFERENCE) {
        return Err(format!("case '{name}': the reference engine {REFERENCE} does not claim it; claimed: {claimed:?}"));
    }
    for e in session.case().expected.clone() {
        if !claimed.contains(&e) {
            return Err(format!(
                "case '{name}': engine {e} should claim it but does not; claimed: {claimed:?}"
            ));
        }
    }
    let want = session.run(REFERENCE)?;
    if !session.case().allow_non_finite {
        for w in &want {
            if let Some(i) = w.to_f64_vec().iter().position(|v| !v.is_finite()) {
                return Err(format!(
                    "case '{name}': the reference wrote {} at index {:?} of output {}: the case's input domains leave \
                     the range where comparisons are meaningful",
                    w.to_f64_vec()[i],
                    crate::compare::unravel(i, &w.desc().dims),
                    w.desc().label()
                ));
            }
        }
    }
    let mut runs = 0;
    for config in session.configs.clone() {
        if config.engine_name == REFERENCE {
            continue;
        }
        let who = session.label(&config.engine_name, &[]);
        let got = session.run(&config.engine_name)?;
        session.compare(&who, &got, &want)?;
        runs += 1;
        if config.has_note(BehaviorNote::Deterministic) {
            let again = session.run(&config.engine_name)?;
            for (a, b) in got.iter().zip(&again) {
                if a.bytes() != b.bytes() {
                    return Err(format!(
                        "{who}: declares itself deterministic but two runs wrote different bytes to output {}",
                        a.desc().label()
                    ));
                }
            }
        }
        for variant in session.knob_variants(&config) {
            let who = session.label(&variant.engine_name, &variant.knobs);
            let got = session.run_config(&variant)?;
            session.compare(&who, &got, &want)?;
            runs += 1;
        }
    }
    if std::env::var_os(VERBOSE_ENV).is_some() {
        eprintln!(
            "conformance: case '{name}': claimed by {claimed:?}; {runs} engine runs compared"
        );
    }
    Ok(Outcome { claimed, runs })
}

/// Set this environment variable to have [`check`] print each passing case, the engines that
/// claimed it and how many runs were compared.
pub const VERBOSE_ENV: &str = "KILN_CONFORMANCE_VERBOSE";
