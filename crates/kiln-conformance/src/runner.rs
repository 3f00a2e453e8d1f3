//! Running a case on every engine that claims it and comparing with the reference engine.

use crate::compare::{check_padding_untouched, check_written, compare_values};
use crate::device::{device_under_test, handle_on};
use crate::summary::{self, Status};
use crate::{Case, Domain, REFERENCE};
use kiln::{
    BehaviorNote, BuildPlanPolicy, DataType, Device, EngineConfig, ExecutionPlan, Handle, HeurMode,
    HostTensor, VariantPack, Workspace,
};
use std::ffi::c_void;

/// What [`check`] did for a case that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The device whose engines were under test.
    pub device: Device,
    /// The engines that claimed the case: on the CPU every claiming engine in heuristic order
    /// (the reference among them); on another device the reference (which runs on the CPU)
    /// followed by the device's claiming engines in heuristic order.
    pub claimed: Vec<String>,
    /// Engine runs compared with the reference (each engine's default configuration, plus one
    /// per non-default knob value).
    pub runs: usize,
    /// Per engine under test (every claiming engine but the reference), its runs compared.
    pub compared: Vec<(String, usize)>,
}

impl Outcome {
    /// False when the device under test is not the CPU and none of its engines claims the case:
    /// nothing was compared, and the run's summary lists the case as not claimed there.
    pub fn claimed_on_device(&self) -> bool {
        self.device == Device::Cpu || !self.compared.is_empty()
    }
}

/// What an output's memory holds before an engine writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Poison {
    /// Finite values far from anything an engine computes ([`STALE_OUTPUT`]).
    Stale,
    /// NaN in every element (device runs): an element left unwritten stays NaN.
    Nan,
}

/// The poison of an element of type `dt`: NaN where the type holds one; for the integral types
/// a value no case computes (bool holds only 0 and 1: 1, the less common result of a mask).
fn nan_of(dt: DataType) -> f64 {
    match dt {
        DataType::F32
        | DataType::F16
        | DataType::Bf16
        | DataType::F64
        | DataType::Fp8E4m3
        | DataType::Fp8E5m2 => f64::NAN,
        DataType::Boolean => 1.0,
        DataType::I8 => -77.0,
        DataType::I32 => -777_777.0,
    }
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
    /// The device under test.
    device: Device,
    /// A handle on the device under test (the reference handle when that is the CPU).
    handle: Handle,
    /// The CPU handle the reference engine runs on.
    reference: Handle,
    /// The configurations claiming the case on the device under test, in heuristic order.
    configs: Vec<EngineConfig>,
    /// The configurations claiming the case on the CPU (the same as `configs` there).
    reference_configs: Vec<EngineConfig>,
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

/// Lowers `case`'s validated graph for `handle` and returns the configurations claiming it
/// there (heuristics mode A), in order.
fn lower(case: &mut Case, handle: &Handle) -> Result<Vec<EngineConfig>, String> {
    let device = handle.device();
    case.graph
        .build_operation_graph(handle)
        .map_err(|e| fail(case, &format!("build_operation_graph on {device}"), e))?;
    case.graph
        .create_execution_plans(&[HeurMode::A])
        .map_err(|e| fail(case, &format!("create_execution_plans on {device}"), e))?;
    case.graph.deselect_engines(&[]);
    Ok(case
        .graph
        .candidate_configs()
        .into_iter()
        .cloned()
        .collect())
}

impl<'c> Session<'c> {
    /// [`Session::open_on`] the device under test named by [`crate::DEVICE_ENV`] (the CPU when
    /// unset).
    pub fn open(case: &'c mut Case, seed: u64) -> Result<Session<'c>, String> {
        let device = device_under_test().map_err(|e| fail(case, "device under test", e))?;
        Session::open_on(case, seed, device)
    }

    /// Validates `case`'s graph, lowers it for a CPU handle and for `device`, asks the
    /// heuristics (mode A) for every engine that claims it on each, and draws the inputs from
    /// `seed`. The reference engine runs on the CPU; the engines under test on `device`.
    ///
    /// Refuses a case whose bound tensors are not exactly its declared inputs and outputs, and
    /// a device with no handle here (no CUDA driver, say).
    pub fn open_on(case: &'c mut Case, seed: u64, device: Device) -> Result<Session<'c>, String> {
        let reference = handle_on(Device::Cpu).map_err(|e| fail(case, "reference", e))?;
        let handle = if device == Device::Cpu {
            reference.clone()
        } else {
            handle_on(device).map_err(|e| fail(case, "device under test", e))?
        };
        case.graph
            .validate()
            .map_err(|e| fail(case, "the graph does not validate", e))?;
        let reference_configs = lower(case, &reference)?;
        let configs = if device == Device::Cpu {
            reference_configs.clone()
        } else {
            // The frontend graph stays lowered for the device under test: engines under test
            // run through it, the reference through the backend on the CPU handle.
            lower(case, &handle)?
        };
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
            device,
            handle,
            reference,
            configs,
            reference_configs,
            inputs,
            seed,
        })
    }

    /// The device under test.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The engines that claim the case, in heuristic order: on the CPU every claiming engine;
    /// on another device the reference (run on the CPU) first, then the device's engines.
    pub fn claimed(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        if self.device != Device::Cpu && self.claims_on_cpu(REFERENCE) {
            out.push(REFERENCE);
        }
        out.extend(self.configs.iter().map(|c| c.engine_name.as_str()));
        out
    }

    fn claims_on_device(&self, engine: &str) -> bool {
        self.configs.iter().any(|c| c.engine_name == engine)
    }

    fn claims_on_cpu(&self, engine: &str) -> bool {
        self.reference_configs
            .iter()
            .any(|c| c.engine_name == engine)
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

    /// Output memory before an engine runs: every element poisoned, the padding between
    /// strided elements zero (so that a write into it shows).
    fn fresh_outputs(&self, poison: Poison) -> Result<Vec<HostTensor>, String> {
        self.case
            .outputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let desc = t.desc().map_err(|e| fail(self.case, "output", e))?;
                match poison {
                    Poison::Stale => random_tensor(&desc, STALE_OUTPUT, mix(!self.seed, i)),
                    Poison::Nan => HostTensor::zeros(&desc)
                        .and_then(|mut h| {
                            let n = desc.element_count().unwrap_or(0);
                            h.fill_from_f64(&vec![nan_of(desc.data_type); n])?;
                            Ok(h)
                        })
                        .map_err(|e| e.to_string()),
                }
                .map_err(|e| fail(self.case, "output", e))
            })
            .collect()
    }

    /// The poison of a first run: NaN on a device, stale values on the CPU (as the CPU engines
    /// have always been checked).
    fn first_poison(&self) -> Poison {
        if self.device == Device::Cpu {
            Poison::Stale
        } else {
            Poison::Nan
        }
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

    /// Runs the case on `engine` and returns its outputs, in declaration order: an engine of
    /// the device under test through the frontend (`deselect_engines` of every other engine,
    /// `build_plans`, `execute`; on a GPU with device memory, inputs copied up and outputs
    /// poisoned with NaN), an engine claiming the case only on the CPU (the reference, when the
    /// device under test is a GPU) through the backend on the CPU handle.
    ///
    /// Besides the engine's own errors, fails when it changed an input or wrote into the
    /// padding of an output.
    pub fn run(&mut self, engine: &str) -> Result<Vec<HostTensor>, String> {
        let poison = self.first_poison();
        self.run_poisoned(engine, poison)
    }

    fn run_poisoned(&mut self, engine: &str, poison: Poison) -> Result<Vec<HostTensor>, String> {
        if self.device != Device::Cpu && !self.claims_on_device(engine) {
            let config = self
                .reference_configs
                .iter()
                .find(|c| c.engine_name == engine)
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "{}: claims the case neither on {} nor on the CPU",
                        self.label(engine, &[]),
                        self.device
                    )
                })?;
            return self.run_config(&config);
        }
        self.run_frontend(engine, poison)
    }

    /// Builds the plan of `engine` through the frontend (which must select it).
    fn build_frontend(&mut self, engine: &str) -> Result<(), String> {
        let who = self.label(engine, &[]);
        let others: Vec<String> = self
            .configs
            .iter()
            .map(|c| c.engine_name.clone())
            .filter(|n| n != engine)
            .collect();
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
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
        Ok(())
    }

    fn run_frontend(&mut self, engine: &str, poison: Poison) -> Result<Vec<HostTensor>, String> {
        self.build_frontend(engine)?;
        let who = self.label(engine, &[]);
        match self.device {
            Device::Cpu => self.execute_frontend_on_host(&who, poison),
            #[cfg(feature = "cuda")]
            Device::Cuda(ordinal) => self.execute_frontend_on_cuda(&who, ordinal, poison),
            other => Err(format!(
                "{who}: this build of kiln-conformance cannot run engines on {other} (the CUDA \
                 path needs `--features cuda`)"
            )),
        }
    }

    fn execute_frontend_on_host(
        &mut self,
        who: &str,
        poison: Poison,
    ) -> Result<Vec<HostTensor>, String> {
        let mut inputs = self.inputs.clone();
        let mut outputs = self.fresh_outputs(poison)?;
        let graph = &self.case.graph;
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
        self.check_inputs_kept(who, &inputs)?;
        for h in &outputs {
            check_padding_untouched(who, h)?;
        }
        Ok(outputs)
    }

    /// Runs the plan the frontend built on `cuda:ordinal` with device memory: through
    /// `Graph::execute` with device tensors in the variant pack, or through the backend with a
    /// device workspace when the plan asks for one (the frontend's workspace is host memory).
    #[cfg(feature = "cuda")]
    fn execute_frontend_on_cuda(
        &self,
        who: &str,
        ordinal: u32,
        poison: Poison,
    ) -> Result<Vec<HostTensor>, String> {
        let graph = &self.case.graph;
        let plan = graph
            .plan()
            .ok_or_else(|| format!("{who}: no plan after build_plans"))?;
        if plan.workspace_size() > 0 {
            return self.execute_plan_on_device(who, plan, poison);
        }
        let outputs = self.fresh_outputs(poison)?;
        let mut mem = crate::device_memory::DeviceBuffers::upload(&self.inputs, &outputs, ordinal)
            .map_err(|e| format!("{who}: {e}"))?;
        let mut workspace = Workspace::new(0).map_err(|e| format!("{who}: workspace: {e}"))?;
        {
            let mut pack = VariantPack::new();
            for ((t, _), d) in self.case.inputs.iter().zip(mem.inputs.iter_mut()) {
                pack.insert_device(t, d);
            }
            for (t, d) in self.case.outputs.iter().zip(mem.outputs.iter_mut()) {
                pack.insert_device(t, d);
            }
            graph
                .execute(&self.handle, &mut pack, &mut workspace)
                .map_err(|e| format!("{who}: execute failed: {e}"))?;
        }
        self.collect_from_device(who, &mem)
    }

    /// Runs `plan` (built on the device under test) through the backend with device memory
    /// and, when it asks for one, a device workspace.
    #[cfg(feature = "cuda")]
    fn execute_plan_on_device(
        &self,
        who: &str,
        plan: &ExecutionPlan,
        poison: Poison,
    ) -> Result<Vec<HostTensor>, String> {
        let Device::Cuda(ordinal) = self.device else {
            return Err(format!("{who}: {} is not a CUDA device", self.device));
        };
        let outputs = self.fresh_outputs(poison)?;
        let mem = crate::device_memory::DeviceBuffers::upload(&self.inputs, &outputs, ordinal)
            .map_err(|e| format!("{who}: {e}"))?;
        let scratch = crate::device_memory::workspace(plan.workspace_size(), ordinal)
            .map_err(|e| format!("{who}: {e}"))?;
        let bindings: Vec<(i64, *mut c_void)> = mem
            .inputs
            .iter()
            .chain(&mem.outputs)
            .map(|d| (d.desc().uid, d.device_ptr() as *mut c_void))
            .collect();
        let (ws_ptr, ws_len) = match &scratch {
            Some(w) => (w.device_ptr() as *mut c_void, plan.workspace_size()),
            None => (std::ptr::null_mut(), 0),
        };
        // SAFETY: every pointer is device memory on the plan's device, allocated for the graph's
        // own TensorDesc of its uid (so it spans that tensor's layout in its data type); the
        // buffers are distinct and live in `mem` and `scratch` until after the call; the
        // workspace holds at least `plan.workspace_size()` bytes.
        unsafe { plan.execute(&self.handle, &bindings, ws_ptr, ws_len) }
            .map_err(|e| format!("{who}: execute failed: {e}"))?;
        self.collect_from_device(who, &mem)
    }

    /// Without the `cuda` feature there is no device memory to run a device plan on.
    #[cfg(not(feature = "cuda"))]
    fn execute_plan_on_device(
        &self,
        who: &str,
        _plan: &ExecutionPlan,
        _poison: Poison,
    ) -> Result<Vec<HostTensor>, String> {
        Err(format!(
            "{who}: this build of kiln-conformance has no device memory for {}; build it with \
             `--features cuda`",
            self.device
        ))
    }

    /// Copies inputs and outputs back and checks that the inputs kept their bytes and the
    /// outputs' padding stayed zero; returns the outputs.
    #[cfg(feature = "cuda")]
    fn collect_from_device(
        &self,
        who: &str,
        mem: &crate::device_memory::DeviceBuffers,
    ) -> Result<Vec<HostTensor>, String> {
        let inputs = mem.download_inputs().map_err(|e| format!("{who}: {e}"))?;
        self.check_inputs_kept(who, &inputs)?;
        let outputs = mem.download_outputs().map_err(|e| format!("{who}: {e}"))?;
        for h in &outputs {
            check_padding_untouched(who, h)?;
        }
        Ok(outputs)
    }

    /// Runs the case on engine configuration `config` (knobs included) through the backend's
    /// `ExecutionPlan` directly, since the frontend builds every engine with default knobs: on
    /// the device under test when one of its engines, else on the CPU.
    pub fn run_config(&self, config: &EngineConfig) -> Result<Vec<HostTensor>, String> {
        let who = self.label(&config.engine_name, &config.knobs);
        let on_device = self.device != Device::Cpu
            && self.configs.iter().any(|c| c.engine_id == config.engine_id);
        let handle = if on_device {
            &self.handle
        } else {
            &self.reference
        };
        let g = self
            .case
            .graph
            .op_graph()
            .ok_or_else(|| format!("{who}: the graph is not validated"))?;
        let blob = kiln_format::encode_graph(g);
        let plan = ExecutionPlan::build(handle, config, g, &blob)
            .map_err(|e| format!("{who}: plan did not build: {e}"))?;
        if on_device {
            return self.execute_plan_on_device(&who, &plan, self.first_poison());
        }
        let mut inputs = self.inputs.clone();
        let mut outputs = self.fresh_outputs(Poison::Stale)?;
        let mut workspace = Scratch::new(plan.workspace_size());
        let bindings: Vec<(i64, *mut c_void)> = inputs
            .iter_mut()
            .chain(outputs.iter_mut())
            .map(|h| (h.desc().uid, h.as_mut_ptr()))
            .collect();
        // SAFETY: every HostTensor was made for the graph's own TensorDesc of its uid, so it spans
        // that tensor's layout in its data type; inputs and outputs are distinct allocations that
        // live until after the call; the workspace holds `plan.workspace_size()` bytes.
        unsafe { plan.execute(handle, &bindings, workspace.as_mut_ptr(), workspace.len()) }
            .map_err(|e| format!("{who}: execute failed: {e}"))?;
        self.check_inputs_kept(&who, &inputs)?;
        for h in &outputs {
            check_padding_untouched(&who, h)?;
        }
        Ok(outputs)
    }

    /// One configuration per non-default value tried for each knob of `config`'s engine (one
    /// knob changed at a time): every value of a knob with at most eight (such as the CPU
    /// engines' `isa`, so that every instruction-set path runs, and the Hopper GEMM's `tile`,
    /// so that every tile configuration and schedule runs), otherwise the minimum, the smallest
    /// step above it, and the maximum.
    pub fn knob_variants(&self, config: &EngineConfig) -> Vec<EngineConfig> {
        let Some(info) = self
            .handle
            .engine(config.engine_id)
            .or_else(|| self.reference.engine(config.engine_id))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for k in &info.knobs {
            let step = k.stride.max(1);
            let count = k.max.saturating_sub(k.min) / step + 1;
            let mut values = if count <= 8 {
                (0..count).map(|i| k.min + i * step).collect()
            } else {
                vec![k.min, k.min.saturating_add(step), k.max]
            };
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
            let (g, w_values) = (g.to_f64_vec(), w.to_f64_vec());
            if self.device != Device::Cpu {
                check_written(who, w.desc(), &g, &w_values)?;
            }
            compare_values(who, w.desc(), &g, &w_values, tol)?;
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

/// Runs `case` on every engine that claims it on the device under test (named by
/// [`crate::DEVICE_ENV`], the CPU when unset) and compares each output with the reference
/// engine's (on the CPU), on inputs drawn from `seed`.
///
/// Fails (with a message naming the engine, the case, the output and its worst element) when:
/// the device under test is unknown or has no handle here; no engine or not the reference
/// claims the case; an expected engine of the device does not claim it; a claimed engine does
/// not build or run; an output differs beyond the case's tolerance (each engine's default
/// configuration and each non-default knob value); an output element keeps its NaN poison on a
/// device; an engine that declares itself deterministic gives different bytes on a second run;
/// an engine changes an input or writes into the padding of an output; the reference produces
/// a non-finite value where the case does not allow it. On a device other than the CPU, a case
/// none of its engines claims passes with nothing compared ([`Outcome::claimed_on_device`] is
/// false) and is listed as not claimed in the run's summary ([`crate::SUMMARY_ENV`]).
pub fn check(case: &mut Case, seed: u64) -> Result<Outcome, String> {
    match device_under_test() {
        Ok(device) => check_on(case, seed, device),
        Err(e) => {
            let e = fail(case, "device under test", e);
            summary::record(Device::Cpu, seed, &case.name, Status::Fail(&e));
            Err(e)
        }
    }
}

/// [`check`] with the engines of `device` under test, whatever the environment says.
pub fn check_on(case: &mut Case, seed: u64, device: Device) -> Result<Outcome, String> {
    let name = case.name.clone();
    let mut session = match Session::open_on(case, seed, device) {
        Ok(s) => s,
        Err(e) => {
            summary::record(device, seed, &name, Status::Fail(&e));
            return Err(e);
        }
    };
    check_session(&mut session)
}

/// [`check`] on an opened session, whose inputs the caller may have replaced (special values,
/// inputs shared with another case).
pub fn check_session(session: &mut Session<'_>) -> Result<Outcome, String> {
    let result = check_opened(session);
    let (device, seed, name) = (session.device, session.seed, session.case().name.clone());
    match &result {
        Ok(o) if o.claimed_on_device() => {
            summary::record(device, seed, &name, Status::Pass(&o.compared))
        }
        Ok(_) => summary::record(device, seed, &name, Status::NotClaimed),
        Err(e) => summary::record(device, seed, &name, Status::Fail(e)),
    }
    result
}

/// Whether the case's expectation that `engine` claims it applies on the device under test:
/// yes for an engine of the device's plugins, and for a name no registered plugin knows (so
/// that a misspelt expectation fails); no for an engine of a plugin not active on the device
/// (the CPU engines when a GPU is under test, the CUDA engines on the CPU).
fn expectation_applies(session: &Session<'_>, engine: &str) -> bool {
    let has = |h: &Handle| {
        h.plugins()
            .any(|p| p.engines().iter().any(|e| e.name == engine))
    };
    let known = |h: &Handle| {
        h.registry()
            .plugins()
            .iter()
            .any(|p| p.engines().iter().any(|e| e.name == engine))
    };
    has(&session.handle) || !(known(&session.handle) || known(&session.reference))
}

fn check_opened(session: &mut Session<'_>) -> Result<Outcome, String> {
    let claimed: Vec<String> = session.claimed().into_iter().map(String::from).collect();
    let name = session.case().name.clone();
    let device = session.device;
    if claimed.is_empty() {
        return Err(format!("case '{name}': no engine claims it"));
    }
    if !claimed.iter().any(|c| c == REFERENCE) {
        return Err(format!("case '{name}': the reference engine {REFERENCE} does not claim it; claimed: {claimed:?}"));
    }
    for e in session.case().expected.clone() {
        if !claimed.contains(&e) && expectation_applies(session, &e) {
            return Err(format!(
                "case '{name}': engine {e} should claim it on {device} but does not; claimed: {claimed:?}"
            ));
        }
    }
    let under_test: Vec<EngineConfig> = session
        .configs
        .iter()
        .filter(|c| c.engine_name != REFERENCE)
        .cloned()
        .collect();
    if device != Device::Cpu && under_test.is_empty() {
        if std::env::var_os(VERBOSE_ENV).is_some() {
            eprintln!("conformance: case '{name}': not claimed on {device}");
        }
        return Ok(Outcome {
            device,
            claimed,
            runs: 0,
            compared: Vec::new(),
        });
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
    let mut compared = Vec::new();
    for config in under_test {
        let who = session.label(&config.engine_name, &[]);
        let got = session.run(&config.engine_name)?;
        session.compare(&who, &got, &want)?;
        let mut engine_runs = 1;
        if config.has_note(BehaviorNote::Deterministic) {
            // The second run starts from stale values where the first started from the first
            // poison (NaN on a device), so an element left unwritten also shows here.
            let again = session.run_poisoned(&config.engine_name, Poison::Stale)?;
            for (a, b) in got.iter().zip(&again) {
                if a.bytes() != b.bytes() {
                    return Err(format!(
                        "{who}: declares itself deterministic but two runs wrote different bytes to output {} \
                         (the runs started from different output contents, so an element left unwritten shows too)",
                        a.desc().label()
                    ));
                }
            }
        }
        for variant in session.knob_variants(&config) {
            let who = session.label(&variant.engine_name, &variant.knobs);
            let got = session.run_config(&variant)?;
            session.compare(&who, &got, &want)?;
            engine_runs += 1;
        }
        runs += engine_runs;
        compared.push((config.engine_name.clone(), engine_runs));
    }
    if std::env::var_os(VERBOSE_ENV).is_some() {
        eprintln!(
            "conformance: case '{name}' on {device}: claimed by {claimed:?}; {runs} engine runs compared"
        );
    }
    Ok(Outcome {
        device,
        claimed,
        runs,
        compared,
    })
}

/// Set this environment variable to have [`check`] print each passing case, the engines that
/// claimed it and how many runs were compared.
pub const VERBOSE_ENV: &str = "KILN_CONFORMANCE_VERBOSE";
