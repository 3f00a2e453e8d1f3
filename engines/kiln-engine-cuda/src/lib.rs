//! kiln's CUDA kernel provider.
//!
//! Generates CUDA C specialised to a graph's shapes, strides and data types, compiles it with
//! NVRTC to a cubin for the exact target architecture, runs it, and saves plans that carry the
//! code object, so that a loaded plan runs without compiling anything. Engines:
//! - `KILN_CUDA_POINTWISE_V1`: any chain of pointwise nodes, fused into one kernel;
//! - `KILN_CUDA_MATMUL_V1`: batched matmul with a fused pointwise epilogue;
//! - `KILN_CUDA_CONV_FPROP_V1`: 2-D forward convolution (implicit GEMM) with a fused epilogue;
//! - `KILN_CUDA_NORM_V1`: the normalizations (forward, inference, backward), a forward's `y`
//!   followed by a fused pointwise chain.
//!
//! The driver (through the `kiln-cuda-driver` crate, which the frontend's device buffers share)
//! and NVRTC are loaded at run time (cudarc `dynamic-loading`) and checked before
//! any CUDA call: without them, instances are refused with "CUDA engine not available: ..." and
//! the rest of kiln works as before. Plans can be built for a named architecture with no GPU
//! (a `KILN_DEVICE_CUDA_TARGET` instance; NVRTC only). See docs/engines/cuda.md.

pub mod availability;
pub mod codegen;
pub mod compile;
mod generated;
pub mod kernel_cache;
pub mod payload;

use kiln_core::{engine_id, OpGraph};
use kiln_cuda_driver::{DeviceContext, Module};
use kiln_plugin_sdk::{
    abi, Device, EngineDescriptor, EnginePlugin, KilnTensorBinding, KnobSetting, PluginError,
    PluginResult, TensorExtent,
};
use payload::{Argument, CodeObject, Launch, Payload, TensorSig};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Plugin name, as saved in plan envelopes.
pub const PLUGIN_NAME: &str = "kiln-cuda";
/// Plugin version, as saved in plan envelopes and payloads (diagnostic).
pub const PLUGIN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Engine names (versioned; the engine ID is the FNV-1a hash of the name).
pub const POINTWISE_V1: &str = "KILN_CUDA_POINTWISE_V1";
pub const MATMUL_V1: &str = "KILN_CUDA_MATMUL_V1";
pub const CONV_FPROP_V1: &str = "KILN_CUDA_CONV_FPROP_V1";
pub const NORM_V1: &str = "KILN_CUDA_NORM_V1";
const ENGINES: [&str; 4] = [POINTWISE_V1, MATMUL_V1, CONV_FPROP_V1, NORM_V1];

fn supports(name: &str, graph: &OpGraph) -> Result<(), String> {
    match name {
        POINTWISE_V1 => codegen::pointwise::supports(graph),
        MATMUL_V1 => codegen::gemm::supports(graph, false),
        CONV_FPROP_V1 => codegen::gemm::supports(graph, true),
        NORM_V1 => codegen::norm::supports(graph),
        other => Err(format!("{other} is not an engine of {PLUGIN_NAME}")),
    }
}

/// Generates the kernels of engine `name` for `graph`.
pub fn generate(name: &str, graph: &OpGraph) -> Result<Vec<codegen::Kernel>, String> {
    let k = match name {
        POINTWISE_V1 => codegen::pointwise::generate(graph)?,
        MATMUL_V1 => codegen::gemm::generate(graph, false)?,
        CONV_FPROP_V1 => codegen::gemm::generate(graph, true)?,
        NORM_V1 => return codegen::norm::generate(graph),
        other => return Err(format!("{other} is not an engine of {PLUGIN_NAME}")),
    };
    Ok(vec![k])
}

fn engine_name(id: u64) -> PluginResult<&'static str> {
    ENGINES
        .into_iter()
        .find(|n| engine_id(n) == id)
        .ok_or_else(|| PluginError::bad_param(format!("{PLUGIN_NAME}: no engine with id {id:#x}")))
}

/// Where an instance's plans run.
enum Target {
    /// A device: plans are built, loaded and executed on it.
    Device(DeviceContext),
    /// An architecture with no device: plans are built and saved, never executed.
    Arch(u32),
}

/// The provider's per-handle instance.
pub struct CudaPlugin {
    target: Target,
    stream: AtomicPtr<c_void>,
}

/// A built or restored plan: what execute needs, the payload of a built plan (what its save
/// writes), and the loaded modules when the instance has a device.
pub struct CudaContext {
    pub engine_name: String,
    pub workspace: u64,
    pub launches: Vec<Launch>,
    /// The bound tensors as the payload records them (what the launches may touch).
    pub tensors: Vec<TensorSig>,
    /// Per launch: (module index, function index in that module).
    functions: Vec<(usize, usize)>,
    /// The payload of a built plan; `None` for a restored one (the backend re-saves restored
    /// plans from their loaded bytes, and the SDK never asks this provider to save them).
    built: Option<Payload<'static>>,
    modules: Vec<Module>,
}

impl CudaPlugin {
    fn arch(&self) -> u32 {
        match &self.target {
            Target::Device(d) => d.arch,
            Target::Arch(a) => *a,
        }
    }

    fn where_(&self) -> String {
        match &self.target {
            Target::Device(d) => format!("cuda:{} (sm_{})", d.ordinal, d.arch),
            Target::Arch(a) => format!("the deviceless target sm_{a}"),
        }
    }

    /// Device arch check, signature check and module load (the device-dependent load steps
    /// 10 to 12). Code objects are read in place from `payload` (no copy when aligned).
    fn prepare(
        &self,
        payload: &Payload<'_>,
        built: Option<Payload<'static>>,
    ) -> PluginResult<CudaContext> {
        let here = self.arch();
        let mut images: Vec<&[u8]> = Vec::new();
        for (i, c) in payload.code_objects.iter().enumerate() {
            if c.arch == here {
                images.push(&c.cubin);
            } else if !c.ptx.is_empty() && here > c.arch {
                images.push(&c.ptx);
            } else {
                let has = if c.ptx.is_empty() {
                    "without PTX".to_string()
                } else {
                    format!("with PTX for sm_{} and newer", c.arch)
                };
                return Err(PluginError::not_applicable(format!(
                    "{PLUGIN_NAME}: code object {i} was compiled for sm_{} {has}; this plan cannot run on {}",
                    c.arch,
                    self.where_()
                )));
            }
        }
        for (i, l) in payload.launches.iter().enumerate() {
            for (j, a) in l.args.iter().enumerate() {
                if let Argument::Tensor(uid) = a {
                    if !payload.tensors.iter().any(|t| t.uid == *uid) {
                        return Err(payload::damaged(format!(
                            "launch {i} argument {j} names tensor uid {uid}, which the plan does not list"
                        )));
                    }
                }
            }
        }
        // Each launch's function: its index among the distinct symbols of its code object.
        let mut symbols: Vec<Vec<&str>> = vec![Vec::new(); images.len()];
        let mut functions = Vec::with_capacity(payload.launches.len());
        for l in &payload.launches {
            let m = l.code_object as usize;
            let list = &mut symbols[m];
            let f = match list.iter().position(|s| *s == l.symbol) {
                Some(f) => f,
                None => {
                    list.push(&l.symbol);
                    list.len() - 1
                }
            };
            functions.push((m, f));
        }
        let mut modules = Vec::new();
        if let Target::Device(dev) = &self.target {
            for (image, symbols) in images.iter().zip(&symbols) {
                let m = Module::load(dev, image, symbols)
                    .map_err(|e| PluginError::not_applicable(format!("{PLUGIN_NAME}: {e}")))?;
                modules.push(m);
            }
        }
        Ok(CudaContext {
            engine_name: payload.engine_name.clone(),
            workspace: payload.workspace,
            launches: payload.launches.clone(),
            tensors: payload.tensors.clone(),
            functions,
            built,
            modules,
        })
    }
}

impl EnginePlugin for CudaPlugin {
    type Context = CudaContext;
    const NAME: &'static str = PLUGIN_NAME;
    const VERSION: &'static str = PLUGIN_VERSION;
    const SUPPORTS_SERIALIZATION: bool = true;

    fn engines() -> Vec<EngineDescriptor> {
        ENGINES
            .into_iter()
            .map(|name| EngineDescriptor {
                name,
                behavior_notes: abi::KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
                    | abi::KILN_BEHAVIOR_DETERMINISTIC,
                knobs: Vec::new(),
            })
            .collect()
    }

    fn create(device: Device) -> PluginResult<Self> {
        match device {
            Device::Cpu => Err(PluginError::not_supported(format!(
                "{PLUGIN_NAME}: runs on CUDA devices, not the CPU"
            ))),
            Device::Cuda(n) => {
                let d = DeviceContext::new(n).map_err(PluginError::not_supported)?;
                Ok(CudaPlugin {
                    target: Target::Device(d),
                    stream: AtomicPtr::new(std::ptr::null_mut()),
                })
            }
        }
    }

    fn create_for_target(arch: i32) -> PluginResult<Self> {
        if !(10..=999).contains(&arch) {
            return Err(PluginError::bad_param(format!(
                "{PLUGIN_NAME}: sm_{arch} is not an architecture"
            )));
        }
        availability::nvrtc()
            .map_err(|e| PluginError::not_supported(format!("CUDA engine not available: {e}")))?;
        Ok(CudaPlugin {
            target: Target::Arch(arch as u32),
            stream: AtomicPtr::new(std::ptr::null_mut()),
        })
    }

    fn set_stream(&self, stream: *mut c_void) -> PluginResult<()> {
        self.stream.store(stream, Ordering::Release);
        Ok(())
    }

    fn applicable_engines(&self, graph: &OpGraph) -> Vec<u64> {
        ENGINES
            .into_iter()
            .filter(|n| supports(n, graph).is_ok())
            .map(engine_id)
            .collect()
    }

    fn create_context(
        &self,
        id: u64,
        knobs: &[KnobSetting],
        graph: &OpGraph,
    ) -> PluginResult<CudaContext> {
        let name = engine_name(id)?;
        if let Some(k) = knobs.first() {
            return Err(PluginError::bad_param(format!(
                "{name}: no knob with id {}",
                k.knob_id
            )));
        }
        supports(name, graph)
            .map_err(|why| PluginError::not_supported(format!("{name}: {why}")))?;
        let nvrtc = availability::nvrtc()
            .map_err(|e| PluginError::not_supported(format!("CUDA engine not available: {e}")))?;
        let arch = self.arch();
        let with_ptx = std::env::var("KILN_CUDA_WITH_PTX").is_ok_and(|v| v == "1");
        let kernels = generate(name, graph)
            .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?;
        let mut code_objects = Vec::new();
        let mut launches = Vec::new();
        for k in &kernels {
            let c = compile::compile(&k.source, &format!("{}.cu", k.symbol), arch, with_ptx)
                .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?;
            let mut ptx = c.ptx;
            if !ptx.is_empty() && ptx.last() != Some(&0) {
                ptx.push(0);
            }
            code_objects.push(CodeObject::new(arch, c.cubin, ptx));
            launches.push(Launch {
                code_object: (code_objects.len() - 1) as u32,
                symbol: k.symbol.clone(),
                grid: k.grid,
                block: k.block,
                shared_bytes: k.shared_bytes,
                args: k.args.iter().map(|&u| Argument::Tensor(u)).collect(),
            });
        }
        let tensors = graph
            .bound_tensors()
            .map(|t| TensorSig {
                uid: t.uid,
                data_type: t.data_type,
                storage_bytes: t.storage_bytes().unwrap_or(0) as u64,
            })
            .collect();
        let payload = Payload {
            engine_name: name.to_string(),
            provider_version: PLUGIN_VERSION.to_string(),
            nvrtc_version: (nvrtc.0 as u32, nvrtc.1 as u32),
            workspace: 0,
            tensors,
            code_objects,
            launches,
        };
        self.prepare(&payload, Some(payload.clone()))
    }

    fn serialize_context(&self, _engine_id: u64, context: &CudaContext) -> PluginResult<Vec<u8>> {
        let p = context.built.as_ref().ok_or_else(|| {
            PluginError::internal(format!(
                "{PLUGIN_NAME}: {}",
                kiln_plugin_sdk::RESTORED_CONTEXT_SAVE_REFUSAL
            ))
        })?;
        Ok(payload::encode(p))
    }

    fn restore_context(&self, id: u64, bytes: &[u8]) -> PluginResult<CudaContext> {
        let p = payload::decode(bytes)?;
        // Engine present.
        let name = ENGINES.into_iter().find(|n| *n == p.engine_name).ok_or_else(|| {
            PluginError::not_applicable(format!(
                "{PLUGIN_NAME} {PLUGIN_VERSION} has no engine {} (the plan was built by provider {})",
                p.engine_name, p.provider_version
            ))
        })?;
        if engine_id(name) != id {
            return Err(payload::damaged(format!(
                "the payload is for engine {name} but the plan envelope names engine {id:#x}"
            )));
        }
        self.prepare(&p, None)
    }

    /// What a saved plan holds and needs (archs, code objects, versions, launches), without a
    /// device or NVRTC.
    fn describe_payload(engine_id: u64, bytes: &[u8]) -> PluginResult<String> {
        payload::describe(bytes, engine_id, |name| ENGINES.contains(&name))
    }

    /// The tensors the payload records, with the sizes its kernels were specialised to; the
    /// backend checks them against the envelope at every restore.
    fn context_tensors(&self, context: &CudaContext) -> PluginResult<Vec<TensorExtent>> {
        Ok(context
            .tensors
            .iter()
            .map(|t| TensorExtent {
                uid: t.uid,
                data_type: t.data_type,
                storage_bytes: t.storage_bytes,
            })
            .collect())
    }

    fn workspace_size(&self, context: &CudaContext) -> usize {
        context.workspace as usize
    }

    unsafe fn execute(
        &self,
        context: &CudaContext,
        bindings: &[KilnTensorBinding],
        _workspace: *mut u8,
    ) -> PluginResult<()> {
        if !matches!(self.target, Target::Device(_)) {
            return Err(PluginError::not_supported(format!(
                "{PLUGIN_NAME}: {} has no device; load the plan with a handle on a CUDA device to run it",
                self.where_()
            )));
        }
        let stream = self.stream.load(Ordering::Acquire) as cudarc::driver::sys::CUstream;
        for (l, &(m, f)) in context.launches.iter().zip(&context.functions) {
            let mut args = Vec::with_capacity(l.args.len());
            for a in &l.args {
                let uid = match *a {
                    Argument::Tensor(uid) => uid,
                    Argument::Scalar32(v) => {
                        args.push(v as u64);
                        continue;
                    }
                    Argument::Scalar64(v) => {
                        args.push(v);
                        continue;
                    }
                };
                let b = bindings.iter().find(|b| b.uid == uid).ok_or_else(|| {
                    PluginError::bad_param(format!(
                        "{}: tensor uid {uid} is not bound",
                        context.engine_name
                    ))
                })?;
                if b.ptr.is_null() {
                    return Err(PluginError::bad_param(format!(
                        "tensor uid {uid} is bound to a null pointer"
                    )));
                }
                args.push(b.ptr as u64);
            }
            let module = context
                .modules
                .get(m)
                .ok_or_else(|| PluginError::internal("no module for a launch"))?;
            // SAFETY: the host checked every pointer against the plan's tensors (execute's
            // contract); the arguments follow the kernel's parameter order recorded at build; a
            // 4-byte scalar sits in the low (first, little-endian) bytes of its u64 slot.
            unsafe { module.launch(f, l.grid, l.block, l.shared_bytes, stream, &args) }
                .map_err(PluginError::execution_failed)?;
        }
        Ok(())
    }
}

/// Process-wide counters: NVRTC compilations and kernel-cache hits (a loaded plan adds to
/// neither).
pub fn stats() -> (u64, u64) {
    (compile::compile_count(), kernel_cache::hits())
}

/// This plugin's C function table (what the backend registers as a built-in).
pub fn plugin_table() -> &'static abi::KilnPluginTable {
    kiln_plugin_sdk::plugin_table::<CudaPlugin>()
}

/// The plugin entry point of the shared library, built with the `entry-point` feature
/// (`cargo build -p kiln-engine-cuda --features entry-point`). It is off by default because
/// the CPU plugin's rlib exports the same symbol and both are linked into one program when
/// the backend registers them as built-ins.
///
/// # Safety
/// Callable from any thread; takes no pointers.
#[cfg(feature = "entry-point")]
#[no_mangle]
pub unsafe extern "C" fn kiln_engine_plugin_v1(host_abi_major: u32) -> *const abi::KilnPluginTable {
    if host_abi_major != abi::KILN_PLUGIN_ABI_MAJOR {
        return std::ptr::null();
    }
    plugin_table() as *const _
}
