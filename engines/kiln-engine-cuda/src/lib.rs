//! kiln's CUDA kernel provider.
//!
//! Generates CUDA C specialised to a graph's shapes, strides and data types, compiles it with
//! NVRTC to a cubin for the exact target architecture, runs it, and saves plans that carry the
//! code object, so that a loaded plan runs without compiling anything. Engines:
//! - `KILN_CUDA_POINTWISE_V1`: any chain of pointwise nodes, fused into one kernel;
//! - `KILN_CUDA_MATMUL_V1`: batched matmul with a fused pointwise epilogue;
//! - `KILN_CUDA_CONV_FPROP_V1`: 2-D forward convolution (implicit GEMM) with a fused epilogue;
//! - `KILN_CUDA_CONV_DGRAD_V1`, `KILN_CUDA_CONV_WGRAD_V1`: the 2-D convolution gradients
//!   (implicit GEMMs on the same kernel) with a fused epilogue; wgrad splits its long reduction
//!   over the plan's workspace (`codegen::conv_grad`).
//! - `KILN_CUDA_MATMUL_V2`, `KILN_CUDA_CONV_FPROP_V2`: the same operations on Hopper (sm_90a
//!   only): TMA, an mbarrier ring, warp-specialised wgmma, persistent tiles
//!   (`codegen::hopper`). The heuristics offer them first on compute capability 9.0.
//! - `KILN_CUDA_CONV_DGRAD_V2`, `KILN_CUDA_CONV_WGRAD_V2`: the convolution gradients on the
//!   Hopper GEMM (sm_90a only; `codegen::hopper_grad`), offered before their V1 engines.
//! - `KILN_CUDA_SDPA_FA3_V1`: the attention forward on Hopper (sm_90a only), FlashAttention-3's
//!   structure (`codegen::sdpa_fa3`); offered before FA2, which runs what it declines.
//! - `KILN_CUDA_SDPA_FA3_BACKWARD_V1`: the attention backward on Hopper (sm_90a only) in
//!   FlashAttention-3's structure (`codegen::sdpa_fa3_bwd`); offered before FA2.
//! - `KILN_CUDA_SDPA_FA2_V1`: attention (`sdpa`, `sdpa_backward`), FlashAttention-2 style.
//! - `KILN_CUDA_RESAMPLE_V1`: pooling (max with an optional index, average).
//! - `KILN_CUDA_RESAMPLE_BACKWARD_V1`: pooling's backward, gathered per dx element (no atomics).
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
pub mod tensor_map;

use kiln_core::{engine_id, ConvDirection, OpGraph};
use kiln_cuda_driver::{DeviceContext, Module};
use kiln_plugin_sdk::{
    abi, Device, EngineDescriptor, EnginePlugin, KilnTensorBinding, KnobDescriptor, KnobSetting,
    PluginError, PluginResult, TensorExtent,
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
pub const MATMUL_V2: &str = "KILN_CUDA_MATMUL_V2";
pub const CONV_FPROP_V2: &str = "KILN_CUDA_CONV_FPROP_V2";
pub const SDPA_FA3_V1: &str = "KILN_CUDA_SDPA_FA3_V1";
pub const SDPA_FA3_BWD_V1: &str = "KILN_CUDA_SDPA_FA3_BACKWARD_V1";
pub const SDPA_FA2_V1: &str = "KILN_CUDA_SDPA_FA2_V1";
pub const RESAMPLE_V1: &str = "KILN_CUDA_RESAMPLE_V1";
pub const NORM_V1: &str = "KILN_CUDA_NORM_V1";
pub const CONV_DGRAD_V1: &str = "KILN_CUDA_CONV_DGRAD_V1";
pub const CONV_WGRAD_V1: &str = "KILN_CUDA_CONV_WGRAD_V1";
pub const CONV_DGRAD_V2: &str = "KILN_CUDA_CONV_DGRAD_V2";
pub const CONV_WGRAD_V2: &str = "KILN_CUDA_CONV_WGRAD_V2";
pub const RESAMPLE_BACKWARD_V1: &str = "KILN_CUDA_RESAMPLE_BACKWARD_V1";
/// In the heuristics' order of preference: the Hopper engines before the portable ones.
const ENGINES: [&str; 15] = [
    POINTWISE_V1,
    MATMUL_V2,
    CONV_FPROP_V2,
    MATMUL_V1,
    CONV_FPROP_V1,
    SDPA_FA3_V1,
    CONV_DGRAD_V2,
    CONV_WGRAD_V2,
    SDPA_FA3_BWD_V1,
    CONV_DGRAD_V1,
    CONV_WGRAD_V1,
    SDPA_FA2_V1,
    RESAMPLE_V1,
    NORM_V1,
    RESAMPLE_BACKWARD_V1,
];

/// The V2 engines' knob: which tile configuration (`codegen::hopper::knob`: a configuration of
/// `CONFIGS`, with B in the ring or resident in shared memory, or a stream-K reduction; for
/// `KILN_CUDA_SDPA_FA3_V1`, `codegen::sdpa_fa3::VARIANTS[v - 1]`; for the gradient engines
/// `codegen::hopper_grad::knob`, whose wgrad values past the tiles add a stream-K reduction);
/// 0 lets the heuristic pick. `kiln build --autotune` times every value on the device and keeps the
/// fastest; the plan records the choice, so a load never tunes again.
pub const KNOB_TILE: i64 = 1;

/// `KILN_CUDA_NORM_V1`'s knob: 1 takes the wide kernels (16-byte accesses, a warp or block per
/// row, channels-last batchnorm; docs/norms.md) where the layout allows them; 2 (the default) the
/// same with their sm_90 forms (sm_90 and newer; on older targets 2 is 1): the per-sample
/// backward's rows staged in a shared-memory ring by the bulk copy engine, and the channels-last
/// batchnorm training forward as one cooperative kernel; 0 the scalar kernels everywhere (kept
/// to compare, and for the plans built before the wide ones).
pub const KNOB_NORM_WIDE: i64 = 2;

/// `KNOB_NORM_WIDE`'s default: the sm_90 kernels (the ring backward, 1.06-1.39x the register
/// path on the H200's 2^26-element cases; the cooperative batchnorm training kernel, 1.07x the
/// three kernels; docs/benchmarks/norms-h200-2026-12-04.md).
pub const NORM_WIDE_DEFAULT: i64 = 2;

/// `KILN_CUDA_RESAMPLE_BACKWARD_V1`'s knob: 1 (the default) takes the phase path where a 2-D
/// channel-vector backward's tiles fit (a thread per stride_h x stride_w tile of dx, its
/// windows constants of the kernel), 0 the gather over runs of positions along W (kept to
/// compare; docs/engines/cuda.md).
pub const KNOB_GATHER: i64 = 3;

/// `KNOB_GATHER`'s default: the phase path, 1.23-1.44x faster than the runs on the H200
/// (docs/benchmarks/pooling-notes.md, session 15).
pub const GATHER_DEFAULT: i64 = 1;

/// The SM number the V2 engines' code runs on.
pub const HOPPER_ARCH: u32 = 90;

/// Whether engine `name` can run `graph` on `sm_<arch>`, or why not.
pub fn supports(name: &str, graph: &OpGraph, arch: u32) -> Result<(), String> {
    if let Some(t) = graph
        .tensors
        .iter()
        .find(|t| codegen::workspace_offset(t.uid).is_some())
    {
        return Err(format!(
            "{} has uid {}; uids from -2^63 to -2^63 + 2^40 are reserved for this provider's \
             workspace arguments",
            t.label(),
            t.uid
        ));
    }
    let hopper = || {
        if arch == HOPPER_ARCH {
            Ok(())
        } else {
            Err(format!(
                "{name} runs on compute capability 9.0 (sm_90a) only, not sm_{arch}"
            ))
        }
    };
    match name {
        POINTWISE_V1 => codegen::pointwise::supports(graph),
        MATMUL_V1 => codegen::gemm::supports(graph, false),
        CONV_FPROP_V1 => codegen::gemm::supports(graph, true),
        CONV_DGRAD_V1 => codegen::conv_grad::supports(graph, ConvDirection::Dgrad),
        CONV_WGRAD_V1 => codegen::conv_grad::supports(graph, ConvDirection::Wgrad),
        MATMUL_V2 => hopper().and_then(|_| codegen::hopper::supports(graph, false)),
        CONV_FPROP_V2 => hopper().and_then(|_| codegen::hopper::supports(graph, true)),
        CONV_DGRAD_V2 => {
            hopper().and_then(|_| codegen::hopper_grad::supports(graph, ConvDirection::Dgrad))
        }
        CONV_WGRAD_V2 => {
            hopper().and_then(|_| codegen::hopper_grad::supports(graph, ConvDirection::Wgrad))
        }
        SDPA_FA3_V1 => hopper().and_then(|_| codegen::sdpa_fa3::supports(graph)),
        SDPA_FA3_BWD_V1 => hopper().and_then(|_| codegen::sdpa_fa3_bwd::supports(graph)),
        SDPA_FA2_V1 => codegen::sdpa::supports(graph),
        RESAMPLE_V1 => codegen::resample::supports(graph),
        RESAMPLE_BACKWARD_V1 => codegen::resample::supports_backward(graph),
        NORM_V1 => codegen::norm::supports(graph),
        other => Err(format!("{other} is not an engine of {PLUGIN_NAME}")),
    }
}

/// Generates the kernels of engine `name` for `graph`, with the V2 engines' tile knob `tile`
/// (0: the heuristic's choice).
pub fn generate_with(
    name: &str,
    graph: &OpGraph,
    tile: i64,
) -> Result<Vec<codegen::Kernel>, String> {
    if name == SDPA_FA3_V1 {
        let variant = match tile {
            0 => None,
            v => Some(
                *usize::try_from(v - 1)
                    .ok()
                    .and_then(|i| codegen::sdpa_fa3::VARIANTS.get(i))
                    .ok_or_else(|| format!("variant {v} does not exist"))?,
            ),
        };
        return Ok(vec![codegen::sdpa_fa3::generate(graph, variant)?]);
    }
    if name == CONV_DGRAD_V2 || name == CONV_WGRAD_V2 {
        let dir = if name == CONV_DGRAD_V2 {
            ConvDirection::Dgrad
        } else {
            ConvDirection::Wgrad
        };
        return codegen::hopper_grad::generate(graph, dir, codegen::hopper_grad::knob(dir, tile)?);
    }
    let k = match name {
        POINTWISE_V1 => codegen::pointwise::generate(graph)?,
        MATMUL_V1 => codegen::gemm::generate(graph, false)?,
        CONV_FPROP_V1 => codegen::gemm::generate(graph, true)?,
        CONV_DGRAD_V1 => return codegen::conv_grad::generate(graph, ConvDirection::Dgrad),
        CONV_WGRAD_V1 => return codegen::conv_grad::generate(graph, ConvDirection::Wgrad),
        MATMUL_V2 => return codegen::hopper::generate(graph, false, codegen::hopper::knob(tile)?),
        CONV_FPROP_V2 => {
            return codegen::hopper::generate(graph, true, codegen::hopper::knob(tile)?)
        }
        SDPA_FA2_V1 => return codegen::sdpa::generate(graph),
        SDPA_FA3_BWD_V1 => return codegen::sdpa_fa3_bwd::generate(graph),
        RESAMPLE_V1 => codegen::resample::generate(graph)?,
        RESAMPLE_BACKWARD_V1 => {
            return codegen::resample::generate_backward(graph, GATHER_DEFAULT == 1)
        }
        NORM_V1 => return codegen::norm::generate(graph),
        other => return Err(format!("{other} is not an engine of {PLUGIN_NAME}")),
    };
    Ok(vec![k])
}

/// Generates the kernels of engine `name` for `graph` with default knobs.
pub fn generate(name: &str, graph: &OpGraph) -> Result<Vec<codegen::Kernel>, String> {
    generate_with(name, graph, 0)
}

/// The largest value of engine `name`'s tile knob; `None` for the engines without knobs.
fn tile_knob_max(name: &str) -> Option<i64> {
    match name {
        MATMUL_V2 | CONV_FPROP_V2 => Some(codegen::hopper::KNOB_MAX),
        SDPA_FA3_V1 => Some(codegen::sdpa_fa3::VARIANTS.len() as i64),
        CONV_DGRAD_V2 => Some(codegen::hopper_grad::knob_max(ConvDirection::Dgrad)),
        CONV_WGRAD_V2 => Some(codegen::hopper_grad::knob_max(ConvDirection::Wgrad)),
        _ => None,
    }
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
    /// Per launch: its grid on this device (a persistent grid capped at the SM count).
    grids: Vec<[u32; 3]>,
    /// Per launch: its tensor maps, checked on this device (empty without a device).
    maps: Vec<Vec<tensor_map::Encoded>>,
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
            if c.arch_specific {
                if c.arch != here {
                    return Err(PluginError::not_applicable(format!(
                        "{PLUGIN_NAME}: code object {i} was compiled for {}, which runs on compute \
                         capability {}.{} only; this plan cannot run on {}",
                        c.target(),
                        c.arch / 10,
                        c.arch % 10,
                        self.where_()
                    )));
                }
                images.push(&c.cubin);
            } else if c.arch == here {
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
                if matches!(a, Argument::Workspace(_)) && payload.workspace == 0 {
                    return Err(payload::damaged(format!(
                        "launch {i} argument {j} is the workspace, but the plan has none"
                    )));
                }
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
        let mut grids: Vec<[u32; 3]> = payload.launches.iter().map(|l| l.grid).collect();
        let mut maps = Vec::new();
        if let Target::Device(dev) = &self.target {
            for (image, symbols) in images.iter().zip(&symbols) {
                let m = Module::load(dev, image, symbols)
                    .map_err(|e| PluginError::not_applicable(format!("{PLUGIN_NAME}: {e}")))?;
                modules.push(m);
            }
            for ((l, &(m, f)), grid) in payload.launches.iter().zip(&functions).zip(&mut grids) {
                if l.shared_bytes > 48 * 1024 {
                    if l.shared_bytes > dev.max_shared_optin {
                        return Err(PluginError::not_applicable(format!(
                            "{PLUGIN_NAME}: kernel {} needs {} bytes of shared memory per block; \
                             {} allows {}",
                            l.symbol,
                            l.shared_bytes,
                            self.where_(),
                            dev.max_shared_optin
                        )));
                    }
                    modules[m]
                        .set_max_dynamic_shared(f, l.shared_bytes)
                        .map_err(|e| PluginError::not_applicable(format!("{PLUGIN_NAME}: {e}")))?;
                }
                if l.persistent {
                    grid[0] = grid[0].min(dev.sm_count);
                }
                if l.cooperative {
                    let threads = l.block.iter().product::<u32>();
                    let per_sm = modules[m]
                        .max_active_blocks(f, threads, l.shared_bytes)
                        .map_err(|e| PluginError::not_applicable(format!("{PLUGIN_NAME}: {e}")))?;
                    if per_sm == 0 {
                        return Err(PluginError::not_applicable(format!(
                            "{PLUGIN_NAME}: kernel {} (blocks of {threads} threads, {} bytes of \
                             shared memory) cannot hold one block a multiprocessor on {}",
                            l.symbol,
                            l.shared_bytes,
                            self.where_()
                        )));
                    }
                    grid[0] = grid[0].min(per_sm.saturating_mul(dev.sm_count));
                }
                let encoded = l
                    .tensor_maps
                    .iter()
                    .map(|r| tensor_map::Encoded::new(r.clone()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| PluginError::not_applicable(format!("{PLUGIN_NAME}: {e}")))?;
                maps.push(encoded);
            }
        }
        Ok(CudaContext {
            engine_name: payload.engine_name.clone(),
            workspace: payload.workspace,
            launches: payload.launches.clone(),
            tensors: payload.tensors.clone(),
            functions,
            grids,
            maps,
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
                // The Hopper attention backward reduces dq with f32 atomics (no fixed order of
                // additions): it does not declare itself deterministic (docs/attention.md).
                behavior_notes: if name == SDPA_FA3_BWD_V1 {
                    abi::KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
                } else {
                    abi::KILN_BEHAVIOR_SUPPORTS_PLAN_SERIALIZATION
                        | abi::KILN_BEHAVIOR_DETERMINISTIC
                },
                knobs: match tile_knob_max(name) {
                    Some(max) => vec![KnobDescriptor {
                        id: KNOB_TILE,
                        name: "tile",
                        min: 0,
                        max,
                        stride: 1,
                        default: 0,
                    }],
                    None if name == RESAMPLE_BACKWARD_V1 => vec![KnobDescriptor {
                        id: KNOB_GATHER,
                        name: "gather",
                        min: 0,
                        max: 1,
                        stride: 1,
                        default: GATHER_DEFAULT,
                    }],
                    None if name == NORM_V1 => vec![KnobDescriptor {
                        id: KNOB_NORM_WIDE,
                        name: "wide",
                        min: 0,
                        max: 2,
                        stride: 1,
                        default: NORM_WIDE_DEFAULT,
                    }],
                    None => Vec::new(),
                },
            })
            .collect()
    }

    fn engine_targets(name: &str) -> Option<&'static str> {
        Some(match name {
            MATMUL_V2 | CONV_FPROP_V2 | CONV_DGRAD_V2 | CONV_WGRAD_V2 | SDPA_FA3_V1
            | SDPA_FA3_BWD_V1 => {
                "CUDA compute capability 9.0 only (sm_90a: TMA, wgmma, setmaxnreg)"
            }
            MATMUL_V1 | CONV_FPROP_V1 | CONV_DGRAD_V1 | CONV_WGRAD_V1 => {
                "any CUDA arch NVRTC compiles for (sm_75+ with CUDA 13): f32 everywhere, f16 \
                 tensor cores (wmma) sm_70+, bf16 sm_80+"
            }
            SDPA_FA2_V1 => "CUDA sm_80 and newer (mma.sync m16n8k16)",
            POINTWISE_V1 | RESAMPLE_V1 | NORM_V1 | RESAMPLE_BACKWARD_V1 => {
                "any CUDA arch NVRTC compiles for (sm_75+ with CUDA 13)"
            }
            // Every engine is named above, so that a new one says where it runs.
            _ => return None,
        })
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
            .filter(|n| supports(n, graph, self.arch()).is_ok())
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
        let mut tile = 0;
        let mut wide = NORM_WIDE_DEFAULT;
        let mut gather = GATHER_DEFAULT;
        for k in knobs {
            if name == RESAMPLE_BACKWARD_V1 && k.knob_id == KNOB_GATHER {
                if !(0..=1).contains(&k.value) {
                    return Err(PluginError::bad_param(format!(
                        "{name}: knob gather = {} is outside 0..=1",
                        k.value
                    )));
                }
                gather = k.value;
                continue;
            }
            if name == NORM_V1 && k.knob_id == KNOB_NORM_WIDE {
                if !(0..=2).contains(&k.value) {
                    return Err(PluginError::bad_param(format!(
                        "{name}: knob wide = {} is outside 0..=2",
                        k.value
                    )));
                }
                wide = k.value;
                continue;
            }
            let max = match tile_knob_max(name) {
                Some(max) if k.knob_id == KNOB_TILE => max,
                _ => {
                    return Err(PluginError::bad_param(format!(
                        "{name}: no knob with id {}",
                        k.knob_id
                    )))
                }
            };
            if !(0..=max).contains(&k.value) {
                return Err(PluginError::bad_param(format!(
                    "{name}: knob tile = {} is outside 0..={max}",
                    k.value
                )));
            }
            tile = k.value;
        }
        supports(name, graph, self.arch())
            .map_err(|why| PluginError::not_supported(format!("{name}: {why}")))?;
        let nvrtc = availability::nvrtc()
            .map_err(|e| PluginError::not_supported(format!("CUDA engine not available: {e}")))?;
        let arch = self.arch();
        let with_ptx = std::env::var("KILN_CUDA_WITH_PTX").is_ok_and(|v| v == "1");
        let norm_path =
            codegen::norm::Path::of_knob(wide, arch).unwrap_or(codegen::norm::Path::Wide);
        let kernels = if name == NORM_V1 {
            codegen::norm::generate_with(graph, norm_path)
        } else if name == RESAMPLE_BACKWARD_V1 {
            codegen::resample::generate_backward(graph, gather == 1)
        } else {
            generate_with(name, graph, tile)
        }
        .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?;
        let mut code_objects = Vec::new();
        let mut launches = Vec::new();
        for k in &kernels {
            let target = compile::Target {
                arch,
                specific: k.arch_specific,
            };
            // PTX of an arch-specific target runs nowhere else: it is never kept.
            let keep_ptx = with_ptx && !k.arch_specific;
            let c = compile::compile(&k.source, &format!("{}.cu", k.symbol), target, keep_ptx)
                .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?;
            let mut ptx = c.ptx;
            if !ptx.is_empty() && ptx.last() != Some(&0) {
                ptx.push(0);
            }
            let mut code = CodeObject::new(arch, c.cubin, ptx);
            code.arch_specific = k.arch_specific;
            code_objects.push(code);
            launches.push(Launch {
                code_object: (code_objects.len() - 1) as u32,
                symbol: k.symbol.clone(),
                grid: k.grid,
                block: k.block,
                shared_bytes: k.shared_bytes,
                args: (0..k.maps.len() as u32)
                    .map(Argument::TensorMap)
                    .chain(k.args.iter().map(|&u| match codegen::workspace_offset(u) {
                        Some(at) => Argument::Workspace(at),
                        None => Argument::Tensor(u),
                    }))
                    .collect(),
                tensor_maps: k.maps.clone(),
                persistent: k.persistent,
                cooperative: k.cooperative,
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
            workspace: match name {
                NORM_V1 => codegen::norm::workspace_bytes(graph, norm_path)
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                CONV_WGRAD_V1 => codegen::conv_grad::workspace_bytes(graph, ConvDirection::Wgrad)
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                MATMUL_V2 | CONV_FPROP_V2 => codegen::hopper::knob(tile)
                    .and_then(|k| codegen::hopper::workspace_bytes(graph, name == CONV_FPROP_V2, k))
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                CONV_WGRAD_V2 => codegen::hopper_grad::knob(ConvDirection::Wgrad, tile)
                    .and_then(|k| {
                        codegen::hopper_grad::workspace_bytes(graph, ConvDirection::Wgrad, k)
                    })
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                SDPA_FA3_BWD_V1 => codegen::sdpa_fa3_bwd::workspace_bytes(graph)
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                RESAMPLE_BACKWARD_V1 => codegen::resample::backward_workspace_bytes(graph)
                    .map_err(|e| PluginError::not_supported(format!("{name}: {e}")))?,
                _ => 0,
            },
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
        workspace: *mut u8,
    ) -> PluginResult<()> {
        if !matches!(self.target, Target::Device(_)) {
            return Err(PluginError::not_supported(format!(
                "{PLUGIN_NAME}: {} has no device; load the plan with a handle on a CUDA device to run it",
                self.where_()
            )));
        }
        let stream = self.stream.load(Ordering::Acquire) as cudarc::driver::sys::CUstream;
        let pointer = |uid: i64| -> PluginResult<u64> {
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
            Ok(b.ptr as u64)
        };
        let workspace = if context.workspace > 0 {
            Some(device_workspace(workspace)?)
        } else {
            None
        };
        for (i, (l, &(m, f))) in context.launches.iter().zip(&context.functions).enumerate() {
            // Parameter values: pointers and scalars as u64 slots, tensor maps as 128-byte
            // values; `params` points at each in order.
            let mut words = Vec::with_capacity(l.args.len());
            let mut maps = Vec::new();
            for a in &l.args {
                match *a {
                    Argument::Tensor(uid) => words.push(pointer(uid)?),
                    Argument::Scalar32(v) => words.push(v as u64),
                    Argument::Scalar64(v) => words.push(v),
                    Argument::Workspace(at) => {
                        // The payload check keeps `at` inside the plan's workspace.
                        let base =
                            workspace
                                .filter(|_| at < context.workspace)
                                .ok_or_else(|| {
                                    PluginError::bad_param(format!(
                                        "{}: the plan needs a workspace of {} bytes",
                                        context.engine_name, context.workspace
                                    ))
                                })?;
                        words.push(base + at);
                    }
                    Argument::TensorMap(n) => {
                        let e = context
                            .maps
                            .get(i)
                            .and_then(|v| v.get(n as usize))
                            .ok_or_else(|| PluginError::internal("no tensor map for a launch"))?;
                        let map = e.at(pointer(e.uid())?).map_err(PluginError::bad_param)?;
                        maps.push(map);
                        words.push(0);
                    }
                }
            }
            let mut params = Vec::with_capacity(l.args.len());
            let mut next_map = 0;
            for (a, w) in l.args.iter().zip(words.iter_mut()) {
                if matches!(a, Argument::TensorMap(_)) {
                    params.push(&mut maps[next_map] as *mut _ as *mut c_void);
                    next_map += 1;
                } else {
                    params.push(w as *mut u64 as *mut c_void);
                }
            }
            let module = context
                .modules
                .get(m)
                .ok_or_else(|| PluginError::internal("no module for a launch"))?;
            let grid = context.grids.get(i).copied().unwrap_or(l.grid);
            // SAFETY: the host checked every pointer against the plan's tensors (execute's
            // contract); the parameters follow the kernel's order recorded at build; a 4-byte
            // scalar sits in the low (first, little-endian) bytes of its u64 slot; each tensor
            // map was encoded over its tensor's bound pointer from a recipe checked to span
            // no more than the tensor's size; `words` and `maps` outlive the launch call.
            unsafe {
                module.launch_with_params(
                    f,
                    grid,
                    l.block,
                    l.shared_bytes,
                    stream,
                    &mut params,
                    l.cooperative,
                )
            }
            .map_err(PluginError::execution_failed)?;
        }
        Ok(())
    }
}

/// The workspace pointer as a device address, refused when it is null or memory CUDA does not
/// know (pageable host memory, such as the frontend's host `Workspace`): a kernel writing there
/// would fault or, on a system with HMM, write host memory behind the caller's back.
fn device_workspace(workspace: *mut u8) -> PluginResult<u64> {
    use cudarc::driver::sys;
    if workspace.is_null() {
        return Err(PluginError::bad_param(format!(
            "{PLUGIN_NAME}: the plan needs a workspace but none was given"
        )));
    }
    let mut kind: u32 = 0;
    // SAFETY: cuPointerGetAttribute writes one unsigned int (a CUmemorytype) for this attribute
    // into `kind`, which lives across the call; the address is only inspected, not accessed.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut kind as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            workspace as u64,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(PluginError::bad_param(format!(
            "{PLUGIN_NAME}: the workspace at {workspace:p} is not memory the CUDA device can use \
             ({r:?}); pass device memory (the frontend's Workspace is host memory: run the plan \
             with ExecutionPlan::execute and a device buffer)"
        )));
    }
    Ok(workspace as u64)
}

/// This thread's counters: NVRTC compilations and kernel-cache hits (a loaded plan adds to
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
