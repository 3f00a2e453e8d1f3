//! Autotuning, saved: every knob setting of the candidate engines is built and timed on the
//! handle's device with random inputs, and the fastest plan becomes the selected one. The
//! winner's knobs are part of its plan (its engine config in the envelope and, for the CUDA
//! provider, the code it generated), so a saved plan never tunes again when it is loaded — what
//! users of cuDNN, MIOpen and FlashInfer ask for. `kiln build --autotune` is this call.

use crate::{EngineConfig, ExecutionPlan, Graph, HostTensor};
use kiln_backend::Device;
use kiln_core::{Error, Result};
use std::time::Instant;

/// At most this many knob settings are tried per engine; an engine with more keeps its
/// defaults (the heuristics' choice).
const MAX_SETTINGS: usize = 32;

/// One candidate the autotuner tried.
#[derive(Debug, Clone, PartialEq)]
pub struct AutotuneTrial {
    pub engine: String,
    /// (knob id, value) pairs it was built with.
    pub knobs: Vec<(i64, i64)>,
    /// Median milliseconds per execute, or why it could not be built or run.
    pub result: std::result::Result<f64, String>,
}

/// What [`Graph::autotune`] tried, fastest first among those that ran.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AutotuneReport {
    pub trials: Vec<AutotuneTrial>,
}

impl AutotuneReport {
    /// The trial that won.
    pub fn best(&self) -> Option<&AutotuneTrial> {
        self.trials.iter().find(|t| t.result.is_ok())
    }
}

/// Every combination of the engine's knob values (all knobs at their ranges), or just the
/// config itself when there are more than [`MAX_SETTINGS`].
fn settings(cfg: &EngineConfig, knobs: &[kiln_backend::KnobInfo]) -> Vec<Vec<(i64, i64)>> {
    let mut all: Vec<Vec<(i64, i64)>> = vec![cfg.knobs.clone()];
    let mut combos: Vec<Vec<(i64, i64)>> = vec![Vec::new()];
    for k in knobs {
        let step = k.stride.max(1);
        let count = ((k.max - k.min) / step + 1).max(1) as usize;
        if combos.len().saturating_mul(count) > MAX_SETTINGS {
            return all;
        }
        let mut next = Vec::new();
        for c in &combos {
            let mut v = k.min;
            while v <= k.max {
                let mut c = c.clone();
                c.push((k.id, v));
                next.push(c);
                v += step;
            }
        }
        combos = next;
    }
    if !knobs.is_empty() {
        all = combos;
    }
    all
}

/// The bound buffers of one timing session, on the handle's device.
enum Buffers {
    Host(Vec<(i64, HostTensor)>, Vec<u8>),
    #[cfg(feature = "cuda")]
    Cuda(
        Vec<(i64, crate::DeviceTensor)>,
        Option<crate::DeviceTensor>,
        u32,
    ),
}

impl Buffers {
    fn new(graph: &kiln_core::OpGraph, device: Device, workspace: usize) -> Result<Buffers> {
        let mut host = Vec::new();
        for t in graph.bound_tensors() {
            host.push((t.uid, HostTensor::random(t, t.uid as u64 + 0x9e37)?));
        }
        match device {
            Device::Cpu => Ok(Buffers::Host(host, vec![0u8; workspace.max(1)])),
            #[cfg(feature = "cuda")]
            Device::Cuda(n) => {
                let ord = n;
                let mut dev = Vec::new();
                for (uid, h) in &host {
                    dev.push((*uid, crate::DeviceTensor::upload(h, ord)?));
                }
                let ws = if workspace > 0 {
                    let desc = kiln_core::TensorDesc {
                        uid: 0,
                        name: "autotune workspace".into(),
                        dims: vec![workspace.div_ceil(4) as i64],
                        strides: vec![1],
                        data_type: kiln_core::DataType::F32,
                        is_virtual: false,
                        alignment: 0,
                        scalar: None,
                    };
                    Some(crate::DeviceTensor::zeros(&desc, ord)?)
                } else {
                    None
                };
                Ok(Buffers::Cuda(dev, ws, ord))
            }
            #[cfg(not(feature = "cuda"))]
            Device::Cuda(_) => Err(Error::NotSupported(format!(
                "autotuning on {device} needs kiln built with the cuda feature"
            ))),
            Device::CudaTarget(_) => Err(Error::NotSupported(format!(
                "autotuning times plans on a device; {device} has none (build on cuda:N)"
            ))),
        }
    }

    /// Median milliseconds of `iters` executes of `plan`, after two warm-up runs.
    fn time(
        &mut self,
        plan: &ExecutionPlan,
        handle: &kiln_backend::Handle,
        iters: usize,
    ) -> Result<f64> {
        let iters = iters.max(1);
        match self {
            Buffers::Host(tensors, ws) => {
                let bindings: Vec<(i64, *mut std::ffi::c_void)> = tensors
                    .iter_mut()
                    .map(|(u, t)| (*u, t.as_mut_ptr()))
                    .collect();
                let mut times = Vec::with_capacity(iters);
                for i in 0..iters + 2 {
                    let t0 = Instant::now();
                    // SAFETY: every pointer addresses a host buffer sized for its tensor's
                    // layout; the workspace holds at least the largest plan's size.
                    unsafe { plan.execute(handle, &bindings, ws.as_mut_ptr().cast(), ws.len()) }?;
                    if i >= 2 {
                        times.push(t0.elapsed().as_secs_f64() * 1e3);
                    }
                }
                times.sort_by(f64::total_cmp);
                Ok(times[times.len() / 2])
            }
            #[cfg(feature = "cuda")]
            Buffers::Cuda(tensors, ws, ord) => {
                let bindings: Vec<(i64, *mut std::ffi::c_void)> = tensors
                    .iter()
                    .map(|(u, t)| (*u, t.device_ptr() as *mut std::ffi::c_void))
                    .collect();
                let (wp, wl) = match ws {
                    Some(w) => (w.device_ptr() as *mut std::ffi::c_void, w.len()),
                    None => (std::ptr::null_mut(), 0),
                };
                let dev = kiln_cuda_driver::DeviceContext::new(*ord as i32)
                    .map_err(Error::NotSupported)?;
                let run = || {
                    // SAFETY: every pointer addresses device memory on this device sized for its
                    // tensor's layout; the workspace holds at least the largest plan's size.
                    unsafe { plan.execute(handle, &bindings, wp, wl) }.map_err(|e| e.to_string())
                };
                run().and_then(|_| run()).map_err(Error::ExecutionFailed)?;
                let mut times = Vec::with_capacity(iters);
                for _ in 0..iters {
                    let ms =
                        kiln_cuda_driver::time_ms(&dev, run).map_err(Error::ExecutionFailed)?;
                    times.push(f64::from(ms));
                }
                times.sort_by(f64::total_cmp);
                Ok(times[times.len() / 2])
            }
        }
    }
}

impl Graph {
    /// Builds every knob setting of every candidate engine (after `create_execution_plans`),
    /// times each plan `iters` times on the handle's device with random inputs, and selects the
    /// fastest (the others stay in [`Graph::plans`], slower after). Refuses when nothing built.
    pub fn autotune(&mut self, iters: usize) -> Result<AutotuneReport> {
        self.check_support()?;
        let handle = self
            .handle_ref()
            .ok_or_else(|| Error::NotInitialized("call build_operation_graph first".into()))?
            .clone();
        let (g, blob) = self.lowered()?;
        let (g, blob) = (g.clone(), blob.to_vec());
        let mut built: Vec<(ExecutionPlan, AutotuneTrial)> = Vec::new();
        let mut report = AutotuneReport::default();
        for cfg in self
            .candidate_configs()
            .into_iter()
            .cloned()
            .collect::<Vec<_>>()
        {
            let knobs = handle
                .plugins()
                .find_map(|p| p.engine(cfg.engine_id))
                .map(|e| e.knobs.clone())
                .unwrap_or_default();
            for knobs in settings(&cfg, &knobs) {
                let variant = EngineConfig {
                    knobs: knobs.clone(),
                    ..cfg.clone()
                };
                let trial = AutotuneTrial {
                    engine: cfg.engine_name.clone(),
                    knobs,
                    result: Err(String::new()),
                };
                match ExecutionPlan::build(&handle, &variant, &g, &blob) {
                    Ok(p) => built.push((p, trial)),
                    Err(e) => report.trials.push(AutotuneTrial {
                        result: Err(format!("build: {e}")),
                        ..trial
                    }),
                }
            }
        }
        if built.is_empty() {
            return Err(Error::NotSupported(format!(
                "autotune: no plan could be built: {}",
                report
                    .trials
                    .iter()
                    .filter_map(|t| t.result.as_ref().err().cloned())
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        let workspace = built
            .iter()
            .map(|(p, _)| p.workspace_size())
            .max()
            .unwrap_or(0);
        let mut buffers = Buffers::new(&g, handle.device(), workspace)?;
        let mut timed: Vec<(f64, ExecutionPlan, AutotuneTrial)> = Vec::new();
        for (plan, trial) in built {
            match buffers.time(&plan, &handle, iters) {
                Ok(ms) => timed.push((
                    ms,
                    plan,
                    AutotuneTrial {
                        result: Ok(ms),
                        ..trial
                    },
                )),
                Err(e) => report.trials.push(AutotuneTrial {
                    result: Err(format!("execute: {e}")),
                    ..trial
                }),
            }
        }
        if timed.is_empty() {
            return Err(Error::ExecutionFailed(format!(
                "autotune: no plan ran: {}",
                report
                    .trials
                    .iter()
                    .filter_map(|t| t.result.as_ref().err().cloned())
                    .collect::<Vec<_>>()
                    .join("; ")
            )));
        }
        timed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut trials: Vec<AutotuneTrial> = timed.iter().map(|(_, _, t)| t.clone()).collect();
        trials.append(&mut report.trials);
        report.trials = trials;
        self.plans = timed.into_iter().map(|(_, p, _)| p).collect();
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(id: i64, min: i64, max: i64) -> kiln_backend::KnobInfo {
        kiln_backend::KnobInfo {
            id,
            name: format!("k{id}"),
            min,
            max,
            stride: 1,
            default: min,
        }
    }

    #[test]
    fn settings_cover_every_combination_up_to_the_limit() {
        let cfg = EngineConfig {
            engine_id: 1,
            engine_name: "E".into(),
            plugin_name: "p".into(),
            behavior_notes: 0,
            knobs: vec![(1, 3)],
        };
        assert_eq!(settings(&cfg, &[]), vec![vec![(1, 3)]]);
        let s = settings(&cfg, &[knob(1, 0, 4)]);
        assert_eq!(s.len(), 5);
        assert!(s.contains(&vec![(1, 0)]) && s.contains(&vec![(1, 4)]));
        assert_eq!(settings(&cfg, &[knob(1, 0, 3), knob(2, 0, 1)]).len(), 8);
        // Too many: the config as the heuristics gave it.
        assert_eq!(settings(&cfg, &[knob(1, 0, 99)]), vec![vec![(1, 3)]]);
    }
}
