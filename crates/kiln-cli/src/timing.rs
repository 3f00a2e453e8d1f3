//! Timing a graph's selected plan on its handle's device, as `kiln bench` reports it: the host
//! clock around each execute on the CPU; device events around batches of executes on a GPU.
//! Inputs are random (never zeros, which can run faster than real data and hide unwritten
//! output), and every case is warmed up first: on the CPU for at least `CPU_WARMUP` runs and
//! `CPU_WARMUP_TIME` (a 2-core guest's first runs of a sub-millisecond case are several times
//! slower while its idle vCPUs wake), on a GPU one run.

use crate::failure::{Failure, EXIT_NOT_SUPPORTED};
use kiln::{Device, Graph, Handle, HostTensor, VariantPack, Workspace};
use std::time::{Duration, Instant};

/// A case stops taking more timed runs once this much wall time went by (after `MIN_RUNS`).
const BUDGET: Duration = Duration::from_secs(3);
/// Timed runs a case always gets (when `--runs` asks for that many).
const MIN_RUNS: usize = 3;
/// On the CPU, warm-up runs a case always gets, and the time they last at least. The same as
/// `scripts/bench_peers.py` gives its peers. Measured on a 2-vCPU guest (2026-12-02, Zen 4):
/// batchnorm_inference [8, 64, 56, 56] took 1.4, 0.96, 0.95, 0.55, 0.29, 0.26 ms on its first
/// runs and 0.12-0.15 ms from about the tenth on (2 ms in).
const CPU_WARMUP: usize = 2;
const CPU_WARMUP_TIME: Duration = Duration::from_millis(20);
/// On a GPU, one timed run lasts at least about this long (several executes back to back).
#[cfg(feature = "cuda")]
const GPU_RUN_MS: f64 = 1.0;
/// On a GPU, at most this many executes make one timed run.
#[cfg(feature = "cuda")]
const MAX_BATCH: usize = 100;

/// The run times of one case.
pub struct Timing {
    /// Milliseconds per execute, one entry per timed run.
    pub times_ms: Vec<f64>,
    /// Executes per timed run: 1 on the CPU; on a GPU, enough back-to-back executes for a run
    /// of about a millisecond, so that launch gaps do not count as kernel time.
    pub batch: usize,
}

/// Where plans are timed: the CPU, or a GPU through its primary context.
pub enum Timer {
    Cpu,
    #[cfg(feature = "cuda")]
    Cuda(kiln_cuda_driver::DeviceContext),
}

impl Timer {
    /// A timer for `device` (`flag` is the option's text, for messages). A GPU without a usable
    /// CUDA driver, a kiln built without CUDA, and a deviceless target are "not supported"
    /// (exit code 4), each saying so.
    pub fn new(device: Device, flag: &str) -> Result<Timer, Failure> {
        match device {
            Device::Cpu => Ok(Timer::Cpu),
            Device::CudaTarget(_) => Err(Failure::new(
                EXIT_NOT_SUPPORTED,
                format!(
                    "--device {flag}: a target architecture has no device to time plans on; give \
                     cuda:N (use sm_XX with `kiln build --target`)"
                ),
            )),
            #[cfg(feature = "cuda")]
            Device::Cuda(n) => {
                kiln_cuda_driver::availability::driver().map_err(|e| {
                    Failure::new(
                        EXIT_NOT_SUPPORTED,
                        format!("--device {flag}: no usable CUDA driver on this machine: {e}"),
                    )
                })?;
                let ordinal = i32::try_from(n).map_err(|_| {
                    Failure::new(
                        EXIT_NOT_SUPPORTED,
                        format!("--device {flag}: no such device"),
                    )
                })?;
                kiln_cuda_driver::DeviceContext::new(ordinal)
                    .map(Timer::Cuda)
                    .map_err(|e| Failure::new(EXIT_NOT_SUPPORTED, format!("--device {flag}: {e}")))
            }
            #[cfg(not(feature = "cuda"))]
            Device::Cuda(_) => Err(Failure::new(
                EXIT_NOT_SUPPORTED,
                format!(
                    "--device {flag}: this kiln was built without the CUDA provider (cargo feature \
                     `cuda`), so it cannot time plans on {device}"
                ),
            )),
        }
    }

    /// A line about the device for the text report, e.g. `cuda:0 (sm_90, 132 SMs)`.
    pub fn describe(&self) -> String {
        match self {
            Timer::Cpu => format!(
                "cpu ({} threads)",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ),
            #[cfg(feature = "cuda")]
            Timer::Cuda(ctx) => format!(
                "cuda:{} (sm_{}, {} SMs)",
                ctx.ordinal, ctx.arch, ctx.sm_count
            ),
        }
    }

    /// Times `graph`'s selected plan on `handle` (which must run on this timer's device): the
    /// warm-up (see the module's note), then up to `runs` timed runs (fewer when a case is slow: about 3 s at most, but
    /// never fewer than 3 when `runs` allows). Every bound tensor holds random values.
    pub fn time(&self, graph: &Graph, handle: &Handle, runs: usize) -> kiln::Result<Timing> {
        let g = graph
            .op_graph()
            .ok_or_else(|| kiln::Error::NotInitialized("the graph is not validated".into()))?;
        let mut hosts: Vec<HostTensor> = g
            .bound_tensors()
            .map(|t| HostTensor::random(t, 7 + t.uid as u64))
            .collect::<kiln::Result<_>>()?;
        let runs = runs.max(1);
        match self {
            Timer::Cpu => {
                let mut ws = Workspace::for_graph(graph)?;
                let mut execute = || -> kiln::Result<f64> {
                    let mut pack = VariantPack::new();
                    for h in hosts.iter_mut() {
                        let uid = h.desc().uid;
                        pack.insert_uid(uid, h);
                    }
                    let t = Instant::now();
                    graph.execute(handle, &mut pack, &mut ws)?;
                    Ok(t.elapsed().as_secs_f64() * 1e3)
                };
                let warm = Instant::now();
                let mut warmups = 0;
                while warmups < CPU_WARMUP || warm.elapsed() < CPU_WARMUP_TIME {
                    execute()?;
                    warmups += 1;
                }
                let mut times = Vec::with_capacity(runs);
                let start = Instant::now();
                for i in 1..=runs {
                    times.push(execute()?);
                    if i >= MIN_RUNS && start.elapsed() > BUDGET {
                        break;
                    }
                }
                Ok(Timing {
                    times_ms: times,
                    batch: 1,
                })
            }
            #[cfg(feature = "cuda")]
            Timer::Cuda(ctx) => time_on_gpu(ctx, graph, handle, &hosts, runs),
        }
    }
}

/// The GPU half of [`Timer::time`]: the random host tensors are uploaded; each timed run is a
/// pair of device events around `batch` back-to-back executes on the null stream (the stream
/// the CUDA provider launches on unless one is set), divided by `batch`.
#[cfg(feature = "cuda")]
fn time_on_gpu(
    ctx: &kiln_cuda_driver::DeviceContext,
    graph: &Graph,
    handle: &Handle,
    hosts: &[HostTensor],
    runs: usize,
) -> kiln::Result<Timing> {
    use kiln::{DeviceTensor, Error};
    let plan = graph
        .plan()
        .ok_or_else(|| Error::NotInitialized("the graph has no plan".into()))?;
    let ordinal = ctx.ordinal as u32;
    if handle.device() != Device::Cuda(ordinal) {
        return Err(Error::BadParam(format!(
            "the handle runs on {}, but the timer on cuda:{ordinal}",
            handle.device()
        )));
    }
    let mut memory: Vec<DeviceTensor> = hosts
        .iter()
        .map(|h| DeviceTensor::upload(h, ordinal))
        .collect::<kiln::Result<_>>()?;
    // The bindings below are made from the graph's own tensors, so they fit by construction;
    // where the plan needs no workspace the warm-up also goes through the checked
    // `Graph::execute` (data types, sizes, device, plan against graph), once. (`Workspace` is
    // host memory, so a plan with a workspace skips that.)
    {
        let mut pack = VariantPack::new();
        for m in memory.iter_mut() {
            let uid = m.desc().uid;
            pack.insert_device_uid(uid, m);
        }
        if plan.workspace_size() == 0 {
            graph.execute(handle, &mut pack, &mut Workspace::new(0)?)?;
        }
    }
    let workspace = match plan.workspace_size() {
        0 => None,
        n => Some(
            kiln_cuda_driver::DeviceMemory::zeroed(ctx.ordinal, n).map_err(Error::AllocFailed)?,
        ),
    };
    let (ws_ptr, ws_len) = workspace.as_ref().map_or((std::ptr::null_mut(), 0), |w| {
        (w.as_ptr() as *mut std::ffi::c_void, w.len())
    });
    let bindings: Vec<(i64, *mut std::ffi::c_void)> = memory
        .iter()
        .map(|m| (m.desc().uid, m.device_ptr() as *mut std::ffi::c_void))
        .collect();
    let run = || {
        // SAFETY: every pointer addresses device memory on this plan's device, allocated for
        // exactly the layout of the graph tensor with that uid (the graph the plan was built
        // from or checked against when it was loaded), and `memory` outlives every call; the
        // workspace, when the plan needs one, is device memory of the plan's workspace size.
        unsafe { plan.execute(handle, &bindings, ws_ptr, ws_len) }.map_err(|e| e.to_string())
    };
    let event_ms = |batch: usize| {
        kiln_cuda_driver::time_ms(ctx, || (0..batch).try_for_each(|_| run()))
            .map(|ms| f64::from(ms) / batch as f64)
            .map_err(Error::ExecutionFailed)
    };
    // Warm-up (caches, lazily loaded code), then one run alone to size the batch.
    run().map_err(Error::ExecutionFailed)?;
    let one = event_ms(1)?;
    let batch = if one > 0.0 {
        ((GPU_RUN_MS / one).ceil() as usize).clamp(1, MAX_BATCH)
    } else {
        MAX_BATCH
    };
    let mut times = Vec::with_capacity(runs);
    let start = Instant::now();
    for i in 0..runs {
        times.push(event_ms(batch)?);
        if i + 1 >= MIN_RUNS && start.elapsed() > BUDGET {
            break;
        }
    }
    Ok(Timing {
        times_ms: times,
        batch,
    })
}
